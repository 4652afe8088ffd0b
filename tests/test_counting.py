"""Piece counting: the core (``wwho.counting``) against the pure-Python reference (``tests/reference/counting.py``),
and the reference against a plain ``Counter`` of ``findall``, whatever the worker count or spilling."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.counting import count_pieces

from wwho.counting import PIECES

DOCS = ["ශ්‍රී ලංකාව  a\tb", "x y  z", "\r\n tabs\tand\\escapes\\t here", "ශ්‍රී ලංකාව"] * 50


def expected(docs):
    c = Counter()
    for d in docs:
        c.update(re.findall(PIECES, d))
    return c


@pytest.mark.parametrize("workers", [1, 2])
def test_equals_counter(workers):
    assert count_pieces(DOCS, workers=workers, batch_bytes=100) == expected(DOCS)


# The same pattern spelled differently (the reference counts any pattern alike).
PIECES_BY_REGEX = r"(?: ?[^ \t\n\r]+)|[ \t\n\r]"


def test_spilling_gives_the_same_counts(tmp_path):
    got = count_pieces(DOCS, pattern=PIECES_BY_REGEX, workers=2, batch_bytes=50, max_in_memory=3,
                       spill_dir=tmp_path)
    assert got == expected(DOCS)
    assert list(tmp_path.iterdir()) == []  # spill files are cleaned up


@given(st.lists(st.text(alphabet=st.sampled_from(list(" \t\n\r\\ab")), max_size=12), max_size=30))
@settings(max_examples=100, deadline=None)
def test_spill_round_trip_of_any_piece(docs):
    got = count_pieces(docs, pattern=PIECES_BY_REGEX, workers=1, batch_bytes=5, max_in_memory=2)
    assert got == expected(docs)


def test_custom_pattern_with_regex_engine():
    docs = ["Hello world 123"]
    got = count_pieces(docs, pattern=r"\p{L}+|\p{N}+", engine="regex", workers=1)
    assert got == Counter({"Hello": 1, "world": 1, "123": 1})


# --- the core's counting (count_corpus, PieceCounter) -------------------------------------------

from conftest import CORPORA, read_slice  # noqa: E402

from wwho import _core  # noqa: E402
from wwho.corpus import CorpusStats, iter_documents  # noqa: E402
from wwho.counting import count_corpus  # noqa: E402
from wwho.errors import CorpusError  # noqa: E402


@given(st.lists(st.text(max_size=30), max_size=20), st.integers(1, 3))
@settings(max_examples=150, deadline=None)
def test_core_counts_any_unicode_like_the_regex(docs, workers):
    counter = _core.PieceCounter()
    for i in range(0, len(docs), 3):
        counter.count_texts(docs[i:i + 3], threads=workers)
    assert _counter(counter) == expected(docs) == count_pieces(docs, workers=1, batch_bytes=7)


def _counter(counter):
    return Counter(dict(counter.items()))


def test_core_reads_text_files_like_iter_documents(tmp_path):
    import gzip
    import json

    lines = ["ශ්‍රී ලංකාව  a\tb\r", "", "x  y\r\r", "  ", "नमस्ते\u00a0दुनिया 🙂\x00", "tail without newline"]
    text = tmp_path / "a.txt"
    text.write_text("\n".join(lines), encoding="utf-8")
    jsonl = tmp_path / "b.jsonl.gz"
    with gzip.open(jsonl, "wt", encoding="utf-8") as f:
        for d in ["json doc one", "ශ්‍රී  two"]:
            f.write(json.dumps({"text": d}) + "\n")
    files = [text, jsonl]
    for workers in (1, 2):
        stats, want_stats = CorpusStats(), CorpusStats()
        got = _counter(count_corpus(files, workers=workers, stats=stats))
        assert got == expected(iter_documents(files, stats=want_stats))
        assert stats == want_stats


@pytest.mark.parametrize("workers", [1, 2])
def test_core_bad_lines_name_file_and_line(tmp_path, workers):
    path = tmp_path / "c.txt"
    good = "ok line\n" * 3000
    path.write_bytes(good.encode() + b"bad \xff\xfe line\n" + good.encode() + b"\xe0\xb6\n")
    with pytest.raises(CorpusError, match=r"c.txt:3001: invalid UTF-8 at byte 4 \(use --skip-bad-lines"):
        count_corpus([path], workers=workers)
    stats, want_stats = CorpusStats(), CorpusStats()
    got = _counter(count_corpus([path], workers=workers, stats=stats, skip_bad_lines=True))
    assert got == expected(iter_documents([path], stats=want_stats, skip_bad_lines=True))
    assert stats == want_stats
    assert stats.bad_lines == 2 and stats.first_bad[1].endswith("c.txt:6002: invalid UTF-8 at byte 0")


def test_core_counts_a_real_corpus_like_the_regex(tmp_path):
    path = CORPORA / "si" / "news-bbcsinhala.txt"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    sample = tmp_path / "news.txt"
    sample.write_text(read_slice(path, 3_000_000), encoding="utf-8")
    got = _counter(count_corpus([sample], workers=2))
    assert got == expected(iter_documents([sample]))


def test_core_counts_only_script_runs_with_a_router(tmp_path):
    from wwho.router import core_router
    from wwho.sgpe.train import indic_segments

    path = tmp_path / "mixed.txt"
    path.write_text("Hello ශ්‍රී ලංකාව and नमस्ते!\nonly latin\n ක a ක\n", encoding="utf-8")
    scripts = ("sinhala", "devanagari")
    got = _counter(count_corpus([path], router=core_router(scripts)))
    assert got == expected(indic_segments(iter_documents([path]), scripts))


@pytest.mark.parametrize("workers", [1, 2])
def test_core_refuses_or_skips_an_over_long_line_like_iter_documents(tmp_path, workers):
    """A line longer than ``max_line_bytes`` is a bad line in the core's reader too (a file with no
    newline must not be read whole), with the same message, line number and statistics."""
    path = tmp_path / "long.txt"
    long_line = "ශ්‍රී " * 30_000  # 480,000 bytes
    path.write_text("first line\n" + long_line + "\nafter it\n" + "x" * 1000 + "\n" + long_line, encoding="utf-8")
    with pytest.raises(CorpusError, match=r"long.txt:2: the line is longer than 100,000 bytes"):
        count_corpus([path], workers=workers, max_line_bytes=100_000)
    stats, want_stats = CorpusStats(), CorpusStats()
    got = _counter(count_corpus([path], workers=workers, stats=stats, skip_bad_lines=True,
                                max_line_bytes=100_000))
    assert got == expected(iter_documents([path], stats=want_stats, skip_bad_lines=True, max_line_bytes=100_000))
    assert got == expected(["first line", "after it", "x" * 1000])
    assert stats == want_stats and stats.bad_lines == 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs as on POSIX")
def test_a_fifo_put_in_place_of_a_corpus_file_is_refused_not_waited_on(tmp_path):
    """The paths are checked before the core counts them; a file replaced by a FIFO in between
    would make a blocking open wait for a writer for ever, deaf to Ctrl-C and kill. The core opens
    without blocking and refuses what is not a regular file. In a child process, so that a blocking
    open fails the test by its timeout instead of hanging the run."""
    fifo = tmp_path / "corpus.txt"
    os.mkfifo(fifo)
    source = ("import sys\nfrom pathlib import Path\nfrom wwho.counting import count_corpus\n"
              "from wwho.errors import CorpusError\n"
              "try:\n    count_corpus([Path(sys.argv[1])], progress=False)\n"
              "except CorpusError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", source, str(fifo)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "corpus.txt: cannot open: not a regular file" in done.stdout


class _CutWhileRead:
    """A counter that cuts the file at a byte inside a character before the core reads it: what a
    truncation while the core reads looks like (its last line is no UTF-8)."""

    def __init__(self, at: int):
        from wwho import _core

        self.counter, self.at = _core.PieceCounter(None, prefix_space=False, span_breaks=None), at

    def count_files(self, paths, **options):
        os.truncate(paths[0], self.at)
        return self.counter.count_files(paths, **options)


@pytest.mark.parametrize("skip_bad_lines", [False, True])
def test_a_file_cut_while_it_is_counted_is_said_so(tmp_path, skip_bad_lines):
    """Not "invalid UTF-8" at a line that is valid text, nor (with ``skip_bad_lines``) a count of
    part of the file with one bad line skipped: the file changed while it was read."""
    from wwho.corpus import CorpusStats
    from wwho.counting import count_file
    from wwho.errors import CorpusError

    path = tmp_path / "c.txt"
    path.write_text("ශ්‍රී ලංකාව\n" * 1000, encoding="utf-8")
    with pytest.raises(CorpusError, match=r"c.txt: the file changed while it was read"):
        count_file(_CutWhileRead(len("ශ්‍රී ලංකාව\n".encode()) * 500 + 4), path, skip_bad_lines=skip_bad_lines,
                   stats=CorpusStats(), workers=1)


@pytest.mark.parametrize("change", ["cut", "appended", "replaced"])
def test_a_file_that_changes_while_its_documents_are_read_is_said_so(tmp_path, change):
    """The Python reader (JSONL, compressed files, byte-level training) says so too, at the file's
    end, where a cut or a line written meanwhile would otherwise go unnoticed."""
    from wwho.corpus import file_documents
    from wwho.errors import CorpusError

    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "ශ්‍රී ලංකාව"}\n' * 100, encoding="utf-8")
    documents = file_documents(path)
    assert next(documents) == "ශ්‍රී ලංකාව"
    if change == "cut":
        os.truncate(path, 40)
    elif change == "appended":
        with open(path, "a", encoding="utf-8") as f:
            f.write('{"text": "x"}\n')
    else:
        (tmp_path / "new.jsonl").write_text('{"text": "y"}\n', encoding="utf-8")
        os.replace(tmp_path / "new.jsonl", path)
    with pytest.raises(CorpusError, match=r"c.jsonl: the file changed while it was read"):
        list(documents)
