"""``wwho serve`` against a hostile client, beyond the limits of test_serve_limits.py.

* A body the application does not read (a GET with a Content-Length of a terabyte) is not read and
  dropped as fast as it comes: the server stops reading the connection once it has answered.
* A request the server cannot parse is answered in one line of JSON and writes nothing to the console.
* ``Range`` headers are ignored: the page and its files are sent whole, never as a plain-text 400 or
  an empty 416.
* An unknown path or a wrong method is a JSON error that says what the server has.

The real ``wwho serve`` (o200k_base only) runs on 127.0.0.1 and a free port; the rest goes through
Starlette's test client with no tokenizer loaded.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time

import pytest
from conftest import O200K_FILE, real_server
from starlette.testclient import TestClient

from wwho.serve.app import create_app


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The real ``wwho serve`` on 127.0.0.1 and a free port: (port, path of its stderr)."""
    log = tmp_path_factory.mktemp("serve-hostile") / "stderr.txt"
    with real_server(log, "tiktoken:o200k_base") as (_, port):
        yield port, log


def read_answer(sock: socket.socket, timeout: float = 10) -> bytes:
    """One answer with a Content-Length, read whole from ``sock``."""
    got = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        head, sep, body = got.partition(b"\r\n\r\n")
        if sep:
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            if len(body) >= length:
                return got
        if select.select([sock], [], [], 0.2)[0]:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    return got


@pytest.mark.parametrize(
    "request_head",
    [
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 1000000000000\r\n\r\n",
        b"POST /api/tokenize HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: text/plain\r\n"
        b"Content-Length: 1000000000000\r\n\r\n",
    ],
    ids=["page", "wrong-type"],
)
def test_a_body_nobody_reads_is_not_read(server, request_head):
    """Once the answer is sent, the rest of the body is not read and dropped as fast as the client
    sends it (as uvicorn would) until the request deadline."""
    port, _ = server
    limit = 64 * 2**20  # far more than the system's socket buffers hold
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request_head % port + b"x" * 1000)
        head = read_answer(s)
        assert head.startswith((b"HTTP/1.1 200 ", b"HTTP/1.1 415 ")), head[:200]
        s.setblocking(False)
        chunk, sent, blocked_since = b"x" * 65536, 0, None
        while sent < limit:
            try:
                sent += s.send(chunk)
                blocked_since = None
            except BlockingIOError:
                blocked_since = blocked_since or time.monotonic()
                if time.monotonic() - blocked_since > 1:  # the server has stopped reading
                    break
                select.select([], [s], [], 0.1)
            except OSError:  # closed by the server: it is not reading either
                break
    assert sent < limit, f"the server read {sent:,} bytes of a body nobody reads"


def test_unparseable_requests_write_nothing_to_the_console(server):
    """Not uvicorn's 'Invalid HTTP request received.' for each, as fast as they come."""
    port, log = server
    before = log.read_text()
    for request in (
        b"GARBAGE\r\n\r\n",
        b"GET /\xff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    ) * 5:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(request)
            head, _, body = read_answer(s).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 ") and json.loads(body)["error"], head
    time.sleep(0.3)
    assert log.read_text() == before


@pytest.mark.parametrize("pipelined", [False, True], ids=["alone", "behind-a-request"])
@pytest.mark.parametrize("extra", [b"X-a: y\r\n" * 2000, b"X-a: " + b"y" * 20_000 + b"\r\n"],
                         ids=["many-lines", "long-line"])
def test_a_long_head_is_refused_however_it_arrives(server, pipelined, extra):
    """h11 bounds a head only while it is incomplete, so 2,000 header lines in one write (or behind
    another request) would be parsed, at a cost per line, and answered 200: they are refused."""
    port, _ = server
    ok = b"GET /api/tokenizers HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port
    long = b"GET /api/tokenizers HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s\r\n" % (port, extra)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        if pipelined:
            s.sendall(ok + long)
            first = read_answer(s)
            assert first.startswith(b"HTTP/1.1 200 "), first[:200]
            rest = first.partition(b"\r\n\r\n")[2]
            rest = rest[int(first.split(b"content-length: ")[1].split(b"\r\n")[0]):]
            answer = rest or read_answer(s)
        else:
            s.sendall(long)
            answer = read_answer(s)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 ") and b"x-content-type-options: nosniff" in head, head
    assert "16,384 bytes or 100 lines" in json.loads(body)["error"]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:  # a head of 100 lines is fine
        s.sendall(b"GET /api/tokenizers HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s\r\n" % (port, b"X-a: y\r\n" * 99))
        assert read_answer(s).startswith(b"HTTP/1.1 200 ")


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app([]))


