"""Ctrl-C in the ``wwho`` command: one line, ``wwho: interrupted``, and exit code 130, at any moment.

An interrupt can arrive at five kinds of moment, and each is handled here once:

* while Python imports wwho (before :func:`wwho.cli.main` runs):
  ``wwho/__init__.py`` imports :mod:`wwho.startup` first (its guard needs nothing Python has not
  loaded), then wwho's fork handlers, then this module, and importing it calls :func:`guard_startup`,
  which, when the process is the ``wwho`` command (the console script or ``python -m wwho``),
  makes an uncaught ``KeyboardInterrupt`` print the line and exit 130 instead of a traceback,
  and so does one that Python would drop because it was raised in a finalizer run by the
  imports. Nothing is written yet at that point, so nothing can be half-written. In a program
  that imports wwho it does nothing.
* inside a verb: :func:`handling` installs a SIGINT handler for the duration of ``main``. The
  first SIGINT raises ``KeyboardInterrupt`` as Python's own handler does, so every ``finally``
  and ``except BaseException`` on the way out runs (an atomic write removes its temporary
  file, a directory save drops its staging directory: :mod:`wwho.atomic_write`, :mod:`wwho.savedir`);
  later SIGINTs are ignored while that cleanup runs, so a second Ctrl-C cannot leave it half done.
* inside compiled code that turns the exception into an error message (the core's counting
  reports ``KeyboardInterrupt:`` as a :class:`~wwho.errors.WwhoError`): the handler records
  that the user interrupted, and ``main`` reports any error that follows as the interrupt.
* inside a finalizer (``__del__``, a weakref callback of a worker pool), where Python prints and
  drops whatever is raised: the unraisable hook catches the dropped ``KeyboardInterrupt``, and a
  short-lived thread sends the signal to the main thread again until the handler raises it in the
  main flow (the handler does not raise while the hook itself runs, which would be dropped too).
  Should the verb still end normally after a Ctrl-C, ``main`` reports the interrupt all the same.
* in worker processes forked while the handler is installed (the counting pool of byte-level
  training): they inherit the handler, which ignores SIGINT there; the parent stops them.
* after ``main`` has returned: a Ctrl-C (or SIGTERM, SIGHUP) while exit handlers run (worker
  pools joined, Ray shut down) prints the line and exits 130 (143, 129) at once. Python resets a
  handler written in Python to the default one before its last teardown (garbage collection,
  modules), where the signal would kill the process without a word; so the last exit handler
  (registered first, by :func:`guard_startup`) ignores the three from there on and ends the
  process at once with the command's own exit code (:func:`finished`), without that teardown: the
  output is complete by then, and nothing is left for a Ctrl-C to interrupt.

A signal the command was started with ignored stays ignored, as Python itself leaves it: SIGHUP
under ``nohup``, SIGINT for ``wwho ... &`` in a script (a non-interactive shell starts background
jobs so, so that Ctrl-C at the terminal stops the script, not the job).

``kill`` (SIGTERM, what job schedulers and ``timeout`` send) and a closed terminal (SIGHUP) end a
verb the same way: the clean-up runs, and the line says which (``wwho: terminated``, ``wwho:
hung up``), with the shell's exit code for it (143, 129); during the imports and after ``main``,
as a Ctrl-C then. Forked workers keep the default action for those two: a pool stops its workers
with SIGTERM.

Nothing here writes a file. ``main`` calls :func:`report` to print the line.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

from wwho.startup import ENDINGS, EXIT_CODE, MESSAGE
from wwho.startup import interrupted as _interrupted
from wwho.startup import is_command as _is_command

#: How often a KeyboardInterrupt that a finalizer dropped is sent to the main thread again.
RESEND_SECONDS = 0.01

_command = False  # this process is the wwho command (guard_startup installed its guard)
_reported = False  # MESSAGE was printed: never twice in one process
_ending: tuple[str, int] | None = None  # (line, exit code) of a SIGTERM or SIGHUP that ended the verb
_code: int | None = None  # the exit code main returned (see finished)
_last = False  # the exit handler of guard_startup is the process's last one


class State:
    """What the handler saw during one ``main``. (A plain class: this module is imported early, and
    imports little, to start guarding sooner.)"""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.interrupted = False  # a SIGINT arrived
        self.raised = False  # the KeyboardInterrupt for it was raised (later SIGINTs are ignored)
        self.pending = False  # it was raised in a finalizer and dropped: to be raised again
        self.in_hook = False  # the unraisable hook is running (raising there is dropped too)


def guard_startup() -> bool:
    """For the ``wwho`` command only: an uncaught ``KeyboardInterrupt`` (one that arrives while
    Python still imports wwho, before ``main`` handles it) prints :data:`MESSAGE` and exits with
    :data:`EXIT_CODE`. Returns whether the guard was installed."""
    global _command
    if not _is_command():
        return False
    _command = True
    previous = sys.excepthook

    def hook(kind, value, traceback) -> None:
        if _interrupted(value):
            report()
            os._exit(EXIT_CODE)  # an excepthook cannot choose the exit code otherwise
        previous(kind, value, traceback)

    sys.excepthook = hook
    previous_unraisable = sys.unraisablehook

    def unraisable(info) -> None:
        # The KeyboardInterrupt can also land in a finalizer run during the imports (a weakref
        # callback of importlib's module locks), where Python prints it, drops it and goes on
        # importing: the command would then run as if Ctrl-C had not been pressed. Once ``main``
        # runs, :func:`handling`'s own hook comes first. Nothing imported from here: the import
        # machinery may be mid-way through a module.
        if isinstance(info.exc_value, KeyboardInterrupt):
            _say()
            os._exit(EXIT_CODE)
        previous_unraisable(info)

    sys.unraisablehook = unraisable
    # SIGTERM and SIGHUP before ``main`` (during the imports: nothing written yet) end the command
    # at once with their line; ``handling`` puts this back after ``main``, while exit handlers run.
    for signum in _endings():
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _while_exiting)
    # Registered first, so run last; when something registered an exit handler before wwho was
    # imported (a coverage tool), that one runs after it, and the process is left to end as usual.
    global _last
    _last = getattr(atexit, "_ncallbacks", lambda: 1)() == 0
    atexit.register(_ignore_sigint_from_now)
    return True


def _endings() -> list[int]:
    return [getattr(signal, name) for name in ENDINGS if hasattr(signal, name)]


def _ignore_sigint_from_now() -> None:
    if threading.current_thread() is threading.main_thread():
        # (Python keeps SIG_IGN while it finalizes; a handler written in Python it resets to the
        # default, which would kill the process without a word: the output is complete by now.)
        for signum in (signal.SIGINT, *_endings()):
            signal.signal(signum, signal.SIG_IGN)
    if _command and (_reported or (_code is not None and _last)):
        # Main returned its code (the output is complete), or the interrupt was reported, and
        # every other exit handler has run (this one was registered first): the command ends here,
        # without the interpreter's teardown, which after a large vocabulary frees objects for a
        # while with Ctrl-C ignored (a Ctrl-C then would end the command with 0 and no line). And
        # when the interrupt was reported: under ``python -m wwho``, CPython (3.11) marks a
        # KeyboardInterrupt raised inside code run by ``exec`` of a string (the methods a
        # dataclass or namedtuple generates while a module is imported) as unhandled even though
        # it was caught, and after its teardown kills the process with SIGINT, whatever the exit
        # code.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        if _reported:
            os._exit(EXIT_CODE if _ending is None else _ending[1])
        os._exit(_code)


def finished(code: int) -> None:
    """The command's ``main`` returned ``code``: the last exit handler ends the process with it."""
    global _code
    _code = code


