"""The syllable engine: spec 000 exactness for Sinhala, engine equivalence, edge cases."""

from __future__ import annotations

import functools
import itertools

import pytest
import regex
import spec000_reference as spec
from conftest import CORPORA, FUZZ_INDIC, require_data
from hypothesis import given, settings
from hypothesis import strategies as st

import wwho
from wwho import Syllabifier, syllabify
from wwho.errors import SchemaError, TokenizerError
from wwho.schema import available_scripts, bundled_schema
from wwho.syllables import check_schema

SINHALA = Syllabifier.for_script("sinhala")

# Two consonants, a vowel, HAL, ZWJ, two pili, anusvara, space, tab, newline, a Latin letter.
ALPHABET = ["ක", "ර", "අ", "\u0dca", "\u200d", "ා", "ී", "ං", " ", "\t", "\n", "a"]


def test_traced_example_of_spec_000_section_6():
    text = "ශ්‍රී ලංකාව"
    syllables = syllabify(text, "sinhala", leading_space=True)
    assert syllables == ["ශ්‍රී", " ලං", "කා", "ව"]
    assert wwho.words.segment_into_words(syllables) == [["ශ්‍රී"], [" ලං", "කා", "ව"]]


@pytest.mark.parametrize("leading_space", [False, True])
def test_sinhala_equals_spec_loop_on_every_short_string(leading_space):
    for length in range(1, 5):
        for chars in itertools.product(ALPHABET, repeat=length):
            text = "".join(chars)
            assert SINHALA.tokenize(text, leading_space=leading_space) == spec.tokenize(text, leading_space), repr(text)


sinhala_text = st.text(
    alphabet=st.sampled_from(ALPHABET + ["ශ", "ෙ", "ඃ", "\u200c", "\r", "1", ".", "क", "🙂", "\u0dcf"]),
    max_size=40,
)


@given(text=sinhala_text, leading_space=st.booleans())
@settings(max_examples=400, deadline=None)
def test_sinhala_equals_spec_loop_hypothesis(text, leading_space):
    assert SINHALA.tokenize(text, leading_space=leading_space) == spec.tokenize(text, leading_space)
    assert SINHALA.tokenize_table(text, leading_space=leading_space) == spec.tokenize(text, leading_space)


@given(text=st.text(max_size=60), leading_space=st.booleans())
@settings(max_examples=300, deadline=None)
def test_any_unicode_equals_spec_loop_and_is_lossless(text, leading_space):
    tokens = SINHALA.tokenize(text, leading_space=leading_space)
    assert tokens == spec.tokenize(text, leading_space)
    assert "".join(tokens) == text


# --- spec 000 section 7: the property table, one named test per row -------------------

def test_hal_zwj_consonant_always_absorbed_as_one_unit():
    assert syllabify("ක්‍ය") == ["ක්‍ය"]
    assert syllabify("ශ්‍රී") == ["ශ්‍රී"]
    assert syllabify("ක්‍ෂ්‍ර") == ["ක්‍ෂ්‍ර"]


def test_hal_zwj_without_consonant_absorbed_not_split():
    assert syllabify("ක්‍") == ["ක්‍"]
    assert syllabify("ක්‍ a") == ["ක්‍", " ", "a"]
    assert syllabify("ක්‍ා") == ["ක්‍ා"]  # a vowel sign may still follow the stopped conjunct


def test_terminal_hal_absorbed_into_syllable():
    assert syllabify("ත්") == ["ත්"]
    assert syllabify("ත් ") == ["ත්", " "]
    assert syllabify("ත්ං") == ["ත්ං"]


def test_pili_cannot_start_a_token_except_as_orphan():
    assert syllabify("ා") == ["ා"]
    assert syllabify(" ාක", leading_space=True) == [" ා", "ක"]
    assert syllabify("ං ං") == ["ං", " ", "ං"]


def test_bare_zwj_is_not_dropped_but_passed_through():
    assert syllabify("\u200d") == ["\u200d"]
    assert syllabify("ක\u200dර") == ["ක", "\u200d", "ර"]


