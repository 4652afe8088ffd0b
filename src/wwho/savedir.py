"""A tokenizer directory written all at once, and checked when it is read back.

A tokenizer is several files that must agree: ``vocab.json`` and the Hugging Face
``tokenizer.json`` beside it, a meta tokenizer's three files, ``ranks.tiktoken`` +
``merges.txt`` + ``bytelevel.json``. :func:`save_files` writes them as one unit, so that a
``kill -9`` at any instant leaves the whole old directory or the whole new one, for wwho and
for any other reader (Hugging Face reads ``tokenizer.json`` alone):

1. leftovers of an earlier killed save into the same directory are cleaned up
   (:func:`wwho.save_recovery.recover`);
2. a marker (``.wwho-save``: this process, a random token, the target's name, the files it
   writes), then ``wwho-manifest.json`` (size and sha256 of every file), then every file, is
   written into a new sibling directory ``.wwho-tmp-<name>.<pid>.<token>`` and fsynced;
3. each entry of the existing directory that this save does not replace (your own files, a
   ``checkpoints`` folder) gets a hard link in the new directory; those that cannot
   (subdirectories) are listed in the marker, by name, device and inode;
4. the two directories are exchanged in one system call (Linux ``renameat2(RENAME_EXCHANGE)``;
   a plain ``rename`` when the target does not exist yet);
5. what is left in the old directory is put back or removed: the entries the marker lists (and
   entries another program made there during the save) move into the new directory, hard-link
   twins and the old model's files go, then the emptied old directory, then the marker.

Only names wwho creates are ever removed, and an entry is removed only when its data is still
in the directory (a hard-link twin) or it is a file a wwho save wrote (listed in a manifest or
the marker). A leftover sibling is adopted only when it is this user's and a marker of the save
that made it vouches for it (:mod:`wwho.save_recovery`): a directory someone else planted beside yours
(in a shared directory anyone may create ``.wwho-tmp-...``) is left alone, with a warning.
An interrupt (Ctrl-C) at any step leaves the old directory or the new one, like a kill, and
no sibling: the save cleans up before it lets the interrupt through.

Where the exchange is impossible or unwelcome (a process works in the directory, which the exchange
would leave in a deleted one; not Linux, a filesystem without it, a directory that is or holds a
mount point, a parent that is not writable) every new file is first written beside its old one
(a full disk or a Ctrl-C then leaves the old save whole), then each new one is renamed into its
place, its old one moved aside just before, the manifest last, with Ctrl-C held back for those
renames; a rename refused on the way puts every old file back. Only a kill during them leaves a mix, which is
then *detected* at load instead of avoided. Saves into one directory go one at a time: of one process by
a lock, of several by an ``flock`` on the folder the directory is in (where the filesystem has one).

At load, :func:`wwho.manifest.check_saved` compares the files against the manifest, so files of
different saves (a kill in the fallback mode, a ``tokenizer.json`` copied in from elsewhere) are an
error that names them. This module knows no tokenizer format, and does not clean up after a killed
save itself (:mod:`wwho.save_recovery` does, before each save).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import signal
import sys
import threading
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from wwho.atomic_write import (
    TEMP_PREFIX,
    make_dirs,
    remove_made_dirs,
    temp_stem,
    umask,
    write_failed,
    write_temp,
)
from wwho.background import interrupts_held
from wwho.errors import VocabError, WriteError, printable
from wwho.fileio import json_bytes, tokenizer_path
from wwho.manifest import MANIFEST, MANIFEST_FORMAT, listed, matches, plain_name, read_manifest, sha256
from wwho.notices import warn
from wwho.save_recovery import MARKER, MARKER_FORMAT, MARKER_NEXT, read_marker, recover, settle

#: The files a loader looks for in a directory, in this order: the first one there decides what the
#: directory is (:mod:`wwho.kinds`). A save must not leave one it does not write before its own.
LOAD_ORDER = ("meta_config.json", "vocab.json", "bytelevel.json", "tokenizer.json")
#: Test hook: ``WWHO_CRASH_AFTER=N`` makes a save SIGKILL its own process after its N-th step.
CRASH_ENV = "WWHO_CRASH_AFTER"
#: Test hook: ``WWHO_INTERRUPT_AFTER=N`` sends the save's own process SIGINT (Ctrl-C) after its N-th step.
INTERRUPT_ENV = "WWHO_INTERRUPT_AFTER"
#: errno values of an exchange that this filesystem or directory cannot do (use the fallback).
_NO_EXCHANGE = frozenset({errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.EBUSY, errno.EPERM, errno.EACCES,
                          errno.ENOTSUP, errno.EROFS})


class _Steps:
    """Counts the steps of one save, for the test hooks (``WWHO_CRASH_AFTER``, ``WWHO_INTERRUPT_AFTER``)."""

    def __init__(self) -> None:
        self.crash_after = _step_number(CRASH_ENV)
        self.interrupt_after = _step_number(INTERRUPT_ENV)
        self.done = 0

    def __call__(self) -> None:
        self.done += 1
        if self.done == self.crash_after:
            os.kill(os.getpid(), signal.SIGKILL)
        if self.done == self.interrupt_after:
            signal.raise_signal(signal.SIGINT)


def _step_number(name: str) -> int | None:
    """A test hook's step number: ASCII digits only (``str.isdigit`` also takes ``²``, which ``int``
    refuses), else None, the hook off."""
    value = os.environ.get(name, "")
    return int(value) if value.isascii() and value.isdigit() else None


def check_target(directory: str | os.PathLike) -> Path:
    """Refuse, before any work, a directory to save into that cannot be one (a regular file, or
    below a regular file); absent is fine. Returns it as a Path."""
    path = Path(directory)
    _refuse_dangling(path, "give another directory for the tokenizer's files")
    for p in (path, *path.absolute().parents):
        if p.exists() or p.is_symlink():
            if not p.is_dir():
                raise WriteError(f"{path}: {'exists' if p == path else f'{p} exists'} and is not a directory; "
                                 "give a directory for the tokenizer's files")
            break
    _refuse_foreign_markers(path)
    return path


def _refuse_dangling(path: Path, advice: str) -> None:
    """A :class:`WriteError` where ``path``, or the nearest of its folders that is there, is a
    symbolic link to nothing, or one that loops (which no save can make a directory of)."""
    for p in (path, *path.absolute().parents):
        if p.is_symlink() and not p.exists():
            where = "is" if p == path else f"{p} is"
            to = os.readlink(p)
            link = printable(to)
            try:
                os.stat(p)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise WriteError(f"{path}: {where} a symbolic link to {link} that loops (a link leads back "
                                     f"to itself); {advice}") from None
            end = os.path.realpath(p)
            direct = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(p)), to)) == end
            leads = "" if direct else f", which leads to {printable(end)}"  # (a chain of links)
            raise WriteError(f"{path}: {where} a symbolic link to {link}{leads}, which does not exist; make that "
                             f"directory, or {advice}")
        if p.exists():
            return


def _refuse_foreign_markers(target: Path) -> None:
    """A save writes its marker under names of its own and removes them when it is done: a file of
    the user's there (not a marker of a wwho save into this directory) would be lost, so it is refused."""
    for name in (MARKER, MARKER_NEXT):
        path = target / name
        if os.path.lexists(path) and read_marker(path, Path(os.path.abspath(target)).name, None, None) is None:
            raise WriteError(f"{path}: a save into {target} writes a file of this name for itself and removes it "
                             "when done, and this one is no wwho save's: move it away, or save in another folder")


