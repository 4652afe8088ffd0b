"""Checkpoints of SGPE training: the directory they live in, the file, written and read back, and
the lock that keeps two trainings out of one directory.

A checkpoint directory holds ``checkpoint.json`` (the merges so far, as string pairs, their
sha256, and a fingerprint of the corpus and options) and a marker file, ``.wwho-checkpoints``,
that says wwho uses the directory and whether it created it. :func:`claim` refuses, before
training, a directory wwho may not use: a symbolic link (writes would land elsewhere, and removal
would follow it), or a directory holding anything but wwho's own checkpoint files as regular
files (a FIFO named like the marker would block the read that removal makes). :func:`remove`
deletes only those files, and then the directory if wwho created it and it is empty: never a
tree, never a file it did not write. A first checkpoint that cannot be written (a full disk)
leaves none of the folders it created.

While a training uses a directory (:func:`using`) it holds an exclusive ``flock`` on the directory
itself (nothing is written for it; the system drops it when the process ends, killed or not). A
second training given the same directory, or the same ``--out``, stops with one error line when
it starts or at its first checkpoint, instead of overwriting the first one's checkpoint and
deleting it at its end; :func:`remove` leaves alone a directory another process holds. Where the
system has no ``flock`` (not POSIX, some network filesystems) trainings are not kept apart.

A training's output (``--out``, or the folder of an output file) that is a checkpoint folder, or
lies inside one, is refused (:func:`refuse_as_output`): the model's files would stay there, and
every later ``--resume`` from the folder would be refused for them.

:func:`load` validates every field of ``checkpoint.json`` and names the file and the field. The
merges must match the sha256 saved with them: a flipped bit or a hand edit that leaves valid JSON
would otherwise be replayed, and the resumed vocabulary would silently differ from an
uninterrupted one. (Checkpoints of earlier versions have no sha256 and are read without that
check.) The merges themselves are checked against the training's words when they are replayed
(:meth:`wwho.bpe.MergeEngine.replay`). This module does not train.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from wwho.atomic_write import TEMP_PREFIX, make_dirs, remove_made_dirs, temp_owner, write_bytes
from wwho.errors import VocabError, WriteError, WwhoWarning, brief
from wwho.fileio import parse_json, read_bytes, write_json
from wwho.notices import warn

try:
    import fcntl
except ImportError:  # not POSIX: no locks
    fcntl = None

FORMAT = "wwho-sgpe-checkpoint/1"
FILE = "checkpoint.json"
MARKER = ".wwho-checkpoints"
#: The most bytes :func:`remove` reads of a marker ("created" or "adopted").
_MARKER_BYTES = 64
#: How a refused resume names the options that changed: by the API's arguments (``segments_only
#: True``) unless a caller spells them otherwise, as ``wwho train`` does by its flags: argument ->
#: (flag, the argument's value when the flag is given; None for a flag that takes a value).
OPTION_FLAGS: ContextVar[Mapping[str, tuple[str, Any]] | None] = ContextVar("option_flags", default=None)

#: Directories a :func:`using` block of this process is in (absolute path -> how deeply nested),
#: the thread whose training is in it (a training on another thread is another training: the
#: directory's lock, taken by the process, cannot tell them apart), and the descriptors holding
#: the locks taken for them. ``_guard`` keeps the first two in step across threads.
_depth: dict[str, int] = {}
_owner: dict[str, int] = {}
_held: dict[str, int] = {}
_guard = threading.Lock()


def _fresh_guard() -> None:
    """A child made by ``fork`` gets its own guard (one held by another thread at the fork would
    be copied held)."""
    global _guard
    _guard = threading.Lock()


os.register_at_fork(after_in_child=_fresh_guard)


def is_checkpoint_file(name: str) -> bool:
    """Whether ``name`` is a file of a checkpoint folder's own (the checkpoint, the marker, their
    temporary files)."""
    return name in (FILE, MARKER) or (
        temp_owner(name) is not None and name.startswith((f"{TEMP_PREFIX}{FILE}.", f"{TEMP_PREFIX}{MARKER}.")))


def _regular(path: Path) -> bool:
    """Whether ``path`` is a regular file, not followed if it is a link (True if it is gone)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _path(directory: object) -> Path:
    if isinstance(directory, bytes) or not isinstance(directory, (str, os.PathLike)):
        raise VocabError(f"checkpoint_dir must be a path (str or os.PathLike), not {brief(directory)}")
    if not os.fspath(directory):
        raise VocabError("checkpoint_dir is empty; give a directory for the checkpoints")
    return Path(directory)


