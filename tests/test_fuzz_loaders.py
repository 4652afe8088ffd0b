"""A short, reproducible run of ``benchmarks/fuzz_loaders.py``: mutated real files through every
loader give clean errors or valid loads, never a traceback, a wrong load or a hang. (The full run,
with its counts, is in docs/reliability.md.)"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import fuzz_loaders


def test_a_short_fuzz_run_is_clean():
    tally = fuzz_loaders.fuzz(seconds=600, seed=1, max_cases=300, quiet=True)
    assert tally.tried >= 300
    bad = {k: v for k, v in tally.examples.items()}
    assert tally.outcomes["traceback"] == 0, bad
    assert tally.outcomes["wrong load"] == 0, bad
    assert tally.outcomes["timeout"] == 0 and tally.outcomes["multi-line error"] == 0, bad
    assert len(tally.by_seed) >= 15  # (nearly) every seed was tried
