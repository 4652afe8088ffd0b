"""How much memory binary training will take, estimated before any file is read, and the budget.

HF's ``BpeTrainer`` holds every distinct window, its symbols, the pair counts and, for each pair,
the words it occurs in: its peak grows with the bytes it is fed. :func:`estimate` bounds that from
the input's file sizes (a ``stat`` per file, nothing read) and the sampling options: at most
``sample_rate`` of the bytes, at most ``max_docs_per_file`` windows of each file, at most
``max_docs`` windows. Repeated windows are counted once, so the real peak is often lower; the
estimate is an upper bound, not a promise. The sizes it used (:attr:`Estimate.sizes`) bound what is
then read: a file that grows after the estimate is read only up to its estimated size
(:func:`wwho.binary.ingest.count_windows`).

The **budget** (``memory_budget=``, ``--memory-budget``) defaults to half of the machine's physical
memory, or of the container's memory limit (cgroup) where that is lower. Above it, training is refused before anything is read, with the ``--sample-rate`` and
``--max-docs`` values that would fit (``over_budget="refuse"``, the default), or the sample rate is
lowered to fit and said (``over_budget="sample"``, ``--over-budget sample``).

The constants are measured, not derived: ``BYTES_PER_INPUT_BYTE`` is HF ``tokenizers``' peak
resident memory per byte of distinct windows when training a 32,768-token binary vocabulary on ELF
files (docs/binary.md says how it was measured).

What this module deliberately does not do: read files, or limit memory (it only predicts it).
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wwho.binary.ingest_types import MAX_EXP, IngestOptions, IngestStats, OptionError
from wwho.binary.walk import iter_files
from wwho.errors import WwhoWarning
from wwho.notices import plural, warn

#: HF BpeTrainer's peak RSS per byte of distinct windows fed (measured, see the module docstring)
BYTES_PER_INPUT_BYTE = 80
#: per window: its bytes object and dict entry here, its word entry in HF
BYTES_PER_WINDOW = 300
#: the interpreter, HF and the rest, before any data
BASE_BYTES = 200 << 20
#: per special or reserved token: HF's added vocabulary holds each in several tables (measured, see
#: docs/binary.md)
BYTES_PER_ADDED_TOKEN = 1200
OVER_BUDGET = ("refuse", "sample")


class BudgetError(OptionError):
    """Training would exceed the memory budget (the message says what to pass)."""


def physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not on this platform
        return None


#: Where a Linux container's memory limit is read (cgroup v2, then v1); "max" or a huge number: none.
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def container_memory(paths: Iterable[str] = CGROUP_LIMITS) -> int | None:
    """The memory limit of the container (cgroup) this process runs in, or None: a process over it
    is killed, however much memory the machine has."""
    for path in paths:
        try:
            with open(path, encoding="ascii") as f:
                text = f.read(64).strip()
        except (OSError, ValueError):
            continue
        if text.isdigit() and 0 < int(text) < 1 << 60:  # v1 writes a huge number for "no limit"
            return int(text)
    return None


def default_budget() -> int:
    """Half of the memory this process may use: the machine's, or its container's limit where that
    is lower (4 GiB where neither can be read)."""
    known = [m for m in (physical_memory(), container_memory()) if m]
    return min(known) // 2 if known else 4 << 30


@dataclass(frozen=True)
class Estimate:
    files: int
    file_bytes: int  # total size of the files that would be read
    bytes: int  # at most this many bytes kept after sampling
    windows: int  # at most this many windows kept
    peak: int  # estimated peak memory in bytes
    largest: int = 0  # the largest file's size
    #: ``{os.fspath(path): size}`` of each file estimated: training reads no more of it
    sizes: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    def describe(self) -> str:
        return (f"{plural(self.files, 'file')}, {human(self.file_bytes)}; "
                f"estimated peak memory at most {human(self.peak)}")


#: A file larger than this in ``file`` mode is warned about (see :func:`check`).
SLOW_FILE_WINDOW = 1 << 20


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""  # pragma: no cover


def _largest_window(options: IngestOptions, file_bytes: int) -> int:
    if options.mode == "file":
        return max(file_bytes, 1)
    if options.mode == "random":
        return 1 << min(options.max_exp, MAX_EXP)
    return options.window_bytes


def _smallest_window(options: IngestOptions) -> int:
    return 1 << options.min_exp if options.mode == "random" else options.window_bytes


def peak_for(nbytes: int, windows: int) -> int:
    return BASE_BYTES + nbytes * BYTES_PER_INPUT_BYTE + windows * BYTES_PER_WINDOW


def estimate(paths: Iterable[str | os.PathLike], options: IngestOptions | None = None, *,
             exclude: Iterable[str | os.PathLike] = ()) -> Estimate:
    """Bound the memory of training on ``paths`` from file sizes alone (nothing is read)."""
    options = options or IngestOptions()
    sizes: dict[str, int] = {}
    for path, _ in iter_files(paths, options=options, stats=IngestStats(), exclude=exclude):
        try:
            sizes[os.fspath(path)] = Path(path).stat().st_size
        except OSError:
            continue  # reported by name when it is read
    total = sum(sizes.values())
    largest = max(sizes.values(), default=0)
    kept, windows = _Sizes(sizes.values()).kept(options, options.sample_rate, largest)
    return Estimate(files=len(sizes), file_bytes=total, bytes=kept, windows=windows, peak=peak_for(kept, windows),
                    largest=largest, sizes=sizes)


class _Sizes:
    """File sizes, sorted with their running sums: the bytes and windows kept at any sample rate in
    O(log files), so that a rate that fits can be searched for."""

    def __init__(self, sizes: Iterable[int]) -> None:
        self.sorted = sorted(sizes)
        self.sums = [0, *itertools.accumulate(self.sorted)]

    def _capped_sum(self, cap: float, rate: float) -> float:
        """The sum over files of ``min(size * rate, cap)``."""
        below = bisect.bisect_right(self.sorted, cap / rate)
        return rate * self.sums[below] + cap * (len(self.sorted) - below)

    def kept(self, options: IngestOptions, rate: float, largest: int) -> tuple[int, int]:
        """``(bytes, windows)`` kept at most, at ``rate``: ``rate`` of each file's bytes, at most
        ``max_docs_per_file`` of its windows (each at most the largest window, at least the
        smallest), at most ``max_docs`` windows in all."""
        total = self.sums[-1]
        files = len(self.sorted)
        per_file = options.max_docs_per_file
        if options.mode == "file":  # one window per file: max_docs_per_file changes nothing
            kept, windows = int(total * rate), files
        elif per_file is None or files == 0:
            kept = int(total * rate)
            windows = -(-kept // _smallest_window(options))
        else:
            kept = int(self._capped_sum(per_file * _largest_window(options, largest), rate))
            smallest = _smallest_window(options)
            windows = math.ceil(self._capped_sum(per_file * smallest, rate) / smallest)
        if options.max_docs is not None:
            windows = min(windows, options.max_docs)
            kept = min(kept, options.max_docs * _largest_window(options, largest))
        return kept, windows


def _down_two_figures(x: float) -> float:
    """``x`` to two significant figures, never above it (a rate that fits must not be rounded over
    the budget). Each step down takes a whole unit of the second figure, so it ends: shrinking by 1%
    and rounding again could give the same value for ever (0.27 * 0.99 is 0.27 again)."""
    if not x > 0:
        return 0.0
    value = float(f"{x:.2g}")
    step = 10.0 ** (math.floor(math.log10(x)) - 1)  # a unit of x's second figure
    while value > x:
        value = float(f"{value - step:.2g}")
    return max(value, 0.0)


def fit(est: Estimate, options: IngestOptions, budget: int) -> tuple[float, int]:
    """The ``sample_rate`` and the ``max_docs`` that would bring ``est`` under ``budget``."""
    room = max(budget - BASE_BYTES, 0)
    share = room / max(est.peak - BASE_BYTES, 1)
    rate = options.sample_rate * share
    if options.max_docs_per_file is not None and options.mode != "file" and est.sizes:
        rate = _fitting_rate(_Sizes(est.sizes.values()), options, est.largest, budget)
    rate = _down_two_figures(rate)
    window = _largest_window(options, est.file_bytes)
    docs = room // (window * BYTES_PER_INPUT_BYTE + BYTES_PER_WINDOW)
    return rate, int(docs)


def _fitting_rate(sizes: _Sizes, options: IngestOptions, largest: int, budget: int) -> float:
    """The highest rate (to a part in 10**4) whose estimate fits ``budget``, found by bisection: with
    ``max_docs_per_file`` the peak is not proportional to the rate (a capped file keeps its cap until
    the rate brings it below), so scaling the rate by the budget's share could still be over it."""

    def fits(rate: float) -> bool:
        return peak_for(*sizes.kept(options, rate, largest)) <= budget

    low, high = 0.0, options.sample_rate
    if fits(high):
        return high
    for _ in range(64):
        mid = (low + high) / 2
        if mid <= 0 or high - low <= high * 1e-4:
            break
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low


