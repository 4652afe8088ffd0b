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


# --- temporary names, stale temporary files, failed writes, JSON limits -------------------------


def test_temporary_names_are_recognizable_and_stale_ones_go_with_the_next_write(tmp_path):
    from wwho.fileio import remove_stale_temps, temp_owner

    seen = []
    with atomic_open(tmp_path / "x.json") as f:
        seen = [p.name for p in tmp_path.iterdir()]
        f.write("{}")
    assert len(seen) == 1 and seen[0].startswith(".wwho-tmp-x.json.") and temp_owner(seen[0]) == os.getpid()
    dead = tmp_path / ".wwho-tmp-y.json.999999999.abcdefgh.tmp"  # a process killed while writing
    dead.write_text("half")
    alive = tmp_path / f".wwho-tmp-z.json.{os.getppid()}.abcdefgh.tmp"  # a running writer's
    alive.write_text("busy")
    mine = tmp_path / ".x.json.abcdefgh.tmp"  # not a name wwho makes: never touched
    mine.write_text("user")
    write_json(tmp_path / "x.json", {"a": 1})
    assert not dead.exists() and alive.exists() and mine.exists()
    assert remove_stale_temps(tmp_path) == []


def test_parse_json_refuses_duplicate_keys_and_deep_nesting():
    from wwho.fileio import parse_json

    with pytest.raises(VocabError, match=r"f.json: the key 'a' appears twice"):
        parse_json(b'{"a": 1, "b": {"c": 2}, "a": 3}', source="f.json", error=VocabError)
    with pytest.raises(VocabError, match="f.json: JSON nested too deeply"):
        parse_json(b"[" * 100_000 + b"]" * 100_000, source="f.json", error=VocabError)
    with pytest.raises(VocabError, match=r"f.json: not UTF-8 \(byte offset 1\)"):
        parse_json(b'"\xff"', source="f.json", error=VocabError)
    assert parse_json(b'{"a": "\\ud800"}', source="f.json") == {"a": "\ud800"}


def test_json_bytes_writes_lone_surrogates_as_escapes(tmp_path):
    from wwho.fileio import json_bytes

    data = {"x\udfff": ["\ud800", "ශ"]}
    raw = json_bytes(data)
    assert b"\\udfff" in raw and "ශ".encode() in raw
    write_json(tmp_path / "s.json", data)
    assert read_json(tmp_path / "s.json") == data


FULL_DISK = r'''
import json, os, subprocess, sys
from pathlib import Path
disk, corpus, wwho = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
out = disk / "out"
def train(size, *force):  # --force: the second run replaces the first one's files
    return subprocess.run([*wwho, "train", "--kind", "bytelevel", corpus, "--out", str(out), "--vocab-size",
                           str(size), "--workers", "1", "--quiet", *force], capture_output=True, text=True)
first = train(300)
before = {p.name: p.read_bytes() for p in out.iterdir()}
fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)  # fill the disk, then give back a little
try:
    while True:
        os.write(fd, b"\0" * 4096)
except OSError:
    pass
os.close(fd)
os.truncate(disk / "filler", os.path.getsize(disk / "filler") - 8192)
second = train(500, "--force")
after = {p.name: p.read_bytes() for p in out.iterdir()}
print(json.dumps({"first": first.returncode, "code": second.returncode, "stderr": second.stderr,
                  "same": before == after, "names": sorted(after),
                  "litter": sorted(str(p) for p in disk.rglob(".wwho*"))}))
'''


def test_a_full_disk_is_one_line_naming_the_file_and_the_old_files_stay(tmp_path):
    """A real ENOSPC: a 1 MiB tmpfs in a private mount namespace (``unshare``), the real CLI."""
    import json
    import shutil
    import subprocess
    import sys

    from conftest import one_line_error, wwho_command

    if shutil.which("unshare") is None:
        pytest.skip("unshare is absent: cannot make a small filesystem to fill")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world, the quick brown fox jumps over the lazy dog\n" * 300, encoding="utf-8")
    disk = tmp_path / "disk"
    disk.mkdir()
    script = tmp_path / "full.py"
    script.write_text(FULL_DISK, encoding="utf-8")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o size=1m tmpfs "$0" && shift 0 && exec "$@"',
                           str(disk), sys.executable, str(script), str(disk), str(corpus), *wwho_command()],
                          capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0 and "mount" in proc.stderr + proc.stdout:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["first"] == 0
    # the small corpus gives fewer tokens than asked, which is said first in a warning line
    stderr = "".join(l for l in result["stderr"].splitlines(True) if not l.startswith("wwho: warning: "))
    line = one_line_error(subprocess.CompletedProcess([], result["code"], "", stderr))
    assert "No space left on device" in line and f"{disk}/out" in line, line
    assert result["same"] and "vocab.json" not in result["names"] and "ranks.tiktoken" in result["names"]
    assert result["litter"] == []
