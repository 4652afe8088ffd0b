"""Turn files and directories into counted byte windows for binary BPE training.

Three stages, all streaming:

1. **walk** (:func:`iter_files`): inputs in the order given; directories walked
   depth-first in sorted name order. Skipped: ``.git`` directories, ``.DS_Store``,
   empty files, non-regular files, symlinks (unless ``follow_symlinks``; a path named
   on the command line is always followed), files over ``max_file_size``, and, inside
   directories, files whose name does not end with one of ``extensions``.
2. **chunk** (:func:`iter_windows`) each file into windows, by ``mode``:
   ``file`` (the whole file), ``fixed`` (consecutive ``window_bytes`` pieces),
   ``random`` (consecutive pieces of ``int(2 ** e)`` bytes, ``e`` uniform in
   ``[min_exp, max_exp]``) or ``delim`` (pieces ending just after each ``delimiter``;
   a piece longer than ``window_bytes`` is cut into ``window_bytes`` pieces). In every
   mode the windows of a file concatenate back to the file.
3. **sample and count** (:func:`count_windows`): keep each window with probability
   ``sample_rate``; keep a uniform random ``max_docs_per_file`` of a file's windows; keep
   a uniform random ``max_docs`` of all windows (reservoir sampling); count identical
   windows once with a multiplicity.

Randomness comes from ``random.Random`` seeded with ``seed`` and the file's path
relative to its input, so results do not depend on the machine, the hash seed or the
other files. Memory: one read block, plus at most ``max_docs_per_file`` windows of the
current file, plus the counted windows (at most ``max_docs`` of them); never the input.

What this module deliberately does not do: decompress archives, or insert special
tokens into the data (they are added by the tokenizer's template, never trained on).
"""

from __future__ import annotations

import os
import random
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TypeVar

from wwho.errors import CorpusError, WwhoError
from wwho.notices import plural
from wwho.sizes import MAX_COUNT, MAX_WINDOW_BYTES

MODES = ("file", "fixed", "random", "delim")
#: Largest ``min_exp``/``max_exp``: random windows are at most MAX_WINDOW_BYTES (16 MiB).
MAX_EXP = MAX_WINDOW_BYTES.bit_length() - 1
SKIP_DIRS = frozenset({".git"})
SKIP_FILES = frozenset({".DS_Store"})
_BLOCK = 1 << 20  # read size in delim mode

T = TypeVar("T")


class OptionError(WwhoError, ValueError):
    """An ingestion or training option is invalid (names the option and the value)."""


