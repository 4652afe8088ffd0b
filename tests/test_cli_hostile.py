"""The streaming verbs (encode, decode, syllabify, inspect, eval, schema) against hostile plumbing.

Each runs the real ``wwho`` command: standard input or output closed (``<&-``, ``>&-``), standard
output on a full device (``/dev/full``), ``-o`` naming a stream (a FIFO, ``/dev/stdout``) rather than
a file, a line longer than the bound, bytes that are not UTF-8, an id out of range on line N of
standard input. Every failure must be one line, ``wwho: error: ...``, and exit code 2.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import threading
from pathlib import Path

import pytest
from cli_run import one_line_error, wwho
from conftest import wwho_command

FULL = Path("/dev/full")


@pytest.fixture(scope="module")
def sgpe_dir(tokenizers, tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile-sgpe")
    tokenizers["sinhala"].save(path)
    return path


def closed(fd: int, *args: object) -> subprocess.CompletedProcess:
    """``wwho ARGS`` with descriptor ``fd`` (0: standard input, 1: standard output) closed."""
    keep = {0: {"stdout": subprocess.PIPE}, 1: {"stdin": subprocess.DEVNULL}}[fd]
    return subprocess.run(
        [*wwho_command(), *map(str, args)],
        stderr=subprocess.PIPE,
        timeout=300,
        preexec_fn=lambda: os.close(fd),
        **keep,
    )


def to_full(*args: object, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """``wwho ARGS > /dev/full``."""
    with open(FULL, "wb") as full:
        return subprocess.run(
            [*wwho_command(), *map(str, args)], input=stdin, stdout=full, stderr=subprocess.PIPE, timeout=300
        )


def verbs(sgpe_dir, tmp_path) -> dict[str, list]:
    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව\n", encoding="utf-8")
    return {
        "encode": ["encode", "--tokenizer", sgpe_dir, "ශ්‍රී"],
        "decode": ["decode", "--tokenizer", sgpe_dir, "5", "6"],
        "syllabify": ["syllabify", "ශ්‍රී ලංකාව"],
        "syllabify --json": ["syllabify", "--json", "ශ්‍රී ලංකාව"],
        "inspect": ["inspect", sgpe_dir],
        "schema": ["schema", "check", "sinhala", "--max-length", "2"],
        "eval": ["eval", "--corpus", corpus, "--tokenizer", sgpe_dir, "--quiet"],
    }


@pytest.mark.parametrize("verb", ["encode", "decode", "syllabify"])
def test_a_closed_standard_input_is_one_line(sgpe_dir, verb):
    # Was an AttributeError traceback ('NoneType' object has no attribute 'buffer') and exit 1.
    args = {
        "encode": ["encode", "--tokenizer", sgpe_dir, "-"],
        "decode": ["decode", "--tokenizer", sgpe_dir, "-"],
        "syllabify": ["syllabify", "-"],
    }[verb]
    line = one_line_error(closed(0, *args))
    assert "standard input is closed" in line
    # decode reads ids there, not text (so its advice does not say "the text")
    assert ("give the ids as arguments" if verb == "decode" else "give the text as an argument") in line


@pytest.mark.parametrize(
    "verb", ["encode", "decode", "syllabify", "syllabify --json", "inspect", "schema", "eval"]
)
def test_a_closed_standard_output_is_one_line(sgpe_dir, tmp_path, verb):
    # encode, decode and syllabify died with a traceback; inspect, schema and eval printed nowhere and
    # ended with success.
    line = one_line_error(closed(1, *verbs(sgpe_dir, tmp_path)[verb]))
    assert "standard output is closed" in line


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full")
@pytest.mark.parametrize(
    "verb",
    [
        "encode",
        "decode",
        "syllabify",
        "syllabify --json",
        "inspect",
        "schema",
        "eval",
        "--help",
        "--version",
        "encode --help",
    ],
)
def test_a_full_standard_output_is_named(sgpe_dir, tmp_path, verb):
    # The error said only "No space left on device"; --help and --version said nothing and exited 0.
    args = verb.split() if verb.startswith(("--", "encode --")) else verbs(sgpe_dir, tmp_path)[verb]
    line = one_line_error(to_full(*args))
    assert line.startswith("wwho: error: standard output: cannot write: No space left on device"), line


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full")
@pytest.mark.parametrize("verb", ["encode", "decode", "syllabify"])
def test_a_full_standard_output_while_streaming_is_named(sgpe_dir, verb):
    lines = "ශ්‍රී ලංකාව\n" * 20_000
    if verb == "decode":
        lines = "5 6 7\n" * 20_000
    args = [verb, *(["--tokenizer", sgpe_dir] if verb != "syllabify" else []), "-"]
    line = one_line_error(to_full(*args, stdin=lines.encode()))
    assert line.startswith("wwho: error: standard output: cannot write"), line


def fifo_reader(path: Path) -> tuple[threading.Thread, list[bytes]]:
    got: list[bytes] = []

    def read() -> None:
        with open(path, "rb") as f:
            got.append(f.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, got


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("verb", ["encode", "decode"])
def test_an_output_fifo_is_written_into_not_replaced(sgpe_dir, tmp_path, verb, force):
    # -o FIFO was "exists; pass --force"; with --force a regular file was renamed over the FIFO (and
    # over /dev/null, run as root: `-o /dev/null --force` left /dev/null a regular file).
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    for target in (fifo, link):
        thread, got = fifo_reader(fifo)
        args = ["encode", "ශ්‍රී"] if verb == "encode" else ["decode", "5", "6"]
        proc = wwho(
            args[0],
            "--tokenizer",
            sgpe_dir,
            *args[1:],
            "-o",
            target,
            *(["--force"] if force else []),
            timeout=120,
        )
        thread.join(60)
        assert proc.returncode == 0, proc.stderr
        want = wwho(*args[:1], "--tokenizer", sgpe_dir, *args[1:]).stdout
        assert got == [want]
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["link", "pipe"]  # no temporary file


@pytest.mark.parametrize("force", [False, True])
def test_binary_encode_and_decode_write_into_a_fifo_too(tmp_path, force):
    # encode --binary -o and decode --binary -o renamed a new file over the path: a FIFO was
    # "exists", and replaced with --force.
    data = bytes(range(256)) * 40
    (tmp_path / "data.bin").write_bytes(data)
    tokenizer = tmp_path / "binary.json"
    assert wwho("train", "--kind", "binary", "--quiet", "--vocab-size", "600", "-o", tokenizer,
                tmp_path / "data.bin").returncode == 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    ids = wwho("encode", "--tokenizer", tokenizer, "--binary", tmp_path / "data.bin", "--ids").stdout
    for args, stdin, want in ((["encode", "--binary", tmp_path / "data.bin", "--ids"], None, ids),
                              (["decode", "--binary", "-"], ids, data)):
        thread, got = fifo_reader(fifo)
        proc = wwho(args[0], "--tokenizer", tokenizer, *args[1:], "-o", fifo, *(["--force"] if force else []),
                    input=stdin, timeout=120)
        thread.join(60)
        assert proc.returncode == 0, proc.stderr
        assert got == [want]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["binary.json", "data.bin", "pipe"]


def test_an_output_that_names_standard_output_writes_there(sgpe_dir, tmp_path):
    # -o /dev/stdout: "exists; pass --force", and with --force (as root) /dev/stdout itself replaced.
    want = wwho("encode", "--tokenizer", sgpe_dir, "ශ්‍රී").stdout
    for target in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        if not os.path.exists(target):
            continue
        proc = wwho("encode", "--tokenizer", sgpe_dir, "ශ්‍රී", "-o", target)
        assert proc.returncode == 0 and proc.stdout == want, proc.stderr
    # A file behind standard output (> FILE, >> FILE) is appended to, never replaced.
    log = tmp_path / "log.txt"
    log.write_bytes(b"before\n")
    with open(log, "ab") as out:
        proc = subprocess.run(
            [*wwho_command(), "encode", "--tokenizer", str(sgpe_dir), "ශ්‍රී", "-o", "/dev/stdout"],
            stdout=out,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    assert log.read_bytes() == b"before\n" + want
    # Behind `> FILE` (not appending), opening /dev/stdout again would write at a position of its
    # own, so what the shell writes next would land over wwho's output.
    command = shlex.join([*wwho_command(), "encode", "--tokenizer", str(sgpe_dir), "ශ්‍රී", "-o", "/dev/stdout"])
    for target in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        if os.path.exists(target):
            with open(log, "wb") as out:  # the shell's `> FILE`: written from its start, not appended
                proc = subprocess.run(["sh", "-c", f"echo before; {command.replace('/dev/stdout', target)}; echo after"],
                                      stdout=out, stderr=subprocess.PIPE, timeout=120)
            assert proc.returncode == 0 and log.read_bytes() == b"before\n" + want + b"after\n", (target, proc.stderr)


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full")
def test_an_output_device_that_is_full_is_named(sgpe_dir):
    line = one_line_error(wwho("encode", "--tokenizer", sgpe_dir, "ශ්‍රී", "-o", FULL))
    assert line.startswith("wwho: error: /dev/full: cannot write: No space left on device"), line
    assert stat.S_ISCHR(os.stat(FULL).st_mode)


def test_a_file_written_by_renaming_refuses_a_stream(tmp_path):
    # Outputs written as a new file renamed over the path (eval --plot, training outputs)
    # replaced a FIFO or a device with --force.
    from wwho.cli.outputs import check_output_file
    from wwho.errors import WwhoError

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for force in (False, True):
        with pytest.raises(WwhoError, match=r"pipe: --plot is a FIFO \(named pipe\), not a file"):
            check_output_file(fifo, force=force, flag="--plot")
        with pytest.raises(WwhoError, match=r"is an open descriptor \(such as /dev/stdout\), not a file"):
            check_output_file("/dev/fd/1", force=force)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_syllabify_refuses_a_line_longer_than_the_bound(tmp_path):
    # A line was held whole however long: one line of 200 MB on standard input took 933 MB.
    ok = "ක" * 300 + "\n"  # 901 bytes with its line end
    over = "ක" * 400 + "\n"  # 1,201 bytes
    for source in (ok + ok + over + ok, ok + ok + over[:-1], ok + ok + over * 100):
        for extra in ([], ["--json"]):
            line = one_line_error(
                wwho("syllabify", *extra, "--max-line-bytes", "1k", "-", input=source.encode())
            )
            assert line == (
                "wwho: error: stdin:3: the line is longer than 1,024 bytes (its line end included), the limit that "
                "bounds memory (raise it with --max-line-bytes)"
            )
    proc = wwho("syllabify", "--max-line-bytes", "901", "-", input=(ok * 3).encode())
    assert proc.returncode == 0 and proc.stdout.count(b"\n") == 3, proc.stderr


def test_syllabify_reads_no_more_than_the_bound_of_one_line(monkeypatch):
    """The reader stops once the bound is passed, whatever the block size (endless input here)."""
    from wwho.cli import syllabify as verb
    from wwho.errors import CorpusError

    class Endless:
        served = 0

        def read(self, n: int) -> bytes:
            self.served += n
            return b"a" * n

    monkeypatch.setattr(verb, "BLOCK_BYTES", 1000)
    stream = Endless()
    with pytest.raises(CorpusError, match=r"stdin:1: the line is longer than 5,000 bytes"):
        list(verb._texts(stream, 5000))
    assert stream.served <= 6000


def test_syllabify_names_the_line_of_a_byte_that_is_not_utf8():
    line = one_line_error(wwho("syllabify", "-", input="ක\n".encode() * 10 + "කා".encode() + b"\xff\n"))
    assert line == "wwho: error: stdin:11: invalid UTF-8 at byte 6 of the line (byte 46 of the input)"


def test_syllabify_refuses_script_and_schema_together(tmp_path):
    # --script was silently left unused when --schema was given.
    from wwho import __file__ as package

    sinhala = Path(package).parent / "schemas" / "sinhala.json"
    line = one_line_error(wwho("syllabify", "--script", "devanagari", "--schema", sinhala, "नमस्ते"))
    assert "give --script or --schema, not both" in line
    proc = wwho("syllabify", "--schema", sinhala, "ශ්‍රී")
    assert proc.returncode == 0 and proc.stdout.decode() == "ශ්‍රී\n"


def test_decode_names_the_line_of_an_id_out_of_range(sgpe_dir):
    # "token id 99999 at position 1 is out of range": which of a million lines, not said.
    line = one_line_error(wwho("decode", "--tokenizer", sgpe_dir, "-", input=b"5 6\n7\n5 99999\n"))
    assert line.startswith("wwho: error: stdin:3: token id 99999 at position 1 is out of range"), line


def test_encode_blocks_hold_a_bounded_number_of_lines():
    # 4 MB of one-character lines is two million lines in a block, whose ids took 566 MB at once.
    from wwho.cli.encode import MAX_BLOCK_LINES, _blocks

    blocks = list(_blocks(["y"] * (3 * MAX_BLOCK_LINES + 5), 4_000_000))
    assert [len(b) for b in blocks] == [MAX_BLOCK_LINES] * 3 + [5]
    assert [len(b) for b in _blocks(["x" * 100] * 10, 250)] == [3, 3, 3, 1]


def test_encode_reads_standard_input_in_line_order_across_blocks(sgpe_dir):
    lines = [f"{i} ශ්‍රී" for i in range(70_000)]
    proc = wwho("encode", "--tokenizer", sgpe_dir, "--json", "-", input=("\n".join(lines) + "\n").encode())
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode().splitlines()
    assert len(out) == len(lines)
    from wwho.sgpe import SGPETokenizer

    tok = SGPETokenizer.load(sgpe_dir)
    for i in (0, 65_535, 65_536, 69_999):
        assert json.loads(out[i])["ids"] == tok.encode(lines[i])


def test_a_closed_standard_error_keeps_messages_out_of_the_results(sgpe_dir):
    # With descriptor 2 closed Python has no sys.stderr, and print(..., file=sys.stderr) writes to
    # standard output: "wwho: error: ..." and warnings landed among the ids.
    def run(*args: object) -> subprocess.CompletedProcess:
        return subprocess.run([*wwho_command(), *map(str, args)], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, timeout=300, preexec_fn=lambda: os.close(2))

    failed = run("encode", "--tokenizer", sgpe_dir / "missing", "ක")
    assert (failed.returncode, failed.stdout) == (2, b"")
    done = run("encode", "--tokenizer", sgpe_dir, "--ids", "ශ්‍රී ලංකාව")
    assert done.returncode == 0 and done.stdout.split() and all(w.isdigit() for w in done.stdout.split())


@pytest.mark.parametrize("verb", ["encode --file", "encode -", "encode - -o /dev/stdin", "syllabify -", "decode -"])
def test_an_input_that_is_the_output_file_is_refused(sgpe_dir, tmp_path, verb):
    """`wwho encode --file F >> F` (or `-o /dev/stdin < F`, `syllabify - < F >> F`) would read its
    own results back and write on without end, until the disk was full: refused, as cat does."""
    path = tmp_path / "text.txt"
    text = "0 1 2\n" if verb == "decode -" else "ශ්‍රී ලංකාව\n" * 50
    path.write_text(text, encoding="utf-8")
    words = verb.split()
    args = [*wwho_command(), words[0], *([] if words[0] == "syllabify" else ["--tokenizer", str(sgpe_dir)]),
            *(["--file", str(path)] if words[1] == "--file" else words[1:])]
    def small_files() -> None:  # were it not refused, the loop would stop at 4 MB, not a full disk
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, 4 << 20))

    with open(path, "rb") as stdin, open(path, "ab") as stdout:
        done = subprocess.run(args, stdin=stdin, stdout=subprocess.PIPE if "-o" in words else stdout,
                              stderr=subprocess.PIPE, timeout=300, check=False, preexec_fn=small_files)
    line = one_line_error(done)
    assert "the file the results are written to" in line and "without end" in line
    assert path.read_text(encoding="utf-8") == text  # nothing written
    if "-o" in words:
        return  # (-o /dev/stdin is the input whatever standard output is)
    other = tmp_path / "other.txt"
    with open(path, "rb") as stdin, open(other, "ab") as stdout:  # appending to another file is fine
        assert subprocess.run(args, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=300,
                              check=False).returncode == 0
    assert other.stat().st_size > 0


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_standard_output_that_cannot_hold_the_text(sgpe_dir, tmp_path, encoding):
    """Where standard output is not UTF-8, inspect, eval, schema check and export end in no
    UnicodeEncodeError traceback (exit 1), export none after writing its files: what the encoding
    cannot hold is written as Python escapes."""
    env = {"PYTHONIOENCODING": encoding}
    shown = wwho("inspect", sgpe_dir, env=env)
    assert shown.returncode == 0 and b"Traceback" not in shown.stderr, shown.stderr[-2000:]
    assert b"\\u0d" in shown.stdout  # Sinhala tokens, escaped
    out = tmp_path / "එච්"
    done = wwho("export", "hf", sgpe_dir, "-o", out, "--quiet", env=env)
    assert done.returncode == 0 and (out / "tokenizer.json").is_file(), done.stderr[-2000:]
    assert b"\\u0d91\\u0da0\\u0dca" in done.stdout


def test_a_deleted_current_directory_and_a_full_standard_output_are_named(sgpe_dir, tmp_path):
    """A relative -o from a current directory deleted under the shell names that directory, not
    `wwho: error: No such file or directory`, and export's summary on a full standard output names it."""
    gone = tmp_path / "gone"
    gone.mkdir()
    done = subprocess.run([*wwho_command(), "encode", "--tokenizer", str(sgpe_dir), "x", "-o", "out.txt"],
                          capture_output=True, timeout=300, check=False, cwd=gone,
                          preexec_fn=lambda: os.rmdir(gone))
    assert "the current directory no longer exists" in one_line_error(done)
    with open(FULL, "wb") as full:
        done = subprocess.run([*wwho_command(), "export", "hf", str(sgpe_dir), "-o", str(tmp_path / "hf"), "--quiet"],
                              stdout=full, stderr=subprocess.PIPE, timeout=300, check=False)
    assert "standard output: cannot write" in one_line_error(done)


