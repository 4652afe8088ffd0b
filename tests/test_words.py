"""Word grouping (spec 000 section 3.1), checked against the spec's own transcription."""

from __future__ import annotations

import spec000_reference as spec
from hypothesis import given, settings
from hypothesis import strategies as st

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


# --- the regex form used by trainers, encoders and the HF export --------------------------

from wwho.sgpe.words import WordSplitter  # noqa: E402
from wwho.words import word_pattern  # noqa: E402


def regex_words(text, scripts="sinhala"):
    return [m.group() for m in word_pattern(scripts).finditer(text)]


@given(st.text(alphabet=st.sampled_from(list("කරඅ්‍ාීංශ \t\n\ra1.\u200cक\u093e🙂")), max_size=40))
@settings(max_examples=500, deadline=None)
def test_sinhala_regex_words_equal_the_spec_rule(text):
    spec_words = spec.segment_into_words(spec.tokenize(text, True))
    assert WordSplitter("sinhala").words(text) == spec_words
    assert regex_words(text) == ["".join(w) for w in spec_words]


@given(st.text(max_size=40))
@settings(max_examples=300, deadline=None)
def test_sinhala_regex_words_equal_the_spec_rule_any_unicode(text):
    assert WordSplitter("sinhala").words(text) == spec.segment_into_words(spec.tokenize(text, True))


def test_devanagari_words_keep_marks_with_their_base():
    assert regex_words("नमस्ते aा ō̃ ऊ̆", "devanagari") == ["नमस्ते", " aा", " ō̃", " ऊ̆"]
    splitter = WordSplitter("devanagari")
    assert splitter.split(" ऊ̆अ") == [(True, [" ऊ̆", "अ"])]
    assert splitter.split("aा") == [(False, ["aा"])]
