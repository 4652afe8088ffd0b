"""What the public methods of every tokenizer kind are handed, checked once for all kinds:
token ids (:func:`token_ids`) and batches (:func:`batch`); and, when a tokenizer is made,
the module that returns ids as arrays (:func:`prepare_arrays`).

An id is a Python ``int``, a numpy integer (``numpy.int64``, ``numpy.uint16``, ...) or any
object with ``__index__`` (``operator.index``), and is never a ``bool``: ``True`` is not
token 1, although Python would compare and hash it as 1. Every decoder (SGPE, meta,
byte-level, binary) goes through :func:`token_ids`, so the kinds accept and refuse the
same values. The common case, a list of plain ints in range, costs two C-level passes.

What is *not* a sequence of ids, although Python would iterate it: a str or bytes (a bytearray,
a memoryview of bytes; a memoryview of wider integers is ids, as an ``array.array`` is); a numpy
masked array with entries masked (its buffer still holds them); a dict (its
keys would be decoded: ``decode({5: 1})`` gave token 5's text) or a set (no order); one id on its
own (``decode(np.int64(5))`` raised a bare ``TypeError``: say ``decode([5])``). A batch is a list
(or any other ordered iterable) of texts: a single str is not one (``encode_batch("hello")``
encoded each character), nor, for a binary tokenizer, a single bytes object, nor a dict or set;
nor, for ``decode_batch``, a tuple of a flat form's two arrays, ``ids`` and ``offsets``, packed
again after unpacking a :class:`wwho.arrays.FlatIds` (its offsets would be decoded as ids).
This module does not decode or encode anything.
"""

from __future__ import annotations

import operator
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import TypeVar

from wwho.errors import (
    IdRangeError,
    NotUTF8Error,
    TokenizerError,
    UnknownHandlerError,
    UnknownTokenError,
    WrongTypeError,
    brief,
    in_batch,
)

T = TypeVar("T")

#: One text or one id given where a collection of them is expected.
_ONE_TEXT = (str, bytes, bytearray, memoryview)


def _name(value: object) -> str:
    """The type of ``value`` as a reader knows it: ``int``, ``numpy.int64``."""
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _unordered(value: object, what: str) -> str | None:
    """Why a dict or a set is not ``what`` (None for anything else)."""
    if isinstance(value, Mapping):
        return f"{what}, not a {_name(value)} (its keys would be taken, in insertion order): pass a list"
    if isinstance(value, Set):
        return f"{what}, not a {_name(value)} (a set has no order): pass a list"
    return None


def batch(items: Iterable[object], method: str = "encode_batch", *, of: str = "texts", one: str = "text") -> list:
    """``items`` as a list, for the batch method ``method`` that takes a list ``of`` things
    (``"texts"``, ``"byte strings"``, ``"lists of token ids"``), each called ``one`` in messages.

    Refuses, with :class:`WrongTypeError` (a ``TypeError`` too, as tiktoken's), what Python would
    iterate but is no batch: one text (a str, or bytes-like: iterating it gives characters or ints)
    and a dict or set.
    """
    if isinstance(items, list):
        return items
    what = f"{method} takes a list of {of}"
    if isinstance(items, _ONE_TEXT):
        raise WrongTypeError(f"{what}, not a single {_name(items)} (whose items would each be taken as one): "
                             f"for one, use {method}([{one}])")
    why = _unordered(items, what)
    if why:
        raise WrongTypeError(why)
    try:
        return list(items)
    except TypeError:
        raise WrongTypeError(f"{what}, not a {_name(items)}") from None


def not_texts(texts: list, exc: Exception) -> Exception:
    """The error of a batch the core refused with a TypeError (it takes only str texts): the first
    text that is not a str, named; else ``exc`` itself. Looked for only then, not on every batch
    (a Python loop over every text would be serial work beside the core's threads)."""
    for n, t in enumerate(texts):
        if not isinstance(t, str):
            return in_batch(WrongTypeError(f"texts[{n}]: expected text as str, got {type(t).__name__}"), n)
    return exc


