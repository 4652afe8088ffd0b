"""wwho.graphemes: the grapheme property table handed to the core, checked against ``regex``
scanning every code point for each property (the direct way, which the module avoids for speed)."""

from __future__ import annotations

import regex

from wwho.graphemes import BREAK_VALUES, INCB_FLAGS, every_code_point, property_code_points, property_ranges
from wwho.schema import _property_codepoints

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
        assert _property_codepoints(prop) == {cp for cp in cps if not 0xD800 <= cp < 0xE000}
    assert property_code_points("Script=Sinhala") is None
    assert _property_codepoints("Script=Sinhala") == scanned("Script=Sinhala")  # other properties: a scan
