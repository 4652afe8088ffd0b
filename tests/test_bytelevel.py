"""ByteBPE: tiktoken-exact encoding (o200k_base on real corpora and fuzzed text, the cl100k
and GPT-2 regexes), special-token semantics, decoding, errors, the piece cache, long pieces,
threads, and the wwho / Hugging Face file formats checked against stock ``tokenizers``.

Oracles are tiktoken and Hugging Face ``tokenizers`` themselves; the o200k ranks file is the
official one (its sha256 is what tiktoken checks). The core is also compared with the pure-Python
encoder it replaced (``tests/reference/bytelevel_py.py``) on arbitrary text, for both merge rules.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import tempfile
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.bytelevel_py import (
    ReferenceByteBPE,
    ReferenceDisallowed,
    merge_by_pairs,
    merge_by_ranks,
    merge_heap,
)

from wwho.bytelevel import ByteBPE, DisallowedSpecialError
from wwho.bytelevel.files import read_tiktoken_ranks
from wwho.bytelevel.hf_files import tiktoken_merges
from wwho.errors import TokenizerError, UnknownTokenError, VocabError, WwhoError

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")

from conftest import DATA  # noqa: E402 (after the importorskip above)

O200K_FILE = DATA / "tiktoken" / "o200k_base.tiktoken"
O200K_URL_SHA1 = "fb374d419588a4632f3f557e76b4b70aebbca790"  # tiktoken's cache key for the blob URL
SPECIALS = ["<|endoftext|>", "<|endofprompt|>"]
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared data folder is needed for this test")
    return path


@pytest.fixture(scope="module")
def cache_dir():
    """A tiktoken cache holding the official o200k file under tiktoken's own key."""
    _need(O200K_FILE)
    with tempfile.TemporaryDirectory() as d:
        os.symlink(O200K_FILE, Path(d) / O200K_URL_SHA1)
        old = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = d
        try:
            yield Path(d)
        finally:
            if old is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = old


@pytest.fixture(scope="module")
def ref(cache_dir):
    return tiktoken.get_encoding("o200k_base")


@pytest.fixture(scope="module")
def ours(cache_dir):
    return ByteBPE.from_tiktoken("o200k_base")  # found by name in tiktoken's cache


def _lines(rel: str, limit: int | None = None) -> list[str]:
    path = _need(DATA / "corpora" / rel)
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    return lines[:limit] if limit else lines


# --- tiktoken equality on real text ------------------------------------------------------


@pytest.mark.parametrize(
    "rel,limit",
    [
        ("en/flores200-devtest.txt", None),
        ("si/flores200-devtest.txt", None),
        # every other Indic script: long pieces o200k has few tokens for, merged from bytes
        *[
            (f"{lang}/flores200-devtest.txt", None)
            for lang in ("hi", "mr", "ne", "sa", "bn", "pa", "gu", "or", "ta", "te", "kn", "ml")
        ],
        ("en/news-lk_news.txt", 3000),
        ("si/news-bbcsinhala.txt", 1500),
        ("si-en/news-codeswitched-lines.txt", 300),
    ],
)
def test_o200k_equals_tiktoken_on_corpus_lines(ours, ref, rel, limit):
    lines = _lines(rel, limit)
    expected = [ref.encode(line) for line in lines]
    for n, line in enumerate(lines):
        assert ours.encode(line) == expected[n], f"{rel} line {n + 1}"
    # Again, warm: each piece now comes from the thread's memo (whichever of its tables the
    # piece's length and ids choose) or from the shared cache.
    for n, line in enumerate(lines[:2000]):
        assert ours.encode(line) == expected[n], f"{rel} line {n + 1}, warm"
    text = "\n".join(lines[:300]) + "\n"  # multi-line text: newline runs and line starts
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


def test_o200k_vocabulary_matches_tiktoken(ours, ref):
    assert ours.n_vocab == ref.n_vocab == 200019
    assert ours.special_tokens_set == ref.special_tokens_set
    for i in [0, 1, 255, 1000, 199997, 199999, 200018]:
        assert ours.token_bytes(i) == ref.decode_single_token_bytes(i)


# --- tiktoken equality on fuzzed text ----------------------------------------------------

_pieces = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=" \t\n\r\x0b\x0c\u00a0\u3000\u2028", max_size=12),
    st.text(alphabet="0123456789٣३൬", max_size=12),
    st.text(alphabet="'sStTdDmMlLvVrReE ", max_size=10),
    st.text(alphabet="අආකගසංඃ්ාිෙ\u200d\u200cශ්‍රී", max_size=15),
    st.sampled_from(SPECIALS + ["<|endof", "|>", "🦙", "😶\u200d🌫️", "ſ", "\u212a"]),
)
fuzz_text = st.lists(_pieces, max_size=8).map("".join)


@FUZZ
@given(text=fuzz_text)
def test_o200k_equals_tiktoken_on_fuzzed_text(ours, ref, text):
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
    assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert ours.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
    try:
        expected = ref.encode(text)
    except ValueError:
        with pytest.raises(DisallowedSpecialError):
            ours.encode(text)
    else:
        assert ours.encode(text) == expected


# Long pieces (more than 64 bytes: one run of letters) of scripts whose characters o200k joins
# only sometimes: the core cuts them where no token can span and merges each part alone.
_letters = st.sampled_from(["\u4e00\u9fa5", "\u3040\u30ff", "\uac00\ud7a3", "\u0400\u04ff", "ab", "\u00e0\u00ff"]).flatmap(
    lambda r: st.lists(st.characters(min_codepoint=ord(r[0]), max_codepoint=ord(r[1])), min_size=30, max_size=300))
long_piece = st.lists(_letters, min_size=1, max_size=3).map(lambda runs: "".join("".join(r) for r in runs))


@FUZZ
@given(text=long_piece)
def test_o200k_equals_tiktoken_on_long_pieces(ours, ref, text):
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


# One word of random letters from a small alphabet, which o200k's tokens span nearly everywhere, so
# the core finds few places to cut it: its parts take the short scan, the heap on the stack, the
# heap in memory or the rank buckets by length (rust/src/bytelevel/ranks/mod.rs), on either side of
# each limit.
@pytest.mark.parametrize("length", [64, 65, 192, 193, 194, 3000, 16_384, 16_385, 20_000])
@pytest.mark.parametrize("alphabet", ["abcdefghij", "ACGT", "ab"])
def test_o200k_equals_tiktoken_on_words_of_random_letters(ours, ref, alphabet, length):
    rng = random.Random(length)
    text = "".join(rng.choice(alphabet) for _ in range(length))
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


# Short words of random characters of one Indic block (with joiners, a Latin letter, an emoji):
# character pairs no text has, and o200k tokens that end inside a character, in every merge path
# of short pieces (the scan up to 16 bytes, the heap on the stack, cut long pieces).
_INDIC_BLOCKS = [(0x0900, 0x097F), (0x0980, 0x09FF), (0x0A00, 0x0A7F), (0x0B00, 0x0B7F), (0x0B80, 0x0BFF),
                 (0x0C00, 0x0C7F), (0x0D00, 0x0D7F), (0x0D80, 0x0DFF), (0x0080, 0x07FF)]
_indic_word = st.sampled_from(_INDIC_BLOCKS).flatmap(
    lambda r: st.lists(st.one_of(st.characters(min_codepoint=r[0], max_codepoint=r[1]),
                                 st.sampled_from(["\u200d", "\u200c", "a", "🙂"])), min_size=1, max_size=25))
indic_words = st.lists(_indic_word.map("".join), min_size=1, max_size=6).map(" ".join)


@FUZZ
@given(text=indic_words)
def test_o200k_equals_tiktoken_on_words_of_random_characters(ours, ref, text):
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


