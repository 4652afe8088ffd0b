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
superword stage: ``superwords.rs``); the counts and word types never become Python objects. This
module keeps the orchestration, the checkpoints and the vocabulary file; the superword stage's
steps are :class:`wwho.sgpe.superwords.SuperwordStage`'s.

Resume: a checkpoint (:mod:`wwho.sgpe.checkpoints`) stores the merges as string pairs, their
sha256, and a fingerprint of the engine input and options; ``resume=True`` recounts the corpus, checks the
fingerprint, replays the merges and continues. Merge selection depends only on counts and the tie-break, so
the result is byte-identical to an uninterrupted run, whatever ``workers`` is.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wwho import _core
from wwho.background import Background
from wwho.bpe import MergeEngine
from wwho.bpe.engine import MergeError
from wwho.corpus import MAX_LINE_BYTES, CorpusStats, check_max_line_bytes, resolve_paths
from wwho.counting import count_corpus
from wwho.errors import CorpusError, VocabError, VocabSizeWarning, WwhoWarning, brief, check_flag
from wwho.notices import plural, warn, warn_short_vocabulary
from wwho.protocol import special_token_list
from wwho.router import core_router, script_sets
from wwho.schema import bundled_schema
from wwho.schema_types import OTHER
from wwho.scriptcheck import block_letter_count, letter_count, letters_by_script, warn_if_other_script
from wwho.sgpe import checkpoints
from wwho.sgpe.budget import auto_prune_freq, piece_needs
from wwho.sgpe.building import bare_forms, building_merges
from wwho.sgpe.completion import unseen_syllables
from wwho.sgpe.scopes import check_scope
from wwho.sgpe.spare import punctuated_words, word_endings
from wwho.sgpe.superwords import SuperwordStage, ending_superwords, span_breaks
from wwho.sgpe.vocabfile import BYTE_TOKENS, SPECIAL_TOKENS, VocabFile
from wwho.sgpe.words import WordSplitter
from wwho.sizes import MAX_COUNT, check_range, check_vocab_size, check_workers

if TYPE_CHECKING:  # for the annotations only
    from wwho.scale.counts import CountSource
    from wwho.scale.texts import TextSource

#: ``script_characters`` adds the schema's unseen characters only while they take at most this
#: share of the vocabulary (a tiny vocabulary is better spent on merges).
MAX_SCRIPT_CHARACTERS_SHARE = 0.05
#: In a multi-script mode, a script gets its schema's characters when at least this share of the
#: syllables that start with a letter are its own (a stray word is not enough).
MIN_SCRIPT_SHARE = 0.001

