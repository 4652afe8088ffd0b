"""Syllabification speed: wwho (the compiled core) vs regex \\X vs the pure-Python engines, one run.

    python benchmarks/bench_syllables.py [FILE ...] [--script NAME] [--repeat N]

Default input: the Sinhala news in ../shared/data/corpora/si/ (news-*.txt). Prints MB/s
(UTF-8 megabytes, 10^6, wall clock, best of ``--repeat``) for each method on the same text in
one run, and the ratios to ``regex.findall(r'\\X')`` (target: wwho >= 5x, through the public API:
``wwho.syllabify``, which also checks the script, and the ``wwho syllabify`` command, timed as a
whole process on the same text). All return a list of strings. For a schema that keeps grapheme clusters whole (all but Sinhala), the same automaton
without that rule is timed too. The slow pure-Python methods (spec 000's loop, the table walk wwho ran before the
core, the grammar as a Python ``re`` pattern) run on a prefix.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import regex

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the spec-000 transcription lives with the tests
import spec000_reference  # noqa: E402
from _measure import CORPORA as DATA  # noqa: E402  ($WWHO_SHARED_DATA, else ../shared/data)
from _measure import require  # noqa: E402
from reference.syllables import tokenize_table  # noqa: E402

import wwho  # noqa: E402
from wwho import Syllabifier  # noqa: E402
from wwho.schema import available_scripts  # noqa: E402


def best_of(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--script", default="sinhala", choices=available_scripts())
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--spec-mb", type=float, default=10.0, help="MB of text for the slow spec loop (default 10)")
    args = ap.parse_args()
    missing = [str(p) for p in args.files if not p.is_file()]
    if missing:
        ap.error(f"no such file: {', '.join(missing)}")
    if not args.files:  # the shared data's (or pass files)
        require(DATA / "si" / "news-*.txt")
    files = args.files or sorted((DATA / "si").glob("news-*.txt"))
    text = "".join(p.read_text(encoding="utf-8") for p in files)
    mb = len(text.encode()) / 1e6
    syl = Syllabifier.for_script(args.script)
    print(f"input: {', '.join(p.name for p in files)}: {mb:.1f} MB, {len(text):,} characters, script {args.script}")
    rows = []
    for name, fn in [
        ("wwho.syllabify (leading_space=True)", lambda: syl.tokenize(text, leading_space=True)),
        ("wwho.syllabify (leading_space=False)", lambda: syl.tokenize(text, leading_space=False)),
        ("regex.findall(r'\\X')", lambda: regex.findall(r"\X", text)),
        ("wwho.syllabify(text, script) (public API)", lambda: wwho.syllabify(text, args.script)),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a file in another script than --script: timed all the same
            seconds, out = best_of(fn, args.repeat)
        rows.append((name, mb / seconds, f"{len(out):,} tokens"))
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt") as f:
        f.write(text)
        f.flush()
        cli = [sys.executable, "-m", "wwho", "syllabify", "--script", args.script]

        # Output to a file, as `wwho syllabify < in > out` does: reading it back through a pipe
        # would time this harness, not the command. Lines are counted after the clock stops: the
        # command prints a line of syllables joined by " | " per input line, which cannot be split
        # back into syllables (a text may hold " | " itself), so its row counts lines, not tokens.
        with tempfile.TemporaryFile() as sink:

            def command():
                sink.seek(0)
                sink.truncate()
                with open(f.name, "rb") as stdin:
                    subprocess.run(cli, stdin=stdin, stdout=sink, stderr=subprocess.PIPE, check=True)

            seconds, _ = best_of(command, args.repeat)
            sink.seek(0)
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: sink.read(1 << 24), b""))
        rows.append(("wwho syllabify (the command, whole process)", mb / seconds, f"{lines:,} lines"))
    if syl.schema.keep_clusters:
        # What keeping grapheme clusters whole costs: the same automaton without the cluster rule.
        alone = Syllabifier(dataclasses.replace(syl.schema, keep_clusters=False))
        seconds, out = best_of(lambda: alone.tokenize(text, leading_space=True), args.repeat)
        rows.append(("wwho, keep_clusters off (leading_space=True)", mb / seconds, f"{len(out):,} tokens"))
    # The spec loop is pure Python per character: time it on a prefix only.
    prefix = text.encode()[: int(args.spec_mb * 1e6)].decode("utf-8", "ignore")
    pmb = len(prefix.encode()) / 1e6
    if args.script == "sinhala":
        seconds, out = best_of(lambda: spec000_reference.tokenize(prefix, True), 1)
        rows.append((f"original SGPE loop, per character ({pmb:.0f} MB)", pmb / seconds, f"{len(out):,} tokens"))
    seconds, out = best_of(lambda: tokenize_table(syl.schema, prefix, True), 1)
    rows.append((f"pure-Python table walk ({pmb:.0f} MB)", pmb / seconds, f"{len(out):,} tokens"))
    if syl.schema.grammar is not None:
        grammar = Syllabifier(syl.schema, engine="regex")
        seconds, out = best_of(lambda: grammar.tokenize(prefix, leading_space=True), 1)
        rows.append((f"grammar as a Python re pattern ({pmb:.0f} MB)", pmb / seconds, f"{len(out):,} tokens"))
    base = rows[2][1]
    header = ("method", "MB/s", "vs \\X", "output")
    print(f"{header[0]:44} {header[1]:>8} {header[2]:>7} {header[3]:>19}")
    for name, speed, output in rows:
        print(f"{name:44} {speed:8.2f} {speed / base:7.2f} {output:>19}")
    print(f"wwho (leading_space=True) vs regex \\X: {rows[0][1] / base:.2f}x, public wwho.syllabify "
          f"{rows[3][1] / base:.2f}x, the command {rows[4][1] / base:.2f}x (target >= 5)")


if __name__ == "__main__":
    main()
