"""Load, save and recognise binary tokenizers stored as standard HF ``tokenizer.json``.

A binary tokenizer is a plain BPE model whose vocabulary holds all 256 bytes as
Latin-1 characters (and only Latin-1 characters), with no normalizer, no
pre-tokenizer, and either no decoder or ``Fuse`` (which only concatenates). Nothing
else marks it: the file is exactly what stock HF ``tokenizers`` writes and reads.

What this module deliberately does not do: train (``train``), or convert other
tokenizer formats.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from wwho.errors import VocabError
from wwho.fileio import atomic_open


def looks_binary(data: Any) -> bool:
    """True if parsed ``tokenizer.json`` content is a binary (Latin-1 byte) BPE tokenizer."""
    if not isinstance(data, dict):
        return False
    model = data.get("model")
    if not isinstance(model, dict) or model.get("type") != "BPE" or not isinstance(model.get("vocab"), dict):
        return False
    if data.get("normalizer") is not None or data.get("pre_tokenizer") is not None:
        return False
    decoder = data.get("decoder")
    if decoder is not None and decoder != {"type": "Fuse"}:
        return False
    vocab = model["vocab"]
    if any(chr(b) not in vocab for b in range(256)):
        return False
    return all(isinstance(tok, str) and tok and max(tok) <= "\xff" for tok in vocab)


def is_binary_tokenizer(path: str | Path) -> bool:
    """True if ``path`` is a ``tokenizer.json`` of a binary tokenizer (judged by content).

    Any file that is not such JSON (missing, unreadable, GGUF, a text tokenizer) gives False.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(1)
            if head not in (b"{", b" ", b"\n", b"\r", b"\t", b"\xef"):  # JSON object, maybe after a BOM
                return False
            data = json.loads((head + f.read()).decode("utf-8-sig"))
    except (OSError, ValueError):
        return False
    return looks_binary(data)


def load(path: str | Path) -> Tokenizer:
    """Load a binary ``tokenizer.json``; :class:`VocabError` if it cannot be read or is not binary.

    The returned tokenizer has ``encode_special_tokens = True``: special-token text inside
    the data is encoded as bytes, never as a special token (HF does not save this flag).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise VocabError(f"{path}: cannot read tokenizer: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise VocabError(f"{path}: not UTF-8 JSON (byte offset {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise VocabError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    if not looks_binary(data):
        raise VocabError(f"{path}: not a binary tokenizer (need a BPE model over all 256 Latin-1 bytes, "
                         "no normalizer or pre-tokenizer, decoder null or Fuse)")
    try:
        tokenizer = Tokenizer.from_str(text)
    except Exception as exc:  # the Rust loader raises a bare Exception
        raise VocabError(f"{path}: HF tokenizers cannot load it: {exc}") from None
    tokenizer.encode_special_tokens = True
    return tokenizer


def save(tokenizer: Tokenizer, path: str | Path, *, pretty: bool = False) -> None:
    """Write ``tokenizer.json`` atomically (temp file + rename): never a torn file."""
    text = tokenizer.to_str(pretty=pretty)
    with atomic_open(path, "w") as f:
        f.write(text)