# Words of three-byte characters from two random blocks of 64 (U+0800-U+FFFF), after a space, a
# sign or nothing: the core starts such words from their characters' own merges, each as far as no
# token across either of its boundaries can rank lower (rust/src/bytelevel/characters.rs).
_block = st.integers(0x800 // 64, 0xFFFF // 64).filter(lambda b: not 0xD800 <= b * 64 <= 0xDFFF)
_two_blocks = st.lists(_block, min_size=2, max_size=2).flatmap(
    lambda bs: st.lists(st.integers(0, 127).map(lambda i: chr(bs[i // 64] * 64 + i % 64)), min_size=2, max_size=30))
three_byte_words = st.lists(st.tuples(st.sampled_from(["", " ", "(", "\u201c"]), _two_blocks.map("".join)),
                            min_size=1, max_size=4).map(lambda ws: "".join(a + w for a, w in ws))


@FUZZ
@given(text=three_byte_words)
def test_o200k_equals_tiktoken_on_words_of_three_byte_characters(ours, ref, text):
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


# The same words under random vocabularies, with tiktoken's own merging as the oracle: tokens
# inside, across and after characters of a few three-byte characters of two blocks (and a space
# before a first byte, as in o200k_base), at random ranks, so that the bounds on each boundary the
# core takes at construction fall anywhere among a word's merges.
_CHARS = ["\u0d15", "\u0d3e", "\u0d4d", "\u0d2e", "\u0d7a", "\u0915", "\u093e", "\u094d", "\u4e00"]


def _random_three_byte_vocabulary(seed: int) -> dict[bytes, int]:
    rng = random.Random(seed)
    tokens = [bytes([b]) for b in range(256)]
    low = [b"\xe0\xb4", b"\xe0\xb5", b"\xe0\xa4", b"\xe0\xa5", b"\xe4\xb8", b" \xe0"]
    low += [c.encode() for c in _CHARS if rng.random() < 0.5]
    sliced = []
    for _ in range(rng.randrange(20, 300)):
        word = (" " if rng.random() < 0.3 else "").encode() + "".join(
            rng.choice(_CHARS) for _ in range(rng.randrange(2, 6))).encode()
        start = rng.randrange(len(word) - 1)
        sliced.append(word[start:start + rng.randrange(2, 10)])
    rng.shuffle(low)
    rng.shuffle(sliced)
    cut = len(sliced) // 4
    for token in low + sliced[:cut] + sorted(sliced[cut:], key=lambda _: rng.random()):
        if len(token) >= 2 and token not in tokens:
            tokens.append(token)
    return {token: rank for rank, token in enumerate(tokens)}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_vocabularies_equal_tiktoken_on_words_of_three_byte_characters(ref, seed):
    ranks = _random_three_byte_vocabulary(seed)
    theirs = tiktoken.Encoding(f"random-{seed}", pat_str=ref._pat_str, mergeable_ranks=ranks, special_tokens={})
    ours = ByteBPE(ranks, pattern="o200k")
    rng = random.Random(seed)
    for _ in range(300):
        text = rng.choice(["", " ", "("]) + "".join(rng.choice(_CHARS) for _ in range(rng.randrange(1, 30)))
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), (seed, text)


# Long runs of one byte (spaces, newlines, dashes, one letter): the core merges them group by
# group (rust/src/bytelevel/runs.rs). Every printable ASCII character and the whitespace that
# forms one o200k piece, at lengths around the shortcut's threshold (256) and far past it.
_RUN_CHARS = [chr(c) for c in range(0x21, 0x7F)] + [" ", "\n", "\t", "\r"]


@pytest.mark.parametrize("n", [255, 256, 257, 1000, 4097, 30_001])
def test_o200k_equals_tiktoken_on_runs_of_one_byte(ours, ref, n):
    for char in _RUN_CHARS:
        assert ours.encode_ordinary(char * n) == ref.encode_ordinary(char * n), (char, n)


@FUZZ
@given(char=st.sampled_from(_RUN_CHARS), n=st.integers(200, 20_000), before=st.text(max_size=3),
       after=st.text(max_size=3))
def test_o200k_equals_tiktoken_on_fuzzed_runs(ours, ref, char, n, before, after):
    text = before + char * n + after
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


# Long runs of one character of two to four bytes: the core merges each copy alone, then the
# copies as a run of one byte's parts are merged, where no token across copies ranks below a
# copy's own merges (rust/src/bytelevel/runs.rs). Characters of every plane's letters, marks,
# digits, signs and symbols, at lengths around the shortcut's threshold and far past it.
_RUN_CHARACTERS = [
    chr(c) for c in range(0x80, 0x30000, 61)
    if not 0xD800 <= c < 0xE000 and unicodedata.category(chr(c))[0] in "LMNPS"
]


@pytest.mark.parametrize("copies", [43, 86, 129, 400, 3001])
@pytest.mark.parametrize("before,after", [("", ""), (" ", ""), ("(", "'s"), ("a", ".")])
def test_o200k_equals_tiktoken_on_runs_of_one_character(ours, ref, copies, before, after):
    for char in _RUN_CHARACTERS:
        text = before + char * copies + after
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text), (hex(ord(char)), copies)


# Repeats of a short string in one piece (a word repeated without spaces): where no token
# crosses a copy's end, or the string merges to one token below every token that does, the core
# merges one copy and then the copies (rust/src/bytelevel/runs.rs).
_REPEATED = ["ab", "xy", "the", "abc1", "කා", "ලංකා", "නම", "नमस्ते", "日本", "한국", "é1", "😀a", "ශ්\u200d"]


@pytest.mark.parametrize("copies", [60, 129, 1001])
def test_o200k_equals_tiktoken_on_repeated_strings(ours, ref, copies):
    for unit in _REPEATED:
        for text in (unit * copies, " " + unit * copies):
            assert ours.encode_ordinary(text) == ref.encode_ordinary(text), (unit, copies)


@FUZZ
@given(unit=st.text(min_size=2, max_size=8), n=st.integers(20, 3_000), before=st.text(max_size=2))
def test_o200k_equals_tiktoken_on_fuzzed_repeats(ours, ref, unit, n, before):
    text = before + unit * n
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


def _random_run_vocabulary(seed: int, char: str) -> dict[bytes, int]:
    """Every byte, then at random ranks: the pieces of `char` of two bytes or more, substrings of
    `char` repeated that cross a copy's end (in most vocabularies, none), runs of `char` (so that
    a merge across copies ranks below a copy's own merges in some vocabularies and not in
    others), and tokens from a space or `(` into the run and from the run into `'s`."""
    rng = random.Random(seed)
    c = char.encode()
    stream = c * 12
    inside = [c[a:b] for a in range(len(c)) for b in range(a + 2, len(c) + 1)]
    crossing = [stream[a:a + rng.randrange(len(c) - a + 1, 3 * len(c))]
                for a in (rng.randrange(len(c)) for _ in range(rng.choice([0, 0, 3, 12])))]
    runs = [c * m for m in range(2, 10) if rng.random() < 0.6] if crossing else []
    edges = [before + stream[:m] for before in (b" ", b"(") for m in range(1, 2 * len(c)) if rng.random() < 0.5]
    edges += [stream[-m:] + b"'s" for m in range(1, 2 * len(c)) if rng.random() < 0.5]
    listed = inside + crossing + runs + edges
    rng.shuffle(listed)
    tokens = [bytes([b]) for b in range(256)]
    tokens += [t for t in dict.fromkeys(listed) if t not in tokens]
    return {token: rank for rank, token in enumerate(tokens)}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), char=st.sampled_from(["é", "ශ", "한", "🦙", "ab", "කා"]))
def test_random_vocabularies_equal_tiktoken_on_runs_of_one_character(ref, seed, char):
    ranks = _random_run_vocabulary(seed, char)
    theirs = tiktoken.Encoding(f"runs-{seed}", pat_str=ref._pat_str, mergeable_ranks=ranks, special_tokens={})
    ours = ByteBPE(ranks, pattern="o200k")
    for copies in (43, 100, 257, 1000):
        for text in (char * copies, " " + char * copies, "(" + char * copies + "'s"):
            assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), (seed, char, copies)


@FUZZ
@given(char=st.characters(min_codepoint=0x80, exclude_categories=["Cs"]), n=st.integers(40, 5_000),
       before=st.text(max_size=3), after=st.text(max_size=3))
def test_o200k_equals_tiktoken_on_fuzzed_runs_of_one_character(ours, ref, char, n, before, after):
    text = before + char * n + after
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


@FUZZ
@given(text=st.text(st.characters(codec="latin-1"), max_size=60))
def test_o200k_equals_tiktoken_on_latin1_strings(ours, ref, text):
    # Python keeps such a str one byte per character; the core writes its UTF-8 without a branch
    # per character (`write_latin1`), and every character from U+0000 to U+00FF goes through it.
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
    assert ours.decode(ours.encode_ordinary(text)) == text


@FUZZ
@given(text=st.text(st.characters(max_codepoint=0x7FF), max_size=300))
def test_o200k_equals_tiktoken_on_one_and_two_byte_characters(ours, ref, text):
    # Prose in the alphabets of one- and two-byte UTF-8 characters (Latin, Greek, Cyrillic ...)
    # is split 64 bytes at a time by rules on bitmaps of character classes
    # (rust/src/pretokenize/prose.rs); every such character goes through them.
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


# Words of two-byte characters start from the characters whose two bytes merge before anything
# else touches them (rust/src/bytelevel/two_byte.rs). Random characters seldom merge past a
# character; fragments of real words (their tokens join characters into syllables and stems) do.
_TWO_BYTE_FRAGMENTS = [
    "при", "ство", "ения", "нов", "ый", "Мос", "ква", "ού", "την", "και", "ρχ", "Ελ", "ción",
    "ñá", "été", "ß", "über", "ção", "ší", "ř", "ğı", "ş", "ł", "ő", "שלום", "ال", "كتاب", "ն",
    "ѣ", "ђ", "Ѳ", "é", "Ã©", "Ã", "©", "a", "'", ".", " ", "-", "1",
]


@FUZZ
@given(text=st.lists(st.sampled_from(_TWO_BYTE_FRAGMENTS), max_size=40).map("".join))
def test_o200k_equals_tiktoken_on_words_of_two_byte_characters(ours, ref, text):
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


# Whitespace-heavy text: o200k makes one piece of a whitespace run up to its last newline, so a
# random mix of whitespace is one long piece that the core cuts where no token can span and
# merges part by part (short parts by a scan, parts up to 192 bytes with a heap, longer ones by
# rank buckets: rust/src/bytelevel/ranks/), or, a piece of the bytes of whitespace characters
# alone, in one pass (rust/src/bytelevel/whitespace.rs); and long runs of Latin-1 and CJK too.
_WHITESPACE = " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000"
_mixed_ws = st.one_of(
    st.text(alphabet=_WHITESPACE, min_size=1, max_size=600),
    st.text(alphabet=st.sampled_from([" ", "\n", "\t", "\r"]), min_size=1, max_size=600),
    st.lists(st.sampled_from([" ", "  ", "\n", "\t"]), min_size=1, max_size=400).map("".join),
    st.text(alphabet=st.sampled_from([" ", "\n"]), min_size=1, max_size=600),
)
_ws_heavy = st.lists(
    st.one_of(_mixed_ws, st.text(st.characters(codec="latin-1"), max_size=40),
              st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), max_size=40),
              st.sampled_from(["a", "Word", "x.", "12", "'s"])),
    min_size=1, max_size=6).map("".join)


