"""The web application of ``wwho serve``: the page, its static files, and the JSON API (Starlette).

| route | what |
|---|---|
| ``GET /`` | the page (``static/index.html``; script and style beside it, nothing fetched from elsewhere) |
| ``GET /api/tokenizers`` | the loaded tokenizers and the request limits |
| ``POST /api/tokenize`` | ``{"text": ..., "tokenizers": [...]}`` -> every tokenizer's tokens and the comparison |

The request and response formats, limits and errors are documented in ``docs/serve.md``. Every
error is one line of JSON, ``{"error": "..."}``, with a 4xx status for a bad request. Tokenizers are
loaded once, before the server starts (:func:`load_tokenizers`), and run one request at a time on a
worker thread (their caches are not shared between threads); a request whose client has gone while
it waited is dropped. This module does not bind sockets or
parse command lines: :mod:`wwho.cli.serve` does.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from wwho.errors import VocabError
from wwho.evaluate import Evaluated, load_spec
from wwho.serve.view import TextLayout, compare, token_view

_SURROGATE = re.compile("[\ud800-\udfff]")
STATIC = Path(__file__).resolve().parent / "static"
#: The page loads nothing from anywhere but this server.
CSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"


@dataclass(frozen=True)
class Limits:
    #: longest text, in code points
    max_chars: int = 20_000

    @property
    def max_body_bytes(self) -> int:
        """The largest request body: JSON may escape a code point as 12 bytes (a surrogate pair)."""
        return 12 * self.max_chars + 65_536


@dataclass
class Loaded:
    """A tokenizer the server offers: its SPEC is its name in the API, ``label`` what the page shows."""

    name: str
    kind: str
    tokenizer: Evaluated
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:  # a path's last part (with its folder for generic file names)
            kind, sep, rest = self.name.partition(":")
            if sep and kind in ("hf", "spm"):
                self.label = f"{kind}:{_short_path(rest)}"
            else:
                self.label = self.name if sep and kind == "tiktoken" else _short_path(self.name)


def _short_path(path: str) -> str:
    p = Path(path)
    if p.name in ("tokenizer.json", "vocab.json", "") and p.parent.name:
        return f"{p.parent.name}/{p.name}" if p.name else p.parent.name
    return p.name or path


class BadRequest(HTTPException):
    """A client error answered with one line of JSON."""


def load_tokenizers(specs: Sequence[str]) -> list[Loaded]:
    """Load every SPEC (as ``wwho eval`` does); a duplicate or unloadable SPEC is a :class:`VocabError`."""
    if len(set(specs)) != len(specs):
        raise VocabError(f"a tokenizer is given twice: {', '.join(s for s in specs if specs.count(s) > 1)}")
    out = []
    for spec in specs:
        kind, sep, _ = spec.partition(":")
        if not (sep and kind in ("tiktoken", "hf", "spm")):
            from wwho.loading import detect_kind

            kind = detect_kind(spec)
        out.append(Loaded(spec, kind, load_spec(spec)))
    labels = [t.label for t in out]
    for t in out:
        if labels.count(t.label) > 1:  # two files of one name: show their SPECs
            t.label = t.name
    return out


def create_app(tokenizers: Sequence[Loaded], *, limits: Limits = Limits()) -> Starlette:
    """The Starlette application serving ``tokenizers``."""
    by_name = {t.name: t for t in tokenizers}
    one_at_a_time = asyncio.Lock()

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Content-Security-Policy": CSP,
                                                            "Cache-Control": "no-cache"})

    async def list_tokenizers(request: Request) -> Response:
        return JSONResponse({
            "tokenizers": [{"name": t.name, "label": t.label, "kind": t.kind, "vocab_size": t.tokenizer.vocab_size}
                           for t in tokenizers],
            "limits": {"max_chars": limits.max_chars, "max_body_bytes": limits.max_body_bytes},
        })

    async def tokenize(request: Request) -> Response:
        text, names = _parse(await _read_body(request, limits), by_name, limits)
        chosen = [by_name[n] for n in names]
        async with one_at_a_time:
            if await request.is_disconnected():  # the page dropped it for a newer text while it waited
                return Response(status_code=204)
            return JSONResponse(await run_in_threadpool(_tokenize, text, chosen))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    return Starlette(
        routes=[
            Route("/", index),
            Route("/api/tokenizers", list_tokenizers),
            Route("/api/tokenize", tokenize, methods=["POST"]),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        exception_handlers={HTTPException: http_error},
    )


async def _read_body(request: Request, limits: Limits) -> bytes:
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise BadRequest(415, f"send JSON with Content-Type: application/json (got {ctype or 'none'!r})")
    too_large = BadRequest(413, f"request body larger than {limits.max_body_bytes:,} bytes "
                                f"(texts are limited to {limits.max_chars:,} characters)")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limits.max_body_bytes:
        raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limits.max_body_bytes:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(body: bytes, by_name: dict[str, Loaded], limits: Limits) -> tuple[str, list[str]]:
    try:
        data = json.loads(body)
    except UnicodeDecodeError as exc:
        raise BadRequest(400, f"request body is not UTF-8: {exc.reason} at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(400, f"request body is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise BadRequest(400, 'expected a JSON object like {"text": "...", "tokenizers": ["..."]}')
    unknown = sorted(set(data) - {"text", "tokenizers"})
    if unknown:
        raise BadRequest(400, f"unknown field {unknown[0]!r}; fields: text, tokenizers")
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
            raise BadRequest(422, f"unknown tokenizer {n!r}; loaded: {', '.join(by_name)}")
    return text, list(dict.fromkeys(names))


def _tokenize(text: str, chosen: Sequence[Loaded]) -> dict:
    t0 = time.perf_counter()
    layout = TextLayout(text)
    _ = layout.inside  # the cut structure, once for all: in no tokenizer's time
    views, results = [], []
    for t in chosen:
        try:
            view = token_view(t.tokenizer, layout)
        except Exception as exc:  # one tokenizer failing on a text must not hide the others
            results.append({"tokenizer": t.name, "label": t.label, "kind": t.kind,
                            "error": f"{type(exc).__name__}: {exc}"})
            continue
        views.append(view)
        shown = {k: v for k, v in view.to_json().items() if k != "tokenizer"}
        results.append({"tokenizer": t.name, "label": t.label, "kind": t.kind, **shown})
    spans = compare(views, layout)
    return {"chars": len(text), "bytes": len(layout.data), "results": results,
            "compare": [{"start": s.start, "end": s.end, "text": s.text, "agree": s.agree} for s in spans],
            "seconds": time.perf_counter() - t0}
