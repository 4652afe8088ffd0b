"""``wwho extend``: add syllable tokens of Indic scripts to an existing byte-level BPE tokenizer.

    wwho extend --base BASE --corpus FILE... --add N --script S [--script S2] -o DIR [--force]

Writes DIR/tokenizer.json (+ tokenizer_config.json, special_tokens_map.json, wwho_extend.json):
a standard Hugging Face tokenizer that keeps every base id. The output is checked before any work
(:mod:`wwho.cli.outputs`: a directory already holding these files needs ``--force``), and so is the
base's pre-tokenizer (one that cannot be extended exactly is refused before the corpus is read).
The work is :func:`wwho.extend.extend_tokenizer`; this module parses options and prints a summary.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from wwho.cli.counter import add_balance_argument, check_balance
from wwho.cli.options import output_path, text_field
from wwho.cli.outputs import add_force, check_output_dir, refuse_output_among_inputs
from wwho.cli.train_sgpe import LINE_BYTES, LINE_HELP, WORKERS, count_arg
from wwho.corpus import MAX_LINE_BYTES, CorpusStats
from wwho.errors import printable
from wwho.manifest import MANIFEST
from wwho.savedir import check_target
from wwho.sizes import arg_type, check_range, check_vocab_size

#: extend_tokenizer's bound (``wwho.extend.extension.MAX_PAD_MULTIPLE``), repeated here: the parser of
#: every verb is built without importing wwho.extend (a test keeps the two equal).
MAX_PAD_MULTIPLE = 1 << 16
_SYLLABLE_COUNT = count_arg("--min-syllable-freq", 1)


def _min_syllable_freq(value: str) -> int | None:
    """An argparse type: ``auto`` (the default, which the help names) or a count."""
    return None if value == "auto" else _SYLLABLE_COUNT(value)


def _share(text: str) -> float:
    """An argparse type: a number in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}") from None
    if not 0 < value <= 1:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text!r}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base",
        required=True,
        help="the tokenizer to extend: a tokenizer.json (or its directory), a .gguf, a .tiktoken "
        "file, or tiktoken:NAME (e.g. tiktoken:o200k_base)",
    )
    p.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        metavar="FILE",
        help="text or JSONL files (.gz/.xz/.bz2 too), directories or globs (repeatable)",
    )
    p.add_argument(
        "--add",
        type=arg_type(check_vocab_size, "--add"),
        required=True,
        metavar="N",
        help="how many new tokens (ids) to add; every intermediate piece counts",
    )
    p.add_argument(
        "--script",
        action="append",
        required=True,
        metavar="S",
        help="a bundled script schema (sinhala, devanagari, ...) or a schema file; repeat or "
        "separate with commas for several scripts",
    )
    p.add_argument(
        "-o",
        "--out",
        "--output",
        dest="out",
        required=True,
        type=output_path,
        help="output directory (created; if it already holds these files, --force is needed; other files stay)",
    )
    add_force(p)
    p.add_argument(
        "--min-syllable-freq",
        type=_min_syllable_freq,
        default=None,
        metavar="auto|K",
        help="know (build whole) every syllable seen K times, as far as --syllable-share allows "
        "(default: auto, a syllable is built if it saves as many tokens as the last merge)",
    )
    p.add_argument(
        "--syllable-share",
        type=_share,
        default=0.5,
        metavar="F",
        help="at most this share of N for characters and syllables, in (0, 1] (default 0.5)",
    )
    p.add_argument(
        "--min-freq",
        type=count_arg("--min-freq", 1),
        default=2,
        help="stop learning merges when the best pair is rarer than this (default 2)",
    )
    p.add_argument("--workers", type=WORKERS, default=None, help="counting threads, 1-1024 (default: all cores)")
    p.add_argument("--text-field", default=None,
                   help="JSONL field holding the text (default 'text'); given, every corpus file must be "
                        "JSONL by its name (.jsonl, .ndjson)")
    p.add_argument(
        "--skip-bad-lines", action="store_true", help="count and skip malformed lines instead of failing"
    )
    p.add_argument("--max-line-bytes", type=LINE_BYTES, default=MAX_LINE_BYTES, metavar="BYTES", help=LINE_HELP)
    p.add_argument(
        "--tiktoken-file",
        default=None,
        help="the .tiktoken ranks file for tiktoken:NAME offline (or $WWHO_TIKTOKEN_FILE)",
    )
    p.add_argument(
        "--pattern",
        default=None,
        help="the pre-tokenizer of a .tiktoken BASE that is not a known encoding, or of a .gguf BASE without "
        "tokenizer.ggml.pre: a regex, or gpt2, gpt4, o200k (other bases carry their own)",
    )
    p.add_argument(
        "--no-verify",
        action="store_true",
        help="skip the checks on the first 2,000 corpus lines (at most 1M characters: stock tokenizers, "
        "base ids, syllables, reachability) before writing",
    )
    p.add_argument(
        "--pad-to-multiple-of",
        type=arg_type(lambda v, w: check_range(v, w, 1, MAX_PAD_MULTIPLE), "--pad-to-multiple-of"),
        default=None,
        metavar="M",
        help="add reserved tokens until the vocabulary is a multiple of M, 1 to 65,536 (64 or 128 suit GPU "
        "kernels); the base's id holes are always filled",
    )
    add_balance_argument(p)
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    from wwho.extend import extend_tokenizer  # here: `wwho --version` does without wwho.extend
    from wwho.extend.files import FILES
    from wwho.extend.scripts import parse_scripts

    # Fail before the long work, not after it.
    check_balance(args)
    args.text_field = text_field(args.text_field, args.corpus)
    if args.tiktoken_file is not None:
        from wwho.bytelevel.files import known_encoding_name
        from wwho.errors import WwhoError

        if known_encoding_name(args.base) is None:  # the base is a file of its own: it would be ignored
            raise WwhoError(f"--tiktoken-file is for a BASE named as a tiktoken encoding (tiktoken:NAME), "
                            f"not {args.base}, which is read from its own file")
    # The base's own folder, or a file the save would replace (a base or corpus file of those names
    # in -o), would be replaced by what is made from it, --force or not.
    refuse_output_among_inputs(args.out, [args.base], flag="-o/--out")
    for name in (*FILES, MANIFEST):
        refuse_output_among_inputs(os.path.join(args.out, name), [args.base, *args.corpus], flag="-o/--out")
    out = check_output_dir(check_target(args.out), (*FILES, MANIFEST), force=args.force)
    stats = CorpusStats()
    t0 = time.perf_counter()
    ext = extend_tokenizer(
        args.base,
        args.corpus,
        add=args.add,
        scripts=parse_scripts(args.script),
        min_syllable_freq=args.min_syllable_freq,
        syllable_share=args.syllable_share,
        min_freq=args.min_freq,
        workers=args.workers,
        text_field=args.text_field,
        skip_bad_lines=args.skip_bad_lines,
        max_line_bytes=args.max_line_bytes,
        stats=stats,
        tiktoken_file=args.tiktoken_file,
        pattern=args.pattern,
        verify=not args.no_verify,
        progress=not args.quiet,
        pad_to_multiple_of=args.pad_to_multiple_of,
        balance=args.balance,
        balance_seed=args.balance_seed,
    )
    ext.save(out, force=args.force)
    s = ext.stats
    print(
        f"wrote {printable(str(out))}: {ext.base.name} ({ext.first_id:,} ids) + {ext.n_new:,} new tokens "
        f"(ids {ext.first_id:,}..{ext.first_id + ext.n_new - 1:,}) for {ext.scripts.label}; "
        f"{s.known_syllables:,} syllables known ({s.known_share:.2%} of the corpus's), "
        f"{s.learned_merges:,} merges learned; {stats.documents:,} documents from {stats.files} file(s) "
        f"in {time.perf_counter() - t0:.1f}s"
        + (f", {stats.bad_lines} bad lines skipped" if stats.bad_lines else ""),
        file=sys.stderr,
    )
    reserved = f", {ext.n_reserved:,} of them reserved (ids the base has no token for, padding)" if ext.n_reserved \
        else ""
    print(f"vocabulary: {ext.embedding_rows:,} ids{reserved}: resize the model to {ext.embedding_rows:,} embedding "
          "rows (= len(tokenizer); init_embeddings returns them)", file=sys.stderr)
    return 0
