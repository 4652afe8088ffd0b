"""Caches bounded in bytes: what the encoders keep per piece of text.

Every encoder remembers the ids of the pieces it has seen, because text repeats: a
:class:`PieceCache` is that memory, with a bound on the bytes it may hold rather than on
its number of entries (20,000 entries of 2,000-character pieces are 500 times larger than
20,000 short words). Each entry is counted as the key's and the value's own size
(``sys.getsizeof``: a ``str`` or ``bytes`` key, a list or tuple of ids, whose ints are the
vocabulary's own objects and cost one pointer each) plus a dict slot. When an insertion
would pass ``max_bytes``, the older half of the entries (dicts keep insertion order) is
dropped. Keys longer than ``max_key_length`` are never stored: a long piece seldom repeats,
and one would take the room of thousands of short ones (Hugging Face ``tokenizers`` does
not cache words of 256 characters or more either).

Readers use ``cache.get`` (the dict's own ``get``, C speed); writers ``cache.put``. What
this module deliberately does not do: share memory between tokenizers, or measure the
process (the bound is an estimate of what the cache itself holds).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable
from itertools import islice
from typing import Any

#: Default bound of all the caches of one tokenizer together, in bytes (256 MiB).
DEFAULT_CACHE_BYTES = 256 * 2**20
#: Longest key (characters of a ``str``, bytes of a ``bytes``) that is ever cached.
MAX_CACHED_KEY = 255
#: What a dict entry costs besides its key and value: its hash/key/value slot and index. Measured
#: (``sys.getsizeof(dict) / len``, CPython 3.11): 21 to 38 bytes depending on where the dict is in
#: its growth cycle; counted as 64 to leave room for the allocator's slack.
ENTRY_OVERHEAD = 64


def check_cache_bytes(value: object, where: str = "cache_bytes") -> int:
    """``value`` as a byte bound (an int >= 0), or a ValueError naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where} must be an int >= 0 (bytes; 0 turns caching off), not {value!r}")
    return value


def entry_size(key: Any, value: Any) -> int:
    """The bytes an entry is counted for: key and value objects, plus a dict slot."""
    return sys.getsizeof(key) + sys.getsizeof(value) + ENTRY_OVERHEAD


class PieceCache:
    """A dict from pieces to their ids, bounded in bytes (see the module docstring)."""

    __slots__ = ("data", "get", "max_bytes", "max_key_length", "nbytes", "sizeof")

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES, *, max_key_length: int = MAX_CACHED_KEY,
                 sizeof: Callable[[Any, Any], int] | None = None) -> None:
        """``sizeof(key, value)``: the bytes of an entry, for values that hold more than
        ``sys.getsizeof`` sees (default :func:`entry_size`)."""
        self.max_bytes = check_cache_bytes(max_bytes)
        self.max_key_length = max_key_length
        self.sizeof = sizeof or entry_size
        self.data: dict[Hashable, Any] = {}
        self.get = self.data.get
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self.data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.data

    def __repr__(self) -> str:
        return f"PieceCache({len(self.data):,} entries, ~{self.nbytes:,} of {self.max_bytes:,} bytes)"

    def put(self, key: Any, value: Any) -> Any:
        """Remember ``value`` for ``key`` if the key is short enough; returns ``value``."""
        if len(key) > self.max_key_length or key in self.data:
            return value
        size = self.sizeof(key, value)
        if self.nbytes + size > self.max_bytes:
            if size > self.max_bytes:
                return value
            self._shrink(self.max_bytes - size)
        self.data[key] = value
        self.nbytes += size
        return value

    def _shrink(self, target: int) -> None:
        """Drop the older half of the entries, and more if that does not get below ``target``."""
        data = self.data
        while data and self.nbytes > target:
            for old in list(islice(data, max(1, len(data) // 2))):
                self.nbytes -= self.sizeof(old, data.pop(old))
        if not data:
            self.nbytes = 0

    def clear(self) -> None:
        self.data.clear()
        self.nbytes = 0
