"""The meta vocabulary's id space and token strings: which part an id is of, and how it is spelled.

Ids (spec 001 section 5)::

    [0, n)          tiktoken's ids, unchanged (n = n_vocab, 200,019 for o200k_base)
    [n, n + k)      SGPE's ids plus n (k = len(sgpe vocabulary))

:class:`MetaVocab` is only that arithmetic (it knows n and the SGPE vocabulary, never tiktoken).
Token strings (``convert_ids_to_tokens``, ``get_vocab``, the transformers class) must map
one-to-one to ids, and tiktoken tokens are bytes, so :func:`token_strings` writes tiktoken tokens
with the GPT-2 byte-to-character mapping (``"Ġthe"``), tiktoken specials as their text, SGPE
tokens as their text when it has a character outside that mapping's alphabet (every Indic token),
and otherwise (``[PAD]``, ``<0x41>``) as ``⟦sgpe⟧`` + text; unassigned ids are
``⟦unassigned ID⟧``. This module does not encode or decode (:mod:`wwho.meta` does) and holds no
tiktoken ranks: the caller hands :func:`token_strings` each id's bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from wwho.bytelevel.pretokenize import BYTE_TO_UNICODE
from wwho.errors import TokenizerError, VocabError, WrongTypeError
from wwho.ids import token_id

SGPE_PREFIX = "\u27e6sgpe\u27e7"  # ⟦sgpe⟧
NAMESPACE = SGPE_PREFIX[0]

# GPT-2's byte -> character mapping (shared with the byte-level pre-tokenizers).
BYTE_CHARS = [BYTE_TO_UNICODE[b] for b in range(256)]
ALPHABET = frozenset(BYTE_CHARS)
_LATIN1_TO_CHARS = {b: c for b, c in enumerate(BYTE_CHARS)}


def bytes_to_token_string(data: bytes) -> str:
    """A tiktoken token's string form (GPT-2 byte mapping)."""
    return data.decode("latin-1").translate(_LATIN1_TO_CHARS)


def sgpe_token_string(token: str) -> str:
    """An SGPE token's string form: itself, unless it could be read as a tiktoken token."""
    if token.startswith(NAMESPACE) or all(c in ALPHABET for c in token):
        return SGPE_PREFIX + token
    return token


def token_strings(offset: int, tiktoken_specials: Mapping[str, int],
                  token_bytes: Callable[[int], bytes | None], sgpe_tokens: Iterable[str]) -> tuple[list[str], dict[str, int]]:
    """Every id's token string, and the id of each: the ``offset`` ids of the tiktoken part (an id
    whose ``token_bytes`` is None is unassigned), then the SGPE part's ``sgpe_tokens`` in id order."""
    names = {i: s for s, i in tiktoken_specials.items()}
    strings = [names[i] if i in names else f"\u27e6unassigned {i}\u27e7" if b is None
               else bytes_to_token_string(b) for i, b in ((i, token_bytes(i)) for i in range(offset))]
    strings += [sgpe_token_string(t) for t in sgpe_tokens]
    ids = {s: i for i, s in enumerate(strings)}
    if len(ids) != len(strings):  # only a special written like an ordinary token could do this
        seen: set[str] = set()
        dup = next(s for s in strings if s in seen or seen.add(s))
        raise VocabError(f"two ids have the token string {dup!r}")
    return strings, ids


class MetaVocab:
    """The unified id space: tiktoken's ``[0, offset)`` then SGPE's ids plus ``offset``."""

    def __init__(self, tiktoken_size: int, sgpe_vocab: Mapping[str, int]) -> None:
        if type(tiktoken_size) is not int or tiktoken_size < 0:
            raise VocabError(f"tiktoken_size must be a non-negative int, not {tiktoken_size!r}")
        self.offset = tiktoken_size
        self.sgpe_vocab = dict(sgpe_vocab)
        self._tokens: list[str | None] = [None] * len(self.sgpe_vocab)
        for token, i in self.sgpe_vocab.items():
            if type(i) is not int or not 0 <= i < len(self._tokens) or self._tokens[i] is not None:
                raise VocabError(f"SGPE ids must be 0..{len(self._tokens) - 1} without duplicates; {token!r} has {i!r}")
            self._tokens[i] = token

    @property
    def sgpe_size(self) -> int:
        return len(self._tokens)

    @property
    def size(self) -> int:
        """``tiktoken n_vocab + len(sgpe)``: every id is below this."""
        return self.offset + len(self._tokens)

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"MetaVocab(offset={self.offset}, sgpe_size={self.sgpe_size}, size={self.size})"

    def encode_sgpe_token(self, token: str, *, unk_id_raw: int | None = None) -> int:
        """The unified id of an SGPE token; an unknown token gets ``unk_id_raw`` (shifted) if given."""
        if not isinstance(token, str):  # (a list was an unhashable TypeError from the dict)
            raise WrongTypeError(f"an SGPE token is a str, not {type(token).__name__}")
        raw = self.sgpe_vocab.get(token)
        if raw is None:
            if unk_id_raw is None:
                raise VocabError(f"{token!r} is not a token of the SGPE vocabulary")
            if type(unk_id_raw) is not int or not 0 <= unk_id_raw < self.sgpe_size:
                raise VocabError(f"unk_id_raw {unk_id_raw!r} is not an SGPE id (0..{self.sgpe_size - 1})")
            raw = unk_id_raw
        return raw + self.offset

    def is_tiktoken_id(self, uid: int) -> bool:
        return 0 <= self._check(uid) < self.offset

    def is_sgpe_id(self, uid: int) -> bool:
        return self._check(uid) >= self.offset

    def sgpe_id(self, uid: int) -> int:
        """The SGPE vocabulary's own id of a unified SGPE id."""
        if not self.is_sgpe_id(uid):
            raise TokenizerError(f"id {uid} is a tiktoken id, not an SGPE one (those start at {self.offset})")
        return self._check(uid) - self.offset  # an int, for a numpy integer too

    def decode_id(self, uid: int) -> str | None:
        """The SGPE token string of ``uid``; ``None`` for the tiktoken range (spec 001 section 3.4)."""
        uid = self._check(uid)
        return None if uid < self.offset else self._tokens[uid - self.offset]

    def _check(self, uid: int) -> int:
        return token_id(uid, self.size)  # ints, numpy integers, __index__ objects; never bools
