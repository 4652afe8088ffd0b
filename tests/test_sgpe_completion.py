"""Syllables the training text lacks, for the ids its merges left (``wwho.sgpe.completion``)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import wwho
from wwho.errors import VocabSizeWarning
from wwho.sgpe import SGPETokenizer, train_sgpe
from wwho.sgpe.completion import split_syllable, unseen_syllables

SAMPLE = Path(wwho.__file__).parent / "data" / "sinhala-wikipedia-sample.txt"


@pytest.mark.parametrize("syllable, parts", [
    ("कि", ("क", "ि")),
    ("क्षं", ("क्ष", "ं")),  # a cluster, then an anusvara
    ("अं", ("अ", "ं")),
    ("क्", ("क", "्")),  # a dead consonant: the virama is its tail
    ("ग", ("ग", "")),
    (" ग", (" ग", "")),
    ("१", None),  # a digit
    ("।", None),  # punctuation
    ("कa", ("कa", "")),  # the last letter is the Latin one: all of it is the onset
])
def test_split_syllable(syllable, parts):
    assert split_syllable(syllable) == parts


ANY = lambda s: True  # noqa: E731


def test_unseen_pairings_best_first_where_the_text_joins_their_letter_and_mark():
    freq = {"कि": 10, "क्षा": 3, "ग्रि": 2, "गा": 6, "रा": 1}
    # onsets क 10, ग 6, क्ष 3, ग्र 2, र 1; tails ि 12, ा 10. A pairing is proposed only where
    # the onset's last letter meets the tail's first mark somewhere in the text: क never meets
    # ा, ग never ि, ष (of क्ष) never ि; र meets both, so ग्रा (2 * 10) and रि (1 * 12).
    assert unseen_syllables(freq, in_script=ANY, is_syllable=ANY, limit=10) == ["ग्रा", "रि"]
    assert unseen_syllables(freq, in_script=ANY, is_syllable=ANY, limit=1) == ["ग्रा"]
    assert unseen_syllables(freq, in_script=ANY, is_syllable=ANY, limit=0) == []
    assert unseen_syllables(freq, in_script=ANY, is_syllable=lambda s: s != "ग्रा", limit=10) == ["रि"]
    # Syllables outside the script count for nothing: without those holding र, no letter
    # meets both marks.
    assert unseen_syllables(freq, in_script=lambda s: "र" not in s, is_syllable=ANY, limit=10) == []


def test_unseen_syllables_do_not_follow_the_order_syllables_were_counted_in():
    """Ties between equally frequent onsets or tails are not broken by the order the training text's
    syllables were first counted in, or ``--workers 2`` or the files in another order would give
    another vocabulary (README: byte-identical whatever the number of workers)."""
    import random

    freq = {"कि": 1, "खा": 1, "गु": 1, "घे": 1}  # every onset and every tail as frequent: all tie
    one_class = {"in_script": ANY, "is_syllable": ANY, "limit": 3, "letter_class": lambda c: 0}
    want = unseen_syllables(freq, **one_class)
    assert want == ["का", "कु", "के"]  # ties by string
    rng = random.Random(7)
    for _ in range(20):
        items = list(freq.items())
        rng.shuffle(items)
        assert unseen_syllables(dict(items), **one_class) == want


def test_tails_recombine_and_an_independent_vowel_gets_no_vowel_sign():
    freq = {"इ": 5, "इं": 1, "कि": 3, "का": 2, "गां": 1}
    # क meets ा, so it takes the tail ां of गां; ग meets ा too, so गा. इ meets only an anusvara
    # and nothing: never a vowel sign (the syllabifier would read "इि" as one syllable).
    assert unseen_syllables(freq, in_script=ANY, is_syllable=ANY, limit=10) == ["कां", "गा"]


def test_joins_by_class_let_every_consonant_take_what_one_took():
    freq = {"कि": 10, "गा": 6}
    # by letter, क never met ा and ग never ि: nothing
    assert unseen_syllables(freq, in_script=ANY, is_syllable=ANY, limit=10) == []
    # by class (both consonants), each takes the other's vowel sign; equal scores, onset order
    consonant = {"क": "C", "ग": "C"}
    got = unseen_syllables(freq, in_script=ANY, is_syllable=ANY, limit=10,
                           letter_class=lambda c: consonant.get(c, c))
    assert got == ["का", "गि"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """240 lines of the bundled Sinhala sample (58 kB): the merges run out far below 20,000."""
    lines = SAMPLE.read_text(encoding="utf-8", errors="replace").splitlines()[:240]
    path = tmp_path_factory.mktemp("completion") / "small.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_training_spends_the_ids_the_merges_left_on_unseen_syllables(small, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VocabSizeWarning)
        plain = train_sgpe(small, vocab_size=20_000, script="sinhala", progress=False, complete_syllables=False)
        done = train_sgpe(small, vocab_size=20_000, script="sinhala", progress=False)
    assert plain.merges == done.merges and plain.superword_merges == done.superword_merges
    added = set(done.vocab) - set(plain.vocab)
    assert len(done.vocab) > len(plain.vocab) + 500
    assert len(done.vocab) <= 20_000
    training = {s.lstrip(" ") for line in small.read_text(encoding="utf-8").splitlines()
                for s in wwho.syllabify(line, "sinhala")}
    syllables = [t for t in added if wwho.syllabify(t, "sinhala") == [t] and t not in training]
    assert len(syllables) > 500
    onsets = {split_syllable(s)[0] for s in training if split_syllable(s)}
    tails = {split_syllable(s)[1] for s in training if split_syllable(s)}
    for s in syllables:
        assert split_syllable(s)[0] in onsets and split_syllable(s)[1] in tails, s
    # Every other added token is a building piece: a prefix of an added syllable.
    for t in added.difference(syllables):
        assert any(s.startswith(t) for s in syllables), t

    # An added syllable is one token, in SGPE and in the exported tokenizer.json, and text
    # with it decodes back exactly.
    from tokenizers import Tokenizer

    tok = SGPETokenizer(done)
    tok.save(tmp_path / "out")
    hf = Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    sample = sorted(syllables)[:200]
    for s in sample:
        assert tok.tokenize(s) == [s]
        text = f"{s} {s}ක, {s}"
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        assert hf.encode(text, add_special_tokens=False).ids == ids


def test_cli_completes_by_default_and_not_on_request(small, tmp_path):
    from wwho.cli import main

    sizes = {}
    for flags in ([], ["--no-complete-syllables"]):
        out = tmp_path / f"out{len(flags)}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VocabSizeWarning)
            assert main(["train", "--kind", "sgpe", "--vocab-size", "20000", "--out", str(out), "--quiet",
                         "--workers", "1", *flags, str(small)]) == 0
        sizes[bool(flags)] = len(SGPETokenizer.load(out).get_vocab())
    assert sizes[False] > sizes[True] + 500


def test_resuming_completes_the_same_syllables(small, tmp_path):
    options = dict(vocab_size=20_000, script="sinhala", progress=False, workers=1,
                   checkpoint_dir=tmp_path / "ck", checkpoint_every=500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VocabSizeWarning)
        first = train_sgpe(small, **options)
        again = train_sgpe(small, resume=True, **options)
    assert again.to_bytes() == first.to_bytes()


@pytest.mark.parametrize("value", [1, "yes", None])
def test_complete_syllables_must_be_a_bool(small, value):
    with pytest.raises((TypeError, ValueError, wwho.VocabError)):
        train_sgpe(small, vocab_size=20_000, script="sinhala", progress=False, complete_syllables=value)
