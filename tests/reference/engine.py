"""The pure-Python merge engine that ``wwho.bpe.engine`` ran before the compiled core (a test reference).

The compiled engine (``rust/src/engine/``) must make exactly the same merges; the tests compare
them, and both with the naive trainer of ``bpe_reference.py``.


Input is a corpus already reduced to *word types*: each word a sequence of symbol ids with its
corpus count. The engine learns merges greedily, most frequent adjacent pair first, exactly as a
naive trainer that recounts everything each step would (``tests/bpe_reference.py`` is that trainer,
and the test suite proves the two equal), but each merge only touches the words that contain the
merged pair:

* ``pairs``: adjacent pair -> ``[frequency, word indices]``, positive frequencies only: counted
  once with numpy, then updated incrementally (a merge of ``a b`` into ``c`` turns ``(left, a)``
  into ``(left, c)`` and ``(b, right)`` into ``(c, right)`` around each occurrence). The word
  indices are those of the words that contain (or once contained) the pair, possibly repeated:
  a stale or repeated index costs one ``list.count`` on a short word, which is cheaper than
  keeping the lists exact. One dict for both saves a lookup per update;
* a lazy priority queue of the pairs with ``freq >= min_freq`` (pairs below can never be chosen,
  so they stay out until they grow), most frequent first, ties by key: one bucket per frequency,
  sorted only when it comes to the front, so the many rare pairs are never ordered at all
  (:class:`_PairQueue`; cheaper than a heap here). A pair is filed when its count grows; an entry
  whose count has since shrunk is filed again when it reaches the front; an entry for a vanished
  pair is dropped. Because the order is total on ``(frequency, tie-break key)``, the chosen pair
  never depends on the queue's history: a rebuilt queue (after :meth:`MergeEngine.replay`)
  picks exactly the same pairs.

Tie-break: among pairs of equal frequency the one whose ``(symbols[left], symbols[right])`` is
lexicographically smallest (``"smaller"``, SGPE's documented rule) or greatest (``"greater"``,
GPT-2's convention) wins. For ``"greater"`` each symbol gets an order-reversing key when it is
added (its code points or bytes negated, then a terminator that sorts a prefix after its
extensions), so keys never change as symbols are added.

Symbol ``UNK`` (-1) marks a pruned rare unit: it stays in its word but never forms a pair.
A merged symbol is ``symbols[left] + symbols[right]``; if that string (or bytes) is already in the
table its id is reused (spec 000's ``SymbolTable.get_or_add``), so two merges may share an id.

The hot loop (:meth:`MergeEngine._merge`) works on flat integer data only (lists of ints, dicts
keyed by ints and int pairs), so it could move to compiled code without touching callers. Bulk
work runs with the cyclic garbage collector paused (the engine makes no reference cycles).

This module does not read corpora, count words, prune, choose specials, assign final vocabulary
ids or write files: those belong to the trainers built on it (:mod:`wwho.counting`, SGPE,
byte-level BPE), which also write checkpoints from the ``on_merge`` callback.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import heapq
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from tqdm.auto import tqdm

from wwho.errors import MergeError

#: Sentinel symbol id of a pruned unit: kept in its word, never part of a pair, never merged.
UNK = -1

TieBreak = Literal["smaller", "greater"]

Pair = tuple[int, int]

_NO_HEAP = float("inf")  # the push threshold while no queue is kept (during replay)




def reversed_key(symbol: str | bytes) -> tuple[int, ...]:
    """A key whose order is the reverse of ``symbol``'s lexicographic order.

    Code points (or byte values) are negated; the terminator ``1`` is larger than any negated
    unit, so a proper prefix sorts *after* its extensions, as a reversed order requires.
    """
    units = symbol if isinstance(symbol, bytes) else map(ord, symbol)
    return (*(-u for u in units), 1)


def _as_ints(values: Sequence, what: str) -> list[int]:
    """``values`` as a list of plain ints (numpy integers accepted), or a MergeError naming ``what``."""
    out = list(values)
    if not set(map(type, out)) <= {int}:
        try:
            out = [operator.index(x) for x in out]
        except TypeError:
            bad = next(x for x in out if not hasattr(x, "__index__"))
            raise MergeError(f"{what}: {bad!r} is not an integer") from None
    return out


@contextlib.contextmanager
def _no_gc():
    """Pause the cyclic garbage collector around bulk work.

    The engine makes no reference cycles, but it makes a million small lists and tuples, and the
    collections they trigger cost a tenth of a run. On the way out the new objects are handed to
    the oldest generation unscanned (``gc.freeze()`` + ``gc.unfreeze()``, two list splices), so
    the first collection after re-enabling does not walk them all at once either. Skipped if the
    caller has frozen objects of its own, which ``unfreeze`` would release.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


