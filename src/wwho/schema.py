"""Script schemas: the data that tells the syllable engine how a script is written.

A schema is a JSON file (format documented in ``docs/schemas.md``) holding character
classes, a deterministic finite automaton over those classes, the same grammar in a
compact notation, and the script's Unicode blocks. This module loads and validates
schemas (the keys, the classes, the automaton) and names the bundled scripts.

It deliberately does not tokenize anything (:mod:`wwho.syllables` runs schemas), nor compile the
grammar notation (:mod:`wwho.grammar`); the types it builds are :mod:`wwho.schema_types`'.
"""

from __future__ import annotations

import difflib
import enum
import functools
import os
import re
from pathlib import Path
from typing import Any

from wwho.ambiguity import check_grammar as refuse_backtracking
from wwho.errors import SchemaError, brief
from wwho.grammar import grammar_regex
from wwho.schema_types import OTHER, Block, Schema
from wwho.unicode_properties import PROPERTY_NAME, codepoints_with_property

SCHEMA_DIR = Path(__file__).parent / "schemas"
SCHEMA_FORMAT = "wwho-schema/1"

_LABEL = re.compile(r"[A-Z][A-Za-z0-9_]*\Z")
#: The whitespace the automaton keeps outside syllables: no class may hold it.
_SPACES = frozenset(map(ord, " \t\n\r"))
_SURROGATES = (0xD800, 0xDFFF)
_CODEPOINT = re.compile(r"U\+([0-9A-Fa-f]{1,6})\Z")
#: The core's limits (rust/src/errors.rs): class indices are bytes (0 is ``O``, 255 unused), state
#: indices 14 bits beside two flag bits (rust/src/schema.rs). Checked here so that the error names
#: the key and ``wwho schema check`` never calls a schema valid that no engine can run.
MAX_CLASSES = 254
MAX_STATES = 16383
#: Code points the classes of a schema may list, counted range by range before any is expanded: a
#: script's classes list a few thousand, and each listed one costs memory in every table built from
#: the schema, so a file of a few kilobytes repeating ``["U+0000", "U+10FFFF"]`` is refused at once.
MAX_LISTED = 1 << 16
#: Unicode properties a schema may name, in all its classes (the bundled ones name at most 5): each
#: costs a scan of every code point at load.
MAX_PROPERTIES = 16
#: States in a row that do not accept: how far the engine may read past a syllable's last accept
#: before it rolls back, at each position of a text: the bundled schemas need very few, and a
#: long chain makes syllabifying cost that chain's length at every position.
MAX_READ_AHEAD = 32


def available_scripts() -> list[str]:
    """Names of the schemas bundled with wwho."""
    return list(_bundled_list())


@functools.cache
def _bundled_list() -> tuple[str, ...]:
    # Read once: the package's files do not change while it runs (wwho.Script is made from them at
    # import), and a directory listing on every wwho.syllabify call cost more than the call's work.
    return tuple(sorted(p.stem for p in SCHEMA_DIR.glob("*.json")))


#: Modes of training (``script="indic"``) that route each script run to its own bundled schema, and
#: the scripts each one covers; :mod:`wwho.sgpe.words` splits text in them. Fixed lists, not
#: "whatever is bundled", so that a ``vocab.json`` trained in a mode keeps its meaning when a schema
#: is added.
MULTI_SCRIPT_MODES: dict[str, tuple[str, ...]] = {
    "mixed": ("sinhala", "devanagari"),
    "indic": ("bengali", "devanagari", "gujarati", "gurmukhi", "kannada", "malayalam", "odia", "sinhala",
              "tamil", "telugu"),
}


#: A schema is a few kilobytes (the bundled ones: 2-9 KB); a file larger than this is not one.
MAX_SCHEMA_BYTES = 16 * 2**20


@functools.cache
def _bundled_names() -> frozenset[str]:
    return frozenset(_bundled_list())


