"""Incremental, UTF-8-safe decoding of a token stream (spec 004's "Streaming Decoder").

A token can end in the middle of a UTF-8 character (o200k splits many Sinhala
characters and emoji over two or three tokens). :class:`StreamingDecoder` feeds each
token's bytes to Python's incremental UTF-8 decoder, which returns only complete
characters and keeps an unfinished sequence for the next call. Invalid bytes become
U+FFFD exactly as ``bytes.decode("utf-8", "replace")`` would, so for any ids of a byte-level
or meta tokenizer::

    "".join(map(dec.decode_token, ids)) + dec.flush() == tokenizer.decode(ids)

It works with any tokenizer that has ``token_bytes(id) -> bytes`` (ByteBPE, SGPE,
Meta). A tokenizer with ``prefix_space`` (SGPE's dummy space) has its first leading
space dropped, as its ``decode`` does. It does not detokenize other text-level
conventions (leading-space markers and the like): tokens are bytes, and that is all it
decodes. One difference: SGPE's ``decode`` keeps lone surrogates (its byte fallback
spells them), and the stream, Python's incremental decoder, replaces them unless made
with ``errors="surrogatepass"`` (which raises on other invalid bytes). With ``errors="strict"``, bytes that are not UTF-8 raise
:class:`wwho.errors.NotUTF8Error` (a ``TokenizerError`` and a ``UnicodeDecodeError``) and empty the decoder (the next token starts a new text);
the error's ``text`` attribute holds the text completed before the invalid bytes, which that
call would otherwise have returned (``decode_tokens`` of a long stream loses nothing valid).
With ``skip_special_tokens=True`` a special token (``is_special_token``) gives no text, as
``decode(ids, skip_special_tokens=True)`` drops it. A copy (``copy.copy``, ``copy.deepcopy``)
shares the tokenizer and has a buffer of its own; a pickle carries the tokenizer.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from typing import Protocol

from wwho.errors import NotUTF8Error, WrongTypeError, brief
from wwho.ids import check_decode_options


class HasTokenBytes(Protocol):
    def token_bytes(self, token_id: int) -> bytes: ...


class StreamingDecoder:
    """Decode tokens one at a time, emitting only complete UTF-8 characters."""

    skip_special_tokens = False  # (the default of a decoder pickled before the option existed)

    def __init__(self, tokenizer: HasTokenBytes, *, errors: str = "replace", skip_special_tokens: bool = False) -> None:
        if not callable(getattr(tokenizer, "token_bytes", None)):
            raise WrongTypeError(f"{type(tokenizer).__name__} has no token_bytes(id) method: a StreamingDecoder "
                                 "decodes the ids of a ByteBPE, SGPE or meta tokenizer")
        check_decode_options(errors, skip_special_tokens)
        if skip_special_tokens and not callable(getattr(tokenizer, "is_special_token", None)):
            raise WrongTypeError(f"{type(tokenizer).__name__} has no is_special_token(id) method, which "
                                 "skip_special_tokens=True asks of each id")
        self.tokenizer = tokenizer
        self.skip_special_tokens = skip_special_tokens
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors=errors)
        # the dummy space before a text: dropped from the stream's first byte, as decode does
        self._prefix_space = bool(getattr(tokenizer, "prefix_space", False))
        self._at_start = True

    def _feed(self, data: bytes) -> str:
        if self._at_start and data:
            self._at_start = False
            if self._prefix_space and data[:1] == b" ":
                data = data[1:]
        return self._decode(data, final=False)

    def _decode(self, data: bytes, *, final: bool) -> str:
        try:
            return self._decoder.decode(data, final=final)
        except UnicodeDecodeError as exc:
            raise self._not_utf8(exc) from None

    def _not_utf8(self, exc: UnicodeDecodeError) -> NotUTF8Error:
        # With errors="strict", bytes that are not UTF-8 end the text: the decoder is emptied so
        # that the next token starts a new one, not the same error again.
        self.reset()
        # The bytes before the invalid ones are whole characters that this call did not return.
        return NotUTF8Error.of(exc, "; the decoder is emptied")

    def decode_token(self, token_id: int) -> str:
        """The text completed by this token ("" while a character is still unfinished, and for a
        special token with ``skip_special_tokens``)."""
        # (without the option, the generation loop's per-token path calls the tokenizer directly)
        data = self._token_bytes(token_id) if self.skip_special_tokens else self.tokenizer.token_bytes(token_id)
        if type(data) is not bytes:
            data = self._checked(data, token_id)
        if self._at_start:
            return self._feed(data)
        # (the per-token path of a generation loop: _feed and _decode written out)
        try:
            return self._decoder.decode(data)
        except UnicodeDecodeError as exc:
            raise self._not_utf8(exc) from None

    def decode_tokens(self, ids: Iterable[int]) -> str:
        """Several tokens at once; the unfinished tail stays buffered."""
        from wwho.ids import each_token_bytes

        # The same sequences as every decode takes: not bytes (their ints), a dict (its keys), a
        # set, or one id on its own; each id then checked by token_bytes.
        parts = each_token_bytes(ids, self._token_bytes)
        return self._feed(b"".join(parts))

    def _checked(self, data: object, token_id: int) -> bytes:
        """``data``, which a tokenizer's ``token_bytes`` returned, as bytes; a tokenizer of the caller's
        own that returns something else is named, not a TypeError from the UTF-8 decoder."""
        if isinstance(data, (bytes, bytearray, memoryview)):  # (a subclass of bytes too: numpy.bytes_)
            return bytes(data)
        raise WrongTypeError(f"{type(self.tokenizer).__name__}.token_bytes({brief(token_id)}) returned "
                             f"{type(data).__name__}, not bytes: a StreamingDecoder decodes token bytes")

    def _token_bytes(self, token_id: int) -> bytes:
        data = self.tokenizer.token_bytes(token_id)  # (checks the id first, for either setting)
        if type(data) is not bytes:
            data = self._checked(data, token_id)
        if self.skip_special_tokens and self.tokenizer.is_special_token(token_id):  # type: ignore[attr-defined]
            return b""  # as decode(ids, skip_special_tokens=True) drops it: no bytes, no text started
        return data

    def flush(self) -> str:
        """What is left: an unfinished character becomes U+FFFD (with ``errors="strict"``, a
        :class:`TokenizerError`). The decoder is then empty, and the next token starts a new text."""
        text = self._decode(b"", final=True)
        self.reset()
        return text

    def reset(self) -> None:
        """Drop any buffered bytes without emitting them; the next token starts a new text."""
        self._decoder.reset()
        self._at_start = True

    def __copy__(self) -> StreamingDecoder:
        # A copy is a stream of its own (a branch of a beam, say): it takes the unfinished character
        # with it, and neither one's later tokens reach the other's buffer. It is of the same class.
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._decoder = codecs.getincrementaldecoder("utf-8")(errors=self._decoder.errors)
        clone._decoder.setstate(self._decoder.getstate())
        return clone

    def __deepcopy__(self, memo: dict) -> StreamingDecoder:
        # The tokenizer is never changed by decoding: a deep copy shares it, as a copy does (a
        # branch of a beam needs a buffer of its own, not a copy of the whole vocabulary).
        return self.__copy__()

    @property
    def pending(self) -> bytes:
        """The buffered bytes of an unfinished character."""
        return self._decoder.getstate()[0]

