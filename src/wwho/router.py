"""The code-switch router: split mixed text into runs of one script each.

``segment(text)`` returns :class:`TextSegment` runs. A run of an Indic script starts
with a character of one of that script's Unicode blocks (from its schema) and goes on
through characters of those blocks, ZWJ/ZWNJ (which therefore never leave an Indic
run) and the dandas U+0964/U+0965 (shared sentence punctuation, so a Sinhala sentence
ending in a danda stays one run), and the characters the schema's ``word_classes`` and
``attach_classes`` keep inside its words (for Devanagari: combining marks of any script
and other Brahmic scripts' consonants and viramas; a multi-script SGPE mode's words stop at those
consonants: ``foreign_letters=False``). Everything else — Latin, digits, punctuation, code,
emoji, and scripts without a schema — is :attr:`Script.LATIN`.

The space before an Indic run is moved out of the preceding Latin run into that run's
``has_leading_space`` (a Latin run made only of that space disappears), which is the
leading-space convention of the syllable layer. :func:`join_segments` restores the
text exactly.

The :class:`Script` enum has ``LATIN`` plus one member per bundled schema, so a new
schema file adds a script here without code changes. :func:`segment` runs in the compiled
core (``wwho._core.Router``, built from the same character sets as :func:`run_pattern`, the
regex form kept for callers that want a pattern). The router does not tokenize.
"""

from __future__ import annotations

import enum
import functools
import re
import unicodedata
from dataclasses import dataclass

from wwho import _core
from wwho.codepoints import char_class, code_point_ranges
from wwho.errors import TokenizerError, WrongTypeError
from wwho.schema import available_scripts, bundled_schema

#: Characters that continue an Indic run of any script.
JOINERS = "\u200c\u200d"
SHARED_PUNCTUATION = "\u0964\u0965"

Script = enum.Enum(  # type: ignore[misc]
    "Script",
    [("LATIN", "latin")] + [(name.upper(), name) for name in available_scripts()],
    type=str,
    module=__name__,
)
Script.__doc__ = "The script of a segment: LATIN (everything no schema claims) or a bundled Indic script."


@dataclass(frozen=True)
class TextSegment:
    """A run of one script. ``has_leading_space``: a space preceded it in the input."""

    text: str
    script: Script
    has_leading_space: bool = False

    @property
    def is_indic(self) -> bool:
        return self.script is not Script.LATIN


def script_sets(name: str, *, foreign_letters: bool = True) -> tuple[frozenset[int], frozenset[int]]:
    """``(blocks, continuation)`` of a bundled script: where its runs start, and go on.
    ``foreign_letters=False``: not through other scripts' letters (see :func:`core_router`)."""
    schema = bundled_schema(name)
    block: set[int] = set()
    for first, last in ((b.first, b.last) for b in schema.blocks):
        block.update(range(first, last + 1))
    # A run also goes on through the characters the schema keeps inside its words
    # (e.g. Devanagari: combining marks of any script, other scripts' conjuncts).
    more = {ord(c) for c in JOINERS + SHARED_PUNCTUATION} | schema.attach_codepoints()
    words = schema.word_codepoints()
    # (without the letters: their signs, viramas included, still go on with the run, as the marks do)
    more |= words if foreign_letters else {cp for cp in words if unicodedata.category(chr(cp))[0] == "M"}
    return frozenset(block), frozenset(block | more)


#: Routers (and patterns) kept, one per tuple of scripts in their order of priority. A caller
#: naming many different tuples cannot grow the caches past this many entries, and repeats of a
#: name are dropped before the lookup (the first one counts), so an entry is at most one router
#: of every bundled script.
ROUTERS_KEPT = 16


def _unique(scripts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(scripts))


def run_pattern(scripts: tuple[str, ...], *, foreign_letters: bool = True) -> re.Pattern[str]:
    """The regex whose matches are the Indic runs of a text; the group name is the script
    (``foreign_letters``: as for :func:`core_router`)."""
    return _run_pattern(_unique(scripts), foreign_letters)


@functools.lru_cache(maxsize=ROUTERS_KEPT)
def _run_pattern(scripts: tuple[str, ...], foreign_letters: bool = True) -> re.Pattern[str]:
    groups = []
    for name in scripts:
        block, cont = script_sets(name, foreign_letters=foreign_letters)
        groups.append(f"(?P<{name}>{char_class(block)}{char_class(cont)}*)")
    return re.compile("|".join(groups))


def core_router(scripts: tuple[str, ...], *, foreign_letters: bool = True) -> _core.Router:
    """The compiled router for these scripts (first one wins where blocks overlap).

    ``foreign_letters=False`` (the words of a multi-script SGPE mode): a run does not go on through
    the letters of scripts outside its own blocks that its schema keeps in its words (Devanagari's
    other Brahmic consonants), so that such a letter is cut the same after a run as anywhere else
    (Telugu in ``mixed`` mode: ``कని`` is ``क``, ``న``, ``ి``, as ``aని`` is ``a``, ``న``, ``ి``),
    which merges over characters, the Hugging Face export's, can reproduce."""
    return _core_router(_unique(scripts), foreign_letters)


@functools.lru_cache(maxsize=ROUTERS_KEPT)
def _core_router(scripts: tuple[str, ...], foreign_letters: bool = True) -> _core.Router:
    return _core.Router([tuple(map(code_point_ranges, script_sets(name, foreign_letters=foreign_letters)))
                         for name in scripts])


def segment(text: str, *, scripts: tuple[str, ...] | None = None) -> list[TextSegment]:
    """Split ``text`` into script runs; see the module docstring for the rules."""
    if not isinstance(text, str):
        raise WrongTypeError(f"expected text as str, got {type(text).__name__}")
    names = tuple(available_scripts()) if scripts is None else _script_names(scripts)
    unknown = [name for name in names if not isinstance(name, str) or name not in Script._value2member_map_]
    if unknown:
        raise TokenizerError(f"unknown script {unknown[0]!r}; choose from {', '.join(available_scripts())}")
    names = _unique(names)
    kinds = [Script(name) for name in names]
    return [TextSegment(text[start:end], Script.LATIN if k < 0 else kinds[k], leading)
            for start, end, k, leading in core_router(names).segment(text)]


def _script_names(scripts: object) -> tuple:
    """``scripts`` as a tuple of names. One name as a bare str is refused: its characters would
    each be taken as a script (``'sinhala'``: "unknown script 's'")."""
    if isinstance(scripts, str):
        raise TokenizerError(f"scripts must be a collection of script names, not the single str {scripts!r}: "
                             f"scripts=({scripts!r},)")
    try:
        return tuple(scripts)  # type: ignore[call-overload]
    except TypeError:
        raise TokenizerError(f"scripts must be a collection of script names, not "
                             f"{type(scripts).__name__}") from None


def join_segments(segments: list[TextSegment]) -> str:
    """The inverse of :func:`segment`: restores the moved spaces."""
    if isinstance(segments, (str, bytes)) or not hasattr(segments, "__iter__"):
        raise WrongTypeError(f"join_segments takes the list segment() gives, not {type(segments).__name__}")
    parts = []
    for s in segments:
        if not isinstance(s, TextSegment):
            raise WrongTypeError(f"join_segments takes TextSegments (what segment() gives), not {type(s).__name__}")
        parts.append((" " + s.text) if s.has_leading_space else s.text)
    return "".join(parts)
