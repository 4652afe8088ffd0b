"""``wwho train --kind sgpe --script S --vocab-size N --out DIR CORPUS... [--meta]``.

With ``--meta`` the vocabulary is the SGPE part of a WWHO meta tokenizer (tiktoken +
SGPE, :mod:`wwho.meta`): only the Indic runs of the corpus are counted (tiktoken encodes
everything else), and ``meta_config.json`` and ``tokenizer_meta.json`` are written next
to ``vocab.json`` (:mod:`wwho.export.meta_files`; no ``tokenizer.json`` for the SGPE part).

Checkpoints go to ``OUT/checkpoints`` (removed after a successful run, with only the files
wwho wrote in it) or to ``--checkpoint-dir`` (kept). A checkpoint directory that is a
symbolic link or holds other files is refused before training starts
(:mod:`wwho.sgpe.checkpoints`), and so is one that another training is using: the run holds its
lock until its checkpoints are removed. An ``--out`` that is a checkpoint folder (a kept
``--checkpoint-dir`` of an earlier run), or lies inside one, is refused too: the model written there
would keep that training from resuming. An output that another run wrote into ``--out`` while
this one trained is not replaced without ``--force`` either.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from wwho.cli.counter import add_balance_argument, add_engine_arguments, check_balance, engine_options
from wwho.cli.options import output_path, path_argument, strict, text_field
from wwho.cli.outputs import META_FILES, SGPE_FILES, add_force, check_output_dir, written_since
from wwho.corpus import MAX_LINE_BYTES, CorpusStats
from wwho.corpus_files import resolve_paths
from wwho.errors import WwhoError, WwhoWarning, printable
from wwho.notices import plural, warn
from wwho.sgpe import SGPETokenizer
from wwho.sgpe.scopes import MERGE_SCOPES
from wwho.sgpe.train_options import smallest_vocab_size
from wwho.sgpe.vocabfile import BYTE_TOKENS, SPECIAL_TOKENS
from wwho.sgpe.words import SCRIPT_MODES
from wwho.sizes import COUNT_EXAMPLE, MAX_COUNT, arg_type, check_range, check_vocab_size, check_workers


def count_arg(flag: str, low: int) -> object:
    """An argparse type: ASCII digits, from ``low`` to 2**63 - 1."""
    return arg_type(lambda v, w: check_range(v, w, low, MAX_COUNT), flag)


VOCAB_SIZE = arg_type(check_vocab_size, "--vocab-size", size=True, example=COUNT_EXAMPLE)  # 32k, as binary takes it
WORKERS = arg_type(check_workers, "--workers")
LINE_BYTES = arg_type(lambda v, w: check_range(v, w, 1, 2**40), "--max-line-bytes", size=True)
LINE_HELP = (f"longest corpus line in bytes, its line end included, k/M/G suffixes allowed (default "
             f"{MAX_LINE_BYTES >> 20}M); a longer line is an error, or skipped with --skip-bad-lines")


_PRUNE_COUNT = count_arg("--prune-freq", 1)


def _prune_freq(value: str) -> int | str:
    if value == "auto":
        return value
    return _PRUNE_COUNT(value)


def _share(value: str) -> float:
    try:
        share = float(value)
    except ValueError:
        share = -1.0
    if not 0 <= share < 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), not {value!r}")
    return share


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wwho train --kind sgpe",
                                description="Train a syllable-aware BPE (SGPE) vocabulary.")
    p.add_argument("--kind", default="sgpe", help=argparse.SUPPRESS)
    p.add_argument("corpus", nargs="+", type=path_argument, help="text or JSONL files (.gz/.xz/.bz2 too), directories or globs")
    p.add_argument("--out", "-o", "--output", dest="out", required=True, type=output_path,
                   help="output directory: vocab.json and the Hugging Face files, written all at once; if it "
                        "already holds them, --force is needed to replace them (other files stay)")
    add_force(p)
    p.add_argument("--script", default="sinhala", choices=SCRIPT_MODES, metavar="SCRIPT",
                   help=f"script mode: {', '.join(SCRIPT_MODES)} (mixed: sinhala + devanagari; indic: all ten "
                   "scripts, each run syllabified by its own schema; default sinhala)")
    p.add_argument("--vocab-size", type=VOCAB_SIZE, default=32_000,
                   help="total vocabulary size, up to 16,777,216; 8k is 8,192 (default 32000)")
    p.add_argument("--min-freq", "--min-frequency", dest="min_freq", type=count_arg("--min-freq", 1), default=1,
                   help="stop when the best pair is rarer than this (default 1)")
    p.add_argument("--prune-freq", type=_prune_freq, default="auto", metavar="auto|N",
                   help="syllables rarer than N are left to characters and byte fallback; 'auto' (default): "
                        "those rarer than half the last merge the budget pays for")
    p.add_argument("--merge-scope", choices=MERGE_SCOPES, default="pieces",
                   help="where merges may join units: 'pieces' (default) a whole whitespace-free chunk, "
                        "punctuation included; 'runs' a word of syllables, or a run of digits, letters and "
                        "punctuation, apart; 'words' words of syllables only, as the original SGPE")
    p.add_argument("--superwords", type=_share, default=0.15, metavar="SHARE",
                   help="share of the vocabulary learned last as superword merges, across the spaces of a sentence "
                        "(default 0.15; 0 turns them off)")
    p.add_argument("--superwords-any-piece", dest="superword_letters", action="store_false",
                   help="let a superword join a piece that holds no letter (punctuation, digits or symbols after "
                        "a space, such as a danda set apart in verse) to the word before it; by default a "
                        "superword joins only pieces that hold a letter")
    add_balance_argument(p)
    p.add_argument("--script-characters", dest="script_characters", action="store_true", default=True,
                   help="with --prune-freq auto, give every character the script's schema lists a token, seen in "
                        "training or not, so that none falls back to its UTF-8 bytes (the default; a block the "
                        "schema marks as an extension, such as Vedic Extensions, only where the training text "
                        "has it)")
    p.add_argument("--no-script-characters", dest="script_characters", action="store_false",
                   help="only the characters of the training text get tokens")
    p.add_argument("--no-bare-syllables", dest="bare_syllables", action="store_false",
                   help="do not give the bare form of a syllable the text has only after a space a token of its "
                        "own; by default it gets one, so that the same syllable inside a word is never cut")
    p.add_argument("--no-complete-syllables", dest="complete_syllables", action="store_false",
                   help="where the merges run out before --vocab-size (a small corpus), leave the ids unused; by "
                        "default (with --prune-freq auto) they go to syllables the training text lacks but whose "
                        "onset and vowel signs it has")
    p.add_argument("--no-complete-words", dest="complete_words", action="store_false",
                   help="where the merges run out before --vocab-size, do not give the ids left first to the words "
                        "the text holds only with punctuation attached (scope pieces); by default those words "
                        "are made whole, each as one token when it stands alone")
    p.add_argument("--no-complete-endings", dest="complete_endings", action="store_false",
                   help="where the merges run out before --vocab-size, do not give the ids left to word endings "
                        "(BPE over the endings of the training words, after their first syllable); by default "
                        "they get the ids the punctuated words leave, before unseen syllables")
    p.add_argument("--no-complete-superwords", dest="complete_superwords", action="store_false",
                   help="with superwords, do not give the ids every other stage leaves (a small corpus) to "
                        "superwords of a word's ending (or the word) and the next word or its first syllables; by default "
                        "they get them")
    p.add_argument("--prefix-space", action="store_true",
                   help="encode every text as if a space came before it (SentencePiece's dummy prefix; "
                        "decode drops it): fewer tokens for text-initial words; not with --meta")
    p.add_argument("--split-punctuation", action="store_true",
                   help="the script's own punctuation (the dandas) ends a word, as Latin punctuation does, so "
                        "that with --merge-scope words or runs no token joins a word and its danda")
    p.add_argument("--special", action="append", default=None, metavar="TOKEN",
                   help="a special token (repeat for several): the vocabulary's special tokens are then the ones "
                        f"given, in that order, ids from 0 (default: {' '.join(SPECIAL_TOKENS)})")
    p.add_argument("--workers", type=WORKERS, default=None, help="counting threads, 1-1024 (default: all cores)")
    p.add_argument("--text-field", default=None,
                   help="JSONL field holding the text (default 'text'); given, every corpus file must be "
                        "JSONL by its name (.jsonl, .ndjson)")
    p.add_argument("--skip-bad-lines", action="store_true", help="count and skip malformed lines instead of failing")
    p.add_argument("--max-line-bytes", type=LINE_BYTES, default=MAX_LINE_BYTES, metavar="BYTES", help=LINE_HELP)
    p.add_argument("--checkpoint-every", type=count_arg("--checkpoint-every", 0), default=20_000,
                   help="merges between checkpoints (default 20000; 0: no checkpoints); once the merges so far are "
                        "ten times that, a tenth of them, so that writing checkpoints stays a small share of the "
                        "training. One is also written when the merges end (in OUT/checkpoints only after as many merges)")
    p.add_argument("--checkpoint-dir", metavar="DIR",
                   help="where checkpoints go (default: OUT/checkpoints, created by wwho and removed after success; "
                        "a given DIR is kept). Must be a real directory holding nothing but wwho's checkpoint files")
    p.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
    p.add_argument("--no-verify", action="store_true", help="skip the check that the Hugging Face export matches "
                   "(with --meta: that the meta tokenizer round-trips the corpus)")
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars")
    add_engine_arguments(p)
    meta = p.add_argument_group("meta tokenizer (tiktoken + SGPE in one id space)")
    meta.add_argument("--meta", action="store_true",
                      help="train the SGPE part of a meta tokenizer on the Indic runs only and write meta_config.json")
    meta.add_argument("--tiktoken-encoding", default="o200k_base", metavar="NAME",
                      help="the tiktoken encoding of the meta tokenizer (default o200k_base)")
    meta.add_argument("--tiktoken-file", metavar="PATH",
                      help="its ranks file, for offline use (or set WWHO_TIKTOKEN_FILE, or tiktoken's TIKTOKEN_CACHE_DIR)")
    return strict(p)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    check_balance(args)
    args.text_field = text_field(args.text_field, args.corpus)
    from wwho.save_recovery import recover
    from wwho.savedir import check_target
    from wwho.sgpe import checkpoints

    specials = args.special = _special_tokens(args.special)  # (checked once, before anything is read)
    smallest = smallest_vocab_size(specials)  # (said now, of the flag: the API names vocab_size)
    if args.vocab_size < smallest:
        raise WwhoError(f"--vocab-size {args.vocab_size:,} is too small: an SGPE vocabulary holds its "
                        f"{plural(len(specials), 'special token')} and {len(BYTE_TOKENS)} byte tokens, so at least {smallest:,}")
    out = check_target(args.out)
    encoding = None
    if args.meta and args.prefix_space:  # (the API's own message names its arguments, not these flags)
        raise WwhoError("--prefix-space cannot be used with --meta: the dummy space would be added to every "
                        "Indic run of the meta tokenizer")
    if args.meta:  # load tiktoken before training: a missing ranks file should fail now, not after it
        from wwho.meta_tiktoken import resolve_encoding

        encoding = resolve_encoding(args.tiktoken_encoding, tiktoken_file=args.tiktoken_file)
        both = [s for s in specials if s in _names_of_specials(encoding)]
        if both:  # the meta tokenizer refuses them, once the training is done
            raise WwhoError(f"--special {both[0]}: {args.tiktoken_encoding} has this special token already; the meta "
                            "tokenizer has it (and gives its id), so leave it out")
    elif args.tiktoken_file or args.tiktoken_encoding != "o200k_base":
        raise WwhoError("--tiktoken-file and --tiktoken-encoding are options of --meta")
    resolve_paths(args.corpus)  # a missing corpus fails now, before a checkpoint folder or a word about one
    if args.checkpoint_dir and Path(args.checkpoint_dir).resolve() in (Path(out).resolve(),
                                                                       *Path(out).resolve().parents):
        # the model's files would make every later run refuse the folder
        raise WwhoError("--checkpoint-dir must be a folder of its own, not the output directory "
                        f"({out}) or a folder above it; leave it out to keep checkpoints in {out / 'checkpoints'}")
    checkpoints.refuse_as_output(out)  # and the other way round: a kept --checkpoint-dir of an earlier run
    recover(out)  # a save killed earlier may have left your files beside OUT: put them back first
    check_output_dir(out, META_FILES if args.meta else SGPE_FILES, force=args.force)
    # A run of fewer merges than --checkpoint-every (seconds of work) keeps no checkpoint in OUT unless
    # resuming; with --checkpoint-dir, one is written when the merges end as the API writes it.
    short = args.checkpoint_every >= args.vocab_size
    if not args.checkpoint_dir and short and not args.resume:
        args.checkpoint_every = 0
    default_dir = out / "checkpoints"
    if (args.checkpoint_every == 0 and not args.resume and not args.checkpoint_dir
            and not checkpoints.is_checkpoint_folder(default_dir)):
        # No checkpoint is written or read: a folder of that name in OUT is the user's (a model
        # folder's checkpoints/ is common), not to be checked, locked or emptied.
        return _train_and_finish(args, out, encoding, None)
    checkpoint_dir = checkpoints.claim(args.checkpoint_dir or default_dir)
    if not args.resume and not args.force and os.path.lexists(checkpoint_dir / checkpoints.FILE):
        # An earlier training's work (killed, or kept with --checkpoint-dir): a run without --resume
        # must not replace it in silence, where a forgotten flag would throw that work away.
        raise WwhoError(f"{checkpoint_dir / checkpoints.FILE}: an earlier training's checkpoint is there: "
                        "pass --resume to continue from it, or --force to start over (it is replaced)")
    # Said whenever a checkpoint will be written: a Ctrl-C then leaves it behind.
    if not args.quiet and args.checkpoint_every > 0:
        fate = "kept" if args.checkpoint_dir else "removed after success"
        when = "when the merges end" if short else f"every {args.checkpoint_every:,} merges and when they end"
        print(f"checkpoints: {checkpoint_dir / checkpoints.FILE} {when} ({fate}; --resume continues from it)",
              file=sys.stderr)
    # Held from training to the removal of the checkpoints after the save: a second training into the
    # same OUT (or --checkpoint-dir) stops instead of overwriting this one's checkpoints or deleting them.
    with checkpoints.using(checkpoint_dir):
        return _train_and_finish(args, out, encoding, checkpoint_dir)


def _train_and_finish(args: argparse.Namespace, out, encoding, checkpoint_dir) -> int:
    """Train, save and report; ``checkpoint_dir`` None where no checkpoint is written or read."""
    stats = CorpusStats()
    t0 = time.perf_counter()
    tok = _train(args, checkpoint_dir, stats)
    return _finish(args, tok, out, encoding, checkpoint_dir, stats, time.perf_counter() - t0)


def _special_tokens(given: list[str] | None) -> tuple[str, ...]:
    """The special tokens ``--special`` names (the default ones without it), checked before anything
    is read: a token given twice, empty or the text of a byte token is refused naming the flag."""
    if given is None:
        return SPECIAL_TOKENS
    for token in given:
        if not token:
            raise WwhoError("--special: a special token is a non-empty string")
        if token in BYTE_TOKENS:
            raise WwhoError(f"--special {token}: this is the text of a byte token, which decodes to its byte")
        if given.count(token) > 1:
            raise WwhoError(f"--special {token}: given twice")
    return tuple(given)


def _names_of_specials(encoding) -> set[str]:
    """The special tokens' names of what ``resolve_encoding`` gives: a model, or a ``tiktoken.Encoding``."""
    names = getattr(encoding, "special_tokens", None)
    return set(names) if names is not None else set(encoding.special_tokens_set)


