"""The limits of ``wwho serve`` (:class:`Limits`: what one request, one client and all clients
together may cost; documented in ``docs/serve.md``) and who counts as one client (:func:`client_key`).

Both are shared by the application's admission (:mod:`wwho.serve.worker`, :mod:`wwho.serve.body`)
and the connection limits (:mod:`wwho.serve.connections`). This module enforces nothing and imports
no web framework.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What one request, one client and all clients together may cost; documented in docs/serve.md."""

    #: longest text, in code points
    max_chars: int = 20_000
    #: tokens laid over the text and sent per request, shared between the tokenizers asked for
    max_tokens: int = 40_000
    #: work waiting for the worker, in longest texts through one tokenizer (``queue * (max_chars + 1)``
    #: characters times tokenizers, :data:`wwho.serve.worker.REQUEST_COST` a request included); when
    #: more waits, the request tagged last in the fair order is refused. Not a count of requests: those of empty texts
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
