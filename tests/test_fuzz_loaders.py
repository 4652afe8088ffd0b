"""A short, reproducible run of ``fuzz/loaders.py``: mutated real files through every
loader give clean errors or valid loads, never a traceback, a wrong load or a hang. (The full run,
with its counts, is in docs/reliability.md.)"""

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


fuzz_loaders = _load("wwho_fuzz_loaders", FUZZ / "loaders.py")


def test_a_short_fuzz_run_is_clean():
    tally = fuzz_loaders.fuzz(seconds=600, seed=1, max_cases=300, quiet=True)
    assert tally.tried >= 300
    bad = {k: v for k, v in tally.examples.items()}
    assert tally.outcomes["traceback"] == 0, bad
    assert tally.outcomes["wrong load"] == 0, bad
    assert tally.outcomes["timeout"] == 0 and tally.outcomes["multi-line error"] == 0, bad
    # (nearly) every seed was tried; the meta, o200k and GGUF seeds are made from shared files
    shared = fuzz_loaders.O200K_FILE.is_file() and fuzz_loaders.GPT2_GGUF.is_file()
    assert len(tally.by_seed) >= (15 if shared else 12)
