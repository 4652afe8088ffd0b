"""Small file helpers shared by every reader and writer: atomic single-file writes, JSON in and out.

Every single file wwho writes goes to a temporary file ``.wwho-tmp-<name>.<pid>.<random>.tmp``
in the same directory, is fsynced and renamed into place, so a killed run never leaves a
torn file. A temporary file whose process is gone (a ``kill -9``) is removed by the next
write into that directory: only names of exactly that format, never anything else. A failed write
(a full disk, no permission) raises :class:`~wwho.errors.WriteError` naming the file; the
old file is unchanged.

Reading: :func:`read_bytes` (and :func:`read_json`) reads only regular files, and at most
:func:`max_file_bytes` of them: a directory, a device such as ``/dev/zero``, a FIFO or a socket
is refused before anything is read, never read until memory runs out or blocked on.
:func:`parse_json` refuses duplicate keys and nesting deeper than the parser can take. Each
is one line naming the file. Directories of several files that must agree are
:mod:`wwho.savedir`. Nothing here knows any format.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import select
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from wwho.errors import WriteError, WwhoError, brief, printable

#: The file of a saved tokenizer directory that lists its files with their sizes and sha256
#: (:mod:`wwho.manifest` reads and checks it; :mod:`wwho.wholeload` watches it).
MANIFEST = "wwho-manifest.json"

#: Every temporary name wwho creates starts with this (files here, directories in savedir).
TEMP_PREFIX = ".wwho-tmp-"
#: errno values that mean "this write failed", as opposed to an unrelated error in the caller's code.
WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS, errno.EACCES,
                          errno.EPERM})


def write_failed(path: str | Path, exc: OSError, *, directory: bool = False) -> WriteError:
    """One line for a failed write: the file, the system's reason, and that the old files are intact."""
    reason = exc.strerror or str(exc)
    kept = "the directory's files, if any, are unchanged" if directory else "the existing file, if any, is unchanged"
    return WriteError(f"{path}: cannot write: {reason} (errno {exc.errno}); {kept}")


#: Bytes of a name that a temporary name carries whole: with the prefix, a pid, 12 random hex digits
#: and a suffix it stays within the 255 bytes a file name may have.
_STEM_BYTES = 200


def tokenizer_path(path: object, caller: str) -> str | os.PathLike:
    """``path`` when it can name a file (a ``str`` or ``os.PathLike`` without a NUL); else a
    :class:`~wwho.errors.VocabError` naming ``caller`` (``os.fspath``'s TypeError, or the ValueError of
    an embedded NUL, names neither the value nor the call)."""
    from wwho.errors import VocabError

    if not isinstance(path, (str, os.PathLike)):
        raise VocabError(f"{caller} takes a path (str or os.PathLike), not {brief(path)}")
    try:
        text = os.fspath(path)
    except TypeError:  # a __fspath__ that gives neither str nor bytes
        text = None
    if not isinstance(text, str):
        raise VocabError(f"{caller} takes a path (str or os.PathLike of str), not {brief(path)}")
    if "\0" in text:
        raise VocabError(f"{caller}: {brief(text)} holds a NUL character, which no file name does")
    if not text:  # Path("") is the current directory
        raise VocabError(f"{caller}: an empty path: give a tokenizer file or directory")
    return path


def temp_stem(name: str) -> str:
    """``name`` as temporary names carry it: whole, or, when it is too long for one (a directory named
    with 226-255 bytes), its first bytes and a hash of the whole, so each name keeps its own stem."""
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) <= _STEM_BYTES:
        return name
    import hashlib

    head = raw[: _STEM_BYTES - 17].decode("utf-8", "ignore")  # ignore: a character cut in two
    return f"{head}~{hashlib.sha256(raw).hexdigest()[:16]}"


def temp_name(path: Path, suffix: str = ".tmp") -> Path:
    """A fresh temporary name beside ``path``: ``.wwho-tmp-<name>.<pid>.<random><suffix>``."""
    return path.parent / f"{TEMP_PREFIX}{temp_stem(path.name)}.{os.getpid()}.{os.urandom(6).hex()}{suffix}"


