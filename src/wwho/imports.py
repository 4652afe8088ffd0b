"""The imports of numpy and :mod:`wwho.arrays` on first use, made safe across ``os.fork``.

A module being imported holds an import lock of its own (``importlib``'s per-module lock) while its
code runs. ``os.fork`` copies that lock, held, into the child, where the importing thread does not
exist: a child forked while another thread was importing numpy (the first ``encode_to_numpy`` of a
process, which takes long) waits for ever at its own first use of numpy. The array methods import
numpy and :mod:`wwho.arrays` through :func:`import_module`, under a lock that ``os.fork`` takes first
(``os.register_at_fork``): a fork waits until such an import has finished, and the child starts with
none half done. The wait is bounded (:data:`FORK_WAIT`): an import that needs something the forking
thread holds (another library's before-fork hook may take a lock of its own, as ``logging``'s does)
must not stop the fork for ever; past the bound the fork goes on, as it did without this module.

wwho's own modules are imported on first use too (``wwho.ByteBPE``, a constructor's ``from
wwho.bytelevel.gguf import ...``): a child forked while another thread was importing one would wait
for ever at its own first use of it, every kind of tokenizer alike. They are not imported under the
lock (two threads importing two modules would then take a module's lock and this one in opposite
orders, and could deadlock): instead the child forgets wwho's imports another thread had under way
(:func:`_forget_imports_of_other_threads`), so that its own first use imports the module afresh (a
module of wwho's runs nothing but definitions when imported).

A fork also waits (bounded by :data:`FORK_WAIT`) until no other thread holds any module's import
lock: a first constructor imports stdlib modules too (``json``, ``dataclasses``, ``regex``), and a
child forked while another thread held one of those would wait for ever at its own import of it.
What this module does not do: forget another library's half-made module in the child. Run again
there, its side effects would happen twice (handlers registered twice), a C extension cannot be
loaded twice in one process, and a package's finished submodules would keep pointing at the
half-made package. So where the wait runs out (an
import that waits for the forking thread), a child forked while another thread imports such a
library can still wait for it, CPython's documented hazard of ``fork`` with threads: make the
tokenizers before forking, or start workers with ``spawn``/``forkserver``.
"""

# (Only what the fork handlers need, before they are registered: no `from __future__` import, no
# contextlib, importlib or logging, which a program may not have loaded yet; see the end.)
import os
import sys
import threading
import time

#: The longest a fork waits for an import under the lock, in seconds.
FORK_WAIT = 10.0

_lock = threading.RLock()
_fork = threading.local()  # whether this thread's fork holds the lock


def _before_fork() -> None:
    """Wait (at most :data:`FORK_WAIT`) until no other thread is importing anything: under
    :data:`_lock` (numpy, :mod:`wwho.arrays`, gguf) or not (a stdlib or wwho module that a first
    constructor, syllabify or training imports), so that the child finds no module lock copied
    held. The lock is not held while it waits for the others: an import under way may itself ask
    for it. (The first of one fork's calls does this: see :func:`_register`.)"""
    depth = getattr(_fork, "depth", 0)
    _fork.depth = depth + 1
    if depth:
        return
    had_logging = _imported("logging")
    deadline = time.monotonic() + FORK_WAIT
    while True:
        held = _lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
        if not held or not _imports_of_other_threads() or time.monotonic() >= deadline:
            _fork.held = held
            break
        _lock.release()
        time.sleep(0.001)
    if not had_logging and _imported("logging"):
        _take_logging_lock()


def _imported(name: str) -> bool:
    """Whether module ``name`` is imported whole (not under way: it is in ``sys.modules`` from the
    start of its import)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


def _take_logging_lock() -> None:
    """What logging's before-fork hook does, for a fork during whose wait another thread imported
    logging (wwho's own first import does): the fork's before-hooks were chosen when it started,
    its after-hooks when they run, so logging's after-hook, registered meanwhile, would release a
    lock its before-hook never took ("cannot release un-acquired lock", printed by the fork)."""
    logging = sys.modules["logging"]
    take = getattr(logging, "_prepareFork", None) or getattr(logging, "_acquireLock", None)  # 3.13+, before
    if callable(take):
        take()


def _imports_of_other_threads() -> bool:
    """Whether a thread other than this one holds a module's import lock (importlib keeps them in
    ``_bootstrap._module_locks``, each recording its owner; an interpreter that keeps them otherwise:
    False)."""
    try:
        refs = list(_bootstrap()._module_locks.values())
    except (ImportError, AttributeError):
        return False
    except RuntimeError:  # changed while read: an import is starting or ending
        return True
    me = threading.get_ident()
    for ref in refs:
        lock = ref() if callable(ref) else None
        owner = getattr(lock, "owner", None)
        if owner is not None and owner != me and getattr(lock, "count", 0):
            return True
    return False


def _last_after_fork() -> bool:
    """Whether this is the last of one fork's after-hook calls (see :func:`_register`)."""
    _fork.depth = max(0, getattr(_fork, "depth", 1) - 1)
    return not _fork.depth