#: Saves of this process into one directory go one at a time (a lock for each of a fixed number of
#: groups of paths): two threads saving into one directory at once each took the other's exchanged
#: directory for a leftover, and left whole old saves beside it as hidden siblings. Saves of other
#: processes are held off by :func:`_lock_folder`.
def _save_locks() -> list[threading.RLock]:
    return [threading.RLock() for _ in range(64)]


_SAVES = _save_locks()

#: Descriptors holding a folder's lock (:func:`_lock_folder`) for a save of this process, and the
#: guard that keeps a ``fork`` from copying one between its opening and its entry here (or between
#: its close and its removal), which the child would then keep open, and the lock held, for its life.
_FOLDER_LOCKS: set[int] = set()
_FOLDER_GUARD = threading.Lock()


def _fresh_locks() -> None:
    """A child made by ``fork`` gets its own locks (one held by another thread at the fork would be
    copied held, and nobody in the child would release it), and closes its copies of the descriptors
    holding folders' locks (the lock stays the parent's, and goes when the parent's save ends)."""
    global _SAVES, _FOLDER_GUARD
    _SAVES = _save_locks()
    for fd in list(_FOLDER_LOCKS):
        with contextlib.suppress(OSError):
            os.close(fd)
    _FOLDER_LOCKS.clear()
    _FOLDER_GUARD = threading.Lock()