def _checkpoint_sign(folder: Path, *, itself: bool) -> str | None:
    """What makes ``folder`` a checkpoint folder: wwho's marker (a regular file), or, where ``itself``,
    a checkpoint file that wwho wrote (its format named in its first bytes: one of a version without
    the marker); None when neither is there."""
    try:
        if stat.S_ISREG(os.lstat(folder / MARKER).st_mode):
            return MARKER
        if not itself or not stat.S_ISREG(os.lstat(folder / FILE).st_mode):
            return None
        with open(folder / FILE, "rb") as f:
            return FILE if FORMAT.rsplit("/", 1)[0].encode() + b"/" in f.read(200) else None
    except OSError:
        return None


def is_checkpoint_folder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds wwho's checkpoint marker, or a checkpoint file wwho wrote."""
    return _checkpoint_sign(Path(folder), itself=True) is not None


def refuse_as_output(path: str | os.PathLike, flag: str = "--out", *, file: bool = False) -> None:
    """A :class:`VocabError` when ``path`` (an output folder, or with ``file`` an output file) is a
    checkpoint folder or lies inside one: the model's files would stay there, and every later
    ``--resume`` from that folder would be refused for them ("holds files wwho did not write", with
    no word of how they came there)."""
    p = Path(os.path.abspath(path))
    for folder in (p.parents if file else (p, *p.parents)):
        sign = _checkpoint_sign(folder, itself=folder == p)
        if sign is not None:
            where = "is" if folder == p else f"is inside {folder},"
            raise VocabError(f"{flag} {p} {where} a folder of a training's checkpoints (wwho's {sign} is there): "
                             f"files written there would keep that training from resuming; give another {flag} "
                             f"(to continue that training: --resume --checkpoint-dir {folder})")


def claim(directory: str | os.PathLike) -> Path:
    """Check that wwho may keep checkpoints in ``directory`` (it need not exist yet); returns it.

    Nothing is created here: the directory and its marker come with the first checkpoint, so a
    run that fails before then leaves nothing behind. A directory another training holds
    (:func:`using`) is refused now, before the corpus is read.
    """
    path = _path(directory)
    if path.is_symlink():
        raise VocabError(f"checkpoint directory {path}: is a symbolic link; wwho writes checkpoints only into a "
                         "real directory (give its target as --checkpoint-dir)")
    if path.exists():
        if not path.is_dir():
            raise VocabError(f"checkpoint directory {path}: exists and is not a directory")
        names = os.listdir(path)
        # A checkpoint.json is wwho's only beside the marker wwho writes before it: without one,
        # it is a file of that name that someone else put there, which a checkpoint would overwrite
        # and the end of training delete. And wwho writes regular files only: a link, a folder or a
        # FIFO under one of its names is someone else's.
        foreign = sorted(name for name in names if not is_checkpoint_file(name) or not _regular(path / name)
                         or (name == FILE and MARKER not in names))
        if foreign:
            name = foreign[0]
            if not is_checkpoint_file(name):
                why = f"holds files wwho did not write (e.g. {brief(name)})"
            elif not _regular(path / name):
                why = f"holds {brief(name)}, which is not a regular file (a link, a folder, a FIFO), so not wwho's"
            else:
                why = (f"holds {brief(name)} without wwho's marker {MARKER}, which wwho writes before any checkpoint, "
                       "so it is not known to be wwho's (if it is, delete it)")
            raise VocabError(f"checkpoint directory {path}: {why}; checkpoints need a directory of their own "
                             "(give another --checkpoint-dir)")
        if os.path.abspath(path) not in _held:
            fd = _open_locked(path)  # only to see that no other training holds it
            if fd is not None:
                os.close(fd)
    # Found now rather than at the first checkpoint, after the counting and the merges it would cost.
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.is_dir() and not os.access(existing, os.W_OK | os.X_OK):
        raise VocabError(f"checkpoint directory {path}: cannot be written ({existing} is read-only or not "
                         "writable); give another --checkpoint-dir")
    return path


@contextlib.contextmanager
def using(directory: str | os.PathLike) -> Iterator[None]:
    """Hold the lock of ``directory`` from now (if it exists, else from the first :func:`save`)
    until the outermost ``using`` of it in this process ends. Another training holding it is a
    :class:`VocabError`."""
    key = os.path.abspath(directory)
    me = threading.get_ident()
    with _guard:
        if _owner.get(key, me) != me:
            raise VocabError(f"checkpoint directory {directory}: another wwho training (on another thread of this "
                             "process) is using it; two trainings cannot share checkpoints (give each its own "
                             "--out or --checkpoint-dir)")
        _owner[key] = me
        _depth[key] = _depth.get(key, 0) + 1
    try:
        if os.path.isdir(key):
            _lock(Path(directory))
        yield
    finally:
        fd = None
        with _guard:
            _depth[key] -= 1
            if not _depth[key]:
                del _depth[key], _owner[key]
                fd = _held.pop(key, None)
        if fd is not None:
            os.close(fd)


