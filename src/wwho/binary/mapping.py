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

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `import wwho` and `wwho --version` do without it
    from tokenizers import Tokenizer

from wwho.errors import TokenizerError, WrongTypeError, in_batch
from wwho.ids import batch as as_batch
from wwho.ids import token_id, token_ids
from wwho.imports import import_module
from wwho.threads import rayon_threads, thread_count

#: Data longer than this is encoded in pieces (see :func:`encode_bytes`).
CHUNK_BYTES = 1 << 16
_BATCH = 32  # pieces per encode_batch call: HF's memory holds about this many pieces
_PART_PIECES = 8  # pieces per part of encode_bytes_parts (a part's tokens are held as Python objects)
_SCAN_BYTES = 1 << 20  # positions searched for cuts at a time (the search's arrays: about 12 bytes each)


def bytes_to_text(data: bytes | bytearray | memoryview, position: int | None = None) -> str:
    """Map each byte to the character with the same code point (Latin-1); ``position``, the
    item's place in a batch, is named in the error."""
    return bytes(_as_data(data, position)).decode("latin-1")


def _as_data(data: object, position: int | None = None) -> bytes | bytearray | memoryview:
    """``data``'s bytes, as hashlib takes them: bytes and bytearray as they are, any other object
    with the buffer protocol (a memoryview, a numpy array, an mmap) as a flat view of its bytes
    (``len`` then counts bytes, and a numpy integer is its own bytes, not that many zero bytes as
    ``bytes(5)`` would make). A TokenizerError for anything else, str included."""
    where = "" if position is None else f"texts[{position}]: "
    try:
        return _data_of(data, where)
    except WrongTypeError as exc:
        raise in_batch(exc, position) from None


def _data_of(data: object, where: str) -> bytes | bytearray | memoryview:
    if isinstance(data, str):
        raise WrongTypeError(f"{where}a binary tokenizer encodes bytes, not str: pass text.encode('utf-8') "
                             "(or use a text tokenizer)")
    if isinstance(data, (bytes, bytearray)):
        return data
    try:
        view = memoryview(data)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # (ValueError: a numpy dtype with no buffer format, datetime64)
        raise WrongTypeError(f"{where}expected bytes, got {type(data).__name__}") from None
    if view.format.lstrip("0123456789<>=!@") in ("w", "u"):  # text in UCS-4 (numpy's str arrays, array('u'))
        raise WrongTypeError(f"{where}a binary tokenizer encodes bytes, not text ({type(data).__name__} of "
                             "characters): encode each text with .encode('utf-8') (or use a text tokenizer)")
    if not view.nbytes:  # (cast refuses a shape with a 0 in it)
        return b""
    return view.cast("B") if view.c_contiguous else view.tobytes()


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


def _hf_tokenizer(tokenizer: object) -> Tokenizer:
    """The HF ``tokenizers.Tokenizer`` to encode with: ``tokenizer`` itself, or a wwho
    :class:`~wwho.binary.BinaryTokenizer`'s (which holds one); anything else is a TokenizerError."""
    from tokenizers import Tokenizer  # (imported where used: see the top)

    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    inner = getattr(tokenizer, "hf", None)  # a BinaryTokenizer's (not imported here: it imports this module)
    if isinstance(inner, Tokenizer):
        return inner
    raise TokenizerError(f"expected a tokenizers.Tokenizer or a wwho BinaryTokenizer, got {type(tokenizer).__name__}")


def encode_bytes(tokenizer: Tokenizer, data: bytes | bytearray | memoryview, *,
                 add_special_tokens: bool = False, chunk_bytes: int = CHUNK_BYTES) -> BinaryEncoding:
    """Encode raw bytes. ``add_special_tokens`` applies the tokenizer's template, if any.

    Binary data may contain the literal bytes of a special token (``<|end|>``); they
    must stay data. This sets ``tokenizer.encode_special_tokens = True`` (HF does not
    save that flag in ``tokenizer.json``), so special tokens come only from the template.

    Data longer than ``chunk_bytes`` is encoded in pieces of about that size, cut only
    between two bytes that no token of the vocabulary holds side by side: no token can
    cover such a cut, so it is a boundary of the whole encoding, and BPE (lowest rank
    first) merges each side of a boundary exactly as it would alone. The ids are HF's
    on the whole data (tests compare them), with HF's memory bounded by the piece size
    and the pieces encoded in parallel (``encode_batch``).
    """
    tokenizer = _hf_tokenizer(tokenizer)
    data = _as_data(data)
    return _encode(tokenizer, data, add_special_tokens, _chunk_size(chunk_bytes), full=True)


