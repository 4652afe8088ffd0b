"""The Hugging Face export: stock tokenizers/transformers give exactly the native ids and text."""

from __future__ import annotations

import itertools
import json
import os

import pytest
from conftest import CORPORA, EVAL, FUZZ_INDIC, corpus_files, read_slice, require_data
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.export.sgpe_hf import build_hf_tokenizer
from wwho.export.verify import verify
from wwho.sgpe import SGPETokenizer

SCRIPTS = list(EVAL)


@pytest.fixture(scope="module")
def exported(tokenizers, tmp_path_factory):
    """script -> (native tokenizer, directory written by save(), tokenizers.Tokenizer loaded from it)."""
    from tokenizers import Tokenizer

    out = {}
    for script, tok in tokenizers.items():
        directory = tmp_path_factory.mktemp(f"hf-{script}")
        tok.save(directory)
        out[script] = (tok, directory, Tokenizer.from_file(str(directory / "tokenizer.json")))
    return out


@pytest.mark.parametrize("script", SCRIPTS)
def test_identical_ids_on_corpora(exported, script):
    tok, _, hf = exported[script]
    langs = ("si", "si-en", "hi", "mr", "ne", "sa", "hi-en") if script == "mixed" else EVAL[script]
    docs = itertools.chain.from_iterable(read_slice(p, 150_000).splitlines() for p in corpus_files(*langs))
    report = verify(tok, hf, docs)
    assert report.lines > 1000
    assert report.ok, report.summary()


fuzz = st.lists(
    st.sampled_from(
        FUZZ_INDIC + list("aZ19.,-'\"")
        + [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u200c", "\u200d", "🙂", "👍🏽", "\x00", "\x1b", "€", "[CLS]",
           "[SEP]", "<0x41>", "ō\u0303", "\u0306",
           # what Unicode keeps in one cluster and no schema describes: ZWJ sequences, flags, Hangul, prepend
           "🙂\u200d🙂", "\u200d🙂", "🇱", "🇰", "🇱🇰", "\u1100\u1161\u11a8", "\u0600", "\u0d4e", "\u0903", "\r"]
    ),
    max_size=30,
).map("".join)


@pytest.mark.parametrize("script", SCRIPTS)
@given(text=fuzz)
@settings(max_examples=150, deadline=None)
def test_fuzzed_text_identical_ids_and_lossless_both_ways(exported, script, text):
    tok, _, hf = exported[script]
    ids = hf.encode(text, add_special_tokens=False).ids
    assert ids == tok.encode(text, allowed_special="all")
    assert hf.decode(ids, skip_special_tokens=False) == text
    assert tok.decode(ids) == text


@pytest.mark.parametrize("script", SCRIPTS)
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
@settings(max_examples=100, deadline=None)
def test_any_unicode_identical(exported, script, text):
    tok, _, hf = exported[script]
    ids = hf.encode(text, add_special_tokens=False).ids
    assert ids == tok.encode(text, allowed_special="all")
    assert hf.decode(ids, skip_special_tokens=False) == text


def test_files_and_template(exported):
    tok, directory, hf = exported["sinhala"]
    for name in ("vocab.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        assert (directory / name).is_file()
    data = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))
    assert data["model"]["type"] == "BPE" and data["model"]["byte_fallback"] is True
    assert all(isinstance(m, list) and len(m) == 2 for m in data["model"]["merges"])  # pair form
    assert data["pre_tokenizer"]["type"] == "Split"
    enc = hf.encode("ශ්‍රී ලංකාව", add_special_tokens=True)
    assert enc.ids == [tok.vocab["[CLS]"], *tok.encode("ශ්‍රී ලංකාව"), tok.vocab["[SEP]"]]
    pair = hf.encode("ශ්‍රී", "ලංකාව", add_special_tokens=True)
    assert pair.ids == [tok.vocab["[CLS]"], *tok.encode("ශ්‍රී"), tok.vocab["[SEP]"], *tok.encode("ලංකාව"),
                        tok.vocab["[SEP]"]]
    assert pair.type_ids[-1] == 1


