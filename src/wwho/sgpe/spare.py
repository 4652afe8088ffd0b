"""Merges for the ids a small corpus leaves: whole words held with punctuation, then word endings.

On a small corpus SGPE's word-level merges run out before ``vocab_size``: every training word
is one token and no pair is left. Two kinds of held-out word still cost more than they need to.

* **Words held only with punctuation** (:func:`punctuated_words`, scope ``"pieces"``). A word
  learned with its punctuation (``" ලංකාව."``) may never be learned alone: its last syllable
  may merge with the full stop first, and the word standing alone (``" ලංකාව"``) is then cut.
* **Word endings** (:func:`word_endings`). BPE over whole words merges from a word's start
  (``" କ"`` + ``"ରି"``, then ``"ବା"``), so an ending many words share (``"ରିବା"``) never becomes
  a token unless some word is only that; a held-out word with a new stem (``" ଚରିବା"``) is then
  spelt syllable by syllable.

Each stage gives its words to a merge engine of their own, cut as the merges so far cut them
(:meth:`~wwho.bpe.engine.MergeEngine.apply`: each merge, in order, where its pair occurs), and
trains on from there, most frequent pair first. Its merges come after every other, so no piece
of the training text is cut differently, and like every SGPE merge they join whole syllables.
The trainer (:mod:`wwho.sgpe.phases`) runs them in this order, then gives what is left to unseen
syllables (:mod:`wwho.sgpe.completion`).

This module does not decide that ids are left, count the words, or build the vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable

from wwho import _core
from wwho.bpe import MergeEngine

Merges = list[tuple[str, str]]


def punctuated_words(engine: MergeEngine, cores: _core.CoreCounts | None, *, taken: set[str], spare: int,
                     min_freq: int, say: Callable[[str], None]) -> tuple[Merges, list[str]]:
    """``(merges, tokens)`` that make whole, in at most ``spare`` new ids, the words the text holds
    only with punctuation attached (``cores``, scope ``"pieces"``), after ``engine``'s merges.
    ``taken``: tokens the vocabulary holds already (a new token equal to one costs no id)."""
    if spare <= 0 or not cores:
        return [], []
    merges, tokens = _train_on(engine, [], cores, taken=taken, spare=spare, min_freq=min_freq)
    if merges:
        say(f"{len(tokens):,} ids to words held only with punctuation ({len(merges):,} merges)")
    return merges, tokens


def word_endings(engine: MergeEngine, after: Merges, endings: _core.CoreCounts | None, *, taken: set[str],
                 spare: int, min_freq: int, say: Callable[[str], None]) -> tuple[Merges, list[str]]:
    """``(merges, tokens)`` for word endings, in at most ``spare`` new ids, after ``engine``'s
    merges and then ``after`` (``endings``: every ending of a training word after its first
    unit, of two units or more, with the word's count). Only pairs seen twice or more merge: an
    ending of a single word is no better a token than the word, which is one already."""
    if spare <= 0 or not endings:
        return [], []
    merges, tokens = _train_on(engine, after, endings, taken=taken, spare=spare, min_freq=max(min_freq, 2))
    if merges:
        say(f"{len(tokens):,} ids to word endings ({len(merges):,} merges)")
    return merges, tokens


def _train_on(engine: MergeEngine, after: Merges, words: _core.CoreCounts, *, taken: set[str], spare: int,
              min_freq: int) -> tuple[Merges, list[str]]:
    """Train on ``words`` (their syllables and counts) as ``engine``'s merges and then ``after``
    cut them: the new merges, and their tokens not in ``taken``."""
    symbols = list(engine.symbols)
    ids = {s: i for i, s in enumerate(symbols)}
    for a, b in after:
        if a + b not in ids:
            ids[a + b] = len(symbols)
            symbols.append(a + b)
    # A word with a pruned syllable (not a symbol) is left out: no merge can reach into it.
    units = [([ids[u] for u in word], count) for word, count in words.items()
             if len(word) > 1 and all(u in ids for u in word)]
    if not units:
        return [], []
    stage = MergeEngine([w for w, _ in units], [n for _, n in units], symbols, tie_break="smaller")
    applied = stage.apply([*engine.merges, *((ids[a], ids[b]) for a, b in after)])
    known = len(stage.symbols)
    stage.train(max_symbols=known + spare, min_freq=min_freq, progress=False)
    merges = [(stage.symbols[a], stage.symbols[b]) for a, b in stage.merges[applied:]]
    return merges, [t for t in stage.symbols[known:] if t not in taken]
