"""Syllables the training text did not have, for ids its merges left unused.

On a small corpus SGPE's merges run out before the vocabulary is full: every word of the
training text is one token, and no pair is left to merge. Held-out text then meets syllables
the training text never had (a known cluster with a known tail it never carried: ``ದ್ದಾಂ`` where
``ದ್ದಾ`` and, on other consonants, ``ಾಂ`` occurred), and spells each in two or three pieces.

``unseen_syllables`` proposes such syllables from the ones the training text has: each known
syllable is an onset (up to its last letter: a consonant or a cluster joined by viramas, or an
independent vowel) and a tail (the marks after it: vowel signs, anusvara, visarga, a virama),
and an unseen pairing of a known onset with a known tail is scored by the product of their
frequencies, as if they combined independently. A pairing is proposed only where a letter of
the onset's last letter's class meets the tail's first mark somewhere in the text (the trainer
gives each letter its class in the script's schema: a consonant takes the vowel signs consonants
are seen with; an independent vowel, seen with none, takes none), and only candidates the
script's syllabifier reads as exactly one syllable are kept. The trainer adds the best of them while ids are left
(``train_sgpe(complete_syllables=True)``, the default); with enough text the merges fill the
vocabulary and nothing is added.

It does not invent onsets or tails the training text lacks, nor rank candidates by anything but
that independence score; it does not decide how many fit (the trainer does, with the building
pieces each needs).
"""

from __future__ import annotations

import heapq
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping


def split_syllable(syllable: str) -> tuple[str, str] | None:
    """``(onset, tail)``: up to the last letter, and the marks after it; None for a syllable of
    another shape (a digit, punctuation, a letter followed by something other than marks)."""
    last = -1
    for i, c in enumerate(syllable):
        if unicodedata.category(c).startswith("L"):
            last = i
    if last < 0:
        return None
    onset, tail = syllable[: last + 1], syllable[last + 1:]
    if not all(unicodedata.category(c) in ("Mn", "Mc") for c in tail):
        return None
    return onset, tail


def unseen_syllables(syllable_freq: Mapping[str, int], *, in_script: Callable[[str], bool],
                     is_syllable: Callable[[str], bool], limit: int,
                     letter_class: Callable[[str], object] = lambda c: c) -> list[str]:
    """Up to ``limit`` unseen syllables, best first (see the module docstring).

    ``syllable_freq``: the training text's syllables and their counts; ``in_script(s)``: whether
    a syllable belongs to the script being completed; ``is_syllable(s)``: whether the script's
    syllabifier reads ``s`` as exactly one syllable; ``letter_class(c)``: the class whose letters
    share what marks they take (by default each letter alone)."""
    if limit <= 0:
        return []
    onsets: Counter[str] = Counter()
    tails: Counter[str] = Counter()
    # Which first mark of a tail follows which class of an onset's last letter somewhere in the
    # training text: an independent vowel takes an anusvara but no vowel sign, and the
    # syllabifier accepts both, so only what the text shows is combined.
    joins: set[tuple[object, str]] = set()
    for syllable, count in syllable_freq.items():
        if not in_script(syllable):
            continue
        parts = split_syllable(syllable)
        if parts is None:
            continue
        onsets[parts[0]] += count
        tails[parts[1]] += count
        joins.add((letter_class(parts[0][-1]), parts[1][:1]))
    # The best pairs without scoring all of them: walk onsets and tails in falling frequency and
    # keep a heap of the frontier (each pair's score only falls along either list).
    # Ties by string, not by Counter's insertion order, which follows the order the training text's
    # syllables were first counted in (the number of workers, the order of the files).
    onset_list = sorted(onsets.items(), key=lambda kv: (-kv[1], kv[0]))
    tail_list = sorted(tails.items(), key=lambda kv: (-kv[1], kv[0]))
    if not onset_list or not tail_list:
        return []
    found: list[str] = []
    seen = {(0, 0)}
    frontier = [(-onset_list[0][1] * tail_list[0][1], 0, 0)]
    while frontier and len(found) < limit:
        _, i, j = heapq.heappop(frontier)
        onset, tail = onset_list[i][0], tail_list[j][0]
        candidate = onset + tail
        if (letter_class(onset[-1]), tail[:1]) in joins and candidate not in syllable_freq and is_syllable(candidate):
            found.append(candidate)
        for a, b in ((i + 1, j), (i, j + 1)):
            if a < len(onset_list) and b < len(tail_list) and (a, b) not in seen:
                seen.add((a, b))
                heapq.heappush(frontier, (-onset_list[a][1] * tail_list[b][1], a, b))
    return found
