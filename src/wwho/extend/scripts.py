"""The scripts an extension adds: which characters are theirs, how their words are found, and
which byte sequences occur in UTF-8 text only where one of their characters is.

Everything comes from the scripts' schemas (``src/wwho/schemas/*.json``):

* **blocks**: the schema's Unicode blocks. The extension's promise is about text with no code
  point in them (assigned or not): such text gets exactly the base tokenizer's ids.
* **starts**: the code points of those blocks (assigned or not: the script-word regex names them
  one by one, so every regex engine matches them alike). A script word starts with one.
* **word characters**: the starts, the schema's ``word_chars`` (ZWJ, ZWNJ) and ``attach_classes``
  (combining marks that stay with the character before them), minus whitespace, minus other
  extended scripts' blocks.

A **script word** is an optional space, a start, then word characters (:meth:`ScriptSet.word_source`,
one alternative per script, so a word never mixes two extended scripts). It is written in the regex
syntax that both the ``regex`` module and Hugging Face's Oniguruma read alike: ``\\uXXXX`` for BMP
characters, the character itself above U+FFFF, no Unicode properties (so the pinned pre-tokenizer
matches it on the original text, as Oniguruma does).

A byte sequence is **exclusive** when every valid UTF-8 text containing it contains a code point of
the blocks: the UTF-8 of a block character, or a lead byte and the next one (two or three bytes)
whose every completion is a block character. For Sinhala ``E0 B6`` and ``E0 B7`` (U+0D80..U+0DFF)
are exclusive; for Devanagari ``E0 A4``, ``E0 A5``; ``E1 B3`` (U+1CC0..U+1CFF) is not, since
U+1CC0..U+1CCF are Sundanese. A character is **buildable** when its first two bytes are exclusive:
merges can then make it from its bytes, left to right, without ever firing on other text.

This module decides nothing about vocabularies or merges.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import regex

from wwho.errors import SchemaError
from wwho.schema import bundled_schema, load_schema
from wwho.schema_types import Schema
from wwho.syllables import Syllabifier

_WHITESPACE = frozenset(map(ord, " \t\n\r\v\f\x85\u00a0\u1680\u2028\u2029\u202f\u205f\u3000")) | frozenset(
    range(0x2000, 0x200B)
)


@dataclass(frozen=True)
class ExtScript:
    """One extended script: its schema, syllabifier and character sets (see the module docstring)."""

    name: str
    schema: Schema
    syllabifier: Syllabifier
    blocks: tuple[tuple[int, int], ...]
    starts: frozenset[int]
    chars: frozenset[int]


class ScriptSet:
    """The scripts of one extension (one or more schemas with disjoint blocks)."""

    def __init__(self, scripts: Sequence[str | Path | Schema]) -> None:
        if not scripts:
            raise SchemaError("extend: name at least one script (a bundled schema name or a schema file)")
        schemas = [_schema(s) for s in scripts]
        names = [s.name for s in schemas]
        if len(set(names)) != len(names):
            raise SchemaError(f"extend: a script is named twice: {', '.join(names)}")
        blocks = {s.name: tuple((b.first, b.last) for b in s.blocks) for s in schemas}
        for s in schemas:
            if not blocks[s.name]:
                raise SchemaError(
                    f"{s.path}: blocks: the schema lists no Unicode block, so no character is its own"
                )
            _check_blocks(s, blocks[s.name])
        for i, a in enumerate(schemas):
            for b in schemas[i + 1 :]:
                if any(
                    lo1 <= hi2 and lo2 <= hi1 for lo1, hi1 in blocks[a.name] for lo2, hi2 in blocks[b.name]
                ):
                    raise SchemaError(f"extend: scripts {a.name!r} and {b.name!r} share Unicode blocks")
        self._all_blocks = tuple(sorted(r for name in names for r in blocks[name]))
        in_blocks = self.in_blocks
        out = []
        for s in schemas:
            own = {cp for lo, hi in blocks[s.name] for cp in range(lo, hi + 1)}
            starts = frozenset(own)
            extra = (set(s.word_chars) | s.attach_codepoints()) - own
            extra = {
                cp
                for cp in extra
                if not in_blocks(cp) and cp not in _WHITESPACE
            }
            out.append(
                ExtScript(s.name, s, Syllabifier(s), blocks[s.name], starts, frozenset(starts | extra))
            )
        self.scripts: tuple[ExtScript, ...] = tuple(out)
        self._exclusive = _exclusive_sequences(self._all_blocks)
        self._start_of = {cp: script for script in self.scripts for cp in script.starts}
        self._buildable: dict[str, bool] = {}  # a cache: one entry per distinct character
        self._completed: dict[tuple[str, bytes], list[str]] = {}  # a cache of _completions

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.scripts)

    @property
    def label(self) -> str:
        return "+".join(self.names)

    # --- characters ---------------------------------------------------------------------------

    def in_blocks(self, cp: int) -> bool:
        """True if code point ``cp`` lies in a block of one of the scripts (assigned or not)."""
        return any(lo <= cp <= hi for lo, hi in self._all_blocks)

    @functools.cached_property
    def _block_search(self) -> regex.Pattern:
        return regex.compile("[" + "".join(_range(lo, hi) for lo, hi in self._all_blocks) + "]")

    def has_block_char(self, text: str) -> bool:
        """True if ``text`` holds a code point of the scripts' blocks (the promise is about text without)."""
        return self._block_search.search(text) is not None

    def without_block_chars(self, text: str) -> str:
        """``text`` with every code point of the scripts' blocks removed."""
        return self._block_search.sub("", text)

    def script_of(self, word: str) -> ExtScript:
        """The script of a script word (by its first character after the optional space)."""
        return self._start_of[ord(word[1] if word[0] == " " else word[0])]

    def exclusive(self, data: bytes) -> bool:
        """True if ``data`` holds an exclusive byte sequence (see the module docstring)."""
        seqs = self._exclusive
        n = len(data)
        return any(data[i : i + k] in seqs for i in range(n - 1) for k in (2, 3, 4) if i + k <= n)

    def buildable(self, char: str) -> bool:
        """True if merges can build ``char`` from its bytes, left to right, exclusively."""
        known = self._buildable.get(char)
        if known is None:
            known = self._buildable[char] = self.exclusive(char.encode("utf-8")[:2])
        return known

    def joins_syllables(self, syllables: Iterable[str], prefix: bytes) -> bool:
        """True if some character that may follow one of ``syllables`` in a script word, and whose
        UTF-8 starts with ``prefix`` (the first bytes of a character), starts a syllable of its own
        there: a merge of the syllables' last characters with ``prefix`` would then fire across that
        boundary and, ranked before the syllable's own merges, cut it (a Vedic sign after an
        anusvara, for a cluster of the anusvara and a Vedic accent)."""
        for syllable in syllables:
            script = self._start_of[ord(syllable[0])]
            for char in self._completions(script, prefix):
                ends = itertools.accumulate(map(len, script.syllabifier.tokenize(syllable + char)))
                if len(syllable) in set(ends):
                    return True
        return False

    def _completions(self, script: ExtScript, prefix: bytes) -> list[str]:
        """The word characters of ``script`` whose UTF-8 starts with ``prefix``."""
        key = (script.name, prefix)
        found = self._completed.get(key)
        if found is None:
            found = self._completed[key] = [
                chr(cp) for cp in sorted(script.chars) if chr(cp).encode("utf-8", "surrogatepass").startswith(prefix)
            ]
        return found

    # --- words --------------------------------------------------------------------------------

    def word_source(self) -> str:
        """The script-word regex (see the module docstring), in the regex/Oniguruma common syntax."""
        return "|".join(f"(?: ?{_char_class(s.starts)}{_char_class(s.chars)}*)" for s in self.scripts)

    @functools.cached_property
    def word_regex(self) -> regex.Pattern:
        return regex.compile(self.word_source())

    def syllables(self, word: str) -> list[str]:
        """The syllables of a script word, without its leading space."""
        body = word[1:] if word[0] == " " else word
        return self.script_of(word).syllabifier.tokenize(body)