class _PairQueue:
    """Pair entries ``(key(left), key(right), left, right)`` by frequency, highest first, then by key.

    One bucket per frequency: a push appends to its bucket, and a bucket is sorted (in C) only
    when it becomes the front one, so the long tail of rare pairs is never ordered at all. Entries
    are lazy, as in a heap: the engine checks the front one against the true count. The front
    bucket is ``_front[_pos:]``; it holds the highest frequency of all (``_front_freq``, 0 when
    there is no front), which a push of a higher frequency (possible only through a reused id)
    restores by putting the front back among the buckets.
    """

    def __init__(self, buckets: dict[int, list]) -> None:
        self._buckets = buckets
        self._freqs = [-f for f in buckets]  # a heap of the buckets' frequencies, negated
        heapq.heapify(self._freqs)
        self._front: list = []
        self._front_freq = 0
        self._pos = 0

    def push(self, freq: int, entry: tuple) -> None:
        if freq == self._front_freq:
            bisect.insort(self._front, entry, lo=self._pos)
            return
        if freq > self._front_freq and self._front_freq:
            self._buckets[self._front_freq] = self._front[self._pos :]
            heapq.heappush(self._freqs, -self._front_freq)
            self._front, self._front_freq, self._pos = [], 0, 0
        bucket = self._buckets.get(freq)
        if bucket is None:
            self._buckets[freq] = [entry]
            heapq.heappush(self._freqs, -freq)
        else:
            bucket.append(entry)

    def peek(self) -> tuple[int, tuple] | None:
        """``(freq, entry)`` of the front entry, or None when empty."""
        if not self._front_freq:
            if not self._freqs:
                return None
            freq = -heapq.heappop(self._freqs)
            front = self._buckets.pop(freq)
            front.sort()
            self._front, self._front_freq, self._pos = front, freq, 0
        return self._front_freq, self._front[self._pos]

    def pop(self) -> None:
        """Drop the front entry."""
        self._pos += 1
        if self._pos == len(self._front):
            self._front, self._front_freq, self._pos = [], 0, 0


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
        self._ids: dict = {}
        self._keys: list = []
        kinds = set(map(type, self.symbols))
        if not (kinds <= {str} or kinds <= {bytes}):
            raise MergeError(f"symbols must be all str or all bytes, not {sorted(k.__name__ for k in kinds)}")
        for i, s in enumerate(self.symbols):
            if not s:
                raise MergeError(f"symbol {i} is empty")
            if s in self._ids:
                raise MergeError(f"symbols {self._ids[s]} and {i} are both {s!r}: symbols must be distinct")
            self._ids[s] = i
            self._keys.append(s if tie_break == "smaller" else reversed_key(s))

        with _no_gc():  # a million small objects are made here
            self._words: list[list[int]] = [list(w) for w in words]
            if not set(map(type, itertools.chain.from_iterable(self._words))) <= {int}:
                self._words = [_as_ints(w, f"word {i}") for i, w in enumerate(self._words)]
            self._counts: list[int] = _as_ints(counts, "counts")
            if self._counts and min(self._counts) <= 0:
                i = next(i for i, n in enumerate(self._counts) if n <= 0)
                raise MergeError(f"word {i}: count must be positive, not {self._counts[i]}")
            self._pairs: dict[Pair, list] = {}  # pair -> [frequency, word indices]
            self._count_pairs()
        self._queue = _PairQueue({})
        self._floor: int | None = None  # the queue holds every pair with freq >= floor; None: no queue

    # -- state ------------------------------------------------------------------------------------

    def _count_pairs(self) -> None:
        """Count every adjacent pair (UNK excluded) and index the words containing it, in numpy."""
        words, counts, n_symbols = self._words, self._counts, len(self.symbols)
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        total = int(lengths.sum())
        if total == 0:
            return
        try:
            flat = np.fromiter(itertools.chain.from_iterable(words), dtype=np.int64, count=total)
        except OverflowError:
            flat = np.array([n_symbols])  # an id beyond int64: found and reported just below
        if flat.min() < UNK or flat.max() >= n_symbols:
            i, bad = next((i, x) for i, w in enumerate(words) for x in w if not UNK <= x < n_symbols)
            raise MergeError(
                f"word {i}: symbol id {bad} is neither UNK ({UNK}) nor an id in [0, {n_symbols})"
            )
        if sum(counts) * int(lengths.max()) >= 2**62:
            raise MergeError("counts too large: pair frequencies must fit in 62 bits")
        word_of = np.repeat(np.arange(len(words), dtype=np.int64), lengths)
        left, right = flat[:-1], flat[1:]
        keep = (word_of[:-1] == word_of[1:]) & (left >= 0) & (right >= 0)
        code = left[keep] * n_symbols + right[keep]
        order = np.argsort(code, kind="stable")
        code = code[order]
        word_ids = word_of[:-1][keep][order]
        if code.size == 0:
            return
        starts = np.flatnonzero(np.concatenate(([True], code[1:] != code[:-1])))
        freqs = np.add.reduceat(np.asarray(counts, dtype=np.int64)[word_ids], starts)
        pairs = list(zip((code[starts] // n_symbols).tolist(), (code[starts] % n_symbols).tolist()))
        ids = word_ids.tolist()
        bounds = starts.tolist() + [len(ids)]
        freqs = freqs.tolist()
        self._pairs = {pair: [freqs[j], ids[bounds[j] : bounds[j + 1]]] for j, pair in enumerate(pairs)}

    def _prepare_queue(self, min_freq: int) -> None:
        """Make the queue hold (lazily) every pair with ``freq >= min_freq``; rebuild if it holds fewer."""
        floor = max(min_freq, 1)  # every pair present has freq >= 1
        if self._floor is None or floor < self._floor:
            keys = self._keys
            buckets: dict[int, list] = {}
            for (a, b), (f, _) in self._pairs.items():
                if f >= floor:
                    entry = (keys[a], keys[b], a, b)
                    bucket = buckets.get(f)
                    if bucket is None:
                        buckets[f] = [entry]
                    else:
                        bucket.append(entry)
            self._queue = _PairQueue(buckets)
        # Raising the floor keeps the queue valid: it simply holds more than needed.
        self._floor = floor

    def _best(self) -> tuple[int, int, int] | None:
        """The front valid queue entry as ``(left, right, freq)``, left at the front of the queue.

        If any pair has ``freq >= floor`` this is the most frequent pair (ties by key): every such
        pair has an entry whose stored frequency is at least its own. Otherwise it may be a pair
        below the floor (pushed before the floor was raised), or None.
        """
        queue, pairs, floor = self._queue, self._pairs, self._floor
        while True:
            front = queue.peek()
            if front is None:
                return None
            stored, entry = front
            a, b = entry[2], entry[3]
            pair = pairs.get((a, b))
            actual = pair[0] if pair else 0
            if actual == stored:
                return a, b, actual
            queue.pop()
            if floor <= actual < stored:
                # Shrunk since pushed (decreases are not pushed eagerly): file it again.
                queue.push(actual, entry)
            # Else it vanished, fell below the floor, or grew (every increase was pushed, so a
            # current entry is further back): drop this one.

    def _new_symbol(self, a: int, b: int) -> int:
        """Id of ``symbols[a] + symbols[b]``: the existing id if present, else a new one appended."""
        s = self.symbols[a] + self.symbols[b]
        c = self._ids.get(s)
        if c is None:
            c = len(self.symbols)
            self.symbols.append(s)
            self._ids[s] = c
            self._keys.append(s if self.tie_break == "smaller" else reversed_key(s))
        return c

    def _merge(self, a: int, b: int, c: int) -> None:
        """Replace every ``a b`` by ``c`` (left to right, in place) in the words that contain it.

        Updates ``pairs`` for the changed neighbourhoods only, and pushes the pairs that grew to at
        least the floor. The pair ``(a, b)`` itself is dropped.
        """
        pairs, words, counts = self._pairs, self._words, self._counts
        entry = pairs.pop((a, b), None)
        if entry is None:
            return
        # Word ids by neighbour symbol, one per occurrence: int keys, no tuple per occurrence; each
        # distinct neighbour is settled once at the end, its counts summed in C.
        lefts: dict[int, list[int]] = {}
        rights: dict[int, list[int]] = {}
        lefts_get, rights_get = lefts.get, rights.get
        same = a == b
        used = 2 if same else 1  # occurrences of `a` consumed by one merge
        for wi in entry[1]:
            w = words[wi]
            k = w.count(a)
            if not k:
                continue  # a stale or repeated index entry: the pair is not (or no longer) here
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
                        ids = lefts_get(left)
                        if ids is None:
                            lefts[left] = [wi]
                        else:
                            ids.append(wi)
                if i < end - 1:
                    right = w[i + 2]
                    if right >= 0:
                        ids = rights_get(right)
                        if ids is None:
                            rights[right] = [wi]
                        else:
                            ids.append(wi)
                w[i] = c
                del w[i + 1]
                end -= 1

        # Settle each distinct neighbour: take the old pair down, bring the new pair up, push it.
        # Rights before lefts: in "a b a b" the first occurrence makes (c, a) (right neighbour `a`)
        # and the second takes it down again (left neighbour `c`, the first one's merge).
        count_of = counts.__getitem__
        get = pairs.get
        keys = self._keys
        floor = _NO_HEAP if self._floor is None else self._floor
        push = self._queue.push
        for right, ids in rights.items():
            n = sum(map(count_of, ids))
            if not (same and right == a):  # else (b, right) is the merged pair itself, gone already
                old = (b, right)
                entry = pairs[old]
                entry[0] -= n
                if not entry[0]:
                    del pairs[old]
            pair = (c, right)
            entry = get(pair)
            if entry is None:
                pairs[pair] = entry = [n, ids]
            else:
                entry[0] += n
                entry[1] += ids
            if entry[0] >= floor:
                push(entry[0], (keys[c], keys[right], c, right))
        for left, ids in lefts.items():
            # (left, a) is never (a, b): an unmerged `a` right before an (a, a) occurrence would
            # have been merged with it instead.
            n = sum(map(count_of, ids))
            old = (left, a)
            entry = pairs[old]
            entry[0] -= n
            if not entry[0]:
                del pairs[old]
            pair = (left, c)
            entry = get(pair)
            if entry is None:
                pairs[pair] = entry = [n, ids]
            else:
                entry[0] += n
                entry[1] += ids
            if entry[0] >= floor:
                push(entry[0], (keys[left], keys[c], left, c))

    # -- public API -------------------------------------------------------------------------------

    def steps(self, n: int, *, min_freq: int = 2, record: bool = True) -> list[tuple[int, int, int, int]]:
        """Up to ``n`` merges, each as :meth:`step` makes it (fewer once none is left). This engine
        always records its merges; ``record`` is taken for the compiled engine's signature."""
        done = []
        while len(done) < n and (got := self.step(min_freq=min_freq)) is not None:
            done.append(got)
        return done

    def step(self, *, min_freq: int = 2) -> tuple[int, int, int, int] | None:
        """Merge the best pair and return ``(left, right, new_id, freq)``.

        ``freq`` is the pair's weighted count over all adjacent positions (overlapping ones
        included, as a recount gives). Returns ``None``, changing nothing, when no pair is left or
        the best one has ``freq < min_freq`` (strict: a pair with ``freq == min_freq`` merges).
        """
        if type(min_freq) is not int:
            raise MergeError(f"min_freq must be an int, not {min_freq!r}")
        self._prepare_queue(min_freq)
        best = self._best()
        if best is None or best[2] < min_freq:  # an entry pushed under a lower floor may be below it
            return None
        a, b, freq = best
        self._queue.pop()
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
        if type(max_symbols) is not int:
            raise MergeError(f"max_symbols must be an int, not {max_symbols!r}")
        symbols = self.symbols
        step = self.step
        with _no_gc(), tqdm(
            total=max(max_symbols - len(symbols), 0), unit="merge", desc="merges", disable=not progress
        ) as bar:
            while len(symbols) < max_symbols:
                before = len(symbols)
                if step(min_freq=min_freq) is None:
                    break
                if len(symbols) == before:
                    bar.total += 1  # a reused id: one more merge for the same budget
                bar.update(1)
                if on_merge is not None:
                    on_merge(len(self.merges))

    def replay(self, merges: Sequence[Pair]) -> None:
        """Apply known merges in order (resume from a checkpoint).

        Afterwards the state equals the state after training those merges. Raises
        :class:`MergeError` for an id out of range or a pair absent at that point (training on
        these words could not have produced it: the merges were learned from another corpus).
        """
        self._floor = None  # no queue upkeep while replaying; rebuilt by the next step()
        self._queue = _PairQueue({})
        with _no_gc():
            for step, merge in enumerate(merges, start=len(self.merges) + 1):
                n = len(self.symbols)
                try:
                    a, b = map(operator.index, merge)
                except (TypeError, ValueError):
                    raise MergeError(f"merge {step}: {merge!r} is not a pair of symbol ids") from None
                if not (0 <= a < n and 0 <= b < n):
                    raise MergeError(f"merge {step}: ({a}, {b}) is not a pair of symbol ids in [0, {n})")
                if (a, b) not in self._pairs:
                    raise MergeError(
                        f"merge {step}: pair ({self.symbols[a]!r}, {self.symbols[b]!r}) does not occur "
                        "in the words at this point: these merges were not learned from these words"
                    )
                c = self._new_symbol(a, b)
                self.merges.append((a, b))
                self._merge(a, b, c)

    def apply(self, merges: Sequence[Pair]) -> int:
        """Apply merges learned from other words, in order, where their pair occurs (the rest are
        left out); the applied ones are recorded. Returns how many were applied."""
        self._floor = None
        self._queue = _PairQueue({})
        applied = 0
        with _no_gc():
            for step, merge in enumerate(merges, start=1):
                a, b = map(operator.index, merge)
                if not (0 <= a < len(self.symbols) and 0 <= b < len(self.symbols)):
                    raise MergeError(f"merge {step}: ({a}, {b}) is not a pair of symbol ids")
                if (a, b) not in self._pairs:
                    continue
                c = self._new_symbol(a, b)
                self.merges.append((a, b))
                self._merge(a, b, c)
                applied += 1
        return applied

    def pair_counts(self) -> dict[Pair, int]:
        """The current frequency of every adjacent pair present (a copy; for inspection and tests)."""
        return {pair: entry[0] for pair, entry in self._pairs.items()}

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