def test_round_trip_lossless_every_character_in_exactly_one_token():
    text = "ශ්‍රී ලංකාව \t\nabc  ක්‍ ා ං\u200d"
    for ls in (False, True):
        assert "".join(syllabify(text, leading_space=ls)) == text


def test_linear_time_layer_1_on_a_long_run():
    text = "ක්" * 50_000 + "ා" * 50_000
    tokens = syllabify(text)
    assert "".join(tokens) == text


# --- whitespace rules of section 2.3 -----------------------------------------------------

@pytest.mark.parametrize(
    "text, tokens",
    [
        ("  \t ක", [" ", " ", "\t", " ක"]),
        ("\t\n ක", ["\t", "\n", " ක"]),
        ("\t\nක", ["\t", "\n", "ක"]),
        (" ක", [" ක"]),
        ("\tක", ["\t", "ක"]),
        ("ක ", ["ක", " "]),
        ("ක  ", ["ක", " ", " "]),
        ("a b", ["a", " b"]),
        ("", []),
    ],
)
def test_whitespace_table_of_section_2_3(text, tokens):
    assert syllabify(text, leading_space=True) == tokens
    assert spec.tokenize(text, True) == tokens


def test_whitespace_without_leading_space_is_passthrough():
    assert syllabify(" ක\t", leading_space=False) == [" ", "ක", "\t"]


# --- engines, scripts, errors -------------------------------------------------------------

@pytest.mark.parametrize("script", available_scripts())
def test_generated_regex_equals_table_engine_exhaustively(script):
    assert check_schema(bundled_schema(script), max_length=4) == []


devanagari_text = st.text(
    alphabet=st.sampled_from(
        list("कखगषहअआइ\u093c\u094d\u093e\u093f\u0947\u0901\u0902\u0903\u0951\u200d\u200c।॥१ a\t\n")
        + ["\u0306", "પ", "\u0acd", "🙂", "\u1cd0", "\u1cf5", "\U0001d167", "\U00011001"]  # astral marks
        + ["\u200b", "\u00ad", "\ufeff", "\x00", "\u2060", "\r"]  # controls: Unicode breaks around them
    ),
    max_size=40,
)


@functools.cache
def regex_syllabifier(script: str) -> Syllabifier:
    """One regex-engine Syllabifier a script (its pattern takes long to build; the object is immutable)."""
    return Syllabifier(bundled_schema(script), engine="regex")


@given(text=devanagari_text, leading_space=st.booleans())
@settings(max_examples=400, deadline=None)
def test_devanagari_regex_equals_table_engine_hypothesis(text, leading_space):
    syl = regex_syllabifier("devanagari")
    tokens = syl.tokenize(text, leading_space=leading_space)
    assert tokens == syl.tokenize_table(text, leading_space=leading_space)
    assert "".join(tokens) == text
    # and no syllable spans a break Unicode always makes around a control, CR or LF (GB4, GB5), told by
    # the regex module's property; a leading space held for a token is no part of its syllable, and
    # goes with a control too (so the regex engine and the core both keep " \u200b" whole)
    for token in tokens:
        syllable = token[1:] if leading_space and token[:1] == " " else token
        if len(syllable) > 1 and syllable != "\r\n":
            assert not regex.search(r"\p{Grapheme_Cluster_Break=Control}|[\r\n]", syllable), (text, tokens)


@pytest.mark.parametrize(
    "text, syllables",
    [
        ("नमस्ते", ["न", "म", "स्ते"]),
        ("क्षत्रिय", ["क्ष", "त्रि", "य"]),
        ("ज़िंदगी", ["ज़िं", "द", "गी"]),
        ("हँसना", ["हँ", "स", "ना"]),
        ("क्‍ष", ["क्‍ष"]),  # explicit half form with ZWJ stays one syllable
        ("अंग्रेज़ी।", ["अं", "ग्रे", "ज़ी", "।"]),
        ("विद्वान्", ["वि", "द्वा", "न्"]),
    ],
)
def test_devanagari_known_syllables(text, syllables):
    assert syllabify(text, "devanagari") == syllables


def test_empty_input():
    assert syllabify("") == []
    assert syllabify("", "devanagari", leading_space=True) == []


