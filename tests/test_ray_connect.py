"""Joining a Ray cluster and importing Ray (``wwho.scale.ray_counter``): bounded, one line each.

``--engine ray --address`` at a port that accepts TCP and never answers must end within a bound,
without Ray's C++ log lines, and at once on Ctrl-C; a Ray whose import raises something other than
``ImportError`` (a protobuf mismatch) is one line, not a traceback. No
cluster is started here: the "clusters" are sockets of this process that accept and stay silent,
or answer the HTTP/2 greeting and then stay silent (ray.init itself then waits), or speak HTTP/1.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import one_line_error, wwho_command

from wwho.errors import WwhoError
from wwho.scale import ray_counter

#: The empty SETTINGS frame a gRPC server sends first.
SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


@contextlib.contextmanager
def listener(answer: bytes | None = None, *, close: bool = False):
    """A port on 127.0.0.1 that accepts every connection and sends ``answer`` (if any), then nothing
    (or closes it, with ``close``); yields (port, accepted: an Event set at the first connection)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    accepted, stop = threading.Event(), threading.Event()
    conns: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            if answer:
                with contextlib.suppress(OSError):
                    conn.sendall(answer)
            if close:
                conn.close()
            else:
                conns.append(conn)
            accepted.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join(5)
        for conn in conns:
            conn.close()
        server.close()


def _corpus(tmp_path: Path) -> Path:
    text = tmp_path / "si.txt"
    text.write_text("ශ්‍රී ලංකාව\n" * 50, encoding="utf-8")
    return text


def _train(tmp_path: Path, address: str, **env) -> subprocess.Popen:
    environ = {**os.environ, "RAY_ADDRESS": "", **env}
    return subprocess.Popen([*wwho_command(), "train", "--kind", "sgpe", "--vocab-size", "600", "--quiet",
                             "--engine", "ray", "--address", address, "-o", str(tmp_path / "out"),
                             str(_corpus(tmp_path))], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environ)


@pytest.mark.parametrize(("answer", "close", "said"), [
    (None, False, "accepts connections but did not answer within 1.5 s"),
    (b"HTTP/1.0 400 Bad Request\r\n\r\n", False, "answered 'HTTP/1.0 400 Bad Req..."),
    (None, True, "closed the connection without answering"),
], ids=["silent", "http1", "closes"])
def test_a_port_that_is_not_ray_is_one_line_at_once(answer, close, said):
    with listener(answer, close=close) as (port, _):
        address = f"127.0.0.1:{port}"
        t0 = time.monotonic()
        with pytest.raises(WwhoError) as err:
            ray_counter._check_reachable(address, 1.5)
        assert time.monotonic() - t0 < 5
    line = str(err.value)
    assert address in line and said in line and "\n" not in line and "ray start --head" in line


def test_the_wait_is_bounded_by_wwho_ray_timeout(monkeypatch):
    monkeypatch.setenv(ray_counter.TIMEOUT_ENV, "2.5")
    assert ray_counter.join_seconds() == 2.5
    for bad in ("abc", "0", "-1", "nan", "1e9"):
        monkeypatch.setenv(ray_counter.TIMEOUT_ENV, bad)
        with pytest.raises(WwhoError, match="WWHO_RAY_TIMEOUT=.*expected seconds"):
            ray_counter.join_seconds()
    monkeypatch.delenv(ray_counter.TIMEOUT_ENV)
    assert ray_counter.join_seconds() == ray_counter.JOIN_SECONDS