def id_batch(items: Iterable[object], method: str = "decode_batch", *, errors: object = "replace") -> list:
    """A batch of id sequences for ``method``: :func:`batch`'s rules, and the flat form of
    ``encode_batch_to_numpy`` (a :class:`wwho.arrays.FlatIds`) taken as its texts' ids.
    ``errors``: the method's second positional argument, where ``decode_batch(ids, offsets)``
    puts a flat form's offsets (checked once here, not as each text's decode option)."""
    if not isinstance(errors, str) and (hasattr(errors, "__len__") or hasattr(errors, "__iter__")):
        raise WrongTypeError(f"{method} takes the batch as one argument: {method}(flat) with the FlatIds that "
                             "encode_batch_to_numpy returned, or a list of id lists; its second argument is "
                             f"errors, the name of an error handler, not {_name(errors)}")
    if isinstance(items, tuple) and type(items).__name__ == "FlatIds":
        from wwho.arrays import FlatIds

        if isinstance(items, FlatIds):
            return items.split()
    if _looks_flat(items):
        raise WrongTypeError(f"{method} got a tuple (ids, offsets) of the flat form's arrays, which it would read as "
                             "two texts' ids: pass the FlatIds that encode_batch_to_numpy returned, or "
                             "wwho.arrays.FlatIds(ids, offsets); for two texts' ids, a list [ids, more_ids]")
    return batch(items, method, of="lists of token ids", one="ids")


def _looks_flat(items: object) -> bool:
    """Whether ``items`` is a plain 2-tuple of a flat form's arrays, ``ids`` (uint32) and ``offsets``
    (int64, from 0 to ``len(ids)``): a FlatIds unpacked and packed again, whose offsets a batch of
    two id sequences would decode as ids, silently."""
    if type(items) is not tuple or len(items) != 2:
        return False
    ids, offsets = items
    dtypes = (str(getattr(ids, "dtype", "")), str(getattr(offsets, "dtype", "")))
    if dtypes != ("uint32", "int64") or getattr(ids, "ndim", 0) != 1 or getattr(offsets, "ndim", 0) != 1:
        return False
    return len(offsets) >= 2 and offsets[0] == 0 and offsets[-1] == len(ids)


def each_decoded(items: list, decode: Callable[[object], T]) -> list[T]:
    """``decode(ids)`` of each item of a batch, an error naming the item (``batch[3]: token id ...``)."""
    return _each(items, decode, "batch")


def each_token_bytes(ids: Iterable[object], token_bytes: Callable[[int], bytes]) -> list[bytes]:
    """``token_bytes(i)`` of each id of ``ids`` (read as :func:`token_ids` reads them), an error
    naming the id's place (``ids[3]: token id ...``), of the class ``token_bytes`` raised."""
    return _each(token_ids(ids), token_bytes, "ids")


def char_offsets(parts: Sequence[bytes]) -> list[int]:
    """Where each of ``parts`` (consecutive tokens' bytes) starts in their joined text, in
    characters, as tiktoken's ``decode_with_offsets`` counts: a part that starts inside a
    character (with a UTF-8 continuation byte) starts at that character."""
    offsets: list[int] = []
    chars = 0
    for data in parts:
        offsets.append(max(0, chars - (bool(data) and 0x80 <= data[0] < 0xC0)))
        chars += sum(1 for b in data if not 0x80 <= b < 0xC0)
    return offsets


def _each(items: list, f: Callable, name: str) -> list:
    out = []
    for k, item in enumerate(items):
        try:
            out.append(f(item))
        except NotUTF8Error as exc:  # (its args are UnicodeDecodeError's; its message is its own)
            exc.message = f"{name}[{k}]: {exc.message}"
            raise
        except TokenizerError as exc:
            exc.args = (f"{name}[{k}]: {exc}", *exc.args[1:])
            raise
    return out


def token_ids(ids: Iterable[object], size: int | None = None) -> list[int]:
    """``ids`` as a list of plain ints, each in ``[0, size)`` when ``size`` is given.

    Raises :class:`TokenizerError` naming the first id that is not an integer (a bool, a
    float, a string) or is out of range (then an :class:`UnknownTokenError`, a ``KeyError`` too),
    and its position; and for what is not a sequence of ids (see the module docstring).
    """
    if not isinstance(ids, list):
        ids = _sequence(ids)
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
            return WrongTypeError(f"token id {brief(value)} is {what}")
        return WrongTypeError(f"token id at position {position} is {brief(value)}, {what}")

    # (numpy's bool has an __index__ before numpy 2)
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", None) == "b":
        raise refuse("a bool, not an integer")
    try:
        i = operator.index(value)
    except TypeError:
        raise refuse("not an integer") from None
    if i < 0 or (size is not None and i >= size):
        bound = "negative" if size is None else f"out of range [0, {size})"
        raise no_token(i, f"token id {brief(i)}{where} is {bound}")
    return i


