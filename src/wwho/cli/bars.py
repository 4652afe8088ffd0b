"""The command line's bar of the bytes of an input file a verb reads (``encode --file``,
``syllabify --file``, ``encode --binary FILE``).

It decides when a bar is drawn (a terminal that the results do not go to); what a bar is lives in
:mod:`wwho.progress`. It reads nothing itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def file_progress(path: str | None, *, verb: str, output: str | None, quiet: bool) -> Iterator:
    """A bar of the bytes of the input file ``path`` read so far (of its size, where it is not
    compressed), drawn only where standard error is a terminal (a log or a test gets none) and the
    results (``output``; None or ``-``: standard output) do not go to that terminal too, and not
    when ``quiet``; none for standard input (``path`` None or ``-``)."""
    from wwho.progress import progress_bar, stderr_is_a_terminal

    shown = bool(path) and path != "-" and not quiet and stderr_is_a_terminal()
    if shown and (not output or output == "-"):  # results printed on the terminal would break the bar
        try:
            shown = not os.isatty(sys.stdout.fileno())
        except (AttributeError, OSError, ValueError):
            pass
    total = None
    if shown:
        from wwho.corpus import compressed_by_name

        file = Path(path)
        total = None if compressed_by_name(file) or not file.is_file() else file.stat().st_size
    bar = progress_bar(disable=not shown, total=total, unit="B", unit_scale=True, unit_divisor=1024,
                       desc=f"{verb} {Path(path).name}" if shown else None)
    try:
        yield bar
    finally:
        bar.close()