def test_lone_surrogates_pass_through():
    text = "ක\ud800ා\udfff"
    assert "".join(syllabify(text)) == text
    assert syllabify(text) == spec.tokenize(text)


@pytest.mark.parametrize("bad", [None, b"bytes", 42, ["list"]])
def test_non_str_input_is_a_clear_error(bad):
    with pytest.raises(TokenizerError, match="expected text as str"):
        syllabify(bad)


def test_unknown_script_is_a_clear_error():
    with pytest.raises(wwho.SchemaError, match="unknown script 'klingon'.*sinhala"):
        syllabify("x", "klingon")


def test_engine_choice_is_explicit():
    # The automaton in the compiled core is the default; the grammar regex is what it is checked against.
    assert Syllabifier.for_script("sinhala").engine == "table"
    for engine in ("table", "regex"):
        syl = Syllabifier(bundled_schema("sinhala"), engine=engine)
        assert syl.engine == engine
        assert syl.tokenize("ශ්‍රී ලංකාව", leading_space=True) == ["ශ්‍රී", " ලං", "කා", "ව"]
    with pytest.raises(TokenizerError, match="engine must be 'auto', 'regex' or 'table', not 'fast'"):
        Syllabifier(bundled_schema("sinhala"), engine="fast")


def test_no_accept_state_reached_emits_first_character_alone(tmp_path):
    # A schema whose walk can start (A -> MID) but only accepts after "A B": "A" alone is
    # not a syllable, so it must come out as a single character, explicitly, not be lost.
    import json

    schema = {
        "name": "toy",
        "char_classes": {"A": ["U+0061"], "B": ["U+0062"]},
        "grammar": "A B",
        "start": "S",
        "transitions": {"S": {"A": "MID"}, "MID": {"B": "END"}, "END": {}},
        "accept_states": ["END"],
    }
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(schema))
    for engine in ("regex", "table"):
        syl = Syllabifier.from_schema(path, engine=engine)
        assert syl.tokenize("aab") == ["a", "ab"]
        assert syl.tokenize("aac") == ["a", "a", "c"]


def test_astral_marks_take_the_exact_path():
    syl = Syllabifier.for_script("devanagari")
    text = "क\U0001d167ि"  # a combining mark above U+FFFF inside a syllable
    assert syl.tokenize(text) == syl.tokenize_table(text) == [text]


# --- the compiled core against the pure-Python table walk (tests/reference/syllables.py) ------

from reference.syllables import tokenize_table as reference_tokenize  # noqa: E402

ALL_SCRIPT_CHARS = [ch for name in available_scripts() for ch in (
    chr(min(cps)) for cps in bundled_schema(name).classes.values())]


@pytest.mark.parametrize("script", available_scripts())
@given(text=st.text(alphabet=st.sampled_from(ALL_SCRIPT_CHARS + [" ", "\t", "\n", "\r", "a", "\u200d",
                                                                   "\u200c", "🙂", "\ud800"]), max_size=50),
       leading_space=st.booleans())
@settings(max_examples=150, deadline=None)
def test_core_equals_the_reference_table_walk(script, text, leading_space):
    schema = bundled_schema(script)
    assert Syllabifier.for_script(script).tokenize(text, leading_space=leading_space) == reference_tokenize(
        schema, text, leading_space)


@pytest.mark.parametrize("script", available_scripts())
@given(text=st.text(max_size=60), leading_space=st.booleans())
@settings(max_examples=100, deadline=None)
def test_core_equals_the_reference_on_any_unicode(script, text, leading_space):
    schema = bundled_schema(script)
    assert Syllabifier.for_script(script).tokenize(text, leading_space=leading_space) == reference_tokenize(
        schema, text, leading_space)


def test_core_reads_every_string_storage():
    # Python keeps a str in 1, 2 or 4 bytes per character: the core reads each directly.
    syl = Syllabifier.for_script("sinhala")
    for text in ["abc é", "ශ්‍රී ලංකාව", "ශ්‍රී ලංකාව 🙂", "\x00\xff", "\ud800ක"]:
        for ls in (False, True):
            assert syl.tokenize(text, leading_space=ls) == reference_tokenize(syl.schema, text, ls)


