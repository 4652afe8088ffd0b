"""Reading files and JSON: JSON round trips and its limits, a failed write of the command line, and
what is not a regular file or is too large refused before it is read. Atomic writes themselves are
``test_atomic_write.py``'s."""

from __future__ import annotations

import os
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.errors import VocabError
from wwho.fileio import read_json, write_json


def test_write_json_round_trip_and_mode(tmp_path):
    path = tmp_path / "a" / "x.json"
    write_json(path, {"ශ්‍රී": 1})
    assert read_json(path) == {"ශ්‍රී": 1}
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_read_json_errors_name_the_file(tmp_path):
    with pytest.raises(VocabError, match="no such file"):
        read_json(tmp_path / "absent.json", error=VocabError)
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  oops")
    with pytest.raises(VocabError, match=r"bad.json: invalid JSON at line 2"):
        read_json(bad, error=VocabError)


# --- JSON limits, failed writes ---------------------------------------------------------------


def test_parse_json_refuses_duplicate_keys_and_deep_nesting():
    from wwho.fileio import parse_json

    # which object, and where the number is, said
    with pytest.raises(VocabError, match=r"f.json: the key 'a' appears twice in one JSON object \(the object "
                                         r"with the keys 'a', 'b'\)"):
        parse_json(b'{"a": 1, "b": {"c": 2}, "a": 3}', source="f.json", error=VocabError)
    with pytest.raises(VocabError, match="f.json: JSON nested too deeply"):
        parse_json(b"[" * 100_000 + b"]" * 100_000, source="f.json", error=VocabError)
    with pytest.raises(VocabError, match=r"f.json: not UTF-8 \(byte offset 1\)"):
        parse_json(b'"\xff"', source="f.json", error=VocabError)
    assert parse_json(b'{"a": "\\ud800"}', source="f.json") == {"a": "\ud800"}
    # refused where asked, naming where the string is; a pair of escapes is one character
    for raw, where in ((b'{"a": ["x", {"b": "\\udfff"}]}', r"'a'\[1\]\['b'\]"), (b'"\\ud800"', "the value"),
                       (b'{"k": {"\\ud800": 1}}', "a key of 'k'")):
        with pytest.raises(VocabError, match=rf"f.json: {where} holds a lone surrogate"):
            parse_json(raw, source="f.json", error=VocabError, surrogates=False)
    assert parse_json(b'{"e": "\\ud83d\\ude00", "f": "\\\\ud800"}', source="f.json", surrogates=False) == {
        "e": "\U0001F600", "f": "\\ud800"}
    # More digits than Python turns into an int (its limit, 4,300 by default): json's ValueError.
    with pytest.raises(VocabError, match="f.json: a number in the JSON is too long to be read at line 2, "
                                         "column 13, of 5,001 digits"):
        parse_json(b'{\n"min_freq": 1' + b"0" * 5000 + b"}", source="f.json", error=VocabError)


def test_json_bytes_writes_lone_surrogates_as_escapes(tmp_path):
    from wwho.fileio import json_bytes

    data = {"x\udfff": ["\ud800", "ශ"]}
    raw = json_bytes(data)
    assert b"\\udfff" in raw and "ශ".encode() in raw
    write_json(tmp_path / "s.json", data)
    assert read_json(tmp_path / "s.json") == data


_text = st.text(max_size=8)  # any code points, lone surrogates, quotes and backslashes included
_value = st.recursive(st.none() | st.booleans() | st.integers() | _text,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3), max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_text, st.one_of(
    st.dictionaries(_text, st.integers(), max_size=5),  # a vocabulary: one entry per line
    st.lists(st.lists(_text, max_size=3), max_size=5),  # merges: one pair per line
    _value,
), max_size=5))
def test_json_rows_bytes_reads_back_as_the_same_object(data):
    from wwho.fileio import json_rows_bytes, parse_json

    raw = json_rows_bytes(data)
    assert parse_json(raw, source="rows.json") == data
    assert raw.endswith(b"\n")


