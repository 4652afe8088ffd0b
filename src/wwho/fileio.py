"""Reading files, and JSON in and out: the helpers every loader and writer shares.

Reading: :func:`read_bytes` (and :func:`read_json`) reads only regular files, and at most
:func:`max_file_bytes` of them: a directory, a device such as ``/dev/zero``, a FIFO or a socket
is refused before anything is read, never read until memory runs out or blocked on.
:func:`parse_json` refuses duplicate keys and nesting deeper than the parser can take. Each
is one line naming the file. :func:`tokenizer_path` checks a path a loader is given. Inside
:func:`parsing_once`, a file parsed to tell its kind is not parsed again by its loader.

It deliberately does not write files itself: every write is atomic, through
:mod:`wwho.atomic_write` (:func:`write_json` included); directories of several files that must
agree are :mod:`wwho.savedir`. Nothing here knows any format.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
import select
import stat
import sys
import threading
from pathlib import Path
from typing import IO, Any

from wwho.atomic_write import file_type, write_bytes
from wwho.errors import WwhoError, brief, holds_surrogate, printable

#: The file of a saved tokenizer directory that lists its files with their sizes and sha256
#: (:mod:`wwho.manifest` reads and checks it; :mod:`wwho.wholeload` watches it).
MANIFEST = "wwho-manifest.json"


def tokenizer_path(path: object, caller: str, *, error: type[WwhoError] | None = None) -> str | os.PathLike:
    """``path`` when it can name a file (a ``str`` or ``os.PathLike`` without a NUL); else a
    :class:`~wwho.errors.VocabError` (or ``error``) naming ``caller`` (``os.fspath``'s TypeError, or
    the ValueError of an embedded NUL, names neither the value nor the call)."""
    from wwho.errors import VocabError

    raised = error or VocabError
    if not isinstance(path, (str, os.PathLike)):
        raise raised(f"{caller} takes a path (str or os.PathLike), not {brief(path)}")
    try:
        text = os.fspath(path)
    except TypeError:  # a __fspath__ that gives neither str nor bytes
        text = None
    if not isinstance(text, str):
        raise raised(f"{caller} takes a path (str or os.PathLike of str), not {brief(path)}")
    if "\0" in text:
        raise raised(f"{caller}: {brief(text)} holds a NUL character, which no file name does")
    if not text:  # Path("") is the current directory
        raise raised(f"{caller}: an empty path: give a tokenizer file or directory")
    try:
        os.fsencode(text)  # (a byte of no UTF-8 is a surrogate the file system takes back; others are not)
    except UnicodeEncodeError:
        raise raised(f"{caller}: {brief(text)} holds a lone surrogate, which no file name does") from None
    return path


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_bytes(data: Any, *, indent: int | None = 2) -> bytes:
    """``data`` as UTF-8 JSON (non-ASCII kept readable), with a final newline.

    A lone surrogate (not encodable in UTF-8) is written as its ``\\udXXX`` escape, which
    every JSON reader accepts and Python's reads back as the same lone surrogate.
    """
    return _utf8(json.dumps(data, ensure_ascii=False, indent=indent) + "\n")


def json_rows_bytes(data: dict[str, Any]) -> bytes:
    """A JSON object as UTF-8, one line per key and one line per entry of its large values.

    For vocabulary files: a ``{token: id}`` object gets one ``"token": id`` per line and a list
    of string lists (merge pairs) one ``["a", "b"]`` per line; other values are written on
    their key's line. Readable and greppable like ``indent=1``, but built by ``json``'s C
    string encoder: ``indent`` sends ``json.dumps`` through its pure-Python encoder, which
    is markedly slower on a large vocabulary (see docs/benchmarks.md). Lone surrogates
    are escaped as in :func:`json_bytes`.
    """
    quote = json.encoder.encode_basestring  # the C encoder, non-ASCII kept
    items = []
    for key, value in data.items():
        if isinstance(value, dict) and value and all(type(v) is int for v in value.values()):
            body = json.dumps(value, ensure_ascii=False, separators=(",\n  ", ": "))[1:-1]
            items.append(f" {quote(key)}: {{\n  {body}\n }}")
        elif isinstance(value, list) and value and all(type(row) is list for row in value):
            try:  # the C encoder refuses anything but str: such rows are written below
                body = ",\n  ".join(["[" + ", ".join(map(quote, row)) + "]" for row in value])
            except TypeError:
                items.append(f" {quote(key)}: {json.dumps(value, ensure_ascii=False)}")
            else:
                items.append(f" {quote(key)}: [\n  {body}\n ]")
        else:
            items.append(f" {quote(key)}: {json.dumps(value, ensure_ascii=False)}")
    return _utf8("{\n" + ",\n".join(items) + "\n}\n")


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # only inside strings can a surrogate occur in JSON text
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def write_json(path: str | Path, data: Any, *, indent: int | None = 2) -> None:
    """Write ``data`` as UTF-8 JSON (non-ASCII kept readable), atomically."""
    write_bytes(path, json_bytes(data, indent=indent))


#: The most bytes a loader reads from one file (a vocabulary, a ``tokenizer.json``, a checkpoint):
#: 2 GiB. A vocabulary of the largest size wwho allows (2**24 tokens) with its merges is well under it;
#: parsing a JSON file that size already needs many times its size in memory. ``WWHO_MAX_FILE_BYTES`` (``4G``, ``512M``)
#: sets another bound.
MAX_FILE_BYTES = 2 * 2**30
MAX_FILE_ENV = "WWHO_MAX_FILE_BYTES"
_READ_CHUNK = 1 << 24


def max_file_bytes() -> int:
    """:data:`MAX_FILE_BYTES`, or ``$WWHO_MAX_FILE_BYTES`` when set."""
    value = os.environ.get(MAX_FILE_ENV)
    if not value:
        return MAX_FILE_BYTES
    from wwho.sizes import parse_size

    limit = parse_size(value, MAX_FILE_ENV)
    if limit < 1:
        raise WwhoError(f"{MAX_FILE_ENV} must be at least 1 byte, not {value!r}")
    return limit


def _refuse(path: Path, mode: int, error: type[WwhoError], what: str, fifo: bool = False) -> WwhoError:
    if stat.S_ISDIR(mode):
        return error(f"{path}: is a directory, not a {what}")
    allowed = "a regular file or a FIFO" if fifo else "a regular file"
    if what == "file":
        return error(f"{path}: is {file_type(mode)}, not {allowed}")
    return error(f"{path}: is {file_type(mode)}; a {what} must be {allowed}")


def open_regular(path: str | Path, *, error: type[WwhoError] = WwhoError, what: str = "file",
                 fifo: bool = False) -> IO[bytes]:
    """``path`` opened for reading (binary, unbuffered), after refusing what is not a regular file:
    a directory, a device (``/dev/zero`` never ends), a socket, a FIFO (it blocks until a writer
    comes; ``fifo=True`` accepts one, for an input read once as a stream). The check is made on
    the path (symlinks followed) and again on the open file, which is opened without blocking, so
    a FIFO put in its place meanwhile cannot hang the open. Errors are ``error`` naming the path."""
    path = Path(path)
    if "\x00" in str(path):  # (os.stat's ValueError otherwise; no file name holds one)
        raise error(f"{printable(str(path))}: no such {what} (a file name holds no NUL character)")
    try:
        mode = os.stat(path).st_mode
        if not (stat.S_ISREG(mode) or (fifo and stat.S_ISFIFO(mode))):
            raise _refuse(path, mode, error, what, fifo)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_BINARY", 0))
    except (FileNotFoundError, NotADirectoryError):
        raise error(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a {what}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISREG(mode) or (fifo and stat.S_ISFIFO(mode))):
            raise _refuse(path, mode, error, what, fifo)
        if stat.S_ISFIFO(mode) and hasattr(select, "poll"):
            # Opened without blocking, a FIFO no writer has opened yet reads as empty at once. Wait
            # for a writer's first bytes (or its close) as `cat` does; until one has come, a FIFO
            # never reports a hang-up, so this does not return early.
            waiting = select.poll()
            waiting.register(fd, select.POLLIN)
            waiting.poll()
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a FIFO accepted as a stream waits for its data, as standard input does
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | Path, *, error: type[WwhoError] = WwhoError, what: str = "file",
               limit: int | None = None) -> bytes:
    """The bytes of a regular file. A missing or unreadable file, one that is not a regular file
    (:func:`open_regular`), or one larger than ``limit`` (default :func:`max_file_bytes`) raises
    ``error`` naming it; at most ``limit + 1`` bytes are ever read, so a file that grows while it
    is read cannot pass the bound either."""
    path = Path(path)
    limit = max_file_bytes() if limit is None else limit
    with open_regular(path, error=error, what=what) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise error(f"{path}: is {size:,} bytes, more than the {limit:,} wwho reads from a {what}"
                            + _limit_hint(limit))
            parts, total = read_upto(f, limit, size=size)
        except OSError as exc:
            raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
        except MemoryError:
            parts = None  # (what was read is freed before the error is made)
            raise error(f"{path}: not enough memory to read its {size:,} bytes") from None
    if total > limit:
        raise error(f"{path}: grew past {limit:,} bytes while it was read, more than wwho reads from a {what}"
                    + _limit_hint(limit))
    try:
        return b"".join(parts)
    except MemoryError:
        raise error(f"{path}: not enough memory to hold its {total:,} bytes") from None


def read_upto(f: IO[bytes], limit: int, *, size: int | None = None) -> tuple[list[bytes], int]:
    """The chunks of ``f`` until it ends or passes ``limit`` (at most ``limit + 1`` bytes are read,
    so more than ``limit`` in all means "too large"), and their total. ``size``: what the file is
    expected to hold, asked for in one read."""
    parts: list[bytes] = []
    total = 0
    want = -1 if size is None else size + 1  # one more than its size: the read that says it ended (or grew)
    while total <= limit:
        chunk = f.read(min(want - total if total < want else _READ_CHUNK, limit + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return parts, total


def _limit_hint(limit: int) -> str:
    return f" (set {MAX_FILE_ENV} to read more)" if limit == max_file_bytes() else ""


class DuplicateKey(ValueError):
    """A key given twice in one JSON object (``unique_keys``); args: the key, the object's keys."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key, list(out))
            seen.add(key)
    return out