@FUZZ
@given(text=_ws_heavy)
def test_o200k_equals_tiktoken_on_whitespace_heavy_text(ours, ref, text):
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


@pytest.mark.parametrize("kind", ["whitespace", "ascii-whitespace", "space-newline", "two-spaces-tab-newline",
                                  "all-ascii-whitespace", "space-runs", "runs-and-line-ends",
                                  "whitespace-bytes-not-spaces", "latin-1", "two-byte", "cjk"])
def test_o200k_equals_tiktoken_on_long_random_runs(ours, ref, kind):
    # A piece made only of the UTF-8 bytes of whitespace characters is encoded in one pass by
    # compatible token pairs (rust/src/bytelevel/whitespace.rs): runs of spaces of every length
    # between other whitespace are where choosing the longest token first is most often wrong,
    # and symbols such as U+00A9 and U+201F, made of the same bytes, are pieces it takes too.
    rng = random.Random(kind)
    pool = {"whitespace": _WHITESPACE, "ascii-whitespace": " \t\n\r", "space-newline": " \n",
            "two-spaces-tab-newline": "  \t\n", "all-ascii-whitespace": " \t\n\r\x0b\x0c",
            "space-runs": [" " * n for n in range(1, 140)] + ["\t", "\n"] * 8,
            "runs-and-line-ends": [" " * n for n in (1, 2, 3, 7, 33, 64, 95, 128)] + ["\r\n", "\t\t\t", "\n\n\n"],
            "whitespace-bytes-not-spaces": ["\xa9", "\xa8", "\xaf", "\x80", "\u201f", "\u2040", "\u3003", "\u2088"],
            "latin-1": [chr(c) for c in range(0x20, 0x100)],
            "two-byte": [chr(c) for c in range(0x80, 0x800)] + list(" aZ.,1'") * 100,
            "cjk": [chr(c) for c in range(0x4E00, 0xA000)]}[kind]
    # 100,000 characters: well past every part length the core treats differently, and below
    # the length where tiktoken's regex overflows its stack.
    parts, size = [], 0
    while size < 100_000:  # (a choice of space-runs is up to 139 characters: not 100,000 choices)
        parts.append(rng.choice(pool))
        size += len(parts[-1])
    text = "".join(parts)
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
    assert ours.encode_ordinary("x" + text + "y") == ref.encode_ordinary("x" + text + "y")


def test_whitespace_answers_filled_by_many_threads_at_once(ref, cache_dir):
    # A fresh tokenizer's table of whitespace token pairs starts empty and is filled by whichever
    # thread asks first (rust/src/bytelevel/whitespace.rs): four threads on new whitespace at once
    # must give tiktoken's ids.
    fresh = ByteBPE.from_tiktoken("o200k_base")
    rng = random.Random(7)
    pools = [" \t\n\r", " \n", ["  ", "\t", "\n"], [" " * n for n in range(1, 100)] + ["\t", "\n"]]
    texts = ["".join(rng.choice(pools[i % 4]) for _ in range(20_000)) + "x" for i in range(16)]
    assert fresh.encode_batch(texts, num_threads=4) == [ref.encode_ordinary(t) for t in texts]


@FUZZ
@given(text=st.text(st.characters(codec="utf-8"), max_size=60))
def test_o200k_round_trip(ours, text):
    assert ours.decode(ours.encode(text, disallowed_special=())) == text


@pytest.fixture(scope="module")
def tiktoken_patterns(ref, monkeypatch_module):
    """The cl100k and r50k regexes as tiktoken itself defines them (its loader is stubbed)."""
    import tiktoken_ext.openai_public as public

    ranks = ref._mergeable_ranks
    monkeypatch_module.setattr(public, "load_tiktoken_bpe", lambda *a, **k: ranks)
    return {"cl100k": public.cl100k_base()["pat_str"], "gpt2": public.r50k_base()["pat_str"]}


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.mark.parametrize("name", ["cl100k", "gpt2"])
def test_named_regexes_split_like_tiktoken(ours, ref, tiktoken_patterns, name):
    """Our cl100k/gpt2 regexes vs tiktoken's, both over the o200k ranks (so ids expose splits)."""
    theirs = tiktoken.Encoding(
        f"t-{name}", pat_str=tiktoken_patterns[name], mergeable_ranks=ref._mergeable_ranks, special_tokens={}
    )
    mine = ByteBPE(ours.ranks, pattern=name)

    @FUZZ
    @given(text=fuzz_text)
    def check(text):
        assert mine.encode_ordinary(text) == theirs.encode_ordinary(text)

    check()
    for line in _lines("en/flores200-devtest.txt", 200) + _lines("si/flores200-devtest.txt", 100):
        assert mine.encode_ordinary(line) == theirs.encode_ordinary(line)


def test_lone_surrogates_are_replaced_like_tiktoken(ours, ref):
    for text in ["a\ud800b", "\udfff", "x \ud83d\ude00 y"]:
        assert ours.encode(text) == ref.encode(text)


# --- long pieces, merge loops, cache -----------------------------------------------------


@pytest.mark.parametrize("char", ["a", "ශ", "1", " ", "\u0300", "🦙", "\n"])
def test_long_runs_are_linear_and_exact(ours, ref, char):
    text = char * 30_000
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
    assert ours.encode_ordinary(char * 100_000)  # would take minutes if quadratic in Python


@settings(max_examples=200, deadline=None)
@given(data=st.binary(min_size=2, max_size=200), repeat=st.integers(1, 4))
def test_heap_merge_equals_list_merge(ours, small_merges, data, repeat):
    data = (data * repeat)[:200]  # repetition makes ties: equal ranks at several positions
    ranks = ours.ranks
    assert merge_heap(data, lambda a, b: ranks.get(a + b)) == merge_by_ranks(data, ranks)
    assert merge_heap(data, lambda a, b: small_merges.get((a, b))) == merge_by_pairs(data, small_merges)


