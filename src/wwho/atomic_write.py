"""Atomic single-file writes, through wwho's own temporary files.

Every single file wwho writes goes to a temporary file ``.wwho-tmp-<name>.<pid>.<random>.tmp``
in the same directory, is fsynced and renamed into place, so a killed run never leaves a
torn file. A temporary file whose process is gone (a ``kill -9``) is removed by the next
write into that directory: only names of exactly that format, never anything else. A failed write
(a full disk, no permission) raises :class:`~wwho.errors.WriteError` naming the file; the
old file is unchanged. The folders made for a file are taken back when its write fails
(:func:`make_dirs`, :func:`remove_made_dirs`).

It deliberately does not read files or know formats (:mod:`wwho.fileio` reads, and writes JSON
through here); directories of several files that must agree are :mod:`wwho.savedir`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from wwho.errors import WriteError, WwhoError

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


def file_type(mode: int) -> str:
    """What a file that is not a regular file is, for a message: ``a FIFO (named pipe)``, ..."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


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
    a slash names a directory and is refused (``Path`` would drop the slash and write a file), and
    so is one that is no regular file (a device, a FIFO, a socket: the rename would replace it).
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
    try:
        mode_found = os.stat(path).st_mode
    except (OSError, ValueError):
        mode_found = None
    if mode_found is not None and stat.S_ISDIR(mode_found):  # found only at the rename otherwise
        raise WriteError(f"{path}: is a directory; give a file name to write")
    if mode_found is not None and not stat.S_ISREG(mode_found):  # (the rename would replace a device or FIFO)
        raise WriteError(f"{path}: is {file_type(mode_found)}, not a file: the output is written to a new file "
                         "renamed over it, which would replace it; give a file name")
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


def write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_open(path, "wb") as f:
        f.write(data)

