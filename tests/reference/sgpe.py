"""SGPE encoding in pure Python, as ``SGPETokenizer`` did it before the compiled core.

Pieces by regex, words and syllables by the reference splitter (``reference.words``), grouped
into the merge scope's spans (:func:`wwho.sgpe.scopes.group_spans`), units by vocabulary lookup
with character and byte fallback, merges by :mod:`reference.merge_units` (:mod:`reference.apply` on ids); the dummy space of
``prefix_space``, and superword spans (``wwho.sgpe.superwords.SPANS``, every rank over each
span's units) as the compress branch's pure-Python encoder did them.
"""

from __future__ import annotations

import re

from reference.apply import merge_ids, pair_table
from reference.merge_units import merge_units
from reference.words import WordSplitter
from wwho.sgpe.scopes import group_spans
from wwho.sgpe.superwords import SPANS
from wwho.sgpe.vocabfile import BYTE_TOKENS, VocabFile
from wwho.sgpe.words import PIECES

_SPANS = re.compile(SPANS)


class Encoder:
    def __init__(self, vocab_file: VocabFile, *, fallback: str | None = None) -> None:
        self.vocab = vocab_file.vocab
        # A special token's text is ordinary text here: no unit is looked up as one.
        self._units = {t: i for t, i in self.vocab.items() if t not in set(vocab_file.special_tokens)}
        self.fallback = fallback or vocab_file.fallback
        self.splitter = WordSplitter(vocab_file.script, split_punctuation=vocab_file.split_punctuation)
        self._learned_ranks = {pair: i for i, pair in reversed(list(enumerate(vocab_file.merges)))}
        self._pairs = pair_table((*vocab_file.syllable_merges, *vocab_file.merges), self.vocab)
        self._byte_ids = [self.vocab[t] for t in BYTE_TOKENS] if self.fallback == "bytes" else []
        self.scope = vocab_file.merge_scope
        self.prefix_space = vocab_file.prefix_space
        self._span_pairs = None
        if vocab_file.superword_merges:
            ranked = vocab_file.merges if self.fallback == "unk" else (*vocab_file.syllable_merges,
                                                                       *vocab_file.merges)
            self._span_pairs = pair_table((*ranked, *vocab_file.superword_merges), self.vocab)

    def encode(self, text: str) -> list[int]:
        """Ids of ``text`` (no special tokens)."""
        if self.prefix_space and text:
            text = " " + text
        if self._span_pairs is not None:
            ids: list[int] = []
            for span in _SPANS.findall(text):
                units = [i for piece in PIECES.findall(span) for i in self.encode_piece(piece)]
                ids.extend(merge_ids(units, self._span_pairs) if len(units) > 1 else units)
            return ids
        ids = []
        for piece in PIECES.findall(text):
            ids.extend(self.encode_piece(piece))
        return ids

    def encode_piece(self, piece: str) -> list[int]:
        vocab = self._units
        ids: list[int] = []
        parts = self.splitter.split(piece)
        if self.scope != "words":
            parts = group_spans(parts, self.scope)
        for _, word in parts:
            if self.fallback == "unk":
                units = [s if s in vocab else "[UNK]" for s in word]
                ids.extend(self.vocab[u] for u in merge_units(units, self._learned_ranks))
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
