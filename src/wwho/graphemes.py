"""Unicode's extended grapheme cluster properties, as the ranges the core's boundary rules read.

A schema with ``keep_clusters`` (the default; see ``docs/schemas.md``) never lets a token end
inside an extended grapheme cluster (UAX #29): a syllable that would is extended to the end of
the cluster. The rules themselves (GB3-GB13, GB9c) are Unicode's, not any script's, and live in
the core (``rust/src/graphemes.rs``); this module hands it the property of every code point:
Grapheme_Cluster_Break, Extended_Pictographic and Indic_Conjunct_Break. They are read from the
``regex`` module, so the core and ``regex``'s ``\\X`` (the oracle of the tests) follow the same
Unicode version.

:func:`cluster_ends` finds clusters with ``regex`` ``\\X`` for the pure-Python grammar engine
(``Syllabifier(engine="regex")``), and :func:`first_hard_break` the one rule (GB4, GB5) that also
ends a syllable there; this module does not implement the cluster rules a second time.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Iterator

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
    """``(first, last, value)`` for every code point with a grapheme property (computed once).

    Few of the 1.1M code points have any of these properties, and one ``regex`` scan of them all
    per property was most of a process's start-up for every schema that keeps clusters. So five
    scans find the code points that can have one (a Grapheme_Cluster_Break other than Other,
    Extended_Pictographic, an Indic_Conjunct_Break value: every property of the table is one of
    these), and each property is then scanned on those alone, joined by a code point outside them.
    """
    import regex

    text = every_code_point()
    spans = _merged(
        (m.start(), m.end())
        for prop in ("Grapheme_Cluster_Break=Other", *INCB_FLAGS, "Extended_Pictographic")
        for m in regex.finditer(rf"\P{{{prop}}}+" if prop.endswith("=Other") else rf"\p{{{prop}}}+", text)
    )
    gap = _first_outside(spans)  # none of the properties: no match runs across it
    starts, joined = [], []  # where each span starts in the joined text
    at = 0
    for first, end in spans:
        starts.append(at)
        joined.append(text[first:end])
        at += end - first + 1
    candidates = gap.join(joined)
    ranges: list[tuple[int, int, int]] = []
    for prop, value in (*BREAK_VALUES.items(), *INCB_FLAGS.items()):
        for m in regex.finditer(rf"\p{{{prop}}}+", candidates):
            k = bisect.bisect_right(starts, m.start()) - 1
            shift = spans[k][0] - starts[k]
            ranges.append((m.start() + shift, m.end() - 1 + shift, value))  # index == code point
    return tuple(sorted(ranges, key=lambda r: (r[2], r[0])))


def property_code_points(prop: str) -> frozenset[int] | None:
    """The code points of one property of the table (e.g. ``InCB=Linker``), or None for another one."""
    value = BREAK_VALUES.get(prop) or INCB_FLAGS.get(prop)
    if value is None:
        return None
    cps: set[int] = set()
    for first, last, v in property_ranges():
        if v == value:
            cps.update(range(first, last + 1))
    return frozenset(cps)


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for first, end in sorted(spans):
        if out and first <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((first, end))
    return out


def _first_outside(spans: list[tuple[int, int]]) -> str:
    cp = 0
    for first, end in spans:
        if cp < first:
            break
        cp = max(cp, end)
    return chr(cp)


@functools.lru_cache(maxsize=1)
def every_code_point() -> str:
    """Every code point, lone surrogates included, at the index equal to its value (4.4 MB).

    Built as UTF-32-LE bytes by slice assignment (each byte lane is a repeating pattern) and
    decoded once: a million ints or one-character strings built in Python would be far slower.
    """
    n = 0x110000  # 17 planes of 65,536
    data = bytearray(4 * n)
    data[0::4] = bytes(range(256)) * (n // 256)
    data[1::4] = b"".join(bytes([v]) * 256 for v in range(256)) * (n // 65536)
    data[2::4] = b"".join(bytes([plane]) * 65536 for plane in range(17))
    return data.decode("utf-32-le", "surrogatepass")


#: two or more regional indicators (flag letters) in a row
_RI_RUN = re.compile("[\U0001F1E6-\U0001F1FF]{2,}")


def _flag_pair(run: re.Match) -> str:
    n = len(run.group())
    return "a\u0301" * (n // 2) + "a" * (n % 2)


def cluster_lengths(text: str) -> list[int]:
    """The length in code points of each extended grapheme cluster of ``text``, in order (``regex``
    ``\\X``; see :func:`cluster_bounds`)."""
    lengths, start = [], 0
    for end in cluster_bounds(text):
        lengths.append(end - start)
        start = end
    return lengths


def cluster_bounds(text: str) -> Iterator[int]:
    """The end position (in code points) of each extended grapheme cluster of ``text``, in order,
    one at a time (no string per cluster).

    ``\\X`` is quadratic on a run of regional indicators (a long run stalls it). A run is cut into
    pairs from its start (GB12, GB13), so each pair is handed to ``\\X`` as a letter and a
    combining mark, which cluster exactly as the pair does with what comes before and after it
    (GB9, GB9b; the letter ends any Indic conjunct run of GB9c), and an odd last one as a letter.
    The code points keep their positions, so the ends are the text's own."""
    for m in _cluster_pattern().finditer(_RI_RUN.sub(_flag_pair, text)):
        yield m.end()


@functools.cache
def _cluster_pattern():
    import regex

    return regex.compile(r"\X")


def cluster_ends(text: str) -> set[int]:
    """The end position of every extended grapheme cluster of ``text`` (see :func:`cluster_bounds`)."""
    return set(cluster_bounds(text))


def first_hard_break(text: str, start: int, end: int) -> int:
    """The first position in ``start + 1 .. end - 1`` where Unicode always breaks (GB4, GB5: after or
    before a control, CR or LF, not inside CR LF), else ``end``: no token of a ``keep_clusters``
    schema spans one (the core's ``first_hard_break``)."""
    controls = _controls()
    for at in range(start + 1, end):
        if (text[at - 1] in controls or text[at] in controls) and text[at - 1:at + 1] != "\r\n":
            return at
    return end


@functools.cache
def _controls() -> frozenset[str]:
    return frozenset(chr(cp) for name in ("Control", "CR", "LF")
                     for cp in property_code_points(f"Grapheme_Cluster_Break={name}") or ())
