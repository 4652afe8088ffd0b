"""Corpus input: stream documents from text and JSONL files, compressed or not.

``iter_documents(paths)`` yields one string per document:

* plain text (``.txt`` and anything not JSONL): one document per line, line end removed;
* JSONL (``.jsonl``/``.ndjson``, or ``format="jsonl"``): one JSON object per line, the
  document is ``obj[text_field]`` (default ``"text"``);
* ``.gz``, ``.xz``, ``.bz2`` of either (the format is read from the name under the suffix); a
  file compressed under another name, or in another format (zstd, zip, lz4), is refused by name;
* directories (every regular file inside, recursively, sorted) and glob patterns, each file read
  once however often it is named (:mod:`wwho.corpus_files`).

A zero-byte file is empty whatever its name (``touch x.xz``: no documents, as for ``.gz``);
a compressed file that is corrupt or cut short is a :class:`CorpusError` naming the file and
the line it got to, also with ``skip_bad_lines`` (that skips lines, not a damaged stream).

A UTF-8 byte order mark at the start of a file is dropped, not read as text.
A malformed line (invalid UTF-8, invalid JSON, missing or non-string field) raises
:class:`CorpusError` naming ``file:line``; with ``skip_bad_lines=True`` it is skipped and
counted in :class:`CorpusStats` instead. Files are visited in a deterministic (sorted)
order. Empty lines are skipped (not documents). This module does not tokenize, nor expand
directories and globs (:mod:`wwho.corpus_files` does).

Lines are read in bounded pieces: a line longer than ``max_line_bytes`` (its line end
included; default :data:`MAX_LINE_BYTES`, 64 MiB) is a malformed line like the others, found
after reading ``max_line_bytes + 1`` bytes of it, so a compressed file that expands to one
10 GB line costs 64 MiB, not 10 GB. Why 64 MiB: while a line is parsed its bytes, its text
(up to 4 bytes per character) and its JSON are in memory together, up to ~6 times the
line, so the default keeps one line under ~400 MB; the longest document in the shared
corpora is 30 KB, and a JSONL line holding a whole book fits. Lines are never split: a
document cut in two would change what is counted. (That bound is the reader's: training holds
more for a line that is one long word, see docs/reliability.md.)
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from wwho.corpus_files import resolve_paths, shown_path
from wwho.errors import CorpusError, brief
from wwho.fileio import open_regular

_OPENERS = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}
_JSONL = {".jsonl", ".ndjson"}
#: UTF-8's byte order mark, dropped from the start of a corpus file.
BOM = b"\xef\xbb\xbf"
#: What reading a (decompressed) file raises when it is cut or corrupt; zlib's: a bad deflate stream in a .gz.
READ_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)
#: The first bytes of compressed files (their formats' magic numbers): such a file read as text
#: is bytes that are no UTF-8 (or, with --skip-bad-lines, trained on as noise).
_COMPRESSED = (
    (b"\x1f\x8b\x08", "gzip", ".gz"), (b"\xfd7zXZ\x00", "xz", ".xz"), (b"BZh", "bzip2", ".bz2"),
    (b"\x28\xb5\x2f\xfd", "zstd", None), (b"PK\x03\x04", "zip", None), (b"\x04\x22\x4d\x18", "lz4", None),
)
#: Default bound of one line, in bytes (see the module docstring).
MAX_LINE_BYTES = 64 * 2**20
_SKIP_CHUNK = 1 << 20  # the rest of an over-long line is read (and dropped) this much at a time


@dataclass
class CorpusStats:
    """What a pass over a corpus saw."""

    files: int = 0
    documents: int = 0
    bad_lines: int = 0
    bytes: int = 0
    first_bad: list[str] = field(default_factory=list)



def file_format(path: Path) -> str:
    """``"jsonl"`` or ``"text"``, from the name (``corpus.jsonl.gz`` is JSONL)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _OPENERS:
        suffixes = suffixes[:-1]
    return "jsonl" if suffixes and suffixes[-1] in _JSONL else "text"


#: What ``format=`` may say (None: each file's name decides, :func:`file_format`).
FORMATS = ("text", "jsonl")