def test_transformers_round_trip(exported, tmp_path):
    transformers = pytest.importorskip("transformers")
    tok, directory, _ = exported["sinhala"]
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(directory / "tokenizer.json"))
    auto = transformers.AutoTokenizer.from_pretrained(str(directory))
    texts = ["ශ්‍රී ලංකාව", "ලංකාව යනු දිවයිනකි. Hello 🙂"]
    for t in (fast, auto):
        assert t(texts[1], add_special_tokens=False)["input_ids"] == tok.encode(texts[1])
    assert auto.decode(auto(texts[1], add_special_tokens=False)["input_ids"]) == texts[1]
    batch = auto(texts, padding=True)
    lengths = [len(tok.encode(t)) + 2 for t in texts]
    assert [sum(m) for m in batch["attention_mask"]] == lengths
    assert batch["input_ids"][0][: lengths[0]] == [tok.vocab["[CLS]"], *tok.encode(texts[0]), tok.vocab["[SEP]"]]
    assert batch["input_ids"][0][lengths[0]:] == [tok.vocab["[PAD]"]] * (max(lengths) - lengths[0])
    truncated = auto(texts[1], truncation=True, max_length=4)
    assert len(truncated["input_ids"]) == 4 and truncated["input_ids"][-1] == tok.vocab["[SEP]"]
    auto.save_pretrained(tmp_path / "again")
    again = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "again"))
    assert again(texts, padding=True)["input_ids"] == batch["input_ids"]
    assert again.decode(again(texts[1])["input_ids"], skip_special_tokens=True) == texts[1]


def test_cli_export_with_verify(exported, tmp_path, capsys):
    from wwho.cli import main

    tok, directory, _ = exported["sinhala"]
    corpus = corpus_files("si")[0]
    assert main(["export", "hf", str(directory / "vocab.json"), "-o", str(tmp_path / "out"), "--quiet",
                 "--verify", str(corpus)]) == 0
    out = capsys.readouterr().out
    assert "0 with different ids, 0 not decoded as the native tokenizer decodes them" in out
    assert (tmp_path / "out" / "tokenizer.json").read_bytes() == (directory / "tokenizer.json").read_bytes()


@pytest.mark.parametrize("content", ["", '{"text": 5}\n{"body": "ශ්‍රී"}\n'])
def test_cli_export_verify_that_checks_no_line_fails(exported, tmp_path, content):
    """An empty corpus, or a JSONL corpus none of whose lines has the text field (a wrong
    --text-field), must not print "0 lines checked", write the export and exit 0: a CI gate that
    checked nothing would pass."""
    from cli_run import one_line_error, wwho

    _, directory, _ = exported["sinhala"]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(content, encoding="utf-8")
    line = one_line_error(wwho("export", "hf", directory / "vocab.json", "-o", tmp_path / "out", "--quiet",
                               "--verify", corpus))
    assert "--verify: no line of" in line and "could be checked" in line and "nothing was written" in line
    assert not (tmp_path / "out").exists()


def test_unk_token_vocabulary_is_not_exported(tokenizers):
    from wwho.errors import VocabError

    with pytest.raises(VocabError, match="byte-fallback"):
        build_hf_tokenizer(SGPETokenizer(tokenizers["sinhala"].file, unk="token"))


def test_train_verification_checks_the_start_of_the_corpus(exported, tmp_path):
    """At most ``lines`` documents and ``max_bytes`` of UTF-8 (the first document always)."""
    from wwho.export.verify import save_verified

    sinhala = exported["sinhala"][0]
    corpus = tmp_path / "c.txt"
    line = "ශ්‍රී ලංකාව"  # 31 bytes
    corpus.write_text((line + "\n") * 10, encoding="utf-8")
    assert save_verified(sinhala, tmp_path / "a", corpus).lines == 10
    assert save_verified(sinhala, tmp_path / "b", corpus, lines=3).lines == 3
    assert save_verified(sinhala, tmp_path / "c", corpus, max_bytes=100).lines == 3
    assert save_verified(sinhala, tmp_path / "d", corpus, max_bytes=1).lines == 1