def test_a_failed_verb_leaves_no_folder_it_made_for_its_output(sgpe_dir, tmp_path):
    """Decode with an id that is none, or encode of a file that is not UTF-8, each with ``-o`` in
    folders that did not exist, fail as they should and take back the folders made for the output,
    as train's save does."""
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\n")
    runs = [("decode", "--tokenizer", sgpe_dir, "abc", "-o", tmp_path / "a" / "sub" / "x.txt"),
            ("encode", "--tokenizer", sgpe_dir, "--file", tmp_path / "bad.txt", "-o", tmp_path / "b" / "x.txt"),
            ("encode", "--tokenizer", sgpe_dir, "--file", tmp_path / "bad.txt", "--npy", "--eot", "none",
             "-o", tmp_path / "c" / "x.npy")]
    for args in runs:
        one_line_error(wwho(*args))
    assert sorted(os.listdir(tmp_path)) == ["bad.txt"]
    one_line_error(wwho("decode", "--tokenizer", sgpe_dir, "-o", tmp_path / "d" / "x.txt", input=b"1 2\nabc\n"))
    assert sorted(os.listdir(tmp_path)) == ["bad.txt"]


def test_export_refuses_a_closed_standard_output_before_writing(sgpe_dir, tmp_path):
    """``wwho export hf`` must not write its files and then fail (exit 2) on a closed standard output,
    where it says what it wrote: run again, it would refuse the files it had just written. A closed
    one is refused first; the --verify report, a result, is written before any
    file, so a full one stops it there."""
    out = tmp_path / "out"
    assert "standard output is closed" in one_line_error(closed(1, "export", "hf", sgpe_dir, "-o", out))
    assert not out.exists()
    if FULL.exists():
        corpus = tmp_path / "c.txt"
        corpus.write_text("ශ්‍රී ලංකාව\n", encoding="utf-8")
        line = one_line_error(to_full("export", "hf", sgpe_dir, "-o", tmp_path / "checked", "--quiet", "--verify",
                                      corpus))
        assert "standard output: cannot write" in line
        assert not (tmp_path / "checked").exists()


