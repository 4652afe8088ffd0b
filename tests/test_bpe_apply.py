"""Merge application in pure Python (`wwho.bpe.apply`, which `wwho extend` runs to simulate its growing
merge table, and `reference.apply` on ids): the heap path equals the scan path and a literal reading of
spec 000 section 4.3, and on bytes equals the compiled encoder (`rust/src/merge/`) with the same merges."""

from __future__ import annotations

import reference.merge_units as apply
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.merge_units import merge_units


def spec_apply(tokens, ranks):
    # Spec 000 section 4.3, literally: rescan for the lowest rank, merge it, repeat.
    while True:
        best_rank, best_idx = None, -1
        for i in range(len(tokens) - 1):
            rank = ranks.get((tokens[i], tokens[i + 1]))
            if rank is not None and (best_rank is None or rank < best_rank):
                best_rank, best_idx = rank, i
        if best_idx == -1:
            return tokens
        tokens = tokens[:best_idx] + [tokens[best_idx] + tokens[best_idx + 1]] + tokens[best_idx + 2:]


def test_spec_example():
    ranks = {(" ලං", "කා"): 0, (" ලංකා", "ව"): 1}
    assert merge_units([" ලං", "කා", "ව"], ranks) == [" ලංකාව"]
    assert merge_units(["කා", "ව"], ranks) == ["කා", "ව"]


def test_leftmost_of_equal_ranks():
    assert merge_units(list("aaa"), {("a", "a"): 0}) == ["aa", "a"]


@given(
    units=st.lists(st.sampled_from(list("abcd")), max_size=120),
    merges=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "ab", "ba", "cd", "abc", "aa"]),
                              st.sampled_from(["a", "b", "c", "d", "ab", "cd", "aa"])), max_size=12),
)
@settings(max_examples=400, deadline=None)
def test_heap_equals_scan_equals_spec(units, merges):
    ranks = {}
    for pair in merges:
        ranks.setdefault(pair, len(ranks))
    want = spec_apply(list(units), ranks)
    assert apply._merge_scan(list(units), ranks) == want
    if len(units) >= 2:
        assert apply._merge_heap(list(units), ranks) == want
    assert merge_units(units, ranks) == want


def test_long_run_is_not_quadratic_and_correct():
    units = ["x"] * 100_000
    out = merge_units(units, {("x", "x"): 0, ("xx", "xx"): 1})
    assert out == ["xxxx"] * 25_000


@given(
    units=st.lists(st.sampled_from(list("abcd")), max_size=120),
    merges=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "ab", "ba", "cd", "abc", "aa"]),
                              st.sampled_from(["a", "b", "c", "d", "ab", "cd", "aa"])), max_size=12),
)
@settings(max_examples=300, deadline=None)
def test_merge_ids_equals_merge_units(units, merges):
    from reference.apply import merge_ids, pair_table

    vocab = {}
    for token in [*"abcd", *(a + b for a, b in merges), *(x for m in merges for x in m)]:
        vocab.setdefault(token, len(vocab))
    ranks = {}
    for pair in merges:
        ranks.setdefault(pair, len(ranks))
    want = [vocab[u] for u in merge_units(units, ranks)]
    assert merge_ids([vocab[u] for u in units], pair_table(merges, vocab)) == want


# --- extend's merge simulator (NewMerges.apply) against the core's byte-level encoder ----------

_PARTS = [b"a", b"b", b"\xe0", b"\xb6", b"\xb7", b"\x9a", b"\xbd", b"\x8a", b"ab", b"\xe0\xb6", b"\xe0\xb6\x9a",
          b"\x9a\xe0", b"\xe0\xb7", b"\xe0\xb7\x8a"]


@given(
    text=st.text(alphabet=st.sampled_from(list("ab\u0d9a\u0dbd\u0dca")), max_size=60),
    merges=st.lists(st.tuples(st.sampled_from(_PARTS), st.sampled_from(_PARTS)), max_size=16),
)
@settings(max_examples=300, deadline=None)
def test_merge_units_on_bytes_equals_the_core(text, merges):
    """What ``wwho extend`` simulates with :func:`merge_units` (bytes, merges by rank) is what the
    compiled encoder (``rust/src/merge/``, the merges rule) makes of one piece with those merges."""
    from wwho.bytelevel import ByteBPE

    singles = [bytes([b]) for b in range(256)]
    ranks = {t: i for i, t in enumerate(singles)}
    kept = []
    for a, b in merges:  # a merge list as encoders take one: parts that are tokens, no repeat
        if a in ranks and b in ranks and (a, b) not in kept:
            kept.append((a, b))
            ranks.setdefault(a + b, len(ranks))
    want = merge_units([singles[b] for b in text.encode("utf-8")], {pair: r for r, pair in enumerate(kept)})
    core = ByteBPE(ranks, merges=kept, pattern="(?s:.+)", cache_bytes=0)
    assert [core.token_bytes(i) for i in core.encode(text)] == want
