"""The code points of a Unicode property (``Mn``, ``InCB=Linker``, ``Script=Tamil``) that a schema's
class names, through the ``regex`` module (the grapheme properties from :mod:`wwho.graphemes`' table),
in a cache bounded in code points.

It deliberately does not check schemas: how many properties a schema may name, and which classes
take their code points, is :mod:`wwho.schema`'s.
"""

from __future__ import annotations

import re

from wwho.errors import brief

#: What may stand inside \p{...}: a property name, or name=value (regex module syntax), nothing else.
PROPERTY_NAME = re.compile(r"\^?[A-Za-z][A-Za-z0-9_ .-]*(?:[=:][A-Za-z0-9_ .-]+)?")

#: Code points the property cache holds at most, of all its sets together (a set of a large
#: property, all the unassigned code points, holds about a million).
PROPERTY_CACHE_CODE_POINTS = 2_500_000
_property_cache: dict[str, frozenset[int]] = {}


def codepoints_with_property(prop: str) -> frozenset[int]:
    """:func:`_property_set`, cached by the name as ``regex`` reads it (case, spaces, ``_`` and ``-``
    aside), bounded in code points (:data:`PROPERTY_CACHE_CODE_POINTS`), the oldest out first: a
    schema may spell a property in endless ways (each new spelling of a large one would otherwise
    be kept for good). No lock (a fork could copy one held): each step is one dict operation,
    and two threads at worst compute a set twice."""
    key = re.sub(r"[\s_-]", "", prop).lower()
    found = _property_cache.get(key)
    if found is None:
        found = _property_cache[key] = _property_set(prop)
        while sum(map(len, list(_property_cache.values()))) > PROPERTY_CACHE_CODE_POINTS:
            oldest = next(iter(list(_property_cache)), None)
            if oldest is None or oldest == key:
                break
            _property_cache.pop(oldest, None)
    return found


def _property_set(prop: str) -> frozenset[int]:
    """Every code point but the surrogates with a Unicode property, e.g. ``InCB=Linker`` (via the
    ``regex`` module; the grapheme properties from :mod:`wwho.graphemes`' table)."""
    import regex  # only schemas that use properties pay for it

    from wwho.graphemes import every_code_point, property_code_points

    if not PROPERTY_NAME.fullmatch(prop):  # never paste anything else into the pattern
        raise ValueError(f"not a property name: {brief(prop)}")
    known = property_code_points(prop)
    if known is not None:
        return frozenset(cp for cp in known if not 0xD800 <= cp < 0xE000)
    pattern = regex.compile(rf"\p{{{prop}}}+")
    cps: set[int] = set()
    for m in pattern.finditer(every_code_point()):  # (a code point is at the index of its value)
        start, end = m.span()
        cps.update(range(start, min(end, 0xD800)), range(max(start, 0xE000), end))
    return frozenset(cps)
