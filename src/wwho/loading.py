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

Every wwho kind loaded satisfies :class:`wwho.protocol.Tokenizer` (binary: bytes in and out);
an ``hf`` tokenizer that is not byte-level has ``encode(text) -> list[int]``, ``decode(ids) -> str``
and ``vocab_size``. This module only dispatches; each kind lives in its own module.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from wwho.errors import TokenizerError, VocabError, brief
from wwho.fileio import parse_json, read_bytes
from wwho.ids import token_id as token_id_of

KINDS = ("sgpe", "meta", "bytelevel", "gguf", "binary", "hf")


def detect_kind(path: str | os.PathLike) -> str:
    """The kind of tokenizer stored at ``path`` (see the module docstring)."""
    p = Path(path)
    if not p.exists():
        from wwho.bytelevel.files import TIKTOKEN_ENCODINGS, known_encoding_name

        if known_encoding_name(path):
            return "bytelevel"
        raise VocabError(f"{p}: no such file or directory, nor a known encoding ({', '.join(TIKTOKEN_ENCODINGS)}, "
                         "also spelled tiktoken:NAME)")
    if p.is_dir():
        for name, kind in (("meta_config.json", "meta"), ("vocab.json", "sgpe"), ("bytelevel.json", "bytelevel"),
                           ("tokenizer.json", None)):
            if (p / name).exists():  # what is not a regular file is refused by its loader, by name
                return kind or detect_kind(p / name)
        raise VocabError(f"{p}: no tokenizer here (expected vocab.json, meta_config.json, bytelevel.json "
                         "or tokenizer.json)")
    suffix = p.suffix.lower()
    if suffix == ".gguf":
        return "gguf"
    if suffix == ".tiktoken":
        return "bytelevel"
    if suffix == ".json":
        data = _read_json(p)
        if isinstance(data, dict) and "model" in data:
            from wwho.binary.io import looks_binary

            return "binary" if looks_binary(data) else "hf"
        if isinstance(data, dict) and "vocab" in data and "merges" in data:
            return "sgpe"
        if isinstance(data, dict) and "offset" in data and "tiktoken_encoding" in data:
            return "meta"
    raise VocabError(f"{p}: cannot tell what kind of tokenizer this is")


#: What each kind is, for messages.
KIND_NAMES = {
    "sgpe": "an SGPE vocabulary (vocab.json)",
    "meta": "a meta tokenizer (tiktoken + SGPE, meta_config.json)",
    "bytelevel": "a byte-level BPE tokenizer (bytelevel.json or .tiktoken)",
    "gguf": "a GGUF vocabulary",
    "binary": "a binary (bytes) tokenizer",
    "hf": "a Hugging Face tokenizer.json",
}


def check_kind(path: str | os.PathLike, expected: str, loader: str) -> None:
    """Raise :class:`VocabError` when ``path`` holds a tokenizer of another kind than ``expected``,
    saying what it is and which function loads any kind (``loader`` is the one that was called).
    Does nothing when ``path`` is that kind or no kind at all (the loader's own error says why)."""
    try:
        kind = detect_kind(path)
    except (VocabError, OSError):
        return
    if kind == expected:
        return
    p = Path(path)
    what = KIND_NAMES[kind]
    if (p if p.is_dir() else p.parent).joinpath("wwho_extend.json").is_file() and kind == "hf":
        what = "a `wwho extend` directory (a Hugging Face tokenizer.json)"
    raise VocabError(f"{p}: this is {what}, not {KIND_NAMES[expected]}, so {loader} cannot read it. "
                     "To fix: wwho.load_tokenizer(path) loads any kind (and wwho commands take it as is)")


