"""Memory the core cannot get, for a size that input chose, is a ``MemoryError``, never an abort.

Rust's default on a failed allocation is to abort the whole process. Where the size of a request comes
from input (an option, a line of a file), the core asks with ``try_reserve`` and reports what it could
not hold, naming the file and line. Tried under ``RLIMIT_AS`` (``ulimit -v``) in a child process, on a
sparse file: one 3 GiB line, no disk used.
"""

from __future__ import annotations

import contextlib
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
    """The core reserves no memory by a ``.tiktoken`` file's size before it reads a line: a 1 GiB file
    under a 3 GiB cap must not abort the process (SIGABRT, a Rust backtrace)."""
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


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel", "o200k", "meta"])
def test_decoding_more_ids_than_memory_holds_is_one_line_never_a_hang(tmp_path, saved_tokenizers, kind):
    """``wwho decode`` of more ids than memory holds under ``ulimit -v`` is no MemoryError traceback
    nor a ``PanicException`` (``PyBytes::new`` panics where Python cannot allocate), and with
    ``RUST_BACKTRACE=1`` no hang, deaf to SIGINT and SIGTERM (the panic's backtrace printer cannot
    get memory either, and waits on its own lock). Each limit of a sweep gives
    the text or one error line, within the timeout, for every kind whose core decodes."""
    from conftest import wwho_command

    from wwho.errors import UnknownTokenError
    from wwho.loading import load_tokenizer

    if kind not in saved_tokenizers:
        pytest.skip("the shared o200k_base ranks file is absent")
    args = saved_tokenizers[kind]
    tok = load_tokenizer(args[0], tiktoken_file=args[2]) if len(args) > 1 else load_tokenizer(args[0])
    # The longest token's id, so that the output, not the ids read, is what memory cannot hold.
    sizes = {}
    for i in range(getattr(tok, "n_vocab", tok.vocab_size)):
        with contextlib.suppress(UnknownTokenError):  # (o200k_base leaves two ids unassigned)
            sizes[i] = len(tok.token_bytes(i))
    longest = max(sizes, key=sizes.__getitem__)
    one, ids = tmp_path / "one.txt", tmp_path / "ids.txt"
    one.write_bytes(b"%d\n" % longest)
    ids.write_bytes(b"%d " % longest * 400_000 + b"\n")

    def decode(path: Path, limit_mb: float) -> subprocess.CompletedProcess:
        limit = int(limit_mb) << 20
        with open(path, "rb") as stdin:
            return subprocess.run(
                [*wwho_command(), "decode", "--tokenizer", *saved_tokenizers[kind]], stdin=stdin,
                capture_output=True, timeout=120, env={**os.environ, "RUST_BACKTRACE": "1"},
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))

    # From the least limit under which the tokenizer decodes one id (loading it needs memory too)
    # up to the first under which the 400k ids decode.
    limit_mb = _least(lambda limit: decode(one, limit).returncode == 0, _steps(40.0, lambda limit: limit * 1.15))
    assert limit_mb is not None, "one id fails to decode at every limit"
    failed = 0
    while (done := decode(ids, limit_mb)).returncode != 0:
        failed += 1
        err = done.stderr.decode("utf-8", "replace")
        lines = [line for line in err.splitlines() if line.strip()]
        assert done.returncode == 2 and len(lines) == 1, (int(limit_mb), done.returncode, err[-2000:])
        assert lines[0].startswith("wwho: error: out of memory"), lines
        limit_mb *= 1.15
        assert limit_mb < 4000, "no limit of the sweep sufficed"
    assert len(done.stdout) >= 400_000 * len(tok.token_bytes(longest))
    assert failed, "no limit of the sweep was too small: the case was not tried"


