"""wwho.unicode_properties: the code points of a Unicode property, checked against ``regex`` itself,
and the cache that holds them."""

from __future__ import annotations

import regex

from wwho import unicode_properties


def test_the_property_cache_is_bounded_and_keyed_as_regex_reads_names(monkeypatch):
    """A schema may spell a property in endless ways ("Cn", "cn", "un_assigned"), and an unbounded
    cache (a functools.cache) would keep each spelling of a large one for good."""
    monkeypatch.setattr(unicode_properties, "_property_cache", {})
    monkeypatch.setattr(unicode_properties, "PROPERTY_CACHE_CODE_POINTS", 1000)
    with_property = unicode_properties.codepoints_with_property
    digits = with_property("Nd")
    assert with_property("n_d") is digits and with_property(" N-d") is digits
    assert list(unicode_properties._property_cache) == ["nd"] and ord("7") in digits and 0x0DE7 in digits
    upper = with_property("Lu")  # more than the bound alone: kept, the older one goes
    assert list(unicode_properties._property_cache) == ["lu"] and ord("A") in upper


def test_a_property_set_is_the_regex_modules_own():
    # built from the ranges of the matches over every code point: checked against regex itself
    for prop in ("Mn", "^L", "InCB=Linker", "Script=Tamil"):
        found = unicode_properties._property_set(prop)
        match = regex.compile(rf"\p{{{prop}}}").match  # (compiled once: regex.match looks it up a call)
        want = {cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and match(chr(cp))}
        assert found == want, prop
