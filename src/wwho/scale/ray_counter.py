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
* **Joining a cluster is bounded** (:func:`connect`): a TCP connection first (at most 5 s), then
  the HTTP/2 greeting that every gRPC server (Ray's GCS, its Ray Client server) answers at once:
  a port that takes the connection and says nothing (``ray.init`` would wait there for minutes,
  printing Ray's C++ log lines, deaf to a Ctrl-C meanwhile) or
  answers as something else (an HTTP server) is one error line within :data:`PROBE_SECONDS`.
  ``ray.init`` itself then runs on a thread of its own while this one waits, at most
  ``WWHO_RAY_TIMEOUT`` seconds (default :data:`JOIN_SECONDS`), so that a Ctrl-C ends the wait at
  once; what Ray writes to the standard error meanwhile (its C++ logging, which no setting of
  Ray's silences before it is connected) is held back, shown after a join that succeeds and
  dropped after one that fails, whose one line says what to check. A join that runs out of time
  leaves that thread waiting inside Ray until the process ends. (``RAY_USE_TLS`` set: the greeting
  is TLS's, and only the TCP check is made.)
* **Ray itself**: 2.9 or later (:data:`MIN_RAY`, the floor ``pyproject.toml`` pins); an older one,
  or one whose import fails (a protobuf that does not match it raises ``TypeError``), is one line
  naming it (:func:`import_ray`).
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
import re
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from wwho import _core
from wwho.background import start_thread
from wwho.corpus import CorpusStats
from wwho.errors import WrongTypeError, WwhoError, brief, printable
from wwho.progress import progress_bar
from wwho.scale.counts import MAX_COUNT
from wwho.scale.shards import CountOptions, Shard, count_shard

KILL_ONCE_ENV = "WWHO_TEST_KILL_WORKER_ONCE"
#: The oldest Ray wwho runs on: the floor of the ``ray`` extra in ``pyproject.toml`` (``ray>=2.9``).
MIN_RAY = (2, 9)
#: The environment variable that bounds joining a cluster, in seconds (:func:`join_seconds`).
TIMEOUT_ENV = "WWHO_RAY_TIMEOUT"
#: How long ``ray.init`` may take to join a cluster at an address, by default (seconds).
JOIN_SECONDS = 60.0
#: How long a port may take to answer the HTTP/2 greeting (any gRPC server answers in milliseconds).
PROBE_SECONDS = 10.0
#: How long the TCP connection to the address may take.
CONNECT_SECONDS = 5.0
#: What the error lines of a join say to check.
_WHERE = ("give the address of the head node's GCS (HOST:PORT as `ray start --head` prints it, port 6379 by "
          "default) or ray://HOST:10001 for Ray Client")
#: The HTTP/2 client preface and an empty SETTINGS frame: a gRPC server answers with SETTINGS.
_GREETING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def import_ray():
    """``ray``, or a one-line error: how to install it, why an installed one cannot be imported
    (its own exception, whatever its type: a protobuf that does not match Ray raises ``TypeError``),
    or that it is older than :data:`MIN_RAY`."""
    try:
        import ray
    except ImportError as exc:
        if exc.name == "ray":
            raise WwhoError("engine 'ray' needs Ray: pip install 'wwho[ray]'") from None
        raise _unusable(exc) from None
    except Exception as exc:  # noqa: BLE001 -- whatever an installed Ray's import raises is said in one line
        raise _unusable(exc) from None
    version = str(getattr(ray, "__version__", ""))
    found = re.match(r"(\d+)\.(\d+)", version)
    if found and (int(found[1]), int(found[2])) < MIN_RAY:
        need = ".".join(map(str, MIN_RAY))
        raise WwhoError(f"engine 'ray' needs Ray {need} or later, and Ray {printable(version)} is installed: "
                        f"pip install -U 'ray>={need}'")
    return ray


def _unusable(exc: BaseException) -> WwhoError:
    return WwhoError(f"engine 'ray': the installed ray cannot be imported: {type(exc).__name__}: "
                     f"{printable(_first_line(exc))} (reinstall it: pip install -U 'wwho[ray]')")


def join_seconds() -> float:
    """The most seconds joining a cluster may take: ``WWHO_RAY_TIMEOUT``, else :data:`JOIN_SECONDS`."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return JOIN_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 7 * 86400:  # (nan fails too)
        raise WwhoError(f"{TIMEOUT_ENV}={printable(brief(raw, 40))}: expected seconds, a number above 0 and "
                        f"at most a week (unset: {JOIN_SECONDS:g})")
    return value


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


def connect(ray, address: str | None, workers: int | None, *, timeout: float | None = None) -> bool:
    """Use this process's Ray session, join ``address``, or start a local instance with ``workers``
    CPUs; ``True`` when this call started or joined (and the caller shuts down). An empty address
    (an unset variable in a script) is an error, not a quiet local run in place of the cluster.
    Joining an address takes at most ``timeout`` seconds (default: :func:`join_seconds`)."""
    if address is not None and not isinstance(address, str):
        raise WrongTypeError(f"the Ray address must be a str (HOST:PORT, ray://HOST:PORT or auto), not "
                             f"{type(address).__name__}")
    if address is None:
        # Ray's own default reads RAY_ADDRESS (job submission sets it), or attaches to a cluster
        # already running on this machine, and then waits without bound, deaf to Ctrl-C: the
        # variable is joined as an address given, and otherwise a new local instance is started.
        address = os.environ.get("RAY_ADDRESS", "").strip() or None
    if address is not None and not address.strip():
        raise WwhoError("the Ray address is empty; give HOST:PORT, ray://HOST:PORT or auto, or none (None) "
                        "for a new local Ray instance")
    if address:
        timeout = join_seconds() if timeout is None else timeout
    if address and address != "auto":
        _check_reachable(address, timeout)  # also when a session is open: a wrong address is a mistake to report
    if ray.is_initialized():
        return False
    shown = address or "a new local Ray instance"
    try:
        with _starting_ray():
            if address:
                _join_within(ray, address, timeout)
            else:
                ray.init(address="local", num_cpus=workers, include_dashboard=False, logging_level="WARNING",
                         log_to_driver=False)
    except WwhoError:
        raise
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError... one line, naming it
        raise WwhoError(f"cannot connect to the Ray cluster at {shown}: {_first_line(exc)}") from None
    return True


def _join_within(ray, address: str, timeout: float) -> None:
    """``ray.init(address=...)`` on a thread of its own, waited for at most ``timeout`` seconds on
    this one (where a Ctrl-C lands at once: inside Ray's C++ it waited for Ray's own retries), with
    the standard error held back meanwhile (see the module docstring)."""
    done = threading.Event()
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            ray.init(address=address, logging_level="WARNING", log_to_driver=False)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 -- handed to the waiting thread
            outcome.append(exc)
        finally:
            done.set()

    deadline = time.monotonic() + timeout
    with _held_back_stderr() as held:
        start_thread(run, name="wwho-ray-init")
        while not done.wait(max(0.0, min(0.1, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                raise WwhoError(f"the Ray cluster at {address} did not let this process join within {timeout:g} s: "
                                f"{_WHERE}, check that this machine reaches every node of it, or set "
                                f"{TIMEOUT_ENV}=SECONDS to wait longer")
        if outcome[0] is not None:
            raise outcome[0]
        held.append(True)  # joined: what Ray said is shown


@contextmanager
def _held_back_stderr() -> Iterator[list]:
    """File descriptor 2 into a temporary file for the ``with`` block (Ray's C++ logging writes there,
    not through Python); written out after it when the caller appended to the list it was given,
    else dropped. Ray's note that it set no SIGTERM handler (it runs on another thread) is left out."""
    keep: list = []
    notes = logging.getLogger("ray._private.worker")
    drop = _NoSigtermNote()
    notes.addFilter(drop)
    try:
        saved, held = os.dup(2), tempfile.TemporaryFile()
    except OSError:  # no descriptor 2 (a daemon) or none left: nothing is held back
        try:
            yield keep
        finally:
            notes.removeFilter(drop)
        return
    _flush(sys.stderr, sys.__stderr__)
    os.dup2(held.fileno(), 2)
    try:
        yield keep
    finally:
        _flush(sys.stderr, sys.__stderr__)
        os.dup2(saved, 2)
        os.close(saved)
        notes.removeFilter(drop)
        with held:
            if keep:
                held.seek(0)
                data = held.read()
                while data:
                    data = data[os.write(2, data):]


class _NoSigtermNote(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in str(record.msg)


def _flush(*streams) -> None:
    for stream in streams:
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


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


def _check_reachable(address: str, timeout: float = JOIN_SECONDS) -> None:
    """A TCP connection to HOST:PORT first: Ray itself may wait a minute on an unreachable address.
    Then, unless Ray speaks TLS (``RAY_USE_TLS``), the HTTP/2 greeting that any gRPC server answers at
    once: a port that accepts connections and says nothing (or something else) is no Ray."""
    host_port = address.split("://", 1)[-1].rstrip("/")
    host, _, port = host_port.rpartition(":")
    if not host or not port.isdigit():
        raise WwhoError(f"Ray address {address!r} is not HOST:PORT, ray://HOST:PORT or auto")
    try:
        sock = socket.create_connection((host.strip("[]"), int(port)), timeout=min(CONNECT_SECONDS, timeout))
    except OSError as exc:
        raise WwhoError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None
    with sock:
        if os.environ.get("RAY_USE_TLS", "0").strip().lower() in ("1", "true"):
            return
        wait = min(PROBE_SECONDS, timeout)
        reply = b""
        try:
            sock.settimeout(wait)
            sock.sendall(_GREETING)
            while len(reply) < 9:
                chunk = sock.recv(9 - len(reply))
                if not chunk:
                    break
                reply += chunk
            if len(reply) == 9 and reply[3] != 0x04:  # not Ray: a little more of it, to show
                sock.settimeout(0.2)
                reply += sock.recv(32)
        except TimeoutError:
            if not reply:
                raise WwhoError(f"{address} accepts connections but did not answer within {wait:g} s, as no Ray "
                                f"cluster does: {_WHERE}") from None
        except ConnectionError:  # closed (reset) by the other side, our greeting unread: no answer either
            pass
        except OSError as exc:
            raise WwhoError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None
    if len(reply) < 9 or reply[3] != 0x04:  # the server's first frame must be SETTINGS (RFC 9113 3.4)
        said = (f"answered {printable(brief(reply.decode('latin-1'), 24))}" if reply
                else "closed the connection without answering")
        raise WwhoError(f"{address} {said}, which no Ray cluster does (it speaks gRPC): {_WHERE}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _describe(shard: Shard) -> str:
    if shard.path is None:
        return f"{shard.index} ({len(shard.texts)} texts)"
    return f"{shard.index} ({shard.path} bytes {shard.start}-{shard.end if shard.end is not None else 'end'})"
