"""Token ids as ``wwho decode`` reads them: integers separated by whitespace or commas, a JSON list
of them, or the JSON object ``wwho encode --json`` writes (its ``"ids"``).

:func:`parse_ids` gives a list, for the short inputs of arguments and ordinary lines.
:func:`parse_id_array` gives a ``numpy.int64`` array (8 bytes an id, not a Python int's 36), made a
piece at a time, for inputs of millions of ids; it reads encode's JSON object without building its
other values (the tokens and offsets, most of its bytes) as Python objects, one value at a time.

Neither checks ids against a vocabulary (the tokenizers do), nor reads a stream: the callers bound
what they read (a line, or standard input) before it comes here.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from typing import Any

from wwho.cli.outputs import names_a_file
from wwho.errors import TokenizerError, brief
from wwho.fileio import DuplicateKey, unique_keys

__all__ = ["parse_id_array", "parse_ids"]

#: A line of only ASCII digits and whitespace: its ids are read a piece at a time (:func:`_plain_ids`).
_PLAIN_IDS = re.compile(r"[0-9\s]*")
_SPACE = re.compile(r"\s")
#: Characters of a long input split into words at a time (more, to the next separator): a word
#: string is held only for its piece, not one per id of the input.
SPLIT_CHARS = 1 << 18
#: The longest id in digits (more than 64 bits; Python refuses int() of thousands of digits).
MAX_ID_DIGITS = 20

# JSON as encode writes it: whitespace is these four only, and an id is digits without a leading zero.
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_JSON_ID_ITEMS = re.compile(r"[0-9 \t\n\r,]*")
_JSON_BAD_ITEMS = re.compile(r",[ \t\n\r]*,|[0-9][ \t\n\r]+[0-9]|(?<![0-9])0[0-9]")
_JSON = json.JSONDecoder(object_pairs_hook=unique_keys)
#: Up to a few thousand items of a JSON list, each with the comma after it, that are strings
#: without escapes, integers or pairs of integers (encode's tokens and offsets): passed over in one
#: match, not read an item at a time.
_ITEM_RUN = re.compile(r'(?:(?:"[^"\\\x00-\x1f]*"|-?(?:0|[1-9][0-9]*)'
                       r'|\[[ \t\n\r]*(?:0|[1-9][0-9]*)[ \t\n\r]*,[ \t\n\r]*(?:0|[1-9][0-9]*)[ \t\n\r]*\])'
                       r'[ \t\n\r]*,[ \t\n\r]*){1,4096}')
_EXPECTED = "expected a JSON list of integer ids or an object with \"ids\""


def parse_ids(text: str, *, where: str = "stdin") -> list[int]:
    """Ids from whitespace/comma separated integers (ASCII digits only), a JSON list, or encode's JSON object."""
    stripped = text.strip()
    if _PLAIN_IDS.fullmatch(stripped):  # the usual line (what encode writes): read without a regex per id
        ids = _plain_ids(stripped)
        if ids is not None:
            return ids
    if stripped.startswith(("[", "{")):
        data = _json_value(stripped, where)
        ids = data.get("ids") if isinstance(data, dict) else data
        if not isinstance(ids, list) or not all(type(i) is int for i in ids):
            raise TokenizerError(f"{where}: {_EXPECTED}")
        return ids
    ids = []
    for n, word in enumerate(re.split(r"\s*,\s*|\s+", stripped) if stripped else ()):
        if not word:  # "326,,2": an id left out, not a separator
            raise TokenizerError(f"{where}: item {n} is empty (two commas in a row, or a comma at an end)")
        if not re.fullmatch(r"[0-9]+", word):  # not \d: int() would read "١٢" and "１２" as 12
            hint = ""
            if n == 0 and word[1:6] == "NUMPY":  # numpy's magic string, \x93NUMPY, as read
                hint = " (this is a .npy file of ids: decode it with --npy FILE, as encode --npy writes it)"
            elif where == "arguments" and names_a_file(word):
                hint = (f" (it names a file: read the ids from it with "
                        f"{'--npy ' if word.endswith('.npy') else '- < '}{shlex.quote(word)})")
            raise TokenizerError(f"{where}: item {n} is {_as_read(word)}, not a token id{hint}")
        if len(word) > MAX_ID_DIGITS:
            raise TokenizerError(f"{where}: item {n} ({len(word):,} digits) is too large to be a token id")
        ids.append(int(word))
    return ids


