"""The text ``wwho encode`` writes for a block of encoded lines: ``--ids``, ``--tokens`` or ``--json``.

Each writer takes a block's results (one id list per input line) and writes one output line per
input line. A line of more than :data:`IDS_AT_ONCE` ids is written in pieces of that many, so its
output is never held whole: beyond the line's own ids, the memory of its output is bounded,
whatever its length. The text of each id (its decimal digits, its readable token, its JSON string)
is made once per id and kept in a table bounded by the vocabulary. This module does not encode,
read input or open files.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO

#: Ids below this have a table entry (more than any vocabulary's ids; the table is a list of one
#: reference per id up to the largest seen, its texts made on first use); larger ids (no
#: vocabulary's) are turned into text each time.
MAX_ID_TABLE = 1 << 22

#: Ids turned into text at a time: a line of more is written in pieces of this many, so that its
#: text is never held whole (an int and a string reference per id while a piece is made).
IDS_AT_ONCE = 1 << 16


def write_text(out: IO[bytes], text: str, *, errors: str = "surrogatepass") -> None:
    """UTF-8; a lone surrogate (SGPE decodes them losslessly) as its surrogate-pass bytes."""
    out.write(text.encode("utf-8", errors))
    out.flush()


class _Table:
    """``id -> text``, made once per id by ``make`` on its first use and kept in a list indexed by
    id (ids below :data:`MAX_ID_TABLE`: the list is as long as the largest id seen)."""

    def __init__(self, make: Callable[[int], str]) -> None:
        self.make = make
        self.known: list[str | None] = []

    def texts(self, ids: list[int]) -> list[str]:
        """The text of each of ``ids``."""
        if not ids:
            return []
        top = max(ids) if min(ids) >= 0 else MAX_ID_TABLE
        if top >= MAX_ID_TABLE:  # not a vocabulary's ids: no table for them
            return [self.make(i) for i in ids]
        known = self.known
        if top >= len(known):
            known += [None] * (top + 1 - len(known))
        return [text if (text := known[i]) is not None else self._made(i) for i in ids]

    def _made(self, i: int) -> str:
        text = self.known[i] = self.make(i)
        return text


class LineWriter:
    """Writes each line of ids as ``fields[0].before + sep.join(texts) + ... + end``: each field is
    (the text before it, the table of its texts, their separator). Lines are written in groups of
    at most :data:`IDS_AT_ONCE` ids, whose texts are made at once; a longer line alone, in pieces."""

    def __init__(self, fields: list[tuple[str, _Table, str]], end: str, *, errors: str = "surrogatepass") -> None:
        self.fields = fields
        self.end = end
        self.errors = errors

    def write(self, out: IO[bytes], results: list[list[int]]) -> None:
        """One output line per id list of ``results``, in order."""
        pending: list[int] = []
        bounds = [0]
        for ids in results:
            if len(bounds) > 1 and (len(ids) > IDS_AT_ONCE or bounds[-1] + len(ids) > IDS_AT_ONCE):
                self._write_group(out, pending, bounds)
                pending, bounds = [], [0]
            if len(ids) > IDS_AT_ONCE:
                self._write_long(out, ids)
                continue
            pending += ids
            bounds.append(len(pending))
        if len(bounds) > 1:
            self._write_group(out, pending, bounds)

    def _write_group(self, out: IO[bytes], ids: list[int], bounds: list[int]) -> None:
        """The lines whose ids are ``ids[bounds[k]:bounds[k + 1]]`` (at most :data:`IDS_AT_ONCE`)."""
        columns = [(before, table.texts(ids), sep) for before, table, sep in self.fields]
        end = self.end
        if len(columns) == 1 and not columns[0][0]:  # (--ids and --tokens: the common case, made quicker)
            _, texts, sep = columns[0]
            lines = [sep.join(texts[a:b]) + end for a, b in zip(bounds, bounds[1:])]
        else:
            lines = ["".join([before + sep.join(texts[a:b]) for before, texts, sep in columns]) + end
                     for a, b in zip(bounds, bounds[1:])]
        write_text(out, "".join(lines), errors=self.errors)

    def _write_long(self, out: IO[bytes], ids: list[int]) -> None:
        for before, table, sep in self.fields:
            write_text(out, before)
            for start in range(0, len(ids), IDS_AT_ONCE):
                piece = ids[start:start + IDS_AT_ONCE]
                write_text(out, (sep if start else "") + sep.join(table.texts(piece)), errors=self.errors)
        write_text(out, self.end)


def id_text() -> LineWriter:
    """``--ids``: ``" ".join(map(str, ids))`` per line."""
    return LineWriter([("", _Table(str), " ")], "\n")


def token_text(show: Callable[[int], str]) -> LineWriter:
    """``--tokens``: each id's readable token (``show(id)``), joined by ``" | "``, per line."""
    return LineWriter([("", _Table(show), " | ")], "\n")


def json_text(show: Callable[[int], str]) -> LineWriter:
    """``--json``: ``json.dumps({"ids": ids, "tokens": tokens}, ensure_ascii=False)`` per line, the
    tokens from ``show(id)``; a lone surrogate in a token is written as its JSON escape ``\\udXXX``."""
    tokens = _Table(lambda i: json.dumps(show(i), ensure_ascii=False))
    return LineWriter([('{"ids": [', _Table(str), ", "), ('], "tokens": [', tokens, ", ")], "]}\n",
                      errors="backslashreplace")
