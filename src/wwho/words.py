"""Words: the units that BPE merges may never cross.

Spec 000's rule (section 3.1), :func:`segment_into_words`, groups syllables:

* a *boundary token* is a token with no character of the script (its Unicode blocks
  plus its ``word_chars``, e.g. ZWJ for Sinhala): Latin letters, digits, punctuation,
  whitespace. It is a word of its own and is never merged with anything;
* any other token joins the current word, except that a token starting with
  whitespace (a leading space from the syllable layer) starts a new word.

The trainers and encoders use the same rule in a form one regular expression can
compute *before* syllabification, :func:`word_pattern`, so that an exported Hugging
Face tokenizer can reproduce the words with a ``Split`` pre-tokenizer:

* a word is an optional leading space (a space glued to what follows unless that is
  whitespace), a character of the script (or of the schema's ``word_classes``), then
  any characters of the script, of ``word_classes`` or of ``attach_classes``;
* any other character (optionally after the glued space) is a boundary token, together
  with the ``attach_classes`` marks after it (so a combining mark never leaves its base);
* a whitespace character not glued to anything is a boundary token alone.

For Sinhala (no word or attach classes) both forms give the same words on every input
(tested). For Devanagari they differ only where a token mixes a non-script base with
script marks (``a`` + U+093E, a Latin letter with a Devanagari vowel sign): the
regex form keeps such a cluster whole as a boundary token.

It does not syllabify (:mod:`wwho.syllables`) and knows nothing of vocabularies.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from wwho.codepoints import char_class
from wwho.schema import bundled_schema

WHITESPACE = " \t\n\r"

_WS = (" ", "\t", "\n", "\r")


#: Patterns kept per set of scripts. A set's patterns do not depend on the order its scripts are
#: named in, so the caches key on the sorted names; a caller naming many different sets (ten
#: scripts make a thousand) can still not grow them past this many entries each.
PATTERNS_KEPT = 16


def _key(scripts: str | tuple[str, ...]) -> tuple[str, ...]:
    names = _names(scripts)
    for name in names:  # an unknown name (None, 5, "klingon") is the schema layer's typed error
        bundled_schema(name)
    return tuple(sorted(set(names)))


def script_char_pattern(scripts: str | tuple[str, ...] = "sinhala") -> re.Pattern[str]:
    """A regex matching one character that belongs to the given script(s)."""
    return _script_char_pattern(_key(scripts))


@functools.lru_cache(maxsize=PATTERNS_KEPT)
def _script_char_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    cps: set[int] = set()
    for name in names:
        for first, last in bundled_schema(name).script_chars():
            cps.update(range(first, last + 1))
    return re.compile(char_class(cps))


def is_boundary_token(token: str, scripts: str | tuple[str, ...] = "sinhala") -> bool:
    """True when ``token`` contains no character of the script(s) (or is empty)."""
    return not token or script_char_pattern(scripts).search(token) is None


def segment_into_words(
    syllables: Iterable[str], scripts: str | tuple[str, ...] = "sinhala"
) -> list[list[str]]:
    """Group syllables into words: boundary tokens alone, script runs split at leading spaces."""
    search = script_char_pattern(scripts).search
    words: list[list[str]] = []
    current: list[str] = []
    for tok in syllables:
        if not tok or search(tok) is None:
            if current:
                words.append(current)
                current = []
            words.append([tok])
        else:
            if tok[0] in _WS and current:
                words.append(current)
                current = []
            current.append(tok)
    if current:
        words.append(current)
    return words


def _names(scripts: str | tuple[str, ...]) -> tuple[str, ...]:
    return (scripts,) if isinstance(scripts, str) else tuple(scripts)


def word_char_sets(scripts: str | tuple[str, ...], *, split_punctuation: bool = False,
                   ) -> tuple[frozenset[int], frozenset[int]]:
    """``(starts, attach)``: characters that start or continue a word, and attached marks.

    ``split_punctuation``: the scripts' own punctuation (each schema's ``punctuation``: the
    dandas) is no word character, so it ends a word as Latin punctuation does."""
    starts: set[int] = set()
    attach: set[int] = set()
    punctuation: set[int] = set()
    for name in _names(scripts):
        schema = bundled_schema(name)
        starts |= schema.script_codepoints() | schema.word_codepoints()
        attach |= schema.attach_codepoints()
        punctuation |= schema.punctuation
    if split_punctuation:
        starts -= punctuation
    return frozenset(starts), frozenset(attach)


def word_pattern_source(scripts: str | tuple[str, ...] = "sinhala", *, onig: bool = False,
                        split_punctuation: bool = False) -> str:
    """The regex source of :func:`word_pattern` (``onig=True``: for HF ``tokenizers``).

    Group 1 is set for a word and empty for a boundary token.
    """
    starts, attach = word_char_sets(scripts, split_punctuation=split_punctuation)
    ws = {ord(c) for c in WHITESPACE}
    word_start = char_class(starts, onig=onig)
    word_char = char_class(starts | attach, onig=onig)
    other = char_class(starts | ws, negate=True, onig=onig)
    marks = f"{char_class(attach, onig=onig)}*" if attach else ""
    glued = "(?: (?=[^ \\t\\n\\r]))?"
    return f"({glued}{word_start}{word_char}*)|{glued}{other}{marks}|[ \\t\\n\\r]"


def word_pattern(scripts: str | tuple[str, ...] = "sinhala", *, split_punctuation: bool = False) -> re.Pattern[str]:
    """A compiled regex whose matches are the words and boundary tokens of a text, in order."""
    return _word_pattern(_key(scripts), split_punctuation)


@functools.lru_cache(maxsize=PATTERNS_KEPT)
def _word_pattern(names: tuple[str, ...], split_punctuation: bool) -> re.Pattern[str]:
    return re.compile(word_pattern_source(names, split_punctuation=split_punctuation), re.DOTALL)


def single_word_pattern(scripts: str | tuple[str, ...] = "sinhala", *,
                        split_punctuation: bool = False) -> re.Pattern[str]:
    """Matches (with ``fullmatch``) a text that :func:`word_pattern` finds to be exactly one word."""
    return _single_word_pattern(_key(scripts), split_punctuation)


@functools.lru_cache(maxsize=PATTERNS_KEPT)
def _single_word_pattern(names: tuple[str, ...], split_punctuation: bool) -> re.Pattern[str]:
    starts, attach = word_char_sets(names, split_punctuation=split_punctuation)
    return re.compile(f"(?: (?=[^ \\t\\n\\r]))?{char_class(starts)}{char_class(starts | attach)}*")
