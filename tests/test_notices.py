"""wwho.notices: every warning of the package names the caller's line, not a line of wwho's own."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from conftest import O200K_FILE

import wwho
from wwho.errors import VocabSizeWarning, WwhoWarning
from wwho.notices import plural


def _caught(call) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return caught


def _assert_here(caught: list[warnings.WarningMessage], category: type[Warning]) -> None:
    ours = [w for w in caught if issubclass(w.category, category)]
    assert ours, [str(w.message) for w in caught]
    assert {Path(w.filename).name for w in ours} == {Path(__file__).name}, \
        [(w.filename, w.lineno, str(w.message)[:60]) for w in ours]


def test_plural():
    assert plural(1, "file") == "1 file"
    assert plural(2, "file") == "2 files"
    assert plural(1_000, "index", "indices") == "1,000 indices"


def test_warn_called_here_names_this_line():
    from wwho.notices import warn

    caught = _caught(lambda: warn("hello", WwhoWarning))
    _assert_here(caught, WwhoWarning)


def test_a_short_sgpe_vocabulary_is_warned_at_the_caller():
    corpus = ["ශ්‍රී ලංකාව ශ්‍රී ලංකාව", "ලංකාව"] * 3
    caught = _caught(lambda: wwho.SGPETokenizer.train_from_iterator(corpus, vocab_size=4_000, script="sinhala",
                                                      progress=False))
    _assert_here(caught, VocabSizeWarning)


def test_a_short_binary_vocabulary_is_warned_at_the_caller():
    from wwho.binary import train_from_counts

    caught = _caught(lambda: train_from_counts({b"abcabc": 5}, vocab_size=1_000, min_frequency=1))
    _assert_here(caught, VocabSizeWarning)


def test_a_load_through_its_wrappers_is_warned_at_the_caller(tmp_path):
    """SGPETokenizer.load of a meta tokenizer's folder warns through the whole-load retry wrapper."""
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    sgpe = wwho.SGPETokenizer.train_from_iterator(["ශ්‍රී ලංකාව ලංකාව ශ්‍රී"] * 50, vocab_size=280, script="sinhala", superword_share=0,
                                    progress=False)
    wwho.MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE).save(tmp_path / "meta")
    caught = _caught(lambda: wwho.SGPETokenizer.load(tmp_path / "meta"))
    _assert_here(caught, WwhoWarning)


def test_a_deprecated_keyword_is_shown_to_a_script_by_default(tmp_path):
    """Python shows a DeprecationWarning by default only where ``__main__`` triggers it."""
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(f"""\
        import wwho
        wwho.ByteBPE.from_tiktoken("o200k_base", ranks_path={str(O200K_FILE)!r})
    """), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-W", "default", str(script)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "user.py:2: DeprecationWarning: ranks_path= is deprecated" in proc.stderr
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert "user.py:2: DeprecationWarning: ranks_path= is deprecated" in proc.stderr
