"""The cut structure of a text: the UTF-8 byte offsets strictly inside a grapheme cluster
(``regex`` ``\\X``) and strictly inside a schema syllable of an Indic run (the router's runs,
syllabified by their schema). A token boundary at such an offset cuts the cluster (syllable).

:func:`inside_offsets` computes it for one text (``wwho serve`` draws it); :func:`line_structure`
keeps it for the next tokenizer measured on the same line (``wwho eval``). Each set is held as
one flag byte per offset (:class:`Offsets`): a line costs a few times its size, and no object per
cluster or syllable.

This module does not tokenize or count boundaries (:mod:`wwho.evaluate` does).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbcSet
from itertools import accumulate

from wwho.cache import ENTRY_OVERHEAD, PieceCache
from wwho.graphemes import cluster_bounds
from wwho.syllables import Syllabifier


class Offsets(AbcSet):
    """A set of UTF-8 byte offsets of one text, held as one flag byte per offset of the text (a set
    of Python ints costs many times the text it describes). Read-only; ``in`` is what
    :func:`evaluate` and ``wwho serve`` ask of it."""

    __slots__ = ("flags",)

    def __init__(self, flags: bytearray) -> None:
        self.flags = flags  # flags[o] is 1 where offset o is in the set

    def __contains__(self, offset: object) -> bool:
        return isinstance(offset, int) and 0 <= offset < len(self.flags) and self.flags[offset] == 1

    def __iter__(self) -> Iterator[int]:
        find, o = self.flags.find, -1
        while (o := find(1, o + 1)) >= 0:
            yield o

    def __len__(self) -> int:
        return self.flags.count(1)

    def __repr__(self) -> str:
        return f"Offsets({len(self):,} of {len(self.flags):,})"

    def count_in(self, offsets: Iterable[int]) -> int:
        """How many of ``offsets`` (repeats counted) are in the set."""
        flags, n = self.flags, len(self.flags)
        return sum(1 for o in offsets if 0 <= o < n and flags[o] == 1)


def _structure_size(line: str, value: tuple[Offsets, Offsets]) -> int:
    return sys.getsizeof(line) + sum(sys.getsizeof(o.flags) for o in value) + ENTRY_OVERHEAD


#: Line structures are the same for every tokenizer: kept for the next one, up to 64 MiB.
_STRUCTURES = PieceCache(64 * 2**20, max_key_length=4096, sizeof=_structure_size)


def line_structure(text: str) -> tuple[Offsets, Offsets]:
    """Byte offsets strictly inside a grapheme cluster, and strictly inside an Indic syllable."""
    got = _STRUCTURES.get(text)
    if got is None:
        got = _STRUCTURES.put(text, inside_offsets(text))
    return got


def inside_offsets(text: str) -> tuple[Offsets, Offsets]:
    """UTF-8 byte offsets of ``text`` strictly inside a grapheme cluster, and strictly inside an Indic
    syllable: a token boundary at such an offset cuts the cluster (syllable). Not cached. Memory is
    a few times the text: one flag byte per offset, and no object per cluster or syllable."""
    size = utf8_len(text)
    return _inside_clusters(text, size), _inside_syllables(text, size)


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _inside_clusters(text: str, size: int) -> Offsets:
    """Every offset but the clusters' edges: clusters tile the text."""
    flags = bytearray(b"\x01") * (size + 1)
    flags[0] = 0
    pos = start = 0
    for end in cluster_bounds(text):
        pos += utf8_len(text[start:end])
        flags[pos] = 0
        start = end
    return Offsets(flags)


def _inside_syllables(text: str, size: int) -> Offsets:
    """The offsets inside each Indic run (the router's runs: ``run_pattern`` finds the same ones)
    but the edges of its syllables."""
    from wwho.router import run_pattern
    from wwho.schema import available_scripts

    flags = bytearray(size + 1)
    chars = pos = 0  # where the last run ended, in code points and in bytes
    for m in run_pattern(tuple(available_scripts())).finditer(text):
        start = pos + utf8_len(text[chars:m.start()])
        run = m.group()
        pos, chars = start + utf8_len(run), m.end()
        flags[start + 1:pos] = b"\x01" * max(pos - start - 1, 0)
        for end in _syllable_ends(Syllabifier.for_script(m.lastgroup), run):
            flags[start + end] = 0
    return Offsets(flags)


def _syllable_ends(syllabifier: Syllabifier, run: str) -> Iterator[int]:
    """The UTF-8 end of each syllable of ``run`` but the last, from the automaton's syllables joined
    by NUL bytes (UTF-8 has no other zero byte): no string per syllable."""
    if syllabifier.engine != "table" or "\x00" in run:
        ends = list(accumulate(map(utf8_len, syllabifier.tokenize(run, leading_space=False))))
        yield from ends[:-1]
        return
    joined = syllabifier.automaton.joined(run, False, "\x00", False)
    k, found = 0, joined.find(0)
    while found >= 0:
        yield found - k
        k += 1
        found = joined.find(0, found + 1)
