"""How ``wwho serve`` refuses a request: the HTTP errors answered as one line of JSON
(:class:`BadRequest`, :class:`Busy` with ``Retry-After``), the signal that a client has gone and
nothing is answered (:class:`ClientGone`), and :func:`clip`, which shortens what a message quotes of
a request.

This module does not write the answers (the application's error handler does) or decide when to
refuse.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException


class BadRequest(HTTPException):
    """A client error answered with one line of JSON."""


class Busy(HTTPException):
    """The server will not do this request now (429: this client has too many; 503: everyone has):
    one line of JSON with ``Retry-After``."""

    def __init__(self, status: int, detail: str, retry_after: int = 2) -> None:
        super().__init__(status, detail, headers={"Retry-After": str(retry_after)})


class ClientGone(Exception):
    """The client closed its connection: nothing is sent."""


def clip(text: str, size: int = 80) -> str:
    """``text`` as an error message quotes it: at most ``size`` characters, then an ellipsis."""
    return text if len(text) <= size else text[:size] + "…"
