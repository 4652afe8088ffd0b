"""``num_threads`` of every batch method, checked once for all tokenizer kinds.

A thread count is an integer (an ``int``, a numpy integer, an ``__index__`` object; never a
``bool``) from 1 to :data:`MAX_THREADS`, or None for one thread per core. Anything else is a
:class:`~wwho.errors.TokenizerError` that says so: ``num_threads=2**64`` raised a bare
``OverflowError`` in the core, and ``num_threads=100_000`` was accepted and left a pool of
hundreds of threads alive for the rest of the process.

The bound is fixed, so that a count accepted on one machine is accepted on another: 256, or the
number of CPUs where that is larger. Encoding is CPU-bound, so a thread beyond the CPUs this
process may run on only waits: a count above them is lowered to them (:func:`thread_count`
returns the count used). The core keeps a pool per count it was asked for (a few counts), so
this also bounds the threads that stay alive between calls.
"""

from __future__ import annotations

import operator
import os

from wwho.errors import TokenizerError, WrongTypeError, brief


def cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: The largest ``num_threads`` accepted: 256, or the number of CPUs where that is larger.
MAX_THREADS = max(256, os.cpu_count() or 1)


def thread_count(num_threads: object) -> int | None:
    """``num_threads`` checked: None (one thread per core), or the count to use, at most :func:`cpus`."""
    if num_threads is None:
        return None
    bounds = f"num_threads must be an integer from 1 to {MAX_THREADS}, or None for one thread per core"
    if isinstance(num_threads, bool):
        raise WrongTypeError(f"{bounds}; not a bool ({num_threads!r})")
    try:
        n = operator.index(num_threads)  # type: ignore[arg-type]
    except TypeError:  # (a TypeError too, as tiktoken's: num_threads="x")
        raise WrongTypeError(f"{bounds}; not {brief(num_threads)}") from None
    if not 1 <= n <= MAX_THREADS:
        raise TokenizerError(f"{bounds}; not {brief(n)}")
    return min(n, cpus())


def rayon_threads() -> int | None:
    """``RAYON_NUM_THREADS`` as rayon reads it (the size of Hugging Face ``tokenizers``' pool): a
    count written in ASCII digits, or None where it is unset, 0 or anything else (rayon's default,
    one thread per core). Tested with ``str`` methods, not ``int()`` in a ``try``: the command calls
    this as a verb starts, where a ``ValueError`` raised and caught now and then swallowed a Ctrl-C
    pressed as wwho started (tests/test_interrupt.py)."""
    value = os.environ.get("RAYON_NUM_THREADS", "")
    return (int(value) or None) if value.isascii() and value.isdigit() else None
