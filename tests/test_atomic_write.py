"""Atomic writes: all or nothing, ordinary permissions; wwho's temporary names, and which stale
ones the next write removes; the folders made for a failed write taken back."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from wwho.atomic_write import atomic_open
from wwho.fileio import write_json


def test_failure_leaves_the_old_file_and_no_temp(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_open(path) as f:
            f.write("half")
            raise RuntimeError("killed")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_temporary_names_are_recognizable_and_stale_ones_go_with_the_next_write(tmp_path):
    from wwho.atomic_write import STALE_SECONDS, remove_stale_temps, temp_owner

    seen = []
    with atomic_open(tmp_path / "x.json") as f:
        seen = [p.name for p in tmp_path.iterdir()]
        f.write("{}")
    assert len(seen) == 1 and seen[0].startswith(".wwho-tmp-x.json.") and temp_owner(seen[0]) == os.getpid()
    dead = tmp_path / ".wwho-tmp-y.json.999999999.0123456789ab.tmp"  # a process killed while writing
    dead.write_text("half")
    old = time.time() - 2 * STALE_SECONDS
    os.utime(dead, (old, old))
    # A pid that runs nowhere here, but the file is fresh: a writer in another container or on another
    # host sharing the folder (its output would be removed under it). Left alone.
    foreign = tmp_path / ".wwho-tmp-w.json.999999998.0123456789ab.tmp"
    foreign.write_text("being written")
    alive = tmp_path / f".wwho-tmp-z.json.{os.getppid()}.0123456789ab.tmp"  # a running writer's
    alive.write_text("busy")
    mine = tmp_path / ".x.json.0123456789ab.tmp"  # not a name wwho makes: never touched
    mine.write_text("user")
    # The prefix and a dead pid, but not the rest of the format: a user's file, never touched.
    lookalikes = [tmp_path / name for name in (".wwho-tmp-notes.4000000.backup", ".wwho-tmp-y.json.4000000.abcdefgh.tmp",
                                               ".wwho-tmp-y.json.4000000.0123456789ab.tmp.bak")]
    for path in lookalikes:
        path.write_text("user")
    write_json(tmp_path / "x.json", {"a": 1})
    assert not dead.exists() and alive.exists() and mine.exists() and foreign.exists()
    assert all(path.read_text() == "user" for path in lookalikes)
    assert remove_stale_temps(tmp_path) == []


def test_a_temporary_file_its_writer_holds_is_never_removed(tmp_path):
    """The writer's lock: a stale-looking name (dead pid, old) whose file a running wwho in another
    process namespace still writes is left; once the lock is free it goes."""
    import fcntl

    from wwho.atomic_write import STALE_SECONDS, remove_stale_temps

    held = tmp_path / ".wwho-tmp-v.json.999999997.0123456789ab.tmp"
    held.write_text("writing")
    old = time.time() - 2 * STALE_SECONDS
    os.utime(held, (old, old))
    fd = os.open(held, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert remove_stale_temps(tmp_path) == [] and held.exists()
    finally:
        os.close(fd)
    assert remove_stale_temps(tmp_path) == [held.name] and not held.exists()
    with atomic_open(tmp_path / "x.json") as f:  # wwho's own writes hold that lock while they run
        (name,) = [p.name for p in tmp_path.iterdir()]
        os.utime(tmp_path / name, (old, old))
        assert remove_stale_temps(tmp_path) == []
        f.write("{}")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to act as two users")
def test_another_users_temporary_name_in_a_shared_directory_is_left_alone():
    """In a sticky (1777) directory, removing a temporary name of another user's (dead pid) fails
    with EPERM for an ordinary user, so one planted file would stop every write there: it is not
    this user's, so it is left, and the write succeeds."""
    import shutil
    import subprocess
    import sys
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="wwho-shared-"))  # pytest's tmp_path is private to root
    try:
        shared.chmod(0o1777)
        planted = shared / ".wwho-tmp-x.json.4000000.abcdef.tmp"
        planted.write_text("someone else's")
        code = ("import os, sys; from wwho.atomic_write import write_bytes; os.setgid(65534); os.setuid(65534); "
                "write_bytes(sys.argv[1], b'{}')")
        proc = subprocess.run([sys.executable, "-c", code, str(shared / "x.json")], capture_output=True, text=True,
                              timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert (shared / "x.json").read_bytes() == b"{}" and planted.read_text() == "someone else's"
    finally:
        shutil.rmtree(shared)


@pytest.mark.parametrize("length", [225, 240, 255])
def test_saves_into_names_of_any_length_the_system_allows(tmp_path, length):
    # The temporary sibling .wwho-tmp-<name>.<pid>.<token> went past 255 bytes for names from 226 on.
    from wwho.atomic_write import atomic_open
    from wwho.manifest import check_saved
    from wwho.savedir import save_files

    name = "ක" * (length // 3) + "x" * (length % 3)  # three bytes a letter: cut inside one by a plain cut
    assert len(name.encode()) == length
    target = save_files(tmp_path / name, {"a.json": b"1"}, kind="x")
    save_files(target, {"a.json": b"2"}, kind="x")  # over an existing one: the exchange
    assert (target / "a.json").read_bytes() == b"2"
    check_saved(target, {"a.json": b"2"})
    with atomic_open(tmp_path / name / ("y" * 250), "wb") as f:
        f.write(b"3")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_atomic_open_names_a_directory_given_as_the_file(tmp_path):
    from wwho.atomic_write import atomic_open
    from wwho.errors import WriteError

    (tmp_path / "adir").mkdir()
    with pytest.raises(WriteError, match=r"adir: is a directory; give a file name"):
        with atomic_open(tmp_path / "adir", "wb") as f:
            f.write(b"x")
    assert os.listdir(tmp_path / "adir") == [] and os.listdir(tmp_path) == ["adir"]


def test_a_path_ending_with_a_slash_is_a_directory_not_a_file(tmp_path):
    """``-o ids/`` wrote a file named ``ids`` (``Path`` drops the slash); the shell refuses it."""
    from wwho.atomic_write import atomic_open, write_bytes
    from wwho.errors import WriteError

    with pytest.raises(WriteError, match=r"ids/: names a directory \(it ends with '/'\)"):
        write_bytes(f"{tmp_path}/ids/", b"x")
    assert os.listdir(tmp_path) == []
    with atomic_open(f"{tmp_path}/ids", "wb") as f:  # without the slash, a file
        f.write(b"x")
    assert (tmp_path / "ids").read_bytes() == b"x"


def test_a_symbolic_link_is_written_where_it_points(tmp_path):
    """As the shell's ``>``: the target gets the data, the link stays a link (it was replaced by a
    file, and the target kept its old data)."""
    from wwho.atomic_write import write_bytes

    (tmp_path / "real.txt").write_bytes(b"old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    write_bytes(tmp_path / "link.txt", b"new")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_bytes() == b"new"
    (tmp_path / "sub").mkdir()
    (tmp_path / "dangling").symlink_to("sub/made.txt")  # a link to a file not yet made: made
    write_bytes(tmp_path / "dangling", b"made")
    assert (tmp_path / "sub" / "made.txt").read_bytes() == b"made" and (tmp_path / "dangling").is_symlink()
    assert not [n for n in os.listdir(tmp_path) + os.listdir(tmp_path / "sub") if n.startswith(".wwho-tmp")]


def test_atomic_open_names_the_file_when_its_folder_goes_away_meanwhile(tmp_path):
    # Another program removed or swapped the output folder while wwho wrote: the rename fails
    # with ENOENT, which is no failed write of the caller's but must name the file all the same.
    import shutil

    from wwho.errors import WriteError

    folder = tmp_path / "out"
    with pytest.raises(WriteError, match=r"out/x\.json: cannot write: No such file or directory"):
        with atomic_open(folder / "x.json") as f:
            f.write("{}")
            shutil.rmtree(folder)
    assert os.listdir(tmp_path) == []


def test_atomic_open_leaves_the_callers_own_errors_as_they_are(tmp_path):
    # An OSError of the caller's work inside the block (reading its input) is not a failed write
    # of the output: it is not renamed after the output file.
    with pytest.raises(FileNotFoundError, match="absent-input"):
        with atomic_open(tmp_path / "x.json") as f:
            f.write((tmp_path / "absent-input").read_text())
    assert os.listdir(tmp_path) == []


def test_a_failed_write_takes_back_the_folders_it_made(tmp_path):
    """``wwho decode ... -o new/sub/x.txt`` that failed (or was interrupted) left ``new/sub/`` behind, made for its output. The folders made are removed
    again, deepest first, each only if empty; those that were there, and one that someone else put a
    file in meanwhile, stay."""
    (tmp_path / "was").mkdir()
    for error in (RuntimeError("failed"), KeyboardInterrupt()):
        with pytest.raises(type(error)):
            with atomic_open(tmp_path / "was" / "new" / "sub" / "x.txt") as f:
                f.write("half")
                raise error
        assert os.listdir(tmp_path / "was") == []
    with pytest.raises(RuntimeError):
        with atomic_open(tmp_path / "was" / "new" / "sub" / "x.txt") as f:
            (tmp_path / "was" / "new" / "theirs.txt").write_text("theirs")  # another process, meanwhile
            raise RuntimeError("failed")
    assert sorted(os.listdir(tmp_path / "was" / "new")) == ["theirs.txt"]
    with atomic_open(tmp_path / "a" / "b" / "x.txt") as f:
        f.write("whole")
    assert (tmp_path / "a" / "b" / "x.txt").read_text() == "whole"


@pytest.mark.parametrize("kind", ["fifo", "socket", "link to a fifo"])
def test_a_device_fifo_or_socket_is_never_replaced_by_a_file(tmp_path, kind):
    """A new file renamed over a FIFO, a socket or a device replaces it: ``binary.save(tok,
    "/dev/null")`` turned /dev/null into a regular file, as root. Every writer through atomic_open
    (the Python API's saves too, not only the CLI's checked outputs) refuses, naming what it is."""
    import socket

    from wwho.errors import WriteError
    from wwho.fileio import write_json

    target = tmp_path / "out"
    if kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(target))
    else:
        os.mkfifo(target)
    path = target
    if kind == "link to a fifo":
        path = tmp_path / "link"
        path.symlink_to(target)
    before = os.stat(target).st_mode
    with pytest.raises(WriteError, match=r"out: is a (FIFO \(named pipe\)|socket), not a file"):
        write_json(path, {"a": 1})
    assert os.stat(target).st_mode == before
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".wwho-tmp")]


def test_a_binary_tokenizer_saved_over_a_fifo_leaves_it_a_fifo(tmp_path):
    from conftest import train_binary_sample

    from wwho import binary
    from wwho.errors import WriteError

    os.mkfifo(tmp_path / "tok.json")
    with pytest.raises(WriteError, match="is a FIFO"):
        binary.save(train_binary_sample(20_000), tmp_path / "tok.json")
    assert (tmp_path / "tok.json").is_fifo()
