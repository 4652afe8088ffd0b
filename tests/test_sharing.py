"""Tokenizers shared by threads and across ``fork``: the rules of docs/reliability.md, each tried for real.

Each case runs in a child interpreter with a time limit, because what it guards against is a crash
(SIGSEGV) or a hang, which would take the test run down with it:

- a batch's result list is never visible half-built: a thread walking ``gc.get_objects()`` while
  ``encode_batch`` runs (memory profilers and debuggers do) never meets an empty slot;
- ``os.fork()`` while other threads encode gives a child that encodes (single texts and batches)
  and exits: no lock, pool or cache of the core is inherited held;
- ``multiprocessing`` workers made by the fork start method after the tokenizer ran on threads.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import O200K_FILE

SAMPLE = "src/wwho/data/sinhala-wikipedia-sample.txt"


@pytest.fixture(scope="module")
def sgpe_dir(tmp_path_factory):
    """A small SGPE tokenizer (the bundled sample, vocabulary 1,000), saved for child processes."""
    from wwho.sgpe import SGPETokenizer, train_sgpe

    directory = tmp_path_factory.mktemp("sharing") / "sgpe"
    SGPETokenizer(train_sgpe(SAMPLE, vocab_size=1000, progress=False, workers=1)).save(directory)
    return directory


@pytest.fixture(scope="module")
def binary_file(tmp_path_factory):
    """A small binary BPE ``tokenizer.json`` (the bundled sample's bytes, vocabulary 600)."""
    from wwho.binary import BinaryTokenizer

    path = tmp_path_factory.mktemp("sharing-binary") / "tokenizer.json"
    BinaryTokenizer.train([SAMPLE], vocab_size=600, progress=False).save(path)
    return path


def loader(kind: str, sgpe_dir, binary_file=None) -> str:
    """Python source making ``tok`` of this kind in a child process (a binary tokenizer encodes
    the texts' UTF-8 bytes: see :func:`texts_of`)."""
    if kind == "binary":
        return f"from wwho.binary import BinaryTokenizer\ntok = BinaryTokenizer.load({str(binary_file)!r})\n"
    if kind in ("bytelevel", "meta") and not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent: the shared o200k_base ranks file is needed")
    if kind == "bytelevel":
        return f"from wwho import ByteBPE\ntok = ByteBPE.from_tiktoken('o200k_base', tiktoken_file={str(O200K_FILE)!r})\n"
    if kind == "sgpe":
        return f"from wwho import SGPETokenizer\ntok = SGPETokenizer.load({str(sgpe_dir)!r})\n"
    return (f"from wwho import MetaTokenizer, SGPETokenizer\n"
            f"tok = MetaTokenizer(SGPETokenizer.load({str(sgpe_dir)!r}), 'o200k_base', "
            f"tiktoken_file={str(O200K_FILE)!r})\n")


def run_child(source: str, timeout: float) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=timeout,
                              cwd=os.getcwd())
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the child hung for {timeout} s; its output: {exc.stdout!r} {exc.stderr!r}")


# Lines of words never seen before, 6 to 12 letters (the shared piece cache holds pieces of 6 bytes
# and more, and each new one takes a lock twice), in two scripts. A word is 3 to 6 random bytes, each
# read as a letter by str.translate: a call of the random module per letter made the texts take
# longer than the encoding they are for.
TEXTS = """
import random
_r = random.Random(5)
def _letters(alphabet, sign=""):
    return {b: alphabet[b % len(alphabet)] + sign for b in range(256)}
_latin, _sinhala = _letters("abcdefghijklmnopqrstuvwxyz"), _letters("කගචජටඩණතදනපබමයරලවසහළ", "ා")
def _line():
    sizes, stream = _r.randbytes(12), _r.randbytes(72).decode("latin-1")
    words = (stream[6 * k:6 * k + 3 + sizes[k] % 4] for k in range(12))
    return " ".join(word.translate(_latin if k % 3 else _sinhala) for k, word in enumerate(words))
texts = [_line() for i in range(N)]
"""


def texts_of(kind: str) -> str:
    """:data:`TEXTS`, as bytes for a binary tokenizer."""
    return TEXTS + ("texts = [t.encode('utf-8') for t in texts]\n" if kind == "binary" else "")


