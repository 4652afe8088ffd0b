"""How a token is shown to a person: its text, with what is not printable text escaped.

``wwho encode --tokens`` shows every kind the same way, from the token's bytes: valid UTF-8 as
text, and each byte that is not (part of a character cut by a byte-level token, a byte-fallback
token, a binary byte) or is a control character as ``<0xE0>`` (the notation of SGPE's and
llama.cpp's byte tokens), never U+FFFD or GPT-2's ``Ġ`` characters. A space stays a space.

This module does not know any tokenizer; it only formats bytes.
"""

from __future__ import annotations


def _escaped(data: bytes) -> str:
    return "".join(f"<0x{b:02X}>" for b in data)


def _printable(text: str) -> str:
    return "".join(_escaped(c.encode()) if (c < " " or c == "\x7f") else c for c in text)


def readable(data: bytes) -> str:
    """``data`` as text, with invalid UTF-8 and control characters as ``<0xNN>``."""
    out: list[str] = []
    while data:
        try:
            out.append(_printable(data.decode("utf-8")))
            break
        except UnicodeDecodeError as exc:
            out.append(_printable(data[:exc.start].decode("utf-8")))
            out.append(_escaped(data[exc.start:exc.end]))
            data = data[exc.end:]
    return "".join(out)


def readable_text(text: str) -> str:
    """:func:`readable` of a ``str`` (a name or a token from a file): control characters as
    ``<0xNN>``, so that printing it cannot move the cursor or hide what follows; a lone surrogate
    as its surrogate-pass bytes."""
    return readable(text.encode("utf-8", "surrogatepass"))