@dataclass(frozen=True)
class IngestOptions:
    """How files become windows; see the module docstring for the exact semantics."""

    mode: str = "fixed"
    window_bytes: int = 4096
    min_exp: int = 3
    max_exp: int = 14
    delimiter: bytes | None = None
    max_docs: int | None = None
    max_docs_per_file: int | None = None
    sample_rate: float = 1.0
    seed: int = 0
    follow_symlinks: bool = False
    extensions: tuple[str, ...] = ()
    max_file_size: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise OptionError(f"mode {self.mode!r} is not one of {', '.join(MODES)}")
        _positive("window_bytes", self.window_bytes, MAX_WINDOW_BYTES)
        for name in ("min_exp", "max_exp"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_EXP:
                raise OptionError(f"{name} must be an integer from 0 to {MAX_EXP}, got {value!r}")
        if self.min_exp > self.max_exp:
            raise OptionError(f"min_exp ({self.min_exp}) is larger than max_exp ({self.max_exp})")
        if self.mode == "delim" and not self.delimiter:
            raise OptionError("mode 'delim' needs a delimiter (--delimiter-hex, e.g. 0a)")
        if self.delimiter is not None and self.mode != "delim":
            raise OptionError(f"a delimiter only applies to mode 'delim', not {self.mode!r}")
        if self.delimiter is not None and not isinstance(self.delimiter, bytes):
            raise OptionError(f"delimiter must be bytes, got {type(self.delimiter).__name__}")
        for name in ("max_docs", "max_docs_per_file", "max_file_size"):
            if getattr(self, name) is not None:
                _positive(name, getattr(self, name))
        rate = self.sample_rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
            raise OptionError(f"sample_rate must be in (0, 1], got {rate!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise OptionError(f"seed must be an integer, got {self.seed!r}")
        exts = tuple(e if e.startswith(".") else "." + e for e in self.extensions)
        if any(e == "." for e in exts):
            raise OptionError("empty extension in extensions")
        object.__setattr__(self, "extensions", tuple(e.lower() for e in exts))  # matched case-insensitively


def _positive(name: str, value: object, high: int = MAX_COUNT) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise OptionError(f"{name} must be an integer from 1 to {high:,}, got {value!r}")


@dataclass
class IngestStats:
    """What the walk and the sampling did (for progress reports and tests)."""

    files: int = 0
    bytes_read: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    windows_seen: int = 0  # produced by chunking
    windows_sampled: int = 0  # left after sample_rate and max_docs_per_file
    windows_counted: int = 0  # left after max_docs: the sum of the counts
    distinct: int = 0

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


@dataclass
class WindowCounts:
    """Distinct windows with their multiplicities, in first-seen order."""

    counts: dict[bytes, int]
    stats: IngestStats

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def iter_files(paths: Iterable[str | Path], options: IngestOptions = IngestOptions(), *,
               stats: IngestStats | None = None) -> Iterator[tuple[Path, str]]:
    """Yield ``(path, key)`` for each file to read; ``key`` is the path relative to its input.

    Raises :class:`CorpusError` for a missing input or an unlistable directory.
    """
    stats = stats if stats is not None else IngestStats()
    for arg in paths:
        top = Path(arg)
        try:
            st = top.stat()  # a named input is followed even if it is a symlink
        except FileNotFoundError:
            raise CorpusError(f"{top}: no such file or directory") from None
        except OSError as exc:
            raise CorpusError(f"{top}: cannot access: {exc.strerror}") from None
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(top, top, options, stats, {(st.st_dev, st.st_ino)})
        elif _wanted_file(st, options, stats):
            yield top, top.name


def _walk(root: Path, directory: Path, options: IngestOptions, stats: IngestStats,
          active: set[tuple[int, int]]) -> Iterator[tuple[Path, str]]:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as exc:
        raise CorpusError(f"{directory}: cannot list directory: {exc.strerror}") from None
    for entry in entries:
        path = Path(entry.path)
        if entry.is_symlink():
            if not options.follow_symlinks:
                stats.skip("symlink")
                continue
            try:
                st = path.stat()
            except OSError:
                stats.skip("broken symlink")
                continue
        else:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                raise CorpusError(f"{path}: cannot access: {exc.strerror}") from None
        if stat.S_ISDIR(st.st_mode):
            if entry.name in SKIP_DIRS:
                stats.skip(entry.name)
                continue
            ident = (st.st_dev, st.st_ino)
            if ident in active:  # a symlink back to an ancestor
                stats.skip("symlink loop")
                continue
            yield from _walk(root, path, options, stats, active | {ident})
        elif entry.name in SKIP_FILES:
            stats.skip(entry.name)
        elif options.extensions and not entry.name.lower().endswith(options.extensions):
            stats.skip("extension")
        elif _wanted_file(st, options, stats):
            yield path, path.relative_to(root).as_posix()


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


def iter_windows(f: BinaryIO, options: IngestOptions, rng: random.Random) -> Iterator[bytes]:
    """Cut an open binary file into windows by ``options.mode`` (``rng`` draws random sizes)."""
    if options.mode == "file":
        data = f.read()
        if data:
            yield data
    elif options.mode == "fixed":
        while chunk := f.read(options.window_bytes):
            yield chunk
    elif options.mode == "random":
        lo, hi = options.min_exp, options.max_exp
        while chunk := f.read(int(2 ** rng.uniform(lo, hi))):
            yield chunk
    else:
        yield from _delimited(f, options.delimiter or b"", options.window_bytes)


def _delimited(f: BinaryIO, delim: bytes, limit: int) -> Iterator[bytes]:
    buf = b""
    pos = 0  # buf[:pos] has been yielded; cuts restart every `limit` bytes from a piece's start
    search = 0  # no delimiter starts in buf[pos:search]: look for the next one from here
    while block := f.read(_BLOCK):
        keep = min(pos, search)  # a delimiter may straddle the old and the new block
        buf = buf[keep:] + block
        pos -= keep
        search -= keep
        while (j := buf.find(delim, search)) >= 0:
            end = j + len(delim)
            for cut in range(pos, end, limit):
                yield buf[cut:min(cut + limit, end)]
            pos = search = end
        # The next delimiter ends past len(buf), so full `limit` cuts up to here are final.
        while len(buf) - pos >= limit:
            yield buf[pos:pos + limit]
            pos += limit
        search = max(search, len(buf) - len(delim) + 1)
    if pos < len(buf):
        yield buf[pos:]


def reservoir(items: Iterable[T], k: int, rng: random.Random) -> list[T]:
    """A uniform random sample of ``k`` items (all if fewer), in their original order."""
    kept: list[tuple[int, T]] = []
    for i, item in enumerate(items):
        if i < k:
            kept.append((i, item))
        else:
            j = rng.randrange(i + 1)
            if j < k:
                kept[j] = (i, item)
    kept.sort(key=lambda pair: pair[0])
    return [item for _, item in kept]


def _rng(options: IngestOptions, purpose: str, key: str = "") -> random.Random:
    # str seeds are hashed with SHA-512 by random.Random: stable across runs and machines.
    return random.Random(f"wwho.binary:{options.seed}:{purpose}:{key}")


def _file_windows(path: Path, key: str, options: IngestOptions, stats: IngestStats,
                  progress: object | None) -> Iterator[bytes]:
    try:
        f = open(path, "rb")
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror}") from None
    with f:
        stats.files += 1
        windows = _counted(iter_windows(f, options, _rng(options, "size", key)), stats, progress, path)
        if options.sample_rate < 1:
            keep = _rng(options, "keep", key)
            windows = (w for w in windows if keep.random() < options.sample_rate)
        if options.max_docs_per_file is not None:
            windows = iter(reservoir(windows, options.max_docs_per_file, _rng(options, "file-cap", key)))
        for window in windows:
            stats.windows_sampled += 1
            yield window


def _counted(windows: Iterator[bytes], stats: IngestStats, progress: object | None,
             path: Path) -> Iterator[bytes]:
    try:
        for window in windows:
            stats.windows_seen += 1
            stats.bytes_read += len(window)
            if progress is not None:
                progress.update(len(window))  # type: ignore[attr-defined]
            yield window
    except OSError as exc:
        raise CorpusError(f"{path}: read error after {stats.bytes_read} bytes: {exc.strerror}") from None


def iter_sampled(paths: Iterable[str | Path], options: IngestOptions = IngestOptions(), *,
                 stats: IngestStats | None = None, progress: object | None = None) -> Iterator[bytes]:
    """All windows after ``sample_rate`` and ``max_docs_per_file`` (before ``max_docs``)."""
    stats = stats if stats is not None else IngestStats()
    for path, key in iter_files(paths, options, stats=stats):
        yield from _file_windows(path, key, options, stats, progress)


def count_windows(paths: Iterable[str | Path], options: IngestOptions = IngestOptions(), *,
                  progress: bool = False) -> WindowCounts:
    """Walk, chunk, sample and count. :class:`CorpusError` if no window is left."""
    paths = list(paths)
    if not paths:
        raise CorpusError("no input paths given")
    stats = IngestStats()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(unit="B", unit_scale=True, unit_divisor=1024, desc="reading", dynamic_ncols=True)
    try:
        windows = iter_sampled(paths, options, stats=stats, progress=bar)
        if options.max_docs is not None:
            windows = iter(reservoir(windows, options.max_docs, _rng(options, "global")))
        counts: dict[bytes, int] = {}
        get = counts.get
        for window in windows:
            counts[window] = get(window, 0) + 1
    finally:
        if bar is not None:
            bar.close()
    stats.windows_counted = sum(counts.values())
    stats.distinct = len(counts)
    if not counts:
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(stats.skipped.items())) or "nothing"
        raise CorpusError(f"no data to train on in {', '.join(map(str, paths))} "
                          f"({plural(stats.files, 'file')} read; skipped: {skipped})")
    return WindowCounts(counts=counts, stats=stats)
