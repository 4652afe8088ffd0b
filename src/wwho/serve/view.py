"""What the page shows for one text: each tokenizer's tokens laid over the input, and where they disagree.

:func:`token_view` encodes a text with one :class:`wwho.evaluate.Evaluated` tokenizer and returns
its tokens with id, bytes, the input characters each token covers, and whether the boundary after it
falls inside an Indic syllable or an extended grapheme cluster (``regex`` ``\\X``), measured exactly
as ``wwho eval`` measures it (:func:`wwho.evaluate.inside_offsets`). :func:`compare` finds the spans
of the text where the tokenizers' boundaries differ.

**Characters and byte-level tokens.** A token's bytes need not be whole UTF-8 (o200k_base and Llama 3
split one Sinhala letter into two tokens). Each input character is given to the token holding its
first byte, so the tokens' ``text`` fields, joined, are the input exactly; a token that starts with
the continuation bytes of a character given to an earlier token says so in ``lead`` (the page draws
a replacement glyph there), and ``partial`` marks every token whose bytes are not whole characters.

**Alignment.** The tokens can be laid over the input only when their bytes, joined, are the input's
UTF-8 bytes. Token bytes come from the tokenizer (wwho kinds, tiktoken) or are cut from the input
at its offsets (HF ``tokenizers``: a lowercasing tokenizer is drawn over the original text;
SentencePiece: only when it decodes the text back exactly). A tokenizer whose tokens do not rebuild
the input (an ``[UNK]`` token, a normalized piece) is shown unaligned: its pieces, no boundary
marks, and it takes no part in the comparison.

This module knows nothing of HTTP or HTML; :mod:`wwho.serve.app` serves what it returns.
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from wwho.evaluate import Evaluated, inside_offsets


@dataclass(slots=True)
class Token:
    id: int
    #: the input characters this token covers (empty for a token of continuation bytes only)
    text: str
    #: the token's bytes, hex
    bytes: str
    #: the bytes are not whole UTF-8 characters
    partial: bool = False
    #: leading continuation bytes of a character that an earlier token holds
    lead: int = 0
    #: code point offsets of ``text`` in the input (None when the tokenizer is not aligned)
    start: int | None = None
    end: int | None = None
    #: the boundary after this token falls inside a syllable / inside a grapheme cluster
    cut_syllable: bool = False
    cut_cluster: bool = False


@dataclass
class TokenizerView:
    tokenizer: str
    vocab_size: int
    tokens: list[Token] = field(default_factory=list)
    aligned: bool = True
    #: code points per token
    chars_per_token: float = 0.0
    #: boundaries between tokens (count - 1), and those inside a syllable / grapheme cluster
    boundaries: int = 0
    cuts_in_syllable: int = 0
    cuts_in_cluster: int = 0
    seconds: float = 0.0
    #: the byte offsets of the boundaries (for :func:`compare`; not sent)
    ends: list[int] = field(default_factory=list, repr=False)

    def to_json(self) -> dict:
        """The API's form: the tokens as columns (one list per field; flags are 0/1), which keeps
        10,000 characters of byte-level tokens to a few hundred kB."""
        toks = self.tokens
        columns = {
            "id": [t.id for t in toks],
            "text": [t.text for t in toks],
            "bytes": [t.bytes for t in toks],
            "start": [t.start for t in toks] if self.aligned else None,
            "end": [t.end for t in toks] if self.aligned else None,
            "lead": [t.lead for t in toks],
            "partial": [int(t.partial) for t in toks],
            "cut_syllable": [int(t.cut_syllable) for t in toks],
            "cut_cluster": [int(t.cut_cluster) for t in toks],
        }
        return {"tokenizer": self.tokenizer, "vocab_size": self.vocab_size, "aligned": self.aligned,
                "count": len(toks), "chars_per_token": self.chars_per_token, "boundaries": self.boundaries,
                "cuts_in_syllable": self.cuts_in_syllable, "cuts_in_cluster": self.cuts_in_cluster,
                "seconds": self.seconds, "tokens": columns}


@dataclass
class Span:
    """A stretch of the input between two boundaries every aligned tokenizer has."""

    start: int
    end: int
    text: str
    agree: bool


class TextLayout:
    """The byte offset of every character of one text, and the cut structure, computed once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        starts = [0]
        for ch in text:
            starts.append(starts[-1] + len(ch.encode("utf-8", "surrogatepass")))
        self.starts = starts  # starts[k]: byte offset of character k; starts[-1] == len(data)
        self._inside: tuple[frozenset[int], frozenset[int]] | None = None

    @property
    def inside(self) -> tuple[frozenset[int], frozenset[int]]:
        """(offsets inside a grapheme cluster, offsets inside a syllable), computed on first use."""
        if self._inside is None:
            self._inside = inside_offsets(self.text)
        return self._inside

    def first_char_from(self, offset: int) -> int:
        """Index of the first character that starts at or after byte ``offset`` (the character count at
        the end): a span of bytes holds the characters whose first byte it holds, as a token does."""
        return bisect.bisect_left(self.starts, offset)