def _lock_folder(folder: Path, target: Path) -> int | None:
    """Hold off saves of other processes (and of this one's other threads) into ``folder``, where
    ``target`` is saved: an exclusive ``flock`` on the folder itself, taken until
    :func:`_unlock_folder` (no file is made; the system drops it when a process ends, killed or
    not). Two processes saving into one directory at once left whole old saves beside it as hidden
    siblings, as two threads did. Where it cannot be taken (no such folder yet, one that cannot be
    opened, a system or network filesystem without ``flock``) the save goes on without it: None."""
    try:
        import fcntl
    except ImportError:
        return None
    with _FOLDER_GUARD:
        try:
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        _FOLDER_LOCKS.add(fd)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # said, then waited for: a silent wait would look like a hang
            warn(f"{printable(str(target))}: waiting for another wwho save into {printable(str(folder))} (of "
                 "another process, or another thread of this one) to finish")
            fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        pass  # a filesystem without locks: the save goes on without
    except BaseException:  # a Ctrl-C while waiting: nothing was done yet
        _unlock_folder(fd)
        raise
    return fd


def _unlock_folder(fd: int | None) -> None:
    if fd is None:
        return
    with _FOLDER_GUARD:
        os.close(fd)
        _FOLDER_LOCKS.discard(fd)


def _before_fork() -> None:
    _FOLDER_GUARD.acquire()


def _after_fork_in_parent() -> None:
    _FOLDER_GUARD.release()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_fresh_locks)


def save_files(directory: str | os.PathLike, files: Mapping[str, bytes], *, kind: str) -> Path:
    """Write ``files`` (name -> content) and a manifest into ``directory`` as one unit; see the
    module docstring. Returns the directory. A failed write raises :class:`WriteError` and
    leaves the directory as it was."""
    if isinstance(directory, (str, os.PathLike)) and not os.fspath(directory):
        # Path("") is the working directory: an unset variable, most likely
        raise WriteError("an empty path: give the directory to save the tokenizer in")
    target = Path(tokenizer_path(directory, "save", error=WriteError))  # (None, 5, a NUL: said so, typed)
    for name in files:
        if not plain_name(name) or name in (MANIFEST, MARKER, MARKER_NEXT) or name.startswith(TEMP_PREFIX):
            raise ValueError(f"not a file name a save may write: {name!r}")
    _refuse_dangling(target, "give another directory to save the tokenizer in")
    if target.is_symlink() and target.resolve().is_dir():
        target = target.resolve()  # save into the directory the link points at; keep the link
    if target.exists() and not target.is_dir():
        raise WriteError(f"{target}: exists and is not a directory; give a directory to save the tokenizer in")
    clash = [name for name in files if (target / name).is_dir()]
    if clash:
        raise WriteError(f"{target / clash[0]}: is a directory; the tokenizer needs that name for a file")
    target = Path(os.path.abspath(target))
    with _SAVES[hash(os.fspath(target)) % len(_SAVES)]:
        fd = _lock_folder(target.parent, target)
        try:
            return _save_into(target, files, kind)
        finally:
            _unlock_folder(fd)


