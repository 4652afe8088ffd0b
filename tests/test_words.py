"""Word grouping (spec 000 section 3.1), checked against the spec's own transcription."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import spec000_reference as spec
from wwho.syllables import syllabify
from wwho.words import is_boundary_token, segment_into_words


def test_boundary_tokens():
    assert is_boundary_token("a")
    assert is_boundary_token(" ")
    assert is_boundary_token("")
    assert not is_boundary_token(" ක")
    assert not is_boundary_token("\u200d")  # ZWJ counts as Sinhala (spec's _SINHALA_RE)
    assert is_boundary_token("\u200c")  # ZWNJ does not, for Sinhala
    assert not is_boundary_token("\u200c", "devanagari")
    assert not is_boundary_token("न", ("sinhala", "devanagari"))


def test_words_of_a_sentence():
    syl = syllabify("ශ්‍රී ලංකාව, 2024 ක", leading_space=True)
    assert segment_into_words(syl) == [["ශ්‍රී"], [" ලං", "කා", "ව"], [","], [" 2"], ["0"], ["2"], ["4"], [" ක"]]


@given(st.text(alphabet=st.sampled_from(list("කරඅ්‍ාීං \t\na1.\u200c")), max_size=40))
@settings(max_examples=400, deadline=None)
def test_equals_spec_segment_into_words(text):
    syl = syllabify(text, leading_space=True)
    assert segment_into_words(syl) == spec.segment_into_words(syl)
    assert [t for w in segment_into_words(syl) for t in w] == syl
