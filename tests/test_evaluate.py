"""Evaluation: metrics with hand-computed answers, every SPEC kind, errors, JSON schema, plot."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from conftest import CORPORA, O200K_FILE

from wwho.errors import TokenizerError, VocabError
from wwho.evaluate import Evaluated, evaluate, load_spec, parity


def by_char():
    """A character-level tokenizer: every code point is one token (ids are code points)."""
    def encode(text):
        ends, pos = [], 0
        for ch in text:
            pos += len(ch.encode())
            ends.append(pos)
        return [ord(c) for c in text], ends
    return Evaluated("chars", encode, lambda ids: "".join(map(chr, ids)), lambda i: i == ord("?"), 0x110000)


def by_words():
    """One token per whitespace-separated piece with its leading space."""
    import re

    def encode(text):
        pieces = re.findall(r" ?\S+| ", text)
        ends, pos = [], 0
        for p in pieces:
            pos += len(p.encode())
            ends.append(pos)
        return [hash(p) & 0xFFFF for p in pieces], ends
    return Evaluated("words", encode, lambda ids: "?", lambda i: False, 0x10000)


def test_character_tokenizer_on_shri():
    # ශ්‍රී = ශ + ් + ZWJ + ර + ී: one syllable; Unicode clusters "ශ්‍" and "රී".
    # Boundaries after ශ, ් (inside "ශ්‍"), after ZWJ (a cluster boundary), after ර (inside "රී"):
    # 3 of 4 inside a cluster, 4 of 4 inside the syllable.
    m = evaluate(by_char(), ["ශ්‍රී"])
    assert (m.tokens, m.words, m.chars, m.bytes) == (5, 1, 5, 15)
    assert (m.boundaries, m.boundaries_in_cluster, m.boundaries_in_syllable) == (4, 3, 4)
    assert m.fertility == 5 and m.bytes_per_token == 3 and m.lossless_rate == 1


def test_word_tokenizer_never_cuts_and_counts_fertility():
    m = evaluate(by_words(), ["ශ්‍රී ලංකාව", "a b c"])
    assert m.words == 5 and m.tokens == 5 and m.fertility == 1
    assert m.boundaries == 1 + 2 and m.boundaries_in_cluster == 0 and m.boundaries_in_syllable == 0
    assert m.lossless_lines == 0  # its decode is deliberately broken


def test_latin_text_has_no_syllables_but_clusters():
    m = evaluate(by_char(), ["e\u0301a?"])  # é decomposed: the boundary after e cuts the cluster
    assert (m.boundaries, m.boundaries_in_cluster, m.boundaries_in_syllable) == (3, 1, 0)
    assert m.fallback_tokens == 1 and m.vocab_used == 4


def test_parity():
    tok = by_char()
    a = evaluate(tok, ["abcd", "ef"], corpus="a")
    b = evaluate(tok, ["ab", "c"], corpus="b")
    assert parity(a, b) == 2.0
    with pytest.raises(TokenizerError, match="line-aligned"):
        parity(a, evaluate(tok, ["x"], corpus="c"))


def test_unknown_specs_are_clear_errors(tmp_path):
    with pytest.raises(VocabError, match="not a file or directory, nor tiktoken:NAME"):
        load_spec("no-such-thing")
    with pytest.raises(VocabError, match="HF tokenizers cannot load"):
        bad = tmp_path / "t.json"
        bad.write_text("{}")
        load_spec(f"hf:{bad}")
    with pytest.raises(VocabError, match="SentencePiece cannot load"):
        load_spec(f"spm:{tmp_path / 'absent.model'}")
    with pytest.raises(VocabError):
        load_spec("tiktoken:no_such_encoding")


def test_unreadable_corpus_is_a_clear_error(tmp_path):
    from wwho.cli import main

    assert main(["eval", "--corpus", str(tmp_path / "absent.txt"), "--tokenizer", "hf:x", "--quiet"]) == 2


@pytest.fixture(scope="module")
def spec_zoo(tokenizers, tmp_path_factory):
    """One SPEC of every kind that can be built offline here."""
    specs = {}
    out = tmp_path_factory.mktemp("zoo")
    tokenizers["sinhala"].save(out / "sgpe")
    specs["sgpe directory"] = str(out / "sgpe")
    specs["sgpe vocab.json"] = str(out / "sgpe" / "vocab.json")
    specs["hf tokenizer.json"] = f"hf:{out / 'sgpe' / 'tokenizer.json'}"
    specs["wwho tokenizer.json"] = str(out / "sgpe" / "tokenizer.json")
    if O200K_FILE.is_file():
        specs["tiktoken"] = "tiktoken:o200k_base"
        specs[".tiktoken file"] = str(O200K_FILE)
    gguf = CORPORA.parent / "gguf-vocab" / "ggml-vocab-gpt-2.gguf"
    if gguf.is_file():
        specs[".gguf"] = str(gguf)
    spm = pytest.importorskip("sentencepiece")
    corpus = out / "spm.txt"
    corpus.write_text(resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8"))
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(out / "spm"), vocab_size=800,
                                   model_type="bpe", minloglevel=2)
    specs["spm"] = f"spm:{out / 'spm.model'}"
    return specs


def test_every_spec_kind_loads_and_evaluates(spec_zoo, monkeypatch):
    if O200K_FILE.is_file():
        monkeypatch.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    lines = ["ශ්‍රී ලංකාව යනු දිවයිනකි.", "Hello, world 123!"]
    for kind, spec in spec_zoo.items():
        m = evaluate(load_spec(spec), lines, corpus="tiny")
        assert m.tokens > 0 and m.lines == 2, kind
        if kind != "spm":  # SentencePiece normalizes some text
            assert m.lossless_rate == 1.0, kind


def test_cli_json_validates_and_plot_is_a_png(spec_zoo, tmp_path, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("matplotlib")
    from wwho.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව\nනමස්කාරය\n", encoding="utf-8")
    ref = tmp_path / "en.txt"
    ref.write_text("Sri Lanka\nHello\n")
    png = tmp_path / "out.png"
    assert main(["eval", "--quiet", "--corpus", str(corpus), "--tokenizer", spec_zoo["sgpe directory"],
                 spec_zoo["spm"], "--parity-with", str(ref), "--json", "--plot", str(png)]) == 0
    data = json.loads(capsys.readouterr().out)
    schema = json.loads(resources.files("wwho.data").joinpath("eval.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert len(data["results"]) == 2 and data["results"][0]["parity"] is not None
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["eval", "--quiet", "--corpus", str(corpus), "--tokenizer", spec_zoo["sgpe directory"],
                 "--markdown"]) == 0
    assert capsys.readouterr().out.startswith("| tokenizer | corpus | tokens/word")


def test_spm_token_ends_are_byte_offsets_found_in_linear_time(tmp_path):
    """SentencePiece token ends from the pieces' own bytes: a byte-fallback piece ends inside its
    character (decoding every prefix gave the replacement characters' lengths there, and took time
    quadratic in the line: a 20,000-emoji text held `wwho serve` for 30 s)."""
    spm = pytest.importorskip("sentencepiece")
    from wwho.evaluate import _spm_ends

    corpus = tmp_path / "c.txt"
    corpus.write_text(resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8"))
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"), vocab_size=800,
                                   model_type="bpe", minloglevel=2, byte_fallback=True)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    for text in ["එය ඖපචාරික ලෙසින්", "Hello, world 123!", "👩‍👩‍👧‍👦 ශ්‍රී"]:
        ids = sp.encode(text)
        assert sp.decode(ids) == text
        ends = _spm_ends(sp, ids, text)
        pieces = [bytes([int(p[3:5], 16)]) if sp.is_byte(i) else p.replace("\u2581", " ").encode()
                  for i, p in ((i, sp.id_to_piece(i)) for i in ids)]
        whole = b"".join(pieces)
        skip = len(whole) - len(text.encode())  # the dummy prefix space decode drops
        assert whole[skip:] == text.encode() and skip in (0, 1)
        assert ends == [max(sum(map(len, pieces[:k])) - skip, 0) for k in range(1, len(ids) + 1)]
        assert ends == sorted(ends) and ends[-1] == len(text.encode())
    long = "👩‍👩‍👧‍👦" * 20_000
    assert _spm_ends(sp, sp.encode(long), long)[-1] == len(long.encode())
