"""Corpus input: formats, compression, directories, globs, bad lines named by file:line."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma

import pytest

from wwho.corpus import CorpusStats, iter_documents, resolve_paths
from wwho.errors import CorpusError

DOCS = ["ශ්‍රී ලංකාව", "नमस्ते दुनिया", "plain english"]


@pytest.mark.parametrize("opener, suffix", [(open, ""), (gzip.open, ".gz"), (lzma.open, ".xz"), (bz2.open, ".bz2")])
@pytest.mark.parametrize("fmt", ["txt", "jsonl"])
def test_formats_and_compression(tmp_path, opener, suffix, fmt):
    path = tmp_path / f"corpus.{fmt}{suffix}"
    lines = DOCS if fmt == "txt" else [json.dumps({"text": d, "id": i}, ensure_ascii=False) for i, d in enumerate(DOCS)]
    with opener(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    assert list(iter_documents(path)) == DOCS


def test_text_field_and_empty_lines(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"body": "a"}\n\n{"body": "b"}\n', encoding="utf-8")
    assert list(iter_documents(path, text_field="body")) == ["a", "b"]


def test_directories_and_globs_in_sorted_order(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.txt").write_text("b\n")
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "sub" / "c.txt").write_text("c\n")
    (tmp_path / ".hidden").write_text("h\n")
    assert list(iter_documents(tmp_path)) == ["a", "b", "c"]
    assert list(iter_documents(str(tmp_path / "*.txt"))) == ["a", "b"]


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"text": "ok"}\n{"text": \n', r"c.jsonl:2: invalid JSON"),
        (b'{"text": "ok"}\n{"other": "x"}\n', r"c.jsonl:2: no field 'text'"),
        (b'{"text": 3}\n', r"c.jsonl:1: field 'text' is int"),
        (b'["a"]\n', r"c.jsonl:1: a JSONL line must be an object"),
        (b'{"text": "ok"}\n\xff\xfe\n', r"c.jsonl:2: invalid UTF-8 at byte 0"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "c.jsonl"
    path.write_bytes(content)
    with pytest.raises(CorpusError, match=message):
        list(iter_documents(path))
    stats = CorpusStats()
    docs = list(iter_documents(path, skip_bad_lines=True, stats=stats))
    assert stats.bad_lines == 1 and stats.first_bad and "c.jsonl" in stats.first_bad[0]
    assert docs == (["ok"] if b"ok" in content else [])


def test_missing_inputs(tmp_path):
    with pytest.raises(CorpusError, match="no such file or directory"):
        resolve_paths(tmp_path / "absent.txt")
    with pytest.raises(CorpusError, match="matches no file"):
        resolve_paths(str(tmp_path / "*.none"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="no corpus files"):
        resolve_paths(tmp_path / "empty")


def test_truncated_gzip_is_a_clear_error(tmp_path):
    path = tmp_path / "c.txt.gz"
    data = gzip.compress(("line\n" * 10000).encode())
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusError, match="c.txt.gz:.*corrupt or truncated"):
        list(iter_documents(path))
