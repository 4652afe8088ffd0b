"""wwho.codepoints: sets of code points as regex character classes and as ranges for the core."""

from __future__ import annotations

import re

from wwho.codepoints import char_class, code_point_ranges


def test_bmp_only_class_of_astral_code_points_matches_nothing():
    pattern = re.compile(char_class({0x1D167}, bmp_only=True))
    assert pattern.search("\uffff a \U0001d167") is None
    assert re.fullmatch(char_class({0x61, 0x1D167}, bmp_only=True), "a")


def test_ranges_are_sorted_and_merged():
    assert code_point_ranges({0x63, 0x61, 0x62, 0x1D167, 0x41}) == [(0x41, 0x41), (0x61, 0x63), (0x1D167, 0x1D167)]
    assert code_point_ranges(()) == []
