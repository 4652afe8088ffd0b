"""``wwho.sgpe.words.WordSplitter`` in pure Python (regexes and the reference syllable engine).

Words from :func:`wwho.words.word_pattern`, routing from the regex router
(``reference.router``), syllables from the table walk (``reference.syllables``): the
implementation the compiled core replaced.
"""

from __future__ import annotations

import re

from reference.router import segment
from reference.syllables import tokenize_table
from wwho.router import Script
from wwho.schema import bundled_schema
from wwho.sgpe.words import MULTI_SCRIPT_MODES, mode_scripts
from wwho.words import single_word_pattern, word_pattern

_PASSTHROUGH = re.compile(r"(?: (?![ \t\n\r]))?.", re.DOTALL)


class WordSplitter:
    def __init__(self, script: str, *, split_punctuation: bool = False) -> None:
        self.scripts = mode_scripts(script)
        self.script = script
        self._routed = script in MULTI_SCRIPT_MODES
        self._schemas = {name: bundled_schema(name) for name in self.scripts}
        self._finditer = word_pattern(self.scripts, split_punctuation=split_punctuation).finditer
        self._single_word = single_word_pattern(self.scripts, split_punctuation=split_punctuation).fullmatch

    def syllables(self, text: str) -> list[str]:
        if not self._routed:
            return tokenize_table(self._schemas[self.script], text, True)
        tokens: list[str] = []
        for seg in segment(text, scripts=self.scripts, foreign_letters=False):
            part = " " + seg.text if seg.has_leading_space else seg.text
            if seg.script is Script.LATIN:
                tokens.extend(_PASSTHROUGH.findall(part))
            else:
                tokens.extend(tokenize_table(self._schemas[seg.script.value], part, True))
        return tokens

    def split(self, text: str) -> list[tuple[bool, list[str]]]:
        if self._single_word(text):
            return [(True, self.syllables(text))]
        out: list[tuple[bool, list[str]]] = []
        for m in self._finditer(text):
            if m.group(1):
                out.append((True, self.syllables(m.group())))
            else:
                out.append((False, [m.group()]))
        return out