def parse_id_array(text: str, *, where: str = "stdin") -> Any:
    """:func:`parse_ids` as a ``numpy.int64`` array, made a piece at a time where the ids are plain
    (whitespace separated), a JSON list of ids, or the ``"ids"`` of encode's JSON object; any other
    input, and one whose ids do not fit 64 bits, as :func:`parse_ids` gives it (and names its faults)."""
    stripped = text.strip()
    if _PLAIN_IDS.fullmatch(stripped):
        array = _id_array(stripped, 0, len(stripped), commas=False)
    elif stripped.startswith("["):
        array = _json_id_array(stripped, 0, where, whole=True)
    elif stripped.startswith("{"):
        array = _json_object_ids(stripped, where)
    else:
        array = None
    return parse_ids(text, where=where) if array is None else array


def _plain_ids(text: str) -> list[int] | None:
    """The ids of ``text`` (stripped; ASCII digits and whitespace only), or None where a word has
    more digits than an id can (the general path names it)."""
    ids: list[int] = []
    for part in _id_parts(text, 0, len(text), commas=False):
        if part is None:
            return None
        ids += part
    return ids


def _id_parts(text: str, start: int, end: int, *, commas: bool) -> Iterator[list[int] | None]:
    """The ids of ``text[start:end]`` (ASCII digits, whitespace and, with ``commas``, commas that are
    known to sit between ids), :data:`SPLIT_CHARS` characters at a time; None for a piece with a word
    of more digits than an id can have."""
    split = re.compile(r"[\s,]") if commas else _SPACE
    while start < end:
        cut = start + SPLIT_CHARS
        space = split.search(text, cut, end) if cut < end else None  # (no number cut in two)
        cut = space.start() if space else end
        piece = text[start:cut]
        words = (piece.replace(",", " ") if commas else piece).split()
        yield None if words and max(map(len, words)) > MAX_ID_DIGITS else list(map(int, words))
        start = cut


def _id_array(text: str, start: int, end: int, *, commas: bool) -> Any:
    """:func:`_id_parts` joined into one ``numpy.int64`` array; None where an id is too long or too large."""
    import numpy as np

    arrays = []
    for part in _id_parts(text, start, end, commas=commas):
        if part is None:
            return None
        try:
            arrays.append(np.array(part, dtype=np.int64))
        except OverflowError:
            return None
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)


def _json_id_array(text: str, at: int, where: str, *, whole: bool = False) -> Any:
    """The JSON list of ids that starts at ``text[at]``, as an array, and (unless ``whole``) the
    offset after it; None (for the general path) where the list is not only ids in JSON's spelling."""
    import numpy as np

    close = text.find("]", at)
    if close < 0 or (whole and close != len(text) - 1) or not _JSON_ID_ITEMS.fullmatch(text, at + 1, close):
        return None
    first, last = _skip_space(text, at + 1), close
    while last > first and text[last - 1] in " \t\n\r":
        last -= 1
    if first == last:
        array = np.zeros(0, dtype=np.int64)
    elif text[first] == "," or text[last - 1] == "," or _JSON_BAD_ITEMS.search(text, first, last):
        return None  # "[,1]", "[1,]", "1,,2", "1 2", "01": JSON's own errors, named by the general path
    else:
        # one array of the final size (an id between each two commas), filled a piece at a time
        array = np.empty(text.count(",", first, last) + 1, dtype=np.int64)
        filled = 0
        for part in _id_parts(text, first, last, commas=True):
            if part is None:
                return None
            try:
                array[filled:filled + len(part)] = part
            except OverflowError:
                return None
            filled += len(part)
    return array if whole else (array, close + 1)


def _json_object_ids(text: str, where: str) -> Any:
    """The ``"ids"`` of encode's JSON object, as an array; its other values are read (and checked
    as JSON) one item at a time and dropped. None where the ids are not plain (the general path)."""
    ids, at = None, _skip_space(text, 1)
    keys: set[str] = set()
    if text[at:at + 1] != "}":
        while True:
            key, at = _key(text, at, keys, where)
            if key == "ids":
                read = _json_id_array(text, at, where) if text[at:at + 1] == "[" else None
                if read is None:
                    return None
                ids, at = read
            else:
                at = _skip_value(text, at, where)
            at = _skip_space(text, at)
            if text[at:at + 1] == "}":
                break
            if text[at:at + 1] != ",":
                _fail(text, at, "Expecting ',' delimiter", where)
            at = _skip_space(text, at + 1)
    if _skip_space(text, at + 1) != len(text):
        _fail(text, _skip_space(text, at + 1), "Extra data", where)
    if ids is None:
        raise TokenizerError(f"{where}: {_EXPECTED}")
    return ids


