"""The walk of binary training's inputs: order, the files skipped and why, symbolic links and
files reached twice, and a file that cannot be read found while listing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wwho.binary import walk
from wwho.binary.ingest_types import IngestOptions, IngestStats
from wwho.binary.walk import iter_files
from wwho.errors import CorpusError


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    write(root / "b.bin", b"BBBB")
    write(root / "a.bin", b"AAAAAAAA")
    write(root / "sub" / "c.so", b"CC")
    write(root / "sub" / "empty.bin", b"")
    write(root / ".git" / "HEAD", b"ref: refs/heads/main")
    write(root / ".DS_Store", b"junk")
    write(tmp_path / "outside" / "d.bin", b"DDD")
    os.symlink(tmp_path / "outside" / "d.bin", root / "link.bin")
    os.symlink(tmp_path / "outside", root / "linkdir")
    return root


def names(paths, **opts) -> list[str]:
    return [key for _, key in iter_files(paths, options=IngestOptions(**opts))]


def test_walk_order_and_skips(tree):
    stats = IngestStats()
    found = [key for _, key in iter_files([tree], stats=stats)]
    assert found == ["a.bin", "b.bin", "sub/c.so"]  # sorted, depth first
    assert stats.skipped == {"hidden": 2, "empty": 1, "symlink": 2}  # .git/ and .DS_Store are hidden


def test_follow_symlinks_includes_linked_files_and_dirs(tree):
    stats = IngestStats()
    found = [k for _, k in iter_files([tree], options=IngestOptions(follow_symlinks=True), stats=stats)]
    # linkdir/d.bin is the file link.bin reached: read once, under the first path
    assert found == ["a.bin", "b.bin", "link.bin", "sub/c.so"]
    assert stats.skipped["already read by another path"] == 1


def test_symlink_loop_is_not_followed_forever(tmp_path):
    write(tmp_path / "d" / "x.bin", b"x")
    os.symlink(tmp_path / "d", tmp_path / "d" / "loop")
    stats = IngestStats()
    found = [k for _, k in iter_files([tmp_path / "d"], options=IngestOptions(follow_symlinks=True), stats=stats)]
    assert found == ["x.bin"] and stats.skipped == {"already read by another path": 1}


def test_named_inputs_are_used_in_the_given_order_even_through_symlinks(tree):
    assert names([tree / "sub" / "c.so", tree / "link.bin", tree / "a.bin"]) == ["c.so", "link.bin", "a.bin"]


def test_extension_filter_applies_inside_directories(tree):
    assert names([tree], extensions=("so",)) == ["sub/c.so"]
    assert names([tree], extensions=(".SO", "bin")) == ["a.bin", "b.bin", "sub/c.so"]
    assert names([tree / "a.bin"], extensions=("so",)) == ["a.bin"]  # named explicitly: always read


def test_a_named_file_its_folder_left_out_by_extension_is_read(tree):
    """``--ext so`` leaves ``a.bin`` out of its folder's walk; named too, after the folder, it is
    read (the filter is for files inside folders), not skipped as "already read by another path"."""
    stats = IngestStats()
    found = [k for _, k in iter_files([tree, tree / "a.bin"], options=IngestOptions(extensions=("so",)), stats=stats)]
    assert found == ["sub/c.so", "a.bin"]
    assert "already read by another path" not in stats.skipped and stats.skipped["extension"] == 3  # a, b, sub/empty


def test_a_file_left_out_twice_is_counted_once(tree):
    """A file too large, reached by its folder and by name: one file left out, for its reason."""
    stats = IngestStats()
    found = [k for _, k in iter_files([tree, tree / "a.bin"], options=IngestOptions(max_file_size=4), stats=stats)]
    assert found == ["b.bin", "sub/c.so"]
    assert stats.skipped["larger than max_file_size"] == 1 and "already read by another path" not in stats.skipped


def test_max_file_size_skips_larger_files(tree):
    stats = IngestStats()
    found = [k for _, k in iter_files([tree], options=IngestOptions(max_file_size=4), stats=stats)]
    assert found == ["b.bin", "sub/c.so"] and stats.skipped["larger than max_file_size"] == 1


def test_an_unreadable_file_is_found_while_listing_not_after_reading(tmp_path, monkeypatch):
    # One unreadable file among many was found only when its turn came to be read, after the
    # estimate's walk and the reading of every file before it.
    write(tmp_path / "d" / "a.bin", b"data")
    secret = write(tmp_path / "d" / "z.bin", b"data")
    real_access = os.access
    monkeypatch.setattr(walk.os, "access", lambda path, mode: Path(path) != secret and real_access(path, mode))
    files = iter_files([tmp_path / "d"])
    assert next(files)[1] == "a.bin"
    with pytest.raises(CorpusError, match=r"z.bin: cannot read: Permission denied"):
        next(files)
