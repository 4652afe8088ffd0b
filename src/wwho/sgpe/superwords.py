"""Superword merges: BPE across the spaces of a sentence, after the word-level merges.

SuperBPE's curriculum (Liu et al. 2025) on top of SGPE: the first merges are learned inside
pieces (:mod:`wwho.sgpe.scopes`), then the rest of the budget inside *spans*, runs of
pieces joined by single spaces that stop after sentence punctuation (``SPANS``), so a
token may hold several words (``" ශ්‍රී ලංකාව"``, ``" के लिए"``). Units are still whole
syllables: no merge ever falls inside one. In training (``letters``, the default), a span is cut
before each piece that holds no letter (:func:`holds_a_letter`): a danda or a verse number set
apart by a space (``"ला ।"``, ``"५ ॥"``) joins no superword. Such pieces repeat with one text's
formatting (verse) and rarely in other text (``docs/compression.md``). Encoding needs no such
rule: a merge never learned never applies.

Encoding a span is "units -> rank merges" twice: each piece as without superwords (the
building and word-level merges, cached per piece), then every merge (all ranks) over the
span's tokens. Word-level merges never join two pieces (their right side never starts
with a space), so this equals running all ranks over the span from code points, which is
what Hugging Face's BPE does with ``SPANS`` as its ``Split`` pre-tokenizer.

Training: the spans of the corpus are counted (as sequences of piece ids, the piece counts kept
as they are counted: :func:`piece_counts`' rule), the word-level engine runs as usual, then each
span becomes the sequence of its pieces' tokens as that engine left them and a second engine
learns the superword merges (:class:`SuperwordStage`, which :mod:`wwho.sgpe.phases` runs). The
work runs in the compiled core (``rust/src/spans.rs``: span cutting; ``rust/src/superwords/``:
the span table, the second engine's input, freeing what the first stage leaves; a span holding a
special or byte token's text is left unmerged); encoding too (``rust/src/sgpe/``). This module
holds the rule as data (``SPAN_BREAKS``, ``SPANS``), its Python statement for the tests and the
Hugging Face export, and the stage's steps; and, for the ids every other stage leaves on a small
corpus, the superwords of a word's ending (or the word) and the next word or its beginning
(:func:`ending_superwords`, from the trained second engine's spans, in Python: such spans are few).

This module does not read corpora nor assign final ids.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable

from wwho import _core
from wwho.bpe import MergeEngine
from wwho.counting import PIECES

#: Sentence punctuation after which a span ends (the space after it starts the next span).
SPAN_BREAKS = ".!?:;\u0964\u0965\u0df4"
#: A span: an optional glued space, a piece, then more pieces after single spaces, none of them
#: after a piece that ends in sentence punctuation; or one whitespace character.
SPANS = (r"(?: (?=[^ \t\n\r]))?[^ \t\n\r]+(?:(?<![" + re.escape(SPAN_BREAKS) + r"]) [^ \t\n\r]+)*"
         r"|[ \t\n\r]")

#: Superword merges need a phrase seen at least twice (a merge of frequency 1 only memorizes a sentence).
SUPERWORD_MIN_FREQ = 2
#: Pairs :func:`ending_superwords` holds while counting: past this, those seen once so far are dropped.
MAX_ENDING_PAIRS = 1 << 20
#: Bounds on :func:`ending_superwords`' work per word: the longest superword after an ending it asks
#: about, in words, and the longest ending or beginning of a word, in syllables (as the core's word
#: endings). Unbounded, a line that repeats one word (whose superwords then span thousands of words)
#: made it cubic in the line's length.
MAX_SUPERWORD_WORDS = 16
MAX_ENDING_UNITS = 32

_pieces = re.compile(PIECES).findall


@functools.cache
def _letter():
    import regex  # Python's re has no Unicode property classes; loaded only when asked

    return regex.compile(r"\p{Alphabetic}")


def holds_a_letter(piece: str) -> bool:
    """Whether ``piece`` holds a letter (Unicode's Alphabetic property, in any script): the rule
    by which, with ``superword_letters`` (the default), a piece may join the one before it in a
    superword (the core's, ``rust/src/superwords/items.rs``, stated here for tests and readers). A piece
    of punctuation, digits or symbols after a space (a danda set apart in verse, a verse number)
    repeats with a training text's formatting, rarely in other text."""
    return _letter().search(piece) is not None


def span_breaks(superword_share: float) -> str | None:
    """What the counters cut sentence spans after (``span_breaks`` of ``_core.PieceCounter``), or
    ``None`` without superwords (``superword_share=0``): then pieces are counted."""
    return SPAN_BREAKS if superword_share else None


class SuperwordStage:
    """The superword stage of one training, started once the word types are collected.

    ``spans``: the span counter (made with :func:`span_breaks`, or given span texts);
    ``words``: the word types of its pieces (``PieceCounter.words`` with the same ``scope`` and
    ``reserved``). What each piece becomes is worked out on a thread of the core's from here on,
    beside phases 3 and 4 (which run on one core); :meth:`train` takes it."""

    def __init__(self, spans: _core.PieceCounter, words: _core.WordCounts, splitter: _core.WordSplitter, *,
                 scope: str, reserved: list[str]) -> None:
        self._spans: _core.PieceCounter | None = spans
        self._words: _core.WordCounts | None = words
        self._splitter = splitter
        self._scope = scope
        self._reserved = reserved
        words.prepare_superwords(spans, splitter, scope=scope, reserved=reserved)

    def train(self, engine: MergeEngine, *, max_symbols: int, progress: bool, min_freq: int = 1,
              letters: bool = True) -> MergeEngine:
        """The superword merges after ``engine``'s (trained on ``words``): a second engine over
        the spans as the tokens ``engine`` left their pieces, trained until it has
        ``max_symbols`` symbols, merging no pair rarer than ``min_freq`` (the training's) or
        :data:`SUPERWORD_MIN_FREQ`. With ``letters``, a span is cut before each piece that holds
        no letter (:func:`holds_a_letter`), so no superword joins one to the word before it. The
        span counts, the word types and ``engine``'s words (its symbols and merges stay) are
        freed before the second engine counts its pairs."""
        floor = max(SUPERWORD_MIN_FREQ, min_freq)
        if self._spans is None or self._words is None:
            raise RuntimeError("the superword stage runs once")
        second = self._words.superword_engine(self._spans, self._splitter, engine._core, scope=self._scope,
                                              reserved=self._reserved, min_freq=floor, letters=letters)
        self._spans = self._words = None
        final = MergeEngine.from_core(second, list(engine.symbols), tie_break="smaller")
        final.train(max_symbols=max(max_symbols, len(final.symbols)), min_freq=floor,
                    progress=progress)
        return final


def ending_superwords(final: MergeEngine, syllables: Callable[[str], list[str]], tokens: set[str], *,
                      spare: int, min_freq: int = 1, letters: bool = True) -> list[tuple[str, str]]:
    """Superword merges of a word's ending and the word after it, or the beginning of that word, for
    ``spare`` ids that every other stage left (``complete_superwords``). On a small corpus every
    training word is one token, so the superword merges join whole training words only, and a
    held-out word with a known ending (``" ଚରିବା"``, spelt ``" ଚ" "ରିବା"``) never joins the next word,
    nor any word the first syllables of a held-out word after it. In each span of ``final`` (the superword
    engine, trained), for each word followed by another, the pairs counted, as often as the span
    occurs, are: each ending of the first (its syllables from the second on, as ``syllables`` cuts
    it) that is one of ``tokens`` with the next word (with its space) where that is one of
    ``tokens``; and each such ending, and the first word itself (with its space, if it has one)
    where that is one of ``tokens``, with each beginning of the next word (its first syllables, not
    all of them, with its space) that is one of ``tokens`` and, with ``letters``
    (``superword_letters``), holds a letter. A beginning joins only where the next word is no token
    beyond it, as in a word the training text never had: its own merges rank first. Pairs counted
    :data:`SUPERWORD_MIN_FREQ` (or ``min_freq``) times or more whose join is no token yet, most
    frequent first (ties by text), make the merges, ranked after every other superword merge. No
    token of the training text's own spans changes: their words are whole tokens, not endings. A
    span the superword engine left unmerged (one holding a special or byte token's text) counts
    nothing. At most :data:`MAX_ENDING_PAIRS` pairs are held: past that (only a large corpus with a
    vocabulary it cannot fill), the pairs seen once so far are dropped and counting goes on. Endings
    and beginnings of up to :data:`MAX_ENDING_UNITS` syllables and superwords of up to
    :data:`MAX_SUPERWORD_WORDS` words are asked about."""
    if spare <= 0:
        return []
    floor = max(SUPERWORD_MIN_FREQ, min_freq)
    symbols = final.symbols
    widest = min(MAX_SUPERWORD_WORDS,  # words in a token
                 max((t.count(" ") for t in tokens if t.startswith(" ")), default=0))
    # Every run of up to `widest` whole words a space-led token starts with (" a", " a b" of
    # " a b c"): past one that is none, no longer run is a token, and the next words need not be
    # joined and asked about.
    starts = {" ".join(t.split(" ", widest + 1)[:k])
              for t in tokens if t.startswith(" ") for k in range(2, widest + 2)}
    counts: Counter[tuple[str, str]] = Counter()
    # A word's endings and beginnings that are tokens, asked once per distinct word: a long span
    # (a line with no sentence break) repeats its words, which were cut into syllables again each time.
    parts_of: dict[str, tuple[list[str], list[str]]] = {}

    def parts(word: str) -> tuple[list[str], list[str]]:
        found = parts_of.get(word)
        if found is None:
            units = syllables(word) if word else []
            endings = ["".join(units[start:]) for start in range(max(1, len(units) - MAX_ENDING_UNITS), len(units))]
            beginnings = [" " + "".join(units[:k]) for k in range(1, min(len(units), MAX_ENDING_UNITS + 1))]
            found = parts_of[word] = ([e for e in endings if e in tokens],
                                      [b for b in beginnings if b in tokens and (not letters or holds_a_letter(b))])
        return found

    width = max(widest, 1)  # the words after a word that are asked about

    def count_window(window: tuple, times: int, at_start: bool) -> None:
        left, following = window[0], window[1]
        ends = parts(left)[0]
        # The next word, or a superword that starts with it (which joins it first).
        right = ""
        for word in window[1:widest + 1]:
            if word is None:
                break
            right += " " + word
            if right not in starts:
                break
            if right in tokens:
                for ending in ends:
                    counts[ending, right] += times
        # The next word's beginnings, after an ending or after the whole first word.
        whole = ("" if at_start else " ") + left
        lefts = [*ends, whole] if whole in tokens else ends
        for start in parts(following)[1]:
            for first in lefts:
                counts[first, start] += times

    for span, n in zip(*final.words_and_counts()):
        if any(not 0 <= t < len(symbols) for t in span):
            continue
        words = "".join(symbols[t] for t in span).split(" ")
        if len(words) < 2:
            continue
        # Each word but the last is asked about with the `width` words after it (None past the
        # span's end); a long span repeats such windows, so each distinct one is asked about once,
        # times how often it occurs. The span's first word has no space before it.
        after = [itertools.chain(itertools.islice(words, k, None), itertools.repeat(None, k))
                 for k in range(1, width + 1)]
        windows = Counter(zip(itertools.islice(words, len(words) - 1), *after))
        first = tuple(words[:width + 1]) + (None,) * (width + 1 - len(words))
        windows[first] -= 1
        for window, times in ((first, 1), *windows.items()):
            if times and window[0]:
                count_window(window, times * n, window is first)
        if len(parts_of) > MAX_ENDING_PAIRS:  # bounded as the pairs are
            parts_of.clear()
        if len(counts) > MAX_ENDING_PAIRS:
            counts = Counter({pair: c for pair, c in counts.items() if c > 1})
    best = sorted((-n, ending, right) for (ending, right), n in counts.items()
                  if n >= floor and ending + right not in tokens)
    return [(ending, right) for _, ending, right in best[:spare]]


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
