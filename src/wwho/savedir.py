"""A tokenizer directory written all at once, and checked when it is read back.

A tokenizer is several files that must agree: ``vocab.json`` and the Hugging Face
``tokenizer.json`` beside it, a meta tokenizer's three files, ``ranks.tiktoken`` +
``merges.txt`` + ``bytelevel.json``. :func:`save_files` writes them as one unit, so that a
``kill -9`` at any instant leaves the whole old directory or the whole new one, for wwho and
for any other reader (Hugging Face reads ``tokenizer.json`` alone):

1. leftovers of an earlier killed save into the same directory are cleaned up (:func:`recover`);
2. ``wwho-manifest.json`` (size and sha256 of every file), then every file, is written into a
   new sibling directory ``.wwho-tmp-<name>.<pid>.<random>`` and fsynced (a marker file says
   "unfinished" until the last one is written);
3. each entry of the existing directory that this save does not replace (your own files, a
   ``checkpoints`` folder) gets a hard link in the new directory;
4. the two directories are exchanged in one system call (Linux ``renameat2(RENAME_EXCHANGE)``;
   a plain ``rename`` when the target does not exist yet);
5. what is left in the old directory is put back or removed (:func:`recover`): entries that
   could not be linked (subdirectories) move into the new directory, hard-link twins and the
   old model's files go, then the emptied old directory.

Only names wwho creates are ever removed, and an entry is removed only when its data is still
in the directory (a hard-link twin) or it is a file a wwho save wrote (listed in a manifest).
Where the exchange is impossible (not Linux, a filesystem without it, a directory that is a
mount point, a parent that is not writable) the files are replaced one by one, each
atomically, and the manifest last: a kill in between is then *detected* at load instead of
avoided. Two saves into one directory at the same time are not supported.

At load, :func:`check_saved` compares the files against the manifest, so files of different
saves (a kill in the fallback mode, a ``tokenizer.json`` copied in from elsewhere) are an
error that names them. :func:`member` keeps a file name read from a tokenizer file inside
its directory. This module knows no tokenizer format.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import re
import signal
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wwho.errors import VocabError, WriteError
from wwho.fileio import (
    TEMP_PREFIX,
    atomic_open,
    json_bytes,
    parse_json,
    process_alive,
    remove_stale_temps,
    temp_owner,
    umask,
    write_failed,
)

MANIFEST = "wwho-manifest.json"
MANIFEST_FORMAT = "wwho-manifest/1"
#: Present in a new directory until all its files are written: how recover() tells a save that never
#: finished (drop its files) from an old directory left after an exchange (keep what is not wwho's).
UNFINISHED = ".wwho-unfinished"
#: Test hook: ``WWHO_CRASH_AFTER=N`` makes a save SIGKILL its own process after its N-th step.
CRASH_ENV = "WWHO_CRASH_AFTER"
#: errno values of an exchange that this filesystem or directory cannot do (use the fallback).
_NO_EXCHANGE = frozenset({errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.EBUSY, errno.EPERM, errno.EACCES,
                          errno.ENOTSUP, errno.EROFS})
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- writing --------------------------------------------------------------------------------


class _Steps:
    """Counts the steps of one save, for the crash test hook (``WWHO_CRASH_AFTER``)."""

    def __init__(self, *, crash: bool = True) -> None:
        value = os.environ.get(CRASH_ENV, "") if crash else ""
        self.crash_after = int(value) if value.isdigit() else None
        self.done = 0

    def __call__(self) -> None:
        self.done += 1
        if self.done == self.crash_after:
            os.kill(os.getpid(), signal.SIGKILL)


def check_target(directory: str | os.PathLike) -> Path:
    """Refuse, before any work, a directory to save into that cannot be one (a regular file, or
    below a regular file); absent is fine. Returns it as a Path."""
    path = Path(directory)
    for p in (path, *path.absolute().parents):
        if p.exists() or p.is_symlink():
            if not p.is_dir():
                raise WriteError(f"{path}: {'exists' if p == path else f'{p} exists'} and is not a directory; "
                                 "give a directory for the tokenizer's files")
            break
    return path


def save_files(directory: str | os.PathLike, files: Mapping[str, bytes], *, kind: str) -> Path:
    """Write ``files`` (name -> content) and a manifest into ``directory`` as one unit; see the
    module docstring. Returns the directory. A failed write raises :class:`WriteError` and
    leaves the directory as it was."""
    target = Path(directory)
    for name in files:
        if not _plain_name(name) or name == MANIFEST or name.startswith(TEMP_PREFIX):
            raise ValueError(f"not a file name a save may write: {name!r}")
    if target.is_symlink() and target.resolve().is_dir():
        target = target.resolve()  # save into the directory the link points at; keep the link
    if target.exists() and not target.is_dir():
        raise WriteError(f"{target}: exists and is not a directory; give a directory to save the tokenizer in")
    clash = [name for name in files if (target / name).is_dir()]
    if clash:
        raise WriteError(f"{target / clash[0]}: is a directory; the tokenizer needs that name for a file")
    target = Path(os.path.abspath(target))
    steps = _Steps()
    manifest = {
        "format": MANIFEST_FORMAT,
        "kind": kind,
        "files": {name: {"bytes": len(data), "sha256": sha256(data)} for name, data in sorted(files.items())},
    }
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        recover(target)
        staging = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{target.name}.{os.getpid()}.", dir=target.parent))
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and target.is_dir():
            return _save_in_place(target, files, manifest, steps)
        raise write_failed(target, exc, directory=True) from None
    steps()
    try:
        _write(staging, UNFINISHED, b"", target, steps)
        _write(staging, MANIFEST, json_bytes(manifest), target, steps)
        for name, data in files.items():
            _write(staging, name, data, target, steps)
        (staging / UNFINISHED).unlink()
        _fsync_dir(staging)
        os.chmod(staging, (target.stat().st_mode if target.is_dir() else 0o777 & ~umask()) & 0o7777)
        steps()
        if not target.exists():
            try:
                os.rename(staging, target)
            except OSError:
                pass  # someone created it meanwhile: exchange with it below
            else:
                _fsync_dir(target.parent)
                steps()
                return target
        _link_others(target, staging, files, steps)
        in_cwd = _is_cwd(target)
        _exchange(staging, target)
    except _CannotExchange:
        recover(target, staging, force=True)
        return _save_in_place(target, files, manifest, steps)
    except BaseException as exc:
        recover(target, staging, force=True)  # the new files were never visible: drop them
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            raise write_failed(target, exc, directory=True) from None
        raise
    steps()
    if in_cwd:  # our own working directory was the old one: follow the name
        os.chdir(target)
    _fsync_dir(target.parent)
    recover(target, staging, force=True, steps=steps)
    return target


class _CannotExchange(Exception):
    pass


def _write(staging: Path, name: str, data: bytes, target: Path, steps: _Steps) -> None:
    try:
        with open(staging / name, "xb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), 0o666 & ~umask())
            os.fsync(f.fileno())
    except OSError as exc:
        raise write_failed(target / name, exc, directory=True) from None
    steps()


def _link_others(target: Path, staging: Path, files: Mapping[str, bytes], steps: _Steps) -> None:
    """Hard-link into the new directory every entry of ``target`` that this save does not write,
    except the old model's own files (listed in its manifest, unchanged) and wwho's temp files."""
    old = _listed(target)
    for entry in os.scandir(target):
        name = entry.name
        if name in files or name in (MANIFEST, UNFINISHED) or temp_owner(name) is not None:
            continue
        if name in old and entry.is_file(follow_symlinks=False) and _matches(Path(entry.path), old[name]):
            continue  # a file of the previous save that this one does not write: it goes with the old directory
        if entry.is_dir(follow_symlinks=False):
            continue  # directories cannot be linked: recover() moves them after the exchange
        with contextlib.suppress(OSError):  # no hard links here: recover() moves it instead
            os.link(entry.path, staging / name, follow_symlinks=False)
            steps()


def _exchange(a: Path, b: Path) -> None:
    if sys.platform != "linux":
        raise _CannotExchange
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except AttributeError:  # a C library without renameat2 (glibc < 2.28)
        raise _CannotExchange from None
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) != 0:
        code = ctypes.get_errno()
        if code in _NO_EXCHANGE:
            raise _CannotExchange
        raise OSError(code, os.strerror(code), str(b))


def _save_in_place(target: Path, files: Mapping[str, bytes], manifest: dict[str, Any], steps: _Steps) -> Path:
    """The fallback: the new manifest first, then each file atomically, then the old save's other
    files removed. In between, the files do not match the manifest, which loading reports."""
    old = _listed(target)
    with atomic_open(target / MANIFEST, "wb") as f:
        f.write(json_bytes(manifest))
    steps()
    for name, data in files.items():
        with atomic_open(target / name, "wb") as f:
            f.write(data)
        steps()
    for name, record in old.items():
        path = target / name
        if name not in files and path.is_file() and not path.is_symlink() and _matches(path, record):
            path.unlink()
    return target


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # some filesystems cannot fsync a directory
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _is_cwd(path: Path) -> bool:
    try:
        return os.path.samefile(os.getcwd(), path)
    except OSError:
        return False


# --- cleaning up after a killed save -----------------------------------------------------------


def recover(directory: str | os.PathLike, staging: Path | None = None, *, force: bool = False,
            steps: _Steps | None = None) -> list[str]:
    """Finish what killed saves into ``directory`` left beside it; returns what was moved back.

    Looks at the sibling directories ``.wwho-tmp-<name>.<pid>.*`` whose process is gone (or
    ``staging`` with ``force=True``: the caller's own). Each is an unfinished save (its manifest
    names it) or the old directory after an exchange. In either: a hard-link twin of an entry of
    ``directory`` and a file written by a save are removed; anything else (your files, a
    subdirectory) moves into ``directory``, or stays if that name is taken. Then the emptied
    sibling is removed. Never removes anything else, never a directory tree.
    """
    target = Path(os.path.abspath(directory))
    steps = steps or _Steps(crash=False)
    if staging is not None:
        candidates = [staging] if force else []
    else:
        candidates = []
        with contextlib.suppress(OSError):
            for entry in os.scandir(target.parent):
                pid = temp_owner(entry.name)
                if (pid is not None and entry.name.rsplit(".", 2)[0] == TEMP_PREFIX + target.name
                        and not process_alive(pid) and entry.is_dir(follow_symlinks=False)):
                    candidates.append(Path(entry.path))
    moved: list[str] = []
    for old in candidates:
        moved += _empty_into(old, target, steps)
        with contextlib.suppress(OSError):
            old.rmdir()
            steps()
    if target.is_dir():
        remove_stale_temps(target)
    return moved


def _empty_into(old: Path, target: Path, steps: _Steps) -> list[str]:
    own = _listed(old)
    unfinished = (old / UNFINISHED).exists()  # never exchanged: its files never counted
    current = _listed(target) if target.is_dir() else {}
    moved = []
    for entry in list(os.scandir(old)):
        name, path = entry.name, Path(entry.path)
        if name in (MANIFEST, UNFINISHED) and not entry.is_dir(follow_symlinks=False):
            continue  # removed last: the rules below read them
        if entry.is_dir(follow_symlinks=False) or not _written_by_wwho(name, path, target, own, current, unfinished):
            there = target / name
            if not os.path.lexists(there) and target.is_dir():
                with contextlib.suppress(OSError):
                    os.rename(path, there)
                    moved.append(name)
                    steps()
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            steps()
    for name in (MANIFEST, UNFINISHED):
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            (old / name).unlink()
            steps()
    return moved


def _written_by_wwho(name: str, path: Path, target: Path, own: dict, current: dict, unfinished: bool) -> bool:
    """Whether a file left beside ``target`` by a save may go (see :func:`recover`)."""
    if temp_owner(name) is not None:
        return True  # a temporary file of a dead process
    if _same_file(path, target / name):
        return True  # a hard-link twin: the data is in the target
    if name in own and (unfinished or _matches(path, own[name])):
        return True  # a new file of a save that never finished, or the previous model's, unchanged
    # A name the finished save wrote: this is what it replaced, as any save overwrites its files.
    return name in current and not unfinished


def _same_file(a: Path, b: Path) -> bool:
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _matches(path: Path, record: dict[str, Any]) -> bool:
    try:
        return path.stat().st_size == record["bytes"] and file_sha256(path) == record["sha256"]
    except OSError:
        return False


def _listed(directory: Path) -> dict[str, dict[str, Any]]:
    """The files a directory's manifest lists ({} without a readable manifest)."""
    try:
        data = read_manifest(directory / MANIFEST)
    except VocabError:
        return {}
    return data["files"] if data else {}


