"""The BPE merge engine shared by SGPE (units = syllable ids) and byte-level BPE (units = byte ids).

Input is a corpus already reduced to *word types*: each word a sequence of symbol ids with its
corpus count. The engine learns merges greedily, most frequent adjacent pair first, exactly as a
naive trainer that recounts everything each step would (``tests/bpe_reference.py`` is that trainer,
and the test suite proves the two equal), but each merge only touches the words that contain the
merged pair:

* ``pair_counts``: adjacent pair -> weighted corpus frequency, updated incrementally;
* ``where``: pair -> indices of the words that contain (or once contained) it; an index that went
  stale costs one scan of a short word, which is cheaper than keeping the sets exact;
* a lazy max-heap of ``(-freq, key(left), key(right), left, right)``: entries are pushed only when a
  pair's count *grows*; an entry whose count has since *shrunk* is re-pushed with the true count
  when it reaches the top, and an entry for a vanished pair is dropped. Because the key is a total
  order on ``(frequency, tie-break key)`` alone, the chosen pair never depends on the heap's
  history: replaying merges and rebuilding the heap gives byte-identical results.

Tie-break: among pairs of equal frequency the one whose ``(symbols[left], symbols[right])`` is
lexicographically smallest (``"smaller"``, SGPE's documented rule) or greatest (``"greater"``,
GPT-2's convention) wins. For ``"greater"`` each symbol gets a precomputed order-reversing key
(its code points negated, plus a terminator that sorts a prefix after its extensions), so a heap
push costs the same in both modes and keys stay valid as symbols are added.

Symbol ``UNK`` (-1) marks a pruned rare unit: it stays in its word but never forms a pair.
A merged symbol is ``symbols[left] + symbols[right]``; if that string (or bytes) is already in the
table its id is reused (spec 000's ``SymbolTable.get_or_add``), so two merges may share an id.

The hot loop (:meth:`MergeEngine._merge`) works on flat integer data only (lists of ints, a dict
of int pairs), so it could move to compiled code without touching callers.

This module does not read corpora, count words, prune, choose specials, assign final vocabulary
ids or write files: those belong to the trainers built on it (:mod:`wwho.bpe.count`, SGPE,
byte-level BPE), which also write checkpoints from the ``on_merge`` callback.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Literal

from tqdm.auto import tqdm

from wwho.errors import WwhoError

#: Sentinel symbol id of a pruned unit: kept in its word, never part of a pair, never merged.
UNK = -1

TieBreak = Literal["smaller", "greater"]


class MergeError(WwhoError, ValueError):
    """Invalid input to the merge engine (names the word, symbol or merge that is wrong)."""


def _reversed_key(symbol: str | bytes) -> tuple[int, ...]:
    """A key whose order is the reverse of ``symbol``'s lexicographic order.

    Code points (or byte values) are negated; the terminator ``1`` is larger than any negated
    unit, so a proper prefix sorts *after* its extensions, as a reversed order requires.
    """
    units = symbol if isinstance(symbol, bytes) else map(ord, symbol)
    return (*(-u for u in units), 1)


class MergeEngine:
    """Learn BPE merges over word types given as symbol-id sequences with counts.

    ``words[i]`` is a word type (symbol ids >= 0, or ``UNK``), ``counts[i]`` its corpus frequency
    (> 0), ``symbols[i]`` the text (``str``) or bytes of symbol ``i``; all symbols must have the same
    type, be non-empty and be distinct. Inputs are copied.
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
        self.merges: list[tuple[int, int]] = []
        self._ids: dict = {}
        self._keys: list = []
        self._check_symbols()
        for i, s in enumerate(self.symbols):
            self._ids[s] = i
            self._keys.append(s if tie_break == "smaller" else _reversed_key(s))

        self._words: list[list[int]] = []
        self._counts: list[int] = []
        n_symbols = len(self.symbols)
        for i, (word, count) in enumerate(zip(words, counts)):
            w = list(word)
            if w and (set(map(type, w)) != {int} or min(w) < UNK or max(w) >= n_symbols):
                bad = next(x for x in w if type(x) is not int or not UNK <= x < n_symbols)
                raise MergeError(
                    f"word {i}: symbol id {bad!r} is neither UNK ({UNK}) nor an id in [0, {n_symbols})"
                )
            if type(count) is not int or count <= 0:
                raise MergeError(f"word {i}: count must be a positive int, not {count!r}")
            self._words.append(w)
            self._counts.append(count)
        self._pair_counts: dict[tuple[int, int], int] = {}
        self._where: dict[tuple[int, int], set[int]] = {}
        self._count_pairs()
        self._heap: list = []
        self._rebuild_heap()

    def _check_symbols(self) -> None:
        kinds = set(map(type, self.symbols))
        if not kinds <= {str} and not kinds <= {bytes}:
            raise MergeError(f"symbols must be all str or all bytes, got {sorted(k.__name__ for k in kinds)}")
        seen: dict = {}
        for i, s in enumerate(self.symbols):
            if not s:
                raise MergeError(f"symbol {i} is empty")
            if s in seen:
                raise MergeError(f"symbols {seen[s]} and {i} are both {s!r}: symbols must be distinct")
            seen[s] = i

    # -- state ------------------------------------------------------------------------------------

    def _count_pairs(self) -> None:
        """Count every adjacent pair (skipping UNK) and index the words that contain it."""
        pair_counts = self._pair_counts
        where = self._where
        pair_counts.clear()
        where.clear()
        get = pair_counts.get
        for wi, w in enumerate(self._words):
            if len(w) < 2:
                continue
            n = self._counts[wi]
            for pair in zip(w, w[1:]):
                if pair[0] < 0 or pair[1] < 0:
                    continue
                pair_counts[pair] = get(pair, 0) + n
                ids = where.get(pair)
                if ids is None:
                    where[pair] = {wi}
                else:
                    ids.add(wi)

    def _rebuild_heap(self) -> None:
        keys = self._keys
        self._heap = [(-f, keys[a], keys[b], a, b) for (a, b), f in self._pair_counts.items() if f > 0]
        heapq.heapify(self._heap)

    def _best(self) -> tuple[int, int, int] | None:
        """The most frequent pair (ties by key) as ``(left, right, freq)``, left on top of the heap."""
        heap = self._heap
        pair_counts = self._pair_counts
        keys = self._keys
        while heap:
            neg, _, _, a, b = heap[0]
            actual = pair_counts.get((a, b), 0)
            if actual == -neg:
                return a, b, actual
            if actual <= 0:
                # The pair vanished: forget it everywhere (a stale heap entry costs nothing more).
                heapq.heappop(heap)
                pair_counts.pop((a, b), None)
                self._where.pop((a, b), None)
            elif actual < -neg:
                # Shrunk since pushed: decreases are not pushed eagerly, so fix it now.
                heapq.heapreplace(heap, (-actual, keys[a], keys[b], a, b))
            else:
                # Grew since pushed: every increase was pushed, a current entry is deeper in the heap.
                heapq.heappop(heap)
        return None

    def _new_symbol(self, a: int, b: int) -> int:
        """Id of ``symbols[a] + symbols[b]``: the existing id if present, else a new one appended."""
        s = self.symbols[a] + self.symbols[b]
        c = self._ids.get(s)
        if c is None:
            c = len(self.symbols)
            self.symbols.append(s)
            self._ids[s] = c
            self._keys.append(s if self.tie_break == "smaller" else _reversed_key(s))
        return c

    def _merge(self, a: int, b: int, c: int, *, push: bool = True) -> None:
        """Replace every ``a b`` by ``c`` (left to right) in the words that contain it.

        Updates ``pair_counts`` and ``where`` for the changed neighbourhoods only and, if ``push``,
        gives every pair that gained occurrences a heap entry. The pair ``(a, b)`` itself is dropped.
        """
        pair_counts = self._pair_counts
        where = self._where
        words = self._words
        counts = self._counts
        get = pair_counts.get
        pair_counts.pop((a, b), None)
        word_ids = where.pop((a, b), None)
        if not word_ids:
            return
        # New neighbour pairs (all contain c) -> one word id per occurrence; their counts are summed
        # afterwards in C (sum(map(...))) instead of one dict update per occurrence.
        new: dict[tuple[int, int], list[int]] = {}
        new_get = new.get
        same = a == b
        used = 2 if same else 1  # occurrences of `a` consumed by one merge
        for wi in word_ids:
            w = words[wi]
            k = w.count(a)
            if not k:
                continue  # a stale index entry: the pair left this word earlier
            n = counts[wi]
            end = len(w) - 1
            i = -1
            while k:
                i = w.index(a, i + 1)
                if i == end or w[i + 1] != b:
                    k -= 1
                    continue
                k -= used
                if i:
                    left = w[i - 1]
                    if left >= 0:
                        # (left, a) is never (a, b): an unmerged `a` right before an `a` of an (a, a)
                        # merge would have been merged first. left == c when the previous occurrence
                        # was just merged: (c, a) is then only in `new`, so it may go negative here.
                        if left == c:
                            pair_counts[c, a] = get((c, a), 0) - n
                        else:
                            pair_counts[left, a] -= n
                        pair = (left, c)
                        ids = new_get(pair)
                        if ids is None:
                            new[pair] = [wi]
                        else:
                            ids.append(wi)
                if i < end - 1:
                    right = w[i + 2]
                    if right >= 0:
                        if not (same and right == a):  # else (b, right) is the merged pair, already gone
                            pair_counts[b, right] -= n
                        pair = (c, right)
                        ids = new_get(pair)
                        if ids is None:
                            new[pair] = [wi]
                        else:
                            ids.append(wi)
                w[i] = c
                del w[i + 1]
                end -= 1
        count_of = counts.__getitem__
        heap = self._heap
        keys = self._keys
        for pair, ids in new.items():
            freq = get(pair, 0) + sum(map(count_of, ids))
            if freq <= 0:
                pair_counts.pop(pair, None)  # e.g. (c, a) in "a b a b": created, then consumed
                continue
            pair_counts[pair] = freq
            known = where.get(pair)
            if known is None:
                where[pair] = set(ids)
            else:
                known.update(ids)
            if push:
                x, y = pair
                heapq.heappush(heap, (-freq, keys[x], keys[y], x, y))

    # -- public API -------------------------------------------------------------------------------

    def step(self, *, min_freq: int = 2) -> tuple[int, int, int, int] | None:
        """Merge the best pair and return ``(left, right, new_id, freq)``.

        ``freq`` is the pair's weighted count over all adjacent positions (overlapping ones
        included, as a recount would give). Returns ``None``, changing nothing, when no pair is
        left or the best one has ``freq < min_freq`` (strict: ``freq == min_freq`` merges).
        """
        best = self._best()
        if best is None or best[2] < min_freq:
            return None
        a, b, freq = best
        heapq.heappop(self._heap)
        c = self._new_symbol(a, b)
        self.merges.append((a, b))
        self._merge(a, b, c)
        return a, b, c, freq

    def train(
        self,
        *,
        max_symbols: int,
        min_freq: int = 2,
        progress: bool = True,
        on_merge: Callable[[int], None] | None = None,
    ) -> None:
        """Merge until the table holds ``max_symbols`` symbols or no pair reaches ``min_freq``.

        A merge that reuses an existing symbol does not grow the table, so it does not use budget.
        ``on_merge(step)`` runs after each merge with ``step = len(self.merges)`` (replayed merges
        included), e.g. to write a checkpoint every N steps.
        """
        budget = max_symbols - len(self.symbols)
        with tqdm(total=max(budget, 0), unit="merge", disable=not progress, desc="merges") as bar:
            while len(self.symbols) < max_symbols:
                before = len(self.symbols)
                if self.step(min_freq=min_freq) is None:
                    break
                if len(self.symbols) == before:
                    bar.total += 1  # a reused id: one more merge is needed for the same budget
                bar.update(1)
                if on_merge is not None:
                    on_merge(len(self.merges))

    def replay(self, merges: Sequence[tuple[int, int]]) -> None:
        """Apply known merges in order (resume from a checkpoint).

        Afterwards the state equals the state after training those merges. Raises
        :class:`MergeError` for an id out of range or a pair absent at that point (a merge that
        training on these words could not have produced: the checkpoint is for another corpus).
        """
        for step, (a, b) in enumerate(merges, start=len(self.merges) + 1):
            n = len(self.symbols)
            if not (type(a) is int and type(b) is int and 0 <= a < n and 0 <= b < n):
                raise MergeError(f"merge {step}: ({a!r}, {b!r}) is not a pair of symbol ids in [0, {n})")
            if self._pair_counts.get((a, b), 0) <= 0:
                raise MergeError(
                    f"merge {step}: pair ({self.symbols[a]!r}, {self.symbols[b]!r}) does not occur in "
                    "the words at this point; these merges were not learned from this corpus"
                )
            c = self._new_symbol(a, b)
            self.merges.append((a, b))
            self._merge(a, b, c, push=False)
        # Selection depends only on (frequency, key), so a fresh heap is as good as the old one.
        self._rebuild_heap()

    def words_and_counts(self) -> tuple[list[list[int]], list[int]]:
        """The current (merged) word types, index-aligned with the input, and their counts (copies)."""
        return [list(w) for w in self._words], list(self._counts)

    def symbol_frequencies(self) -> list[int]:
        """Corpus frequency of every symbol id: sum over words of count * occurrences (UNK skipped)."""
        freqs = [0] * len(self.symbols)
        for w, n in zip(self._words, self._counts):
            for s in w:
                if s >= 0:
                    freqs[s] += n
        return freqs