def _line_column(text: str, offset: int) -> str:
    return f"line {text.count(chr(10), 0, offset) + 1}, column {offset - text.rfind(chr(10), 0, offset)}"


#: Inside :func:`parsing_once`: (the scope's thread, at most one (bytes, parsed value) that
#: :func:`parse_json` was asked to keep). A context copied into another thread (``asyncio.to_thread``)
#: sees the scope as absent there: the one value is never handed between threads.
_kept: contextvars.ContextVar[tuple[int, list[tuple[bytes, Any]]] | None] = contextvars.ContextVar(
    "wwho_kept_json", default=None)


def _kept_here() -> list[tuple[bytes, Any]] | None:
    scope = _kept.get()
    return scope[1] if scope is not None and scope[0] == threading.get_ident() else None


@contextlib.contextmanager
def parsing_once():
    """A scope in which a JSON file read to tell what kind of tokenizer it holds (``keep=True``)
    is not parsed a second time by the loader that reads the same bytes (a large vocabulary's
    ``tokenizer.json`` is slow to parse). What was kept is dropped at the scope's end, or by
    :func:`drop_kept`; an inner scope in the same thread is the outer one."""
    if _kept_here() is not None:
        yield
        return
    token = _kept.set((threading.get_ident(), []))
    try:
        yield
    finally:
        _kept.reset(token)


