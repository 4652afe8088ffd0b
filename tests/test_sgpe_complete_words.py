"""Words the training text holds only with punctuation attached, made whole with the ids the
merges left (``train_sgpe(complete_words=True)``, scope ``"pieces"``)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wwho
from wwho.errors import VocabSizeWarning
from wwho.sgpe import SGPETokenizer, train_sgpe

SAMPLE = Path(wwho.__file__).parent / "data" / "sinhala-wikipedia-sample.txt"
LINES = SAMPLE.read_text(encoding="utf-8", errors="replace").splitlines()


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """240 lines of the bundled Sinhala sample: the merges run out far below 20,000."""
    path = tmp_path_factory.mktemp("words") / "small.txt"
    path.write_text("\n".join(LINES[:240]) + "\n", encoding="utf-8")
    return path


def train(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VocabSizeWarning)
        return train_sgpe(path, script="sinhala", progress=False, workers=1, **options)


def only_with_punctuation(path) -> list[str]:
    """The Sinhala words of the text that never stand alone, only with punctuation after them, in
    the form they take standing alone (after a space, or bare at the start of a line)."""
    alone, attached = set(), set()
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        for i, word in enumerate(line.split()):
            core = word.rstrip(".,:;!?)\"'")
            if not core or not all("\u0d80" <= c <= "\u0dff" or c == "\u200d" for c in core):
                continue
            form = core if i == 0 and line.startswith(word) else " " + core
            (alone if core == word else attached).add(form)
    return sorted(attached - alone)


@pytest.fixture(scope="module")
def vocabs(small):
    # (Word endings and the superwords of the ids left off in both: they come after these words' merges,
    # and the superwords count these words among the beginnings of the next word; tested below and in
    # test_sgpe_superwords.)
    off = dict(complete_endings=False, complete_superwords=False)
    return (train(small, vocab_size=20_000, complete_words=False, **off), train(small, vocab_size=20_000, **off))


def test_the_words_become_tokens_after_every_other_merge(small, vocabs):
    plain, done = vocabs
    # The earlier merges are untouched: the new ones come after them.
    assert done.merges[: len(plain.merges)] == plain.merges
    assert len(done.merges) > len(plain.merges) + 100
    assert done.superword_merges == plain.superword_merges
    assert len(done.vocab) <= 20_000
    tokenizers = SGPETokenizer(plain), SGPETokenizer(done)
    words = only_with_punctuation(small)
    assert len(words) > 100
    # Each becomes one token standing alone; without the option, only some are (where the
    # merges of other words made one).
    assert [w for w in words if tokenizers[1].tokenize(w) != [w]] == []
    assert len([w for w in words if tokenizers[0].tokenize(w) == [w]]) < len(words) / 2


def test_the_training_text_is_cut_as_before(small, vocabs):
    # Every piece of the training text was one token or cut by the earlier merges; merges after
    # them change none of it (its ids may move: the new tokens take ids among the others).
    plain, done = (SGPETokenizer(v) for v in vocabs)
    for line in LINES[:240]:
        assert done.tokenize(line) == plain.tokenize(line)


def test_hf_export_gives_the_same_ids(vocabs, tmp_path):
    from tokenizers import Tokenizer

    tok = SGPETokenizer(vocabs[1])
    tok.save(tmp_path / "out")
    hf = Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    for line in LINES[240:400]:
        ids = tok.encode(line)
        assert hf.encode(line, add_special_tokens=False).ids == ids
        assert tok.decode(ids) == line


def exported(vocab, folder):
    """The tokenizer of ``vocab`` and HF ``tokenizers``' own reading of its saved tokenizer.json."""
    from tokenizers import Tokenizer

    tok = SGPETokenizer(vocab)
    tok.save(folder)
    return tok, Tokenizer.from_file(str(folder / "tokenizer.json"))


FRAGMENTS = [*" .,\n\"", *"අකලංවා්‍රීශ", " ලංකාව", "ශ්‍රී", " සහ", " ආගමකි", " අරමුණයි", " අයයි"]


