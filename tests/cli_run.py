"""Run the real ``wwho`` command in a subprocess (CLI tests check exit codes and output bytes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_SCRIPT = Path(sys.executable).with_name("wwho")


def wwho(*args: object, input: bytes | None = None, timeout: float = 600,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``wwho ARGS...`` with stdout/stderr as bytes; ``python -m wwho`` where the script is missing."""
    command = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "wwho"]
    return subprocess.run([*command, *map(str, args)], input=input, capture_output=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """The stderr of a run that failed the way wwho promises: exit 2, one line, no traceback."""
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, (proc.returncode, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and (lines[-1].startswith("wwho: error:") or "error:" in lines[-1]), err
    if lines[-1].startswith("wwho: error:"):
        assert len(lines) == 1, err
    return lines[-1]
