"""Words: group syllables into the units that BPE merges may never cross.

The rule is spec 000's ``segment_into_words`` (section 3.1), kept in this one place
for the trainers and the encoders:

* a *boundary token* is a token with no character of the script (its Unicode blocks
  plus its ``word_chars``, e.g. ZWJ for Sinhala): Latin letters, digits, punctuation,
  whitespace. It is a word of its own and is never merged with anything;
* any other token joins the current word, except that a token starting with
  whitespace (a leading space from the syllable layer) starts a new word.

It does not syllabify (:mod:`wwho.syllables`) and knows nothing of vocabularies.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from wwho.schema import bundled_schema, char_class

_WS = (" ", "\t", "\n", "\r")


@functools.lru_cache(maxsize=None)
def script_char_pattern(scripts: str | tuple[str, ...] = "sinhala") -> re.Pattern[str]:
    """A regex matching one character that belongs to the given script(s)."""
    names = (scripts,) if isinstance(scripts, str) else scripts
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
