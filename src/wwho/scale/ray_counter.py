"""Counting shards in Ray tasks: ``engine="ray"`` of the trainers, ``wwho train --engine ray``.

The driver (the process that trains) cuts the corpus into shards (:mod:`wwho.scale.shards`),
submits one Ray task per shard (one CPU each, a bounded number in flight), and adds each
partial count into one total as it arrives: SGPE's in the core (:meth:`PieceCounter.add_bytes`,
64-bit, a sum past 2**64 - 1 refused), byte-level BPE's in a dict. Sums do not depend on the
order shards finish in, so the total, and the vocabulary trained from it on the driver, are
byte-identical to a local run's.

* **Where Ray runs**: a Ray session this process already has (``ray.init`` by the caller) is
  used and left running; otherwise ``address`` joins a running cluster (``"auto"``,
  ``"HOST:PORT"``, ``"ray://HOST:10001"``) or, without one, a local instance with ``workers``
  CPUs is started and shut down afterwards. The cluster's nodes need wwho installed and the
  corpus files at the same paths (a shared file system); shards of an iterator travel with
  their tasks.
* **Faults**: a task whose worker process dies is run again (``max_retries``, Ray's own
  retry; the test kills one); a bad line raises the shard's ``CorpusError`` unchanged, and when
  several shards have bad lines the first in corpus order is raised, as a local run would;
  a cluster that cannot be reached is one :class:`WwhoError` naming the address.
* **Memory on the driver**: the total (about 60 bytes plus the piece per distinct piece for
  SGPE; a Python dict for byte-level) and the partial counts in flight (at most ``2 x CPUs``
  shards' distinct pieces).

For tests only: when ``WWHO_TEST_KILL_WORKER_ONCE`` names a file that does not exist yet, the
first task to create it kills its own worker process (SIGKILL) before counting.

This module does not train and does not read the corpus itself (the tasks do).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from wwho import _core
from wwho.corpus import CorpusStats
from wwho.errors import WwhoError
from wwho.progress import progress_bar
from wwho.scale.counts import MAX_COUNT
from wwho.scale.shards import CountOptions, Shard, count_shard

KILL_ONCE_ENV = "WWHO_TEST_KILL_WORKER_ONCE"


def import_ray():
    """``ray``, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise WwhoError("engine 'ray' needs Ray: pip install 'wwho[ray]'") from None
    return ray


def count_on_ray(
    shards: Iterable[Shard],
    options: CountOptions,
    *,
    address: str | None = None,
    workers: int | None = None,
    stats: CorpusStats | None = None,
    total_bytes: int | None = None,
    progress: bool = True,
    max_retries: int = 3,
):
    """Count every shard in Ray tasks; returns the total (a ``PieceCounter`` for SGPE, a dict for
    byte-level). ``stats`` gets the shards' :class:`CorpusStats` summed (``files`` is left to the
    caller, who knows how many files the shards came from)."""
    ray = import_ray()
    started = connect(ray, address, workers)
    stats = stats if stats is not None else CorpusStats()
    kill_once = os.environ.get(KILL_ONCE_ENV) or None
    try:
        task = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=False)(_count_task)
        limit = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        total = _core.PieceCounter() if options.kind == "sgpe" else {}
        first_bad: dict[int, list[str]] = {}
        in_flight: dict = {}  # object ref -> shard
        failed: tuple[int, BaseException] | None = None
        pending = iter(shards)
        exhausted = False
        bar = progress_bar(total=total_bytes, desc="counting (ray)", unit="B", unit_scale=True, disable=not progress)
        with bar:
            while True:
                while not exhausted and failed is None and len(in_flight) < 2 * limit:
                    shard = next(pending, None)
                    if shard is None:
                        exhausted = True
                        break
                    in_flight[task.remote(shard, options, kill_once)] = shard
                if not in_flight:
                    break
                [ref], _ = ray.wait(list(in_flight), num_returns=1)
                shard = in_flight.pop(ref)
                try:
                    counts, shard_stats = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # the task raised: keep the first in corpus order
                    cause = exc.cause if isinstance(exc.cause, BaseException) else exc
                    if failed is None or shard.index < failed[0]:
                        failed = (shard.index, cause)
                    _cancel_after(ray, in_flight, failed[0])
                    continue
                except ray.exceptions.RayError as exc:
                    raise WwhoError(f"Ray could not count shard {_describe(shard)} ({max_retries} retries): "
                                    f"{_first_line(exc)}") from None
                _add(total, counts)
                stats.documents += shard_stats.documents
                stats.bytes += shard_stats.bytes
                stats.bad_lines += shard_stats.bad_lines
                if shard_stats.first_bad:
                    first_bad[shard.index] = shard_stats.first_bad
                bar.update(shard.size)
        if failed is not None:
            raise failed[1]
        ordered = [m for i in sorted(first_bad) for m in first_bad[i]]
        stats.first_bad.extend(ordered[: max(0, 5 - len(stats.first_bad))])
        return total
    finally:
        if started:
            ray.shutdown()


