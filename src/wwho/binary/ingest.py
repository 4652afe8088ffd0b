"""Turn files and directories into counted byte windows for binary BPE training.

Three stages, all streaming:

1. **walk** (:func:`iter_files`): inputs in the order given; directories walked
   depth-first in sorted name order. Skipped: hidden files and folders (a name starting
   with ``.``, such as ``.git`` or ``.ssh``; a hidden file named as an input is read), empty
   files, non-regular files, symlinks (unless ``follow_symlinks``; a path named as an input
   is always followed), files over ``max_file_size``, inside directories files whose name
   does not end with one of ``extensions``, the paths in ``exclude`` (the output being
   written), inside directories a binary tokenizer (an earlier run's output), and a file or
   directory already reached by another path (symlinks, hard links, an input named twice): each
   is read once, under the first path that reached it.
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

**Read at most what was estimated.** Training first estimates its memory from the files' sizes
(:mod:`wwho.binary.budget`), then reads them. Given those sizes (``sizes=``), each file is read up
to its estimated size only: a file that grew in between (a log being written) is cut there, and one
that appeared in between is not read, each said in one warning naming the file. ``file`` mode
draws whether a file is kept before reading it, so a file sampled out is never read.

Randomness comes from ``random.Random`` seeded with ``seed`` and the bytes of the file's
path relative to its input (``os.fsencode``: any name the system allows), so results do not depend on the machine, the hash seed or the
other files. Memory: one read block, plus at most ``max_docs_per_file`` windows of the
current file, plus the counted windows (at most ``max_docs`` of them); never the input.

What this module deliberately does not do: decompress archives, or insert special
tokens into the data (they are added by the tokenizer's template, never trained on).
"""

from __future__ import annotations

import io
import os
import random
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TypeVar

from wwho.errors import CorpusError, WwhoError, brief, printable
from wwho.fileio import open_regular
from wwho.notices import plural, warn
from wwho.sizes import MAX_COUNT, MAX_WINDOW_BYTES

MODES = ("file", "fixed", "random", "delim")
#: Largest ``min_exp``/``max_exp``: random windows are at most MAX_WINDOW_BYTES (16 MiB).
MAX_EXP = MAX_WINDOW_BYTES.bit_length() - 1
_BLOCK = 1 << 20  # read size in delim mode

T = TypeVar("T")


class OptionError(WwhoError, ValueError):
    """An ingestion or training option is invalid (names the option and the value)."""


class NothingSampledError(CorpusError):
    """``sample_rate`` kept none of the windows: no data to train on. ``rate``, ``windows`` (how
    many there were) and ``where`` (the inputs) let a caller say it in its own terms: ``name`` is
    the rate's name (``--sample-rate`` on the command line), ``advice`` what to do."""

    def __init__(self, rate: float, windows: int, where: str, *, name: str = "sample_rate",
                 advice: str | None = None) -> None:
        self.rate, self.windows, self.where = rate, windows, where
        super().__init__(f"no data to train on in {where}: {name} {rate:g} kept none of its "
                         f"{plural(windows, 'window')}; {advice or 'raise ' + name}")


@dataclass(frozen=True, kw_only=True)
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
        if not isinstance(self.extensions, (tuple, list)) or not all(isinstance(e, str) for e in self.extensions):
            raise OptionError(f"extensions must be a tuple of strings such as ('so', 'gz'), "
                              f"got {brief(self.extensions)}")
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
    #: files read only up to the size estimated before reading: (path, estimated, size when read)
    grown: list[tuple[Path, int, int]] = field(default_factory=list)
    appeared: list[Path] = field(default_factory=list)  # found when reading, not when estimating: not read

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


