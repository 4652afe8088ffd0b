"""Work on helper threads that a Ctrl-C cannot wedge: the few places where wwho overlaps Python
work with a call into the core on another thread (encoding the next block while this one is
written, counting a batch while the next is read, checking an export while it is saved).

``concurrent.futures.ThreadPoolExecutor`` is not safe there. A ``KeyboardInterrupt`` is raised in
the main thread at whatever bytecode it is running, and that may be inside the executor's own lock
handling (``submit``, a future's ``result``), where a lock is then left held; the worker thread
blocks on that lock, and the executor's shutdown, at the end of its ``with`` block and again when
the interpreter exits, waits for the worker forever: a command hangs after its Ctrl-C, every
further Ctrl-C ignored as one during its clean-up. Here the threads are daemon threads, work and
results pass through ``queue.SimpleQueue`` (whose ``put`` and ``get`` are single C calls: no
Python-level lock to leave held; a blocked ``get`` still lets Ctrl-C through), and after an
exception nothing waits for a helper: neither the ``with`` block nor the process's exit.

:func:`interrupts_held` holds a Ctrl-C back for a block that must not stop half way.

What this module does not do: stop work already running. A helper that was inside a call when the
block ended finishes that call on its own and its result is dropped; it takes no further work.
Without an exception, the ``with`` block waits for every call submitted, as an executor's does.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_STOP = None


class Pending(Generic[T]):
    """The result of one call submitted to :class:`Background`."""

    __slots__ = ("_box", "_outcome")

    def __init__(self) -> None:
        self._box: queue.SimpleQueue = queue.SimpleQueue()
        self._outcome: tuple[bool, Any] | None = None

    def result(self) -> T:
        """The call's return value, waiting for it; its exception raised here if it raised one."""
        if self._outcome is None:
            self._outcome = self._box.get()
        ok, value = self._outcome
        if ok:
            return value
        raise value


class ThreadStartError(MemoryError):
    """The system refused a new thread. Python raises a bare ``RuntimeError("can't start new
    thread")``; under a memory limit (``ulimit -v``) the cause is the new thread's stack, so this is
    a ``MemoryError`` (the CLI's one line "out of memory"), naming the thread."""


#: How long :func:`start_thread` waits for a new thread's first step. A thread that runs takes it
#: at once (it needs only the GIL, which a waiting caller does not hold); one that has not after
#: this long died in its start-up (see :func:`start_thread`).
START_TIMEOUT_S = 5.0


class Started:
    """A thread :func:`start_thread` started: ``is_alive()`` and ``join(timeout)`` as a
    ``threading.Thread``'s. In a child forked meanwhile it is not alive (the child has no such
    thread) and ``join`` returns at once."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._running = _thread.allocate_lock()
        self._running.acquire()  # (released as the thread ends)

    def is_alive(self) -> bool:
        return self._pid == os.getpid() and self._running.locked()

    def join(self, timeout: float | None = None) -> None:
        if self._pid == os.getpid() and self._running.acquire(timeout=-1 if timeout is None else timeout):
            self._running.release()


def start_thread(target: Callable[[], object], *, name: str) -> Started:
    """A daemon thread running ``target``, started; :class:`ThreadStartError` where the system
    refuses it, or where it dies before its first step.

    Not ``threading.Thread.start``: it waits without a time limit for the new thread to say it
    started, and a thread whose start-up fails for want of memory (``ulimit -v``: the interpreter
    prints "Exception ignored in thread started by") never says so, so the caller would wait
    forever (python/cpython#140746). Here the wait is bounded, and a thread that starts after
    its caller gave up on it ends at once, running nothing. An exception ``target`` lets out goes
    to ``threading.excepthook``, as a ``threading.Thread``'s does."""
    thread = Started()
    first_step = _thread.allocate_lock()
    first_step.acquire()
    claimed = _thread.allocate_lock()  # taken by whichever comes first: the thread, or a caller giving up

    def run() -> None:
        try:
            if claimed.acquire(False):
                first_step.release()
                target()
        except BaseException:  # noqa: BLE001 (reported as threading reports a thread's exception)
            threading.excepthook(threading.ExceptHookArgs((*sys.exc_info(), None)))
        finally:
            thread._running.release()

    try:
        _thread.start_new_thread(run, ())
    except RuntimeError as exc:
        raise ThreadStartError(f"cannot start a thread ({name}): the process has reached its memory "
                               f"or thread limit ({exc})") from None
    if not first_step.acquire(timeout=START_TIMEOUT_S):
        if claimed.acquire(False):
            raise ThreadStartError(f"cannot start a thread ({name}): it died in its start-up (the "
                                   f"process has reached its memory limit?)")
        first_step.acquire()  # (it took its first step just now)
    return thread


class Background:
    """``threads`` daemon threads taking calls in the order submitted (from one thread); a context
    manager (see the module docstring for what its end waits for)."""

    def __init__(self, threads: int = 1, *, name: str = "wwho-background") -> None:
        if threads < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._submitted: list[Pending] = []
        self._threads = 0
        try:
            for i in range(threads):
                start_thread(self._work, name=f"{name}_{i}")
                self._threads += 1
        except ThreadStartError:
            self.close(wait=False)  # (the threads started end on their own)
            raise

    def _work(self) -> None:
        while (request := self._requests.get()) is not _STOP:
            call, args, kwargs, pending = request
            try:
                outcome = (True, call(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 (handed to the caller's result())
                outcome = (False, exc)
            pending._box.put(outcome)
            # (nothing of a finished call stays referenced while the thread waits for the next)
            del request, call, args, kwargs, pending, outcome

    def submit(self, call: Callable[..., T], /, *args: Any, **kwargs: Any) -> Pending[T]:
        """``call(*args, **kwargs)`` on a helper thread."""
        pending: Pending[T] = Pending()
        # Only the calls whose result nobody has taken yet: a long run (a file encoded block by
        # block) must not keep every block's result alive here.
        self._submitted = [p for p in self._submitted if p._outcome is None]
        self._submitted.append(pending)
        self._requests.put((call, args, kwargs, pending))
        return pending

    def close(self, *, wait: bool = True) -> None:
        """No more calls; with ``wait``, every call submitted has ended when this returns (their
        exceptions are left to their ``result()``)."""
        submitted, self._submitted = self._submitted, []
        for _ in range(self._threads):
            self._requests.put(_STOP)
        if wait:
            for pending in submitted:
                if pending._outcome is None:
                    pending._outcome = pending._box.get()

    def __enter__(self) -> Background:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self.close(wait=kind is None)


@contextlib.contextmanager
def interrupts_held():
    """Ctrl-C (SIGINT) waits until the block is done, then acts as it would have: for steps that must
    not stop half way (a save's renames, a C extension's first import). Only the main thread can be
    interrupted, and only it may set a handler: elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    if signal.getsignal(signal.SIGINT) is None:  # a handler not set from Python: it could not be put back
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            if callable(previous):
                previous(signal.SIGINT, None)
            elif previous == signal.SIG_DFL:
                signal.raise_signal(signal.SIGINT)
