"""What a byte-level BPE tokenizer *is*, as its files say: :class:`ByteLevelModel`.

Every loader (``.tiktoken`` files, wwho's directory format, Hugging Face ``tokenizer.json``,
GGUF) and the trainer produce a ``ByteLevelModel``; :class:`wwho.bytelevel.ByteBPE` is built
from one and gives one back (``ByteBPE.model``) for saving and exporting. Keeping the data
apart from the encoder is what lets the file modules and the encoder not import each other.

This module holds data only: it validates nothing and encodes nothing (``ByteBPE`` checks ids
when it is built).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wwho.bytelevel.pretokenize import Pretokenizer


@dataclass
class ByteLevelModel:
    """The vocabulary, pre-tokenizer, merge rule and special tokens of a byte-level BPE.

    ``merges`` is None for the ranks rule (tiktoken: two parts merge if their concatenation
    is a token, lowest id first) and the ordered pair list for the merges rule (Hugging Face,
    GGUF); ``ignore_merges`` (Llama 3) looks a whole piece up before merging, and is
    always true for the ranks rule. ``extra_tokens`` decode but are never produced by encoding.
    """

    ranks: dict[bytes, int]
    pattern: Pretokenizer
    special_tokens: dict[str, int] = field(default_factory=dict)
    merges: list[tuple[bytes, bytes]] | None = None
    ignore_merges: bool = False
    added_tokens: dict[str, int] = field(default_factory=dict)
    extra_tokens: dict[int, bytes] = field(default_factory=dict)
    bos_id: int | None = None
    eos_id: int | None = None
    pad_id: int | None = None
    add_bos: bool = False
    add_eos: bool = False
    name: str = ""
    #: The chat template a GGUF file carries (``tokenizer.chat_template``), for the Hugging Face export.
    chat_template: str | None = None

    def __post_init__(self) -> None:
        # The ranks rule always looks a whole piece up first; only the merges rule may not.
        self.ignore_merges = True if self.merges is None else bool(self.ignore_merges)
