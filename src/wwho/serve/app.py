"""The web application of ``wwho serve``: the page, its static files, and the JSON API (Starlette).

| route | what |
|---|---|
| ``GET /`` | the page (``static/index.html``; script and style beside it, nothing fetched from elsewhere) |
| ``GET /api/tokenizers`` | the loaded tokenizers (by name, never by path) and the request limits |
| ``POST /api/tokenize`` | ``{"text": ..., "tokenizers": [...]}`` -> every tokenizer's tokens and the comparison |

The request and response formats, limits and errors are documented in ``docs/serve.md``. Every
error is one line of JSON, ``{"error": "..."}``, with a 4xx status for a bad request, and 429 or
503 with ``Retry-After`` when the server is busy. Tokenizers are loaded once, before the server starts (:func:`load_tokenizers`).

**Bounded work.** A request's text is at most ``max_chars`` code points, and at most ``max_tokens``
tokens are laid over it and sent, shared between the tokenizers asked for. Requests run one at a
time on one worker thread (the tokenizers' caches are not shared between threads), in a fair order by
cost between client addresses (:class:`Worker`): a small text waits only for the request running, and
a flood of cheap requests holds a costlier one up by about its own cost, not until it gives up. The queue is
bounded, one client address may have only a few requests in it, and a request has a time limit while it waits and while it runs; a request whose client has
gone is dropped, and one that runs too long is stopped between two tokenizers. A refusal is
answered at once, without doing any of the work. The JSON is parsed strictly (a duplicate key, deep
nesting, a number or a nested object is a 400, refused where the parser meets it) and written on the
worker thread.

**Host and Origin.** Served on a loopback address, the app answers only requests whose ``Host`` is
a loopback name (a page elsewhere that rebinds its own name to 127.0.0.1 gets 421); on another
address, only those whose ``Host`` is an IP address, one of the machine's own names or a name the
command allows (:func:`served_hosts`: a page that rebinds its own name to this machine's address
gets 421 there too); and, on any address, only requests whose ``Origin``, when sent, is this server
(:class:`HostGuard`). The page and
its files are sent whole, whatever ``Range`` a request asks for, and every answer carries the page's
Content-Security-Policy and ``nosniff`` (:class:`EveryAnswer`).

This module does not bind sockets, parse command lines or limit connections (slow headers, stalled
writes): :mod:`wwho.cli.serve` and :mod:`wwho.serve.connections` do.
"""

from __future__ import annotations

import asyncio
import heapq
import ipaddress
import itertools
import json
import os
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wwho.errors import VocabError
from wwho.evaluate import Evaluated, load_spec
from wwho.serve.view import Encoded, TextLayout, compare, encode, fair_shares, lay_out

