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


# --- the compiled splitter against the regex + table-walk one (tests/reference/words.py) -----

import pytest  # noqa: E402
from conftest import FUZZ_INDIC  # noqa: E402
from reference.words import WordSplitter as ReferenceSplitter  # noqa: E402

from wwho.sgpe.words import SCRIPT_MODES  # noqa: E402

word_text = st.text(alphabet=st.sampled_from(FUZZ_INDIC + list(" \t\n\r ab1.,🙂\u200c\u200d\u0964\u0965\u0970\u0df4\u0306\u093e")),
                    max_size=40)


@pytest.mark.parametrize("mode", SCRIPT_MODES)
@given(text=word_text)
@settings(max_examples=120, deadline=None)
def test_core_splitter_equals_the_reference(mode, text):
    assert WordSplitter(mode).split(text) == ReferenceSplitter(mode).split(text)
    assert WordSplitter(mode).syllables(text) == ReferenceSplitter(mode).syllables(text)


@pytest.mark.parametrize("mode", ["sinhala", "devanagari", "mixed", "indic"])
@given(text=st.text(max_size=40))
@settings(max_examples=100, deadline=None)
def test_core_splitter_equals_the_reference_on_any_unicode(mode, text):
    assert WordSplitter(mode).split(text) == ReferenceSplitter(mode).split(text)


def test_split_punctuation_ends_a_word_at_the_scripts_own_punctuation():
    from wwho.words import word_char_sets

    text = " यह वाक्य है। डॉ॰ शर्मा॥"
    assert regex_words(text, "devanagari") == [" यह", " वाक्य", " है।", " डॉ॰", " शर्मा॥"]
    split = [m.group() for m in word_pattern("devanagari", split_punctuation=True).finditer(text)]
    assert split == [" यह", " वाक्य", " है", "।", " डॉ", "॰", " शर्मा", "॥"]
    core = WordSplitter("devanagari", split_punctuation=True).split(text)
    assert ["".join(tokens) for _, tokens in core] == split
    assert [is_word for is_word, _ in core] == [True, True, True, False, True, False, True, False]
    assert ReferenceSplitter("devanagari", split_punctuation=True).split(text) == core
    starts, _ = word_char_sets(("sinhala", "devanagari"), split_punctuation=True)
    assert {0x0964, 0x0965, 0x0DF4}.isdisjoint(starts) and 0x0915 in starts
    # the danda a Bengali or Tamil text borrows from Devanagari was never one of their word characters
    assert 0x0964 not in word_char_sets("bengali")[0]


@pytest.mark.parametrize("mode", ["devanagari", "sinhala", "mixed", "indic"])
@given(text=word_text)
@settings(max_examples=80, deadline=None)
def test_core_splitter_equals_the_reference_with_split_punctuation(mode, text):
    core = WordSplitter(mode, split_punctuation=True)
    assert core.split(text) == ReferenceSplitter(mode, split_punctuation=True).split(text)


# --- every token in order: what `syllabify(text, "indic")` and `wwho syllabify --script indic` give ---

def glued_spaces_apart(tokens):
    """Each token with a glued space (one space, then more) as two tokens."""
    return [part for t in tokens for part in ([" ", t[1:]] if len(t) > 1 and t[0] == " " else [t])]


@pytest.mark.parametrize("mode", SCRIPT_MODES)
@given(text=word_text | st.text(max_size=30))
@settings(max_examples=80, deadline=None)
def test_tokenize_is_split_in_order_its_glued_spaces_apart_without_leading_space(mode, text):
    splitter = WordSplitter(mode)
    glued = splitter.tokenize(text, leading_space=True)
    assert glued == [t for _, tokens in splitter.split(text) for t in tokens]
    apart = splitter.tokenize(text, leading_space=False)
    assert apart == glued_spaces_apart(glued) and "".join(apart) == text
    for leading_space, tokens in ((True, glued), (False, apart)):
        assert splitter.joined(text, " | ", leading_space=leading_space) == " | ".join(tokens)
        lines = "\n".join(" | ".join(splitter.tokenize(line, leading_space=leading_space)) for line in text.split("\n"))
        assert splitter.joined_lines(text, " | ", leading_space=leading_space) == lines.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("mode", ["mixed", "indic"])
