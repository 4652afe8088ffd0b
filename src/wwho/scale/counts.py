"""Piece counts made elsewhere: a dict, or ``piece<TAB>count`` files as Spark or SQL jobs write them.

The trainers' ``train_from_counts`` take these. A *piece* is what the trainer counts: for SGPE a
whitespace-free chunk with the one space before it, or one whitespace character
(:data:`wwho.counting.PIECES`); for byte-level BPE a match of the pre-tokenizer regex. Counts of
a corpus's pieces train the same vocabulary as the corpus itself (the tests check ``vocab.json``
bytes); keys that are not such pieces are trained on as they are.

The file format (UTF-8, one row per line, ``\\n`` or ``\\r\\n`` line ends; a byte order mark at the start
is no part of the first row; ``.gz``, ``.xz`` and ``.bz2`` files are read decompressed, as Spark's
compressed ``part-00000.gz`` outputs are written)::

    piece<TAB>count

* ``count``: ASCII digits, 1 to 2**64 - 1; a piece that appears on several rows (or files)
  has the sum of its counts, which must stay below 2**64;
* ``piece``: non-empty; a tab, line end or backslash inside it is written ``\\t``, ``\\n``,
  ``\\r``, ``\\\\`` (whitespace pieces need this);
* an optional first line ``piece<TAB>count`` (a header) is skipped.

Any other row is a :class:`~wwho.errors.CorpusError` naming ``file:line``. Many files, a
directory or a glob (``part-*``) are read in sorted order. :func:`write_counts` writes the
format (sorted, atomically; compressed by the same names).

This module does not count corpora and does not train.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from wwho.atomic_write import atomic_open
from wwho.corpus import BOM, READ_ERRORS, check_text_file, open_binary
from wwho.corpus_files import resolve_paths
from wwho.errors import CorpusError, brief

MAX_COUNT = 2**64 - 1
_HEADER = "piece\tcount"
_ESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}
_ESCAPE = re.compile(r"\\(.?)", re.DOTALL)
_DIGITS = re.compile(r"[0-9]+")
_MAX_ROW_BYTES = 1 << 24  # a row longer than 16 MiB is not a piece count; bounds memory
#: What ``train_from_counts`` takes: a ``{piece: count}`` mapping, or count files (paths, a
#: directory, a glob).
CountSource = Mapping[str, int] | str | os.PathLike | Iterable[str | os.PathLike]


def iter_counts(counts: CountSource) -> Iterator[tuple[str, int]]:
    """``(piece, count)`` of a dict or of count files (see the module docstring), checked."""
    if isinstance(counts, Mapping):
        return _mapping_counts(counts)
    return read_counts(counts)


def _mapping_counts(counts: Mapping[str, int]) -> Iterator[tuple[str, int]]:
    for piece, count in counts.items():
        if not isinstance(piece, str) or not piece:
            raise CorpusError(f"counts: a key must be a non-empty string, not {brief(piece)}")
        number = None if isinstance(count, bool) or not hasattr(count, "__index__") else count.__index__()
        if number is None or not 1 <= number <= MAX_COUNT:
            raise CorpusError(f"counts[{brief(piece)}]: a count must be a whole number from 1 to 2**64 - 1, "
                              f"not {brief(count)}")
        yield piece, count.__index__()


def read_counts(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> Iterator[tuple[str, int]]:
    """``(piece, count)`` of every row of the count files, in file order."""
    for path in resolve_paths(paths):
        yield from _file_counts(path)


def _file_counts(path: Path) -> Iterator[tuple[str, int]]:
    check_text_file(path)  # compressed under another name, or UTF-16: said so, not "invalid UTF-8"
    lineno = 0
    try:
        with open_binary(path) as f:  # decompressed by its name; never blocks on a FIFO
            while raw := f.readline(_MAX_ROW_BYTES + 1 + (len(BOM) if not lineno else 0)):
                lineno += 1
                if lineno == 1 and raw.startswith(BOM):
                    raw = raw[len(BOM):]  # a byte order mark (Windows tools write one) is no part of a piece
                row = _row(raw, f"{path}:{lineno}", lineno)
                if row is not None:
                    yield row
    except READ_ERRORS as exc:
        raise CorpusError(f"{path}:{lineno + 1}: cannot read (corrupt or truncated file?): {exc}") from None


def _row(raw: bytes, where: str, lineno: int) -> tuple[str, int] | None:
    """One row's ``(piece, count)``, None for the header."""
    if len(raw) > _MAX_ROW_BYTES:
        raise CorpusError(f"{where}: the row is longer than {_MAX_ROW_BYTES:,} bytes")
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{where}: invalid UTF-8 at byte {exc.start}") from None
    line = line.removesuffix("\n")
    line = line.removesuffix("\r")
    if lineno == 1 and line == _HEADER:
        return None
    fields = line.split("\t")
    if len(fields) != 2:
        raise CorpusError(f"{where}: expected piece<TAB>count, found {len(fields) - 1} tabs "
                          "(a tab inside a piece is written \\t)")
    escaped, number = fields
    if not _DIGITS.fullmatch(number) or not 1 <= int(number) <= MAX_COUNT:
        raise CorpusError(f"{where}: the count {brief(number)} is not a whole number "
                          "from 1 to 2**64 - 1")
    piece = _unescape(escaped, where)
    if not piece:
        raise CorpusError(f"{where}: the piece is empty")
    return piece, int(number)


