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

This module chunks, samples and counts; the walk is :mod:`wwho.binary.walk`, the options and
results are :mod:`wwho.binary.ingest_types`. What it deliberately does not do: decompress archives,
or insert special tokens into the data (they are added by the tokenizer's template, never trained on).
"""

from __future__ import annotations

import io
import os
import random
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, TypeVar

from wwho.binary.ingest_types import IngestOptions, IngestStats, NothingSampledError, WindowCounts
from wwho.binary.walk import input_paths, iter_files, shown
from wwho.errors import CorpusError, printable
from wwho.fileio import open_regular
from wwho.notices import plural, warn

_BLOCK = 1 << 20  # read size in delim mode

T = TypeVar("T")


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
        if not os.path.lexists(path):  # listed, then removed: a folder being written to (as tar, not an error)
            stats.skip("removed while read")
            stats.removed.append(path)
            return
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
        elif capped is not None and capped.left > 0:  # (every window read: the file ended early)
            stats.shrunk.append((path, capped.limit, capped.limit - capped.left))


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


def count_windows(paths: str | os.PathLike | Iterable[str | os.PathLike], *, options: IngestOptions = IngestOptions(),
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
    estimated), one for those that appeared after it (not read), one for those that shrank (read
    as they were) and one for those removed meanwhile (not read), each naming the first."""

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
    if stats.shrunk:
        path, estimated, read = stats.shrunk[0]
        warn(f"{shown(path)}: shrank after the memory estimate ({estimated:,} bytes then); only the {read:,} "
             f"left were read{more(len(stats.shrunk) - 1)}", WwhoWarning)
    if stats.removed:
        warn(f"{shown(stats.removed[0])}: removed while the inputs were read; not read"
             f"{more(len(stats.removed) - 1)}", WwhoWarning)