def test_json_rows_bytes_writes_one_line_per_token_and_per_pair():
    from wwho.fileio import json_rows_bytes

    raw = json_rows_bytes({"name": "x", "merges": [["a", "b"], ["\"], [", "c"]], "vocab": {"a": 0, "b\ud800": 1}})
    assert raw.decode().splitlines() == [
        "{", ' "name": "x",', ' "merges": [', '  ["a", "b"],', '  ["\\"], [", "c"]', " ],",
        ' "vocab": {', '  "a": 0,', '  "b\\ud800": 1', " }", "}"]

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
    # exit 97 (no code the script or Python uses) says the namespace or the mount failed, and only that
    mount = 'mount -t tmpfs -o size=1m tmpfs "$0" || exit 97; shift 0 && exec "$@"'
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", mount,
                           str(disk), sys.executable, str(script), str(disk), str(corpus), *wwho_command()],
                          capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode == 97 or (proc.returncode != 0 and proc.stderr.startswith("unshare:")):
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


# --- files that are not files: devices, FIFOs, directories, files above the bound (issue 27, item 4) ---


def _capped(code: str, *args: object, timeout: float = 60):
    """Run ``code`` in a fresh Python with 1 GiB of address space at most and a time limit: code that
    reads /dev/zero fails there with a MemoryError instead of taking the machine's memory, and a FIFO
    that blocks fails the test instead of hanging it."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    try:
        return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                              timeout=timeout, preexec_fn=limit, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {timeout} s (blocked on a FIFO, or reading without end)")


LOADERS = '''
import sys, time
from pathlib import Path
from wwho.errors import WwhoError
what, path = sys.argv[1:]
t = time.perf_counter()
try:
    if what == "sgpe":
        from wwho.sgpe import SGPETokenizer
        SGPETokenizer.load(path)
    elif what == "hf":
        from wwho.bytelevel import ByteBPE
        ByteBPE.from_hf(path)
    elif what == "bytelevel":
        from wwho.bytelevel import ByteBPE
        ByteBPE.load(path)
    elif what == "any":
        from wwho import load_tokenizer
        load_tokenizer(path, kind="sgpe")
    elif what == "detect":
        from wwho import load_tokenizer
        load_tokenizer(path)
    elif what == "tiktoken":
        from wwho.bytelevel import ByteBPE
        ByteBPE.from_tiktoken(path, pattern="o200k")
    elif what == "schema":
        from wwho.schema import load_schema
        load_schema(path)
    elif what == "binary-config":
        from wwho.binary.config import load_config
        load_config(path)
    elif what == "is-binary":
        from wwho.binary.io import is_binary_tokenizer
        print("is binary:", is_binary_tokenizer(path))
        sys.exit(0)
except WwhoError as exc:
    print(type(exc).__name__, exc)
    print(f"{time.perf_counter() - t:.3f}")
    sys.exit(0)
print("loaded")
sys.exit(1)
'''


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("loader, name", [("sgpe", "vocab.json"), ("bytelevel", "bytelevel.json"),
                                          ("any", "vocab.json"), ("detect", "vocab.json")])
def test_a_tokenizer_file_linked_to_dev_zero_is_refused_at_once(tmp_path, loader, name):
    """``D/vocab.json -> /dev/zero``: ``SGPETokenizer.load(D)`` does not read until memory runs out
    (here a MemoryError at the 1 GiB cap), but says one line naming the file and what it is."""
    (tmp_path / name).symlink_to("/dev/zero")
    proc = _capped(LOADERS, loader, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    kind, message = proc.stdout.splitlines()[0].split(" ", 1)
    assert kind == "VocabError" and message == f"{tmp_path / name}: is a character device, not a regular file"
    assert float(proc.stdout.splitlines()[1]) < 1.0


@pytest.mark.parametrize("loader", ["hf", "schema", "binary-config", "is-binary", "tiktoken"])
def test_a_fifo_never_blocks_a_loader(fifo, loader):
    """``ByteBPE.from_hf(FIFO)`` blocked for ever (waiting for a writer); so did a schema or a
    binary training config given as a FIFO."""
    proc = _capped(LOADERS, loader, fifo, timeout=30)
    assert proc.returncode == 0, proc.stderr[-2000:]
    if loader == "is-binary":
        assert proc.stdout.strip() == "is binary: False"
        return
    line = proc.stdout.splitlines()[0]
    assert f"{fifo}: is a FIFO (named pipe)" in line and "regular file" in line, line


def test_schema_check_of_dev_zero_is_one_line_at_once():
    """``wwho schema check /dev/zero`` does not read /dev/zero into memory: it is refused at once."""
    import time

    proc_start = time.perf_counter()
    proc = _capped("import sys; from wwho.cli import main; sys.exit(main())", "schema", "check", "/dev/zero")
    seconds = time.perf_counter() - proc_start
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr == "wwho: error: /dev/zero: is a character device; a schema file must be a regular file\n"
    assert seconds < 10


def _unblocked(fn, fifo):
    """``fn()`` on a thread; if it is still waiting on ``fifo`` after 10 s, give it a writer (and so an
    end of file) and fail, instead of hanging the test run."""
    import threading

    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            fn()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 -- handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        with open(fifo, "wb"):
            pass
        thread.join(10)
        pytest.fail("blocked on a FIFO waiting for a writer")
    if outcome[0] is not None:
        raise outcome[0]


def test_read_bytes_refuses_what_is_not_a_regular_file(tmp_path, fifo):
    from wwho.fileio import read_bytes

    with pytest.raises(VocabError, match=r"is a directory, not a vocabulary"):
        read_bytes(tmp_path, error=VocabError, what="vocabulary")
    with pytest.raises(VocabError, match=r"pipe.json: is a FIFO \(named pipe\); a vocabulary must be a regular file"):
        _unblocked(lambda: read_bytes(fifo, error=VocabError, what="vocabulary"), fifo)
    with pytest.raises(VocabError, match=r"/dev/null: is a character device, not a regular file"):
        read_bytes("/dev/null", error=VocabError)
    assert read_bytes("/proc/self/status").startswith(b"Name:")  # a regular file whose size says 0


def test_read_bytes_bound(tmp_path, monkeypatch):
    """A regular file above the bound is refused before it is read; the bound is
    ``WWHO_MAX_FILE_BYTES``; a file that grows while it is read stops at the bound + 1 bytes."""
    from wwho import fileio
    from wwho.fileio import MAX_FILE_BYTES, max_file_bytes, read_bytes

    path = tmp_path / "vocab.json"
    path.write_bytes(b"x" * 5000)
    assert max_file_bytes() == MAX_FILE_BYTES == 2 * 2**30
    assert read_bytes(path, limit=5000) == b"x" * 5000
    with pytest.raises(VocabError, match=r"vocab.json: is 5,000 bytes, more than the 4,999 wwho reads from a file$"):
        read_bytes(path, error=VocabError, limit=4999)
    monkeypatch.setenv("WWHO_MAX_FILE_BYTES", "4k")
    with pytest.raises(VocabError, match=r"more than the 4,096 wwho reads from a vocabulary \(set WWHO_MAX_FILE_BYTES"):
        read_bytes(path, error=VocabError, what="vocabulary")
    monkeypatch.delenv("WWHO_MAX_FILE_BYTES")

    real_fstat = os.fstat
    reads: list[int] = []

    class Growing:  # the file's size said 10 bytes when it was opened; it holds 5000 now
        def __init__(self, fd):
            self.st = real_fstat(fd)

        def __getattr__(self, name):
            return 10 if name == "st_size" else getattr(self.st, name)

    monkeypatch.setattr(fileio.os, "fstat", lambda fd: Growing(fd))
    real_open = fileio.open_regular

    def counting_open(*args, **kwargs):
        f = real_open(*args, **kwargs)
        read = f.read
        f_read = lambda n=-1: (reads.append(n), read(n))[1]  # noqa: E731
        return type("F", (), {"read": staticmethod(f_read), "fileno": f.fileno,
                              "__enter__": lambda self: self, "__exit__": lambda self, *a: f.close()})()

    monkeypatch.setattr(fileio, "open_regular", counting_open)
    with pytest.raises(VocabError, match=r"vocab.json: grew past 100 bytes while it was read"):
        read_bytes(path, error=VocabError, limit=100)
    assert reads[0] == 11 and sum(reads) == 101  # its size + 1, then up to the bound + 1: never more


def test_brief_cuts_before_it_quotes():
    # Error messages quote untrusted lines: a 20 MB line costs its first characters, not four
    # times its size in a repr that is then cut.
    import tracemalloc

    from wwho.errors import brief

    line = "\x00" * 20_000_000
    tracemalloc.start()
    try:
        text = brief(line)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text == repr("\x00" * 80)[:77] + "..." and len(text) == 80
    assert peak < 100_000
    assert brief("it's") == repr("it's") and brief(b"x" * 100, 10) == "b'xxxxx..."


def test_json_too_large_for_memory_is_the_callers_error_naming_the_file(tmp_path, monkeypatch):
    # a JSON file near the read limit is the caller's error, not a bare MemoryError from json
    import wwho.fileio as fileio
    from wwho.errors import VocabError

    def no_memory(*args, **kwargs):
        raise MemoryError

    path = tmp_path / "vocab.json"
    path.write_text('{"a": 1}')
    monkeypatch.setattr(fileio.json, "loads", no_memory)
    with pytest.raises(VocabError, match=r"vocab.json: not enough memory to parse its 8 bytes of JSON"):
        fileio.read_json(path, error=VocabError)




# --- one parse of a file told apart and then loaded ------------------------------------------


def test_a_kept_parse_goes_once_to_the_same_bytes_inside_a_scope_only():
    from wwho import fileio
    from wwho.fileio import drop_kept, parse_json, parsing_once

    raw = b'{"model": {"vocab": {"a": 0}}}'
    outside = parse_json(raw, source="x", keep=True)
    assert parse_json(raw, source="x") is not outside  # no scope: nothing was kept
    with parsing_once():
        kept = parse_json(raw, source="x", keep=True)
        assert parse_json(b'{"model": 1}', source="x") == {"model": 1}  # other bytes: parsed as they are
        assert parse_json(raw.decode(), source="x") is not kept  # (text is never matched)
        assert parse_json(raw, source="x") is kept  # the same bytes: the kept value, once
        assert parse_json(raw, source="x") is not kept
        again = parse_json(raw, source="x", keep=True)
        assert parse_json(raw, source="x", keep=True) is again  # a kind told twice: still kept
        assert parse_json(raw, source="x") is again
        parse_json(raw, source="x", keep=True)
        with parsing_once():  # an inner scope is the outer one
            assert fileio._kept_here()
        drop_kept()
        assert parse_json(raw, source="x") == kept and not fileio._kept_here()
    assert fileio._kept.get() is None


def test_a_scope_copied_into_another_thread_hands_nothing_between_threads():
    """``asyncio.to_thread`` and ``copy_context`` carry a scope into another thread: there it is
    no scope, so two threads never share (or clear) one kept value."""
    import contextvars
    import threading

    from wwho.fileio import drop_kept, parse_json, parsing_once

    raw = b'{"a": [1, 2]}'
    seen = {}

    def other_thread():
        seen["kept"] = parse_json(raw, source="x")
        with parsing_once():  # its own scope there
            seen["own"] = parse_json(raw, source="x", keep=True)
            seen["again"] = parse_json(raw, source="x")
        drop_kept()

    with parsing_once():
        kept = parse_json(raw, source="x", keep=True)
        thread = threading.Thread(target=contextvars.copy_context().run, args=(other_thread,))
        thread.start()
        thread.join()
        assert seen["kept"] == kept and seen["kept"] is not kept
        assert seen["again"] is seen["own"] is not kept
        assert parse_json(raw, source="x") is kept  # still here for this thread's loader


def test_a_file_changed_after_its_kind_was_told_is_parsed_as_it_is_now(tmp_path):
    """What detect_kind parsed is handed on only for the very same bytes: a loader that reads the
    file again after a writer changed it gets the new contents."""
    from wwho.fileio import parse_json, parsing_once, read_bytes
    from wwho.kinds import detect_kind

    path = tmp_path / "tokenizer.json"
    write_json(path, {"vocab": {"a": 0}, "merges": []})
    with parsing_once():
        assert detect_kind(path) == "sgpe"
        write_json(path, {"vocab": {"b": 1}, "merges": []})
        assert parse_json(read_bytes(path), source=str(path)) == {"vocab": {"b": 1}, "merges": []}