@pytest.fixture(scope="module")
def small_merges(ours):
    small = {t: r for t, r in ours.ranks.items() if r < 3000}
    return {pair: rank for rank, pair in enumerate(tiktoken_merges(small))}


def test_cache_is_bounded_in_bytes_and_does_not_change_results(ours):
    small = ByteBPE(ours.ranks, pattern="o200k", special_tokens={"<|endoftext|>": 199999}, cache_bytes=20_000)
    none = ByteBPE(ours.ranks, pattern="o200k", special_tokens={"<|endoftext|>": 199999}, cache_bytes=0)
    lines = _lines("si/flores200-devtest.txt", 300)
    expected = [ours.encode(x) for x in lines]
    assert [small.encode(x) for x in lines] == expected
    assert [none.encode(x) for x in lines] == expected
    pieces, size = small.cache_info()
    assert 0 < pieces and 0 < size <= 20_000
    assert none.cache_info() == (0, 0)
    small.clear_cache()
    assert small.cache_info() == (0, 0)
    with pytest.raises(VocabError, match="cache_bytes"):
        ByteBPE(ours.ranks, cache_bytes=-1)


def test_encode_batch(ours):
    lines = _lines("si/flores200-devtest.txt", 50) + ["", "<|endoftext|> x"]
    one = [ours.encode(x, disallowed_special=()) for x in lines]
    for threads in (None, 1, 2, 3):
        assert ours.encode_batch(lines, num_threads=threads, disallowed_special=()) == one
    assert ours.encode_ordinary_batch(lines) == [ours.encode_ordinary(x) for x in lines]
    assert ours.encode_batch(iter(lines), allowed_special="all")[-1][0] == 199999
    with pytest.raises(DisallowedSpecialError, match="offset 0"):
        ours.encode_batch(lines)  # the default disallows special-token text, as encode() does
    with pytest.raises(TokenizerError, match=r"texts\[1\]: expected text"):
        ours.encode_batch(["a", 5])  # type: ignore[list-item]
    with pytest.raises(TokenizerError, match="num_threads"):
        ours.encode_batch(lines, num_threads=0)
    assert ours.encode_batch(["a\ud800b"]) == [ours.encode("a\ud800b")]


def test_one_tokenizer_shared_by_many_threads(ours):
    """Many threads, one object (cache and special-token matchers shared): the same ids as one thread."""
    from concurrent.futures import ThreadPoolExecutor

    lines = _lines("si/news-bbcsinhala.txt", 400) + _lines("en/flores200-devtest.txt", 400)
    tok = ByteBPE(ours.ranks, pattern="o200k", special_tokens=dict(ours.special_tokens), cache_bytes=50_000)
    expected = [ours.encode(x) for x in lines]

    def work(seed: int) -> bool:
        order = list(range(len(lines)))
        random.Random(seed).shuffle(order)
        got = {i: tok.encode(lines[i], allowed_special={"<|endoftext|>"} if seed % 2 else frozenset()) for i in order}
        batch = tok.encode_batch(lines[seed::8], num_threads=2)
        return [got[i] for i in range(len(lines))] == expected and batch == expected[seed::8]

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(work, range(16)))


def test_the_ids_of_texts_before_and_after_one_of_many_ids(ours, ref):
    """A list of ids is made from a vector the thread keeps for its next call, and lets go after a
    text of more ids than it keeps (a mebibyte's worth): every text around such a one, and that
    text itself, get tiktoken's ids, whatever the previous call left in the vector."""
    many = "a " * 300_000
    for text in ["hello world", many, "ශ්‍රී ලංකාව", many[:1001], "x", "", "<|endoftext|>"]:
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
        assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")


def _shuffled_vocabulary(seed: int) -> dict[bytes, int]:
    """The 256 bytes and every string of two to four of ``abcd``, in an order of the seed's: the
    same piece has other ids and other merges in each."""
    words = [bytes(w) for n in (2, 3, 4) for w in itertools.product(b"abcd", repeat=n)]
    random.Random(seed).shuffle(words)
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update((w, 256 + i) for i, w in enumerate(words[:200]))
    return ranks


def test_tokenizers_used_in_turn_on_one_thread_keep_their_own_ids():
    # Each thread keeps a memo of pieces for each of the few tokenizers it used last and hands
    # the oldest to a newcomer: more tokenizers than memos, used in turn on one thread,
    # with `clear_cache` between, must each still give the reference's ids.
    rng = random.Random(7)
    # words of 1 to 40 letters: pieces for both of a memo's tables (up to 16 bytes, 17 to 32) and
    # for none
    texts = [
        " ".join("".join(rng.choice("abcd") for _ in range(rng.randint(1, 40))) for _ in range(300))
        for _ in range(3)
    ]
    toks = [ByteBPE(_shuffled_vocabulary(seed), pattern="o200k") for seed in range(7)]
    refs = [ReferenceByteBPE(tok.model) for tok in toks]
    want = [[ref.encode(text) for text in texts] for ref in refs]
    assert all(want[0][0] != w[0] for w in want[1:])  # the vocabularies do differ
    for round_ in range(3):
        for k, tok in enumerate(toks):
            if round_ == 1 and k % 3 == 0:
                tok.clear_cache()
            for text, ids in zip(texts, want[k]):
                assert tok.encode(text) == ids, (round_, k)


def test_pickle_round_trip(ours):
    import pickle

    back = pickle.loads(pickle.dumps(ours))
    text = "Hello ශ්‍රී ලංකා <|endoftext|>"
    assert back.encode(text, allowed_special="all") == ours.encode(text, allowed_special="all")
    assert back.name == ours.name and back.n_vocab == ours.n_vocab


# --- special tokens and errors ------------------------------------------------------------


def test_special_token_semantics(ours):
    text = "hi <|endoftext|> there"
    with pytest.raises(DisallowedSpecialError) as info:
        ours.encode(text)
    assert info.value.token == "<|endoftext|>" and info.value.offset == 3
    assert "<|endoftext|>" in str(info.value) and "offset 3" in str(info.value)
    assert 199999 in ours.encode(text, allowed_special={"<|endoftext|>"})
    assert 199999 in ours.encode(text, allowed_special="all")
    assert 199999 not in ours.encode(text, disallowed_special=())
    assert ours.encode_ordinary(text) == ours.encode(text, disallowed_special=())
    with pytest.raises(DisallowedSpecialError):  # allowing one does not allow the other
        ours.encode("<|endofprompt|>", allowed_special={"<|endoftext|>"})
    with pytest.raises(TokenizerError):
        ours.encode(b"bytes")  # type: ignore[arg-type]


def test_names_the_vocabulary_lacks_as_tiktoken_reads_them(ours, o200k):
    """Names o200k_base lacks, in either set: tiktoken's ids where it gives ids, and an error
    (DisallowedSpecialError, a ValueError as tiktoken's) where it raises."""
    cases = [
        ("hi <|endoftext|>", {"allowed_special": {"<|endoftext|>", "<|fim_prefix|>"}}),
        ("hi <|fim_prefix|>", {"allowed_special": {"<|fim_prefix|>"}}),
        ("plain", {"disallowed_special": {"hi"}}),
        ("say hi", {"disallowed_special": {"hi"}}),
        ("a <|fim_middle|> b", {"disallowed_special": {"<|fim_middle|>", "<|endoftext|>"}}),
        ("a <|endoftext|> b", {"allowed_special": {"<|endoftext|>"}, "disallowed_special": {"x y"}}),
    ]
    for text, options in cases:
        try:
            want = o200k.encode(text, **options)
        except ValueError:
            with pytest.raises(DisallowedSpecialError):
                ours.encode(text, **options)
            with pytest.raises(ValueError):
                ours.encode_batch([text], **options)
        else:
            assert ours.encode(text, **options) == want, (text, options)
            assert ours.encode_batch([text], **options) == [want]
            assert ours.encode_to_numpy(text, **options).tolist() == want


@pytest.mark.parametrize("bad", [-1, 200019, 10**9, 199998, "5", None, 1.5])
def test_out_of_range_ids_are_typed_errors(ours, bad):
    with pytest.raises(TokenizerError, match="not in this vocabulary|not an integer"):
        ours.decode([1, 2, bad])
    with pytest.raises(TokenizerError, match="position 2"):
        ours.decode_bytes([1, 2, bad])
    with pytest.raises(TokenizerError):
        ours.token_bytes(bad)


