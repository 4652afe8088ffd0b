"""The script coverage of SGPE training (``sgpe/script_coverage.py``): the check that the corpus
is in the chosen scripts."""

from __future__ import annotations

import warnings

import pytest

from wwho.errors import ScriptWarning
from wwho.scriptcheck import letters_by_script, warn_if_other_script
from wwho.sgpe.script_coverage import check_script


def _full_script_check(scripts, boundary, syllables):
    """The training's script check without its shortcut: every boundary token through the router."""
    letters = letters_by_script(boundary.items())
    letters.update(letters_by_script(syllables.items()))
    return warn_if_other_script(letters, scripts, what="the corpus", option="--script / script=")


@pytest.mark.parametrize("script, boundary, syllables, warns", [
    ("sinhala", {"नमस्ते": 40, "abc": 3}, {"ක": 10}, True),  # mostly Devanagari: the router runs
    ("sinhala", {"नमस्ते": 1, "abc": 1}, {"ක": 50, "ලං": 20}, False),  # the syllables outweigh anything: shortcut
    ("sinhala", {"ab": 10}, {"ක": 20}, False),  # exactly half is enough
    ("sinhala", {"abc": 10}, {"ක": 20}, True),
    ("sinhala", {"abcde": 10}, {"ක": 20, "x": 0}, True),
    ("sinhala", {"12": 100, "..": 100}, {}, False),  # no letters at all
    # Every schema but Sinhala's keeps another script's clusters whole: a "syllable" of the Tamil
    # syllabifier may be Telugu: not every syllable counts as the chosen script's.
    ("tamil", {}, {"శ్రీ": 30, " తెలు": 20, "గు": 20}, True),
    ("tamil", {"abc": 1}, {"శ్రీ": 3, "தமி": 20, "ழ்": 20}, False),
    ("devanagari", {}, {"ক্ষ": 5, "क्ष": 4}, True),
])
def test_the_script_check_warns_as_the_full_check_does(script, boundary, syllables, warns):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_script((script,), boundary, syllables)
    got = [str(w.message) for w in caught if issubclass(w.category, ScriptWarning)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _full_script_check((script,), boundary, syllables)
    assert got == ([want] if want else [])
    assert bool(got) == warns
