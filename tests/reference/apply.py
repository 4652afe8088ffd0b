"""Applying learned merges to one word in pure Python (a test reference; the core's ``rust/src/merge.rs``
runs at encoding time): repeatedly merge the best-ranked adjacent pair.

``merge_units(units, ranks)`` merges, at each step, the adjacent pair with the lowest
rank, the leftmost one among equal ranks, until no adjacent pair has a rank. This is
the rule of HF ``tokenizers``' BPE model and of spec 000's ``_apply_merges_to_word``
(which rescans the whole word after every merge: quadratic). Short words use a plain
scan; long ones a heap over a linked list, so a 100 kB word costs O(n log n).

Units are ``str`` (SGPE syllables, characters) or ``bytes``; ``ranks`` maps a pair of
units to its rank. :func:`merge_ids` does the same on token ids with a table keyed by
``left << 32 | right`` (no string concatenation or hashing in the loop; encoders use it).
This module does not decide what the units are.
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
    get = ranks.get

    def lookup(a, b):
        rank = get((a, b))
        return None if rank is None else (rank, a + b)
    return _merge_linked(parts, lookup)


def _merge_linked(parts: list, lookup) -> list:
    """The heap algorithm; ``lookup(left, right)`` gives ``(rank, merged)`` or None."""
    # Doubly linked list over positions; the heap holds (rank, position, left, right) and
    # an entry is stale when the units at that position no longer are (left, right).
    n = len(parts)
    prev = list(range(-1, n - 1))
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    alive = [True] * n
    heap: list = []
    for i in range(n - 1):
        hit = lookup(parts[i], parts[i + 1])
        if hit is not None:
            heap.append((hit[0], i, parts[i], parts[i + 1]))
    heapq.heapify(heap)
    while heap:
        _, i, left, right = heapq.heappop(heap)
        j = nxt[i] if alive[i] else -1
        if j < 0 or parts[i] != left or parts[j] != right:
            continue
        parts[i] = lookup(left, right)[1]
        alive[j] = False
        k = nxt[j]
        nxt[i] = k
        if k >= 0:
            prev[k] = i
            hit = lookup(parts[i], parts[k])
            if hit is not None:
                heapq.heappush(heap, (hit[0], i, parts[i], parts[k]))
        p = prev[i]
        if p >= 0:
            hit = lookup(parts[p], parts[i])
            if hit is not None:
                heapq.heappush(heap, (hit[0], p, parts[p], parts[i]))
    out = []
    i = 0
    while i >= 0:
        out.append(parts[i])
        i = nxt[i]
    return out

def pair_table(merges, ids: Mapping) -> dict[int, tuple[int, int]]:
    """``{left_id << 32 | right_id: (rank, merged_id)}`` for :func:`merge_ids` (first rank wins)."""
    table: dict[int, tuple[int, int]] = {}
    for rank, (a, b) in enumerate(merges):
        key = ids[a] << 32 | ids[b]
        if key not in table:
            table[key] = (rank, ids[a + b])
    return table


def merge_ids(ids: list[int], table: Mapping[int, tuple[int, int]]) -> list[int]:
    """:func:`merge_units` on token ids: the same merges, with integer keys (faster)."""
    if len(ids) < 2:
        return ids
    if len(ids) > SCAN_LIMIT:
        get_hit = table.get
        return _merge_linked(list(ids), lambda a, b: get_hit(a << 32 | b))
    get = table.get
    while True:
        best = None
        best_i = -1
        prev = ids[0]
        for i in range(1, len(ids)):
            cur = ids[i]
            hit = get(prev << 32 | cur)
            if hit is not None and (best is None or hit[0] < best[0]):
                best = hit
                best_i = i - 1
            prev = cur
        if best is None:
            return ids
        ids[best_i:best_i + 2] = [best[1]]
        if len(ids) == 1:
            return ids
