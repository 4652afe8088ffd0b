"""wwho.graphemes: the grapheme property table handed to the core, checked against ``regex``
scanning every code point for each property (the direct way, which the module avoids for speed)."""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.graphemes import (
    BREAK_VALUES,
    INCB_FLAGS,
    cluster_lengths,
    every_code_point,
    property_code_points,
    property_ranges,
)
from wwho.unicode_properties import codepoints_with_property

# Every code point at its own index, built the plain way, independent of every_code_point.
EVERY = "".join(map(chr, range(0x110000)))


def scanned(prop: str) -> set[int]:
    return {cp for m in regex.finditer(rf"\p{{{prop}}}+", EVERY) for cp in range(m.start(), m.end())}


def test_every_code_point_is_at_its_own_index():
    assert every_code_point() == EVERY


def test_property_ranges_equal_a_scan_of_every_code_point_per_property():
    want = [
        (m.start(), m.end() - 1, value)
        for prop, value in (*BREAK_VALUES.items(), *INCB_FLAGS.items())
        for m in regex.finditer(rf"\p{{{prop}}}+", EVERY)
    ]
    assert list(property_ranges()) == want


def test_property_code_points_match_regex_and_schemas_skip_surrogates():
    for prop in ("InCB=Linker", "Grapheme_Cluster_Break=SpacingMark", "Grapheme_Cluster_Break=Control"):
        cps = property_code_points(prop)
        assert cps == scanned(prop)
        assert codepoints_with_property(prop) == {cp for cp in cps if not 0xD800 <= cp < 0xE000}
    assert property_code_points("Script=Sinhala") is None
    assert codepoints_with_property("Script=Sinhala") == scanned("Script=Sinhala")  # other properties: a scan


# Flag letters (regional indicators) with every kind of neighbour their pairs can have: a letter, marks
# (Extend, SpacingMark, ZWJ, ZWNJ), Prepend, an Indic virama and consonants (GB9c), a pictograph and
# its variation selector (GB11), Hangul jamo, controls and whitespace.
FLAG_NEIGHBOURS = ["\U0001F1E6", "\U0001F1E7", "\U0001F1E8", "a", "\u0301", "\u0903", "\u200d", "\u200c",
                   "\u0600", "\u094d", "\u0915", "\u0930", "\U0001F44D", "\ufe0f", "\u1100", "\u1161",
                   "\r", "\n", " "]


@given(st.lists(st.sampled_from(FLAG_NEIGHBOURS), max_size=40).map("".join))
@settings(max_examples=2000, deadline=None)
def test_cluster_lengths_are_regex_clusters(text):
    """``cluster_lengths`` hands runs of flag letters to ``\\X`` as letter + mark pairs (``\\X`` is
    quadratic on such runs); the clusters must be exactly ``\\X``'s on the text itself."""
    assert cluster_lengths(text) == [len(c) for c in regex.findall(r"\X", text)]


def test_cluster_lengths_of_a_long_run_of_flag_letters():
    text = "\U0001F1E6" * 20_001 + "\u0301"
    assert cluster_lengths(text) == [2] * 10_000 + [2]
