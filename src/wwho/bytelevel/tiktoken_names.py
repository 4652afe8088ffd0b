"""The rest of ``tiktoken.Encoding``'s interface, for :class:`~wwho.bytelevel.ByteBPE`.

ByteBPE already answers to tiktoken's everyday names (``encode``, ``encode_ordinary``, ``encode_batch``,
``encode_to_numpy``, ``decode``, ``decode_bytes``, ``n_vocab``, ``special_tokens_set``); the names every
text kind shares (``encode_single_token``, ``decode_single_token_bytes``, ``decode_tokens_bytes``,
``decode_with_offsets``, ``decode_bytes_batch``, ``token_byte_values``, ``is_special_token``,
``eot_token``, ``max_token_value``) come from :class:`wwho.encoding_names.EncodingNames`, with
tiktoken's results (compared with tiktoken on o200k_base in the tests); this mixin adds what only a
vocabulary of ranks under a pre-tokenizer has: the private ``_pat_str``, ``_mergeable_ranks`` and
``_special_tokens`` that code extending an Encoding reads, and ``encode_with_unstable``. Ids are read as
every decoder of wwho reads them (:func:`wwho.ids.token_ids`): a dict, a set, bytes or a float is refused,
where tiktoken would take a dict's keys or a byte string's values. Where tiktoken raises ``KeyError`` (a
string that is no token, an id without one, no ``<|endoftext|>``) these raise
:class:`~wwho.errors.UnknownTokenError`, which is both a ``KeyError`` and wwho's ``TokenizerError``.

``encode_with_unstable`` (tiktoken marks it unstable itself: a text's ids that more text cannot change,
and the completions of its last piece) is worked out in :mod:`wwho.bytelevel.unstable`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from wwho.encoding_names import END_OF_TEXT, EncodingNames
from wwho.protocol import ALL_SPECIALS, NO_SPECIALS

__all__ = ["END_OF_TEXT", "TiktokenNames"]


class TiktokenNames(EncodingNames):
    """tiktoken's remaining ``Encoding`` methods (see the module docstring). The class using it has
    ``_encoder`` (bytes -> id of the ordinary tokens), ``special_tokens`` and ``added_tokens`` (name ->
    id), ``pretokenizer``, ``token_bytes`` and ``decode_bytes``."""

    def _special_ids(self) -> Mapping[str, int]:
        return self.special_tokens  # type: ignore[attr-defined]

    def _token_ids_by_bytes(self) -> Mapping[bytes, int]:
        return self._encoder  # type: ignore[attr-defined]

    def _single_token(self, data: bytes) -> int | None:
        """tiktoken's lookup: an ordinary token's bytes, else a special (or added) token's name."""
        found = self._encoder.get(data)  # type: ignore[attr-defined]
        if found is not None:
            return found
        try:
            name = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        for table in (self.special_tokens, self.added_tokens):  # type: ignore[attr-defined]
            if name in table:
                return table[name]
        return None

    # tiktoken's private names that code extending an Encoding reads (tiktoken's README builds a new
    # Encoding from ``_pat_str``, ``_mergeable_ranks`` and ``_special_tokens``): copies, as there
    # (``_mergeable_ranks`` one copy, kept, as tiktoken keeps its dict).

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
        """The ordinary tokens' bytes -> id: a copy made on the first read, then the same dict on
        every read, as tiktoken's attribute is (code reads it a token at a time); changing it changes
        no encoding. :attr:`ranks` is the read-only view."""
        ranks = self.__dict__.get("_mergeable_ranks_copy")
        if ranks is None:  # (two threads may both build one; the first kept serves both after)
            ranks = self.__dict__.setdefault("_mergeable_ranks_copy", dict(self._encoder))  # type: ignore[attr-defined]
        return ranks

    @property
    def _special_tokens(self) -> dict[str, int]:
        """The special tokens' names -> ids (a new dict)."""
        return dict(self.special_tokens)  # type: ignore[attr-defined]

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
