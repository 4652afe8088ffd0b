"""Token ids as ``wwho decode`` reads them (``wwho.cli.id_input``): plain, comma separated, a JSON
list, encode's JSON object; the array form read in bounded memory, checked against ``json.loads``."""

from __future__ import annotations

import json
import re
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.cli import id_input
from wwho.cli.id_input import parse_id_array, parse_ids
from wwho.errors import TokenizerError


def _traced(parse, line: str):
    """``parse(line)``, and how far Python's traced memory peaked above what the result holds."""
    import tracemalloc

    tracemalloc.start()
    try:
        got = parse(line)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return got, peak - held


@pytest.mark.parametrize(("ids", "named"), [
    ('{"ids": [326], "ids": [2]}', "the key 'ids' appears twice"),  # decoded [2], in silence
    ("326,,2", "item 1 is empty"),  # read as [326, 2]
    ("326, 2,", "item 2 is empty"),
])
def test_decode_refuses_ids_given_twice_or_left_out(ids, named):
    with pytest.raises(TokenizerError, match=re.escape(named)):
        parse_ids(ids)
    assert parse_ids(" 326 , 2\n7 ") == [326, 2, 7] and parse_ids("") == []


#: Whitespace as ``str.split`` and the regex ``\s`` take it, Unicode's included.
SPACES = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2003", "\u3000"]


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.tuples(st.from_regex(r"[0-9]{1,22}", fullmatch=True),
                                st.text(st.sampled_from(SPACES), min_size=1, max_size=3)), max_size=40),
       lead=st.text(st.sampled_from(SPACES), max_size=2), piece=st.integers(1, 12))
def test_a_line_of_plain_ids_is_read_in_pieces_as_whole(words, lead, piece):
    """``wwho decode`` reads a line of digits and whitespace (what ``encode`` writes) a piece of
    ``SPLIT_CHARS`` characters at a time, without a regex per id (whose cost a line of millions of
    ids would pay): the ids are ``str.split``'s, whatever the pieces, and a word too long
    to be an id is still named by its item number."""
    line = lead + "".join(digits + space for digits, space in words)
    too_long = [n for n, (digits, _) in enumerate(words) if len(digits) > 20]
    with mock.patch.object(id_input, "SPLIT_CHARS", piece):
        if too_long:
            with pytest.raises(TokenizerError, match=rf"item {too_long[0]} \({len(words[too_long[0]][0])} digits\)"):
                parse_ids(line)
        else:
            assert parse_ids(line) == [int(word) for word in line.split()]


def test_a_long_line_of_ids_holds_no_string_per_id():
    """A line of ids split whole by a regex would make a string per id (and a match per id) on top of
    the ids: only a piece of it is split at a time, so beyond the ids themselves, Python's traced
    memory peaks below twice the line."""
    line = " ".join(str(1000 + (i * 7919) % 199_000) for i in range(600_000))
    ids, beyond = _traced(parse_ids, line)
    assert ids == [int(word) for word in line.split()]
    assert beyond < 2 * len(line), (beyond, len(line))



#: JSON values as ``json.loads`` gives them, for the other keys of encode's object.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12)
IDS = st.lists(st.integers(0, 2**40), max_size=30)


def _as_json(value, indent, separators) -> str:
    return json.dumps(value, indent=indent, separators=separators, ensure_ascii=False)


def _same(text: str):
    """``parse_id_array(text)`` and ``parse_ids(text)`` (whose JSON is ``json.loads``'s): the same
    ids, or a TokenizerError from both."""
    try:
        expected = parse_ids(text)
    except TokenizerError:
        with pytest.raises(TokenizerError):
            parse_id_array(text)
        return None
    got = parse_id_array(text)
    assert list(map(int, got)) == expected
    return got


@settings(max_examples=300, deadline=None)
@given(ids=IDS, others=st.dictionaries(st.text(max_size=6).filter(lambda k: k != "ids"), JSON_VALUES, max_size=4),
       at=st.integers(0, 4), indent=st.sampled_from([None, 0, 1, "\t"]),
       separators=st.sampled_from([None, (",", ":"), (" , ", " : ")]))
