"""``wwho syllabify``: print the syllables of a text (argument or stdin), one line per input line."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from wwho.schema import available_scripts
from wwho.scriptcheck import SAMPLE_CHARS, letters_by_script, warn_if_other_script
from wwho.syllables import Syllabifier


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="?", default="-", help="text to split, or - (default) to read standard input")
    p.add_argument("--script", default="sinhala", help=f"bundled script ({', '.join(available_scripts())})")
    p.add_argument("--schema", help="use a schema file of your own instead of --script")
    p.add_argument("--leading-space", action="store_true", help="attach a space to the syllable after it")
    p.add_argument("--json", action="store_true", help="print a JSON list of syllables per line")


def run(args: argparse.Namespace) -> int:
    syl = Syllabifier.from_schema(args.schema) if args.schema else Syllabifier.for_script(args.script)
    lines = sys.stdin if args.text == "-" else [args.text]
    letters: Counter = Counter()
    judged = 0  # characters the script check has seen: the input's start is its sample
    out: list[str] = []
    for line in lines:
        line = line.rstrip("\n")
        if not args.schema and judged < SAMPLE_CHARS:
            letters.update(letters_by_script([(line[:SAMPLE_CHARS - judged], 1)]))
            judged += len(line)
        if args.json:
            out.append(json.dumps(syl.tokenize(line, args.leading_space), ensure_ascii=False))
        else:
            out.append(syl.joined(line, " | ", args.leading_space))
        if len(out) >= 1024:  # written in blocks: one write per line costs more than the syllables
            _write(out)
    _write(out)
    if not args.schema:
        warn_if_other_script(letters, (args.script,), what="the input", option="--script ")
    return 0


def _write(lines: list[str]) -> None:
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
        lines.clear()
