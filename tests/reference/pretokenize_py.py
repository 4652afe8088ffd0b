"""Executable reference: the pure-Python pre-tokenizer that wwho ran before the compiled core.

The regexes are matched by the ``regex`` module. ``unicode="16.0"`` (the default) makes character
classes see characters as Unicode 16.0 does, whatever version the installed ``regex`` module
has: before matching, a character unassigned in 16.0 stands in as U+FDD0 (a noncharacter) and a
character whose category changed since gets a stand-in of its 16.0 category. Regexes made only of
literal characters and ranges are matched on the original text. ``unicode=None`` uses the
``regex`` module's own tables.

Tests compare the core (``wwho.bytelevel.Pretokenizer``, Rust) with this on arbitrary text. It is
not used at run time. The regex texts themselves are imported from the package, so both sides
split by the same patterns.
"""

from __future__ import annotations

import bisect
import re
from typing import ClassVar

import regex

from reference import unicode16
from wwho.bytelevel.pretokenize import _TO_LATIN1_TABLE, GGUF_PRETOKENIZERS, PATTERNS, bytes_to_unicode

UNICODE_VERSION = "16.0"


class ReferencePretokenizer:
    """A sequence of splitting regexes, each applied to the pieces of the previous one, keeping gaps."""

    def __init__(self, patterns, byte_patterns=(), *, unicode: str | None = UNICODE_VERSION) -> None:
        self.patterns, self.byte_patterns = tuple(patterns), tuple(byte_patterns)
        self.unicode = unicode
        pinned = unicode is not None
        self._compiled = tuple((regex.compile(p), pinned and _CLASS_ESCAPE.search(p) is not None) for p in self.patterns)
        self._compiled_bytes = tuple(regex.compile(p) for p in self.byte_patterns)

    @classmethod
    def named(cls, name: str) -> ReferencePretokenizer:
        key = name.lower()
        if key in PATTERNS:
            return cls((PATTERNS[key],))
        spec = GGUF_PRETOKENIZERS[key]
        return cls(spec.patterns, spec.byte_patterns)

    @classmethod
    def like(cls, pretokenizer) -> ReferencePretokenizer:
        """The reference for a ``wwho.bytelevel.Pretokenizer``."""
        return cls(pretokenizer.patterns, pretokenizer.byte_patterns, unicode=pretokenizer.unicode)

    def split(self, text: str) -> list[str]:
        compiled = self._compiled
        mapped = _unicode16_text(text) if self.unicode is not None else None
        if mapped is not None:
            return _split_mapped(compiled, text, mapped)
        pieces = [text]
        for rx, _ in compiled:
            pieces = [sub for piece in pieces for sub in _split_one(rx, piece)]
        return [p for p in pieces if p]

    def split_bytes(self, text: str) -> list[bytes]:
        pieces = self.split(text) if self._compiled else ([text] if text else [])
        if not self._compiled_bytes:
            return [p.encode("utf-8") for p in pieces]
        out = []
        for piece in pieces:
            mapped = [bytes_to_unicode(piece.encode("utf-8"))]
            for rx in self._compiled_bytes:
                mapped = [sub for m in mapped for sub in _split_one(rx, m)]
            out.extend(m.translate(_TO_LATIN1_TABLE).encode("latin-1") for m in mapped)
        return out


# A regex with one of these escapes depends on Unicode tables; one without (literal chars and
# ranges only) is matched on the original text even when pinned.
_CLASS_ESCAPE = regex.compile(r"(?<!\\)(?:\\\\)*\\[pPsSdDwWbBX]")


def _split_one(rx: regex.Pattern, text: str) -> list[str]:
    """Matches of ``rx`` in ``text`` plus the non-empty gaps between them, in order."""
    return [text[start:end] for start, end in _spans(rx, text)]


def _spans(rx: regex.Pattern, text: str) -> list[tuple[int, int]]:
    spans = []
    pos = 0
    for m in rx.finditer(text):
        start, end = m.span()
        if start == end:
            continue
        if start > pos:
            spans.append((pos, start))
        spans.append((start, end))
        pos = end
    if pos < len(text):
        spans.append((pos, len(text)))
    return spans


def _split_mapped(compiled: tuple, text: str, mapped: str) -> list[str]:
    """Match on ``mapped``, cut ``text``."""
    spans = [(0, len(text))] if text else []
    for rx, pinned in compiled:
        source = mapped if pinned else text
        spans = [(start + a, start + b) for start, end in spans for a, b in _spans(rx, source[start:end])]
    return [text[a:b] for a, b in spans]


class _Unicode16:
    """Finds and replaces the characters whose Unicode 16.0 class the ``regex`` module may not share."""

    #: A plain character of each general category, to stand in for one whose category changed.
    STAND_INS: ClassVar[dict[str, str]] = {
        "Ll": "a", "Lu": "A", "Lo": "\u05d0", "Lm": "\u02b0", "Mn": "\u0300", "Nd": "0", "No": "\u00b2",
    }

    def __init__(self) -> None:
        ranges = []
        for item in unicode16.UNASSIGNED.split():
            lo, _, hi = item.partition("-")
            ranges.append((int(lo, 16), int(hi or lo, 16)))
        bmp = [(a, min(b, 0xFFFF)) for a, b in ranges if a <= 0xFFFF]
        self.astral = [(max(a, 0x10000), b) for a, b in ranges if b > 0xFFFF]
        self.astral_starts = [a for a, _ in self.astral]
        self.bmp = re.compile("[" + "".join(_range(a, b) for a, b in bmp) + "]")
        self.any_astral = re.compile("[\U00010000-\U0010FFFF]")
        self.changes = {cp: self.STAND_INS[cat] for cp, cat in unicode16.CATEGORY_CHANGES.items()}
        self.change_chars = [chr(cp) for cp in self.changes]

    def is_unassigned_astral(self, char: str) -> bool:
        i = bisect.bisect_right(self.astral_starts, ord(char)) - 1
        return i >= 0 and ord(char) <= self.astral[i][1]

    def __call__(self, text: str) -> str | None:
        if text.isascii():
            return None
        table: dict[int, str | int] = {}
        if self.bmp.search(text):
            table.update((ord(c), 0xFDD0) for c in set(self.bmp.findall(text)))
        if self.any_astral.search(text):
            astral = set(self.any_astral.findall(text))
            table.update((ord(c), 0xFDD0) for c in astral if self.is_unassigned_astral(c))
        for char in self.change_chars:
            if char in text:
                table[ord(char)] = self.changes[ord(char)]
        return text.translate(table) if table else None


def _range(a: int, b: int) -> str:
    return re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"


_UNICODE16 = _Unicode16()


def _unicode16_text(text: str) -> str | None:
    """``text`` with its post-16.0 characters replaced by stand-ins, or None if it has none."""
    return None if text.isascii() else _UNICODE16(text)
