"""The id budget: base symbols for a pruning threshold, and the automatic threshold (by hand)."""

from __future__ import annotations

from collections import Counter

import pytest

from wwho.bpe import UNK
from wwho.errors import VocabError
from wwho.sgpe import train_sgpe
from wwho.sgpe.budget import auto_prune_freq, base_symbols, probe_engine

# Syllables ka, ki (100 each), ke (40), ko (3), ku (1); pairs (ka, ki) 100 and (ke, ke) 20; no boundary
# symbol. Their 6 characters are always kept (automatic pruning keeps every syllable's characters).
WORDS = Counter({("ka", "ki"): 100, ("ke", "ke"): 20, ("ko",): 3, ("ku",): 1})
FREQ = Counter({"ka": 100, "ki": 100, "ke": 40, "ko": 3, "ku": 1})


def test_base_symbols_prunes_below_the_threshold():
    base = base_symbols(WORDS, FREQ, {"."}, 3)
    assert base.symbols == [".", "ka", "ki", "ke", "ko"]  # boundary symbols, then by frequency, ties by string
    assert base.syllables == 4
    assert base.words[base.word_list.index(("ku",))] == [UNK]
    assert base.words[base.word_list.index(("ka", "ki"))] == [1, 2]


@pytest.mark.parametrize("ids, expected", [
    (13, 1),   # 6 characters + 5 syllables + both merges fit: keep everything
    (12, 3),   # one id short: ku (1 occurrence) goes, both merges fit
    (11, 40),  # two short: pruning ko and ku (4 occurrences) pays for (ke, ke), worth 20
])
def test_auto_threshold_by_hand(ids, expected):
    assert auto_prune_freq(probe_engine(WORDS, FREQ, set()), FREQ, set(), ids=ids, min_freq=1) == expected


def test_auto_threshold_when_nothing_can_merge():
    words, freq = Counter({("ka",): 5, ("ki",): 1}), Counter({"ka": 5, "ki": 1})
    assert auto_prune_freq(probe_engine(words, freq, set()), freq, set(), ids=6, min_freq=1) == 1


@pytest.mark.parametrize("ids, expected", [
    (11, 1),    # 6 characters and 5 syllables fit; nothing merges at min_freq 1000
    (10, 3),    # one id short: ku goes
    (9, 40),    # two short: ko and ku
    (8, 100),   # three short: ke too
    (6, 101),   # every syllable goes, to its characters
])
def test_auto_threshold_when_no_pair_reaches_min_freq_and_the_pieces_do_not_fit(ids, expected):
    """No IndexError where the probe's merge frequencies are empty, as from ``wwho train --kind sgpe
    --min-freq 50`` on a small corpus with a tight size."""
    assert auto_prune_freq(probe_engine(WORDS, FREQ, set()), FREQ, set(), ids=ids, min_freq=1000) == expected


def test_a_min_freq_no_pair_reaches_with_a_tight_size_trains(tmp_path):
    """The probe's case (five lines of the bundled sample, 500 ids, ``min_freq`` 50): syllables are
    pruned until the pieces fit."""
    from importlib import resources

    from wwho.sgpe import SGPETokenizer

    lines = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()[:5]
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tok = SGPETokenizer(train_sgpe(path, vocab_size=500, min_freq=50, progress=False, workers=1))
    assert tok.vocab_size == 500 and all(tok.decode(tok.encode(line)) == line for line in lines)


def test_bad_prune_and_min_freq(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("ලංකාව\n", encoding="utf-8")
    for bad in ({"prune_freq": 0}, {"prune_freq": "always"}, {"min_freq": 0}, {"min_freq": 1.5}):
        with pytest.raises(VocabError, match="must be"):
            train_sgpe(path, vocab_size=1000, progress=False, workers=1, **bad)


def test_auto_prunes_more_for_a_smaller_vocabulary(tmp_path):
    # 40 distinct rare syllables (2 occurrences each) and a frequent word: a small budget prunes them.
    rare = [chr(0x0D9A + i % 40) + "ෝ" for i in range(80)]
    path = tmp_path / "c.txt"
    path.write_text("\n".join(["ලංකාව දිවයින"] * 200 + rare) + "\n", encoding="utf-8")
    small = train_sgpe(path, vocab_size=300, progress=False, workers=1)
    large = train_sgpe(path, vocab_size=2000, progress=False, workers=1)
    assert small.prune_freq > 2 and large.prune_freq <= 2
    assert all(s not in small.vocab for s in rare) and all(s in large.vocab for s in rare)


def test_a_size_too_small_names_the_size_that_fits_and_why_it_is_larger(tmp_path):
    """Asking 270 ids gives the base symbols' 437, with "use vocab_size >= 437 (from 451 on ...)":
    the warning names the smallest size that fits, and the size from which the script's characters
    the text lacks join too (they must fit beside the rest). Each size does what it says, warning
    no more. (Before, sizes from 280 to 450 gave 451 tokens, more than asked, for those characters.)"""
    import re
    import warnings
    from importlib import resources

    from wwho.errors import VocabSizeWarning

    sample = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8")
    path = tmp_path / "c.txt"
    path.write_text("\n".join(sample.splitlines()[:1424]) + "\n", encoding="utf-8")  # lacks some letters
    letters = set(path.read_text(encoding="utf-8"))

    def trained(size: int) -> tuple[set[str], str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            vocab = train_sgpe(path, vocab_size=size, progress=False, workers=1).vocab
        said = [str(w.message) for w in caught if issubclass(w.category, VocabSizeWarning)]
        return set(vocab), said[0] if said else ""

    got, said = trained(270)
    fits, joins = map(int, re.search(r"Use --vocab-size / vocab_size >= ([\d,]+) \(from vocab_size ([\d,]+) on", said).groups())
    assert f"the vocabulary has {len(got):,} tokens" in said and len(got) == fits < joins
    unseen = {t for t in got if len(t) == 1 and t not in letters}
    for size in (300, fits - 1):
        assert trained(size) == (got, said.replace("270 asked", f"{size} asked"))
    for size in (fits, joins - 1):
        vocab, said = trained(size)
        assert len(vocab) <= size and said == "" and {t for t in vocab if len(t) == 1 and t not in letters} == unseen
    vocab, said = trained(joins)
    assert len(vocab) == joins and said == ""
    assert len({t for t in vocab if len(t) == 1 and t not in letters} - unseen) == joins - fits  # the characters


@pytest.mark.parametrize("lines, min_freq, size", [(150, 1, 500), (300, 1, 540), (150, 1000, 580), (600, 300, 620)])
def test_no_vocabulary_is_larger_than_asked_where_a_threshold_fits(tmp_path, lines, min_freq, size):
    """The automatic threshold left no room for the schema's characters the text lacks (the base
    symbols plus those were up to 4% over the size asked, said to be the smallest size that fits), and
    with a high min_freq it chose a threshold where the base symbols alone did not fit."""
    import warnings
    from importlib import resources

    from wwho.errors import VocabSizeWarning

    sample = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8")
    path = tmp_path / "c.txt"
    path.write_text("\n".join(sample.splitlines()[:lines]) + "\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vocab = train_sgpe(path, vocab_size=size, min_freq=min_freq, superword_share=0, progress=False, workers=1)
    assert len(vocab.vocab) <= size
    assert not [w for w in caught if issubclass(w.category, VocabSizeWarning) and "more than" in str(w.message)]
