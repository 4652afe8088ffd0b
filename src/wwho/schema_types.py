"""The types of a validated script schema: :class:`Schema` with the character sets derived from it,
:class:`Block` (one of the script's Unicode blocks) and :data:`OTHER`, the class label of every
character that no class lists.

It deliberately does not read or check schema files (:mod:`wwho.schema` builds a :class:`Schema`
only from a file that passes its checks) and does not compile the grammar (:mod:`wwho.grammar`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Class label of every code point that no class lists.
OTHER = "O"


@dataclass(frozen=True)
class Block:
    name: str
    first: int
    last: int
    #: An extension block (Vedic accents, letters of historic or minority orthographies): its
    #: characters get a token of their own in training only where the training text has them.
    extension: bool = False


@dataclass(frozen=True)
class Schema:
    """A validated script schema. Build one with :func:`wwho.schema.load_schema`."""

    name: str
    path: str
    description: str
    blocks: tuple[Block, ...]
    word_chars: frozenset[int]
    classes: dict[str, frozenset[int]]
    class_names: dict[str, str]
    grammar: str | None
    start: str
    transitions: dict[str, dict[str, str]]
    accept_states: frozenset[str]
    emit_states: frozenset[str]
    class_of: dict[int, str] = field(repr=False)
    word_classes: tuple[str, ...] = ()
    attach_classes: tuple[str, ...] = ()
    #: No token ends inside an extended grapheme cluster (UAX #29): see :mod:`wwho.graphemes`.
    keep_clusters: bool = True
    #: The characters the classes list by code point (not those a Unicode property adds): the
    #: script's own alphabet, as its schema spells it out.
    listed: frozenset[int] = frozenset()
    #: The script's own punctuation (the dandas): word characters unless a vocabulary is trained
    #: with ``split_punctuation``, which makes them end a word as Latin punctuation does.
    punctuation: frozenset[int] = frozenset()

    def __hash__(self) -> int:
        # Its tables are dicts, which the dataclass's own hash could not take: a hash of fields that
        # equal schemas share (equal schemas hash alike, as a frozen dataclass promises).
        return hash((self.name, self.start, self.grammar, self.accept_states, len(self.transitions)))

    def classify(self, ch: str) -> str:
        """The class label of one character (``"O"`` when no class lists it)."""
        return self.class_of.get(ord(ch), OTHER)

    def common_listed(self) -> frozenset[int]:
        """The :attr:`listed` characters outside the blocks marked ``extension``: those SGPE
        training's ``script_characters`` gives a token even where the training text lacks them."""
        rare = [(b.first, b.last) for b in self.blocks if b.extension]
        return frozenset(cp for cp in self.listed if not any(first <= cp <= last for first, last in rare))

    def script_chars(self) -> list[tuple[int, int]]:
        """Code point ranges that belong to this script for word grouping and routing."""
        ranges = [(b.first, b.last) for b in self.blocks]
        ranges += [(cp, cp) for cp in sorted(self.word_chars)]
        return ranges

    def script_codepoints(self) -> frozenset[int]:
        cps: set[int] = set()
        for first, last in self.script_chars():
            cps.update(range(first, last + 1))
        return frozenset(cps)

    def word_codepoints(self) -> frozenset[int]:
        """Characters outside the script that still belong to its words (``word_classes``)."""
        return frozenset().union(*(self.classes[c] for c in self.word_classes)) - self.script_codepoints()

    def attach_codepoints(self) -> frozenset[int]:
        """Marks that stay with the character before them, whatever it is (``attach_classes``)."""
        return frozenset().union(*(self.classes[c] for c in self.attach_classes))