def encode_bytes_ids(tokenizer: Tokenizer, data: bytes | bytearray | memoryview, *,
                     add_special_tokens: bool = False, chunk_bytes: int = CHUNK_BYTES) -> list[int]:
    """The ids of :func:`encode_bytes` alone: no token bytes nor offsets are built (a tenth of the
    memory per token)."""
    tokenizer = _hf_tokenizer(tokenizer)
    data = _as_data(data)
    return _encode(tokenizer, data, add_special_tokens, _chunk_size(chunk_bytes), full=False)


def _chunk_size(chunk_bytes: object) -> int:
    if isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, int) or chunk_bytes < 1:
        raise TokenizerError(f"chunk_bytes must be a positive integer (bytes per piece), got {chunk_bytes!r}")
    return chunk_bytes


def encode_bytes_parts(tokenizer: Tokenizer, data: bytes | bytearray | memoryview, *,
                       add_special_tokens: bool = False, chunk_bytes: int = CHUNK_BYTES,
                       read: Callable[[int], object] | None = None) -> Iterator[BinaryEncoding]:
    """:func:`encode_bytes` as consecutive parts, in order: joined, they are its result (offsets
    are into the whole ``data``). Long data gives a part per ``_PART_PIECES`` pieces (dense data
    gives a token per two bytes or so, and a token costs a few hundred bytes of Python objects
    here), and the template's tokens before and after it are parts of their own, so a caller that
    writes each part as it comes holds one part's tokens at a time, not the data's. ``read(n)`` is
    told the bytes of the data each part covers, as it is made (a progress bar)."""
    tokenizer = _hf_tokenizer(tokenizer)
    data = _as_data(data)
    return _parts(tokenizer, data, add_special_tokens, _chunk_size(chunk_bytes), full=True, batch=_PART_PIECES,
                  read=read)


def encode_bytes_ids_parts(tokenizer: Tokenizer, data: bytes | bytearray | memoryview, *,
                           add_special_tokens: bool = False, chunk_bytes: int = CHUNK_BYTES,
                           read: Callable[[int], object] | None = None) -> Iterator[list[int]]:
    """The ids of :func:`encode_bytes_parts`' parts alone (``read``: as there)."""
    tokenizer = _hf_tokenizer(tokenizer)
    data = _as_data(data)
    return _parts(tokenizer, data, add_special_tokens, _chunk_size(chunk_bytes), full=False, batch=_PART_PIECES,
                  read=read)


def _encode(tokenizer: Tokenizer, data: bytes | bytearray | memoryview, add_special_tokens: bool,
            chunk_bytes: int, *, full: bool, serial: bool = False) -> BinaryEncoding | list[int]:
    """:func:`encode_bytes` (``full``) or :func:`encode_bytes_ids` on checked arguments; ``serial``:
    the pieces one by one on this thread, not on HF's pool."""
    parts = list(_parts(tokenizer, data, add_special_tokens, chunk_bytes, full=full, serial=serial))
    if not full:
        return parts[0] if len(parts) == 1 else [i for part in parts for i in part]
    if len(parts) == 1:
        return parts[0]
    return BinaryEncoding(ids=[i for part in parts for i in part.ids],
                          tokens=[t for part in parts for t in part.tokens],
                          offsets=[o for part in parts for o in part.offsets],
                          special_tokens_mask=[m for part in parts for m in part.special_tokens_mask])