@contextlib.contextmanager
def handling() -> Iterator[State]:
    """Install the SIGINT handler (see the module docstring) for the ``with`` block; the previous
    handler is put back after it. Outside the main thread (``main`` called from a thread) Python
    cannot set handlers, and the state only records nothing."""
    state = State()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    def on_sigint(signum, frame) -> None:
        global _ending
        if os.getpid() != state.pid:
            if signum != signal.SIGINT:  # a pool stops its forked workers so: the default action
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)
            return  # a forked worker: the main process stops it
        if not state.interrupted and signum != signal.SIGINT:
            _ending = (ENDINGS[signal.Signals(signum).name], 128 + signum)
        state.interrupted = True
        if state.in_hook:
            return  # it would be dropped again: the resending thread tries once the hook is done
        if not state.raised:
            state.raised = True
            state.pending = False
            raise KeyboardInterrupt

    def resend() -> None:
        # Delivers the SIGINT to the main thread again until a handler run raises it outside any
        # finalizer (one that lands in another finalizer comes back through the hook).
        while state.pending:
            _thread.interrupt_main(signal.SIGINT)
            time.sleep(RESEND_SECONDS)

    previous_unraisable = sys.unraisablehook

    def on_unraisable(unraisable) -> None:
        # The KeyboardInterrupt landed in a finalizer (``__del__``, a weakref callback), where Python
        # prints and drops it: raise it again in the main flow instead of letting the work go on.
        # Not from here: a handler run inside this hook is dropped the same way, so another thread
        # sends the signal again, and the handler raises it once the main thread is past the hook.
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and os.getpid() == state.pid:
            state.in_hook = True
            try:
                state.raised = False
                state.pending = True
                threading.Thread(target=resend, name="wwho-interrupt", daemon=True).start()
            finally:
                state.in_hook = False
            return
        previous_unraisable(unraisable)

    # (an inherited SIG_IGN is kept: see the module docstring)
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    previous = None if ignored else signal.signal(signal.SIGINT, on_sigint)
    endings = _endings()
    previous_endings = {signum: signal.signal(signum, on_sigint) for signum in endings
                        if signal.getsignal(signum) is not signal.SIG_IGN}
    sys.unraisablehook = on_unraisable
    try:
        yield state
    finally:
        for signum, handler in previous_endings.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        state.pending = False  # stops a resending thread
        sys.unraisablehook = previous_unraisable
        if ignored:
            pass  # ignored before, ignored still
        elif _command and state.interrupted:  # said and cleaned up: nothing left for another Ctrl-C to do
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # (Python keeps SIG_IGN while it finalizes)
        elif _command:  # the command is exiting: a Ctrl-C now ends it at once, with one line at most
            signal.signal(signal.SIGINT, _while_exiting)
        else:  # main() called in a program of its own: give it its handler back
            signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)


def _while_exiting(signum, frame) -> None:
    """Before ``main`` and after it (exit handlers running): the signal's line, and its exit code
    at once; nothing is half-written then."""
    global _ending
    if signum != signal.SIGINT and _ending is None and not _reported:
        _ending = (ENDINGS[signal.Signals(signum).name], 128 + signum)
    os._exit(report())


def report() -> int:
    """Close any progress bar still drawn (so the message starts its own line), print
    :data:`MESSAGE` on standard error (once per process), and return :data:`EXIT_CODE` (for a
    SIGTERM or SIGHUP, its own line and code: :data:`ENDINGS`)."""
    code = EXIT_CODE if _ending is None else _ending[1]
    if _command and _reported:
        return code
    with contextlib.suppress(Exception):
        from wwho.progress import close_all

        close_all()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    _say()
    return code


def _say() -> None:
    """:data:`MESSAGE` on standard error, once per process of the command (imports nothing)."""
    global _reported
    if _command and _reported:
        return
    _reported = True
    with contextlib.suppress(Exception):
        sys.stderr.write((MESSAGE if _ending is None else _ending[0]) + "\n")
        sys.stderr.flush()


guard_startup()