# --- reading ------------------------------------------------------------------------------------


def read_manifest(path: Path) -> dict[str, Any] | None:
    """The validated manifest at ``path``; None if there is none."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise VocabError(f"{path}: cannot read: {exc.strerror or exc}") from None
    data = parse_json(raw, source=str(path), error=VocabError)
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise VocabError(f"{path}: not a wwho manifest (format is not {MANIFEST_FORMAT!r})")
    if not isinstance(data.get("kind", ""), str):
        raise VocabError(f"{path}: 'kind' must be a string")
    files = data.get("files")
    if not isinstance(files, dict):
        raise VocabError(f"{path}: 'files' must be an object of file name -> {{bytes, sha256}}")
    for name, record in files.items():
        if not _plain_name(name):
            raise VocabError(f"{path}: 'files' entry {name[:80]!r} is not a plain file name")
        if not (isinstance(record, dict) and type(record.get("bytes")) is int and record["bytes"] >= 0
                and isinstance(record.get("sha256"), str) and _SHA256.match(record["sha256"])):
            raise VocabError(f"{path}: 'files' entry {name!r} must be {{\"bytes\": size, \"sha256\": hex digest}}")
    return data


def check_saved(directory: str | os.PathLike, read: Mapping[str, bytes], *, only_listed: bool = False) -> None:
    """Check files just read from ``directory`` (name -> content), and the other files its
    manifest lists, against the manifest; no manifest, no check. A file that does not match,
    or that a loader read but the manifest does not list, raises :class:`VocabError` naming
    it. A listed file that is absent is not an error (you may delete ``tokenizer.json``).

    ``only_listed=True`` (files wwho also reads from elsewhere, e.g. a ``tokenizer.json``):
    a file the manifest does not list is not checked, nor are the others.
    """
    directory = Path(directory)
    path = directory / MANIFEST
    manifest = read_manifest(path)
    if manifest is None:
        return
    files = manifest["files"]
    if only_listed and not any(name in files for name in read):
        return
    foreign = sorted(name for name in read if name not in files)
    if foreign:
        raise VocabError(f"{directory}: {', '.join(foreign)} not listed in {MANIFEST}: it is not part of the save "
                         f"that wrote {', '.join(sorted(files)) or 'nothing'}; save the tokenizer again")
    wrong = []
    for name, record in sorted(files.items()):
        data = read.get(name)
        if data is not None:
            if len(data) != record["bytes"] or sha256(data) != record["sha256"]:
                wrong.append(name)
        elif (directory / name).is_file() and not _matches(directory / name, record):
            wrong.append(name)
    if wrong:
        raise VocabError(
            f"{directory}: {', '.join(wrong)} {'does' if len(wrong) == 1 else 'do'} not match {MANIFEST} "
            f"(size or sha256): files of different saves were mixed, or changed after saving; "
            f"save the tokenizer again")


def member(directory: str | os.PathLike, name: Any, *, source: str, key: str) -> Path:
    """``directory / name`` for a file name read from a tokenizer file (``key`` in ``source``).

    The name must be a plain file name (no directory part, not absolute, not ``..``), and the
    file, symlinks followed, must stay inside ``directory``; otherwise :class:`VocabError`,
    which does not show the content of the file named.
    """
    if not isinstance(name, str) or not _plain_name(name):
        raise VocabError(f"{source}: {key} must be a file name in the same directory, not {str(name)[:80]!r}")
    directory = Path(directory)
    path = directory / name
    real_dir = os.path.realpath(directory)
    if os.path.lexists(path) and os.path.dirname(os.path.realpath(path)) != real_dir:
        raise VocabError(f"{source}: {key} {name!r} is a link to a file outside {directory}; tokenizer files "
                         "must be inside the tokenizer's directory")
    return path


def _plain_name(name: Any) -> bool:
    return (isinstance(name, str) and 0 < len(name) <= 255 and name not in (".", "..")
            and not any(c in name for c in "/\\\0") and name.strip() == name)
