"""``FrozenDict``: a table a tokenizer encodes with, shown to its users read-only.

The core reads an SGPE vocabulary (``SGPETokenizer.vocab``) and the special tokens once, when the
tokenizer is made: a plain dict would take a change the core never sees, after which encode fails
with a bare ``KeyError`` or a save does not load. A ``FrozenDict`` refuses changes with a ``TypeError``, and is
otherwise a ``dict``: ``json.dumps`` writes it, ``isinstance(x, dict)`` holds, and pickling or
copying it gives a plain (mutable) ``dict``, a copy (``types.MappingProxyType`` cannot be
pickled, so a worker process could not return one). This module does not copy tables on read.
"""

from __future__ import annotations

from typing import Any, NoReturn


class FrozenDict(dict):
    """A ``dict`` whose items cannot be changed (see the module docstring)."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("this table is read-only: the tokenizer encodes with it (copy it with dict(...) to change "
                        "a copy)")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):  # a plain dict: a copy, which may be changed
        return dict, (dict(self),)

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo: dict) -> dict:
        return dict(self)
