"""``wwho inspect PATH``: what a tokenizer file holds (kind, sizes, specials, merges, longest tokens).

It only reads and prints: it writes no file, changes nothing, and encodes no text (``wwho encode``
and ``wwho eval`` do).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wwho.cli.encode import PATTERN_HELP, TIKTOKEN_FILE_HELP, use_tiktoken_file
from wwho.cli.options import path_argument
from wwho.cli.outputs import printing, require_stdout
from wwho.loading import detect_kind, load_tokenizer


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", type=path_argument, help="vocab.json, a tokenizer directory, tokenizer.json, .gguf, .tiktoken, or a known "
                   "encoding: o200k_base (also spelled tiktoken:o200k_base)")
    p.add_argument("--top", type=_top, default=10, help="how many merges and long tokens to show (default 10)")
    p.add_argument("--tiktoken-file", metavar="PATH", help=TIKTOKEN_FILE_HELP)
    p.add_argument("--pattern", metavar="NAME|REGEX", help=PATTERN_HELP)


def run(args: argparse.Namespace) -> int:
    require_stdout()  # closed: said before the tokenizer is loaded
    use_tiktoken_file(args)
    kind = detect_kind(args.path)
    if kind == "binary":
        from wwho.cli.binary import inspect_tokenizer

        text = inspect_tokenizer(args.path, top=args.top)
    else:
        tok = load_tokenizer(args.path, kind=kind, pattern=args.pattern)
        if hasattr(tok, "describe"):
            text = tok.describe(top=args.top)
        else:
            text = f"{args.path}: {kind} tokenizer, vocabulary size {tok.vocab_size:,}"
        if (Path(args.path) / "wwho_extend.json").is_file():
            from wwho.extend.files import describe_record, read_record

            text = describe_record(read_record(args.path)) + "\n" + text
    with printing():
        print(text)
    return 0


def _top(value: str) -> int:
    """``--top``: a count from 0 (-1 would slice off the last merge, not show none)."""
    if not value.isdigit() or len(value) > 9:
        raise argparse.ArgumentTypeError(f"--top must be a count from 0 to 999,999,999, not {value!r}")
    return int(value)
