"""``wwho serve`` against hostile clients and pages (issue 27, items 7-9).

* Strict JSON: deep nesting, numbers, nested objects, duplicate keys, NaN, other encodings are
  one-line 4xx, refused where the parser meets them.
* Names, Host and Origin: no local path reaches the page; on loopback, only loopback Host names are
  answered (DNS rebinding), and an Origin, when sent, must be the server itself.
* Bounded work: a worst-case text sends at most ``max_tokens`` tokens; the worker runs requests in a
  fair order by cost between clients (the cheapest first between clients that had nothing waiting),
  refuses quickly (429/503) when full, and stops a request that runs too long.
* A load test: the real ``wwho serve`` on 127.0.0.1 (an ephemeral port) while hostile clients flood it
  with large requests they never read, dribble headers and bodies a byte a second; honest clients'
  small requests must be answered within seconds. Loopback only, a fixed number of connections, and
  it stops by itself in well under a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import select
import signal
import socket
import statistics
import threading
import time
import urllib.error
import urllib.request
from collections import Counter

import pytest
from conftest import DATA, O200K_FILE, real_server
from starlette.testclient import TestClient

from wwho.eval_specs import Evaluated

LLAMA3 = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466"  # one emoji ZWJ sequence, 7 code points
WORST = (FAMILY * 3000)[:20_000]  # byte-level tokenizers give 1.5 to 3 tokens per code point
MAX_TOKENS = 40_000  # Limits().max_tokens


@pytest.fixture(scope="module")
def loaded():
    from wwho.serve.tokenizers import load_tokenizers

    if not (O200K_FILE.is_file() and LLAMA3.is_file()):
        pytest.skip(f"{O200K_FILE} or {LLAMA3} is absent")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
        return load_tokenizers(["tiktoken:o200k_base", str(LLAMA3)])


@pytest.fixture(scope="module")
def client(loaded):
    from wwho.serve.app import create_app

    return TestClient(create_app(loaded), raise_server_exceptions=False)


def error_of(response, status):
    assert response.status_code == status, response.text
    assert "\n" not in response.text.rstrip("\n")
    body = response.json()
    assert set(body) == {"error"} and body["error"]
    return body["error"]


def post_raw(client, body: bytes):
    return client.post("/api/tokenize", content=body, headers={"content-type": "application/json"})


# -- item 9: every bad body is a one-line 4xx ------------------------------------------------------------

@pytest.mark.parametrize(("body", "words"), [
    (b"[" * 150_000 + b"]" * 150_000, "array inside a value"),
    (b'{"text": "a", "tokenizers": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "array inside a value"),
    # (deep nesting needs a key a level: refused for its many strings before it is parsed)
    (b'{"text": ' + b'{"a":' * 40_000 + b'"b"' + b"}" * 40_001, "holds 40,002 strings or more"),
    # a list of many short strings holding "[": a scan for arrays outside strings before the refusal
    # would hold the event loop for a time that grows with the body
    (b'{"text": "a", "tokenizers": [' + b", ".join([b'"["'] * 60_000) + b"]}", "holds 60,003 strings or more"),
    # an unclosed string of escaped quotes: a regex for the array count that retries at every quote
    # would take minutes for a body this size, or need Python 3.11's possessive quantifiers
    (b'[["' + b'\\"' * 100_000, "array inside a value"),
    (b'{"text": "a", "x": ' + b"7" * 200_000 + b"}", "a number (7777777777777777777"),
    (b'{"text": "a", "x": 1.' + b"5" * 200_000 + b"}", "a number (1.555555555555555555"),
    # costly to parse whole (a float each, an object each): refused at the first
    (b"[" + b"1e-400," * 40_000 + b"1]", "a number (1e-400)"),
    (b"[" + b"{}," * 100_000 + b"{}]", "an object inside a value"),
    (b'{"text": "a", "tokenizers": [{"k": "v"}]}', "an object inside a value"),
    (b'{"text": "a", "text": "b"}', "the key 'text' twice"),
    (b'{"text": "a", "x": NaN}', "NaN, which is not JSON"),
    (b'{"text": "a", "x": -Infinity}', "-Infinity, which is not JSON"),
    ('{"text": "a"}'.encode("utf-16"), "not UTF-8"),
])
def test_bad_bodies_are_one_line_400s(client, body, words):
    t0 = time.perf_counter()
    msg = error_of(post_raw(client, body), 400)
    assert words in msg
    assert time.perf_counter() - t0 < 5


def test_the_real_server_logs_no_traceback_for_bad_bodies(server):
    port, log = server
    for body in (b"[" * 150_000 + b"]" * 150_000, b'{"text": ' + b"9" * 200_000 + b"}"):
        got = raw_exchange(port, request_bytes(port, body))
        head, _, rest = got.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 "), got[:300]
        assert rest.count(b"\n") <= 1 and json.loads(rest)["error"]
    assert "Traceback" not in log.read_text(), log.read_text()


def test_a_client_that_leaves_mid_body_is_dropped_without_a_log(server):
    """Such a client does not make the server log a ``ClientDisconnect`` traceback."""
    port, log = server
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(request_bytes(port, b'{"text": "' + b"a" * 5000 + b'"}')[:-3000])
    time.sleep(0.5)
    assert ask(port, "still here")[0] == 200
    assert "Traceback" not in log.read_text() and "Exception" not in log.read_text(), log.read_text()


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_is_one_line_and_does_not_wait_for_a_client(tmp_path, presses):
    """One Ctrl-C does not wait for a client that sent headers and no body until its body's time
    limit (10 s), where a second Ctrl-C meanwhile would print uvicorn's traceback of the request."""
    log = tmp_path / "stderr.txt"
    with real_server(log, "tiktoken:o200k_base", LLAMA3) as (proc, port), socket.create_connection(("127.0.0.1", port)) as stalled:
        stalled.sendall(request_bytes(port, b'{"text": "abc"}')[:-5])
        time.sleep(0.5)
        t0 = time.monotonic()
        for _ in range(presses):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.3)
        rc = proc.wait(timeout=30)
        took = time.monotonic() - t0
    err = log.read_text().splitlines()
    assert rc == 130 and err[-1] == "wwho: interrupted", err
    assert [line for line in err if not line.startswith("wwho serve: ")] == ["wwho: interrupted"], err
    assert took < 5, took