#: Past ``checkpoint_every`` times this many merges, checkpoints are the merges so far divided
#: by this apart (see ``checkpoint_due`` in ``_train_on_pieces``).
CHECKPOINT_SPACING = 10
CHECKPOINT_FORMAT = checkpoints.FORMAT
CHECKPOINT_NAME = checkpoints.FILE


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
    _check_flags(dict(prefix_space=prefix_space, superword_letters=superword_letters,
                      script_characters=script_characters, bare_syllables=bare_syllables,
                      complete_syllables=complete_syllables, complete_words=complete_words,
                      complete_endings=complete_endings, complete_superwords=complete_superwords,
                      split_punctuation=split_punctuation, resume=resume,
                      overwrite_checkpoint=overwrite_checkpoint,
                      skip_bad_lines=skip_bad_lines, segments_only=segments_only))
    _check_options(vocab_size, min_freq, prune_freq, checkpoint_every, workers, special_tokens, resume,
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


def _smallest_taking(characters: int) -> int:
    """The smallest ``vocab_size`` that takes ``characters`` of the script the training text lacks
    (those may take at most :data:`MAX_SCRIPT_CHARACTERS_SHARE` of it)."""
    size = math.ceil(characters / MAX_SCRIPT_CHARACTERS_SHARE)
    while characters > size * MAX_SCRIPT_CHARACTERS_SHARE:  # (the float division's rounding)
        size += 1
    while size > 1 and characters <= (size - 1) * MAX_SCRIPT_CHARACTERS_SHARE:
        size -= 1
    return size


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

    _check_names(options, "train_from_iterator")
    _check_flags({**options, "segments_only": segments_only})
    _check_options(vocab_size, options.get("min_freq", 1), options.get("prune_freq", "auto"),
                   options.get("checkpoint_every", 20_000), workers, options.get("special_tokens", SPECIAL_TOKENS),
                   options.get("resume", False), options.get("checkpoint_dir"), options.get("merge_scope", "pieces"),
                   options.get("prefix_space", False), options.get("superword_share", 0.15), segments_only,
                   overwrite_checkpoint=options.pop("overwrite_checkpoint", False))
    splitter = WordSplitter(script, split_punctuation=_split_punctuation(options))
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
    _check_names(options, "train_from_counts")
    _check_flags(options)
    _check_options(vocab_size, options.get("min_freq", 1), options.get("prune_freq", "auto"),
                   options.get("checkpoint_every", 20_000), None, options.get("special_tokens", SPECIAL_TOKENS),
                   options.get("resume", False), options.get("checkpoint_dir"), options.get("merge_scope", "pieces"),
                   options.get("prefix_space", False), 0, options.get("segments_only", False),
                   overwrite_checkpoint=options.pop("overwrite_checkpoint", False))
    splitter = WordSplitter(script, split_punctuation=_split_punctuation(options))
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


#: The options that are True or False.
FLAGS = ("prefix_space", "superword_letters", "script_characters", "bare_syllables", "complete_syllables",
         "complete_words", "complete_endings", "complete_superwords", "split_punctuation", "resume",
         "overwrite_checkpoint", "skip_bad_lines", "segments_only")


def _check_names(options: dict, method: str) -> None:
    """A ``TypeError`` naming ``method`` for an option no training takes, before any text is read
    (passed on, a misspelt option failed after the whole corpus was counted, naming a private
    function)."""
    import difflib
    import inspect

    known = {*inspect.signature(_train_on_pieces).parameters, "split_punctuation", "checkpoint_dir",
             "overwrite_checkpoint"}
    known -= {"pieces", "splitter", "vocab_size", "progress", "stats", "started", "spans"}
    for name in options:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(f"{method}() got an unexpected keyword argument {name!r}{hint}")


def _check_flags(options: dict) -> None:
    """Each of :data:`FLAGS` among ``options`` must be True or False ("no" would be true): a
    :class:`VocabError` naming it, before any text is counted. Every training entry calls it."""
    for name in FLAGS:
        if name in options:
            check_flag(options[name], name, VocabError)


def _split_punctuation(options: dict) -> bool:
    """The ``split_punctuation`` option (checked by :func:`_check_flags`), taken out of ``options``:
    the word splitter carries it."""
    return options.pop("split_punctuation", False)


def check_special_tokens(special_tokens: Iterable[str]) -> None:
    """Special tokens must be distinct non-empty strings, given as a list (a single string would be
    taken as its characters), none of them the text of a byte token (``<0x41>`` decodes to ``A``)."""
    tokens = special_token_list(special_tokens)
    for token in tokens:
        if token in BYTE_TOKENS:
            raise VocabError(f"special token {token!r} is the text of a byte token, which decodes to its byte")
    twice = sorted({t for t in tokens if tokens.count(t) > 1})
    if twice:
        raise VocabError(f"special_tokens lists {', '.join(map(repr, twice))} twice")


def smallest_vocab_size(special_tokens: Sequence[str] = SPECIAL_TOKENS) -> int:
    """The least ``vocab_size`` a vocabulary of these special tokens can have: they, the byte
    tokens and one more."""
    return len(special_tokens) + len(BYTE_TOKENS) + 1


def _check_options(vocab_size, min_freq, prune_freq, checkpoint_every, workers, special_tokens, resume,
                   checkpoint_dir, merge_scope="pieces", prefix_space=False, superword_share=0.15,
                   segments_only=False, *, overwrite_checkpoint=False) -> None:
    check_special_tokens(special_tokens)
    smallest = smallest_vocab_size(special_tokens)
    if type(vocab_size) is int and vocab_size < smallest:
        raise VocabError(
            f"vocab_size {vocab_size!r} is too small: it must hold the {len(special_tokens)} special tokens, "
            f"the {len(BYTE_TOKENS)} byte tokens and at least one more"
        )
    check_vocab_size(vocab_size, low=smallest)
    check_range(min_freq, "min_freq", 1, MAX_COUNT)
    if prune_freq != "auto":
        if isinstance(prune_freq, str):
            raise VocabError(f"prune_freq must be 'auto' or an integer >= 1, not {prune_freq!r}")
        check_range(prune_freq, "prune_freq", 1, MAX_COUNT)
    if type(superword_share) not in (int, float) or not 0 <= superword_share < 1:
        raise VocabError(f"superword_share must be a number in [0, 1), not {superword_share!r}")
    if prefix_space and segments_only:
        raise VocabError("prefix_space cannot be used with segments_only (the meta tokenizer): the dummy "
                         "space would be added to every Indic run")
    check_scope(merge_scope)
    check_range(checkpoint_every, "checkpoint_every", 0, MAX_COUNT)
    check_workers(workers)
    if resume and checkpoint_dir is None:
        raise VocabError("resume=True needs checkpoint_dir")
    if checkpoint_dir is not None:
        checkpoints.claim(checkpoint_dir)  # before any work: refuse a link or a foreign folder
        found = Path(checkpoint_dir) / checkpoints.FILE
        if not resume and not overwrite_checkpoint and os.path.lexists(found):
            # An earlier training's work: replaced in silence before, as `wwho train` without --resume
            # or --force no longer does (found by a probe).
            raise VocabError(f"{found}: an earlier training's checkpoint is there: pass resume=True to continue "
                             "from it, or overwrite_checkpoint=True to start over (it is replaced)")


def train_on_pieces(pieces: _core.PieceCounter, *, checkpoint_dir: str | Path | None = None,
                    **options: Any) -> VocabFile:
    """Phases 2 to 5 on counted pieces (whatever counted them); the options as :func:`_train_on_pieces`.

    With ``checkpoint_dir``, this training holds the directory's lock until it returns
    (:func:`wwho.sgpe.checkpoints.using`): a second training using the same directory stops with
    an error instead of overwriting the checkpoints of the first."""
    if checkpoint_dir is None:
        return _train_on_pieces(pieces, **options)
    checkpoint_dir = checkpoints.claim(checkpoint_dir)  # refuse a link or a foreign folder
    with checkpoints.using(checkpoint_dir):
        return _train_on_pieces(pieces, checkpoint_dir=checkpoint_dir, **options)


def _train_on_pieces(
    pieces: _core.PieceCounter,
    *,
    splitter: WordSplitter,
    vocab_size: int,
    min_freq: int = 1,
    prune_freq: int | str = "auto",
    merge_scope: str = "pieces",
    prefix_space: bool = False,
    superword_share: float = 0.15,
    superword_letters: bool = True,
    spans: bool = False,
    script_characters: bool = True,
    bare_syllables: bool = True,
    complete_syllables: bool = True,
    complete_words: bool = True,
    complete_endings: bool = True,
    complete_superwords: bool = True,
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
    ``None`` for counts given as such. ``spans=True``: ``pieces`` holds sentence-span counts
    (counted with ``span_breaks``; the superword stage needs them), whose pieces are derived here."""
    span_counts = None
    if spans:
        span_counts, pieces = pieces, pieces.pieces()
    script = splitter.script
    say = (lambda msg: print(msg, file=sys.stderr)) if progress else (lambda msg: None)
    t0 = started if started is not None else time.perf_counter()
    if stats is not None and stats.bad_lines:
        say(f"skipped {stats.bad_lines} bad lines, e.g. {stats.first_bad[0]}")
    if not len(pieces):
        if stats is None:
            raise CorpusError("the counts are empty")
        if segments_only and stats.documents:  # the meta tokenizer trains SGPE on the Indic runs only
            shown = splitter.script if len(splitter.scripts) > 2 else "/".join(splitter.scripts)
            raise CorpusError(f"the corpus has no {shown} text ({plural(stats.files, 'file')}, "
                              f"{plural(stats.documents, 'document')}): the meta tokenizer's SGPE part is "
                              f"trained on the runs of the script chosen (--script / script=), and there are none")
        raise CorpusError(f"the corpus has no text ({plural(stats.files, 'file')}, "
                          f"{plural(stats.documents, 'document')})")
    where = "" if stats is None else f" in {stats.documents:,} documents"
    # The stages printed, numbered without gaps: counting, base symbols, merges (, superword merges).
    stages = 4 if span_counts is not None else 3
    say(f"[1/{stages}] counted {pieces.total_count():,} pieces ({len(pieces):,} distinct){where}, "
        f"{time.perf_counter() - t0:.1f}s")

    # 2. words
    reserved = [*special_tokens, *BYTE_TOKENS]  # a piece holding their text is grouped as in scope "words"
    words = pieces.words(splitter.core, scope=merge_scope, reserved=reserved)
    del pieces
    # The superword stage starts now: what each piece becomes is worked out beside phases 3 and 4.
    stage = None if span_counts is None else SuperwordStage(span_counts, words, splitter.core, scope=merge_scope,
                                                            reserved=reserved)
    span_counts = None
    boundary: dict[str, int] = words.boundary_counts()
    syllable_freq: dict[str, int] = words.syllable_counts()
    # Every boundary token, lone or inside a span: with the default scope, a whole corpus in
    # another script is boundary tokens inside mergeable spans.
    boundary_occurrences: dict[str, int] = words.boundary_symbol_counts()
    cores = words.cores() if complete_words and merge_scope == "pieces" else None
    boundary_symbols = set(boundary_occurrences)
    _check_script(splitter.scripts, boundary_occurrences, syllable_freq, mode=splitter.script)

    # 3. symbols
    fixed = len(special_tokens) + len(BYTE_TOKENS)
    superword_ids = round(superword_share * vocab_size)
    if superword_ids and stage is not None and merge_scope != "pieces":
        warn(f"merge_scope={merge_scope!r} keeps words apart from their punctuation (and other runs), but "
             f"superword merges (superword_share={superword_share}) join any tokens of a sentence span, so "
             "some of them will join what the scope keeps apart; superword_share=0 keeps the scope's rule "
             "everywhere (docs/compression.md)", WwhoWarning)
    auto = prune_freq == "auto"
    if auto:
        # The pieces each syllable needs (Python) are worked out while the core builds the probe
        # (it releases the GIL): the two overlap on two cores.
        with Background(1, name="wwho-train") as pool:
            needs = pool.submit(piece_needs, syllable_freq, boundary_symbols, bare_syllables=bare_syllables)
            probe_symbols, probe, *_ = words.engine_input(1, arrays=False)
            need = needs.result()
        prune_freq = auto_prune_freq(MergeEngine.from_core(probe, probe_symbols, tie_break="smaller"),
                                     syllable_freq, boundary_symbols, min_freq=min_freq,
                                     ids=vocab_size - superword_ids - fixed, progress=progress, need=need)
        del probe
        say(f"prune_freq auto: {prune_freq}")
    # The engine input as arrays only for a checkpoint's fingerprint.
    symbols, core_engine, kept, *engine_arrays = words.engine_input(prune_freq,
                                                                   arrays=checkpoint_dir is not None)
    index = {s: i for i, s in enumerate(symbols)}
    # Every syllable symbol with a leading space gets its bare form too (an id of the support
    # tokens): else the same syllable inside a word, where no space comes before it, is cut.
    built = [*symbols, *bare_forms(symbols, boundary_symbols)] if bare_syllables else symbols
    build, pieces_needed = building_merges(built)
    # Automatic pruning leaves many syllables out: keep every character of every syllable, so that an
    # unknown syllable costs one token per character rather than the UTF-8 bytes of each. (A fixed
    # prune_freq keeps spec 000's base, syllables only, and so the files of the classic options.)
    characters = {c for s in syllable_freq for c in s if not 0xD800 <= ord(c) < 0xE000} if auto else set()
    skipped_characters = 0  # the schema's characters left out for the size, which a larger one takes
    if auto and script_characters:
        # And every character the script's schema lists, seen in training or not: held-out text of
        # another domain (a danda in verse, an archaic letter) then costs one token per character,
        # not its three UTF-8 bytes. Not in a vocabulary too small for them to be worth their ids.
        scripts = scripts_present(splitter.scripts, syllable_freq)
        extra = schema_characters(scripts) - characters - set(index) - set(pieces_needed)
        if len(extra) <= vocab_size * MAX_SCRIPT_CHARACTERS_SHARE:
            characters |= extra
        else:
            skipped_characters = len(extra)
            say(f"note: the script's {len(extra):,} characters not in the training text would take more than "
                f"{MAX_SCRIPT_CHARACTERS_SHARE:.0%} of vocab_size={vocab_size:,}; they are left to byte fallback")
    support = sorted((set(pieces_needed) | characters) - set(index), key=lambda t: (len(t), t))
    max_symbols = vocab_size - superword_ids - fixed - len(support)
    need = len(symbols) + len(support) + fixed
    if need > vocab_size:  # never silent: an embedding table of vocab_size rows would overflow
        fits = need  # the smallest size that holds it all, the characters it would add included
        if skipped_characters and skipped_characters <= (need + skipped_characters) * MAX_SCRIPT_CHARACTERS_SHARE:
            fits = need + skipped_characters
        warn(
            f"the vocabulary has {need:,} tokens, more than the {vocab_size:,} asked: this corpus's "
            f"{len(symbols):,} base symbols, {len(support):,} building pieces and {fixed:,} special and byte "
            f"tokens do not fit in fewer, and no merge is learned. Use --vocab-size / vocab_size >= {fits:,}"
            + (f" (from vocab_size {_smallest_taking(skipped_characters):,} on, the vocabulary also takes "
               f"the script's {skipped_characters:,} characters the training text lacks, left out here)"
               if fits != need else "")
            + ("" if auto else f", or a higher prune_freq (now {prune_freq})"),
            VocabSizeWarning)
    if max_symbols < len(symbols):
        say(f"note: the {len(symbols):,} base symbols and {len(support):,} building pieces leave no room for "
            f"syllable merges besides the {superword_ids:,} ids kept for superwords")
    say(f"[2/{stages}] {len(symbols):,} base symbols ({plural(len(boundary_symbols), 'boundary token')}, {plural(kept, 'syllable')}; "
        f"{len(syllable_freq) - kept:,} pruned below {prune_freq}), {len(words):,} word types ({merge_scope}), "
        f"{len(support):,} building pieces")
    # Only the superword stage needs the word types again (it holds them), and the word endings, read
    # only where the merges run out (a small corpus).
    endings = words if complete_endings else None
    words = None

    # 4. merges
    engine = MergeEngine.from_core(core_engine, symbols, tie_break="smaller")
    options = [script, min_freq, f"auto:{prune_freq}" if auto else prune_freq, vocab_size, segments_only]
    if (merge_scope, prefix_space, superword_share) != ("words", False, 0):  # format-1 checkpoints stay valid
        options += [merge_scope, prefix_space, superword_share]
    if auto and script_characters:  # earlier checkpoints stay valid without it
        options += ["script_characters"]
    if bare_syllables:
        options += ["bare_syllables"]
    if splitter.split_punctuation:
        options += ["split_punctuation"]
    # By name, so that a refused resume can say which option changed.
    named = {"script": script, "min_freq": min_freq, "prune_freq": "auto" if auto else prune_freq,
             "vocab_size": vocab_size, "segments_only": segments_only, "merge_scope": merge_scope,
             "prefix_space": prefix_space, "superword_share": superword_share, "script_characters": bool(auto and script_characters),
             "bare_syllables": bare_syllables, "split_punctuation": splitter.split_punctuation}
    if tuple(special_tokens) != SPECIAL_TOKENS:  # (earlier checkpoints, of the default ones, stay valid)
        # Their count sets how many ids the merges get: a resume with others would give another
        # vocabulary than a training from the start with them.
        options += [["special_tokens", *special_tokens]]
        named["special_tokens"] = list(special_tokens)
    fingerprint, input_sha256 = ("", "") if checkpoint_dir is None else _fingerprint(engine_arrays, symbols, *options)
    del engine_arrays
    if resume and checkpoint_dir is not None and (Path(checkpoint_dir) / checkpoints.FILE).exists():
        checkpoint = Path(checkpoint_dir) / checkpoints.FILE
        done = checkpoints.load(Path(checkpoint_dir), fingerprint, options=named, input_sha256=input_sha256)
        ids: dict[str, int] = dict(index)
        replay = []
        for k, (a, b) in enumerate(done):  # the ids these merges got: a new string is appended, a known one reused
            if a not in ids or b not in ids:
                raise VocabError(f"{checkpoint}: merge {k} ({brief(a)}, {brief(b)}) is not of symbols of this training; "
                                 "delete the checkpoint to start over")
            replay.append((ids[a], ids[b]))
            ids.setdefault(a + b, len(ids))
        try:
            engine.replay(replay)
        except MergeError as exc:
            raise VocabError(f"{checkpoint}: {exc}; delete the checkpoint to start over") from None
        say(f"resumed from {checkpoint}: {len(done):,} merges replayed")
    elif resume:  # a mistyped folder would redo hours of work without a word: said even with --quiet
        warn(f"resume: no checkpoint in {checkpoint_dir}; training from the start", WwhoWarning)
    t1 = time.perf_counter()

    def save_checkpoint() -> None:
        merges = [(engine.symbols[a], engine.symbols[b]) for a, b in engine.merges]
        checkpoints.save(Path(checkpoint_dir), merges=merges, fingerprint=fingerprint,
                         elapsed=time.perf_counter() - t1, options=named, input_sha256=input_sha256)

    saved = len(engine.merges)  # the merges the last checkpoint holds (the replayed ones, resuming)

    def checkpoint_due(step: int) -> None:
        nonlocal saved
        # Each checkpoint holds every merge so far, so one every few merges would make training
        # quadratic in its merges; past ten intervals they are a tenth of the merges so far apart,
        # which bounds the merges written in all to about ten times the vocabulary and what a crash
        # can cost to a tenth of the merges done.
        if step - saved >= max(checkpoint_every, saved // CHECKPOINT_SPACING):
            save_checkpoint()
            saved = step

    checkpointing = checkpoint_dir is not None and checkpoint_every > 0
    engine.train(max_symbols=max(max_symbols, len(engine.symbols)), min_freq=min_freq, progress=progress,
                 on_merge=checkpoint_due if checkpointing else None,
                 on_merge_every=checkpoint_every if checkpointing else 1)
    if checkpointing:  # the merges whole, for a resume during the stages after them (0: no checkpoints)
        save_checkpoint()
    say(f"[3/{stages}] {len(engine.merges):,} merges in {time.perf_counter() - t1:.1f}s")
    # The word endings, copied out now (the superword stage empties the word counts), and only where
    # the merges ran out of pairs before the budget: a corpus that fills the vocabulary needs none.
    ran_out = len(engine.symbols) < max_symbols
    endings = endings.suffixes() if endings is not None and ran_out else None
    final = engine
    short_superwords = None  # why the vocabulary is short, where the superword stage is the reason
    if stage is not None:
        t2 = time.perf_counter()
        final = stage.train(engine, max_symbols=vocab_size - fixed - len(support), progress=progress,
                            min_freq=min_freq, letters=superword_letters)
        if not ran_out and len(final.symbols) < vocab_size - fixed - len(support):
            short_superwords = (
                f"the syllable merges stopped at their share, and the superword stage found words to join for "
                f"only {len(final.symbols) - len(engine.symbols):,} of the {superword_ids:,} ids kept for "
                f"superwords (superword_share {superword_share:g}). A smaller share (--superwords) leaves more "
                "ids to the merges")
        say(f"[4/{stages}] {len(final.merges):,} superword merges in {time.perf_counter() - t2:.1f}s")
    stage = None

    # 5. vocabulary
    spare = vocab_size - fixed - len(final.symbols) - len(support)
    core_merges, core_tokens = punctuated_words(engine, cores, taken=set(final.symbols), spare=spare,
                                                min_freq=min_freq, say=say)
    spare -= len(core_tokens)
    ending_merges, ending_tokens = word_endings(engine, core_merges, endings, taken={*final.symbols, *core_tokens},
                                                spare=spare, min_freq=min_freq, say=say)
    spare -= len(ending_tokens)
    endings = None
    core_merges, core_tokens = core_merges + ending_merges, core_tokens + ending_tokens
    if auto and complete_syllables:
        build, support = _complete(build, support, built, index, characters, syllable_freq, splitter,
                                   spare=spare, say=say)
    superword_merges = [(final.symbols[a], final.symbols[b]) for a, b in final.merges] if final is not engine else []
    superword_tokens = []
    if complete_superwords and final is not engine:
        known = {*special_tokens, *final.symbols, *core_tokens, *support, *BYTE_TOKENS}
        extra = ending_superwords(final, splitter.syllables, known, spare=vocab_size - len(known), min_freq=min_freq,
                                  letters=superword_letters)
        if extra:
            say(f"{len(extra):,} ids to superwords of a word's ending and the next word or its beginning")
        superword_merges += extra
        superword_tokens = [ending + right for ending, right in extra]
    freq = final.symbol_frequencies()
    if final is engine:  # else every span, whitespace included, was a word of the superword engine
        for token, count in boundary.items():
            if token in index:
                freq[index[token]] += count
    order = sorted(range(len(final.symbols)), key=lambda i: (-freq[i], i))
    vocab: dict[str, int] = {}
    for token in (*special_tokens, *(final.symbols[i] for i in order), *core_tokens, *superword_tokens, *support,
                  *BYTE_TOKENS):
        vocab.setdefault(token, len(vocab))
    learned = {*final.symbols, *core_tokens, *superword_tokens, *support}
    clash = [t for t in special_tokens if t in learned]
    if clash:  # one id for both: skipping special tokens in decode would drop ordinary text
        raise VocabError(f"special token {clash[0]!r} is also an ordinary token of the vocabulary (text of "
                         f"the corpus, or a letter of the script); choose special tokens that text does not contain, "
                         f"such as '[CLS]'")
    merges = [(engine.symbols[a], engine.symbols[b]) for a, b in engine.merges] + core_merges
    reason = short_superwords
    if reason is None and not auto and prune_freq > 1 and min_freq <= 1:
        # A prune_freq given: the merges may have run out because of it, not of the text.
        reason = (f"no pair of units is left to merge among the syllables seen {prune_freq:,} times or more "
                  f"(prune_freq; rarer ones are not merged). To reach {vocab_size:,}, lower prune_freq "
                  "(--prune-freq) or train on more text")
    warn_short_vocabulary(len(vocab), vocab_size, min_freq=min_freq, reason=reason)
    return VocabFile(vocab=vocab, merges=merges, syllable_merges=build, superword_merges=superword_merges,
                     script=script, special_tokens=tuple(special_tokens), prune_freq=prune_freq,
                     min_freq=min_freq, merge_scope=merge_scope, prefix_space=prefix_space,
                     split_punctuation=splitter.split_punctuation)


def _complete(build, support, symbols, index, characters, syllable_freq, splitter, *, spare: int, say):
    """``(build, support)`` with the best unseen syllables (:mod:`wwho.sgpe.completion`) added to
    the support tokens, and their building merges, in at most ``spare`` more ids."""
    if spare <= 0:
        return build, support
    scripts = scripts_present(splitter.scripts, syllable_freq)
    letters = schema_characters(scripts)
    bare: Counter[str] = Counter()
    for syllable, n in syllable_freq.items():
        bare[syllable.lstrip(" ")] += n
    schemas = [(name, bundled_schema(name)) for name in scripts]

    def letter_class(c: str) -> object:
        return next(((name, label) for name, schema in schemas if (label := schema.classify(c)) != OTHER), c)

    candidates = unseen_syllables(bare, in_script=lambda s: all(c in letters for c in s),
                                  is_syllable=lambda s: splitter.syllables(s) == [s], limit=spare,
                                  letter_class=letter_class)
    known = set(index) | set(support)
    candidates = [c for c in candidates if c not in known]
    # Each candidate takes its own id and any building piece it needs: fewer candidates until
    # they fit (the pieces are shared, so a prefix of the list needs no more than all of it).
    while candidates:
        new_build, pieces = building_merges([*symbols, *candidates])
        new_support = sorted((set(pieces) | characters | set(candidates)) - set(index), key=lambda t: (len(t), t))
        over = len(new_support) - len(support) - spare
        if over <= 0:
            say(f"completed {len(candidates):,} syllables the training text lacks "
                f"({len(new_support) - len(support):,} ids)")
            return new_build, new_support
        candidates = candidates[: len(candidates) - over]
    return build, support


def schema_characters(scripts: tuple[str, ...]) -> set[str]:
    """Every character the schemas of ``scripts`` list in their ``char_classes`` (not those a
    Unicode property adds, such as other scripts' marks), but those of a block the schema marks
    ``extension`` (Devanagari's Vedic and Extended blocks): a text of another domain than the
    training text has letters and dandas the training text lacks, not those, and each would take an
    id from the last merges."""
    return {chr(cp) for name in scripts for cp in bundled_schema(name).common_listed() if not 0xD800 <= cp < 0xE000}


def scripts_present(scripts: tuple[str, ...], syllable_freq: dict[str, int]) -> tuple[str, ...]:
    """The ``scripts`` whose own blocks (where the router starts their runs) start at least
    :data:`MIN_SCRIPT_SHARE` of the syllables that start with a letter or a mark (a danda, which
    several scripts share, is no letter)."""
    if len(scripts) == 1:
        return scripts if syllable_freq else ()
    blocks = [(name, script_sets(name)[0]) for name in scripts]
    counts = dict.fromkeys(scripts, 0)
    for syllable, n in syllable_freq.items():
        first = syllable.lstrip(" ")[:1]
        if first and letter_count(first):
            name = next((name for name, block in blocks if ord(first) in block), None)
            if name is not None:
                counts[name] += n
    total = sum(counts.values())
    return tuple(name for name in scripts if counts[name] and counts[name] >= MIN_SCRIPT_SHARE * total)


def _check_script(scripts: tuple[str, ...], boundary: dict[str, int], syllables: dict[str, int], *,
                  mode: str | None = None) -> None:
    """Warn when most of the corpus is not in the chosen script(s): its text then becomes boundary
    tokens and bytes, and no syllable-aware merges are learned for it (see :mod:`wwho.scriptcheck`).
    ``boundary``: every boundary token's occurrences, lone or inside a span."""
    # A syllable holds letters of the chosen scripts, or a cluster of another script kept whole (every
    # bundled schema but Sinhala's keeps them): only the letters in the chosen scripts' blocks count.
    own = sum(block_letter_count(s, scripts) * n for s, n in syllables.items())
    total = sum(letter_count(s) * n for s, n in syllables.items()) + sum(letter_count(t) * n
                                                                         for t, n in boundary.items())
    if 2 * own >= total:
        # Half of all letters at least are the chosen scripts': no warning, and no need for the
        # router of every script (each is costly to build).
        return
    letters = letters_by_script(boundary.items())
    letters.update(letters_by_script(syllables.items()))
    warn_if_other_script(letters, scripts, what="the corpus", option="--script / script=", mode=mode)


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


def _fingerprint(engine_arrays, symbols, *options) -> tuple[str, str]:
    """sha256 of the engine's input and the options, which decides that a checkpoint resumes the same
    training, and sha256 of the input alone, which only tells a changed corpus from changed options.

    ``engine_arrays``: the word lengths, the words' symbol ids and the counts, as native int64
    arrays (``array("q", ...).tobytes()`` of each, as earlier versions hashed them).
    """
    h, inputs = hashlib.sha256(), hashlib.sha256()
    h.update(json.dumps([symbols, list(options)], ensure_ascii=False).encode())
    inputs.update(json.dumps(symbols, ensure_ascii=False).encode())
    for data in engine_arrays:
        h.update(data)
        inputs.update(data)
    return h.hexdigest(), inputs.hexdigest()
