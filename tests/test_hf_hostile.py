"""The Hugging Face faces of wwho on real lines of every script and on hostile text.

Stock ``tokenizers`` (``Tokenizer.from_file``) and ``transformers.AutoTokenizer`` running an SGPE
``tokenizer.json`` must give the native ids and decode back exactly; the transformers class of the
meta tokenizer must give the meta tokenizer's ids, in batches with padding, and decode back. Text:
the first lines of every file of every language in the shared corpora, lines of several scripts
joined, and what breaks tokenizers (NUL, ZWJ/ZWNJ, stacked combining marks, emoji ZWJ sequences
and flags, CRLF and lone CR, Unicode line separators, a BOM, noncharacters, very long lines).
Lone surrogates cannot enter HF at all (Rust strings); ``verify`` counts them apart.
"""

from __future__ import annotations

import random

import pytest
from conftest import CORPORA, O200K_FILE, require_data

from wwho.export.verify import verify

HOSTILE = ["", " ", "\x00", "a\x00b\x00", "\u200d", "\u200c\u200d\u200c", "ශ\u200d්\u200dර", "ශ්‍රී\u200dලංකා",
           "e\u0301\u0301\u0301\u0301", "\u0301", "ක\u0301\u0302", "👩\u200d👩\u200d👧\u200d👦🇱🇰👍🏽🏳️\u200d🌈", "🇱",
           "a\r\nb\r\n\r\n", "\r", "\r\r\n\n", "\u2028\u2029\x85", "\ufeffශ්‍රී", "\uffff\U0010ffff\ufffd", "\x1b[31m",
           "क्\u200dष क्\u200cष ক্\u200cষ", "\u0964\u0965", "\u00a0ලංකා\u00a0", "\t\t\n  \n", "ශ්‍රී ලංකා " * 3000,
           " " * 5000, "a" * 30_000, "🦜" * 2000]


def corpus_lines(per_file: int = 5000) -> list[str]:
    require_data(CORPORA)
    lines = []
    for path in sorted(CORPORA.glob("*/*.txt")):
        with open(path, encoding="utf-8") as f:
            lines += f.read(per_file).splitlines()[:-1]  # the last may be cut mid-line
    mixed = random.Random(3)
    return lines + [" ".join(mixed.sample(lines, 3)) for _ in range(200)]


@pytest.fixture(scope="module")
def lines():
    return corpus_lines()


@pytest.fixture(scope="module")
def indic(tmp_path_factory):
    """An SGPE vocabulary of every bundled script (``indic``), saved: its directory and tokenizer."""
    from wwho.sgpe import SGPETokenizer

    require_data(CORPORA)
    path = tmp_path_factory.mktemp("hostile") / "train.txt"
    with open(path, "w", encoding="utf-8") as out:
        for lang in ("si", "hi", "bn", "pa", "gu", "or", "ta", "te", "kn", "ml"):
            with open(sorted((CORPORA / lang).glob("*.txt"))[0], encoding="utf-8") as f:
                out.write(f.read(40_000))
    tok = SGPETokenizer.train(path, vocab_size=3000, script="indic", progress=False, workers=1)
    directory = path.parent / "saved"
    tok.save(directory)
    return directory, tok


def test_stock_tokenizers_file_gives_the_native_ids(indic, lines):
    from tokenizers import Tokenizer

    directory, tok = indic
    hf = Tokenizer.from_file(str(directory / "tokenizer.json"))
    report = verify(tok, hf, lines + HOSTILE + ["\ud800", "a\udfffb"])
    assert report.ok, report.summary()
    assert report.lines == len(lines) + len(HOSTILE) and report.skipped_surrogates == 2
    with pytest.raises(TypeError):  # what HF says of a lone surrogate (see docs/hf-export.md)
        hf.encode("\ud800")
    assert tok.decode(tok.encode("a\udfffb")) == "a\udfffb"  # the native tokenizer round-trips it


def test_auto_tokenizer_gives_the_native_ids(indic, lines):
    transformers = pytest.importorskip("transformers")
    directory, tok = indic
    auto = transformers.AutoTokenizer.from_pretrained(str(directory))
    texts = lines[::5] + HOSTILE
    got = auto(texts, add_special_tokens=False)["input_ids"]
    want = [tok.encode(t, allowed_special="all") for t in texts]
    assert got == want
    assert auto.batch_decode(got) == texts
    assert [auto.convert_ids_to_tokens(ids) for ids in want[-8:]] == [tok.tokenize(t) for t in texts[-8:]]
    batch = auto(texts[:50], padding=True, truncation=True, max_length=64, return_tensors="np")
    assert batch["input_ids"].shape == (50, min(64, max(len(w) + 2 for w in want[:50])))


def test_the_transformers_class_of_the_meta_tokenizer(lines, o200k):
    pytest.importorskip("transformers")
    from wwho import MetaTokenizer
    from wwho.hf import WWHOTokenizer
    from wwho.sgpe import SGPETokenizer, train_sgpe

    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    sgpe = SGPETokenizer(train_sgpe("src/wwho/data/sinhala-wikipedia-sample.txt", vocab_size=1000, progress=False,
                                    workers=1, segments_only=True))
    meta = MetaTokenizer(sgpe, o200k)
    tok = WWHOTokenizer(meta_tokenizer=meta)
    texts = [t for t in lines + HOSTILE if "<|" not in t and "⟦sgpe⟧" not in t]
    got = tok(texts, add_special_tokens=False)["input_ids"]
    assert got == meta.encode_batch(texts)
    assert tok.batch_decode(got) == texts
    padded = tok(texts[:40], padding=True, return_tensors="np")
    assert tok.batch_decode(padded["input_ids"], skip_special_tokens=True) == texts[:40]
    # A lone surrogate is what tiktoken makes of it (U+FFFD), as the meta tokenizer does.
    assert tok.encode("a\udfffb", add_special_tokens=False) == meta.encode("a\udfffb")
    assert tok.decode(tok.encode("a\udfffb", add_special_tokens=False)) == "a\ufffdb"