def test_an_ignored_ctrl_c_is_ignored_as_by_every_verb(tmp_path):
    """Started with SIGINT ignored (a background job of a shell that is not interactive), the server
    does not stop on one and exit 0 without a word."""
    log = tmp_path / "stderr.txt"
    with real_server(log, "tiktoken:o200k_base", ignore_sigint=True) as (proc, port):
        assert ask(port, "serving")[0] == 200  # (uvicorn's handlers are in place once it answers)
        proc.send_signal(signal.SIGINT)
        time.sleep(1.5)
        assert proc.poll() is None and ask(port, "still here")[0] == 200
        proc.terminate()
        assert proc.wait(timeout=30) == 143
    assert log.read_text().splitlines()[-1] == "wwho: terminated"


# -- item 8: names only, Host and Origin -------------------------------------------------------------------

def test_no_local_path_reaches_the_page(client, loaded):
    folder = str(LLAMA3.parent)
    listed = client.get("/api/tokenizers")
    assert [t["name"] for t in listed.json()["tokenizers"]] == ["tiktoken:o200k_base", LLAMA3.name]
    unknown = client.post("/api/tokenize", json={"text": "a", "tokenizers": ["nope"]})
    answer = client.post("/api/tokenize", json={"text": "ශ්‍රී"})
    for response in (listed, unknown, answer):
        assert folder not in response.text and str(DATA) not in response.text


def test_a_tokenizer_error_does_not_show_its_path(loaded):
    from wwho.serve.app import create_app
    from wwho.serve.tokenizers import Loaded

    spec = str(DATA / "private" / "broken.json")

    def broken(text):
        raise RuntimeError(f"cannot read {spec}: also /home/someone/.cache/x and C:\\Users\\x\\y")
    bad = Loaded(spec, "test", Evaluated(spec, broken, lambda ids: "", lambda i: False, 1))
    data = TestClient(create_app([bad])).post("/api/tokenize", json={"text": "a"}).json()
    assert data["results"] == [{"tokenizer": "broken.json", "kind": "test",
                                "error": "RuntimeError: cannot read broken.json: also … and …"}]


def test_on_loopback_only_loopback_names_are_answered(loaded):
    from wwho.serve.app import create_app
    from wwho.serve.middleware import loopback_hosts

    app = create_app(loaded, hosts=loopback_hosts(8000))
    assert {"tok.lan", "tok.lan:8000"} <= loopback_hosts(8000, names=["TOK.lan"])  # --allow-host on loopback
    assert not {"", ":8000"} & loopback_hosts(8000, names=[""])  # (an empty Host is no name to answer)
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "LOCALHOST:8000", "localhost", "127.0.0.1"):
        assert TestClient(app, base_url=f"http://{host}").get("/api/tokenizers").status_code == 200, host
    for host in ("rebound.example:8000", "rebound.example", "localhost:8001", "127.0.0.2:8000", "localhost.:8000"):
        c = TestClient(app, base_url=f"http://{host}")
        assert "answers only to localhost" in error_of(c.get("/api/tokenizers"), 421), host
        error_of(c.post("/api/tokenize", json={"text": "a"}), 421)
        error_of(c.get("/"), 421)
    ok = TestClient(app, base_url="http://localhost:8000")
    assert ok.post("/api/tokenize", json={"text": "a"}, headers={"Origin": "http://localhost:8000"}).status_code == 200
    for origin in ("http://rebound.example:8000", "http://127.0.0.1:8000", "null", "https://localhost:8000"):
        msg = error_of(ok.post("/api/tokenize", json={"text": "a"}, headers={"Origin": origin}), 403)
        assert "another site's page" in msg


def test_any_host_when_not_on_loopback_but_still_same_origin(loaded):
    from wwho.serve.app import create_app

    c = TestClient(create_app(loaded, hosts=None), base_url="http://192.0.2.7:8000")
    assert c.get("/api/tokenizers").status_code == 200
    error_of(c.post("/api/tokenize", json={"text": "a"}, headers={"Origin": "http://elsewhere.example"}), 403)


def test_off_loopback_only_ip_addresses_and_the_machines_names_are_answered(loaded):
    """On a non-loopback address, answering any ``Host`` would let a page that rebinds its own name to
    this machine's address (DNS rebinding) use the server from a visitor's browser. As ``wwho serve
    --host 0.0.0.0`` makes it: IP addresses,
    the machine's own names and ``--allow-host`` names only."""
    import socket

    from wwho.serve.app import create_app
    from wwho.serve.middleware import served_hosts

    app = create_app(loaded, hosts=served_hosts(8000, ["tok.lan"]), ip_literals=8000)
    for host in ("192.0.2.7:8000", "10.0.0.1", "[2001:db8::1]:8000", "[::1]", "localhost:8000", "TOK.lan:8000",
                 f"{socket.gethostname()}:8000"):
        assert TestClient(app, base_url=f"http://{host}").get("/api/tokenizers").status_code == 200, host
    for host in ("rebound.example:8000", "rebound.example", "192.0.2.7.rebound.example", "tok.lan.evil:8000",
                 "192.0.2.7:99", "[2001:db8::1]:99"):
        msg = error_of(TestClient(app, base_url=f"http://{host}").get("/api/tokenizers"), 421)
        assert "its IP addresses and own names (wwho serve --allow-host NAME adds one)" in msg, host