def _open_locked(path: Path) -> int | None:
    """A descriptor of the directory ``path`` holding its lock; None where it cannot be locked
    (gone, or a filesystem without locks). Another process holding it is a :class:`VocabError`."""
    if fcntl is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None  # the writes that follow say what is wrong
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise VocabError(f"checkpoint directory {path}: another wwho training is using it; two trainings cannot "
                         "share checkpoints (give each its own --out or --checkpoint-dir)") from None
    except OSError:
        os.close(fd)
        return None
    return fd


def _lock(path: Path) -> None:
    """Take the lock of ``path`` if this process does not hold it yet; kept while a :func:`using`
    of it lasts, else only checked."""
    key = os.path.abspath(path)
    fd = _held.get(key)
    if fd is not None:
        try:
            if os.path.samestat(os.fstat(fd), os.stat(key)):
                return
        except OSError:
            pass
        del _held[key]  # the directory was removed and made again: lock the new one
        os.close(fd)
    fd = _open_locked(path)
    if fd is None:
        return
    if key in _depth:
        _held[key] = fd
    else:
        os.close(fd)


def _read_marker(marker: Path) -> str:
    try:
        return read_bytes(marker, error=VocabError, what="marker", limit=_MARKER_BYTES).decode(
            "utf-8", "replace").strip()
    except VocabError:
        return ""


def _prepare(path: Path) -> list[Path]:
    """Create the directory (if needed), lock it, and write the marker that says whether wwho
    created it. Returns the folders it created (see :func:`wwho.atomic_write.make_dirs`)."""
    made = make_dirs(path)
    try:
        _lock(path)
        if not os.path.lexists(path / MARKER):
            # Written whole or not at all: an empty marker would read as "adopted", and a folder wwho
            # made would then never be removed.
            write_bytes(path / MARKER, b"created\n" if made else b"adopted\n")
    except BaseException:
        remove_made_dirs(made)
        raise
    return made


def remove(directory: str | os.PathLike) -> None:
    """Delete wwho's checkpoint files in ``directory``, then the directory if wwho created it and
    nothing else is left. A directory another training holds is left as it is."""
    path = Path(directory)
    marker = path / MARKER
    if path.is_symlink() or not path.is_dir() or not marker.exists() or not _regular(marker):
        return  # not a directory wwho claimed: touch nothing
    fd = None
    if os.path.abspath(path) not in _held:
        try:
            fd = _open_locked(path)
        except VocabError:
            return  # another training's checkpoints
    try:
        created = _read_marker(marker) == "created"
        for name in os.listdir(path):
            if is_checkpoint_file(name) and _regular(path / name):
                with contextlib.suppress(FileNotFoundError):
                    (path / name).unlink()
        if created:
            with contextlib.suppress(OSError):  # not empty: someone put a file there; it stays
                path.rmdir()
    finally:
        if fd is not None:
            os.close(fd)


#: Options a checkpoint keeps as their effect, by the option that decides it (``script_characters``
#: does something only with ``prune_freq`` auto; see ``wwho.sgpe.checkpointing.checkpoint_options``).
_DECIDED_BY = {"script_characters": "prune_freq"}


def _what_differs(data: dict[str, Any], options: dict[str, Any] | None, input_sha256: str | None) -> str:
    """What a checkpoint's training had that this one has not, as far as the checkpoint says (those
    of earlier versions, and hand-edited ones, say nothing of it)."""
    saved = data.get("options")
    flags = OPTION_FLAGS.get() or {}

    def said(name: str, value: Any, *, named: bool = True) -> str:
        flag, given = flags.get(name, (name, None))
        if given is None:
            return f"{flag} {brief(value)}" if named else brief(value)
        return f"{'with' if value == given else 'without'} {flag}"

    if isinstance(saved, dict) and options is not None:
        differs = {name for name in options if name in saved and saved[name] != options[name]}
        # An option kept as its effect, which another decides, changes with that other: only it is named.
        differs -= {name for name, decider in _DECIDED_BY.items() if decider in differs}
        changed = [f"{said(name, saved[name])} (now {said(name, options[name], named=False)})" for name in options
                   if name in differs]
        # An option a checkpoint does not name had its default then (one added to the checkpoints since, or
        # one named only when it is not the default, as special_tokens).
        changed += [f"{flags.get(name, (name,))[0]} the default (now {said(name, options[name], named=False)})"
                    for name in options if name not in saved]
        changed += [f"{said(name, saved[name])} (now the default)" for name in saved if name not in options]
        if changed:
            return "other options: " + ", ".join(changed[:8]) + (", ..." if len(changed) > 8 else "")
        if isinstance(data.get("input_sha256"), str) and input_sha256 is not None \
                and data["input_sha256"] != input_sha256:
            return "the same options but another corpus (other words or counts)"
    return "another corpus or other options"