def check_format(format: str | None) -> None:
    """``format`` is None or one of :data:`FORMATS`: any other value ("txt", "json") would be
    read as JSONL, and a plain text corpus would fail at its first line with "invalid JSON"."""
    if format is not None and format not in FORMATS:
        raise CorpusError(f"format must be None (from each file's name), 'text' or 'jsonl', not {brief(format)}")


def check_named_jsonl(paths: str | os.PathLike | Iterable[str | os.PathLike], text_field: str) -> None:
    """For an explicit ``--text-field``: every corpus file must be read as JSONL, which the name says
    (``.jsonl``/``.ndjson``, compressed or not); a file read as plain text (``data.json``) would be
    trained on as raw JSON lines, the field ignored. Raises :class:`CorpusError` naming it."""
    for path in resolve_paths(paths):
        if file_format(path) != "jsonl":
            raise CorpusError(f"{shown_path(str(path))}: --text-field {text_field!r} applies to JSONL files, named "
                              ".jsonl or .ndjson (then .gz, .xz or .bz2 if compressed); this one would be read as "
                              "plain text, one document per line: rename it, or leave out --text-field")


def compressed_by_name(path: Path) -> bool:
    """Whether ``path``'s name says it is compressed in a format wwho reads (``.gz``, ``.xz``, ``.bz2``)."""
    return path.suffix.lower() in _OPENERS


def check_text_file(path: Path) -> None:
    """Refuse a file whose first bytes say it is not UTF-8 text, naming what it is instead: compressed
    although its name does not say so (``.gz``, ``.xz``, ``.bz2`` are read by their names), or in a
    format wwho does not read (zstd, zip, lz4); or UTF-16 or UTF-32 text (by its byte order mark, or
    the NUL byte beside each ASCII character that UTF-16 without one has), which reads as valid UTF-8
    with a NUL between the characters and would be trained on as such."""
    if compressed_by_name(path):
        return
    try:
        with open_regular(path, error=CorpusError, what="corpus file") as f:  # never blocks on a FIFO
            head = f.read(_HEAD_BYTES)
    except (OSError, CorpusError):
        return  # the reader names the problem
    for magic, name, suffix in _COMPRESSED:
        if head.startswith(magic) and (name != "bzip2" or head[3:4].isdigit() and head[4:10] == b"1AY&SY"):
            todo = (f"name it {path.name}{suffix} to have it read" if suffix else
                    "decompress it first (wwho reads .gz, .xz and .bz2 files, by their names)")
            raise CorpusError(f"{shown_path(str(path))}: is {name}-compressed, not text: {todo}")
    wide = wide_encoding(head)
    if wide is not None:
        name, sign = wide
        raise CorpusError(f"{shown_path(str(path))}: is {name} text ({sign}), and wwho reads UTF-8: convert it "
                          f"first, e.g. iconv -f {name} -t UTF-8")


#: How much of a file :func:`check_text_file` reads.
_HEAD_BYTES = 4096
#: Byte order marks of the encodings that are not UTF-8, longest first (UTF-32LE's begins as UTF-16LE's).
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32LE"), (b"\x00\x00\xfe\xff", "UTF-32BE"),
              (b"\xff\xfe", "UTF-16LE"), (b"\xfe\xff", "UTF-16BE"))


def wide_encoding(head: bytes) -> tuple[str, str] | None:
    """The UTF-16 or UTF-32 encoding ``head`` (a file's first bytes) is in and how that shows, where
    it tells: a byte order mark, or (UTF-16 without one) a NUL as every other byte of mostly ASCII
    text, which UTF-8 text has only if NUL characters are most of it. None otherwise."""
    for bom, name in _WIDE_BOMS:
        if head.startswith(bom):
            return name, f"it begins with the byte order mark {bom.hex(' ').upper()}"
    pairs = len(head) // 2
    if pairs < 16:
        return None  # too little to tell
    even, odd = head[0:2 * pairs:2].count(0), head[1:2 * pairs:2].count(0)
    for nuls, others, name in ((odd, even, "UTF-16LE"), (even, odd, "UTF-16BE")):
        if nuls >= 0.9 * pairs and others <= 0.1 * pairs:
            return name, f"a NUL byte beside each character of its first {2 * pairs:,} bytes"
    return None


