"""What an extension learns from its corpus: characters, syllables, then merges of whole tokens.

1. **words**: the corpus is cut into script words with the same regex the extended pre-tokenizer
   uses first (:meth:`wwho.extend.scripts.ScriptSet.word_source`), counted by the compiled core on
   threads (:func:`wwho.extend.extension.count_words`); each *distinct* word is syllabified once by its script's
   schema. A word is its leading space (the base token for ``" "``, if the word has one) followed by
   its syllables, as units.
2. **characters**: every buildable character (:mod:`wwho.extend.scripts`) that occurs at least
   ``min_syllable_freq`` times is built from its bytes; so is every *cluster* (a buildable character
   and the non-buildable ones after it, such as HAL + ZWJ) of the candidate syllables, or where
   they do not all fit in ``add``, the most frequent that do.
3. **syllables**: syllables seen at least ``min_syllable_freq`` times whose first character is
   buildable are built most frequent first, while characters, clusters and syllables together use
   at most ``syllable_share`` of the ``add`` new tokens. These are the syllables the extension
   *knows*: encoding never puts a token boundary inside one.
4. **merges**: the shared merge engine (:class:`wwho.bpe.MergeEngine`) learns merges over the units
   (a syllable it does not know is the engine's ``UNK``: never merged), most frequent pair first,
   ties to the smaller byte pair, while the pair occurs at least ``min_freq`` times, until the
   extension has ``add`` new tokens. A merge whose result is already a token costs nothing.

Token counts are exact: ``add`` counts every new id (intermediate pieces included).
This module does not write files or check the result (:mod:`wwho.extend.verify`).
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass

from wwho.bpe import UNK, MergeEngine
from wwho.errors import VocabError
from wwho.extend.building import NewMerges, clusters
from wwho.extend.scripts import ScriptSet
from wwho.progress import progress_bar


@dataclass
class LearnStats:
    """What was learned, for the report and ``wwho_extend.json``."""

    distinct_words: int = 0
    word_occurrences: int = 0
    distinct_syllables: int = 0
    syllable_occurrences: int = 0
    char_tokens: int = 0
    cluster_tokens: int = 0
    known_syllables: int = 0
    known_syllable_occurrences: int = 0
    syllable_tokens: int = 0
    unbuildable_syllables: int = 0
    learned_merges: int = 0
    learned_tokens: int = 0
    last_merge_freq: int | None = None
    syllable_value_floor: int | None = None

    @property
    def known_share(self) -> float:
        """Share of syllable occurrences in the corpus that are known syllables."""
        return (
            self.known_syllable_occurrences / self.syllable_occurrences if self.syllable_occurrences else 0.0
        )


def split_words(
    words: Counter[str], scripts: ScriptSet, *, progress: bool = True
) -> tuple[list[tuple[bool, tuple[str, ...]]], list[int], Counter[str]]:
    """``(words as (has_space, syllables), their counts, syllable counts)`` of counted script words."""
    out: list[tuple[bool, tuple[str, ...]]] = []
    counts: list[int] = []
    syllables: Counter[str] = Counter()
    for word, n in progress_bar(sorted(words.items()), desc="syllables", unit="word", disable=not progress):
        syls = tuple(scripts.syllables(word))
        out.append((word[0] == " ", syls))
        counts.append(n)
        for s in syls:
            syllables[s] += n
    return out, counts, syllables


def learn(
    words: Counter[str],
    scripts: ScriptSet,
    merges: NewMerges,
    *,
    add: int,
    min_syllable_freq: int | None = None,
    syllable_share: float = 0.5,
    min_freq: int = 2,
    progress: bool = True,
) -> tuple[list[str], LearnStats]:
    """Fill ``merges`` with up to ``add`` new tokens; returns the known syllables and statistics."""
    stats = LearnStats(distinct_words=len(words), word_occurrences=sum(words.values()))
    split, counts, syllables = split_words(words, scripts, progress=progress)
    stats.distinct_syllables = len(syllables)
    stats.syllable_occurrences = sum(syllables.values())

    # 1. characters
    chars: Counter[str] = Counter()
    for syl, n in syllables.items():
        for ch in syl:
            chars[ch] += n
    for ch in sorted(c for c, n in chars.items() if n >= (min_syllable_freq or 2) and scripts.buildable(c)):
        stats.char_tokens += merges.build(ch.encode("utf-8")) or 0  # (one character joins no syllables)
    if len(merges) > add:
        raise VocabError(
            f"--add {add} is too small: the {len(merges)} characters of {scripts.label} in the corpus "
            f"that the base lacks need {len(merges)} new tokens by themselves"
        )

    # 2. clusters of the candidate syllables
    candidates = sorted(
        (s for s, n in syllables.items() if n >= (min_syllable_freq or 2)),
        key=lambda s: (-syllables[s], s),
    )
    buildable = [s for s in candidates if scripts.buildable(s[0])]
    stats.unbuildable_syllables = len(candidates) - len(buildable)
    merges.guard(buildable)  # the syllables that may be known: no merge below may cut one
    _build_clusters(buildable, syllables, scripts, merges, add=add, stats=stats)

    # 3. syllables, within the share of the budget
    cap = min(add, int(add * syllable_share))
    if cap <= len(merges):
        # The characters and clusters take the whole share already (a small --add): the share is of
        # what they leave, else no syllable would be known, no merge possible, and the rest of the
        # budget lost.
        cap = len(merges) + int((add - len(merges)) * syllable_share)
    if min_syllable_freq is None:
        # Auto: a first pass with every candidate (most frequent first) tells how often the last
        # learned merge occurs (F); then a syllable is worth a token if it saves at least F.
        mark = merges.mark()
        trial = LearnStats()
        # Its bars say so: the same bars run again for the pass that is kept.
        first = _admit(buildable, syllables, merges, cap=cap, worth=None, stats=trial, progress=progress,
                       label=TRIAL_LABEL)
        _learn_merges(
            split, counts, first, merges, add=add, min_freq=min_freq, stats=trial, progress=progress,
            label=TRIAL_LABEL,
        )
        merges.rollback(mark)
        worth = trial.last_merge_freq or min_freq
        stats.syllable_value_floor = worth
    else:
        worth = None
    label = FINAL_LABEL if min_syllable_freq is None else ""
    known = _admit(buildable, syllables, merges, cap=cap, worth=worth, stats=stats, progress=progress, label=label)
    stats.known_syllables = len(known)
    stats.known_syllable_occurrences = sum(syllables[s] for s in known)
    for syl in known:  # the argument of building.py, checked
        if merges.apply(syl.encode("utf-8")) != [syl.encode("utf-8")]:
            raise AssertionError(f"the building merges do not rebuild the syllable {syl!r}")

    # 4. merges of whole units
    _learn_merges(split, counts, known, merges, add=add, min_freq=min_freq, stats=stats, progress=progress,
                  label=label)
    if not merges:  # an extension equal to its base, reported as done, is no result
        given = min_syllable_freq is not None
        raise VocabError(f"no new token for {scripts.label}: no character of it that the base lacks, nor any "
                         f"syllable, occurs {min_syllable_freq or 2:,} times or more in the corpus"
                         + (" (--min-syllable-freq)" if given else "")
                         + ". Give more text" + (", or a lower --min-syllable-freq" if given else ""))
    if len(merges) < add:
        floor = f"seen {min_syllable_freq:,} times or more (--min-syllable-freq)" if min_syllable_freq else "worth a token"
        print(f"wwho: warning: the corpus supports only {len(merges):,} new tokens of the {add:,} asked: "
              f"{len(known):,} syllables of {scripts.label} are {floor}, within --syllable-share {syllable_share:g} "
              f"of the budget, and no pair of units occurs {min_freq:,} times (--min-freq) any more", file=sys.stderr)
    return known, stats


def _build_clusters(
    candidates: list[str], syllables: Counter[str], scripts: ScriptSet, merges: NewMerges, *, add: int,
    stats: LearnStats,
) -> None:
    """Build the clusters of the candidate syllables; where they do not all fit in ``add`` (with the
    characters), the most frequent that do, and a warning: ``add`` counts every new id."""
    groups = {c for s in candidates for c in clusters(s, scripts) if len(c) > 1 and scripts.buildable(c[0])}
    mark = merges.mark()
    for c in sorted(groups, key=lambda c: (len(c), c)):
        # None: not built, as its merges would join syllables elsewhere; its syllables are not either.
        stats.cluster_tokens += merges.build(c.encode("utf-8")) or 0
    if len(merges) <= add:
        return
    needed, chars = len(merges), mark[1]
    merges.rollback(mark)
    stats.cluster_tokens = 0
    freq: Counter[str] = Counter()
    for s in candidates:
        for c in set(clusters(s, scripts)) & groups:
            freq[c] += syllables[s]
    for c in sorted(groups, key=lambda c: (-freq[c], len(c), c)):
        step = merges.mark()
        cost = merges.build(c.encode("utf-8")) or 0
        if len(merges) > add:
            merges.rollback(step)  # a cheaper one may still fit
        else:
            stats.cluster_tokens += cost
    print(f"wwho: warning: --add {add:,} is too small for {scripts.label}: its {chars:,} characters the base lacks "
          f"and the clusters of its syllables (a letter with a joiner or marks) need {needed:,} new tokens; "
          f"the most frequent clusters that fit are built (--add {needed:,} builds them all), and few "
          "syllables if any can be known", file=sys.stderr)


#: Bar labels of the two passes of ``min_syllable_freq=None`` (auto): a trial pass that measures the
#: value of a merge, rolled back, then the pass that is kept.
TRIAL_LABEL = "pass 1/2 (trial, to price a syllable): "
FINAL_LABEL = "pass 2/2 (kept): "


def _admit(
    candidates: list[str],
    syllables: Counter[str],
    merges: NewMerges,
    *,
    cap: int,
    worth: int | None,
    stats: LearnStats,
    progress: bool,
    label: str = "",
) -> list[str]:
    """Build syllables in order while the new tokens stay within ``cap``; with ``worth``, only those
    whose occurrences times the tokens each saves (its pieces without it, minus one) reach ``worth``
    per new token they cost."""
    known: list[str] = []
    for syl in progress_bar(candidates, desc=f"{label}building syllables", unit="syllable", disable=not progress):
        data = syl.encode("utf-8")
        saved = len(merges.apply(data)) - 1
        mark = merges.mark()
        cost = merges.build(data)
        if cost is None:  # its merges would join syllables elsewhere (NewMerges.build): not known
            continue
        if len(merges) > cap:
            merges.rollback(mark)
            break
        if worth is not None and cost and syllables[syl] * saved < worth * cost:
            merges.rollback(mark)
            continue
        stats.syllable_tokens += cost
        known.append(syl)
    return known


def _learn_merges(
    split, counts, known, merges: NewMerges, *, add, min_freq, stats: LearnStats, progress, label: str = ""
) -> None:
    symbols: list[bytes] = [b" "] + [s.encode("utf-8") for s in known]
    index = {s: i for i, s in enumerate(known, start=1)}
    words: list[list[int]] = []
    word_counts: list[int] = []
    for (space, syls), n in zip(split, counts, strict=True):
        units = [0] if space else []
        units += [index.get(s, UNK) for s in syls]
        if len(units) > 1:
            words.append(units)
            word_counts.append(n)
    engine = MergeEngine(words, word_counts, symbols, tie_break="smaller")
    with progress_bar(total=max(add - len(merges), 0), desc=f"{label}merges", unit="token", disable=not progress) as bar:
        while len(merges) < add:
            step = engine.step(min_freq=min_freq)
            if step is None:
                break
            a, b, _, freq = step
            cost = merges.add(engine.symbols[a], engine.symbols[b])
            stats.learned_merges += 1
            stats.learned_tokens += cost
            stats.last_merge_freq = freq
            bar.update(cost)