def script_name(script: object) -> str:
    """The name of a bundled script given by name or as a :class:`wwho.Script` member; anything
    else (a path, another type) is a :class:`SchemaError`. Schema files of your own are loaded by
    path (:func:`load_schema`), never through a script name. A mode of several scripts
    (:data:`MULTI_SCRIPT_MODES`) is an error that says where such text goes."""
    name = script.value if isinstance(script, enum.Enum) else script
    if isinstance(name, str) and name in MULTI_SCRIPT_MODES:
        raise SchemaError(f"{name!r} is a mode of several scripts ({', '.join(MULTI_SCRIPT_MODES[name])}), not one "
                          f"schema: wwho.sgpe.words.WordSplitter({name!r}).tokenize(text) splits each script run by "
                          f"its own (wwho syllabify --script {name})")
    if not isinstance(name, str) or name not in _bundled_names():
        raise SchemaError(f"unknown script {brief(script)}; bundled scripts: {', '.join(available_scripts())}")
    return name


def bundled_schema(name: str) -> Schema:
    """Load a bundled schema by script name (cached; see :func:`script_name`).

    Its grammar is not compiled here: a bundled grammar passes :func:`load_schema`'s full check in
    the tests (``tests/test_schema.py``), and compiling all ten is a cost that every
    caller needing only the blocks (the script router, the script check of training) would pay."""
    return _bundled_schema(script_name(name))


@functools.cache
def _bundled_schema(name: str) -> Schema:
    return load_schema(SCHEMA_DIR / f"{name}.json", check_grammar=False)


def load_schema(path: str | Path, *, check_grammar: bool = True) -> Schema:
    """Read and validate a schema file; a problem raises :class:`SchemaError` naming the key.

    ``check_grammar=False`` skips compiling the grammar and the backtracking check (for files
    known to pass them: the bundled ones)."""
    from wwho.errors import WrongTypeError
    from wwho.fileio import parse_json, read_bytes

    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):  # (pathlib's own TypeError named no argument)
        raise WrongTypeError(f"expected the path of a schema file, got {type(path).__name__}")
    if not os.fspath(path):  # Path("") is the current directory
        raise SchemaError("an empty path: give a schema file")
    # A regular file of at most MAX_SCHEMA_BYTES: /dev/zero or a FIFO is one line at once, not gigabytes
    # read or a wait for a writer.
    raw = read_bytes(path, error=SchemaError, what="schema file", limit=MAX_SCHEMA_BYTES)
    return parse_schema(parse_json(raw, source=str(path), error=SchemaError), source=str(path),
                        check_grammar=check_grammar)


#: The keys of a character class given as an object, and of a block (besides notes).
CLASS_KEYS = ("members", "properties", "name")
BLOCK_KEYS = ("name", "first", "last", "extension")
#: The keys a schema may have (docs/schemas.md), besides notes for humans (``*_note``, ``*_notes``).
SCHEMA_KEYS = ("format", "name", "description", "sources", "blocks", "word_chars", "punctuation", "char_classes",
               "start", "transitions", "accept_states", "emit_states", "grammar", "word_classes", "attach_classes",
               "keep_clusters")


def _part(name: Any) -> str:
    """A JSON key as one part of an error's key path: as it is when plain, quoted (``repr``) when it
    is empty or holds whitespace, a control character or a lone surrogate, so that the message stays
    one line of printable text (a class label or a state read from the file is not checked yet)."""
    if isinstance(name, str) and name and name.isprintable() and not any(c.isspace() for c in name):
        return name
    return repr(name)


