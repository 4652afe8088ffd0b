"""Memory the core cannot get, for a size that input chose, is a ``MemoryError``, never an abort.

Rust's default on a failed allocation is to abort the whole process. Where the size of a request comes
from input (an option, a line of a file), the core asks with ``try_reserve`` and reports what it could
not hold, naming the file and line. Tried under ``RLIMIT_AS`` (``ulimit -v``) in a child process, on a
sparse file: one 3 GiB line, no disk used.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as on Linux")

LIMITED = textwrap.dedent("""
    import resource, sys
    path = sys.argv[1]
    with open(path, "wb") as f:
        f.truncate(3 << 30)  # one line of 3 GiB (NUL bytes, sparse)
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
""")


def test_a_line_larger_than_memory_is_a_memory_error(tmp_path):
    source = LIMITED + textwrap.dedent("""
        from wwho.sgpe import train_sgpe
        try:
            train_sgpe(path, vocab_size=1000, progress=False, workers=1, max_line_bytes=4 << 30)
        except MemoryError as exc:
            print("MemoryError", exc)
    """)
    done = subprocess.run([sys.executable, "-c", source, str(tmp_path / "one-line.txt")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.startswith("MemoryError"), done.stdout
    assert "one-line.txt:1: cannot hold" in done.stdout and "max_line_bytes" in done.stdout


def test_a_large_ranks_file_reserves_no_memory_by_its_size(tmp_path):
    """Found by a probe: the core reserved about 2.7 times a ``.tiktoken`` file's size before it
    read a line; a 1 GiB file under a 3 GiB cap aborted the process (SIGABRT, a Rust backtrace)."""
    source = textwrap.dedent("""
        import resource, sys
        path = sys.argv[1]
        with open(path, "wb") as f:
            f.truncate(1 << 30)  # 1 GiB of NUL bytes, sparse
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        from wwho import ByteBPE
        from wwho.errors import VocabError
        try:
            ByteBPE.from_tiktoken(path, pattern="o200k")
        except (VocabError, MemoryError) as exc:
            print(type(exc).__name__, str(exc)[:200])
    """)
    done = subprocess.run([sys.executable, "-c", source, str(tmp_path / "ranks.tiktoken")], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "WWHO_MAX_FILE_BYTES": str(2 << 30)})
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.startswith(("VocabError", "MemoryError")) and "ranks.tiktoken" in done.stdout, done.stdout


def test_decoding_more_ids_than_memory_holds_is_one_line_never_a_hang(tmp_path):
    """Found by a probe: ``wwho decode`` of 8M ids under ``ulimit -v`` was a MemoryError traceback or
    a ``PanicException`` (``PyBytes::new`` panics where Python cannot allocate), and with
    ``RUST_BACKTRACE=1`` 30M ids hung for ever, deaf to SIGINT and SIGTERM (the panic's backtrace
    printer could not get memory either, and waited on its own lock). Each limit of a sweep gives
    the text or one error line, within the timeout."""
    from conftest import wwho_command

    from wwho.sgpe import SGPETokenizer, train_sgpe

    sample = ROOT / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    SGPETokenizer(train_sgpe(sample, vocab_size=1000, progress=False, workers=1)).save(tmp_path / "tok")
    ids = tmp_path / "ids.txt"
    ids.write_bytes(b"5 " * 8_000_000 + b"\n")
    failed = 0
    for limit_mb in range(100, 320, 40):
        limit = limit_mb << 20
        with open(ids, "rb") as stdin:
            done = subprocess.run(
                [*wwho_command(), "decode", "--tokenizer", str(tmp_path / "tok")], stdin=stdin, capture_output=True,
                timeout=120, env={**os.environ, "RUST_BACKTRACE": "1"},
                preexec_fn=lambda limit=limit: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
        err = done.stderr.decode("utf-8", "replace")
        if done.returncode == 0:
            assert len(done.stdout) >= 8_000_000, limit_mb
            continue
        failed += 1
        lines = [line for line in err.splitlines() if line.strip()]
        assert done.returncode == 2 and len(lines) == 1, (limit_mb, done.returncode, err[-2000:])
        assert lines[0].startswith("wwho: error: out of memory"), lines
    assert failed, "no limit of the sweep was too small: the case was not tried"
