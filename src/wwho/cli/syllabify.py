"""``wwho syllabify``: print the syllables of a text (argument or stdin), one line per input line.

Standard input in UTF-8 (the usual case) is read in blocks of whole lines, each block syllabified
by the core in one call on a pool of threads and written in order as bytes: a call and a string
per line would cost more than the syllables. ``--json`` and other encodings go line by line.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from wwho.cli.encode import argument_text
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
    letters: Counter = Counter()
    if args.text == "-" and not args.json and _utf8(sys.stdin) and _utf8(sys.stdout):
        _blocks(syl, args, letters)
    else:
        _lines(syl, args, sys.stdin if args.text == "-" else [argument_text(args.text)], letters)
    if not args.schema:
        warn_if_other_script(letters, (args.script,), what="the input", option="--script ")
    return 0


BLOCK_BYTES = 1 << 22  # per core call: large enough to amortize it, small enough to stream


def _blocks(syl: Syllabifier, args: argparse.Namespace, letters: Counter) -> None:
    """Standard input to standard output, block by block, in order; the first characters are
    the script check's sample."""
    from concurrent.futures import ThreadPoolExecutor

    from wwho.threads import cpus

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout.flush()
    workers = min(cpus(), 4)
    judged, pending, last = 0, [], "\n"
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for text in _texts(stdin):
            if not args.schema and judged < SAMPLE_CHARS:
                letters.update(letters_by_script([(text[:SAMPLE_CHARS - judged], 1)]))
                judged += len(text)
            last = text[-1]
            pending.append(pool.submit(syl.joined_lines, text, " | ", args.leading_space))
            if len(pending) > 2 * workers:  # bounded read-ahead
                stdout.write(pending.pop(0).result())
        for job in pending:
            stdout.write(job.result())
    if last != "\n":  # every line printed ends in a newline, the last one too
        stdout.write(b"\n")
    stdout.flush()


def _texts(stdin):
    """Blocks of whole lines of ``stdin`` (bytes), decoded; the part of a line not yet ended is
    kept for the next block (a list of reads, so a long line costs linear time)."""
    from wwho.errors import CorpusError

    offset, unended = 0, []

    def decode(raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorpusError(f"standard input: not UTF-8 at byte {offset + exc.start:,}") from None

    while data := stdin.read(BLOCK_BYTES):
        cut = data.rfind(b"\n") + 1
        if not cut:
            unended.append(data)
            continue
        raw = b"".join([*unended, data[:cut]])
        unended = [data[cut:]] if cut < len(data) else []
        yield decode(raw)
        offset += len(raw)
    if unended:
        yield decode(b"".join(unended))


def _lines(syl: Syllabifier, args: argparse.Namespace, lines, letters: Counter) -> None:
    judged = 0  # characters the script check has seen: the input's start is its sample
    out: list[str] = []
    for line in lines:
        line = line.rstrip("\r\n")  # a CRLF file: "\r" is no syllable of the line
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


def _utf8(stream) -> bool:
    return (getattr(stream, "encoding", None) or "").lower().replace("-", "") == "utf8" and hasattr(stream, "buffer")


def _write(lines: list[str]) -> None:
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
        lines.clear()
