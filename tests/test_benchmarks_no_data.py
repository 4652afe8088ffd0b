"""Every benchmark script without the shared data: it is skipped the same way, never crashes.

The rule (``benchmarks/_measure.py``: ``require``, ``skip``): where the shared data a benchmark
needs is absent, it prints one line starting ``skipped:`` on stderr, naming what is missing, and
exits with status 0, before writing anything and without downloading anything. Each script runs
here with ``WWHO_SHARED_DATA`` pointing to an empty folder, its cheapest arguments, and a proxy
that refuses every connection (a download attempt fails loudly instead of fetching).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"

#: The command scripts and their cheapest arguments (``{tmp}``: a folder of the test's own).
COMMANDS: dict[str, list[str]] = {
    "bench_batch.py": ["--quick", "--repeat", "1"],
    "bench_bytelevel.py": ["--quick"],
    "bench_calls.py": [],
    "bench_compression.py": ["--langs", "si", "--sizes", "8000"],
    "bench_devices.py": ["--rounds", "1", "--out", "{tmp}/devices.jsonl"],
    "bench_encode.py": ["--repeat", "1"],
    "bench_engine.py": ["--repeat", "1"],
    "bench_extend.py": ["--sizes", "8000", "--bases", "o200k", "--quick"],
    "bench_joint.py": ["--train-only"],
    "bench_languages.py": ["--langs", "si", "--sizes", "8000"],
    "bench_large_inputs.py": [],
    "bench_lm.py": ["--langs", "si"],
    "bench_meta.py": ["--sizes", "32000", "--news-mb", "1"],
    "bench_npy.py": ["--runs", "1"],
    "bench_peers.py": ["--rounds", "1", "--mb", "0.1"],
    "bench_scale.py": [],
    "bench_scripts.py": ["--langs", "bn", "--plot", "{tmp}/scripts.png"],
    "bench_serve.py": ["--runs", "1"],
    "bench_syllables.py": ["--repeat", "1"],
    "bench_threads.py": ["--threads", "1", "--repeat", "1"],
    "bench_train.py": [],
    "bench_warm_ab.py": ["--runs", "1"],
    "exact_cuts.py": ["--langs", "ml"],
    "fewest_tokens.py": ["--langs", "si"],
    "run_all.py": ["--only", "calls", "--out", "{tmp}/benchmarks.md"],
}
#: Scripts with a ``__main__`` that read no shared data (system binaries, or another script's output).
NO_SHARED_DATA = {"bench_binary.py", "bench_binary_interrupt.py", "gpt.py"}


def test_every_command_script_is_listed():
    """A new benchmark script is a command here (or declared as reading no shared data)."""
    commands = {p.name for p in BENCHMARKS.glob("*.py")
                if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8")}
    assert commands - NO_SHARED_DATA == set(COMMANDS)


def _cache_entries() -> set[Path]:
    cache = ROOT / ".cache"
    return set(cache.glob("*")) | set(cache.glob("*/*")) if cache.is_dir() else set()


@pytest.mark.parametrize("script", sorted(COMMANDS))
def test_skips_cleanly_without_the_shared_data(script, tmp_path):
    data = tmp_path / "data"
    work = tmp_path / "cwd"
    data.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("WWHO_TIKTOKEN_FILE", "TIKTOKEN_CACHE_DIR", "NO_PROXY", "no_proxy")}
    refuse = "http://127.0.0.1:9"  # the discard port: nothing listens, so a download fails at once
    env.update(WWHO_SHARED_DATA=str(data), HTTP_PROXY=refuse, HTTPS_PROXY=refuse, http_proxy=refuse,
               https_proxy=refuse, PYTHONDONTWRITEBYTECODE="1")
    args = [a.replace("{tmp}", str(tmp_path)) for a in COMMANDS[script]]
    before = _cache_entries()
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60)
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output[-3000:]
    assert proc.returncode == 0, output[-3000:]
    skipped = [line for line in proc.stderr.splitlines() if line.startswith("skipped:")]
    assert len(skipped) == 1, output[-3000:]
    assert str(data) in skipped[0], skipped[0]  # it names what is missing, where it looked
    # nothing written: not in the working folder, not beside the test's outputs, not under .cache/
    assert not any(work.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "data"]
    assert not any(data.iterdir())
    assert _cache_entries() <= before
