"""``wwho syllabify``: print the syllables of a text (argument, ``--file`` or stdin), one line per input line.

``--script`` names a bundled script, or a multi-script mode of training (``indic``, ``mixed``): each
script run then goes to its own schema, and the tokens are the units ``wwho train --script indic``
merges (:meth:`wwho.sgpe.words.WordSplitter.tokenize`).

Input is UTF-8 (a file and standard input are read as bytes; a byte that is not UTF-8 is an error
naming its line and offset; a ``.gz``, ``.xz`` or ``.bz2`` file is read decompressed) and output is
UTF-8. A line ends at ``"\n"``; a ``"\r"`` before it is part of the line end, not a syllable (CRLF
files), in every mode, and an argument holding newlines is several lines. A file and standard input
are read in blocks of whole lines, each block syllabified by the core in one call on a pool of
threads and written in order as bytes: a call and a string per line would cost more than the
syllables. ``--json`` goes line by line. A line is syllabified whole, in memory several times its
size, so one longer than ``--max-line-bytes`` (default 64 MiB) is an error naming it, found before
it is held whole. ``--file`` draws a bar of the bytes read where standard error is a terminal and
standard output is not (``--quiet``: none).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable

from wwho.cli.bars import file_progress
from wwho.cli.encode import argument_text, open_input_file, read_failed
from wwho.cli.outputs import StandardOutput, refuse_reading_own_output, require_stdout, standard_input
from wwho.cli.train_sgpe import LINE_BYTES
from wwho.corpus import MAX_LINE_BYTES
from wwho.schema import MULTI_SCRIPT_MODES, available_scripts
from wwho.scriptcheck import SAMPLE_CHARS, letters_by_script, syllabifying_keeps, warn_if_other_script
from wwho.sgpe.words import WordSplitter, mode_scripts
from wwho.syllables import Syllabifier


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="?", default=None, help="text to split, or - (default) to read standard input")
    p.add_argument("--file", metavar="FILE", help="split every line of FILE (UTF-8; a .gz, .xz or .bz2 file is read "
                                                  "decompressed), in order")
    p.add_argument("--script", help=f"bundled script ({', '.join(available_scripts())}; default sinhala), or a mode "
                                    f"of several ({', '.join(MULTI_SCRIPT_MODES)}): each script run by its own schema, "
                                    "as wwho train --script indic counts them")
    p.add_argument("--schema", help="use a schema file of your own instead of --script")
    p.add_argument("--leading-space", action="store_true", help="attach a space to the syllable after it")
    p.add_argument("--json", action="store_true", help="print a JSON list of syllables per line")
    p.add_argument("--max-line-bytes", type=LINE_BYTES, default=MAX_LINE_BYTES, metavar="BYTES",
                   help=f"with - or --file: longest input line in bytes, its line end included, k/M/G "
                        f"suffixes allowed (default {MAX_LINE_BYTES >> 20}M): a line is split whole, in memory several times its size; a longer one is an error")
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true",
                   help="no progress bar (--file draws one of the bytes read where standard error is a terminal "
                        "and standard output is not)")


def run(args: argparse.Namespace) -> int:
    from wwho.errors import CorpusError

    if args.schema and args.script:  # one of them would be silently left unused
        raise CorpusError(f"give --script or --schema, not both (--script {args.script}, --schema {args.schema})")
    script = args.script or "sinhala"
    if not args.schema:
        mode_scripts(script)  # an unknown name is an error naming the scripts and the modes
    if args.file and args.text is not None:  # (- too: standard input would be left unread)
        raise CorpusError("give either TEXT (or -) or --file, not both")
    reads = args.file or ("-" if args.text in (None, "-") else None)  # a file name, "-", or None: the argument
    require_stdout()  # closed: said before any work
    refuse_reading_own_output("-", [reads] if reads else [])
    stdin = standard_input() if reads == "-" else None
    syl: Syllabifier | WordSplitter
    if script in MULTI_SCRIPT_MODES:  # each script run by its own schema, as `wwho train --script indic` counts
        syl, scripts, keeps = WordSplitter(script), MULTI_SCRIPT_MODES[script], syllabifying_keeps(False)
    else:
        syl = Syllabifier.from_schema(args.schema) if args.schema else Syllabifier.for_script(script)
        scripts, keeps = (script,), syllabifying_keeps(syl.schema.keep_clusters)
    letters: Counter = Counter()
    with file_progress(args.file, verb="syllabify", output=None, quiet=args.quiet) as bar:
        if reads is None:
            texts = [_argument(args.text)]
        elif stdin is not None:
            texts = _texts(stdin, args.max_line_bytes)
        else:
            texts = _file_texts(reads, args.max_line_bytes, bar.update)
        if not args.json and hasattr(sys.stdout, "buffer"):
            _blocks(syl, args, texts, letters)
        else:
            _lines(syl, args, (line for text in texts for line in _split(text)), letters)
    if not args.schema:
        warn_if_other_script(letters, scripts, what="the input", option="--script ", latin=keeps, mode=script)
    return 0


def _argument(text: str) -> str:
    """The argument's text, strictly UTF-8 as standard input is read (a surrogate code point,
    which ``encode`` would replace, could not be printed back)."""
    from wwho.errors import CorpusError

    text = argument_text(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CorpusError(f"arguments: the text is not UTF-8 (a surrogate code point at character {exc.start})") from None
    return text


def _split(text: str) -> list[str]:
    """The lines of a block of whole lines (or of an argument), CRLF line ends as LF."""
    lines = text.replace("\r\n", "\n").split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()  # the block's last line end
    return lines


BLOCK_BYTES = 1 << 22  # per core call: large enough to amortize it, small enough to stream


def _blocks(syl: Syllabifier | WordSplitter, args: argparse.Namespace, texts, letters: Counter) -> None:
    """Blocks of whole lines to standard output, in order; the first characters are the script
    check's sample."""
    from wwho.background import Background
    from wwho.threads import cpus

    stdout = StandardOutput()  # a failed write names standard output
    sys.stdout.flush()
    workers = min(cpus(), 4)
    judged, pending, last = 0, [], "\n"
    with Background(workers, name="wwho-syllabify") as pool:
        for text in texts:
            if not args.schema and judged < SAMPLE_CHARS:
                letters.update(letters_by_script([(text[:SAMPLE_CHARS - judged], 1)]))
                judged += len(text)
            last = text[-1:]  # "" for an empty argument: one empty line
            # A block holds whole lines, so a CRLF is never cut between two blocks.
            text = text.replace("\r\n", "\n")
            pending.append(pool.submit(syl.joined_lines, text, " | ", leading_space=args.leading_space))
            if len(pending) > 2 * workers:  # bounded read-ahead
                stdout.write(pending.pop(0).result())
        for job in pending:
            stdout.write(job.result())
    if last != "\n":  # every line printed ends in a newline, the last one too
        stdout.write(b"\n")
    stdout.flush()


