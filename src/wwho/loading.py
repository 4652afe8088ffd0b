"""Load any tokenizer wwho knows from a path, detecting its kind from the file.

| path | kind |
|---|---|
| directory with ``meta_config.json`` | ``meta`` (tiktoken + SGPE) |
| directory with ``vocab.json``, or a ``vocab.json`` | ``sgpe`` |
| directory with ``bytelevel.json``, or a ``.tiktoken`` file | ``bytelevel`` (a renamed official file is known by its sha256) |
| ``*.gguf`` | ``gguf`` (byte-level BPE from a llama.cpp vocabulary) |
| ``tokenizer.json`` of a binary tokenizer (Latin-1 bytes) | ``binary`` |
| any other ``tokenizer.json`` | ``hf`` (byte-level BPE if it is one, else HF ``tokenizers`` as is) |
| ``o200k_base``, ``cl100k_base``, or ``tiktoken:NAME`` (no such path) | ``bytelevel``, its file found by :mod:`wwho.tiktoken_file` |

A directory holding the files of two kinds (``bytelevel.json`` beside ``vocab.json`` or
``meta_config.json``, with no manifest to say which was saved there) is refused, not loaded as the
first kind found.

Every wwho kind loaded satisfies :class:`wwho.protocol.Tokenizer` (binary: bytes in and out);
an ``hf`` tokenizer that is not byte-level has ``encode(text) -> list[int]``, ``decode(ids) -> str``
and ``vocab_size``. This module only dispatches; each kind lives in its own module. The kind is told by
:func:`wwho.kinds.detect_kind`, which lives below every loader so that a loader given another
kind can say what it is (:func:`wwho.kinds.check_kind`) without an import cycle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wwho.errors import (
    TokenizerError,
    UnknownTokenError,
    VocabError,
    WrongTypeError,
    brief,
    in_batch,
    printable,
)
from wwho.ids import no_token_string
from wwho.ids import token_id as token_id_of
from wwho.notices import warn
from wwho.wholeload import loads_whole

if TYPE_CHECKING:  # numpy is imported by the first call that makes an array, not by `import wwho`
    import numpy as np
    from numpy.typing import NDArray

    from wwho.arrays import FlatIds

KINDS = ("sgpe", "meta", "bytelevel", "gguf", "binary", "hf")


def detect_kind(path: str | os.PathLike) -> str:
    """The kind of tokenizer stored at ``path`` (see the module docstring), as
    :func:`wwho.kinds.detect_kind` tells it."""
    from wwho.kinds import detect_kind as detect

    return detect(path)


def load_tokenizer(path: str | os.PathLike, *, kind: str | None = None, pattern: str | None = None,
                   tiktoken_file: str | os.PathLike | None = None) -> Any:
    """Load the tokenizer at ``path`` (its kind detected unless given). ``pattern``: the
    pre-tokenizer (a name such as ``o200k`` or a regex) of a ``.tiktoken`` file that is not
    a known encoding, which the file itself does not say. ``tiktoken_file``: the ranks file of a
    meta directory's or a name's tiktoken encoding (:mod:`wwho.tiktoken_file`); a kind that reads
    none warns that it is unused, as ``--tiktoken-file`` does."""
    from wwho.fileio import drop_kept, parsing_once, tokenizer_path

    path = tokenizer_path(path, "load_tokenizer")
    with parsing_once():  # the file detect_kind parses is not parsed again to load it
        try:
            return _load(path, kind or detect_kind(path), pattern, tiktoken_file)
        finally:
            drop_kept()


def _load(path: str | os.PathLike, kind: str, pattern: str | None, tiktoken_file: str | os.PathLike | None) -> Any:
    p = Path(path)
    by_name = kind == "bytelevel" and not p.exists()  # o200k_base, tiktoken:o200k_base
    if tiktoken_file is not None and kind != "meta" and not by_name:

        from wwho.errors import WwhoWarning

        warn(f"tiktoken_file= is unused: {path} is no meta directory nor a tiktoken encoding's name, and "
             "reads no ranks file", WwhoWarning)
    if pattern is not None and kind != "gguf" and not (kind == "bytelevel" and (p.suffix == ".tiktoken"
                                                                             or not p.exists())):
        from wwho.kinds import KIND_NAMES

        # (it would be ignored: every other kind's files name their own pre-tokenizer, or have none)
        raise VocabError(f"{path}: pattern= (--pattern) is for a .tiktoken file of your own or a GGUF file "
                         f"without tokenizer.ggml.pre, which hold no pre-tokenizer; this is "
                         f"{KIND_NAMES.get(kind, kind)}, which names its own")
    if kind == "sgpe":
        from wwho.sgpe import SGPETokenizer

        return SGPETokenizer.load(p)
    if kind == "meta":
        from wwho.meta import MetaTokenizer

        return MetaTokenizer.load(p.parent if p.is_file() else p, tiktoken_file=tiktoken_file)
    if kind == "bytelevel":
        from wwho.bytelevel import ByteBPE

        if by_name:  # a known name such as (tiktoken:)o200k_base
            return ByteBPE.from_tiktoken(os.fspath(path), pattern=pattern, tiktoken_file=tiktoken_file)
        if p.suffix == ".tiktoken":
            return ByteBPE.from_tiktoken(p, pattern=pattern)
        return ByteBPE.load(p)
    if kind == "gguf":
        from wwho.bytelevel import ByteBPE
        from wwho.bytelevel.gguf import command_line_pretokenizer

        return ByteBPE.from_gguf(p, pretokenizer=command_line_pretokenizer(p, pattern))
    if kind == "binary":
        from wwho.binary.tokenizer import BinaryTokenizer

        return BinaryTokenizer.load(p if p.is_file() else p / "tokenizer.json")
    if kind == "hf":
        return _load_hf(p if p.is_file() else p / "tokenizer.json")
    raise VocabError(f"unknown tokenizer kind {kind!r}; known: {', '.join(KINDS)}")


@loads_whole
def _load_hf(path: Path) -> Any:
    from wwho.bytelevel import ByteBPE
    from wwho.bytelevel.hf_files import NotByteLevel

    try:
        return ByteBPE.from_hf(path)  # a broken byte-level file is an error, not a reason to try HF
    except NotByteLevel as exc:
        raw, data = exc.raw, exc.data  # (read, checked against a manifest and parsed already)
    from wwho.binary.io import check_ids

    model = data.get("model") if isinstance(data, dict) else None
    if isinstance(model, dict) and isinstance(model.get("vocab"), dict):
        check_ids(data, str(path))  # HF would keep the last of two tokens with one id
    # (the bytes checked above, not the file read again: it may have changed since)
    tokenizer = hf_tokenizer(raw.decode("utf-8"), model, path)
    # A text's ids are all of its ids: the file's padding and truncation shape a model's inputs, and
    # transformers too applies them only where a call asks. (Fixed padding of two billion ids would
    # also abort the process on its first encode.)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return HFTokenizer(tokenizer)


def hf_tokenizer(text: str, model: object, where: object) -> Any:
    """HF ``tokenizers``' ``Tokenizer`` of a ``tokenizer.json``'s ``text``, whose parsed ``model``
    (None where it is no object) has its BPE merges checked first (:func:`check_hf_merges`); HF's
    failure to load it (a panic included) is a :class:`VocabError` naming ``where``."""
    import tokenizers

    if isinstance(model, dict):
        check_hf_merges(model, where)
    try:
        return tokenizers.Tokenizer.from_str(text)
    except BaseException as exc:  # noqa: BLE001 -- a plain Exception for bad files, a panic for some
        if not _from_hf_tokenizers(exc):
            raise  # KeyboardInterrupt, SystemExit
        raise VocabError(f"{where}: HF tokenizers cannot load it: {printable(brief(str(exc), 200))}") from None


def _from_hf_tokenizers(exc: BaseException) -> bool:
    """Whether ``exc`` is an error HF ``tokenizers`` raised: an ``Exception``, or a Rust panic (a
    ``PanicException``, which is no ``Exception``: its regex engine panics where a pattern backtracks
    past its limit), as opposed to ``KeyboardInterrupt`` or ``SystemExit``."""
    return isinstance(exc, Exception) or type(exc).__name__ == "PanicException"


def _hf_call(call, *args, **kwargs):
    """``call(*args, **kwargs)`` of HF ``tokenizers``, whose failures (a panic included) are a
    :class:`TokenizerError`; wwho's own checks run before it."""
    try:
        return call(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 -- a panic is no Exception
        if not _from_hf_tokenizers(exc):
            raise
        raise TokenizerError(f"HF tokenizers failed: {brief(str(exc), 200)}") from None


def check_hf_merges(model: dict, where: object) -> None:
    """A BPE model's merges, checked as HF ``tokenizers`` builds them, before it does: it panics on
    some broken ones (a message printed from inside it, and an exception past ``except
    Exception``). Each merge's parts and its result must be tokens of ``model.vocab``; and HF cuts
    a ``continuing_subword_prefix``'s bytes off the right part of every merge (the result is the
    left part and the rest of the right), which must leave whole characters there. ``where`` names
    the file in the errors."""
    merges, vocab = model.get("merges"), model.get("vocab")
    if model.get("type", "BPE") != "BPE" or not isinstance(merges, list) or not isinstance(vocab, dict):
        return  # (HF's own error names what is wrong)
    prefix = model.get("continuing_subword_prefix")
    cut = len(prefix.encode("utf-8", "surrogatepass")) if isinstance(prefix, str) else 0
    if not cut and _merges_in_vocab(merges, vocab):
        return
    for n, merge in enumerate(merges):  # (the first merge that is wrong, named)
        parts = merge.split(" ") if isinstance(merge, str) else merge
        if not isinstance(parts, list) or len(parts) != 2 or not isinstance(parts[0], str) or not isinstance(parts[1], str):
            continue  # HF's own error names it
        left, right = parts
        made = left + right
        if cut:
            raw = right.encode("utf-8", "surrogatepass")
            if len(raw) < cut or (cut < len(raw) and 0x80 <= raw[cut] < 0xC0):
                raise VocabError(f"{where}: model.merges[{n}]: its right part {brief(right)} does not go on past "
                                 f"continuing_subword_prefix {brief(prefix)}")
            made = left + raw[cut:].decode("utf-8", "surrogatepass")
        for part in (left, right, made):
            if part not in vocab:
                raise VocabError(f"{where}: model.merges[{n}] ({brief(left)} + {brief(right)}): {brief(part)} is "
                                 "not a token of model.vocab")


def _merges_in_vocab(merges: list, vocab: dict) -> bool:
    """Whether every merge is two strings whose concatenation is a token of ``vocab`` (no prefix),
    at C speed. (Its parts HF checks itself, with a clean error, before its result.)"""
    from itertools import starmap

    try:
        pairs = [merge.split(" ") if type(merge) is str else merge for merge in merges]
        return {*map(len, pairs)} <= {2} and all(map(vocab.__contains__, starmap(str.__add__, pairs)))
    except TypeError:  # (entries of other types: the loop that names them)
        return False


def _unicode(text: object, position: int | None = None) -> str:
    """``text`` as HF ``tokenizers`` takes it: a ``str`` (else a WrongTypeError, naming its place in a
    batch) whose lone surrogates are U+FFFD, as tiktoken encodes them."""
    if not isinstance(text, str):
        where = "" if position is None else f"texts[{position}]: "
        raise in_batch(WrongTypeError(f"{where}expected text as str, got {type(text).__name__}"), position)
    if text.isascii():  # (no copy to look for surrogates in)
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


#: Texts converted at a time by :meth:`HFTokenizer.encode_batch_to_numpy`.
_SLICE = 4096


class HFTokenizer:
    """A thin adapter giving a ``tokenizers.Tokenizer`` wwho's interface (:mod:`wwho.protocol`'s names,
    and the array forms; no ``token_bytes``, so it is no :class:`wwho.Tokenizer` and no streaming
    decoder takes it: a non-byte-level HF model's tokens need not be bytes). Special-token text in the
    input (``[CLS]``) is that special token, as HF reads it; there is no ``allowed_special`` option.
    ``encode`` is HF's, which holds the GIL for the call; the batch forms release it (HF's pool)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        ids = tokenizer.get_vocab(with_added_tokens=True).values()
        # The id space, as tiktoken's n_vocab: one past the largest id. HF's get_vocab_size counts the
        # tokens, which is less where the ids have a gap (a vocab.txt with a line twice), and would
        # refuse ids this tokenizer's own encode gives.
        self._size = max(ids, default=-1) + 1
        self._gapped = self._size != len(ids)

    @property
    def vocab_size(self) -> int:
        """The id space, added tokens included: one more than the largest id."""
        return self._size

    def __repr__(self) -> str:
        model = type(self.tokenizer.model).__name__
        return f"<HFTokenizer {model} vocab_size={self.vocab_size}>"

    def describe(self, *, top: int = 10) -> str:
        """A human-readable summary (``wwho inspect``): the model and its parts, the special tokens,
        the first merges (a BPE model) and the longest tokens."""
        import json

        spec = json.loads(self.tokenizer.to_str())
        model = spec.get("model") or {}
        vocab = self.get_vocab()

        def kind(part: object) -> str:
            if not isinstance(part, dict):
                return "none"
            inner = part.get("pretokenizers") or part.get("normalizers") or part.get("decoders") or []
            return str(part.get("type")) + (f" of {', '.join(kind(p) for p in inner)}" if inner else "")

        specials = [t["content"] for t in spec.get("added_tokens", []) if t.get("special")]
        lines = [
            (f"Hugging Face tokenizer: {model.get('type', '?')} model, {len(vocab):,} tokens, ids 0 to "
             f"{self.vocab_size - 1:,}{' (with gaps)' if self._gapped else ''}"),
            f"  normalizer: {kind(spec.get('normalizer'))}; pre-tokenizer: {kind(spec.get('pre_tokenizer'))}; "
            f"decoder: {kind(spec.get('decoder'))}",
            f"  special tokens: {' '.join(specials) if specials else 'none'}",
        ]
        merges = model.get("merges")
        if isinstance(merges, list):
            shown = [m.split(" ", 1) if isinstance(m, str) else m for m in merges[:top]]
            lines += [f"  merges: {len(merges):,}; first {len(shown)}:",
                      *(f"    {a!r} + {b!r} -> {a + b!r}" for a, b in shown)]
        longest = sorted(vocab, key=lambda t: (-len(t), t))[:top]
        lines += [f"  longest {len(longest)} tokens:", *(f"    {t!r} ({len(t)} chars, id {vocab[t]})" for t in longest)]
        return "\n".join(lines)

    def encode(self, text: str) -> list[int]:
        """Ids of ``text``, without the post-processor's special tokens (a lone surrogate is read as
        U+FFFD, as tiktoken reads it: HF ``tokenizers`` refuses such a ``str`` with a TypeError)."""
        return _hf_call(self.tokenizer.encode, _unicode(text), add_special_tokens=False).ids

    def encode_batch(self, texts: list[str], *, num_threads: int | None = None) -> list[list[int]]:
        """In order. ``num_threads=1`` encodes on this thread; otherwise HF ``tokenizers`` runs the
        batch on its own thread pool (sized by ``RAYON_NUM_THREADS``, all cores by default)."""
        from wwho.ids import batch as as_batch

        return self._lists(as_batch(texts, "encode_batch"), num_threads)

    def _lists(self, texts: Sequence[object], num_threads: int | None, first: int = 0) -> list[list[int]]:
        """The ids of a checked batch (``first``: the place of its first text, for errors)."""
        from wwho.threads import thread_count

        texts = [_unicode(t, first + n) for n, t in enumerate(texts)]
        if thread_count(num_threads) == 1:  # checked as every kind checks it
            return [_hf_call(self.tokenizer.encode, t, add_special_tokens=False).ids for t in texts]
        return [e.ids for e in _hf_call(self.tokenizer.encode_batch, texts, add_special_tokens=False)]

    def encode_to_numpy(self, text: str) -> NDArray[np.uint32]:
        """:meth:`encode` as a ``numpy.uint32`` array, as every kind gives it."""
        from wwho.imports import import_module

        np = import_module("numpy")  # (under the lock a fork waits for: wwho.imports)

        return np.asarray(self.encode(text), dtype=np.uint32)

    def encode_batch_to_numpy(self, texts: list[str], *, num_threads: int | None = None) -> FlatIds:
        """:meth:`encode_batch` in the flat form of every kind (:mod:`wwho.arrays`): ``(ids, offsets)``,
        converted from HF ``tokenizers``' lists a slice of texts at a time (HF's objects for a whole
        batch would hold tens of times the ids' memory)."""
        from wwho.ids import batch as as_batch
        from wwho.imports import arrays

        texts = as_batch(texts, "encode_batch_to_numpy")
        flat = arrays()
        parts = [flat.from_lists(self._lists(texts[k:k + _SLICE], num_threads, first=k))
                 for k in range(0, len(texts), _SLICE)]
        return flat.concatenate(parts)

    def tokenize(self, text: str) -> list[str]:
        """The token strings of ``text``."""
        return _hf_call(self.tokenizer.encode, _unicode(text), add_special_tokens=False).tokens

    def decode(self, ids: list[int], *, skip_special_tokens: bool = False) -> str:
        """Text of ``ids``, each checked as every wwho decode checks it (HF drops an id it does not
        know without a word)."""
        from wwho.errors import WrongTypeError, check_flag
        from wwho.ids import token_ids

        # WrongTypeError (a TypeError too), as the other kinds' decode raises for a flag that is no bool
        skip_special_tokens = check_flag(skip_special_tokens, "skip_special_tokens", WrongTypeError)
        ids = token_ids(ids, self.vocab_size)
        if self._gapped:  # an id in a gap has no token: HF would drop it without a word
            for position, i in enumerate(ids):
                if self.tokenizer.id_to_token(i) is None:
                    raise UnknownTokenError(f"token id {brief(i)} at position {position} is not in this vocabulary "
                                            "(its ids have gaps)")
        return _hf_call(self.tokenizer.decode, ids, skip_special_tokens=skip_special_tokens)

    def decode_batch(self, batch: Iterable[Iterable[int]], *, skip_special_tokens: bool = False,
                     num_threads: int | None = 8) -> list[str]:
        """:meth:`decode` of each list of ids, in order (``num_threads`` is checked and accepted, as on
        every kind; decoding is done on the calling thread)."""
        from wwho.ids import each_decoded, id_batch
        from wwho.threads import thread_count

        thread_count(num_threads)
        return each_decoded(id_batch(batch), lambda ids: self.decode(ids, skip_special_tokens=skip_special_tokens))

    def __len__(self) -> int:
        return self.vocab_size

    def get_vocab(self) -> dict[str, int]:
        return self.tokenizer.get_vocab(with_added_tokens=True)

    def token_to_id(self, token: str) -> int:
        i = self.tokenizer.token_to_id(token) if isinstance(token, str) else None
        if i is None:
            raise no_token_string(token)
        return i

    def id_to_token(self, token_id: int) -> str:
        token = self.tokenizer.id_to_token(token_id_of(token_id, self.vocab_size))
        if token is None:
            raise UnknownTokenError(f"token id {brief(token_id)} is not in this vocabulary")
        return token