def test_serve_with_a_closed_standard_output_is_one_line(sgpe_dir):
    """uvicorn's logging set-up needs standard output: one line, not a traceback."""
    pytest.importorskip("uvicorn")
    line = one_line_error(closed(1, "serve", "--tokenizer", sgpe_dir, "--port", "0"))
    assert "standard output is closed" in line


def test_a_non_blocking_standard_output_that_fills_is_an_error_for_printing_verbs(sgpe_dir):
    """Python's text stream loses what a non-blocking standard output (as some CI
    runners leave it) did not take: ``wwho inspect`` ended with success, its output cut at 64 KiB."""
    import fcntl
    import time

    read, write = os.pipe()
    fcntl.fcntl(write, fcntl.F_SETFL, fcntl.fcntl(write, fcntl.F_GETFL) | os.O_NONBLOCK)
    proc = subprocess.Popen([*wwho_command(), "inspect", str(sgpe_dir), "--top", "5000"], stdout=write,
                            stderr=subprocess.PIPE)
    os.close(write)
    time.sleep(3)  # a slow reader: the pipe fills
    got = b""
    while chunk := os.read(read, 1 << 16):
        got += chunk
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 2, (len(got), err)
    assert "standard output: cannot write" in err


@pytest.mark.parametrize("verb", [["train", "--kind", "sgpe"], ["train", "--kind", "bytelevel"],
                                  ["train", "--kind", "binary"], ["export", "hf"]])
