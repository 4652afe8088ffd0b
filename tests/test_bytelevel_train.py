"""Byte-level BPE training: equal to a naive trainer (recount everything each step) on small
fuzzed corpora, deterministic across worker counts on real news, lossless and exactly exported
to Hugging Face, special tokens never merged, the CLI, and clear errors.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import bpe_reference as ref
import pytest
import regex
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wwho.bytelevel import ByteBPE
from wwho.bytelevel.pretokenize import PATTERNS
from wwho.cli import main as wwho_main
from wwho.errors import CorpusError, VocabError

NEWS = DATA / "corpora" / "en" / "news-lk_news.txt"
SPECIAL = "<|endoftext|>"


def naive_train(docs: list[str], *, pattern: str, vocab_size: int, specials: list[str], min_freq: int):
    """From the rules: cut at specials, findall, count pieces, naive BPE over bytes (ties: greater pair)."""
    counts: Counter[bytes] = Counter()
    rx = regex.compile(PATTERNS[pattern])
    for doc in docs:
        parts = regex.split("|".join(map(regex.escape, specials)), doc) if specials else [doc]
        for part in parts:
            counts.update(p.encode() for p in rx.findall(part))
    words = sorted(counts)
    merges, symbols, _, _ = ref.train(
        [list(w) for w in words], [counts[w] for w in words], [bytes([b]) for b in range(256)],
        max_symbols=vocab_size - len(specials), min_freq=min_freq, tie_break="greater",
    )
    return [(symbols[a], symbols[b]) for a, b in merges], symbols


def _write(directory: Path, docs: list[str]) -> Path:
    path = directory / "corpus.txt"
    path.write_text("".join(d + "\n" for d in docs), encoding="utf-8")
    return path


_doc = st.lists(
    st.one_of(
        st.sampled_from(["the", " the", "then", " cat", "at", "  ", "123", "4567", "'s", "!!", SPECIAL,
                         "ශ්\u200dරී", "ලං"]),
        st.text(alphabet="abt hé1'!\t", max_size=6),
    ),
    min_size=1,
    max_size=12,
).map("".join).filter(lambda d: d.strip() and d.strip("\t\r\n ") == d)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(_doc, min_size=1, max_size=15),
    pattern=st.sampled_from(["gpt2", "gpt4", "o200k"]),
    extra=st.integers(0, 60),
    min_freq=st.integers(1, 3),
    with_special=st.booleans(),
)
def test_equals_naive_trainer(docs, pattern, extra, min_freq, with_special):
    specials = [SPECIAL] if with_special else []
    if not any(part for doc in docs for part in (doc.split(SPECIAL) if specials else [doc])):
        # Nothing but special tokens (hypothesis found docs=["<|endoftext|>"]): no text to train on.
        with tempfile.TemporaryDirectory() as d, pytest.raises(CorpusError, match="has no text"):
            ByteBPE.train(_write(Path(d), docs), vocab_size=256 + extra + len(specials), pattern=pattern,
                          special_tokens=specials, min_freq=min_freq, workers=1, progress=False)
        return
    with tempfile.TemporaryDirectory() as d:
        tok = ByteBPE.train(_write(Path(d), docs), vocab_size=256 + extra + len(specials), pattern=pattern,
                            special_tokens=specials, min_freq=min_freq, workers=1, progress=False)
    merges, symbols = naive_train(docs, pattern=pattern, vocab_size=256 + extra + len(specials),
                                  specials=specials, min_freq=min_freq)
    assert tok.merges == merges
    assert dict(tok.ranks) == {s: i for i, s in enumerate(symbols)}
    assert tok.special_tokens == {s: len(symbols) + k for k, s in enumerate(specials)}
    for doc in docs:  # a trained tokenizer is lossless
        assert tok.decode(tok.encode(doc, allowed_special="all")) == doc


@pytest.fixture(scope="module")
def news_slice(tmp_path_factory):
    if not NEWS.exists():
        pytest.skip(f"{NEWS} is absent: the shared data folder is needed for this test")
    lines = NEWS.read_text(encoding="utf-8").splitlines()[:1500]
    return _write(tmp_path_factory.mktemp("news"), lines), lines


def test_deterministic_across_worker_counts(news_slice, tmp_path):
    path, _ = news_slice
    outputs = []
    for workers in (1, 2):
        tok = ByteBPE.train(path, vocab_size=1500, special_tokens=[SPECIAL], workers=workers, progress=False)
        out = tok.save(tmp_path / f"w{workers}")
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outputs[0] == outputs[1]
    assert set(outputs[0]) == {"bytelevel.json", "merges.txt", "ranks.tiktoken", "wwho-manifest.json"}


def test_trained_tokenizer_exports_exactly(news_slice, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    path, lines = news_slice
    tok = ByteBPE.train(path, vocab_size=1200, pattern="gpt4", workers=1, progress=False)
    tok.export_hf(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    sample = lines[:300] + ["2020 year 123456 x", "  two  spaces \n\n new"]
    assert [e.ids for e in hf.encode_batch(sample)] == [tok.encode(x) for x in sample]
    back = ByteBPE.load(tok.save(tmp_path / "saved"))
    assert [back.encode(x) for x in sample] == [tok.encode(x) for x in sample]


def test_special_tokens_are_never_merged(tmp_path):
    docs = [f"a{SPECIAL}b", f"{SPECIAL}{SPECIAL} x", f"c {SPECIAL} d"] * 50
    tok = ByteBPE.train(_write(tmp_path, docs), vocab_size=400, special_tokens=[SPECIAL], min_freq=1,
                        workers=1, progress=False)
    assert all(b"<|" not in t and b"|>" not in t for t in tok.ranks)
    expected = [ord("a"), tok.special_tokens[SPECIAL], ord("b")]
    assert tok.encode(f"a{SPECIAL}b", allowed_special="all") == expected


def test_special_tokens_of_usual_names_are_the_exports_roles(tmp_path):
    """A trained tokenizer's ``--special <pad>`` was no role of its Hugging Face files: transformers
    refused ``padding=True``. Tokens with usual names take their roles, as SGPE's do; nothing is added
    to encodings, and a token of another name takes none."""
    transformers = pytest.importorskip("transformers")

    corpus = _write(tmp_path, ["hello world", "hello there world", "the world says hello"] * 20)
    assert wwho_main(["train", "--kind", "bytelevel", str(corpus), "--out", str(tmp_path / "out"),
                      "--vocab-size", "300", "--special", "<pad>", "--special", SPECIAL, "--special", "<tool>",
                      "--quiet", "--workers", "1"]) == 0
    tok = ByteBPE.load(tmp_path / "out")
    assert (tok.pad_id, tok.eos_id, tok.bos_id) == (tok.special_tokens["<pad>"], tok.special_tokens[SPECIAL], None)
    assert not tok.add_bos and not tok.add_eos
    hf = transformers.AutoTokenizer.from_pretrained(tmp_path / "out")
    assert (hf.pad_token, hf.eos_token, hf.bos_token) == ("<pad>", SPECIAL, None)
    batch = hf(["hello", "hello world says"], padding=True)
    short, long = batch["input_ids"]
    assert long == tok.encode("hello world says") and short[: len(tok.encode("hello"))] == tok.encode("hello")
    assert set(short[len(tok.encode("hello")):]) == {tok.pad_id} and len(short) == len(long)
    assert tok.encode("hello", add_special_tokens=True) == tok.encode("hello")


def test_cli(tmp_path, capsys):
    corpus = _write(tmp_path, ["hello world", "hello there world", "the world says hello"] * 20)
    code = wwho_main(["train", "--kind", "bytelevel", str(corpus), "--out", str(tmp_path / "out"),
                      "--vocab-size", "300", "--special", SPECIAL, "--pattern", "o200k", "--quiet",
                      "--workers", "1"])
    assert code == 0
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        "bytelevel.json", "merges.txt", "ranks.tiktoken", "special_tokens_map.json", "tokenizer.json",
        "tokenizer_config.json", "wwho-manifest.json"}
    tok = ByteBPE.load(tmp_path / "out")
    assert 257 < tok.vocab_size <= 300 and tok.pretokenizer.name == "o200k"  # a tiny corpus runs out of pairs
    assert "wrote" in capsys.readouterr().err


def test_errors(tmp_path):
    corpus = _write(tmp_path, ["some text"])
    with pytest.raises(VocabError, match=r"too small: it must hold the 256 byte tokens \(at least 256\)"):
        ByteBPE.train(corpus, vocab_size=100, progress=False)
    with pytest.raises(VocabError, match=r"256 byte tokens and the 2 special tokens \(at least 258\)"):
        ByteBPE.train(corpus, vocab_size=257, special_tokens=["<s>", "</s>"], progress=False)
    with pytest.raises(VocabError, match="min_freq"):
        ByteBPE.train(corpus, vocab_size=300, min_freq=0, progress=False)
    with pytest.raises(VocabError, match="single-regex"):
        ByteBPE.train(corpus, vocab_size=300, pattern="deepseek-llm", progress=False)
    with pytest.raises(VocabError, match="non-empty"):
        ByteBPE.train(corpus, vocab_size=300, special_tokens=[""], progress=False)
    with pytest.raises(CorpusError, match="no such file"):
        ByteBPE.train(tmp_path / "absent.txt", vocab_size=300, progress=False)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(CorpusError, match="no text"):
        ByteBPE.train(empty, vocab_size=300, workers=1, progress=False)
    argv = ["train", "--kind", "bytelevel", str(tmp_path / "absent.txt"), "--out", str(tmp_path / "o"),
            "--quiet"]
    assert wwho_main(argv) == 2


def test_lone_surrogates_train_as_the_encoder_sees_them(tmp_path):
    """Encoding replaces a lone surrogate by U+FFFD (as tiktoken does); training now does too, so no
    token is learned from bytes that encoding never produces."""
    import json

    texts = ["abc \ud800 abc", "x\udfffy abc", "\ud83c\udfcf abc"] * 40
    with_surrogates = tmp_path / "s.jsonl"
    with_surrogates.write_text("\n".join(json.dumps({"text": t}) for t in texts) + "\n", encoding="ascii")
    replaced = tmp_path / "r.jsonl"
    cleaned = [t.encode("utf-16", "surrogatepass").decode("utf-16", "replace") for t in texts]
    replaced.write_text("\n".join(json.dumps({"text": t}) for t in cleaned) + "\n", encoding="ascii")
    a = ByteBPE.train(with_surrogates, vocab_size=300, progress=False, workers=1)
    b = ByteBPE.train(replaced, vocab_size=300, progress=False, workers=1)
    assert a.ranks == b.ranks and a.merges == b.merges
    assert not any(b"\xed\xa0" in token or b"\xed\xbf" in token for token in a.ranks)
    assert a.decode(a.encode("abc \ud800")) == "abc \ufffd"


# --- counting in the core (count_bytelevel) against the `regex` module's findall ---------------------

def _reference_counts(docs: list[str], pattern: str) -> Counter[bytes]:
    from reference.counting import count_pieces

    counts = count_pieces(docs, pattern=PATTERNS[pattern], engine="regex", workers=1)
    return Counter({piece.encode("utf-8"): n for piece, n in counts.items()})


def _core_counts(docs: list[str], pattern: str, **options) -> dict[bytes, int]:
    from wwho.bytelevel.train import count_bytelevel

    counts = count_bytelevel(docs, pattern=pattern, specials=[], progress=False, **options)
    return {piece.encode("utf-8"): n for piece, n in counts.items()}


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4", "o200k"])
@pytest.mark.parametrize("lang", ["en", "si", "hi"])
def test_core_counts_equal_regex_findall_on_real_text(lang, pattern):
    files = sorted((DATA / "corpora" / lang).glob("*.txt"))
    if not files:
        pytest.skip(f"{DATA / 'corpora' / lang} is absent: the shared data folder is needed for this test")
    docs = [line for path in files for line in path.read_text(encoding="utf-8").splitlines()[:400]]
    expected = _reference_counts(docs, pattern)
    # Small batches and two threads: counts must not depend on how the work is cut.
    assert _core_counts(docs, pattern, workers=2, batch_chars=5_000) == expected
    assert _core_counts(docs, pattern, workers=1) == expected


_no_surrogates = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(docs=st.lists(_no_surrogates, max_size=8), pattern=st.sampled_from(["gpt2", "gpt4", "o200k"]),
       workers=st.integers(1, 3))
def test_core_counts_equal_the_reference_on_any_text(docs, pattern, workers):
    """Any code point: against the pure-Python pre-tokenizer pinned to the core's Unicode 16.0 (the
    installed ``regex`` module may have newer tables: hypothesis found U+12550, assigned since, which
    plain ``findall`` reads as a letter and the core as unassigned)."""
    from reference.pretokenize_py import ReferencePretokenizer

    ref = ReferencePretokenizer.named(pattern)
    expected = Counter(piece.encode("utf-8") for doc in docs for piece in ref.split(doc))
    assert _core_counts(docs, pattern, workers=workers, batch_chars=7) == expected


@settings(max_examples=100, deadline=None)
@given(docs=st.lists(st.text(st.characters(codec="latin-1") | st.sampled_from("ශ්‍රීලංකා हिन्दी ’“”…—€"),
                             max_size=40), max_size=8),
       pattern=st.sampled_from(["gpt2", "gpt4", "o200k"]))
def test_core_counts_equal_regex_findall_on_generated_text(docs, pattern):
    """Characters whose Unicode properties are the same in every version: plain ``findall``."""
    assert _core_counts(docs, pattern, workers=2, batch_chars=7) == _reference_counts(docs, pattern)


def test_training_reads_every_format_and_bound_like_before(tmp_path):
    """JSONL (gzip), a bad line skipped, a line over max_line_bytes: the documents counted are
    exactly those iter_documents yields, whatever the file's format."""
    import gzip
    import json

    docs = ["the cat sat on the mat", "ශ්‍රී ලංකා news 2024", "then the cat's 123 hats!!"] * 30
    plain = _write(tmp_path, docs)
    packed = tmp_path / "c.jsonl.gz"
    with gzip.open(packed, "wt", encoding="utf-8") as f:
        for n, doc in enumerate(docs):
            f.write(json.dumps({"text": doc}) + "\n")
            if n == 5:
                f.write("{not json\n")  # a bad line
            if n == 9:
                f.write(json.dumps({"text": "x" * 5000}) + "\n")  # over max_line_bytes
    with pytest.raises(CorpusError):
        ByteBPE.train(packed, vocab_size=320, progress=False, workers=2)
    a = ByteBPE.train(plain, vocab_size=320, progress=False, workers=2)
    b = ByteBPE.train(packed, vocab_size=320, progress=False, workers=2, skip_bad_lines=True, max_line_bytes=4096)
    assert a.ranks == b.ranks and a.merges == b.merges
    merges, _ = naive_train(docs, pattern="gpt4", vocab_size=320, specials=[], min_freq=2)
    assert a.merges == merges


