"""Pre-tokenizers: the GPT-2 byte mapping against Hugging Face's, regex sequences against
Hugging Face ``Split(Isolated)`` sequences, gap keeping, the Unicode 16.0 pinning, and errors.
"""

from __future__ import annotations

import unicodedata

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.bytelevel import _unicode16
from wwho.bytelevel.pretokenize import (
    BYTE_TO_UNICODE,
    GGUF_PRETOKENIZERS,
    O200K_PATTERN,
    PATTERNS,
    Pretokenizer,
    bytes_to_unicode,
    unicode_to_bytes,
)
from wwho.errors import VocabError

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, pre_tokenizers


def test_byte_mapping_is_huggingface_bytelevel_alphabet():
    assert sorted(BYTE_TO_UNICODE.values()) == sorted(pre_tokenizers.ByteLevel.alphabet())
    hf = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    data = bytes(range(256)).decode("latin-1")  # every byte once, as its own char
    text = bytes(range(32, 127)).decode() + "é中🦙\n\t "
    assert [p for p, _ in hf.pre_tokenize_str(text)] == [bytes_to_unicode(text.encode())]
    assert len(set(BYTE_TO_UNICODE.values())) == 256 and data


@given(st.binary())
def test_byte_mapping_round_trip(data):
    assert unicode_to_bytes(bytes_to_unicode(data)) == data


@pytest.mark.parametrize("text", ["a b", "x\n", "€", "\u00ad", "\x00"])
def test_unicode_to_bytes_rejects_non_bytelevel_text(text):
    assert unicode_to_bytes(text) is None


def test_known_values():
    assert bytes_to_unicode(b" hello\n") == "\u0120hello\u010a"  # "Ġhello" + "Ċ" as in GPT-2's vocab


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=40))
@pytest.mark.parametrize("name", ["deepseek-coder", "deepseek-llm", "starcoder", "falcon", "llama-bpe"])
def test_sequences_split_like_huggingface(name, text):
    ours = Pretokenizer.named(name)
    hf = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(p), "isolated") for p in ours.patterns])
    assert ours.split(text) == [piece for piece, _ in hf.pre_tokenize_str(text)]


def test_gaps_are_kept():
    assert Pretokenizer(("a+",)).split("xaay") == ["x", "aa", "y"]
    assert Pretokenizer(("a+", "y")).split("xaayz") == ["x", "aa", "y", "z"]
    assert Pretokenizer((r"(?=b)",)).split("abab") == ["abab"]  # empty matches cut nothing
    assert Pretokenizer((r"(a)",)).split("xa") == ["x", "a"]  # groups do not change pieces


def test_named_and_errors():
    assert Pretokenizer.named("gpt4").patterns == (PATTERNS["cl100k"],)
    assert Pretokenizer.coerce("O200K").patterns == (O200K_PATTERN,)
    assert Pretokenizer.coerce(["a", "b"]).patterns == ("a", "b")
    with pytest.raises(VocabError, match="unknown pre-tokenizer 'nope'; known: .*deepseek-llm.*o200k"):
        Pretokenizer.named("nope")
    with pytest.raises(VocabError, match="invalid pre-tokenizer regex"):
        Pretokenizer(("[",))
    with pytest.raises(VocabError, match="unicode="):
        Pretokenizer(("a",), unicode="15.0")
    required = ("llama-bpe", "qwen2", "gpt-2", "falcon", "deepseek-llm", "deepseek-coder", "starcoder", "mpt",
                "refact", "command-r")
    for name in required:
        assert name in GGUF_PRETOKENIZERS


def test_json_round_trip():
    p = Pretokenizer.named("falcon")
    assert Pretokenizer.from_json(p.to_json()) == p


def _ranges():
    for item in _unicode16.UNASSIGNED.split():
        lo, _, hi = item.partition("-")
        yield int(lo, 16), int(hi or lo, 16)


def test_unicode16_table_is_consistent_with_python_unicodedata():
    """Characters stay assigned once assigned, so every code point unassigned in Unicode 16.0 is
    unassigned in the (older) tables of this Python too, and the two differ only by additions."""
    unassigned = {cp for lo, hi in _ranges() for cp in range(lo, hi + 1)}
    assert all(unicodedata.category(chr(cp)) == "Cn" for cp in unassigned)
    assert 0x0CF3 not in unassigned and 0x105C0 not in unassigned  # added in 15.0 and 16.0
    assert 0x0378 in unassigned and 0xFDD0 in unassigned


def test_pinning_only_changes_post_16_characters():
    pinned, unpinned = Pretokenizer((r"\p{L}+",)), Pretokenizer((r"\p{L}+",), unicode=None)
    new = "\u0558"  # an Armenian letter added after Unicode 16.0
    if regex.match(r"\p{L}", new) is None:
        pytest.skip("this regex module predates the letter; nothing to pin")
    assert unpinned.split("a" + new + "b") == ["a" + new + "b"]
    assert pinned.split("a" + new + "b") == ["a", new, "b"]  # unassigned in 16.0: not a letter
    text = "ශ්‍රී ලංකා 🦙 中文"
    assert pinned.split(text) == unpinned.split(text)
    assert Pretokenizer(("[\u0500-\u05ff]+",)).split("a" + new) == ["a", new]  # literal ranges: not pinned