class _HangingRay:
    """A stand-in for ``ray`` whose ``init`` waits as Ray's did on such a port (inside C++, where
    neither a deadline nor a Ctrl-C reached it), writing a C++ log line to descriptor 2."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def is_initialized(self) -> bool:
        return False

    def init(self, **options) -> None:
        os.write(2, b"[2026-01-01 00:00:00,000 W 1 1] rpc_client.h:153: Failed to connect to GCS\n")
        self.release.wait(30)


def test_a_join_that_hangs_ends_at_the_deadline_without_rays_log_lines(capfd):
    stand_in = _HangingRay()
    with listener(SETTINGS) as (port, _):
        t0 = time.monotonic()
        with pytest.raises(WwhoError) as err:
            ray_counter.connect(stand_in, f"127.0.0.1:{port}", None, timeout=1.0)
        took = time.monotonic() - t0
    stand_in.release.set()
    assert took < 4
    line = str(err.value)
    assert f"127.0.0.1:{port} did not let this process join within 1 s" in line and "WWHO_RAY_TIMEOUT" in line
    assert "rpc_client" not in capfd.readouterr().err


def test_what_ray_says_while_it_joins_is_shown_after_a_join_that_succeeds(capfd):
    class Joins:
        def is_initialized(self):
            return False

        def init(self, **options):
            os.write(2, b"a note of Ray's\n")

    with listener(SETTINGS) as (port, _):
        assert ray_counter.connect(Joins(), f"127.0.0.1:{port}", None, timeout=5) is True
    assert "a note of Ray's" in capfd.readouterr().err


@pytest.mark.parametrize("error", [TypeError("Descriptors cannot be created directly.\nmore"),
                                   ImportError("No module named 'grpc'", name="grpc")])
def test_a_ray_whose_import_fails_is_one_line_naming_it(tmp_path, monkeypatch, error):
    broken = tmp_path / "ray"
    broken.mkdir()
    (broken / "__init__.py").write_text(f"raise {type(error).__name__}({str(error)!r}"
                                        + (", name='grpc')" if isinstance(error, ImportError) else ")"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ray", raising=False)
    with pytest.raises(WwhoError) as err:
        ray_counter.import_ray()
    line = str(err.value)
    assert "\n" not in line and "the installed ray cannot be imported" in line
    assert f"{type(error).__name__}: {str(error).splitlines()[0]}" in line


def test_a_ray_older_than_the_floor_is_refused_naming_both_versions(tmp_path, monkeypatch):
    old = tmp_path / "ray"
    old.mkdir()
    (old / "__init__.py").write_text("__version__ = '2.5.0'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ray", raising=False)
    with pytest.raises(WwhoError, match=r"needs Ray 2\.9 or later, and Ray 2\.5\.0 is installed"):
        ray_counter.import_ray()
    assert ray_counter.MIN_RAY == (2, 9)
    pin = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert 'ray = ["ray>=2.9"]' in pin  # the floor is the extra's


def test_cli_a_broken_ray_is_one_line(tmp_path):
    broken = tmp_path / "site" / "ray"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise TypeError('Descriptors cannot be created directly')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run([*wwho_command(), "train", "--kind", "sgpe", "--vocab-size", "600", "--quiet", "--engine",
                           "ray", "-o", str(tmp_path / "out"), str(_corpus(tmp_path))], capture_output=True, text=True,
                          env=env, timeout=120)
    line = one_line_error(done)
    assert "ray cannot be imported: TypeError: Descriptors cannot be created directly" in line


def _real_ray():
    return pytest.importorskip("ray", reason="Ray is not installed (pip install 'wwho[ray]')")


def test_cli_a_silent_port_is_one_line_within_the_timeout(tmp_path):
    _real_ray()
    with listener() as (port, _):
        t0 = time.monotonic()
        proc = _train(tmp_path, f"127.0.0.1:{port}", WWHO_RAY_TIMEOUT="2")
        try:
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert time.monotonic() - t0 < 30
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    line = one_line_error(done)
    assert f"127.0.0.1:{port} accepts connections but did not answer within 2 s" in line


@pytest.mark.parametrize("answer", [None, SETTINGS], ids=["silent", "ray-init-waits"])
def test_cli_ctrl_c_while_joining_is_one_line_and_130_at_once(tmp_path, answer):
    """Silent: the probe waits; SETTINGS: the probe passes and the real ray.init waits."""
    _real_ray()
    with listener(answer) as (port, accepted):
        proc = _train(tmp_path, f"127.0.0.1:{port}", WWHO_RAY_TIMEOUT="60")
        try:
            assert accepted.wait(60), "wwho never connected"
            time.sleep(1.0 if answer else 0.3)  # into ray.init's wait, or the probe's
            proc.send_signal(signal.SIGINT)
            t0 = time.monotonic()
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert time.monotonic() - t0 < 5, err
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["wwho: interrupted"], err


class _RecordingRay:
    """A stand-in for ``ray`` that records how ``init`` was called."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def is_initialized(self) -> bool:
        return False

    def init(self, **options) -> None:
        self.calls.append(options)


def test_no_address_starts_a_new_local_instance_never_joins_one_running(monkeypatch):
    """With a cluster already running on the machine, ray.init() without an address would join it
    (silently, or refusing --workers with a garbled message)."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    ray = _RecordingRay()
    assert ray_counter.connect(ray, None, 2) is True
    assert ray.calls and ray.calls[0]["address"] == "local" and ray.calls[0]["num_cpus"] == 2


def test_ray_address_in_the_environment_is_joined_as_an_address_given(monkeypatch):
    """With RAY_ADDRESS set (job submission sets it) and no --address, Ray's own default reads it and
    waits without bound, deaf to Ctrl-C. It is checked and joined within the bound, as --address is."""
    with listener(None, close=True) as (port, _):
        monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
        ray = _RecordingRay()
        t0 = time.monotonic()
        with pytest.raises(WwhoError, match=f"127.0.0.1:{port}.*closed the connection without answering"):
            ray_counter.connect(ray, None, 2, timeout=2)
        assert time.monotonic() - t0 < 5 and ray.calls == []


@pytest.mark.parametrize("address", [6379, b"127.0.0.1:6379", ["127.0.0.1:6379"]])
def test_an_address_that_is_no_str_is_a_typed_error(address):
    from wwho.errors import WrongTypeError

    with pytest.raises(WrongTypeError, match="the Ray address must be a str"):
        ray_counter.connect(_RecordingRay(), address, 2)
