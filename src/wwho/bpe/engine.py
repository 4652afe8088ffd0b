"""The BPE merge engine shared by SGPE (units = syllable ids) and byte-level BPE (units = byte ids).

Input is a corpus already reduced to *word types*: each word a sequence of symbol ids with its
corpus count. The engine learns merges greedily, most frequent adjacent pair first, exactly as a
naive trainer that recounts everything each step would (``tests/bpe_reference.py`` is that trainer,
and the test suite proves the two equal), but each merge only touches the words that contain the
merged pair: pair counts are kept incrementally with an index from pairs to words, and a lazy
queue (one bucket per frequency, sorted only when it comes to the front) finds the best pair.

Tie-break: among pairs of equal frequency the one whose ``(symbols[left], symbols[right])`` is
lexicographically smallest (``"smaller"``, SGPE's documented rule) or greatest (``"greater"``,
GPT-2's convention) wins; ``str`` symbols compare by code point, ``bytes`` by byte. Because the
order is total on ``(frequency, tie-break)``, the chosen pair never depends on history: a replay
(:meth:`MergeEngine.replay`) followed by training picks exactly the pairs an uninterrupted run does.

Symbol ``UNK`` (-1) marks a pruned rare unit: it stays in its word but never forms a pair.
A merged symbol is ``symbols[left] + symbols[right]``; if that string (or bytes) is already in the
table its id is reused (spec 000's ``SymbolTable.get_or_add``), so two merges may share an id.
Counts are 64-bit; pair frequencies must fit in 62 bits.

The loop runs in the compiled core (``wwho._core.MergeEngine``, ``rust/src/engine/``); this class
keeps the Python API, the progress bar and the ``on_merge`` callback. The pure-Python engine it
replaced is the tests' reference (``tests/reference/engine.py``).

This module does not read corpora, count words, prune, choose specials, assign final vocabulary
ids or write files: those belong to the trainers built on it (:mod:`wwho.counting`, SGPE,
byte-level BPE), which also write checkpoints from the ``on_merge`` callback.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Literal

from wwho import _core
from wwho.errors import MergeError
from wwho.progress import progress_bar

__all__ = ["UNK", "MergeEngine", "MergeError", "TieBreak"]

#: Sentinel symbol id of a pruned unit: kept in its word, never part of a pair, never merged.
UNK = -1

TieBreak = Literal["smaller", "greater"]

Pair = tuple[int, int]


class _Pause(Exception):
    """Raised by :meth:`MergeEngine.train`'s callback to stop the core on a multiple of ``on_merge_every``."""