def token_pieces(tok: Evaluated, ids: Sequence[int], ends: Sequence[int] | None, data: bytes) -> list[bytes] | None:
    """Each token's bytes: from the tokenizer when it defines them, else cut from the input at ``ends``."""
    if tok.token_bytes is not None:
        return [tok.token_bytes(i) for i in ids]
    if ends is None or len(ends) != len(ids):
        return None
    pieces: list[bytes] = []
    k, prev = 0, 0
    while k < len(ends):
        # HF gives every byte-fallback token of one character that character's offsets: a run of
        # equal ends. When the run has one token per byte, each token is one byte; else the first
        # token takes the span.
        j = k
        while j + 1 < len(ends) and ends[j + 1] == ends[k]:
            j += 1
        span = data[prev:ends[k]]
        run = j - k + 1
        if run > 1 and len(span) == run:
            pieces += [span[b:b + 1] for b in range(run)]
        else:
            pieces += [span] + [b""] * (run - 1)
        prev = max(prev, ends[k])
        k = j + 1
    return pieces


def token_view(tok: Evaluated, layout: TextLayout) -> TokenizerView:
    """The tokens of ``tok`` on the text of ``layout`` (see the module docstring)."""
    t0 = time.perf_counter()
    ids, ends = tok.encode(layout.text)
    pieces = token_pieces(tok, ids, ends, layout.data)
    view = TokenizerView(tokenizer=tok.name, vocab_size=tok.vocab_size)
    if pieces is None or b"".join(pieces) != layout.data:
        view.aligned = False
        view.tokens = [Token(id=int(i), text=p.decode("utf-8", "replace") if p is not None else "",
                             bytes=p.hex() if p is not None else "")
                       for i, p in zip(ids, pieces or [None] * len(ids))]
    else:
        _lay_over(view, ids, pieces, layout)
    view.chars_per_token = len(layout.text) / len(view.tokens) if view.tokens else 0.0
    view.seconds = time.perf_counter() - t0
    return view


def _lay_over(view: TokenizerView, ids: Sequence[int], pieces: Sequence[bytes], layout: TextLayout) -> None:
    starts, text = layout.starts, layout.text
    in_cluster, in_syllable = layout.inside if len(pieces) > 1 else (frozenset(), frozenset())
    ends = list(itertools.accumulate(map(len, pieces)))
    # the first character at or after each token's end: token k holds characters [upto[k-1], upto[k])
    upto = [bisect.bisect_left(starts, b) for b in ends]
    a, first = 0, 0
    tokens = view.tokens
    for i, piece, b, c in zip(ids, pieces, ends, upto):
        lead = min(starts[first] - a, b - a)  # starts[-1] is the text's end
        tokens.append(Token(int(i), text[first:c], piece.hex(), lead > 0 or starts[c] != b, lead, first, c,
                            b in in_syllable, b in in_cluster))
        a, first = b, c
    view.ends = ends[:-1]  # the text's end is not a boundary
    if tokens:
        tokens[-1].cut_syllable = tokens[-1].cut_cluster = False
    view.boundaries = len(view.ends)
    view.cuts_in_syllable = sum(t.cut_syllable for t in tokens)
    view.cuts_in_cluster = sum(t.cut_cluster for t in tokens)


def compare(views: Sequence[TokenizerView], layout: TextLayout) -> list[Span]:
    """The text cut at the boundaries all aligned views share; ``agree`` is False where any view has
    another boundary inside the span. Offsets are code points: a span holds the characters whose first
    byte it holds (as tokens do), and agreeing neighbours are one span."""
    aligned = [set(v.ends) for v in views if v.aligned]
    size = len(layout.data)
    if not layout.text:
        return []
    if not aligned:
        return [Span(0, len(layout.text), layout.text, True)]
    common = set.intersection(*aligned)
    everywhere = sorted(set.union(*aligned))
    cuts = sorted(common | {0, size})
    spans: list[Span] = []
    for a, b in itertools.pairwise(cuts):
        # any boundary strictly inside (a, b)?
        k = bisect.bisect_right(everywhere, a)
        agree = not (k < len(everywhere) and everywhere[k] < b)
        s, e = layout.first_char_from(a), layout.first_char_from(b)
        if s < e:
            spans.append(Span(s, e, "", agree))
        elif not agree:  # (a, b) is inside the last character of the span before
            spans[-1].agree = False
    merged: list[Span] = []
    for span in spans:
        if merged and span.agree and merged[-1].agree:
            merged[-1].end = span.end
        else:
            merged.append(span)
    spans = merged
    for span in spans:
        span.text = layout.text[span.start:span.end]
    return spans


def warm_up() -> None:
    """Build every bundled script's syllable tables now rather than on the first request that needs them
    (building one takes about a second)."""
    from wwho.schema import available_scripts, bundled_schema

    inside_offsets(" ".join(chr(bundled_schema(name).blocks[0].first + 0x15) for name in available_scripts()))