def _key(text: str, at: int, keys: set[str], where: str) -> tuple[str, int]:
    """The key of an object's member at ``text[at]`` (one of ``keys`` is refused, and it is added to
    them) and the offset of its value, past the colon and spaces."""
    if text[at:at + 1] != '"':
        _fail(text, at, "Expecting property name enclosed in double quotes", where)
    key, at = _decode(text, at, where)
    if key in keys:
        raise TokenizerError(f"{where}: the key {brief(key)} appears twice in one JSON object")
    keys.add(key)
    at = _skip_space(text, at)
    if text[at:at + 1] != ":":
        _fail(text, at, "Expecting ':' delimiter", where)
    return key, _skip_space(text, at + 1)


def _skip_value(text: str, at: int, where: str, depth: int = 0) -> int:
    """The offset after the JSON value at ``text[at]``, its lists and objects read an item at a time."""
    if depth > 100:
        raise TokenizerError(f"{where}: {_EXPECTED} (this JSON is nested too deeply)")
    opening = text[at:at + 1]
    if opening not in ("[", "{"):
        return _decode(text, at, where)[1]
    closing = "]" if opening == "[" else "}"
    at = _skip_space(text, at + 1)
    if text[at:at + 1] == closing:
        return at + 1
    keys: set[str] = set()
    while True:
        if opening == "{":
            _, at = _key(text, at, keys, where)
        else:
            run = _ITEM_RUN.match(text, at)
            if run:  # (it ends after a comma: an item follows)
                at = run.end()
                continue
        at = _skip_space(text, _skip_value(text, at, where, depth + 1))
        if text[at:at + 1] == closing:
            return at + 1
        if text[at:at + 1] != ",":
            _fail(text, at, "Expecting ',' delimiter", where)
        at = _skip_space(text, at + 1)


def _json_value(text: str, where: str) -> Any:
    """``text`` read by ``json.loads``, its errors as :class:`TokenizerError` naming line and column."""
    try:
        return json.loads(text, object_pairs_hook=unique_keys)  # {"ids": [1], "ids": [2]} is refused
    except json.JSONDecodeError as exc:
        raise TokenizerError(f"{where}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except DuplicateKey as exc:
        raise TokenizerError(f"{where}: the key {brief(exc.args[0])} appears twice in one JSON object") from None
    except (RecursionError, ValueError):  # nested too deeply; a number of thousands of digits
        raise TokenizerError(f"{where}: {_EXPECTED} (this JSON is nested too deeply or has a number "
                             "too long to read)") from None


def _decode(text: str, at: int, where: str) -> tuple[Any, int]:
    """The JSON scalar (or small value) at ``text[at]`` and the offset after it."""
    try:
        return _JSON.raw_decode(text, at)
    except json.JSONDecodeError as exc:
        raise TokenizerError(f"{where}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except DuplicateKey as exc:
        raise TokenizerError(f"{where}: the key {brief(exc.args[0])} appears twice in one JSON object") from None
    except (RecursionError, ValueError):
        raise TokenizerError(f"{where}: {_EXPECTED} (this JSON is nested too deeply or has a number "
                             "too long to read)") from None


def _fail(text: str, at: int, message: str, where: str) -> None:
    error = json.JSONDecodeError(message, text, at)
    raise TokenizerError(f"{where}:{error.lineno}:{error.colno}: invalid JSON: {message}")


def _skip_space(text: str, at: int) -> int:
    return _JSON_SPACE.match(text, at).end()


def _as_read(word: str) -> str:
    """``word`` quoted as the input had it: bytes that were no UTF-8 (read with ``surrogateescape``)
    as those bytes (``b'\\xff'``), not as the code points Python keeps them in."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        return brief(word.encode("utf-8", "surrogateescape"))
    return brief(word)
