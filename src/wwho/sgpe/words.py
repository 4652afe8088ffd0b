"""From text to SGPE words, for one script mode (``sinhala``, ``devanagari``, ``mixed``).

Text is cut into *pieces* with one C-backed regex (a whitespace-free chunk with the one
space before it, or a single whitespace character). In leading-space mode no syllable
and no word ever crosses a piece boundary, so the words of a text are the words of
its pieces in order; trainers and encoders therefore work once per distinct piece.

A piece becomes syllables (the script's schema, ``leading_space=True``) and then words
(:func:`wwho.words.segment_into_words`). In ``mixed`` mode the piece is first routed
(:func:`wwho.router.segment`): each Indic run is syllabified by its own schema, other
runs are one token per character (with the leading space rule), and words are grouped
with the union of the scripts' characters.

This module does not know vocabularies or merges.
"""

from __future__ import annotations

import functools
import re

from wwho.errors import TokenizerError
from wwho.router import Script, segment
from wwho.syllables import Syllabifier
from wwho.words import segment_into_words

SCRIPT_MODES = ("sinhala", "devanagari", "mixed")
PIECES = re.compile(r" ?[^ \t\n\r]+|[ \t\n\r]")
# One token per character, a space glued to the non-whitespace character after it.
_PASSTHROUGH = re.compile(r"(?: (?![ \t\n\r]))?.", re.DOTALL)


class WordSplitter:
    """Turns pieces of text into SGPE words for one script mode."""

    def __init__(self, script: str) -> None:
        if script not in SCRIPT_MODES:
            raise TokenizerError(f"unknown script mode {script!r}; choose from {', '.join(SCRIPT_MODES)}")
        self.script = script
        self.scripts: tuple[str, ...] = ("sinhala", "devanagari") if script == "mixed" else (script,)
        self._syllabifiers = {name: Syllabifier.for_script(name) for name in self.scripts}
        chars = _script_re(self.scripts).pattern
        # A piece made only of one script's characters (and its leading space). In mixed
        # mode a piece of two scripts is routed, so "pure" means pure in one of them.
        self._pure = re.compile(
            "|".join(f" ?{_script_re((name,)).pattern}+" for name in self.scripts) if script == "mixed"
            else f" ?{chars}+"
        ).fullmatch

    def syllables(self, text: str) -> list[str]:
        """The syllable-level tokens of ``text`` (leading-space mode)."""
        if self.script != "mixed":
            return self._syllabifiers[self.script].tokenize(text, True)
        tokens: list[str] = []
        for seg in segment(text, scripts=self.scripts):
            part = " " + seg.text if seg.has_leading_space else seg.text
            if seg.script is Script.LATIN:
                tokens.extend(_PASSTHROUGH.findall(part))
            else:
                tokens.extend(self._syllabifiers[seg.script.value].tokenize(part, True))
        return tokens

    def words(self, text: str) -> list[list[str]]:
        """The words of ``text``: lists of syllables, or one-token lists for boundary tokens."""
        if self._pure(text):
            # Every character belongs to the script, so every token does: one word (the
            # common case, and what segment_into_words would return, only faster).
            return [self.syllables(text)]
        return segment_into_words(self.syllables(text), self.scripts)

    def is_boundary(self, word: list[str]) -> bool:
        return len(word) == 1 and _is_boundary(word[0], self.scripts)


@functools.lru_cache(maxsize=None)
def _script_re(scripts: tuple[str, ...]) -> re.Pattern[str]:
    from wwho.words import script_char_pattern

    return script_char_pattern(scripts)


def _is_boundary(token: str, scripts: tuple[str, ...]) -> bool:
    return not token or _script_re(scripts).search(token) is None
