"""Pre-tokenizers: the core (Rust) against the pure-Python reference on arbitrary text for every
named and GGUF pre-tokenizer and every Hugging Face form ``from_hf`` builds, against Hugging Face
``Split(Isolated)`` sequences, the GPT-2 byte mapping against Hugging Face's, gap keeping,
Unicode 16.0 classes, and errors.

Oracles: Hugging Face ``tokenizers`` (a different engine, Oniguruma) and the ``regex`` module
(the reference, ``tests/reference/pretokenize_py.py``, which pins Unicode 16.0 by stand-ins).
tiktoken's own regexes are checked through ids in test_bytelevel.py.
"""

from __future__ import annotations

import unicodedata

import pytest
import regex
from conftest import CORPORA, FULL, read_slice
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import unicode16
from reference.pretokenize_py import ReferencePretokenizer

from wwho.bytelevel.pretokenize import (
    _HF_GPT2,
    _LLAMA3,
    _PUNCT_RUN,
    _QWEN2,
    BYTE_TO_UNICODE,
    GGUF_PRETOKENIZERS,
    O200K_PATTERN,
    PATTERNS,
    Pretokenizer,
    bytes_to_unicode,
    hf_punctuation_class,
    unicode_to_bytes,
)
from wwho.errors import VocabError

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, pre_tokenizers  # noqa: E402 (after the importorskip above)

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- text that exercises every class boundary the regexes care about ---------------------------

_SPACES = " \t\n\r\x0b\x0c\x1c\x1f\x85\u00a0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000\u200b\ufeff"
_EDGES = (
    "'sStTmMdDlLvVrReE\u017f\u212a/\\-_.,!?;:\"`~@#$%^&*()[]{}<>|+=·•…—–"  # contractions, punctuation, symbols
    "0123456789٣३൬௧\u2160\u00b2\u00bd"  # Nd in several scripts, Nl, No
    "aAzZéÉßǅǈǋᾈ\u1e9eʰˆ々ー\u05d0中ශක\u0dca\u0dcf\u0dd2\u200d\u200c"  # Ll, Lu, Lt, Lm, Lo, Sinhala marks, joiners
    "\u0300\u0301\u0903\u20dd\u0488"  # Mn, Mc, Me
    "\u0295\u0378\u0558\ua7ce\ufdd0\ue000\U0001f999\U0001fbfa\U000e0001\U0010fffd\U0001e030\U000105c0\u1c89"  # Unicode 16/17 edges, unassigned, PUA, astral
    "😶\u200d🌫️🦙"
)
_piece = st.one_of(
    st.text(max_size=12),  # any code point but surrogates: astral, unassigned, controls
    st.text(alphabet=_SPACES, max_size=8),
    st.text(alphabet=_EDGES, max_size=10),
    st.text(alphabet=_EDGES + _SPACES, max_size=10),
    st.sampled_from(["'s", "'LL", "'Re", " 's", "\r\n", " \n\n ", "  x", "\u017fs", "'\u017f", "123456", "a1b2"]),
)
texts = st.lists(_piece, max_size=10).map("".join)

# Every distinct regex list the package knows: named, GGUF, and the Hugging Face forms from_hf builds.
_HF_FORMS = {
    "hf-gpt2": (_HF_GPT2,),
    "hf-digits": (r"\p{N}",),
    "hf-digits-contiguous": (r"\p{N}+",),
    "hf-punct-contiguous": (hf_punctuation_class() + "+",),
    "hf-punct-isolated": (hf_punctuation_class(),),
    "llama3-split-then-bytelevel": (_LLAMA3, _HF_GPT2),
    "qwen2": (_QWEN2,),
}
_SEQUENCES = {
    **{name: (PATTERNS[name],) for name in ("gpt2", "cl100k", "o200k")},
    **{name: spec.patterns for name, spec in GGUF_PRETOKENIZERS.items()},
    **_HF_FORMS,
}
_DISTINCT = {}
for _name, _patterns in _SEQUENCES.items():
    _DISTINCT.setdefault(_patterns, _name)


# The regex lists whose split of U+0295 the reference cannot give: it matches an 'a' in the
# character's place, which their literal ranges also match (test_the_reference_stand_in_is_not_the_character).
_STAND_IN_DIFFERS = {"deepseek-llm"}


@pytest.mark.parametrize("patterns", list(_DISTINCT), ids=list(_DISTINCT.values()))
def test_core_splits_like_the_reference(patterns):
    core, ref = Pretokenizer(patterns), ReferencePretokenizer(patterns)
    stand_in_differs = _DISTINCT[patterns] in _STAND_IN_DIFFERS
    assert stand_in_differs == any(core.split(text) != ref.split(text) for text in ("A\u0295", "\u0295a"))

    @FUZZ
    @given(text=texts)
    def check(text):
        if stand_in_differs and "\u0295" in text:
            text = text.replace("\u0295", "\u01bb")  # a letter of one category in every Unicode version
        assert core.split(text) == ref.split(text)

    check()