def _after_fork_in_parent() -> None:
    if _last_after_fork() and getattr(_fork, "held", False):
        _fork.held = False
        _lock.release()


def _after_fork_in_child() -> None:
    global _lock
    if not _last_after_fork():
        return
    _lock = threading.RLock()  # the forking thread's hold is the child's own: a fresh lock is simpler
    _fork.held = False
    _forget_imports_of_other_threads()


def _forget_imports_of_other_threads() -> None:
    """In a child made by ``fork``: drop the import locks of wwho's modules (not the compiled core's,
    which cannot be loaded twice) that a thread of the parent (which the child does not have) held,
    with the module it had begun to run, so that the child imports such a module afresh instead of
    waiting for that thread for ever. importlib keeps its per-module locks in
    ``_bootstrap._module_locks`` (a lock records the thread holding it); where an interpreter keeps
    them otherwise, nothing is done."""
    try:
        locks = _bootstrap()._module_locks
    except (ImportError, AttributeError):
        return
    me = threading.get_ident()  # the forking thread, the child's only one
    for name, ref in list(locks.items()):
        if not (name == "wwho" or name.startswith("wwho.")) or name == "wwho._core":
            continue
        lock = ref() if callable(ref) else None
        owner = getattr(lock, "owner", None)
        if owner is None or owner == me or not getattr(lock, "count", 0):
            continue
        locks.pop(name, None)
        module = sys.modules.get(name)
        if module is not None and getattr(getattr(module, "__spec__", None), "_initializing", False):
            del sys.modules[name]  # half run: its code stopped with the thread


def _bootstrap():
    """importlib's bootstrap module (``importlib._bootstrap``), which the interpreter loads before
    anything: found without importing :mod:`importlib` inside a fork's hook."""
    module = sys.modules.get("_frozen_importlib")
    if module is None:
        from importlib import _bootstrap as module
    return module


def _register() -> None:
    """The hooks, registered once more. One fork calls each registration's: the first before-hook
    call waits, the last after-hook call (in the parent, in the child) undoes it; the calls between
    only count (``_fork.depth``)."""
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


# At once, before the imports below or any other of wwho's: a fork while another thread has begun
# to import wwho waits for that import, where a child forked before the hooks were registered found
# a module lock of wwho's (or argparse's) copied held, and waited for ever at its own import.
_register()
if "logging" not in sys.modules:
    # Before-fork hooks run last registered first. logging's takes its own lock, which an import
    # under way may need (gguf's calls logging.getLogger): registered again after logging's, this
    # module's hook waits for such an import before logging's takes that lock (otherwise the fork
    # would stall for the whole wait, then the child hang in gguf's import).
    import logging  # noqa: F401

    _register()

import contextlib  # noqa: E402 (after the registration: see above)
import importlib  # noqa: E402
from types import ModuleType  # noqa: E402


def import_module(name: str) -> ModuleType:
    """``importlib.import_module(name)``; a first import (or one still running on another thread)
    under the lock a fork waits for. A Ctrl-C during another library's first import is held back
    until the import is done: a KeyboardInterrupt inside numpy's own import would leave it half made
    for the rest of the process ("cannot load module more than once per process")."""
    module = sys.modules.get(name)
    if module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False):
        return module
    from wwho.background import interrupts_held

    # (wwho's own modules run only definitions: one stopped half way is imported again)
    held = contextlib.nullcontext() if name.split(".")[0] == "wwho" else interrupts_held()
    with _lock, held:
        return importlib.import_module(name)


def arrays() -> ModuleType:
    """:mod:`wwho.arrays`, and numpy with it, imported as :func:`import_module` imports (the array
    methods call it; the core's own first numpy import goes through :func:`import_module` too)."""
    import_module("numpy")  # first, on its own: wwho.arrays then imports it done
    return import_module("wwho.arrays")
