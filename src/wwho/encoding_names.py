"""``tiktoken.Encoding``'s names on every text kind of wwho: SGPE, the meta vocabulary, byte-level.

Much training and serving code is written against a ``tiktoken.Encoding``: nanoGPT's data
preparation appends ``enc.eot_token`` to ``enc.encode_ordinary(text)`` and sizes the embedding by
``enc.n_vocab``; constrained decoders walk ``decode_single_token_bytes`` over every id up to
``max_token_value``. :class:`EncodingNames` gives each kind those names with tiktoken's meaning in
the kind's own id space, so that such code runs on an SGPE or meta tokenizer unchanged:
``n_vocab`` (given by each class), ``max_token_value``, ``eot_token``, ``special_tokens_set``,
``is_special_token``, ``encode_single_token``, ``decode_single_token_bytes``,
``decode_tokens_bytes``, ``decode_with_offsets``, ``decode_bytes_batch`` and ``token_byte_values``.
Where tiktoken raises ``KeyError`` (a text that is no single token, an id without one, no
``<|endoftext|>``) these raise :class:`~wwho.errors.UnknownTokenError`, both a ``KeyError`` and
wwho's ``TokenizerError``.

**One token's id.** In a tiktoken vocabulary a byte string is at most one token. In SGPE's, a
byte-fallback token (``<0x41>``) has the bytes of a character token (``A``), and the meta vocabulary
holds two parts whose tokens may share bytes. So :meth:`EncodingNames.encode_single_token` of a text
is the id ``encode_ordinary`` gives it when that is one token of exactly its bytes (what the text
becomes in this tokenizer's own ids); otherwise the id of a token of these bytes (a character's
token before a byte token; the meta vocabulary's tiktoken part before its SGPE part, as tiktoken
answers); a special token by its name.

Deliberately not here: ``encode_with_unstable`` and tiktoken's private ``_pat_str``,
``_mergeable_ranks`` and ``_special_tokens``, for all but byte-level vocabularies
(:mod:`wwho.bytelevel.tiktoken_names` adds them there). An SGPE vocabulary is no table of ranks under
one regex, so no ``tiktoken.Encoding`` rebuilt from those names could encode as it does: code that
tries gets an ``AttributeError``, not an Encoding that silently loses the SGPE part.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence

from wwho.errors import SurrogateError, TokenizerError, UnknownTokenError, WrongTypeError, brief
from wwho.ids import char_offsets, each_decoded, each_token_bytes, id_batch, token_id, utf8_text
from wwho.threads import thread_count

END_OF_TEXT = "<|endoftext|>"


class EncodingNames:
    """tiktoken's ``Encoding`` names (see the module docstring). The class using it gives
    ``n_vocab``, ``token_bytes``, ``decode_bytes``, ``encode_ordinary``, ``_special_ids()`` (name ->
    id of its special tokens), ``_token_ids_by_bytes()`` (bytes -> id of its ordinary tokens, each
    bytes once); :meth:`_single_token` may be given too (``ByteBPE`` gives tiktoken's own lookup)."""

    @property
    def max_token_value(self) -> int:
        """The largest id of any token, ordinary or special (tiktoken's ``max_token_value``)."""
        return self.n_vocab - 1  # type: ignore[attr-defined]

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``."""
        try:
            return self._special_ids()[END_OF_TEXT]  # type: ignore[attr-defined]
        except KeyError:
            raise UnknownTokenError(f"this vocabulary has no {END_OF_TEXT} special token") from None

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' names, a new ``set`` on each call, as tiktoken's ``special_tokens_set``."""
        return set(self._special_ids())  # type: ignore[attr-defined]

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token (False for any other integer, a negative
        one included, as tiktoken answers; a numpy integer as the int of its value)."""
        if not isinstance(token, bool):
            try:
                if operator.index(token) < 0:
                    return False
            except TypeError:
                pass  # not an integer: token_id says so
        return token_id(token) in self._special_id_values()

    def _special_id_values(self) -> frozenset[int]:
        """The special tokens' ids, a set made on first use (a vocabulary may hold thousands)."""
        values = self.__dict__.get("_special_values")
        if values is None:
            values = self.__dict__["_special_values"] = frozenset(self._special_ids().values())  # type: ignore[attr-defined]
        return values

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a text (or bytes) that is one whole token, ordinary or special (see the module
        docstring for a text more than one token has the bytes of)."""
        if isinstance(text_or_bytes, str):
            try:
                data = text_or_bytes.encode("utf-8")
            except UnicodeEncodeError as exc:  # a lone surrogate
                raise SurrogateError.of(exc, "encode_single_token") from None
        elif isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
            data = bytes(text_or_bytes)
        else:
            raise WrongTypeError(f"expected str or bytes, got {type(text_or_bytes).__name__}")
        found = self._single_token(data)
        if found is not None:
            return found
        raise UnknownTokenError(f"{brief(text_or_bytes)} is not a single token of this vocabulary")

    def _single_token(self, data: bytes) -> int | None:
        """The id of the one token ``data`` is, or None: a special token by its name, then what
        ``encode_ordinary`` makes of the text when that is one token of these bytes, then the table
        of token bytes (:meth:`_token_ids_by_bytes`)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None:
            special = self._special_ids().get(text)  # type: ignore[attr-defined]
            if special is not None:
                return special
            ids = self.encode_ordinary(text)  # type: ignore[attr-defined]
            if len(ids) == 1 and self.token_bytes(ids[0]) == data:  # type: ignore[attr-defined]
                return ids[0]
        return self._token_ids_by_bytes().get(data)  # type: ignore[attr-defined]

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token."""
        token = token_id(token)  # not an integer: a TokenizerError; negative: an UnknownTokenError
        try:
            return self.token_bytes(token)  # type: ignore[attr-defined]
        except UnknownTokenError:  # (an IdRangeError stays one: an OverflowError, as tiktoken raises)
            raise
        except TokenizerError as exc:
            raise UnknownTokenError(str(exc)) from None

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        """Each token's bytes (tiktoken names the argument ``tokens``; wwho's kinds all say ``ids``)."""
        return each_token_bytes(ids, self.token_bytes)  # type: ignore[attr-defined]

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        """The text of ``ids`` (strict UTF-8, as tiktoken) and where in it each token starts, in
        characters; a token that starts inside a character starts at that character."""
        parts = self.decode_tokens_bytes(ids)
        return utf8_text(b"".join(parts)), char_offsets(parts)

    def decode_bytes_batch(self, batch: Iterable[Iterable[int]], *, num_threads: int | None = 8) -> list[bytes]:
        """:meth:`decode_bytes` of each list of ids (``num_threads`` is checked and accepted, as
        tiktoken's signature has it; decoding is a copy per token, done on the calling thread)."""
        thread_count(num_threads)
        return each_decoded(id_batch(batch, "decode_bytes_batch"), self.decode_bytes)  # type: ignore[attr-defined]

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary token, sorted, each once (special tokens are not among them)."""
        return sorted(self._token_ids_by_bytes())  # type: ignore[attr-defined]


def first_ids_by_bytes(pairs: Iterable[tuple[int, bytes | None]], table: dict[bytes, int] | None = None,
                       ) -> dict[bytes, int]:
    """``table`` (or a new dict) with each ``(id, bytes)`` of ``pairs`` whose bytes it does not hold
    yet, ids without a token (``None``) skipped: the first token of given bytes keeps them."""
    table = {} if table is None else table
    for i, data in pairs:
        if data is not None and data not in table:
            table[data] = i
    return table
