"""SGPE training: corpus -> pieces -> words of syllables -> merges -> ``vocab.json``.

Phases (each with a progress bar when ``progress=True``):

1. **count**: count the pieces of every document (:func:`wwho.counting.count_corpus`: the
   core reads plain-text files itself, on all cores; other formats come through
   :mod:`wwho.corpus`); with superwords, the sentence spans, whose pieces follow; with
   ``prefix_space``, each document with the dummy space before it (what the encoder sees);
2. **words**: syllabify each *distinct* piece once, split it into words and boundary tokens
   (:mod:`wwho.sgpe.words`) and group those into the spans merges stay inside
   (``merge_scope``, :mod:`wwho.sgpe.scopes`); a lone boundary token is counted apart;
   with ``split_punctuation``, the scripts' own punctuation (the dandas) is a boundary token too,
   so in the ``"words"`` and ``"runs"`` scopes no token joins a word and its danda;
3. **symbols**: syllables rarer than ``prune_freq`` become the ``UNK`` sentinel (left to
   their characters and byte fallback at encoding time), and so does a unit longer than the
   core's ``MAX_SYMBOL_UNITS`` code points (a made-up cluster: its prefixes would each take an
   id); ``"auto"`` chooses the threshold
   (:mod:`wwho.sgpe.budget`); the symbol table is the boundary tokens (sorted) then the
   syllables (most frequent first, ties by string);
4. **merges**: :class:`wwho.bpe.MergeEngine`, most frequent pair first (``freq >= min_freq``,
   strict as spec 000), ties to the smaller ``(left, right)`` string pair, until the
   vocabulary less the superword share is full; a checkpoint every ``checkpoint_every``
   merges (past ten of those, a tenth of the merges so far apart: each checkpoint holds every
   merge, so their cost stays linear); then the superword merges (:mod:`wwho.sgpe.superwords`)
   fill the rest, joining only pieces that hold a letter (``superword_letters``, the default);
5. **vocabulary**: specials, then every token by final corpus frequency (ties by symbol
   order), then the tokens of frequency 0: symbols used up by merges, the pieces that
   rebuild syllables from characters (:mod:`wwho.sgpe.building`), with ``bare_syllables`` (the
   default) the bare form of every syllable symbol that has a leading space, and, with automatic
   pruning, every character of every syllable, and the 256 byte tokens. Where the merges ran
   out before ``vocab_size`` (a small corpus: every word of it is one token), the ids left go
   first, with ``complete_words`` (the default) in scope ``"pieces"``, to the words the text
   holds only with punctuation attached (``" ලංකාව"`` of ``" ලංකාව."``): merges learned on
   those words as the merges so far cut them, after every other merge; then, with
   ``complete_endings`` (the default), to the endings of the training words (each suffix after
   a word's first unit, of at most 32 units), learned the same way from pairs seen twice or more; then, with
   automatic pruning and ``complete_syllables`` (the default), to syllables the training text
   lacks but whose onset and tail it has (:mod:`wwho.sgpe.completion`), with their building
   pieces; then, with superwords and ``complete_superwords`` (the default), to superwords of a
   word's ending (or the word) and the next word or its first syllables
   (:func:`wwho.sgpe.superwords.ending_superwords`).

The budget (spec 000 section 3.4, adjusted): ``vocab_size`` counts everything in the
file, so merges fill ``vocab_size - specials - 256 byte tokens - base symbols - building
pieces and characters``. A merge whose result already exists costs nothing. If the base
alone does not fit, no merge is learned and the vocabulary is larger than asked (a warning
says so). The defaults (scope ``"pieces"``, ``prune_freq="auto"``, ``min_freq=1``,
``superword_share=0.15``) were chosen on held-out FLORES text (``docs/compression.md``);
``merge_scope="words", prune_freq=2, min_freq=2, superword_share=0, bare_syllables=False`` is spec 000's
training.

``segments_only=True`` trains on the Indic runs of the text only (:func:`indic_segments`),
for the meta tokenizer, where tiktoken takes everything else.

Phases 1 to 4 run in the compiled core (counting, words, symbol table and engine input,
building merges, the merge loop: ``rust/src/counting/``, ``training.rs``, ``engine/``; the
superword stage: ``superwords/``); the counts and word types never become Python objects.

Resume: a checkpoint (:mod:`wwho.sgpe.checkpoints`) stores the merges as string pairs, their
sha256, and a fingerprint of the engine input and options; ``resume=True`` recounts the corpus, checks the
fingerprint, replays the merges and continues (:mod:`wwho.sgpe.checkpointing`). Merge selection depends only
on counts and the tie-break, so the result is byte-identical to an uninterrupted run, whatever ``workers`` is.

This module holds the training entries (a corpus, an iterator of texts, piece counts) and phase 1,
the counting, after the options are checked (:mod:`wwho.sgpe.train_options`). It does not run
phases 2 to 5 (:mod:`wwho.sgpe.phases` does), handle checkpoints (:mod:`wwho.sgpe.checkpointing`),
or choose the script's extra characters and syllables (:mod:`wwho.sgpe.script_coverage`); the
superword stage's steps are :class:`wwho.sgpe.superwords.SuperwordStage`'s.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wwho import _core
from wwho.corpus import MAX_LINE_BYTES, CorpusStats, check_max_line_bytes
from wwho.corpus_files import resolve_paths
from wwho.counting import count_corpus
from wwho.errors import VocabError
from wwho.router import core_router
from wwho.sgpe.phases import train_on_pieces
from wwho.sgpe.superwords import span_breaks
from wwho.sgpe.train_options import (
    check_flags,
    check_option_names,
    check_options,
    split_punctuation_option,
)
from wwho.sgpe.vocabfile import SPECIAL_TOKENS, VocabFile
from wwho.sgpe.words import WordSplitter

if TYPE_CHECKING:  # for the annotations only
    from wwho.scale.counts import CountSource
    from wwho.scale.texts import TextSource


ENGINES = ("local", "ray")


def train_sgpe(
    corpus: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    vocab_size: int,
    script: str = "sinhala",
    min_freq: int = 1,
    prune_freq: int | str = "auto",
    merge_scope: str = "pieces",
    prefix_space: bool = False,
    superword_share: float = 0.15,
    superword_letters: bool = True,
    script_characters: bool = True,
    bare_syllables: bool = True,
    complete_syllables: bool = True,
    complete_words: bool = True,
    complete_endings: bool = True,
    complete_superwords: bool = True,
    split_punctuation: bool = False,
    workers: int | None = None,
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: int = 20_000,
    resume: bool = False,
    overwrite_checkpoint: bool = False,
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
    balance: float | None = None,
    balance_seed: int = 0,
) -> VocabFile:
    """Train an SGPE vocabulary; returns the :class:`VocabFile` (see the module docstring).

    ``balance=alpha``: ``corpus`` is several corpora (one per language: a file or a folder each),
    sampled into one stream with temperature ``alpha`` (:mod:`wwho.balance`; 0.3 as mT5, 1 as
    given), seeded by ``balance_seed``.

    ``bare_syllables=False`` leaves a syllable the text has only after a space without a token
    of its own bare form, as before that option: the same syllable inside a word is then spelt in
    pieces (the module docstring of :mod:`wwho.sgpe.building`).

    ``superword_letters=False`` lets a superword merge join a piece that holds no letter (a danda
    or a verse number after a space) to the word before it, as before that option.

    ``complete_syllables=False``, ``complete_words=False``, ``complete_endings=False`` and
    ``complete_superwords=False`` leave the ids the merges could not use unused (the vocabulary is
    then smaller than asked, with a warning, as before these options).

    ``checkpoint_dir`` that already holds a checkpoint (a killed run's, or one kept): ``resume=True``
    continues from it, ``overwrite_checkpoint=True`` starts over and replaces it; with neither it is
    a :class:`VocabError` before any work, as ``wwho train`` without ``--resume`` or ``--force``
    (it was replaced in silence before).

    ``engine="ray"`` counts shards of the corpus in Ray tasks (:mod:`wwho.scale.ray_counter`;
    ``address`` joins a running cluster, else a local instance with ``workers`` CPUs is
    started); the result is byte-identical to ``engine="local"``.

    Every size is checked before the corpus is read (:mod:`wwho.sizes`)."""
    check_max_line_bytes(max_line_bytes)
    if engine not in ENGINES:
        raise VocabError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if (address is not None or shard_bytes is not None) and engine != "ray":
        raise VocabError("address and shard_bytes are options of engine='ray'")
    check_flags(dict(prefix_space=prefix_space, superword_letters=superword_letters,
                      script_characters=script_characters, bare_syllables=bare_syllables,
                      complete_syllables=complete_syllables, complete_words=complete_words,
                      complete_endings=complete_endings, complete_superwords=complete_superwords,
                      split_punctuation=split_punctuation, resume=resume,
                      overwrite_checkpoint=overwrite_checkpoint,
                      skip_bad_lines=skip_bad_lines, segments_only=segments_only))
    check_options(vocab_size, min_freq, prune_freq, checkpoint_every, workers, special_tokens, resume,
                   checkpoint_dir, merge_scope, prefix_space, superword_share, segments_only,
                   overwrite_checkpoint=overwrite_checkpoint)
    stats = stats if stats is not None else CorpusStats()
    if balance is not None:
        if engine != "local":
            raise VocabError("balance is an option of engine='local'")
        return _train_balanced(corpus, balance, balance_seed, vocab_size=vocab_size, script=script,
                               text_field=text_field, skip_bad_lines=skip_bad_lines, max_line_bytes=max_line_bytes,
                               stats=stats, workers=workers, progress=progress, segments_only=segments_only,
                               min_freq=min_freq, prune_freq=prune_freq, merge_scope=merge_scope,
                               prefix_space=prefix_space, superword_share=superword_share,
                               superword_letters=superword_letters,
                               script_characters=script_characters, bare_syllables=bare_syllables,
                               complete_syllables=complete_syllables,
                               complete_words=complete_words, complete_endings=complete_endings,
                               complete_superwords=complete_superwords, split_punctuation=split_punctuation,
                               checkpoint_dir=checkpoint_dir, checkpoint_every=checkpoint_every, resume=resume,
                               overwrite_checkpoint=overwrite_checkpoint, special_tokens=special_tokens)
    # With superwords the core counts sentence spans (their pieces follow from them).
    breaks = span_breaks(superword_share)
    splitter = WordSplitter(script, split_punctuation=split_punctuation)

    t0 = time.perf_counter()
    files = resolve_paths(corpus, texts_hint="SGPETokenizer.train_from_iterator")  # fail now on a missing input
    if engine == "ray":
        from wwho.scale.ray_counter import count_on_ray
        from wwho.scale.shards import CountOptions, plan_shards

        shards = plan_shards(files, shard_bytes=shard_bytes, max_line_bytes=max_line_bytes)
        options = CountOptions("sgpe", text_field=text_field, skip_bad_lines=skip_bad_lines,
                               max_line_bytes=max_line_bytes, scripts=splitter.scripts if segments_only else None,
                               prefix_space=prefix_space, span_breaks=breaks)
        pieces = count_on_ray(shards, options, address=address, workers=workers, stats=stats,
                              total_bytes=sum(s.size for s in shards), progress=progress)
        stats.files += len(files)
    else:
        router = core_router(splitter.scripts) if segments_only else None
        pieces = count_corpus(files, text_field=text_field, skip_bad_lines=skip_bad_lines, stats=stats,
                              workers=workers, progress=progress, router=router, max_line_bytes=max_line_bytes,
                              prefix_space=prefix_space, span_breaks=breaks)
    return train_on_pieces(pieces, splitter=splitter, vocab_size=vocab_size, min_freq=min_freq,
                           prune_freq=prune_freq, merge_scope=merge_scope, prefix_space=prefix_space,
                           superword_share=superword_share, superword_letters=superword_letters,
                           spans=breaks is not None, script_characters=script_characters,
                           bare_syllables=bare_syllables,
                           complete_syllables=complete_syllables, complete_words=complete_words,
                           complete_endings=complete_endings, complete_superwords=complete_superwords,
                           checkpoint_dir=checkpoint_dir, checkpoint_every=checkpoint_every,
                           resume=resume, progress=progress, special_tokens=special_tokens,
                           segments_only=segments_only, stats=stats, started=t0)


def _train_balanced(corpus, alpha: float, seed: int, *, vocab_size: int, script: str, text_field: str,
                    skip_bad_lines: bool, max_line_bytes: int, stats: CorpusStats, **options) -> VocabFile:
    """:func:`train_sgpe` on the temperature-balanced stream of several corpora."""
    from wwho import balance

    docs = balance.stream(corpus, alpha, seed=seed, text_field=text_field, skip_bad_lines=skip_bad_lines,
                          max_line_bytes=max_line_bytes, stats=stats, progress=options.get("progress", True))
    return train_sgpe_from_iterator(docs, vocab_size=vocab_size, script=script, stats=stats, **options)


def train_sgpe_from_iterator(iterator: TextSource, *, vocab_size: int, script: str = "sinhala", length: int | None = None,
                             workers: int | None = None, progress: bool = True, segments_only: bool = False,
                             engine: str = "local", address: str | None = None, text_column: str = "text",
                             stats: CorpusStats | None = None, **options: Any) -> VocabFile:
    """Train on texts from an iterable of strings or of batches of strings (:mod:`wwho.scale.texts`),
    or from a Hugging Face ``datasets.Dataset`` (its ``text_column``, read in slices: :func:`wwho.scale.texts.dataset_texts`).

    Each string is one document, as one line of a file is; the counting runs in the core on
    ``workers`` threads, or with ``engine="ray"`` in Ray tasks, batches of about 8 MB of text
    each (sent from this process). ``stats``: where a stream that reads files itself (the balanced
    one of :func:`train_sgpe`) counted its documents and skipped lines, to be reported; by default
    the texts are counted here. Other options as :func:`train_sgpe`."""
    from wwho.counting import batches
    from wwho.scale.texts import dataset_texts, iter_texts

    check_option_names(options, "train_from_iterator")
    check_flags({**options, "segments_only": segments_only})
    check_options(vocab_size, options.get("min_freq", 1), options.get("prune_freq", "auto"),
                   options.get("checkpoint_every", 20_000), workers, options.get("special_tokens", SPECIAL_TOKENS),
                   options.get("resume", False), options.get("checkpoint_dir"), options.get("merge_scope", "pieces"),
                   options.get("prefix_space", False), options.get("superword_share", 0.15), segments_only,
                   overwrite_checkpoint=options.pop("overwrite_checkpoint", False))
    splitter = WordSplitter(script, split_punctuation=split_punctuation_option(options))
    t0 = time.perf_counter()
    counted = stats is not None
    stats = stats if counted else CorpusStats()
    prefix_space = options.get("prefix_space", False)
    breaks = span_breaks(options.get("superword_share", 0.15))
    if engine not in ENGINES:
        raise VocabError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    iterator, length = dataset_texts(iterator, text_column, length)
    texts = iter_texts(iterator, length=length, progress=progress, files_hint="SGPETokenizer.train")
    if engine == "ray":
        from wwho.scale.ray_counter import count_on_ray
        from wwho.scale.shards import CountOptions, text_shards

        options_ = CountOptions("sgpe", scripts=splitter.scripts if segments_only else None,
                                prefix_space=prefix_space, span_breaks=breaks)
        counter = count_on_ray(text_shards(texts), options_, address=address, workers=workers,
                               stats=CorpusStats() if counted else stats,
                               progress=False)
    else:
        if address is not None:
            raise VocabError("address is an option of engine='ray'")
        counter = _core.PieceCounter(core_router(splitter.scripts) if segments_only else None,
                                     prefix_space=prefix_space, span_breaks=breaks)
        threads = 0 if workers is None else workers
        for batch in batches(texts, 8_000_000):
            counter.count_texts(batch, threads=threads)
            if not counted:
                stats.documents += sum(1 for t in batch if t)
    return train_on_pieces(counter, splitter=splitter, vocab_size=vocab_size, progress=progress,
                           segments_only=segments_only, stats=stats, started=t0, spans=breaks is not None,
                           **options)


def train_sgpe_from_counts(counts: CountSource, *, vocab_size: int, script: str = "sinhala", progress: bool = True,
                           **options: Any) -> VocabFile:
    """Train on piece counts: a dict, or ``piece<TAB>count`` files (:mod:`wwho.scale.counts`).

    The counts of a corpus's pieces (``PIECES``) give the same vocabulary as the corpus trained with
    ``superword_share=0`` (the default here: piece counts hold no sentences, so superword merges
    cannot be learned from them; a nonzero share is refused). With ``prefix_space=True`` the
    counts must be of text with the dummy space before each document. Other options as :func:`train_sgpe`."""
    from wwho.scale.counts import iter_counts

    options.setdefault("superword_share", 0)
    if options["superword_share"]:
        raise VocabError("superword_share needs sentence spans, which piece counts do not hold: "
                         "train on the text (train or train_from_iterator), or use superword_share=0")
    check_option_names(options, "train_from_counts")
    check_flags(options)
    check_options(vocab_size, options.get("min_freq", 1), options.get("prune_freq", "auto"),
                   options.get("checkpoint_every", 20_000), None, options.get("special_tokens", SPECIAL_TOKENS),
                   options.get("resume", False), options.get("checkpoint_dir"), options.get("merge_scope", "pieces"),
                   options.get("prefix_space", False), 0, options.get("segments_only", False),
                   overwrite_checkpoint=options.pop("overwrite_checkpoint", False))
    splitter = WordSplitter(script, split_punctuation=split_punctuation_option(options))
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


def indic_segments(documents: Iterable[str], scripts: tuple[str, ...]) -> Iterator[str]:
    """Each Indic run of each document (with its leading space) as a document of its own.

    For the meta tokenizer: tiktoken encodes everything else, so it takes no SGPE vocabulary.
    (The trainer has the core count the runs directly; this is the same rule on documents.)
    """
    from wwho.router import segment

    for doc in documents:
        for seg in segment(doc, scripts=scripts):
            if seg.is_indic:
                yield " " + seg.text if seg.has_leading_space else seg.text
