"""A naive BPE trainer: the oracle for ``wwho.bpe.engine`` in differential tests.

Written from the rules, not from the engine: each step recounts every adjacent pair of every
word from scratch, picks the most frequent one (ties: Python's own ordering of the pair's
``(symbols[left], symbols[right])``, smallest or greatest), and rewrites every word. Pairs
touching UNK (-1) are never counted. The merged symbol reuses an existing id when its string is
already in the table. Deliberately slow and literal; use it on tiny corpora only.
"""

from __future__ import annotations

UNK = -1


def count_pairs(words, counts):
    """Weighted count of every adjacent pair without UNK, over all positions (overlaps included)."""
    stats = {}
    for w, n in zip(words, counts):
        for a, b in zip(w, w[1:]):
            if a != UNK and b != UNK:
                stats[(a, b)] = stats.get((a, b), 0) + n
    return stats


def merge_word(word, pair, new_id):
    """Replace each ``pair`` in ``word`` by ``new_id``, scanning left to right without overlap."""
    out = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def train(words, counts, symbols, *, max_symbols, min_freq=2, tie_break="smaller"):
    """Return ``(merges, symbols, words, freqs)`` after training, recounting at every step."""
    words = [list(w) for w in words]
    symbols = list(symbols)
    merges = []
    while len(symbols) < max_symbols:
        stats = count_pairs(words, counts)
        if not stats:
            break
        top = max(stats.values())
        tied = [p for p, f in stats.items() if f == top]
        pick = min if tie_break == "smaller" else max
        pair = pick(tied, key=lambda p: (symbols[p[0]], symbols[p[1]]))
        if top < min_freq:
            break
        merged = symbols[pair[0]] + symbols[pair[1]]
        if merged in symbols:
            new_id = symbols.index(merged)
        else:
            new_id = len(symbols)
            symbols.append(merged)
        merges.append(pair)
        words = [merge_word(w, pair, new_id) for w in words]
    freqs = [0] * len(symbols)
    for w, n in zip(words, counts):
        for s in w:
            if s != UNK:
                freqs[s] += n
    return merges, symbols, words, freqs
