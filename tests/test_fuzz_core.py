"""A short run of fuzz/fuzz_sgpe_core.py: random tables, ids, files and texts into the core's SGPE and
training entry points must give results or wwho's (or PyO3's argument) errors, never a crash or panic."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))

import fuzz_sgpe_core  # noqa: E402


def test_a_short_fuzz_run_finds_nothing():
    calls, raised = fuzz_sgpe_core.run(seconds=4, seed=12345)
    assert set(calls) == {"automaton", "splitter", "encoder", "engine", "building_merges", "counter"}
    assert sum(calls.values()) > 100
    # Some calls got through to real work, not only to argument errors.
    assert sum(calls.values()) > sum(raised.values())