def make_dirs(path: str | Path) -> list[Path]:
    """Create ``path`` and the missing folders above it; returns those this call created, top first,
    for :func:`remove_made_dirs` to take back where what was to go in them fails. An error removes
    them again."""
    missing = []
    p = Path(os.path.abspath(path))
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    made: list[Path] = []
    try:
        for p in reversed(missing):
            try:
                os.mkdir(p)
            except FileExistsError:
                continue  # made meanwhile by someone else: not ours to remove
            made.append(p)
    except BaseException:
        remove_made_dirs(made)
        raise
    return made


def remove_made_dirs(made: Sequence[Path]) -> None:
    """Remove the folders :func:`make_dirs` created, deepest first, each only if it is empty (what
    another process put there meanwhile stays, and so does its folder)."""
    for p in reversed(made):
        with contextlib.suppress(OSError):
            os.rmdir(p)


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8",
                replace: bool = True) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success fsync and rename it to ``path``.

    ``replace=False``: a ``path`` that exists by then (made by another process while this one
    worked, after the caller found it absent) is kept, and the write is a :class:`WriteError`
    saying to pass ``--force``, not a silent replacement.

    On any exception (a Ctrl-C included, at any instant once the temporary file exists) the
    temporary file is removed, and the folders made for ``path``, and ``path`` is left untouched; a failed write (disk full,
    permission) becomes a :class:`WriteError` naming ``path``. A ``path`` that is a symbolic link is
    written where it points, as the shell's ``>`` writes (the link stays a link); one that ends with
    a slash names a directory and is refused (``Path`` would drop the slash and write a file).
    """
    name = os.fspath(path)
    if isinstance(name, str) and name.endswith(("/", os.sep)):
        raise WriteError(f"{name}: names a directory (it ends with {name[-1]!r}); give a file name to write")
    path = Path(name)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    binary = "b" in mode
    made: list[Path] = []
    dirs: list[Path] = []
    # Where an OSError came from: the caller's own work inside the block (a read of its input) is
    # the caller's to report unless it is a failed write; every step of ours names ``path``.
    in_block = False
    if path.is_dir():  # found only at the rename otherwise, named by the temporary file
        raise WriteError(f"{path}: is a directory; give a file name to write")
    try:
        dirs = make_dirs(path.parent)
        remove_stale_temps(path.parent)
        fd = _create_temp(path, made)
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as f:
            in_block = True
            yield f
            in_block = False
            _seal(f)
            # Renamed while still open: its lock (_create_temp) holds until the name is gone.
            if replace:
                os.replace(made[-1], path)  # (the folder removed or replaced meanwhile: ENOENT, named as path's)
            else:
                _rename_new(made[-1], path)
        made.clear()
    except BaseException as exc:
        for tmp in made:
            with contextlib.suppress(OSError):  # absent, or never made (a name the system refused)
                os.unlink(tmp)
        remove_made_dirs(dirs)
        if isinstance(exc, OSError) and not isinstance(exc, WwhoError) and (exc.errno in WRITE_ERRORS or not in_block):
            raise write_failed(path, exc) from None
        raise


def _rename_new(tmp: Path, path: Path) -> None:
    """``tmp`` renamed to ``path``, which must not exist: a hard link is made (refused where the name
    is taken), then ``tmp`` unlinked. Where the filesystem has no hard links, the name is looked at
    just before ``os.replace``."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise WriteError(f"{path}: appeared while this command ran (another process wrote it?); it is left "
                         "as it is: pass --force to replace it") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise
        if os.path.lexists(path):
            raise WriteError(f"{path}: appeared while this command ran (another process wrote it?); it is left "
                             "as it is: pass --force to replace it") from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def write_temp(path: Path, data: bytes, made: list[Path]) -> None:
    """``data`` in a new temporary file beside ``path``, fsynced, with the mode ``open`` gives, for
    the caller to rename (several files renamed together: :mod:`wwho.savedir`). Its name joins
    ``made`` before the file exists, so that the caller's cleanup knows it at any instant."""
    with os.fdopen(_create_temp(path, made), "wb") as f:
        f.write(data)
        _seal(f)


