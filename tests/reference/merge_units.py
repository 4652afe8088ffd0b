"""Applying merges to one word in pure Python: repeatedly merge the best-ranked adjacent pair.

A test oracle, not part of the package: the encoders run the core's ``rust/src/merge/`` and
``wwho extend`` builds on ``_core.GrowingMerges`` (the same rule). The tests compare this module
with that encoder, with HF ``tokenizers`` through the extension's export, and with spec 000's loop;
the id-table variant is ``reference.apply``.

``merge_units(units, ranks)`` merges, at each step, the adjacent pair with the lowest
rank, the leftmost one among equal ranks, until no adjacent pair has a rank. This is
the rule of HF ``tokenizers``' BPE model and of spec 000's ``_apply_merges_to_word``
(which rescans the whole word after every merge: quadratic). Short words use a plain
scan; long ones rounds of buckets (one per rank) over a linked list of machine integers, so a
10 MB word costs O(n log n) time and about 40 bytes per unit (see :func:`merge_long`).

Units are ``str`` (characters) or ``bytes``; ``ranks`` maps a pair of units to its rank.
This module does not decide what the units are.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

Unit = TypeVar("Unit", str, bytes)

#: Above this many units the linked-list version is used (the scan is faster for short words).
SCAN_LIMIT = 48
#: The long version's memo of pair lookups is cleared when it holds this many pairs.
_MEMO_LIMIT = 1 << 20
_MISSING = object()
_SINGLE = [bytes([b]) for b in range(256)]


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
    return merge_long(parts, lookup)


def merge_long(parts: Sequence, lookup: Callable[[Any, Any], tuple[int, Any] | None]) -> list:
    """The rule on a long word; ``lookup(left, right)`` gives ``(rank, merged)`` or None.

    Ranks are processed in rounds, lowest first: the positions of the pairs with the current
    rank ``r`` (a bucket per rank) are sorted and merged left to right, which is what the
    one-merge-at-a-time rule does as long as no pair ranked ``<= r`` appears; when a merge
    creates one, the round stops there and the rest of the bucket waits for its turn again.
    A bucket entry is checked when it comes up (the pair at that position must still have
    rank ``r``), so entries never need deleting. Memory: units are interned to ints, and
    the linked list and buckets are arrays of machine integers (about 20 bytes per unit in
    all), not Python objects per pair. ``parts`` may be a ``bytes`` object: its units are
    then its single bytes (as ``bytes``), interned without a loop.
    """
    n = len(parts)
    code = "i" if n < 2**31 else "q"
    if isinstance(parts, bytes):
        units: list = list(_SINGLE)
        index: dict = {unit: b for b, unit in enumerate(units)}
        ids = array(code, iter(parts))  # (not array(code, parts): that reads raw machine words)
    else:
        index = {}
        units = []
        ids = array(code, [0]) * n
        for pos, unit in enumerate(parts):
            uid = index.get(unit)
            if uid is None:
                uid = index[unit] = len(units)
                units.append(unit)
            ids[pos] = uid
    memo: dict[int, tuple[int, int] | None] = {}

    def pair(a: int, b: int) -> tuple[int, int] | None:
        # (rank, merged unit id) of the pair of unit ids (a, b), memoized
        key = a << 32 | b
        hit = memo.get(key, _MISSING)
        if hit is _MISSING:
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            found = lookup(units[a], units[b])
            if found is None:
                hit = None
            else:
                merged = found[1]
                mid = index.get(merged)
                if mid is None:
                    mid = index[merged] = len(units)
                    units.append(merged)
                hit = (found[0], mid)
            memo[key] = hit
        return hit

    nxt = array(code, range(1, n + 1))
    nxt[n - 1] = -1
    prv = array(code, range(-1, n - 1))
    buckets: dict[int, array] = {}
    for pos in range(n - 1):
        hit = pair(ids[pos], ids[pos + 1])
        if hit is not None:
            bucket = buckets.get(hit[0])
            if bucket is None:
                bucket = buckets[hit[0]] = array(code)
            bucket.append(pos)
    queue = list(buckets)  # the ranks that have a bucket
    heapq.heapify(queue)
    get = memo.get
    missing = _MISSING
    while queue:
        r = heapq.heappop(queue)
        bucket = _sorted(buckets.pop(r))  # later pushes may be left of earlier ones
        for k, i in enumerate(bucket):
            a = ids[i]
            j = nxt[i]
            if a < 0 or j < 0:
                continue
            b = ids[j]
            hit = get(a << 32 | b, missing)
            if hit is missing:
                hit = pair(a, b)
            if hit is None or hit[0] != r:
                continue  # stale: the pair at i has changed since it was pushed
            a = ids[i] = hit[1]
            ids[j] = -1
            m = nxt[j]
            nxt[i] = m
            low = False
            if m >= 0:
                prv[m] = i
                b = ids[m]
                hit = get(a << 32 | b, missing)
                if hit is missing:
                    hit = pair(a, b)
                if hit is not None:
                    rank = hit[0]
                    if rank in buckets:
                        buckets[rank].append(i)
                    else:
                        buckets[rank] = array(code, (i,))
                        heapq.heappush(queue, rank)
                    low = rank <= r
            p = prv[i]
            if p >= 0:
                b = ids[p]
                hit = get(b << 32 | a, missing)
                if hit is missing:
                    hit = pair(b, a)
                if hit is not None:
                    rank = hit[0]
                    if rank in buckets:
                        buckets[rank].append(p)
                    else:
                        buckets[rank] = array(code, (p,))
                        heapq.heappush(queue, rank)
                    low = low or rank <= r
            if low:  # the one-at-a-time rule merges that pair first: this round ends here
                rest = bucket[k + 1:]
                if rest:
                    if r in buckets:
                        buckets[r].extend(rest)
                    else:
                        buckets[r] = rest
                        heapq.heappush(queue, r)
                break
    out = []
    i = 0
    while i >= 0:
        out.append(units[ids[i]])
        i = nxt[i]
    return out


def _sorted(positions: array) -> array:
    if len(positions) < 4096:
        return array(positions.typecode, sorted(positions))
    import numpy  # sorts in place, without a Python int per entry

    numpy.frombuffer(positions, dtype=numpy.int32 if positions.typecode == "i" else numpy.int64).sort()
    return positions
