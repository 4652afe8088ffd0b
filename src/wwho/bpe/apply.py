"""Applying learned merges to one word: repeatedly merge the best-ranked adjacent pair.

``merge_units(units, ranks)`` merges, at each step, the adjacent pair with the lowest
rank, the leftmost one among equal ranks, until no adjacent pair has a rank. This is
the rule of HF ``tokenizers``' BPE model and of spec 000's ``_apply_merges_to_word``
(which rescans the whole word after every merge: quadratic). Short words use a plain
scan; long ones a heap over a linked list, so a 100 kB word costs O(n log n).

Units are ``str`` (SGPE syllables, characters) or ``bytes``; ``ranks`` maps a pair of
units to its rank. This module does not decide what the units are nor map them to ids.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import TypeVar

Unit = TypeVar("Unit", str, bytes)

#: Above this many units the heap version is used (the scan is faster for short words).
SCAN_LIMIT = 48


def merge_units(units: Sequence[Unit], ranks: Mapping[tuple[Unit, Unit], int]) -> list[Unit]:
    """Merge adjacent units by rank until no pair can merge; returns the new unit list."""
    parts = list(units)
    if len(parts) < 2:
        return parts
    if len(parts) <= SCAN_LIMIT:
        return _merge_scan(parts, ranks)
    return _merge_heap(parts, ranks)


def _merge_scan(parts: list, ranks: Mapping) -> list:
    get = ranks.get
    while len(parts) > 1:
        best_rank = None
        best = -1
        for i in range(len(parts) - 1):
            rank = get((parts[i], parts[i + 1]))
            if rank is not None and (best_rank is None or rank < best_rank):
                best_rank = rank
                best = i
        if best < 0:
            break
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
    return parts


def _merge_heap(parts: list, ranks: Mapping) -> list:
    # Doubly linked list over positions; the heap holds (rank, position, left, right) and
    # an entry is stale when the units at that position no longer are (left, right).
    n = len(parts)
    prev = list(range(-1, n - 1))
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    alive = [True] * n
    heap: list[tuple[int, int, object, object]] = []
    get = ranks.get
    for i in range(n - 1):
        rank = get((parts[i], parts[i + 1]))
        if rank is not None:
            heap.append((rank, i, parts[i], parts[i + 1]))
    heapq.heapify(heap)
    while heap:
        rank, i, left, right = heapq.heappop(heap)
        j = nxt[i] if alive[i] else -1
        if j < 0 or parts[i] != left or parts[j] != right:
            continue
        parts[i] = left + right
        alive[j] = False
        k = nxt[j]
        nxt[i] = k
        if k >= 0:
            prev[k] = i
            r = get((parts[i], parts[k]))
            if r is not None:
                heapq.heappush(heap, (r, i, parts[i], parts[k]))
        p = prev[i]
        if p >= 0:
            r = get((parts[p], parts[i]))
            if r is not None:
                heapq.heappush(heap, (r, p, parts[p], parts[i]))
    out = []
    i = 0
    while i >= 0:
        out.append(parts[i])
        i = nxt[i]
    return out