def test_errors_are_wwho_errors():
    assert issubclass(DisallowedSpecialError, WwhoError) and issubclass(DisallowedSpecialError, ValueError)


def test_decode_replaces_invalid_utf8(ours):
    ids = ours.encode("ශ")
    assert len(ids) >= 1
    broken = [i for i in range(256) if ours.token_bytes(i) == b"\xe0"]
    assert ours.decode(broken) == "\ufffd"
    assert ours.decode_bytes(broken) == b"\xe0"
    with pytest.raises(UnicodeDecodeError):
        ours.decode(broken, errors="strict")


def test_an_unassigned_id_below_n_vocab_is_said_to_be_unassigned(ours, ref):
    # o200k_base has no token 199998 or 200000-200017, though n_vocab is 200019: tiktoken raises a
    # KeyError for them too. The message must not read as "not below n_vocab".
    for bad in (199998, 200000, np.int64(200017)):
        with pytest.raises(KeyError):
            ref.decode_single_token_bytes(int(bad))
        with pytest.raises(UnknownTokenError, match=r"is below n_vocab \(the vocabulary leaves it unassigned\)"):
            ours.decode([1, bad])
    with pytest.raises(UnknownTokenError) as past:
        ours.decode([ours.n_vocab])
    assert "unassigned" not in str(past.value)


def test_constructor_validates_vocabulary():
    with pytest.raises(VocabError, match="used twice"):
        ByteBPE({b"a": 0, b"b": 0}, pattern="gpt2")
    with pytest.raises(VocabError, match="used twice"):
        ByteBPE({b"a": 0}, pattern="gpt2", special_tokens={"<s>": 0})
    # ... but a special or added token may be the ordinary token of its bytes (HF keeps such an added
    # token: it is cut out of the text first, and merges make it too)
    ranks = {b"a": 0, b"b": 1, b"ab": 2}
    for option in ("special_tokens", "added_tokens"):
        tok = ByteBPE(ranks, pattern="gpt2", merges=[(b"a", b"b")], **{option: {"ab": 2}})
        assert tok.n_vocab == 3 and tok.encode("aab", allowed_special="all") == [0, 2]
        with pytest.raises(VocabError, match="used twice|belongs to both"):
            ByteBPE(ranks, pattern="gpt2", merges=[(b"a", b"b")], **{option: {"ba": 2}})
    with pytest.raises(VocabError, match="not in the vocabulary"):
        ByteBPE({b"a": 0, b"b": 1}, pattern="gpt2", merges=[(b"a", b"b")])
    with pytest.raises(VocabError, match="not a token id"):
        ByteBPE({b"a": 0}, pattern="gpt2", bos_id=5)
    with pytest.raises(VocabError, match="unknown pre-tokenizer|invalid pre-tokenizer"):
        ByteBPE({b"a": 0}, pattern="(")
    tok = ByteBPE({b"a": 0}, pattern="gpt2")
    with pytest.raises(TokenizerError, match="no token"):
        tok.encode("b")


def test_a_byte_without_a_token_is_named_with_its_place():
    """On a vocabulary without some byte tokens (falcon's, starcoder's GGUF) the error names more than
    the byte. The offset is in characters of the whole text, as for a disallowed special token,
    and is the first byte left without a token: an earlier one may be inside a token (``ab``)."""
    tok = ByteBPE({b"a": 0, b"b": 1, b"ab": 2, b" ": 3}, pattern="gpt2", special_tokens={"<s>": 10})
    for text, where in [("ab c", "b'c' at offset 3"), ("ab \u0dc1c", "b'\\xe0' at offset 3"),
                        ("<s>ab c", "b'c' at offset 6")]:
        with pytest.raises(TokenizerError, match=re.escape(where) + " has no token"):
            tok.encode(text, allowed_special="all")
    with pytest.raises(TokenizerError, match=re.escape("texts[1]: byte b'c' at offset 3 has no token")):
        tok.encode_batch(["ab", "ab c"])


# --- tiktoken files -------------------------------------------------------------------------


def test_from_tiktoken_by_path_and_name_agree(ours):
    by_path = ByteBPE.from_tiktoken(O200K_FILE)
    assert by_path.name == "o200k_base" and by_path.special_tokens == ours.special_tokens
    assert by_path.encode("Hello world") == ours.encode("Hello world") == [13225, 2375]


def test_cl100k_without_file_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("WWHO_TIKTOKEN_FILE", raising=False)
    with pytest.raises(VocabError, match="cl100k_base ranks file is not available offline.*To fix: pass "
                       "tiktoken_file=PATH .command line: --tiktoken-file PATH. or set WWHO_TIKTOKEN_FILE=PATH"):
        ByteBPE.from_tiktoken("cl100k_base")
    with pytest.raises(VocabError, match="not a known encoding"):
        ByteBPE.from_tiktoken("p99k_base")


def test_known_name_with_wrong_file_is_rejected(tmp_path):
    fake = tmp_path / "o200k_base.tiktoken"
    fake.write_bytes(b"YQ== 0\nYg== 1\n")
    with pytest.raises(VocabError, match="sha256"):
        ByteBPE.from_tiktoken(fake)
    with pytest.raises(VocabError, match="sha256"):
        ByteBPE.from_tiktoken("cl100k_base", tiktoken_file=fake)
    custom = ByteBPE.from_tiktoken(fake, pattern="gpt2")  # explicitly a custom file
    assert custom.encode("ab") == [0, 1]
    with pytest.raises(VocabError, match="pattern="):
        ByteBPE.from_tiktoken(_write(tmp_path, "x.tiktoken", b"YQ== 0\n"))


def _write(directory: Path, name: str, data: bytes) -> Path:
    path = directory / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "content,message",
    [
        (b"YQ== 0\n!!!! 1\n", r"x\.tiktoken:2: bad base64"),
        (b"YQ== 0\nYg==\n", r"x\.tiktoken:2: expected"),
        (b"YQ== 0\nYg== one\n", r"x\.tiktoken:2: bad base64 token or rank"),
        (b"YQ== 0\nYQ== 1\n", r"x\.tiktoken:2: token b'a' appears twice"),
        (b"YQ== 0\nYg== 0\n", r"x\.tiktoken:2: rank 0 also used on line 1"),
        (b"YQ== -3\n", r"x\.tiktoken:1: bad base64 token or rank"),
        (b"\n\n", r"no tokens"),
    ],
)
def test_bad_ranks_files(tmp_path, content, message):
    path = _write(tmp_path, "x.tiktoken", content)
    with pytest.raises(VocabError, match=message):
        read_tiktoken_ranks(path)
    with pytest.raises(VocabError):
        ByteBPE.from_tiktoken(path, pattern="gpt2")


def test_a_tiktoken_file_with_a_lost_line_is_refused(tmp_path):
    # On its own a .tiktoken file's ranks are its ids 0..n-1: a gap is a lost line, not a smaller vocabulary.
    path = _write(tmp_path, "x.tiktoken", b"YQ== 0\nYg== 2\n")
    assert read_tiktoken_ranks(path) == {b"a": 0, b"b": 2}  # the parser alone (wwho's directories may have gaps)
    with pytest.raises(VocabError, match=r"x\.tiktoken: ranks must be 0\.\.1 .* rank 1 is missing"):
        ByteBPE.from_tiktoken(path, pattern="gpt2")


def test_missing_ranks_file(tmp_path):
    with pytest.raises(VocabError, match="no such ranks file"):
        ByteBPE.from_tiktoken(tmp_path / "nope.tiktoken", pattern="gpt2")


# --- save / load / export ---------------------------------------------------------------------