# -- item 7: bounded output, and the worker ----------------------------------------------------------------

def test_a_worst_case_text_sends_at_most_max_tokens(client, loaded):
    r = client.post("/api/tokenize", json={"text": WORST})
    assert r.status_code == 200
    data = r.json()
    limit = MAX_TOKENS
    shown = [len(x["tokens"]["id"]) for x in data["results"]]
    assert sum(shown) <= limit
    assert all(x["truncated"] and x["count"] > x["shown"] for x in data["results"])
    assert len(r.content) < 60 * limit
    # the comparison covers the text as far as every row goes, no further
    compared = "".join(s["text"] for s in data["compare"])
    assert WORST.startswith(compared) and 0 < len(compared) < len(WORST)
    for x in data["results"]:
        assert "".join(x["tokens"]["text"]).startswith(compared)
    from wwho.serve.limits import Limits

    assert Limits().max_tokens == MAX_TOKENS


class FakeRequest:
    """What :meth:`Worker.run` uses of a request: ``receive``, which returns when the client leaves."""

    def __init__(self) -> None:
        self.left = asyncio.Event()

    async def receive(self):
        await self.left.wait()
        return {"type": "http.disconnect"}


def blocked_job(gate: threading.Event, result="first"):
    def job(stop):
        gate.wait(10)
        return result
    return job


def test_the_cheapest_waiting_request_runs_next():
    from wwho.serve.limits import Limits
    from wwho.serve.worker import Worker

    async def main():
        worker, gate, order = Worker(Limits()), threading.Event(), []

        def job(name):
            def run(stop):
                order.append(name)
                return name
            return run
        first = asyncio.ensure_future(worker.run(blocked_job(gate), cost=5, client="a", large=False,
                                                 request=FakeRequest()))
        await asyncio.sleep(0.05)
        waiting = [asyncio.ensure_future(worker.run(job(name), cost=cost, client=name, large=False,
                                                    request=FakeRequest()))
                   for name, cost in (("big", 20_000), ("bigger", 40_000), ("small", 10))]
        await asyncio.sleep(0.05)
        gate.set()
        assert await asyncio.gather(first, *waiting) == ["first", "big", "bigger", "small"]
        assert order == ["small", "big", "bigger"]
    asyncio.run(main())


def test_a_full_queue_refuses_the_request_tagged_last_at_once():
    """Fair by cost: a client's second request is tagged after its first, so when more work waits than
    the queue holds, a new client's request takes the place of another client's second, and the same
    client's third is refused at once."""
    from wwho.serve.limits import Limits
    from wwho.serve.refusals import Busy
    from wwho.serve.worker import REQUEST_COST, Worker

    async def main():
        limits = Limits(queue=2, max_chars=1000)  # 2,002 of work may wait
        assert limits.queue_cost == 2002 and REQUEST_COST == 100
        worker, gate = Worker(limits), threading.Event()
        running = asyncio.ensure_future(worker.run(blocked_job(gate), cost=5, client="a", large=False,
                                                   request=FakeRequest()))
        await asyncio.sleep(0.05)
        queued = [asyncio.ensure_future(worker.run(lambda stop, k=k: k, cost=900, client="b", large=False,
                                                   request=FakeRequest())) for k in (1, 2)]
        await asyncio.sleep(0.05)  # 2,000 waiting
        t0 = time.perf_counter()
        with pytest.raises(Busy) as refused:  # b's third: tagged after its two, and 2,200 would wait
            await worker.run(lambda stop: "no", cost=100, client="b", large=False, request=FakeRequest())
        assert refused.value.status_code == 503 and refused.value.headers["Retry-After"]
        assert time.perf_counter() - t0 < 0.5
        other = asyncio.ensure_future(worker.run(lambda stop: "other", cost=900, client="c", large=False,
                                                 request=FakeRequest()))
        await asyncio.sleep(0.05)
        assert queued[1].done() and queued[1].exception().status_code == 503  # b's second gave way
        assert not other.done()
        gate.set()
        assert await asyncio.gather(running, queued[0], other) == ["first", 1, "other"]
    asyncio.run(main())


def test_a_flood_of_cheap_requests_does_not_starve_a_costlier_one():
    """If the cheapest waiting request always went next and a full queue refused anything costlier
    than what it held, a few addresses sending empty texts as fast as they are answered would keep
    every other client's text waiting until it was refused (503)."""
    from wwho.serve.limits import Limits
    from wwho.serve.worker import Worker

    async def main():
        worker, gate, order = Worker(Limits(queue=8)), threading.Event(), []
        running = asyncio.ensure_future(worker.run(blocked_job(gate), cost=1, client="f0", large=False,
                                                   request=FakeRequest()))
        await asyncio.sleep(0.05)
        stop = asyncio.Event()

        async def flood(client):  # four requests of an empty text at all times, each sent again once answered
            async def one():
                while not stop.is_set():
                    try:
                        order.append(await worker.run(lambda s: client, cost=1, client=client, large=False,
                                                      request=FakeRequest()))
                    except Exception:
                        await asyncio.sleep(0.001)
            await asyncio.gather(*(one() for _ in range(4)))
        floods = [asyncio.ensure_future(flood(f"f{k}")) for k in range(1, 4)]
        await asyncio.sleep(0.05)
        honest = asyncio.ensure_future(worker.run(lambda s: "honest", cost=2_000, client="h", large=False,
                                                  request=FakeRequest()))
        flood_before = []
        honest.add_done_callback(lambda _: flood_before.append(len(order)))
        await asyncio.sleep(0.05)
        gate.set()
        assert await asyncio.wait_for(honest, 5) == "honest"
        stop.set()
        await asyncio.gather(running, *floods)
        # it ran after a bounded share of the flood (its own cost's worth of the flood's requests), and
        # the flood went on being served
        assert flood_before[0] < 100 and len(order) > flood_before[0], (flood_before, len(order))

    asyncio.run(main())


