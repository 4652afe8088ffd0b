"""The tiktoken part of a meta tokenizer: its byte-level model found from what was given, and its facts.

A meta tokenizer's byte-level part is named (``"o200k_base"``, read offline as
``ByteBPE.from_tiktoken`` reads it: ``tiktoken_file=``, ``WWHO_TIKTOKEN_FILE``, tiktoken's cache;
never downloaded), given (a :class:`~wwho.bytelevel.ByteBPE`, a
:class:`~wwho.bytelevel.ByteLevelModel`, a ``tiktoken.Encoding``, whose ranks are copied), or
described by a saved ``meta_config.json`` (an encoding its name does not tell). Each comes out as
a :class:`~wwho.bytelevel.ByteLevelModel` and a :class:`TiktokenPart`: its name, ``n_vocab``,
special tokens, unassigned ids and the sha256 of its ranks, which a saved directory is checked
against. This module does not encode (:mod:`wwho.meta` does), and does not read the meta
files (:mod:`wwho.export.meta_files` does).
"""

from __future__ import annotations

import base64
import hashlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import Pretokenizer
from wwho.errors import VocabError, brief


@dataclass(frozen=True)
class TiktokenPart:
    """What the meta tokenizer needs to know of its tiktoken encoding, computed once."""

    name: str
    n_vocab: int
    special_tokens: dict[str, int]
    sha256: str  # of the ranks in tiktoken's file format: for official files, the file's sha256
    unassigned_ids: tuple[int, ...] = ()

    @property
    def unassigned(self) -> list[int]:
        return list(self.unassigned_ids)


def ranks_sha256(ranks: Mapping[bytes, int]) -> str:
    """The sha256 of ``ranks`` in tiktoken's file format (``base64(token) rank`` lines, by rank)."""
    h = hashlib.sha256()
    for data, i in sorted(ranks.items(), key=lambda kv: kv[1]):
        h.update(base64.b64encode(data) + b" %d\n" % i)
    return h.hexdigest()


def part_of(model: ByteLevelModel, sha256: str | None = None) -> TiktokenPart:
    """The facts of ``model`` the meta tokenizer keeps (``sha256``: of its ranks, where known)."""
    ids = set(model.ranks.values())
    ids.update(model.special_tokens.values())
    n_vocab = max(ids) + 1 if ids else 0
    return TiktokenPart(model.name, n_vocab, dict(model.special_tokens), sha256 or ranks_sha256(model.ranks),
                        tuple(i for i in range(n_vocab) if i not in ids))


def _model_of_encoding(encoding: Any) -> ByteLevelModel:
    """A ``tiktoken.Encoding`` as a ranks-rule model (through its public API; the regex of an
    encoding wwho does not know is read from ``_pat_str``)."""
    from wwho.bytelevel.files import TIKTOKEN_ENCODINGS

    specials = {s: encoding.encode_single_token(s) for s in encoding.special_tokens_set}
    special_ids = set(specials.values())
    known = getattr(encoding, "_mergeable_ranks", None)  # tiktoken's own dict: copied, not rebuilt
    if isinstance(known, dict) and all(type(k) is bytes for k in list(known)[:16]):
        ranks = dict(known)
    else:
        ranks = {}
        for i in range(encoding.n_vocab):
            if i in special_ids:
                continue
            try:
                ranks[encoding.decode_single_token_bytes(i)] = i
            except KeyError:
                continue
    if encoding.name in TIKTOKEN_ENCODINGS:
        pattern = Pretokenizer.named(encoding.name)
    else:
        pattern = Pretokenizer.coerce(getattr(encoding, "_pat_str", None) or "o200k")
    return ByteLevelModel(ranks, pattern, special_tokens=specials, name=encoding.name)


