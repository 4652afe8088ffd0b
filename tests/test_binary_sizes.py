"""A binary training run tells one vocabulary size (the warning and the summary agree, padding
counted as such), and the defaults reach the asked size on the README's example."""

from __future__ import annotations

import random
import re
import shutil
import warnings
from pathlib import Path

import pytest
from conftest import run_wwho

from wwho.binary import train_from_counts
from wwho.binary.train import MIN_FREQUENCY
from wwho.errors import VocabSizeWarning


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    rng = random.Random(1)
    words = [rng.randbytes(rng.randrange(2, 8)) for _ in range(60)]
    root = tmp_path_factory.mktemp("sizes")
    for i in range(3):
        (root / f"f{i}.bin").write_bytes(b"".join(rng.choice(words) for _ in range(4000)))
    return root


def _sizes(stderr: str) -> set[str]:
    """Every "N tokens" the run printed."""
    return set(re.findall(r"([\d,]+) tokens", stderr))


def test_a_short_run_tells_one_size(corpus, tmp_path):
    proc = run_wwho("train", "--kind", "binary", corpus, "-o", tmp_path / "t.json", "--vocab-size", "4096",
                    "--min-frequency", "400", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "warning" in proc.stderr and "lower --min-frequency / min_frequency (now 400)" in proc.stderr
    (size,) = _sizes(proc.stderr)  # the warning and the summary say the same size
    assert "reserved (power-of-two padding)" in proc.stderr
    summary = proc.stderr.strip().splitlines()[-1]
    parts = [int(n.replace(",", "")) for n in re.findall(r"([\d,]+) (?:bytes|merges|special|reserved)", summary)]
    assert sum(parts) == int(size.replace(",", "")), summary


def test_the_default_min_frequency_reaches_the_asked_size(corpus):
    assert MIN_FREQUENCY == 2
    from wwho.binary.ingest import count_windows
    from wwho.binary.ingest_types import IngestOptions

    counts = count_windows([corpus], options=IngestOptions()).counts
    with warnings.catch_warnings():
        warnings.simplefilter("error", VocabSizeWarning)
        tok = train_from_counts(counts, vocab_size=1024)
    assert tok.get_vocab_size(with_added_tokens=True) == 1024
    assert tok.get_vocab_size(with_added_tokens=False) == 1024 - 135  # no padding needed


@pytest.mark.skipif(not Path("/usr/bin").is_dir() or shutil.which("sh") is None, reason="no /usr/bin")
def test_the_readme_example_ends_without_a_warning(tmp_path):
    proc = run_wwho("train", "--kind", "binary", "/usr/bin", "-o", tmp_path / "tokenizer.json", "--vocab-size",
                    "32768", "--with-template", "--max-docs", "256", "--quiet")
    assert proc.returncode == 0, proc.stderr
    from tokenizers import Tokenizer

    assert proc.stderr == ""  # --quiet: no warning (the size is reached), no progress, no summary
    vocab = Tokenizer.from_file(str(tmp_path / "tokenizer.json")).get_vocab()
    assert len(vocab) == 32768 and "<|reserved:128|>" not in vocab  # no power-of-two padding was needed


def test_progress_off_a_terminal_says_where_merge_progress_is(corpus, tmp_path):
    proc = run_wwho("train", "--kind", "binary", corpus, "-o", tmp_path / "t.json", "--vocab-size", "600")
    assert proc.returncode == 0, proc.stderr
    assert "merge bar shows on a terminal" in proc.stderr
    merging = proc.stderr[proc.stderr.index("merging"):proc.stderr.index("trained in")]
    assert "\n\n" not in merging  # HF's hidden bars wrote blank lines here
