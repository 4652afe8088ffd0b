"""Corpus input against hostile files: corrupt compressed streams, zero-byte files, a byte order
mark before a long line, files named twice, globs through link loops, folders that cannot be
listed. Oracles: Python's gzip/lzma/bz2 modules and ``collections.Counter`` over the same text."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from cli_run import one_line_error, wwho

from wwho import _core
from wwho.corpus import BOM, CorpusStats, iter_documents
from wwho.corpus_files import resolve_paths
from wwho.counting import PIECES, count_corpus, count_file
from wwho.errors import CorpusError

LINE = "ශ්‍රී ලංකාව plain words\n"


def _corrupt_gzip(path: Path) -> None:
    """A .gz whose deflate data is damaged near its start (a bit flipped in the first block)."""
    data = bytearray(gzip.compress((LINE * 20000).encode()))
    data[20] ^= 0xFF
    with pytest.raises(Exception) as caught:  # the oracle: Python's own gzip refuses it too
        gzip.decompress(bytes(data))
    assert not isinstance(caught.value, OSError)  # zlib.error, which is not an OSError
    path.write_bytes(bytes(data))


def test_a_corrupt_deflate_stream_in_a_gz_is_a_file_line_error(tmp_path):
    # zlib.error escaped as a traceback (exit 1) where a cut stream was one line
    path = tmp_path / "bad.txt.gz"
    _corrupt_gzip(path)
    for skip in (False, True):  # skipping lines does not skip a damaged stream
        with pytest.raises(CorpusError, match=r"bad\.txt\.gz:1: cannot read \(corrupt or truncated file\?\)"):
            list(iter_documents(path, skip_bad_lines=skip))


def test_wwho_train_on_a_corrupt_gz_says_so_in_one_line(tmp_path):
    path = tmp_path / "bad.txt.gz"
    _corrupt_gzip(path)
    line = one_line_error(wwho("train", "--kind", "sgpe", "--script", "sinhala", "--vocab-size", 300,
                               "--out", tmp_path / "out", path, "--no-progress"))
    assert "bad.txt.gz:1: cannot read" in line


@pytest.mark.parametrize("suffix, module", [(".gz", gzip), (".xz", lzma), (".bz2", bz2)])
def test_a_zero_byte_compressed_file_is_an_empty_file(tmp_path, suffix, module):
    # gzip read a zero-byte .gz as empty, xz and bzip2 called the same file "truncated"
    (tmp_path / f"empty.txt{suffix}").write_bytes(b"")
    (tmp_path / "some.txt").write_text(LINE, encoding="utf-8")
    stats = CorpusStats()
    assert list(iter_documents(tmp_path, stats=stats)) == [LINE.rstrip("\n")]
    assert stats.files == 2 and stats.bad_lines == 0
    if module is not lzma:  # the oracles agree that nothing is nothing (lzma has no such reading)
        assert module.decompress(b"") == b""


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b""])
@pytest.mark.parametrize("over", [-1, 0, 1])
def test_a_byte_order_mark_does_not_cut_a_long_first_line(tmp_path, ending, over):
    # The limit is of the line without the mark (as the core reads plain text). Python's reader
    # read limit + 1 bytes, mark included: a first line within 3 bytes of the limit, or over it,
    # lost its end to a second "line" instead of being accepted, or refused as too long.
    limit = 1 << 16  # the smallest limit at which the core reads plain text itself
    body = ("ab " * limit).encode()[: limit + over - len(ending)]
    path = tmp_path / "bom.txt"
    tail = b"tail\n" if ending else b""  # without a line end the long line is the last one
    path.write_bytes(BOM + body + ending + tail)
    oracle = Counter(re.findall(PIECES, body.decode().rstrip("\r"))) + Counter(re.findall(PIECES, tail.decode()[:-1]))
    for skip in (False, True):
        stats = CorpusStats()
        if over > 0 and not skip:
            with pytest.raises(CorpusError, match=r"bom\.txt:1: the line is longer than 65,536 bytes"):
                list(iter_documents(path, max_line_bytes=limit))
            continue
        docs = list(iter_documents(path, max_line_bytes=limit, skip_bad_lines=skip, stats=stats))
        core = _core.PieceCounter()
        core_stats = CorpusStats()
        count_file(core, path, stats=core_stats, skip_bad_lines=skip, max_line_bytes=limit)
        counted = Counter(p for doc in docs for p in re.findall(PIECES, doc))
        assert counted == Counter(dict(core.items()))
        assert (stats.documents, stats.bad_lines) == (core_stats.documents, core_stats.bad_lines)
        if over > 0:
            assert docs == (["tail"] if tail else []) and stats.bad_lines == 1
        else:
            assert len(docs) == (2 if tail else 1) and counted == oracle


def test_a_file_named_more_than_once_is_read_once(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    a = corpus / "a.txt"
    a.write_text(LINE * 3, encoding="utf-8")
    (corpus / "sub" / "b.txt").write_text("other words\n", encoding="utf-8")
    os.symlink(a, corpus / "sub" / "link.txt")
    os.link(a, tmp_path / "hard.txt")
    named = [a, a, corpus, str(corpus / "*.txt"), tmp_path / "hard.txt"]
    assert resolve_paths(named) == [a, corpus / "sub" / "b.txt"]
    oracle = Counter(re.findall(PIECES, LINE.rstrip("\n")) * 3) + Counter(re.findall(PIECES, "other words"))
    stats = CorpusStats()
    counter = count_corpus(resolve_paths(named), stats=stats, progress=False)
    assert Counter(dict(counter.items())) == oracle
    assert (stats.files, stats.documents) == (2, 4)


def test_a_glob_through_a_link_to_a_parent_folder_lists_each_file_once(tmp_path):
    # glob.glob(recursive=True) follows links to folders: 82 paths, 41 of each of these two files
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "x.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "d" / "sub" / "y.txt").write_text("y\n", encoding="utf-8")
    os.symlink("..", tmp_path / "d" / "sub" / "up")
    assert resolve_paths(str(tmp_path / "d" / "**" / "*.txt")) == [tmp_path / "d" / "sub" / "y.txt",
                                                                   tmp_path / "d" / "x.txt"]
    assert list(iter_documents(str(tmp_path / "d" / "**"))) == ["y", "x"]


def test_a_glob_through_two_link_loops_finishes(tmp_path):
    # two such links: 2**40 paths, glob.glob never returned (a child, so a hang cannot take the run)
    (tmp_path / "d" / "a").mkdir(parents=True)
    (tmp_path / "d" / "a" / "f.txt").write_text("f\n", encoding="utf-8")
    os.symlink("..", tmp_path / "d" / "a" / "up")
    os.symlink(".", tmp_path / "d" / "a" / "self")
    code = "import sys; from wwho.corpus_files import resolve_paths; print(len(resolve_paths(sys.argv[1])))"
    try:
        proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "d" / "**" / "*.txt")],
                              capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("resolving the glob did not finish")
    assert proc.returncode == 0 and proc.stdout.strip() == "1", proc.stderr[-2000:]


def test_a_glob_leaves_out_hidden_names_unless_it_names_them(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.txt").write_text("hidden\n", encoding="utf-8")
    (tmp_path / ".dot.txt").write_text("dot\n", encoding="utf-8")
    (tmp_path / "v.txt").write_text("visible\n", encoding="utf-8")
    assert resolve_paths(str(tmp_path / "**" / "*.txt")) == [tmp_path / "v.txt"]
    assert resolve_paths(str(tmp_path / ".*.txt")) == [tmp_path / ".dot.txt"]
    with pytest.raises(CorpusError, match="matches no file"):
        resolve_paths(str(tmp_path / "nothing" / "**" / "*.txt"))


def test_a_folder_that_cannot_be_listed_is_an_error_not_a_smaller_corpus(tmp_path, monkeypatch):
    # Path.rglob skipped a folder it could not list, and every file in it, without a word.
    # (Permissions cannot be relied on here, root reads everything: the listing is made to fail.)
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "a.txt").write_text("secret\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("open\n", encoding="utf-8")
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(CorpusError, match=r"locked: cannot list this folder of the corpus: Permission denied"):
        resolve_paths(tmp_path)


@pytest.mark.parametrize("format", ["txt", "json", "JSONL", ""])
def test_a_format_that_is_neither_text_nor_jsonl_is_refused(tmp_path, format):
    # Any value but "text" was read as JSONL: a plain text corpus failed at its first line with
    # "invalid JSON", naming the line, not the option.
    path = tmp_path / "c.txt"
    path.write_text("ලංකාව\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"format must be None \(from each file's name\), 'text' or 'jsonl'"):
        list(iter_documents(path, format=format))
    assert list(iter_documents(path, format="text")) == ["ලංකාව"]



def test_an_empty_corpus_path_is_refused_not_the_current_directory(tmp_path, monkeypatch):
    """``Path("")`` is ``.``, so ``train_sgpe([""])`` (a variable left unset) would read every file
    under the current directory."""
    from wwho.corpus_files import resolve_paths
    from wwho.errors import CorpusError

    (tmp_path / "a.txt").write_text("text\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for paths in ("", [""], ["a.txt", ""]):
        with pytest.raises(CorpusError, match="an empty corpus path"):
            resolve_paths(paths)


def test_a_folder_of_hidden_files_says_they_are_skipped(tmp_path):
    """Not "directories were empty" for a folder whose files are all hidden."""
    from wwho.corpus_files import resolve_paths
    from wwho.errors import CorpusError

    folder = tmp_path / "hid"
    folder.mkdir()
    (folder / ".notes.txt").write_text("text\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"hid holds none that is read \(hidden files and folders"):
        resolve_paths([folder])