#: One long line of each kind of text that a probe saw abort the process (exit 134, a Rust backtrace,
#: a temporary output file left behind): NUL bytes, one letter, Latin-1 letters, Sinhala words.
LONG_LINES = {
    "nul": "\0" * 3_000_000,
    "letter": "a" * 3_000_000,
    "latin1": "".join(chr(0xC0 + (i * 7919) % 64) for i in range(1_500_000)),
    "sinhala": "ශ්‍රී ලංකාව " * 150_000,
}


@pytest.fixture(scope="module")
def saved_tokenizers(tmp_path_factory) -> dict[str, list[str]]:
    """name -> the ``--tokenizer`` arguments of an SGPE tokenizer, a byte-level one under the merges
    rule and (with the shared ranks file) o200k_base and the meta tokenizer."""
    from conftest import O200K_FILE

    from wwho.bytelevel import ByteBPE
    from wwho.sgpe import SGPETokenizer, train_sgpe

    tmp_path = tmp_path_factory.mktemp("tokenizers")
    sample = ROOT / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    sgpe = SGPETokenizer(train_sgpe(sample, vocab_size=1000, progress=False, workers=1))
    sgpe.save(tmp_path / "sgpe")
    ByteBPE.train(sample, vocab_size=600, progress=False, workers=1).save(tmp_path / "bytelevel")
    tokenizers = {"sgpe": [str(tmp_path / "sgpe")], "bytelevel": [str(tmp_path / "bytelevel")]}
    if O200K_FILE.is_file():
        from wwho.meta import MetaTokenizer

        MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE).save(tmp_path / "meta")
        tokenizers["o200k"] = ["o200k_base", "--tiktoken-file", str(O200K_FILE)]
        tokenizers["meta"] = [str(tmp_path / "meta"), "--tiktoken-file", str(O200K_FILE)]
    return tokenizers


@pytest.fixture(scope="module")
def long_line_commands(tmp_path_factory, saved_tokenizers) -> dict[str, tuple[list[str], float]]:
    """name -> (a ``wwho`` command that reads ``--file`` given last, the least memory limit in MB
    under which it runs on an empty line): ``encode`` with each of :func:`saved_tokenizers`, and
    ``syllabify``. Below that limit Python itself may fail to start: no sweep goes there."""
    tmp_path = tmp_path_factory.mktemp("long-lines")
    out = tmp_path / "out"
    out.mkdir()
    commands = {name: ["encode", "--tokenizer", *args, "-o", str(out / "ids.txt"), "--force", "--file"]
                for name, args in saved_tokenizers.items()}
    commands["syllabify"] = ["syllabify", "--file"]
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    found = {}
    for name, command in commands.items():
        def runs(limit, command=command):
            return _limited([*command, str(empty)], limit).returncode == 0

        limit_mb = _least(runs, _steps(40.0, lambda limit: limit * 1.15))
        assert limit_mb is not None, (name, "the command fails on an empty line at every limit")
        # Closer, to about 2%: a whole step's slack (a process of threads maps much) could hold the
        # long line whole, and its sweep would then try no limit it fails under.
        low = limit_mb / 1.15
        while limit_mb / low > 1.02:
            middle = (low * limit_mb) ** 0.5
            low, limit_mb = (low, middle) if runs(middle) else (middle, limit_mb)
        found[name] = (command, limit_mb)
    return found


def _steps(first: float, step) -> list[float]:
    """The limits of a sweep in MB, from ``first``, each ``step`` of the one before, below 4000."""
    limits = [first]
    while (limit := step(limits[-1])) < 4000:
        limits.append(limit)
    return limits


def _least(runs, limits: list[float]) -> float | None:
    """The first of ``limits`` under which ``runs(limit)`` is true (None if none), as trying them in
    turn finds it where a limit that sufficed is never followed by one that does not: every other
    one is tried until one suffices, then the one skipped below it. The limits below the least
    are each a run that fails; this tries half of them."""
    for k in range(1, len(limits) + 1, 2):
        i = min(k, len(limits) - 1)
        if runs(limits[i]):
            return limits[i - 1] if i > 0 and runs(limits[i - 1]) else limits[i]
    return None


