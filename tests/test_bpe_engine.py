"""The merge engine (wwho.bpe.engine).

Three kinds of evidence:
* hand-checked merges on tiny corpora (spec 000's " ලංකාව", tie-breaks, id reuse, budget, strict
  min_freq, UNK, overlapping pairs), with expected values worked out by hand in the comments;
* differential tests against the naive trainer of ``bpe_reference.py`` (recount everything each
  step) on hypothesis-generated corpora, both tie-breaks, str and bytes symbols, UNK included;
* HF ``tokenizers``' BpeTrainer on real text (syllables of Sinhala Wikipedia sentences, bytes of
  English ones): each merge HF makes, replayed on the engine, must be a most frequent pair under
  the engine's own counts, and HF's and the engine's runs must agree until the first tie.
"""

from __future__ import annotations

import collections
import json
import random

import bpe_reference as ref
import numpy as np
import pytest
from conftest import CORPORA, require_data
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.engine import MergeEngine as ReferenceEngine
from reference.engine import _PairQueue, reversed_key

from wwho.bpe import UNK, MergeEngine, MergeError


def run(words, counts, symbols, *, max_symbols, min_freq=2, tie_break="smaller"):
    engine = MergeEngine(words, counts, symbols, tie_break=tie_break)
    engine.train(max_symbols=max_symbols, min_freq=min_freq, progress=False)
    return engine


def state(engine):
    words, _ = engine.words_and_counts()
    return engine.merges, engine.symbols, words, engine.symbol_frequencies()


# -- hand-checked -------------------------------------------------------------------------------

SRI = "\u0dc1\u0dca\u200d\u0dbb\u0dd3"  # ශ්‍රී
LAN, KA, VA = " \u0dbd\u0d82", "\u0d9a\u0dcf", "\u0dc0"  # " ලං", "කා", "ව"


def test_spec000_lankava():
    # Words of spec 000 section 6: ["ශ්‍රී"] and [" ලං", "කා", "ව"], plus [" ලං", "කා"].
    symbols = [SRI, LAN, KA, VA]
    words = [[0], [1, 2, 3], [1, 2]]
    counts = [5, 3, 2]
    engine = run(words, counts, symbols, max_symbols=100)
    # Pairs: (" ලං","කා") = 3 + 2 = 5, ("කා","ව") = 3. The first wins; then (" ලංකා","ව") = 3.
    assert engine.merges == [(1, 2), (4, 3)]
    assert engine.symbols == [SRI, LAN, KA, VA, LAN + KA, LAN + KA + VA]
    assert engine.words_and_counts() == ([[0], [5], [4]], [5, 3, 2])
    assert engine.symbol_frequencies() == [5, 0, 0, 0, 2, 3]
    assert engine.symbols[5] == " \u0dbd\u0d82\u0d9a\u0dcf\u0dc0"  # " ලංකාව"


def test_step_returns_merge_and_frequency():
    engine = MergeEngine([[1, 2, 3], [1, 2]], [3, 2], [SRI, LAN, KA, VA])
    assert engine.step() == (1, 2, 4, 5)
    assert engine.step() == (4, 3, 5, 3)
    assert engine.step() is None
    assert engine.step(min_freq=1) is None  # no pair left at all


def test_steps_equal_one_step_at_a_time():
    rng = random.Random(4)
    words = [[rng.randrange(6) for _ in range(rng.randrange(1, 12))] for _ in range(300)]
    counts = [rng.randrange(1, 9) for _ in words]
    symbols = [chr(0x0D9A + i) for i in range(6)]
    one, many = MergeEngine(words, counts, symbols), MergeEngine(words, counts, symbols)
    singles = []
    while (got := one.step(min_freq=3)) is not None:
        singles.append(got)
    batched = many.steps(7, min_freq=3) + many.steps(10**9, min_freq=3)
    assert batched == singles and len(singles) > 7
    assert state(many) == state(one)
    assert many.steps(5, min_freq=3) == [] and many.steps(-1) == []
    with pytest.raises(MergeError, match="min_freq"):
        many.steps(1, min_freq="3")


@pytest.mark.parametrize(
    ("tie_break", "first"), [("smaller", (0, 1)), ("greater", (2, 3))]
)
def test_tie_break_between_equal_pairs(tie_break, first):
    # ("a","b") and ("c","d") both occur twice.
    engine = MergeEngine([[0, 1], [2, 3]], [2, 2], ["a", "b", "c", "d"], tie_break=tie_break)
    assert engine.step()[:2] == first


