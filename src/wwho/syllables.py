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

With the schema's ``keep_clusters`` (every bundled schema but Sinhala's, which is spec 000's
loop exactly), no token ends inside an extended grapheme cluster (UAX #29, :mod:`wwho.graphemes`):
a syllable that would goes on to the cluster's end, so an emoji ZWJ sequence, a flag pair or CR LF
is never cut (except that whitespace still ends a syllable in leading-space mode).

What happens where the automaton accepts nothing is explicit: if no transition leaves
the start state, or the walk never reaches an accept state, the first character is
emitted alone and the engine moves on by one character. (The original DFA fell back
silently.) Nothing is ever dropped: ``"".join(tokens) == text`` always.

The engine is the schema's automaton compiled into the Rust core (``wwho._core``) at load
time: no script is built in, so a schema of your own runs as fast as a bundled one. The
schema's ``grammar`` notation compiles to a Python regular expression too
(``engine="regex"``); :func:`check_schema` (``wwho schema check``) proves the two equal. The
pure-Python table walk of earlier versions is kept as an executable reference in the tests
(``tests/reference/syllables.py``), which compare it with the core on arbitrary text.

This module does not group syllables into words (:mod:`wwho.words`) nor route mixed
text between scripts (:mod:`wwho.router`).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import re
from pathlib import Path

from wwho import _core
from wwho.codepoints import code_point_ranges
from wwho.errors import SchemaError, TokenizerError, WrongTypeError, brief
from wwho.grammar import grammar_regex
from wwho.graphemes import cluster_ends, first_hard_break, property_ranges
from wwho.schema import available_scripts, bundled_schema, load_schema, script_name
from wwho.schema_types import Schema

#: The whitespace of the leading-space rule (exactly spec 000's set).
WHITESPACE = frozenset(" \t\n\r")


class Syllabifier:
    """Split text into orthographic syllables according to one script schema.

    ``engine="auto"`` (or ``"table"``) runs the schema's automaton in the compiled core;
    ``engine="regex"`` runs the grammar notation as a Python regular expression (slower; what
    :func:`check_schema` compares the automaton with).
    """

    def __init__(self, schema: Schema, *, engine: str = "auto") -> None:
        if not isinstance(schema, Schema):
            hint = (f": Syllabifier.for_script({schema!r}) for a bundled script, Syllabifier.from_schema(path) "
                    "for a file" if isinstance(schema, (str, Path)) or hasattr(schema, "value") else "")
            raise WrongTypeError(f"Syllabifier takes a Schema (load_schema(path), bundled_schema(name)), "
                                 f"not {type(schema).__name__}{hint}")
        if engine not in ("auto", "regex", "table"):
            raise TokenizerError(f"engine must be 'auto', 'regex' or 'table', not {engine!r}")
        if engine == "regex" and schema.grammar is None:
            raise SchemaError(f"{schema.path}: grammar: engine='regex' needs a grammar")
        self.schema = schema
        self.engine = "regex" if engine == "regex" else "table"
        self.automaton = compile_automaton(schema)
        self._patterns: dict[bool, re.Pattern[str]] = {}
        if self.engine == "regex":
            body = grammar_regex(schema, exclude=" \t\n\r")
            # Leading-space mode: a space glued to what follows unless that is whitespace
            # (or the end), then a syllable or any single character.
            self._patterns[True] = re.compile(rf"(?: (?![ \t\n\r]))?(?:{body}|.)", re.DOTALL)
            self._patterns[False] = re.compile(rf"(?:{grammar_regex(schema)})|.", re.DOTALL)

    @classmethod
    def for_script(cls, name: str) -> Syllabifier:
        """The syllabifier of a bundled script (``"sinhala"``, ``"devanagari"``, ..., or a
        :class:`wwho.Script` member), cached. A mode of several scripts (``"indic"``) has no one
        schema: the error says where its text goes."""
        return _for_script(script_name(name))

    @classmethod
    def from_schema(cls, path: str | Path, *, engine: str = "auto", check_length: int = 3) -> Syllabifier:
        """A syllabifier for a schema file of your own, validated on load as ``wwho schema check``
        does: the grammar must not be one a backtracking engine chokes on (:mod:`wwho.ambiguity`),
        and must equal the automaton on every string of up to ``check_length`` characters
        (:func:`check_schema`; ``wwho schema check`` goes to 5; 0 skips it), or of the longest length
        whose strings number at most :data:`LOAD_CHECK_STRINGS` for a schema of many classes."""
        _check_length(check_length, "check_length", 0)
        schema = load_schema(path)
        # A load checks at most LOAD_CHECK_STRINGS strings: with many classes, shorter ones.
        check_length = min(check_length, longest_check(schema, LOAD_CHECK_STRINGS))
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

    def __reduce__(self):
        # The compiled automaton is rebuilt from the schema (a worker process gets a syllabifier as
        # it gets a tokenizer); a bundled schema goes by its name, not its tables.
        bundled = self.schema.name in available_scripts() and self.schema is bundled_schema(self.schema.name)
        return (_unpickled, (self.schema.name if bundled else self.schema, self.engine, type(self)))

    def tokenize(self, text: str, *, leading_space: bool = False) -> list[str]:
        """Split ``text`` into syllables (and single-character tokens between them)."""
        _check_text(text)
        if self.engine == "regex":
            return self._tokenize_grammar(text, _flag(leading_space))
        return self.automaton.tokenize(text, _flag(leading_space))

    def joined(self, text: str, separator: str, *, leading_space: bool = False) -> str:
        """``separator.join(self.tokenize(text, leading_space=leading_space))``, made in the core without a string
        per syllable when the engine is the automaton."""
        _check_text(text)
        _check_separator(separator)
        if self.engine == "table":
            return self.automaton.joined(text, _flag(leading_space), separator, False).decode("utf-8", "surrogatepass")
        return separator.join(self.tokenize(text, leading_space=leading_space))

    def joined_lines(self, text: str, separator: str, *, leading_space: bool = False) -> bytes:
        """The UTF-8 of :meth:`joined` applied to each line of ``text`` (split at ``"\\n"`` only, line
        ends kept; lone surrogates as "surrogatepass" writes them): what ``wwho syllabify`` prints
        for a block of its input. The automaton does a whole block in one call, without the GIL."""
        _check_text(text)
        _check_separator(separator)
        if self.engine == "table":
            return self.automaton.joined(text, _flag(leading_space), separator, True)
        lines = (self.joined(line, separator, leading_space=leading_space) for line in text.split("\n"))
        return "\n".join(lines).encode("utf-8", "surrogatepass")

    def _tokenize_grammar(self, text: str, leading_space: bool) -> list[str]:
        pattern = self._patterns[leading_space]
        if not self.schema.keep_clusters:
            return pattern.findall(text)
        # As the core does: a syllable that would end inside a cluster goes on to the cluster's end
        # (whitespace still ends it in leading-space mode), and the next one starts there; none
        # spans a break Unicode always makes (around a control, CR or LF).
        ends = cluster_ends(text)
        tokens: list[str] = []
        pos, n = 0, len(text)
        while pos < n:
            end = pattern.match(text, pos).end()  # type: ignore[union-attr]  # "|." always matches
            # (a leading space held for the token is no part of its syllable: it goes with the token
            # whatever follows, a control too, as every space-prefixed token does)
            held = 1 if leading_space and text[pos] == " " and end > pos + 1 else 0
            end = first_hard_break(text, pos + held, end)
            while end < n and end not in ends and not (leading_space and text[end] in WHITESPACE):
                end += 1
            tokens.append(text[pos:end])
            pos = end
        return tokens

    def tokenize_table(self, text: str, *, leading_space: bool = False) -> list[str]:
        """The automaton's tokens, whatever ``engine`` is (the authoritative engine)."""
        _check_text(text)
        return self.automaton.tokenize(text, _flag(leading_space))


def compile_automaton(schema: Schema) -> _core.Automaton:
    """The schema's automaton as the core's tables: classes by index (``O`` is 0), states by index."""
    labels = list(schema.classes)
    class_index = {label: i + 1 for i, label in enumerate(labels)}
    class_index["O"] = 0
    states = list(schema.transitions)
    state_index = {s: i for i, s in enumerate(states)}
    try:
        return _core.Automaton(
            [code_point_ranges(schema.classes[label]) for label in labels],
            [[(class_index[c], state_index[t]) for c, t in schema.transitions[s].items()] for s in states],
            state_index[schema.start],
            [state_index[s] for s in schema.accept_states],
            [state_index[s] for s in schema.emit_states],
            graphemes=list(property_ranges()) if schema.keep_clusters else None,
        )
    except SchemaError as exc:
        raise SchemaError(f"{schema.path}: {exc}") from None


@functools.cache
def _for_script(name: str) -> Syllabifier:
    return Syllabifier(bundled_schema(name))


def _unpickled(schema: str | Schema, engine: str, cls: type = Syllabifier) -> Syllabifier:
    """A pickled syllabifier: of a bundled script by its name, else of its schema."""
    if not (isinstance(cls, type) and issubclass(cls, Syllabifier)):
        raise SchemaError(f"a pickled Syllabifier: it names {cls!r}, which is no Syllabifier")
    return cls(bundled_schema(schema) if isinstance(schema, str) else schema, engine=engine)


def syllabify(text: str, script: str = "sinhala", *, leading_space: bool = False) -> list[str]:
    """Split ``text`` into the syllables of a bundled script. See :class:`Syllabifier`.

    Warns (:class:`wwho.errors.ScriptWarning`) when most of the letters of ``text`` are in another
    script, whose characters would come back one code point at a time (``syllabify("नमस्ते")``
    needs ``script="devanagari"``); a long text is judged on a sample of it
    (:func:`wwho.scriptcheck.sample`). Text in several scripts, each run by its own schema (a mode
    of training, ``"indic"``): ``wwho.sgpe.words.WordSplitter("indic").tokenize(text)``."""
    script = script_name(script)
    syllabifier = _for_script(script)
    from wwho.scriptcheck import (
        letters_by_script,
        plainly_in,
        sample,
        syllabifying_keeps,
        warn_if_other_script,
    )

    if isinstance(text, str) and not plainly_in(judged := sample(text), script):
        warn_if_other_script(letters_by_script([(judged, 1)]), (script,), what="the text",
                             option="script=", latin=syllabifying_keeps(syllabifier.schema.keep_clusters))
    return syllabifier.tokenize(text, leading_space=leading_space)


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise WrongTypeError(f"expected text as str, got {type(text).__name__}")


def _flag(leading_space: object) -> bool:
    if leading_space is True or leading_space is False:
        return leading_space
    raise TokenizerError(f"leading_space must be True or False, not {brief(leading_space)}")


def _check_separator(separator: object) -> None:
    if not isinstance(separator, str):
        raise TokenizerError(f"separator must be text (str), got {type(separator).__name__}")
    try:
        separator.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TokenizerError(f"separator holds a lone surrogate (U+{ord(separator[exc.start]):04X}) at "
                             f"{exc.start}: it could not be written as UTF-8") from None


#: ``check_schema``'s longest strings: the strings tried grow as (classes + 4) ** length.
MAX_CHECK_LENGTH = 6
#: ``check_schema``'s most strings: a bundled schema at length 6 (Tamil's, the largest: 90 million,
#: minutes). The core allows 254 classes: at length 5 that is 10**12 strings, days of work.
MAX_CHECK_STRINGS = 100_000_000
#: The most strings :meth:`Syllabifier.from_schema` tries when it loads a file (a few seconds).
LOAD_CHECK_STRINGS = 1_000_000


def check_strings(schema: Schema, length: int) -> int:
    """How many strings :func:`check_schema` tries for ``max_length=length``: every string of 1 to
    ``length`` characters over one character of each class plus four more."""
    alphabet = len(schema.classes) + 4
    return sum(alphabet ** k for k in range(1, length + 1))


def longest_check(schema: Schema, max_strings: int = MAX_CHECK_STRINGS) -> int:
    """The longest ``max_length`` (up to :data:`MAX_CHECK_LENGTH`) whose check tries at most
    ``max_strings`` strings (0 if even length 1 tries more)."""
    length = 0
    while length < MAX_CHECK_LENGTH and check_strings(schema, length + 1) <= max_strings:
        length += 1
    return length


def refuse_a_long_check(schema: Schema, max_length: int) -> None:
    """A :class:`SchemaError` when :func:`check_schema` would try more than :data:`MAX_CHECK_STRINGS`
    strings (refused at once, not days later), naming the longest length that fits."""
    if check_strings(schema, max_length) > MAX_CHECK_STRINGS:
        fits = longest_check(schema)
        raise SchemaError(f"{schema.path}: checking every string up to length {max_length} over "
                          f"{len(schema.classes)} classes means {check_strings(schema, max_length):,} strings, more "
                          f"than {MAX_CHECK_STRINGS:,}: check up to length {fits} (--max-length {fits})")


def _check_length(value: object, name: str, lowest: int) -> int:
    if type(value) is not int or not lowest <= value <= MAX_CHECK_LENGTH:
        raise SchemaError(f"{name} must be an int from {lowest} to {MAX_CHECK_LENGTH}, not {brief(value)}")
    return value


def _as_schema(schema: object) -> Schema:
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, str) and not os.path.exists(schema) and schema in available_scripts():
        return bundled_schema(schema)
    if isinstance(schema, (str, os.PathLike)):
        return load_schema(schema)
    raise WrongTypeError(f"expected a Schema, a schema file's path or a bundled script's name, not "
                         f"{type(schema).__name__}")


