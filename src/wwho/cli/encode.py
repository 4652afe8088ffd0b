"""``wwho encode --tokenizer PATH [--ids | --tokens | --json] [TEXT | -]`` (and ``--binary FILE``).

Text comes from the argument or, with ``-`` (the default), from standard input, one
document per line. Both are read as UTF-8 with lone surrogates allowed in their
surrogate-pass form (``ED A0 80`` is U+D800, what ``wwho decode`` writes for it); other
invalid bytes are an ``arguments`` or ``stdin:LINE`` error. The tokenizer
kind is detected from PATH (see :mod:`wwho.loading`); a ``.tiktoken`` file that is not a
known encoding needs ``--pattern``. Output goes to standard output, or to ``-o FILE``
(an existing file needs ``--force``). Text that cannot be UTF-8 (a lone surrogate) is
written as its surrogate-pass bytes, and escaped as ``\\udXXX`` in ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from typing import IO, Any

from wwho.errors import CorpusError
from wwho.loading import detect_kind, load_tokenizer

PATTERN_HELP = ("pre-tokenizer of a .tiktoken file that is not a known encoding: gpt2, gpt4, o200k "
                "(or another name wwho knows) or a regex")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", required=True, help="vocab.json, a tokenizer directory, tokenizer.json, .gguf or .tiktoken")
    p.add_argument("input", nargs="?", default="-", help="text to encode, or - (default) to read lines from standard input; "
                   "with --binary: a file")
    p.add_argument("--tiktoken-file", help="tiktoken ranks file for a meta tokenizer when offline")
    p.add_argument("--pattern", metavar="NAME|REGEX", help=PATTERN_HELP)
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
    output = _output(args)
    use_tiktoken_file(args)
    tok = load_tokenizer(args.tokenizer, pattern=args.pattern)
    lines = _stdin_lines() if args.input == "-" else [_argument_text(args.input)]
    show = args.show or "ids"
    with output as out:
        for line in lines:
            ids = tok.encode(line, allowed_special="all") if args.allow_special else tok.encode(line)
            if show == "ids":
                write_text(out, " ".join(map(str, ids)) + "\n")
                continue
            tokens = token_strings(tok, ids)
            if show == "tokens":
                write_text(out, " | ".join(tokens) + "\n")
            else:  # backslashreplace turns a lone surrogate into its JSON escape \udXXX
                text = json.dumps({"ids": ids, "tokens": tokens}, ensure_ascii=False)
                write_text(out, text + "\n", errors="backslashreplace")
    return 0


def _stdin_lines() -> Iterator[str]:
    for n, raw in enumerate(sys.stdin.buffer, start=1):
        try:
            yield raw.decode("utf-8", "surrogatepass").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise CorpusError(f"stdin:{n}: invalid UTF-8 at byte {exc.start}") from None


def _argument_text(text: str) -> str:
    # Python decodes argv with surrogateescape: get the bytes back and read them as stdin is read.
    import os

    try:
        return os.fsencode(text).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"arguments: the text is not UTF-8 (invalid byte at {exc.start})") from None


def _output(args: argparse.Namespace) -> Any:
    """The binary stream to write to: ``-o FILE`` (checked before any work) or standard output."""
    if getattr(args, "output", None):
        from wwho.cli.outputs import check_output_file
        from wwho.fileio import atomic_open

        check_output_file(args.output, force=args.force)
        return atomic_open(args.output, "wb", encoding=None)
    return nullcontext(sys.stdout.buffer)


def write_text(out: IO[bytes], text: str, *, errors: str = "surrogatepass") -> None:
    """UTF-8; a lone surrogate (SGPE decodes them losslessly) as its surrogate-pass bytes."""
    out.write(text.encode("utf-8", errors))
    out.flush()


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