def no_token(value: object, message: str) -> UnknownTokenError:
    """The error of an id without a token: an :class:`UnknownTokenError` (a KeyError too, as
    tiktoken's lookups raise), an :class:`IdRangeError` (an OverflowError too) for an integer outside
    32 bits, where tiktoken's conversion fails."""
    try:
        number = operator.index(value)  # numpy's integers too (np.int64(-1) was an UnknownTokenError)
    except TypeError:
        number = None
    outside = number is not None and not 0 <= number < 1 << 32
    return (IdRangeError if outside else UnknownTokenError)(message)


def no_token_string(token: object) -> TokenizerError:
    """The error of a ``token_to_id`` that finds no token: an :class:`UnknownTokenError` (a KeyError
    too, as for an id without a token) for a string, a :class:`WrongTypeError` for anything else."""
    if not isinstance(token, str):
        return WrongTypeError(f"a token string is a str, not {type(token).__name__}")
    return UnknownTokenError(f"{brief(token)} is not a token string of this vocabulary")


#: The formats of a memoryview of bytes (not of ids): ``memoryview(b"...")`` and its casts to chars.
_BYTE_FORMATS = frozenset({"B", "b", "c"})


def _sequence(ids: object) -> list:
    """``ids`` (not a list) as a list, or the TokenizerError that says why it is not a sequence of ids."""
    what = "expected a sequence of token ids"
    one = f"{what}, got {_name(ids)}, a single id: for one id use decode([id])"
    if isinstance(ids, tuple) and type(ids).__name__ == "FlatIds":  # (its two arrays would be read as two ids)
        raise WrongTypeError(f"{what}, got the flat form of a batch (FlatIds): decode_batch(flat) gives each "
                             "text, decode(flat.ids) all of them as one")
    if isinstance(ids, memoryview) and ids.format not in _BYTE_FORMATS and ids.ndim == 1:
        try:
            return ids.tolist()  # of integers, as an array.array or a numpy array of them is taken
        except NotImplementedError:  # a format Python's memoryview cannot read (">I", a struct)
            raise WrongTypeError(f"{what}, got a memoryview of format {brief(ids.format)}, which Python cannot "
                                 "read: pass numpy.asarray(ids) (it reads byte orders) or a list") from None
    if isinstance(ids, memoryview) and ids.format in _BYTE_FORMATS:
        raise WrongTypeError(f"{what}, got a memoryview of bytes (format {ids.format!r}), refused as bytes are: "
                             "for ids of one byte each pass numpy.asarray(view) or list(view)")
    if isinstance(ids, (str, bytes, bytearray, memoryview)):
        raise WrongTypeError(f"{what}, got {_name(ids)}")
    ndim = getattr(ids, "ndim", None)
    if ndim == 0:  # a numpy scalar or 0-d array: no iteration
        raise WrongTypeError(one)
    if isinstance(ndim, int) and ndim > 1:  # (its rows would be taken as ids, an empty one as none)
        raise WrongTypeError(f"{what}, got a {ndim}-D array of shape {brief(getattr(ids, 'shape', '?'))}: pass one "
                             "text's ids as a 1-D array (ids.ravel() joins the rows), or the rows to decode_batch")
    mask = getattr(ids, "mask", None)  # a numpy masked array: its masked entries are no ids
    if mask is not None and callable(getattr(ids, "compressed", None)) and mask.any():
        raise WrongTypeError(f"{what}, got a masked array with masked entries, which hold no id: pass "
                             "ids.compressed() (without them) or ids.filled(id)")
    why = _unordered(ids, what)
    if why:
        raise WrongTypeError(why)
    if getattr(getattr(ids, "dtype", None), "kind", None) in ("i", "u"):  # a numpy array of integers
        return ids.tolist()  # type: ignore[attr-defined]  # one C-level conversion
    try:
        return list(ids)  # type: ignore[call-overload]
    except TypeError:
        if hasattr(type(ids), "__index__"):
            raise WrongTypeError(one) from None
        raise WrongTypeError(f"{what}, got {_name(ids)}") from None