def load_tokenizer(path: str | os.PathLike, *, kind: str | None = None, pattern: str | None = None) -> Any:
    """Load the tokenizer at ``path`` (its kind detected unless given). ``pattern``: the
    pre-tokenizer (a name such as ``o200k`` or a regex) of a ``.tiktoken`` file that is not
    a known encoding, which the file itself does not say."""
    kind = kind or detect_kind(path)
    p = Path(path)
    if kind == "sgpe":
        from wwho.sgpe import SGPETokenizer

        return SGPETokenizer.load(p)
    if kind == "meta":
        from wwho.meta import MetaTokenizer

        return MetaTokenizer.load(p.parent if p.is_file() else p)
    if kind == "bytelevel":
        from wwho.bytelevel import ByteBPE

        if p.suffix == ".tiktoken" or not p.exists():  # a file, or a known name such as (tiktoken:)o200k_base
            return ByteBPE.from_tiktoken(p if p.exists() else os.fspath(path), pattern=pattern)
        return ByteBPE.load(p)
    if kind == "gguf":
        from wwho.bytelevel import ByteBPE

        return ByteBPE.from_gguf(p)
    if kind == "binary":
        from wwho.binary.tokenizer import BinaryTokenizer

        return BinaryTokenizer.load(p if p.is_file() else p / "tokenizer.json")
    if kind == "hf":
        return _load_hf(p if p.is_file() else p / "tokenizer.json")
    raise VocabError(f"unknown tokenizer kind {kind!r}; known: {', '.join(KINDS)}")


def _load_hf(path: Path) -> Any:
    from wwho.bytelevel import ByteBPE
    from wwho.bytelevel.files import NotByteLevel

    try:
        return ByteBPE.from_hf(path)  # a broken byte-level file is an error, not a reason to try HF
    except NotByteLevel:
        pass
    import tokenizers

    from wwho.binary.io import check_ids
    from wwho.savedir import check_saved

    raw = read_bytes(path, error=VocabError)
    check_saved(path.parent, {path.name: raw}, only_listed=True)
    data = parse_json(raw, source=str(path), error=VocabError)
    model = data.get("model") if isinstance(data, dict) else None
    if isinstance(model, dict) and isinstance(model.get("vocab"), dict):
        check_ids(data, str(path))  # HF would keep the last of two tokens with one id
    try:
        return HFTokenizer(tokenizers.Tokenizer.from_file(str(path)))
    except Exception as exc:  # noqa: BLE001 -- tokenizers raises a plain Exception for bad files
        raise VocabError(f"{path}: HF tokenizers cannot load it: {brief(str(exc), 200)}") from None


class HFTokenizer:
    """A thin adapter giving a ``tokenizers.Tokenizer`` wwho's interface (:mod:`wwho.protocol`'s names;
    no ``token_bytes``: a non-byte-level HF model's tokens need not be bytes)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: list[str], *, num_threads: int | None = None) -> list[list[int]]:
        """In order. ``num_threads=1`` encodes on this thread; otherwise HF ``tokenizers`` runs the
        batch on its own thread pool (sized by ``RAYON_NUM_THREADS``, all cores by default)."""
        if num_threads == 1:
            return [self.tokenizer.encode(t, add_special_tokens=False).ids for t in texts]
        return [e.ids for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def tokenize(self, text: str) -> list[str]:
        return self.tokenizer.encode(text, add_special_tokens=False).tokens

    def decode(self, ids: list[int], *, skip_special_tokens: bool = False) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def decode_batch(self, batch, *, skip_special_tokens: bool = False) -> list[str]:
        return [self.decode(ids, skip_special_tokens=skip_special_tokens) for ids in batch]

    def __len__(self) -> int:
        return self.vocab_size

    def get_vocab(self) -> dict[str, int]:
        return self.tokenizer.get_vocab(with_added_tokens=True)

    def token_to_id(self, token: str) -> int:
        i = self.tokenizer.token_to_id(token) if isinstance(token, str) else None
        if i is None:
            raise TokenizerError(f"{brief(token)} is not a token string of this vocabulary")
        return i

    def id_to_token(self, token_id: int) -> str:
        token = self.tokenizer.id_to_token(token_id_of(token_id))
        if token is None:
            raise TokenizerError(f"token id {token_id!r} is not in this vocabulary")
        return token


def _read_json(path: Path) -> Any:
    return parse_json(read_bytes(path, error=VocabError), source=str(path), error=VocabError)