@pytest.mark.parametrize("pattern", [r"\w*", r"\s*|\S+", "x?", ""])
def test_a_pre_tokenizer_that_matches_the_empty_string_is_refused(tmp_path, pattern):
    """Refused: trained, its HF export would cut many lines otherwise than the tokenizer does."""
    from wwho.bytelevel import ByteBPE
    from wwho.errors import VocabError

    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat, sat\n" * 20)
    with pytest.raises(VocabError, match="matches the empty string"):
        ByteBPE.train(corpus, vocab_size=300, pattern=pattern, progress=False)


@pytest.mark.parametrize("pattern", [r"\w*", r"\s*|\S+"])
def test_the_cli_names_the_empty_match_first(tmp_path, pattern):
    """``wwho train --kind bytelevel --pattern`` of a regex that matches the empty string says so,
    not that Hugging Face's engine reads it otherwise (whose advice, --no-hf, would only lead to
    this refusal)."""
    from conftest import run_wwho

    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat, sat\n" * 20)
    proc = run_wwho("train", "--kind", "bytelevel", str(corpus), "--out", str(tmp_path / "o"), "--pattern", pattern)
    assert proc.returncode == 2 and "matches the empty string" in proc.stderr and "--no-hf" not in proc.stderr


def test_a_one_byte_special_token_is_refused_before_training(tmp_path):
    """Refused before training, not only at the export, once counting and merging are done."""
    from wwho.bytelevel import ByteBPE
    from wwho.errors import VocabError

    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat, sat\n" * 20)
    with pytest.raises(VocabError, match="special token 'e' is one byte"):
        ByteBPE.train(corpus, vocab_size=300, special_tokens=["e"], progress=False)


def test_a_special_token_found_as_words_of_the_text_is_warned_of(recwarn):
    """A special token that is a word of the pre-tokenizer's, found in the training text, is cut out
    of it there: said, with the count. Markup between documents is not warned of."""
    from wwho.errors import WwhoWarning

    docs = ["in the end the cat sat<|endoftext|>on the mat"] * 10
    tok = ByteBPE.train_from_iterator(docs, vocab_size=265, special_tokens=[" the", "<|endoftext|>"],
                                      progress=False)
    said = [str(w.message) for w in recwarn if issubclass(w.category, WwhoWarning)]
    assert said == ["special token ' the' occurs 30 times in the training text, where it is ordinary text (a word "
                    "of the pre-tokenizer's): training left it out there, and encode refuses text holding it unless "
                    "allowed_special names it; choose special tokens that text does not contain, such as "
                    "'<|endoftext|>'"], said
    assert tok.encode("the end", disallowed_special=()) == tok.encode_ordinary("the end")
