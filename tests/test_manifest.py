"""The manifest read back: files of other saves refused (by size before a large read), the files a
save would remove, and file names from tokenizer files kept inside their directory."""

from __future__ import annotations

import os

import pytest

from wwho.errors import VocabError
from wwho.manifest import MANIFEST, check_saved, check_saved_size, member, removed_by_save
from wwho.savedir import save_files


def test_member_keeps_names_inside_the_directory(tmp_path):
    (tmp_path / "ok.txt").write_text("x")
    assert member(tmp_path, "ok.txt", source="cfg", key="k") == tmp_path / "ok.txt"
    secret = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    secret.write_text("TOP SECRET LINE")
    os.symlink(secret, tmp_path / "escape.txt")
    for name in ("/etc/passwd", "../x", "a/b", "..", "", 7, ["x"]):
        with pytest.raises(VocabError, match="must be a file name in the same directory"):
            member(tmp_path, name, source="cfg", key="k")
    with pytest.raises(VocabError, match="link to a file outside") as info:
        member(tmp_path, "escape.txt", source="cfg", key="k")
    assert "TOP SECRET" not in str(info.value)


def test_check_saved_without_manifest_or_for_unlisted_files(tmp_path):
    check_saved(tmp_path, {"x.json": b"1"})  # no manifest: nothing to check
    save_files(tmp_path / "d", {"a.json": b"1"}, kind="x")
    check_saved(tmp_path / "d", {"other.json": b"2"}, only_listed=True)
    with pytest.raises(VocabError, match="other.json not listed in wwho-manifest.json"):
        check_saved(tmp_path / "d", {"other.json": b"2"})
    (tmp_path / "d" / MANIFEST).write_text('{"format": "wwho-manifest/1", "files": {"../a": {}}}')
    with pytest.raises(VocabError, match="not a plain file name"):
        check_saved(tmp_path / "d", {})


def test_a_file_of_another_size_is_refused_before_it_is_read(tmp_path, monkeypatch):
    save_files(tmp_path / "d", {"a.json": b"1234", "b.json": b"5"}, kind="x")
    check_saved_size(tmp_path / "d" / "a.json")  # as saved
    check_saved_size(tmp_path / "d" / "unlisted.json")  # not listed: nothing to compare
    (tmp_path / "d" / "a.json").write_bytes(b"12345678")
    with pytest.raises(VocabError, match=r"a.json does not match wwho-manifest.json .*8 bytes, the save wrote 4"):
        check_saved_size(tmp_path / "d" / "a.json")


def test_removed_by_save_lists_only_files_as_saved(tmp_path):
    save_files(tmp_path / "d", {"a.json": b"1", "b.json": b"2", "c.json": b"3"}, kind="x")
    (tmp_path / "d" / "c.json").write_bytes(b"changed")  # changed since: a save keeps it
    assert removed_by_save(tmp_path / "d", ["a.json"]) == ["b.json"]
