"""Loads that see one save whole, even when another process saves into the directory meanwhile.

A save (:mod:`wwho.savedir`) swaps a directory's files in at once, but a loader reads them one by one:
the manifest and ``vocab.json``, or a meta tokenizer's three files, may come from both sides of the
swap. Each file is checked against the manifest, so such a mix is refused ("files of different
saves"), or, where each file was checked against its own save's manifest, it could even pass.
:func:`loads_whole` wraps a loader: when the directory (or its manifest) changed while it read, the
load runs again, a few times, and the last try's result or error stands; a load nested in another
of the same directory leaves the trying to the outer one. Where a load would warn of a changed file
it raises :class:`Overtaken` instead while the directory changed under it (the warning would be of
the next save's file). It does not lock anything (a save never waits for a reader) and does not
hide a mix that no save in progress explains.
"""

from __future__ import annotations

import contextvars
import functools
import os
import time
from collections.abc import Callable
from typing import TypeVar

from wwho.fileio import MANIFEST

T = TypeVar("T")

#: Loads tried in all while saves keep replacing the directory (waiting between them doubles from
#: 10 ms, at most 200 ms: about 1.5 s in all, for a directory saved into without a pause).
TRIES = 10


#: The directory the load running on this thread reads and its identity when it began (None: no
#: load to run again).
_started: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("wwho_load_started", default=None)


class Overtaken(Exception):
    """Raised inside a load, where it would warn of a changed file, when a save replaced the directory
    meanwhile: the load runs again (a warning then would be about files of the next save)."""


def overtaken(directory: object) -> bool:
    """Whether a load running again (not the last try) finds ``directory``, the one it began with,
    changed since (another directory a loader reads is not its business)."""
    start = _started.get()
    return start is not None and _directory(directory) == start[0] and _identity(directory) != start[1]


def _directory(path: object) -> str | None:
    try:
        name = os.fspath(path)  # type: ignore[arg-type]
        return os.path.abspath(name if os.path.isdir(name) else os.path.dirname(name) or ".")
    except (TypeError, ValueError):
        return None


def _identity(path: object) -> tuple | None:
    """What a save changes: the directory (exchanged: a new inode) and its manifest (renamed over)."""
    directory = _directory(path)
    if directory is None:
        return None
    try:
        st = os.stat(directory)
    except OSError:
        return None
    try:
        m = os.lstat(os.path.join(directory, MANIFEST))
        manifest = (m.st_ino, m.st_mtime_ns, m.st_size)
    except OSError:
        manifest = None
    return st.st_dev, st.st_ino, st.st_mtime_ns, manifest


def loads_whole(load: Callable[..., T]) -> Callable[..., T]:
    """Decorate a loader whose first argument (after ``cls``) is the path it reads."""

    @functools.wraps(load)
    def wrapper(*args, **kwargs) -> T:
        path = next((a for a in args[:2] if isinstance(a, (str, os.PathLike))), None)
        start = _started.get()
        if start is not None and start[0] == _directory(path):
            return load(*args, **kwargs)  # inside a load of this directory (load_tokenizer's): it tries again
        for attempt in range(TRIES - 1):
            before = _identity(path)
            token = _started.set((_directory(path), before))
            try:
                result = load(*args, **kwargs)
            except Exception:
                if before is None or _identity(path) == before:
                    raise
            else:
                if _identity(path) == before:
                    return result
            finally:
                _started.reset(token)
            time.sleep(min(0.01 * 2**attempt, 0.2))  # the save finishes its swap
        token = _started.set(None)  # the last try: what it finds stands, warnings too
        try:
            return load(*args, **kwargs)
        finally:
            _started.reset(token)

    return wrapper
