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
    p.add_argument("--tiktoken-file", help="tiktoken ranks file for a meta tokenizer when offline")
    p.add_argument("--allow-special", action="store_true",
                   help="encode special-token text (e.g. <|endoftext|>, [CLS]) as the special token")
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
    use_tiktoken_file(args)
    tok = load_tokenizer(args.tokenizer)
    lines = (line.rstrip("\n") for line in sys.stdin) if args.input == "-" else [args.input]
    show = args.show or "ids"
    for line in lines:
        ids = tok.encode(line, allowed_special="all") if args.allow_special else tok.encode(line)
        if show == "ids":
            print(" ".join(map(str, ids)))
            continue
        tokens = token_strings(tok, ids)
        if show == "tokens":
            print(" | ".join(tokens))
        else:
            print(json.dumps({"ids": ids, "tokens": tokens}, ensure_ascii=False))
    return 0


def use_tiktoken_file(args: argparse.Namespace) -> None:
    """``--tiktoken-file PATH`` is the same as ``WWHO_TIKTOKEN_FILE=PATH`` for this command."""
    if getattr(args, "tiktoken_file", None):
        import os

        os.environ["WWHO_TIKTOKEN_FILE"] = args.tiktoken_file


def token_strings(tok, ids: list[int]) -> list[str]:
    """How each id is shown: the vocabulary's token string where there is one, else its decoded text."""
    table = getattr(tok, "id_to_token", None)
    if isinstance(table, list):
        return [table[i] for i in ids]
    if callable(table):
        return [table(i) for i in ids]
    return [tok.decode([i]) for i in ids]