def resolve_encoding(encoding: Any = "o200k_base", *, tiktoken_file: str | os.PathLike | None = None) -> Any:
    """The byte-level part of a meta tokenizer, as :class:`~wwho.meta.MetaTokenizer` takes it: for a name, a
    :class:`~wwho.bytelevel.ByteLevelModel` read offline like ``ByteBPE.from_tiktoken`` does
    (``tiktoken_file=``, ``WWHO_TIKTOKEN_FILE``, tiktoken's cache; never downloaded); a name wwho
    does not know goes to tiktoken (optional), which may download it. Anything else is returned as
    given (a ``ByteBPE``, a ``ByteLevelModel``, a ``tiktoken.Encoding``)."""
    if not isinstance(encoding, str):
        return encoding
    from wwho.bytelevel.files import TIKTOKEN_ENCODINGS, from_tiktoken
    from wwho.tiktoken_file import ranks_file_for

    found = ranks_file_for(encoding, tiktoken_file)
    if found is not None and not found[0].is_file():
        raise VocabError(f"{found[0]} (from {found[1]}): tiktoken ranks file not found. To fix: point "
                         f"{'--tiktoken-file / tiktoken_file=' if found[1] == 'tiktoken_file' else found[1]} at "
                         f"the {encoding}.tiktoken file")
    if encoding in TIKTOKEN_ENCODINGS:
        try:
            return from_tiktoken(encoding, tiktoken_file=tiktoken_file)
        except VocabError:
            # Not in tiktoken's cache: an encoding tiktoken already holds in memory (this process
            # loaded it) serves too; nothing is downloaded.
            loaded = getattr(sys.modules.get("tiktoken.registry"), "ENCODINGS", {}).get(encoding)
            if found is not None or loaded is None:
                raise
            return loaded
    from wwho.bytelevel.tiktoken_loader import get_encoding

    try:
        return get_encoding(encoding, tiktoken_file=tiktoken_file)
    except ImportError:
        raise VocabError(f"unknown tiktoken encoding {encoding!r}: wwho knows {', '.join(TIKTOKEN_ENCODINGS)}; "
                         "others need the tiktoken package") from None


def byte_level_part(encoding: Any, tiktoken_file: str | os.PathLike | None) -> tuple[ByteLevelModel, TiktokenPart]:
    """The model and the facts of the byte-level part named or given by ``encoding``."""
    from wwho.bytelevel import ByteBPE
    from wwho.bytelevel.files import TIKTOKEN_ENCODINGS

    given = encoding
    encoding = resolve_encoding(encoding, tiktoken_file=tiktoken_file)
    if isinstance(encoding, ByteBPE):
        model = encoding.model
    elif isinstance(encoding, ByteLevelModel):
        model = encoding
    elif all(hasattr(encoding, a) for a in ("encode_single_token", "decode_single_token_bytes", "n_vocab", "name",
                                            "special_tokens_set")):
        model = _model_of_encoding(encoding)
    else:
        raise VocabError("tiktoken_encoding must be a name, a ByteBPE or a tiktoken.Encoding, not "
                         f"{type(encoding).__name__}")
    if model.merges is not None or model.added_tokens or model.extra_tokens:
        raise VocabError("the byte-level part of a meta tokenizer must be a tiktoken-style vocabulary (ranks, "
                         "special tokens), without merges, added or extra tokens")
    known = TIKTOKEN_ENCODINGS.get(model.name)
    # A known name read from its file was checked against the official file's sha256 already.
    read = isinstance(given, str) and isinstance(encoding, ByteLevelModel)
    sha256 = known.sha256 if read and known is not None else None
    return model, part_of(model, sha256)


def saved_byte_level_part(name: str, config: Mapping[str, Any], tiktoken_file: str | os.PathLike | None,
                          source: Path) -> tuple[ByteLevelModel, TiktokenPart]:
    """The byte-level part a version-2 ``meta_config.json`` describes: the ranks found as for a
    name (one wwho does not know, only through ``tiktoken_file=`` or ``WWHO_TIKTOKEN_FILE``), with
    the special tokens and pre-tokenizer the config holds. The caller checks the ranks' sha256."""
    from wwho.bytelevel.files import TIKTOKEN_ENCODINGS, from_tiktoken
    from wwho.bytelevel.validate import check_model
    from wwho.tiktoken_file import FIX, ranks_file_for

    saved = config["tiktoken_pretokenizer"]
    if "patterns" not in saved:
        raise VocabError(f"{source}: 'tiktoken_pretokenizer' has no 'patterns'")
    try:
        pattern = Pretokenizer.from_json(saved)
    except VocabError as exc:
        raise VocabError(f"{source}: 'tiktoken_pretokenizer': {exc}") from None
    try:
        if name in TIKTOKEN_ENCODINGS:
            ranks = from_tiktoken(name, tiktoken_file=tiktoken_file).ranks
        else:
            found = ranks_file_for(name, tiktoken_file)
            if found is None:
                raise VocabError(f"{brief(name)} is no encoding wwho finds by name; its special tokens and pre-tokenizer "
                                 f"are in the config, its ranks are not. To fix: {FIX} (the ranks file it was made "
                                 "with)")
            ranks = from_tiktoken(found[0], pattern=pattern).ranks
    except VocabError as exc:
        raise VocabError(f"{source}: needs the ranks of the tiktoken encoding {brief(name)}: {exc}") from None
    model = ByteLevelModel(ranks, pattern, special_tokens=dict(config["tiktoken_special_tokens"]), name=name)
    return check_model(model, f"{source}: 'tiktoken_special_tokens'"), part_of(model)