def test_save_load_round_trip(ours, tmp_path):
    ours.save(tmp_path / "tok")
    files = sorted(p.name for p in (tmp_path / "tok").iterdir())
    assert files == ["bytelevel.json", "ranks.tiktoken", "wwho-manifest.json"]
    config = json.loads((tmp_path / "tok" / "bytelevel.json").read_text(encoding="utf-8"))
    assert config["version"] == 1 and config["merge_rule"] == "ranks"
    # The ranks file is the official format: tiktoken's own loader reads it back.
    from tiktoken.load import load_tiktoken_bpe

    assert load_tiktoken_bpe(str(tmp_path / "tok" / "ranks.tiktoken")) == dict(ours.ranks)
    back = ByteBPE.load(tmp_path / "tok")
    for line in _lines("si/flores200-devtest.txt", 100) + ["<|endoftext|> x"]:
        assert back.encode(line, allowed_special="all") == ours.encode(line, allowed_special="all")
    assert back.n_vocab == ours.n_vocab and back.special_tokens == ours.special_tokens


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda c: c.update(format="other"), "not a wwho byte-level tokenizer"),
        (lambda c: c.update(version=99), "format version 99"),
        (lambda c: c.update(version=True), "format version True"),  # not loaded as True == 1
        (lambda c: c.update(version=1.0), "format version 1.0"),
        (lambda c: c.pop("pretokenizer"), "missing key 'pretokenizer'"),
        (lambda c: c.update(merge_rule="magic"), "merge_rule"),
    ],
)
def test_load_rejects_bad_config(tmp_path, edit, message):
    tok = ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2", special_tokens={"<s>": 256})
    tok.save(tmp_path)
    config = json.loads((tmp_path / "bytelevel.json").read_text())
    edit(config)
    (tmp_path / "bytelevel.json").write_text(json.dumps(config))
    with pytest.raises(VocabError, match="bytelevel.json does not match wwho-manifest.json"):
        ByteBPE.load(tmp_path)  # the edit itself is caught first
    (tmp_path / "wwho-manifest.json").unlink()  # a directory made by hand: the content is checked
    with pytest.raises(VocabError, match=message):
        ByteBPE.load(tmp_path)


def test_load_rejects_non_json(tmp_path):
    (tmp_path / "bytelevel.json").write_bytes(b"\xff{")
    with pytest.raises(VocabError, match="not UTF-8"):
        ByteBPE.load(tmp_path)
    with pytest.raises(VocabError, match="cannot read"):
        ByteBPE.load(tmp_path / "absent")


@pytest.fixture(scope="module")
def o200k_hf(ours, tmp_path_factory):
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    ours.export_hf(path)
    return tokenizers.Tokenizer.from_file(str(path)), path


@pytest.mark.parametrize("rel,limit", [("en/flores200-devtest.txt", 500), ("si/flores200-devtest.txt", 300)])
def test_export_hf_runs_identically_in_tokenizers(ours, o200k_hf, rel, limit):
    hf, _ = o200k_hf
    lines = _lines(rel, limit)
    got = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    assert got == [ours.encode(x) for x in lines]


@FUZZ
@given(text=fuzz_text)
def test_export_hf_fuzzed(ours, o200k_hf, text):
    hf, _ = o200k_hf
    if any(s in text for s in SPECIALS):  # HF always matches special text; tiktoken only when allowed
        assert hf.encode(text).ids == ours.encode(text, allowed_special="all")
    else:
        assert hf.encode(text).ids == ours.encode(text)


def test_export_hf_directory_has_the_end_of_text_role_and_every_id(ours, tmp_path):
    """The HF directory of o200k_base names its eos_token, and its 200,000 tokens alone would leave
    len(tokenizer) below the ids it gives (<|endofprompt|> is 200,018), so that
    resize_token_embeddings(len(tok)) would make too few rows. The ids without a token are filled with
    special <|reserved_ID|> tokens, as wwho extend fills them."""
    ours.export_hf(tmp_path / "o200k")
    config = json.loads((tmp_path / "o200k" / "tokenizer_config.json").read_text(encoding="utf-8"))
    roles = json.loads((tmp_path / "o200k" / "special_tokens_map.json").read_text(encoding="utf-8"))
    assert config["eos_token"] == roles["eos_token"] == "<|endoftext|>" and config["add_eos_token"] is False
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "o200k" / "tokenizer.json"))
    assert hf.get_vocab_size(with_added_tokens=True) == ours.n_vocab
    holes = []
    for i in range(ours.n_vocab):
        try:
            ours.decode_single_token_bytes(i)
        except TokenizerError:
            holes.append(i)
    assert holes == [199_998, *range(200_000, 200_018)]  # o200k_base's, as tiktoken numbers it
    for i in holes:
        assert hf.id_to_token(i) == f"<|reserved_{i}|>"
        assert hf.decode([i], skip_special_tokens=True) == ""
    assert hf.encode("<|endofprompt|>").ids == [200_018]
    line = _lines("en/flores200-devtest.txt", 1)[0]
    assert hf.encode(line).ids == ours.encode(line)


