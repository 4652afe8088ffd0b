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

Training: the spans of the corpus are counted (as sequences of piece ids, the piece counts kept
as they are counted: :func:`piece_counts`' rule), the word-level engine runs as usual, then each
span becomes the sequence of its pieces' tokens as that engine left them and a second engine
learns the superword merges. All of it runs in the compiled core (``rust/src/spans.rs``: span
cutting, the span table, the second engine's input; a span holding a special or byte token's
text is left unmerged); encoding too (``rust/src/sgpe.rs``). This module holds the rule as data
(``SPAN_BREAKS``, ``SPANS``) and its Python statement for the tests and the Hugging Face export.

This module does not read corpora nor assign final ids.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

from wwho.counting import PIECES

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