def _parts(tokenizer: Tokenizer, data: bytes | bytearray | memoryview, add_special_tokens: bool,
           chunk_bytes: int, *, full: bool, serial: bool = False, batch: int = _BATCH,
           read: Callable[[int], object] | None = None) -> Iterator[BinaryEncoding | list[int]]:
    """The parts of :func:`encode_bytes_parts` (``full``), or their ids alone; ``batch`` pieces a
    part; ``read(n)``: the bytes each part covers."""
    data = bytes(data) if not isinstance(data, bytes) else data
    _special_tokens_as_data(tokenizer)
    pieces = _pieces(tokenizer, data, chunk_bytes) if len(data) > chunk_bytes else None
    if pieces is None:
        enc = tokenizer.encode(bytes_to_text(data), add_special_tokens=add_special_tokens)
        if read is not None:
            read(len(data))
        yield _encoding(enc) if full else enc.ids
        return
    frame = None
    if add_special_tokens and tokenizer.post_processor is not None:
        # The template's specials around one data token: [prefix..., data, suffix...].
        frame = _encoding(tokenizer.encode("\x00", add_special_tokens=True))
        cut = frame.special_tokens_mask.index(0)
        yield _frame_part(frame, slice(0, cut), full)
    for k in range(0, len(pieces), batch):
        starts = pieces[k:k + batch]
        texts = [data[a:b].decode("latin-1") for a, b in starts]
        encodings = [tokenizer.encode(t, add_special_tokens=False) for t in texts] if serial else \
            tokenizer.encode_batch(texts, add_special_tokens=False)
        ids: list[int] = []
        tokens: list[bytes] = []
        offsets: list[tuple[int, int]] = []
        for (start, _), enc in zip(starts, encodings):
            ids += enc.ids
            if full:
                tokens += [t.encode("latin-1") for t in enc.tokens]
                offsets += [(a + start, b + start) for a, b in enc.offsets]
        if read is not None:
            read(sum(b - a for a, b in starts))
        yield BinaryEncoding(ids=ids, tokens=tokens, offsets=offsets, special_tokens_mask=[0] * len(ids)) \
            if full else ids
    if frame is not None:
        yield _frame_part(frame, slice(cut + 1, None), full)


def _frame_part(frame: BinaryEncoding, where: slice, full: bool) -> BinaryEncoding | list[int]:
    if not full:
        return frame.ids[where]
    return BinaryEncoding(ids=frame.ids[where], tokens=frame.tokens[where], offsets=frame.offsets[where],
                          special_tokens_mask=frame.special_tokens_mask[where])


def _encoding(enc) -> BinaryEncoding:
    # Latin-1 is one character per byte, so the character offsets HF returns are byte offsets.
    mask = enc.special_tokens_mask
    tokens = [tok.encode("utf-8") if special else tok.encode("latin-1")
              for tok, special in zip(enc.tokens, mask)]
    return BinaryEncoding(ids=list(enc.ids), tokens=tokens, offsets=list(enc.offsets),
                          special_tokens_mask=list(mask))


def _pieces(tokenizer: Tokenizer, data: bytes, size: int) -> list[tuple[int, int]] | None:
    """``(start, end)`` pieces of about ``size`` bytes, cut where no token can cross; None when
    the model is not a plain BPE over bytes (then the data is encoded whole)."""
    from tokenizers import models

    model = tokenizer.model
    if not isinstance(model, models.BPE) or model.ignore_merges or model.dropout or model.byte_fallback \
            or model.continuing_subword_prefix or model.end_of_word_suffix \
            or tokenizer.truncation or tokenizer.padding:  # each piece would be cut or padded on its own
        return None
    tokens = list(tokenizer.get_vocab(with_added_tokens=False))
    for added in tokenizer.get_added_tokens_decoder().values():
        # Special tokens are never matched in data (encode_special_tokens); other added tokens are, and
        # a cut must not fall inside one either. One whose match depends on its neighbours (spaces it
        # strips, word boundaries) is matched differently in a piece than in the whole.
        if not added.special:
            if added.lstrip or added.rstrip or added.single_word:
                return None
            tokens.append(added.content)
    inside = bytearray(65536)  # byte pairs that occur inside some token
    for token in tokens:
        try:
            raw = token.encode("latin-1")
        except UnicodeEncodeError:
            return None
        for x, y in zip(raw, raw[1:]):
            inside[x << 8 | y] = 1
    np = import_module("numpy")  # (under the lock a fork waits for: wwho.imports)

    table = np.frombuffer(bytes(inside), dtype=np.uint8)
    view = np.frombuffer(data, dtype=np.uint8)
    # Each cut is the first free position (no token holds the bytes on its two sides) at least
    # `size` after the one before; positions are searched _SCAN_BYTES at a time, so the search's
    # arrays stay that size whatever the data's.
    cuts = [0]
    for lo in range(1, len(data), _SCAN_BYTES):
        hi = min(len(data), lo + _SCAN_BYTES)
        if cuts[-1] + size >= hi:  # (no cut falls in this stretch)
            continue
        pairs = (view[lo - 1:hi - 1].astype(np.uint16) << 8) | view[lo:hi]
        free = np.flatnonzero(table[pairs] == 0) + lo
        while (k := int(np.searchsorted(free, cuts[-1] + size))) < len(free):
            cuts.append(int(free[k]))
    cuts.append(len(data))
    return list(zip(cuts, cuts[1:]))


