"""Run the real ``wwho`` command in a subprocess, with its output as bytes (lone surrogates are
written as their surrogate-pass bytes, so output is compared byte for byte). ``conftest.run_wwho``
is the text version."""

from __future__ import annotations

import os
import subprocess

from conftest import wwho_command


def wwho(*args: object, input: bytes | None = None, timeout: float = 600,
         env: dict[str, str] | None = None, preexec_fn=None) -> subprocess.CompletedProcess:
    """``wwho ARGS...`` with stdout/stderr as bytes (``preexec_fn``: as :mod:`subprocess` takes it)."""
    return subprocess.run([*wwho_command(), *map(str, args)], input=input, capture_output=True, timeout=timeout,
                          check=False, env={**os.environ, **(env or {})}, preexec_fn=preexec_fn)


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """The stderr of a run that failed the way wwho promises: exit 2, no traceback, one line
    ``wwho: error: ...`` (argparse's own errors too: no usage block)."""
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, (proc.returncode, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("wwho: error:"), err
    return lines[0]