class MergeEngine:
    """Learn BPE merges over word types given as symbol-id sequences with counts.

    ``words[i]`` is a word type (symbol ids >= 0, or ``UNK``), ``counts[i]`` its corpus frequency
    (> 0), ``symbols[i]`` the text (``str``) or bytes of symbol ``i``: all of one type, non-empty
    and distinct. Inputs are copied. ``symbols`` and ``merges`` are the live state (read them, do
    not modify them).
    """

    def __init__(
        self,
        words: Sequence[Sequence[int]],
        counts: Sequence[int],
        symbols: list[str] | list[bytes],
        *,
        tie_break: TieBreak = "smaller",
    ) -> None:
        if tie_break not in ("smaller", "greater"):
            raise MergeError(f"tie_break must be 'smaller' or 'greater', not {tie_break!r}")
        if len(words) != len(counts):
            raise MergeError(f"words and counts differ in length: {len(words)} != {len(counts)}")
        self.tie_break: TieBreak = tie_break
        self.symbols: list = list(symbols)
        self.merges: list[Pair] = []
        self._core = _core.MergeEngine(words, counts, self.symbols, tie_break == "greater")

    @classmethod
    def from_core(cls, core: _core.MergeEngine, symbols: list, *, tie_break: TieBreak = "smaller") -> MergeEngine:
        """Wrap an engine the core built itself (the SGPE trainer's words never become Python lists)."""
        engine = cls.__new__(cls)
        engine.tie_break = tie_break
        engine.symbols = list(symbols)
        engine.merges = []
        engine._core = core
        return engine

    def _record(self, a: int, b: int, c: int) -> None:
        self.merges.append((a, b))
        if c == len(self.symbols):
            self.symbols.append(self.symbols[a] + self.symbols[b])

    def step(self, *, min_freq: int = 2) -> tuple[int, int, int, int] | None:
        """Merge the best pair and return ``(left, right, new_id, freq)``.

        ``freq`` is the pair's weighted count over all adjacent positions (overlapping ones
        included, as a recount gives). Returns ``None``, changing nothing, when no pair is left or
        the best one has ``freq < min_freq`` (strict: a pair with ``freq == min_freq`` merges).
        """
        if type(min_freq) is not int:
            raise MergeError(f"min_freq must be an int, not {min_freq!r}")
        got = self._core.step(min_freq)
        if got is not None:
            self._record(*got[:3])
        return got

    def steps(self, n: int, *, min_freq: int = 2, record: bool = True) -> list[tuple[int, int, int, int]]:
        """Up to ``n`` merges, each as :meth:`step` makes it (fewer once no pair reaches
        ``min_freq``): one call into the core instead of ``n``. ``record=False`` leaves
        ``merges`` and ``symbols`` behind the core (for a probe that only reads the frequencies
        and is then thrown away)."""
        if type(min_freq) is not int:
            raise MergeError(f"min_freq must be an int, not {min_freq!r}")
        done = self._core.steps(max(n, 0), min_freq)
        if record:
            for a, b, c, _ in done:
                self._record(a, b, c)
        return done

    def train(
        self,
        *,
        max_symbols: int,
        min_freq: int = 2,
        progress: bool = True,
        on_merge: Callable[[int], None] | None = None,
        on_merge_every: int = 1,
    ) -> None:
        """Merge until the table holds ``max_symbols`` symbols or no pair reaches ``min_freq``.

        A merge that reuses an existing symbol does not grow the table, so it does not use budget.
        ``on_merge(step)`` runs after each merge whose ``step = len(self.merges)`` (replayed merges
        included) is a multiple of ``on_merge_every`` (default: every merge), e.g. to write a
        checkpoint every N steps; ``self.merges`` and ``self.symbols`` are complete when it runs.
        """
        if type(max_symbols) is not int:
            raise MergeError(f"max_symbols must be an int, not {max_symbols!r}")
        if type(min_freq) is not int:
            raise MergeError(f"min_freq must be an int, not {min_freq!r}")
        if type(on_merge_every) is not int or on_merge_every < 1:
            raise MergeError(f"on_merge_every must be an int >= 1, not {on_merge_every!r}")
        symbols = self.symbols
        budget = max(max_symbols - len(symbols), 0)
        with progress_bar(total=budget, unit="merge", desc="merges", disable=not progress) as bar:
            start = (len(self.merges), len(symbols))

            def some(a: int, b: int, c: int, freq: int, n_merges: int, n_symbols: int) -> None:
                done, grown = n_merges - start[0], n_symbols - start[1]
                bar.total = budget + done - grown  # reused ids: more merges for the same budget
                bar.update(done - bar.n)

            if on_merge is None:  # the bar moves every 256 merges; nothing crosses into Python in between
                self._core.train(max_symbols, min_freq, some if progress else None, 256)
            else:
                # The core cannot be read while it trains, so the callback stops it on each multiple of N
                # (the merge done), and the merges are fetched before on_merge and training goes on. The
                # core counts the merges of one call: from a start on a multiple of N its calls every
                # gcd(N, 256) merges land on the multiples and still move the bar; from a start between
                # multiples (a resumed run) it calls after every merge until the first one.
                def at(a: int, b: int, c: int, freq: int, n_merges: int, n_symbols: int) -> None:
                    some(a, b, c, freq, n_merges, n_symbols)
                    if n_merges % on_merge_every == 0:
                        raise _Pause

                while True:
                    aligned = len(self.merges) % on_merge_every == 0
                    try:
                        self._core.train(max_symbols, min_freq, at, math.gcd(on_merge_every, 256) if aligned else 1)
                        break
                    except _Pause:
                        self._sync()
                        on_merge(len(self.merges))
            self._sync()
            some(0, 0, 0, 0, len(self.merges), len(symbols))

    def _sync(self) -> None:
        """Fetch the merges and symbols the core made without callbacks."""
        core_merges = self._core.merges_from(len(self.merges))
        self.merges.extend(core_merges)
        self.symbols.extend(self._core.symbols_from(len(self.symbols)))

    def replay(self, merges: Sequence[Pair]) -> None:
        """Apply known merges in order (resume from a checkpoint).

        Afterwards the state equals the state after training those merges. Raises
        :class:`MergeError` for an id out of range or a pair absent at that point (training on
        these words could not have produced it: the merges were learned from another corpus).
        """
        pairs = []
        for step, merge in enumerate(merges, start=len(self.merges) + 1):
            try:
                a, b = map(operator.index, merge)
            except (TypeError, ValueError):
                raise MergeError(f"merge {step}: {merge!r} is not a pair of symbol ids") from None
            pairs.append((a, b))
        replay = self._core.replay
        for a, b in pairs:  # one by one, so that a failure keeps the merges before it
            self._record(a, b, replay([(a, b)])[0])

    def apply(self, merges: Sequence[Pair]) -> int:
        """Apply merges learned from other words, in order, wherever their pair occurs: the words
        then read as encoding them with those merges cuts them, and :meth:`train` goes on from
        there. A merge whose pair does not occur at its turn is left out; the ones applied are
        recorded in ``merges``. Returns how many were applied. Raises :class:`MergeError` for an
        id that is not a symbol's."""
        pairs = []
        for step, merge in enumerate(merges, start=1):
            try:
                a, b = map(operator.index, merge)
            except (TypeError, ValueError):
                raise MergeError(f"merge {step}: {merge!r} is not a pair of symbol ids") from None
            pairs.append((a, b))
        made = self._core.apply(pairs)
        for (a, b), c in zip(pairs, made):
            if c is not None:
                self._record(a, b, c)
        return sum(c is not None for c in made)

    def pair_counts(self) -> dict[Pair, int]:
        """The current frequency of every adjacent pair present (a copy; for inspection and tests)."""
        return self._core.pair_counts()

    def words_and_counts(self) -> tuple[list[list[int]], list[int]]:
        """The current (merged) word types, index-aligned with the input, and their counts (copies)."""
        return self._core.words_and_counts()

    def symbol_frequencies(self) -> list[int]:
        """Corpus frequency of every symbol id: sum over words of count * occurrences (UNK skipped)."""
        return self._core.symbol_frequencies()

    def heap_bytes(self) -> int:
        """Bytes the core engine holds (an estimate)."""
        return self._core.heap_bytes()
