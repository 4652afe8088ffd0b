"""SGPE training: corpus -> pieces -> words of syllables -> merges -> ``vocab.json``.

Phases (each with a progress bar when ``progress=True``):

1. **count**: count the pieces of every document (:func:`wwho.bpe.count.count_corpus`: the
   core reads plain-text files itself, on all cores; other formats come through
   :mod:`wwho.corpus`);
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

Phases 1 to 4 run in the compiled core (counting, words, symbol table and engine input,
building merges, the merge loop: ``rust/src/count.rs``, ``training.rs``, ``engine.rs``); the
counts and word types never become Python objects. This module keeps the orchestration, the
checkpoints and the vocabulary file.

Resume: a checkpoint (:mod:`wwho.sgpe.checkpoints`) stores the merges as string pairs and a
fingerprint of the engine input and options; ``resume=True`` recounts the corpus, checks the
fingerprint, replays the merges and continues. Merge selection depends only on counts and the tie-break, so
the result is byte-identical to an uninterrupted run, whatever ``workers`` is.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

from wwho import _core
from wwho.bpe import MergeEngine
from wwho.bpe.count import count_corpus
from wwho.bpe.engine import MergeError
from wwho.corpus import MAX_LINE_BYTES, CorpusStats, check_max_line_bytes, resolve_paths
from wwho.errors import CorpusError, VocabError
from wwho.router import core_router
from wwho.sgpe import checkpoints
from wwho.sgpe.building import building_merges
from wwho.sgpe.vocabfile import BYTE_TOKENS, SPECIAL_TOKENS, VocabFile
from wwho.sgpe.words import WordSplitter
from wwho.sizes import MAX_COUNT, check_range, check_vocab_size, check_workers

CHECKPOINT_FORMAT = checkpoints.FORMAT
CHECKPOINT_NAME = checkpoints.FILE


ENGINES = ("local", "ray")


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
    max_line_bytes: int = MAX_LINE_BYTES,
    engine: str = "local",
    address: str | None = None,
    shard_bytes: int | None = None,
) -> VocabFile:
    """Train an SGPE vocabulary; returns the :class:`VocabFile` (see the module docstring).

    ``engine="ray"`` counts shards of the corpus in Ray tasks (:mod:`wwho.scale.ray_engine`;
    ``address`` joins a running cluster, else a local instance with ``workers`` CPUs is
    started); the result is byte-identical to ``engine="local"``.

    Every size is checked before the corpus is read (:mod:`wwho.sizes`)."""
    check_max_line_bytes(max_line_bytes)
    if engine not in ENGINES:
        raise VocabError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if (address is not None or shard_bytes is not None) and engine != "ray":
        raise VocabError("address and shard_bytes are options of engine='ray'")
    _check_options(vocab_size, min_freq, prune_freq, checkpoint_every, workers, special_tokens, resume,
                   checkpoint_dir)
    stats = stats if stats is not None else CorpusStats()
    splitter = WordSplitter(script)

    t0 = time.perf_counter()
    files = resolve_paths(corpus, texts_hint="SGPETokenizer.train_from_iterator")  # fail now on a missing input
    if engine == "ray":
        from wwho.scale.ray_engine import count_on_ray
        from wwho.scale.shards import CountOptions, plan_shards

        shards = plan_shards(files, shard_bytes=shard_bytes, max_line_bytes=max_line_bytes)
        options = CountOptions("sgpe", text_field=text_field, skip_bad_lines=skip_bad_lines,
                               max_line_bytes=max_line_bytes, scripts=splitter.scripts if segments_only else None)
        pieces = count_on_ray(shards, options, address=address, workers=workers, stats=stats,
                              total_bytes=sum(s.size for s in shards), progress=progress)
        stats.files += len(files)
    else:
        router = core_router(splitter.scripts) if segments_only else None
        pieces = count_corpus(files, text_field=text_field, skip_bad_lines=skip_bad_lines, stats=stats,
                              workers=workers, progress=progress, router=router, max_line_bytes=max_line_bytes)
    return train_on_pieces(pieces, splitter=splitter, vocab_size=vocab_size, min_freq=min_freq,
                           prune_freq=prune_freq, checkpoint_dir=checkpoint_dir, checkpoint_every=checkpoint_every,
                           resume=resume, progress=progress, special_tokens=special_tokens,
                           segments_only=segments_only, stats=stats, started=t0)


def train_sgpe_from_iterator(iterator, *, vocab_size: int, script: str = "sinhala", length: int | None = None,
                             workers: int | None = None, progress: bool = True, segments_only: bool = False,
                             engine: str = "local", address: str | None = None, **options) -> VocabFile:
    """Train on texts from an iterable of strings or of batches of strings (:mod:`wwho.scale.texts`).

    Each string is one document, as one line of a file is; the counting runs in the core on
    ``workers`` threads, or with ``engine="ray"`` in Ray tasks, batches of about 8 MB of text
    each (sent from this process). Other options as :func:`train_sgpe`."""
    from wwho.bpe.count import _batches
    from wwho.scale.texts import iter_texts

    _check_options(vocab_size, options.get("min_freq", 2), options.get("prune_freq", 2),
                   options.get("checkpoint_every", 20_000), workers, options.get("special_tokens", SPECIAL_TOKENS),
                   options.get("resume", False), options.get("checkpoint_dir"))
    splitter = WordSplitter(script)
    t0 = time.perf_counter()
    stats = CorpusStats()
    if engine not in ENGINES:
        raise VocabError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    texts = iter_texts(iterator, length=length, progress=progress, files_hint="SGPETokenizer.train")
    if engine == "ray":
        from wwho.scale.ray_engine import count_on_ray
        from wwho.scale.shards import CountOptions, text_shards

        options_ = CountOptions("sgpe", scripts=splitter.scripts if segments_only else None)
        counter = count_on_ray(text_shards(texts), options_, address=address, workers=workers, stats=stats,
                               progress=False)
    else:
        if address is not None:
            raise VocabError("address is an option of engine='ray'")
        counter = _core.PieceCounter(core_router(splitter.scripts) if segments_only else None)
        threads = 0 if workers is None else workers
        for batch in _batches(texts, 8_000_000):
            counter.count_texts(batch, threads=threads)
            stats.documents += sum(1 for t in batch if t)
    return train_on_pieces(counter, splitter=splitter, vocab_size=vocab_size, progress=progress,
                           segments_only=segments_only, stats=stats, started=t0, **options)


def train_sgpe_from_counts(counts, *, vocab_size: int, script: str = "sinhala", progress: bool = True,
                           **options) -> VocabFile:
    """Train on piece counts: a dict, or ``piece<TAB>count`` files (:mod:`wwho.scale.counts`).

    The counts of a corpus's pieces (``PIECES``) give the same vocabulary as the corpus."""
    from wwho.scale.counts import iter_counts

    _check_options(vocab_size, options.get("min_freq", 2), options.get("prune_freq", 2),
                   options.get("checkpoint_every", 20_000), None, options.get("special_tokens", SPECIAL_TOKENS),
                   options.get("resume", False), options.get("checkpoint_dir"))
    splitter = WordSplitter(script)
    t0 = time.perf_counter()
    counter = _core.PieceCounter()
    pieces: list[str] = []
    numbers: list[int] = []
    for piece, count in iter_counts(counts):
        pieces.append(piece)
        numbers.append(count)
        if len(pieces) >= 100_000:
            counter.add(pieces, numbers)
            pieces, numbers = [], []
    counter.add(pieces, numbers)
    return train_on_pieces(counter, splitter=splitter, vocab_size=vocab_size, progress=progress,
                           stats=None, started=t0, **options)


