"""Is the input in the script chosen? A warning when most of its letters are not.

``syllabify("नमस्ते")`` with the default script (Sinhala) returns bare code points, and training
SGPE with ``--script devanagari`` on Sinhala text learns no merges: both are legal and both
surprise. :func:`letters_by_script` counts letters (and combining marks) per bundled script, by
the Unicode blocks of its schema, ``latin`` for everything no schema claims;
:func:`warn_if_other_script` warns (:class:`wwho.errors.ScriptWarning`) when the chosen scripts hold
less than half of them, naming the script that does and the option to pass.

Digits, punctuation, spaces and symbols are not counted, so numbers and markup never warn. A long
text is judged on a sample (:func:`sample`: evenly spaced windows, :data:`SAMPLE_CHARS` in all), so
the check costs the same on a line and on a book, and never more than the work it guards.
This module does not tokenize and never changes what the caller does.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable

from wwho.errors import ScriptWarning
from wwho.notices import warn
from wwho.schema import available_scripts

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


@functools.cache
def _letter_runs():
    import regex  # Python's re has no Unicode property classes

    return regex.compile(r"[\p{L}\p{M}]+").findall


def letter_count(text: str) -> int:
    """The letters and combining marks of ``text`` (what :func:`letters_by_script` counts)."""
    # Runs of them, found and measured in C: the check runs on every wwho.syllabify call, where a
    # test per character in Python cost many times the syllabification itself.
    return sum(map(len, _letter_runs()(text)))


@functools.lru_cache(maxsize=16)  # a bundled script, or the scripts of a mode
def _block_letters(scripts: tuple[str, ...]):
    import regex

    from wwho.codepoints import char_class
    from wwho.schema import bundled_schema

    is_letter = regex.compile(r"[\p{L}\p{M}]").match
    cps = {cp for name in scripts for b in bundled_schema(name).blocks for cp in range(b.first, b.last + 1)
           if is_letter(chr(cp))}
    return re.compile(char_class(cps)).findall


def block_letter_count(text: str, scripts: tuple[str, ...]) -> int:
    """The letters and marks of ``text`` in the Unicode blocks of the bundled ``scripts``: letters of
    those scripts whatever unit holds them (a schema keeps another script's clusters whole, so a
    syllable of the chosen script's syllabifier may be of another script)."""
    return len(_block_letters(scripts)(text))


def plainly_in(text: str, script: str) -> bool:
    """True when the letters of ``text`` in the blocks of the bundled ``script`` are at least half of
    its characters other than spaces (more than all its letters): then :func:`warn_if_other_script`
    would not warn, as the script's letters are those of its blocks (:func:`letters_by_script`).
    False says only that the letters must be counted. Two scans in C, where the full count costs
    many times a short text's syllabification."""
    return 2 * block_letter_count(text, (script,)) >= len(text) - text.count(" ")


def letters_by_script(texts: Iterable[tuple[str, int]]) -> Counter:
    """``{script name: letters}`` over ``(text, count)`` pairs (a count weighs repeated text): a
    letter or mark belongs to the bundled script whose Unicode blocks hold it, every other one to
    ``latin``. (By blocks, not by the router's runs: a run of one script goes on through another
    Brahmic script's consonants and any combining marks, so where a run starts would decide whose
    letters those are, and a count of one script's letters could not be had in one scan.)"""
    names = tuple(available_scripts())
    out: Counter = Counter()
    for text, count in texts:
        total = letter_count(text)
        if not total:
            continue
        indic = 0
        if not text.isascii():
            for name in names:
                n = block_letter_count(text, (name,))
                if n:
                    out[name] += n * count
                    indic += n
        if total > indic:
            out["latin"] += (total - indic) * count
    return out


#: What becomes of Latin text, by what is done with it.
TRAINING_KEEPS = "which {shown} learns as other text, without syllables"
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