def test_save_verified_saves_the_files_and_checks_the_bytes_it_saves(exported, tmp_path, monkeypatch):
    """The check of ``wwho train`` runs beside the save, on the ``tokenizer.json`` being written: the
    files are those of ``save``, and a ``tokenizer.json`` that is not the tokenizer's is caught."""
    from wwho.export.verify import ExportMismatch, save_verified

    sinhala, directory, _ = exported["sinhala"]
    devanagari = exported["devanagari"][0]
    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව\nनमस्ते दुनिया\n" * 3, encoding="utf-8")
    report = save_verified(sinhala, tmp_path / "out", corpus)
    assert report.ok and report.lines == 6
    for name in ("vocab.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        assert (tmp_path / "out" / name).read_bytes() == (directory / name).read_bytes(), name
    # Devanagari's vocabulary with Sinhala's tokenizer.json: the report says they differ, and only
    # vocab.json is saved (a tokenizer.json known to give other ids was left for transformers).
    wrong = dict(sinhala.files())["tokenizer.json"]
    files = SGPETokenizer.files
    monkeypatch.setattr(SGPETokenizer, "files", lambda self: (
        (name, wrong if name == "tokenizer.json" else data) for name, data in files(self)))
    bad = save_verified(devanagari, tmp_path / "bad", corpus)
    assert not bad.ok and bad.id_mismatches
    with pytest.raises(ExportMismatch, match=r"does not reproduce the native tokenizer \(so the Hugging Face "
                                             r"files were not saved; vocab.json was\)"):
        bad.check(tmp_path / "bad" / "tokenizer.json")
    assert sorted(p.name for p in (tmp_path / "bad").iterdir()) == ["vocab.json", "wwho-manifest.json"]
    assert SGPETokenizer.load(tmp_path / "bad").encode("नमस्ते") == devanagari.encode("नमस्ते")


def test_the_export_check_samples_a_long_first_document():
    """The first document is not always checked whole: a corpus of one long line would make the
    check of ``wwho train`` encode all of it in both encoders, at many times its size in memory."""
    from wwho.export.verify import _first

    assert list(_first(iter(["ශ" * 100_000, "b"]), lines=10, max_bytes=1000)) == ["ශ" * 333]  # cut at a character
    assert list(_first(iter(["ab", "cd", "ef"]), lines=2, max_bytes=1000)) == ["ab", "cd"]


def test_special_tokens_of_ones_own_get_their_roles(tmp_path):
    """A vocabulary trained with special_tokens=("<pad>", ...) is exported with their roles
    (padding=True works in transformers) and no BPE unk_token "[UNK]" that is not in it."""
    from tokenizers import Tokenizer

    AutoTokenizer = pytest.importorskip("transformers").AutoTokenizer
    corpus = tmp_path / "c.txt"
    corpus.write_text(read_slice(require_data(CORPORA / "si" / "news-bbcsinhala.txt"), 100_000), encoding="utf-8")
    tok = SGPETokenizer.train([corpus], vocab_size=1500, script="sinhala", progress=False, workers=1,
                              special_tokens=("<|endoftext|>", "<pad>", "<unk>", "<mask>", "<extra>"))
    tok.save(tmp_path / "out")
    roles = json.loads((tmp_path / "out" / "special_tokens_map.json").read_text(encoding="utf-8"))
    assert roles == {"eos_token": "<|endoftext|>", "pad_token": "<pad>", "unk_token": "<unk>", "mask_token": "<mask>"}
    data = json.loads((tmp_path / "out" / "tokenizer.json").read_text(encoding="utf-8"))
    assert data["model"]["unk_token"] is None
    Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))  # loads without an unknown [UNK]
    auto = AutoTokenizer.from_pretrained(tmp_path / "out")
    batch = auto(["ශ්‍රී", "ශ්‍රී ලංකාව"], padding=True)
    assert batch["input_ids"][0][-1] == tok.vocab["<pad>"] == auto.pad_token_id
    assert batch["input_ids"][1] == tok.encode("ශ්‍රී ලංකාව")


