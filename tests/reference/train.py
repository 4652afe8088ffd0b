"""SGPE training in pure Python: the oracle the compiled core's trainer is compared with.

Counting by regex (``PIECES``, or superword ``SPANS`` whose piece counts follow), words by the
reference splitter grouped into the merge scope's spans, the automatic pruning threshold
(:func:`wwho.sgpe.budget.auto_prune_freq` over the reference engine), the reference merge engine
for the word-level and the superword merges, and the vocabulary in the same order as
:func:`wwho.sgpe.train.train_sgpe`. Plain-text lines only, no checkpoints: a differential
reference for the tests (``tests/test_sgpe_train_reference.py``), small corpora only.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections import Counter
from pathlib import Path

import regex

import wwho
from reference.building import building_merges
from reference.engine import MergeEngine
from reference.words import WordSplitter
from wwho.schema import bundled_schema
from wwho.schema_types import OTHER
from wwho.sgpe.budget import auto_prune_freq, base_symbols
from wwho.sgpe.completion import unseen_syllables
from wwho.sgpe.scopes import group_spans, reserved_pattern
from wwho.sgpe.superwords import (
    MAX_ENDING_PAIRS,
    MAX_ENDING_UNITS,
    MAX_SUPERWORD_WORDS,
    SPANS,
    SUPERWORD_MIN_FREQ,
    piece_counts,
)
from wwho.sgpe.vocabfile import BYTE_TOKENS, SPECIAL_TOKENS, VocabFile
from wwho.sgpe.words import PIECES

#: The longest word ending completed (the core's `training::MAX_ENDING`): all the suffixes of a run of
#: thousands of letters would be quadratic in its length.
MAX_ENDING = 32


@functools.cache
def _splitter(script: str, split_punctuation: bool) -> WordSplitter:
    """One reference splitter a mode, its answers kept (they are only read): the tests train many
    times on one corpus, and splitting its pieces again each time was most of the reference's time."""
    splitter = WordSplitter(script, split_punctuation=split_punctuation)
    splitter.split = functools.lru_cache(maxsize=1 << 16)(splitter.split)
    splitter.syllables = functools.lru_cache(maxsize=1 << 16)(splitter.syllables)
    return splitter