def test_tie_break_prefix_order_and_id_reuse():
    # ("a","b") and ("ab","b") both occur twice; "a" < "ab", so "smaller" takes ("a","b") first,
    # and "a"+"b" is the existing symbol "ab": id 2 is reused, the table does not grow.
    words, counts, symbols = [[0, 1], [2, 1]], [2, 2], ["a", "b", "ab"]
    small = run(words, counts, symbols, max_symbols=10, tie_break="smaller")
    assert small.merges == [(0, 1), (2, 1)]
    assert small.symbols == ["a", "b", "ab", "abb"]
    assert small.words_and_counts()[0] == [[2], [3]]
    assert small.symbol_frequencies() == [0, 0, 2, 2]
    great = run(words, counts, symbols, max_symbols=10, tie_break="greater")
    assert great.merges == [(2, 1), (0, 1)]
    assert great.symbols == ["a", "b", "ab", "abb"]
    assert great.words_and_counts()[0] == [[2], [3]]


def test_reused_id_does_not_consume_budget():
    # max_symbols=4: "smaller" first reuses "ab" (table stays at 3), so it may still add "abb".
    small = run([[0, 1], [2, 1]], [2, 2], ["a", "b", "ab"], max_symbols=4, tie_break="smaller")
    assert small.merges == [(0, 1), (2, 1)]
    # "greater" adds "abb" first: the table is full, the reusing merge never happens.
    great = run([[0, 1], [2, 1]], [2, 2], ["a", "b", "ab"], max_symbols=4, tie_break="greater")
    assert great.merges == [(2, 1)]


def test_two_paths_to_one_symbol():
    # "a"+"bc" and "ab"+"c" both make "abc": one id, and both words end up as that id.
    engine = run([[0, 1], [2, 3]], [3, 2], ["a", "bc", "ab", "c"], max_symbols=10)
    assert engine.merges == [(0, 1), (2, 3)]
    assert engine.symbols == ["a", "bc", "ab", "c", "abc"]
    assert engine.words_and_counts()[0] == [[4], [4]]
    assert engine.symbol_frequencies() == [0, 0, 0, 0, 5]


def test_min_freq_is_strict():
    # ("a","b") occurs 3 times, ("c","d") twice.
    words, counts, symbols = [[0, 1], [2, 3]], [3, 2], ["a", "b", "c", "d"]
    assert run(words, counts, symbols, max_symbols=10, min_freq=2).merges == [(0, 1), (2, 3)]
    assert run(words, counts, symbols, max_symbols=10, min_freq=3).merges == [(0, 1)]
    assert run(words, counts, symbols, max_symbols=10, min_freq=4).merges == []
    engine = MergeEngine(words, counts, symbols)
    assert engine.step(min_freq=3) == (0, 1, 4, 3)
    assert engine.step(min_freq=3) is None  # (c, d) = 2 < 3: nothing changes...
    assert engine.symbols == ["a", "b", "c", "d", "ab"]
    assert engine.step(min_freq=2) == (2, 3, 5, 2)  # ...and a lower threshold still finds it


def test_unk_never_pairs():
    # [a UNK a b] x5 and [b UNK UNK a] x9: only (a, b) is a pair; UNK blocks everything else.
    engine = run([[0, UNK, 0, 1], [1, UNK, UNK, 0]], [5, 9], ["a", "b"], max_symbols=10, min_freq=1)
    assert engine.merges == [(0, 1)]
    assert engine.words_and_counts()[0] == [[0, UNK, 2], [1, UNK, UNK, 0]]
    assert engine.symbol_frequencies() == [14, 9, 5]
    assert engine.pair_counts() == {}


def test_overlapping_pair_counts_every_position():
    # "a a a a" holds (a, a) at three positions: freq 3; merged left to right -> "aa aa".
    engine = MergeEngine([[0, 0, 0, 0], [0, 0, 0]], [1, 1], ["a"])
    assert engine.pair_counts() == {(0, 0): 5}
    assert engine.step(min_freq=1) == (0, 0, 1, 5)
    assert engine.words_and_counts()[0] == [[1, 1], [1, 0]]
    assert engine.pair_counts() == {(1, 1): 1, (1, 0): 1}