def test_cls_and_sep_of_the_text_are_no_template(tmp_path):
    """Trained with special tokens of its own on text holding the words [CLS] and [SEP], the
    vocabulary learns them as ordinary tokens: the export must not wrap every text in them
    (``TemplateProcessing``), where ``skip_special_tokens`` cannot take them off."""
    from tokenizers import Tokenizer

    lines = read_slice(require_data(CORPORA / "si" / "news-bbcsinhala.txt"), 60_000).splitlines()
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(f"{'[CLS]' if i % 2 else '[SEP]'} {line}" for i, line in enumerate(lines))
                      + "\n", encoding="utf-8")
    tok = SGPETokenizer.train([corpus], vocab_size=1500, script="sinhala", progress=False, workers=1,
                              special_tokens=("<pad>", "<unk>"))
    assert {"[CLS]", "[SEP]"} <= tok.vocab.keys() - set(tok.special_tokens)  # the text's own tokens
    tok.save(tmp_path / "out")
    data = json.loads((tmp_path / "out" / "tokenizer.json").read_text(encoding="utf-8"))
    assert data["post_processor"] is None
    hf = Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    assert hf.encode("ශ්‍රී ලංකාව").ids == tok.encode("ශ්‍රී ලංකාව")  # add_special_tokens=True: nothing added


def test_special_token_text_in_the_corpus_is_said(tmp_path):
    """A special token that is ordinary text of the corpus (a frequent word) passes the export check
    (which reads special-token text as HF does), though HF, unlike encode(), turns each such word of
    the training text into the special token. Training says so."""
    from cli_run import wwho

    lines = read_slice(require_data(CORPORA / "si" / "flores200-devtest.txt"), 80_000).splitlines()
    word = "විසින්"
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    held = sum(word in line for line in lines[:2000])
    assert held > 5
    proc = wwho("train", "--kind", "sgpe", "--vocab-size", "1500", "--quiet", "--special", "[PAD]", "--special", word,
                "-o", tmp_path / "tok", corpus)
    assert proc.returncode == 0, proc.stderr
    assert f"wwho: warning: special-token text occurs in the lines checked ({word!r} in {held:,} lines)" \
        in proc.stderr.decode()
    quiet = wwho("train", "--kind", "sgpe", "--vocab-size", "1500", "--quiet", "-o", tmp_path / "plain", corpus)
    assert quiet.returncode == 0 and b"warning" not in quiet.stderr, quiet.stderr


def test_a_byte_level_mismatch_is_reported_not_a_crash(tmp_path):
    """The report of a mismatch does not ask ``tok.tokenize``, which byte-level tokenizers lack, or
    ``wwho export hf --verify`` would die with an AttributeError exactly where it finds a difference."""
    from tokenizers import Tokenizer

    from wwho.bytelevel import ByteBPE
    from wwho.export.verify import ExportMismatch

    ranks = {bytes([b]): b for b in range(256)}
    native = ByteBPE({**ranks, b"ab": 256, b"abc": 257}, pattern="gpt2")
    other = ByteBPE({**ranks, b"bc": 256, b"abc": 257}, pattern="gpt2")
    other.export_hf(tmp_path / "tokenizer.json")
    report = verify(native, Tokenizer.from_file(str(tmp_path / "tokenizer.json")), ["xabc abd", "plain"])
    assert report.id_mismatches == 1 and report.lines == 2
    assert "native ['abc', ' ', 'ab', 'd'] vs HF ['abc', 'Ġ', 'a', 'b', 'd']" in report.examples[0]
    with pytest.raises(ExportMismatch, match="1 with different ids"):
        report.check(tmp_path / "tokenizer.json")


def test_prefix_space_training_on_special_token_text_passes_its_check(tmp_path):
    """With ``--prefix-space``, a corpus line like ``... [CLS]x`` decodes as ``[CLS] x`` in wwho and
    in HF alike (documented): the training's export check must not count it as HF decoding
    otherwise, and ``wwho train`` exits 0. The export's promise is wwho's own decode; a real
    difference is still one line naming it."""
    from wwho.cli import main
    from wwho.export.verify import ExportMismatch, VerifyReport

    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව [CLS]x\n" + "ශ්‍රී ලංකාව ප්‍රජාතන්ත්‍රවාදී\n" * 50, encoding="utf-8")
    assert main(["train", "--kind", "sgpe", "--prefix-space", "--vocab-size", "600", "--quiet",
                 "-o", str(tmp_path / "m"), str(corpus)]) == 0
    tok = SGPETokenizer.load(tmp_path / "m")
    ids = tok.encode("ශ්‍රී ලංකාව [CLS]x", allowed_special="all")
    hf = __import__("tokenizers").Tokenizer.from_file(str(tmp_path / "m" / "tokenizer.json"))
    assert hf.encode("ශ්‍රී ලංකාව [CLS]x", add_special_tokens=False).ids == ids
    assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids) == "ශ්‍රී ලංකාව [CLS] x"
    report = VerifyReport(lines=2, decode_mismatches=1, examples=["  HF decode differs for 'x'"])
    with pytest.raises(ExportMismatch, match=r"^[^\n]*1 not decoded as the native tokenizer decodes them; "
                                             r"HF decode differs for 'x'$"):
        report.check(tmp_path / "t.json")