def parse_schema(data: Any, *, source: str = "<schema>", check_grammar: bool = True) -> Schema:
    """Validate an already-parsed schema mapping (see :func:`load_schema`)."""

    def fail(key: str, message: str) -> SchemaError:
        return SchemaError(f"{source}: {key}: {message}")

    if not isinstance(data, dict):
        raise fail("(top level)", "a schema is a JSON object")
    fmt = data.get("format", SCHEMA_FORMAT)
    if fmt != SCHEMA_FORMAT:
        raise fail("format", f"unsupported format {brief(fmt)}, expected {SCHEMA_FORMAT!r}")
    for key in ("name", "char_classes", "start", "transitions", "accept_states"):
        if key not in data:
            raise fail(key, "required key is missing")
    def known_keys(obj: dict, known: tuple[str, ...], where: str = "") -> None:
        # A typo in an optional key (keep_cluster, a class's propertes, a block's extensoin) would
        # otherwise change nothing, silently.
        for key in obj:
            if key not in known and not (isinstance(key, str) and key.endswith(("_note", "_notes"))):
                close = difflib.get_close_matches(str(key), known, n=1)
                raise fail(f"{where}{_part(str(key))}", "unknown key" + (
                    f"; did you mean {close[0]!r}?" if close else
                    f" (known: {', '.join(sorted(known))}; *_notes for notes)"))

    known_keys(data, SCHEMA_KEYS)
    sources = data.get("sources", [])
    if not (isinstance(sources, list) and all(isinstance(x, str) for x in sources)):
        raise fail("sources", "must be a list of strings")
    name = data["name"]
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise fail("name", f"must be a lowercase identifier, got {name!r}")

    def codepoint(value: Any, key: str) -> int:
        match = _CODEPOINT.match(value) if isinstance(value, str) else None
        if not match:
            raise fail(key, f"expected a code point like 'U+0D9A', got {brief(value)}")
        cp = int(match.group(1), 16)
        if cp > 0x10FFFF:
            raise fail(key, f"code point {brief(value)} is beyond U+10FFFF")
        return cp

    # Character classes: each member is a code point or a [first, last] range.
    raw_classes = data["char_classes"]
    if not isinstance(raw_classes, dict) or not raw_classes:
        raise fail("char_classes", "must be a non-empty object of class label -> members")
    if len(raw_classes) > MAX_CLASSES:
        raise fail("char_classes", f"{len(raw_classes):,} classes: the engine supports at most {MAX_CLASSES}")
    classes: dict[str, frozenset[int]] = {}
    class_names: dict[str, str] = {}
    class_of: dict[int, str] = {}
    listed: set[int] = set()
    listed_count = 0
    by_property: list[tuple[str, list[str]]] = []
    for label, spec in raw_classes.items():
        key = f"char_classes.{_part(label)}"
        if not isinstance(label, str) or not _LABEL.match(label) or label == OTHER:
            raise fail(key, f"class labels are identifiers starting with an uppercase letter, and {OTHER!r} is reserved for unlisted characters")
        if isinstance(spec, list):
            members, title = spec, label
        elif isinstance(spec, dict) and isinstance(spec.get("members", []), list):
            known_keys(spec, CLASS_KEYS, f"{key}.")
            members, title = spec.get("members", []), spec.get("name", label)
            if not isinstance(title, str):
                raise fail(f"{key}.name", f"must be a string, got {brief(title)}")
            props = spec.get("properties", [])
            if not isinstance(props, list) or not all(isinstance(p, str) for p in props):
                raise fail(f"{key}.properties", "must be a list of Unicode properties like 'InCB=Linker'")
            for prop in props:  # pasted into a regex: only property syntax may get there
                if not PROPERTY_NAME.fullmatch(prop):
                    raise fail(f"{key}.properties", f"{brief(prop)} is not a Unicode property name like "
                               "'InCB=Linker' or 'Mn'")
            if props:
                by_property.append((label, props))
                if sum(len(p) for _, p in by_property) > MAX_PROPERTIES:
                    raise fail(f"{key}.properties", f"more than {MAX_PROPERTIES} Unicode properties in the schema "
                               "(each is a scan of every code point): list the code points, or join properties")
            if not members and not props:
                raise fail(key, "class has no members")
        else:
            raise fail(key, "must be a list of members or an object with 'members' and/or 'properties'")
        cps: set[int] = set()
        for i, member in enumerate(members):
            mkey = f"{key}[{i}]"
            if isinstance(member, list):
                if len(member) != 2:
                    raise fail(mkey, "a range is [first, last]")
                first, last = codepoint(member[0], mkey), codepoint(member[1], mkey)
                if first > last:
                    raise fail(mkey, f"range first {member[0]} is after last {member[1]}")
                listed_count += last - first + 1
                if listed_count > MAX_LISTED:
                    raise fail(mkey, f"the classes list more than {MAX_LISTED:,} code points up to here (this "
                               f"range holds {last - first + 1:,}); a script's classes list a few thousand: use "
                               "'properties' for a large set, or leave characters unlisted (class O)")
                # Surrogates are no characters (properties leave them out too).
                cps.update(cp for cp in range(first, last + 1) if not _SURROGATES[0] <= cp <= _SURROGATES[1])
            else:
                cp = codepoint(member, mkey)
                listed_count += 1
                if listed_count > MAX_LISTED:
                    raise fail(mkey, f"the classes list more than {MAX_LISTED:,} code points up to here; a "
                               "script's classes list a few thousand")
                if _SURROGATES[0] <= cp <= _SURROGATES[1]:
                    raise fail(mkey, f"U+{cp:04X} is a surrogate code point, not a character")
                cps.add(cp)
        spaces = sorted(cps & _SPACES)
        if spaces:  # the automaton keeps them out of syllables (leading-space mode attaches them)
            raise fail(key, f"U+{spaces[0]:04X} is whitespace, which no class may hold: space, tab, "
                       "CR and LF stay outside syllables")
        if not cps and not any(lbl == label for lbl, _ in by_property):
            raise fail(key, "class has no members")
        for cp in cps:
            if cp in class_of:
                raise fail(key, f"U+{cp:04X} is also in class {class_of[cp]!r}; classes must not overlap")
            class_of[cp] = label
        classes[label] = frozenset(cps)
        class_names[label] = title
        listed.update(cps)

    # Property-defined members come second: they take only code points that no explicit
    # member list claims, and earlier classes win over later ones (so a class of "other
    # scripts' viramas" can be listed before a class of "all other combining marks").
    for label, props in by_property:
        extra: set[int] = set()
        for prop in props:
            try:
                extra |= codepoints_with_property(prop)
            except MemoryError:  # not the schema's fault: said as what it is
                raise
            except Exception as exc:  # regex raises its own error type for bad names
                raise fail(f"char_classes.{label}.properties", f"unknown Unicode property {brief(prop)} ({exc})") from None
        extra -= class_of.keys() | _SPACES
        for cp in extra:
            class_of[cp] = label
        classes[label] = classes[label] | frozenset(extra)
        if not classes[label]:
            raise fail(f"char_classes.{label}", "class has no members: its properties match no code point "
                       "that an earlier class has not taken")

    # The automaton.
    transitions_raw = data["transitions"]
    if not isinstance(transitions_raw, dict) or not transitions_raw:
        raise fail("transitions", "must be a non-empty object of state -> {class: next state}")
    if len(transitions_raw) > MAX_STATES:
        raise fail("transitions", f"{len(transitions_raw):,} states: the engine supports at most {MAX_STATES:,}")
    states = set(transitions_raw)
    transitions: dict[str, dict[str, str]] = {}
    for state, edges in transitions_raw.items():
        key = f"transitions.{_part(state)}"
        if not isinstance(state, str):
            raise fail(key, f"a state's name is a string, got {brief(state)}")
        if not isinstance(edges, dict):
            raise fail(key, "must be an object of class label -> next state")
        for label, target in edges.items():
            if label != OTHER and label not in classes:
                raise fail(f"{key}.{_part(label)}", f"unknown class {brief(label)} (defined: {', '.join(classes)}, or {OTHER!r})")
            if not isinstance(target, str) or target not in states:
                raise fail(f"{key}.{_part(label)}", f"unknown target state {brief(target)}; every state needs an entry in 'transitions' (use {{}} for none)")
        transitions[state] = dict(edges)
    start = data["start"]
    if not isinstance(start, str) or start not in states:
        raise fail("start", f"unknown state {brief(start)}")

    def names(key: str, known, what: str) -> tuple[str, ...]:
        """``data[key]``: a list of names, each in ``known`` (states or class labels): each a ``what``."""
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            raise fail(key, f"must be a list of {'classes' if what == 'class' else what + 's'}")
        for s in value:
            if s not in known:
                raise fail(key, f"unknown {what} {s!r}")
        return tuple(value)

    accept_states = frozenset(names("accept_states", states, "state"))
    emit_states = frozenset(names("emit_states", states, "state"))
    if start in accept_states:
        raise fail("accept_states", f"the start state {start!r} must not accept (it would accept the empty string)")
    if not emit_states <= accept_states:
        bad = sorted(emit_states - accept_states)
        raise fail("emit_states", f"emit states must also be accept states: {bad}")
    loop = _loop_without_accepting(start, transitions, accept_states, emit_states)
    if loop:
        raise fail("accept_states", f"the states {' -> '.join(map(repr, loop))} loop without accepting: a "
                   "syllable would read ahead without bound and roll back, so syllabifying text that stays in "
                   "the loop takes time quadratic in its length; let a state of the loop accept, or end the loop")
    chain = _longest_read_ahead(start, transitions, accept_states, emit_states)
    if len(chain) > MAX_READ_AHEAD:
        raise fail("accept_states", f"{len(chain):,} states in a row do not accept ({chain[0]!r} ... {chain[-1]!r}): "
                   f"the engine reads up to that many characters past a syllable's last accept at each position "
                   f"and rolls back, time that many times the text's length; at most {MAX_READ_AHEAD} are "
                   "allowed: let states of the chain accept")

    blocks: list[Block] = []
    for key in ("blocks", "word_chars", "punctuation"):
        if not isinstance(data.get(key, []), list):
            raise fail(key, "must be a list")
    for i, block in enumerate(data.get("blocks", [])):
        key = f"blocks[{i}]"
        if not isinstance(block, dict) or not {"name", "first", "last"} <= set(block):
            raise fail(key, "a block is {'name', 'first', 'last'}")
        known_keys(block, BLOCK_KEYS, f"{key}.")
        first, last = codepoint(block["first"], key), codepoint(block["last"], key)
        if first > last:
            raise fail(key, "first is after last")
        if not isinstance(block["name"], str):
            raise fail(f"{key}.name", f"must be a string, got {brief(block['name'])}")
        extension = block.get("extension", False)
        if not isinstance(extension, bool):
            raise fail(key, f"'extension' must be true or false, got {brief(extension)}")
        blocks.append(Block(block["name"], first, last, extension))
    word_chars = frozenset(codepoint(c, f"word_chars[{i}]") for i, c in enumerate(data.get("word_chars", [])))
    punctuation = frozenset(codepoint(c, f"punctuation[{i}]") for i, c in enumerate(data.get("punctuation", [])))
    for key, cps in (("word_chars", word_chars), ("punctuation", punctuation)):
        surrogates = sorted(cp for cp in cps if _SURROGATES[0] <= cp <= _SURROGATES[1])
        if surrogates:
            raise fail(key, f"U+{surrogates[0]:04X} is a surrogate code point, not a character")
        spaces = sorted(cps & _SPACES)
        if spaces:  # whitespace separates words; it is no word's character
            raise fail(key, f"U+{spaces[0]:04X} is whitespace, which separates words")
    for cp in sorted(punctuation):
        if not any(b.first <= cp <= b.last for b in blocks) and cp not in word_chars:
            raise fail("punctuation", f"U+{cp:04X} is not a character of the script's blocks or word_chars")
    if punctuation:
        import regex  # (the Unicode database of regex, newer than Python's unicodedata)

        other = [cp for cp in sorted(punctuation) if not regex.match(r"\p{Po}", chr(cp))]
        if other:
            raise fail("punctuation", f"U+{other[0]:04X} is not punctuation (General_Category Po), which a "
                       "vocabulary trained with split_punctuation would cut words at")

    word_classes = names("word_classes", classes, "class")
    attach_classes = names("attach_classes", classes, "class")

    keep_clusters = data.get("keep_clusters", True)
    if not isinstance(keep_clusters, bool):
        raise fail("keep_clusters", f"must be true or false, got {brief(keep_clusters)}")

    grammar = data.get("grammar")
    if grammar is not None and not isinstance(grammar, str):
        raise fail("grammar", "must be a string in the notation of docs/schemas.md")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise fail("description", f"must be a string, got {brief(description)}")

    schema = Schema(
        name=name,
        path=source,
        description=description,
        blocks=tuple(blocks),
        word_chars=word_chars,
        classes=classes,
        class_names=class_names,
        grammar=grammar,
        start=start,
        transitions=transitions,
        accept_states=accept_states,
        emit_states=emit_states,
        class_of=class_of,
        word_classes=word_classes,
        attach_classes=attach_classes,
        keep_clusters=keep_clusters,
        listed=frozenset(listed),
        punctuation=punctuation,
    )
    if grammar is not None and check_grammar:
        grammar_regex(schema, exclude=" ")  # validate the notation now, with the file name
        refuse_backtracking(grammar, source=f"{source}")  # and one a backtracking engine would choke on
    return schema