def test_from_hf_reads_the_roles_of_the_files_beside_it(tmp_path):
    """A tokenizer.json names no roles, so an HF export or a saved extension read back would have no
    EOS (wwho inspect showing 'eos None' for a Llama 3 extension). The roles come
    from special_tokens_map.json / tokenizer_config.json beside it, as transformers reads them."""
    from conftest import require_data

    from wwho.errors import ChangedFileWarning

    gguf = require_data(DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf")
    base = ByteBPE.from_gguf(gguf)
    base.export_hf(tmp_path / "llama")
    back = ByteBPE.from_hf(tmp_path / "llama" / "tokenizer.json")
    assert (back.model.bos_id, back.model.eos_id) == (base.model.bos_id, base.model.eos_id) == (128000, 128001)
    assert back.encode("hi there") == base.encode("hi there")
    (tmp_path / "llama" / "special_tokens_map.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "llama" / "tokenizer_config.json").write_text("[]", encoding="utf-8")
    with pytest.warns(ChangedFileWarning, match="special_tokens_map.json, tokenizer_config.json changed"):
        alone = ByteBPE.from_hf(tmp_path / "llama" / "tokenizer.json")  # files it cannot use name no role
    assert (alone.model.bos_id, alone.model.eos_id) == (128000, None)  # the BOS its post-processor adds


def test_from_hf_reads_the_export_back(ours, o200k_hf):
    _, path = o200k_hf
    back = ByteBPE.from_hf(path)
    assert back.merges is not None  # the merges rule this time
    for line in _lines("en/flores200-devtest.txt", 200) + _lines("si/flores200-devtest.txt", 100):
        assert back.encode(line) == ours.encode(line)


def test_from_hf_rejects_unsupported(tmp_path):
    base = {"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}
    cases = [
        ({**base, "model": {"type": "WordPiece", "vocab": {}}}, "not BPE"),
        ({**base, "normalizer": {"type": "NFC"}}, "normalizer"),
        ({**base, "pre_tokenizer": {"type": "Whitespace"}}, "not supported"),
        ({**base, "pre_tokenizer": {"type": ["ByteLevel"]}}, "not supported"),  # (a TypeError once)
        ({**base, "decoder": {"type": {}}}, "not ByteLevel"),
        ({**base, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Isolated"}},
         "no ByteLevel"),
        ({"pre_tokenizer": None}, "the entry 'model' is missing"),
        # values HF tokenizers refuses to load (checked against it below), not silently taken
        ({**base, "model": {**base["model"], "byte_fallback": 3}}, "model.byte_fallback must be true or false"),
        ({**base, "model": {**base["model"], "continuing_subword_prefix": []}},
         "model.continuing_subword_prefix must be a string or null"),
        ({**base, "model": {**base["model"], "dropout": "x"}}, "model.dropout must be a number or null"),
    ]
    for n, (data, message) in enumerate(cases):
        path = tmp_path / f"t{n}.json"
        path.write_text(json.dumps(data))
        with pytest.raises(VocabError, match=message):
            ByteBPE.from_hf(path)
        if "must be" in message:
            with pytest.raises(Exception, match="invalid type"):  # noqa: B017 (HF raises bare Exception)
                tokenizers.Tokenizer.from_file(str(path))


def test_random_small_vocab_round_trips_through_every_format(tmp_path):
    """A toy merges-rule vocabulary: save/load and export/from_hf keep its ids."""
    rng = random.Random(7)
    ranks = {bytes([b]): b for b in range(256)}
    merges = []
    for _ in range(300):
        a, b = rng.sample(list(ranks), 2)
        if a + b not in ranks and len(a + b) < 8:
            ranks[a + b] = len(ranks)
            merges.append((a, b))
    tok = ByteBPE(ranks, pattern="gpt2", merges=merges, special_tokens={"<|s|>": len(ranks)})
    text = "".join(rng.choice("ab cde\nfg1,2") for _ in range(2000))
    tok.save(tmp_path / "d")
    names = sorted(p.name for p in (tmp_path / "d").iterdir())
    assert names == ["bytelevel.json", "merges.txt", "ranks.tiktoken", "wwho-manifest.json"]
    assert ByteBPE.load(tmp_path / "d").encode(text) == tok.encode(text)
    tok.export_hf(tmp_path / "t.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json"))
    assert hf.encode(text).ids == tok.encode(text)
    assert ByteBPE.from_hf(tmp_path / "t.json").encode(text) == tok.encode(text)


# --- the core against the pure-Python reference --------------------------------------------------

_spacey = st.lists(
    st.one_of(
        st.sampled_from(
            [" ", "  ", "\n", " \n", "\n ", "\t", " \t ", "\r\n", "\u00a0", "\u3000", " '", "'s ", "  \n\n "]
        ),
        st.text(alphabet="ab AB12.,!?'/-\n\u0300ශ්‍රී中😀\u200d\u00a0", max_size=8),
        st.text(max_size=6),
    ),
    max_size=25,
).map("".join)


# One name per distinct regex list (the other GGUF names share these lists).
@pytest.mark.parametrize(
    "name",
    [
        "gpt2", "cl100k", "o200k", "llama-bpe", "qwen2", "gpt-2", "falcon", "deepseek-llm", "deepseek-coder",
        "starcoder",
    ],
)
def test_ranks_rule_equals_the_reference(ours, name):
    """Ids of the core against the pure-Python encoder it replaced, o200k's ranks, every pre-tokenizer."""
    tok = ByteBPE(ours.ranks, pattern=name, special_tokens={"<|endoftext|>": 199999}, added_tokens={"@@": 200000})
    ref = ReferenceByteBPE(tok.model)

    @settings(max_examples=80, deadline=None)
    @given(text=st.one_of(_spacey, fuzz_text, st.text(max_size=40)))
    def check(text):
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text)
        assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
        assert tok.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
        try:
            expected = ref.encode(text)
        except ReferenceDisallowed as exc:
            with pytest.raises(DisallowedSpecialError) as info:
                tok.encode(text)
            assert (info.value.token, info.value.offset) == (exc.token, exc.offset)
        else:
            assert tok.encode(text) == expected

    check()
    lines = _lines("en/flores200-devtest.txt", 100) + _lines("si-en/news-codeswitched-lines.txt", 20)
    text = "\n".join(lines) + " \n  end "
    assert tok.encode_ordinary(text) == ref.encode_ordinary(text)


@pytest.fixture(scope="module")
def merges_tok(ours):
    """A merges-rule vocabulary (o200k's first 5000 tokens as pairs), a byte missing, byte stages."""
    small = {t: r for t, r in ours.ranks.items() if r < 5000 and t != b"\x00"}
    merges = tiktoken_merges(small)
    random.Random(3).shuffle(merges)  # an order tiktoken's rule would not give: the pair list rules
    return ByteBPE(small, merges=merges, pattern=ByteBPE(ours.ranks).pretokenizer,
                   special_tokens={"<|endoftext|>": 199999}, added_tokens={"ශ්‍රී": 199990})


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_merges_rule_equals_the_reference(merges_tok, ignore_merges):
    tok = ByteBPE.from_model(merges_tok.model) if not ignore_merges else ByteBPE(
        merges_tok.ranks, merges=merges_tok.merges, ignore_merges=True, pattern="llama-bpe",
        added_tokens={"ශ්‍රී": 199990})
    ref = ReferenceByteBPE(tok.model)

    @settings(max_examples=150, deadline=None)
    @given(text=st.one_of(_spacey, fuzz_text, st.text(max_size=40)))
    def check(text):
        try:
            expected = ref.encode_ordinary(text)
        except ValueError as exc:  # a NUL byte has no token here
            with pytest.raises(TokenizerError, match="has no token"):
                tok.encode_ordinary(text)
            assert "\x00" in text and "b'\\x00'" in str(exc)
        else:
            assert tok.encode_ordinary(text) == expected

    check()
    long = "ශ්‍රී ලංකාව " * 50 + "x" * 5000
    assert tok.encode_ordinary(long) == ref.encode_ordinary(long)
    # Many one- and two-byte pieces (answered from the byte tables) and the cache left alone.
    latin1 = random.Random(5).randbytes(20_000).decode("latin-1").replace("\x00", "")
    assert tok.encode_ordinary(latin1) == ref.encode_ordinary(latin1)


def test_merges_rule_with_bytes_at_high_ids_equals_the_reference(merges_tok):
    """The byte tokens moved to the top ids and o200k's most frequent two-byte-and-longer tokens to
    the ids below 256, where the core answers pairs from its dense table of small ids' merges
    (`SmallPairs`): pairs such as (" t", "he") then come from that table."""
    top = max(merges_tok.ranks.values())
    ranks = {token: i - 256 if len(token) > 1 else top + 1 + i for token, i in merges_tok.ranks.items()}
    assert len(set(ranks.values())) == len(ranks)
    assert all(len(t) > 1 for t, i in ranks.items() if i < 256)
    tok = ByteBPE(ranks, merges=merges_tok.merges, pattern="llama-bpe")
    ref = ReferenceByteBPE(tok.model)

    @settings(max_examples=100, deadline=None)
    @given(text=st.one_of(_spacey, fuzz_text, st.text(st.characters(codec="latin-1", exclude_characters="\x00"))))
    def check(text):
        text = text.replace("\x00", "")  # no token here (see merges_tok)
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text)

    check()
    lines = "\n".join(_lines("en/flores200-devtest.txt", 100))
    assert tok.encode_ordinary(lines) == ref.encode_ordinary(lines)


def test_byte_stage_tokenizer_equals_the_reference(ours):
    from wwho.bytelevel import Pretokenizer

    pre = Pretokenizer(("\\p{N}+",), (r"[\u00c0-\u00ff]|Ġ", "[^Ġ]+"))
    tok = ByteBPE(ours.ranks, pattern=pre)
    ref = ReferenceByteBPE(tok.model)

    @settings(max_examples=100, deadline=None)
    @given(text=st.one_of(fuzz_text, st.text(max_size=30)))
    def check(text):
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text)

    check()


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(st.integers(0, 200_050), max_size=40))
def test_decode_of_arbitrary_ids(ours, ids):
    known = [i for i in ids if i < 199998 or i in (199999, 200018)]
    assert ours.decode_bytes(known) == b"".join(ours.token_bytes(i) for i in known)
    if len(known) < len(ids):
        position = next(n for n, i in enumerate(ids) if i not in known)
        with pytest.raises(TokenizerError, match=f"position {position}"):
            ours.decode_bytes(ids)


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=80))
def test_round_trip_of_arbitrary_bytes_as_text(ours, data):
    text = data.decode("utf-8", "replace")
    assert ours.decode(ours.encode_ordinary(text)) == text


@pytest.mark.parametrize("name", ["gpt2", "cl100k"])
def test_exported_regex_forms_split_like_the_named_ones_in_huggingface(name):
    """export_hf writes tiktoken's possessive regexes in forms Oniguruma reads right ('{1,3}+' it
    reads as a repeated group): Hugging Face's own Split on the exported form gives our pieces."""
    from tokenizers import Regex, pre_tokenizers

    from wwho.bytelevel.hf_files import _hf_split
    from wwho.bytelevel.pretokenize import Pretokenizer

    ours = Pretokenizer.named(name)
    exported = _hf_split(ours.patterns[0])["pattern"]["Regex"]
    hf = pre_tokenizers.Split(Regex(exported), "isolated")
    for text in ["x  \n  ", "it's  \r\n ", "a 123456 b\n\n", "  \t"]:
        assert [p for p, _ in hf.pre_tokenize_str(text)] == ours.split(text)

    @FUZZ
    @given(text=st.one_of(fuzz_text, _spacey))
    def check(text):
        assert [p for p, _ in hf.pre_tokenize_str(text)] == ours.split(text)

    check()


def test_export_refuses_possessive_intervals(tmp_path):
    tok = ByteBPE({bytes([b]): b for b in range(256)}, pattern=r"\p{N}{1,3}+|\D+")
    with pytest.raises(VocabError, match="possessive interval"):
        tok.export_hf(tmp_path / "t.json")


# --- the core's .tiktoken parser against the Python reader ------------------------------------

