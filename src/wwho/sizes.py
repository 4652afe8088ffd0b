"""Sizes and counts given by users (flags, TOML, keyword arguments): parsed and range-checked
before anything is allocated.

A size is an integer written with ASCII digits, optionally with a binary suffix
(``4k`` = 4096, ``16MiB``, ``1G``); ``١٢`` or ``１２`` are not numbers here, although
Python's ``int()`` reads them. Each kind of size has one accepted range, and the error
names the flag or key, the value and that range in one line:

| what | range | why |
|---|---|---|
| vocabulary size (every kind) | up to 2**24 = 16,777,216 | ids must fit the compiled core and HF's 32-bit ids; HF's trainer reserves memory in proportion (a ``vocab_size`` of 2**30 aborts the process) |
| binary window (``window_bytes``, ``2**max_exp``) | 1 B to 16 MiB | a window is one BPE word, held whole, with ~70 bytes of trainer memory per byte |
| line length (``max_line_bytes``) | 1 B to 1 TiB | see :mod:`wwho.corpus` |
| worker processes / threads | 1 to 1024 | one process or thread each |
| frequencies, counts | 0 or 1 to 2**63 - 1 | 64-bit counters |

This module only checks; the code that uses a value decides what it means.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any

from wwho.errors import VocabError

MAX_VOCAB_SIZE = 2**24
MAX_WINDOW_BYTES = 2**24
MAX_WORKERS = 1024
MAX_COUNT = 2**63 - 1

_SIZE = re.compile(r"\s*([0-9]+)\s*([kmgtKMGT]?)(?:i?[bB])?\s*")
_INT = re.compile(r"\s*-?[0-9]+\s*")


#: What a size's error shows as examples: of a number of bytes, and of a count of tokens.
BYTES_EXAMPLE = "4096, 4k or 16MiB"
COUNT_EXAMPLE = "32000 or 32k"


class SizeError(VocabError):
    """A size or count is not a number or is outside its accepted range (names both). A
    :class:`VocabError`, as the trainers raised for bad sizes before this module existed."""


def parse_size(value: Any, where: str, *, example: str = BYTES_EXAMPLE) -> int:
    """``4096``, ``"4096"``, ``"4k"``, ``"4KiB"``, ``"2M"`` -> bytes (binary multiples). ASCII digits only.
    ``example``: what the error shows (a count of tokens is no number of bytes)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and (m := _SIZE.fullmatch(value)):
        return int(m.group(1)) << (10 * " kmgt".index(m.group(2).lower() or " "))
    raise SizeError(f"{where}: expected a size such as {example}, got {value!r}")


def parse_int(value: Any, where: str) -> int:
    """An integer from an int or a string of ASCII digits (``"-3"`` too); never a bool."""
    if isinstance(value, str) and _INT.fullmatch(value):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise SizeError(f"{where}: expected an integer, got {value!r}")
    return value


def check_range(value: Any, where: str, low: int, high: int, *, unit: str = "") -> int:
    """``value`` if it is an int (not a bool) in ``[low, high]``; else a one-line :class:`SizeError`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SizeError(f"{where} must be an integer from {low:,} to {high:,}{unit}, got {value!r}")
    return value


def check_vocab_size(value: Any, where: str = "vocab_size", *, low: int = 1) -> int:
    return check_range(value, where, low, MAX_VOCAB_SIZE)


def check_workers(value: Any, where: str = "workers") -> int | None:
    return None if value is None else check_range(value, where, 1, MAX_WORKERS)


def arg_type(check: Callable[[int, str], Any], flag: str, *, size: bool = False,
             example: str = BYTES_EXAMPLE) -> Callable[[str], int]:
    """An argparse ``type=``: ASCII digits (with a k/M/G suffix when ``size``: ``example`` in errors),
    then ``check``."""

    def convert(text: str) -> int:
        try:
            value = parse_size(text, flag, example=example) if size else parse_int(text, flag)
            check(value, flag)
        except SizeError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{flag}: ")) from None
        return value

    convert.__name__ = "size" if size else "integer"  # argparse names the type in its message
    return convert