def test_one_client_has_a_few_large_requests_at_most():
    from wwho.serve.limits import Limits
    from wwho.serve.refusals import Busy
    from wwho.serve.worker import Worker

    async def main():
        worker, gate = Worker(Limits(per_client=2)), threading.Event()
        mine = [asyncio.ensure_future(worker.run(blocked_job(gate), cost=9, client="a", large=True,
                                                 request=FakeRequest())) for _ in range(2)]
        await asyncio.sleep(0.05)
        with pytest.raises(Busy) as refused:
            await worker.run(lambda stop: "no", cost=9, client="a", large=True, request=FakeRequest())
        assert refused.value.status_code == 429 and "texts of more than 1,000 characters" in refused.value.detail
        others = [asyncio.ensure_future(worker.run(lambda stop, r=r: r, cost=9, client=c, large=large,
                                                   request=FakeRequest()))
                  for r, (c, large) in enumerate([("b", True), ("a", False)])]
        gate.set()
        assert await asyncio.gather(*mine, *others) == ["first", "first", 0, 1]
        assert await worker.run(lambda stop: "again", cost=9, client="a", large=True, request=FakeRequest()) == "again"
    asyncio.run(main())


def test_one_client_cannot_fill_the_queue_with_cheap_requests():
    """One address must not keep the queue full of one-character requests, where every other client's
    text, costlier than those, would be refused with 503."""
    from wwho.serve.limits import Limits
    from wwho.serve.refusals import Busy
    from wwho.serve.worker import Worker

    async def main():
        worker, gate = Worker(Limits(per_client_requests=3, queue=4)), threading.Event()
        mine = [asyncio.ensure_future(worker.run(blocked_job(gate), cost=1, client="a", large=False,
                                                 request=FakeRequest())) for _ in range(3)]
        await asyncio.sleep(0.05)
        with pytest.raises(Busy) as refused:
            await worker.run(lambda stop: "no", cost=1, client="a", large=False, request=FakeRequest())
        assert refused.value.status_code == 429 and "3 requests waiting or running" in refused.value.detail
        other = asyncio.ensure_future(worker.run(lambda stop: "other", cost=500, client="b", large=False,
                                                 request=FakeRequest()))
        await asyncio.sleep(0.05)
        assert not other.done()  # queued, not refused: the queue still has room
        gate.set()
        assert await asyncio.gather(*mine, other) == ["first"] * 3 + ["other"]
        assert await worker.run(lambda stop: "again", cost=1, client="a", large=False, request=FakeRequest()) == "again"
    asyncio.run(main())


def test_a_request_that_runs_too_long_is_stopped_and_holds_the_thread_until_it_stops():
    from wwho.serve.limits import Limits
    from wwho.serve.refusals import Busy
    from wwho.serve.worker import Worker

    async def main():
        worker, events = Worker(Limits(work_seconds=0.2)), []

        def long_job(stop):
            while not stop.wait(0.01):
                pass
            time.sleep(0.2)  # a step that cannot be interrupted
            events.append("long stopped")
            raise RuntimeError("stopped")

        def next_job(stop):
            events.append("next ran")
            return "next"
        t0 = time.perf_counter()
        long = asyncio.ensure_future(worker.run(long_job, cost=5, client="a", large=False, request=FakeRequest()))
        await asyncio.sleep(0.05)
        after = asyncio.ensure_future(worker.run(next_job, cost=5, client="b", large=False, request=FakeRequest()))
        with pytest.raises(Busy) as refused:
            await long
        assert refused.value.status_code == 503 and "took more than 0.2 seconds" in refused.value.detail
        assert 0.15 < time.perf_counter() - t0 < 1.5
        assert await after == "next"
        assert events == ["long stopped", "next ran"]
    asyncio.run(main())


def test_waiting_too_long_or_leaving_drops_the_request():
    from wwho.serve.limits import Limits
    from wwho.serve.refusals import Busy, ClientGone
    from wwho.serve.worker import Worker

    async def main():
        worker, gate, ran = Worker(Limits(wait_seconds=0.3)), threading.Event(), []
        first = asyncio.ensure_future(worker.run(blocked_job(gate), cost=5, client="a", large=False,
                                                 request=FakeRequest()))
        await asyncio.sleep(0.05)
        leaving = FakeRequest()
        gone = asyncio.ensure_future(worker.run(lambda stop: ran.append("gone"), cost=5, client="b", large=False,
                                                request=leaving))
        late = asyncio.ensure_future(worker.run(lambda stop: ran.append("late"), cost=5, client="c", large=False,
                                                request=FakeRequest()))
        await asyncio.sleep(0.05)
        leaving.left.set()
        with pytest.raises(ClientGone):
            await gone
        with pytest.raises(Busy) as refused:
            await late
        assert refused.value.status_code == 503 and "busy for 0.3 seconds" in refused.value.detail
        gate.set()
        assert await first == "first" and ran == []
    asyncio.run(main())


