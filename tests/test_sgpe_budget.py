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