def test_consecutive_occurrences():
    # x a b a b y: merging (a, b) -> c leaves x c c y; pairs (x,c), (c,c), (c,y).
    engine = MergeEngine([[2, 0, 1, 0, 1, 3], [0, 1]], [1, 1], ["a", "b", "x", "y"])
    assert engine.step(min_freq=1) == (0, 1, 4, 3)
    assert engine.words_and_counts()[0] == [[2, 4, 4, 3], [4]]
    assert engine.pair_counts() == {(2, 4): 1, (4, 4): 1, (4, 3): 1}


def test_bytes_symbols():
    engine = run([[104, 105], [104, 105, 33]], [2, 1], [bytes([i]) for i in range(256)], max_symbols=300)
    assert engine.merges == [(104, 105)]
    assert engine.symbols[256] == b"hi"


def test_on_merge_and_progress_bar(capsys):
    steps = []
    engine = MergeEngine([[0, 1, 2]], [4], ["a", "b", "c"])
    engine.train(max_symbols=10, on_merge=steps.append, progress=True)
    assert steps == [1, 2]
    assert "merge/s" in capsys.readouterr().err


@pytest.mark.parametrize("every", [1, 3, 5, 7, 300])
@pytest.mark.parametrize("replayed", [0, 3, 4])
def test_on_merge_every_lands_on_each_multiple_with_the_merges_complete(every, replayed):
    # 40 distinct letters in one long word: 39 merges when each merge takes the leftmost top pair.
    word = list(range(40))
    symbols = [chr(0x61 + i) if i < 26 else chr(0x41 + i - 26) for i in range(40)]
    whole = MergeEngine([word], [2], symbols)
    whole.train(max_symbols=1000, min_freq=1, progress=False)
    engine = MergeEngine([word], [2], symbols)
    engine.replay(whole.merges[:replayed])
    seen = []

    def at(step):
        assert len(engine.merges) == step and engine.merges == whole.merges[:step]
        seen.append(step)

    engine.train(max_symbols=1000, min_freq=1, progress=False, on_merge=at, on_merge_every=every)
    assert engine.merges == whole.merges and engine.symbols == whole.symbols
    assert seen == [s for s in range(replayed + 1, len(whole.merges) + 1) if s % every == 0]


def test_numpy_integers_are_accepted():
    engine = MergeEngine([np.array([0, 1], dtype=np.int32)], [np.int64(2)], ["a", "b"])
    assert engine.step() == (0, 1, 2, 2)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([[0]], [1, 2], ["a"]), {}, "differ in length"),
        (([[0, 2]], [1], ["a", "b"]), {}, "word 0: symbol id 2"),
        (([[0], [-2]], [1, 1], ["a"]), {}, "word 1: symbol id -2"),
        (([[0], [0, 2**70]], [1, 1], ["a"]), {}, f"word 1: symbol id {2**70}"),
        (([[0.5]], [1], ["a"]), {}, "word 0: 0.5 is not an integer"),
        (([[0]], [0], ["a"]), {}, "word 0: count must be positive"),
        (([[0, 0]], [2**70], ["a"]), {}, "counts too large"),
        (([[0]], ["3"], ["a"]), {}, "counts: '3' is not an integer"),
        (([[0]], [1], ["a", "a"]), {}, "symbols 0 and 1 are both 'a'"),
        (([[0]], [1], ["a", ""]), {}, "symbol 1 is empty"),
        (([[0]], [1], ["a", b"b"]), {}, "all str or all bytes"),
        (([[0]], [1], ["a"]), {"tie_break": "random"}, "tie_break"),
    ],
)
def test_bad_input_is_a_clear_error(args, kwargs, message):
    with pytest.raises(MergeError, match=message):
        MergeEngine(*args, **kwargs)


def test_replay_rejects_foreign_merges():
    engine = MergeEngine([[0, 1, 2]], [3], ["a", "b", "c"])
    with pytest.raises(MergeError, match=r"merge 1: \(0, 7\) is not a pair of symbol ids"):
        engine.replay([(0, 7)])
    with pytest.raises(MergeError, match=r"merge 1: pair \('a', 'c'\) does not occur"):
        engine.replay([(0, 2)])
    engine.replay([(0, 1)])
    with pytest.raises(MergeError, match=r"merge 2: pair \('a', 'b'\) does not occur"):
        engine.replay([(0, 1)])


# -- differential: engine == naive reference ---------------------------------------------------

