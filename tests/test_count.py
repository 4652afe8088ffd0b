"""Piece counting: equals a plain Counter, whatever the worker count or spilling."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.bpe.count import PIECES, count_pieces

DOCS = ["ශ්‍රී ලංකාව  a\tb", "x y  z", "\r\n tabs\tand\\escapes\\t here", "ශ්‍රී ලංකාව"] * 50


def expected(docs):
    c = Counter()
    for d in docs:
        c.update(re.findall(PIECES, d))
    return c


@pytest.mark.parametrize("workers", [1, 2])
def test_equals_counter(workers):
    assert count_pieces(DOCS, workers=workers, progress=False, batch_bytes=100) == expected(DOCS)


def test_spilling_gives_the_same_counts(tmp_path):
    got = count_pieces(DOCS, workers=2, progress=False, batch_bytes=50, max_in_memory=3, spill_dir=tmp_path)
    assert got == expected(DOCS)
    assert list(tmp_path.iterdir()) == []  # spill files are cleaned up


@given(st.lists(st.text(alphabet=st.sampled_from(list(" \t\n\r\\ab")), max_size=12), max_size=30))
@settings(max_examples=100, deadline=None)
def test_spill_round_trip_of_any_piece(docs):
    assert count_pieces(docs, workers=1, progress=False, batch_bytes=5, max_in_memory=2) == expected(docs)


def test_custom_pattern_with_regex_engine():
    docs = ["Hello world 123"]
    got = count_pieces(docs, pattern=r"\p{L}+|\p{N}+", engine="regex", workers=1, progress=False)
    assert got == Counter({"Hello": 1, "world": 1, "123": 1})
