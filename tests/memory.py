"""Peak memory of a piece of work, measured in a fresh interpreter (tests of bounded memory).

``measure(setup, work, after)`` runs ``setup`` (imports, loading a tokenizer, building the
input), resets the kernel's peak-RSS mark (``/proc/self/clear_refs``, Linux), runs ``work``,
reads the peak, runs ``after`` (checks) and returns ``(result, growth)``: whatever ``work`` assigned to ``result`` (JSON), and how far
the peak resident set rose above the resident set before ``work``, in bytes. A fresh
process keeps other tests' garbage out of the figure.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_TEMPLATE = """
import json, sys
def _rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
    raise SystemExit("no " + field)
result = None
{setup}
import gc
gc.collect()
open("/proc/self/clear_refs", "w").write("5")  # resets VmHWM, the peak RSS
_before = _rss("VmRSS:")
{work}
_peak = _rss("VmHWM:")
{after}
print("MEASURED " + json.dumps({{"result": result, "growth": _peak - _before}}))
"""


def measure(setup: str, work: str, after: str = "", *, timeout: float = 900,
            cwd: str | Path | None = None) -> tuple[object, int]:
    """``after`` runs once the peak is read (checks whose memory must not count)."""
    if not Path("/proc/self/clear_refs").exists():
        pytest.skip("peak-memory tests need Linux's /proc/self/clear_refs")
    code = _TEMPLATE.format(setup=textwrap.dedent(setup), work=textwrap.dedent(work), after=textwrap.dedent(after))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("MEASURED ")]
    if proc.returncode != 0 or not lines:
        raise AssertionError(f"the measured process failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    data = json.loads(lines[-1].removeprefix("MEASURED "))
    return data["result"], data["growth"]


MB = 2**20
