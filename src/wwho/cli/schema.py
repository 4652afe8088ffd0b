"""``wwho schema check FILE|SCRIPT``: validate a schema and prove its grammar equals its automaton.

``SCRIPT`` is the name of a bundled schema (``tamil``), or ``all`` for every bundled one.

It only checks and reports (exit status 1 on a mismatch): it does not repair or rewrite a schema,
and writes no file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wwho.cli.options import path_argument
from wwho.cli.outputs import printing
from wwho.errors import SchemaError
from wwho.progress import stderr_is_a_terminal
from wwho.schema import available_scripts, bundled_schema, load_schema
from wwho.syllables import check_schema, refuse_a_long_check


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["check"], help="check: validate and compare the two engines")
    p.add_argument("path", type=path_argument, help="schema JSON file, a bundled script name, or 'all' (every bundled schema)")
    p.add_argument("--max-length", type=int, default=5, choices=range(1, 7), metavar="1..6",
                   help="longest test string (default 5; each step multiplies the strings tried: 6 takes minutes)")


def run(args: argparse.Namespace) -> int:
    with printing():  # a closed standard output: said first; a failed write names it
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    if args.path == "all" and not Path(args.path).exists():
        return max(_check(bundled_schema(name), name, args.max_length) for name in available_scripts())
    if not Path(args.path).exists() and args.path in available_scripts():
        return _check(bundled_schema(args.path), args.path, args.max_length)
    if not Path(args.path).exists():
        raise SchemaError(f"{args.path}: not a schema file nor a bundled script ({', '.join(available_scripts())}, all)")
    return _check(load_schema(args.path), args.path, args.max_length)


def _check(schema, label: str, max_length: int) -> int:
    if schema.grammar is not None:  # a check too long for the schema's classes: the one line, first
        refuse_a_long_check(schema, max_length)
    print(f"{label}: valid schema {schema.name!r}: {len(schema.classes)} classes, "
          f"{len(schema.transitions)} states, {len(schema.blocks)} blocks")
    if schema.grammar is None:
        print("no grammar: nothing to check (the automaton runs as it is)")
        return 0
    # A bar where someone watches: in a log or a pipe it would only stand before the results.
    problems = check_schema(schema, max_length=max_length, progress=stderr_is_a_terminal())
    for p in problems:
        print("MISMATCH", p)
    if problems:
        print("the grammar does not match the automaton: fix one of them")
        return 1
    print(f"{label}: grammar equals automaton on every string up to length {max_length}")
    return 0