def _create_temp(path: Path, made: list[Path]) -> int:
    """A new temporary file beside ``path``, opened exclusively: its descriptor. The name is chosen
    and appended to ``made`` before the file exists (not tempfile.mkstemp, which returns it only
    after), so an interrupt at any instant after the file is created still knows what to remove."""
    for _ in range(100):
        made.append(temp_name(path))
        try:
            fd = os.open(made[-1], os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        except FileExistsError:
            made.pop()
            continue
        _lock(fd)
        return fd
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path))


def _lock(fd: int) -> bool:
    """Take the advisory lock that tells :func:`remove_stale_temps` a temporary file is being written
    (held until the descriptor closes); False where it is held already or the system has none."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _seal(f: IO[Any]) -> None:
    """Flush and fsync a temporary file, with the mode open() would have given it (it is made 0600)."""
    f.flush()
    os.fchmod(f.fileno(), 0o666 & ~umask())
    os.fsync(f.fileno())


def umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return mask


def temp_owner(name: str) -> int | None:
    """The process id in a temporary name wwho made (``.wwho-tmp-<name>.<pid>.<random>[.tmp]``)."""
    if not name.startswith(TEMP_PREFIX):
        return None
    parts = name.removesuffix(".tmp").rsplit(".", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True


#: Exactly the names :func:`temp_name` gives files: prefix, stem, pid, 12 random hex digits, ``.tmp``.
_TEMP_FILE = re.compile(re.escape(TEMP_PREFIX) + r".+\.[0-9]+\.[0-9a-f]{12}\.tmp", re.DOTALL)


#: A temporary file untouched this long, whose process no longer runs, is left by a killed writer.
STALE_SECONDS = 3600


def remove_stale_temps(directory: str | Path) -> list[str]:
    """Remove the temporary *files* of wwho processes that no longer run; returns their names.

    Only regular files of this user's named exactly as :func:`temp_name` names them
    (``.wwho-tmp-<name>.<pid>.<12 hex digits>.tmp``) whose pid is not a live process, that nobody
    has written for :data:`STALE_SECONDS` and whose writer's lock (:func:`_create_temp`) is free:
    never a name wwho does not make, never a file another running wwho is writing (a pid says
    nothing of a process in another container or on another host sharing the directory), never
    another user's file (in a shared directory such as ``/tmp`` anyone can create such a name).
    A file that cannot be removed is left; it never fails the write that looked.
    """
    removed = []
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        pid = temp_owner(entry.name)
        if pid is None or not _TEMP_FILE.fullmatch(entry.name) or process_alive(pid):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not entry.is_file(follow_symlinks=False) or (uid is not None and info.st_uid != uid) \
                    or now - info.st_mtime < STALE_SECONDS:
                continue
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
            try:
                if not _lock(fd):  # its writer still holds it
                    continue
                os.unlink(entry.path)
            finally:
                os.close(fd)
        except OSError:
            continue
        removed.append(entry.name)
    return removed


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


def write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_open(path, "wb") as f:
        f.write(data)


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


def file_type(mode: int) -> str:
    """What a file that is not a regular file is, for a message: ``a FIFO (named pipe)``, ..."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


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


def parse_json(data: bytes | str, *, source: str, error: type[WwhoError] = WwhoError) -> Any:
    """Parse UTF-8 JSON; a syntax error, a duplicate key or too deep nesting raises ``error``."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return json.loads(text, object_pairs_hook=unique_keys)
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


def read_json(path: str | Path, *, error: type[WwhoError] = WwhoError, what: str = "file") -> Any:
    """Parse a UTF-8 JSON file; any problem raises ``error`` naming the file (and line, column)."""
    return parse_json(read_bytes(path, error=error, what=what), source=str(path), error=error)
