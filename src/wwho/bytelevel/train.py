"""Training a byte-level BPE vocabulary: corpus -> pieces -> bytes -> merges -> :class:`~wwho.bytelevel.model.ByteLevelModel`.

1. **count**: documents (:mod:`wwho.corpus`) are cut at special-token text (so special tokens
   are never part of a piece nor merged), then split by the pre-tokenizer regex and the
   pieces counted in worker processes (:func:`wwho.bpe.count.count_pieces`);
2. **words**: each distinct piece becomes the list of its UTF-8 byte values;
3. **merges**: :class:`wwho.bpe.MergeEngine` over the 256 byte symbols, most frequent pair
   first (a pair merges while its count is ``>= min_freq``), ties to the lexicographically
   *greater* byte pair (the GPT-2 convention), until ``vocab_size`` is reached;
4. **vocabulary**: ids 0-255 are the bytes, then merged tokens in the order they were made,
   then the special tokens. The result uses the merges rule (the merges in training order),
   which reproduces exactly what training did to each piece.

The counts and the merge choice do not depend on the number of workers or on the order of
the pieces, so the same corpus and options give the same vocabulary. Pre-tokenizers with
several regexes or a byte stage (GGUF models' own) are for loading, not for training here.
Counting uses the ``regex`` module's own Unicode tables (the workers run ``findall``), so
for characters assigned after Unicode 16.0 its pieces can differ from the pinned encoder's.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator

import regex

from wwho.bpe import MergeEngine
from wwho.bpe.count import count_pieces
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import Pretokenizer
from wwho.corpus import CorpusStats, iter_documents, resolve_paths
from wwho.errors import CorpusError, VocabError


def train_bytelevel(
    corpus: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    vocab_size: int,
    pattern: str = "gpt4",
    special_tokens: Iterable[str] = (),
    min_freq: int = 2,
    workers: int | None = None,
    progress: bool = True,
    text_field: str = "text",
    skip_bad_lines: bool = False,
    stats: CorpusStats | None = None,
) -> ByteLevelModel:
    """Train a byte-level BPE model on text/JSONL files (see the module docstring).

    ``vocab_size`` counts everything: the 256 byte tokens, the merged tokens and the special
    tokens. ``pattern`` is ``gpt2``, ``gpt4`` (cl100k), ``o200k`` or a regex.
    """
    specials = list(dict.fromkeys(special_tokens))
    if any(not isinstance(s, str) or not s for s in specials):
        raise VocabError("special tokens must be non-empty strings")
    if type(vocab_size) is not int or vocab_size < 256 + len(specials):
        raise VocabError(
            f"vocab_size {vocab_size!r} is too small: it must hold the 256 byte tokens and the "
            f"{len(specials)} special tokens"
        )
    if type(min_freq) is not int or min_freq < 1:
        raise VocabError(f"min_freq must be an int >= 1, not {min_freq!r}")
    pretok = Pretokenizer.coerce(pattern)
    if len(pretok.patterns) != 1 or pretok.has_byte_stage:
        raise VocabError(
            f"training needs a single-regex pre-tokenizer (gpt2, gpt4, o200k or a regex), not {pattern!r}"
        )
    say = (lambda msg: print(msg, file=sys.stderr)) if progress else (lambda msg: None)
    stats = stats if stats is not None else CorpusStats()

    t0 = time.perf_counter()
    files = resolve_paths(corpus)
    documents: Iterable[str] = iter_documents(
        files, text_field=text_field, skip_bad_lines=skip_bad_lines, stats=stats
    )
    if specials:
        documents = split_specials(documents, specials)
    pieces = count_pieces(
        documents, pattern=pretok.patterns[0], engine="regex", workers=workers, progress=progress
    )
    if not pieces:
        raise CorpusError(f"the corpus has no text ({stats.files} files, {stats.documents} documents)")
    say(f"counted {sum(pieces.values()):,} pieces ({len(pieces):,} distinct) in "
        f"{stats.documents:,} documents, {time.perf_counter() - t0:.1f}s")

    merges, symbols = learn_merges(pieces, max_symbols=vocab_size - len(specials), min_freq=min_freq,
                                   progress=progress)
    say(f"learned {len(merges):,} merges, {len(symbols):,} tokens + {len(specials)} special, "
        f"{time.perf_counter() - t0:.1f}s in all")
    ranks = {s: i for i, s in enumerate(symbols)}
    special_ids = {s: len(symbols) + k for k, s in enumerate(specials)}
    return ByteLevelModel(ranks, pretok, special_tokens=special_ids, merges=merges, ignore_merges=False,
                          name="bytelevel")


def learn_merges(
    pieces: Counter[str] | dict[str, int], *, max_symbols: int, min_freq: int = 2, progress: bool = False
) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
    """Merges (as byte pairs, in training order) and the symbol table (bytes, by id) for piece counts."""
    by_bytes: Counter[bytes] = Counter()
    for piece, count in pieces.items():
        by_bytes[piece.encode("utf-8", "surrogatepass")] += count
    keys = sorted(by_bytes)  # a fixed order, whatever order the counter came in
    words, counts = [list(k) for k in keys], [by_bytes[k] for k in keys]
    engine = MergeEngine(words, counts, [bytes([b]) for b in range(256)], tie_break="greater")
    engine.train(max_symbols=max_symbols, min_freq=min_freq, progress=progress)
    symbols: list[bytes] = list(engine.symbols)
    return [(symbols[a], symbols[b]) for a, b in engine.merges], symbols


def split_specials(documents: Iterable[str], specials: list[str]) -> Iterator[str]:
    """Each document cut at special-token text (longest first), without the special tokens."""
    splitter = regex.compile("|".join(map(regex.escape, sorted(specials, key=lambda s: (-len(s), s)))))
    for doc in documents:
        if splitter.search(doc) is None:
            yield doc
        else:
            yield from (part for part in splitter.split(doc) if part)