# The o200k scanner finds the end of an ASCII lower-case run eight bytes at a time: runs of every
# length, ending at the text's end or before the bytes just outside a-z (` and {), upper case,
# an apostrophe, a non-ASCII letter or mark, a digit or a space.
_RUN_ENDS = "`{@[AZ'\u00e9\u0301\u0dca0 \n\u00ff"


@pytest.mark.parametrize("name", ["o200k", "cl100k", "llama-bpe", "gpt2"])
def test_core_splits_ascii_words_of_every_length(name):
    core, ref = Pretokenizer.named(name), ReferencePretokenizer.named(name)
    texts = [
        head + "abcdefghijklmnopqrstuvwxyz"[:n] * (1 + n // 26) + end
        for head in ("", " ", "X", ".", "\n")
        for n in range(0, 40)
        for end in ["", *_RUN_ENDS]
    ]
    for text in texts:
        assert core.split(text) == ref.split(text), repr(text)

    @FUZZ
    @given(text=st.lists(st.sampled_from(["abcdefgh", "xyz", "q", " ", *_RUN_ENDS]), max_size=12).map("".join))
    def check(text):
        assert core.split(text) == ref.split(text)

    check()


# The scanners skip a word of an Indic script (letters and marks led by 0xE0, in both of o200k's case
# classes) without decoding it: words of Devanagari, Sinhala, Tamil and Malayalam after every kind of
# prefix (none, a space, punctuation, a mark, a newline, a letter, a digit, a danda) and before every
# kind of ending (ASCII, a contraction, a danda or digit of the script, Latin, marks, joiners, CJK).
_INDIC_WORDS = ["क", "कि", "हिंदी", "क्षेत्र", "ශ්‍රී", "ලංකාව", "தமிழ்", "മലയാളം", "ि", "िक"]
_INDIC_HEADS = ["", " ", '"', "(", "'", "\n", "\u093f", "a", "1", "\u0964", "\u00e9"]
_INDIC_ENDS = ["", " ", ".", ",", "1", "\n", "'", "'s", "a", "Z", "\u0964", "\u0966", "\u00e9", "\u0301",
               "\u200d", "\u200c", "中", "\U0001f600", "\u0dca", "x'll"]


@pytest.mark.parametrize("name", ["o200k", "cl100k", "llama-bpe"])
def test_core_splits_indic_words_before_every_ending(name):
    core, ref = Pretokenizer.named(name), ReferencePretokenizer.named(name)
    for head in _INDIC_HEADS:
        for word in _INDIC_WORDS:
            for end in _INDIC_ENDS:
                for text in (head + word + end, "x" + head + word + end + " " + word):
                    assert core.split(text) == ref.split(text), repr(text)

    @FUZZ
    @given(text=st.lists(st.sampled_from(_INDIC_WORDS + _INDIC_HEADS + _INDIC_ENDS), max_size=12).map("".join))
    def check(text):
        assert core.split(text) == ref.split(text)

    check()


def test_the_reference_stand_in_is_not_the_character():
    """U+0295 changed category after 16.0 (Ll -> Lo); the reference matches an 'a' in its place, which
    a literal range such as DeepSeek's ``:-~`` then also matches. The core sees the character itself,
    and Hugging Face (Oniguruma) agrees with the core."""
    ours = Pretokenizer.named("deepseek-llm")
    hf = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(p), "isolated") for p in ours.patterns])
    for text in ["A\u0295", "a\u0295b \u0295,"]:
        assert ours.split(text) == [p for p, _ in hf.pre_tokenize_str(text)]
    assert ours.split("A\u0295") != ReferencePretokenizer.named("deepseek-llm").split("A\u0295")
    assert Pretokenizer.named("o200k").split("A\u0295b") == ["A\u0295b"]  # a lower-case letter in 16.0


@pytest.mark.parametrize("name", ["o200k", "cl100k", "gpt2", "llama-bpe", "qwen2"])
def test_named_patterns_run_on_scanners(name):
    assert Pretokenizer.named(name).engines == [{"llama-bpe": "llama3"}.get(name, name)]
    assert Pretokenizer((_HF_GPT2,)).engines == ["gpt2"]
    assert Pretokenizer((r"\p{N}+",)).engines == ["regex"]
    assert Pretokenizer((r"\s+(?!\S)",)).engines == ["fancy-regex"]


