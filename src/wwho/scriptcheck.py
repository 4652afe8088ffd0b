"""Is the input in the script chosen? A warning when most of its letters are not.

``syllabify("नमस्ते")`` with the default script (Sinhala) returns bare code points, and training
SGPE with ``--script devanagari`` on Sinhala text learns no merges: both are legal and both
surprise. :func:`letters_by_script` counts letters (and combining marks) per bundled script, by
the router's script runs (:func:`wwho.router.segment`), ``latin`` for everything no schema claims;
:func:`warn_if_other_script` warns (:class:`wwho.errors.ScriptWarning`) when the chosen scripts hold
less than half of them, naming the script that does and the option to pass.

Digits, punctuation, spaces and symbols are not counted, so numbers and markup never warn. A long
text is judged on a sample (:func:`sample`: evenly spaced windows, :data:`SAMPLE_CHARS` in all), so
the check costs the same on a line and on a book, and never more than the work it guards.
This module does not tokenize and never changes what the caller does.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable

from wwho.errors import ScriptWarning
from wwho.notices import warn
from wwho.router import segment

#: below this many letters there is too little to judge
MIN_LETTERS = 2
#: a longer text is judged on this many of its characters, in :data:`WINDOWS` evenly spaced windows
SAMPLE_CHARS = 16_384
WINDOWS = 16


def sample(text: str, max_chars: int = SAMPLE_CHARS) -> str:
    """``text`` itself when short; else :data:`WINDOWS` windows spread evenly over it, ``max_chars``
    in all, joined by newlines (a window may start or end inside a word: a few letters, not the
    majority the check looks for)."""
    if len(text) <= max_chars:
        return text
    width = max_chars // WINDOWS
    step = (len(text) - width) // (WINDOWS - 1)
    return "\n".join(text[k * step:k * step + width] for k in range(WINDOWS))


def letter_count(text: str) -> int:
    """The letters and combining marks of ``text`` (what :func:`letters_by_script` counts)."""
    return sum(1 for c in text if c.isalpha() or unicodedata.category(c)[0] == "M")


def letters_by_script(texts: Iterable[tuple[str, int]]) -> Counter:
    """``{script name: letters}`` over ``(text, count)`` pairs (a count weighs repeated text)."""
    out: Counter = Counter()
    for text, count in texts:
        for run in segment(text):
            n = letter_count(run.text)
            if n:
                out[run.script.value] += n * count
    return out


#: What becomes of Latin text, by what is done with it.
TRAINING_KEEPS = "which {shown} keeps whole, byte by byte"
SYLLABIFYING_KEEPS = "which {shown} has no syllables for: each of its characters is a piece of its own"
#: The same, for a schema that keeps grapheme clusters whole (every bundled one but Sinhala's).
SYLLABIFYING_CLUSTERS = "which {shown} has no syllables for: each of its grapheme clusters is a piece of its own"


def syllabifying_keeps(keep_clusters: bool) -> str:
    """What becomes of Latin text in a syllabifier, by its schema's ``keep_clusters``."""
    return SYLLABIFYING_CLUSTERS if keep_clusters else SYLLABIFYING_KEEPS


def warn_if_other_script(letters: Counter, chosen: tuple[str, ...], *, what: str, option: str,
                         latin: str = TRAINING_KEEPS, mode: str | None = None) -> str | None:
    """Warn when ``chosen`` holds under half of ``letters``; return the message (None: no warning).

    ``what`` names the input ("the text", "the corpus"); ``option`` how to choose a script
    (``script=`` or ``--script``); ``latin``: what becomes of Latin text (:data:`TRAINING_KEEPS`,
    :data:`SYLLABIFYING_KEEPS`); ``mode``: the script mode's name, said instead of its scripts
    when they are more than two."""
    total = sum(letters.values())
    if total < MIN_LETTERS:
        return None
    mine = sum(letters[name] for name in chosen)
    if mine * 2 >= total:
        return None
    top, n = max(((s, c) for s, c in letters.items() if s not in chosen), key=lambda sc: (sc[1], sc[0]))
    shown = f"{mode} ({len(chosen)} scripts)" if mode and len(chosen) > 2 else "/".join(chosen)
    if top == "latin":
        fix = f"it is {n / total:.0%} other scripts (Latin, ...), " + latin.format(shown=shown)
    else:
        fix = f"it is {n / total:.0%} {top}: pass {option}{top}"
    message = f"only {mine / total:.0%} of the letters of {what} are {shown}; {fix}"
    warn(message, ScriptWarning)
    return message