def _limited(command: list[str], limit_mb: float) -> subprocess.CompletedProcess:
    from conftest import wwho_command

    limit = int(limit_mb) << 20
    return subprocess.run([*wwho_command(), *command], capture_output=True, timeout=300,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))


@pytest.mark.parametrize("text", sorted(LONG_LINES))
def test_encoding_a_line_longer_than_memory_holds_is_one_line_never_an_abort(tmp_path, long_line_commands, text):
    """One line of several MB (within the default ``--max-line-bytes``) under ``ulimit -v`` must not
    make ``wwho encode`` abort (exit 134, a Rust backtrace, the temporary output left behind) for
    any kind, nor ``wwho syllabify``, where the core grows buffers as long as the line. For each
    command, the limits of a sweep go from the least that the same command needs for an empty line
    up to the first that suffices for the long one: each gives the ids or one error line, and leaves
    no file behind."""
    line = tmp_path / "line.txt"
    line.write_text(LONG_LINES[text] + "\n", encoding="utf-8")
    for name, (command, limit_mb) in long_line_commands.items():
        out = Path(command[command.index("-o") + 1]).parent if "-o" in command else None
        for left in out.iterdir() if out else ():  # (what an earlier case left: reported there)
            left.unlink()
        failed = 0
        while True:
            done = _limited([*command, str(line)], limit_mb)
            left = [p.name for p in out.iterdir() if p.name != "ids.txt"] if out else []
            assert not left, (name, limit_mb, left)
            if done.returncode == 0:
                break
            failed += 1
            err = done.stderr.decode("utf-8", "replace")
            lines = [line for line in err.splitlines() if line.strip()]
            assert done.returncode == 2 and len(lines) == 1, (name, int(limit_mb), done.returncode, err[-2000:])
            assert lines[0].startswith("wwho: error: out of memory"), (name, lines)
            limit_mb *= 1.15
            assert limit_mb < 4000, (name, "no limit of the sweep sufficed")
        assert failed, (name, "the line needed no more memory than an empty one: the case was not tried")


def test_loading_a_tokenizer_under_a_memory_limit_is_one_line_never_an_abort(tmp_path, long_line_commands):
    """Below the least limit under which ``wwho encode`` runs on an empty line, and above the
    one where Python's own start-up fails, o200k_base is loading: its tables (the token table,
    the whitespace pairs, the constructing thread's memo, an int slot per id) come each in turn
    within a few MB, and a limit between them used to abort the process (exit 134) where the
    allocation of one failed. Each limit of a sweep in tenths of a MB gives the ids or one error
    line."""
    if "o200k" not in long_line_commands:
        pytest.skip("needs the shared o200k_base ranks file (WWHO_SHARED_DATA)")
    command, least_mb = long_line_commands["o200k"]
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    outcomes = set()
    for k in range(40):
        limit_mb = least_mb - 4 + k / 10
        done = _limited([*command, str(empty)], limit_mb)
        err = done.stderr.decode("utf-8", "replace")
        lines = [line for line in err.splitlines() if line.strip()]
        assert done.returncode in (0, 2), (round(limit_mb, 1), done.returncode, err[-2000:])
        if done.returncode == 2:
            assert len(lines) == 1 and lines[0].startswith("wwho: error: out of memory"), (limit_mb, lines)
        outcomes.add(done.returncode)
    assert 2 in outcomes, "no limit of the sweep was too small: the loading was not tried"


