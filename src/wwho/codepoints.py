"""Sets of code points written out for the engines that take them: a regular expression's
character class (Python's ``re`` and ``regex``, or Oniguruma, HF ``tokenizers``' engine) and the
sorted, merged ranges the core takes.

It deliberately does not know schemas or scripts: callers hand it the sets.
"""

from __future__ import annotations


def char_class(codepoints: set[int] | frozenset[int], *, negate: bool = False, onig: bool = False,
               bmp_only: bool = False) -> str:
    """A regex character class for a set of code points, as ranges.

    ``onig=True`` writes escapes as ``\\x{...}`` for Oniguruma (HF ``tokenizers``' regex engine).
    """
    escape = _escape_onig if onig else _escape_cp
    if bmp_only and not negate:
        codepoints = {cp for cp in codepoints if cp <= 0xFFFF}
        if not codepoints:
            return "(?!)"  # an all-astral class: on the BMP-only path it can match nothing
    astral = [cp for cp in codepoints if cp > 0xFFFF]
    if not onig and not negate and astral and len(astral) < len(codepoints):
        # Python's re keeps a bitmap only for classes inside the BMP; a class that also holds
        # astral code points is scanned range by range. Split it: a bitmap for the BMP part,
        # a short range list for the rest (same single-character matches).
        bmp = char_class({cp for cp in codepoints if cp <= 0xFFFF})
        rest = char_class(set(astral))
        return f"(?:{bmp}|{rest})"
    parts: list[str] = []
    cps = sorted(codepoints)
    i = 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        lo, hi = escape(cps[i]), escape(cps[j])
        parts.append(lo if i == j else f"{lo}-{hi}")
        i = j + 1
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


def code_point_ranges(codepoints) -> list[tuple[int, int]]:
    """Sorted, merged ``(first, last)`` ranges of a set of code points (what the core takes)."""
    ranges: list[tuple[int, int]] = []
    for cp in sorted(codepoints):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return ranges


def _escape_onig(cp: int) -> str:
    return f"\\x{{{cp:04X}}}"


def _escape_cp(cp: int) -> str:
    return f"\\x{cp:02x}" if cp < 0x100 else (f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}")
