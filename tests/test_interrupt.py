"""Ctrl-C in the real ``wwho`` command: every verb, at start-up and mid-work, says one line
(``wwho: interrupted``), exits 130 and leaves no output file, whole or half-written, and no
temporary file behind.

Each run is a real process in a session of its own; SIGINT goes to the whole process group, as a
terminal's Ctrl-C does (so worker processes get it too). At "start-up" the process stops itself as
it is about to import wwho's compiled core, while Python is still importing wwho (:class:`Stop`);
"mid-work" is where it opens its corpus (a stop again), or while it reads its input (polled from
``/proc``), or once it has written to its output's temporary file while its standard input, a pipe,
is still open: moments the signal cannot miss, or reach after the output is complete.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import deliver_signals, wwho_command

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc to choose the moment")

QUIET_ENV = {"PYTHONUNBUFFERED": "1"}


# --- the corpus and tokenizers the verbs run on ----------------------------------------------------


def _words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    consonants = [chr(c) for c in range(0x915, 0x939)]
    signs = ["", "\u093e", "\u093f", "\u0940", "\u0941", "\u0947", "\u094b", "\u0902", "\u094d"]
    return ["".join(rng.choice(consonants) + rng.choice(signs) for _ in range(rng.randint(1, 5)))
            for _ in range(n)]


def write_corpus(path: Path, megabytes: float, *, seed: int = 1, words_per_line: int = 40) -> Path:
    """Devanagari text of random words (many distinct ones, so training has work to do)."""
    rng = random.Random(seed)
    words = _words(50_000, seed)
    lines = []
    size = 0
    while size < megabytes * 1e6:
        line = " ".join(rng.choices(words, k=words_per_line))
        lines.append(line)
        size += len(line.encode()) + 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _wwho(*args: object, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([*wwho_command(), *map(str, args)], capture_output=True, text=True, timeout=300,
                          **kwargs)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A big corpus (12 MB), smaller ones, an SGPE and a byte-level tokenizer, and encoded ids."""
    root = tmp_path_factory.mktemp("interrupt")
    big = write_corpus(root / "big.txt", 12)
    small = write_corpus(root / "small.txt", 1, seed=2)
    medium = write_corpus(root / "medium.txt", 3, seed=3)  # binary training: ~4 s, ~350 MB
    sgpe = root / "sgpe"
    _wwho("train", "--kind", "sgpe", "--script", "devanagari", "--vocab-size", "3000", "--quiet", "--no-verify",
          "-o", sgpe, small)
    bytelevel = root / "bytelevel"
    _wwho("train", "--kind", "bytelevel", "--vocab-size", "1000", "--quiet", "-o", bytelevel, small)
    ids = root / "ids.txt"
    _wwho("encode", "--tokenizer", sgpe, "--file", big, "-o", ids)
    return {"root": root, "big": big, "small": small, "medium": medium, "sgpe": sgpe, "bytelevel": bytelevel, "ids": ids}


# --- choosing the moment ---------------------------------------------------------------------------


