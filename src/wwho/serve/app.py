"""The web application of ``wwho serve``: the page, its static files, and the JSON API (Starlette).

| route | what |
|---|---|
| ``GET /`` | the page (``static/index.html``; script and style beside it, nothing fetched from elsewhere) |
| ``GET /api/tokenizers`` | the loaded tokenizers (by name, never by path) and the request limits |
| ``POST /api/tokenize`` | ``{"text": ..., "tokenizers": [...]}`` -> every tokenizer's tokens and the comparison |

The request and response formats, limits and errors are documented in ``docs/serve.md``. Every
error is one line of JSON, ``{"error": "..."}``, with a 4xx status for a bad request, and 429 or
503 with ``Retry-After`` when the server is busy. Tokenizers are loaded once, before the server
starts (:func:`wwho.serve.tokenizers.load_tokenizers`).

**Bounded work.** A request's text is at most ``max_chars`` code points (its body read and parsed
strictly by :mod:`wwho.serve.body`), and at most ``max_tokens`` tokens are laid over it and sent,
shared between the tokenizers asked for. Requests run one at a time on one worker thread (the
tokenizers' caches are not shared between threads), in a fair order by cost between client
addresses (:class:`wwho.serve.worker.Worker`); a request that runs too long is stopped between two
tokenizers. The answer's JSON is written on the worker thread.

**Host and Origin.** Which requests are answered at all, and what every answer carries, is the
middleware's (:mod:`wwho.serve.middleware`).

This module holds the routes, the error handler and the work of one tokenize request. It does not
read request bodies, queue the work or check ``Host`` and ``Origin`` (the modules above), and does
not bind sockets, parse command lines or limit connections (slow headers, stalled writes):
:mod:`wwho.cli.serve` and :mod:`wwho.serve.connections` do.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Collection, Sequence
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from wwho.serve.body import parse_body, read_body
from wwho.serve.limits import Limits, client_key
from wwho.serve.middleware import EveryAnswer, HostGuard
from wwho.serve.refusals import ClientGone, clip
from wwho.serve.tokenizers import Loaded
from wwho.serve.view import Encoded, TextLayout, compare, encode, fair_shares, lay_out
from wwho.serve.worker import Worker

STATIC = Path(__file__).resolve().parent / "static"
#: What a 404 or 405 lists.
ROUTES = "the page is GET /, the API GET /api/tokenizers and POST /api/tokenize"


class _Stopped(Exception):
    """A running request was told to stop (it took too long, or its client has gone)."""


def create_app(tokenizers: Sequence[Loaded], *, limits: Limits = Limits(),  # noqa: B008 (frozen: safe to share)
               hosts: Collection[str] | None = None, ip_literals: int | None = None) -> Starlette:
    """The Starlette application serving ``tokenizers``. ``hosts``: the only ``Host`` headers answered
    (lower case, with the port where the client sends one; see
    :func:`wwho.serve.middleware.loopback_hosts` and :func:`wwho.serve.middleware.served_hosts`), and
    where ``ip_literals`` is the server's port any IP address too, with that port or none; None: any."""
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
            text, names = parse_body(await read_body(request, limits), by_name, limits)
        except ClientDisconnect:  # left before sending the whole body: nobody to answer, nothing to log
            return Response(status_code=204)
        chosen = [by_name[n] for n in names]
        client = client_key(request.client.host) if request.client else ""  # (as the connection limit counts)
        try:
            body = await worker.run(lambda stop: _tokenize(text, chosen, limits.max_tokens, stop),
                                    cost=(len(text) + 1) * max(len(chosen), 1), client=client,
                                    large=len(text) > limits.small_chars, request=request)
        except ClientGone:
            return Response(status_code=204)
        return Response(body, media_type="application/json")

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        detail = exc.detail
        if exc.status_code == 404 and detail == "Not Found":  # Starlette's own: say what there is
            detail = f"Not Found: {clip(request.scope['path'])!r}; {ROUTES}"
        elif exc.status_code == 405 and detail == "Method Not Allowed":
            allowed = ", ".join(sorted((exc.headers or {}).get("Allow", "").split(", ")))  # (from a set)
            detail = (f"Method Not Allowed: {clip(request.method)} {clip(request.scope['path'])!r} "
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
