"""Executable reference: the pure-Python byte-level BPE encoder that wwho ran before the core.

:class:`ReferenceByteBPE` encodes exactly as ``wwho.bytelevel.ByteBPE`` must: the reference
pre-tokenizer (:mod:`reference.pretokenize_py`), special tokens with tiktoken's semantics, added
tokens split out first (leftmost-longest), and the two merge rules (ranks: merge the adjacent
pair whose concatenation has the lowest rank; merges: the listed pair with the lowest rank; both
leftmost on ties). No caches, no fast paths: short pieces use a list scan, long ones a heap, and
tests check the two against each other. Not used at run time.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping

import regex

from reference.pretokenize_py import ReferencePretokenizer
from wwho.bytelevel.model import ByteLevelModel

LONG_PIECE = 200
_INF = 1 << 62
_SINGLE = [bytes([b]) for b in range(256)]


class ReferenceError(ValueError):
    pass


class ReferenceDisallowed(ReferenceError):
    def __init__(self, token: str, offset: int) -> None:
        self.token, self.offset = token, offset
        super().__init__(token, offset)


class ReferenceByteBPE:
    def __init__(self, model: ByteLevelModel) -> None:
        self.encoder = dict(model.ranks)
        self.pretokenizer = ReferencePretokenizer.like(model.pattern)
        self.special_tokens = dict(model.special_tokens)
        self.added_tokens = dict(model.added_tokens)
        self.merge_ranks = None
        if model.merges is not None:
            self.merge_ranks = {}
            for rank, (a, b) in enumerate(model.merges):
                self.merge_ranks.setdefault((a, b), rank)
        self.ignore_merges = True if model.merges is None else bool(model.ignore_merges)
        self.text_ids = {**self.added_tokens, **self.special_tokens}
        self.decoder = {i: t for t, i in self.encoder.items()}
        self.decoder.update((i, s.encode()) for s, i in self.text_ids.items())
        self.decoder.update(model.extra_tokens)

    def encode(self, text: str, *, allowed_special=frozenset(), disallowed_special="all") -> list[int]:
        specials = frozenset(self.special_tokens)
        allowed = specials if allowed_special == "all" else frozenset(allowed_special)
        disallowed = specials - allowed if disallowed_special == "all" else frozenset(disallowed_special)
        if disallowed:
            match = _splitter(disallowed).search(text)
            if match:
                raise ReferenceDisallowed(match.group(), match.start())
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        texts = set(allowed) | set(self.added_tokens)
        if not texts:
            return self._encode_chunk(text)
        ids: list[int] = []
        pos = 0
        for match in _splitter(texts).finditer(text):
            ids += self._encode_chunk(text[pos : match.start()])
            ids.append(self.text_ids[match.group()])
            pos = match.end()
        return ids + self._encode_chunk(text[pos:])

    def encode_ordinary(self, text: str) -> list[int]:
        return self.encode(text, disallowed_special=())

    def decode_bytes(self, ids) -> bytes:
        return b"".join(self.decoder[i] for i in ids)

    def _encode_chunk(self, text: str) -> list[int]:
        pretok = self.pretokenizer
        pieces = pretok.split_bytes(text) if pretok.byte_patterns else [p.encode() for p in pretok.split(text)]
        return [i for piece in pieces for i in self.piece_ids(piece)]

    def piece_ids(self, data: bytes) -> tuple[int, ...]:
        """BPE of one piece."""
        token = self.encoder.get(data) if self.ignore_merges else None
        if token is not None:
            return (token,)
        if self.merge_ranks is None:
            parts = merge_by_ranks(data, self.encoder)
        else:
            parts = merge_by_pairs(data, self.merge_ranks)
        missing = [p for p in parts if p not in self.encoder]
        if missing:
            raise ReferenceError(f"byte {missing[0]!r} has no token in this vocabulary")
        return tuple(self.encoder[p] for p in parts)


def _splitter(texts) -> regex.Pattern:
    # Longest first makes the alternation leftmost-longest, as HF's added-token matcher.
    return regex.compile("|".join(map(regex.escape, sorted(texts, key=lambda s: (-len(s), s)))))


def merge_by_ranks(data: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """tiktoken's rule: merge the adjacent pair whose concatenation has the lowest rank."""
    if len(data) > LONG_PIECE:
        return merge_heap(data, lambda a, b: ranks.get(a + b))
    parts = [_SINGLE[b] for b in data]
    get = ranks.get
    pair_ranks = [get(parts[i] + parts[i + 1], _INF) for i in range(len(parts) - 1)]
    while pair_ranks:
        best = min(pair_ranks)
        if best == _INF:
            break
        i = pair_ranks.index(best)  # leftmost of the lowest
        parts[i] += parts[i + 1]
        del parts[i + 1], pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get(parts[i] + parts[i + 1], _INF)
        if i:
            pair_ranks[i - 1] = get(parts[i - 1] + parts[i], _INF)
    return parts


def merge_by_pairs(data: bytes, merges: Mapping[tuple[bytes, bytes], int]) -> list[bytes]:
    """Hugging Face / GGUF rule: merge the listed pair with the lowest rank."""
    if len(data) > LONG_PIECE:
        return merge_heap(data, lambda a, b: merges.get((a, b)))
    parts = [_SINGLE[b] for b in data]
    get = merges.get
    pair_ranks = [get((parts[i], parts[i + 1]), _INF) for i in range(len(parts) - 1)]
    while pair_ranks:
        best = min(pair_ranks)
        if best == _INF:
            break
        i = pair_ranks.index(best)
        parts[i] += parts[i + 1]
        del parts[i + 1], pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get((parts[i], parts[i + 1]), _INF)
        if i:
            pair_ranks[i - 1] = get((parts[i - 1], parts[i]), _INF)
    return parts


def merge_heap(data: bytes, rank_of: Callable[[bytes, bytes], int | None]) -> list[bytes]:
    """The same rule in O(n log n): a heap of candidate pairs over a doubly linked list.

    A heap entry ``(rank, left, len_left, len_right)`` is stale once either part has
    grown (parts only grow, so equal lengths mean equal parts); stale entries are skipped.
    ``left`` is the part's original index, so ties go to the leftmost pair.
    """
    parts: list[bytes | None] = [_SINGLE[b] for b in data]
    n = len(parts)
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    heap = []
    for i in range(n - 1):
        r = rank_of(parts[i], parts[i + 1])
        if r is not None:
            heap.append((r, i, 1, 1))
    heapq.heapify(heap)
    while heap:
        _, i, len_left, len_right = heapq.heappop(heap)
        left = parts[i]
        j = nxt[i]
        if left is None or j < 0 or len(left) != len_left or len(parts[j]) != len_right:
            continue
        merged = left + parts[j]
        parts[i], parts[j] = merged, None
        k = nxt[j]
        nxt[i] = k
        if k >= 0:
            prv[k] = i
            r = rank_of(merged, parts[k])
            if r is not None:
                heapq.heappush(heap, (r, i, len(merged), len(parts[k])))
        p = prv[i]
        if p >= 0:
            r = rank_of(parts[p], merged)
            if r is not None:
                heapq.heappush(heap, (r, p, len(parts[p]), len(merged)))
    return [part for part in parts if part is not None]