def test_loading_a_gguf_vocabulary_under_a_memory_limit_is_one_line_never_a_hang(tmp_path):
    """A GGUF vocabulary of the merges rule (llama-bpe) loads through a bytes object per token, a
    tuple per merge and a pair table. pyo3's constructors panic where Python cannot allocate such
    an object, and with ``RUST_BACKTRACE=1`` a panic's backtrace, needing memory too, can wait for
    ever on its own lock; a table that Rust cannot allocate aborts. From the least limit under
    which it loads (found to 1 MB), limits half a MB apart over the 8 MB below: the ids or one
    error line each, and never a wait."""
    from conftest import DATA, require_data

    gguf = require_data(DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    command = ["encode", "--tokenizer", str(gguf), "-o", str(tmp_path / "ids.txt"), "--force", "--file", str(empty)]

    def load(limit_mb: float) -> subprocess.CompletedProcess:
        limit = int(limit_mb * (1 << 20))
        from conftest import wwho_command

        return subprocess.run([*wwho_command(), *command], capture_output=True, timeout=60,
                              env={**os.environ, "RUST_BACKTRACE": "1"},
                              preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))

    low, high = 40.0, 1040.0
    while high - low > 1:
        middle = (low + high) / 2
        low, high = (low, middle) if load(middle).returncode == 0 else (middle, high)
    outcomes = set()
    for k in range(16):
        limit_mb = high - 8 + k / 2
        done = load(limit_mb)
        err = done.stderr.decode("utf-8", "replace")
        lines = [line for line in err.splitlines() if line.strip()]
        assert done.returncode in (0, 2), (limit_mb, done.returncode, err[-2000:])
        if done.returncode == 2:
            assert len(lines) == 1 and lines[0].startswith("wwho: error: out of memory"), (limit_mb, lines)
        outcomes.add(done.returncode)
    assert 2 in outcomes, "no limit of the sweep was too small: the loading was not tried"


#: ``wwho encode`` with its batches taken as arrays (``encode_batch_to_numpy``, each text's ids
#: then as a list for the writer), on the file given last: the flat form's buffers made under a
#: memory limit. Arguments: the limit in MB, the tokenizer, the file.
ARRAYS_ENCODE = textwrap.dedent("""
    import resource, sys
    import numpy  # (first: its import under the limit is numpy's own matter, OpenBLAS's threads)
    limit = int(float(sys.argv[1]) * (1 << 20))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from wwho.cli import encode, main
    def batch_encoder(tok, **options):
        return lambda texts: [ids.tolist() for ids in tok.encode_batch_to_numpy(texts, num_threads=2).split()]
    encode.batch_encoder = batch_encoder
    sys.exit(main(["encode", "--tokenizer", sys.argv[2], "-o", sys.argv[3] + ".ids", "--force", "--file", sys.argv[3]]))
""")


def test_a_flat_batch_that_memory_cannot_hold_is_one_memory_error(tmp_path, saved_tokenizers):
    """Under a limit met by the flat form's ``bytearray``, Python must not print ``SystemError:
    deallocated bytearray object has exported buffers`` beside the MemoryError (CPython frees a
    bytearray whose bytes it could not allocate before setting its count of exports). The core makes
    the bytearray empty and resizes it. Swept in 2 MB steps from the least limit that an empty line
    needs up to one that suffices: one error line or the ids."""
    line = tmp_path / "line.txt"
    line.write_text(LONG_LINES["latin1"] + "\n", encoding="utf-8")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    tokenizer = saved_tokenizers["bytelevel"][0]

    def run(limit_mb: float, path: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", ARRAYS_ENCODE, str(limit_mb), tokenizer, str(path)],
                              capture_output=True, text=True, timeout=300)

    limit_mb = _least(lambda limit: run(limit, empty).returncode == 0, _steps(100.0, lambda limit: limit + 10))
    assert limit_mb is not None, "the command fails on an empty line at every limit"
    while (done := run(limit_mb, line)).returncode != 0:
        lines = [text for text in done.stderr.splitlines() if text.strip()]
        assert done.returncode == 2 and len(lines) == 1, (limit_mb, done.returncode, done.stderr[-2000:])
        assert lines[0].startswith("wwho: error: out of memory"), (limit_mb, lines)
        limit_mb += 2
        assert limit_mb < 4000, "no limit of the sweep sufficed"
