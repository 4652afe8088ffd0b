"""Token ids as numpy arrays: one text's ids, and the flat form of a batch.

A pretraining pipeline stores ids as arrays anyway; building a Python list per text and an int
per id only to convert them costs more than encoding. The flat form of a batch is two arrays:
``ids`` (``uint32``, every text's ids one after the other, tiktoken's ``encode_to_numpy`` dtype)
and ``offsets`` (``int64``, ``len(texts) + 1`` of them): text ``i``'s ids are
``ids[offsets[i]:offsets[i + 1]]``. The compiled core writes both straight into buffers that numpy
reads without a copy (:func:`from_core`); kinds whose encoder is not the core's convert their
lists (:func:`from_lists`). This module does not encode, and decoders need nothing from it: every
``decode`` takes an array of ids as it takes a list.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

IDS = np.uint32
OFFSETS = np.int64


def from_core(flat: tuple[bytearray, bytearray]) -> tuple[np.ndarray, np.ndarray]:
    """The core's ``(ids, offsets)`` buffers (native-endian u32 and i64) as writable arrays, no copy."""
    ids, offsets = flat
    return np.frombuffer(ids, dtype=IDS), np.frombuffer(offsets, dtype=OFFSETS)


def one_text(ids: np.ndarray) -> np.ndarray:
    """The offsets of ``ids`` as the flat form of a batch of one text."""
    return np.array([0, len(ids)], dtype=OFFSETS)


def from_lists(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """The flat form of per-text id lists."""
    offsets = np.zeros(len(lists) + 1, dtype=OFFSETS)
    np.cumsum([len(ids) for ids in lists], out=offsets[1:])
    ids = np.fromiter((i for ids in lists for i in ids), dtype=IDS, count=int(offsets[-1]))
    return ids, offsets


def split(ids: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    """Each text's ids (views of ``ids``)."""
    return [ids[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]


def add_bos_eos(ids: np.ndarray, offsets: np.ndarray, bos: int | None, eos: int | None,
                ) -> tuple[np.ndarray, np.ndarray]:
    """``bos`` before and ``eos`` after each text's ids (either may be None)."""
    if bos is None and eos is None:
        return ids, offsets
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
    return out, out_offsets