@pytest.mark.parametrize("kind", ["bytelevel", "sgpe", "meta"])
def test_a_gc_walker_never_sees_a_half_built_batch(kind, sgpe_dir):
    source = loader(kind, sgpe_dir) + textwrap.dedent("""
        import gc, threading
        N = 60_000
    """) + TEXTS + textwrap.dedent("""
        walks = 0
        def walker():
            global walks
            while True:
                for o in gc.get_objects():
                    if type(o) is list and len(o) == N and o is not texts:
                        sum(len(x) for x in o)
                walks += 1
        threading.Thread(target=walker, daemon=True).start()
        for _ in range(3):
            out = tok.encode_batch(texts, num_threads=2)
            assert len(out) == N and all(out)
        print("walks", walks)
    """)
    done = run_child(source, timeout=240)
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    assert int(done.stdout.split()[-1]) > 0  # the walker did walk while the batches ran


@pytest.mark.parametrize("kind", ["bytelevel", "sgpe", "meta", "binary"])
def test_fork_while_other_threads_encode(kind, sgpe_dir, binary_file):
    # A thread loops batches while the main thread forks every 30 ms; each child encodes on its
    # own, runs a two-thread batch of a quarter of the texts (enough to take every lock and start
    # the pool), and exits. A child that does not finish in 20 s counts as hung. (The binary kind:
    # children hung on the HF tokenizer's lock that its encode took to set a flag, held by the
    # parent's batch at the fork.)
    source = loader(kind, sgpe_dir, binary_file) + textwrap.dedent("""
        import os, threading, time
        N = 4_000
    """) + texts_of(kind) + textwrap.dedent("""
        stop = False
        def batches():
            while not stop:
                tok.encode_batch(texts, num_threads=2)
        workers = [threading.Thread(target=batches)]
        for w in workers:
            w.start()
        time.sleep(0.3)
        hung = forks = 0
        for _ in range(FORKS):
            time.sleep(0.03)
            pid = os.fork()
            if pid == 0:
                ok = all(tok.encode(t) for t in texts[:200])
                ok = ok and len(tok.encode_batch(texts[:1000], num_threads=2)) == 1000
                os._exit(0 if ok else 3)
            forks += 1
            deadline = time.monotonic() + 20
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    assert os.waitstatus_to_exitcode(status) == 0, status
                    break
                if time.monotonic() > deadline:
                    hung += 1
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.01)
        stop = True
        for w in workers:
            w.join()
        print("forks", forks, "hung", hung)
    """).replace("FORKS", "30")
    done = run_child(source, timeout=400)
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    assert done.stdout.split()[-3:] == ["30", "hung", "0"], done.stdout


@pytest.mark.parametrize("kind", ["bytelevel", "sgpe", "binary"])
def test_multiprocessing_fork_workers_after_threads(kind, sgpe_dir, binary_file):
    source = loader(kind, sgpe_dir, binary_file) + textwrap.dedent("""
        import multiprocessing, threading
        N = 20_000
    """) + texts_of(kind) + textwrap.dedent("""
        stop = False
        def batches():
            while not stop:
                tok.encode_batch(texts, num_threads=2)
        worker = threading.Thread(target=batches)
        worker.start()
        want = tok.encode_batch(texts[:400], num_threads=1)
        def job(i):
            return tok.encode_batch(texts[i:i + 40], num_threads=2)
        with multiprocessing.get_context("fork").Pool(2) as pool:
            got = [ids for part in pool.map(job, range(0, 400, 40)) for ids in part]
        stop = True
        worker.join()
        assert got == want
        print("ok")
    """)
    done = run_child(source, timeout=240)
    assert done.returncode == 0 and done.stdout.strip() == "ok", (done.returncode, done.stderr[-3000:])


def test_training_again_in_a_forked_child():
    # Training sorts its word types on all cores; a child made by fork after the parent trained has
    # none of the parent's pool threads, and waited on them for ever.
    source = textwrap.dedent(f"""
        import os, multiprocessing
        from wwho import SGPETokenizer
        lines = open({SAMPLE!r}, encoding="utf-8").read().splitlines()[:1500]
        def train(_=None):
            return SGPETokenizer.train_from_iterator(lines, vocab_size=800, script="sinhala", progress=False).vocab
        want = train()
        pid = os.fork()
        if pid == 0:
            os._exit(0 if train() == want else 3)
        _, status = os.waitpid(pid, 0)
        with multiprocessing.get_context("fork").Pool(2) as pool:
            same = all(vocab == want for vocab in pool.map(train, range(2)))
        print(os.waitstatus_to_exitcode(status), same)
    """)
    done = run_child(source, timeout=90)
    assert done.returncode == 0 and done.stdout.split() == ["0", "True"], (done.returncode, done.stderr[-3000:])


