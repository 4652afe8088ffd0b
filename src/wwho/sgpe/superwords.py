"""Superword merges: BPE across the spaces of a sentence, after the word-level merges.

SuperBPE's curriculum (Liu et al. 2025) on top of SGPE: the first merges are learned inside
pieces (:mod:`wwho.sgpe.scopes`), then the rest of the budget inside *spans*, runs of
pieces joined by single spaces that stop after sentence punctuation (``SPANS``), so a
token may hold several words (``" ශ්‍රී ලංකාව"``, ``" के लिए"``). Units are still whole
syllables: no merge ever falls inside one.

Encoding a span is "units -> rank merges" twice: each piece as without superwords (the
building and word-level merges, cached per piece), then every merge (all ranks) over the
span's tokens. Word-level merges never join two pieces (their right side never starts
with a space), so this equals running all ranks over the span from code points, which is
what Hugging Face's BPE does with ``SPANS`` as its ``Split`` pre-tokenizer.

Training: the spans of the corpus are counted (:func:`piece_counts` derives the piece
counts from them), the word-level engine runs as usual, then each span becomes the
sequence of its pieces' tokens as that engine left them (:func:`span_words`) and a second
engine learns the superword merges.

This module does not read corpora nor assign final ids.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence

from wwho.bpe import MergeEngine
from wwho.bpe.count import PIECES

#: Sentence punctuation after which a span ends (the space after it starts the next span).
SPAN_BREAKS = ".!?:;\u0964\u0965\u0df4"
#: A span: an optional glued space, a piece, then more pieces after single spaces, none of them
#: after a piece that ends in sentence punctuation; or one whitespace character.
SPANS = (r"(?: (?=[^ \t\n\r]))?[^ \t\n\r]+(?:(?<![" + re.escape(SPAN_BREAKS) + r"]) [^ \t\n\r]+)*"
         r"|[ \t\n\r]")

#: Superword merges need a phrase seen at least twice (a merge of frequency 1 only memorizes a sentence).
SUPERWORD_MIN_FREQ = 2

_pieces = re.compile(PIECES).findall


def spans_pattern_source(*, onig: bool = False) -> str:
    """``SPANS`` for Python's ``re`` or (``onig=True``) for HF ``tokenizers``' Oniguruma: the same text."""
    if not onig:
        return SPANS
    breaks = "".join(f"\\x{{{ord(c):04X}}}" if ord(c) > 0x7F else re.escape(c) for c in SPAN_BREAKS)
    return r"(?: (?=[^ \t\n\r]))?[^ \t\n\r]+(?:(?<![" + breaks + r"]) [^ \t\n\r]+)*|[ \t\n\r]"


def piece_counts(spans: Counter[str]) -> Counter[str]:
    """The piece counts of a corpus, from its span counts."""
    pieces: Counter[str] = Counter()
    once = [span for span, count in spans.items() if count == 1]  # most spans: counted in C
    pieces.update(itertools.chain.from_iterable(map(_pieces, once)))
    for span, count in spans.items():
        if count > 1:
            for piece in _pieces(span):
                pieces[piece] += count
    return pieces


def span_words(spans: Counter[str], piece_tokens: Callable[[str], Sequence[int]], *,
               skip: re.Pattern[str] | None = None) -> tuple[list[list[int]], list[int]]:
    """Each span as the concatenated tokens of its pieces, with its count.

    ``piece_tokens(piece)`` gives a piece's tokens after the word-level merges (symbol ids of the
    word-level engine). The tokens of a span matching ``skip`` (one holding a special or byte
    token's text) become words of one token each: counted, but never merged, so no superword
    merge can produce such a string.
    """
    cache: dict[str, Sequence[int]] = {}
    words: list[list[int]] = []
    counts: list[int] = []
    for span, count in sorted(spans.items()):
        pieces = _pieces(span)
        for piece in pieces:
            if piece not in cache:
                cache[piece] = piece_tokens(piece)
        seq = list(itertools.chain.from_iterable(map(cache.__getitem__, pieces)))
        if skip is not None and skip.search(span):
            words.extend([t] for t in seq)
            counts.extend([count] * len(seq))
        else:
            words.append(seq)
            counts.append(count)
    return words, counts


def superword_engine(engine: MergeEngine, word_list: Sequence[tuple[str, ...]], index: dict[str, int],
                     spans: Counter[str], piece_spans: Callable[[str], list[tuple[bool, list[str]]]], *,
                     max_symbols: int, skip: re.Pattern[str] | None, progress: bool) -> MergeEngine:
    """Learn the superword merges after the word-level ``engine`` has finished.

    ``word_list`` and ``index`` are that engine's input (word types, symbol ids of the base
    symbols); ``piece_spans(piece)`` groups a piece as the word-level training did. Returns the
    second engine: its symbols extend the first one's, its merges are the superword merges.
    """
    words, counts = _stage_one_spans(engine, word_list, index, spans, piece_spans, skip)
    second = MergeEngine(words, counts, engine.symbols, tie_break=engine.tie_break)
    second.train(max_symbols=max(max_symbols, len(second.symbols)), min_freq=SUPERWORD_MIN_FREQ,
                 progress=progress)
    return second


def _stage_one_spans(engine, word_list, index, spans, piece_spans, skip):
    """The spans as sequences of the word-level engine's tokens (its merged words, looked up)."""
    merged, _ = engine.words_and_counts()
    position = {w: i for i, w in enumerate(word_list)}

    def piece_tokens(piece: str) -> list[int]:
        out: list[int] = []
        for mergeable, units in piece_spans(piece):
            if mergeable:
                out.extend(merged[position[tuple(units)]])
            else:
                out.append(index[units[0]])
        return out

    return span_words(spans, piece_tokens, skip=skip)
