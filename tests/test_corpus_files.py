"""Which files a corpus is (``corpus_files.py``): missing inputs, paths of the wrong type, streams,
hidden folders, and the files wwho saved itself in a corpus folder."""

from __future__ import annotations

import os

import pytest

from wwho.corpus_files import resolve_paths
from wwho.errors import CorpusError


def test_missing_inputs(tmp_path):
    with pytest.raises(CorpusError, match="no such file or directory"):
        resolve_paths(tmp_path / "absent.txt")
    with pytest.raises(CorpusError, match="matches no file"):
        resolve_paths(str(tmp_path / "*.none"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="no corpus files"):
        resolve_paths(tmp_path / "empty")
    # an empty list is said, not "the folders given hold none that is read", of no folder
    with pytest.raises(CorpusError, match="no corpus files given: the list of files, directories or globs is empty"):
        resolve_paths([])


@pytest.mark.parametrize(("corpus", "message"), [
    (b"corpus/c.txt", "not a bytes object: os.fsdecode"), (bytearray(b"c.txt"), "not a bytearray object"),
    (None, "a path, or a list of paths, not NoneType"), (5, "not int"), ([b"c.txt"], "not bytes objects")])
def test_a_corpus_that_is_no_paths_is_named(corpus, message):
    """A path in bytes is not iterated (an error saying "not int objects"), nor ``None`` a bare
    TypeError from the loop."""
    with pytest.raises(CorpusError, match=message):
        resolve_paths(corpus)


def test_a_path_that_cannot_be_looked_at_says_why(tmp_path):
    """A loop of links, or a file in a folder that may not be searched, is not "no such file or
    directory" nor "not a file name": the system's reason is said, as ``encode --file`` says it."""
    import subprocess
    import sys

    from conftest import bound_by_permissions

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(CorpusError, match=r"a: cannot read: Too many levels of symbolic links"):
        resolve_paths(tmp_path / "a")
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "c.txt").write_text("text\n", encoding="utf-8")
    closed.chmod(0o600)  # listed by its owner, not searched
    try:
        code = ("import sys\nfrom wwho.corpus_files import resolve_paths\nfrom wwho.errors import CorpusError\n"
                "try:\n    resolve_paths(sys.argv[1])\nexcept CorpusError as exc:\n    print(exc)")
        done = subprocess.run([sys.executable, "-c", code, str(closed / "c.txt")], capture_output=True, text=True,
                              timeout=60, preexec_fn=bound_by_permissions())
    finally:
        closed.chmod(0o700)
    assert done.stdout.strip() == f"{closed / 'c.txt'}: cannot read: Permission denied", (done.stdout, done.stderr)


def test_a_fifo_or_a_device_says_what_it_is(tmp_path):
    """Not ``no such file or directory`` for a path that exists. Corpora are read more than
    once (counting, then checking the export), so a stream is refused, saying so."""

    fifo = tmp_path / "corpus.txt"
    os.mkfifo(fifo)
    with pytest.raises(CorpusError, match=r"corpus.txt: is a FIFO \(named pipe\), not a corpus file: give regular "
                                          r"files, directories or globs \(a stream: save it to a file first\)$"):
        resolve_paths([fifo])
    with pytest.raises(CorpusError, match=r"^/dev/null: is a character device, not a corpus file"):
        resolve_paths("/dev/null")
    (tmp_path / "real.txt").write_text("a\n")
    assert resolve_paths(tmp_path) == [tmp_path / "real.txt"]  # in a directory: regular files only, as before


def test_a_directory_corpus_leaves_out_hidden_folders(tmp_path):
    """Files inside .git/ (a cloned dataset repository) are not read as corpus."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text("text\n")
    (tmp_path / ".git" / "objects").mkdir(parents=True)
    (tmp_path / ".git" / "index").write_bytes(b"\xff\x00binary")
    (tmp_path / ".git" / "objects" / "x.txt").write_text("not corpus\n")
    (tmp_path / ".hidden.txt").write_text("not corpus\n")
    assert resolve_paths(tmp_path) == [tmp_path / "data" / "a.txt"]


def test_a_checkpoint_folder_in_a_corpus_folder_is_not_read_as_corpus(tmp_path):
    """With the output (and so its checkpoints) inside the corpus folder, a resumed run must not read
    checkpoint.json as a document, find another corpus and refuse to resume, every time."""
    from wwho.errors import WwhoWarning
    from wwho.sgpe import checkpoints

    folder = tmp_path / "corpus"
    (folder / "out" / "checkpoints").mkdir(parents=True)
    (folder / "text.txt").write_text("ශ්‍රී ලංකාව\n", encoding="utf-8")
    (folder / "out" / "checkpoints" / checkpoints.FILE).write_text('{"step": 3}', encoding="utf-8")
    (folder / "out" / "checkpoints" / checkpoints.MARKER).write_text("created\n", encoding="utf-8")
    (folder / "out" / "checkpoints" / "mine.txt").write_text("ලංකා\n", encoding="utf-8")  # yours: read
    with pytest.warns(WwhoWarning, match="a wwho training checkpoint"):
        files = resolve_paths([folder])
    assert [p.relative_to(folder).as_posix() for p in files] == ["out/checkpoints/mine.txt", "text.txt"]
    (folder / "out" / "checkpoints" / checkpoints.MARKER).unlink()  # no marker: a file like any other
    assert len(resolve_paths([folder])) == 3


def test_a_binary_tokenizer_saved_in_the_folder_is_not_text(tmp_path):
    """README says a folder's files are read but not those of a tokenizer wwho
    saved there; a binary training's -o (one tokenizer.json, no manifest) was read as text by the
    text trainers, without a word (binary training already skipped it)."""
    from conftest import train_binary_sample

    from wwho.errors import WwhoWarning

    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "text.txt").write_text("ශ්‍රී ලංකාව\n" * 20, encoding="utf-8")
    train_binary_sample(20_000).save(str(folder / "tok.json"))
    (folder / "other.json").write_text('{"text": "a JSON file of ones own is read"}\n', encoding="utf-8")
    with pytest.warns(WwhoWarning, match="tok.json: a binary tokenizer wwho saved, not read as corpus"):
        files = resolve_paths([folder])
    assert [p.name for p in files] == ["other.json", "text.txt"]
    assert [p.name for p in resolve_paths([folder / "tok.json"])] == ["tok.json"]  # named itself: read


def test_a_deeply_nested_json_file_in_the_folder_is_read_like_any_other(tmp_path):
    # It starts as a tokenizer.json does, so the walk parses it to see whether it is a binary
    # tokenizer: nesting past Python's recursion limit was a RecursionError from that check.
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "text.txt").write_text("ශ්‍රී ලංකාව\n", encoding="utf-8")
    (folder / "notes.json").write_text('{"version":"1.0","truncation":' + "[" * 100_000 + "]" * 100_000 + "}",
                                       encoding="utf-8")
    assert [p.name for p in resolve_paths([folder])] == ["notes.json", "text.txt"]