TEXT_SYMBOLS = st.lists(
    st.text(alphabet="ab\x00\u0dbd\U0010ffff", min_size=1, max_size=3), min_size=1, max_size=7, unique=True
)
BYTE_SYMBOLS = st.lists(st.binary(min_size=1, max_size=2), min_size=1, max_size=7, unique=True)


@st.composite
def corpora(draw, symbols=TEXT_SYMBOLS):
    symbols = draw(symbols)
    ids = st.sampled_from([*range(len(symbols)), UNK])
    words = draw(st.lists(st.lists(ids, max_size=10), max_size=10))
    counts = draw(st.lists(st.integers(1, 5), min_size=len(words), max_size=len(words)))
    return words, counts, symbols


@settings(max_examples=300, deadline=None)
@given(
    corpus=st.one_of(corpora(), corpora(BYTE_SYMBOLS)),
    tie_break=st.sampled_from(["smaller", "greater"]),
    extra=st.integers(0, 15),
    min_freq=st.integers(0, 3),
)
def test_engine_equals_reference(corpus, tie_break, extra, min_freq):
    words, counts, symbols = corpus
    max_symbols = len(symbols) + extra
    engine = run(words, counts, symbols, max_symbols=max_symbols, min_freq=min_freq, tie_break=tie_break)
    expected = ref.train(
        words, counts, symbols, max_symbols=max_symbols, min_freq=min_freq, tie_break=tie_break
    )
    assert state(engine) == expected
    assert engine.words_and_counts()[1] == counts
    assert engine.pair_counts() == ref.count_pairs(expected[2], counts)


@settings(max_examples=200, deadline=None)
@given(
    corpus=st.one_of(corpora(), corpora(BYTE_SYMBOLS)),
    tie_break=st.sampled_from(["smaller", "greater"]),
    thresholds=st.lists(st.integers(0, 4), max_size=12),
)
def test_each_step_equals_reference(corpus, tie_break, thresholds):
    # Step by step with a changing min_freq (the heap keeps only pairs >= it, so lowering it
    # must bring the others back): every step picks the reference's pair, counts stay exact.
    words, counts, symbols = corpus
    engine = MergeEngine(words, counts, symbols, tie_break=tie_break)
    words, symbols = [list(w) for w in words], list(symbols)
    for min_freq in thresholds:
        best = ref.best_pair(words, counts, symbols, tie_break)
        got = engine.step(min_freq=min_freq)
        if best is None or best[1] < min_freq:
            assert got is None
        else:
            (a, b), freq = best
            new_id = ref.add_symbol(symbols, (a, b))
            words = [ref.merge_word(w, (a, b), new_id) for w in words]
            assert got == (a, b, new_id, freq)
        assert engine.symbols == symbols
        assert engine.words_and_counts()[0] == words
        assert engine.pair_counts() == ref.count_pairs(words, counts)


@settings(max_examples=200, deadline=None)
@given(
    corpus=corpora(),
    tie_break=st.sampled_from(["smaller", "greater"]),
    k=st.integers(0, 10),
    extra=st.integers(0, 12),
)
def test_replay_then_continue_equals_uninterrupted(corpus, tie_break, k, extra):
    words, counts, symbols = corpus
    max_symbols = len(symbols) + extra
    whole = run(words, counts, symbols, max_symbols=max_symbols, min_freq=1, tie_break=tie_break)
    resumed = MergeEngine(words, counts, symbols, tie_break=tie_break)
    resumed.replay(whole.merges[:k])
    resumed.train(max_symbols=max_symbols, min_freq=1, progress=False)
    assert state(resumed) == state(whole)