def test_a_verify_batch_is_bounded_by_its_text_not_its_documents():
    # Both encoders hold a whole batch's ids (HF its Encodings): 1,000 documents of 16 KiB took
    # 1.9 GB. A batch now ends at BATCH_CHARS characters or `batch` documents, and a longer
    # document goes alone.
    from wwho.export import verify as module

    docs = ["a" * 100] * 50 + ["b" * (module.BATCH_CHARS + 5)] + ["c" * 1000] * 600
    chunks = list(module._chunks(iter(docs), 1000, module.BATCH_CHARS))
    assert [d for c in chunks for d in c] == docs
    assert all(len(c) == 1 or sum(map(len, c)) <= module.BATCH_CHARS for c in chunks)
    assert [len(c) for c in chunks] == [50, 1, 262, 262, 76]
    assert list(module._chunks(iter(["x"] * 2500), 1000, module.BATCH_CHARS)) == [["x"] * 1000] * 2 + [["x"] * 500]


def test_the_special_text_note_names_tokens_in_the_order_the_lines_hold_them():
    """The names were gathered through a set, so the warning listed them in another order from one
    run to the next (Python's string hashes are seeded per process): each seed here gives one text."""
    import subprocess
    import sys

    code = ("import warnings\nwarnings.simplefilter('ignore')\nimport wwho\nfrom tokenizers import Tokenizer\n"
            "from wwho.export.verify import verify\n"
            "tok = wwho.SGPETokenizer.train_from_iterator(['ශ්‍රී ලංකාව'] * 40, vocab_size=300, progress=False)\n"
            "hf = Tokenizer.from_str(dict(tok.files())['tokenizer.json'].decode())\n"
            "print(verify(tok, hf, ['a [MASK] b [CLS] c [SEP] [PAD]', '[CLS] x']).special_text_note())\n")
    notes = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(4)}
    assert len(notes) == 1, notes
    assert "('[MASK]' in 1 line, '[CLS]' in 2 lines, '[SEP]' in 1 line, '[PAD]' in 1 line)" in notes.pop()


@pytest.mark.filterwarnings("ignore::wwho.errors.ScriptWarning")  # (text of five scripts, on purpose)
def test_words_of_scripts_the_mode_lacks_after_its_own_get_identical_ids():
    """Text of a script a multi-script mode has no schema for (Telugu, Odia, Bengali in mixed mode)
    right after one it has, on words of two scripts written together: cut as characters there as
    anywhere, which the export's merges over characters follow."""
    require_data(CORPORA)
    langs = ["hi", "si", "te", "or", "bn"]
    text = "\n".join(read_slice(CORPORA / lang / "flores200-devtest.txt", 40_000) for lang in langs)
    tok = SGPETokenizer.train_from_iterator(text.splitlines(), vocab_size=3000, script="mixed", progress=False)
    hf = build_hf_tokenizer(tok)
    held = {lang: read_slice(CORPORA / lang / "flores200-devtest.txt", 80_000)[40_000:].split()[:60]
            for lang in langs}
    texts = ["कనియమ", "कేడియో", "कକାର୍", "ोবিশ", "१ాలి", "।ାରୁ"]
    texts += [a[-3:] + b for x, y in itertools.permutations(langs, 2) for a, b in zip(held[x], held[y])]
    bad = [t for t in texts if tok.encode(t, allowed_special="all") != hf.encode(t, add_special_tokens=False).ids]
    assert bad == [], (len(bad), len(texts))