def _special_tokens_as_data(tokenizer: Tokenizer) -> None:
    """HF's ``encode_special_tokens = True``, set only where it is not yet: the setter takes the
    HF tokenizer's write lock, which a thread of the parent may hold mid-batch at a ``fork``, copied
    held into the child (whose encode then waited for ever). Tokenizers wwho loads or trains have it
    set already."""
    if not tokenizer.encode_special_tokens:
        tokenizer.encode_special_tokens = True


def encode_bytes_batch(tokenizer: Tokenizer, items: Sequence[bytes | bytearray | memoryview], *,
                       add_special_tokens: bool = False, num_threads: int | None = None) -> list[BinaryEncoding]:
    """:func:`encode_bytes` of every item, in order. ``num_threads=1`` encodes on this thread;
    otherwise HF ``tokenizers`` runs the batch on its own thread pool (all cores by default,
    ``RAYON_NUM_THREADS`` to change it). An item longer than :data:`CHUNK_BYTES` is encoded in
    pieces, as :func:`encode_bytes` encodes it."""
    return _encode_batch(tokenizer, items, add_special_tokens, num_threads, full=True)


def encode_bytes_batch_ids(tokenizer: Tokenizer, items: Sequence[bytes | bytearray | memoryview], *,
                           add_special_tokens: bool = False, num_threads: int | None = None) -> list[list[int]]:
    """The ids of :func:`encode_bytes_batch` alone (see :func:`encode_bytes_ids`)."""
    return _encode_batch(tokenizer, items, add_special_tokens, num_threads, full=False)


def _encode_batch(tokenizer: Tokenizer, items: Sequence[bytes | bytearray | memoryview], add_special_tokens: bool,
                  num_threads: int | None, *, full: bool) -> list:
    tokenizer = _hf_tokenizer(tokenizer)
    items = as_batch(items, of="byte strings", one="data")
    num_threads = thread_count(num_threads)
    items = [_as_data(data, k) for k, data in enumerate(items)]
    _special_tokens_as_data(tokenizer)
    out: list = [None] * len(items)
    # A long item one HF word would cost HF memory and time out of proportion (its merges run on
    # the whole item): it is encoded in pieces, the others together.
    short = [k for k, data in enumerate(items) if len(data) <= CHUNK_BYTES]
    for k, data in enumerate(items):
        if len(data) > CHUNK_BYTES:
            out[k] = _encode(tokenizer, data, add_special_tokens, CHUNK_BYTES, full=full, serial=num_threads == 1)
    texts = [bytes_to_text(items[k], k) for k in short]
    if num_threads == 1:
        encodings = [tokenizer.encode(t, add_special_tokens=add_special_tokens) for t in texts]
    else:
        encodings = [enc for call in _calls(texts) for enc in tokenizer.encode_batch(
            call, add_special_tokens=add_special_tokens)]
    for k, enc in zip(short, encodings):
        out[k] = _encoding(enc) if full else enc.ids
    return out


#: Bytes per core of one HF ``encode_batch`` call: Python acts on a Ctrl-C between calls only (a
#: call of the whole batch held it back until the batch was done), and a call of this much keeps
#: every core busy and ends within a fraction of a second.
_CALL_BYTES_PER_CORE = 1 << 20