def _check_blocks(schema: Schema, blocks: tuple[tuple[int, int], ...]) -> None:
    """Refuse blocks that hold ASCII, whitespace or surrogates (:class:`SchemaError`). ASCII is the
    text every base tokenizes (one byte a character: no merge of it is exclusive to the scripts),
    whitespace separates script words (a word is an optional space and a start), and a surrogate
    is no character of UTF-8 text."""
    for lo, hi in blocks:
        what = ("ASCII (U+0000..U+007F), the text of every base and one byte a character" if lo < 0x80
                else "surrogates (U+D800..U+DFFF), no characters of UTF-8 text" if lo <= 0xDFFF and hi >= 0xD800
                else "whitespace, which separates script words" if any(lo <= cp <= hi for cp in _WHITESPACE)
                else None)
        if what:
            raise SchemaError(f"{schema.path}: blocks: U+{lo:04X}..U+{hi:04X} holds {what}; an extended script's "
                              "blocks are its own letters and signs (as the bundled schemas' are)")


def _schema(spec: str | Path | Schema) -> Schema:
    if isinstance(spec, Schema):
        return spec
    text = str(spec)
    if text.endswith(".json") or "/" in text:
        return load_schema(text)
    return bundled_schema(text)


def parse_scripts(values: Iterable[str]) -> list[str]:
    """Script names from repeated and/or comma-separated options (``--script a,b --script c``)."""
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def _exclusive_sequences(blocks: tuple[tuple[int, int], ...]) -> frozenset[bytes]:
    """Every minimal exclusive byte sequence of the blocks (see the module docstring)."""
    merged = _ranges(sorted({cp for lo, hi in blocks for cp in range(lo, hi + 1)}))
    inside = lambda lo, hi: any(a <= lo and hi <= b for a, b in merged)
    seqs: set[bytes] = set()
    for lo, hi in blocks:
        for cp in range(lo, hi + 1):
            if 0xD800 <= cp <= 0xDFFF:
                continue
            data = chr(cp).encode("utf-8")
            if len(data) >= 2:
                seqs.add(data)
            # Prefixes of 2 (and 3) bytes of multi-byte characters: exclusive when every
            # character they begin lies inside the blocks.
            for k in range(2, len(data)):
                prefix = data[:k]
                first = int.from_bytes(prefix.ljust(len(data), b"\x80"), "big")
                last = int.from_bytes(prefix.ljust(len(data), b"\xbf"), "big")
                cps = (_decode(first), _decode(last))
                if None not in cps and inside(*cps):
                    seqs.add(prefix)
    return frozenset(seqs)


def _decode(value: int) -> int | None:
    data = value.to_bytes((value.bit_length() + 7) // 8, "big")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return ord(text) if len(text) == 1 else None


def _escape(cp: int) -> str:
    if cp > 0xFFFF:
        return chr(cp)  # Oniguruma has no \U: the character itself (both engines read it)
    return f"\\u{cp:04X}"


def _range(lo: int, hi: int) -> str:
    return _escape(lo) if lo == hi else f"{_escape(lo)}-{_escape(hi)}"


def _char_class(cps: Iterable[int]) -> str:
    out = []
    for lo, hi in _ranges(sorted(cps)):
        out.append(_range(lo, hi))
    return "[" + "".join(out) + "]"


def _ranges(cps: list[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for cp in cps:
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return ranges