def test_a_long_text_releases_the_gil_and_agrees():
    import threading

    syl = Syllabifier.for_script("sinhala")
    text = "ශ්‍රී ලංකාව " * 5000
    want = reference_tokenize(syl.schema, text, True)
    results = []
    threads = [threading.Thread(target=lambda: results.append(syl.tokenize(text, leading_space=True))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 4


def test_a_schema_of_ones_own_runs_in_the_core(tmp_path):
    import json

    schema = {
        "name": "toy",
        "char_classes": {"A": [["U+0061", "U+0063"]], "B": ["U+0078"], "E": ["U+1F642"]},
        "start": "S",
        "transitions": {"S": {"A": "W", "E": "W"}, "W": {"B": "W", "O": "END"}, "END": {}},
        "accept_states": ["W", "END"],
        "emit_states": ["END"],
    }
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(schema))
    syl = Syllabifier.from_schema(path)
    for text in ["axxb-c", "a x", "🙂xx?", "zz", ""]:
        for ls in (False, True):
            assert syl.tokenize(text, leading_space=ls) == reference_tokenize(syl.schema, text, ls), text


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(FUZZ_INDIC + [" ", "\t", "a", "\u200d", "\ud800", "🏏"]), max_size=40),
       leading_space=st.booleans(), script=st.sampled_from(["sinhala", "devanagari", "tamil"]))
def test_joined_equals_joining_the_tokens(text, leading_space, script):
    """What ``wwho syllabify`` prints, made in the core without a string per syllable."""
    syl = Syllabifier.for_script(script)
    assert syl.joined(text, " | ", leading_space=leading_space) == " | ".join(syl.tokenize(text, leading_space=leading_space))


LINES_ALPHABET = FUZZ_INDIC + [" ", "\t", "\r", "\n", "\n", "a", "|", "\ud800"]


@pytest.mark.parametrize("script", available_scripts())
@pytest.mark.parametrize("leading_space", [False, True])
@settings(max_examples=60, deadline=None)
@given(text=st.lists(st.sampled_from(LINES_ALPHABET), max_size=40).map("".join))
def test_joined_lines_is_joined_per_line(script, leading_space, text):
    """What ``wwho syllabify`` prints for a block equals each line syllabified alone."""
    syl = Syllabifier.for_script(script)
    want = "\n".join(" | ".join(syl.tokenize(line, leading_space=leading_space)) for line in text.split("\n"))
    assert syl.joined_lines(text, " | ", leading_space=leading_space) == want.encode("utf-8", "surrogatepass")
    assert syl.joined(text, " | ", leading_space=leading_space) == " | ".join(syl.tokenize(text, leading_space=leading_space))


def test_joined_lines_on_a_real_corpus():
    path = require_data(CORPORA / "hi" / "flores200-devtest.txt")
    text = path.read_text(encoding="utf-8")
    syl = Syllabifier.for_script("devanagari")
    want = "\n".join(" | ".join(syl.tokenize(line)) for line in text.split("\n"))
    assert syl.joined_lines(text, " | ") == want.encode()


@pytest.mark.parametrize("call, words", [
    (lambda syl: syl.joined("ශ්‍රී", "\ud800"), "separator holds a lone surrogate"),
    (lambda syl: syl.joined("ශ්‍රී", b"|"), "separator must be text"),
    (lambda syl: syl.joined_lines("ශ්‍රී", None), "separator must be text"),
    (lambda syl: syl.tokenize("ශ්‍රී", leading_space="no"), "leading_space must be True or False, not 'no'"),
    (lambda syl: syl.joined("ශ්‍රී", "|", leading_space=1), "leading_space must be True or False, not 1"),
])
def test_options_of_the_wrong_kind_are_typed_errors(call, words):
    # A surrogate separator was a UnicodeEncodeError, bytes an internal TypeError, and
    # leading_space="no" counted as True.
    from wwho.errors import TokenizerError

    with pytest.raises(TokenizerError, match=words):
        call(Syllabifier.for_script("sinhala"))


