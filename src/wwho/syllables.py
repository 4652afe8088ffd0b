"""Orthographic syllables: one engine that runs any script schema.

:class:`Syllabifier` splits text into syllables with the schema's automaton, by
maximal munch with last-accept rollback, and with the leading-space rule of the SGPE
design (spec 000, section 2.3):

* ``leading_space=False``: every character outside a syllable is its own token,
  whitespace included.
* ``leading_space=True``: a run of ``' '``, ``'\\t'``, ``'\\n'``, ``'\\r'`` is emitted one
  character per token, except that a final ``' '`` is held back and prefixed to the
  next token (``pending_space``); tabs and newlines are never attached; a space left
  pending at the end of the text is flushed as its own token. Whitespace never enters
  a syllable in this mode.

What happens where the automaton accepts nothing is explicit: if no transition leaves
the start state, or the walk never reaches an accept state, the first character is
emitted alone and the engine moves on by one character. (The original DFA fell back
silently.) Nothing is ever dropped: ``"".join(tokens) == text`` always.

Two implementations give the same output: a table walk over the schema (the
reference, :meth:`Syllabifier.tokenize_table`) and a regular expression generated
from the schema's grammar notation (the fast path, used by :meth:`tokenize`). The
test suite proves them equal for the bundled schemas; :func:`check_schema` does the
same for a new one.

This module does not group syllables into words (:mod:`wwho.words`) nor route mixed
text between scripts (:mod:`wwho.router`).
"""

from __future__ import annotations

import functools
import itertools
import re
from pathlib import Path

from wwho.errors import SchemaError, TokenizerError
from wwho.schema import OTHER, Schema, astral_class_chars, bundled_schema, grammar_regex, load_schema

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")

#: The whitespace of the leading-space rule (exactly spec 000's set).
WHITESPACE = frozenset(" \t\n\r")