#: Every decode's default ``errors``: its per-call path tests for this object by identity, and
#: checks other options with :func:`check_decode_options`.
DEFAULT_ERRORS = "replace"


def utf8_text(data: bytes, errors: str = "strict") -> str:
    """``data.decode("utf-8", errors)``, where bytes the handler refuses (``"strict"``; with
    ``"surrogatepass"``, what is no surrogate either) raise :class:`wwho.errors.NotUTF8Error`: a
    ``UnicodeDecodeError`` as Python's codec raises, and a :class:`TokenizerError`, as every
    decoder's other errors are (the streaming decoder raises the same)."""
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise NotUTF8Error.of(exc) from None


#: A lone surrogate's bytes as ``"surrogatepass"`` writes them (ED A0-BF 80-BF). 0xED is a
#: lead byte, never a continuation, so a match always starts a sequence of its own.
_SURROGATE_BYTES = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]")


def utf8_keeping_surrogates(data: bytes, errors: str) -> str:
    """``data`` as text, each lone surrogate's bytes as that surrogate and every other byte that
    is not UTF-8 as ``errors`` says: the same for the same bytes whatever is around them
    (``"surrogatepass"`` alone would raise on the others, and ``errors`` alone would replace
    the surrogates too, so that one bad byte elsewhere changed them). Two handlers take the
    whole text as they would: ``"surrogatepass"`` (which refuses the other bytes, naming their
    place in all of ``data``) and ``"surrogateescape"``, whose text encodes back to ``data``
    only where every byte it cannot decode, a surrogate's included, is escaped."""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        pass
    if errors in ("surrogatepass", "surrogateescape"):
        return utf8_text(data, errors)
    parts: list[str] = []
    start = 0
    for match in [*_SURROGATE_BYTES.finditer(data), None]:
        end = len(data) if match is None else match.start()
        try:
            parts.append(data[start:end].decode("utf-8", errors))
        except UnicodeDecodeError as exc:  # a handler that refuses: the place in all of the bytes
            whole = UnicodeDecodeError(exc.encoding, data, start + exc.start, start + exc.end, exc.reason)
            before = "".join(parts) + data[start:start + exc.start].decode("utf-8", "surrogatepass")
            raise NotUTF8Error.of(whole, text=before) from None
        if match is not None:
            parts.append(match.group().decode("utf-8", "surrogatepass"))
            start = match.end()
    return "".join(parts)


def check_decode_options(errors: object, skip_special_tokens: object) -> None:
    """A decode's options: ``errors`` a registered error handler's name (a typo would only fail on
    the first bad byte, or never), ``skip_special_tokens`` True or False."""
    import codecs

    if not isinstance(errors, str):
        raise WrongTypeError(f"errors must be the name of an error handler (str), not {type(errors).__name__}")
    try:
        codecs.lookup_error(errors)
    # (a name holding a NUL or a lone surrogate is no handler either: those raise ValueError and
    # UnicodeEncodeError, a ValueError, before the registry is asked)
    except (LookupError, ValueError):
        raise UnknownHandlerError(f"errors={errors!r:.60} is no error handler ('replace', 'strict', "
                             "'surrogatepass', ...)") from None
    if skip_special_tokens is not True and skip_special_tokens is not False:
        raise WrongTypeError(f"skip_special_tokens must be True or False, not {skip_special_tokens!r:.40}")


def prepare_arrays() -> None:
    """Import :mod:`wwho.arrays` and have the core find numpy's C API now if numpy is imported
    already: every tokenizer kind calls this when it is made, so that its first
    ``encode_to_numpy`` or ``encode_batch_to_numpy`` costs what a later one does instead of
    loading that module and finding that API during the call. Without numpy it does nothing:
    importing numpy for a tokenizer that may never return an array would cost every
    construction far more than the module saves."""
    if "numpy" in sys.modules:
        from wwho import _core
        from wwho.imports import arrays

        arrays()
        _core.ready_numpy()
