"""What the page shows for one text: each tokenizer's tokens laid over the input, and where they disagree.

:func:`token_view` encodes a text with one :class:`wwho.eval_specs.Evaluated` tokenizer and returns
its tokens with id, bytes, the input characters each token covers, and whether the boundary after it
falls inside an Indic syllable or an extended grapheme cluster (``regex`` ``\\X``), measured exactly
as ``wwho eval`` measures it (:func:`wwho.cut_structure.inside_offsets`). :func:`compare` finds the spans
of the text where the tokenizers' boundaries differ.

**Characters and byte-level tokens.** A token's bytes need not be whole UTF-8 (o200k_base and Llama 3
split one Sinhala letter into two tokens). Each input character is given to the token holding its
first byte, so the tokens' ``text`` fields, joined, are the input exactly; a token that starts with
the continuation bytes of a character given to an earlier token says so in ``lead`` (the page draws
a replacement glyph there), and ``partial`` marks every token whose bytes are not whole characters.

**Alignment.** The tokens can be laid over the input only when their bytes, joined, are the input's
UTF-8 bytes. Token bytes come from the tokenizer (wwho kinds, tiktoken) or are cut from the input
at its offsets (HF ``tokenizers``: a lowercasing tokenizer is drawn over the original text;
SentencePiece: only when it decodes the text back exactly). A dummy space a tokenizer puts before
the text (``prefix``) is not laid over it. A tokenizer whose tokens do not rebuild the input (an
``[UNK]`` token, a normalized piece) is shown unaligned: its pieces, no boundary
marks, and it takes no part in the comparison.

**Bounded output.** ``token_view(..., limit=N)`` encodes the whole text and counts every token and cut,
but lays only the first N tokens over the text (``truncated`` says so); :func:`compare` then covers
only the part of the text that every aligned view shows, and :func:`fair_shares` splits one budget of
tokens between several tokenizers. Each token's bytes are asked of the tokenizer once per distinct id.
The work is linear in the text's length and the tokens shown.

This module knows nothing of HTTP or HTML; :mod:`wwho.serve.app` serves what it returns.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import time
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from wwho.cut_structure import inside_offsets
from wwho.eval_specs import Evaluated


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
    """One tokenizer's tokens on one text, held as columns (one list per :class:`Token` field).

    The columns hold the first ``len(ids)`` tokens (all of them unless ``truncated``); ``count`` and the
    cut statistics are over every token of the text."""

    tokenizer: str
    vocab_size: int
    ids: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    hex: list[str] = field(default_factory=list)
    partial: list[int] = field(default_factory=list)
    lead: list[int] = field(default_factory=list)
    #: code point offsets of each token's text (None when the tokenizer is not aligned)
    starts: list[int] | None = None
    stops: list[int] | None = None
    cut_syllable: list[int] = field(default_factory=list)
    cut_cluster: list[int] = field(default_factory=list)
    aligned: bool = True
    #: what the tokenizer put before the text (a dummy space), not laid over it; ``hex`` keeps it
    prefix: str = ""
    #: every token of the text, shown or not
    count: int = 0
    #: the columns stop before the last token (see ``limit`` in :func:`token_view`)
    truncated: bool = False
    #: code points per token
    chars_per_token: float = 0.0
    #: boundaries between tokens (count - 1), and those inside a syllable / grapheme cluster
    boundaries: int = 0
    cuts_in_syllable: int = 0
    cuts_in_cluster: int = 0
    seconds: float = 0.0
    #: the byte offsets of every boundary, shown or not (for :func:`compare`; not sent)
    ends: list[int] = field(default_factory=list, repr=False)
    #: the byte offset where the shown tokens end (the text's length unless truncated)
    covered: int = 0

    @property
    def tokens(self) -> list[Token]:
        """The shown tokens as records (the columns, transposed)."""
        starts = self.starts or [None] * len(self.ids)
        stops = self.stops or [None] * len(self.ids)
        return [Token(*row[:3], bool(row[3]), row[4], row[5], row[6], bool(row[7]), bool(row[8]))
                for row in zip(self.ids, self.texts, self.hex, self.partial, self.lead, starts, stops,
                               self.cut_syllable, self.cut_cluster)]

    def to_json(self) -> dict:
        """The API's form: the tokens as columns (one list per field; flags are 0/1), which keeps
        10,000 characters of byte-level tokens to about a megabyte."""
        columns = {"id": self.ids, "text": self.texts, "bytes": self.hex, "start": self.starts, "end": self.stops,
                   "lead": self.lead, "partial": self.partial, "cut_syllable": self.cut_syllable,
                   "cut_cluster": self.cut_cluster}
        return {"tokenizer": self.tokenizer, "vocab_size": self.vocab_size, "aligned": self.aligned,
                "prefix": self.prefix, "count": self.count, "shown": len(self.ids), "truncated": self.truncated,
                "chars_per_token": self.chars_per_token, "boundaries": self.boundaries,
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
        self._inside: tuple[AbstractSet[int], AbstractSet[int]] | None = None

    @property
    def inside(self) -> tuple[AbstractSet[int], AbstractSet[int]]:
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
        # a text repeats its tokens: ask the tokenizer (a Python call each) once per distinct id
        return list(map(functools.cache(tok.token_bytes), ids))
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


@dataclass
class Encoded:
    """One tokenizer's tokens on one text before they are laid over it: :func:`encode` then :func:`lay_out`
    (what :func:`token_view` does) lets a caller share a budget of tokens shown by the counts."""

    tok: Evaluated
    ids: list[int]
    #: each token's bytes (None when neither the tokenizer nor its offsets give them)
    pieces: list[bytes] | None
    seconds: float

    @property
    def count(self) -> int:
        return len(self.ids)


def encode(tok: Evaluated, layout: TextLayout) -> Encoded:
    """The ids of ``tok`` on the text of ``layout`` and each token's bytes."""
    t0 = time.perf_counter()
    ids, ends = tok.encode(layout.text)
    ids = [int(i) for i in ids]
    # An [UNK] holds none of the text it stands for: bytes cut from the input at its offsets would
    # show it as if it did.
    known = tok.unknown is None or not any(map(tok.unknown, set(ids)))
    pieces = token_pieces(tok, ids, ends, layout.data) if known else None
    return Encoded(tok, ids, pieces, time.perf_counter() - t0)