def test_byte_stage_like_the_reference():
    """Regexes after the ByteLevel step see GPT-2 characters and may cut UTF-8 characters."""
    pre = Pretokenizer((r"\p{N}+",), (r"[\u00c0-\u00ff]|Ġ", _HF_GPT2))
    ref = ReferencePretokenizer.like(pre)

    @FUZZ
    @given(text=texts)
    def check(text):
        assert pre.split_bytes(text) == ref.split_bytes(text)
        assert b"".join(pre.split_bytes(text)) == text.encode()

    check()


@pytest.mark.parametrize("name", ["o200k", "cl100k", "gpt2", "llama-bpe", "qwen2", "deepseek-llm", "falcon"])
def test_core_splits_corpus_lines_like_the_reference(name):
    """Every line of a slice of every corpus (every whole corpus with WWHO_FULL_CORPORA=1)."""
    core, ref = Pretokenizer.named(name), ReferencePretokenizer.named(name)
    files = sorted(CORPORA.glob("*/*.txt")) if CORPORA.is_dir() else []
    if not files:
        pytest.skip(f"{CORPORA} is absent")
    for path in files:
        for n, line in enumerate(read_slice(path, 25_000).splitlines(), 1):
            assert core.split(line) == ref.split(line), f"{path.name}:{n}"


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="whole corpora only with WWHO_FULL_CORPORA=1")
@pytest.mark.parametrize("name", ["o200k", "cl100k", "llama-bpe"])
def test_core_splits_every_corpus_line_like_the_reference(name):
    core, ref = Pretokenizer.named(name), ReferencePretokenizer.named(name)
    for path in sorted(CORPORA.glob("*/*.txt")):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                assert core.split(line) == ref.split(line), f"{path.name}:{n}"


# --- Hugging Face as the oracle -------------------------------------------------------------------


def test_byte_mapping_is_huggingface_bytelevel_alphabet():
    assert sorted(BYTE_TO_UNICODE.values()) == sorted(pre_tokenizers.ByteLevel.alphabet())
    hf = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    text = bytes(range(32, 127)).decode() + "é中🦙\n\t "
    assert [p for p, _ in hf.pre_tokenize_str(text)] == [bytes_to_unicode(text.encode())]
    assert len(set(BYTE_TO_UNICODE.values())) == 256


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
@pytest.mark.parametrize("name", ["deepseek-coder", "deepseek-llm", "starcoder", "falcon", "llama-bpe", "qwen2"])
def test_sequences_split_like_huggingface(name, text):
    ours = Pretokenizer.named(name)
    hf = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(p), "isolated") for p in ours.patterns])
    assert ours.split(text) == [piece for piece, _ in hf.pre_tokenize_str(text)]


@settings(max_examples=200, deadline=None)
@given(text=texts)
def test_hf_digits_and_punctuation_forms_split_like_huggingface(text):
    cases = [
        ((r"\p{N}",), pre_tokenizers.Digits(individual_digits=True)),
        ((r"\p{N}+",), pre_tokenizers.Digits(individual_digits=False)),
        ((hf_punctuation_class() + "+",), pre_tokenizers.Punctuation("contiguous")),
        ((hf_punctuation_class(),), pre_tokenizers.Punctuation("isolated")),
    ]
    for patterns, hf in cases:
        assert Pretokenizer(patterns).split(text) == [p for p, _ in hf.pre_tokenize_str(text)], patterns


# --- behaviour and errors ---------------------------------------------------------------------


def test_gaps_are_kept():
    assert Pretokenizer(("a+",)).split("xaay") == ["x", "aa", "y"]
    assert Pretokenizer(("a+", "y")).split("xaayz") == ["x", "aa", "y", "z"]
    assert Pretokenizer((r"(?=b)",)).split("abab") == ["abab"]  # empty matches cut nothing
    assert Pretokenizer((r"(a)",)).split("xa") == ["x", "a"]  # groups do not change pieces


def test_python_dialect_is_kept():
    """Where Python's regex dialect differs from Rust's, the core follows Python's."""
    assert Pretokenizer(("a$",)).split("xa\n") == ["x", "a", "\n"]  # $ also before a final newline
    assert Pretokenizer(("[[a]",)).split("a[b") == ["a", "[", "b"]  # [ is literal in a class
    assert Pretokenizer(("[+--]",)).split("+,-a") == ["+", ",", "-", "a"]  # a range ending at -
    assert Pretokenizer((r"\p{L}++a",)).split("aa") == ["aa"]  # possessive: never matches, one gap


def test_lone_surrogates_split_as_replacement_characters():
    assert Pretokenizer.named("o200k").split("a\ud800b") == ["a", "\ufffdb"]  # U+FFFD is a symbol


