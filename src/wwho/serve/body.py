"""The body of ``POST /api/tokenize``: read within its size and time limits, and parsed strictly
into the text and the tokenizer names.

Only ``application/json`` with a Content-Length is read (a chunked body is refused unread). The
JSON is parsed strictly: a duplicate key, deep nesting, a number or a nested object is a 400,
refused where the parser meets it, and an array inside a value or a body of many strings is refused
before the parse. Every refusal is a :class:`~wwho.serve.refusals.BadRequest`.

This module does not run or queue the work (:mod:`wwho.serve.worker`) and does not know the
tokenizers beyond their names.
"""

from __future__ import annotations

import asyncio
import json
import re

from starlette.requests import Request

from wwho.serve.limits import Limits
from wwho.serve.refusals import BadRequest, clip
from wwho.serve.tokenizers import Loaded

_SURROGATE = re.compile("[\ud800-\udfff]")


async def read_body(request: Request, limits: Limits) -> bytes:
    """The request's body: JSON with a Content-Length, at most ``limits.max_body_bytes``, arrived within
    ``limits.body_seconds``; else a :class:`BadRequest` (411, 413, 415 or 408)."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise BadRequest(415, f"send JSON with Content-Type: application/json (got {clip(ctype) or 'none'!r})")
    if "transfer-encoding" in request.headers:
        # Chunked framing costs per chunk, not per byte of text (a body of one-byte chunks holds the
        # event loop); the page sends a Content-Length. Closed: the body stays unread.
        raise BadRequest(411, "send the body with a Content-Length; chunked bodies are not read",
                         {"Connection": "close"})
    # the body is left unread: the connection closes after the answer
    too_large = BadRequest(413, f"request body larger than {limits.max_body_bytes:,} bytes "
                                f"(texts are limited to {limits.max_chars:,} characters)", {"Connection": "close"})
    if "content-length" not in request.headers:  # (a body without one is empty by HTTP's rules)
        raise BadRequest(411, "send the body with a Content-Length (none was given, so the body is empty)",
                         {"Connection": "close"})
    declared = request.headers["content-length"].lstrip("0")  # (its value, not its digits, is judged)
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
    except (TimeoutError, asyncio.TimeoutError):  # (one class from Python 3.11 on, two before)
        raise BadRequest(408, f"the request body did not arrive within {limits.body_seconds:g} seconds",
                         {"Connection": "close"}) from None


class _Refused(ValueError):
    """A JSON value the API does not take (raised from the decoder's hooks)."""


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
                    raise _Refused(f"request body has the key {clip(key)!r} twice")
                seen.add(key)
        return out

    def number(text: str) -> float:
        raise _Refused(f"request body has a number ({clip(text, 20)}); expected {SHAPE}")

    def constant(name: str) -> float:
        raise _Refused(f"request body has {name}, which is not JSON")

    return {"object_pairs_hook": pairs_hook, "parse_int": number, "parse_float": number,
            "parse_constant": constant}


#: A JSON string, escapes included, or the rest of the body after an unclosed quote (:func:`parse_body`'s
#: count of arrays): every match succeeds where it starts, so the scan is linear in the body.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)  # (unrolled: a step per escape, not per run)


def parse_body(body: bytes, by_name: dict[str, Loaded], limits: Limits) -> tuple[str, list[str]]:
    """The text and the tokenizer names (each once, in the order given; every one of ``by_name`` when
    none are given) of a request body; a :class:`BadRequest` naming what is wrong."""
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
        raise BadRequest(400, f"unknown field {clip(unknown[0])!r}; fields: text, tokenizers")
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
            raise BadRequest(422, f"unknown tokenizer {clip(n)!r}; loaded: {', '.join(by_name)}")
    return text, list(dict.fromkeys(names))
