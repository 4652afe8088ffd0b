"""Schema loading and validation: every malformed schema names the file and the key."""

from __future__ import annotations

import copy
import json

import pytest

from wwho import SchemaError, Syllabifier, load_schema
from wwho.schema import SCHEMA_DIR, available_scripts, bundled_schema, parse_schema

GOOD = {
    "name": "toy",
    "char_classes": {"C": ["U+0061", ["U+0062", "U+0063"]], "M": {"name": "mark", "members": ["U+0300"]}},
    "grammar": "C M?",
    "start": "S",
    "transitions": {"S": {"C": "BASE"}, "BASE": {"M": "DONE"}, "DONE": {}},
    "accept_states": ["BASE", "DONE"],
    "emit_states": ["DONE"],
}


def write(tmp_path, data, name="toy.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_bundled_schemas_load_and_declare_blocks():
    assert {"sinhala", "devanagari"} <= set(available_scripts())
    for name in available_scripts():
        schema = bundled_schema(name)
        assert schema.blocks and schema.grammar
        assert schema.start in schema.transitions
        # bundled_schema skips compiling the grammar at run time: the full check is here.
        assert load_schema(SCHEMA_DIR / f"{name}.json") == schema


def test_a_bad_grammar_is_refused_unless_the_check_is_skipped(tmp_path):
    data = json.loads((SCHEMA_DIR / "sinhala.json").read_text(encoding="utf-8"))
    data["grammar"] = "(C*)*"
    path = write(tmp_path, data, "bad.json")
    with pytest.raises(SchemaError, match="grammar"):
        load_schema(path)
    assert load_schema(path, check_grammar=False).grammar == "(C*)*"


def test_sinhala_classes_are_spec_000_sets():
    s = bundled_schema("sinhala")
    assert s.classes["C"] == frozenset(range(0x0D9A, 0x0DC7))
    assert len(s.classes["C"]) == 45
    assert len(s.classes["V"]) == 18
    assert len(s.classes["P"]) == 19
    assert s.classes["M"] == {0x0D82, 0x0D83}
    assert s.classes["H"] == {0x0DCA}
    assert s.classify("a") == "O"


def test_good_toy_schema(tmp_path):
    syl = Syllabifier.from_schema(write(tmp_path, GOOD))
    assert syl.tokenize("ab\u0300c") == ["a", "b\u0300", "c"]


def mutate(**changes):
    data = copy.deepcopy(GOOD)
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    return data


@pytest.mark.parametrize(
    "data, message",
    [
        ("{not json", r"invalid JSON at line 1"),
        (mutate(start=None), r"start: required key is missing"),
        (mutate(start="NOPE"), r"start: unknown state 'NOPE'"),
        (mutate(transitions={"S": {"C": "GONE"}}), r"transitions.S.C: unknown target state 'GONE'"),
        (mutate(transitions={"S": {"Q": "S"}, "BASE": {}, "DONE": {}}), r"transitions.S.Q: unknown class 'Q'"),
        (mutate(char_classes={"C": ["U+0061"], "M": ["U+0061"]}), r"char_classes.M: U\+0061 is also in class 'C'"),
        (mutate(char_classes={"C": ["zz"]}), r"char_classes.C\[0\]: expected a code point"),
        (mutate(char_classes={"C": [["U+0063", "U+0061"]]}), r"char_classes.C\[0\]: range first"),
        (mutate(char_classes={"O": ["U+0061"]}), r"char_classes.O: class labels"),
        (mutate(accept_states=["BASE", "NOWHERE"]), r"accept_states: unknown state 'NOWHERE'"),
        (mutate(accept_states=["S", "BASE", "DONE"]), r"accept_states: the start state"),
        (mutate(emit_states=["DONE", "BASE", "S"]), r"emit_states: emit states must also be accept states"),
        (mutate(grammar="C (M"), r"grammar: incomplete expression"),
        (mutate(grammar="C Q"), r"grammar: unknown class 'Q'"),
        (mutate(grammar="C **"), r"grammar: "),
        (mutate(name="Bad Name"), r"name: must be a lowercase identifier"),
        (mutate(format="other/9"), r"format: unsupported format"),
        (mutate(char_classes={"C": {"properties": ["NoSuchProperty=Yes"]}}), r"char_classes.C.properties: unknown Unicode property"),
        ([], r"a schema is a JSON object"),
        # Wrong types are errors naming the key, not TypeErrors:
        (mutate(start=[]), r"start: unknown state \[\]"),
        (mutate(start={"a": 1}), r"start: unknown state"),
        (mutate(transitions={"S": {"C": ["BASE"]}, "BASE": {}, "DONE": {}}), r"transitions.S.C: unknown target state"),
        (mutate(blocks={"name": "x"}), r"blocks: must be a list"),
        (mutate(word_chars="U+0061"), r"word_chars: must be a list"),
        (mutate(punctuation="U+0964"), r"punctuation: must be a list"),
        (mutate(punctuation=["danda"]), r"punctuation\[0\]: expected a code point"),
        # punctuation of the script is its own: a character outside its blocks and word_chars is an error
        (mutate(blocks=[{"name": "toy", "first": "U+0061", "last": "U+0063"}], punctuation=["U+0964"]),
         r"punctuation: U\+0964 is not a character of the script"),
        # a letter of the script among the punctuation (not taken without a word)
        (mutate(blocks=[{"name": "toy", "first": "U+0061", "last": "U+0063"}], punctuation=["U+0061"]),
         r"punctuation: U\+0061 is not punctuation \(General_Category Po\)"),
        (mutate(blocks=[{"name": "toy", "first": "U+0061", "last": "U+0063", "extension": "yes"}]),
         r"blocks\[0\]: 'extension' must be true or false"),
        (mutate(grammar=["C"]), r"grammar: must be a string"),
        (mutate(accept_states="BASE"), r"accept_states: must be a list of states"),
        (mutate(char_classes={"C": {"members": "U+0061"}}), r"char_classes.C: must be a list of members"),
        # A property name goes into a regex: only property syntax may
        (mutate(char_classes={"C": {"properties": ["L}|(?s:.)*|\\p{L"]}}), r"char_classes.C.properties: .* is not a "
                                                                             r"Unicode property name"),
        # Deep nesting: one line, not a RecursionError
        ("[" * 100_000 + "]" * 100_000, r"JSON nested too deeply"),
        (mutate(grammar="(" * 5000 + "C" + ")" * 5000), r"grammar: (groups nested|nested too deeply)"),
        # A class whose properties match only code points an earlier class took: it has no members
        # (was a ValueError from min() or a grammar error blaming the grammar).
        (mutate(char_classes={"C": ["U+0061", "U+2028"], "M": {"properties": ["Zl"]}}),
         r"char_classes.M: class has no members: its properties match no code point"),
        (mutate(char_classes={"C": ["U+0061"], "M": {"properties": ["Cs"]}}), r"char_classes.M: class has no members"),
        # The automaton keeps whitespace out of syllables: no class may hold it (was "grammar: it
        # does not match the automaton").
        (mutate(char_classes={"C": ["U+0061", "U+0020"], "M": ["U+0300"]}), r"char_classes.C: U\+0020 is whitespace"),
        (mutate(char_classes={"C": [["U+0000", "U+0061"]], "M": ["U+0300"]}), r"char_classes.C: U\+0009 is whitespace"),
        (mutate(char_classes={"C": ["U+0061", "U+D800"], "M": ["U+0300"]}),
         r"char_classes.C\[1\]: U\+D800 is a surrogate code point"),
    ],
)
def test_malformed_schema_names_file_and_key(tmp_path, data, message):
    path = write(tmp_path, data)
    with pytest.raises(SchemaError, match=message) as info:
        load_schema(path)
    assert str(path) in str(info.value)


def test_missing_schema_file(tmp_path):
    with pytest.raises(SchemaError, match="no such schema file"):
        load_schema(tmp_path / "absent.json")


def test_schema_without_grammar_uses_table_engine():
    data = mutate(grammar=None)
    syl = Syllabifier(parse_schema(data))
    assert syl.engine == "table"
    assert syl.tokenize("ab\u0300") == ["a", "b\u0300"]


def test_cli_schema_check(capsys):
    from wwho.cli import main

    assert main(["schema", "check", str(SCHEMA_DIR / "sinhala.json"), "--max-length", "3"]) == 0
    assert "grammar equals automaton" in capsys.readouterr().out


def test_cli_schema_check_reports_a_grammar_that_disagrees(tmp_path, capsys):
    from wwho.cli import main

    path = write(tmp_path, mutate(grammar="C"))  # forgets the mark
    assert main(["schema", "check", str(path), "--max-length", "2"]) == 1
    assert "MISMATCH" in capsys.readouterr().out


@pytest.mark.parametrize("key, value, words", [("keep_cluster", False, "did you mean 'keep_clusters'"),
                                               ("bogus", 1, "unknown key"), ("sources", 5, "list of strings")])
def test_unknown_keys_and_bad_sources_are_errors(key, value, words):
    """Not accepted without a word (a typo in an optional key would change nothing)."""
    data = copy.deepcopy(json.loads((SCHEMA_DIR / "sinhala.json").read_text(encoding="utf-8")))
    data[key] = value
    with pytest.raises(SchemaError, match=words):
        parse_schema(data, check_grammar=False)
    data.pop(key) if key != "sources" else data.update(sources=["a"])
    data["my_notes"] = "notes for humans are fine"
    parse_schema(data, check_grammar=False)


def test_unknown_keys_of_a_class_or_a_block_are_errors():
    """A misspelt key inside a class object or a block (``propertes``, ``extensoin``) is not accepted
    without a word, where it would change what the class holds."""
    base = json.loads((SCHEMA_DIR / "devanagari.json").read_text(encoding="utf-8"))
    label = next(k for k, v in base["char_classes"].items() if isinstance(v, dict))
    data = copy.deepcopy(base)
    data["char_classes"][label]["propertes"] = ["Mn"]
    with pytest.raises(SchemaError, match=rf"char_classes\.{label}\.propertes: unknown key; did you mean 'properties'"):
        parse_schema(data, check_grammar=False)
    data = copy.deepcopy(base)
    data["blocks"][0]["extensoin"] = True
    with pytest.raises(SchemaError, match=r"blocks\[0\]\.extensoin: unknown key; did you mean 'extension'"):
        parse_schema(data, check_grammar=False)
    data = copy.deepcopy(base)
    data["blocks"][0]["why_notes"] = "notes are fine"
    data["char_classes"][label]["source_note"] = "here too"
    parse_schema(data, check_grammar=False)


def test_a_schema_path_of_another_type_is_a_wwho_error():
    """None or a number does not raise pathlib's own TypeError from inside it; a bytes path is a
    path."""
    from wwho.errors import WrongTypeError

    for path in (None, 5):
        with pytest.raises(WrongTypeError, match="expected the path of a schema file, got"):
            Syllabifier.from_schema(path)
        with pytest.raises(WrongTypeError):
            load_schema(path)
    assert load_schema(bytes(SCHEMA_DIR / "sinhala.json"), check_grammar=False).name == "sinhala"


def test_a_property_class_leaves_whitespace_and_surrogates_out(tmp_path):
    # A property as broad as "not a letter" takes no whitespace (the automaton keeps it outside
    # syllables) and no surrogate; a range over the surrogates skips them.
    data = mutate(char_classes={"C": [["U+D700", "U+E000"]], "M": {"properties": ["^L"]}},
                  grammar="C M?")
    schema = load_schema(write(tmp_path, data))
    assert not {0x20, 0x09, 0x0A, 0x0D} & schema.classes["M"]
    assert not any(0xD800 <= cp <= 0xDFFF for cls in schema.classes.values() for cp in cls)
    syl = Syllabifier.from_schema(write(tmp_path, data, "again.json"))
    assert syl.tokenize("\ud700- \ue000", leading_space=True) == ["\ud700-", " \ue000"]


@pytest.mark.parametrize("script", ["../schemas/sinhala", "/etc/passwd", "x" * 5000, ["sinhala"], None, 3])
def test_a_script_is_a_bundled_name_never_a_path(script):
    # A relative path loaded any JSON file without the grammar checks; a long name was an
    # OSError and a list a TypeError from the cache.
    import wwho

    for call in (lambda: wwho.syllabify("x", script=script), lambda: Syllabifier.for_script(script),
                 lambda: bundled_schema(script)):
        with pytest.raises(SchemaError, match="unknown script .*; bundled scripts: bengali"):
            call()


def test_a_script_member_names_its_script():
    import wwho

    assert wwho.syllabify("नमस्ते", script=wwho.Script.DEVANAGARI) == wwho.syllabify("नमस्ते", "devanagari")
    assert Syllabifier.for_script(wwho.Script.TAMIL) is Syllabifier.for_script("tamil")


def test_the_properties_of_a_schema_are_bounded(tmp_path):
    """Many spellings of one property must not each be a scan of every code point: a file near the
    16 MB bound would run for days."""
    from wwho.schema import MAX_PROPERTIES

    props = ["^gc=Lu", "^General_Category=Lu", "^Lu"] * 6
    data = mutate(char_classes={"C": [["U+0915", "U+0939"]], "M": {"properties": props[:MAX_PROPERTIES + 1]}},
                  grammar="C M?")
    with pytest.raises(SchemaError, match=r"char_classes\.M\.properties: more than 16 Unicode properties"):
        load_schema(write(tmp_path, data))
    data["char_classes"]["M"]["properties"] = ["Lu"] * MAX_PROPERTIES  # the bound itself loads
    assert ord("A") in load_schema(write(tmp_path, data, "at-bound.json")).classes["M"]


def test_word_classes_of_the_wrong_type_are_named_in_plain_words(tmp_path):
    """``"word_classes": "C"`` said ``must be a list of classs``."""
    data = json.loads((SCHEMA_DIR / "sinhala.json").read_text(encoding="utf-8"))
    data["word_classes"] = "C"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SchemaError, match=r"word_classes: must be a list of classes$"):
        load_schema(path)