def _spelled(text: str, labels: dict[str, str]) -> str:
    """A test string as a mismatch shows it: its code points (a mark may not show on a terminal)
    and the classes they stand for, the sequence the grammar and the automaton read."""
    points = " ".join(f"U+{ord(c):04X}" for c in text)
    classes = " ".join(labels.get(c, repr(c)) for c in text)
    return f"{text!r} = {points} (classes {classes})"


def check_schema(schema: Schema | str | os.PathLike, *, max_length: int = 5, progress: bool = False) -> list[str]:
    """Compare the grammar (a Python regex) with the automaton (the core) exhaustively.

    ``schema``: a :class:`~wwho.schema_types.Schema`, a schema file's path, or a bundled script's name
    (as ``wwho schema check`` takes them).

    Every string of up to ``max_length`` characters over one representative of each
    class, plus a Latin letter, a space, a tab and a newline, is tokenized by both
    engines in both leading-space modes, with a progress bar on standard error where ``progress``
    (at most :data:`MAX_CHECK_STRINGS` strings: a longer
    ``max_length`` for a schema of many classes is a :class:`SchemaError` naming the longest that
    fits). Both run the syllables alone (``keep_clusters``
    off, which would hide a grammar that forgets a mark: the cluster rule comes after either
    engine, the same for both). Returns a description of each disagreement (an empty list
    means the grammar is a faithful compilation of the automaton).
    """
    _check_length(max_length, "max_length", 1)
    schema = _as_schema(schema)
    if schema.grammar is None:
        return ["the schema has no grammar: there is nothing to compare the automaton with"]
    refuse_a_long_check(schema, max_length)
    # The syllables themselves: keeping clusters whole would hide a grammar that forgets a mark.
    schema = dataclasses.replace(schema, keep_clusters=False)
    grammar = Syllabifier(schema, engine="regex")
    table = Syllabifier(schema, engine="table")
    alphabet = [chr(min(cps)) for cps in schema.classes.values()]
    labels = {chr(min(cps)): label for label, cps in schema.classes.items()}
    alphabet = list(dict.fromkeys([*alphabet, "a", " ", "\t", "\n"]))  # once each: a class of "a" too
    from wwho.progress import progress_bar

    problems: list[str] = []
    total = sum(len(alphabet) ** length for length in range(1, max_length + 1))
    # The engines' own calls, without the checks of each public call: millions of strings, each
    # valid text and both flags plain bools (the grammar's findall is what tokenize runs without
    # keep_clusters).
    automaton = table.automaton.tokenize
    grammar_findall = [grammar._patterns[False].findall, grammar._patterns[True].findall]
    with progress_bar(total=total, disable=not progress, desc=f"checking {schema.name}", unit="string",
                      unit_scale=True, leave=False) as bar:
        for length in range(1, max_length + 1):
            for n, chars in enumerate(itertools.product(alphabet, repeat=length), 1):
                text = "".join(chars)
                if n % 4096 == 0:
                    bar.update(4096)
                for leading_space in (False, True):
                    want = automaton(text, leading_space)
                    got = grammar_findall[leading_space](text)
                    if got != want:
                        problems.append(f"{_spelled(text, labels)} (leading_space={leading_space}): automaton "
                                        f"{want!r}, grammar {got!r}")
                        if len(problems) >= 20:
                            return problems
            bar.update(len(alphabet) ** length % 4096)
    return problems
