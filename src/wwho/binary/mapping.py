"""Bytes <-> text bridge for binary tokenizers, and byte-level encode/decode helpers.

HF ``tokenizers`` works on strings, so every byte ``b`` is carried as the character
``chr(b)`` (Latin-1: U+0000..U+00FF). That mapping is the identity on code points, is
reversible for all 256 values, and makes one character exactly one byte, so the
character offsets HF reports are byte offsets. Unlike GPT-2's byte-level mapping it
needs no table and no pre-tokenizer.

What this module deliberately does not do: load or train tokenizers (see ``io`` and
``train``), or accept text with characters above U+00FF as "bytes".
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

from tokenizers import Tokenizer, decoders

from wwho.errors import TokenizerError


def bytes_to_text(data: bytes | bytearray | memoryview) -> str:
    """Map each byte to the character with the same code point (Latin-1)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TokenizerError(f"expected bytes, got {type(data).__name__}")
    return bytes(data).decode("latin-1")


def text_to_bytes(text: str) -> bytes:
    """Inverse of :func:`bytes_to_text`; every character must be U+0000..U+00FF."""
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError as exc:
        raise TokenizerError(
            f"character {text[exc.start]!r} (U+{ord(text[exc.start]):04X}) at offset {exc.start} "
            "is not a byte; is this a binary tokenizer?"
        ) from None


@dataclass(frozen=True)
class BinaryEncoding:
    """The tokens of a byte string: ``ids``, the bytes of each token, and byte offsets.

    ``offsets[i] == (start, end)`` means token ``i`` covers ``data[start:end]``. Special
    tokens added by a template cover no input: their offsets are ``(0, 0)``, their
    ``tokens`` entry is their name in ASCII and ``special_tokens_mask`` marks them with 1.
    """

    ids: list[int]
    tokens: list[bytes]
    offsets: list[tuple[int, int]]
    special_tokens_mask: list[int]

    def __len__(self) -> int:
        return len(self.ids)


def encode_bytes(tokenizer: Tokenizer, data: bytes | bytearray | memoryview, *,
                 add_special_tokens: bool = False) -> BinaryEncoding:
    """Encode raw bytes. ``add_special_tokens`` applies the tokenizer's template, if any.

    Binary data may contain the literal bytes of a special token (``<|end|>``); they
    must stay data. This sets ``tokenizer.encode_special_tokens = True`` (HF does not
    save that flag in ``tokenizer.json``), so special tokens come only from the template.
    """
    text = bytes_to_text(data)
    tokenizer.encode_special_tokens = True
    enc = tokenizer.encode(text, add_special_tokens=add_special_tokens)
    # Latin-1 is one character per byte, so the character offsets HF returns are byte offsets.
    mask = enc.special_tokens_mask
    tokens = [tok.encode("utf-8") if special else tok.encode("latin-1")
              for tok, special in zip(enc.tokens, mask)]
    return BinaryEncoding(ids=list(enc.ids), tokens=tokens, offsets=list(enc.offsets),
                          special_tokens_mask=list(mask))


def encode_bytes_batch(tokenizer: Tokenizer, items: Sequence[bytes | bytearray | memoryview], *,
                       add_special_tokens: bool = False, num_threads: int | None = None) -> list[BinaryEncoding]:
    """:func:`encode_bytes` of every item, in order. ``num_threads=1`` encodes on this thread;
    otherwise HF ``tokenizers`` runs the batch on its own thread pool (all cores by default,
    ``RAYON_NUM_THREADS`` to change it)."""
    texts = [bytes_to_text(data) for data in items]
    tokenizer.encode_special_tokens = True
    if num_threads == 1:
        encodings = [tokenizer.encode(t, add_special_tokens=add_special_tokens) for t in texts]
    else:
        encodings = tokenizer.encode_batch(texts, add_special_tokens=add_special_tokens)
    out = []
    for enc in encodings:
        mask = enc.special_tokens_mask
        tokens = [tok.encode("utf-8") if special else tok.encode("latin-1")
                  for tok, special in zip(enc.tokens, mask)]
        out.append(BinaryEncoding(ids=list(enc.ids), tokens=tokens, offsets=list(enc.offsets),
                                  special_tokens_mask=list(mask)))
    return out


def decode_to_bytes(tokenizer: Tokenizer, ids: Sequence[int], *, skip_special: bool = True) -> bytes:
    """The bytes of ``ids``; special tokens are dropped unless ``skip_special=False``.

    Raises :class:`TokenizerError` for a non-integer or out-of-range id, naming its position.
    """
    ids = list(ids)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    if ids and not (all(type(i) is int for i in ids) and 0 <= min(ids) and max(ids) < size):
        checked = []
        for pos, i in enumerate(ids):
            try:
                value = operator.index(i)  # int, numpy integers; not floats or strings
            except TypeError:
                value = None
            if value is None or isinstance(i, bool):
                raise TokenizerError(f"id at position {pos} is {i!r}, not an integer")
            if not 0 <= value < size:
                raise TokenizerError(f"id {value} at position {pos} is out of range (vocabulary size {size})")
            checked.append(value)
        ids = checked
    if isinstance(tokenizer.decoder, decoders.Fuse):
        text = tokenizer.decode(ids, skip_special_tokens=skip_special)
    else:
        # Without a decoder HF joins tokens with spaces, which would corrupt bytes: join them here.
        specials = {i for i, tok in tokenizer.get_added_tokens_decoder().items() if tok.special}
        text = "".join(tokenizer.id_to_token(i) for i in ids if not (skip_special and i in specials))
    return text_to_bytes(text)
