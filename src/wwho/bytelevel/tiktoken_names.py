"""The rest of ``tiktoken.Encoding``'s interface, for :class:`~wwho.bytelevel.ByteBPE`.

ByteBPE already answers to tiktoken's everyday names (``encode``, ``encode_ordinary``, ``encode_batch``,
``encode_to_numpy``, ``decode``, ``decode_bytes``, ``n_vocab``, ``special_tokens_set``); this mixin adds
the others, with tiktoken's results (compared with tiktoken on o200k_base in the tests), so that code
written for a ``tiktoken.Encoding`` runs on a ByteBPE unchanged: ``encode_single_token``,
``decode_single_token_bytes``, ``decode_tokens_bytes``, ``decode_with_offsets``, ``decode_bytes_batch``,
``token_byte_values``, ``is_special_token``, ``eot_token`` and ``max_token_value``; and the private
``_pat_str``, ``_mergeable_ranks`` and ``_special_tokens`` that code extending an Encoding reads. Their ids are read as
every decoder of wwho reads them (:func:`wwho.ids.token_ids`): a dict, a set, bytes or a float is refused,
where tiktoken would take a dict's keys or a byte string's values. Where tiktoken raises ``KeyError`` (a
string that is no token, an id without one, no ``<|endoftext|>``) these raise
:class:`~wwho.errors.UnknownTokenError`, which is both a ``KeyError`` and wwho's ``TokenizerError``.

``encode_with_unstable`` (tiktoken marks it unstable itself: a text's ids that more text cannot change,
and the completions of its last piece) is here too, worked out in :mod:`wwho.bytelevel.unstable`.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Literal

from wwho.errors import TokenizerError, UnknownTokenError, WrongTypeError, brief
from wwho.ids import char_offsets, each_decoded, each_token_bytes, id_batch, token_id
from wwho.protocol import ALL_SPECIALS, NO_SPECIALS
from wwho.threads import thread_count

END_OF_TEXT = "<|endoftext|>"


class TiktokenNames:
    """tiktoken's remaining ``Encoding`` methods (see the module docstring). The class using it has
    ``_encoder`` (bytes -> id of the ordinary tokens), ``special_tokens`` and ``added_tokens`` (name ->
    id), ``pretokenizer``, ``token_bytes`` and ``decode_bytes``."""

    # tiktoken's private names that code extending an Encoding reads (tiktoken's README builds a new
    # Encoding from ``_pat_str``, ``_mergeable_ranks`` and ``_special_tokens``): copies, as there.

    @property
    def _pat_str(self) -> str:
        """The pre-tokenizer's regex, where it is one (a GGUF sequence of several has none)."""
        pre = self.pretokenizer  # type: ignore[attr-defined]
        if len(pre.patterns) != 1 or pre.byte_patterns:
            raise AttributeError(f"_pat_str: this pre-tokenizer is {len(pre.patterns) + len(pre.byte_patterns)} "
                                 "regexes in turn, which no single tiktoken pattern expresses")
        return pre.patterns[0]

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        """The ordinary tokens' bytes -> id (a new dict: :attr:`ranks` is the read-only view)."""
        return dict(self._encoder)  # type: ignore[attr-defined]

    @property
    def _special_tokens(self) -> dict[str, int]:
        """The special tokens' names -> ids (a new dict)."""
        return dict(self.special_tokens)  # type: ignore[attr-defined]

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a text (or bytes) that is one whole token, ordinary, special or added."""
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else text_or_bytes
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise WrongTypeError(f"expected str or bytes, got {type(text_or_bytes).__name__}")
        data = bytes(data)
        found = self._encoder.get(data)  # type: ignore[attr-defined]
        if found is not None:
            return found
        try:
            name = data.decode("utf-8")
        except UnicodeDecodeError:
            name = None
        if name is not None:
            for table in (self.special_tokens, self.added_tokens):  # type: ignore[attr-defined]
                if name in table:
                    return table[name]
        raise UnknownTokenError(f"{brief(text_or_bytes)} is not a single token of this vocabulary")

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token."""
        token = token_id(token)  # not an integer: a TokenizerError; negative: an UnknownTokenError
        try:
            return self.token_bytes(token)  # type: ignore[attr-defined]
        except UnknownTokenError:  # (an IdRangeError stays one: an OverflowError, as tiktoken raises)
            raise
        except TokenizerError as exc:
            raise UnknownTokenError(str(exc)) from None

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """Each token's bytes."""
        return each_token_bytes(tokens, self.token_bytes)  # type: ignore[attr-defined]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text of ``tokens`` (strict UTF-8, as tiktoken) and where in it each token starts, in
        characters; a token that starts inside a character starts at that character."""
        parts = self.decode_tokens_bytes(tokens)
        return b"".join(parts).decode("utf-8", errors="strict"), char_offsets(parts)

    def decode_bytes_batch(self, batch: Iterable[Iterable[int]], *, num_threads: int | None = 8) -> list[bytes]:
        """:meth:`decode_bytes` of each list of ids (``num_threads`` is checked and accepted, as
        tiktoken's signature has it; decoding is a copy per token, done on the calling thread)."""
        thread_count(num_threads)
        return each_decoded(id_batch(batch, "decode_bytes_batch"), self.decode_bytes)  # type: ignore[attr-defined]

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary token, sorted (special and added tokens are not among them)."""
        return sorted(self._encoder)  # type: ignore[attr-defined]

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token (False for any other integer, a negative
        one included, as tiktoken answers; a numpy integer as the int of its value)."""
        if not isinstance(token, bool):
            try:
                if operator.index(token) < 0:
                    return False
            except TypeError:
                pass  # not an integer: token_id says so
        return token_id(token) in self.special_tokens.values()  # type: ignore[attr-defined]

    @property
    def max_token_value(self) -> int:
        """The largest id of any token, ordinary, special or added (tiktoken's ``max_token_value``)."""
        return self.n_vocab - 1  # type: ignore[attr-defined]

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``."""
        try:
            return self.special_tokens[END_OF_TEXT]  # type: ignore[attr-defined]
        except KeyError:
            raise UnknownTokenError(f"this vocabulary has no {END_OF_TEXT} special token") from None

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Iterable[str] = NO_SPECIALS,
        disallowed_special: Literal["all"] | Iterable[str] = ALL_SPECIALS,
    ) -> tuple[list[int], list[list[int]]]:
        """tiktoken's ``encode_with_unstable``: ``(stable, completions)``, the ids of ``text`` that more
        text cannot change, and every id sequence its unstable end could become once text follows
        (tiktoken's set, as a sorted list). Special tokens as :meth:`encode` takes them; lone
        surrogates as U+FFFD, as :meth:`encode` does (tiktoken raises there). For completion-style
        prompting: see :mod:`wwho.bytelevel.unstable`."""
        from wwho.bytelevel.unstable import encode_with_unstable

        return encode_with_unstable(self, text, allowed_special, disallowed_special)
