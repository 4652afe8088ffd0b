"""The ``wwho`` command's first guard: a Ctrl-C, ``kill`` or hang-up in the milliseconds before its
full guard exists.

``wwho/__init__.py`` imports this module before anything else of wwho's, and it imports nothing
Python has not loaded at start-up (``os``, ``sys``, the built-in ``_signal``): when the process is
the ``wwho`` command (its console script, or ``python -m wwho``), an uncaught ``KeyboardInterrupt``
from here on prints ``wwho: interrupted`` and exits 130, not a traceback, and SIGTERM and SIGHUP
print their line (:data:`ENDINGS`) and exit 143 and 129, until :mod:`wwho.cli.interrupts` installs
the full guard. A signal the command was started with ignored stays ignored. In a program that
imports wwho it does nothing.

It deliberately handles nothing else: the messages, signals and exit handlers of a verb are
:mod:`wwho.cli.interrupts`'.
"""

# (No `from __future__` import: only what Python has loaded at start-up)
import _signal  # (built into the interpreter and loaded at start-up: signal.py would import enum)
import os
import sys

MESSAGE = "wwho: interrupted"
#: The exit code of an interrupted command (128 + SIGINT), as shells report it.
EXIT_CODE = 130
#: The other signals that end the command as Ctrl-C does: their line (the exit code is 128 + the number).
ENDINGS = {"SIGTERM": "wwho: terminated", "SIGHUP": "wwho: hung up"}


def is_command() -> bool:
    """Whether this process is the ``wwho`` command: its console script, or ``python -m wwho``."""
    argv = list(getattr(sys, "orig_argv", []) or [])
    for i, arg in enumerate(argv[:-1]):
        if arg == "-m":
            return argv[i + 1] == "wwho"
    if any(arg == "-mwwho" for arg in argv):
        return True
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    return name in ("wwho", "wwho.exe", "wwho-script.py")


def interrupted(value: BaseException | None) -> bool:
    """Whether ``value`` is a KeyboardInterrupt or was raised while handling one: Python wraps one
    that lands in a class's ``__set_name__`` (``functools.cached_property``, during an import) in
    a ``RuntimeError``, its cause."""
    for _ in range(16):  # (a chain is short; a bound, not a set, keeps this free of imports)
        if value is None:
            return False
        if isinstance(value, KeyboardInterrupt):
            return True
        value = value.__cause__ or value.__context__
    return False


def _early_hook(kind, value, traceback) -> None:
    # Ctrl-C during wwho's first imports (milliseconds in which the full guard is not yet
    # installed): the line and 130, with nothing but the modules Python started with.
    if interrupted(value):
        sys.stderr.write(MESSAGE + "\n")
        sys.stderr.flush()
        os._exit(EXIT_CODE)
    sys.__excepthook__(kind, value, traceback)


def _early_ending(signum, frame) -> None:
    # SIGTERM or SIGHUP during wwho's first imports: nothing is written yet; the line and 128 + it.
    names = {getattr(_signal, name, None): line for name, line in ENDINGS.items()}
    os.write(2, (names.get(signum, MESSAGE) + "\n").encode())
    os._exit(128 + signum)


if is_command():
    sys.excepthook = _early_hook
    for _name in ENDINGS:
        _number = getattr(_signal, _name, None)
        if _number is not None and _signal.getsignal(_number) != _signal.SIG_IGN:
            _signal.signal(_number, _early_ending)
