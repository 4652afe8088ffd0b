"""Helper threads that a Ctrl-C cannot wedge (``wwho.background``): results in order, exceptions
handed back, the end of a ``with`` block waiting for every call only when nothing went wrong, and a
process that exits while a helper is stuck (``ThreadPoolExecutor`` waits for it forever)."""

from __future__ import annotations

import _thread
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from wwho import background
from wwho.background import Background, ThreadStartError


@pytest.mark.parametrize("threads", [1, 3])
def test_results_come_back_in_the_order_submitted(threads):
    with Background(threads) as pool:
        pending = [pool.submit(lambda i: (time.sleep(0.001 * (i % 3)), i * i)[1], i) for i in range(40)]
        assert [p.result() for p in pending] == [i * i for i in range(40)]


def test_an_exception_is_raised_by_result_each_time_it_is_asked():
    def fail(message: str) -> None:
        raise ValueError(message)

    with Background() as pool:
        pending = pool.submit(fail, "bad block")
        ok = pool.submit(len, "four")
    for _ in range(2):
        with pytest.raises(ValueError, match="bad block"):
            pending.result()
    assert ok.result() == 4


def test_the_end_of_the_block_waits_for_every_call_without_an_exception():
    done = []
    with Background(2) as pool:
        for i in range(6):
            pool.submit(lambda i: (time.sleep(0.02), done.append(i)), i)
    assert sorted(done) == list(range(6))


def test_after_an_exception_the_block_does_not_wait_for_a_stuck_helper():
    held = threading.Lock()
    held.acquire()  # as a lock a Ctrl-C left held: the helper waits on it for ever
    try:
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt), Background() as pool:
            pool.submit(held.acquire)
            raise KeyboardInterrupt
        assert time.monotonic() - start < 5
    finally:
        held.release()


STUCK = """
import sys, threading
from concurrent.futures import ThreadPoolExecutor
from wwho.background import Background
held = threading.Lock()
held.acquire()
try:
    with {pool} as pool:
        pool.submit(held.acquire)
        raise KeyboardInterrupt
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.parametrize("pool, exits", [("Background(1)", True), ("ThreadPoolExecutor(1)", False)])
def test_the_process_exits_while_a_helper_is_stuck(pool, exits):
    """The failure this module replaces, shown on ``ThreadPoolExecutor`` itself: its block (and the
    interpreter's exit) waits for the stuck worker; with :class:`Background` the process ends."""
    program = textwrap.dedent(STUCK.format(pool=pool))
    try:
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                              timeout=30 if exits else 2)
    except subprocess.TimeoutExpired:
        assert not exits, f"{pool}: the process did not end"
        return
    assert exits, f"{pool}: ended, where it was expected to wait for its worker"
    assert (done.returncode, done.stdout) == (0, "interrupted\n"), done.stderr[-2000:]


def test_results_taken_are_not_kept():
    """A file encoded block by block: memory stays a couple of blocks, not every block's result."""
    import gc
    import weakref

    class Block(list):
        pass

    with Background() as pool:
        taken = []
        for _ in range(50):
            block = pool.submit(Block, range(1000)).result()
            taken.append(weakref.ref(block))
            del block
        gc.collect()
        assert sum(ref() is not None for ref in taken) <= 1


def test_threads_must_be_at_least_one():
    with pytest.raises(ValueError, match="at least 1"):
        Background(0)


def test_a_thread_the_system_refuses_is_a_memory_error_and_the_started_ones_end(monkeypatch):
    """Under ``ulimit -v`` a new thread's stack may not be had: Python's bare ``RuntimeError("can't
    start new thread")`` must not come out of ``wwho syllabify`` as a traceback."""
    start = _thread.start_new_thread
    started = []

    def start_one(run, args):
        if started:
            raise RuntimeError("can't start new thread")
        started.append(run)
        return start(run, args)

    handles = []
    start_thread = background.start_thread
    monkeypatch.setattr(_thread, "start_new_thread", start_one)
    monkeypatch.setattr(background, "start_thread", lambda *a, **k: handles.append(start_thread(*a, **k)))
    with pytest.raises(ThreadStartError, match=r"cannot start a thread \(wwho-test_1\)") as caught:
        Background(3, name="wwho-test")
    assert isinstance(caught.value, MemoryError)
    assert len(handles) == 1
    handles[0].join(5)  # the one started was told to stop
    assert not handles[0].is_alive()


def test_a_thread_that_dies_in_its_start_up_is_an_error_not_a_wait_forever(monkeypatch):
    """A new thread can die before its first step (its interpreter state, under a memory limit,
    cannot be had: python/cpython#140746), where ``threading.Thread.start`` waits for it forever.
    Here the system's thread starts nothing at all, as such a thread does."""
    monkeypatch.setattr(background, "START_TIMEOUT_S", 0.2)
    monkeypatch.setattr(_thread, "start_new_thread", lambda run, args: 12345)
    began = time.monotonic()
    with pytest.raises(ThreadStartError, match=r"cannot start a thread \(wwho-test_0\): it died in its start-up"):
        Background(1, name="wwho-test")
    assert time.monotonic() - began < 5


def test_a_thread_that_starts_after_its_caller_gave_up_runs_nothing(monkeypatch):
    monkeypatch.setattr(background, "START_TIMEOUT_S", 0.2)
    start = _thread.start_new_thread
    monkeypatch.setattr(_thread, "start_new_thread", lambda run, args: start(lambda: (time.sleep(0.5), run()), ()))
    ran = []
    with pytest.raises(ThreadStartError):
        background.start_thread(lambda: ran.append(1), name="late")
    time.sleep(1.0)
    assert ran == []


def test_a_started_thread_is_alive_until_its_target_returns_and_join_waits_for_it():
    go = threading.Event()
    thread = background.start_thread(go.wait, name="waiting")
    assert thread.is_alive()
    thread.join(0.05)
    assert thread.is_alive()
    go.set()
    thread.join(5)
    assert not thread.is_alive()


def test_an_exception_a_thread_lets_out_goes_to_threading_excepthook(monkeypatch):
    seen = []
    monkeypatch.setattr(threading, "excepthook", seen.append)

    def fail():
        raise ValueError("in the thread")

    background.start_thread(fail, name="failing").join(5)
    assert len(seen) == 1 and seen[0].exc_type is ValueError and str(seen[0].exc_value) == "in the thread"


SYLLABIFY_WITHOUT_THREADS = textwrap.dedent("""
    import _thread, sys
    def refuse(run, args):
        raise RuntimeError("can't start new thread")
    _thread.start_new_thread = refuse
    from wwho.cli import main
    sys.exit(main(["syllabify", "--file", sys.argv[1]]))
""")


def test_a_verb_whose_thread_is_refused_says_so_in_one_line(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("ශ්‍රී ලංකාව\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", SYLLABIFY_WITHOUT_THREADS, str(text)], capture_output=True,
                          text=True, timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, (done.returncode, done.stderr[-2000:])
    assert lines[0].startswith("wwho: error: out of memory: cannot start a thread (wwho-syllabify_0)"), lines
