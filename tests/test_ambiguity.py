"""Grammars a backtracking regex engine would take exponential or polynomial time on are refused
at load (``wwho.ambiguity``), by ``Syllabifier.from_schema`` and ``wwho schema check`` alike; every
bundled grammar passes."""

from __future__ import annotations

import json

import pytest
from conftest import run_wwho

from wwho import SchemaError, Syllabifier
from wwho.schema import available_scripts, bundled_schema


def check_grammar(grammar: str, source: str = "<schema>") -> None:
    from wwho.ambiguity import check_grammar

    check_grammar(grammar, source=source)


@pytest.mark.parametrize("grammar", [
    "(C*)*(C*)*(C*)* H",  # the example: seconds per word
    "(C+)+", "((C)*)*", "(C C?)* H", "(C | C H?)* H", "(C* H?)* C",
])
def test_exponential_grammars_are_refused(grammar):
    with pytest.raises(SchemaError, match="exponentially many ways"):
        check_grammar(grammar)


@pytest.mark.parametrize("grammar", ["C* C* H", "C+ C+", "(C | H)* C*", "C* (C | H)* H"])
def test_polynomial_grammars_are_refused(grammar):
    with pytest.raises(SchemaError, match="polynomial time"):
        check_grammar(grammar)


@pytest.mark.parametrize("grammar", [
    "C (H Z? C)* (H Z)? (P | H)? M? | V M? | M | H | P",  # Sinhala
    "C* H*", "(C H)* (C Z)*", "C? C? C?", "(C | D)* E", "(C* H)*", "(C | C H)*", "C (N | Z)* ((P | M) (N | Z | P | M)*)?",
    "(C | C)* H",  # one character class once compiled: no ambiguity left
])
def test_unambiguous_or_finitely_ambiguous_grammars_pass(grammar):
    check_grammar(grammar)


@pytest.mark.parametrize("name", available_scripts())
def test_every_bundled_grammar_passes(name):
    check_grammar(bundled_schema(name).grammar, source=name)


def _toy(tmp_path, grammar: str):
    """A schema whose automaton is C? C? H and whose grammar is ``grammar`` (C* H, whose C loop never
    accepts, would be refused first: the walk would be quadratic on a run of C)."""
    data = {
        "name": "toy",
        "char_classes": {"C": ["U+0061"], "H": ["U+0062"]},
        "grammar": grammar,
        "start": "S",
        "transitions": {"S": {"C": "C1", "H": "DONE"}, "C1": {"C": "C2", "H": "DONE"}, "C2": {"H": "DONE"},
                        "DONE": {}},
        "accept_states": ["DONE"],
        "emit_states": ["DONE"],
    }
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_from_schema_and_schema_check_refuse_a_backtracking_grammar(tmp_path):
    path = _toy(tmp_path, "(C*)*(C*)*(C*)* H")
    with pytest.raises(SchemaError, match=r"toy.json: grammar: the repetition around C at offset 1"):
        Syllabifier.from_schema(path)
    proc = run_wwho("schema", "check", path)
    assert proc.returncode == 2 and "exponentially many ways" in proc.stderr and "Traceback" not in proc.stderr
    assert Syllabifier.from_schema(_toy(tmp_path, "C? C? H")).tokenize("aab") == ["aab"]


def test_from_schema_refuses_a_grammar_that_is_not_the_automaton(tmp_path):
    with pytest.raises(SchemaError, match=r"toy.json: grammar: it does not match the automaton, e\.g\. on 'aa'"):
        Syllabifier.from_schema(_toy(tmp_path, "C+ H?"))  # the automaton takes no C without an H


@pytest.mark.parametrize("grammar", [
    "C (" + " | ".join(["H C P? M?"] * 30) + ")*",  # ambiguous: the same alternative 30 times
    "C (" + " | ".join(f"{a} {b} {c}" for a in "CVNHP" for b in "CVNHP" for c in "CVNHP") + ")*",  # not
])
def test_a_grammar_of_many_overlapping_alternatives_is_checked_in_bounded_memory(grammar):
    """Built whole, the pair graph would be about n^4 in the alternatives: it is built from the
    diagonal out, within a bound of work."""
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(SchemaError, match="exponentially many ways|too large to check for ambiguity"):
            check_grammar(grammar, source="g.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, peak
