"""Merge scopes and the other SGPE options: spans by hand, the HF pattern equals the native spans,
and every option keeps the guarantees (lossless, no known syllable split, exact HF export)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
import regex
from conftest import VARIANTS, corpus_files, read_slice
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sgpe_tokenizer import split_known_syllables

from wwho.errors import VocabError
from wwho.sgpe import SGPETokenizer, train_sgpe
from wwho.sgpe.scopes import MERGE_SCOPES, group_spans, scope_pattern_source
from wwho.sgpe.vocabfile import BYTE_TOKENS, SPECIAL_TOKENS, parse_vocab
from wwho.sgpe.words import PIECES, WordSplitter

SI = WordSplitter("sinhala")


def spans(piece: str, scope: str, splitter: WordSplitter = SI):
    return group_spans(splitter.split(piece), scope)


def test_spans_by_hand():
    word = [" ලං", "කා", "ව"]
    assert spans(" ලංකාව.", "words") == [(True, word), (False, ["."])]
    assert spans(" ලංකාව.", "runs") == [(True, word), (False, ["."])]
    assert spans(" ලංකාව.", "pieces") == [(True, [*word, "."])]
    digits = [" 2", "0", "1", "9", ")", ","]
    assert spans(" 2019),", "words") == [(False, [u]) for u in digits]
    assert spans(" 2019),", "runs") == [(True, digits)]
    assert spans(" 2019),", "pieces") == [(True, digits)]
    assert spans("ලංකාව2019", "runs") == [(True, ["ලං", "කා", "ව"]), (True, ["2", "0", "1", "9"])]
    assert spans(" (", "runs") == spans(" (", "pieces") == [(False, [" ("])]
    for scope in MERGE_SCOPES:
        assert spans("\n", scope) == [(False, ["\n"])]
        assert spans(" ශ්‍රී", scope) == [(True, [" ශ්‍රී"])]


def test_unknown_scope_is_a_clear_error(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("ලංකාව\n", encoding="utf-8")
    with pytest.raises(VocabError, match="unknown merge scope 'sentences'"):
        train_sgpe(path, vocab_size=1000, merge_scope="sentences", progress=False, workers=1)


fuzz = st.lists(
    st.sampled_from(
        list("ශ්‍රීලංකාවනඖ") + list("नमस्तेक्षज़ँ।ा")
        + list("aZ19.,-'\"()")
        + [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u200c", "\u200d", "🙂", "\x00", "€"]
        + ["ō\u0303", "\u0306"]
    ),
    max_size=40,
).map("".join)


@pytest.mark.parametrize("scope", MERGE_SCOPES)
@pytest.mark.parametrize("script", ["sinhala", "devanagari", "mixed"])
@given(text=fuzz)
@settings(max_examples=80, deadline=None)
def test_pattern_matches_are_the_native_spans(scope, script, text):
    from tokenizers import Regex, pre_tokenizers

    splitter = WordSplitter(script)
    native = ["".join(units) for piece in PIECES.findall(text)
              for _, units in group_spans(splitter.split(piece), scope)]
    python = [m.group() for m in re.finditer(scope_pattern_source(splitter.scripts, scope), text, re.DOTALL)]
    assert python == native
    split = pre_tokenizers.Split(Regex(scope_pattern_source(splitter.scripts, scope, onig=True)), "isolated")
    assert [s for s, _ in split.pre_tokenize_str(text)] == native


def test_merges_never_produce_a_special_or_byte_token(tmp_path):
    # Pieces holding "[CLS]" or "<0x41>" would otherwise merge into those very strings.
    path = tmp_path / "c.txt"
    path.write_text(("[CLS]ලංකාව <0x41> [CLSX] <0x4" + "\n") * 50, encoding="utf-8")
    vf = train_sgpe(path, vocab_size=2000, progress=False, workers=1)
    reserved = set(SPECIAL_TOKENS) | set(BYTE_TOKENS)
    made = {a + b for a, b in vf.merges}
    assert " [CLSX]" in made and " <0x4" in made  # the corpus does drive merges over these characters
    assert not made & reserved
    tok = SGPETokenizer(vf)
    ids = tok.encode("[CLS] <0x41>")
    assert not set(ids) & {tok.vocab[t] for t in reserved}
    assert tok.decode(ids) == "[CLS] <0x41>"


def test_prefix_space_encodes_text_initial_words_like_others(variants):
    tok = variants["prefix"]
    alone = tok.encode("ලංකාව")
    assert tok.encode("x ලංකාව")[-len(alone):] == alone  # the same tokens as after a space
    assert tok.tokenize("ලංකාව")[0].startswith(" ")  # the dummy space, dropped again by decode
    for text in ("ලංකාව", " ලංකාව", "  x", "\nලංකාව", "", "[CLS]", "a [CLS] b"):
        assert tok.decode(tok.encode(text)) == text
    assert tok.encode("") == []
    # special-token text splits the text; each part gets its dummy space, as HF's Prepend normalizer does
    ids = tok.encode("ලංකාව[SEP]ලංකාව", allowed_special="all")
    sep = ids.index(tok.vocab["[SEP]"])
    assert ids[:sep] == ids[sep + 1:] == tok.encode("ලංකාව")


def test_prefix_space_is_refused_for_the_meta_tokenizer(variants, tmp_path):
    from wwho.meta import MetaTokenizer

    with pytest.raises(VocabError, match="prefix_space"):
        MetaTokenizer(variants["prefix"], "o200k_base")
    path = tmp_path / "c.txt"
    path.write_text("ලංකාව\n", encoding="utf-8")
    with pytest.raises(VocabError, match="prefix_space"):
        train_sgpe(path, vocab_size=1000, prefix_space=True, segments_only=True, progress=False, workers=1)


def test_option_fields_in_vocab_json(variants, tmp_path):
    from wwho.sgpe import load_vocab_file

    for name, options in VARIANTS.items():
        tok = variants[name]
        tok.save(tmp_path / name)
        vf = load_vocab_file(tmp_path / name / "vocab.json")
        assert vf.merge_scope == options.get("merge_scope", "pieces")
        assert vf.prefix_space == options.get("prefix_space", False)
        assert bool(vf.superword_merges) == (options.get("superword_share", 0.15) > 0)
        assert vf.split_punctuation == options.get("split_punctuation", False)
        assert ("split_punctuation" in vf.to_json()) == vf.split_punctuation  # older files stay as they were
        assert SGPETokenizer(vf).encode("ලංකාව, 2019 नमस्ते!") == tok.encode("ලංකාව, 2019 नमस्ते!")


# -- every option keeps the guarantees ---------------------------------------------------------------

class Exported(tuple):
    """(native tokenizer, HF tokenizers.Tokenizer loaded from its export), with a short repr."""

    def __repr__(self) -> str:
        return f"Exported({self[0]!r})"


@pytest.fixture(scope="module")
def exported_variants(variants, tmp_path_factory):
    from tokenizers import Tokenizer

    out = {}
    for name, tok in variants.items():
        directory = tmp_path_factory.mktemp(f"hf-{name}")
        tok.save(directory)
        out[name] = Exported((tok, Tokenizer.from_file(str(directory / "tokenizer.json"))))
    return out


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant_corpora_lossless_exact_export_no_split(exported_variants, name):
    from wwho.export.verify import verify

    tok, hf = exported_variants[name]
    lines = list(itertools.chain.from_iterable(
        read_slice(p, 60_000).splitlines() for p in corpus_files("si", "si-en", "hi", "hi-en")))
    report = verify(tok, hf, lines)
    assert report.lines > 1000
    assert report.ok, report.summary()
    assert [line for line in lines if tok.decode(tok.encode(line)) != line] == []
    assert [s for line in lines[::7] for s in split_known_syllables(tok, line)] == []


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_boundary_token_after_a_space_is_kept_whole(variants, name):
    # Each variant's vocabulary holds ' .' and the boundary token '.' + U+200C, one extended
    # grapheme cluster. After a space the word rule keeps ' .' + U+200C as one unit; it is not a
    # token, so it becomes the space and the bare boundary token, never ' .' and a lone U+200C.
    tok = variants[name]
    assert {" .", ".\u200c"} <= tok.vocab.keys()
    assert regex.findall(r"\X", " .\u200c") == [" ", ".\u200c"]
    assert tok.splitter.split(" .\u200c") == [(False, [" .\u200c"])]
    tokens = [tok.token_bytes(i).decode() for i in tok.encode("a .\u200c")]
    assert tokens[-2:] == [" ", ".\u200c"]
    assert split_known_syllables(tok, "a .\u200c") == []


@pytest.mark.parametrize("name", list(VARIANTS))
@given(text=fuzz)
@settings(max_examples=100, deadline=None)
def test_variant_fuzzed_identical_and_lossless(exported_variants, name, text):
    tok, hf = exported_variants[name]
    ids = hf.encode(text, add_special_tokens=False).ids
    assert ids == tok.encode(text)
    assert tok.decode(ids) == text
    assert hf.decode(ids, skip_special_tokens=False) == text
    assert split_known_syllables(tok, text) == []


@pytest.mark.parametrize("name", list(VARIANTS))
@given(text=fuzz | st.text(max_size=30))
@settings(max_examples=100, deadline=None)
def test_variant_core_encoder_equals_the_reference(variants, name, text):
    from reference.sgpe import Encoder

    tok = variants[name]
    assert tok.encode(text) == Encoder(tok.file).encode(text)
    assert tok.encode_batch([text, text[::-1]], num_threads=2) == [tok.encode(text), tok.encode(text[::-1])]


@pytest.mark.parametrize("name", list(VARIANTS))
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
       | st.lists(st.sampled_from(["[CLS]", "[SEP]", " ", "ලංකාව", "a"]), max_size=6).map("".join))
@settings(max_examples=80, deadline=None)
def test_variant_specials_and_any_unicode_identical(exported_variants, name, text):
    tok, hf = exported_variants[name]
    ids = hf.encode(text, add_special_tokens=False).ids
    assert ids == tok.encode(text, allowed_special="all")
    for skip in (False, True):
        assert hf.decode(ids, skip_special_tokens=skip) == tok.decode(ids, skip_special_tokens=skip)


def test_evaluate_places_boundaries_after_the_dummy_space(variants, tmp_path):
    # wwho eval measures cuts from token bytes; the dummy space must not shift them by one byte.
    from wwho.eval_specs import load_spec
    from wwho.evaluate import evaluate

    for name in ("prefix", "pieces"):
        variants[name].save(tmp_path / name)
        tok = variants[name]
        candidates = ["ශ්‍රී ලංකාව", "ලංකාව යනු දිවයිනකි", "ලංකාව", "ශ්‍රී ලංකාවේ ජනාධිපති", "भारत सरकार"]
        lines = [line for line in candidates if all(s in tok.vocab for s in tok.splitter.syllables(line))]
        assert len(lines) >= 2
        m = evaluate(load_spec(str(tmp_path / name)), lines)
        assert m.boundaries > 0 and m.boundaries_in_syllable == 0 and m.boundaries_in_cluster == 0


def test_split_punctuation_keeps_the_danda_out_of_words(variants, tmp_path):
    def joined(tok):  # merges (not superword merges) that give a token of a letter and a danda
        return [a + b for a, b in tok.merges
                if regex.search(r"[\u0964\u0965]", a + b) and regex.search(r"\p{L}", a + b)]

    assert joined(variants["words"])  # without the option, words learn the danda after them (" है।")
    for name in ("words-punctuation", "runs-superwords-punctuation"):
        tok = variants[name]
        assert joined(tok) == []
        assert "script punctuation splits words" in tok.describe()
    # superword merges join a sentence's tokens across its spaces, its final danda too, as they
    # join a Latin full stop: without them, a danda is its own token after any word
    tok = variants["words-punctuation"]
    assert [tok.id_to_token(i) for i in tok.encode("यह है।")][-1] == "।"
    # a vocabulary file that says something else than true or false is refused, naming the field
    variants["words-punctuation"].save(tmp_path / "v")
    path = tmp_path / "v" / "vocab.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["split_punctuation"] = "yes"
    with pytest.raises(VocabError, match="'split_punctuation' must be true or false"):
        parse_vocab(data)


def test_cli_trains_with_split_punctuation(tmp_path):
    from conftest import run_wwho

    from wwho.sgpe import load_vocab_file

    corpus = tmp_path / "hi.txt"
    corpus.write_text("यह एक वाक्य है। वह भी है। " * 30 + "\n", encoding="utf-8")
    out = tmp_path / "out"
    proc = run_wwho("train", "--kind", "sgpe", "--script", "devanagari", "--vocab-size", "600",
                    "--merge-scope", "words", "--superwords", "0", "--split-punctuation", "--out", out, corpus)
    assert proc.returncode == 0, proc.stderr
    vf = load_vocab_file(out / "vocab.json")
    assert vf.split_punctuation and vf.merge_scope == "words"
    assert " है" in vf.vocab and " है।" not in vf.vocab


def test_a_meta_tokenizer_takes_a_split_punctuation_part(variants, o200k):
    from wwho.meta import MetaTokenizer

    meta = MetaTokenizer(variants["words-punctuation"], o200k)
    text = "यह है। Hello, दुनिया॥ ලංකාව."
    ids = meta.encode(text)
    assert meta.decode(ids) == text
    assert [meta.decode([i]) for i in ids][:3] == ["यह", " है", "।"]


@pytest.mark.parametrize("scope, share, warns", [("words", 0.15, True), ("runs", 0.1, True), ("words", 0, False),
                                                  ("pieces", 0.15, False)])
def test_superwords_beside_a_scope_that_keeps_words_apart_are_warned_of(tmp_path, scope, share, warns):
    """Superword merges join any tokens of a sentence span: with the words or runs scope they must
    not join a word and its punctuation (`" है।"`), which the scope keeps apart."""
    import warnings

    from wwho.errors import WwhoWarning
    from wwho.sgpe import SGPETokenizer

    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SGPETokenizer.train([str(sample)], vocab_size=800, merge_scope=scope, superword_share=share, progress=False)
    said = [w for w in caught if issubclass(w.category, WwhoWarning) and "superword merges" in str(w.message)]
    assert bool(said) == warns, [str(w.message) for w in caught]