def open_binary(path: Path) -> io.BufferedIOBase:
    """The file, decompressed if its name says so; only a regular file is opened (checked on the
    open file too, and opened without blocking: a FIFO put in its place cannot hang the run)."""
    raw = open_regular(path, error=CorpusError, what="corpus file")
    opener = _OPENERS.get(path.suffix.lower())
    # a zero-byte file is empty, not a cut stream: gzip read it so, xz and bzip2 raised EOFError
    if opener is None or os.fstat(raw.fileno()).st_size == 0:
        return io.BufferedReader(raw)  # type: ignore[arg-type]
    try:
        stream = opener(raw, "rb")
    except BaseException:
        raw.close()
        raise
    close = stream.close

    def close_both() -> None:  # a decompressor given a file object does not close it
        try:
            close()
        finally:
            raw.close()

    stream.close = close_both  # type: ignore[method-assign]
    return stream  # type: ignore[return-value]


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells a file changed while it was read: its size, modification time and inode (None
    where it cannot be looked at: the read says why)."""
    try:
        return _stamp(os.stat(path))
    except OSError:
        return None


def _stamp(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_size, st.st_mtime_ns, st.st_ino


def check_unchanged(path: Path, stamp: tuple[int, int, int] | None, *, what: str = "",
                    redo: str = "train again") -> None:
    """A :class:`CorpusError` if ``path`` is no longer the file ``stamp`` was taken of (written to,
    cut, or replaced): what was read of it is no one version of the file. ``what``: how it was read;
    ``redo``: what to do once the file is written."""
    if stamp is None:
        return
    try:
        st = os.stat(path)
    except OSError as exc:
        raise CorpusError(f"{shown_path(str(path))}: cannot read: {exc.strerror or exc}") from None
    if _stamp(st) != stamp:
        raise _changed(path, what, redo)


def _changed(path: Path | str, what: str, redo: str) -> CorpusError:
    return CorpusError(f"{shown_path(str(path))}: the file changed while it was read{what}, so what was "
                       f"read is no one version of it: {redo} once it is written")


@contextlib.contextmanager
def unchanged_while_read(path: Path) -> Iterator[None]:
    """Check that ``path`` does not change while the block reads it: after the block, and, where the
    block fails on the file's text (a line cut mid-character by a truncation reads as bad UTF-8),
    before its error is told, so that the error says what happened."""
    stamp = file_stamp(path)
    try:
        yield
    except CorpusError:
        check_unchanged(path, stamp)
        raise
    check_unchanged(path, stamp)


@contextlib.contextmanager
def unchanged_while_open(f: IO[bytes], path: Path | str, *, redo: str) -> Iterator[None]:
    """:func:`unchanged_while_read` for the file ``f`` is open on, told by that file (``fstat``):
    a file moved over ``path`` meanwhile leaves what ``f`` reads whole, one written to or cut does
    not. A FIFO or another stream is one version whatever comes through it: not checked."""
    try:
        st = os.fstat(f.fileno())
    except (OSError, io.UnsupportedOperation):
        st = None
    stamp = _stamp(st) if st is not None and stat.S_ISREG(st.st_mode) else None

    def check() -> None:
        if stamp is not None and _stamp(os.fstat(f.fileno())) != stamp:
            raise _changed(path, "", redo)

    try:
        yield
    except CorpusError:
        check()  # a line cut mid-character by a truncation reads as bad UTF-8: say what happened
        raise
    check()


#: What the error of a bad corpus line says to do, by default.
SKIP_HINT = "use --skip-bad-lines to skip such lines"


def iter_documents(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    text_field: str = "text",
    format: str | None = None,
    skip_bad_lines: bool = False,
    stats: CorpusStats | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    bad_line_hint: str = SKIP_HINT,
) -> Iterator[str]:
    """Yield every document of the corpus, in a deterministic order. See the module docstring.
    ``bad_line_hint``: what the error of a bad line says to do (a caller without ``--skip-bad-lines``
    says something else)."""
    stats = stats if stats is not None else CorpusStats()
    check_format(format)  # before the first file, not at it
    for path in resolve_paths(paths):
        yield from file_documents(path, text_field=text_field, format=format, skip_bad_lines=skip_bad_lines,
                                  stats=stats, max_line_bytes=max_line_bytes, bad_line_hint=bad_line_hint)


def file_documents(
    path: Path,
    *,
    text_field: str = "text",
    format: str | None = None,
    skip_bad_lines: bool = False,
    stats: CorpusStats | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    start: int = 0,
    end: int | None = None,
    bad_line_hint: str = SKIP_HINT,
) -> Iterator[str]:
    """The documents of one file; ``start``/``end``: only those bytes of an uncompressed file, cut
    at line ends (a shard, :mod:`wwho.scale`). Line numbers in messages stay the file's."""
    stats = stats if stats is not None else CorpusStats()
    check_format(format)
    limit = check_max_line_bytes(max_line_bytes)
    if not start:
        check_text_file(path)
    stats.files += 1
    kind = format or file_format(path)
    ranged = start != 0 or end is not None
    if ranged and path.suffix.lower() in _OPENERS:
        raise ValueError(f"{path}: a compressed file cannot be read by byte range")
    stop = end if end is not None else float("inf")
    with unchanged_while_read(path), open_binary(path) as f:
        if start:
            f.seek(start)
        pos = start
        lineno = 0

        def where(line: int) -> str:
            return f"{path}:{line + (_lines_before(path, start) if start else 0)}"

        try:
            # the first line is read with room for a byte order mark, which is not counted in its
            # length: read within the bound alone, a long first line would lose its last 3 bytes to
            # the next line (one document cut in two)
            while pos < stop and (raw := f.readline(limit + 1 + (len(BOM) if not lineno and not start else 0))):
                lineno += 1
                stats.bytes += len(raw)
                pos += len(raw)
                if lineno == 1 and not start and raw.startswith(BOM):
                    raw = raw[len(BOM):]  # a byte order mark (Windows editors write one) is no text
                try:
                    if len(raw) > limit:
                        raise ValueError(f"the line is longer than {limit:,} bytes (its line end included), "
                                         "the limit that bounds memory (raise it with --max-line-bytes, or "
                                         "max_line_bytes=)")
                    doc = _parse_line(raw, kind, text_field)
                except ValueError as exc:
                    message = f"{where(lineno)}: {exc}"
                    if not skip_bad_lines:
                        raise CorpusError(f"{message} ({bad_line_hint})") from None
                    if len(raw) > limit:
                        skipped = _skip_line(f, raw)
                        stats.bytes += skipped
                        pos += skipped
                    stats.bad_lines += 1
                    if len(stats.first_bad) < 5:
                        stats.first_bad.append(message)
                    continue
                if doc:
                    stats.documents += 1
                    yield doc
        except READ_ERRORS as exc:
            raise CorpusError(f"{where(lineno + 1)}: cannot read (corrupt or truncated file?): {exc}") from None


