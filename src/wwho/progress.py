"""Progress bars: tqdm's (``tqdm.auto``, so notebooks get theirs), imported only when one is shown.

Importing ``tqdm.auto`` is a large part of ``import wwho`` (it looks for a notebook); work run
with ``progress=False`` gets a silent stand-in with the few members wwho uses (``update``, ``n``,
``total``, ``close``, iteration, ``with``). This module does not format or decide when to show
progress: callers pass ``disable`` as they passed it to tqdm.
:func:`close_all` ends every bar still drawn (the CLI's Ctrl-C message then starts its own line).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class SilentBar:
    """A disabled progress bar: counts what ``update`` is told and shows nothing."""

    def __init__(self, iterable: Iterable | None = None, *, total: float | None = None) -> None:
        self.iterable = iterable
        self.total = total
        self.n = 0

    def update(self, n: float = 1) -> None:
        self.n += n

    def close(self) -> None:
        pass

    def __iter__(self):
        return iter(self.iterable if self.iterable is not None else ())

    def __enter__(self) -> SilentBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(iterable: Iterable | None = None, *, disable: bool = False, **options: Any):
    """``tqdm.auto.tqdm(iterable, **options)``, or a :class:`SilentBar` when ``disable``."""
    if disable:
        return SilentBar(iterable, total=options.get("total"))
    from tqdm.auto import tqdm

    if "mininterval" not in options and not stderr_is_a_terminal():
        # A log file or a CI log: each redraw is a line of its own, so a long run would write
        # thousands. One every LOG_INTERVAL, as the binary trainer's heartbeat.
        options["mininterval"] = LOG_INTERVAL
    return tqdm(iterable, **options)


#: Seconds between redraws of a bar written to a file or a pipe rather than a terminal.
LOG_INTERVAL = 10.0


def stderr_is_a_terminal() -> bool:
    import sys

    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced, or closed
        return False


def close_all() -> None:
    """Close every tqdm bar still drawn (with its final newline), so that the next message starts
    its own line: what the CLI does before saying ``wwho: interrupted``. Imports nothing new."""
    import sys

    if "tqdm" not in sys.modules:
        return
    from tqdm import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        try:
            bar.close()
        except Exception:  # noqa: BLE001 -- a bar that cannot draw any more is closed enough
            pass
