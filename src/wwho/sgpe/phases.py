"""Phases 2 to 5 of SGPE training, on counted pieces whatever counted them: words, symbols,
merges (and superword merges), the vocabulary (:mod:`wwho.sgpe.train`'s docstring describes each).

:func:`train_on_pieces` takes a :class:`wwho._core.PieceCounter` (of a corpus, an iterator of
texts, piece counts, or Ray shards) and returns the :class:`~wwho.sgpe.vocabfile.VocabFile`. Phases
2 to 4 run in the compiled core; this module keeps their order, the id budget between them, the
stages that spend the ids the merges leave, and the messages of progress and shortfall.

It does not count corpora or check the options given (:mod:`wwho.sgpe.train` and
:mod:`wwho.sgpe.train_options` do), bind, replay or write checkpoints (:mod:`wwho.sgpe.checkpointing`),
or choose the scripts' extra characters and syllables (:mod:`wwho.sgpe.script_coverage`).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from wwho import _core
from wwho.background import Background
from wwho.bpe import MergeEngine
from wwho.corpus import CorpusStats
from wwho.errors import CorpusError, VocabError, VocabSizeWarning, WwhoWarning
from wwho.notices import plural, warn, warn_short_vocabulary
from wwho.sgpe import checkpoints
from wwho.sgpe.budget import auto_prune_freq, piece_needs
from wwho.sgpe.building import bare_forms, building_merges
from wwho.sgpe.checkpointing import (
    checkpoint_options,
    resume_from_checkpoint,
    train_with_checkpoints,
    training_fingerprint,
)
from wwho.sgpe.script_coverage import (
    MAX_SCRIPT_CHARACTERS_SHARE,
    add_unseen_syllables,
    check_script,
    schema_characters,
    scripts_present,
    smallest_taking,
)
from wwho.sgpe.spare import punctuated_words, word_endings
from wwho.sgpe.superwords import SuperwordStage, ending_superwords
from wwho.sgpe.vocabfile import BYTE_TOKENS, SPECIAL_TOKENS, VocabFile
from wwho.sgpe.words import WordSplitter


def train_on_pieces(pieces: _core.PieceCounter, *, checkpoint_dir: str | Path | None = None,
                    **options: Any) -> VocabFile:
    """Phases 2 to 5 on counted pieces (whatever counted them); the options as :func:`train_phases`.

    With ``checkpoint_dir``, this training holds the directory's lock until it returns
    (:func:`wwho.sgpe.checkpoints.using`): a second training using the same directory stops with
    an error instead of overwriting the checkpoints of the first."""
    if checkpoint_dir is None:
        return train_phases(pieces, **options)
    checkpoint_dir = checkpoints.claim(checkpoint_dir)  # refuse a link or a foreign folder
    with checkpoints.using(checkpoint_dir):
        return train_phases(pieces, checkpoint_dir=checkpoint_dir, **options)


def train_phases(
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
    check_script(splitter.scripts, boundary_occurrences, syllable_freq, mode=splitter.script)

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
        base = len(symbols) + len((set(pieces_needed) | characters) - set(index)) + fixed
        if len(extra) > vocab_size * MAX_SCRIPT_CHARACTERS_SHARE:
            skipped_characters = len(extra)
            say(f"note: the script's {len(extra):,} characters not in the training text would take more than "
                f"{MAX_SCRIPT_CHARACTERS_SHARE:.0%} of vocab_size={vocab_size:,}; they are left to byte fallback")
        elif extra and base + len(extra) > vocab_size:
            # Optional ids: never the reason a vocabulary is larger than asked.
            skipped_characters = len(extra)
            say(f"note: the script's {len(extra):,} characters not in the training text do not fit beside the "
                f"{base:,} base tokens in vocab_size={vocab_size:,}; they are left to byte fallback")
        else:
            characters |= extra
    support = sorted((set(pieces_needed) | characters) - set(index), key=lambda t: (len(t), t))
    max_symbols = vocab_size - superword_ids - fixed - len(support)
    need = len(symbols) + len(support) + fixed
    if need > vocab_size:  # never silent: an embedding table of vocab_size rows would overflow
        # From which size the schema's characters left out here join too: they must fit beside the
        # rest and take at most their share.
        joins = max(need + skipped_characters, smallest_taking(skipped_characters)) if skipped_characters else 0
        warn(
            f"the vocabulary has {need:,} tokens, more than the {vocab_size:,} asked: this corpus's "
            f"{len(symbols):,} base symbols, {len(support):,} building pieces and {fixed:,} special and byte "
            f"tokens do not fit in fewer, and no merge is learned. Use --vocab-size / vocab_size >= {need:,}"
            + (f" (from vocab_size {joins:,} on, the vocabulary also takes the script's {skipped_characters:,} "
               "characters the training text lacks, left out here)" if joins else "")
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
    options, named = checkpoint_options(script=script, min_freq=min_freq, prune_freq=prune_freq, auto=auto,
                                        vocab_size=vocab_size, segments_only=segments_only, merge_scope=merge_scope,
                                        prefix_space=prefix_space, superword_share=superword_share,
                                        script_characters=script_characters, bare_syllables=bare_syllables,
                                        split_punctuation=splitter.split_punctuation, special_tokens=special_tokens)
    fingerprint, input_sha256 = (("", "") if checkpoint_dir is None
                                 else training_fingerprint(engine_arrays, symbols, *options))
    del engine_arrays
    if resume:
        resume_from_checkpoint(engine, index, checkpoint_dir, fingerprint, options=named, input_sha256=input_sha256,
                               say=say)
    t1 = time.perf_counter()
    train_with_checkpoints(engine, max_symbols=max(max_symbols, len(engine.symbols)), min_freq=min_freq,
                           progress=progress, checkpoint_dir=checkpoint_dir, checkpoint_every=checkpoint_every,
                           fingerprint=fingerprint, options=named, input_sha256=input_sha256, started=t1)
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
            found = len(final.symbols) - len(engine.symbols)
            if min_freq > 1:  # the threshold may be what stopped both stages, not the share
                short_superwords = (
                    f"the syllable merges stopped at their share, and the superword stage found words joined "
                    f"{min_freq:,} times or more (--min-freq) for only {found:,} of the {superword_ids:,} ids kept "
                    f"for superwords (superword_share {superword_share:g}). To reach {vocab_size:,}, lower "
                    f"--min-freq (now {min_freq:,}) or train on more text")
            else:
                short_superwords = (
                    f"the syllable merges stopped at their share, and the superword stage found words to join for "
                    f"only {found:,} of the {superword_ids:,} ids kept for superwords (superword_share "
                    f"{superword_share:g}). A smaller share (--superwords) leaves more ids to the merges")
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
        build, support = add_unseen_syllables(build, support, built, index, characters, syllable_freq, splitter,
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
