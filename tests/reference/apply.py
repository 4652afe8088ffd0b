"""Merge application on token ids in pure Python, as the SGPE encoder did it before the compiled core.

The tests' reference (``reference.sgpe``): :func:`merge_ids` is :func:`reference.merge_units.merge_units`
on token ids with a table keyed by ``left << 32 | right`` (no string concatenation or hashing in the
loop). Production never runs it: encoders run the core's ``rust/src/merge/``.
"""

from __future__ import annotations

from collections.abc import Mapping

from reference.merge_units import SCAN_LIMIT, merge_long


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
        return merge_long(list(ids), lambda a, b: get_hit(a << 32 | b))
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