def test_encode_json_object_ids_as_json_loads_reads_them(ids, others, at, indent, separators):
    """The ``"ids"`` of an object, among other keys of any JSON values, in any order and
    whitespace: the array holds what ``json.loads`` reads, as int64 where the ids are plain."""
    pairs = list(others.items())
    pairs.insert(min(at, len(pairs)), ("ids", ids))
    text = "{" + ", ".join(f"{json.dumps(k)}: {_as_json(v, indent, separators)}" for k, v in pairs) + "}"
    got = _same(text)
    assert isinstance(got, np.ndarray) and got.dtype == np.int64


@settings(max_examples=300, deadline=None)
@given(ids=IDS, indent=st.sampled_from([None, 0, 2]), lead=st.sampled_from(["", " ", "\n"]))
def test_a_json_list_of_ids_is_an_int64_array(ids, indent, lead):
    got = _same(lead + json.dumps(ids, indent=indent) + lead)
    assert isinstance(got, np.ndarray) and got.dtype == np.int64


ENCODE_LIKE = '{"ids": [12, 0, 7], "tokens": ["0a", "ff", "\\u00e9x"], "offsets": [[0, 1], [1, 2], [2, 4]]}'


@settings(max_examples=1500, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, len(ENCODE_LIKE)), st.integers(0, 3),
                                st.sampled_from(list('{}[]",:0123-9 \n\\ae') + ["ids", '"ids"', "01", ",,"])),
                      min_size=1, max_size=3))
def test_mutated_encode_json_is_read_or_refused_as_json_loads_does(edits):
    """Mutations of encode's JSON (cut, doubled keys, stray commas, leading zeros, unclosed
    lists): read as ``json.loads`` reads them, or refused with a TokenizerError where it refuses."""
    text = ENCODE_LIKE
    for at, cut, insert in edits:
        text = text[:at] + insert + text[at + cut:]
    _same(text)


@pytest.mark.parametrize("text", [
    '{"ids": [1, 2], "tokens": ["a"], "tokens": ["b"]}',  # a key twice: refused, not the last one read
    '{"ids": [1, 2], "x": {"a": 1, "a": 2}}',
    '{"ids": [1, 2]} {"ids": [3]}',
    '{"ids": [1, 2], "tokens": ["a" "b"]}',
    '{"ids": [01, 2]}',
    '{"ids": [1 2]}',
    '{"ids": [1, 2,]}',
    '{"tokens": ["a"]}',
    '[1, 2',
])
def test_json_faults_are_named_as_json_loads_finds_them(text):
    with pytest.raises(TokenizerError):
        parse_ids(text)
    with pytest.raises(TokenizerError):
        parse_id_array(text)


def test_encode_json_is_read_without_its_tokens_as_python_objects():
    """A long line of encode's JSON (ids, tokens, offsets): reading its ids builds neither the
    token strings nor the offset pairs (``json.loads`` of it peaks near ten times the line); traced
    memory beyond the array stays below half the line (a piece of the ids is read at a time)."""
    n = 600_000
    ids = [(i * 7919) % 199_000 for i in range(n)]
    line = json.dumps({"ids": ids, "tokens": [format(i, "x") for i in ids],
                       "offsets": [[i, i + 1] for i in range(n)]})
    got, beyond = _traced(parse_id_array, line)
    assert got.tolist() == ids
    assert beyond < len(line) // 2, (beyond, len(line))


@pytest.mark.parametrize("text", ["1, 2 ,3", "[5,6]", '{"ids": []}', "[]"])
def test_comma_and_empty_forms(text):
    assert list(map(int, parse_id_array(text))) == parse_ids(text)


def test_ids_beyond_64_bits_are_left_to_the_list_form():
    big = str(2**64)
    assert parse_id_array(f"[1, {big}]") == [1, 2**64]
    with pytest.raises(TokenizerError, match=re.escape("item 1 (21 digits)")):
        parse_id_array("1 " + "1" * 21)