_SURROGATE = re.compile("[\ud800-\udfff]")
STATIC = Path(__file__).resolve().parent / "static"
#: The page loads nothing from anywhere but this server.
CSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
#: On every response (:class:`EveryAnswer`).
SAFETY_HEADERS = ((b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"))
#: What a 404 or 405 lists.
ROUTES = "the page is GET /, the API GET /api/tokenizers and POST /api/tokenize"
#: The names a loopback address answers to (with the port, or without one).
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


@dataclass(frozen=True)
class Limits:
    """What one request, one client and all clients together may cost; documented in docs/serve.md."""

    #: longest text, in code points
    max_chars: int = 20_000
    #: tokens laid over the text and sent per request, shared between the tokenizers asked for
    max_tokens: int = 40_000
    #: work waiting for the worker, in longest texts through one tokenizer (``queue * (max_chars + 1)``
    #: characters times tokenizers, :data:`REQUEST_COST` a request included); when more waits, the
    #: request tagged last in the fair order is refused. Not a count of requests: those of empty texts
    #: cost little, and a few addresses sending them cannot fill it (each needs a connection)
    queue: int = 16
    #: requests of more than ``small_chars`` code points one client address may have waiting or running
    per_client: int = 2
    small_chars: int = 1_000
    #: requests of any size one client address may have waiting or running
    per_client_requests: int = 4
    #: seconds a request may wait for the worker, and run on it
    wait_seconds: float = 10.0
    work_seconds: float = 5.0
    #: seconds to receive a request body
    body_seconds: float = 10.0
    #: connections (:mod:`wwho.serve.connections`): seconds to receive a request's headers, seconds a
    #: response may wait for the client to read, and connections open at once
    header_seconds: float = 10.0
    write_seconds: float = 10.0
    max_connections: int = 256

    @property
    def queue_cost(self) -> int:
        """The most work that may wait (see ``queue``)."""
        return self.queue * (self.max_chars + 1)

    @property
    def max_body_bytes(self) -> int:
        """The largest request body: JSON may escape a code point as 12 bytes (a surrogate pair)."""
        return 12 * self.max_chars + 65_536


@dataclass
class Loaded:
    """A tokenizer the server offers: ``spec`` as given on the command line (never sent), ``name`` what the
    API and the page call it: a SPEC without its path, a path's last part (see :func:`load_tokenizers`)."""

    spec: str
    kind: str
    tokenizer: Evaluated
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            self.name = _public_name(self.spec)


def _public_name(spec: str, parts: int = 1) -> str:
    """``spec`` without its local path: ``tiktoken:NAME`` as it is, a path as its last ``parts`` parts
    (one more for generic file names such as ``tokenizer.json``), ``hf:``/``spm:`` kept before it."""
    kind, sep, rest = spec.partition(":")
    if sep and kind == "tiktoken":
        return spec
    prefix, path = (f"{kind}:", rest) if sep and kind in ("hf", "spm") else ("", spec)
    names = Path(os.path.abspath(path)).parts[1:]  # not resolved: a link keeps its own name
    if names and names[-1] in ("tokenizer.json", "vocab.json"):
        parts += 1
    return prefix + ("/".join(names[-parts:]) or "tokenizer")


class BadRequest(HTTPException):
    """A client error answered with one line of JSON."""


class Busy(HTTPException):
    """The server will not do this request now (429: this client has too many; 503: everyone has):
    one line of JSON with ``Retry-After``."""

    def __init__(self, status: int, detail: str, retry_after: int = 2) -> None:
        super().__init__(status, detail, headers={"Retry-After": str(retry_after)})


class _ClientGone(Exception):
    """The client closed its connection: nothing is sent."""


class _Stopped(Exception):
    """A running request was told to stop (it took too long, or its client has gone)."""


def load_tokenizers(specs: Sequence[str], *, pattern: str | None = None) -> list[Loaded]:
    """Load every SPEC (as ``wwho eval`` does, ``pattern`` the pre-tokenizer of a file that names
    none); a duplicate or unloadable SPEC is a :class:`VocabError`.

    Names are SPECs without paths: two files of one name are told apart by their folders."""
    if len(set(specs)) != len(specs):
        raise VocabError(f"a tokenizer is given twice: {', '.join(s for s in specs if specs.count(s) > 1)}")
    out = []
    for spec in specs:
        kind, sep, _ = spec.partition(":")
        if not (sep and kind in ("tiktoken", "hf", "spm")):
            from wwho.loading import detect_kind

            kind = detect_kind(spec)
        out.append(Loaded(spec, kind, load_spec(spec, pattern=pattern)))
    for parts in range(2, 64):  # two files of one name: their folders, as many as tell them apart
        groups: dict[str, list[Loaded]] = {}
        for t in out:
            groups.setdefault(t.name, []).append(t)
        apart = [g for g in groups.values() if len({_public_name(t.spec, 64) for t in g}) > 1]
        if not apart:
            break
        for t in itertools.chain(*apart):
            t.name = _public_name(t.spec, parts)
    names = Counter(t.name for t in out)
    seen: Counter[str] = Counter()
    for t in out:  # the same file under two spellings: numbered
        if names[t.name] > 1:
            seen[t.name] += 1
            t.name = f"{t.name} ({seen[t.name]})"
    return out


def create_app(tokenizers: Sequence[Loaded], *, limits: Limits = Limits(),
               hosts: Collection[str] | None = None, ip_literals: bool = False) -> Starlette:
    """The Starlette application serving ``tokenizers``. ``hosts``: the only ``Host`` headers answered
    (lower case, with the port where the client sends one; see :func:`loopback_hosts` and
    :func:`served_hosts`), and with ``ip_literals`` any IP address too; None: any."""
    by_name = {t.name: t for t in tokenizers}
    worker = Worker(limits)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def list_tokenizers(request: Request) -> Response:
        return JSONResponse({
            "tokenizers": [{"name": t.name, "kind": t.kind, "vocab_size": t.tokenizer.vocab_size}
                           for t in tokenizers],
            "limits": {"max_chars": limits.max_chars, "max_body_bytes": limits.max_body_bytes,
                       "max_tokens": limits.max_tokens},
        })

    async def tokenize(request: Request) -> Response:
        try:
            text, names = _parse(await _read_body(request, limits), by_name, limits)
        except ClientDisconnect:  # left before sending the whole body: nobody to answer, nothing to log
            return Response(status_code=204)
        chosen = [by_name[n] for n in names]
        client = client_key(request.client.host) if request.client else ""  # (as the connection limit counts)
        try:
            body = await worker.run(lambda stop: _tokenize(text, chosen, limits.max_tokens, stop),
                                    cost=(len(text) + 1) * max(len(chosen), 1), client=client,
                                    large=len(text) > limits.small_chars, request=request)
        except _ClientGone:
            return Response(status_code=204)
        return Response(body, media_type="application/json")

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        detail = exc.detail
        if exc.status_code == 404 and detail == "Not Found":  # Starlette's own: say what there is
            detail = f"Not Found: {_clip(request.scope['path'])!r}; {ROUTES}"
        elif exc.status_code == 405 and detail == "Method Not Allowed":
            allowed = ", ".join(sorted((exc.headers or {}).get("Allow", "").split(", ")))  # (from a set)
            detail = (f"Method Not Allowed: {_clip(request.method)} {_clip(request.scope['path'])!r} "
                      f"takes {allowed}; {ROUTES}")
        return JSONResponse({"error": detail}, status_code=exc.status_code, headers=exc.headers)

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/api/tokenizers", list_tokenizers),
            Route("/api/tokenize", tokenize, methods=["POST"]),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=[Middleware(EveryAnswer), Middleware(HostGuard, hosts=hosts, ip_literals=ip_literals)],
        exception_handlers={HTTPException: http_error},
    )
    # /api/tokenize/ got an empty 307 to http://localhost/api/tokenize (port 80 with a portless
    # Host): a JSON 404 like every other unknown path.
    app.router.redirect_slashes = False
    return app


# -- Host and Origin ------------------------------------------------------------------------------

def loopback_hosts(port: int, address: str = "127.0.0.1", names: Collection[str] = ()) -> frozenset[str]:
    """The ``Host`` headers of a server on loopback ``address``:``port``: its loopback names and
    ``names``, with the port or without it."""
    shown = f"[{address}]" if ":" in address else address
    names = {*LOOPBACK_NAMES, shown.lower(), *(n.lower() for n in names)}
    if ":" in address:  # as a browser writes it (::ffff:127.0.0.1 is [::ffff:7f00:1])
        try:
            names.add(f"[{ipaddress.ip_address(address.split('%')[0]).compressed}]")
        except ValueError:
            pass
    return frozenset(names | {f"{n}:{port}" for n in names})


def served_hosts(port: int, names: Collection[str] = ()) -> frozenset[str]:
    """The ``Host`` names, besides IP addresses, of a server on a non-loopback address: the loopback
    names, the machine's own (``socket.gethostname()`` and its fully qualified form) and ``names``,
    each with the port or without it. A DNS-rebinding page sends a name of its own site: refused."""
    own = {*LOOPBACK_NAMES, socket.gethostname(), socket.getfqdn(), *names}
    own = {n.lower() for n in own if n}
    return frozenset(own | {f"{n}:{port}" for n in own})


def _ip_literal(host: str) -> bool:
    """Whether a ``Host`` header names an IP address (``10.0.0.7``, ``[2001:db8::1]``, with a port or not)."""
    name = host[1:host.find("]")] if host.startswith("[") and "]" in host else host.rsplit(":", 1)[0]
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostGuard:
    """Refuses, before routing, a request of another HTTP version than 1.1 or 1.0 (505: h11 reads any
    ``HTTP/d.d`` as its own), one whose ``Host`` is not one of ``hosts`` (nor, with
    ``ip_literals``, an IP address) (421: a page that rebound its own name to this address) or whose
    ``Origin``, when sent, is not ``http://`` + its ``Host`` (403: another site's page). ``hosts=None``
    accepts any ``Host``."""

    def __init__(self, app: ASGIApp, hosts: Collection[str] | None, ip_literals: bool = False) -> None:
        self.app = app
        self.hosts = None if hosts is None else frozenset(h.lower() for h in hosts)
        self.ip_literals = ip_literals

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            given = headers.get("host")
            host = (given or "").lower()
            origin = headers.get("origin")
            refusal = None
            if scope.get("http_version") not in ("1.0", "1.1"):  # (h11 takes any HTTP/d.d as its own)
                refusal = 505, (f"this server speaks HTTP/1.1 and HTTP/1.0, not "
                                f"HTTP/{_clip(str(scope.get('http_version')))}")
            elif self.hosts is not None and host not in self.hosts and not (self.ip_literals and _ip_literal(host)):
                names = "its IP addresses and own names" if self.ip_literals else ", ".join(LOOPBACK_NAMES)
                refusal = 421, (f"this server answers only to {names} (wwho serve --allow-host NAME adds one), "
                                f"not to Host {_clip(host)!r}" if given is not None else "a request needs a Host header")
            elif origin is not None and origin.lower() != f"http://{host}":
                refusal = 403, f"requests from another site's page (Origin {_clip(origin)!r}) are refused"
            if refusal:
                await JSONResponse({"error": refusal[1]}, status_code=refusal[0],
                                   headers={"Connection": "close"})(scope, receive, send)
                return
        await self.app(scope, receive, send)


class EveryAnswer:
    """What every answer gets, outermost of the middleware (so refusals of :class:`HostGuard` too):

    * the page's Content-Security-Policy and ``X-Content-Type-Options: nosniff`` on every response,
      files and JSON alike: the page is the same under ``/static/index.html``, where no other site
      may frame it either, and no browser reads an error that echoes its request as anything but JSON;
    * ``Cache-Control: no-cache`` where an answer has none: the static files' URLs are the same in
      every release, so a browser asks again (a 304 if unchanged) rather than pair a new page with
      an old script;
    * files sent whole: a request's ``Range`` and ``If-Range`` are dropped. Starlette answers a
      malformed or unsatisfiable range with plain text or an empty body, not the one line of JSON
      every other error is; the files are small and nothing here asks for part of one;
    * a one-line JSON 503 for a request that a Ctrl-C stops before it was answered (its body still
      arriving, or its turn not yet come), where uvicorn would answer a plain-text 500.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if any(k in (b"range", b"if-range") for k, _ in scope["headers"]):
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k not in (b"range", b"if-range")]}
        started = False
        # Whether the request's body has been read whole: an answer sent before (a 415, a 404) leaves
        # the rest unread, and the connection is not read again (wwho.serve.connections), so the answer
        # says Connection: close instead of inviting the client's next request.
        body_read = not any(k == b"transfer-encoding" or (k == b"content-length" and v.strip(b" \t") != b"0")
                            for k, v in scope["headers"])

        async def receive_tracked() -> Message:
            nonlocal body_read
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                body_read = True
            return message

        async def send_safely(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":  # FileResponse offers ranges: not here
                started = True
                headers = [(k, b"none" if k == b"accept-ranges" else v) for k, v in message.get("headers", [])
                           if k not in (b"content-security-policy", b"x-content-type-options")]
                if not body_read and not any(k.lower() == b"connection" for k, _ in headers):
                    headers.append((b"connection", b"close"))
                if not any(k.lower() == b"cache-control" for k, _ in headers):  # the files' URLs carry no
                    headers.append((b"cache-control", b"no-cache"))  # version: an old app.js is asked again
                message = {**message, "headers": [*headers, *SAFETY_HEADERS]}
            await send(message)
        try:
            await self.app(scope, receive_tracked, send_safely)
        except asyncio.CancelledError:
            if not started:
                stopping = JSONResponse({"error": "the server is stopping; nothing was done for this request"},
                                        status_code=503, headers={"Connection": "close"})
                await stopping(scope, receive, send_safely)
            raise


def _clip(text: str, size: int = 80) -> str:
    return text if len(text) <= size else text[:size] + "…"


# -- the request body --------------------------------------------------------------------------------

async def _read_body(request: Request, limits: Limits) -> bytes:
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise BadRequest(415, f"send JSON with Content-Type: application/json (got {_clip(ctype) or 'none'!r})")
    if "transfer-encoding" in request.headers:
        # Chunked framing costs per chunk, not per byte of text (a body of one-byte chunks holds the
        # event loop); the page sends a Content-Length. Closed: the body stays unread.
        raise BadRequest(411, "send the body with a Content-Length; chunked bodies are not read",
                         {"Connection": "close"})
    # the body is left unread: the connection closes after the answer
    too_large = BadRequest(413, f"request body larger than {limits.max_body_bytes:,} bytes "
                                f"(texts are limited to {limits.max_chars:,} characters)", {"Connection": "close"})
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and (len(declared) > 15 or int(declared) > limits.max_body_bytes):
        raise too_large

    async def read() -> bytes:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limits.max_body_bytes:
                raise too_large
            chunks.append(chunk)
        return b"".join(chunks)
    try:
        return await asyncio.wait_for(read(), limits.body_seconds)
    except TimeoutError:
        raise BadRequest(408, f"the request body did not arrive within {limits.body_seconds:g} seconds",
                         {"Connection": "close"}) from None


class _Refused(ValueError):
    """A JSON value the API does not take (raised from the decoder's hooks)."""


#: What a request costs the worker besides its text, in the units of a job's cost (characters times
#: tokenizers): its layout, comparison and answer. The fair order counts it, so that requests of empty
#: texts are not free.
REQUEST_COST = 100

#: What a request body looks like, for the errors that say so.
SHAPE = '{"text": "...", "tokenizers": ["..."]}'


def _decoder_hooks() -> dict:
    """``json.loads`` hooks for one body that refuse, at the first sight, what the API never takes: a
    number, an object inside another value, a key twice. Refusing in the hook stops the parse there: a
    body of a hundred thousand numbers or empty objects costs one, not a parse of all of them on the
    event loop before any admission limit applies."""
    objects = 0

    def pairs_hook(pairs: list[tuple[str, object]]) -> dict:
        nonlocal objects
        objects += 1  # the outermost object is closed last: a second one was inside something
        if objects > 1:
            raise _Refused(f"request body has an object inside a value; expected {SHAPE}")
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    raise _Refused(f"request body has the key {_clip(key)!r} twice")
                seen.add(key)
        return out

    def number(text: str) -> float:
        raise _Refused(f"request body has a number ({_clip(text, 20)}); expected {SHAPE}")

    def constant(name: str) -> float:
        raise _Refused(f"request body has {name}, which is not JSON")

    return {"object_pairs_hook": pairs_hook, "parse_int": number, "parse_float": number,
            "parse_constant": constant}


#: A JSON string, escapes included, or the rest of the body after an unclosed quote (:func:`_parse`'s
#: count of arrays): every match succeeds where it starts, so the scan is linear in the body.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)  # (unrolled: a step per escape, not per run)


def _parse(body: bytes, by_name: dict[str, Loaded], limits: Limits) -> tuple[str, list[str]]:
    # The parser has no hook for arrays: one inside "tokenizers" (a body of nested empty arrays) would
    # be built whole on the event loop before the check below refuses it. The API's one array is
    # counted first, outside strings, by a regular expression over the bytes.
    # A body of the API's shape holds a few strings: two keys, the text, the names. One of many short
    # strings (a list of "[" strings) would cost the scan below a step per string on the event loop
    # before its refusal: they are counted in C first (a quote after a backslash counted as escaped).
    strings = (body.count(b'"') - body.count(b'\\"')) // 2
    if strings > 8 + 2 * len(by_name):
        raise BadRequest(400, f"request body holds {strings:,} strings or more; expected {SHAPE}")
    if body.count(b"[") > 1 and _JSON_STRING.sub(b"", body).count(b"[") > 1:
        raise BadRequest(400, f"request body has an array inside a value; expected {SHAPE}")
    try:
        data = json.loads(body.decode("utf-8"), **_decoder_hooks())
    except UnicodeDecodeError as exc:
        raise BadRequest(400, f"request body is not UTF-8: {exc.reason} at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        # (json's messages may end in "at": "Unterminated string starting at")
        where = f"line {exc.lineno} column {exc.colno}"
        raise BadRequest(400, f"request body is not JSON: {exc.msg.removesuffix(' at')} at {where}") from None
    except _Refused as exc:
        raise BadRequest(400, str(exc)) from None
    except RecursionError:
        raise BadRequest(400, f"request body is nested too deeply (expected {SHAPE})") from None
    if not isinstance(data, dict):
        raise BadRequest(400, f"expected a JSON object like {SHAPE}")
    unknown = sorted(set(data) - {"text", "tokenizers"})
    if unknown:
        raise BadRequest(400, f"unknown field {_clip(unknown[0])!r}; fields: text, tokenizers")
    text = data.get("text")
    if not isinstance(text, str):
        raise BadRequest(400, '"text" must be a string')
    if len(text) > limits.max_chars:
        raise BadRequest(413, f"text has {len(text):,} characters; the limit is {limits.max_chars:,}")
    lone = _SURROGATE.search(text)
    if lone:
        raise BadRequest(422, f"text has a lone surrogate U+{ord(lone.group()):04X} at character {lone.start()}")
    names = data.get("tokenizers", list(by_name))
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise BadRequest(400, '"tokenizers" must be a list of tokenizer names (see GET /api/tokenizers)')
    for n in names:
        if n not in by_name:
            raise BadRequest(422, f"unknown tokenizer {_clip(n)!r}; loaded: {', '.join(by_name)}")
    return text, list(dict.fromkeys(names))


# -- admission and the worker --------------------------------------------------------------------------

class Worker:
    """Runs jobs one at a time on one thread, in a weighted fair order between client addresses, with
    bounded waiting.

    Fair queuing by cost: each job is tagged with the cost its client has had run or queued since it
    last had nothing waiting or running, counted from where the worker's virtual time stood (the start
    tag of the job running) when it came, and the job with the lowest tag goes next. Between clients
    that have had nothing for a while, that is the cheapest job first (a small text waits only for the
    job running); a client queueing job after job waits its share, so a flood of cheap requests from a
    few addresses holds a costlier request of another up by about its own cost in work, not forever.
    :meth:`run` refuses at once (:class:`Busy`) a large job of a client that has ``per_client`` large
    jobs admitted, and any job of a client that has ``per_client_requests`` jobs admitted (429). When
    more than ``queue_cost`` of work waits, the jobs tagged last give their places up (503), the new one
    first where it is tagged last: a client with jobs queued already is tagged further on with each. A
    job waits at most ``wait_seconds`` and runs at most ``work_seconds`` (then 503); a job whose client
    disconnects is dropped while it waits and told to stop while it runs. A job that is told to stop
    keeps the thread until it does: at most one job ever runs."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wwho-serve")
        self._busy = False
        self._waiting: list[tuple[int, int, int, asyncio.Future]] = []  # a heap: (finish tag, arrival, start tag, granted)
        self._work_waiting = 0  # what the jobs waiting cost, REQUEST_COST each included
        self._arrivals = itertools.count()
        self._virtual = 0  # the start tag of the job running last
        self._finish: dict[str, int] = {}  # by client address, while it has jobs admitted: its last job's tag
        self._large: Counter[str] = Counter()  # large jobs admitted, by client address
        self._all: Counter[str] = Counter()  # all jobs admitted, by client address

    async def run(self, job, *, cost: int, client: str, large: bool, request: Request) -> bytes:
        """``job(stop)`` on the worker thread (``stop``: a :class:`threading.Event` it checks), its result."""
        limits = self.limits
        if large and self._large[client] >= limits.per_client:
            raise Busy(429, f"this client already has {limits.per_client} texts of more than "
                            f"{limits.small_chars:,} characters waiting or running; try again when they are answered")
        if self._all[client] >= limits.per_client_requests:
            raise Busy(429, f"this client already has {limits.per_client_requests} requests waiting or running; "
                            "try again when they are answered")
        gone = asyncio.ensure_future(_disconnected(request))
        counts = (self._all, self._large) if large else (self._all,)
        for count in counts:
            count[client] += 1
        try:
            await self._admit(cost, client, gone)
            return await self._work(job, gone)
        finally:
            gone.cancel()
            for count in counts:
                count[client] -= 1
                if not count[client]:
                    del count[client]
            if client not in self._all:
                self._finish.pop(client, None)  # nothing left: its next job is tagged from the present

    async def _admit(self, cost: int, client: str, gone: asyncio.Future) -> None:
        before = self._finish.get(client)
        start = max(self._virtual, before or 0)
        finish = self._finish[client] = start + cost + REQUEST_COST
        if not self._busy:
            self._busy = True
            self._virtual = start
            return
        limits = self.limits
        entry = (finish, next(self._arrivals), start, asyncio.get_running_loop().create_future())
        heapq.heappush(self._waiting, entry)
        self._work_waiting += entry[0] - entry[2]
        while self._work_waiting > limits.queue_cost:  # the jobs tagged last give their places up
            last = max(self._waiting)
            self._drop(last)
            if last is entry:
                if before is None:
                    del self._finish[client]
                else:
                    self._finish[client] = before
                raise Busy(503, "the server is busy (more requests are waiting than it does in a few seconds); "
                                "try again shortly")
            last[3].set_exception(Busy(503, "the server is busy with other requests; try again shortly"))
        granted = entry[3]
        try:
            await asyncio.wait({granted, gone}, timeout=limits.wait_seconds, return_when=asyncio.FIRST_COMPLETED)
            if granted.done():
                granted.result()  # Busy when another request took the place
                if not gone.done():
                    return
                raise _ClientGone
            if gone.done():
                raise _ClientGone
            raise Busy(503, f"the server was busy for {limits.wait_seconds:g} seconds; try again shortly")
        except BaseException:  # refused, gone, timed out, or cancelled: give up the place or the thread
            if granted.done() and not granted.cancelled() and granted.exception() is None:
                self._release()  # the thread was handed to this request: hand it on
            else:
                granted.cancel()
                self._drop(entry)
            raise

    def _drop(self, entry: tuple) -> None:
        if entry in self._waiting:
            self._waiting.remove(entry)
            heapq.heapify(self._waiting)
            self._work_waiting -= entry[0] - entry[2]

    async def _work(self, job, gone: asyncio.Future) -> bytes:
        stop = threading.Event()
        running = asyncio.get_running_loop().run_in_executor(self._executor, job, stop)
        running.add_done_callback(self._finished)  # the thread is free only when the job has returned
        try:
            await asyncio.wait({running, gone}, timeout=self.limits.work_seconds, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            stop.set()
            raise
        if running.done():
            return running.result()
        stop.set()
        if gone.done():
            raise _ClientGone
        raise Busy(503, f"the text took more than {self.limits.work_seconds:g} seconds; "
                        "try a shorter text or fewer tokenizers", retry_after=5)

    def _finished(self, running: asyncio.Future) -> None:
        if not running.cancelled():
            running.exception()  # retrieved here when nobody waits for it any more (a stopped job)
        self._release()

    def _release(self) -> None:
        while self._waiting:
            finish, _, start, granted = heapq.heappop(self._waiting)
            self._work_waiting -= finish - start
            if not granted.done():
                self._virtual = max(self._virtual, start)
                granted.set_result(None)
                return
        self._busy = False


async def _disconnected(request: Request) -> None:
    """Returns when the client has closed the connection (the body has been read: the next message
    is the disconnect)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


# -- the job ---------------------------------------------------------------------------------------

def _tokenize(text: str, chosen: Sequence[Loaded], max_tokens: int, stop: threading.Event) -> bytes:
    """The response body: every tokenizer's view (at most ``max_tokens`` tokens laid out in all) and the
    comparison, as JSON. Raises :class:`_Stopped` between two steps once ``stop`` is set."""
    def check() -> None:
        if stop.is_set():
            raise _Stopped

    t0 = time.perf_counter()
    layout = TextLayout(text)
    _ = layout.inside  # the cut structure, once for all: in no tokenizer's time
    encoded: list[Encoded | str] = []
    for t in chosen:
        check()
        try:
            encoded.append(encode(t.tokenizer, layout))
        except Exception as exc:  # one tokenizer failing on a text must not hide the others
            encoded.append(_error_text(exc, chosen))
    shares = fair_shares([e.count if isinstance(e, Encoded) else 0 for e in encoded], max_tokens)
    views, results = [], []
    for t, enc, share in zip(chosen, encoded, shares):
        check()
        if isinstance(enc, Encoded):
            try:
                view = lay_out(enc, layout, share)
            except Exception as exc:
                enc = _error_text(exc, chosen)
            else:
                views.append(view)
                shown = {k: v for k, v in view.to_json().items() if k != "tokenizer"}  # the SPEC: a path
                results.append({"tokenizer": t.name, "kind": t.kind, **shown})
                continue
        results.append({"tokenizer": t.name, "kind": t.kind, "error": enc})
    check()
    spans = compare(views, layout)
    out = {"chars": len(text), "bytes": len(layout.data), "results": results,
           "compare": [{"start": s.start, "end": s.end, "text": s.text, "agree": s.agree} for s in spans],
           "seconds": time.perf_counter() - t0}
    check()
    return json.dumps(out, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


_ABSOLUTE_PATH = re.compile(r"(?<![\w.:])(?:/|[A-Za-z]:\\)[^\s'\"]+")


def _error_text(exc: Exception, loaded: Sequence[Loaded]) -> str:
    """A tokenizer's exception as the page sees it: the SPECs' paths replaced by names, any other absolute
    path left out."""
    message = f"{type(exc).__name__}: {exc}"
    for t in sorted(loaded, key=lambda t: -len(t.spec)):
        message = message.replace(t.spec, t.name)
    return _ABSOLUTE_PATH.sub("…", message)


def client_key(host: str) -> str:
    """What counts as one client of the address ``host``, for every per-client limit (requests, large
    texts and the fair queue here; connections in :mod:`wwho.serve.connections`): an IPv6 address as its
    /64 network (one client's, as a rule: otherwise one client could spread its requests over the
    addresses of its network), an IPv4 one mapped into IPv6 as itself."""
    if ":" not in host:
        return host
    try:
        address = ipaddress.IPv6Address(host.split("%")[0])
    except ValueError:
        return host
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((address, 64), strict=False))