def _calls(texts: list[str]) -> Iterator[list[str]]:
    """``texts`` in consecutive runs of about :data:`_CALL_BYTES_PER_CORE` per core."""
    cores = rayon_threads() or (os.cpu_count() or 1)  # the threads of HF's pool
    size = _CALL_BYTES_PER_CORE * cores
    start = held = 0
    for k, text in enumerate(texts):
        held += len(text)
        if held >= size:
            yield texts[start:k + 1]
            start, held = k + 1, 0
    if start < len(texts):
        yield texts[start:]


def decode_to_bytes(tokenizer: Tokenizer, ids: Sequence[int], *, skip_special: bool = True) -> bytes:
    """The bytes of ``ids``; special tokens are dropped unless ``skip_special=False``, which gives
    each one's name in UTF-8 (as :meth:`BinaryTokenizer.token_bytes` does).

    Raises :class:`TokenizerError` for a non-integer or out-of-range id, naming its position.
    """
    tokenizer = _hf_tokenizer(tokenizer)  # (a BinaryTokenizer too, as encode_bytes takes)
    ids = token_ids(ids, tokenizer.get_vocab_size(with_added_tokens=True))  # ints, numpy ints; no bools
    specials = {i: tok.content for i, tok in tokenizer.get_added_tokens_decoder().items() if tok.special}
    if skip_special or specials.keys().isdisjoint(ids):
        return _plain_bytes(tokenizer, ids, specials)
    # The other tokens' characters stand for bytes (Latin-1), a special token's name does not: "é"
    # in a name is two bytes, and a name outside Latin-1 would be no byte at all.
    parts, start = [], 0
    for k, i in enumerate(ids):
        if i in specials:
            parts += [_plain_bytes(tokenizer, ids[start:k], specials), specials[i].encode("utf-8")]
            start = k + 1
    parts.append(_plain_bytes(tokenizer, ids[start:], specials))
    return b"".join(parts)


#: Ids :func:`decode_to_byte_blocks` decodes at a time: a list of them and their bytes are held, not all.
DECODE_BLOCK = 1 << 20


def decode_to_byte_blocks(tokenizer: Tokenizer, ids: Sequence[int], *, skip_special: bool = True,
                          block: int | None = None) -> Iterator[bytes]:
    """:func:`decode_to_bytes` of ``ids`` a block of ``block`` ids at a time (each token stands for
    bytes of its own, so the blocks joined are the bytes of all). A numpy array of ids is read a
    block at a time too. Every id is checked before this returns, so an error comes before any
    block is written. ``block`` defaults to :data:`DECODE_BLOCK`."""
    block = DECODE_BLOCK if block is None else block
    tokenizer = _hf_tokenizer(tokenizer)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    if getattr(getattr(ids, "dtype", None), "kind", None) in ("i", "u") and getattr(ids, "ndim", None) == 1:
        import numpy as np

        outside = (ids < 0) | (ids >= size) if ids.dtype.kind == "i" else ids >= size
        if outside.any():
            first = int(np.flatnonzero(outside)[0])
            token_id(int(ids[first]), size, position=first)  # raises, as token_ids names it
        del outside
    else:
        ids = token_ids(ids, size)

    def blocks() -> Iterator[bytes]:
        for at in range(0, len(ids), block):
            part = ids[at:at + block]
            yield decode_to_bytes(tokenizer, part if isinstance(part, list) else part.tolist(),
                                  skip_special=skip_special)

    return blocks()


def _plain_bytes(tokenizer: Tokenizer, ids: Sequence[int], specials: dict[int, str]) -> bytes:
    """The bytes of ``ids`` without their special tokens."""
    from tokenizers import decoders

    if isinstance(tokenizer.decoder, decoders.Fuse):
        text = tokenizer.decode(ids, skip_special_tokens=True)
    else:
        # Without a decoder HF joins tokens with spaces, which would corrupt bytes: join them here.
        text = "".join(tokenizer.id_to_token(i) for i in ids if i not in specials)
    return text_to_bytes(text)