def drop_kept() -> None:
    """Drop what :func:`parse_json` keeps in this scope (a loader's end: nothing is held longer)."""
    kept = _kept_here()
    if kept:
        kept.clear()


def parse_json(data: bytes | str, *, source: str, error: type[WwhoError] = WwhoError, keep: bool = False,
               surrogates: bool = True) -> Any:
    """Parse UTF-8 JSON; a syntax error, a duplicate key or too deep nesting raises ``error``.
    ``keep``: inside :func:`parsing_once`, the value is handed to the next parse of the same bytes
    (which must not change it: both get one object). ``surrogates=False``: a string holding a lone
    surrogate (an escape such as ``\\ud800``) raises ``error`` naming where it is; by default such
    strings are read (:func:`json_bytes` writes them, for bytes that are no UTF-8)."""
    kept = _kept_here()
    if kept and isinstance(data, bytes) and kept[0][0] == data:
        value = kept[0][1]
        if not keep:  # (a kind told twice keeps it for the loader still)
            kept.clear()
    else:
        value = _parse_json(data, source=source, error=error)
        if keep and kept is not None and isinstance(data, bytes):
            kept[:] = [(data, value)]
    if not surrogates and _SURROGATE_ESCAPE.search(data if isinstance(data, str) else data.decode("utf-8")):
        _refuse_lone_surrogates(value, source=source, error=error)  # (UTF-8 itself cannot hold one)
    return value


