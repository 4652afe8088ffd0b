"""A short run of fuzz/sgpe_core.py: random tables, ids, files and texts into the core's SGPE and
training entry points must give results or wwho's (or PyO3's argument) errors, never a crash or panic."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"


def _load(name: str, path: Path):
    """Import a script of fuzz/ by its path (registered in sys.modules for its dataclasses)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


fuzz_sgpe_core = _load("wwho_fuzz_sgpe_core", FUZZ / "sgpe_core.py")


def test_a_short_fuzz_run_finds_nothing():
    calls, raised = fuzz_sgpe_core.run(seconds=4, seed=12345)
    assert set(calls) == {"automaton", "splitter", "encoder", "engine", "building_merges", "counter"}
    assert sum(calls.values()) > 100
    # Some calls got through to real work, not only to argument errors.
    assert sum(calls.values()) > sum(raised.values())