#: The training options a checkpoint is bound to, as this command's flags (for a refused resume):
#: the option -> (flag, the option's value when the flag is given; None for a flag with a value).
CHECKPOINT_FLAGS = {
    "script": ("--script", None), "min_freq": ("--min-freq", None), "prune_freq": ("--prune-freq", None),
    "vocab_size": ("--vocab-size", None), "segments_only": ("--meta", True), "merge_scope": ("--merge-scope", None),
    "prefix_space": ("--prefix-space", True), "superword_share": ("--superwords", None),
    "script_characters": ("--no-script-characters", False), "bare_syllables": ("--no-bare-syllables", False),
    "split_punctuation": ("--split-punctuation", True), "special_tokens": ("--special", None),
}


def _train(args: argparse.Namespace, checkpoint_dir, stats: CorpusStats) -> SGPETokenizer:
    from wwho.sgpe.checkpoints import OPTION_FLAGS

    spelled = OPTION_FLAGS.set(CHECKPOINT_FLAGS)
    try:
        return _train_with_flags(args, checkpoint_dir, stats)
    finally:
        OPTION_FLAGS.reset(spelled)


def _train_with_flags(args: argparse.Namespace, checkpoint_dir, stats: CorpusStats) -> SGPETokenizer:
    return SGPETokenizer.train(
        args.corpus,
        vocab_size=args.vocab_size,
        special_tokens=args.special,
        script=args.script,
        min_freq=args.min_freq,
        prune_freq=args.prune_freq,
        merge_scope=args.merge_scope,
        prefix_space=args.prefix_space,
        split_punctuation=args.split_punctuation,
        superword_share=args.superwords,
        superword_letters=args.superword_letters,
        script_characters=args.script_characters,
        bare_syllables=args.bare_syllables,
        complete_syllables=args.complete_syllables,
        complete_words=args.complete_words,
        complete_endings=args.complete_endings,
        complete_superwords=args.complete_superwords,
        balance=args.balance,
        balance_seed=args.balance_seed,
        workers=args.workers,
        checkpoint_dir=checkpoint_dir,
        checkpoint_every=args.checkpoint_every,
        resume=args.resume,
        progress=not args.quiet,
        text_field=args.text_field,
        skip_bad_lines=args.skip_bad_lines,
        stats=stats,
        segments_only=args.meta,
        max_line_bytes=args.max_line_bytes,
        overwrite_checkpoint=args.force,  # (refused above without --resume or --force)
        **engine_options(args),
    )


