"""Merge application (the pure-Python `wwho.bpe.apply`: the tests' reference; the core's merge.rs is
tested in Rust and through the SGPE encoder): the heap path equals the scan path and a literal reading of spec 000 section 4.3."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.bpe import apply
from wwho.bpe.apply import merge_units


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
    from wwho.bpe.apply import merge_ids, pair_table

    vocab = {}
    for token in [*"abcd", *(a + b for a, b in merges), *(x for m in merges for x in m)]:
        vocab.setdefault(token, len(vocab))
    ranks = {}
    for pair in merges:
        ranks.setdefault(pair, len(ranks))
    want = [vocab[u] for u in merge_units(units, ranks)]
    assert merge_ids([vocab[u] for u in units], pair_table(merges, vocab)) == want