def train(lines: list[str], *, vocab_size: int, script: str = "sinhala", min_freq: int = 1,
          prune_freq: int | str = "auto", merge_scope: str = "pieces", prefix_space: bool = False,
          superword_share: float = 0.15, superword_letters: bool = True, script_characters: bool = True,
          bare_syllables: bool = True, split_punctuation: bool = False,
          complete_syllables: bool = True, complete_words: bool = True, complete_endings: bool = True,
          complete_superwords: bool = True, special_tokens: tuple[str, ...] = SPECIAL_TOKENS) -> VocabFile:
    splitter = _splitter(script, split_punctuation)
    documents = [line for line in lines if line]
    if prefix_space:
        documents = [" " + d for d in documents]
    spans = None
    if superword_share:
        spans = Counter(s for d in documents for s in re.findall(SPANS, d))
        pieces = piece_counts(spans)
    else:
        pieces = Counter(p for d in documents for p in PIECES.findall(d))

    guard = reserved_pattern((*special_tokens, *BYTE_TOKENS))

    def piece_spans(piece, parts=None):
        scope = "words" if merge_scope != "words" and guard.search(piece) else merge_scope
        return group_spans(splitter.split(piece) if parts is None else parts, scope)

    words: Counter = Counter()
    boundary: Counter = Counter()
    syllable_freq: Counter = Counter()
    boundary_symbols: set[str] = set()
    cores: Counter = Counter()  # the words of pieces that hold more than a word (scope "pieces")
    for piece, count in pieces.items():
        parts = splitter.split(piece)
        if merge_scope == "pieces" and not guard.search(piece) and len(parts) > 1:
            for is_word, tokens in parts:
                if is_word:
                    cores[tuple(tokens)] += count
        for mergeable, units in piece_spans(piece, parts):
            if mergeable:
                words[tuple(units)] += count
            else:
                boundary[units[0]] += count
        for is_word, tokens in parts:
            if is_word:
                for s in tokens:
                    syllable_freq[s] += count
            else:
                boundary_symbols.add(tokens[0])

    fixed = len(special_tokens) + len(BYTE_TOKENS)
    superword_ids = round(superword_share * vocab_size)
    auto = prune_freq == "auto"
    if auto:
        probe = base_symbols(words, syllable_freq, boundary_symbols, 1)
        engine = MergeEngine(probe.words, probe.counts, probe.symbols, tie_break="smaller")
        prune_freq = auto_prune_freq(engine, syllable_freq, boundary_symbols, min_freq=min_freq,
                                     ids=vocab_size - superword_ids - fixed, bare_syllables=bare_syllables)
    base = base_symbols(words, syllable_freq, boundary_symbols, prune_freq)
    symbols, index = base.symbols, base.index
    built = symbols
    if bare_syllables:  # a spaced syllable's bare form is built too, and a spaced boundary cluster's
        def bare(s: str) -> bool:
            if s[:1] != " " or len(s) < 2:
                return False
            return s not in boundary_symbols or (len(s) > 2 and len(regex.findall(r"\X", s[1:])) == 1)
        built = [*symbols, *sorted({s[1:] for s in symbols if bare(s)} - set(symbols))]
    build, pieces_needed = building_merges(built)
    characters = {c for s in syllable_freq for c in s} if auto else set()
    if auto and script_characters:
        listed = set()
        for name in _present(splitter.scripts, syllable_freq):
            listed |= {chr(cp) for cp in _listed(name) if not 0xD800 <= cp < 0xE000}
        extra = listed - characters - set(index) - set(pieces_needed)
        if len(extra) <= vocab_size * 0.05:  # at most a twentieth of the vocabulary
            characters |= extra
    support = sorted((set(pieces_needed) | characters) - set(index), key=lambda t: (len(t), t))
    max_symbols = vocab_size - superword_ids - fixed - len(support)
    engine = MergeEngine(base.words, base.counts, symbols, tie_break="smaller")
    engine.train(max_symbols=max(max_symbols, len(engine.symbols)), min_freq=min_freq, progress=False)

    final = engine
    if spans is not None:
        merged, _ = engine.words_and_counts()
        position = {w: i for i, w in enumerate(base.word_list)}
        cache: dict[str, list[int]] = {}

        def piece_tokens(piece: str) -> list[int]:
            if piece not in cache:
                out: list[int] = []
                for mergeable, units in piece_spans(piece):
                    out.extend(merged[position[tuple(units)]] if mergeable else [index[units[0]]])
                cache[piece] = out
            return cache[piece]

        span_words, span_counts = [], []
        for span, count in sorted(spans.items()):
            if guard.search(span):
                seq = [t for piece in PIECES.findall(span) for t in piece_tokens(piece)]
                span_words.extend([t] for t in seq)
                span_counts.extend([count] * len(seq))
                continue
            # With superword_letters, a piece without a letter starts a new part of the span.
            parts: list[list[int]] = []
            for piece in PIECES.findall(span):
                if not parts or (superword_letters and not regex.search(r"\p{Alphabetic}", piece)):
                    parts.append([])
                parts[-1].extend(piece_tokens(piece))
            for seq in parts:
                if seq:
                    span_words.append(seq)
                    span_counts.append(count)
        final = MergeEngine(span_words, span_counts, list(engine.symbols), tie_break="smaller")
        final.train(max_symbols=max(vocab_size - fixed - len(support), len(final.symbols)),
                    min_freq=SUPERWORD_MIN_FREQ, progress=False)

    spare = vocab_size - fixed - len(final.symbols) - len(support)
    core_merges: list = []
    core_tokens: list = []
    ids = {s: i for i, s in enumerate(engine.symbols)}
    core_words = [([ids[u] for u in w], n) for w, n in sorted(cores.items())
                  if len(w) > 1 and all(u in ids for u in w)]
    if complete_words and spare > 0 and core_words:
        # The words held only with punctuation: cut as the merges so far cut them, then BPE on.
        stage = MergeEngine([w for w, _ in core_words], [n for _, n in core_words], list(engine.symbols),
                            tie_break="smaller")
        applied = stage.apply(engine.merges)
        known = len(stage.symbols)
        stage.train(max_symbols=known + spare, min_freq=min_freq, progress=False)
        core_merges = [(stage.symbols[a], stage.symbols[b]) for a, b in stage.merges[applied:]]
        core_tokens = [t for t in stage.symbols[known:] if t not in set(final.symbols)]
        spare -= len(core_tokens)
    endings: Counter = Counter()  # each word's endings after its first unit, of two to MAX_ENDING units
    for word, count in words.items():
        for start in range(max(1, len(word) - MAX_ENDING), len(word) - 1):
            endings[word[start:]] += count
    ran_out = len(engine.symbols) < max(max_symbols, len(base.symbols))  # the word-level merges ran out of pairs
    if complete_endings and ran_out and spare > 0 and endings:
        symbols_now = list(engine.symbols)
        at = {s: i for i, s in enumerate(symbols_now)}
        for a, b in core_merges:
            if a + b not in at:
                at[a + b] = len(symbols_now)
                symbols_now.append(a + b)
        ending_words = [([at[u] for u in w], n) for w, n in sorted(endings.items()) if all(u in at for u in w)]
        if ending_words:
            stage = MergeEngine([w for w, _ in ending_words], [n for _, n in ending_words], symbols_now,
                                tie_break="smaller")
            applied = stage.apply([*engine.merges, *((at[a], at[b]) for a, b in core_merges)])
            known = len(stage.symbols)
            stage.train(max_symbols=known + spare, min_freq=max(min_freq, 2), progress=False)
            ending_tokens = [t for t in stage.symbols[known:] if t not in {*final.symbols, *core_tokens}]
            core_merges = core_merges + [(stage.symbols[a], stage.symbols[b]) for a, b in stage.merges[applied:]]
            core_tokens = core_tokens + ending_tokens
            spare -= len(ending_tokens)
    if auto and complete_syllables and spare > 0:
        # The syllables the text lacks (the candidates are :mod:`wwho.sgpe.completion`'s; which
        # of them fit, and their building merges, are worked out here again).
        letters = set()
        for name in _present(splitter.scripts, syllable_freq):
            letters |= {chr(cp) for cp in _listed(name) if not 0xD800 <= cp < 0xE000}
        bare: Counter[str] = Counter()
        for s, f in syllable_freq.items():
            bare[s.lstrip(" ")] += f
        schemas = [(name, bundled_schema(name)) for name in _present(splitter.scripts, syllable_freq)]

        def letter_class(c: str) -> object:
            for name, schema in schemas:
                if schema.classify(c) != OTHER:
                    return name, schema.classify(c)
            return c

        candidates = unseen_syllables(bare, in_script=lambda s: all(c in letters for c in s),
                                      is_syllable=lambda s: splitter.syllables(s) == [s], limit=spare,
                                      letter_class=letter_class)
        candidates = [c for c in candidates if c not in index and c not in support]
        while candidates:
            new_build, pieces = building_merges([*built, *candidates])
            new_support = sorted((set(pieces) | characters | set(candidates)) - set(index), key=lambda t: (len(t), t))
            over = len(new_support) - len(support) - spare
            if over <= 0:
                build, support = new_build, new_support
                break
            candidates = candidates[: len(candidates) - over]

    superword_merges = [(final.symbols[a], final.symbols[b]) for a, b in final.merges] if final is not engine else []
    superword_tokens: list[str] = []
    known = {*special_tokens, *final.symbols, *core_tokens, *support, *BYTE_TOKENS}
    if complete_superwords and final is not engine and vocab_size > len(known):
        # Superwords of a word's ending and the next word (or a superword starting with it), from
        # the spans' text: each pair of an ending token and the token after the space, counted;
        # and of an ending, or the whole word, and a token that begins the next word.
        pairs: Counter = Counter()
        for seq, count in zip(*final.words_and_counts()):
            if any(not 0 <= t < len(final.symbols) for t in seq):
                continue
            words = "".join(final.symbols[t] for t in seq).split(" ")
            for i in range(len(words) - 1):
                syllables = splitter.syllables(words[i]) if words[i] else []
                ends = range(max(1, len(syllables) - MAX_ENDING_UNITS), len(syllables))
                for j in range(i + 2, min(len(words), i + 1 + MAX_SUPERWORD_WORDS) + 1):
                    right = " " + " ".join(words[i + 1:j])
                    for k in ends:
                        if right in known and "".join(syllables[k:]) in known:
                            pairs["".join(syllables[k:]), right] += count
                if not words[i]:
                    continue
                after = splitter.syllables(words[i + 1]) if words[i + 1] else []
                for m in range(1, min(len(after), MAX_ENDING_UNITS + 1)):
                    begins = " " + "".join(after[:m])
                    if begins not in known or (superword_letters and not regex.search(r"\p{Alphabetic}", begins)):
                        continue
                    for k in ends:
                        if "".join(syllables[k:]) in known:
                            pairs["".join(syllables[k:]), begins] += count
                    if (" " if i > 0 else "") + words[i] in known:
                        pairs[(" " if i > 0 else "") + words[i], begins] += count
            if len(pairs) > MAX_ENDING_PAIRS:  # the bound on the pairs held: those seen once go
                pairs = Counter({pair: n for pair, n in pairs.items() if n > 1})
        floor = max(SUPERWORD_MIN_FREQ, min_freq)
        chosen = sorted((-n, a, b) for (a, b), n in pairs.items() if n >= floor and a + b not in known)
        chosen = chosen[: vocab_size - len(known)]
        superword_merges += [(a, b) for _, a, b in chosen]
        superword_tokens = [a + b for _, a, b in chosen]
    freq = final.symbol_frequencies()
    if final is engine:
        for token, count in boundary.items():
            freq[index[token]] += count
    order = sorted(range(len(final.symbols)), key=lambda i: (-freq[i], i))
    vocab: dict[str, int] = {}
    for token in (*special_tokens, *(final.symbols[i] for i in order), *core_tokens, *superword_tokens, *support,
                  *BYTE_TOKENS):
        vocab.setdefault(token, len(vocab))
    merges = [(engine.symbols[a], engine.symbols[b]) for a, b in engine.merges] + core_merges
    return VocabFile(vocab=vocab, merges=merges, syllable_merges=build, superword_merges=superword_merges,
                     script=script, special_tokens=tuple(special_tokens), prune_freq=prune_freq,
                     min_freq=min_freq, merge_scope=merge_scope, prefix_space=prefix_space,
                     split_punctuation=split_punctuation)


