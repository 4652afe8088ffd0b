"""``wwho schema check FILE``: validate a schema and prove its grammar equals its automaton."""

from __future__ import annotations

import argparse

from wwho.schema import load_schema
from wwho.syllables import check_schema


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["check"], help="check: validate and compare the two engines")
    p.add_argument("path", help="schema JSON file")
    p.add_argument("--max-length", type=int, default=5, help="longest test string (default 5)")


def run(args: argparse.Namespace) -> int:
    schema = load_schema(args.path)
    print(f"{args.path}: valid schema {schema.name!r}: {len(schema.classes)} classes, "
          f"{len(schema.transitions)} states, {len(schema.blocks)} blocks")
    if schema.grammar is None:
        print("no grammar: the table engine will be used (slower)")
        return 0
    problems = check_schema(schema, max_length=args.max_length)
    for p in problems:
        print("MISMATCH", p)
    if problems:
        print("the grammar does not match the automaton: fix one of them")
        return 1
    print(f"grammar equals automaton on every string up to length {args.max_length}")
    return 0
