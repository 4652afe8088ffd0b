"""``wwho.router.segment`` in pure Python (the regex form), as it was before the compiled core."""

from __future__ import annotations

from wwho.router import Script, TextSegment, run_pattern
from wwho.schema import available_scripts


def segment(text: str, *, scripts: tuple[str, ...] | None = None,
            foreign_letters: bool = True) -> list[TextSegment]:
    names = tuple(available_scripts()) if scripts is None else tuple(scripts)
    segments: list[TextSegment] = []
    pos = 0
    for m in run_pattern(names, foreign_letters=foreign_letters).finditer(text):
        leading = False
        if m.start() > pos:
            latin = text[pos:m.start()]
            if latin.endswith(" "):
                latin = latin[:-1]
                leading = True
            if latin:
                segments.append(TextSegment(latin, Script.LATIN))
        segments.append(TextSegment(m.group(), Script(m.lastgroup), leading))
        pos = m.end()
    if pos < len(text):
        segments.append(TextSegment(text[pos:], Script.LATIN))
    return segments
