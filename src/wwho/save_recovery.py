"""Cleaning up after a killed save (:mod:`wwho.savedir`): the marker a save writes into its new
directory, read back, and what a save killed at any step left beside the directory, finished or
taken back (:func:`recover`).

Only names wwho creates are ever removed, and an entry is removed only when its data is still
in the directory (a hard-link twin) or it is a file a wwho save wrote (listed in a manifest or
the marker). A leftover sibling is adopted only when it is this user's and a marker of the save
that made it vouches for it: a directory someone else planted beside yours (in a shared directory
anyone may create ``.wwho-tmp-...``) is left alone, with a warning.

It deliberately does not write a save (:mod:`wwho.savedir` does) and knows no tokenizer format.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wwho.atomic_write import TEMP_PREFIX, process_alive, remove_stale_temps, temp_owner, temp_stem
from wwho.errors import VocabError, WwhoWarning
from wwho.fileio import parse_json, read_bytes
from wwho.manifest import MANIFEST, MAX_MANIFEST_BYTES, listed, matches, plain_name
from wwho.notices import warn

#: The first file a save writes into its new directory, and the proof, for :func:`recover`, that a
#: leftover directory is a save's: who made it (pid, and a random token that is also the end of the
#: directory's name), for which target, the files it writes, and the entries of the old directory it
#: moves back after the exchange (name, device, inode). It moves with the new files into the target
#: and is removed from there when the save is done.
MARKER = ".wwho-save"
MARKER_FORMAT = "wwho-save/1"
MARKER_NEXT = MARKER + ".next"  # the marker's final version, written beside it and renamed over it
_MAX_MARKER_BYTES = MAX_MANIFEST_BYTES


def recover(directory: str | os.PathLike) -> list[str]:
    """Finish what killed saves into ``directory`` left beside it; returns the names moved back.

    A save leaves a sibling directory ``.wwho-tmp-<name>.<pid>.<token>`` when it is killed: its
    new directory (never exchanged), or the old directory (after the exchange). One is adopted
    only if all of these hold: its process is gone; it is a real directory (not a link) owned by
    this user; and a marker written by that save (``.wwho-save``, owned by this user, naming this
    target, the pid and the token) is inside it (a new directory) or inside ``directory`` (after
    the exchange). Then only what the save wrote is removed (the files its marker and manifests
    list, hard-link twins of ``directory``'s entries, its temporary files), and only the entries
    its marker lists as moved out of ``directory`` (same name, device and inode) move back in.
    Anything else stays where it is, and so does the sibling, with a :class:`WwhoWarning`
    naming it: a directory someone else planted beside yours is never moved in, never deleted.
    """
    target = Path(os.path.abspath(directory))
    moved: list[str] = []
    prefix = TEMP_PREFIX + temp_stem(target.name)
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        entries = []
    for entry in entries:
        pid = temp_owner(entry.name)
        if pid is None or entry.name.rsplit(".", 2)[0] != prefix or process_alive(pid):
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue  # a file (remove_stale_temps' business) or a link: not a save's directory
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not _mine(st):
            _left_alone(Path(entry.path), target, f"it belongs to another user (uid {st.st_uid})")
            continue
        moved += settle(target, Path(entry.path), entry.name.rsplit(".", 1)[1])
    _drop_stale_marker(target)
    if target.is_dir():
        remove_stale_temps(target)
    return moved


def settle(target: Path, old: Path, token: str, *, own: bool = False,
           steps: Callable[[], None] | None = None) -> list[str]:
    """Clean up the sibling ``old`` of a save with ``token`` (``own``: this process's save, just
    now): discard it if it is a new directory never exchanged (its marker is inside it), finish
    it if it is the target's old directory (the marker is in the target). Returns names moved back."""
    steps = steps or _no_step
    pid = os.getpid() if own else temp_owner(old.name)
    if pid is None:
        return []
    inside = read_marker(old / MARKER, target.name, pid, token)
    if inside is not None:  # never exchanged: a new directory that did not become the target
        _discard(old, target, inside, steps)
        return []
    outside = read_marker(target / MARKER, target.name, pid, token)
    if outside is not None:  # exchanged (or renamed into place): ``old`` is what the target held before
        moved = _finish(old, target, outside, steps, adopt=own) if os.path.lexists(old) else []
        if not os.path.lexists(old):
            with contextlib.suppress(FileNotFoundError):
                (target / MARKER).unlink()
                steps()
        return moved
    # No marker names it: a save killed before its marker was written leaves its directory empty, or
    # with the marker half-written; anything else is not known to be a save's.
    with contextlib.suppress(OSError):
        names = os.listdir(old)
        if set(names) <= {MARKER, MARKER_NEXT} and all(_mine_file(old / name) for name in names):
            for name in names:
                (old / name).unlink()
            old.rmdir()
            return []
    if os.path.lexists(old):
        _left_alone(old, target, "no marker of a wwho save of yours is in it or in the directory")
    return []


def _discard(new: Path, target: Path, marker: dict[str, Any], steps: Callable[[], None]) -> None:
    """A save's new directory that never became the target: remove what the save wrote (the
    files its marker lists, its manifest, hard links of the target's entries), then the directory."""
    written = {*marker["files"], MANIFEST, MARKER_NEXT}
    kept = []
    for entry in list(os.scandir(new)):
        name, path = entry.name, Path(entry.path)
        if name == MARKER:
            continue  # last: it is what makes the directory a save's
        if _same_file(path, target / name) or (name in written and _mine_file(path)) or _dead_temp(path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                steps()
        else:
            kept.append(name)
    if kept:
        _left_alone(new, target, f"it holds {', '.join(sorted(kept)[:3])}, which no wwho save wrote")
        return
    with contextlib.suppress(FileNotFoundError):
        (new / MARKER).unlink()
        steps()
    with contextlib.suppress(OSError):
        new.rmdir()
        steps()


def _finish(old: Path, target: Path, marker: dict[str, Any], steps: Callable[[], None], *,
            adopt: bool = False) -> list[str]:
    """The target's previous directory after the exchange: move back the entries the marker lists
    (same device and inode), remove what is wwho's (hard-link twins, the old model's files, the
    versions of the files the new save replaced, manifests, markers), then the directory.

    ``adopt``: this process exchanged ``old`` just now, so it is the directory the user had a moment
    ago (with its permissions), and any other entry in it was made there during the save: it moves
    into the target too, where its name is free. A sibling found later (:func:`recover`) is never
    adopted: anyone may plant a directory of that name beside yours."""
    previous = listed(old)  # the old model's files (its manifest is removed last)
    back = {name: (dev, ino) for name, dev, ino in marker["back"]}
    replaced = set(marker["files"])
    moved: list[str] = []
    kept = []
    for entry in list(os.scandir(old)):
        name, path = entry.name, Path(entry.path)
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if back.get(name) == (st.st_dev, st.st_ino):
            there = target / name
            if not os.path.lexists(there):
                with contextlib.suppress(OSError):
                    os.rename(path, there)
                    moved.append(name)
                    steps()
                    continue
            kept.append(name)
        elif name == MANIFEST and _mine_file(path):
            continue  # last: the rule below reads it
        elif _same_file(path, target / name) or _dead_temp(path) or (_mine_file(path) and (
                name in replaced or name in (MARKER, MARKER_NEXT)
                or (name in previous and matches(path, previous[name])))) or (
                name in replaced and _mine_file(path, link=True)):  # a link at a name the save replaced: as a file there
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                steps()
        else:
            there = target / name
            if adopt and temp_owner(name) is None and not os.path.lexists(there):
                # Made in the directory by another program during the save, after the links: it
                # belongs there, as the entries linked before the exchange do.
                with contextlib.suppress(OSError):
                    os.rename(path, there)
                    moved.append(name)
                    steps()
                    continue
            kept.append(name)
    with contextlib.suppress(FileNotFoundError):
        if _mine_file(old / MANIFEST):
            (old / MANIFEST).unlink()
            steps()
    if kept:
        _left_alone(old, target, f"it holds {', '.join(sorted(kept)[:3])}, which no wwho save wrote "
                                 "(or whose name is taken in the directory)")
        return moved
    with contextlib.suppress(OSError):
        old.rmdir()
        steps()
    return moved


def _drop_stale_marker(target: Path) -> None:
    """A marker left in the target by a save killed after its rename or exchange, whose old
    directory is gone already: remove it (only a marker of this user's, of a process that is gone)."""
    path = target / MARKER
    if not _mine_file(path):
        return
    data = read_marker(path, target.name, None, None)
    if data is None or process_alive(data["pid"]):
        return
    if not os.path.lexists(target.parent / f"{TEMP_PREFIX}{temp_stem(target.name)}.{data['pid']}.{data['token']}"):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def read_marker(path: Path, target_name: str, pid: int | None, token: str | None) -> dict[str, Any] | None:
    """The marker at ``path`` if it is a regular file of this user's written by the save of
    ``target_name`` with this ``pid`` and ``token`` (None: any); otherwise None."""
    if not _mine_file(path):
        return None
    try:
        data = parse_json(read_bytes(path, error=VocabError, limit=_MAX_MARKER_BYTES), source=str(path),
                          error=VocabError)
    except VocabError:
        return None
    if not (isinstance(data, dict) and data.get("format") == MARKER_FORMAT and data.get("target") == target_name
            and type(data.get("pid")) is int and isinstance(data.get("token"), str)
            and (pid is None or data["pid"] == pid) and (token is None or data["token"] == token)):
        return None
    files, back = data.get("files"), data.get("back")
    if not (isinstance(files, list) and all(plain_name(n) for n in files) and isinstance(back, list)
            and all(isinstance(b, list) and len(b) == 3 and plain_name(b[0]) and type(b[1]) is int
                    and type(b[2]) is int for b in back)):
        return None
    return data


def _mine(st: os.stat_result) -> bool:
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    return uid is None or st.st_uid == uid


def _mine_file(path: Path, *, link: bool = False) -> bool:
    """A regular file (not a link) owned by this user; ``link``: a symbolic link owned by this user
    (removing it leaves what it points to)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISLNK if link else stat.S_ISREG)(st.st_mode) and _mine(st)


def _dead_temp(path: Path) -> bool:
    """A temporary file of this user's whose wwho process is gone."""
    pid = temp_owner(path.name)
    return pid is not None and _mine_file(path) and not process_alive(pid)


def _left_alone(path: Path, target: Path, why: str) -> None:
    warn(f"{path}: left alone: it is named like a leftover of a wwho save into {target}, but {why}; "
         "wwho neither moves anything out of it nor deletes it (look inside, then remove it yourself)",
         WwhoWarning)


def _same_file(a: Path, b: Path) -> bool:
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _no_step() -> None:
    """The step count of a clean-up that no save runs: the test hooks count only a save's steps."""
