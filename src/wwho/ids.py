"""Token ids handed to a decoder: which values count as ids, checked once for every kind.

An id is a Python ``int``, a numpy integer (``numpy.int64``, ``numpy.uint16``, ...) or any
object with ``__index__`` (``operator.index``), and is never a ``bool``: ``True`` is not
token 1, although Python would compare and hash it as 1. Every decoder (SGPE, meta,
byte-level, binary) goes through :func:`token_ids`, so the kinds accept and refuse the
same values. The common case, a list of plain ints in range, costs two C-level passes.
This module does not decode anything.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

from wwho.errors import TokenizerError


def token_ids(ids: Iterable[object], size: int | None = None) -> list[int]:
    """``ids`` as a list of plain ints, each in ``[0, size)`` when ``size`` is given.

    Raises :class:`TokenizerError` naming the first id that is not an integer (a bool, a
    float, a string) or is out of range, and its position.
    """
    if isinstance(ids, (str, bytes)):
        raise TokenizerError(f"expected a sequence of token ids, got {type(ids).__name__}")
    kind = getattr(getattr(ids, "dtype", None), "kind", None)
    if kind in ("i", "u"):  # a numpy array of integers: one C-level conversion
        ids = ids.tolist()  # type: ignore[attr-defined]
    elif not isinstance(ids, list):
        try:
            ids = list(ids)  # type: ignore[call-overload]
        except TypeError:
            raise TokenizerError(f"expected a sequence of token ids, got {type(ids).__name__}") from None
    plain = bool(ids) and set(map(type, ids)) == {int}
    if plain and (size is None or (min(ids) >= 0 and max(ids) < size)):
        return ids  # type: ignore[return-value]
    out: list[int] = []
    for position, value in enumerate(ids):
        out.append(token_id(value, size, position=position))
    return out


def token_id(value: object, size: int | None = None, *, position: int | None = None) -> int:
    """One id as a plain int (see :func:`token_ids`)."""
    where = "" if position is None else f" at position {position}"

    def refuse(what: str) -> TokenizerError:
        if position is None:
            return TokenizerError(f"token id {value!r} is {what}")
        return TokenizerError(f"token id at position {position} is {value!r}, {what}")

    if isinstance(value, bool):  # numpy's bool has no __index__: refused below
        raise refuse("a bool, not an integer")
    try:
        i = operator.index(value)
    except TypeError:
        raise refuse("not an integer") from None
    if i < 0 or (size is not None and i >= size):
        bound = "negative" if size is None else f"out of range [0, {size})"
        raise TokenizerError(f"token id {i}{where} is {bound}")
    return i
