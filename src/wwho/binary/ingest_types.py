"""What ingestion (:mod:`wwho.binary.ingest`) takes and gives: :class:`IngestOptions`, checked when
made, with their exact meaning in the ingest module's docstring; :class:`IngestStats`, what the walk
and the sampling did; :class:`WindowCounts`, the counted windows; and the errors of both.

It deliberately does not read files (:mod:`wwho.binary.walk` lists them, :mod:`wwho.binary.ingest`
reads and counts them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from wwho.errors import CorpusError, WwhoError, brief
from wwho.notices import plural
from wwho.sizes import MAX_COUNT, MAX_WINDOW_BYTES

MODES = ("file", "fixed", "random", "delim")
#: Largest ``min_exp``/``max_exp``: random windows are at most MAX_WINDOW_BYTES (16 MiB).
MAX_EXP = MAX_WINDOW_BYTES.bit_length() - 1


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
    #: files shorter when read than estimated (truncated meanwhile): (path, estimated, bytes read)
    shrunk: list[tuple[Path, int, int]] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)  # listed, then gone before they were read

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

