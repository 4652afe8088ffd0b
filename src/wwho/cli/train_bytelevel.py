"""``wwho train --kind bytelevel CORPUS... --out DIR``: train a byte-level BPE (tiktoken/GPT-2 style).

Writes DIR/ranks.tiktoken, DIR/merges.txt and DIR/bytelevel.json (``ByteBPE.load(DIR)``) and
DIR/tokenizer.json for Hugging Face ``tokenizers`` (not with ``--no-hf``; a ``--pattern`` that Hugging
Face's regex engine reads otherwise is refused before any work without it), as one save (all or
nothing). The work is done by ``wwho.bytelevel.train``.
"""

from __future__ import annotations

import argparse
import sys
import time

from wwho.bytelevel import ByteBPE
from wwho.bytelevel.portable import hf_pattern
from wwho.bytelevel.train import smallest_vocab_size, training_pretokenizer
from wwho.cli.counter import add_balance_argument, add_engine_arguments, check_balance, engine_options
from wwho.cli.options import output_path, path_argument, strict, text_field
from wwho.cli.outputs import BYTELEVEL_FILES, add_force, check_output_dir, written_since
from wwho.cli.train_sgpe import LINE_BYTES, LINE_HELP, VOCAB_SIZE, WORKERS, count_arg
from wwho.corpus import MAX_LINE_BYTES, CorpusStats
from wwho.errors import VocabError, WwhoError, printable
from wwho.notices import plural
from wwho.savedir import check_target


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wwho train --kind bytelevel",
                                description="Train a byte-level BPE vocabulary (GPT-2 / tiktoken style).")
    p.add_argument("--kind", help=argparse.SUPPRESS)
    p.add_argument("corpus", nargs="+", type=path_argument, help="text or JSONL files (.gz/.xz/.bz2 too), directories or globs")
    p.add_argument("--out", "-o", "--output", dest="out", required=True, type=output_path,
                   help="output directory; if it already holds a byte-level tokenizer, --force is needed")
    add_force(p)
    p.add_argument("--vocab-size", type=VOCAB_SIZE, default=32_000,
                   help="total vocabulary size: 256 bytes + merges + special tokens, up to 16,777,216; 8k is 8,192 (default 32000)")
    p.add_argument("--pattern", default="gpt4",
                   help="pre-tokenizer: gpt2, gpt4 (cl100k), o200k, or a regex (default gpt4)")
    p.add_argument("--no-hf", dest="hf", action="store_false",
                   help="write wwho's files only, no Hugging Face tokenizer.json (for a --pattern that Hugging "
                        "Face's regex engine reads otherwise, which is refused without it)")
    p.add_argument("--special", action="append", default=[], metavar="TOKEN",
                   help="a special token (repeat for several); never merged, ids after the merged tokens")
    p.add_argument("--min-freq", "--min-frequency", dest="min_freq", type=count_arg("--min-freq", 1), default=2,
                   help="stop when the best pair is rarer than this (default 2)")
    p.add_argument("--workers", type=WORKERS, default=None, help="counting threads, 1-1024 (default: all cores)")
    p.add_argument("--text-field", default=None,
                   help="JSONL field holding the text (default 'text'); given, every corpus file must be "
                        "JSONL by its name (.jsonl, .ndjson)")
    p.add_argument("--skip-bad-lines", action="store_true",
                   help="count and skip malformed lines instead of failing")
    p.add_argument("--max-line-bytes", type=LINE_BYTES, default=MAX_LINE_BYTES, metavar="BYTES", help=LINE_HELP)
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars")
    add_balance_argument(p)
    add_engine_arguments(p)
    return strict(p)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    check_balance(args)
    args.text_field = text_field(args.text_field, args.corpus)
    for token in args.special:  # as train --kind sgpe refuses them (the API takes a repeat once)
        if args.special.count(token) > 1:
            raise WwhoError(f"--special {token}: given twice")
    smallest = smallest_vocab_size(args.special)  # (said now, of the flag: the API names vocab_size)
    if args.vocab_size < smallest:
        held = "256 byte tokens" + (f" and {plural(smallest - 256, 'special token')}" if smallest > 256 else "")
        raise WwhoError(f"--vocab-size {args.vocab_size:,} is too small: a byte-level vocabulary holds its "
                        f"{held}, so at least {smallest:,}")
    out = check_target(args.out)
    from wwho.sgpe import checkpoints

    checkpoints.refuse_as_output(out)  # an SGPE training's kept --checkpoint-dir: it could not resume after
    check_output_dir(out, BYTELEVEL_FILES, force=args.force)
    pre = training_pretokenizer(args.pattern)  # a regex training refuses (one of the empty string) first
    if args.hf:  # before any work: the tokenizer.json written at the end must encode as wwho does
        for pattern in pre.patterns:
            try:
                hf_pattern(pattern)
            except VocabError as exc:
                raise WwhoError(f"--pattern: {str(exc).removeprefix('cannot export: ')}; pass --no-hf to write "
                                "wwho's files only") from None
    stats = CorpusStats()
    t0 = time.perf_counter()
    tok = ByteBPE.train(
        args.corpus,
        vocab_size=args.vocab_size,
        pattern=args.pattern,
        special_tokens=args.special,
        min_freq=args.min_freq,
        workers=args.workers,
        progress=not args.quiet,
        text_field=args.text_field,
        skip_bad_lines=args.skip_bad_lines,
        stats=stats,
        max_line_bytes=args.max_line_bytes,
        balance=args.balance,
        balance_seed=args.balance_seed,
        **engine_options(args),
    )
    seconds = time.perf_counter() - t0
    if not args.force and (refused := written_since(out, BYTELEVEL_FILES)):
        raise refused
    out = tok.save(out, hf=args.hf)
    print(f"wrote {printable(str(out))} ({tok.vocab_size:,} tokens, {len(tok.merges or ()):,} merges) in {seconds:.1f}s; "
          f"{plural(stats.documents, 'document')} from {plural(stats.files, 'file')}"
          + (f", {stats.bad_lines} bad lines skipped" if stats.bad_lines else ""), file=sys.stderr)
    return 0
