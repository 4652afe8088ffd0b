"""The code-switch router (spec 001 section 3.1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho import Script, TextSegment, join_segments, segment
from wwho.errors import TokenizerError


def test_script_enum_grows_with_schemas():
    assert Script.LATIN.value == "latin"
    assert Script("sinhala") is Script.SINHALA
    assert Script("devanagari") is Script.DEVANAGARI


def test_space_before_indic_run_moves_into_leading_space():
    segs = segment("Hello ශ්‍රී ලංකාව and नमस्ते!")
    assert segs == [
        TextSegment("Hello", Script.LATIN),
        TextSegment("ශ්‍රී", Script.SINHALA, True),
        TextSegment("ලංකාව", Script.SINHALA, True),
        TextSegment(" and", Script.LATIN),
        TextSegment("नमस्ते", Script.DEVANAGARI, True),
        TextSegment("!", Script.LATIN),
    ]


def test_zwj_and_zwnj_stay_inside_indic_runs():
    segs = segment("ක්‍ය क्‌ष")
    assert [s.text for s in segs] == ["ක්‍ය", "क्‌ष"]


def test_dandas_count_as_indic_and_continue_a_sinhala_run():
    segs = segment("ශ්‍රී। नमस्ते॥")
    assert segs == [TextSegment("ශ්‍රී।", Script.SINHALA), TextSegment("नमस्ते॥", Script.DEVANAGARI, True)]


def test_joiner_outside_indic_stays_latin():
    assert segment("a\u200db") == [TextSegment("a\u200db", Script.LATIN)]


def test_empty_and_only_space():
    assert segment("") == []
    assert segment(" ") == [TextSegment(" ", Script.LATIN)]
    assert segment(" ක") == [TextSegment("ක", Script.SINHALA, True)]
    assert segment("  ක") == [TextSegment(" ", Script.LATIN), TextSegment("ක", Script.SINHALA, True)]


def test_non_str_is_a_clear_error():
    with pytest.raises(TokenizerError):
        segment(b"x")


mixed = st.text(
    alphabet=st.sampled_from(list("ශ්‍රීලංකාවනमस्ते।॥ab1 \t\n🙂\u200c\u200d.")), max_size=50
)


@given(mixed)
@settings(max_examples=500, deadline=None)
def test_rejoining_segments_gives_back_the_input(text):
    segs = segment(text)
    assert join_segments(segs) == text
    for s in segs:
        assert s.text  # never an empty segment
        if s.has_leading_space:
            assert s.is_indic


@given(st.text(max_size=80))
@settings(max_examples=300, deadline=None)
def test_rejoining_any_unicode(text):
    assert join_segments(segment(text)) == text


def test_every_script_gets_its_own_runs():
    text = "Hello বাংলা ਪੰਜਾਬੀ ગુજરાતી ଓଡ଼ିଆ தமிழ் తెలుగు ಕನ್ನಡ മലയാളം, ok।"
    segs = segment(text)
    assert [(s.script.value, s.text) for s in segs] == [
        ("latin", "Hello"), ("bengali", "বাংলা"), ("gurmukhi", "ਪੰਜਾਬੀ"), ("gujarati", "ગુજરાતી"), ("odia", "ଓଡ଼ିଆ"),
        ("tamil", "தமிழ்"), ("telugu", "తెలుగు"), ("kannada", "ಕನ್ನಡ"), ("malayalam", "മലയാളം"), ("latin", ", ok"),
        ("devanagari", "।"),  # a danda after Latin text starts a run of the block it is encoded in
    ]
    assert all(s.has_leading_space for s in segs[1:-2])
    assert join_segments(segs) == text
    assert Script("malayalam") is Script.MALAYALAM


# --- the compiled router against the regex one (tests/reference/router.py) -----------------

from conftest import FUZZ_INDIC  # noqa: E402
from reference.router import segment as reference_segment  # noqa: E402

from wwho.schema import available_scripts  # noqa: E402
from wwho.sgpe.words import MULTI_SCRIPT_MODES  # noqa: E402

routed = st.text(alphabet=st.sampled_from(FUZZ_INDIC + list("ab1 \t\n🙂\u200c\u200d.\u0964\u0965\u0306")),
                 max_size=50)
SCRIPT_SETS = [None, *MULTI_SCRIPT_MODES.values(), ("devanagari", "sinhala"), ("tamil",)]


@pytest.mark.parametrize("scripts", SCRIPT_SETS)
@given(text=routed)
@settings(max_examples=200, deadline=None)
def test_core_router_equals_the_regex_router(scripts, text):
    assert segment(text, scripts=scripts) == reference_segment(text, scripts=scripts)


@given(text=st.text(max_size=60))
@settings(max_examples=200, deadline=None)
def test_core_router_equals_the_regex_router_on_any_unicode(text):
    assert segment(text) == reference_segment(text)
    assert segment(text, scripts=tuple(available_scripts())) == reference_segment(text)


def test_an_unknown_script_is_a_typed_error():
    """Not a bare ValueError from the Script enum."""
    import pytest

    from wwho import segment
    from wwho.errors import TokenizerError

    with pytest.raises(TokenizerError, match="unknown script 'klingon'; choose from"):
        segment("x", scripts=("klingon",))


@pytest.mark.parametrize("scripts, message", [
    # Not "unknown script 's'", the first character of the name.
    ("sinhala", r"collection of script names, not the single str 'sinhala': scripts=\('sinhala',\)"),
    (5, "scripts must be a collection of script names, not int"),  # not a bare TypeError
    ([["sinhala"]], r"unknown script \['sinhala'\]"),  # not "unhashable type"
    (("sinhala", 5), "unknown script 5"),
])
def test_scripts_that_are_no_collection_of_names_are_a_typed_error(scripts, message):
    with pytest.raises(TokenizerError, match=message):
        segment("ක a", scripts=scripts)
    assert segment("ක a", scripts=["sinhala"]) == segment("ක a", scripts=("sinhala",))


def test_the_routers_kept_are_bounded_whatever_scripts_a_caller_names():
    # Every tuple of scripts a caller passes would otherwise keep a compiled router for good:
    # repeats of a name are one router, and the distinct tuples kept are at most ROUTERS_KEPT.
    from wwho.router import ROUTERS_KEPT, _core_router, _run_pattern, run_pattern

    _core_router.cache_clear()
    for n in range(1, 40):
        assert [s.script for s in segment("a இ", scripts=["tamil"] * n)] == [Script.LATIN, Script.TAMIL]
    assert _core_router.cache_info().currsize == 1
    names = available_scripts()
    for i in range(len(names)):
        for j in range(len(names)):
            segment("a", scripts=(names[i], names[j]))
            run_pattern((names[i], names[j]))
    assert _core_router.cache_info().currsize <= ROUTERS_KEPT
    assert _run_pattern.cache_info().currsize <= ROUTERS_KEPT
