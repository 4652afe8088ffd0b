"""The compiled SGPE trainer against the pure-Python one (``tests/reference/train.py``).

The core counts pieces, sentence spans and the dummy space, groups words into merge scopes,
builds the engine input and the superword stage's input; the reference does all of it in
Python with regular expressions and the reference merge engine. Every option of issue 16
(scopes, ``prefix_space``, automatic and fixed pruning, ``min_freq``, superwords, and
``split_punctuation``, and the words, word endings, syllables and ending superwords completed where the merges run out) must give
the same vocabulary file, on real text and on text that holds special and byte token strings.
"""

from __future__ import annotations

import warnings

import pytest
from conftest import CORPORA, read_slice
from reference.train import train as reference_train

from wwho.errors import VocabSizeWarning
from wwho.sgpe import train_sgpe

OPTIONS = {
    "defaults": {},
    "no-script-characters": {"script_characters": False},
    "no-bare-syllables": {"bare_syllables": False},
    "no-complete-syllables": {"complete_syllables": False},
    "no-complete-words": {"complete_words": False},
    "no-complete-endings": {"complete_endings": False},
    "no-complete-superwords": {"complete_superwords": False},
    "spec000": {"merge_scope": "words", "prune_freq": 2, "min_freq": 2, "superword_share": 0},
    "runs-auto": {"merge_scope": "runs", "superword_share": 0},
    "pieces-prefix-superwords": {"prefix_space": True, "superword_share": 0.3},
    "superwords-any-piece": {"superword_letters": False, "superword_share": 0.3},
    "words-superwords-prune3": {"merge_scope": "words", "prune_freq": 3, "superword_share": 0.2},
    "words-punctuation": {"merge_scope": "words", "superword_share": 0, "split_punctuation": True},
    "runs-superwords-punctuation": {"merge_scope": "runs", "split_punctuation": True},
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    if not CORPORA.is_dir():
        pytest.skip(f"{CORPORA} is absent")
    text = (read_slice(CORPORA / "si" / "news-bbcsinhala.txt", 60_000)
            + read_slice(CORPORA / "hi" / "tico19-test.txt", 40_000)
            # reserved strings inside pieces and spans, repeated so that merges could form them
            + "x[CLS]y ශ්‍රී <0x41> ලංකාව. [SEP][SEP] ලංකාව\r\n" * 3 + "\n\n  double  spaces \tand tabs\n"
            # verse: a danda and verse numbers set apart by spaces (no superword takes them by default)
            + "ලංකාව දිවයිනකි । १२ ॥ ශ්‍රී ලංකාව ॥ 3 ॥\n" * 4
            # one long span of the same few words (the ending superwords ask about each distinct
            # run of words once, times how often it occurs)
            + "ලංකාව දිවයිනකි ශ්‍රී ලංකාවේ ජනතාව " * 300 + "\n")
    path = tmp_path_factory.mktemp("ref") / "train.txt"
    path.write_bytes(text.encode("utf-8"))
    lines = [line.rstrip("\r\n") for line in text.split("\n")]
    return path, lines


@pytest.mark.parametrize("name, vocab_size", [(name, size) for name in OPTIONS for size in (700, 2500)]
                         # large enough for the schemas' unseen characters (a twentieth of it at most)
                         + [("defaults", 8000), ("no-script-characters", 8000)]
                         # far more than the merges can fill: the unseen syllables take the rest
                         + [("defaults", 40_000), ("no-complete-syllables", 40_000),
                            ("no-complete-words", 40_000), ("no-complete-endings", 40_000),
                            ("no-complete-superwords", 40_000),
                            ("pieces-prefix-superwords", 40_000), ("spec000", 40_000), ("runs-auto", 40_000),
                            ("runs-superwords-punctuation", 40_000)])
def test_core_trainer_equals_the_reference(corpus, name, vocab_size):
    path, lines = corpus
    options = OPTIONS[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = train_sgpe(path, vocab_size=vocab_size, script="mixed", progress=False, workers=2, **options)
    # Sizes out of this corpus's reach are part of the grid: the trainer says so, and only then.
    said = [str(w.message) for w in caught if issubclass(w.category, VocabSizeWarning)]
    assert bool(said) == (len(got.vocab) != vocab_size), said
    # (and superwords beside the words or runs scope, which are warned of: the grid trains them on purpose)
    other = [w for w in caught if not issubclass(w.category, VocabSizeWarning)]
    assert all("superword merges" in str(w.message) for w in other), [str(w.message) for w in other]
    assert bool(other) == (options.get("merge_scope", "pieces") != "pieces"
                           and options.get("superword_share", 0.15) > 0), [str(w.message) for w in other]
    want = reference_train(lines, vocab_size=vocab_size, script="mixed", **options)
    assert got.prune_freq == want.prune_freq
    assert got.merges == want.merges
    assert got.superword_merges == want.superword_merges
    assert got.syllable_merges == want.syllable_merges
    assert got.vocab == want.vocab
    assert got.to_bytes() == want.to_bytes()
