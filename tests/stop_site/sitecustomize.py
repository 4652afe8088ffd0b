"""A test's exact moment inside a ``wwho`` process (``tests/test_interrupt.py``'s ``Stop``): with this
folder on ``PYTHONPATH`` and ``WWHO_TEST_STOP`` set, the process stops itself (SIGSTOP) at that point,
once, and the test, which waits for the stop with ``waitpid``, sends its signal and then SIGCONT. The
signal is then pending exactly there however the test process is scheduled; a moment found by polling
the process from outside can be missed, or come after the work it was meant to interrupt.

``WWHO_TEST_STOP``: ``open:PATH`` (the first time the process opens PATH, an absolute path: Python's
``open`` audit event, raised by ``open`` and ``os.open``) or ``import:MODULE`` (when MODULE is about
to be imported). Only the process started with it stops, not processes it forks.
"""

import os
import signal
import sys

_WHERE = os.environ.pop("WWHO_TEST_STOP", "")
_PID = os.getpid()


def _stop() -> None:
    if os.getpid() == _PID:
        os.kill(_PID, signal.SIGSTOP)


if _WHERE.startswith("open:"):
    _target = _WHERE[len("open:"):]
    _stopped: list[bool] = []

    def _at_open(event: str, args: tuple) -> None:
        if event == "open" and not _stopped and args and isinstance(args[0], str | bytes):
            if os.path.abspath(os.fsdecode(args[0])) == _target:
                _stopped.append(True)
                _stop()

    sys.addaudithook(_at_open)
elif _WHERE.startswith("import:"):
    _module = _WHERE[len("import:"):]

    class _AtImport:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == _module:
                sys.meta_path.remove(_AtImport)
                _stop()
            return None

    sys.meta_path.insert(0, _AtImport)