@settings(max_examples=200, deadline=None)
@given(
    learned_on=corpora(),
    data=st.data(),
    tie_break=st.sampled_from(["smaller", "greater"]),
    extra=st.integers(0, 8),
)
def test_apply_cuts_other_words_as_encoding_would_and_training_goes_on(learned_on, data, tie_break, extra):
    # Merges learned on one corpus, applied to other words over the same symbols (the SGPE
    # trainer's words held only with punctuation): each merge, in order, wherever its pair occurs.
    words, counts, symbols = learned_on
    learned = run(words, counts, symbols, max_symbols=len(symbols) + 10, min_freq=1, tie_break=tie_break)
    ids = st.sampled_from([*range(len(symbols)), UNK])
    others = data.draw(st.lists(st.lists(ids, max_size=10), max_size=8))
    other_counts = data.draw(st.lists(st.integers(1, 5), min_size=len(others), max_size=len(others)))
    engine = MergeEngine(others, other_counts, learned.symbols, tie_break=tie_break)
    applied = engine.apply(learned.merges)
    want, kept = [list(w) for w in others], []
    for a, b in learned.merges:  # the naive reading: merge the pair in every word, left to right
        if (a, b) in ref.count_pairs(want, other_counts):
            c = learned.symbols.index(learned.symbols[a] + learned.symbols[b])
            want = [ref.merge_word(w, (a, b), c) for w in want]
            kept.append((a, b))
    assert applied == len(kept) and engine.merges == kept
    assert engine.words_and_counts()[0] == want
    assert engine.symbols == learned.symbols
    reference = ReferenceEngine(others, other_counts, learned.symbols, tie_break=tie_break)
    assert reference.apply(learned.merges) == applied
    # Training goes on from the words as cut: as an engine given those words to begin with.
    engine.train(max_symbols=len(learned.symbols) + extra, min_freq=1, progress=False)
    reference.train(max_symbols=len(learned.symbols) + extra, min_freq=1, progress=False)
    fresh = run(want, other_counts, learned.symbols, max_symbols=len(learned.symbols) + extra, min_freq=1,
                tie_break=tie_break)
    assert engine.merges[applied:] == fresh.merges == reference.merges[applied:]
    assert engine.symbols == fresh.symbols == reference.symbols


def test_apply_rejects_ids_out_of_range():
    engine = MergeEngine([[0, 1]], [1], ["a", "b"])
    with pytest.raises(MergeError, match=r"merge 2: \(0, 9\) is not a pair of symbol ids"):
        engine.apply([(0, 1), (0, 9)])


@settings(max_examples=100, deadline=None)
@given(corpus=corpora(), tie_break=st.sampled_from(["smaller", "greater"]), seed=st.integers(0, 2**32))
def test_word_order_does_not_matter(corpus, tie_break, seed):
    words, counts, symbols = corpus
    order = list(range(len(words)))
    random.Random(seed).shuffle(order)
    a = run(words, counts, symbols, max_symbols=len(symbols) + 10, min_freq=1, tie_break=tie_break)
    b = run([words[i] for i in order], [counts[i] for i in order], symbols, max_symbols=len(symbols) + 10,
            min_freq=1, tie_break=tie_break)
    assert a.merges == b.merges and a.symbols == b.symbols
    assert a.symbol_frequencies() == b.symbol_frequencies()
    assert [a.words_and_counts()[0][i] for i in order] == b.words_and_counts()[0]


@given(st.lists(st.text(alphabet="ab\x00\U0010ffff", max_size=3), min_size=4, max_size=4))
def test_reversed_key_reverses_str_order(s):
    assert (s[0] < s[1]) == (reversed_key(s[0]) > reversed_key(s[1])) if s[0] != s[1] else True
    assert ((s[0], s[1]) < (s[2], s[3])) == (
        (reversed_key(s[0]), reversed_key(s[1])) > (reversed_key(s[2]), reversed_key(s[3]))
    ) or (s[0], s[1]) == (s[2], s[3])


@given(st.binary(max_size=3), st.binary(max_size=3))
def test_reversed_key_reverses_bytes_order(x, y):
    assert (x < y) == (reversed_key(x) > reversed_key(y))
    assert (x == y) == (reversed_key(x) == reversed_key(y))


@given(
    start=st.dictionaries(st.integers(1, 6), st.lists(st.tuples(st.integers(0, 9)), min_size=1, max_size=4)),
    ops=st.lists(st.one_of(st.tuples(st.integers(1, 6), st.integers(0, 9)), st.none()), max_size=40),
)
def test_pair_queue_order(start, ops):
    # The queue alone is exact: the front is always the highest frequency, then the smallest entry,
    # including pushes above the front bucket (which the engine makes only through reused ids).
    queue = _PairQueue({f: list(entries) for f, entries in start.items()})
    expected = [(-f, e) for f, entries in start.items() for e in entries]
    for op in [*ops, *[None] * (len(start) * 4 + len(ops))]:  # then drain it
        if op is not None:
            queue.push(op[0], (op[1],))
            expected.append((-op[0], (op[1],)))
            continue
        front = queue.peek()
        if not expected:
            assert front is None
            continue
        best = min(expected)
        assert front == (-best[0], best[1])
        queue.pop()
        expected.remove(best)


# -- real text ---------------------------------------------------------------------------------


