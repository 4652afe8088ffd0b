"""What an SGPE vocabulary covers of its scripts beyond the training text, and the check that the
corpus is in them.

* :func:`scripts_present`: the scripts of a multi-script mode the training text has (a stray word
  of one is not enough: :data:`MIN_SCRIPT_SHARE`);
* :func:`schema_characters`: every character their schemas list, which automatic pruning keeps
  (``script_characters``) while they take at most :data:`MAX_SCRIPT_CHARACTERS_SHARE` of the
  vocabulary (:func:`smallest_taking` names the size from which they fit);
* :func:`add_unseen_syllables`: syllables the training text lacks (:mod:`wwho.sgpe.completion`)
  added to the support tokens, with their building merges, in the ids left;
* :func:`check_script`: the warning when most of the corpus is in another script.

It does not decide how many ids are left (the phases, :mod:`wwho.sgpe.phases`, do), propose the
unseen syllables (:mod:`wwho.sgpe.completion` does) or count letters by script
(:mod:`wwho.scriptcheck` does).
"""

from __future__ import annotations

import math
from collections import Counter

from wwho.router import script_sets
from wwho.schema import bundled_schema
from wwho.schema_types import OTHER
from wwho.scriptcheck import block_letter_count, letter_count, letters_by_script, warn_if_other_script
from wwho.sgpe.building import building_merges
from wwho.sgpe.completion import unseen_syllables

#: ``script_characters`` adds the schema's unseen characters only while they take at most this
#: share of the vocabulary (a tiny vocabulary is better spent on merges).
MAX_SCRIPT_CHARACTERS_SHARE = 0.05
#: In a multi-script mode, a script gets its schema's characters when at least this share of the
#: syllables that start with a letter are its own (a stray word is not enough).
MIN_SCRIPT_SHARE = 0.001


def smallest_taking(characters: int) -> int:
    """The smallest ``vocab_size`` that takes ``characters`` of the script the training text lacks
    (those may take at most :data:`MAX_SCRIPT_CHARACTERS_SHARE` of it)."""
    size = math.ceil(characters / MAX_SCRIPT_CHARACTERS_SHARE)
    while characters > size * MAX_SCRIPT_CHARACTERS_SHARE:  # (the float division's rounding)
        size += 1
    while size > 1 and characters <= (size - 1) * MAX_SCRIPT_CHARACTERS_SHARE:
        size -= 1
    return size


def add_unseen_syllables(build, support, symbols, index, characters, syllable_freq, splitter, *, spare: int, say):
    """``(build, support)`` with the best unseen syllables (:mod:`wwho.sgpe.completion`) added to
    the support tokens, and their building merges, in at most ``spare`` more ids."""
    if spare <= 0:
        return build, support
    scripts = scripts_present(splitter.scripts, syllable_freq)
    letters = schema_characters(scripts)
    bare: Counter[str] = Counter()
    for syllable, n in syllable_freq.items():
        bare[syllable.lstrip(" ")] += n
    schemas = [(name, bundled_schema(name)) for name in scripts]

    def letter_class(c: str) -> object:
        return next(((name, label) for name, schema in schemas if (label := schema.classify(c)) != OTHER), c)

    candidates = unseen_syllables(bare, in_script=lambda s: all(c in letters for c in s),
                                  is_syllable=lambda s: splitter.syllables(s) == [s], limit=spare,
                                  letter_class=letter_class)
    known = set(index) | set(support)
    candidates = [c for c in candidates if c not in known]
    # Each candidate takes its own id and any building piece it needs: fewer candidates until
    # they fit (the pieces are shared, so a prefix of the list needs no more than all of it).
    while candidates:
        new_build, pieces = building_merges([*symbols, *candidates])
        new_support = sorted((set(pieces) | characters | set(candidates)) - set(index), key=lambda t: (len(t), t))
        over = len(new_support) - len(support) - spare
        if over <= 0:
            say(f"completed {len(candidates):,} syllables the training text lacks "
                f"({len(new_support) - len(support):,} ids)")
            return new_build, new_support
        candidates = candidates[: len(candidates) - over]
    return build, support


def schema_characters(scripts: tuple[str, ...]) -> set[str]:
    """Every character the schemas of ``scripts`` list in their ``char_classes`` (not those a
    Unicode property adds, such as other scripts' marks), but those of a block the schema marks
    ``extension`` (Devanagari's Vedic and Extended blocks): a text of another domain than the
    training text has letters and dandas the training text lacks, not those, and each would take an
    id from the last merges."""
    return {chr(cp) for name in scripts for cp in bundled_schema(name).common_listed() if not 0xD800 <= cp < 0xE000}


def scripts_present(scripts: tuple[str, ...], syllable_freq: dict[str, int]) -> tuple[str, ...]:
    """The ``scripts`` whose own blocks (where the router starts their runs) start at least
    :data:`MIN_SCRIPT_SHARE` of the syllables that start with a letter or a mark (a danda, which
    several scripts share, is no letter)."""
    if len(scripts) == 1:
        return scripts if syllable_freq else ()
    blocks = [(name, script_sets(name)[0]) for name in scripts]
    counts = dict.fromkeys(scripts, 0)
    for syllable, n in syllable_freq.items():
        first = syllable.lstrip(" ")[:1]
        if first and letter_count(first):
            name = next((name for name, block in blocks if ord(first) in block), None)
            if name is not None:
                counts[name] += n
    total = sum(counts.values())
    return tuple(name for name in scripts if counts[name] and counts[name] >= MIN_SCRIPT_SHARE * total)


def check_script(scripts: tuple[str, ...], boundary: dict[str, int], syllables: dict[str, int], *,
                 mode: str | None = None) -> None:
    """Warn when most of the corpus is not in the chosen script(s): its text then becomes boundary
    tokens and bytes, and no syllable-aware merges are learned for it (see :mod:`wwho.scriptcheck`).
    ``boundary``: every boundary token's occurrences, lone or inside a span."""
    # A syllable holds letters of the chosen scripts, or a cluster of another script kept whole (every
    # bundled schema but Sinhala's keeps them): only the letters in the chosen scripts' blocks count.
    own = sum(block_letter_count(s, scripts) * n for s, n in syllables.items())
    total = sum(letter_count(s) * n for s, n in syllables.items()) + sum(letter_count(t) * n
                                                                         for t, n in boundary.items())
    if 2 * own >= total:
        # Half of all letters at least are the chosen scripts': no warning, and no need for the
        # router of every script (each is costly to build).
        return
    letters = letters_by_script(boundary.items())
    letters.update(letters_by_script(syllables.items()))
    warn_if_other_script(letters, scripts, what="the corpus", option="--script / script=", mode=mode)
