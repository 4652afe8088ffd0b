"""``wwho encode --tokenizer PATH [--ids | --tokens | --json] [TEXT | -]`` (and ``--binary FILE``).

Text comes from the argument or, with ``-`` (the default), from standard input, one
document per line. The tokenizer kind is detected from PATH (see :mod:`wwho.loading`).
"""

from __future__ import annotations

import argparse
import json
import sys

from wwho.loading import detect_kind, load_tokenizer


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", required=True, help="vocab.json, a tokenizer directory, tokenizer.json, .gguf or .tiktoken")
    p.add_argument("input", nargs="?", default="-", help="text to encode, or - (default) to read lines from standard input; "
                   "with --binary: a file")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--ids", dest="show", action="store_const", const="ids", help="print ids (default)")
    out.add_argument("--tokens", dest="show", action="store_const", const="tokens", help="print tokens separated by ' | '")
    out.add_argument("--json", dest="show", action="store_const", const="json", help="print {ids, tokens} as JSON")
    from wwho.cli import binary

    binary.add_encode_arguments(p)


def run(args: argparse.Namespace) -> int:
    if args.binary or detect_kind(args.tokenizer) == "binary":
        from wwho.cli import binary

        return binary.run_encode(args)
    tok = load_tokenizer(args.tokenizer)
    lines = (line.rstrip("\n") for line in sys.stdin) if args.input == "-" else [args.input]
    show = args.show or "ids"
    for line in lines:
        ids = tok.encode(line)
        if show == "ids":
            print(" ".join(map(str, ids)))
            continue
        tokens = tok.tokenize(line) if hasattr(tok, "tokenize") else [tok.decode([i]) for i in ids]
        if show == "tokens":
            print(" | ".join(tokens))
        else:
            print(json.dumps({"ids": ids, "tokens": tokens}, ensure_ascii=False))
    return 0