def input_paths(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """The input paths as a list; one path or text given where a list belongs is refused in one line."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise OptionError(f"paths must be a list of files or directories, not one {type(paths).__name__}: "
                          f"pass [{brief(paths, 60)}]")
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


def iter_files(paths: Iterable[str | os.PathLike], *, options: IngestOptions = IngestOptions(),
               stats: IngestStats | None = None,
               exclude: Iterable[str | os.PathLike] = ()) -> Iterator[tuple[Path, str]]:
    """Yield ``(path, key)`` for each file to read; ``key`` is the path relative to its input.

    ``exclude``: files never read (the output of the run), skipped as ``"output"``. Raises
    :class:`CorpusError` for a missing input or an unlistable directory.
    """
    stats = stats if stats is not None else IngestStats()
    seen = _identities(exclude)
    excluded = set(seen)
    for top in input_paths(paths):
        try:
            st = top.stat()  # a named input is followed even if it is a symlink
        except FileNotFoundError:
            raise CorpusError(f"{shown(top)}: no such file or directory") from None
        except OSError as exc:
            raise CorpusError(f"{shown(top)}: cannot access: {exc.strerror}") from None
        if _seen_before(st, seen, excluded, stats):
            continue
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(top, options, stats, seen, excluded)
        elif _wanted_file(st, options, stats):
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


def _seen_before(st: os.stat_result, seen: set[tuple[int, int]], excluded: set[tuple[int, int]],
                 stats: IngestStats) -> bool:
    """True (and counted) for an excluded file or one already reached; else marks it seen."""
    ident = (st.st_dev, st.st_ino)
    if ident in excluded:
        stats.skip("output")
        return True
    if ident in seen:
        stats.skip("already read by another path")
        return True
    seen.add(ident)
    return False


def _walk(root: Path, options: IngestOptions, stats: IngestStats, seen: set[tuple[int, int]],
          excluded: set[tuple[int, int]]) -> Iterator[tuple[Path, str]]:
    """Depth-first in sorted name order, with a stack instead of recursion: any depth of folders."""
    stack = [iter(_entries(root))]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        if entry.name.startswith("."):
            stats.skip("hidden")
            continue
        path = Path(entry.path)
        st = _entry_stat(entry, path, options, stats)
        if st is None or _seen_before(st, seen, excluded, stats):
            continue
        if stat.S_ISDIR(st.st_mode):
            stack.append(iter(_entries(path)))
        elif options.extensions and not entry.name.lower().endswith(options.extensions):
            stats.skip("extension")
        elif _wanted_file(st, options, stats):
            if _saved_tokenizer(path):
                stats.skip("a binary tokenizer (an earlier run's output)")
                continue
            yield _readable(path), path.relative_to(root).as_posix()


#: How a ``tokenizer.json`` that HF ``tokenizers`` wrote begins (compact or indented): its version, then
#: its truncation (a data file that begins with a version of its own is not parsed).


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
    # bytes seeds are hashed with SHA-512 by random.Random: stable across runs and machines. The key's
    # file-system bytes take any name, valid UTF-8 or not, and equal key.encode() when it is valid.
    return random.Random(f"wwho.binary:{options.seed}:{purpose}:".encode() + os.fsencode(key))


def _file_windows(path: Path, key: str, options: IngestOptions, stats: IngestStats,
                  progress: object | None, limit: int | None = None) -> Iterator[bytes]:
    """The sampled windows of one file, read up to ``limit`` bytes (all of it where None)."""
    sample = options.sample_rate < 1
    if options.mode == "file" and sample:
        # One window per file: whether it is kept is drawn first (the draw a read window would get),
        # so that a file sampled out is never read: read whole, it would exceed the estimate.
        if not _rng(options, "keep", key).random() < options.sample_rate:
            stats.windows_seen += 1
            return
        sample = False
    # Listed as a regular file, but it may have been replaced since: a FIFO put in its place would
    # block a plain open() until a writer comes, that is, for ever.
    try:
        f = io.BufferedReader(open_regular(path, error=CorpusError))
    except CorpusError as exc:
        raise CorpusError(printable(str(exc))) from None  # a name of odd bytes shown as escapes
    with f:
        stats.files += 1
        capped = None if limit is None else _Capped(f, limit)
        windows = _counted(iter_windows(capped or f, options, _rng(options, "size", key)), stats, progress, path)
        if sample:
            keep = _rng(options, "keep", key)
            windows = (w for w in windows if keep.random() < options.sample_rate)
        if options.max_docs_per_file is not None:
            windows = iter(reservoir(windows, options.max_docs_per_file, _rng(options, "file-cap", key)))
        for window in windows:
            stats.windows_sampled += 1
            yield window
        if capped is not None and capped.left == 0 and _grew(f):
            stats.grown.append((path, capped.limit, _size_now(f, capped.limit)))


class _Capped:
    """A binary file read up to ``limit`` bytes: then it reads as ended."""

    def __init__(self, f: BinaryIO, limit: int) -> None:
        self.f, self.limit, self.left = f, limit, limit

    def read(self, n: int | None = -1) -> bytes:
        want = self.left if n is None or n < 0 else min(n, self.left)
        if want <= 0:
            return b""
        data = self.f.read(want)
        self.left -= len(data)
        return data


def _grew(f: BinaryIO) -> bool:
    """Whether ``f``, read up to its estimated size, holds more (it grew after the estimate)."""
    try:
        return bool(f.read(1))
    except OSError:
        return False  # what was read is what was estimated; the rest is not wanted anyway


def _size_now(f: BinaryIO, at_least: int) -> int:
    try:
        return max(os.fstat(f.fileno()).st_size, at_least + 1)
    except OSError:
        return at_least + 1


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
        raise CorpusError(f"{shown(path)}: read error after {stats.bytes_read} bytes: {exc.strerror}") from None


def iter_sampled(paths: Iterable[str | os.PathLike], *, options: IngestOptions = IngestOptions(),
                 stats: IngestStats | None = None, progress: object | None = None,
                 exclude: Iterable[str | os.PathLike] = (),
                 sizes: Mapping[str, int] | None = None) -> Iterator[bytes]:
    """All windows after ``sample_rate`` and ``max_docs_per_file`` (before ``max_docs``).

    ``sizes``: ``{os.fspath(path): bytes}`` of the files listed when the memory was estimated
    (:attr:`wwho.binary.budget.Estimate.sizes`): each file is read up to that size at most, and a
    file not in it (it appeared since) is not read; both are recorded in ``stats``."""
    stats = stats if stats is not None else IngestStats()
    for path, key in iter_files(paths, options=options, stats=stats, exclude=exclude):
        limit = None
        if sizes is not None:
            limit = sizes.get(os.fspath(path))
            if limit is None:
                stats.skip("appeared after the memory estimate")
                stats.appeared.append(path)
                continue
        yield from _file_windows(path, key, options, stats, progress, limit)


def count_windows(paths: Iterable[str | os.PathLike], *, options: IngestOptions = IngestOptions(),
                  progress: bool = False, exclude: Iterable[str | os.PathLike] = (),
                  sizes: Mapping[str, int] | None = None) -> WindowCounts:
    """Walk, chunk, sample and count. :class:`CorpusError` if no window is left
    (:class:`NothingSampledError` where ``sample_rate`` left none). ``sizes``: read each file up to
    the size its memory estimate used (:func:`iter_sampled`); what differed is warned about."""
    paths = input_paths(paths)
    if not paths:
        raise CorpusError("no input paths given")
    stats = IngestStats()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(unit="B", unit_scale=True, unit_divisor=1024, desc="reading", dynamic_ncols=True)
    try:
        windows = iter_sampled(paths, options=options, stats=stats, progress=bar, exclude=exclude, sizes=sizes)
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
    _warn_changed(stats)
    if not counts:
        where = ", ".join(map(shown, paths))
        if stats.windows_seen and options.sample_rate < 1:  # (max_docs and max_docs_per_file keep one at least)
            raise NothingSampledError(options.sample_rate, stats.windows_seen, where)
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(stats.skipped.items())) or "nothing"
        raise CorpusError(f"no data to train on in {where} "
                          f"({plural(stats.files, 'file')} read; skipped: {skipped})")
    return WindowCounts(counts=counts, stats=stats)


def _warn_changed(stats: IngestStats) -> None:
    """One warning line for the files that grew after the memory estimate (read up to the size
    estimated) and one for those that appeared after it (not read), each naming the first."""

    from wwho.errors import WwhoWarning

    def more(n: int) -> str:
        return f" (and {plural(n, 'other file')})" if n else ""

    if stats.grown:
        path, estimated, now = stats.grown[0]
        warn(f"{shown(path)}: grew after the memory estimate ({estimated:,} bytes then, {now:,} when read); "
             f"only its first {estimated:,} bytes were read{more(len(stats.grown) - 1)}",
             WwhoWarning)
    if stats.appeared:
        warn(f"{shown(stats.appeared[0])}: appeared after the memory estimate; not read"
             f"{more(len(stats.appeared) - 1)}", WwhoWarning)