def merges_sha256(merges: Sequence[Sequence[str]]) -> str:
    """The sha256 saved with a checkpoint's merges (of their JSON, every non-ASCII character escaped,
    so that lone surrogates hash too)."""
    text = json.dumps([list(m) for m in merges], ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def save(directory: Path, *, merges: list[tuple[str, str]], fingerprint: str, elapsed: float,
         options: dict[str, Any] | None = None, input_sha256: str | None = None) -> None:
    """Write ``directory``'s checkpoint. ``fingerprint`` decides whether a training may resume from
    it; ``options`` (name -> value) and ``input_sha256`` (the words and counts) only let :func:`load`
    say what differs when it may not."""
    try:
        made = _prepare(directory)
    except WriteError:
        raise
    except OSError as exc:
        raise VocabError(f"checkpoint directory {directory}: cannot create it: {exc.strerror or exc}") from None
    try:
        write_json(directory / FILE, {
            "format": FORMAT,
            "fingerprint": fingerprint,
            "step": len(merges),
            "elapsed_seconds": round(elapsed, 1),
            "merges_sha256": merges_sha256(merges),
            **({} if options is None else {"options": options}),
            **({} if input_sha256 is None else {"input_sha256": input_sha256}),
            "merges": merges,  # pairs, written as JSON lists
        }, indent=None)
    except BaseException:
        if not (directory / FILE).exists():  # the first one failed (a full disk): no folder of a marker alone
            remove(directory)
            remove_made_dirs(made)
        raise


def load(directory: Path, fingerprint: str, *, options: dict[str, Any] | None = None,
         input_sha256: str | None = None) -> list[tuple[str, str]]:
    """The merges of ``directory``'s checkpoint, if it was made by this training (same fingerprint).
    ``options`` and ``input_sha256``, as :func:`save` took them, name what differs if it was not."""
    path = directory / FILE

    def fail(message: str) -> VocabError:
        return VocabError(f"{path}: {message}; delete it (or the checkpoint directory) to start over")

    raw = read_bytes(path, error=VocabError, what="checkpoint")
    try:
        data = parse_json(raw, source=str(path), error=VocabError)
    except VocabError as exc:  # cut short (a full disk, an edit): say so, and what to do
        where = str(exc).removeprefix(f"{path}: ")
        raise fail(f"damaged, not the JSON wwho wrote ({where})") from None

    kind = data.get("format") if isinstance(data, dict) else None
    if kind != FORMAT:
        if isinstance(kind, str) and kind.startswith(FORMAT.rsplit("/", 1)[0] + "/"):
            raise fail(f"its format is {brief(kind)}, which this version of wwho does not read (it reads "
                       f"{FORMAT!r}): made by another version of wwho")
        raise fail(f"not a wwho SGPE checkpoint (format is not {FORMAT!r})")
    if not isinstance(data.get("fingerprint"), str):
        raise fail("'fingerprint' must be a string")
    if data["fingerprint"] != fingerprint:
        raise VocabError(f"{path}: the checkpoint was made with {_what_differs(data, options, input_sha256)}; "
                         "resume with the same ones, or delete it to start over")
    merges = data.get("merges")
    if not isinstance(merges, list):
        raise fail("'merges' must be a list of [left, right] pairs")
    for i, m in enumerate(merges):
        if not (isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) and x for x in m)):
            raise fail(f"'merges'[{i}] is {brief(m)}, not a pair of non-empty strings")
    step = data.get("step", len(merges))
    if type(step) is not int:
        raise fail(f"'step' must be a whole number, not {brief(step)} ({type(step).__name__})")
    if step != len(merges):
        raise fail(f"'step' is {step} but 'merges' has {len(merges)}")
    elapsed = data.get("elapsed_seconds", 0)
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)):
        raise fail(f"'elapsed_seconds' is {brief(elapsed)}, not a number")
    if "merges_sha256" not in data:  # a checkpoint of a version before the sha256, or one edited
        warn(f"{path}: the checkpoint has no 'merges_sha256' (written by a wwho before it, or edited): its "
             f"{len(merges):,} merges are taken unchecked", WwhoWarning)
    elif data["merges_sha256"] != merges_sha256(merges):
        raise fail("its merges do not match the sha256 saved with them ('merges_sha256'): the file was "
                   "changed or damaged after wwho wrote it, and resuming from it would give another vocabulary")
    return [(a, b) for a, b in merges]
