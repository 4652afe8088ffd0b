"""Unicode's extended grapheme cluster properties, as the ranges the core's boundary rules read.

A schema with ``keep_clusters`` (the default; see ``docs/schemas.md``) never lets a token end
inside an extended grapheme cluster (UAX #29): a syllable that would is extended to the end of
the cluster. The rules themselves (GB3-GB13, GB9c) are Unicode's, not any script's, and live in
the core (``rust/src/graphemes.rs``); this module hands it the property of every code point:
Grapheme_Cluster_Break, Extended_Pictographic and Indic_Conjunct_Break. They are read from the
``regex`` module, so the core and ``regex``'s ``\\X`` (the oracle of the tests) follow the same
Unicode version.

:func:`cluster_ends` finds clusters with ``regex`` ``\\X`` for the pure-Python grammar engine
(``Syllabifier(engine="regex")``); this module does not implement the rules a second time.
"""

from __future__ import annotations

import functools

# The values of rust/src/graphemes.rs: a Grapheme_Cluster_Break value (Extended_Pictographic as
# its own value) in the low four bits, Indic_Conjunct_Break flags above.
BREAK_VALUES = {
    "Grapheme_Cluster_Break=CR": 1,
    "Grapheme_Cluster_Break=LF": 2,
    "Grapheme_Cluster_Break=Control": 3,
    "Grapheme_Cluster_Break=Extend": 4,
    "Grapheme_Cluster_Break=ZWJ": 5,
    "Grapheme_Cluster_Break=Regional_Indicator": 6,
    "Grapheme_Cluster_Break=Prepend": 7,
    "Grapheme_Cluster_Break=SpacingMark": 8,
    "Grapheme_Cluster_Break=L": 9,
    "Grapheme_Cluster_Break=V": 10,
    "Grapheme_Cluster_Break=T": 11,
    "Grapheme_Cluster_Break=LV": 12,
    "Grapheme_Cluster_Break=LVT": 13,
    "Extended_Pictographic": 14,
}
INCB_FLAGS = {"InCB=Consonant": 0x10, "InCB=Linker": 0x20, "InCB=Extend": 0x40}


@functools.cache
def property_ranges() -> tuple[tuple[int, int, int], ...]:
    """``(first, last, value)`` for every code point with a grapheme property (computed once)."""
    import regex

    text = _every_code_point()
    ranges: list[tuple[int, int, int]] = []
    for prop, value in (*BREAK_VALUES.items(), *INCB_FLAGS.items()):
        for m in regex.finditer(rf"\p{{{prop}}}+", text):
            ranges.append((m.start(), m.end() - 1, value))  # index == code point (see below)
    return tuple(ranges)


def _every_code_point() -> str:
    """Every code point, lone surrogates included, at the index equal to its value."""
    from wwho.schema import _all_chars  # everything but the surrogates, in order

    chars = _all_chars()
    return chars[:0xD800] + "".join(map(chr, range(0xD800, 0xE000))) + chars[0xD800:]


def cluster_ends(text: str) -> set[int]:
    """The end position of every extended grapheme cluster of ``text`` (``regex`` ``\\X``)."""
    import regex

    ends, pos = set(), 0
    for cluster in regex.findall(r"\X", text):
        pos += len(cluster)
        ends.add(pos)
    return ends