def _count_task(shard: Shard, options: CountOptions, kill_once: str | None):
    if kill_once:
        try:
            os.close(os.open(kill_once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    return count_shard(shard, options)


def _add(total, counts) -> None:
    if isinstance(total, dict):
        for piece, n in counts.items():
            s = total.get(piece, 0) + n
            if s > MAX_COUNT:
                raise WwhoError(f"the count of {piece!r} passes 2**64 - 1")
            total[piece] = s
    else:
        total.add_bytes(counts)


def _cancel_after(ray, in_flight: dict, index: int) -> None:
    """Cancel the shards after ``index``: an error there would not be the first one."""
    for ref, shard in list(in_flight.items()):
        if shard.index > index:
            ray.cancel(ref, force=True)
            del in_flight[ref]


def connect(ray, address: str | None, workers: int | None) -> bool:
    """Use this process's Ray session, join ``address``, or start a local instance with ``workers``
    CPUs; ``True`` when this call started or joined (and the caller shuts down). An empty address
    (an unset variable in a script) is an error, not a quiet local run in place of the cluster."""
    if address is not None and not address.strip():
        raise WwhoError("the Ray address is empty; give HOST:PORT, ray://HOST:PORT or auto, or none (None) "
                        "for a new local Ray instance")
    if address and address != "auto":
        _check_reachable(address)  # also when a session is open: a wrong address is a mistake to report
    if ray.is_initialized():
        return False
    shown = address or "a new local Ray instance"
    try:
        with _starting_ray():
            if address:
                ray.init(address=address, logging_level="WARNING", log_to_driver=False)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    except WwhoError:
        raise
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError... one line, naming it
        raise WwhoError(f"cannot connect to the Ray cluster at {shown}: {_first_line(exc)}") from None
    return True


@contextmanager
def _starting_ray() -> Iterator[None]:
    """While ``ray.init`` runs: Ray's notice that token authentication is on kept back (a line of
    Ray's own on every start, before wwho's, that asks nothing of the user of a command), and its
    failure on a command line that is not UTF-8 explained: Ray sends the process's command line
    to its cluster as UTF-8, and a file name in another encoding stopped the start with a bare
    encoding error."""
    notice = logging.getLogger("ray._private.authentication.authentication_token_setup")
    level = notice.level
    notice.setLevel(logging.ERROR)
    # ray.init sets a SIGTERM handler of its own (sys.exit) in the process that calls it, and keeps
    # it: the command's "wwho: terminated" and a program's own handler are put back after it.
    main = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    except UnicodeEncodeError as exc:
        text = exc.object if isinstance(exc.object, str) else ""
        first, last = text.rfind(" ", 0, exc.start) + 1, text.find(" ", exc.end)
        word = os.fsencode(text[first:last if last >= 0 else len(text)]).decode("utf-8", "backslashreplace")
        raise WwhoError(f"Ray cannot start a session from a command line or working directory that holds a name "
                        f"that is not UTF-8 ({word}): name the folder that holds such a file instead, or rename "
                        "it") from None
    finally:
        notice.setLevel(level)
        if main and sigterm is not None:
            signal.signal(signal.SIGTERM, sigterm)


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """A TCP connection to HOST:PORT first: Ray itself may wait a minute on an unreachable address."""
    host_port = address.split("://", 1)[-1].rstrip("/")
    host, _, port = host_port.rpartition(":")
    if not host or not port.isdigit():
        raise WwhoError(f"Ray address {address!r} is not HOST:PORT, ray://HOST:PORT or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise WwhoError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _describe(shard: Shard) -> str:
    if shard.path is None:
        return f"{shard.index} ({len(shard.texts)} texts)"
    return f"{shard.index} ({shard.path} bytes {shard.start}-{shard.end if shard.end is not None else 'end'})"
