"""tiktoken's ``encode_with_unstable`` for :class:`~wwho.bytelevel.ByteBPE`: the ids of a text that
more text cannot change, and every id sequence its unstable end could become.

A text's last pre-tokenizer piece may merge differently, or join the next piece, once more text
follows it (``"hello fan"`` then ``"ta"``). tiktoken's answer, which this reproduces id for id
(completions as a set):

1. the ids of the text as :meth:`ByteBPE.encode` gives them (special tokens as its options say);
   the unstable end is the last piece's ids, and before them every id that is all spaces, tabs
   and newlines while the last piece's first one is (tiktoken's guard for regexes such as
   ``\\s*[\\r\\n]+``, whose splits can vanish when text is added); nothing is unstable after a
   special or added token;
2. the completions: every token whose bytes start with the unstable bytes; then, for every cut of
   the unstable bytes into a head and a tail, every token that starts with the tail, appended to
   the head and encoded again (text with :meth:`ByteBPE.encode_ordinary`, bytes that are not UTF-8
   merged as one piece with no lookup of the whole), up to the ids that cover the unstable bytes;
   and, where the unstable bytes end in a whitespace character, the head and that character
   merged apart.

The ids come from the compiled core (``encode_ordinary``, ``merge_bytes``); this module only
searches the sorted token bytes and assembles the sequences. Its cost is tiktoken's: every
completion re-encodes the unstable end with one more token, so a long last piece costs its
length times the tokens that may follow it (docs/benchmarks.md has the measurements). It does
not make the stable part longer than tiktoken does (tiktoken's own comment says it could try
harder), and it does not apply to SGPE or meta tokenizers.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Any

import regex

#: The bytes tiktoken counts as space in a token when it widens the unstable end.
_SPACE_BYTES = frozenset(b" \n\t")
#: Unicode's White_Space (Rust's ``char::is_whitespace``, which tiktoken asks).
_WHITE_SPACE = regex.compile(r"\p{White_Space}")


def encode_with_unstable(tok: Any, text: str, allowed_special: Any, disallowed_special: Any) -> tuple[list[int], list[list[int]]]:
    """See the module docstring; ``tok`` is a :class:`~wwho.bytelevel.ByteBPE` (not imported: it imports
    this module), the options are :meth:`~wwho.bytelevel.ByteBPE.encode`'s."""
    ids = tok.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    size = _last_piece_size(tok, ids)
    if size == 0:
        return ids, []
    tail = _ids_covering(tok, ids, size)
    tail = _widened(tok, ids, tail)
    unstable = tok.decode_bytes(ids[len(ids) - tail:])
    stable = ids[: len(ids) - tail]
    completions = {tuple(seq) for seq in _completions(tok, unstable)}
    return stable, [list(seq) for seq in sorted(completions)]


def _last_piece_size(tok: Any, ids: list[int]) -> int:
    """The UTF-8 length of the last pre-tokenizer piece of the text after its last special or
    added token (0 where the text ends with one, or is empty)."""
    named = tok._named_ids
    last = len(ids)
    while last > 0 and ids[last - 1] not in named:
        last -= 1
    if last == len(ids):
        return 0
    # The ids spell the text's UTF-8 exactly (lone surrogates as U+FFFD, as encode made them).
    segment = tok.decode_bytes(ids[last:]).decode("utf-8")
    pieces = tok.pretokenizer.split_bytes(segment)
    return len(pieces[-1]) if pieces else 0


def _ids_covering(tok: Any, ids: list[int], size: int) -> int:
    """How many ids at the end of ``ids`` spell the last ``size`` bytes (no token spans two pieces)."""
    count = covered = 0
    while covered < size:
        count += 1
        covered += len(tok.token_bytes(ids[-count]))
    return count


def _widened(tok: Any, ids: list[int], tail: int) -> int:
    """tiktoken's ``_increase_last_piece_token_len``: a last piece that starts with a token of
    spaces, tabs and newlines takes the tokens of that kind before it too."""
    def all_space(token_id: int) -> bool:  # an ordinary token's bytes (tiktoken's decoder has no others)
        return token_id not in tok._named_ids and all(b in _SPACE_BYTES for b in tok.token_bytes(token_id))

    if tail > 0 and all_space(ids[-tail]):
        while tail < len(ids) and all_space(ids[-tail - 1]):
            tail += 1
    return tail


def _starting_with(tokens: list[bytes], prefix: bytes) -> Iterator[bytes]:
    """The tokens (sorted) whose bytes start with ``prefix``."""
    at = bisect.bisect_left(tokens, prefix)
    while at < len(tokens) and tokens[at].startswith(prefix):
        yield tokens[at]
        at += 1


def _sorted_tokens(tok: Any) -> tuple[list[bytes], int]:
    """The ordinary tokens' bytes, sorted, and the longest one's length: built on the first call and
    kept with the tokenizer (a list of the vocabulary's own bytes objects; assigned whole, so a
    thread sees none or all)."""
    index = tok.__dict__.get("_sorted_tokens")
    if index is None:
        tokens = sorted(tok.ranks)
        index = tok.__dict__["_sorted_tokens"] = (tokens, max(map(len, tokens)))
    return index


def _merged(tok: Any, data: bytes) -> list[int]:
    """``data`` merged as one piece, with no lookup of the whole (tiktoken's ``byte_pair_encode``)."""
    try:
        return tok._core.merge_bytes(data)
    except Exception as exc:  # noqa: BLE001 - the core's error mapped as encode maps it
        raise tok._error(exc) from None


def _completions(tok: Any, unstable: bytes) -> Iterator[list[int]]:
    (tokens, longest), ranks = _sorted_tokens(tok), tok.ranks
    for token in _starting_with(tokens, unstable):
        yield [ranks[token]]
    # A tail longer than every token starts none: those cuts are skipped without copying the
    # tail (a last piece of a million letters would otherwise copy it a million times).
    for cut in range(max(1, len(unstable) - longest), len(unstable)):
        head, rest = unstable[:cut], unstable[cut:]
        for token in _starting_with(tokens, rest):
            possibility = head + token
            try:
                encoded = tok.encode_ordinary(possibility.decode("utf-8"))
            except UnicodeDecodeError:
                encoded = _merged(tok, possibility)
            seq, covered = [], 0
            for token_id in encoded:
                seq.append(token_id)
                covered += len(tok.token_bytes(token_id))
                if covered >= len(unstable):
                    break
            yield seq
    cut = len(unstable) - _last_character_width(unstable)
    if 0 < cut < len(unstable) and _WHITE_SPACE.match(unstable[cut:].decode("utf-8")):
        yield [*_merged(tok, unstable[:cut]), *_merged(tok, unstable[cut:])]


def _last_character_width(data: bytes) -> int:
    """How many bytes the character at the end of ``data`` takes, or 0 where they are not UTF-8."""
    for width in range(1, min(4, len(data)) + 1):
        try:
            decoded = data[-width:].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return width if len(decoded) == 1 else 0
    return 0