def test_named_and_errors():
    assert Pretokenizer.named("gpt4").patterns == (PATTERNS["cl100k"],)
    assert Pretokenizer.coerce("O200K").patterns == (O200K_PATTERN,)
    assert Pretokenizer.coerce(["a+", "b|c"]).patterns == ("a+", "b|c")
    # ["gpt2"] would be the regex "gpt2" (every text one piece), where "gpt2" alone is the name: refused.
    with pytest.raises(VocabError, match="plain word 'gpt2'.*given alone"):
        Pretokenizer.coerce([r"\s+", "gpt2"])
    with pytest.raises(VocabError, match="unknown pre-tokenizer 'nope'; known: .*deepseek-llm.*o200k"):
        Pretokenizer.named("nope")
    with pytest.raises(VocabError, match="invalid pre-tokenizer regex"):
        Pretokenizer(("[",))
    with pytest.raises(VocabError, match="unicode="):
        Pretokenizer(("a",), unicode="15.0")
    with pytest.raises(VocabError, match="at least one regex"):
        Pretokenizer(())
    with pytest.raises(VocabError, match="expected text"):
        Pretokenizer.named("o200k").split(b"bytes")  # type: ignore[arg-type]
    required = ("llama-bpe", "qwen2", "gpt-2", "falcon", "deepseek-llm", "deepseek-coder", "starcoder", "mpt",
                "refact", "command-r")
    for name in required:
        assert name in GGUF_PRETOKENIZERS


def test_json_and_pickle_round_trip():
    import pickle

    p = Pretokenizer.named("falcon")
    assert Pretokenizer.from_json(p.to_json()) == p
    back = pickle.loads(pickle.dumps(p))
    assert back == p and back.split("abc 123") == p.split("abc 123")


# --- Unicode 16.0 -------------------------------------------------------------------------------


def _ranges():
    for item in unicode16.UNASSIGNED.split():
        lo, _, hi = item.partition("-")
        yield int(lo, 16), int(hi or lo, 16)


def test_unicode16_table_is_consistent_with_python_unicodedata():
    """Characters stay assigned once assigned, so every code point unassigned in Unicode 16.0 is
    unassigned in the (older) tables of this Python too, and the two differ only by additions."""
    unassigned = {cp for lo, hi in _ranges() for cp in range(lo, hi + 1)}
    assert all(unicodedata.category(chr(cp)) == "Cn" for cp in unassigned)
    assert 0x0CF3 not in unassigned and 0x105C0 not in unassigned  # added in 15.0 and 16.0
    assert 0x0378 in unassigned and 0xFDD0 in unassigned


def test_core_classifies_by_unicode_16():
    """Letters added after 16.0 are not letters; letters added in 16.0 are; both `unicode` values agree."""
    new = "\u0558"  # an Armenian letter added after Unicode 16.0
    for unicode in ("16.0", None):
        pre = Pretokenizer((r"\p{L}+",), unicode=unicode)
        assert pre.split("a" + new + "b") == ["a", new, "b"]
        assert pre.split("a\U000105c0\u1c89b") == ["a\U000105c0\u1c89b"]  # Todhri, Cyrillic Tje: 16.0
    if regex.match(r"\p{L}", new) is not None:  # this regex module knows the letter: the reference pins
        ref = ReferencePretokenizer((r"\p{L}+",))
        assert ref.split("a" + new + "b") == ["a", new, "b"]
    text = "ශ්‍රී ලංකා 🦙 中文"
    assert Pretokenizer((r"\p{L}+",)).split(text) == ReferencePretokenizer((r"\p{L}+",)).split(text)


def test_literal_ranges_are_not_pinned():
    new = "\u0558"
    assert Pretokenizer(("[\u0500-\u05ff]+",)).split("a" + new) == ["a", new]
    assert ReferencePretokenizer(("[\u0500-\u05ff]+",)).split("a" + new) == ["a", new]



def test_the_punctuation_data_is_the_installed_huggingfaces():
    """wwho/data/hf_punctuation.json against HF's Punctuation on every code point: Unicode 16's \\p{P},
    which GGUF's forms use, differs from it (U+113D4, U+0C77 ... were cut otherwise than HF)."""
    import regex

    hf = pre_tokenizers.Punctuation("isolated")
    ours = regex.compile(hf_punctuation_class())
    punct = regex.compile(_PUNCT_RUN[:-1])
    differs = 0
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        c = chr(cp)
        theirs = len(hf.pre_tokenize_str("a" + c + "a")) == 3
        assert bool(ours.fullmatch(c)) == theirs, hex(cp)
        differs += bool(punct.fullmatch(c)) != theirs
    assert differs  # (else the data could go: the two tables would agree)