def test_a_cancelled_request_does_not_keep_the_worker():
    from wwho.serve.limits import Limits
    from wwho.serve.worker import Worker

    async def main():
        worker, gate = Worker(Limits()), threading.Event()
        first = asyncio.ensure_future(worker.run(blocked_job(gate), cost=5, client="a", large=False,
                                                 request=FakeRequest()))
        await asyncio.sleep(0.05)
        waiting = asyncio.ensure_future(worker.run(lambda stop: "never", cost=5, client="b", large=False,
                                                   request=FakeRequest()))
        await asyncio.sleep(0.05)
        waiting.cancel()  # e.g. the server shutting down
        gate.set()
        assert await first == "first"
        after = worker.run(lambda stop: "after", cost=5, client="c", large=False, request=FakeRequest())
        assert await asyncio.wait_for(after, 5) == "after"
    asyncio.run(main())


# -- the load test: the real server, hostile and honest clients ---------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The real ``wwho serve`` on 127.0.0.1 and a free port: (port, path of its stderr)."""
    log = tmp_path_factory.mktemp("serve-limits") / "stderr.txt"
    with real_server(log, "tiktoken:o200k_base", LLAMA3) as (_, port):
        yield port, log


def raw_exchange(port: int, request: bytes) -> bytes:
    """Send ``request`` on a new connection and read the answer: until its Content-Length is in
    (a kept-alive connection stays open), the server closes, or 5 s pass."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request)
        _, got = closed_after(s, time.monotonic(), time.monotonic() + 5, enough=_complete)
    return got


def _complete(answer: bytes) -> bool:
    head, blank, body = answer.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:[ \t]*(\d+)[ \t]*\r?$", head)
    return bool(blank) and length is not None and len(body) >= int(length.group(1))


def test_the_real_server_answers_only_to_loopback_names(server):
    """DNS rebinding: a page on rebound.example whose name now resolves to 127.0.0.1 sends Host:
    rebound.example; it must not read the tokenizer list nor make the server work."""
    port, _ = server
    ok = raw_exchange(port, f"GET /api/tokenizers HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"
                      .encode())
    assert ok.startswith(b"HTTP/1.1 200 ") and b'"name":"ggml-vocab-llama-bpe.gguf"' in ok
    assert str(LLAMA3.parent).encode() not in ok
    rebound = raw_exchange(port, f"GET /api/tokenizers HTTP/1.1\r\nHost: rebound.example:{port}\r\n\r\n".encode())
    assert rebound.startswith(b"HTTP/1.1 421 ") and b"llama" not in rebound
    work = raw_exchange(port, request_bytes(port, b'{"text": "a"}', host=f"rebound.example:{port}"))
    assert work.startswith(b"HTTP/1.1 421 ")
    other_page = raw_exchange(port, request_bytes(port, b'{"text": "a"}')
                              .replace(b"\r\n\r\n", b"\r\nOrigin: http://rebound.example\r\n\r\n", 1))
    assert other_page.startswith(b"HTTP/1.1 403 ")


def request_bytes(port: int, body: bytes, host: str | None = None) -> bytes:
    return (f"POST /api/tokenize HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def ask(port: int, text: str, timeout: float = 15) -> tuple[int, float]:
    """One honest request on a new connection: its status and how long the answer took."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/tokenize", data=json.dumps({"text": text}).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            res.read()
            status = res.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except OSError:
        status = 0
    return status, time.perf_counter() - t0


def closed_after(sock: socket.socket, t0: float, until: float, *,
                 enough=lambda got: False) -> tuple[float | None, bytes]:
    """Seconds from ``t0`` until the server closed ``sock`` (None: still open at ``until``, or when
    ``enough(what it sent)`` stopped the reading first), and what it sent."""
    got = b""
    while time.monotonic() < until and not enough(got):
        if select.select([sock], [], [], 0.2)[0]:
            try:
                chunk = sock.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                return time.monotonic() - t0, got
            got += chunk
    return None, got


def answer_status(sock: socket.socket) -> int | str:
    """The status of the answer waiting unread on ``sock`` ("reset": dropped by the server unread)."""
    sock.setblocking(False)
    try:
        head = sock.recv(12)
    except BlockingIOError:
        return "none"
    except OSError:
        return "reset"
    return int(head[9:12]) if head.startswith(b"HTTP/1.1 ") else "closed"


