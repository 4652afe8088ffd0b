"""tiktoken's ``encode_ordinary`` without its crash on long whitespace runs, and the same ids.

tiktoken splits text with fancy-regex, whose backtracking stack takes one entry per
character that ``\\s+`` consumes before ``(?!\\S)`` is tried: from about a million
whitespace characters in a row (999,999 spaces with tiktoken 0.14) it overflows and
tiktoken panics with ``pyo3_runtime.PanicException``, a ``BaseException`` that no
``except Exception`` stops. :class:`SafeEncoder` finds runs of :data:`LONG_RUN` or more
whitespace characters first, cuts the text around each one where tiktoken's own pieces
end anyway, hands the rest to tiktoken and has the run's piece merged with the encoding's
ranks by wwho's compiled byte-level encoder (tiktoken's rule: the whole piece if it is a token,
else the lowest-ranked pair first; ``rust/src/merge/``, linear in memory and O(n log n) on a
long piece), given the piece as one piece. Shorter runs never reach the new code.

**Why the ids are tiktoken's.** For the three regex families tiktoken ships (``o200k_base``;
``cl100k_base``; ``r50k_base``/``p50k_base``/``gpt2``), let a *run* be a maximal stretch of
White_Space characters other than ``\\r`` and ``\\n`` (any White_Space for the gpt2 family,
which has no newline alternative), ``R = text[s:b]``, ``k = b - s >= 2``, followed by a
character ``X = text[b]`` that is not whitespace.

1. *No piece crosses s.* Only the whitespace alternatives take a run character after a
   piece's first one (the punctuation alternative's tail takes only ``\\r``, ``\\n``, ``/``),
   and they start on whitespace; as the run is maximal, such a piece would start in
   whitespace that ends with ``\\r`` or ``\\n`` at ``s - 1`` (newline-aware families). There
   the letter, digit and punctuation alternatives cannot match (they need a non-whitespace
   character within their first two) and the newline alternative (``\\s*[\\r\\n]+``,
   ``\\s*[\\r\\n]``), tried before ``\\s+(?!\\S)``, ends at the last newline: at ``s``.
   (cl100k's ``\\s++$`` comes first but fails: the whitespace ends at ``X``.)
2. *The pieces before s are those of text[:s].* An attempt that starts before ``s`` reads
   at most one character from ``s`` on, ``text[s]``, and only to find that it cannot take
   it; at the end of ``text[:s]`` it finds the same. The exceptions are ``$`` and ``(?!\\S)``,
   which succeed at the end: ``(?!\\S)`` is never reached (step 1: the newline alternative
   wins first), and cl100k's ``\\s++$`` then matches exactly what ``\\s*[\\r\\n]`` matched.
3. *At s the piece is text[s:b-1].* The letter, digit and punctuation alternatives need a
   non-whitespace character within two (``k >= 2``); the newline alternative finds no
   newline before ``X``; ``\\s++$`` fails at ``X``; ``\\s+(?!\\S)`` takes the run, fails the
   lookahead at ``X`` and gives one character back.
4. *The pieces from b - 1 on are those of text[b-1:]*: no pattern looks behind or anchors
   at the start.

So the ids are tiktoken's encoding of ``text[:s]``, then BPE of ``text[s:b-1]``, then
tiktoken's encoding of ``text[b-1:]`` (cut again at its next long run). A run that ends
the text is cut only for ``o200k_base`` (steps 1, 2 and, at ``s``, ``\\s+(?!\\S)`` takes it
all); the other families match it with the possessive ``\\s++$``, which does not overflow,
and a run followed by ``\\r``/``\\n`` is matched by the newline alternative, which fancy-regex
hands to the (non-backtracking) regex crate. ``tests/test_safe_tiktoken.py`` checks this
against tiktoken for runs up to 990,000 characters in every context. For a pattern that
is none of these, a text with a long whitespace run is encoded by wwho's own byte-level
encoder (:class:`~wwho.bytelevel.ByteBPE`, same ranks and pattern), which agrees with
tiktoken wherever the ``regex`` module and fancy-regex split alike.

This module does not change tiktoken's handling of anything else (special tokens, lone
surrogates: the cuts fall next to whitespace, never inside a surrogate pair).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

#: Whitespace runs at least this long are cut out before tiktoken sees the text (it
#: overflows at about 1,000,000; any length >= 2 gives the same ids).
LONG_RUN = 1 << 16

# White_Space (the regex crate's ``\s``), as a character class body; without \r and \n.
_SPACES = "\\t\\x0b\\x0c \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
_NEWLINES = "\\r\\n"
#: The pre-tokenizer of the run's encoder: everything is one piece.
_ONE_PIECE = "(?s:.+)"
_WHITESPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
                        + "".join(map(chr, range(0x2000, 0x200B))))


def _family_patterns() -> dict[str, tuple[str, bool]]:
    """tiktoken pattern -> (run characters, whether a run that ends the text is cut)."""
    from wwho.bytelevel.pretokenize import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

    return {
        O200K_PATTERN: (_SPACES, True),
        CL100K_PATTERN: (_SPACES, False),
        GPT2_PATTERN: (_SPACES + _NEWLINES, False),
    }


class SafeEncoder:
    """``encode_ordinary`` of a ``tiktoken.Encoding``, safe on any text (module docstring).

    ``long_run``: whitespace runs this long or longer are cut out (any value >= 2 gives the
    same ids; the tests use 2 to check the argument on short texts). ``token_bytes`` gives
    the bytes of every id (``None`` for unassigned ids); by default it is read from the
    encoding with ``decode_single_token_bytes``, once, when a long run is first found.
    """

    def __init__(self, encoding: Any, *, long_run: int = LONG_RUN,
                 token_bytes: Callable[[], Sequence[bytes | None]] | None = None) -> None:
        if isinstance(long_run, bool) or not isinstance(long_run, int) or long_run < 2:
            raise ValueError(f"long_run must be an int >= 2, not {long_run!r}")
        self.encoding = encoding
        self.long_run = long_run
        self._token_bytes = token_bytes
        self._ranks: dict[bytes, int] | None = None
        self._fallback: Any = None
        self._run: Any = None
        family = _family_patterns().get(getattr(encoding, "_pat_str", None))
        run_chars, self._cut_at_end = family if family is not None else (_SPACES + _NEWLINES, False)
        self._known = family is not None
        self._long_runs = re.compile(f"(?<![{run_chars}])[{run_chars}]{{{long_run},}}").finditer

    def encode_ordinary(self, text: str) -> list[int]:
        """tiktoken's ids of ``text`` (special-token text is ordinary text)."""
        encode = self.encoding.encode_ordinary
        if len(text) < self.long_run:
            return encode(text)
        runs = [m.span() for m in self._long_runs(text)]
        if not runs:
            return encode(text)
        if not self._known:
            return self._fallback_encoder().encode_ordinary(text)
        ids: list[int] = []
        pos = 0
        for s, b in runs:
            if b < len(text):
                if text[b] in _WHITESPACE:  # \r or \n: the newline alternative takes it, no overflow
                    continue
                end = b - 1
            elif self._cut_at_end:
                end = b
            else:
                continue
            if s > pos:
                ids += encode(text[pos:s])
            ids += self._piece_ids(text[s:end])
            pos = end
        if pos < len(text):
            ids += encode(text[pos:])
        return ids

    def _ranks_table(self) -> dict[bytes, int]:
        if self._ranks is None:
            table = self._token_bytes() if self._token_bytes is not None else _read_token_bytes(self.encoding)
            specials = set(getattr(self.encoding, "special_tokens_set", ()))
            special_ids = {self.encoding.encode_single_token(s) for s in specials}
            self._ranks = {data: i for i, data in enumerate(table) if data is not None and i not in special_ids}
        return self._ranks

    def _piece_ids(self, piece: str) -> list[int]:
        """tiktoken's BPE of one piece: the piece itself if it is a token, else merges by rank."""
        if self._run is None:
            from wwho.bytelevel.tokenizer import ByteBPE

            # The whole text is one piece: the run's piece is cut out already.
            self._run = ByteBPE(self._ranks_table(), pattern=_ONE_PIECE, cache_bytes=0)
        return self._run.encode_ordinary(piece)

    def _fallback_encoder(self) -> Any:
        if self._fallback is None:
            from wwho.bytelevel.tokenizer import ByteBPE

            self._fallback = ByteBPE(self._ranks_table(), pattern=self.encoding._pat_str, cache_bytes=0)
        return self._fallback


def _read_token_bytes(encoding: Any) -> list[bytes | None]:
    out: list[bytes | None] = []
    for i in range(encoding.n_vocab):
        try:
            out.append(encoding.decode_single_token_bytes(i))
        except KeyError:
            out.append(None)
    return out