_tiktoken_lines = st.lists(
    st.one_of(
        st.tuples(st.binary(min_size=0, max_size=6), st.integers(0, 40)).map(
            lambda t: __import__("base64").b64encode(t[0]) + b" " + str(t[1]).encode()),
        st.sampled_from([b"", b"  ", b"YQ== 1_0", b"YQ== -1", b"YQ== +1", b"YQ==", b"YQ 3", b"Y=Q= 3",
                         b"YR== 4", b"YQ==\t5", b"YQ== 2147483648", b"YQ== 99999999999999999999", b"\xff 1",
                         b"YQ== \xd9\xa3", b"YWI= 7 8"]),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(lines=_tiktoken_lines, sep=st.sampled_from([b"\n", b"\r\n", b"\r", b"\x0b"]))
def test_core_tiktoken_parser_is_at_least_as_strict_and_agrees(lines, sep):
    """read_tiktoken_ranks trusts the core's parse of a valid file: wherever the Python reader
    refuses a file the core must too, and wherever both accept, the ranks must be the same."""
    from wwho import _core
    from wwho.bytelevel.files import _read_tiktoken_python

    data = sep.join(lines)
    try:
        expected = _read_tiktoken_python(Path("x.tiktoken"), data)
    except VocabError:
        expected = None
    try:
        got = _core.read_tiktoken(data)
    except _core.CoreVocabError:
        got = None
    if expected is None:
        assert got is None or max(got.values()) >= 2**31
    elif got is not None:
        assert got == expected


def test_o200k_equals_tiktoken_on_random_latin1(cache_dir, ref):
    # Many short new pieces: the core answers one- and two-byte pieces from its byte tables and
    # leaves its shared piece cache alone while it misses (rust/src/bytelevel/cache/bypass.rs),
    # which must change no id.
    tok = ByteBPE.from_tiktoken("o200k_base")
    text = random.Random(7).randbytes(300_000).decode("latin-1")
    assert tok.encode_ordinary(text) == ref.encode_ordinary(text)
    # The shared cache was left alone after its first windows: it holds a fraction of the pieces
    # long enough for it (6+ bytes), not all of them.
    long_pieces = {p for p in regex.findall(ref._pat_str, text) if 6 <= len(p.encode()) <= 256}
    kept, _ = tok.cache_info()
    assert 0 < kept < len(long_pieces) / 2
    # Text that repeats itself is cached again within the same call.
    assert tok.encode_ordinary(text[:2000] * 40) == ref.encode_ordinary(text[:2000] * 40)


def test_describe_shows_bytes_of_no_character_as_the_cli_does():
    """Not '\\\\xe0' (repr of a backslash escape): the same as a token whose text is the four
    characters \\xe0."""
    from wwho.bytelevel import ByteBPE

    ranks = {bytes([b]): b for b in range(256)} | {b"\xe0\xa4": 256, b"\\xe0": 257}
    text = ByteBPE(ranks, pattern="gpt2").describe()  # the longest tokens: both, told apart
    assert "<0xE0><0xA4>" in text and "[\\xe0]" in text and "\\\\x" not in text


def test_special_and_added_tokens_are_read_only_views():
    # A public dict went out of step with the core's copy (clear() changed decode's skip and what a
    # pickle rebuilt, but not encode): read-only, as `ranks` is.
    import pickle

    enc = ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2", special_tokens={"<|end|>": 256},
                  added_tokens={"<add>": 257})
    for table in (enc.special_tokens, enc.added_tokens):
        with pytest.raises(TypeError):
            table.clear()
        with pytest.raises(TypeError):
            table["x"] = 9  # type: ignore[index]
        assert pickle.loads(pickle.dumps(table)) == dict(table)  # (a worker may return it: a plain dict)
    again = pickle.loads(pickle.dumps(enc))
    assert dict(again.special_tokens) == {"<|end|>": 256} and again.n_vocab == enc.n_vocab == 258
    assert again.decode([97, 256, 98], skip_special_tokens=True) == "ab"


def test_tokenizers_used_in_turn_on_threads_keep_their_own_ids(ours, ref):
    """Each thread keeps a memo of short pieces for the tokenizers it runs: tokenizers of other
    vocabularies (o200k_base, a GGUF's, a vocabulary of bytes only) used in turn on several
    threads, and one of them after clear_cache, each give their own ids, as tiktoken's and as
    each gives alone."""
    from concurrent.futures import ThreadPoolExecutor

    from conftest import CORPORA

    gguf = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
    _need(gguf)
    llama = ByteBPE.from_gguf(gguf)
    bytes_only = ByteBPE({bytes([b]): b for b in range(256)}, pattern="o200k")
    path = CORPORA / "en" / "news-lk_news.txt"
    _need(path)
    lines = path.read_text(encoding="utf-8").splitlines()[:400]
    want = {name: [tok.encode_ordinary(x) for x in lines]
            for name, tok in (("o200k", ref), ("llama", llama), ("bytes", bytes_only))}
    tokenizers = {"o200k": ours, "llama": llama, "bytes": bytes_only}

    def run(seed: int) -> bool:
        for round in range(3):
            for k, line in enumerate(lines):
                name = ("o200k", "llama", "bytes")[(k + seed + round) % 3]
                if tokenizers[name].encode_ordinary(line) != want[name][k]:
                    return False
            ours.clear_cache()
        return True

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(run, range(8)))


def test_every_allowed_and_disallowed_set_acts_as_tiktoken(ours, ref):
    # A disallowed "all" with some tokens allowed is every other special token; the core makes
    # that set from indices now (it was passed as the others' names), in every encode method.
    eot, eop = "<|endoftext|>", "<|endofprompt|>"
    texts = [f"a{eot}b{eop}c", f"{eop}x", f"x{eot}", "plain"]
    # The defaults take a path of their own (an identity test on the default objects): equal values
    # that are other objects (an empty set, an "all" built at run time) take the general one.
    built_all = "".join(["al", "l"])
    default_all = type(ours).encode.__kwdefaults__["disallowed_special"]
    assert built_all == default_all and built_all is not default_all
    for allowed in (frozenset(), set(), {eot}, {eop}, {eot, eop}, "all"):
        for disallowed in ("all", built_all, (), {eot}, {eop}):
            options = dict(allowed_special=allowed, disallowed_special=disallowed)
            for text in texts:
                try:
                    want = ref.encode(text, **options)
                except ValueError:
                    want = ValueError
                calls = [lambda t, o: ours.encode(t, **o), lambda t, o: ours.encode_to_numpy(t, **o).tolist(),
                         lambda t, o: ours.encode_batch([t], **o)[0],
                         lambda t, o: ours.encode_batch_to_numpy([t], **o)[0].tolist()]
                for call in calls:
                    if want is ValueError:
                        with pytest.raises(DisallowedSpecialError):
                            call(text, options)
                    else:
                        assert call(text, options) == want, (text, options)


def test_describe_counts_no_more_merges_or_tokens_than_there_are(tokenizers):
    """``wwho inspect --top 100000000`` does not print "first 100000000 merges" over the few there
    are; it counts them, as the binary inspector does."""
    from wwho.bytelevel import ByteBPE

    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    text = ByteBPE(ranks, pattern="gpt2").describe(top=10**8)
    assert "longest 257 tokens:" in text and "100000000" not in text
    sgpe = tokenizers["sinhala"]
    text = sgpe.describe(top=10**8)
    assert f"first {len(sgpe.merges)} merges:" in text and "100000000" not in text


@pytest.mark.parametrize("allowed", [{"<|end|>"}, "all"])
def test_a_special_token_allowed_and_disallowed_is_refused_saying_so(allowed):
    """Such a text is refused as tiktoken refuses it, but the advice
    was to pass allowed_special={'<|end|>'}, which the caller had done."""
    from wwho.errors import DisallowedSpecialError

    enc = ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2", special_tokens={"<|end|>": 256})
    assert enc.encode("x", allowed_special=allowed, disallowed_special={"<|end|>"}) == [120]
    for call in (lambda: enc.encode("x<|end|>", allowed_special=allowed, disallowed_special={"<|end|>"}),
                 lambda: enc.encode_batch(["a", "x<|end|>"], allowed_special=allowed, disallowed_special={"<|end|>"})):
        with pytest.raises(DisallowedSpecialError, match=r"is in both allowed_special and disallowed_special .*"
                                                         r"take it out of disallowed_special"):
            call()