def lay_out(enc: Encoded, layout: TextLayout, limit: int | None = None) -> TokenizerView:
    """The view of ``enc``: every token counted, the first ``limit`` (default all) laid over the text."""
    t0 = time.perf_counter()
    ids, count = enc.ids, enc.count
    shown = count if limit is None else max(0, min(count, limit))
    view = TokenizerView(tokenizer=enc.tok.name, vocab_size=enc.tok.vocab_size, ids=ids[:shown], count=count,
                         truncated=shown < count)
    pieces = real = enc.pieces
    if pieces is not None and layout.data:
        pieces, view.prefix = _without_dummy_prefix(pieces, layout.data)
    if pieces is None and enc.tok.piece is not None:
        # Bytes unknown (a normalized text, an [UNK]): the tokenizer's own pieces, no bytes.
        view.aligned = False
        view.texts = [enc.tok.piece(i) for i in ids[:shown]]
        view.hex = [""] * shown
        view.partial = view.lead = view.cut_syllable = view.cut_cluster = [0] * shown
    elif pieces is None or b"".join(pieces) != layout.data:
        view.aligned = False
        pieces = (pieces or [b""] * count)[:shown]
        view.texts = [p.decode("utf-8", "replace") for p in pieces]
        view.hex = [p.hex() for p in pieces]
        view.partial = view.lead = view.cut_syllable = view.cut_cluster = [0] * shown
    else:
        _lay_over(view, pieces, layout, shown)
        if view.prefix:
            view.hex = [p.hex() for p in real[:shown]]  # the tokens' own bytes, dummy space included
    view.chars_per_token = len(layout.text) / count if count else 0.0
    view.seconds = enc.seconds + time.perf_counter() - t0
    return view


def token_view(tok: Evaluated, layout: TextLayout, limit: int | None = None) -> TokenizerView:
    """The tokens of ``tok`` on the text of ``layout``, the first ``limit`` shown (see the module docstring)."""
    return lay_out(encode(tok, layout), layout, limit)