def bounded_lines(stream: io.BufferedIOBase, name: str, max_line_bytes: int = MAX_LINE_BYTES,
                  hint: str = "raise it with --max-line-bytes") -> Iterator[bytes]:
    """The lines of a binary ``stream`` (line ends kept), each read in at most ``max_line_bytes + 1``
    bytes: a longer line (its line end counted, as for a corpus) is a :class:`CorpusError` naming
    ``name:LINE``, found before it is held whole (what is done with a line costs several times its
    size)."""
    limit = check_max_line_bytes(max_line_bytes)
    n = 0
    while raw := stream.readline(limit + 1):
        n += 1
        if len(raw) > limit:
            raise CorpusError(f"{name}:{n}: the line is longer than {limit:,} bytes (its line end included), "
                              f"the limit that bounds memory ({hint})")
        yield raw


def _lines_before(path: Path, offset: int) -> int:
    """Line ends in the first ``offset`` bytes of ``path`` (for a message about a shard's line)."""
    lines = 0
    with open(path, "rb") as f:
        while offset > 0 and (chunk := f.read(min(offset, 1 << 20))):
            lines += chunk.count(b"\n")
            offset -= len(chunk)
    return lines


def check_max_line_bytes(value: object) -> int:
    """``max_line_bytes`` checked: an int from 1 to 2**40 (1 TiB)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**40:
        raise CorpusError(f"max_line_bytes must be an integer from 1 to {2**40:,} (1 TiB), not {value!r}")
    return value


def _skip_line(f: io.BufferedIOBase, start: bytes) -> int:
    """Read the rest of a line whose first bytes were ``start``, in bounded pieces; its length."""
    skipped = 0
    chunk = start
    while chunk and not chunk.endswith(b"\n"):
        chunk = f.readline(_SKIP_CHUNK)
        skipped += len(chunk)
    return skipped


def _given_twice(line: str, key: str) -> bool:
    """Whether the JSON object ``line`` has ``key`` twice at its top level, however spelled
    (``"text"`` and ``"te\\u0078t"`` are one key)."""
    pairs = json.loads(line, object_pairs_hook=lambda pairs: pairs)  # every object as its (key, value) list
    return sum(1 for pair in pairs if isinstance(pair, tuple) and pair[0] == key) > 1


def _spelling_clue(key: str) -> str:
    """Text that a line must hold for ``key`` to be in it spelt with an escape: ``\\u00`` for a
    plain ASCII key (JSON escapes an ASCII character only so, ``\\/`` aside), any backslash for
    another. A line without it, and with ``key`` once as it is, cannot give it twice."""
    plain = key.isascii() and key.isprintable() and not any(c in key for c in '"\\/')
    return "\\u00" if plain else "\\"


def _may_give_twice(line: str, key: str) -> bool:
    """A cheap test before :func:`_given_twice` parses ``line`` again (rarely needed)."""
    return line.count(key) > 1 or _spelling_clue(key) in line


#: JSON nested deeper than this is a bad line, on every Python: up to 3.12 the parser stops near
#: 1,000 levels (its recursion limit), 3.13's goes far deeper, and one corpus must read alike.
MAX_JSON_DEPTH = 500
_UNREADABLE_JSON = "JSON nested too deeply or holding a number too long to read"
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _nested_too_deeply(line: str) -> bool:
    """Whether ``line``, valid JSON, nests arrays and objects deeper than :data:`MAX_JSON_DEPTH`."""
    if line.count("[") + line.count("{") <= MAX_JSON_DEPTH:
        return False  # (cannot be deeper: all most lines cost is two counts)
    import numpy as np

    codes = np.frombuffer(_JSON_STRING.sub("", line).encode(), dtype=np.uint8)  # brackets in strings dropped
    steps = np.isin(codes, (ord("["), ord("{"))).astype(np.int64) - np.isin(codes, (ord("]"), ord("}")))
    return int(np.cumsum(steps).max(initial=0)) > MAX_JSON_DEPTH


def _parse_line(raw: bytes, kind: str, text_field: str) -> str:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"invalid UTF-8 at byte {exc.start}") from None
    line = line.rstrip("\r\n")
    if kind == "text":
        return line
    if not line.strip():
        return ""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON at column {exc.colno}: {exc.msg}") from None
    except (RecursionError, ValueError):  # nested too deeply; a number of thousands of digits
        raise ValueError(_UNREADABLE_JSON) from None
    if _nested_too_deeply(line):
        raise ValueError(_UNREADABLE_JSON)
    if not isinstance(obj, dict):
        raise ValueError("a JSONL line must be an object")
    if text_field not in obj:
        raise ValueError(f"no field {text_field!r} (use --text-field to choose another)")
    if _may_give_twice(line, text_field) and _given_twice(line, text_field):
        raise ValueError(f"the field {text_field!r} is given twice (JSON keeps the last one, silently)")
    value = obj[text_field]
    if not isinstance(value, str):
        kind = "null" if value is None else {bool: "a boolean", int: "a number", float: "a number", list: "a list",
                                              dict: "an object"}.get(type(value), type(value).__name__)
        raise ValueError(f"field {text_field!r} is {kind}, not a string")
    return value
