"""From text to SGPE words, for one script mode.

The script modes are data-driven: every bundled schema is a mode of its own (``sinhala``,
``devanagari``, ``bengali``, ``tamil``, ...), and two multi-script modes name fixed lists of
schemas (:data:`wwho.schema.MULTI_SCRIPT_MODES`): ``mixed`` (Sinhala + Devanagari, as it always was) and
``indic`` (all ten bundled Indic scripts). The lists are fixed, not "whatever is bundled",
so that a ``vocab.json`` trained in a mode keeps its meaning when a schema is added.

Text is cut into *pieces* (``PIECES``: a whitespace-free chunk with the one space before
it, or a single whitespace character). In leading-space mode no syllable
and no word ever crosses a piece boundary, so the words of a text are the words of
its pieces in order; trainers and encoders therefore work once per distinct piece.

A piece becomes words and boundary tokens (the rule of :func:`wwho.words.word_pattern`)
and each word becomes syllables (the script's schema, ``leading_space=True``). In
``mixed`` mode the word rule uses the union of both scripts, and a word is first
routed (:func:`wwho.router.segment`): each Indic run is syllabified by its own schema,
anything else in it is one token per character. Multi-script modes work the same way
with more scripts.

All of it runs in the compiled core (``wwho._core.WordSplitter``), built here from the
schemas' character sets and automata; the regex form it replaced is the tests' reference
(``tests/reference/words.py``).

This module does not know vocabularies or merges.
"""

from __future__ import annotations

import functools
import re

from wwho import _core, counting
from wwho.codepoints import code_point_ranges
from wwho.errors import TokenizerError, WrongTypeError
from wwho.router import core_router
from wwho.schema import MULTI_SCRIPT_MODES, available_scripts
from wwho.syllables import Syllabifier, _check_separator, _check_text, _flag
from wwho.words import word_char_sets

#: Every script mode: one per bundled schema, then the multi-script modes.
SCRIPT_MODES: tuple[str, ...] = (*available_scripts(), *MULTI_SCRIPT_MODES)


def mode_scripts(script: str) -> tuple[str, ...]:
    """The bundled scripts a script mode covers (a TokenizerError names the modes if unknown)."""
    if not isinstance(script, str):  # (a str Enum member is a str; a schema's dict is no key to look up)
        raise WrongTypeError(f"script must be the name of a script mode, not {type(script).__name__}; choose "
                             f"from {', '.join(SCRIPT_MODES)} (a schema of your own trains once it is bundled: "
                             "docs/schemas.md, 'Adding a script')")
    if script in MULTI_SCRIPT_MODES:
        return MULTI_SCRIPT_MODES[script]
    if script in SCRIPT_MODES:
        return (script,)
    raise TokenizerError(f"unknown script mode {script!r}; choose from {', '.join(SCRIPT_MODES)}")
PIECES = re.compile(counting.PIECES)  # the trainer counts exactly these pieces


class WordSplitter:
    """Turns pieces of text into SGPE words for one script mode."""

    def __init__(self, script: str, *, split_punctuation: bool = False) -> None:
        self.scripts: tuple[str, ...] = mode_scripts(script)
        self.script = script
        #: The scripts' own punctuation (the dandas) ends a word (see :func:`wwho.words.word_char_sets`).
        self.split_punctuation = split_punctuation
        self.core = core_splitter(self.scripts, script in MULTI_SCRIPT_MODES, split_punctuation)

    def syllables(self, text: str) -> list[str]:
        """The syllable-level tokens of ``text`` taken as one word (leading-space mode)."""
        _check_text(text)
        return self.core.syllables(text)

    def split(self, text: str) -> list[tuple[bool, list[str]]]:
        """``(is_word, tokens)`` for each word and boundary token of ``text``, in order.

        Words come first (the rule of :func:`wwho.words.word_pattern`, the regex the Hugging
        Face export uses), then each word is syllabified.
        """
        _check_text(text)
        return self.core.split(text)

    def words(self, text: str) -> list[list[str]]:
        """The words of ``text``: lists of syllables, or one-token lists for boundary tokens."""
        return [tokens for _, tokens in self.split(text)]

    def tokenize(self, text: str, *, leading_space: bool = False) -> list[str]:
        """Every token of :meth:`split` in order; without ``leading_space``, a space glued to the
        token after it is a token of its own: the syllables of text in several scripts (what
        ``wwho syllabify --script indic`` prints).

        Each script run gets that script's :class:`~wwho.syllables.Syllabifier` syllables
        (``leading_space=True``), except where the word rule ends a word that the syllabifier would
        go on through (another script's consonant and virama). Without ``leading_space`` a space is
        always apart here, where a one-script syllabifier that keeps grapheme clusters keeps a
        space and a ZWNJ or combining mark after it together."""
        _check_text(text)
        return self.core.tokenize(text, _flag(leading_space))

    def joined(self, text: str, separator: str, *, leading_space: bool = False) -> str:
        """``separator.join(self.tokenize(text, leading_space=leading_space))``, made in the core."""
        return self._joined(text, separator, leading_space, False).decode("utf-8", "surrogatepass")

    def joined_lines(self, text: str, separator: str, *, leading_space: bool = False) -> bytes:
        """The UTF-8 of :meth:`joined` applied to each line of ``text`` (split at ``"\\n"`` only,
        line ends kept): what ``wwho syllabify --script indic`` prints for a block of its input."""
        return self._joined(text, separator, leading_space, True)

    def _joined(self, text: str, separator: str, leading_space: bool, lines: bool) -> bytes:
        _check_text(text)
        _check_separator(separator)
        return self.core.joined(text, _flag(leading_space), separator, lines)


@functools.cache
def core_splitter(scripts: tuple[str, ...], routed: bool, split_punctuation: bool = False) -> _core.WordSplitter:
    """The compiled splitter of a script mode (shared by every tokenizer of that mode)."""
    starts, attach = word_char_sets(scripts, split_punctuation=split_punctuation)
    automata = [Syllabifier.for_script(name).automaton for name in scripts]
    router = core_router(scripts, foreign_letters=False) if routed else None
    return _core.WordSplitter(code_point_ranges(starts), code_point_ranges(attach), automata, router)