def test_hostile_clients_do_not_stall_honest_ones(server):
    """40 connections from 40 loopback addresses send 20,000-character emoji texts and never read the
    answers, twice; 20 connections send their headers a byte a second, 5 their body; meanwhile 3 honest
    clients ask for small texts one after another. Every honest request must be answered (200) within
    a few seconds, and the slow connections must be closed by the server."""
    port, log = server
    sockets: list[socket.socket] = []
    slow_headers: list[socket.socket] = []
    slow_bodies: list[socket.socket] = []
    try:
        assert ask(port, "warm up ශ්‍රී क्ष")[0] == 200
        big = request_bytes(port, json.dumps({"text": WORST}).encode())

        def flood() -> None:
            for _ in range(2):
                for k in range(40):
                    s = socket.socket()
                    s.bind((f"127.0.0.{10 + k}", 0))
                    s.connect(("127.0.0.1", port))
                    s.sendall(big)  # never read
                    sockets.append(s)
                time.sleep(4)

        t0 = time.monotonic()
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /api/tokenize HTTP/1.1\r\n")
            slow_headers.append(s)
        for _ in range(5):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(request_bytes(port, b"")[:-len(b"0\r\n\r\n")] + b"1000\r\n\r\n")  # and no body yet
            slow_bodies.append(s)
        stop = threading.Event()

        def dribble() -> None:  # one byte a second on every slow connection while it is open
            while not stop.wait(1):
                for s in slow_headers + slow_bodies:
                    try:
                        s.send(b"x" if s in slow_headers else b" ")
                    except OSError:
                        pass

        latencies: list[tuple[int, float]] = []

        def honest(k: int) -> None:
            n = 0
            while not stop.is_set():
                latencies.append(ask(port, f"honest {k} {n}: ශ්‍රී लंका 🏏"))
                n += 1
                time.sleep(0.1)

        threads = [threading.Thread(target=f, args=a, daemon=True)
                   for f, a in [(flood, ()), (dribble, ())] + [(honest, (k,)) for k in range(3)]]
        for t in threads:
            t.start()
        limits_end = t0 + 10 + 5  # header_seconds / body_seconds, and time to spare
        header_closed = [closed_after(s, t0, limits_end + 3) for s in slow_headers]
        body_closed = [closed_after(s, t0, limits_end + 3) for s in slow_bodies]
        stop.set()
        for t in threads:
            t.join(40)
        flood_answers = Counter(answer_status(s) for s in sockets)
    finally:
        for s in sockets + slow_headers + slow_bodies:
            s.close()
    statuses = [s for s, _ in latencies]
    times = sorted(t for _, t in latencies)
    closed = sorted(t for t, _ in header_closed + body_closed if t is not None)
    print(f"\nhonest requests: {len(times)}, median {statistics.median(times or [0]):.3f} s, "
          f"max {max(times or [0]):.3f} s; slow connections closed by the server: {len(closed)} of "
          f"{len(header_closed) + len(body_closed)}, after {min(closed or [0]):.1f}-{max(closed or [0]):.1f} s; "
          f"the flood's answers: {dict(flood_answers)}")
    assert statuses and set(statuses) == {200}, statuses
    assert len(times) >= 20 and times[-1] < 5, times
    assert all(t is not None and t < limits_end - t0 for t, _ in header_closed), header_closed
    for t, got in body_closed:
        assert t is not None and t < limits_end - t0 and got.startswith(b"HTTP/1.1 408 "), (t, got)
    # the flood was served as far as it was admitted (200) and refused quickly beyond that
    assert flood_answers[200] and flood_answers[503] + flood_answers[429] >= 20, flood_answers
    assert "Traceback" not in log.read_text(), log.read_text()


