"""The script check (wwho.scriptcheck): its letter counts against a plain statement of them (each
character's script by the schemas' blocks, letters by Python's unicodedata), and its shortcut,
which must never keep a warning back."""

from __future__ import annotations

import unicodedata
from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from wwho.schema import available_scripts, bundled_schema
from wwho.scriptcheck import letter_count, letters_by_script, plainly_in, warn_if_other_script

# Letters, marks, digits, joiners and punctuation of several scripts, Latin with its combining marks.
ALPHABET = ("abcXYZ0123 .,!\u0301\u0306\u00e9\u200c\u200d"
            "\u0d9a\u0dca\u0dbb\u0dd3\u0d85\u0de6\u0df4"       # Sinhala: letters, al-lakuna, vowel sign, digit, punctuation
            "\u0915\u094d\u0937\u093e\u0966\u0964\u1cf5"       # Devanagari, a digit, danda, a Vedic sign
            "\u0b95\u0bcd\u0bb7\u0be6"                         # Tamil
            "\u0d15\u0d7b\u0d4d"                               # Malayalam, a chillu
            "\u4e2d\u0416\U0001f600")                          # CJK, Cyrillic, an emoji
TEXTS = st.text(alphabet=ALPHABET, max_size=60)


def _owner(cp: int) -> str:
    return next((name for name in available_scripts() for b in bundled_schema(name).blocks
                 if b.first <= cp <= b.last), "latin")


def reference_letters(text: str) -> Counter:
    return Counter(_owner(ord(c)) for c in text if c.isalpha() or unicodedata.category(c)[0] == "M")


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.tuples(TEXTS, st.integers(1, 3)), max_size=4))
def test_letters_by_script_counts_each_runs_letters(texts):
    expected: Counter = Counter()
    for text, count in texts:
        for script, n in reference_letters(text).items():
            expected[script] += n * count
    assert letters_by_script(texts) == expected
    assert all(letter_count(t) == sum(reference_letters(t).values()) for t, _ in texts)


@settings(max_examples=500, deadline=None)
@given(text=TEXTS, script=st.sampled_from(available_scripts()))
@example(text="\u0915\u0d15", script="malayalam")  # by the router's runs, the ക was Devanagari's
@example(text="\u0915" + "ગુજરાતી", script="gujarati")
def test_the_shortcut_never_keeps_a_warning_back(text, script):
    if plainly_in(text, script):
        assert warn_if_other_script(letters_by_script([(text, 1)]), (script,), what="t", option="script=") is None


@pytest.mark.parametrize("text, script, plain", [("ශ්‍රී ලංකාව", "sinhala", True), ("नमस्ते", "sinhala", False),
                                                 ("नमस्ते दुनिया", "devanagari", True), ("hello", "sinhala", False),
                                                 ("", "sinhala", True), ("12 34", "tamil", False)])
def test_plain_text_is_seen_as_such(text, script, plain):
    assert plainly_in(text, script) is plain


def test_the_bundled_names_are_a_new_list_each_time():
    names = available_scripts()
    names.append("klingon")
    assert "klingon" not in available_scripts() and available_scripts() == sorted(available_scripts())