def fair_shares(counts: Sequence[int], budget: int) -> list[int]:
    """How many tokens each of several tokenizers may show out of ``budget`` in all: equal shares, and
    what one tokenizer does not need goes to the others (so a budget above the total shows every token)."""
    shares = [0] * len(counts)
    left = budget
    for k, i in enumerate(sorted(range(len(counts)), key=counts.__getitem__)):
        shares[i] = min(counts[i], left // (len(counts) - k))
        left -= shares[i]
    return shares


def _without_dummy_prefix(pieces: list[bytes], data: bytes) -> tuple[list[bytes], str]:
    """Tokenizers that put a space before the text (SentencePiece-style ``prefix_space``) give bytes
    that are one space longer than the input: lay them over the input without it."""
    joined = b"".join(pieces)
    extra = len(joined) - len(data)
    if extra <= 0 or joined[extra:] != data or joined[:extra].strip(b" "):
        return pieces, ""
    out, left = [], extra
    for k, p in enumerate(pieces):
        if not left:
            out += pieces[k:]
            break
        cut = min(left, len(p))
        out.append(p[cut:])
        left -= cut
    return out, joined[:extra].decode()


def _lay_over(view: TokenizerView, pieces: Sequence[bytes], layout: TextLayout, shown: int) -> None:
    starts, text = layout.starts, layout.text
    ends = list(itertools.accumulate(map(len, pieces)))
    view.ends = ends[:-1]  # the text's end is not a boundary
    in_cluster, in_syllable = layout.inside if view.ends else (frozenset(), frozenset())
    view.boundaries = len(view.ends)
    view.cuts_in_syllable = sum(map(in_syllable.__contains__, view.ends))
    view.cuts_in_cluster = sum(map(in_cluster.__contains__, view.ends))
    # the columns, for the first `shown` tokens only
    ends = ends[:shown]
    view.covered = ends[-1] if ends else 0
    # the first character at or after each token's end: token k holds characters [stops[k-1], stops[k])
    stops = [bisect.bisect_left(starts, b) for b in ends]
    firsts = [0, *stops[:-1]][:len(stops)]  # (no token shown: no column entry)
    view.starts, view.stops = firsts, stops
    view.texts = [text[a:b] for a, b in zip(firsts, stops)]
    view.hex = [p.hex() for p in pieces[:shown]]
    # a token's leading bytes before the first character it holds are another character's
    byte_starts = [0, *ends[:-1]]
    view.lead = [min(starts[c] - a, b - a) for a, b, c in zip(byte_starts, ends, firsts)]  # starts[-1]: the end
    view.partial = [int(lead > 0 or starts[c] != b) for lead, b, c in zip(view.lead, ends, stops)]
    inner = view.ends[:shown]  # the boundary after each shown token; the text's last token has none
    last = [0] * (shown - len(inner))
    view.cut_syllable = [int(b in in_syllable) for b in inner] + last
    view.cut_cluster = [int(b in in_cluster) for b in inner] + last


def compare(views: Sequence[TokenizerView], layout: TextLayout) -> list[Span]:
    """The text cut at the boundaries all aligned views share; ``agree`` is False where any view has
    another boundary inside the span. Offsets are code points: a span holds the characters whose first
    byte it holds (as tokens do), and agreeing neighbours are one span. When a view shows only its
    first tokens (``truncated``), the spans stop where the shortest such view stops."""
    aligned = [v for v in views if v.aligned]
    if not layout.text:
        return []
    if not aligned:
        return [Span(0, len(layout.text), layout.text, True)]
    size = min(v.covered for v in aligned)
    # every view's boundaries before `size` (ends are sorted: cumulative lengths)
    inner = [set(v.ends[:bisect.bisect_left(v.ends, size)]) for v in aligned]
    common = set.intersection(*inner)
    everywhere = sorted(set.union(*inner))
    cuts = sorted(common | {0, size})
    spans: list[Span] = []
    for a, b in itertools.pairwise(cuts):
        # any boundary strictly inside (a, b)?
        k = bisect.bisect_right(everywhere, a)
        agree = not (k < len(everywhere) and everywhere[k] < b)
        s, e = layout.first_char_from(a), layout.first_char_from(b)
        if s < e:
            spans.append(Span(s, e, "", agree))
        elif not agree and spans:  # (a, b) is inside the last character of the span before
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
    (building one is slow enough to delay that request)."""
    from wwho.schema import available_scripts, bundled_schema

    inside_offsets(" ".join(chr(bundled_schema(name).blocks[0].first + 0x15) for name in available_scripts()))
