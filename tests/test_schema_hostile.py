"""Schema files of your own written to break the loader: keys that are no plain names, tables at and
past the core's limits, and grammar checks that would run for days.

Each case gives a :class:`wwho.SchemaError` of one line naming the file and the key (through the
API and through the real ``wwho`` command), or loads in bounded work.
"""

from __future__ import annotations

import json
import re

import pytest
from cli_run import one_line_error, wwho
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho import SchemaError, Syllabifier, load_schema
from wwho.schema import MAX_CLASSES, MAX_LISTED, MAX_STATES
from wwho.syllables import LOAD_CHECK_STRINGS, MAX_CHECK_STRINGS, check_schema, check_strings

TOY = {
    "format": "wwho-schema/1",
    "name": "toy",
    "char_classes": {"C": [["U+0915", "U+0939"]], "H": ["U+094D"]},
    "start": "S",
    "transitions": {"S": {"C": "A"}, "A": {"H": "L"}, "L": {"C": "A"}},
    "accept_states": ["A"],
    "grammar": "C (H C)*",
}


def write(tmp_path, data, name="toy.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def many_classes(n: int) -> dict:
    """A schema of ``n`` one-character classes, each a syllable of its own."""
    labels = [f"K{i}" for i in range(n)]
    return {**TOY, "char_classes": {label: [f"U+{0x0915 + i:04X}"] for i, label in enumerate(labels)},
            "transitions": {"S": {label: "A" for label in labels}, "A": {}},
            "grammar": "(" + " | ".join(labels) + ")"}


def with_edit(key, value):
    data = json.loads(json.dumps(TOY))
    data[key] = {**data[key], **value} if isinstance(value, dict) else value
    return data


# Keys that are not plain names are escaped in the error: raw, a newline would make it two lines.
ODD_KEYS = [
    (with_edit("char_classes", {"Q\n": ["U+0930"]}), "char_classes.'Q\\n'"),
    (with_edit("char_classes", {"H\ud800": ["U+0930"]}), "char_classes.'H\\ud800'"),
    (with_edit("transitions", {"A\nB": []}), "transitions.'A\\nB'"),
    (with_edit("transitions", {"S": {"x\ny": "A"}}), "transitions.S.'x\\ny'"),
    (with_edit("transitions", {"S": {"C": "A", "H": "no\rwhere"}}), "transitions.S.H"),
    (with_edit("transitions", {"S": {"": "A"}}), "transitions.S.''"),
]


@pytest.mark.parametrize(("data", "key"), ODD_KEYS, ids=range(len(ODD_KEYS)))
def test_an_odd_key_is_quoted_and_the_error_is_one_line(tmp_path, data, key):
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # ASCII with escapes: a lone surrogate too
    with pytest.raises(SchemaError) as info:
        load_schema(path)
    message = str(info.value)
    assert f"toy.json: {key}: " in message
    assert message.isprintable(), message  # no newline, no control character, no lone surrogate
    for args in (("schema", "check", path), ("syllabify", "--schema", path, "क")):
        assert f"{key}: " in one_line_error(wwho(*args))


@pytest.mark.parametrize("edit, message", [
    ({"char_classes": {1: ["U+0930"], "C": [["U+0915", "U+0939"]], "H": ["U+094D"]}}, "char_classes.1: class labels"),
    ({"transitions": {**TOY["transitions"], 5: {}}}, "transitions.5: a state's name is a string, got 5"),
    ({"char_classes": {**TOY["char_classes"], "H": {"members": ["U+094D"], "name": [1]}}},
     "char_classes.H.name: must be a string, got [1]"),
    ({"blocks": [{"name": {"a": [1]}, "first": "U+0900", "last": "U+097F"}]}, "blocks[0].name: must be a string"),
    ({"description": ["x"]}, "description: must be a string, got ['x']"),
    ({"word_chars": ["U+0020"]}, "word_chars: U+0020 is whitespace, which separates words"),
])
def test_a_value_of_the_wrong_type_is_named_not_taken_as_text(edit, message):
    """Through the Python API (``parse_schema`` of a mapping, where keys need not be strings): a
    label that is no string raised a bare ``TypeError`` from a regex match, and names of any type
    were taken through ``str()``; whitespace among a script's word characters was taken too."""
    from wwho.schema import parse_schema

    with pytest.raises(SchemaError, match=re.escape(f"toy: {message}")):
        parse_schema({**TOY, **edit}, source="toy")


def test_the_engine_limits_name_the_key_and_no_schema_past_them_is_called_valid(tmp_path):
    # load_schema refuses 255 classes or 65,535 states; `wwho schema check` must not print "valid
    # schema" and then the core's message, which names no key.
    assert Syllabifier.from_schema(write(tmp_path, many_classes(MAX_CLASSES)), check_length=1).tokenize("कख") == ["क", "ख"]
    path = write(tmp_path, many_classes(MAX_CLASSES + 1))
    with pytest.raises(SchemaError, match=f"toy.json: char_classes: {MAX_CLASSES + 1} classes: the engine supports "
                                          f"at most {MAX_CLASSES}"):
        load_schema(path)
    proc = wwho("schema", "check", path)
    assert "char_classes: 255 classes" in one_line_error(proc) and proc.stdout == b""

    states = {f"S{i}": {} for i in range(MAX_STATES + 1)}
    path = write(tmp_path, {**TOY, "transitions": {**states, **TOY["transitions"]}})
    with pytest.raises(SchemaError, match="toy.json: transitions: 16,387 states: the engine supports at most 16,383"):
        load_schema(path)
    proc = wwho("schema", "check", path)
    assert "transitions: 16,387 states" in one_line_error(proc) and proc.stdout == b""


def test_a_chain_of_the_most_states_runs_as_written(tmp_path):
    """The core keeps a target state's index in 14 bits beside two flag bits: from 16,384 states on,
    an index would run into the flags (a chain of 16,385 states reading 16,386 characters as one
    syllable), in silence. The bound is the engine's own. A chain
    S0 -C-> S1 -C-> ... of the most states, every state but S0 accepting: the longest syllable is
    one character fewer than the states."""
    n = MAX_STATES
    chain = {f"S{i}": ({"C": f"S{i + 1}"} if i + 1 < n else {}) for i in range(n)}
    data = {**TOY, "start": "S0", "transitions": chain, "accept_states": [f"S{i}" for i in range(1, n)]}
    del data["grammar"]
    syllables = Syllabifier.from_schema(write(tmp_path, data), check_length=1).tokenize("क" * (n + 1))
    assert [len(s) for s in syllables] == [n - 1, 2]


def refuse_to_check(monkeypatch):
    """Make any string the check would tokenize an error: these tests must show the check is not
    started at all (it would run for a minute at load and for days under `wwho schema check`)."""
    def started(self, text, leading_space=False):
        raise AssertionError("the exhaustive check started")

    monkeypatch.setattr(Syllabifier, "tokenize", started)


def test_a_check_too_long_for_the_classes_is_refused_at_once(tmp_path, monkeypatch):
    schema = load_schema(write(tmp_path, many_classes(MAX_CLASSES)))
    # 258 characters (254 classes, a letter, space, tab, newline): length 5 is 10**12 strings.
    assert check_strings(schema, 5) == sum(258 ** k for k in range(1, 6)) > MAX_CHECK_STRINGS
    refuse_to_check(monkeypatch)
    with pytest.raises(SchemaError, match=r"toy.json: checking every string up to length 5 over 254 classes means "
                                          r"1,147,585,659,198 strings, more than 100,000,000: check up to length 3 "
                                          r"\(--max-length 3\)"):
        check_schema(schema, max_length=5)


def test_wwho_schema_check_refuses_a_check_that_would_run_for_days(tmp_path):
    proc = wwho("schema", "check", write(tmp_path, many_classes(MAX_CLASSES)), timeout=120)
    assert "over 254 classes means 1,147,585,659,198 strings" in one_line_error(proc)
    assert proc.stdout == b""  # not called valid first


def test_loading_a_schema_of_many_classes_checks_a_bounded_number_of_strings(tmp_path, monkeypatch):
    # All 17 million strings of 3 characters over 258 would be too many for from_schema to try, and
    # `wwho syllabify --schema` has no option to shorten it.
    import wwho.syllables

    lengths = []
    monkeypatch.setattr(wwho.syllables, "check_schema", lambda schema, max_length: lengths.append(max_length) or [])
    path = write(tmp_path, many_classes(MAX_CLASSES))
    Syllabifier.from_schema(path)
    assert lengths == [2] and check_strings(load_schema(path), 2) <= LOAD_CHECK_STRINGS
    Syllabifier.from_schema(write(tmp_path, TOY, "small.json"))  # a small schema still goes to 3
    assert lengths == [2, 3]


def test_a_bundled_schema_is_still_checked_to_length_6():
    from wwho.schema import available_scripts, bundled_schema
    from wwho.syllables import longest_check

    for script in available_scripts():
        assert longest_check(bundled_schema(script)) == 6, script


def test_an_empty_schema_path_is_refused_by_name():
    """``load_schema("")`` does not say ``.: is a directory``, naming a path the user never gave."""
    from wwho.errors import SchemaError
    from wwho.schema import load_schema

    with pytest.raises(SchemaError, match="an empty path"):
        load_schema("")


def _automaton(transitions, accept=("A",), emit=()):
    data = {key: value for key, value in TOY.items() if key != "grammar"}
    return {**data, "transitions": transitions, "accept_states": list(accept), "emit_states": list(emit)}


@pytest.mark.parametrize("transitions, loop", [
    ({"S": {"C": "A"}, "A": {"H": "L"}, "L": {"C": "A", "H": "L"}}, ["'L' -> 'L'"]),
    ({"S": {"C": "A"}, "A": {"H": "L"}, "L": {"C": "M"}, "M": {"H": "L"}}, ["'L' -> 'M' -> 'L'", "'M' -> 'L' -> 'M'"]),
    ({"S": {"C": "A", "H": "S"}, "A": {}}, ["'S' -> 'S'"]),
])
def test_a_loop_of_states_that_never_accept_is_refused(tmp_path, transitions, loop):
    """Loaded, each position of text that keeps to the loop would be read to the text's end and rolled
    back, in time quadratic in the text."""
    path = write(tmp_path, _automaton(transitions))
    with pytest.raises(SchemaError, match="accept_states: the states .* loop without accepting") as err:
        load_schema(path)
    assert any(f"the states {cycle} loop" in str(err.value) for cycle in loop)
    assert "loop without accepting" in one_line_error(wwho("schema", "check", path))


@pytest.mark.parametrize("transitions, emit", [
    ({"S": {"C": "A"}, "A": {"H": "L"}, "L": {"C": "A"}}, ()),  # the loop goes through an accepting state
    ({"S": {"C": "A"}, "A": {"H": "L"}, "L": {"H": "L"}}, ("A",)),  # reached only past an emit state
    ({"S": {"C": "A"}, "A": {}, "L": {"H": "L"}}, ()),  # never reached
])
def test_loops_the_walk_never_reads_without_bound_are_kept(tmp_path, transitions, emit):
    syllabifier = Syllabifier(load_schema(write(tmp_path, _automaton(transitions, emit=emit))))
    assert "".join(syllabifier.tokenize("कक्क्क्")) == "कक्क्क्"


def _reads_without_bound(start, transitions, accept, emit) -> bool:
    """The brute-force answer: can the walk from ``start`` go more states than there are without
    passing an accepting one? (states, states since the last accept), breadth first."""
    n = len(transitions)
    seen, todo = {(start, 1)}, [(start, 1)]
    while todo:
        state, since = todo.pop()
        if since > n:
            return True
        if state in emit:
            continue
        for target in transitions[state].values():
            step = (target, 0 if target in accept else since + 1)
            if step not in seen:
                seen.add(step)
                todo.append(step)
    return False


def _random_automaton(data, most: int):
    """States Q0 (the start) .. Q<n-1>, n up to ``most``, random edges over three classes, random
    accept states (not the start) and emit states among them."""
    states = [f"Q{i}" for i in range(data.draw(st.integers(1, most)))]
    transitions = {q: data.draw(st.dictionaries(st.sampled_from(["C", "H", "O"]), st.sampled_from(states),
                                                max_size=3)) for q in states}
    accept = frozenset(data.draw(st.sets(st.sampled_from(states[1:])))) if len(states) > 1 else frozenset()
    emit = frozenset(data.draw(st.sets(st.sampled_from(sorted(accept))))) if accept else frozenset()
    return states, transitions, accept, emit


@given(st.data())
@settings(max_examples=300, deadline=None)
def test_the_loop_check_equals_a_brute_force_walk(data):
    from wwho.schema import _loop_without_accepting

    states, transitions, accept, emit = _random_automaton(data, 6)
    loop = _loop_without_accepting(states[0], transitions, accept, emit)
    assert bool(loop) == _reads_without_bound(states[0], transitions, accept, emit)
    if loop:  # a real cycle, of states that never accept, each a step of the automaton
        assert loop[0] == loop[-1] and not set(loop) & accept
        assert all(b in transitions[a].values() for a, b in zip(loop, loop[1:]))


def _chain(n: int) -> dict:
    """S -C-> Q1 -C-> ... -C-> Qn -H-> A: ``n + 1`` states in a row that do not accept (S first)."""
    transitions = {"S": {"C": "Q1"}, **{f"Q{i}": {"C": f"Q{i + 1}"} for i in range(1, n)}, f"Q{n}": {"H": "A"},
                   "A": {}}
    return _automaton(transitions)


def test_a_long_chain_of_states_that_do_not_accept_is_refused(tmp_path):
    """No loop, but 16,381 states in a row that do not accept: at each position of a text of C the
    engine read thousands of characters ahead and rolled back, a megabyte in a minute."""
    from wwho.schema import MAX_READ_AHEAD

    refused = write(tmp_path, _chain(2000))
    with pytest.raises(SchemaError, match=r"accept_states: 2,001 states in a row do not accept \('S' \.\.\. 'Q2000'\)"):
        load_schema(refused)
    assert f"at most {MAX_READ_AHEAD} are allowed" in one_line_error(wwho("schema", "check", refused))
    # (no grapheme clusters: a virama and the consonant after it are one, which would join the two)
    kept = Syllabifier(load_schema(write(tmp_path, {**_chain(MAX_READ_AHEAD - 1), "keep_clusters": False},
                                        "kept.json")))
    text = "क" * (MAX_READ_AHEAD - 1) + "्" + "क" * 40
    assert kept.tokenize(text) == [text[:MAX_READ_AHEAD]] + ["क"] * 40


def _longest_walk(start, transitions, accept, emit) -> int:
    """The brute-force answer: the most states a walk from ``start`` visits in a row that do not
    accept (every walk, depth first; the automata are small and have no such loop)."""
    def walk(state) -> int:
        if state in accept:  # (emit states accept too)
            return 0
        return 1 + max((walk(t) for t in transitions[state].values()), default=0)

    best, todo, seen = 0, [start], {start}
    while todo:  # from the start and from every state a walk reaches past an accept
        state = todo.pop()
        if state in emit:  # a syllable ends there: nothing is reached through it
            continue
        best = max(best, walk(state) if state not in accept else
                   max((walk(t) for t in transitions[state].values()), default=0))
        for target in transitions[state].values():
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return best


@given(st.data())
@settings(max_examples=300, deadline=None)
def test_the_read_ahead_equals_a_brute_force_walk(data):
    from wwho.schema import _longest_read_ahead, _loop_without_accepting

    states, transitions, accept, emit = _random_automaton(data, 7)
    if _loop_without_accepting(states[0], transitions, accept, emit):
        return  # refused before the read-ahead is asked
    chain = _longest_read_ahead(states[0], transitions, accept, emit)
    assert len(chain) == _longest_walk(states[0], transitions, accept, emit)
    assert not set(chain) & accept and all(b in transitions[a].values() for a, b in zip(chain, chain[1:]))


@pytest.mark.parametrize("grammar, message", [
    ("C (H C)* ?", r"'\?' right after another repetition at offset 9: group what it repeats"),
    ("C (H C)*+", r"'\+' right after another repetition at offset 8"),
    ("C**", r"'\*' right after another repetition at offset 2"),
    ("C? (H C)*", "it matches the empty string"),
    ("C | H*", "it matches the empty string"),
])
def test_a_grammar_python_would_read_otherwise_or_that_matches_nothing_is_refused(tmp_path, grammar, message):
    """A repetition after another must not go into Python's regex as a lazy (``*?``) or possessive
    (``*+``) one, where ``C (H C)* ?`` fails the check against the automaton and ``C**`` names an
    offset in the compiled pattern; a grammar that matches the empty string would make
    ``engine="regex"`` loop for ever, appending empty syllables."""
    path = write(tmp_path, {**TOY, "grammar": grammar})
    with pytest.raises(SchemaError, match=f"toy.json: grammar: {message}"):
        load_schema(path)
    with pytest.raises(SchemaError, match=message):
        Syllabifier(load_schema(path, check_grammar=False), engine="regex")


def test_a_nul_in_the_path_and_a_surrogate_in_word_chars_are_schema_errors(tmp_path):
    """``load_schema("a\\x00b")`` raises no bare ``ValueError: embedded null byte``; a surrogate in
    ``word_chars`` is refused, as ``char_classes`` refuses one."""
    with pytest.raises(SchemaError, match=r"a\\x00b: no such schema file"):
        load_schema("a\x00b")
    with pytest.raises(SchemaError, match="word_chars: U\\+D800 is a surrogate code point"):
        load_schema(write(tmp_path, {**TOY, "word_chars": ["U+D800"]}))


@pytest.mark.parametrize("edit", [{"format": "x" * 100_000}, {"word_chars": ["U+" + "9" * 100_000]},
                                  {"char_classes": {"C": {"properties": ["L" * 100_000]}, "H": ["U+094D"]}},
                                  {"grammar": "C (H " + "Q" * 100_000 + ")*"}])
def test_a_long_value_is_named_cut_short(tmp_path, edit):
    """A 100,000-character property name, format or class label does not come back whole in the
    one-line error."""
    with pytest.raises(SchemaError) as err:
        load_schema(write(tmp_path, {**TOY, **edit}))
    assert len(str(err.value)) < 400, len(str(err.value))


@pytest.mark.parametrize("member", ["94D", "add", "0x94D", "u+094D"])
def test_a_code_point_is_written_with_its_prefix(tmp_path, member):
    """The prefix is required: optional, a member "add" would be U+0ADD, a Gujarati letter."""
    with pytest.raises(SchemaError, match=r"expected a code point like 'U\+0D9A'"):
        load_schema(write(tmp_path, with_edit("char_classes", {"H": [member]})))


def test_a_class_listing_more_code_points_than_a_script_has_is_refused_before_they_are_read(tmp_path):
    # Walked code point by code point into sets, a few kilobytes repeating ["U+E000", "U+10FFFF"]
    # would take long and much memory.
    big = with_edit("char_classes", {"C": [["U+0915", "U+0939"]] + [["U+E000", "U+10FFFF"]] * 2000})
    with pytest.raises(SchemaError, match=r"char_classes.C\[1\]: the classes list more than 65,536 code points"):
        load_schema(write(tmp_path, big))
    singles = with_edit("char_classes", {"C": [f"U+{0x10000 + i:05X}" for i in range(MAX_LISTED + 1)]})
    with pytest.raises(SchemaError, match=rf"char_classes.C\[{MAX_LISTED}\]: the classes list more than"):
        load_schema(write(tmp_path, singles))
    fits = with_edit("char_classes", {"C": [["U+0915", "U+0939"]], "H": ["U+094D"],
                                      "Q": [["U+E000", f"U+{0xE000 + MAX_LISTED - 39:04X}"]]})
    assert load_schema(write(tmp_path, fits)).classes["Q"]


def _count_class_builds(monkeypatch) -> list[int]:
    """A one-item list counting the character classes the grammar's translation builds."""
    from wwho import grammar

    built = [0]
    real = grammar.char_class

    def counted(*args, **kwargs):
        built[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(grammar, "char_class", counted)
    return built


def test_a_grammar_past_the_label_bound_is_refused_before_its_classes_are_built(tmp_path, monkeypatch):
    """A grammar of 100,000 alternatives (1.1 MB, within the file cap) was translated whole, a
    character class made for each label and the pattern compiled, for a minute, before the bound
    of class labels refused it: the bound is counted while the grammar is read."""
    from wwho.ambiguity import MAX_POSITIONS

    built = _count_class_builds(monkeypatch)
    path = write(tmp_path, {**TOY, "grammar": " | ".join(["C (H C)*"] * 100_000)})
    with pytest.raises(SchemaError, match=f"grammar: more than {MAX_POSITIONS} class labels"):
        load_schema(path)
    assert built[0] <= MAX_POSITIONS + 1
    deep = write(tmp_path, {**TOY, "grammar": "(" * 100_000 + "C" + ")" * 100_000}, "deep.json")
    with pytest.raises(SchemaError, match="grammar: groups nested more than 64 deep"):
        load_schema(deep)


def test_a_long_grammar_over_a_large_class_is_refused_at_once(tmp_path, monkeypatch):
    """1,999 places of a class of every letter (``L``: some 700 ranges) made a regex of 20 MB, each
    place's class built again: three minutes and 500 MB to load, for a 4 kB file. Each class is
    built once, and a regex past MAX_REGEX_CHARS is refused, naming where the grammar got to."""
    from wwho import grammar

    built = _count_class_builds(monkeypatch)
    letters = {**TOY, "char_classes": {"X": {"properties": ["L"]}}, "transitions": {"S": {"X": "E"}, "E": {"X": "E"}},
               "accept_states": ["E"], "grammar": " ".join(["X"] * 1999)}
    path = write(tmp_path, letters)
    with pytest.raises(SchemaError, match=rf"grammar: its regex would be over {grammar.MAX_REGEX_CHARS:,} "
                                          r"characters at offset \d+ "):
        load_schema(path)
    assert built[0] == 1  # the one class, written out at each of its places until the bound


def test_a_grammar_with_a_long_run_of_spaces_is_read_once():
    """Each token of a grammar looked at the whole rest of it (``grammar[pos:].strip()``): 2,000
    labels before 8 MB of spaces took hours. A run in a child, which must end within a minute."""
    import subprocess
    import sys

    code = ("import json, sys\nfrom wwho.schema import parse_schema\n"
            f"data = {TOY!r}\n"
            "data['grammar'] = ' | '.join(['C'] * 1900) + ' ' * 8_000_000\n"
            "parse_schema(data, source='spaces', check_grammar=True)\nprint('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