def _listed(script: str) -> set[int]:
    """The code points a bundled schema file lists in its ``char_classes``, less those of its blocks
    marked ``extension`` (read from the JSON here, not through :mod:`wwho.schema`)."""
    data = json.loads((Path(wwho.__file__).parent / "schemas" / f"{script}.json").read_text(encoding="utf-8"))
    out: set[int] = set()
    for spec in data["char_classes"].values():
        for member in (spec if isinstance(spec, list) else spec.get("members", [])):
            if isinstance(member, list):
                out.update(range(int(member[0][2:], 16), int(member[1][2:], 16) + 1))
            else:
                out.add(int(member[2:], 16))
    for block in data.get("blocks", []):
        if block.get("extension"):
            out -= set(range(int(block["first"][2:], 16), int(block["last"][2:], 16) + 1))
    return out


def _present(scripts: tuple[str, ...], syllable_freq: dict[str, int]) -> list[str]:
    """The scripts whose blocks (read from the schema files) start 0.1% or more of the syllables
    that start with a letter or a mark."""
    if len(scripts) == 1:
        return list(scripts) if syllable_freq else []
    blocks = {}
    for name in scripts:
        data = json.loads((Path(wwho.__file__).parent / "schemas" / f"{name}.json").read_text(encoding="utf-8"))
        blocks[name] = [(int(b["first"][2:], 16), int(b["last"][2:], 16)) for b in data["blocks"]]
    counts = dict.fromkeys(scripts, 0)
    for s, f in syllable_freq.items():
        first = s.strip(" ")[:1]
        if not first or not (first.isalpha() or unicodedata.category(first).startswith("M")):
            continue
        for name in scripts:  # the first script whose blocks hold it
            if any(lo <= ord(first) <= hi for lo, hi in blocks[name]):
                counts[name] += f
                break
    total = sum(counts.values())
    return [name for name in scripts if counts[name] and counts[name] >= 0.001 * total]
