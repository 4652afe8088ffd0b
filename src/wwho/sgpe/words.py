"""From text to SGPE words, for one script mode.

The script modes are data-driven: every bundled schema is a mode of its own (``sinhala``,
``devanagari``, ``bengali``, ``tamil``, ...), and two multi-script modes name fixed lists of
schemas (:data:`MULTI_SCRIPT_MODES`): ``mixed`` (Sinhala + Devanagari, as it always was) and
``indic`` (all ten bundled Indic scripts). The lists are fixed, not "whatever is bundled",
so that a ``vocab.json`` trained in a mode keeps its meaning when a schema is added.

Text is cut into *pieces* with one C-backed regex (a whitespace-free chunk with the one
space before it, or a single whitespace character). In leading-space mode no syllable
and no word ever crosses a piece boundary, so the words of a text are the words of
its pieces in order; trainers and encoders therefore work once per distinct piece.

A piece becomes words and boundary tokens (:func:`wwho.words.word_pattern`, one regex)
and each word becomes syllables (the script's schema, ``leading_space=True``). In
``mixed`` mode the word pattern uses the union of both scripts, and a word is first
routed (:func:`wwho.router.segment`): each Indic run is syllabified by its own schema,
anything else in it is one token per character. Multi-script modes work the same way
with more scripts.

This module does not know vocabularies or merges.
"""

from __future__ import annotations

import re

from wwho.bpe import count as bpe_count
from wwho.errors import TokenizerError
from wwho.router import Script, segment
from wwho.schema import available_scripts
from wwho.syllables import Syllabifier
from wwho.words import single_word_pattern, word_pattern

#: Modes that route each script run to its own schema, and the scripts each one covers.
MULTI_SCRIPT_MODES: dict[str, tuple[str, ...]] = {
    "mixed": ("sinhala", "devanagari"),
    "indic": ("bengali", "devanagari", "gujarati", "gurmukhi", "kannada", "malayalam", "odia", "sinhala",
              "tamil", "telugu"),
}
#: Every script mode: one per bundled schema, then the multi-script modes.
SCRIPT_MODES: tuple[str, ...] = (*available_scripts(), *MULTI_SCRIPT_MODES)


def mode_scripts(script: str) -> tuple[str, ...]:
    """The bundled scripts a script mode covers (a TokenizerError names the modes if unknown)."""
    if script in MULTI_SCRIPT_MODES:
        return MULTI_SCRIPT_MODES[script]
    if script in SCRIPT_MODES:
        return (script,)
    raise TokenizerError(f"unknown script mode {script!r}; choose from {', '.join(SCRIPT_MODES)}")
PIECES = re.compile(bpe_count.PIECES)  # the trainer counts exactly these pieces
# One token per character, a space glued to the non-whitespace character after it.
_PASSTHROUGH = re.compile(r"(?: (?![ \t\n\r]))?.", re.DOTALL)


class WordSplitter:
    """Turns pieces of text into SGPE words for one script mode."""

    def __init__(self, script: str) -> None:
        self.scripts: tuple[str, ...] = mode_scripts(script)
        self.script = script
        self._routed = script in MULTI_SCRIPT_MODES
        self._syllabifiers = {name: Syllabifier.for_script(name) for name in self.scripts}
        self._finditer = word_pattern(self.scripts).finditer
        self._single_word = single_word_pattern(self.scripts).fullmatch

    def syllables(self, text: str) -> list[str]:
        """The syllable-level tokens of ``text`` (leading-space mode)."""
        if not self._routed:
            return self._syllabifiers[self.script].tokenize(text, True)
        tokens: list[str] = []
        for seg in segment(text, scripts=self.scripts):
            part = " " + seg.text if seg.has_leading_space else seg.text
            if seg.script is Script.LATIN:
                tokens.extend(_PASSTHROUGH.findall(part))
            else:
                tokens.extend(self._syllabifiers[seg.script.value].tokenize(part, True))
        return tokens

    def split(self, text: str) -> list[tuple[bool, list[str]]]:
        """``(is_word, tokens)`` for each word and boundary token of ``text``, in order.

        Words come first from :func:`wwho.words.word_pattern` (one regex, the same one the
        Hugging Face export uses), then each word is syllabified.
        """
        if self._single_word(text):  # the common case: the whole piece is one word
            return [(True, self.syllables(text))]
        out: list[tuple[bool, list[str]]] = []
        for m in self._finditer(text):
            if m.group(1):
                out.append((True, self.syllables(m.group())))
            else:
                out.append((False, [m.group()]))
        return out

    def words(self, text: str) -> list[list[str]]:
        """The words of ``text``: lists of syllables, or one-token lists for boundary tokens."""
        return [tokens for _, tokens in self.split(text)]