def _unescape(text: str, where: str) -> str:
    if "\\" not in text:
        return text

    def one(m: re.Match) -> str:
        ch = _ESCAPES.get(m.group(1))
        if ch is None:
            raise CorpusError(f"{where}: unknown escape {brief(m.group(0))} in the piece "
                              "(only \\t \\n \\r \\\\ are escapes)")
        return ch

    return _ESCAPE.sub(one, text)


def escape(piece: str) -> str:
    """A piece as written in a count file."""
    return piece.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


#: Compressors by a name's suffix, for the names :func:`read_counts` reads decompressed (gzip's
#: time stamp is 0: the same counts make the same bytes).
_COMPRESSORS = {
    ".gz": lambda f: gzip.GzipFile(filename="", fileobj=f, mode="wb", mtime=0),
    ".xz": lambda f: lzma.LZMAFile(f, "wb"),
    ".bz2": lambda f: bz2.BZ2File(f, "wb"),
}


def write_counts(path: str | os.PathLike, counts: Mapping[str, int] | Iterable[tuple[str, int]]) -> Path:
    """Write counts as a ``piece<TAB>count`` file with a header, sorted by piece, atomically;
    compressed where the name ends in ``.gz``, ``.xz`` or ``.bz2``, as :func:`read_counts` reads it."""
    items = counts.items() if isinstance(counts, Mapping) else counts
    compress = _COMPRESSORS.get(Path(path).suffix.lower())
    with atomic_open(path, "wb", encoding=None) as raw:
        # Closing the compressor writes its end; the temporary file stays open for atomic_open.
        with (compress(raw) if compress else contextlib.nullcontext(raw)) as out:
            text = io.TextIOWrapper(out, encoding="utf-8", newline="\n", write_through=False)
            text.write(_HEADER + "\n")
            for piece, count in sorted(items):
                text.write(f"{escape(piece)}\t{count}\n")
            text.flush()
            text.detach()  # (closing it would close what it wraps)
    return Path(path)


def add_counts(total: dict[str, int], items: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Sum ``items`` into ``total`` (for byte-level training), refusing a sum past 2**64 - 1."""
    for piece, count in items:
        n = total.get(piece, 0) + count
        if n > MAX_COUNT:
            raise CorpusError(f"the count of {brief(piece)} passes 2**64 - 1")
        total[piece] = n
    return total
