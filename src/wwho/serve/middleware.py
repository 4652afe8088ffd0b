"""The middleware of ``wwho serve``'s application: which requests it answers at all, and what
every answer carries.

Served on a loopback address, the app answers only requests whose ``Host`` is a loopback name (a
page elsewhere that rebinds its own name to 127.0.0.1 gets 421); on another address, only those
whose ``Host`` is an IP address, one of the machine's own names or a name the command allows
(:func:`served_hosts`: a page that rebinds its own name to this machine's address gets 421 there
too); and, on any address, only requests whose ``Origin``, when sent, is this server
(:class:`HostGuard`). The page and its files are sent whole, whatever ``Range`` a request asks for,
and every answer carries the page's Content-Security-Policy and ``nosniff`` (:class:`EveryAnswer`).

This module does not route requests or read their bodies (:mod:`wwho.serve.app`,
:mod:`wwho.serve.body`), and does not limit connections (:mod:`wwho.serve.connections`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Collection

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wwho.serve.refusals import clip

#: The page loads nothing from anywhere but this server.
CSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
#: On every response (:class:`EveryAnswer`).
SAFETY_HEADERS = ((b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"))
#: The names a loopback address answers to (with the port, or without one).
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def loopback_hosts(port: int, address: str = "127.0.0.1", names: Collection[str] = ()) -> frozenset[str]:
    """The ``Host`` headers of a server on loopback ``address``:``port``: its loopback names and
    ``names``, with the port or without it."""
    shown = f"[{address}]" if ":" in address else address
    names = {*LOOPBACK_NAMES, shown.lower(), *(n.lower() for n in names if n)}
    if ":" in address:  # as a browser writes it (::ffff:127.0.0.1 is [::ffff:7f00:1])
        try:
            ip = ipaddress.ip_address(address.split("%")[0])
        except ValueError:
            pass
        else:
            names.add(f"[{ip.compressed}]")
            mapped = getattr(ip, "ipv4_mapped", None)
            if mapped is not None:  # in hex, as browsers write it (Python 3.13 writes the IPv4 form)
                high, low = divmod(int(mapped), 1 << 16)
                names.add(f"[::ffff:{high:x}:{low:x}]")
    return frozenset(names | {f"{n}:{port}" for n in names})


def served_hosts(port: int, names: Collection[str] = ()) -> frozenset[str]:
    """The ``Host`` names, besides IP addresses, of a server on a non-loopback address: the loopback
    names, the machine's own (``socket.gethostname()`` and its fully qualified form) and ``names``,
    each with the port or without it. A DNS-rebinding page sends a name of its own site: refused."""
    own = {*LOOPBACK_NAMES, socket.gethostname(), socket.getfqdn(), *names}
    own = {n.lower() for n in own if n}
    return frozenset(own | {f"{n}:{port}" for n in own})


def _ip_literal(host: str, port: int) -> bool:
    """Whether a ``Host`` header names an IP address (``10.0.0.7``, ``[2001:db8::1]``), with ``port`` or
    none."""
    if host.startswith("["):  # [IPv6], with :port or not
        name, _, rest = host[1:].partition("]")
        if rest and not rest.startswith(":"):
            return False
        given = rest[1:] if rest else None
    elif host.count(":") == 1:  # IPv4 or a name, with :port
        name, _, given = host.partition(":")
    else:  # without a port (a bare IPv6 address has several colons)
        name, given = host, None
    if given is not None and given != str(port):
        return False
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostGuard:
    """Refuses, before routing, a request of another HTTP version than 1.1 or 1.0 (505: h11 reads any
    ``HTTP/d.d`` as its own), one whose ``Host`` is not one of ``hosts`` (nor, where ``ip_literals``
    is the server's port, an IP address with that port or none) (421: a page that rebound its own
    name to this address; also a request without a ``Host``, which HTTP/1.0 allows) or whose
    ``Origin``, when sent, is not ``http://`` + its ``Host`` (403: another site's page). ``hosts=None``
    accepts any ``Host``."""

    def __init__(self, app: ASGIApp, hosts: Collection[str] | None, ip_literals: int | None = None) -> None:
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
                                f"HTTP/{clip(str(scope.get('http_version')))}")
            elif self.hosts is not None and host not in self.hosts \
                    and not (self.ip_literals is not None and _ip_literal(host, self.ip_literals)):
                names = "its IP addresses and own names" if self.ip_literals is not None else ", ".join(LOOPBACK_NAMES)
                refusal = 421, (f"this server answers only to {names} (wwho serve --allow-host NAME adds one), "
                                f"not to Host {clip(host)!r}" if given is not None else "a request needs a Host header")
            elif origin is not None and origin.lower() != f"http://{host}":
                refusal = 403, f"requests from another site's page (Origin {clip(origin)!r}) are refused"
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
