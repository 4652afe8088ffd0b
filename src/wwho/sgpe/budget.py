"""The id budget of an SGPE vocabulary: base symbols, and the automatic pruning threshold.

Every id of ``vocab.json`` is paid from ``vocab_size``: the special tokens, the 256 byte
tokens, the boundary symbols, the syllables, the pieces that rebuild syllables from code
points (:mod:`wwho.sgpe.building`) and the learned merges. A syllable with an id of its own
saves tokens only where it occurs; a merge saves as many tokens as its pair's frequency.
So a syllable much rarer than the merges it displaces is a bad buy: pruned (left to
characters and byte fallback at encoding time), it frees an id for a merge that saves more.

:func:`base_symbols` builds the engine's input for a pruning threshold;
:func:`auto_prune_freq` chooses the threshold: the smallest ``p`` such that a syllable of
frequency ``p`` is worth at least ``PRUNE_RATIO`` times the last merge the budget then pays
for. The merge frequencies come from one probe run of the engine without pruning
(deterministic: counts and the tie-break only). Measured on FLORES devtest (Sinhala news,
``docs/benchmarks.md``): the best fixed threshold is about half the last merge's frequency
at 8k, 32k and 64k tokens (100 at 8k, 10 at 32k, 2-5 at 64k), which the rule reproduces.

This module does not read corpora nor assign final ids.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass

from tqdm.auto import tqdm

from wwho.bpe import UNK, MergeEngine

#: Keep a syllable when its frequency is at least this share of the last affordable merge's.
PRUNE_RATIO = 0.5


@dataclass
class EngineInput:
    """What the merge engine gets for one pruning threshold."""

    symbols: list[str]  # boundary symbols (sorted), then syllables (most frequent first, ties by string)
    index: dict[str, int]
    words: list[list[int]]  # symbol ids, UNK for a pruned syllable; index-aligned with word_list
    counts: list[int]
    word_list: list[tuple[str, ...]]
    syllables: int  # how many syllables were kept


def base_symbols(words: Counter[tuple[str, ...]], syllable_freq: Counter[str], boundary_symbols: set[str],
                 prune_freq: int) -> EngineInput:
    """The symbol table and engine words when syllables rarer than ``prune_freq`` are pruned."""
    syllables = sorted((s for s, f in syllable_freq.items() if f >= prune_freq),
                       key=lambda s: (-syllable_freq[s], s))
    symbols = sorted(boundary_symbols) + syllables
    index = {s: i for i, s in enumerate(symbols)}
    word_list = sorted(words)
    return EngineInput(symbols, index, [[index.get(s, UNK) for s in w] for w in word_list],
                       [words[w] for w in word_list], word_list, len(syllables))


def auto_prune_freq(words: Counter[tuple[str, ...]], syllable_freq: Counter[str], boundary_symbols: set[str],
                    *, ids_for_symbols: int, min_freq: int, progress: bool = False) -> int:
    """The pruning threshold of the module docstring.

    ``ids_for_symbols`` is what the budget leaves for base symbols and merges (``vocab_size``
    minus specials, byte tokens and building pieces).
    """
    probe = base_symbols(words, syllable_freq, boundary_symbols, 1)
    # With every syllable kept, merges fill what the symbols leave; pruning frees more ids, so
    # the probe runs as far as the budget could ever reach (no syllable at all).
    reach = ids_for_symbols - len(boundary_symbols)
    if reach <= 0:
        return 1
    engine = MergeEngine(probe.words, probe.counts, probe.symbols, tie_break="smaller")
    freqs: list[int] = []
    with tqdm(total=reach, unit="merge", desc="pruning probe", disable=not progress) as bar:
        while len(freqs) < reach:
            got = engine.step(min_freq=min_freq)
            if got is None:
                break
            freqs.append(got[3])
            bar.update(1)
    del engine
    if not freqs:  # nothing to merge: pruning could only lose
        return 1
    kept = sorted(syllable_freq.values())  # syllables with freq >= p: len(kept) - bisect_left(kept, p)
    for p in sorted(set(kept)):
        merges = reach - (len(kept) - bisect.bisect_left(kept, p))
        if merges > len(freqs):  # every pair that reaches min_freq fits already: keep the rest
            return p
        if p >= PRUNE_RATIO * freqs[max(merges, 1) - 1]:
            return p
    return kept[-1]  # not reached in practice: the most frequent syllables only
