"""SGPE encoding in pure Python, as ``SGPETokenizer`` did it before the compiled core.

Pieces by regex, words and syllables by the reference splitter (``reference.words``), units by
vocabulary lookup with character and byte fallback, merges by :mod:`wwho.bpe.apply`.
"""

from __future__ import annotations

from wwho.bpe.apply import merge_ids, merge_units, pair_table
from reference.words import WordSplitter
from wwho.sgpe.vocabfile import BYTE_TOKENS, VocabFile
from wwho.sgpe.words import PIECES


class Encoder:
    def __init__(self, vocab_file: VocabFile, *, fallback: str | None = None) -> None:
        self.vocab = vocab_file.vocab
        self.fallback = fallback or vocab_file.fallback
        self.splitter = WordSplitter(vocab_file.script)
        self._learned_ranks = {pair: i for i, pair in reversed(list(enumerate(vocab_file.merges)))}
        self._pairs = pair_table((*vocab_file.syllable_merges, *vocab_file.merges), self.vocab)
        self._byte_ids = [self.vocab[t] for t in BYTE_TOKENS] if self.fallback == "bytes" else []

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for piece in PIECES.findall(text):
            ids.extend(self.encode_piece(piece))
        return ids

    def encode_piece(self, piece: str) -> list[int]:
        vocab = self.vocab
        ids: list[int] = []
        for _, word in self.splitter.split(piece):
            if self.fallback == "unk":
                units = [s if s in vocab else "[UNK]" for s in word]
                ids.extend(vocab[u] for u in merge_units(units, self._learned_ranks))
                continue
            unit_ids: list[int] = []
            for syllable in word:
                i = vocab.get(syllable)
                if i is not None:
                    unit_ids.append(i)
                    continue
                for ch in syllable:
                    i = vocab.get(ch)
                    if i is not None:
                        unit_ids.append(i)
                    else:
                        unit_ids.extend(self._byte_ids[b] for b in ch.encode("utf-8", "surrogatepass"))
            ids.extend(merge_ids(unit_ids, self._pairs))
        return ids