@pytest.mark.parametrize("path", ["/", "/static/app.js"])
@pytest.mark.parametrize("asked", ["junk", "bytes=99999999-", "bytes=0-10", "bytes=0-1,5-9", "lines=0-1"])
def test_ranges_are_ignored_and_files_sent_whole(client, path, asked):
    """Not a plain-text 400 for a malformed range, nor an empty 416 for an unsatisfiable one."""
    whole = client.get(path)
    r = client.get(path, headers={"Range": asked, "If-Range": whole.headers["etag"]})
    assert r.status_code == 200 and r.content == whole.content
    assert r.headers["accept-ranges"] == "none"


def test_unknown_paths_and_methods_say_what_there_is(client):
    for r, status, words in (
        (client.get("/api/nothing"), 404, "Not Found: '/api/nothing'"),
        (client.get("/api/tokenize"), 405, "GET '/api/tokenize' takes POST"),
        (client.delete("/"), 405, "DELETE '/' takes GET, HEAD"),
    ):
        assert r.status_code == status and r.headers["content-type"] == "application/json"
        error = r.json()["error"]
        assert words in error and "POST /api/tokenize" in error, error


#: ``wwho serve`` with Ctrl-C pressed just after uvicorn made its server coroutine, before it ran it
#: (a window of a few instructions, hit about once in 40 tries when pressed as the address is printed).
CTRL_C_BEFORE_SERVING = """
import sys, uvicorn
from wwho.cli import main

def run(self, sockets=None):
    serving = self.serve(sockets=sockets)  # made, then dropped unstarted by the interrupt
    raise KeyboardInterrupt

uvicorn.Server.run = run
sys.exit(main(["serve", "--port", "0", "--tokenizer", "tiktoken:o200k_base"]))
"""


def test_ctrl_c_before_uvicorn_serves_is_one_line():
    """Not Python's 'coroutine 'Server.serve' was never awaited' warning, two more lines."""
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    env = dict(os.environ, WWHO_TIKTOKEN_FILE=str(O200K_FILE))
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_BEFORE_SERVING], capture_output=True, text=True, env=env, timeout=120
    )
    err = [line for line in done.stderr.splitlines() if not line.startswith("wwho serve: ")]
    assert done.returncode == 130 and err == ["wwho: interrupted"], done.stderr


@pytest.mark.parametrize("version, status, words", [
    (b"HTTP/9.9", 505, "speaks HTTP/1.1 and HTTP/1.0, not HTTP/9.9"),
    (b"HTTP/2.0", 505, "not HTTP/2.0"),
    (b"HTTP/1.7", 505, "not HTTP/1.7"),
    (b"HTTP/1.0", 200, None),
    (b"HTTP/1.1", 200, None),
])
def test_only_http_1_0_and_1_1_are_answered(server, version, status, words):
    """h11 reads any ``HTTP/d.d`` as its own: HTTP/9.9 and HTTP/2.0 requests are not answered as
    HTTP/1.1 ones but get a one-line JSON 505."""
    port, log = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /api/tokenizers %s\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % (version, port))
        head, _, body = read_answer(s).partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == str(status).encode(), head
    if words:
        assert words in json.loads(body)["error"]
    assert "Traceback" not in log.read_text()


def test_an_empty_host_is_named_as_such(server):
    """``Host:`` with no name does not get the message for a missing Host."""
    port, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /api/tokenizers HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n")
        head, _, body = read_answer(s).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 421 ") and "not to Host ''" in json.loads(body)["error"], (head, body)


def test_the_page_is_served_when_nobody_reads_standard_output(tmp_path):
    """`wwho serve | true` (or a closed log pipe) exited 0 before serving, without a word: the line
    with its address met a broken pipe. The line goes to standard error then, and the page is served."""
    import time
    import urllib.request

    from wwho.bytelevel import ByteBPE

    ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2").save(tmp_path / "bytes")
    read, write = os.pipe()
    os.close(read)  # nobody reads standard output
    with open(tmp_path / "err", "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "wwho", "serve", "--port", "0", "--tokenizer",
                                 str(tmp_path / "bytes")], stdout=write, stderr=err)
    os.close(write)
    try:
        deadline = time.monotonic() + 90
        while "http://" not in (tmp_path / "err").read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        said = (tmp_path / "err").read_text()
        assert proc.poll() is None, (proc.returncode, said)
        url = said.split("wwho serve: ", 2)[2].split()[0]
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
