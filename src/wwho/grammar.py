"""A schema's grammar notation (``docs/schemas.md``) compiled into a Python regular expression, with
the notation's errors named by offset; which characters of a schema's classes lie above the BMP.

It deliberately does not check that a grammar is safe for a backtracking engine
(:mod:`wwho.ambiguity`) or that it equals the automaton (:func:`wwho.syllables.check_schema`).
"""

from __future__ import annotations

import re

from wwho.ambiguity import MAX_DEPTH, MAX_POSITIONS
from wwho.codepoints import char_class
from wwho.errors import SchemaError, brief
from wwho.schema_types import OTHER, Schema


def astral_class_chars(schema: Schema) -> frozenset[int]:
    """Code points above U+FFFF that some class of the schema lists."""
    return frozenset(cp for cp in schema.class_of if cp > 0xFFFF)


#: The most characters a grammar's regex may have. Its classes are written out at each place a label
#: stands, so a long grammar over a class of a large property (``L``) made a regex of tens of
#: megabytes that took minutes to build and compile; the bundled grammars' regexes are far smaller.
MAX_REGEX_CHARS = 1_000_000

_GRAMMAR_TOKEN = re.compile(r"\s*(?:([A-Z][A-Za-z0-9_]*)|([()|?*+]))")
_CLASS_GROUP = re.compile(r"\(\s*([A-Z][A-Za-z0-9_]*(?:\s*\|\s*[A-Z][A-Za-z0-9_]*)*)\s*\)")


def grammar_regex(schema: Schema, *, exclude: str = "", bmp_only: bool = False) -> str:
    """Translate the schema's grammar notation into a Python regex (no flags needed).

    Class labels become character classes; ``O`` becomes "any character in no class",
    minus the characters in ``exclude`` (the whitespace that the leading-space mode
    keeps out of syllables). Groups become non-capturing. ``bmp_only=True`` leaves the
    astral members out of the classes (not out of ``O``): exact, and faster
    in ``re``, for any text without an astral character of a class (see
    :func:`astral_class_chars`).
    """
    grammar = schema.grammar
    if grammar is None:
        raise SchemaError(f"{schema.path}: grammar: the schema has no grammar")
    every = set().union(*schema.classes.values()) | {ord(c) for c in exclude}
    out: list[str] = []
    size = 0  # the characters of ``out``
    written: dict[tuple[str, ...], str] = {}  # each class (or group of classes) written out once

    def class_regex(labels: tuple[str, ...]) -> str:
        if labels not in written:
            if labels == (OTHER,):
                written[labels] = char_class(every, negate=True)
            else:
                written[labels] = char_class(set().union(*(schema.classes[x] for x in labels)), bmp_only=bmp_only)
        return written[labels]

    def add(piece: str, at: int) -> None:
        nonlocal size
        size += len(piece)
        if size > MAX_REGEX_CHARS:
            raise SchemaError(f"{schema.path}: grammar: its regex would be over {MAX_REGEX_CHARS:,} characters "
                              f"at offset {at} (each class is written out where its label stands): name "
                              "large classes (a property's) at fewer places, or group labels into one class")
        out.append(piece)

    pos = 0
    depth = 0
    prev_atom = False
    repeated = False  # the last token was ? * or +
    positions = 0  # class labels, a group of alternative classes counting one (as wwho.ambiguity counts)
    end = len(grammar.rstrip())  # (once: the rest of the grammar looked at for each token is quadratic)
    while pos < end:
        if positions > MAX_POSITIONS:  # before a character class is built for each of a huge grammar's
            raise SchemaError(f"{schema.path}: grammar: more than {MAX_POSITIONS} class labels")
        m = _GRAMMAR_TOKEN.match(grammar, pos)
        if not m:
            raise SchemaError(f"{schema.path}: grammar: unexpected {grammar[pos:].strip()[:10]!r} at offset {pos}")
        label, op = m.groups()
        pos = m.end()
        if op in ("?", "*", "+") and repeated:
            # Python's regex would read it as lazy (*?) or possessive (*+), not as another repetition.
            raise SchemaError(f"{schema.path}: grammar: {op!r} right after another repetition at offset "
                              f"{m.start(2)}: group what it repeats, as (C*)?")
        repeated = op in ("?", "*", "+")
        if label:
            if label == OTHER or label in schema.classes:
                add(class_regex((label,)), m.start(1))
            else:
                raise SchemaError(f"{schema.path}: grammar: unknown class {brief(label)} at offset {m.start(1)}")
            prev_atom = True
            positions += 1
        elif op == "(" and (group := _CLASS_GROUP.match(grammar, m.start(2))) and OTHER not in (
                labels := re.split(r"\s*\|\s*", group.group(1))):
            # "(N | Z | P)" is one character of any of these classes: one merged character class
            # matches the same strings and is far cheaper for the regex engine than an alternation.
            unknown = [x for x in labels if x not in schema.classes]
            if unknown:
                raise SchemaError(f"{schema.path}: grammar: unknown class {unknown[0]!r} at offset {m.start(2)}")
            add(class_regex(tuple(sorted(set(labels)))), m.start(2))
            pos = group.end()
            prev_atom = True
            positions += 1
        elif op == "(":
            out.append("(?:")
            depth += 1
            if depth > MAX_DEPTH:  # (before the regex compiler recurses through each level)
                raise SchemaError(f"{schema.path}: grammar: groups nested more than {MAX_DEPTH} deep")
            prev_atom = False
        elif op == ")":
            if depth == 0 or not prev_atom:
                raise SchemaError(f"{schema.path}: grammar: unbalanced or empty group at offset {m.start(2)}")
            depth -= 1
            out.append(")")
            prev_atom = True
        elif op == "|":
            if not prev_atom:
                raise SchemaError(f"{schema.path}: grammar: empty alternative at offset {m.start(2)}")
            out.append("|")
            prev_atom = False
        else:  # ? * +
            if not prev_atom:
                raise SchemaError(f"{schema.path}: grammar: {op!r} with nothing to repeat at offset {m.start(2)}")
            out.append(op)
    if depth or not prev_atom:
        raise SchemaError(f"{schema.path}: grammar: incomplete expression (unclosed group or trailing operator)")
    pattern = "".join(out)
    try:
        re.compile(pattern)
    except re.error as exc:  # e.g. a doubled quantifier such as "C**"
        raise SchemaError(f"{schema.path}: grammar: not a valid expression ({exc})") from None
    except RecursionError:
        raise SchemaError(f"{schema.path}: grammar: groups nested too deeply") from None
    if re.fullmatch(pattern, ""):  # a syllable has a character at least (the start state never accepts)
        raise SchemaError(f"{schema.path}: grammar: it matches the empty string; every alternative needs a class "
                          "that is not repeated with ? or *")
    return pattern