def test_fork_while_another_thread_loads_a_tiktoken_encoding():
    """tiktoken's registry holds its lock while its first ``get_encoding`` builds the encoding; a
    fork meanwhile copies it held, and the child's ``get_encoding`` would wait for ever. The loader
    gives the child fresh locks, its own and the registry's."""
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent: the shared o200k_base ranks file is needed")
    source = textwrap.dedent(f"""
        import os, signal, threading, time
        from wwho.bytelevel.tiktoken_loader import get_encoding
        loading = threading.Thread(target=get_encoding, args=("o200k_base",),
                                   kwargs={{"tiktoken_file": {str(O200K_FILE)!r}}})
        loading.start()
        time.sleep(0.15)
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)
            ok = get_encoding("o200k_base", tiktoken_file={str(O200K_FILE)!r}).encode("hello world") == [24912, 2375]
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        loading.join()
        print(os.waitstatus_to_exitcode(status))
    """)
    done = run_child(source, timeout=90)
    assert done.returncode == 0 and done.stdout.split() == ["0"], (done.stdout, done.stderr[-3000:])


#: A child interpreter's numpy made slow to import (its module's code runs after a sleep, its import
#: lock held meanwhile), so that another thread can fork inside that import every time.
SLOW_NUMPY = """
import importlib.abc, importlib.machinery, sys, time
class _Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "numpy":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            time.sleep(0.5)
            run(module)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, _Slow())
"""


@pytest.mark.parametrize("call", ["encode_to_numpy", "encode_batch_to_numpy"])
@pytest.mark.parametrize("kind", ["bytelevel", "sgpe"])
def test_fork_while_another_thread_imports_numpy_for_its_first_array(kind, call, sgpe_dir):
    """The array methods import numpy on their first call. A fork while another thread was in that
    import would copy numpy's import lock held into the child, whose own first array would wait for
    ever. A fork waits for the import (wwho.imports)."""
    arg = "'ශ්‍රී ලංකාව hello'" if call == "encode_to_numpy" else "['ශ්‍රී ලංකාව hello']"
    source = SLOW_NUMPY + loader(kind, sgpe_dir) + textwrap.dedent(f"""
        import os, signal, threading, time
        assert "numpy" not in sys.modules
        first = threading.Thread(target=lambda: tok.{call}({arg}))
        first.start()
        time.sleep(0.2)  # inside numpy's import, on the other thread
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)
            got = tok.{call}({arg})
            os._exit(0 if len(got) else 3)
        _, status = os.waitpid(pid, 0)
        first.join()
        print(os.waitstatus_to_exitcode(status))
    """)
    done = run_child(source, timeout=90)
    assert done.returncode == 0 and done.stdout.split() == ["0"], (done.stdout, done.stderr[-3000:])