def test_an_output_of_files_named_dash_is_refused(sgpe_dir, tmp_path, verb):
    """``-o -`` is standard output to encode and decode; train and export made a
    file or folder named ``-`` in the current directory instead."""
    args = [sgpe_dir] if verb[0] == "export" else ["--vocab-size", "1000", sgpe_dir / "vocab.json"]
    proc = subprocess.run([*wwho_command(), *verb, "-o", "-", *map(str, args)], capture_output=True,
                          cwd=tmp_path, timeout=300)
    assert "this command writes files, not to standard output" in one_line_error(proc)
    assert not (tmp_path / "-").exists()


def test_train_takes_a_file_named_help_after_double_dash(tmp_path):
    """Without --kind too, ``wwho train ... -- --help`` trains on a file named --help rather than
    printing the kinds' help."""
    corpus = tmp_path / "--help"
    corpus.write_text("ශ්‍රී ලංකාව ප්‍රජාතන්ත්‍රවාදී\n" * 50, encoding="utf-8")
    proc = subprocess.run([*wwho_command(), "train", "-o", "out", "--vocab-size", "300", "--quiet", "--", "--help"],
                          capture_output=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "vocab.json").is_file()
    assert "expected one of" in one_line_error(subprocess.run([*wwho_command(), "train", "--kind"],
                                                              capture_output=True, timeout=300))


def test_an_output_file_that_appears_meanwhile_is_kept_without_force(tmp_path):
    """``-o FILE`` checked to be absent at the start and replaced at the end would lose a file
    another process wrote meanwhile (a second run) without a word: that file is kept."""
    from wwho.atomic_write import atomic_open
    from wwho.errors import WriteError

    path = tmp_path / "out.txt"
    with pytest.raises(WriteError, match="appeared while this command ran .* pass --force to replace it"):
        with atomic_open(path, "w", replace=False) as f:
            f.write("mine")
            path.write_text("theirs", encoding="utf-8")
    assert path.read_text(encoding="utf-8") == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temporary file left
    with atomic_open(path, "w") as f:  # replace=True (--force, the API's saves): replaced
        f.write("mine")
    assert path.read_text(encoding="utf-8") == "mine"