def _finish(args: argparse.Namespace, tok: SGPETokenizer, out, encoding, checkpoint_dir, stats: CorpusStats,
            seconds: float) -> int:
    from wwho.sgpe import checkpoints

    # (another run that wrote the same OUT, with another --checkpoint-dir)
    if not args.force and (refused := written_since(out, META_FILES if args.meta else SGPE_FILES)):
        kept = (f"; the last checkpoint is kept in {checkpoint_dir}: add --resume --force to save this training "
                "without training again") if checkpoint_dir and (checkpoint_dir / checkpoints.FILE).exists() else ""
        raise WwhoError(f"{refused}{kept}")
    if args.meta:
        from wwho.meta import MetaTokenizer

        meta = MetaTokenizer(tok, encoding)
        meta.save(out)
        path = out / "vocab.json"
        if (out / "tokenizer.json").exists():
            print(f"warning: {out / 'tokenizer.json'} is left from an earlier run; it is not this meta tokenizer "
                  "(use wwho.hf.WWHOTokenizer for transformers)", file=sys.stderr)
    elif args.no_verify:
        path = tok.save(out)
    else:  # saved and checked at once; a mismatch is raised below, once the save is reported
        from wwho.export.verify import save_verified

        report = save_verified(tok, out, args.corpus, text_field=args.text_field, progress=not args.quiet)
        path = out / "vocab.json"
    if checkpoint_dir and not args.checkpoint_dir:  # the default checkpoint folder is only for --resume of this run
        checkpoints.remove(checkpoint_dir)  # wwho's files only, then the folder if it is empty
    print(f"wrote {printable(str(path))} ({tok.vocab_size:,} tokens, {len(tok.merges):,} merges) in {seconds:.1f}s; "
          f"{plural(stats.documents, 'document')} from {plural(stats.files, 'file')}"
          + (f", {stats.bad_lines} bad lines skipped" if stats.bad_lines else ""), file=sys.stderr)
    if args.meta:
        print(f"wrote {printable(str(out / 'meta_config.json'))}: {meta.vocab_size:,} ids = {encoding.name} [0, {meta.offset:,}) "
              f"+ SGPE [{meta.offset:,}, {meta.vocab_size:,})", file=sys.stderr)
        return 0 if args.no_verify else _verify_meta(meta, args.corpus, args.text_field)
    if not args.no_verify:
        report.check(out / "tokenizer.json")
        note = report.special_text_note()
        if note:
            warn(note, WwhoWarning)
    return 0


def _verify_meta(meta, corpus, text_field: str, lines: int = 5000) -> int:
    """Decode(encode(line)) == line on the first ``lines`` documents of the corpus."""
    import itertools

    from wwho.corpus import iter_documents

    docs = itertools.islice(iter_documents(corpus, text_field=text_field, skip_bad_lines=True), lines)
    checked = 0
    for doc in docs:
        checked += 1
        if meta.decode(meta.encode_ordinary(doc)) != doc:
            print(f"meta tokenizer does NOT round-trip document {checked}: {doc[:80]!r}", file=sys.stderr)
            return 1
    print(f"meta tokenizer round-trips the first {checked:,} documents of the corpus", file=sys.stderr)
    return 0