@contextlib.contextmanager
def guarded_server(limits):
    """uvicorn with the connection guard of ``wwho serve`` and ``limits``, in a thread (127.0.0.1): its port."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from wwho.serve.connections import guarded_protocol

    async def hello(request):
        return JSONResponse({"hello": 1})

    async def big(request):  # more than the system's socket buffers hold
        return Response(b"x" * 64_000_000)

    async def echo(request):
        return Response(await request.body())

    async def slow(request):  # an answer that takes a while: its connection is busy meanwhile
        await asyncio.sleep(2)
        return JSONResponse({"slow": 1})
    app = Starlette(routes=[Route("/", hello), Route("/big", big), Route("/echo", echo, methods=["POST"]),
                            Route("/slow", slow)])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, http=guarded_protocol(limits), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_headers_sent_slowly_are_cut_off():
    from wwho.serve.limits import Limits

    with guarded_server(Limits(header_seconds=0.5)) as port, socket.create_connection(("127.0.0.1", port)) as s:
        t0 = time.monotonic()
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        for _ in range(10):  # a byte every 0.2 s: never idle, never done
            time.sleep(0.2)
            try:
                s.send(b"a")
            except OSError:
                break
        took, got = closed_after(s, t0, t0 + 5)
        assert took is not None and 0.4 < took < 2.5
        assert got.startswith(b"HTTP/1.1 408 ") and json.loads(got.partition(b"\r\n\r\n")[2])["error"]
        with socket.create_connection(("127.0.0.1", port)) as silent:  # sends nothing: closed, nothing said
            t0 = time.monotonic()
            took, got = closed_after(silent, t0, t0 + 5)
        assert took is not None and took < 2.5 and got == b""


def test_too_many_connections_close_the_oldest_idle_ones():
    from wwho.serve.limits import Limits

    with guarded_server(Limits(max_connections=5)) as port:
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
        time.sleep(0.2)
        got = raw_exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert got.startswith(b"HTTP/1.1 200 ")
        closed = [closed_after(s, time.monotonic(), time.monotonic() + 0.3)[0] is not None for s in idle]
        for s in idle:
            s.close()
    assert closed == [True] * 4 + [False] * 4  # 5 open at most, the new one included


def test_one_address_opening_connections_closes_its_own_not_another_clients():
    """Opening one too many must not close the connection that has waited longest for a whole request,
    whoever it is, or an address opening connections as fast as it can would close another client's
    connection whose request has not been read yet (answering nothing)."""
    from wwho.serve.limits import Limits

    with guarded_server(Limits(max_connections=5)) as port:
        honest = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0))
        time.sleep(0.1)  # open, its request not read yet: the oldest waiting
        flood = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
        time.sleep(0.2)
        honest.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        took, got = closed_after(honest, time.monotonic(), time.monotonic() + 5)
        closed = [closed_after(s, time.monotonic(), time.monotonic() + 0.3)[0] is not None for s in flood]
        for s in [honest, *flood]:
            s.close()
    assert got.startswith(b"HTTP/1.1 200 "), got
    assert closed == [True] * 4 + [False] * 4  # the flood's oldest made room


def test_an_address_keeping_every_connection_busy_makes_room_for_another():
    """Were connections whose requests are being answered never closed for a new one, an address
    sending one cheap request after another on 256 connections would close nearly every newcomer
    instead. The address with the most connections open gives up its oldest one, busy or not."""
    from wwho.serve.limits import Limits

    with guarded_server(Limits(max_connections=4)) as port:
        busy = []
        for _ in range(4):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")  # its answer comes in 2 s
            busy.append(s)
        time.sleep(0.3)
        with socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0), timeout=5) as honest:
            t0 = time.monotonic()
            honest.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            took, got = closed_after(honest, t0, t0 + 5)
        closed = [closed_after(s, time.monotonic(), time.monotonic() + 0.3)[0] is not None for s in busy]
        for s in busy:
            s.close()
    assert got.startswith(b"HTTP/1.1 200 ") and took is not None and took < 1.5, (took, got)
    assert closed == [True, False, False, False]  # the busy address's oldest made room


def test_the_connections_of_one_client_are_counted_by_address_and_ipv6_network():
    from types import SimpleNamespace

    from wwho.serve.connections import _address

    def one(host):
        return _address(SimpleNamespace(client=(host, 5000)))
    assert one("127.0.0.2") == "127.0.0.2" and one("::ffff:10.0.0.7") == "10.0.0.7"
    assert one("2001:db8::1") == one("2001:db8::ffff:1") == "2001:db8::/64" != one("2001:db8:0:1::1")
    assert _address(SimpleNamespace(client=None)) == ""


def test_accepted_connections_send_without_waiting_for_acknowledgements():
    """Made with protocol 0, the listening socket would make asyncio leave Nagle's algorithm on for
    the connections it accepts, and every answer after the first on a kept-alive connection wait for
    the client's delayed acknowledgement (about 40 ms)."""
    from wwho.cli.serve import bind

    sock, _ = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]

    async def main():
        seen = asyncio.get_running_loop().create_future()

        async def accepted(reader, writer):
            seen.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()
        server = await asyncio.start_server(accepted, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            nodelay = await asyncio.wait_for(seen, 5)
            writer.close()
        return nodelay
    assert asyncio.run(main()) == 1


def test_connections_that_never_send_their_body_make_room_for_new_ones():
    """A connection that has sent its headers does not count as being answered, never closed for a
    new one: otherwise clients sending headers and no body could hold every place, and a new
    connection would be closed at once."""
    from wwho.serve.limits import Limits

    with guarded_server(Limits(max_connections=4)) as port:
        stalled = []
        for _ in range(4):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
            stalled.append(s)
            time.sleep(0.05)
        time.sleep(0.2)
        got = raw_exchange(port, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                                 b"Connection: close\r\n\r\nhello")
        closed = [closed_after(s, time.monotonic(), time.monotonic() + 0.3)[0] is not None for s in stalled]
        for s in stalled:
            s.close()
    assert got.startswith(b"HTTP/1.1 200 ") and got.endswith(b"hello"), got
    assert closed == [True, False, False, False]  # the one that had waited longest for its body


def test_a_request_that_is_not_http_gets_one_line_of_json():
    from wwho.serve.limits import Limits

    with guarded_server(Limits()) as port:
        for request in (b"GARBAGE\r\n\r\n", b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
                        b"GET / HTTP/1.1\r\n\r\n"):
            head, _, body = raw_exchange(port, request).partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 400 ") and b"application/json" in head, head
            assert body.count(b"\n") == 1 and "not an HTTP request" in json.loads(body)["error"]


def test_an_answer_the_client_does_not_read_is_dropped():
    from wwho.serve.limits import Limits

    with guarded_server(Limits(write_seconds=0.5)) as port, socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(3)  # not reading
        took, got = closed_after(s, time.monotonic(), time.monotonic() + 10)
    assert took is not None and got.startswith(b"HTTP/1.1 200 ") and len(got) < 64_000_000


def test_connections_that_do_not_read_their_answers_make_room_for_new_ones():
    """Pipelined requests whose answers a client never reads (a tiny receive window) do not count as
    being answered, or 256 such connections would shut everyone out for the write limit."""
    from wwho.serve.limits import Limits

    pipelined = b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n" * 3
    with guarded_server(Limits(max_connections=4, write_seconds=30)) as port:
        stalled = []
        for _ in range(4):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
            s.connect(("127.0.0.1", port))
            s.sendall(pipelined)
            stalled.append(s)
            time.sleep(0.3)  # its answer fills the buffers: the server stops writing to it
        got = raw_exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        for s in stalled:
            s.close()
    assert got.startswith(b"HTTP/1.1 200 "), got


def test_a_request_sent_before_the_client_closes_its_side_is_answered(server):
    """A client that sends its request and then shuts its side of the connection down
    (``shutdown(SHUT_WR)``) gets its answer: the end of its stream is not taken for a client that has
    gone, with the request dropped."""
    port, _ = server
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(request_bytes(port, json.dumps({"text": "half closed"}).encode()))
        s.shutdown(socket.SHUT_WR)
        took, got = closed_after(s, time.monotonic(), time.monotonic() + 10)
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), got[:300]
    assert json.loads(body)["chars"] == len("half closed") and took is not None  # answered, then closed


def test_an_upgrade_header_is_answered_without_log_lines(server):
    port, log = server
    before = log.read_text()
    for _ in range(20):
        raw_exchange(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           b"Connection: close\r\n\r\n" % port)
    time.sleep(0.3)
    new = log.read_text()[len(before):]
    assert "upgrade" not in new.lower() and "WebSocket" not in new, new[:500]


def test_a_chunked_body_is_refused_and_the_connection_closed(server):
    # 300,000 one-byte chunks held the event loop for a second; Content-Length with Transfer-Encoding
    # was read as chunked and the connection kept (RFC 9112: it must close).
    port, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        t0 = time.monotonic()
        s.sendall(b"POST /api/tokenize HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" % port + b"1\r\n \r\n" * 30_000)
        took, got = closed_after(s, t0, t0 + 10)
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 411 "), head
    assert "chunked bodies are not read" in json.loads(body)["error"] and took is not None and took < 2