def sinhala_words(lines):
    import wwho
    from wwho.words import segment_into_words

    words = collections.Counter()
    for line in lines:
        for word in segment_into_words(wwho.syllabify(line, leading_space=True)):
            words[tuple(word)] += 1
    return words


def real_corpus(kind, n_lines):
    """(words, counts, symbols) from the first lines of a real file: Sinhala syllables or English bytes."""
    if kind == "sinhala":
        path = require_data(CORPORA / "si" / "wikipedia-floresv1.txt")
        lines = path.read_text(encoding="utf-8").splitlines()[:n_lines]
        types = sinhala_words(lines)
        symbols = sorted({s for word in types for s in word})
        index = {s: i for i, s in enumerate(symbols)}
        return [[index[s] for s in w] for w in types], list(types.values()), symbols
    path = require_data(CORPORA / "en" / "flores200-devtest.txt")
    lines = path.read_text(encoding="utf-8").splitlines()[:n_lines]
    types = collections.Counter(" " + w for line in lines for w in line.split())
    return [list(w.encode()) for w in types], list(types.values()), [bytes([i]) for i in range(256)]


def hf_merges(words, counts, *, vocab_size, min_freq):
    """Train HF tokenizers' BpeTrainer on the same word types: symbol i is private-use char U+F0000+i."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    def texts():
        for word, n in zip(words, counts):
            text = "".join(chr(0xF0000 + i) for i in word)
            yield from [text] * n

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_freq, show_progress=False)
    tokenizer.train_from_iterator(texts(), trainer=trainer)
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    pairs = [m.split(" ") if isinstance(m, str) else m for m in merges]
    return [tuple([ord(ch) - 0xF0000 for ch in side] for side in pair) for pair in pairs]


@pytest.mark.parametrize(("kind", "n_lines", "n_merges"), [("sinhala", 1200, 1000), ("english", 600, 600)])
def test_hf_tokenizers_choices_are_most_frequent_pairs(kind, n_lines, n_merges):
    words, counts, symbols = real_corpus(kind, n_lines)
    present = sorted({s for w in words for s in w})
    # HF's alphabet is the symbols present; give the engine the same budget over its own table.
    vocab_size = len(present) + n_merges
    hf = hf_merges(words, counts, vocab_size=vocab_size, min_freq=2)
    assert len(hf) == n_merges

    follow = MergeEngine(words, counts, symbols)
    index = {s: i for i, s in enumerate(symbols)}
    empty = symbols[0][:0]
    for step, (left, right) in enumerate(hf):
        pair = tuple(index[empty.join(symbols[u] for u in units)] for units in (left, right))
        freqs = follow.pair_counts()
        assert freqs.get(pair) == max(freqs.values()), f"HF merge {step} is not a most frequent pair"
        follow.replay([pair])
        index.setdefault(follow.symbols[-1], len(follow.symbols) - 1)

    ours = run(words, counts, symbols, max_symbols=len(symbols) + n_merges, min_freq=2)
    assert len(ours.merges) == len(hf)
    # Up to the first step where several pairs share the top frequency, both runs are identical.
    check = MergeEngine(words, counts, symbols)
    for step, (a, b) in enumerate(ours.merges):
        freqs = check.pair_counts()
        top = max(freqs.values())
        if sum(f == top for f in freqs.values()) > 1:
            break
        assert follow.merges[step] == (a, b)
        check.replay([(a, b)])
    assert step > 3


def test_replay_on_real_text_equals_uninterrupted():
    words, counts, symbols = real_corpus("sinhala", 1000)
    whole = run(words, counts, symbols, max_symbols=len(symbols) + 1200)
    resumed = MergeEngine(words, counts, symbols)
    resumed.replay(whole.merges[:700])
    resumed.train(max_symbols=len(symbols) + 1200, progress=False)
    assert state(resumed) == state(whole)
    again = run(words, counts, symbols, max_symbols=len(symbols) + 1200)
    assert state(again) == state(whole)  # deterministic


def test_same_merges_under_any_hash_seed():
    # str hashing is randomised per process; nothing the engine chooses may depend on it.
    import os
    import subprocess
    import sys
    from pathlib import Path

    require_data(CORPORA / "si" / "wikipedia-floresv1.txt")
    script = (
        "import sys, json; sys.path[:0] = [sys.argv[1]]\n"
        "from test_bpe_engine import real_corpus, run\n"
        "w, c, s = real_corpus('sinhala', 600)\n"
        "e = run(w, c, s, max_symbols=len(s) + 500, tie_break=sys.argv[2])\n"
        "print(json.dumps([e.merges, e.symbols]))\n"
    )
    tests = str(Path(__file__).resolve().parent)
    outputs = set()
    for seed, tie_break in [("1", "smaller"), ("2", "smaller"), ("3", "greater"), ("4", "greater")]:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", script, tests, tie_break], env=env, check=True,
                             capture_output=True, text=True).stdout
        outputs.add((tie_break, out))
    assert len(outputs) == 2


# -- the compiled engine against the pure-Python one it replaced (tests/reference/engine.py) ----

@settings(max_examples=200, deadline=None)
@given(
    corpus=st.one_of(corpora(), corpora(BYTE_SYMBOLS)),
    tie_break=st.sampled_from(["smaller", "greater"]),
    extra=st.integers(0, 15),
    min_freq=st.integers(1, 3),
)
def test_core_engine_equals_the_python_engine(corpus, tie_break, extra, min_freq):
    words, counts, symbols = corpus
    max_symbols = len(symbols) + extra
    core = run(words, counts, symbols, max_symbols=max_symbols, min_freq=min_freq, tie_break=tie_break)
    python = ReferenceEngine(words, counts, symbols, tie_break=tie_break)
    python.train(max_symbols=max_symbols, min_freq=min_freq, progress=False)
    assert state(core) == state(python)
    assert core.pair_counts() == python.pair_counts()


def test_core_engine_equals_the_python_engine_on_real_text():
    for kind, n_lines, tie_break in (("sinhala", 1500, "smaller"), ("english", 800, "greater")):
        words, counts, symbols = real_corpus(kind, n_lines)
        core = run(words, counts, symbols, max_symbols=len(symbols) + 1500, tie_break=tie_break)
        python = ReferenceEngine(words, counts, symbols, tie_break=tie_break)
        python.train(max_symbols=len(symbols) + 1500, progress=False)
        assert state(core) == state(python)


def test_counts_beyond_32_bits():
    # 64-bit counts: a word seen 5 billion times still counts exactly.
    big = 5_000_000_000
    engine = MergeEngine([[0, 1], [1, 2]], [big, big - 1], ["a", "b", "c"])
    assert engine.step() == (0, 1, 3, big)
    assert engine.symbol_frequencies() == [0, big - 1, big - 1, big]


def test_an_exception_in_on_merge_stops_training():
    engine = MergeEngine([[0, 1, 2, 0, 1]], [5], ["a", "b", "c"])

    def stop(step):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        engine.train(max_symbols=10, on_merge=stop, progress=False)
    assert len(engine.merges) == 1 and len(engine.symbols) == 4


def test_bytes_words_are_sequences_of_byte_ids():
    words = [b"hello", b"help", b"\xff\x00"]
    a = run(words, [3, 2, 1], [bytes([i]) for i in range(256)], max_symbols=262, tie_break="greater")
    b = run([list(w) for w in words], [3, 2, 1], [bytes([i]) for i in range(256)], max_symbols=262,
            tie_break="greater")
    assert state(a) == state(b)
    with pytest.raises(MergeError, match="word 0: symbol id 104"):
        MergeEngine([b"hi"], [1], ["a", "b"])


def test_work_without_progress_imports_no_tqdm():
    # tqdm.auto costs a third of `import wwho`; a silent run must not need it.
    import subprocess
    import sys

    code = ("import sys, wwho, wwho.sgpe.train\n"
            "from wwho.bpe import MergeEngine\n"
            "e = MergeEngine([[0, 1], [0, 1]], [1, 1], ['a', 'b'])\n"
            "e.train(max_symbols=3, progress=False)\n"
            "assert e.merges == [(0, 1)], e.merges\n"
            "print('tqdm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_silent_bar_counts_as_tqdm_does():
    from wwho.progress import SilentBar, progress_bar

    bar = progress_bar(total=5, disable=True)
    assert isinstance(bar, SilentBar)
    with bar:
        bar.update(2)
        bar.total += 1
        bar.update()
    assert (bar.n, bar.total) == (3, 6)
    assert list(progress_bar([1, 2], disable=True)) == [1, 2]
    shown = progress_bar(total=2, disable=False, file=open("/dev/null", "w"))  # noqa: SIM115
    assert type(shown).__name__ == "tqdm" or "tqdm" in type(shown).__module__
    shown.close()
