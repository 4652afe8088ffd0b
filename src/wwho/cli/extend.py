"""``wwho extend``: add syllable tokens of Indic scripts to an existing byte-level BPE tokenizer.

    wwho extend --base BASE --corpus FILE... --add N --script S [--script S2] -o DIR

Writes DIR/tokenizer.json (+ tokenizer_config.json, special_tokens_map.json, wwho_extend.json):
a standard Hugging Face tokenizer that keeps every base id. The work is :func:`wwho.extend.extend_tokenizer`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from wwho.corpus import CorpusStats
from wwho.errors import WwhoError
from wwho.extend import extend_tokenizer
from wwho.extend.files import check_target
from wwho.extend.scripts import parse_scripts


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
        help="text or JSONL files (.gz/.xz/.bz2 too), directories or globs",
    )
    p.add_argument(
        "--add",
        type=int,
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
    p.add_argument("-o", "--out", required=True,
                   help="output directory (created; if it holds a tokenizer already, see --force)")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the tokenizer files in OUT if it already holds some (your other files stay)",
    )
    p.add_argument(
        "--min-syllable-freq",
        type=int,
        default=None,
        metavar="K",
        help="know (build whole) every syllable seen K times, as far as --syllable-share allows "
        "(default: auto, a syllable is built if it saves as many tokens as the last merge)",
    )
    p.add_argument(
        "--syllable-share",
        type=float,
        default=0.5,
        metavar="F",
        help="at most this share of N for characters and syllables (default 0.5)",
    )
    p.add_argument(
        "--min-freq",
        type=int,
        default=2,
        help="stop learning merges when the best pair is rarer than this (default 2)",
    )
    p.add_argument("--workers", type=int, default=None, help="counting processes (default: cores - 1)")
    p.add_argument("--text-field", default="text", help="JSONL field holding the text (default 'text')")
    p.add_argument(
        "--skip-bad-lines", action="store_true", help="count and skip malformed lines instead of failing"
    )
    p.add_argument(
        "--tiktoken-file",
        default=None,
        help="the .tiktoken ranks file for tiktoken:NAME offline (or $WWHO_TIKTOKEN_FILE)",
    )
    p.add_argument(
        "--no-verify",
        action="store_true",
        help="skip the checks on the first 2,000 corpus lines (stock tokenizers, base ids, "
        "syllables, reachability) before writing",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    check_target(out, args.force)  # fail before the long work, not after it
    if args.add < 1:
        raise WwhoError(f"--add must be a positive number of tokens, not {args.add}")
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
        stats=stats,
        tiktoken_file=args.tiktoken_file,
        verify=not args.no_verify,
        progress=not args.quiet,
    )
    ext.save(out, force=args.force)
    s = ext.stats
    print(
        f"wrote {out}: {ext.base.name} ({ext.first_id:,} ids) + {ext.n_new:,} new tokens "
        f"(ids {ext.first_id:,}..{ext.first_id + ext.n_new - 1:,}) for {ext.scripts.label}; "
        f"{s.known_syllables:,} syllables known ({s.known_share:.2%} of the corpus's), "
        f"{s.learned_merges:,} merges learned; {stats.documents:,} documents from {stats.files} file(s) "
        f"in {time.perf_counter() - t0:.1f}s"
        + (f", {stats.bad_lines} bad lines skipped" if stats.bad_lines else ""),
        file=sys.stderr,
    )
    return 0
