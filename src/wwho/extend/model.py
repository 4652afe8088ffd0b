"""What :func:`wwho.extend.extend_tokenizer` returns: :class:`Extension`, the extended model with
the base it came from and what it learned.

It holds data and writes itself (:meth:`Extension.save`, through :mod:`wwho.extend.files`); it
learns and checks nothing.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path

from wwho.bytelevel import ByteBPE
from wwho.bytelevel.model import ByteLevelModel
from wwho.extend.learn import LearnStats
from wwho.extend.scripts import ScriptSet


@dataclass
class Extension:
    """An extended tokenizer: its model, how it was made, and what it knows."""

    base: ByteBPE
    model: ByteLevelModel
    scripts: ScriptSet
    first_id: int
    new_tokens: list[bytes]
    new_merges: list[tuple[bytes, bytes]]
    known_syllables: list[str]
    stats: LearnStats
    options: dict = field(default_factory=dict)
    base_config: dict = field(default_factory=dict)  # transformers settings carried over from the base

    @functools.cached_property
    def tokenizer(self) -> ByteBPE:
        """The extended tokenizer (wwho's encoder; ``ByteBPE.from_hf`` of the saved file equals it)."""
        return ByteBPE.from_model(self.model)

    @property
    def n_new(self) -> int:
        return len(self.new_tokens)

    @property
    def n_reserved(self) -> int:
        """Ids holding a ``<|reserved_ID|>`` token: the base's holes and the padding."""
        return sum(1 for t in self.model.special_tokens if t not in self.base.special_tokens)

    @property
    def embedding_rows(self) -> int:
        """The rows the model's embedding matrix needs: ``len(AutoTokenizer)`` of the saved directory,
        every id (holes and padding filled with reserved tokens), as :func:`init_embeddings` returns."""
        return self.tokenizer.n_vocab

    def record(self) -> dict:
        """``wwho_extend.json``: what the extension knows and how it was made."""
        return {
            "base": self.base.name,
            "base_n_vocab": self.first_id,
            "scripts": list(self.scripts.names),
            "first_new_id": self.first_id,
            "new_tokens": self.n_new,
            "options": self.options,
            "stats": dataclasses.asdict(self.stats),
            "known_syllables": self.known_syllables,
        }

    def save(self, directory: str | Path, *, force: bool = False) -> Path:
        """Write ``tokenizer.json``, ``tokenizer_config.json``, ``special_tokens_map.json`` and
        ``wwho_extend.json`` into a new ``directory``, all or nothing (see :mod:`wwho.extend.files`)."""
        from wwho.extend.files import save_extension

        return save_extension(self.model, self.record(), directory, carried=self.base_config, force=force)