def check(paths: Iterable[str | os.PathLike], options: IngestOptions, *, budget: int | None = None,
          over_budget: str = "refuse", exclude: Iterable[str | os.PathLike] = (),
          added_tokens: int = 0) -> tuple[IngestOptions, Estimate, str | None]:
    """``(options to use, estimate, note)``: the options unchanged when the estimate fits the
    budget; else :class:`BudgetError` (``"refuse"``) or a lower ``sample_rate`` and a note saying so
    (``"sample"``). ``added_tokens``: at most how many special and reserved tokens the vocabulary
    gets (:func:`wwho.binary.train.added_tokens_at_most`), whose memory no sample of the data lowers."""
    if over_budget not in OVER_BUDGET:
        raise OptionError(f"over_budget must be one of {', '.join(OVER_BUDGET)}, not {over_budget!r}")
    budget = default_budget() if budget is None else budget
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise OptionError(f"memory_budget must be a positive number of bytes, not {budget!r}")
    extra = added_tokens * BYTES_PER_ADDED_TOKEN
    data_only = estimate(paths, options, exclude=exclude)
    est = dataclasses.replace(data_only, peak=data_only.peak + extra)
    if options.mode == "file" and est.largest > SLOW_FILE_WINDOW:
        # Not refused (it ends), but said before the wait: HF's trainer is superlinear in a window's length.
        warn(f"--mode file makes each file one window, and the largest here is {human(est.largest)}: HF's "
             "BPE trainer slows down faster than the window grows (docs/binary.md has the measurements); "
             "--mode fixed (the default) cuts files into --window-bytes pieces", WwhoWarning)
    if est.peak <= budget:
        return options, est, None
    rate, docs = fit(data_only, options, budget - extra)
    if over_budget == "sample" and rate > 0:
        fitted = dataclasses.replace(options, sample_rate=rate)
        return fitted, est, (f"{est.describe()}, over the budget of {human(budget)}: sampling "
                             f"{rate:g} of the windows (--sample-rate {rate:g}) to fit")
    raise_budget = f"raise --memory-budget (memory_budget=; now {human(budget)})"
    if rate <= 0 and docs <= 0:  # below what the process itself takes: no sample of the data fits
        tokens = f" and {added_tokens:,} special and reserved tokens at most" if added_tokens else ""
        fewer = (", or reserve fewer tokens (--reserve, reserve=) or pad none (--no-pad, pad_to_power_of_two=False)"
                 if added_tokens else "")
        raise BudgetError(f"training on {est.describe()}, over the memory budget of {human(budget)}, which no "
                          f"sample of the data can fit (the process alone{tokens} takes more). To fix, "
                          f"{raise_budget}{fewer}")
    fixes = []
    if rate > 0:
        fixes.append(f"pass --sample-rate {rate:g} (sample_rate={rate:g})")
    if docs > 0:
        fixes.append(f"pass --max-docs {docs} (IngestOptions(max_docs={docs}))")
    if rate > 0 and over_budget != "sample":
        fixes.append("pass --over-budget sample (over_budget=\"sample\") to sample automatically")
    fixes.append(raise_budget)
    raise BudgetError(f"training on {est.describe()}, over the memory budget of {human(budget)}. "
                      f"To fix, {', or '.join(fixes)}")
