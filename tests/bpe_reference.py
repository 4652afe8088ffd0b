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


def best_pair(words, counts, symbols, tie_break="smaller"):
    """``(pair, freq)`` of the most frequent pair, ties by Python's order of the pair's symbols; or None."""
    stats = count_pairs(words, counts)
    if not stats:
        return None
    top = max(stats.values())
    tied = [p for p, f in stats.items() if f == top]
    pick = min if tie_break == "smaller" else max
    return pick(tied, key=lambda p: (symbols[p[0]], symbols[p[1]])), top


def add_symbol(symbols, pair):
    """Id of the concatenation of ``pair``'s symbols: the existing one, or a new one appended."""
    merged = symbols[pair[0]] + symbols[pair[1]]
    if merged in symbols:
        return symbols.index(merged)
    symbols.append(merged)
    return len(symbols) - 1


def frequencies(words, counts, n_symbols):
    freqs = [0] * n_symbols
    for w, n in zip(words, counts):
        for s in w:
            if s != UNK:
                freqs[s] += n
    return freqs


def train(words, counts, symbols, *, max_symbols, min_freq=2, tie_break="smaller"):
    """Return ``(merges, symbols, words, freqs)`` after training, recounting at every step."""
    words = [list(w) for w in words]
    symbols = list(symbols)
    merges = []
    while len(symbols) < max_symbols:
        best = best_pair(words, counts, symbols, tie_break)
        if best is None or best[1] < min_freq:
            break
        pair = best[0]
        new_id = add_symbol(symbols, pair)
        merges.append(pair)
        words = [merge_word(w, pair, new_id) for w in words]
    return merges, symbols, words, frequencies(words, counts, len(symbols))