def test_the_addresses_of_one_ipv6_network_are_one_client_for_every_limit(loaded, monkeypatch):
    """Were the connection limit to count an IPv6 client by its /64 network and the per-client request
    limits and the fair queue by its whole address, one client could spread its requests over its
    network's addresses. Every limit takes ``client_key``."""
    from types import SimpleNamespace

    from wwho.serve.app import create_app
    from wwho.serve.connections import _address
    from wwho.serve.worker import Worker

    seen = []

    async def run(self, job, *, cost, client, large, request):
        seen.append(client)
        return b'{"results": []}'

    monkeypatch.setattr(Worker, "run", run)
    app = create_app(loaded, hosts=None)
    hosts = ["2001:db8::1", "2001:db8::ffff:2", "2001:db8:0:1::1", "::ffff:192.0.2.7", "192.0.2.7"]
    for host in hosts:
        response = TestClient(app, client=(host, 5000)).post("/api/tokenize", json={"text": "a"})
        assert response.status_code == 200, response.text
    assert seen == ["2001:db8::/64", "2001:db8::/64", "2001:db8:0:1::/64", "192.0.2.7", "192.0.2.7"]
    assert [_address(SimpleNamespace(client=(host, 5000))) for host in hosts] == seen


def test_addresses_holding_one_idle_connection_each_give_way_to_a_newcomer():
    """256 idle sockets from 256 loopback addresses (any local process may use every 127.x.y.z) must
    not shut every other client out by closing the new connection on a tie: the longest waiting of
    the tied addresses' connections makes room."""
    from wwho.serve.limits import Limits

    with guarded_server(Limits(max_connections=4)) as port:
        idle = [socket.create_connection(("127.0.0.1", port), source_address=(f"127.0.1.{k}", 0)) for k in range(1, 5)]
        time.sleep(0.2)
        answered = []
        for k in range(3):
            with socket.create_connection(("127.0.0.1", port), source_address=(f"127.0.2.{k + 1}", 0),
                                          timeout=5) as honest:
                honest.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                answered.append(closed_after(honest, time.monotonic(), time.monotonic() + 5)[1][:12])
        closed = [closed_after(s, time.monotonic(), time.monotonic() + 0.3)[0] is not None for s in idle]
        for s in idle:
            s.close()
    assert answered == [b"HTTP/1.1 200"] * 3, answered
    assert closed == [True, False, False, False]  # the one that had waited longest made room


def test_whole_requests_pipelined_before_a_half_close_are_all_answered(server):
    """Three POSTs in one packet, then ``shutdown(SHUT_WR)``: three answers, not one or two."""
    port, _ = server
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"".join(request_bytes(port, json.dumps({"text": f"text {k}"}).encode()) for k in range(3)))
            s.shutdown(socket.SHUT_WR)
            took, got = closed_after(s, time.monotonic(), time.monotonic() + 10)
        assert got.count(b"HTTP/1.1 200 ") == 3 and took is not None, got[-300:]  # all answered, then closed


def test_an_answer_sent_before_the_body_arrived_says_the_connection_closes(server):
    """A 415 sent after the headers, before the body, must not invite keep-alive on a connection that
    is never read again, where the client's body and next request would get a reset after seconds."""
    port, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /api/tokenize HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: text/plain\r\n"
                  b"Content-Length: 100000\r\n\r\n" % port)
        took, got = closed_after(s, time.monotonic(), time.monotonic() + 10,
                                 enough=lambda got: b"\r\n\r\n" in got)
    head = got.partition(b"\r\n\r\n")[0].lower()
    assert head.startswith(b"http/1.1 415 ") and b"\r\nconnection: close" in head, head


@pytest.mark.parametrize("length", [b"13", b"0000000000000013", b"0" * 18 + b"13"])
def test_a_content_length_is_judged_by_its_value_not_its_digits(server, length):
    """A valid Content-Length of 16 or more digits (leading zeros) was a 413, "larger than" the limit."""
    port, _ = server
    body = b'{"text": "a"}'
    assert len(body) == 13
    got = raw_exchange(port, b"POST /api/tokenize HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %s\r\nConnection: close\r\n\r\n%s" % (port, length, body))
    assert got.startswith(b"HTTP/1.1 200 "), got[:300]


@pytest.mark.parametrize("version", [b"HTTP/1.1", b"HTTP/1.0"])
def test_a_body_sent_without_a_content_length_is_told_that(server, version):
    """Without a Content-Length (nor chunked framing) the body is empty by HTTP's rules: a 411 saying
    so, not "request body is not JSON", which blamed JSON the server never saw."""
    port, _ = server
    got = raw_exchange(port, b"POST /api/tokenize %s\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                             b"Connection: close\r\n\r\n{\"text\": \"a\"}" % (version, port))
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 411 "), head
    assert "send the body with a Content-Length" in json.loads(body)["error"]


def test_a_forwarded_for_header_does_not_change_the_client_every_limit_counts():
    """uvicorn takes the client's address from ``X-Forwarded-For`` when the client connects from
    loopback, unless told not to: a local process could pass as any client and use up that client's
    share of the per-client limits (or escape its own). The server's configuration, run as ``wwho
    serve`` runs it, must give the application the socket's peer."""
    import threading

    import uvicorn

    from wwho.cli.serve import server_config
    from wwho.serve.connections import guarded_protocol
    from wwho.serve.limits import Limits

    seen = []

    async def app(scope, receive, send):
        seen.append(scope["client"][0])
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(server_config(uvicorn, app, guarded_protocol(Limits())))
    server.install_signal_handlers = lambda: None  # (uvicorn < 0.29; later ones install none off the main thread)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        for forwarded in (b"X-Forwarded-For: 10.9.9.9\r\n", b"Forwarded: for=10.9.9.9\r\n"):
            got = raw_exchange(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: close\r\n\r\n" % forwarded)
            assert got.startswith(b"HTTP/1.1 200 "), got[:300]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
    assert seen == ["127.0.0.1", "127.0.0.1"]