def _parse_json(data: bytes | str, *, source: str, error: type[WwhoError]) -> Any:
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = json.loads(text, object_pairs_hook=unique_keys)
    except UnicodeDecodeError as exc:
        raise error(f"{source}: not UTF-8 (byte offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise error(f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except DuplicateKey as exc:
        key, keys = exc.args
        held = ", ".join(brief(k, 40) for k in keys[:6])
        raise error(f"{source}: the key {brief(key, 80)} appears twice in one JSON object (the object "
                    f"with the keys {held}{', ...' if len(keys) > 6 else ''})") from None
    except RecursionError:
        raise error(f"{source}: JSON nested too deeply to be read (about a thousand levels)") from None
    except MemoryError:  # parsing takes several times the file's size
        raise error(f"{source}: not enough memory to parse its {len(data):,} bytes of JSON") from None
    except ValueError:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        found = re.search(rf"\d{{{sys.get_int_max_str_digits() + 1},}}", text)
        where = f" at {_line_column(text, found.start())}, of {len(found.group()):,} digits" if found else ""
        raise error(f"{source}: a number in the JSON is too long to be read{where}") from None
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _refuse_lone_surrogates(value: Any, *, source: str, error: type[WwhoError]) -> None:
    """Raise ``error`` naming where in ``value`` (parsed JSON) a string holds a lone surrogate: it is
    no character, and one read into a name or a token would fail later, far from the file, wherever
    the string is encoded or printed."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if holds_surrogate(item):
                raise error(f"{source}: {where or 'the value'} holds a lone surrogate ({brief(item, 80)}), "
                            "which is no character")
        elif isinstance(item, dict):
            for key, inner in item.items():
                if holds_surrogate(key):
                    raise error(f"{source}: a key{' of ' + where if where else ''} holds a lone surrogate "
                                f"({brief(key, 80)}), which is no character")
                stack.append((inner, f"{where}[{brief(key, 60)}]" if where else brief(key, 60)))
        elif isinstance(item, list):
            stack.extend((inner, f"{where}[{i}]") for i, inner in enumerate(item))


def read_json(path: str | Path, *, error: type[WwhoError] = WwhoError, what: str = "file") -> Any:
    """Parse a UTF-8 JSON file; any problem raises ``error`` naming the file (and line, column)."""
    return parse_json(read_bytes(path, error=error, what=what), source=str(path), error=error)
