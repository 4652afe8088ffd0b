"""``wwho encode --tokenizer PATH [--ids | --tokens | --json] [TEXT | - | --file FILE]`` (and ``--binary FILE``).

Text comes from the argument, from a file (``--file``), or with ``-`` (the default) from standard
input, one document per line. Lines are read in blocks (``--block-mb``), each block is encoded by
the tokenizer's ``encode_batch`` on ``--threads`` threads (default: all cores; byte-level and SGPE
tokenizers release the GIL), and the results are printed in input order, so memory stays bounded
by a couple of blocks whatever the input size. The tokenizer kind is detected from PATH (see
:mod:`wwho.loading`).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator

from wwho.errors import CorpusError
from wwho.loading import detect_kind, load_tokenizer


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", required=True, help="vocab.json, a tokenizer directory, tokenizer.json, .gguf or .tiktoken")
    p.add_argument("input", nargs="?", default="-", help="text to encode, or - (default) to read lines from standard input; "
                   "with --binary: a file")
    p.add_argument("--file", metavar="FILE", help="encode every line of FILE (UTF-8), in order")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for encoding (default: all cores; 1: no parallelism)")
    p.add_argument("--block-mb", type=float, default=4.0,
                   help="lines are encoded in blocks of about this many MB (default 4)")
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
    if args.threads is not None and args.threads < 1:
        raise CorpusError(f"--threads must be at least 1, not {args.threads}")
    if args.block_mb <= 0:
        raise CorpusError(f"--block-mb must be positive, not {args.block_mb}")
    if args.file and args.input != "-":
        raise CorpusError("give either TEXT or --file, not both")
    use_tiktoken_file(args)
    tok = load_tokenizer(args.tokenizer)
    encode_batch = batch_encoder(tok, allow_special=args.allow_special, threads=args.threads)
    show = args.show or "ids"
    out = sys.stdout
    for block in _blocks(_lines(args), int(args.block_mb * 1e6)):
        results = encode_batch(block)
        if show == "ids":
            out.write("".join(" ".join(map(str, ids)) + "\n" for ids in results))
            continue
        for ids in results:
            tokens = token_strings(tok, ids)
            if show == "tokens":
                out.write(" | ".join(tokens) + "\n")
            else:
                out.write(json.dumps({"ids": ids, "tokens": tokens}, ensure_ascii=False) + "\n")
    out.flush()
    return 0


def _lines(args: argparse.Namespace) -> Iterator[str]:
    if args.file:
        n = 0
        try:
            with open(args.file, encoding="utf-8", newline="") as f:
                for n, line in enumerate(f, 1):
                    yield line.rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{args.file}: line {n + 1}: not UTF-8 ({exc.reason})") from None
        except OSError as exc:
            raise CorpusError(f"{args.file}: cannot read: {exc.strerror or exc}") from None
    elif args.input == "-":
        for line in sys.stdin:
            yield line.rstrip("\r\n")
    else:
        yield args.input


def _blocks(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    """Consecutive lists of lines of about ``size`` bytes (characters, as a cheap proxy) each."""
    block: list[str] = []
    held = 0
    for line in lines:
        block.append(line)
        held += len(line) + 1
        if held >= size:
            yield block
            block, held = [], 0
    if block:
        yield block


def batch_encoder(tok, *, allow_special: bool = False, threads: int | None = None) -> Callable[[list[str]], list]:
    """``texts -> ids`` for any tokenizer kind: its ``encode_batch`` with ``num_threads`` where it
    takes one (byte-level, SGPE, HF), else its ``encode_batch``, else ``encode`` line by line."""
    options: dict = {"allowed_special": "all"} if allow_special else {}
    batch = getattr(tok, "encode_batch", None)
    if batch is not None:
        params = inspect.signature(batch).parameters
        if "num_threads" in params:
            options["num_threads"] = threads or os.cpu_count() or 1
        return lambda texts: batch(texts, **options)
    return lambda texts: [tok.encode(t, **options) for t in texts]


def use_tiktoken_file(args: argparse.Namespace) -> None:
    """``--tiktoken-file PATH`` is the same as ``WWHO_TIKTOKEN_FILE=PATH`` for this command."""
    if getattr(args, "tiktoken_file", None):
        os.environ["WWHO_TIKTOKEN_FILE"] = args.tiktoken_file


def token_strings(tok, ids: list[int]) -> list[str]:
    """How each id is shown: the vocabulary's token string where there is one, else its decoded text."""
    table = getattr(tok, "id_to_token", None)
    if isinstance(table, list):
        return [table[i] for i in ids]
    if callable(table):
        return [table(i) for i in ids]
    return [tok.decode([i]) for i in ids]
