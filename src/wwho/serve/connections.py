"""Connection limits for ``wwho serve`` that uvicorn does not have: a deadline for each request's headers,
a deadline for a client that does not read its answer, and a bound on open connections.

uvicorn's HTTP/1.1 protocol (h11) waits for headers for as long as a client keeps sending them, and its
keep-alive timer stops at the first byte of the next request, so a client sending one byte a second
holds a connection forever; a client that does not read its answer holds the answer in memory
forever. :func:`guarded_protocol` returns uvicorn's h11 protocol with these additions:

* a request must arrive whole (its headers, or the rest of a body the application did not read)
  within ``header_seconds`` of the connection opening or of the previous answer, else the
  connection is closed (with a one-line JSON 408 when part of a request had arrived);
* an answer the client has not read for ``write_seconds`` (the socket's buffers full) is dropped with
  the connection;
* once a request is answered, the rest of a body the application did not read is not read either
  (uvicorn would read and drop it as fast as it comes): the connection closes when idle;
* when more than ``max_connections`` are open, opening one closes a connection of the client address
  that holds the most of them open (an IPv6 address counted by its /64 network, which one client
  usually has whole; where addresses tie, of any of them): the one that has waited longest for a whole
  request (its headers or the rest of its body) or whose client has stopped reading its answer, else,
  where all of those connections are being answered, the oldest of them (its answer is dropped). So clients
  that send headers and never their bodies, pipelined requests whose answers are never read, or an
  address that keeps every connection busy with one cheap request after another cannot hold every
  place against another address; and one address opening connections as fast as it can closes its
  own (a waiting one, else the new one), not another client's that has just opened and not yet been
  read;
* a client that closes its side of the connection once it has sent a whole request
  (``shutdown(SHUT_WR)``) is still answered, and so is every whole request it pipelined before; the
  connection then closes;
* an ``Upgrade`` header (any web page can send one) is answered without uvicorn's two log lines;
* a request the protocol cannot parse gets a one-line JSON 400, as every other error does, and one
  whose head (request line and headers) is longer than 16 KiB or 100 header lines a 431, however it
  arrives (h11 bounds only a head still incomplete).

Request bodies, queues and timing of the work are the application's (:mod:`wwho.serve.body`,
:mod:`wwho.serve.worker`). This module does not bind sockets or start the server:
:mod:`wwho.cli.serve` does.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import OrderedDict

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from wwho.serve.limits import Limits, client_key


def guarded_protocol(limits: Limits) -> type[H11Protocol]:
    """uvicorn's h11 protocol class with the limits of the module docstring (pass it as ``http=``)."""
    # every open connection, and those waiting for a request, by client address, oldest first: what
    # is closed when there are too many
    opened, waiting = _ByAddress(), _ByAddress()
    message = json.dumps({"error": f"the request did not arrive within {limits.header_seconds:g} seconds"})
    too_slow = _answer(b"408 Request Timeout", message)
    head_too_large = _answer(b"431 Request Header Fields Too Large", json.dumps(
        {"error": f"the request's headers are longer than {MAX_HEAD_BYTES:,} bytes or {MAX_HEADER_LINES} lines"}))

    class GuardedH11(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _stalled: asyncio.TimerHandle | None = None
        _eof = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            opened.add(self)
            self._await_request()
            if len(self.connections) > limits.max_connections:  # (closed ones leave the set a moment later)
                victim = _to_close(self, opened, waiting)
                busy = not waiting.holds(victim)
                victim._request_arrived()  # out of `waiting` now: the next one opened closes another
                opened.discard(victim)
                if busy or victim._stalled is not None:
                    victim.transport.abort()  # close() would wait for the answer to be made and sent
                else:
                    victim.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._track()

        def handle_events(self) -> None:
            # h11 bounds a head only while it is incomplete: one that arrives whole in a read (or
            # pipelined behind another request) is parsed at any size, at a cost per header line.
            if self.conn.their_state is h11.IDLE and _head_too_large(self.conn.trailing_data[0]):
                self._request_arrived()
                self.transport.write(head_too_large)
                self.transport.close()
                return
            super().handle_events()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.transport.is_closing():
                return
            if self._eof:  # the client has closed its side: nothing more will come
                if self.conn.our_state is h11.SEND_RESPONSE and self.conn.their_state is h11.DONE:
                    return  # but a whole request it sent before (pipelined) is being answered now
                self.transport.close()
                return
            if self.conn.their_state is h11.SEND_BODY:
                # The rest of a body the application did not read (a GET with a Content-Length of
                # gigabytes): uvicorn would read and drop it as fast as it comes, a core's worth of
                # work until the deadline. Nothing more is read; the connection closes when idle.
                self.flow.pause_reading()
            if self.conn.our_state is h11.SEND_RESPONSE:  # the next request's headers were waiting
                waiting.add(self)
                self._track()
            else:
                self._await_request()

        def send_400_response(self, msg: str) -> None:
            error = json.dumps({"error": f"not an HTTP request this server can read ({msg.rstrip('.')})"})
            self.transport.write(_answer(b"400 Bad Request", error))
            self.transport.close()

        def eof_received(self) -> bool | None:
            # A whole request is in and being answered: the answer is still sent (True keeps the
            # transport open for writing), then the connection closes. Otherwise it closes now.
            if self.conn.their_state is h11.DONE and self.conn.our_state is h11.SEND_RESPONSE:
                self._eof = True
                return True
            return None

        def connection_lost(self, exc: Exception | None) -> None:
            self._request_arrived()
            opened.discard(self)
            if self._stalled is not None:
                self._stalled.cancel()
            super().connection_lost(exc)

        def pause_writing(self) -> None:
            super().pause_writing()
            if self._stalled is None:
                self._stalled = self.loop.call_later(limits.write_seconds, self.transport.abort)
            # A client that does not read its answers (pipelined requests, a tiny receive window) may
            # be closed to make room too: otherwise enough of them hold every place for the write limit.
            waiting.add(self)

        def resume_writing(self) -> None:
            super().resume_writing()
            if self._stalled is not None:
                self._stalled.cancel()
                self._stalled = None
            if self._deadline is None:  # not waiting for a request: no longer a connection to close first
                waiting.discard(self)

        def _unsupported_upgrade_warning(self) -> None:
            pass  # uvicorn logs two lines per Upgrade header, which any web page can send: the answer says it

        def _await_request(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline = self.loop.call_later(limits.header_seconds, self._too_slow)
            waiting.add(self)

        def _track(self) -> None:
            """Once the headers are in, the application's own limits apply (the deadline stops); the
            connection stays among those that may be closed until the body is in too."""
            if self.conn.our_state is not h11.SEND_RESPONSE:
                return
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            if self.conn.their_state is h11.DONE and self._stalled is None:  # (a stalled reader stays closable)
                waiting.discard(self)

        def _request_arrived(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            waiting.discard(self)

        def _too_slow(self) -> None:
            self._deadline = None
            waiting.discard(self)
            if self.transport.is_closing():
                return
            started = self.conn.our_state is h11.IDLE and self.conn.trailing_data[0]
            if started:  # part of a request: say why (nothing of an answer has been sent on it)
                self.transport.write(too_slow)
            self.transport.close()

    return GuardedH11


#: The longest request head (request line and headers), and the most header lines, a request may have
#: (h11's own bound on a head still incomplete is the same size).
MAX_HEAD_BYTES = 16 * 1024
MAX_HEADER_LINES = 100


def _head_too_large(buffered: bytearray) -> bool:
    """Whether the request head at the start of ``buffered`` (the bytes h11 has not parsed yet) is, or
    has grown, longer than :data:`MAX_HEAD_BYTES` or :data:`MAX_HEADER_LINES`. (Blank lines before a
    request are h11's to refuse.)"""
    ends = [at + len(mark) for mark in (b"\n\n", b"\n\r\n") if (at := buffered.find(mark, 0, MAX_HEAD_BYTES)) >= 0]
    end = min(ends) if ends else len(buffered)
    return end > MAX_HEAD_BYTES or buffered.count(b"\n", 0, end) > MAX_HEADER_LINES + 2


def _answer(status: bytes, error: str) -> bytes:
    """A whole answer written to the socket by the protocol itself: one line of JSON, then the
    connection closes."""
    body = error.encode() + b"\n"
    return (b"HTTP/1.1 %s\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s") % (status, len(body), body)


class _ByAddress:
    """Connections by client address (:func:`_address`), oldest first, each with the number of its
    arrival among all addresses' (which is older across addresses)."""

    def __init__(self) -> None:
        self.groups: dict[str, OrderedDict[H11Protocol, int]] = {}
        self._arrivals = itertools.count()

    def add(self, conn: H11Protocol) -> None:
        """``conn`` is one from now (moved to the end of its address's connections if it already was)."""
        group = self.groups.setdefault(_address(conn), OrderedDict())
        group[conn] = next(self._arrivals)
        group.move_to_end(conn)

    def discard(self, conn: H11Protocol) -> None:
        address = _address(conn)
        group = self.groups.get(address)
        if group is not None:
            group.pop(conn, None)
            if not group:
                del self.groups[address]

    def holds(self, conn: H11Protocol) -> bool:
        return conn in self.groups.get(_address(conn), ())

    def of(self, address: str) -> OrderedDict[H11Protocol, int]:
        return self.groups.get(address, OrderedDict())


def _to_close(new: H11Protocol, opened: _ByAddress, waiting: _ByAddress) -> H11Protocol:
    """The connection to close to make room for ``new``. Where ``new``'s address alone has the most
    open, its own: its longest waiting but ``new``, else ``new`` itself (an address opening connections
    as fast as it can closes its own). Otherwise, of the addresses with the most open (``new``'s among
    them where it ties), the connection that has waited longest for a whole request, else the one
    opened first: so addresses holding one idle connection each (any local process may use every
    127.x.y.z) give way to a newcomer instead of shutting it out."""
    own = _address(new)
    counts = {address: len(group) for address, group in opened.groups.items()}
    most = max(counts.values())
    if all(n < most for address, n in counts.items() if address != own):  # (own has the most, alone)
        return next((c for c in waiting.of(own) if c is not new), new)
    tied = [address for address, n in counts.items() if n == most]
    for pool in (waiting, opened):
        oldest = min(((tag, conn) for address in tied for conn, tag in pool.of(address).items() if conn is not new),
                     key=lambda pair: pair[0], default=None)
        if oldest is not None:
            return oldest[1]
    return new


def _address(conn: H11Protocol) -> str:
    """:func:`client_key` of the connection's client."""
    return client_key(conn.client[0]) if conn.client else ""
