"""Token ids as numpy arrays: one text's ids, and the flat form of a batch.

A pretraining pipeline stores ids as arrays anyway; building a Python list per text and an int
per id only to convert them costs more than encoding. The flat form of a batch is two arrays:
``ids`` (``uint32``, every text's ids one after the other, tiktoken's ``encode_to_numpy`` dtype)
and ``offsets`` (``int64``, ``len(texts) + 1`` of them): text ``i``'s ids are
``ids[offsets[i]:offsets[i + 1]]``, returned as a :class:`FlatIds` (a named tuple: ``ids, offsets =
...`` unpacks it, and every ``decode_batch`` takes it back whole). The compiled core writes both
straight into buffers that numpy reads without a copy (:func:`from_core`); kinds whose encoder is
not the core's convert their lists (:func:`from_lists`). One text's array (``encode_to_numpy``) is
made by the core too: a long text's (16,384 ids or more) is its ids' buffer, handed over, not copied.
Every such array is writable, but one over a buffer does not own it (``ndarray.resize`` in place
refuses it; copy first), as tiktoken's ``encode_to_numpy`` arrays (read-only) do not either. This module does not encode, and decoders
need nothing else from it: every ``decode`` takes an array of ids as it takes a list (the core
reads an integer array as one block, without an int object per id).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from wwho.errors import TokenizerError

IDS = np.uint32
OFFSETS = np.int64


class FlatIds(NamedTuple):
    """The flat form of a batch: every text's ``ids`` (uint32) one after the other, and the
    ``offsets`` (int64, one more than the texts) where each text's ids start and end."""

    ids: np.ndarray
    offsets: np.ndarray

    def split(self) -> list[np.ndarray]:
        """Each text's ids (views of :attr:`ids`)."""
        return split(self.ids, self.offsets)


def from_core(flat: tuple[bytearray, bytearray]) -> FlatIds:
    """The core's ``(ids, offsets)`` buffers (native-endian u32 and i64) as writable arrays, no copy."""
    ids, offsets = flat
    return FlatIds(np.frombuffer(ids, dtype=IDS), np.frombuffer(offsets, dtype=OFFSETS))


def one_text(ids: np.ndarray) -> np.ndarray:
    """The offsets of ``ids`` as the flat form of a batch of one text."""
    return np.array([0, len(ids)], dtype=OFFSETS)


def from_lists(lists: Sequence[Sequence[int]]) -> FlatIds:
    """The flat form of per-text id lists."""
    offsets = np.zeros(len(lists) + 1, dtype=OFFSETS)
    np.cumsum([len(ids) for ids in lists], out=offsets[1:])
    ids = np.fromiter((i for ids in lists for i in ids), dtype=IDS, count=int(offsets[-1]))
    return FlatIds(ids, offsets)


def concatenate(parts: Sequence[FlatIds]) -> FlatIds:
    """One flat form of consecutive batches' flat forms."""
    if not parts:
        return from_lists([])
    ids = np.concatenate([p.ids for p in parts])
    starts = np.cumsum([0] + [len(p.ids) for p in parts[:-1]], dtype=OFFSETS)
    offsets = np.concatenate([parts[0].offsets[:1]] + [p.offsets[1:] + s for p, s in zip(parts, starts)])
    return FlatIds(ids, offsets.astype(OFFSETS, copy=False))


def check(ids: object, offsets: object) -> tuple[np.ndarray, np.ndarray]:
    """``ids`` and ``offsets`` as one-dimensional arrays of a flat form, or a :class:`TokenizerError`
    saying what is wrong: offsets that are no integers, go backwards, or do not start at 0 and end
    at ``len(ids)``."""
    try:
        ids, offsets = np.asarray(ids), np.asarray(offsets)
    except ValueError as exc:  # a ragged list of lists
        raise TokenizerError(f"ids and offsets must be one-dimensional arrays of integers ({exc})") from None
    if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
        raise TokenizerError(f"ids must be a one-dimensional array of integers, not {ids.ndim}-d {ids.dtype}")
    if offsets.ndim != 1 or offsets.dtype.kind not in "iu" or len(offsets) == 0:
        raise TokenizerError(f"offsets must be a one-dimensional array of integers, at least [0], not "
                             f"{offsets.ndim}-d {offsets.dtype} of {offsets.size}")
    if offsets.dtype != OFFSETS:
        # uint64 plus int64 is float64, no index: compare and add them as int64.
        if offsets.dtype.kind == "u" and offsets.max() > np.iinfo(OFFSETS).max:
            raise TokenizerError(f"offsets must be below 2**63, not {offsets.max()}")
        offsets = offsets.astype(OFFSETS)
    if offsets[0] != 0 or offsets[-1] != len(ids):
        raise TokenizerError(f"offsets must start at 0 and end at len(ids) = {len(ids)}, not run from "
                             f"{offsets[0]} to {offsets[-1]}")
    # Compared, not subtracted: a difference can wrap (0, 2**63 - 1, -2 has no negative step).
    back = offsets[1:] < offsets[:-1]
    if back.any():
        at = int(np.argmax(back))
        raise TokenizerError(f"offsets go backwards at index {at + 1} ({offsets[at]} then {offsets[at + 1]})")
    return ids, offsets


def split(ids: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    """Each text's ids (views of ``ids``); offsets are checked (see :func:`check`)."""
    ids, offsets = check(ids, offsets)
    return [ids[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]


def add_bos_eos(ids: np.ndarray, offsets: np.ndarray, bos: int | None, eos: int | None) -> FlatIds:
    """``bos`` before and ``eos`` after each text's ids (either may be None)."""
    ids, offsets = check(ids, offsets)
    for name, value in (("bos", bos), ("eos", eos)):
        # An int (numpy's too), never a bool or a float, which numpy would store as 1 or truncate.
        if value is not None and (isinstance(value, bool) or not hasattr(type(value), "__index__")
                                  or not 0 <= value < 2**32):
            raise TokenizerError(f"{name} must be a token id in [0, 2**32), not {value!r}")
    if ids.dtype != IDS and ids.size and (ids.min() < 0 or ids.max() >= 2**32):
        raise TokenizerError("ids must be token ids in [0, 2**32)")
    if bos is None and eos is None:
        return FlatIds(ids, offsets)
    per_text = (bos is not None) + (eos is not None)
    n = len(offsets) - 1
    out_offsets = offsets + per_text * np.arange(n + 1, dtype=OFFSETS)
    out = np.empty(len(ids) + per_text * n, dtype=IDS)
    starts, ends = out_offsets[:-1], out_offsets[1:]
    keep = np.ones(len(out), dtype=bool)
    if bos is not None:
        out[starts] = bos
        keep[starts] = False
    if eos is not None:
        out[ends - 1] = eos
        keep[ends - 1] = False
    out[keep] = ids
    return FlatIds(out, out_offsets)
