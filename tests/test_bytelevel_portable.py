"""A custom pre-tokenizer regex reaches a tokenizer.json only if Hugging Face's engine (Oniguruma)
splits text as wwho's core does; each refused construct is shown to differ in Hugging Face itself,
and each accepted regex to split alike on random text."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.bytelevel import ByteBPE
from wwho.bytelevel.portable import check_portable, construct_that_differs
from wwho.bytelevel.pretokenize import GGUF_PRETOKENIZERS, PATTERNS, Pretokenizer
from wwho.errors import VocabError

tokenizers = pytest.importorskip("tokenizers")


def hf_split(pattern: str, text: str) -> list[str]:
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "isolated")
    return [piece for piece, _ in split.pre_tokenize_str(text)]


# (regex, a text it splits otherwise in Hugging Face, what the refusal names); each exported would
# give other ids than wwho's.
DIFFERING = [
    (r"[^\n]+$|\S+|\s+", "ab cd\nef gh\n", "'\\$'"),
    (r"^\S+|\S|\s+", "ab cd\nef gh\n", "'\\^'"),
    (r"(?m).{1,3}|\n", "ab\ncd", r"inline flags \(\?m"),
    (r"\w+|\W", "ශ්\u200dරී ලංකාව क्\u200cष", r"\\w, which holds ZWJ"),
    (r"\w+(?:'\w+)?|[^\w\s]+|\s+", "don't ශ්\u200dරී", r"\\w, which holds ZWJ"),
    (r"[[:alpha:]]+|[^[:alpha:]]", "éa", "POSIX class"),
]


@pytest.mark.parametrize(("pattern", "text", "named"), DIFFERING)
def test_each_refused_construct_splits_otherwise_in_huggingface(pattern, text, named):
    assert hf_split(pattern, text) != Pretokenizer((pattern,)).split(text)  # the engines do differ
    assert construct_that_differs(pattern) is not None
    with pytest.raises(VocabError, match=named):
        check_portable(pattern)


def test_a_regex_huggingface_cannot_compile_is_refused():
    for pattern in (r"(?s).{1,4}", r"(?P<word>\p{L}+)|."):  # valid in wwho, errors in Oniguruma
        Pretokenizer((pattern,))
        with pytest.raises(VocabError, match="Oniguruma"):
            check_portable(pattern)


def test_the_probe_finds_what_no_construct_names():
    """Case folding: Oniguruma folds ß to ss; a regex of no refused construct, caught by the probe."""
    pattern = r"(?i)ß|\S|\s+"
    assert construct_that_differs(pattern) is None
    assert hf_split(pattern, "SS") != Pretokenizer((pattern,)).split("SS")
    with pytest.raises(VocabError, match=r"splits text differently.*wwho \['S', 'S'"):
        check_portable(pattern)


@pytest.mark.parametrize(("pattern", "text"), [
    (r"(?i)ß|[^\s]+|\s+", "SSH keys"),  # SS alone is one piece in both engines; SSH is not
    (r"(?i:ß)|\S+|\s+", "ssl"),
    (r"(?i)ß|[a-z]+|\S|\s+", "SSH"),
    (r"(?i)ﬁ|\S+|\s+", "first"),
])
def test_a_fold_into_several_characters_inside_a_word_is_found(pattern, text):
    """Oniguruma folds one character into several (``ß`` into ``ss``) and so cuts ``SS`` out of
    ``SSH``, where wwho keeps the word: the probe spells every such fold inside words."""
    assert construct_that_differs(pattern) is None
    assert hf_split(pattern, text) != Pretokenizer((pattern,)).split(text)  # the engines do differ
    with pytest.raises(VocabError, match="splits text differently"):
        check_portable(pattern)


@pytest.mark.parametrize("pattern", [
    r"\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+",
    r"[\p{L}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}]+|[^\p{L}\p{M}\p{Nd}\p{Pc}\s]+|\s+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    r"\S+\z|\A\S+|\S+|\s+",
    r"\p{Sinhala}+|\p{Devanagari}+|[\^$\[\]]+|.",
])
def test_portable_regexes_pass_and_split_alike_on_random_text(pattern):
    check_portable(pattern)
    ours = Pretokenizer((pattern,))

    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet=st.sampled_from("ab AB\n\r\t'$^ßſ\u212a\u200c\u200dශ්රීक्षि١2\u00a0👍"), max_size=30))
    def alike(text):
        assert hf_split(pattern, text) == ours.split(text)

    alike()


def test_named_pretokenizers_pass():
    for pattern in PATTERNS.values():
        check_portable(pattern)
    for spec in GGUF_PRETOKENIZERS.values():
        for pattern in spec.patterns:
            check_portable(pattern)
        for pattern in spec.byte_patterns:
            check_portable(pattern, byte_level=True)


def test_a_named_regex_wrapped_as_an_extension_wraps_it_passes_if_its_other_part_does():
    # wwho extend runs (?:W)|(?:B) for each base regex B. deepseek-llm's "\s+$" named a '$' once
    # wrapped, so a deepseek-llm base was refused, after the whole corpus was learned, although the
    # extension splits alike in both engines (tests/test_extend.py checks its ids in Hugging Face).
    word = r"(?: ?[\u0D80-\u0DFF][\u0D80-\u0DFF\u200D]*)"
    for base in ("\\s+$", PATTERNS["o200k"]):
        check_portable(f"(?:{word})|(?:{base})")
    with pytest.raises(VocabError, match=r"\\w, which holds ZWJ"):  # the other part is still checked
        check_portable(r"(?:\w+)|(?:\s+$)")
    with pytest.raises(VocabError, match="'\\$'"):  # a base regex that is no named one is checked whole
        check_portable(f"(?:{word})|(?:[^\n]+$)")
    # three alternatives: "a)|(?:[^\n]+$" is no W (it does not compile alone), so the whole is checked
    with pytest.raises(VocabError, match="'\\$'"):
        check_portable(r"(?:a)|(?:[^\n]+$)|(?:\s+$)")


@pytest.fixture(scope="module")
def joiner_model():
    corpus = ["ශ්\u200dරී ලංකාව ශ්\u200dරී ලංකා", "hello world, hello there"] * 20
    return ByteBPE.train_from_iterator(corpus, vocab_size=280, pattern=r"\w+|[^\w\s]+|\s+")


def test_export_of_a_regex_that_differs_is_refused(joiner_model, tmp_path):
    """Not written, where Hugging Face would cut every word at its joiner (other ids)."""
    for write in (lambda: joiner_model.export_hf(tmp_path / "t.json"), lambda: joiner_model.save(tmp_path / "d", hf=True)):
        with pytest.raises(VocabError, match=r"cannot export: .*\\w, which holds ZWJ"):
            write()
    assert not (tmp_path / "t.json").exists() and not (tmp_path / "d").exists()
    joiner_model.save(tmp_path / "own")  # wwho's own files need no Hugging Face form
    assert ByteBPE.load(tmp_path / "own").encode("ශ්\u200dරී") == joiner_model.encode("ශ්\u200dරී")


def test_a_tokenizer_json_whose_regex_differs_is_run_by_huggingface(tmp_path):
    """A tokenizer.json of such a regex (written by Hugging Face's own trainer) is not run by
    ByteBPE, which would split it otherwise: load_tokenizer hands it to Hugging Face."""
    import wwho
    from wwho.bytelevel.hf_files import NotByteLevel

    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Sequence([
        tokenizers.pre_tokenizers.Split(tokenizers.Regex(r"\w+|[^\w\s]+|\s+"), "isolated"),
        tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=300, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["ශ්\u200dරී ලංකාව"] * 30, trainer)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    with pytest.raises(NotByteLevel, match=r"\\w, which holds ZWJ"):
        ByteBPE.from_hf(path)
    loaded = wwho.load_tokenizer(path)
    text = "ශ්\u200dරී ලංකාව"
    assert loaded.encode(text) == tok.encode(text).ids


def test_cli_refuses_such_a_pattern_before_training_unless_no_hf(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්\u200dරී ලංකාව hello\n" * 50, encoding="utf-8")
    run = [sys.executable, "-m", "wwho", "train", "--kind", "bytelevel", "--pattern", r"\w+|[^\w\s]+|\s+",
           "--vocab-size", "300", "--quiet", str(corpus)]
    refused = subprocess.run([*run, "--out", str(tmp_path / "a")], capture_output=True, text=True)
    assert refused.returncode == 2 and not (tmp_path / "a").exists()
    assert "--pattern: the pre-tokenizer regex" in refused.stderr and "--no-hf" in refused.stderr
    assert refused.stderr.count("\n") == 1
    done = subprocess.run([*run, "--no-hf", "--out", str(tmp_path / "b")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "b" / "tokenizer.json").exists()
    assert json.loads((tmp_path / "b" / "bytelevel.json").read_text())["pretokenizer"]["patterns"] == [run[7]]