class Syllabifier:
    """Split text into orthographic syllables according to one script schema."""

    def __init__(self, schema: Schema, *, engine: str = "auto") -> None:
        if engine not in ("auto", "regex", "table"):
            raise ValueError(f"engine must be 'auto', 'regex' or 'table', not {engine!r}")
        if engine == "regex" and schema.grammar is None:
            raise SchemaError(f"{schema.path}: grammar: engine='regex' needs a grammar")
        self.schema = schema
        self.engine = "table" if engine == "table" or schema.grammar is None else "regex"
        self._patterns: dict[bool, re.Pattern[str]] = {}
        self._astral = None
        if self.engine == "regex":
            body = grammar_regex(schema, exclude=" \t\n\r")
            # Leading-space mode: a space glued to what follows unless that is whitespace
            # (or the end), then a syllable or any single character. A whitespace char
            # that is not glued falls to ``.`` and stands alone. One alternative, so
            # ``re`` tries fewer branches per token (measured: 1.3x the three-branch form).
            self._patterns[True] = re.compile(rf"(?: (?![ \t\n\r]))?(?:{body}|.)", re.DOTALL)
            self._patterns[False] = re.compile(rf"(?:{grammar_regex(schema)})|.", re.DOTALL)
            astral = astral_class_chars(schema)
            if astral:
                # re matches BMP-only classes from a bitmap but scans classes with astral members
                # range by range (measured 3x slower on Devanagari). Texts without an astral
                # character of a class get the BMP-only patterns, which match the same tokens.
                self._astral = astral
                fast = grammar_regex(schema, exclude=" \t\n\r", bmp_only=True)
                self._fast = {
                    True: re.compile(rf"(?: (?![ \t\n\r]))?(?:{fast}|.)", re.DOTALL),
                    False: re.compile(rf"(?:{grammar_regex(schema, bmp_only=True)})|.", re.DOTALL),
                }

    @classmethod
    def for_script(cls, name: str) -> "Syllabifier":
        """The syllabifier of a bundled script (``"sinhala"``, ``"devanagari"``, ...), cached."""
        return _for_script(name)

    @classmethod
    def from_schema(cls, path: str | Path, *, engine: str = "auto", check_length: int = 3) -> Syllabifier:
        """A syllabifier for a schema file of your own, validated on load as ``wwho schema check``
        does: the grammar must not be one a backtracking engine chokes on (:mod:`wwho.ambiguity`),
        and must equal the automaton on every string of up to ``check_length`` characters
        (:func:`check_schema`; ``wwho schema check`` goes to 5; 0 skips it)."""
        schema = load_schema(path)
        if schema.grammar is not None and check_length > 0:
            problems = check_schema(schema, max_length=check_length)
            if problems:
                raise SchemaError(f"{path}: grammar: it does not match the automaton, e.g. on {problems[0]}; "
                                  f"see `wwho schema check {path}`")
        return cls(schema, engine=engine)

    @property
    def script(self) -> str:
        return self.schema.name

    def __repr__(self) -> str:
        return f"Syllabifier(script={self.schema.name!r}, engine={self.engine!r})"

    def tokenize(self, text: str, leading_space: bool = False) -> list[str]:
        """Split ``text`` into syllables (and single-character tokens between them)."""
        _check_text(text)
        if self.engine == "regex":
            if self._astral is not None and not self._has_astral_class_char(text):
                return self._fast[bool(leading_space)].findall(text)
            return self._patterns[bool(leading_space)].findall(text)
        return self.tokenize_table(text, leading_space)

    def _has_astral_class_char(self, text: str) -> bool:
        # max() and one single-range findall run at C speed; most text has no astral character.
        if not text or max(text) <= "\uffff":
            return False
        return any(ord(ch) in self._astral for ch in _ASTRAL.findall(text))

    # -- the reference engine ------------------------------------------------

    def tokenize_table(self, text: str, leading_space: bool = False) -> list[str]:
        """The table-driven engine: walk the automaton. Slow, simple, authoritative."""
        _check_text(text)
        tokens: list[str] = []
        n = len(text)
        pos = 0
        pending = ""
        while pos < n:
            if leading_space and text[pos] in WHITESPACE:
                end = pos
                while end < n and text[end] in WHITESPACE:
                    end += 1
                run = text[pos:end]
                if run[-1] == " ":
                    tokens.extend(run[:-1])
                    pending = " "
                else:
                    tokens.extend(run)
                pos = end
                continue
            end = self._longest_match(text, pos, leading_space)
            tokens.append(pending + text[pos:end])
            pending = ""
            pos = end
        if pending:
            tokens.append(pending)
        return tokens

    def _longest_match(self, text: str, pos: int, leading_space: bool) -> int:
        """End of the longest accepted syllable at ``pos``; ``pos + 1`` if there is none."""
        schema = self.schema
        trans = schema.transitions
        class_of = schema.class_of
        state = trans[schema.start].get(class_of.get(ord(text[pos]), OTHER))
        if state is None:
            return pos + 1
        last = pos + 1 if state in schema.accept_states else None
        p = pos + 1
        n = len(text)
        while state not in schema.emit_states and p < n:
            ch = text[p]
            if leading_space and ch in WHITESPACE:
                break
            nxt = trans[state].get(class_of.get(ord(ch), OTHER))
            if nxt is None:
                break
            state = nxt
            p += 1
            if state in schema.accept_states:
                last = p
        return last if last is not None else pos + 1


@functools.lru_cache(maxsize=None)
def _for_script(name: str) -> Syllabifier:
    return Syllabifier(bundled_schema(name))


def syllabify(text: str, script: str = "sinhala", *, leading_space: bool = False) -> list[str]:
    """Split ``text`` into the syllables of a bundled script. See :class:`Syllabifier`."""
    return _for_script(script).tokenize(text, leading_space)


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise TokenizerError(f"expected text as str, got {type(text).__name__}")


def check_schema(schema: Schema, *, max_length: int = 5) -> list[str]:
    """Compare the grammar (fast path) with the automaton (reference) exhaustively.

    Every string of up to ``max_length`` characters over one representative of each
    class, plus a Latin letter, a space, a tab and a newline, is tokenized by both
    engines in both leading-space modes. Returns a description of each disagreement
    (an empty list means the grammar is a faithful compilation of the automaton).
    """
    if schema.grammar is None:
        return ["the schema has no grammar: only the table engine is available"]
    fast = Syllabifier(schema, engine="regex")
    table = Syllabifier(schema, engine="table")
    alphabet = [chr(min(cps)) for cps in schema.classes.values()]
    alphabet += ["a", " ", "\t", "\n"]
    problems: list[str] = []
    for length in range(1, max_length + 1):
        for chars in itertools.product(alphabet, repeat=length):
            text = "".join(chars)
            for leading_space in (False, True):
                want = table.tokenize_table(text, leading_space)
                got = fast.tokenize(text, leading_space)
                if got != want:
                    problems.append(
                        f"{text!r} (leading_space={leading_space}): automaton {want!r}, grammar {got!r}"
                    )
                    if len(problems) >= 20:
                        return problems
    return problems
