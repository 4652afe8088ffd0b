"""The new merges, in rank order, and the new tokens they create.

An extension puts all of its merges *before* the base's. Each one is exclusive: one side holds an
exclusive byte sequence of the scripts, or the pair is one (:mod:`wwho.extend.scripts`), so on text
without a script character none of them can ever fire. :class:`NewMerges` holds them with the new
tokens (ids after every base id, in order of creation) and simulates them on bytes with the core's
merge rule (``_core.GrowingMerges``: the table grows one merge at a time and is cut back on a
rollback).

How a token is built (:meth:`NewMerges.build`): its bytes are run through the merges so far; while
it does not come out whole, a merge joining its first two pieces is appended. The first piece
starts where the token starts, so if the token starts with a buildable character every such merge
is exclusive. A later merge has a higher rank than every earlier one, so it fires only once no
earlier merge applies: tokens built before stay built. The extension builds, in this order:

1. characters (their lead bytes, then the character): every buildable character of the corpus;
2. clusters: a buildable character followed by characters that are not buildable (ZWJ, ZWNJ,
   combining marks of other blocks), joined byte by byte onto it, so that ``්`` + ZWJ is built
   once rather than once per consonant before it;
3. syllables, most frequent first;
4. the learned merges of whole tokens (:mod:`wwho.extend.learn`), added with :meth:`NewMerges.add`.

Every merge a build appends is checked to be exclusive (an :class:`AssertionError` otherwise:
that would be a bug, never a user error). This module reads no corpus and writes no file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from wwho import _core
from wwho.extend.scripts import ScriptSet

Pair = tuple[bytes, bytes]


class NewMerges:
    """New merges in rank order, the new tokens with their ids, and a simulator."""

    def __init__(self, base_vocab: Mapping[bytes, int], first_id: int, scripts: ScriptSet) -> None:
        self._base = base_vocab
        self._scripts = scripts
        self.first_id = first_id
        self.merges: list[Pair] = []
        self.ranks: dict[Pair, int] = {}
        self.tokens: list[bytes] = []  # new tokens, in id order
        self.ids: dict[bytes, int] = {}
        self._table = _core.GrowingMerges()  # the same merges, in the core, for apply()
        self._by_last: dict[str, list[str]] = {}  # the syllables that may be known, by last character
        self._joins: dict[tuple[str, bytes], bool] = {}

    def guard(self, syllables: Iterable[str]) -> None:
        """The syllables that may become known: :meth:`build` keeps a boundary after each of them."""
        for syllable in syllables:
            self._by_last.setdefault(syllable[-1], []).append(syllable)
        self._joins.clear()

    def __len__(self) -> int:
        """How many new tokens (ids) there are."""
        return len(self.tokens)

    def known(self, token: bytes) -> bool:
        return token in self._base or token in self.ids

    def id_of(self, token: bytes) -> int | None:
        i = self._base.get(token)
        return self.ids.get(token) if i is None else i

    def add(self, a: bytes, b: bytes) -> int:
        """Append the merge ``(a, b)`` (unless present); returns 1 if it made a new token, else 0."""
        if (a, b) in self.ranks:
            return 0
        scripts = self._scripts
        if not (scripts.exclusive(a) or scripts.exclusive(b) or scripts.exclusive(a + b)):
            raise AssertionError(f"merge ({a!r}, {b!r}) is not exclusive to {scripts.label}")
        self.ranks[(a, b)] = len(self.merges)
        self.merges.append((a, b))
        self._table.push(a, b)
        token = a + b
        if self.known(token):
            return 0
        self.ids[token] = self.first_id + len(self.tokens)
        self.tokens.append(token)
        return 1

    def apply(self, data: bytes) -> list[bytes]:
        """The pieces the new merges alone make of ``data`` (rank order, leftmost first)."""
        return self._table.apply(data)

    def build(self, token: bytes) -> int | None:
        """Append the merges that build ``token`` whole; returns how many new tokens that made, or
        None (and nothing appended) where one of them would join whole characters that end a guarded
        syllable (:meth:`guard`) to the first bytes of a character that can start a syllable of its
        own after it (:meth:`~wwho.extend.scripts.ScriptSet.joins_syllables`): on such text it would
        fire across the boundary, before the syllable's own merges, and cut it."""
        mark = self.mark()
        cost = 0
        parts = self.apply(token)
        while len(parts) > 1:
            a, b = parts[0], parts[1]
            text = _text(a)
            if text is not None and _text(b) is None and self._joins_syllables(text, b):
                self.rollback(mark)
                return None
            cost += self.add(a, b)
            parts = self.apply(token)
        return cost

    def _joins_syllables(self, text: str, prefix: bytes) -> bool:
        key = (text, prefix)
        joins = self._joins.get(key)
        if joins is None:
            ending = [s for s in self._by_last.get(text[-1], ()) if s.endswith(text)]
            joins = self._joins[key] = self._scripts.joins_syllables(ending, prefix)
        return joins

    def mark(self) -> tuple[int, int]:
        return len(self.merges), len(self.tokens)

    def rollback(self, mark: tuple[int, int]) -> None:
        """Forget every merge and token added since :meth:`mark`."""
        n_merges, n_tokens = mark
        for pair in self.merges[n_merges:]:
            del self.ranks[pair]
        for token in self.tokens[n_tokens:]:
            del self.ids[token]
        self._table.truncate(n_merges)
        del self.merges[n_merges:], self.tokens[n_tokens:]


def _text(data: bytes) -> str | None:
    """``data`` as text, or None where it is not whole UTF-8 characters (it starts or ends inside one)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def clusters(text: str, scripts: ScriptSet) -> list[str]:
    """``text`` cut before every buildable character: each part a buildable character and the
    characters after it that are not (a first part may have no buildable head)."""
    parts: list[str] = []
    for ch in text:
        if parts and not scripts.buildable(ch):
            parts[-1] += ch
        else:
            parts.append(ch)
    return parts
