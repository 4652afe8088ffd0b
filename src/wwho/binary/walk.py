"""The walk of binary training's inputs (:func:`iter_files`): the files to read, each once, with its
path relative to its input; the rules of what is skipped are in :mod:`wwho.binary.ingest`'s docstring.

It deliberately does not read the files (:mod:`wwho.binary.ingest` does), only lists them and
checks that each can be opened, so that a file that cannot is found before reading starts.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from wwho.binary.ingest_types import IngestOptions, IngestStats, OptionError
from wwho.errors import CorpusError, printable


def input_paths(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """The input paths as a list; one path is a list of one, as the text trainers take it."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, Iterable):
        raise OptionError(f"paths must be a list of files or directories, not {type(paths).__name__}")
    out = []
    for n, item in enumerate(paths):
        if not isinstance(item, (str, bytes, os.PathLike)):
            raise OptionError(f"paths[{n}] is {type(item).__name__}, not a file or directory path")
        out.append(Path(os.fsdecode(item)))
    return out


def shown(path: str | bytes | os.PathLike) -> str:
    """A path for a message (:func:`wwho.errors.printable`): a name that is not valid UTF-8 shows
    its odd bytes as escapes."""
    return printable(os.fsdecode(path))


def iter_files(paths: str | os.PathLike | Iterable[str | os.PathLike], *, options: IngestOptions = IngestOptions(),
               stats: IngestStats | None = None,
               exclude: Iterable[str | os.PathLike] = ()) -> Iterator[tuple[Path, str]]:
    """Yield ``(path, key)`` for each file to read; ``key`` is the path relative to its input.

    ``exclude``: files never read (the output of the run), skipped as ``"output"``. Raises
    :class:`CorpusError` for a missing input or an unlistable directory.
    """
    stats = stats if stats is not None else IngestStats()
    walk = _Walk(options, stats, _identities(exclude))
    for top in input_paths(paths):
        try:
            st = top.stat()  # a named input is followed even if it is a symlink
        except FileNotFoundError:
            raise CorpusError(f"{shown(top)}: no such file or directory") from None
        except OSError as exc:
            raise CorpusError(f"{shown(top)}: cannot access: {exc.strerror}") from None
        if walk.seen_before(st):
            continue
        if stat.S_ISDIR(st.st_mode):
            walk.seen.add((st.st_dev, st.st_ino))
            yield from walk.folder(top)
        elif walk.wanted(st, top, named=True):
            yield _readable(top), top.name


def _identities(paths: Iterable[str | os.PathLike]) -> set[tuple[int, int]]:
    found = set()
    for path in input_paths(paths):
        try:
            st = path.stat()
        except OSError:
            continue  # not there yet: nothing to skip
        found.add((st.st_dev, st.st_ino))
    return found


class _Walk:
    """What a walk has met: the files and folders taken (``seen``: each is read once, under the
    first path that takes it), the files left out (each counted once, however many paths reach
    it: a file named on its own is still read after its folder's walk left it out by extension),
    and those never read (``excluded``: the run's output)."""

    def __init__(self, options: IngestOptions, stats: IngestStats, excluded: set[tuple[int, int]]):
        self.options, self.stats, self.excluded = options, stats, excluded
        self.seen: set[tuple[int, int]] = set()
        self.left_out: set[tuple[int, int]] = set()

    def seen_before(self, st: os.stat_result) -> bool:
        """True (and counted) for an excluded file or one already taken."""
        ident = (st.st_dev, st.st_ino)
        if ident in self.excluded:
            self.stats.skip("output")
            return True
        if ident in self.seen:
            self.stats.skip("already read by another path")
            return True
        return False

    def wanted(self, st: os.stat_result, path: Path, *, named: bool = False) -> bool:
        """Whether the file is read (then it is seen); why not is counted the first time only."""
        ident = (st.st_dev, st.st_ino)
        stats = self.stats if ident not in self.left_out else IngestStats()
        if not named and self.options.extensions and not path.name.lower().endswith(self.options.extensions):
            stats.skip("extension")
        elif _wanted_file(st, self.options, stats):
            if named or not _saved_tokenizer(path):
                self.seen.add(ident)
                return True
            stats.skip("a binary tokenizer (an earlier run's output)")
        self.left_out.add(ident)
        return False

    def folder(self, root: Path) -> Iterator[tuple[Path, str]]:
        """Depth-first in sorted name order, with a stack instead of recursion: any depth of folders."""
        stack = [iter(_entries(root))]
        while stack:
            entry = next(stack[-1], None)
            if entry is None:
                stack.pop()
                continue
            if entry.name.startswith("."):
                self.stats.skip("hidden")
                continue
            path = Path(entry.path)
            st = _entry_stat(entry, path, self.options, self.stats)
            if st is None or self.seen_before(st):
                continue
            if stat.S_ISDIR(st.st_mode):
                self.seen.add((st.st_dev, st.st_ino))
                stack.append(iter(_entries(path)))
            elif self.wanted(st, path):
                yield _readable(path), path.relative_to(root).as_posix()


def _saved_tokenizer(path: Path) -> bool:
    """Whether ``path``, found inside an input folder, is a binary tokenizer (an earlier run's ``-o``
    in the folder trained on: read as data, it would change the vocabulary)."""
    from wwho.binary.io import is_saved_binary_tokenizer

    return is_saved_binary_tokenizer(path)


def _readable(path: Path) -> Path:
    """``path``, or the error it would give when read, found while the files are listed (the
    estimate's walk) rather than minutes into reading them."""
    if not os.access(path, os.R_OK):
        raise CorpusError(f"{shown(path)}: cannot read: Permission denied")
    return path


def _entries(directory: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as exc:
        raise CorpusError(f"{shown(directory)}: cannot list directory: {exc.strerror}") from None


def _entry_stat(entry: os.DirEntry, path: Path, options: IngestOptions, stats: IngestStats) -> os.stat_result | None:
    """The entry's stat (its target's, for a followed symlink); None for a skipped symlink."""
    if not entry.is_symlink():
        try:
            return entry.stat(follow_symlinks=False)
        except FileNotFoundError:  # listed, then removed: a folder being written to (as tar, not an error)
            stats.skip("removed while read")
            stats.removed.append(path)
            return None
        except OSError as exc:
            raise CorpusError(f"{shown(path)}: cannot access: {exc.strerror}") from None
    if not options.follow_symlinks:
        stats.skip("symlink")
        return None
    try:
        return path.stat()
    except OSError:
        stats.skip("broken symlink")
        return None


def _wanted_file(st: os.stat_result, options: IngestOptions, stats: IngestStats) -> bool:
    if not stat.S_ISREG(st.st_mode):
        stats.skip("not a regular file")
        return False
    if st.st_size == 0:
        stats.skip("empty")
        return False
    if options.max_file_size is not None and st.st_size > options.max_file_size:
        stats.skip("larger than max_file_size")
        return False
    return True