def _check_options(vocab_size, min_freq, prune_freq, checkpoint_every, workers, special_tokens, resume,
                   checkpoint_dir) -> None:
    smallest = len(special_tokens) + len(BYTE_TOKENS) + 1
    if type(vocab_size) is int and vocab_size < smallest:
        raise VocabError(
            f"vocab_size {vocab_size!r} is too small: it must hold the {len(special_tokens)} special tokens, "
            f"the {len(BYTE_TOKENS)} byte tokens and at least one more"
        )
    check_vocab_size(vocab_size, low=smallest)
    check_range(min_freq, "min_freq", 1, MAX_COUNT)
    check_range(prune_freq, "prune_freq", 1, MAX_COUNT)
    check_range(checkpoint_every, "checkpoint_every", 0, MAX_COUNT)
    check_workers(workers)
    if resume and checkpoint_dir is None:
        raise VocabError("resume=True needs checkpoint_dir")
    if checkpoint_dir is not None:
        checkpoints.claim(checkpoint_dir)  # before any work: refuse a link or a foreign folder


def train_on_pieces(
    pieces: _core.PieceCounter,
    *,
    splitter: WordSplitter,
    vocab_size: int,
    min_freq: int = 2,
    prune_freq: int = 2,
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: int = 20_000,
    resume: bool = False,
    progress: bool = True,
    special_tokens: tuple[str, ...] = SPECIAL_TOKENS,
    segments_only: bool = False,
    stats: CorpusStats | None = None,
    started: float | None = None,
) -> VocabFile:
    """Phases 2 to 5 on counted pieces (whatever counted them). ``stats``: what was read, or
    ``None`` for counts given as such."""
    script = splitter.script
    if checkpoint_dir is not None:
        checkpoint_dir = checkpoints.claim(checkpoint_dir)  # refuse a link or a foreign folder
    say = (lambda msg: print(msg, file=sys.stderr)) if progress else (lambda msg: None)
    t0 = started if started is not None else time.perf_counter()
    if stats is not None and stats.bad_lines:
        say(f"skipped {stats.bad_lines} bad lines, e.g. {stats.first_bad[0]}")
    if not len(pieces):
        if stats is None:
            raise CorpusError("the counts are empty")
        raise CorpusError(f"the corpus has no text ({stats.files} files, {stats.documents} documents)")
    where = "" if stats is None else f" in {stats.documents:,} documents"
    say(f"[1/5] counted {pieces.total_count():,} pieces ({len(pieces):,} distinct){where}, "
        f"{time.perf_counter() - t0:.1f}s")

    # 2. words
    words = pieces.words(splitter.core)
    del pieces
    boundary: dict[str, int] = words.boundary_counts()
    syllable_count = len(words.syllable_counts())

    # 3. symbols
    symbols, core_engine, kept, *engine_arrays = words.engine_input(prune_freq)
    index = {s: i for i, s in enumerate(symbols)}
    build, pieces_needed = building_merges(symbols)
    support = [p for p in pieces_needed if p not in index]
    fixed = len(special_tokens) + len(BYTE_TOKENS) + len(support)
    max_symbols = vocab_size - fixed
    if max_symbols < len(symbols):
        say(f"warning: the {len(symbols):,} base symbols and {len(support):,} building pieces do not fit in "
            f"vocab_size={vocab_size:,}; no merges will be learned (raise vocab_size or prune_freq)")
    say(f"[3/5] {len(symbols):,} base symbols ({len(boundary):,} boundary tokens, {kept:,} syllables; "
        f"{syllable_count - kept:,} pruned below {prune_freq}), {len(words):,} word types, "
        f"{len(support):,} building pieces")
    del words

    # 4. merges
    engine = MergeEngine.from_core(core_engine, symbols, tie_break="smaller")
    fingerprint = "" if checkpoint_dir is None else _fingerprint(
        engine_arrays, symbols, script, min_freq, prune_freq, vocab_size, segments_only)
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
                 on_merge=on_merge if checkpoint_dir is not None and checkpoint_every > 0 else None)
    if checkpoint_dir is not None:
        save_checkpoint()
    say(f"[4/5] {len(engine.merges):,} merges in {time.perf_counter() - t1:.1f}s")

    # 5. vocabulary
    freq = engine.symbol_frequencies()
    for token, count in boundary.items():
        if token in index:
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
    (The trainer has the core count the runs directly; this is the same rule on documents.)
    """
    from wwho.router import segment

    for doc in documents:
        for seg in segment(doc, scripts=scripts):
            if seg.is_indic:
                yield " " + seg.text if seg.has_leading_space else seg.text


def _fingerprint(engine_arrays, symbols, *options) -> str:
    """sha256 of the engine's input and the options: a checkpoint only resumes the same training.

    ``engine_arrays``: the word lengths, the words' symbol ids and the counts, as native int64
    arrays (``array("q", ...).tobytes()`` of each, as earlier versions hashed them).
    """
    h = hashlib.sha256()
    h.update(json.dumps([symbols, list(options)], ensure_ascii=False).encode())
    for data in engine_arrays:
        h.update(data)
    return h.hexdigest()
