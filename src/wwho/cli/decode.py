"""``wwho decode --tokenizer PATH ID... | -``: ids back to text (``--binary``: to bytes).

With ``-`` the ids are read from standard input, one sequence per line (space or comma
separated, or the JSON printed by ``wwho encode --json``).
"""

from __future__ import annotations

import argparse
import sys

from wwho.cli.binary import parse_ids
from wwho.cli.encode import use_tiktoken_file
from wwho.loading import detect_kind, load_tokenizer


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", required=True, help="vocab.json, a tokenizer directory, tokenizer.json, .gguf or .tiktoken")
    p.add_argument("--tiktoken-file", help="tiktoken ranks file for a meta tokenizer when offline")
    from wwho.cli import binary

    binary.add_decode_arguments(p)


def run(args: argparse.Namespace) -> int:
    if args.binary or detect_kind(args.tokenizer) == "binary":
        from wwho.cli import binary

        return binary.run_decode(args)
    use_tiktoken_file(args)
    tok = load_tokenizer(args.tokenizer)
    if args.ids == ["-"]:
        for n, line in enumerate(sys.stdin, start=1):
            if line.strip():
                print(tok.decode(parse_ids(line, where=f"stdin:{n}")))
    else:
        print(tok.decode(parse_ids(" ".join(args.ids), where="arguments")))
    return 0
