"""SGPE training: corpus -> pieces -> words of syllables -> merges -> ``vocab.json``.

Phases (each with a progress bar when ``progress=True``):

1. **count**: stream documents (:mod:`wwho.corpus`), count pieces in worker processes
   (:mod:`wwho.bpe.count`);
2. **words**: syllabify each *distinct* piece once and group syllables into words
   (:mod:`wwho.sgpe.words`); boundary tokens (no script character) are counted apart and
   never merged;
3. **symbols**: syllables rarer than ``prune_freq`` become the ``UNK`` sentinel (they are
   left to byte fallback at encoding time); the symbol table is the boundary tokens
   (sorted) then the syllables (most frequent first, ties by string);
4. **merges**: :class:`wwho.bpe.MergeEngine`, most frequent pair first (``freq >= min_freq``,
   strict as spec 000), ties to the smaller ``(left, right)`` string pair, until the
   vocabulary is full; a checkpoint every ``checkpoint_every`` merges;
5. **vocabulary**: specials, then every token by final corpus frequency (ties by symbol
   order), then the tokens of frequency 0: symbols used up by merges, the pieces that
   rebuild syllables from characters (:mod:`wwho.sgpe.building`), and the 256 byte tokens.

The budget (spec 000 section 3.4, adjusted): ``vocab_size`` counts everything in the
file, so merges fill ``vocab_size - specials - 256 byte tokens - base symbols - building
pieces``. A merge whose result already exists costs nothing. If the base alone does not
fit, no merge is learned and the vocabulary is larger than asked (a warning says so).

``segments_only=True`` trains on the Indic runs of the text only (:func:`indic_segments`),
for the meta tokenizer, where tiktoken takes everything else.

Resume: a checkpoint (:mod:`wwho.sgpe.checkpoints`) stores the merges as string pairs and a
fingerprint of the engine input and options; ``resume=True`` recounts the corpus, checks the
fingerprint, replays the merges and continues. Merge selection depends only on counts and the tie-break, so
the result is byte-identical to an uninterrupted run, whatever ``workers`` is.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
import time
from array import array
from collections import Counter
from pathlib import Path

from tqdm.auto import tqdm

from wwho.bpe import UNK, MergeEngine
from wwho.bpe.count import count_pieces
from wwho.bpe.engine import MergeError
from wwho.corpus import CorpusStats, iter_documents, resolve_paths
from wwho.errors import CorpusError, VocabError
from wwho.sgpe import checkpoints
from wwho.sgpe.building import building_merges
from wwho.sgpe.vocabfile import BYTE_TOKENS, SPECIAL_TOKENS, VocabFile
from wwho.sgpe.words import WordSplitter

CHECKPOINT_FORMAT = checkpoints.FORMAT
CHECKPOINT_NAME = checkpoints.FILE


def train_sgpe(
    corpus,
    *,
    vocab_size: int,
    script: str = "sinhala",
    min_freq: int = 2,
    prune_freq: int = 2,
    workers: int | None = None,
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: int = 20_000,
    resume: bool = False,
    progress: bool = True,
    text_field: str = "text",
    skip_bad_lines: bool = False,
    special_tokens: tuple[str, ...] = SPECIAL_TOKENS,
    stats: CorpusStats | None = None,
    segments_only: bool = False,
) -> VocabFile:
    """Train an SGPE vocabulary; returns the :class:`VocabFile` (see the module docstring)."""
    if type(vocab_size) is not int or vocab_size < len(special_tokens) + len(BYTE_TOKENS) + 1:
        raise VocabError(
            f"vocab_size {vocab_size!r} is too small: it must hold the {len(special_tokens)} special tokens, "
            f"the {len(BYTE_TOKENS)} byte tokens and at least one more"
        )
    if min_freq < 1 or prune_freq < 1:
        raise VocabError("min_freq and prune_freq must be >= 1")
    if resume and checkpoint_dir is None:
        raise VocabError("resume=True needs checkpoint_dir")
    if checkpoint_dir is not None:
        checkpoint_dir = checkpoints.claim(checkpoint_dir)  # before any work: refuse a link or a foreign folder
    splitter = WordSplitter(script)
    stats = stats if stats is not None else CorpusStats()
    say = (lambda msg: print(msg, file=sys.stderr)) if progress else (lambda msg: None)

    # 1. count
    t0 = time.perf_counter()
    files = resolve_paths(corpus)  # fail now, before any progress bar, on a missing input
    documents = iter_documents(files, text_field=text_field, skip_bad_lines=skip_bad_lines, stats=stats)
    if segments_only:
        documents = indic_segments(documents, splitter.scripts)
    pieces = count_pieces(documents, workers=workers, progress=progress)
    if stats.bad_lines:
        say(f"skipped {stats.bad_lines} bad lines, e.g. {stats.first_bad[0]}")
    if not pieces:
        raise CorpusError(f"the corpus has no text ({stats.files} files, {stats.documents} documents)")
    say(f"[1/5] counted {sum(pieces.values()):,} pieces ({len(pieces):,} distinct) in "
        f"{stats.documents:,} documents, {time.perf_counter() - t0:.1f}s")

    # 2. words
    words: Counter[tuple[str, ...]] = Counter()
    boundary: Counter[str] = Counter()
    for piece, count in tqdm(pieces.items(), desc="words", unit="piece", disable=not progress):
        for is_word, tokens in splitter.split(piece):
            if is_word:
                words[tuple(tokens)] += count
            else:
                boundary[tokens[0]] += count
    syllable_freq: Counter[str] = Counter()
    for word, count in words.items():
        for s in word:
            syllable_freq[s] += count

    # 3. symbols
    syllables = sorted((s for s, f in syllable_freq.items() if f >= prune_freq), key=lambda s: (-syllable_freq[s], s))
    symbols = sorted(boundary) + syllables
    index = {s: i for i, s in enumerate(symbols)}
    word_list = sorted(words)
    engine_words = [[index.get(s, UNK) for s in w] for w in word_list]
    engine_counts = [words[w] for w in word_list]
    build, pieces_needed = building_merges(symbols)
    support = [p for p in pieces_needed if p not in index]
    fixed = len(special_tokens) + len(BYTE_TOKENS) + len(support)
    max_symbols = vocab_size - fixed
    if max_symbols < len(symbols):
        say(f"warning: the {len(symbols):,} base symbols and {len(support):,} building pieces do not fit in "
            f"vocab_size={vocab_size:,}; no merges will be learned (raise vocab_size or prune_freq)")
    say(f"[3/5] {len(symbols):,} base symbols ({len(boundary):,} boundary tokens, {len(syllables):,} syllables; "
        f"{len(syllable_freq) - len(syllables):,} pruned below {prune_freq}), {len(word_list):,} word types, "
        f"{len(support):,} building pieces")

    # 4. merges
    engine = MergeEngine(engine_words, engine_counts, symbols, tie_break="smaller")
    fingerprint = "" if checkpoint_dir is None else _fingerprint(
        engine_words, engine_counts, symbols, script, min_freq, prune_freq, vocab_size, segments_only)
    if resume and checkpoint_dir is not None and (Path(checkpoint_dir) / checkpoints.FILE).exists():
        checkpoint = Path(checkpoint_dir) / checkpoints.FILE
        done = checkpoints.load(Path(checkpoint_dir), fingerprint)
        ids: dict[str, int] = dict(index)
        replay = []
        for k, (a, b) in enumerate(done):  # the ids these merges got: a new string is appended, a known one reused
            if a not in ids or b not in ids:
                raise VocabError(f"{checkpoint}: merge {k} ({a!r}, {b!r}) is not of symbols of this training; "
                                 "delete the checkpoint to start over")
            replay.append((ids[a], ids[b]))
            ids.setdefault(a + b, len(ids))
        try:
            engine.replay(replay)
        except MergeError as exc:
            raise VocabError(f"{checkpoint}: {exc}; delete the checkpoint to start over") from None
        say(f"resumed from {checkpoint}: {len(done):,} merges replayed")
    t1 = time.perf_counter()

    def save_checkpoint() -> None:
        merges = [(engine.symbols[a], engine.symbols[b]) for a, b in engine.merges]
        checkpoints.save(Path(checkpoint_dir), merges=merges, fingerprint=fingerprint,
                         elapsed=time.perf_counter() - t1)

    def on_merge(step: int) -> None:
        if checkpoint_dir is not None and checkpoint_every > 0 and step % checkpoint_every == 0:
            save_checkpoint()

    engine.train(max_symbols=max(max_symbols, len(engine.symbols)), min_freq=min_freq, progress=progress,
                 on_merge=on_merge)
    if checkpoint_dir is not None:
        save_checkpoint()
    say(f"[4/5] {len(engine.merges):,} merges in {time.perf_counter() - t1:.1f}s")

    # 5. vocabulary
    freq = engine.symbol_frequencies()
    for token, count in boundary.items():
        freq[index[token]] += count
    order = sorted(range(len(engine.symbols)), key=lambda i: (-freq[i], i))
    vocab: dict[str, int] = {}
    for token in (*special_tokens, *(engine.symbols[i] for i in order), *support, *BYTE_TOKENS):
        vocab.setdefault(token, len(vocab))
    merges = [(engine.symbols[a], engine.symbols[b]) for a, b in engine.merges]
    return VocabFile(vocab=vocab, merges=merges, syllable_merges=build, script=script,
                     special_tokens=tuple(special_tokens), prune_freq=prune_freq, min_freq=min_freq)


def indic_segments(documents, scripts: tuple[str, ...]):
    """Each Indic run of each document (with its leading space) as a document of its own.

    For the meta tokenizer: tiktoken encodes everything else, so it takes no SGPE vocabulary.
    """
    from wwho.router import segment

    for doc in documents:
        for seg in segment(doc, scripts=scripts):
            if seg.is_indic:
                yield " " + seg.text if seg.has_leading_space else seg.text


def _fingerprint(words, counts, symbols, *options) -> str:
    """sha256 of the engine's input and the options: a checkpoint only resumes the same training."""
    h = hashlib.sha256()
    h.update(json.dumps([symbols, list(options)], ensure_ascii=False).encode())
    h.update(array("q", map(len, words)).tobytes())
    h.update(array("q", itertools.chain.from_iterable(words)).tobytes())
    h.update(array("q", counts).tobytes())
    return h.hexdigest()