def test_fork_while_another_thread_trains_a_binary_tokenizer_on_threads():
    """Training a binary tokenizer on 2 threads must not set TOKENIZERS_PARALLELISM=true for the run,
    or a child forked meanwhile keeps HF's thread pool (whose threads it does not have), and its own
    training waits for ever."""
    source = textwrap.dedent(f"""
        import os, signal, threading, time
        from wwho.binary import BinaryTokenizer
        def train():
            BinaryTokenizer.train([{SAMPLE!r}], vocab_size=2000, threads=2, progress=False)
        parent = threading.Thread(target=train)
        parent.start()
        time.sleep(0.3)
        pid = os.fork()
        if pid == 0:
            signal.alarm(40)
            tok = BinaryTokenizer.train([{SAMPLE!r}], vocab_size=400, progress=False)
            os._exit(0 if tok.vocab_size >= 400 else 3)
        _, status = os.waitpid(pid, 0)
        parent.join()
        print(os.waitstatus_to_exitcode(status), os.environ.get("TOKENIZERS_PARALLELISM"))
    """)
    done = run_child(source, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["0", "None"], (done.stdout, done.stderr[-3000:])


def test_training_without_progress_makes_no_progress_bar(monkeypatch):
    """A tqdm bar takes tqdm's class lock when it is made, disabled or not; a child forked while
    another thread made one (SGPE training from an iterator, progress=False) could wait for that
    lock for ever. Without progress no bar is made."""
    import tqdm.std

    from wwho.sgpe import SGPETokenizer

    def made(*args, **kwargs):
        raise AssertionError("a tqdm bar was made with progress off")

    monkeypatch.setattr(tqdm.std.tqdm, "__new__", made)
    lines = open(SAMPLE, encoding="utf-8").read().splitlines()[:300]
    SGPETokenizer.train_from_iterator(lines, vocab_size=500, script="sinhala", progress=False)


def test_a_fork_does_not_wait_for_ever_on_the_import_lock():
    """The fork's wait for an import under wwho.imports' lock is bounded: an import that needs what the
    forking thread holds (logging's before-fork hook takes logging's lock) must not
    stop the fork. Here another thread holds the lock and never lets go."""
    source = textwrap.dedent("""
        import os, threading, time
        import wwho.imports as imports
        imports.FORK_WAIT = 0.3
        held = threading.Event()
        def hold():
            with imports._lock:
                held.set()
                time.sleep(30)
        threading.Thread(target=hold, daemon=True).start()
        held.wait()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), time.monotonic() - started < 10)
        os._exit(0)
    """)
    done = run_child(source, timeout=60)
    assert done.stdout.split() == ["0", "True"], (done.stdout, done.stderr[-3000:])


#: A child interpreter whose import of a wwho module (one a constructor imports on first use) is held
#: on another thread until the fork is made: in the loader's ``create_module`` (the module's import
#: lock taken, nothing made or run) or in ``exec_module`` (the module half made). Not in a finder:
#: finders run under the interpreter's global import lock, which ``os.fork`` waits for, and a fork
#: made as the thread moves on after a timed hold could land in numpy's and gguf's imports, where a
#: child can hang (CPython's hazard of fork with threads, not wwho's; a loaded machine did so).
SLOW_WWHO_IMPORT = """
import importlib.util, os, signal, sys, threading
import wwho, wwho.imports
wwho.imports.FORK_WAIT = 0.5  # the import below waits for the fork itself: past the wait, the child forgets it
phase, parent, started, forked = {phase!r}, os.getpid(), threading.Event(), threading.Event()
class _Slow:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "wwho.bytelevel.gguf" or os.getpid() != parent:
            return None
        sys.meta_path.remove(_Slow)
        spec = importlib.util.find_spec(name)
        step = spec.loader.create_module if phase == "create" else spec.loader.exec_module
        def held(arg):
            started.set()
            forked.wait(30)  # until the fork is made, however slow the machine
            return step(arg)
        setattr(spec.loader, "create_module" if phase == "create" else "exec_module", held)
        return spec
sys.meta_path.insert(0, _Slow)
first = threading.Thread(target=lambda: __import__("wwho.bytelevel.gguf"))
first.start()
started.wait()
pid = os.fork()
if pid == 0:
    signal.alarm(20)
    from wwho.bytelevel.gguf import load_gguf
    os._exit(0 if callable(load_gguf) else 3)
forked.set()
_, status = os.waitpid(pid, 0)
first.join()
print(os.waitstatus_to_exitcode(status))
"""


SLOW_OTHER_IMPORT = """
import os, signal, sys, threading, time
import wwho
sys.path.insert(0, {folder!r})
with open(os.path.join({folder!r}, "slowmod.py"), "w") as f:
    f.write("import logging, time\\ntime.sleep(0.5)\\nlogging.getLogger('slowmod')\\nVALUE = 7\\n")
first = threading.Thread(target=lambda: __import__("slowmod"))
first.start()
time.sleep(0.1)  # in the import now
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    signal.alarm(20)
    import slowmod
    os._exit(0 if slowmod.VALUE == 7 else 3)
took = time.monotonic() - t0
_, status = os.waitpid(pid, 0)
first.join()
print(os.waitstatus_to_exitcode(status), "slow" if took > 5 else "quick")
"""


def test_fork_while_another_thread_imports_any_module_waits_for_it(tmp_path):
    """A first constructor imports stdlib modules too (json, dataclasses, regex), and a child forked
    while another thread holds one of their import locks could wait for ever, every kind. The fork
    waits for imports under way in other threads; and since logging's own before-fork hook takes a
    lock such an import may need (gguf's import calls logging.getLogger), wwho's hook runs before
    it (else the fork would stall for the whole wait)."""
    done = run_child(SLOW_OTHER_IMPORT.format(folder=str(tmp_path)), timeout=90)
    assert done.returncode == 0 and done.stdout.split() == ["0", "quick"], (done.stdout, done.stderr[-3000:])


@pytest.mark.parametrize("phase", ["create", "exec"])
def test_fork_while_another_thread_imports_a_module_of_wwho(phase):
    """A constructor imports its module on first use (``ByteBPE.from_gguf``: wwho.bytelevel.gguf,
    and gguf and numpy with it). A child forked while another thread was in that import would wait
    for ever on the module's import lock, which the fork copied held (every kind). The child forgets
    imports under way and makes the module afresh (wwho.imports)."""
    done = run_child(SLOW_WWHO_IMPORT.format(phase=phase), timeout=90)
    assert done.returncode == 0 and done.stdout.split() == ["0"], (done.stdout, done.stderr[-3000:])


#: A child forked while another thread is in its first ``import wwho``, held (at most a second) in the
#: run of a module that import makes: wwho.cli (argparse, the Ctrl-C guard) or logging.
FIRST_IMPORT_OF_WWHO = """
import importlib.util, os, signal, sys, threading
module, parent, started = {module!r}, os.getpid(), threading.Event()
class _Slow:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != module or os.getpid() != parent:
            return None
        sys.meta_path.remove(_Slow)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module
        def held(made):
            started.set()
            threading.Event().wait(1.0)  # the fork is made meanwhile; it waits for this import
            return run(made)
        spec.loader.exec_module = held
        return spec
sys.meta_path.insert(0, _Slow)
first = threading.Thread(target=lambda: __import__("wwho"))
first.start()
started.wait()
pid = os.fork()
if pid == 0:
    signal.alarm(20)
    import wwho
    os._exit(0 if wwho.available_scripts() else 3)
_, status = os.waitpid(pid, 0)
first.join()
print(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.parametrize("module", ["wwho.cli", "logging"])
def test_fork_during_another_threads_first_import_of_wwho(module):
    """wwho's fork hooks were registered after it imported its command-line package (argparse and
    logging with it, some 20 ms): a child forked meanwhile found the wwho package's import lock
    copied held, and waited for ever at its own ``import wwho``. They are now registered first."""
    done = run_child(FIRST_IMPORT_OF_WWHO.format(module=module), timeout=90)
    assert done.returncode == 0 and done.stdout.split() == ["0"], (done.stdout, done.stderr[-3000:])
    # logging, imported while the fork waited, registered its after-fork hook too late for its before
    # one: it released a lock it had not taken ("Exception ignored ... cannot release un-acquired lock")
    assert "Exception ignored" not in done.stderr, done.stderr[-3000:]


#: A library whose module, like a C extension's, can be run once per process, and a Ctrl-C that lands
#: inside its first import (from the main thread, through wwho.imports).
CTRL_C_IN_AN_IMPORT = r"""
import os, sys
sys.path.insert(0, {folder!r})
with open(os.path.join({folder!r}, "oncemod.py"), "w") as f:
    f.write("import builtins, os, signal, time\n"
            "if getattr(builtins, '_oncemod_ran', False):\n"
            "    raise ImportError('cannot load module more than once per process')\n"
            "builtins._oncemod_ran = True\n"
            "os.kill(os.getpid(), signal.SIGINT)\n"
            "time.sleep(0.5)\n"
            "VALUE = 7\n")
from wwho.imports import import_module
try:
    import_module("oncemod")
    print("no interrupt")
except KeyboardInterrupt:
    print("interrupted")
print(import_module("oncemod").VALUE)
"""


def test_a_ctrl_c_inside_a_first_import_leaves_the_library_whole(tmp_path):
    """A Ctrl-C during the first ``ByteBPE.from_gguf`` or ``encode_to_numpy`` (numpy's and gguf's
    imports) must not leave numpy half made for the rest of the process ("cannot load module more
    than once per process", "module 'numpy' has no attribute 'nonzero'"). The Ctrl-C is held
    back until such an import is done, then raised."""
    done = run_child(CTRL_C_IN_AN_IMPORT.format(folder=str(tmp_path)), timeout=60)
    assert done.returncode == 0 and done.stdout.split() == ["interrupted", "7"], (done.stdout, done.stderr[-2000:])
