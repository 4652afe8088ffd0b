"""The ``wwho`` command line: one set of verbs for every tokenizer kind.

``wwho train --kind K ...`` hands its arguments to the trainer of kind ``K``
(``wwho.cli.train_<K>``); the other verbs live in one module each. This module only
dispatches and turns :class:`wwho.WwhoError` (and an ``OSError`` of the machine: a full disk,
a permission) into a one-line message and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from wwho.cli.options import strict
from wwho.errors import WwhoError

#: verb -> module implementing ``add_arguments(parser)`` and ``run(args) -> int``
VERBS = {
    "syllabify": ("wwho.cli.syllabify", "split text into orthographic syllables"),
    "schema": ("wwho.cli.schema", "validate a script schema and check its grammar against its automaton"),
    "encode": ("wwho.cli.encode", "text (or bytes) to token ids"),
    "decode": ("wwho.cli.decode", "token ids to text (or bytes)"),
    "inspect": ("wwho.cli.inspect", "show what a tokenizer file holds"),
    "export": ("wwho.cli.export", "write a vocabulary in another ecosystem's format (hf)"),
    "eval": ("wwho.cli.eval", "compare tokenizers on corpora: fertility, integrity, parity"),
    "serve": ("wwho.cli.serve", "a local page showing how tokenizers cut your text, side by side"),
}
#: kind -> module with ``main(argv) -> int`` for ``wwho train --kind``
TRAIN_KINDS: dict[str, str] = {
    "sgpe": "wwho.cli.train_sgpe",
    "binary": "wwho.cli.train_binary",
    "bytelevel": "wwho.cli.train_bytelevel",
}


def _dispatch_train(argv: list[str]) -> int:
    pre = argparse.ArgumentParser(prog="wwho train", add_help=False)
    pre.add_argument("--kind", default="sgpe")
    known, _ = pre.parse_known_args(argv)
    if known.kind not in TRAIN_KINDS:
        if "-h" in argv or "--help" in argv:
            print(f"usage: wwho train --kind {{{','.join(TRAIN_KINDS) or 'none yet'}}} ... (see wwho train --kind K --help)")
            return 0
        raise WwhoError(f"unknown --kind {known.kind!r}; choose from: {', '.join(TRAIN_KINDS) or 'none yet'}")
    module = importlib.import_module(TRAIN_KINDS[known.kind])
    return module.main(argv)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every verb but ``train`` (whose kinds build their own), strict about repeats."""
    parser = argparse.ArgumentParser(prog="wwho", description="Syllable-aware tokenizers for Indic scripts.")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.add_parser("train", help="train a tokenizer (wwho train --kind K --help)")
    for verb, (module_name, help_text) in VERBS.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(verb, help=help_text, description=help_text)
        module.add_arguments(p)
        p.set_defaults(run=module.run)
    return strict(parser)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "train":
            return _dispatch_train(argv[1:])
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            parser.print_help()
            return 2
        return int(args.run(args) or 0)
    except WwhoError as exc:
        print(f"wwho: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("wwho: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the machine's, not wwho's: a full disk, a permission, a vanished file
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"wwho: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