def _file_texts(path: str, max_line_bytes: int, read: Callable[[int], object] | None = None):
    """:func:`_texts` of the file ``path``; an error reading it (not one of the caller's, between
    blocks) names the file."""
    from wwho.corpus import READ_ERRORS, unchanged_while_open

    try:
        with (open_input_file(path, what="file to split") as f,
              unchanged_while_open(f, path, redo="split it again")):
            yield from _texts(f, max_line_bytes, name=path, read=read)
    except READ_ERRORS as exc:
        raise read_failed(path, exc) from None


def _texts(stdin, max_line_bytes: int = MAX_LINE_BYTES, name: str = "stdin", read: Callable[[int], object] | None = None):
    """Blocks of whole lines of ``stdin`` (bytes; errors name it ``name``), decoded; the part of a
    line not yet ended is kept for the next block (a list of reads, so a long line costs linear time). A line longer
    than ``max_line_bytes`` (its line end counted, as for a corpus) is an error once that many
    bytes of it are held, not after the whole line is. ``read(n)`` is told the bytes of each block
    handed out (a progress bar)."""
    from wwho.errors import CorpusError

    offset, lines, unended, held = 0, 0, [], 0
    # Reads of at most the bound: a line inside one read is then within it, and only a line that
    # runs over reads (``unended``) needs counting.
    size = min(BLOCK_BYTES, max_line_bytes)

    def decode(raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            start = raw.rfind(b"\n", 0, exc.start) + 1
            line = lines + raw.count(b"\n", 0, exc.start) + 1
            raise CorpusError(f"{name}:{line}: invalid UTF-8 at byte {exc.start - start:,} of the line "
                              f"(byte {offset + exc.start:,} of the input)") from None

    def too_long() -> CorpusError:
        return CorpusError(f"{name}:{lines + 1}: the line is longer than {max_line_bytes:,} bytes (its line end "
                           "included), the limit that bounds memory (raise it with --max-line-bytes)")

    while data := stdin.read(size):
        cut = data.rfind(b"\n") + 1
        if not cut:
            unended.append(data)
            held += len(data)
            if held > max_line_bytes:
                raise too_long()
            continue
        if held + data.find(b"\n") + 1 > max_line_bytes:
            raise too_long()
        raw = b"".join([*unended, data[:cut]])
        unended = [data[cut:]] if cut < len(data) else []
        held = len(data) - cut
        yield decode(raw)
        offset += len(raw)
        lines += raw.count(b"\n")
        if read is not None:
            read(len(raw))
    if unended:
        raw = b"".join(unended)
        yield decode(raw)
        if read is not None:
            read(len(raw))


def _lines(syl: Syllabifier | WordSplitter, args: argparse.Namespace, lines, letters: Counter) -> None:
    judged = 0  # characters the script check has seen: the input's start is its sample
    out: list[str] = []
    for line in lines:
        if not args.schema and judged < SAMPLE_CHARS:
            letters.update(letters_by_script([(line[:SAMPLE_CHARS - judged], 1)]))
            judged += len(line)
        if args.json:
            out.append(json.dumps(syl.tokenize(line, leading_space=args.leading_space), ensure_ascii=False))
        else:
            out.append(syl.joined(line, " | ", leading_space=args.leading_space))
        if len(out) >= 1024:  # written in blocks: one write per line costs more than the syllables
            _write(out)
    _write(out)


def _write(lines: list[str]) -> None:
    """Write ``lines`` (and empty the list) as UTF-8, whatever the locale says."""
    if lines:
        text = "\n".join(lines) + "\n"
        if hasattr(sys.stdout, "buffer"):
            sys.stdout.flush()
            StandardOutput().write(text.encode("utf-8"))
        else:
            sys.stdout.write(text)
        lines.clear()