def _loop_without_accepting(start: str, transitions: dict[str, dict[str, str]], accept: frozenset[str],
                            emit: frozenset[str]) -> list[str]:
    """A cycle of states that do not accept, reachable from ``start`` (an emit state ends a syllable,
    so nothing is reached through one), as the states around it with the first repeated; [] if none.

    The engine reads as far as the automaton goes and rolls back to the last accept. Without such a
    cycle it reads at most one state count past it, so the walk is linear; with one, text that keeps
    to the cycle is read to its end from each of its positions."""
    inside = _reached_without_accepting(start, transitions, accept, emit)
    done: set[str] = set()
    for root in inside:  # a depth-first walk without recursion (up to MAX_STATES states)
        if root in done:
            continue
        path, on_path = [root], {root}
        edges = [iter(transitions[root].values())]
        while path:
            target = next(edges[-1], None)
            if target is None:
                finished = path.pop()
                edges.pop()
                on_path.discard(finished)
                done.add(finished)
                continue
            if target not in inside or target in done:
                continue
            if target in on_path:
                return path[path.index(target):] + [target]
            path.append(target)
            on_path.add(target)
            edges.append(iter(transitions[target].values()))
    return []


def _longest_read_ahead(start: str, transitions: dict[str, dict[str, str]], accept: frozenset[str],
                        emit: frozenset[str]) -> list[str]:
    """The longest path of states that do not accept, reachable from ``start`` (no loop of them: see
    :func:`_loop_without_accepting`): the most characters the engine reads past a last accept."""
    inside = _reached_without_accepting(start, transitions, accept, emit)
    longest: dict[str, list[str]] = {}  # state -> the longest path from it (itself first)
    for root in inside:  # depth first without recursion: states finish after all they lead to
        stack = [root]
        while stack:
            state = stack[-1]
            if state in longest:
                stack.pop()
                continue
            later = [t for t in transitions[state].values() if t in inside and t not in longest]
            if later:
                stack.extend(later)
                continue
            stack.pop()
            after = max((longest[t] for t in transitions[state].values() if t in inside), key=len, default=[])
            longest[state] = [state, *after]
    return max(longest.values(), key=len, default=[])


def _reached_without_accepting(start: str, transitions: dict[str, dict[str, str]], accept: frozenset[str],
                               emit: frozenset[str]) -> set[str]:
    """The states reachable from ``start`` that do not accept (an emit state ends a syllable, so
    nothing is reached through one)."""
    reached, waiting = {start}, [start]
    while waiting:
        state = waiting.pop()
        if state in emit:
            continue
        for target in transitions[state].values():
            if target not in reached:
                reached.add(target)
                waiting.append(target)
    return {q for q in reached if q not in accept}