def test_a_multi_script_mode_syllabifies_each_run_as_its_own_script_does(mode):
    """FLORES lines of every language of the mode and English, one after another in one text: each
    line's tokens are its own script's syllables (leading-space mode), English one per character."""
    from conftest import CORPORA, require_data

    from wwho.sgpe.words import MULTI_SCRIPT_MODES
    from wwho.syllables import Syllabifier

    require_data(CORPORA)
    langs = {"sinhala": "si", "devanagari": "hi", "bengali": "bn", "gurmukhi": "pa", "gujarati": "gu", "odia": "or",
             "tamil": "ta", "telugu": "te", "kannada": "kn", "malayalam": "ml"}
    scripts = [*MULTI_SCRIPT_MODES[mode], None]
    flores = {script: (CORPORA / (langs[script] if script else "en") / "flores200-devtest.txt")
              .read_text(encoding="utf-8").splitlines()[:150] for script in scripts}
    splitter = WordSplitter(mode)
    for i in range(150):
        text, want = "", []
        for script in scripts:
            line = (" " if text else "") + flores[script][i]
            text += line
            want += (Syllabifier.for_script(script).tokenize(line, leading_space=True) if script
                     else [t for _, tokens in WordSplitter("sinhala").split(line) for t in tokens])
        assert splitter.tokenize(text, leading_space=True) == want
        assert splitter.tokenize(text, leading_space=False) == glued_spaces_apart(want)


def test_the_syllables_of_several_scripts_come_from_the_word_splitter():
    from wwho.errors import SchemaError
    from wwho.syllables import Syllabifier, syllabify

    text = "ශ්‍රී lanka नमस्ते தமிழ்"
    indic = WordSplitter("indic")
    assert indic.tokenize(text) == ["ශ්\u200dරී", " ", "l", "a", "n", "k", "a", " ", "न", "म", "स्ते", " ", "த", "மி",
                                    "ழ்"]
    assert indic.tokenize(text, leading_space=True) == ["ශ්\u200dරී", " l", "a", "n", "k", "a", " न", "म", "स्ते", " த", "மி", "ழ்"]
    # they said "unknown script 'indic'" though training takes it
    for call in (lambda: syllabify(text, "indic"), lambda: Syllabifier.for_script("indic")):
        with pytest.raises(SchemaError, match=r"^'indic' is a mode of several scripts \(bengali, .*\), not one schema: "
                                              r"wwho.sgpe.words.WordSplitter\('indic'\).tokenize\(text\) splits"):
            call()


def test_the_word_patterns_kept_are_bounded_and_shared_by_order():
    # A set of scripts named in another order, or with a name twice, is the same set: one pattern.
    from wwho.schema import available_scripts
    from wwho.words import (
        PATTERNS_KEPT,
        _script_char_pattern,
        _word_pattern,
        script_char_pattern,
        word_pattern,
    )

    assert script_char_pattern(("tamil", "sinhala")) is script_char_pattern(("sinhala", "tamil", "tamil"))
    assert word_pattern(("tamil", "sinhala")) is word_pattern(("sinhala", "tamil"))
    names = available_scripts()
    for i in range(len(names)):
        for j in range(len(names)):
            script_char_pattern((names[i], names[j]))
            word_pattern((names[i], names[j]))
    assert _script_char_pattern.cache_info().currsize <= PATTERNS_KEPT
    assert _word_pattern.cache_info().currsize <= PATTERNS_KEPT


def test_an_unknown_script_in_a_set_is_a_schema_error():
    import pytest

    from wwho.errors import SchemaError
    from wwho.words import is_boundary_token, word_pattern

    for scripts in [("sinhala", None), ("sinhala", "klingon"), ("sinhala", 5)]:
        with pytest.raises(SchemaError, match="unknown script"):
            word_pattern(scripts)
        with pytest.raises(SchemaError, match="unknown script"):
            is_boundary_token("x", scripts)
