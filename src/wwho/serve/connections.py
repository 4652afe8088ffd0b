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
* when more than ``max_connections`` are open, opening one closes, among the connections of the
  client address that has the most of them waiting, the one that has waited longest for a whole
  request (its headers or the rest of its body) or whose client has stopped reading its answer; a
  connection whose request has arrived whole and whose answer is being read is never closed for this,
  so clients that send headers and never their bodies, or pipelined requests whose answers they never
  read, cannot hold every place, and one address opening connections as fast as it can closes its
  own, not another client's that has just opened and not yet been read;
* a client that closes its side of the connection once it has sent a whole request
  (``shutdown(SHUT_WR)``) is still answered; the connection then closes;
* an ``Upgrade`` header (any web page can send one) is answered without uvicorn's two log lines;
* a request the protocol cannot parse gets a one-line JSON 400, as every other error does, and one
  whose head (request line and headers) is longer than 16 KiB or 100 header lines a 431, however it
  arrives (h11 bounds only a head still incomplete).

Request bodies, queues and timing of the work are the application's (:mod:`wwho.serve.app`). This
module does not bind sockets or start the server: :mod:`wwho.cli.serve` does.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from wwho.serve.app import Limits


def guarded_protocol(limits: Limits) -> type[H11Protocol]:
    """uvicorn's h11 protocol class with the limits of the module docstring (pass it as ``http=``)."""
    # connections waiting for a request, by client address, oldest first: what is closed when there
    # are too many
    waiting = _Waiting()
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
            self._await_request()
            if len(self.connections) > limits.max_connections:  # (closed ones leave the set a moment later)
                oldest = waiting.to_close(self)
                oldest._request_arrived()  # out of `waiting` now: the next one opened closes another
                if oldest._stalled is not None:
                    oldest.transport.abort()  # close() would wait for the unread answer to be sent
                else:
                    oldest.transport.close()

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


class _Waiting:
    """Connections waiting for a request (or stalled on their answer), by client address, oldest first."""

    def __init__(self) -> None:
        self._by_address: dict[str, OrderedDict[H11Protocol, None]] = {}

    def add(self, conn: H11Protocol) -> None:
        """``conn`` waits from now (moved to the end of its address's connections if it already did)."""
        group = self._by_address.setdefault(_address(conn), OrderedDict())
        group[conn] = None
        group.move_to_end(conn)

    def discard(self, conn: H11Protocol) -> None:
        address = _address(conn)
        group = self._by_address.get(address)
        if group is not None:
            group.pop(conn, None)
            if not group:
                del self._by_address[address]

    def to_close(self, new: H11Protocol) -> H11Protocol:
        """The connection to close to make room for ``new``: the oldest of the address with the most
        waiting (``new`` itself where it is the only one)."""
        groups = sorted(self._by_address.values(), key=len, reverse=True)
        return next((c for group in groups for c in group if c is not new), new)


def _address(conn: H11Protocol) -> str:
    return conn.client[0] if conn.client else ""
