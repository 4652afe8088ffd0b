"""Binary training: memory estimated before anything is read, the budget (refuse or sample, saying
what to pass), progress when standard error is not a terminal, and Ctrl-C stopping training at once.
CLI tests run the real ``wwho`` command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import run_wwho

from wwho import binary
from wwho.binary.budget import BASE_BYTES, BYTES_PER_INPUT_BYTE, BudgetError, check, estimate
from wwho.binary.ingest_types import IngestOptions


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "files"
    root.mkdir()
    for i in range(3):
        (root / f"f{i}.bin").write_bytes(os.urandom(300_000) + bytes(range(256)) * 100)
    return root


def test_estimate_reads_sizes_and_sampling(tree):
    est = estimate([tree])
    size = sum(p.stat().st_size for p in tree.iterdir())
    assert (est.files, est.file_bytes, est.bytes) == (3, size, size)
    assert est.peak >= BASE_BYTES + size * BYTES_PER_INPUT_BYTE
    half = estimate([tree], IngestOptions(sample_rate=0.5))
    assert half.bytes == size // 2 and half.peak < est.peak
    capped = estimate([tree], IngestOptions(max_docs=10, window_bytes=4096))
    assert capped.bytes == 10 * 4096 and capped.windows == 10


def test_refusal_says_what_to_pass(tree):
    budget = BASE_BYTES + (10 << 20)
    with pytest.raises(BudgetError) as info:
        check([tree], IngestOptions(), budget=budget)
    message = str(info.value)
    assert "over the memory budget" in message and "3 files" in message
    rate = float(message.split("--sample-rate ")[1].split()[0])
    docs = int(message.split("--max-docs ")[1].split()[0])
    # what it says to pass does fit
    assert check([tree], IngestOptions(sample_rate=rate), budget=budget)[1].peak <= budget
    assert check([tree], IngestOptions(max_docs=docs), budget=budget)[1].peak <= budget


def test_sample_mode_lowers_the_rate_and_says_so(tree):
    budget = BASE_BYTES + (10 << 20)
    options, _, note = check([tree], IngestOptions(), budget=budget, over_budget="sample")
    assert options.sample_rate < 1 and "sampling" in note and f"--sample-rate {options.sample_rate:g}" in note
    assert check([tree], options, budget=budget)[2] is None


def test_library_train_refuses_before_reading(tree, monkeypatch):
    import wwho.binary.ingest as ingest

    opened = []
    real_open = ingest.open_regular

    def recording_open(path, *args, **kwargs):
        opened.append(path)
        return real_open(path, *args, **kwargs)  # the caller closes it

    monkeypatch.setattr(ingest, "open_regular", recording_open)  # what ingestion opens every file with
    with pytest.raises(BudgetError, match="To fix, pass --sample-rate"):
        binary.train([tree], vocab_size=400, min_frequency=2, memory_budget=BASE_BYTES + (1 << 20), progress=False)
    assert opened == []
    # the recorder sees what a run within the budget reads, so the empty list above means something
    binary.train([tree], vocab_size=400, min_frequency=2, ingest=IngestOptions(max_docs=2), progress=False)
    assert opened


def test_one_path_string_trains_as_a_list_of_one(tree):
    # (the text trainers take one path too; it was an OptionError here)
    one = binary.train(str(tree), vocab_size=400, progress=False)
    assert one.to_str() == binary.train([str(tree)], vocab_size=400, progress=False).to_str()


def test_cli_refuses_over_budget_at_once(tree, tmp_path):
    started = time.monotonic()
    proc = run_wwho("train", "--kind", "binary", tree, "-o", tmp_path / "t.json", "--vocab-size", "32768",
                    "--with-template", "--memory-budget", "250M")  # (its reserved tokens take some 40 MB)
    assert time.monotonic() - started < 60
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("wwho: error: training on 3 files") and "--sample-rate" in line and "--max-docs" in line
    assert not (tmp_path / "t.json").exists()


def test_cli_progress_shows_when_not_a_terminal(tree, tmp_path):
    proc = run_wwho("train", "--kind", "binary", tree, "-o", tmp_path / "t.json", "--vocab-size", "600",
                    "--min-freq", "2", "--reserve", "0")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "estimated peak memory at most" in err and "reading" in err and "feeding HF" in err
    assert "3 files" in err and "merging" in err
    quiet = run_wwho("train", "--kind", "binary", tree, "-o", tmp_path / "q.json", "--vocab-size", "600",
                     "--min-frequency", "2", "--reserve", "0", "--quiet")
    assert quiet.returncode == 0 and "feeding HF" not in quiet.stderr, quiet.stderr


def test_one_file_is_one_file(tmp_path):
    one = tmp_path / "one.bin"
    one.write_bytes(os.urandom(5000) * 3)
    proc = run_wwho("train", "--kind", "binary", one, "-o", tmp_path / "t.json", "--vocab-size", "300",
                    "--min-freq", "2", "--reserve", "0")
    assert proc.returncode == 0, proc.stderr
    assert "from 1 file in" in proc.stderr and "1 files" not in proc.stderr


CHILD = r"""
import os, random, sys
from wwho.binary.train import train_from_counts
rng = random.Random(0)
alphabet = [bytes([rng.randrange(256) for _ in range(rng.randrange(1, 9))]) for _ in range(4000)]
counts = {b"".join(rng.choice(alphabet) for _ in range(600)): 2 for _ in range(int(sys.argv[1]))}
print("ready", flush=True)
train_from_counts(counts, vocab_size=65536, min_frequency=2, progress=False)
print("finished", flush=True)
"""


def test_ctrl_c_stops_training_at_once():
    """SIGINT during HF's merge loop: the process ends within seconds (HF alone ignores it until done)."""
    from conftest import deliver_signals

    child = subprocess.Popen([sys.executable, "-c", CHILD, "3000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, preexec_fn=deliver_signals)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(3)  # into training
        assert child.poll() is None, "training ended before the signal: make the data larger"
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        child.wait(timeout=30)
        waited = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
    out = child.stdout.read()
    assert "finished" not in out
    assert child.returncode != 0 and waited < 10, (child.returncode, waited)


def test_a_budget_no_sample_fits_says_to_raise_it(tree):
    """Below what the process itself takes, no sampling fits: the refusal does not advise
    --over-budget sample (also not to a caller who passed it), and does not read 'or or raise'."""
    for over_budget in ("refuse", "sample"):
        with pytest.raises(BudgetError) as refused:
            check([tree], IngestOptions(), budget=BASE_BYTES // 2, over_budget=over_budget)
        message = str(refused.value)
        assert "no sample of the data can fit" in message and "raise --memory-budget" in message
        assert "--over-budget" not in message and "or or" not in message
    with pytest.raises(BudgetError) as refused:
        check([tree], IngestOptions(), budget=BASE_BYTES + (1 << 20))
    assert "or or" not in str(refused.value) and "--over-budget sample" in str(refused.value)


FIT_PROGRAM = """
import sys
from wwho.binary.budget import BASE_BYTES, Estimate, fit
from wwho.binary.ingest import IngestOptions
peak, budget = BASE_BYTES + 1_000_000, BASE_BYTES + 267_000  # a share of 0.267: 0.27 rounded, too high
est = Estimate(files=4, file_bytes=489_000, bytes=489_000, windows=120, peak=peak)
rate, docs = fit(est, IngestOptions(), budget)
print(rate)
"""


def test_fitting_a_rate_ends_and_stays_under_the_budget():
    # 0.27 * 0.99 rounded to two figures is 0.27 again: the fit looped for ever before the run was
    # refused (or sampled). In a child with a time limit, so that a loop fails the test, not the run.
    done = subprocess.run([sys.executable, "-c", FIT_PROGRAM], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == "0.26", done.stderr[-2000:]


@pytest.mark.parametrize("x, want", [(0.267, 0.26), (0.27, 0.27), (0.0999, 0.099), (0.99999, 0.99), (1.0, 1.0),
                                     (5.5e-5, 5.5e-5), (0.0, 0.0)])
def test_rates_round_down_to_two_figures(x, want):
    from wwho.binary.budget import _down_two_figures

    assert _down_two_figures(x) == want


def test_the_default_budget_is_half_of_a_container_limit_below_the_machine(tmp_path, monkeypatch):
    # In a container with less memory than the machine, half of the machine's memory was the
    # budget, and training could be killed for memory instead of refused.
    from wwho.binary import budget

    v2, v1 = tmp_path / "memory.max", tmp_path / "memory.limit_in_bytes"
    v2.write_text("max\n")
    v1.write_text(f"{1 << 30}\n")
    assert budget.container_memory([str(v2), str(v1)]) == 1 << 30
    v1.write_text("9223372036854771712\n")  # v1's "no limit"
    assert budget.container_memory([str(v2), str(v1), str(tmp_path / "absent")]) is None
    monkeypatch.setattr(budget, "physical_memory", lambda: 64 << 30)
    monkeypatch.setattr(budget, "container_memory", lambda: 2 << 30)
    assert budget.default_budget() == 1 << 30
    monkeypatch.setattr(budget, "container_memory", lambda: None)
    assert budget.default_budget() == 32 << 30


def test_file_mode_on_a_large_file_is_warned_about(tmp_path):
    """HF's trainer is superlinear in a window's length, and in file mode a window is a whole file:
    said before the wait (not refused), only in file mode and only past SLOW_FILE_WINDOW."""
    import warnings

    from wwho.binary.budget import SLOW_FILE_WINDOW
    from wwho.errors import WwhoWarning

    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * (SLOW_FILE_WINDOW + 1))
    with pytest.warns(WwhoWarning, match=r"--mode file makes each file one window, and the largest here is 1\.0 MiB"):
        check([str(big)], IngestOptions(mode="file"), budget=1 << 40)
    small = tmp_path / "small.bin"
    small.write_bytes(b"\0" * SLOW_FILE_WINDOW)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check([str(small)], IngestOptions(mode="file"), budget=1 << 40)
        check([str(big)], IngestOptions(mode="fixed"), budget=1 << 40)


def sparse(path, size):
    with open(path, "wb") as f:
        f.truncate(size)  # (a hole: no disk used, and the estimate only reads its size)
    return path


def test_the_estimate_counts_max_docs_per_file(tmp_path):
    """Without --max-docs-per-file, the estimate would refuse a run that keeps 3 windows of each of 2
    files (24 KiB) as needing tens of GiB, and --over-budget sample would lower the rate for nothing.
    Each file counts for at most its max_docs_per_file largest windows."""
    root = tmp_path / "d"
    root.mkdir()
    sparse(root / "big", 64 << 20)
    (root / "small").write_bytes(os.urandom(100_000))
    options = IngestOptions(max_docs_per_file=3, window_bytes=4096)
    est = estimate([root], options)
    assert (est.files, est.file_bytes) == (2, (64 << 20) + 100_000)
    assert (est.bytes, est.windows) == (2 * 3 * 4096, 6)
    budget = BASE_BYTES + (10 << 20)
    assert check([root], options, budget=budget, over_budget="sample") == (options, est, None)
    random = estimate([root], IngestOptions(mode="random", max_docs_per_file=2, min_exp=3, max_exp=10))
    assert random.bytes == 2 * 2 * 1024 and random.windows == 4  # largest windows, however many
    # a file smaller than its cap counts for its own size (at the rate)
    assert estimate([root], IngestOptions(max_docs_per_file=100, sample_rate=0.5)).bytes == \
        100 * 4096 + 50_000


def test_a_rate_chosen_under_max_docs_per_file_fits(tmp_path):
    """With max_docs_per_file the peak is not proportional to the rate (a file at its cap keeps it
    until the rate brings it under): the rate --over-budget sample chooses, and the one a refusal
    advises, are searched for, and do fit."""
    root = tmp_path / "d"
    root.mkdir()
    sparse(root / "big", 256 << 20)
    for i in range(20):
        (root / f"s{i}").write_bytes(os.urandom(20_000))
    options = IngestOptions(max_docs_per_file=2000, window_bytes=4096)
    budget = BASE_BYTES + (100 << 20)
    assert estimate([root], options).bytes == 2000 * 4096 + 20 * 20_000  # the big file at its cap
    fitted, est, note = check([root], options, budget=budget, over_budget="sample")
    assert est.peak > budget and fitted.sample_rate < 1 and "--sample-rate" in note
    assert check([root], fitted, budget=budget)[1].peak <= budget
    with pytest.raises(BudgetError) as refused:
        check([root], options, budget=budget)
    rate = float(str(refused.value).split("--sample-rate ")[1].split()[0])
    assert rate == fitted.sample_rate
    assert check([root], IngestOptions(max_docs_per_file=2000, sample_rate=rate), budget=budget)[1].peak <= budget


def test_reserved_tokens_count_in_the_estimate(tree, tmp_path):
    """A million reserved tokens took some 1 GB (HF's added vocabulary) where the estimate said 212
    MiB, and a 300M budget let it run: they count now, and no sample of the data makes room for them."""
    from wwho.binary.train import added_tokens_at_most, special_tokens

    proc = run_wwho("train", "--kind", "binary", tree, "-o", tmp_path / "t.json", "--vocab-size", "2M",
                    "--reserve", "1000000", "--memory-budget", "300M")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "special and reserved tokens at most takes more" in proc.stderr and "reserve fewer tokens (--reserve, reserve=)" in proc.stderr
    assert not (tmp_path / "t.json").exists()
    # padded to a power of two, a vocabulary of few merges is filled with reserved tokens: the bound
    names = len(special_tokens(reserve=1_000_000))
    assert added_tokens_at_most(names, 2_000_000, True) == (1 << 21) - 256
    assert added_tokens_at_most(names, 2_000_000, False) == names
