"""The middleware of ``wwho serve`` (``serve/middleware.py``) called directly: the answer to a
request stopped before it was answered, and the Host names of a loopback address. The app's tests
(test_serve_app.py, test_serve_limits.py) drive it through requests."""

from __future__ import annotations

import asyncio
import json

import pytest

from wwho.serve.middleware import EveryAnswer, loopback_hosts


def test_a_request_stopped_before_its_answer_gets_a_json_503():
    """Ctrl-C: uvicorn cancels the requests still running after a second; one whose body is still
    arriving, or whose turn has not come, gets a one-line JSON 503, not uvicorn's plain-text 500."""
    async def stopped(scope, receive, send):
        raise asyncio.CancelledError

    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "method": "POST", "path": "/api/tokenize", "headers": []}
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(EveryAnswer(stopped)(scope, receive, send))
    assert sent[0]["status"] == 503
    assert (b"x-content-type-options", b"nosniff") in sent[0]["headers"]
    assert "the server is stopping" in json.loads(sent[1]["body"])["error"]


def test_the_host_a_browser_sends_for_an_ipv6_form_of_loopback_is_answered():
    """A browser writes http://[::ffff:127.0.0.1]:8000/ as [::ffff:7f00:1]:8000 in Host: the address
    the server prints must not get 421."""
    hosts = loopback_hosts(8000, "::ffff:127.0.0.1")
    assert "[::ffff:7f00:1]:8000" in hosts and "[::ffff:127.0.0.1]:8000" in hosts and "localhost:8000" in hosts