@pytest.mark.parametrize("kind, method, args", [
    *[("syllabifier", m, ("ශ්‍රී", True)) for m in ("tokenize", "tokenize_table")],
    *[(kind, m, ("ශ්‍රී", "|", True)) for kind in ("syllabifier", "splitter") for m in ("joined", "joined_lines")],
    ("splitter", "tokenize", ("ශ්‍රී", True)),
])
def test_leading_space_is_keyword_only(kind, method, args):
    # tokenize(text, True) was taken: a bare flag that says nothing where it is read (the style's
    # tiktoken model: the data positional, options keyword-only).
    from wwho.sgpe.words import WordSplitter

    tokenizer = Syllabifier.for_script("sinhala") if kind == "syllabifier" else WordSplitter("sinhala")
    with pytest.raises(TypeError, match="positional argument"):
        getattr(tokenizer, method)(*args)
    assert getattr(tokenizer, method)(*args[:-1], leading_space=True)


@pytest.mark.parametrize("length", [0, -5, 7, 2.0, True])
def test_the_grammar_check_length_is_bounded(length):
    # max_length=0 returned [] ("grammar equals automaton") without checking; 8 would run for hours.
    from wwho.schema import bundled_schema
    from wwho.syllables import check_schema

    with pytest.raises(SchemaError, match="max_length must be an int from 1 to 6"):
        check_schema(bundled_schema("sinhala"), max_length=length)
    if length != 0:
        with pytest.raises(SchemaError, match="check_length must be an int from 0 to 6"):
            Syllabifier.from_schema("unused.json", check_length=length)


def test_check_schema_shows_its_progress_only_when_asked(capsys):
    """``wwho schema check all`` ran for minutes with no sign of life inside a schema: the CLI asks
    for a bar (on standard error); the API stays quiet by default. Both give the same answer."""
    schema = bundled_schema("sinhala")
    assert check_schema(schema, max_length=3) == []
    assert capsys.readouterr().err == ""
    assert check_schema(schema, max_length=3, progress=True) == []
    assert "checking sinhala" in capsys.readouterr().err


def test_a_mismatch_is_reported_once(tmp_path):
    """A class whose first letter is "a", which the check also tries on its own, must not put every
    mismatch holding an "a" twice in the report."""
    import json

    from wwho.schema import load_schema

    path = tmp_path / "toy.json"
    path.write_text(json.dumps({
        "format": "wwho-schema/1", "name": "toy", "char_classes": {"C": ["U+0061"], "V": ["U+0062"]},
        "start": "S", "transitions": {"S": {"C": "A"}, "A": {"V": "B"}, "B": {}}, "accept_states": ["A", "B"],
        "grammar": "C"}))  # the automaton joins "ab"; the grammar keeps "a" and "b" apart
    problems = check_schema(load_schema(path), max_length=3)
    assert problems and len(problems) == len(set(problems))
    # (each code point and the class it stands for: a mark may not show on a terminal)
    assert "'ab' = U+0061 U+0062 (classes C V) (leading_space=False): automaton ['ab'], grammar ['a', 'b']" \
        in problems


def test_check_schema_takes_a_path_or_a_bundled_name(tmp_path):
    """The docs pair ``wwho.check_schema`` with ``wwho schema check FILE``, but
    a path was an AttributeError from inside wwho. It takes what the command takes."""
    from importlib import resources

    from wwho.errors import WrongTypeError

    path = tmp_path / "sinhala-copy.json"
    path.write_bytes(resources.files("wwho.schemas").joinpath("sinhala.json").read_bytes())
    assert check_schema(path, max_length=2) == check_schema(str(path), max_length=2) == []
    assert check_schema("sinhala", max_length=2) == []
    with pytest.raises(WrongTypeError, match="expected a Schema, a schema file's path or a bundled script's name"):
        check_schema(3)


@pytest.mark.parametrize("given, hint", [("sinhala", "Syllabifier.for_script('sinhala')"), (5, "not int")])
def test_a_syllabifier_of_something_not_a_schema_is_a_clear_error(given, hint):
    # Not AttributeError: 'str' object has no attribute 'classes', from deep inside.
    from wwho.errors import WrongTypeError

    with pytest.raises(WrongTypeError, match=regex.escape(hint)):
        Syllabifier(given)
