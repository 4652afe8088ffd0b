"""The id budget of an SGPE vocabulary: base symbols, and the automatic pruning threshold.

Every id of ``vocab.json`` is paid from ``vocab_size``: the special tokens, the 256 byte
tokens, the boundary symbols, the syllables, the pieces that rebuild syllables from code
points (:mod:`wwho.sgpe.building`) and the learned merges. A syllable with an id of its own
saves tokens only where it occurs; a merge saves as many tokens as its pair's frequency.
So a syllable much rarer than the merges it displaces is a bad buy: pruned (left to
characters and byte fallback at encoding time), it frees an id for a merge that saves more.

:func:`auto_prune_freq` chooses the threshold: the smallest ``p`` such that a syllable of
frequency ``p`` is worth at least ``PRUNE_RATIO`` times the last merge the budget then pays
for. The merge frequencies come from one probe run of the merge engine without pruning
(deterministic: counts and the tie-break only), stepped in the compiled core only as far as
the candidates need. The trainer builds that engine in the core
(``WordCounts.engine_input(1)``); :func:`base_symbols` is the same engine input in Python,
for small inputs and the tests. Measured on FLORES devtest (Sinhala news,
``docs/benchmarks.md``): the best fixed threshold is about half the last merge's frequency
at 8k, 32k and 64k tokens (100 at 8k, 10 at 32k, 2-5 at 64k), which the rule reproduces.

This module does not read corpora nor assign final ids.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from wwho.bpe import UNK, MergeEngine
from wwho.progress import progress_bar
from wwho.sgpe.building import bare_forms, building_merges

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
    syllables = sorted((s for s, f in syllable_freq.items() if f >= prune_freq and s not in boundary_symbols),
                       key=lambda s: (-syllable_freq[s], s))  # (a string both ways is one symbol)
    symbols = sorted(boundary_symbols) + syllables
    index = {s: i for i, s in enumerate(symbols)}
    word_list = sorted(words)
    return EngineInput(symbols, index, [[index.get(s, UNK) for s in w] for w in word_list],
                       [words[w] for w in word_list], word_list, len(syllables))


def probe_engine(words: Counter[tuple[str, ...]], syllable_freq: Counter[str],
                 boundary_symbols: set[str]) -> MergeEngine:
    """The engine :func:`auto_prune_freq` probes, for word counts held in Python."""
    probe = base_symbols(words, syllable_freq, boundary_symbols, 1)
    return MergeEngine(probe.words, probe.counts, probe.symbols, tie_break="smaller")


def auto_prune_freq(probe: MergeEngine, syllable_freq: Mapping[str, int], boundary_symbols: set[str],
                    *, ids: int, min_freq: int, progress: bool = False,
                    need: dict[str, int | None] | None = None, bare_syllables: bool = True) -> int:
    """The pruning threshold of the module docstring.

    ``probe``: a fresh merge engine over the training words with no syllable pruned (it is
    stepped, so it cannot be reused). ``ids`` is what the budget leaves for everything but the
    special and byte tokens: base symbols, the pieces that build them, and merges. ``need``:
    :func:`piece_needs` of the same arguments, if already worked out.
    """
    if need is None:
        need = piece_needs(syllable_freq, boundary_symbols, bare_syllables=bare_syllables)
    always = sum(1 for f in need.values() if f is None)  # boundary symbols and their pieces
    reach = ids - always  # the most merges any threshold could leave room for
    if reach <= 0:
        return max(syllable_freq.values(), default=1) + 1  # not even the boundary symbols fit: prune all
    engine = probe
    freqs: list[int] = []  # the probe's merge frequencies, run only as far as a candidate needs
    needed = sorted(f for f in need.values() if f is not None)  # pieces needed at threshold p: needed >= p
    with progress_bar(total=reach, unit="merge", desc="pruning probe", disable=not progress) as bar:
        for p in sorted(set(syllable_freq.values())):
            merges = reach - (len(needed) - bisect.bisect_left(needed, p))
            if len(freqs) <= max(merges, 0):  # one merge beyond: does every pair fit already?
                got = engine.steps(max(merges, 0) + 1 - len(freqs), min_freq=min_freq, record=False)
                freqs.extend(freq for *_, freq in got)
                bar.update(len(got))
            if merges >= len(freqs):  # every pair that reaches min_freq fits: keep the other syllables
                if merges >= 0:
                    return p
                continue
            if not freqs:  # no pair reaches min_freq, and the pieces do not fit: only a higher p makes room
                continue
            # (only where the base fits: a threshold that leaves no room even for the base
            # symbols would make a vocabulary larger than asked, where a higher one fits)
            if merges >= 0 and p >= PRUNE_RATIO * freqs[max(merges, 1) - 1]:
                return p
    return max(syllable_freq.values(), default=0) + 1  # every syllable is worth less than a merge


def piece_needs(syllable_freq: Mapping[str, int], boundary_symbols: set[str], *,
                bare_syllables: bool = True) -> dict[str, int | None]:
    """Every symbol and building piece -> the frequency of the most frequent syllable that needs it
    (``None``: a boundary symbol needs it, so it is always in the vocabulary). With
    ``bare_syllables``, a syllable with a leading space needs its bare form too (training's option)."""
    tokens = [*boundary_symbols, *syllable_freq]
    if bare_syllables:
        tokens += bare_forms(tokens, boundary_symbols)
    merges, _ = building_merges(tokens)
    ranks = {pair: i for i, pair in enumerate(merges)}
    need: dict[str, int | None] = {c: None for s in syllable_freq for c in s}  # characters: always kept
    for token in tokens:
        f = None if token in boundary_symbols else syllable_freq.get(token, 0)
        for piece in _build_path(token, ranks):
            old = need.get(piece, 0)
            need[piece] = None if f is None or old is None else max(old, f)
    return need


def _build_path(token: str, ranks: dict[tuple[str, str], int]) -> list[str]:
    """The characters of ``token`` and every piece the building merges make on the way to it."""
    parts = list(token)
    path = list(parts)
    while len(parts) > 1:
        best = min(range(len(parts) - 1), key=lambda i: ranks.get((parts[i], parts[i + 1]), len(ranks)))
        if (parts[best], parts[best + 1]) not in ranks:
            break
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
        path.append(parts[best])
    return path
