"""Atomic writes: all or nothing, ordinary permissions."""

from __future__ import annotations

import os
import stat

import pytest

from wwho.errors import VocabError
from wwho.fileio import atomic_open, read_json, write_json


def test_write_json_round_trip_and_mode(tmp_path):
    path = tmp_path / "a" / "x.json"
    write_json(path, {"ශ්‍රී": 1})
    assert read_json(path) == {"ශ්‍රී": 1}
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_failure_leaves_the_old_file_and_no_temp(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_open(path) as f:
            f.write("half")
            raise RuntimeError("killed")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_read_json_errors_name_the_file(tmp_path):
    with pytest.raises(VocabError, match="no such file"):
        read_json(tmp_path / "absent.json", error=VocabError)
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  oops")
    with pytest.raises(VocabError, match=r"bad.json: invalid JSON at line 2"):
        read_json(bad, error=VocabError)