@pytest.fixture(scope="module")
def both_exported(vocabs, with_endings, tmp_path_factory):
    """Punctuated words only, and with the word endings too."""
    return [exported(vocabs[1], tmp_path_factory.mktemp("words") / "out"),
            exported(with_endings[1], tmp_path_factory.mktemp("endings") / "out")]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([*FRAGMENTS, "යක්", "ගේ", "වලින්"]), max_size=30).map("".join))
def test_any_text_round_trips_and_the_export_agrees(both_exported, text):
    for tok, hf in both_exported:
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        assert hf.encode(text, add_special_tokens=False).ids == ids


@pytest.mark.parametrize("scope", ["words", "runs"])
def test_other_scopes_have_no_such_words(small, scope):
    a = train(small, vocab_size=20_000, merge_scope=scope, superword_share=0)
    b = train(small, vocab_size=20_000, merge_scope=scope, superword_share=0, complete_words=False)
    assert a.to_bytes() == b.to_bytes()


# -- word endings (complete_endings) ------------------------------------------------------------


@pytest.fixture(scope="module")
def with_endings(small):
    return (train(small, vocab_size=20_000, complete_endings=False), train(small, vocab_size=20_000))


def test_word_endings_come_after_every_other_merge(small, with_endings):
    plain, done = with_endings
    assert done.merges[: len(plain.merges)] == plain.merges
    endings = [a + b for a, b in done.merges[len(plain.merges):]]
    assert len(endings) > 100
    # Each is the ending of some training word after its first syllable, never a word's start.
    text = Path(small).read_text(encoding="utf-8")
    for token in endings[:200]:
        assert not token.startswith(" ") and token in text, token
    tokenizers = SGPETokenizer(plain), SGPETokenizer(done)
    for line in LINES[:240]:  # the training text is cut as before
        assert tokenizers[1].tokenize(line) == tokenizers[0].tokenize(line)


def test_a_new_stem_takes_a_known_ending(with_endings):
    plain, done = (SGPETokenizer(v) for v in with_endings)
    # An ending learned from training words, after a stem the text never had (ශ්‍රී is one
    # syllable, so the new word's first token cannot reach into the ending).
    ending = next(a + b for a, b in done.merges[len(plain.merges):] if len(done.splitter.syllables(a + b)) >= 3)
    word = " ශ්‍රී" + ending
    assert done.tokenize(word)[-1] == ending
    assert len(done.tokenize(word)) < len(plain.tokenize(word))
    assert done.decode(done.encode(word)) == word


# -- both options -------------------------------------------------------------------------------

OPTIONS = ["complete_words", "complete_endings"]


@pytest.mark.parametrize("option", OPTIONS)
def test_nothing_changes_where_the_merges_fill_the_vocabulary(small, option):
    # (Without superwords: a superword stage may run out of pairs before the vocabulary is full.)
    options = dict(vocab_size=3_000, superword_share=0)
    assert train(small, **options).to_bytes() == train(small, **{option: False}, **options).to_bytes()


@pytest.mark.parametrize("option", OPTIONS)
def test_cli_gives_the_ids_by_default_and_not_on_request(small, tmp_path, option):
    from wwho.cli import main

    flag = "--no-" + option.replace("_", "-")
    merges = {}
    for flags in ([], [flag]):
        out = tmp_path / f"out{len(flags)}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VocabSizeWarning)
            assert main(["train", "--kind", "sgpe", "--vocab-size", "20000", "--out", str(out), "--quiet",
                         "--workers", "1", *flags, str(small)]) == 0
        merges[bool(flags)] = len(SGPETokenizer.load(out).merges)
    assert merges[False] > merges[True] + 100


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("value", [1, "yes", None])
def test_the_options_must_be_bools(small, option, value):
    with pytest.raises(wwho.VocabError, match=option):
        train(small, vocab_size=20_000, **{option: value})