def _save_into(target: Path, files: Mapping[str, bytes], kind: str) -> Path:
    """:func:`save_files` into ``target`` (an absolute path), this process's other saves into it held off."""
    shadow = shadowing_files(target, files)
    if shadow:
        raise WriteError(shadow_message(target, shadow[0]))
    steps = _Steps()
    manifest = {
        "format": MANIFEST_FORMAT,
        "kind": kind,
        "files": {name: {"bytes": len(data), "sha256": sha256(data)} for name, data in sorted(files.items())},
    }
    token = os.urandom(6).hex()
    # The name is chosen before the directory exists (not tempfile.mkdtemp, which returns it only after),
    # so that an interrupt at any instant knows what to remove.
    staging = target.parent / f"{TEMP_PREFIX}{temp_stem(target.name)}.{os.getpid()}.{token}"
    marker = {"format": MARKER_FORMAT, "target": target.name, "pid": os.getpid(), "token": token,
              "files": sorted(files), "back": []}
    dirs: list[Path] = []  # the folders made for the target: taken back if the save fails
    try:
        dirs = make_dirs(target.parent)
        recover(target)
        _refuse_foreign_markers(target)
        os.mkdir(staging, 0o700)
    except WriteError:
        remove_made_dirs(dirs)
        raise
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and target.is_dir():
            return _save_in_place(target, files, manifest, steps)
        remove_made_dirs(dirs)
        raise write_failed(target, exc, directory=True) from None
    except BaseException:
        with contextlib.suppress(OSError):
            staging.rmdir()
        remove_made_dirs(dirs)
        raise
    try:
        steps()
        _write(staging, MARKER, json_bytes(marker), target, steps)
        _write(staging, MANIFEST, json_bytes(manifest), target, steps)
        for name, data in files.items():
            _write(staging, name, data, target, steps)
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
                settle(target, staging, token, own=True, steps=steps)  # removes the marker
                return target
        marker["back"] = _link_others(target, staging, files, steps)
        _write(staging, MARKER_NEXT, json_bytes(marker), target, steps)
        os.replace(staging / MARKER_NEXT, staging / MARKER)
        _fsync_dir(staging)
        if _worked_in(target):  # an exchange would leave that process in a deleted directory
            raise _CannotExchange
        _exchange(staging, target)
    except _CannotExchange:
        settle(target, staging, token, own=True)
        return _save_in_place(target, files, manifest, steps)
    except BaseException as exc:
        # Before the exchange the new files were never visible: they go. After it (an interrupt just
        # then), the old directory's entries are put back as on success. The marker says which.
        settle(target, staging, token, own=True)
        remove_made_dirs(dirs)  # (only those left empty: a target renamed into place stays)
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            raise write_failed(target, exc, directory=True) from None
        raise
    try:
        steps()
        _fsync_dir(target.parent)
        settle(target, staging, token, own=True, steps=steps)
    except BaseException:  # an interrupt while putting things back: finish putting them back, then stop
        settle(target, staging, token, own=True)
        raise
    return target


def shadowing_files(directory: Path, writes: Collection[str]) -> list[str]:
    """Files of :data:`LOAD_ORDER` in ``directory`` that a save writing ``writes`` would leave there
    before its own (not written by it, and not an earlier save's, which it replaces): the directory
    would then load as that file's kind, and its loader refuse the file as not of this save."""
    own = next((i for i, name in enumerate(LOAD_ORDER) if name in writes), None)
    if own is None or not directory.is_dir():
        return []
    try:
        manifest = read_manifest(directory / MANIFEST)
    except (VocabError, OSError):
        manifest = None
    listed = manifest["files"] if manifest else {}
    return [name for name in LOAD_ORDER[:own] if name not in listed and os.path.lexists(directory / name)]


def shadow_message(directory: Path, name: str) -> str:
    return (f"{directory / name}: this file, which no wwho save there wrote, would make the directory load "
            f"as another kind of tokenizer than the one saved: move it away, or save in another folder")


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


