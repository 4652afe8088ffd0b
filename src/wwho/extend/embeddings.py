"""Starting embeddings for an extension's new tokens: :func:`init_embeddings` (numpy only).

A new token's row starts as the mean of the base rows of the base tokens that encode its bytes:
``base.encode_ordinary(text)`` for a token that is whole UTF-8 text, and for the few that are not
(a character's lead bytes, a joiner half built onto the sign before it), the base's ids of the
longest whole-text prefix followed by the single-byte tokens of the rest. Every base row is
copied unchanged. A matrix with more rows than the base's ``n_vocab`` (padding, as in Qwen2's
models) keeps its extra rows; new ids that fall among them overwrite padding, never a real token.

Not here: torch, model surgery (see ``docs/extend.md`` for ``resize_token_embeddings``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wwho.bytelevel import ByteBPE
from wwho.errors import VocabError

if TYPE_CHECKING:  # imported where used: `wwho --version` does without numpy
    import numpy as np
    from numpy.typing import ArrayLike


def base_ids_of(base: ByteBPE, token: bytes) -> list[int]:
    """The base ids that encode ``token``'s bytes (see the module docstring)."""
    try:
        return base.encode_ordinary(token.decode("utf-8"))
    except UnicodeDecodeError as exc:
        head, rest = token[: exc.start], token[exc.start :]
        ids = base.encode_ordinary(head.decode("utf-8")) if head else []
        ranks = base.ranks
        return ids + [ranks[bytes([b])] for b in rest]


def init_embeddings(base: ByteBPE, extended: ByteBPE, matrix: ArrayLike) -> np.ndarray:
    """The extended embedding matrix: base rows copied, each new row the mean of its base tokens' rows.

    ``matrix``: the base model's embedding (or output) matrix, rows indexed by base id, at least
    ``base.n_vocab`` rows (anything ``numpy.asarray`` takes: a numpy array, a CPU torch tensor's
    ``.numpy()``). Returns a new array of ``max(extended.n_vocab, len(matrix))`` rows, same dtype:
    **the row count to use**, ``model.resize_token_embeddings(out.shape[0])``. For an extension
    written by wwho it is ``len(AutoTokenizer.from_pretrained(DIR))`` (every id, holes and padding
    included, has a token), or more where the base matrix was padded further. A padding id beyond
    the base matrix starts as the mean of the base rows; the base's own rows (its holes too) are copied.
    """
    import numpy as np

    weights = np.asarray(matrix)
    if weights.ndim != 2:
        raise VocabError(f"the embedding matrix must be 2-dimensional, not of shape {weights.shape}")
    first = base.n_vocab
    if weights.shape[0] < first:
        raise VocabError(f"the matrix has {weights.shape[0]} rows, fewer than the base's n_vocab ({first})")
    if extended.n_vocab < first or any(extended.token_bytes(i) != base.token_bytes(i) for i in _sample(base)):
        raise VocabError("extended is not an extension of base (its first ids are not the base's tokens)")
    out = np.empty((max(extended.n_vocab, weights.shape[0]), weights.shape[1]), dtype=weights.dtype)
    out[: weights.shape[0]] = weights
    reserved = set(extended.special_tokens.values())  # after the base, only padding is special
    mean = weights[:first].astype(np.float64).mean(axis=0).astype(weights.dtype)
    for i in range(first, extended.n_vocab):
        if i not in reserved:
            ids = base_ids_of(base, extended.token_bytes(i))
            out[i] = weights[ids].astype(np.float64).mean(axis=0).astype(weights.dtype)
        elif i >= weights.shape[0]:  # padding beyond the base matrix: no text to start from
            out[i] = mean
    return out


def _sample(base: ByteBPE) -> list[int]:
    """A few base ids spread over the vocabulary, to tell a wrong pairing of tokenizers early."""
    ids = sorted(base.ranks.values())
    step = max(1, len(ids) // 64)
    return ids[::step]