def _maps(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""


def importing(pid: int) -> bool:
    """wwho's compiled core is loaded: Python is importing wwho (``main`` has not started)."""
    return "_core.cpython" in _maps(pid) or "_core.abi3" in _maps(pid)


def reading(path: Path):
    """The process (or one of its threads) holds ``path`` open and has read some of it."""
    target = str(path.resolve())

    def check(pid: int) -> bool:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            return False
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") != target:
                    continue
                info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
            except OSError:
                continue
            pos = int(info.split("pos:")[1].split()[0])
            if pos > 0:
                return True
        return False

    return check


def read_or_past(path: Path):
    """``reading(path)``, or, should this process have missed that window (the SGPE trainer's core
    reads the corpus in one short burst), the command has read at least as many bytes as
    ``path`` holds (``/proc/PID/io``: its imports read a few megabytes, not that many), which stays
    true through the seconds of training after the count."""
    size = path.stat().st_size
    in_it = reading(path)

    def check(pid: int) -> bool:
        if in_it(pid):
            return True
        try:
            io = Path(f"/proc/{pid}/io").read_text()
        except OSError:
            return False
        return int(io.split("rchar:")[1].split()[0]) >= size

    return check


def after(seconds: float, first=importing):
    """``seconds`` after ``first`` held (default: after start-up began)."""
    since: list[float] = []

    def check(pid: int) -> bool:
        if not since:
            if first(pid):
                since.append(time.monotonic())
            return False
        return time.monotonic() - since[0] >= seconds

    return check


STOP_SITE = Path(__file__).resolve().parent / "stop_site"


class Stop:
    """A moment the command stops itself at (``tests/stop_site/sitecustomize.py``): ``Stop("open", PATH)``,
    the first time it opens PATH; ``Stop("import", MODULE)``, when it is about to import MODULE.
    ``interrupt`` waits for the stop (it cannot be missed), sends the signal, then SIGCONT; ``pid`` is
    the command's process (and group) id once started."""

    def __init__(self, kind: str, what: object) -> None:
        self.where = f"{kind}:{os.path.abspath(what) if kind == 'open' else what}"
        self.pid: int | None = None


def starting() -> Stop:
    """The command is about to import wwho's compiled core: Python is importing wwho (``main`` has
    not started)."""
    return Stop("import", "wwho._core")


def _wait_stopped(proc: subprocess.Popen, args: list[object], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        pid, status = os.waitpid(proc.pid, os.WNOHANG | os.WUNTRACED)
        if pid and os.WIFSTOPPED(status):
            return
        if pid:  # (reaped here: Popen no longer can)
            proc.returncode = os.waitstatus_to_exitcode(status)
            pytest.fail(f"wwho {args[0]} ended (exit {proc.returncode}) before the moment to interrupt it")
        if time.monotonic() > deadline:
            pytest.fail(f"the moment to interrupt wwho {args[0]} never came")
        time.sleep(0.001)


def interrupt(args: list[object], when, *, stdin: Path | None = None, feed: bytes | None = None,
              env: dict | None = None, timeout: float = 60, command: list[str] | None = None,
              sig: int = signal.SIGINT) -> tuple[int, str, str]:
    """Run ``wwho ARGS``, send ``sig`` (SIGINT) to its process group when ``when(pid)`` holds, or
    when it stops itself where a :class:`Stop` ``when`` says; returns (exit code, stdout, stderr).
    Fails if the process ended before the moment came.

    ``feed``: bytes for the command's standard input (a pipe), which stays open until the signal
    has been sent: a command that reads it to the end cannot finish its work, and rename its
    output into place, before the signal lands. (With an input file, a loaded machine can delay
    this process past the command's last write: the signal then finds the output complete, and the
    command rightly ends with it in place.)"""
    env = {**os.environ, **QUIET_ENV, **(env or {})}
    if isinstance(when, Stop):
        env["WWHO_TEST_STOP"] = when.where
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(STOP_SITE), env.get("PYTHONPATH")) if p)
    with open(stdin or os.devnull, "rb") as inp:
        proc = subprocess.Popen([*(command or wwho_command()), *map(str, args)],
                                stdin=inp if feed is None else subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, preexec_fn=deliver_signals,
                                env=env)
        writer = None
        if feed is not None:
            writer = threading.Thread(target=_write_open, args=(proc.stdin, feed), daemon=True)
            writer.start()
        try:
            if isinstance(when, Stop):
                when.pid = proc.pid
                _wait_stopped(proc, args, timeout)
                os.killpg(proc.pid, sig)  # pending while stopped: delivered where it stopped
                os.killpg(proc.pid, signal.SIGCONT)
            else:
                _wait_for(proc, args, when, timeout)
                with contextlib.suppress(ProcessLookupError):  # (ended, and reaped by poll)
                    os.killpg(proc.pid, sig)
            if writer is not None:
                writer.join(timeout)  # (the command stopped reading: the write ends with it)
            out, err = proc.communicate(timeout=timeout)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _wait_for(proc: subprocess.Popen, args: list[object], when, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not when(proc.pid):
        if proc.poll() is not None:
            if when(proc.pid):  # (it held after all: this process was not scheduled in between)
                return
            out, err = proc.communicate()
            pytest.fail(f"wwho {args[0]} ended (exit {proc.returncode}) before the moment to interrupt it; "
                        f"stderr: {err.decode()[-1000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"the moment to interrupt wwho {args[0]} never came")
        time.sleep(0.001)


def _write_open(pipe, data: bytes) -> None:
    """``data`` into ``pipe``, which is left open (the caller's ``communicate`` closes it). Through
    the unbuffered file: a write blocked on a command that stopped reading then holds no lock that
    ``communicate``'s flush would wait on for ever."""
    view = memoryview(data)
    try:
        while view:
            view = view[pipe.raw.write(view):]
    except (OSError, ValueError):  # the command ended, or the pipe was closed, first
        pass


def _head(path: Path, size: int = 1 << 20) -> bytes:
    """The first whole lines of ``path``, about ``size`` bytes: input for a command that keeps
    reading (see ``interrupt``'s ``feed``)."""
    with open(path, "rb") as f:
        head = f.read(size)
    return head[: head.rindex(b"\n") + 1]


def written_temp_in(directory: Path):
    """A ``.wwho-tmp-`` file in ``directory`` holds some bytes: an output is being written."""
    def check(pid: int) -> bool:
        try:
            return any(entry.name.startswith(".wwho-tmp-") and entry.stat().st_size > 0
                       for entry in os.scandir(directory))
        except OSError:
            return False

    return check


def assert_interrupted(rc: int, err: str, *, alone: bool = True) -> None:
    """Exit 130 and ``wwho: interrupted`` as the last line of standard error (``alone``: the only
    line), once, without a traceback."""
    if alone:
        assert (rc, err) == (130, "wwho: interrupted\n"), (rc, err[-3000:])
    assert rc == 130, (rc, err[-3000:])
    assert err.endswith("wwho: interrupted\n") and err.count("wwho: interrupted") == 1, err[-3000:]
    assert err == "wwho: interrupted\n" or err.endswith("\nwwho: interrupted\n"), err[-3000:]
    assert "Traceback" not in err and "error" not in err, err[-3000:]


def no_litter(directory: Path) -> None:
    """Nothing a wwho write leaves while it runs: no ``.wwho-tmp-`` file or directory."""
    left = [name for name in os.listdir(directory) if name.startswith(".wwho-tmp-")]
    assert not left, left


# --- every verb at start-up ----------------------------------------------------------------------


def _verbs(work: dict, out: Path) -> dict[str, list[object]]:
    return {
        "train-sgpe": ["train", "--kind", "sgpe", "--script", "devanagari", "--quiet", "-o", out, work["big"]],
        "train-bytelevel": ["train", "--kind", "bytelevel", "--quiet", "-o", out, work["big"]],
        "train-binary": ["train", "--kind", "binary", "--quiet", "-o", out / "tokenizer.json", work["small"]],
        "encode": ["encode", "--tokenizer", work["sgpe"], "--file", work["big"], "-o", out / "ids.txt"],
        "decode": ["decode", "--tokenizer", work["sgpe"], "-", "-o", out / "text.txt"],
        "eval": ["eval", "--quiet", "--corpus", work["big"], "--tokenizer", work["sgpe"]],
        "export": ["export", "hf", work["sgpe"], "-o", out, "--quiet", "--verify", work["big"]],
        "extend": ["extend", "--base", work["bytelevel"], "--corpus", work["big"], "--add", "500", "--script",
                   "devanagari", "--quiet", "-o", out],
        "syllabify": ["syllabify", "--script", "devanagari"],
        "inspect": ["inspect", work["sgpe"]],
        "schema": ["schema", "check", "devanagari"],
    }


VERBS = ["train-sgpe", "train-bytelevel", "train-binary", "encode", "decode", "eval", "export", "extend",
         "syllabify", "inspect", "schema"]


@pytest.mark.parametrize("verb", VERBS)
def test_ctrl_c_at_start_up(work, tmp_path, verb):
    """Not a KeyboardInterrupt traceback from the imports (killed by SIGINT)."""
    out = tmp_path / "out"
    rc, _, err = interrupt(_verbs(work, out)[verb], starting(), stdin=work["big"] if verb == "syllabify" else None)
    assert_interrupted(rc, err)
    assert not out.exists()


def test_ctrl_c_at_start_up_of_python_m_wwho(work):
    """``python -m wwho`` imports the package before ``wwho.__main__``: guarded the same way."""
    rc, _, err = interrupt(["schema", "check", "devanagari"], starting(), command=[sys.executable, "-m", "wwho"])
    assert_interrupted(rc, err)


EARLY_IMPORT_PROGRAM = """
import sys
sys.argv[0] = "wwho"  # as the console script runs
class Interrupting:  # Ctrl-C exactly while wwho's first module imports what it needs
    def find_spec(self, name, path=None, target=None):
        if name == "threading":
            sys.meta_path.remove(self)
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, Interrupting())
import wwho
"""


def test_ctrl_c_while_the_first_module_imports_its_own():
    """The milliseconds before the start-up guard is installed (its module's imports of threading,
    contextlib, signal): no KeyboardInterrupt traceback, nor a death by SIGINT."""
    proc = subprocess.run([sys.executable, "-c", EARLY_IMPORT_PROGRAM], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "wwho: interrupted\n")


SITECUSTOMIZE_EXEC_INTERRUPT = """
import sys
class Interrupting:  # Ctrl-C inside code run by exec of a string, once main handles interrupts
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "wwho.loading":
            sys.meta_path.remove(Interrupting)
            import wwho.progress  # (what reporting imports, made first: its own exec calls come before)
            exec("import os, signal\\nos.kill(os.getpid(), signal.SIGINT)\\nfor _ in range(10**8): pass")
        return None
sys.meta_path.insert(0, Interrupting)
"""


def test_ctrl_c_inside_exec_of_a_string_under_python_m_wwho_exits_130(tmp_path):
    """CPython marks a KeyboardInterrupt raised in exec'd code as unhandled although it was caught,
    and ``python -m`` then kills the process by SIGINT after the line (for some Ctrl-Cs during
    start-up)."""
    from wwho.bytelevel import ByteBPE

    ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2").save(tmp_path / "bytes")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE_EXEC_INTERRUPT)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    proc = subprocess.run([sys.executable, "-m", "wwho", "inspect", str(tmp_path / "bytes")], env=env,
                          capture_output=True, text=True, timeout=60, preexec_fn=deliver_signals)
    assert (proc.returncode, proc.stderr) == (130, "wwho: interrupted\n")


SITECUSTOMIZE_SET_NAME_INTERRUPT = """
import os, signal, sys
def profile(frame, event, arg):  # Ctrl-C inside the first cached_property.__set_name__ after the guard
    if (event == "call" and frame.f_code.co_name == "__set_name__" and frame.f_code.co_filename.endswith(
            "functools.py") and "wwho.cli.interrupts" in sys.modules):
        sys.setprofile(None)
        open(os.environ["MARK"], "w").close()
        os.kill(os.getpid(), signal.SIGINT)  # raised at the next bytecode, inside __set_name__
sys.setprofile(profile)
"""


@pytest.mark.parametrize("command", [["wwho"], [sys.executable, "-m", "wwho"]])
def test_ctrl_c_inside_a_classs_set_name_at_start_up_exits_130(tmp_path, command):
    """Python wraps a KeyboardInterrupt that lands in ``__set_name__`` (a class body of a module
    imported at start-up, ``ipaddress`` through ``pathlib``) in a ``RuntimeError``: that was a
    26-line traceback and exit 1."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE_SET_NAME_INTERRUPT)
    mark = tmp_path / "sent"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "MARK": str(mark)}
    argv = [*wwho_command(), "syllabify", "ශ්‍රී"] if command == ["wwho"] else [*command, "syllabify", "ශ්‍රී"]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, preexec_fn=deliver_signals)
    assert mark.exists(), "no __set_name__ ran after the guard: the test no longer interrupts where it means to"
    assert (proc.returncode, proc.stderr) == (130, "wwho: interrupted\n")


# --- every verb that can run long, mid-work --------------------------------------------------------


def test_train_sgpe_while_the_core_counts(work, tmp_path):
    """Not ``wwho: error: KeyboardInterrupt:`` and exit 2 (the core must not turn the interrupt
    into an error message)."""
    out = tmp_path / "out"
    args = ["train", "--kind", "sgpe", "--script", "devanagari", "--quiet", "--workers", "1", "-o", out, work["big"]]
    rc, _, err = interrupt(args, read_or_past(work["big"]))
    assert_interrupted(rc, err)
    assert not out.exists()
    no_litter(tmp_path)


def test_train_sgpe_with_progress_bars(work, tmp_path):
    """With progress bars on, the message is still one line of its own, the last one."""
    out = tmp_path / "out"
    args = ["train", "--kind", "sgpe", "--script", "devanagari", "--workers", "1", "-o", out, work["big"]]
    rc, _, err = interrupt(args, read_or_past(work["big"]))
    assert_interrupted(rc, err, alone=False)
    assert not out.exists()


@pytest.mark.parametrize("step", [1, 3, 5, 6])
def test_train_sgpe_interrupted_while_saving(work, tmp_path, step):
    """A Ctrl-C inside the directory save (after its N-th step) leaves no vocab.json, no staging
    directory: the save is all or nothing."""
    out = tmp_path / "out"
    args = ["train", "--kind", "sgpe", "--script", "devanagari", "--vocab-size", "2000", "--quiet", "--no-verify",
            "-o", out, work["small"]]
    proc = subprocess.run([*wwho_command(), *map(str, args)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "WWHO_INTERRUPT_AFTER": str(step)}, preexec_fn=deliver_signals)
    assert_interrupted(proc.returncode, proc.stderr)
    assert not (out / "vocab.json").exists() and not (out / "tokenizer.json").exists()
    no_litter(tmp_path)


def test_train_bytelevel_mid_corpus(work, tmp_path):
    out = tmp_path / "out"
    args = ["train", "--kind", "bytelevel", "--quiet", "-o", out, work["big"]]
    rc, _, err = interrupt(args, Stop("open", work["big"]))
    assert_interrupted(rc, err)
    assert not out.exists()


def test_extend_with_worker_processes(work, tmp_path):
    """``extend`` counts in a pool of forked worker processes; they get the Ctrl-C too (a terminal
    sends it to the whole group). They ignore it, printing no ``Process ForkPoolWorker-2:`` and
    traceback, and the main process stops them."""
    out = tmp_path / "out"
    args = ["extend", "--base", work["bytelevel"], "--corpus", work["big"], "--add", "500", "--script", "devanagari",
            "--workers", "2", "--quiet", "-o", out]
    rc, _, err = interrupt(args, after(0.4, reading(work["big"])))
    assert_interrupted(rc, err)
    assert not out.exists()
    no_litter(tmp_path)


def test_train_binary_while_hf_trains(work, tmp_path):
    """(The binary trainer says what it read even with --quiet.)"""
    out = tmp_path / "tokenizer.json"
    args = ["train", "--kind", "binary", "--quiet", "--vocab-size", "2000", "-o", out, work["medium"]]
    rc, _, err = interrupt(args, after(1.0))
    assert_interrupted(rc, err, alone=False)
    assert not out.exists()
    no_litter(tmp_path)


@pytest.mark.parametrize("verb", ["encode", "decode"])
def test_encode_and_decode_while_writing_the_output(work, tmp_path, verb):
    """Interrupted while the output's temporary file is being written: no output, no temporary file."""
    out = tmp_path / "out.txt"
    if verb == "encode":
        args = ["encode", "--tokenizer", work["sgpe"], "-", "--block-mb", "0.05", "-o", out]
    else:
        args = ["decode", "--tokenizer", work["sgpe"], "-", "-o", out]
    rc, _, err = interrupt(args, written_temp_in(tmp_path), feed=_head(work["ids" if verb == "decode" else "big"]))
    assert_interrupted(rc, err)
    assert not out.exists()
    no_litter(tmp_path)


ENDINGS = [(signal.SIGTERM, 143, "wwho: terminated\n"), (signal.SIGHUP, 129, "wwho: hung up\n")]


def test_signals_the_command_started_ignoring_stay_ignored(work, tmp_path):
    """``wwho ... &`` in a script starts with SIGINT ignored, ``nohup wwho ...`` with SIGHUP: Python
    keeps such a signal ignored, and the command did only until its verb began, then ended on it.
    Now the verb runs to the end, its output whole."""
    want = tmp_path / "want.txt"
    _wwho("encode", "--tokenizer", work["sgpe"], "--file", work["big"], "-o", want)
    out = tmp_path / "out" / "ids.txt"
    out.parent.mkdir()

    def ignoring() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    text = work["big"].read_bytes()
    head = _head(work["big"])
    # The input through a pipe, its rest held back until the signals are sent: the encode cannot
    # have ended before them, however this process is scheduled.
    proc = subprocess.Popen([*wwho_command(), "encode", "--tokenizer", work["sgpe"], "-", "--block-mb", "0.05",
                             "-o", out], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=ignoring, env={**os.environ, **QUIET_ENV})
    writer = threading.Thread(target=_write_open, args=(proc.stdin, head), daemon=True)
    writer.start()
    try:
        writing = written_temp_in(out.parent)
        deadline = time.monotonic() + 60
        while not writing(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        assert proc.poll() is None, "the encode ended before the moment to signal it"
        for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGINT):
            os.killpg(proc.pid, sig)
            time.sleep(0.05)
        writer.join(60)
        _, err = proc.communicate(text[len(head):], timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert (proc.returncode, err) == (0, b""), err[-2000:]
    assert out.read_bytes() == want.read_bytes()


@pytest.mark.parametrize("sig,code,line", ENDINGS, ids=["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("verb", ["encode", "train-bytelevel", "extend"])
def test_kill_and_a_closed_terminal_end_a_verb_as_ctrl_c_does(work, tmp_path, verb, sig, code, line):
    """SIGTERM (``kill``, ``timeout``, a job scheduler) and SIGHUP do not kill the process where it
    stands, with no line and the output's temporary file left behind: the clean-up runs and one
    line says why. Forked workers (``extend``'s pool) still end at once on SIGTERM, which their
    pool uses to stop them: none is left when the command has ended."""
    out = tmp_path / "out"
    verbs = {"encode": (["encode", "--tokenizer", work["sgpe"], "-", "--block-mb", "0.05", "-o", out],
                        written_temp_in(tmp_path)),
             "train-bytelevel": (["train", "--kind", "bytelevel", "--quiet", "-o", out, work["big"]],
                                 Stop("open", work["big"])),
             "extend": (["extend", "--base", work["bytelevel"], "--corpus", work["big"], "--add", "500", "--script",
                         "devanagari", "--workers", "2", "--quiet", "-o", out], after(0.4, reading(work["big"])))}
    args, when = verbs[verb]
    pgid: list[int] = []

    def moment(pid: int) -> bool:
        pgid[:] = [pid]
        return when(pid)

    rc, _, err = interrupt(args, when if isinstance(when, Stop) else moment, sig=sig,
                           feed=_head(work["big"]) if verb == "encode" else None)
    if isinstance(when, Stop):
        pgid[:] = [when.pid]
    assert (rc, err) == (code, line), (rc, err[-3000:])
    assert not out.exists()
    no_litter(tmp_path)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # no worker outlives the command
        try:
            os.killpg(pgid[0], 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("a process of the command's group is still running")


def test_eval_mid_corpus(work):
    rc, _, err = interrupt(["eval", "--quiet", "--corpus", work["big"], "--tokenizer", work["sgpe"]],
                           Stop("open", work["big"]))
    assert_interrupted(rc, err)


def test_export_while_verifying_writes_nothing(work, tmp_path):
    """--verify reads the corpus before the files are saved: interrupted then, nothing is written (the
    export it was checking is not left behind unchecked)."""
    out = tmp_path / "out"
    rc, _, err = interrupt(["export", "hf", work["sgpe"], "-o", out, "--quiet", "--verify", work["big"]],
                           reading(work["big"]))
    assert_interrupted(rc, err)
    assert not out.exists() or not any(out.iterdir())
    no_litter(tmp_path)


@pytest.mark.parametrize("step", [2, 4])
def test_export_interrupted_while_saving(work, tmp_path, step):
    out = tmp_path / "out"
    proc = subprocess.run([*wwho_command(), "export", "hf", str(work["sgpe"]), "-o", str(out)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "WWHO_INTERRUPT_AFTER": str(step)}, preexec_fn=deliver_signals)
    assert_interrupted(proc.returncode, proc.stderr)
    assert not out.exists()
    no_litter(tmp_path)


def test_extend_mid_corpus(work, tmp_path):
    out = tmp_path / "out"
    args = ["extend", "--base", work["bytelevel"], "--corpus", work["big"], "--add", "500", "--script", "devanagari",
            "--quiet", "-o", out]
    rc, _, err = interrupt(args, reading(work["big"]))
    assert_interrupted(rc, err)
    assert not out.exists()
    no_litter(tmp_path)


def test_syllabify_mid_input(work):
    rc, out, err = interrupt(["syllabify", "--script", "devanagari"], after(0.3), stdin=work["big"])
    assert_interrupted(rc, err)


def test_schema_check_mid_check(work):
    rc, out, err = interrupt(["schema", "check", "devanagari"], after(0.5))
    assert_interrupted(rc, err)


def test_a_ctrl_c_as_the_command_exits_never_kills_it_by_signal(work, tmp_path):
    """Once the output is written, a Ctrl-C while Python shuts down ends the command with 130 and
    the line (exit handlers still running) or with its own exit code (later: SIGINT is ignored
    there). Python puts the default handler back soon after the output: the process must not then
    die of the signal, without a word."""
    for run, delay in enumerate((0.002, 0.005, 0.01, 0.02, 0.04) * 2):
        out = tmp_path / f"out-{run}"
        proc = subprocess.Popen([*wwho_command(), "train", "--kind", "bytelevel", "--vocab-size", "600", "-o",
                                 str(out), str(work["small"])], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, **QUIET_ENV})
        sent = False
        for line in proc.stderr:
            if line.startswith("wrote"):
                time.sleep(delay)
                proc.send_signal(signal.SIGINT)
                sent = True
                break
        rest = proc.stderr.read()
        assert sent, f"no 'wrote' line to time the Ctrl-C by: {rest!r}"  # else nothing was tested
        rc = proc.wait(timeout=60)
        assert rc == 0 or (rc == 130 and rest.strip().endswith("wwho: interrupted")), (delay, rc, rest)
        assert (out / "bytelevel.json").is_file()  # the output was complete either way


def test_a_second_ctrl_c_during_cleanup_changes_nothing(work, tmp_path):
    """Ctrl-C pressed twice in quick succession: still one line and exit 130, no output."""
    out = tmp_path / "out.txt"
    args = ["encode", "--tokenizer", work["sgpe"], "-", "--block-mb", "0.05", "-o", out]
    seen: list[int] = []

    def twice(pid: int) -> bool:
        if written_temp_in(tmp_path)(pid):
            if not seen:
                os.killpg(pid, signal.SIGINT)
                seen.append(pid)
                return False
            return True
        return bool(seen)

    rc, _, err = interrupt(args, twice, feed=_head(work["big"]))
    assert_interrupted(rc, err)
    assert not out.exists()
    no_litter(tmp_path)


def test_main_in_a_program_gives_its_handler_back():
    """``wwho.cli.main`` called in a program of its own restores the program's SIGINT handler."""
    from wwho.cli import main

    before = signal.getsignal(signal.SIGINT)
    assert main(["syllabify", "--script", "sinhala", "ක"]) == 0
    assert signal.getsignal(signal.SIGINT) is before


FINALIZER_PROGRAM = """
import os, signal, sys
from wwho.cli import interrupts

class Dropped:
    def __del__(self):  # the handler runs here: Python prints and drops what a finalizer raises
        os.kill(os.getpid(), signal.SIGINT)

with interrupts.handling() as state:
    try:
        for _ in range(int(sys.argv[1])):
            Dropped()
        for _ in range(50):
            sum(range(100_000))
        print("finished", state.interrupted)
    except KeyboardInterrupt:
        print("interrupted")
"""


@pytest.mark.parametrize("finalizers", [1, 3])
def test_an_interrupt_a_finalizer_drops_still_stops_the_work(finalizers):
    """A SIGINT whose ``KeyboardInterrupt`` is raised in a finalizer (``__del__``, a weakref callback
    of a worker pool) is raised again in the main flow, without a traceback. Raised from inside the
    hook itself, Python would drop it a second time and the verb run on to exit 0."""
    proc = subprocess.run([sys.executable, "-c", FINALIZER_PROGRAM, str(finalizers)], capture_output=True,
                          text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "interrupted\n", "")


STARTUP_FINALIZER_PROGRAM = """
import os, signal, sys
sys.argv[0] = "wwho"  # what the console script's process looks like to the start-up guard
from wwho.cli import interrupts  # installs the guard, as the command's first import does

class Dropped:
    def __del__(self):  # Python's own handler raises here, and Python prints and drops what it raises
        os.kill(os.getpid(), signal.SIGINT)

class Failing:
    def __del__(self):
        raise ValueError("not an interrupt")

assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
Failing() if sys.argv[1] == "other" else Dropped()
for _ in range(50):
    sum(range(100_000))
print("went on")
"""


def test_an_interrupt_a_finalizer_drops_at_start_up_still_stops_the_command():
    """Before ``main`` runs, a Ctrl-C whose ``KeyboardInterrupt`` Python raises in a finalizer (such as
    a weakref callback of importlib's module locks, which ``test_ctrl_c_at_start_up`` can hit) is printed
    by Python as "Exception ignored" and dropped: the verb would run on to exit 0. It ends the command
    with the one line and 130 instead."""
    proc = subprocess.run([sys.executable, "-c", STARTUP_FINALIZER_PROGRAM, "interrupt"], capture_output=True,
                          text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "wwho: interrupted\n")


def test_an_ordinary_exception_in_a_finalizer_at_start_up_is_reported_as_before():
    proc = subprocess.run([sys.executable, "-c", STARTUP_FINALIZER_PROGRAM, "other"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "went on\n"
    assert "Exception ignored" in proc.stderr and "ValueError: not an interrupt" in proc.stderr


# --- the library: an exception raised while the core counts comes back as itself ---------------------


@pytest.mark.parametrize("raised", [KeyboardInterrupt, ValueError])
def test_the_core_counter_raises_a_callback_exception_as_itself(tmp_path, raised):
    """A Ctrl-C (or any exception) raised in the progress callback of the core's file counter reaches
    the caller as that exception, not as a ``WwhoError`` carrying its text (training called from a
    program, where no CLI turns it into ``wwho: interrupted``)."""
    from wwho import _core

    corpus = write_corpus(tmp_path / "c.txt", 0.2)

    def progress(done: int) -> None:
        raise raised("from the callback")

    with pytest.raises(raised, match="from the callback"):
        _core.PieceCounter().count_files([corpus], progress=progress, block_bytes=1 << 14)


@pytest.mark.parametrize("sig,code,line", ENDINGS, ids=["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("moment", ["imports", "exit"])
def test_kill_before_and_after_the_verb_is_one_line_too(tmp_path, sig, code, line, moment):
    """SIGTERM or SIGHUP during the imports (before ``main`` installs its handler) or while the
    command exits (after ``main`` puts the default back) must not kill it without a word: exit -15
    or -1 for a run whose output was complete. The signal comes from the process itself at the
    moment: a script named ``wwho`` (so that it is the command) sends it after importing the CLI, or
    from an exit handler that runs before wwho's own last one."""
    script = tmp_path / "wwho"
    body = {"imports": "import wwho.cli\nos.kill(os.getpid(), SIG)\ntime.sleep(30)\n",
            "exit": ("from wwho.cli import main\natexit.register(os.kill, os.getpid(), SIG)\n"
                     "raise SystemExit(main(['--version']))\n")}[moment]
    script.write_text(f"import atexit, os, time\nSIG = {int(sig)}\n" + body, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          preexec_fn=deliver_signals)
    assert (done.returncode, done.stderr) == (code, line), (done.returncode, done.stderr[-2000:])


EARLIER_EXIT_HANDLER = """
import atexit, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write("ran"))  # as a coverage tool started before wwho
sys.argv = ["wwho", *sys.argv[2:]]
from wwho.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("args, code", [(["schema", "check", "sinhala"], 0), (["schema", "check", "klingon"], 2)])
def test_an_exit_handler_registered_before_wwho_still_runs(tmp_path, args, code):
    """The command's last exit handler ends the process with its code, without Python's teardown
    (where a Ctrl-C is ignored, for long after a large vocabulary); a handler that a tool registered
    before wwho was imported would run after it, so there the process ends as usual."""
    marker = tmp_path / "ran"
    proc = subprocess.run([sys.executable, "-c", EARLIER_EXIT_HANDLER, str(marker), *args], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == code, proc.stderr[-2000:]
    assert marker.read_text() == "ran"


_STARTUP_ALONE = (
    "import importlib.util, os, signal, sys, time\n"
    "sys.argv[0] = 'wwho'\n"  # the command's own name: the guard is for the command only
    "spec = importlib.util.spec_from_file_location('startup_alone', {path!r})\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(module)\n"
    "os.kill(os.getpid(), {signum})\n"
    "time.sleep(0.5)\n"
)


@pytest.mark.parametrize("sig,code,line", ENDINGS, ids=["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("ignored", [False, True])
def test_a_signal_before_the_full_guard_is_its_line(sig, code, line, ignored):
    """SIGTERM or SIGHUP in the milliseconds after wwho's first module ran and before
    ``cli.interrupts`` guards the command (its imports take tens of milliseconds): the signal's line
    and exit code, not a silent death by the signal; ignored at the start, it stays ignored. Only
    ``wwho/startup.py`` is run here, so the full guard cannot be what answers."""
    import wwho.startup

    code_text = _STARTUP_ALONE.format(path=wwho.startup.__file__, signum=int(sig))

    def start_ignoring():
        signal.signal(sig, signal.SIG_IGN)

    proc = subprocess.run([sys.executable, "-c", code_text], capture_output=True, text=True, timeout=60,
                          preexec_fn=start_ignoring if ignored else None)
    if ignored:
        assert (proc.returncode, proc.stderr) == (0, "")
    else:
        assert (proc.returncode, proc.stderr) == (code, line)