def _link_others(target: Path, staging: Path, files: Mapping[str, bytes], steps: _Steps) -> list[list[Any]]:
    """Hard-link into the new directory every entry of ``target`` that this save does not write,
    except the old model's own files (listed in its manifest, unchanged) and wwho's own names.
    Returns ``[name, device, inode]`` of each entry that must be moved back after the exchange
    instead (a subdirectory, or a file where hard links fail): the marker lists them."""
    old = listed(target)
    back: list[list[Any]] = []
    device = os.stat(target).st_dev
    for entry in os.scandir(target):
        name = entry.name
        if name in files or name in (MANIFEST, MARKER, MARKER_NEXT):
            continue  # (a temporary file of a live process is linked too: its rename then lands in the new one)
        if name in old and entry.is_file(follow_symlinks=False) and matches(Path(entry.path), old[name]):
            continue  # a file of the previous save that this one does not write: it goes with the old directory
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue  # gone meanwhile
        if entry.is_dir(follow_symlinks=False):
            if st.st_dev != device:  # a mount point, which no rename moves: the files are replaced in place
                raise _CannotExchange
            back.append([name, st.st_dev, st.st_ino])  # directories cannot be linked: moved after the exchange
            continue
        try:
            os.link(entry.path, staging / name, follow_symlinks=False)
        except OSError:  # no hard links here: moved after the exchange instead
            back.append([name, st.st_dev, st.st_ino])
        else:
            steps()
    return back


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
    """The fallback: every file and the manifest written beside its old one first (where a full
    disk or a Ctrl-C leaves the old save as it was, the new files removed), then each renamed
    over its old one, the manifest last, and the old save's other files removed, with Ctrl-C held
    back for those few renames and removals. Only a kill during them leaves files that do not
    match the manifest, which loading reports."""
    old = listed(target)
    temps: list[Path] = []
    finals: list[Path] = []
    writing = target
    try:
        for name, data in [*files.items(), (MANIFEST, json_bytes(manifest))]:
            writing = target / name
            write_temp(writing, data, temps)
            finals.append(writing)
            steps()
    except BaseException as exc:
        for temp in temps:
            with contextlib.suppress(OSError):
                temp.unlink()
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            raise write_failed(writing, exc, directory=True) from None
        raise
    with interrupts_held():
        _rename_all(temps, finals, steps)
        for name, record in old.items():
            path = target / name
            if name not in files and path.is_file() and not path.is_symlink() and matches(path, record):
                path.unlink()
    _fsync_dir(target)
    return target


def _rename_all(temps: list[Path], finals: list[Path], steps: _Steps) -> None:
    """Each of ``temps`` renamed over its one of ``finals`` (the manifest last), all or none: where a
    rename fails (a folder anyone may write in, with the sticky bit, refuses to replace another
    user's file), those done are undone, every old file is put back and no temporary file stays,
    so the directory holds the old save whole. Each old file is moved aside (``.wwho-tmp-...old``
    beside it) just before its new one takes its place, so that it can be put back; the manifest is
    replaced in one rename, last, so that a kill on the way leaves the old manifest, which names
    what no longer matches (and the old files moved aside stay beside them)."""
    token = os.urandom(6).hex()
    aside: list[tuple[Path, Path]] = []  # (final, where its old file is)
    done: list[tuple[Path, Path]] = []  # (temp, final) renamed
    failed = finals[0]
    try:
        for temp, path in zip(temps, finals, strict=True):
            failed = path
            if path != finals[-1] and os.path.lexists(path):
                moved = path.with_name(f"{TEMP_PREFIX}{temp_stem(path.name)}.{os.getpid()}.{token}.old")
                os.rename(path, moved)
                aside.append((path, moved))
            os.replace(temp, path)
            done.append((temp, path))
            steps()
    except OSError as exc:
        for temp, path in reversed(done):
            with contextlib.suppress(OSError):
                os.rename(path, temp)
        for path, moved in reversed(aside):
            with contextlib.suppress(OSError):
                os.rename(moved, path)
        for temp in temps:
            with contextlib.suppress(OSError):
                temp.unlink()
        raise write_failed(failed, exc, directory=True) from None
    for _, moved in aside:
        with contextlib.suppress(OSError):
            moved.unlink()


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # some filesystems cannot fsync a directory
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _worked_in(target: Path) -> bool:
    """Whether a process whose working directory wwho can see (this one; on Linux, every process of
    this user) works in ``target`` or below it. The exchange swaps the directory itself: such a
    process would be left in the deleted old one (a shell after ``wwho train -o .``, an editor, a
    notebook), where every relative path then fails; the save is made in place instead."""
    real = os.path.realpath(target)

    def under(cwd: str) -> bool:
        return cwd == real or cwd.startswith(real + os.sep)

    with contextlib.suppress(OSError):
        if under(os.path.realpath(os.getcwd())):
            return True
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # not Linux: only this process is known
        return False
    for pid in pids:
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:  # gone, or another user's
            continue
        if under(cwd):
            return True
    return False
