"""StreamingDecoder: token-by-token output concatenates to the batch decode (real corpus lines,
fuzzed id sequences with broken UTF-8), split characters are held back until complete, and it
works with any object that has ``token_bytes``.
"""

from __future__ import annotations

import copy
from typing import ClassVar

import numpy as np
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.bytelevel import ByteBPE
from wwho.bytelevel.streaming import StreamingDecoder
from wwho.errors import TokenizerError, WrongTypeError

O200K_FILE = DATA / "tiktoken" / "o200k_base.tiktoken"


@pytest.fixture(scope="module")
def o200k_bpe():
    if not O200K_FILE.exists():
        pytest.skip(f"{O200K_FILE} is absent: the shared data folder is needed for this test")
    return ByteBPE.from_tiktoken(O200K_FILE)


@pytest.fixture(scope="module")
def bytes_only():
    """Every token is one byte, so every multi-byte character is split over tokens."""
    return ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2", special_tokens={"<|end|>": 256})


def _stream(tokenizer, ids) -> tuple[list[str], str]:
    dec = StreamingDecoder(tokenizer)
    parts = [dec.decode_token(i) for i in ids]
    return parts, dec.flush()


def test_emoji_split_over_tokens_is_held_back(bytes_only, o200k_bpe):
    ids = bytes_only.encode("🦙")
    assert len(ids) == 4
    parts, rest = _stream(bytes_only, ids)
    assert parts == ["", "", "", "🦙"] and rest == ""
    # The same with real o200k tokens: the llama emoji is more than one token there.
    ids = o200k_bpe.encode("🦙")
    assert len(ids) > 1
    parts, rest = _stream(o200k_bpe, ids)
    assert parts[:-1] == [""] * (len(ids) - 1) and parts[-1] == "🦙" and rest == ""


def test_sinhala_characters_split_by_o200k(o200k_bpe):
    text = "ශ්‍රී ලංකාව"
    ids = o200k_bpe.encode(text)
    parts, rest = _stream(o200k_bpe, ids)
    assert "".join(parts) + rest == text
    assert all("\ufffd" not in p for p in parts)


@pytest.mark.parametrize(
    "rel", ["si/flores200-devtest.txt", "en/flores200-devtest.txt", "si-en/news-codeswitched-lines.txt"]
)
def test_stream_equals_decode_on_corpus_lines(o200k_bpe, rel):
    path = DATA / "corpora" / rel
    if not path.exists():
        pytest.skip(f"{path} is absent")
    lines = path.read_text(encoding="utf-8").splitlines()[:400]
    dec = StreamingDecoder(o200k_bpe)
    for line in lines:
        ids = o200k_bpe.encode(line)
        assert "".join(dec.decode_token(i) for i in ids) + dec.flush() == o200k_bpe.decode(ids) == line


@settings(max_examples=300, deadline=None)
@given(ids=st.lists(st.integers(0, 256), max_size=40))
def test_stream_equals_decode_on_any_byte_sequence(bytes_only, ids):
    """Arbitrary bytes, so truncated, overlong and stray continuation bytes all occur."""
    parts, rest = _stream(bytes_only, ids)
    assert "".join(parts) + rest == bytes_only.decode(ids)
    raw = b"".join(bytes_only.token_bytes(i) for i in ids)
    assert raw.decode("utf-8", "replace") == "".join(parts) + rest


@settings(max_examples=100, deadline=None)
@given(ids=st.lists(st.integers(0, 199997), max_size=30), cut=st.integers(0, 30))
def test_decode_tokens_in_chunks(o200k_bpe, ids, cut):
    dec = StreamingDecoder(o200k_bpe)
    out = dec.decode_tokens(ids[:cut]) + dec.decode_tokens(ids[cut:]) + dec.flush()
    assert out == o200k_bpe.decode(ids)


def test_flush_and_reset(bytes_only):
    dec = StreamingDecoder(bytes_only)
    assert dec.decode_token(0xE0) == "" and dec.pending == b"\xe0"
    assert dec.flush() == "\ufffd" and dec.pending == b""
    assert dec.flush() == ""
    dec.decode_token(0xF0)
    dec.decode_token(0x9F)
    dec.reset()
    assert dec.pending == b"" and dec.decode_token(ord("a")) == "a"
    assert dec.decode_token(256) == "<|end|>"


def test_bad_ids_and_bad_tokenizers(bytes_only):
    dec = StreamingDecoder(bytes_only)
    with pytest.raises(TokenizerError):
        dec.decode_token(999)
    for tokenizer in (object(), None):  # a TypeError, and one of wwho's, as every refusal of wwho's
        with pytest.raises(WrongTypeError, match="token_bytes"):
            StreamingDecoder(tokenizer)


@pytest.mark.parametrize("copy", [copy.copy, copy.deepcopy])
def test_a_copy_is_a_stream_of_its_own(bytes_only, copy):
    # copy.copy shared the unfinished character's buffer: the copy's tokens completed it and the
    # original then gave two U+FFFD for the same tokens.
    ids = list("😀".encode())
    dec = StreamingDecoder(bytes_only)
    assert dec.decode_token(ids[0]) == ""
    branch = copy(dec)
    assert branch.pending == dec.pending != b""
    assert "".join(map(branch.decode_token, ids[1:])) + branch.flush() == "😀"
    assert dec.pending != b""
    assert "".join(map(dec.decode_token, ids[1:])) + dec.flush() == "😀"


@pytest.mark.parametrize("copy", [copy.copy, copy.deepcopy])
def test_a_copy_is_of_the_class_copied_and_shares_the_tokenizer(bytes_only, copy):
    """A subclass's copy is the subclass (a copy made a plain decoder, which lost its methods), and
    the tokenizer is shared, never copied: a deep copy of a decoder of o200k copied its 200,000
    tokens for each branch of a beam."""

    class Numbered(StreamingDecoder):
        pass

    dec = Numbered(bytes_only)
    dec.decode_token(0xF0)
    branch = copy(dec)
    assert type(branch) is Numbered and branch.tokenizer is bytes_only and branch.pending == b"\xf0"


@pytest.mark.parametrize("ids, message", [
    (b"ab", "got bytes"),  # its ints, 97 and 98, would be decoded
    ({97: 0, 98: 0}, "not a dict"),  # its keys would be
    ({97, 98}, "not a set"),
    (97, "got int"),
    ([97, 1.5], "position 1 is 1.5, not an integer"),
    ([True], "is True"),
])
def test_decode_tokens_takes_what_decode_takes(bytes_only, ids, message):
    np = pytest.importorskip("numpy")
    dec = StreamingDecoder(bytes_only)
    with pytest.raises(TokenizerError, match=message):
        dec.decode_tokens(ids)
    with pytest.raises(TokenizerError, match="single id"):
        dec.decode_tokens(np.array(97))
    assert dec.pending == b"" and dec.decode_tokens(np.array([97, 98], dtype=np.uint32)) == "ab"


def test_any_object_with_token_bytes():
    class Syllables:  # what SGPE and Meta tokenizers provide
        table: ClassVar[dict[int, bytes]] = {
            0: "\u0dc1\u0dca\u200d\u0dbb\u0dd3".encode(), 1: " \u0dbd\u0d82".encode(), 2: "\u0d9a\u0dcf".encode(),
        }

        def token_bytes(self, token_id: int) -> bytes:
            return self.table[token_id]

    parts, rest = _stream(Syllables(), [0, 1, 2])
    assert parts == ["\u0dc1\u0dca\u200d\u0dbb\u0dd3", " \u0dbd\u0d82", "\u0d9a\u0dcf"] and rest == ""


@pytest.mark.parametrize("kind", ["sgpe", "meta"])
def test_stream_equals_decode_for_sgpe_and_meta(tokenizers, o200k, kind):
    """The other wwho tokenizers (SGPE, tiktoken + SGPE meta) stream-decode through token_bytes too."""
    from wwho.meta import MetaTokenizer

    sgpe = tokenizers["sinhala"]  # the session's SGPE tokenizer (tests/conftest.py)
    tok = sgpe if kind == "sgpe" else MetaTokenizer(sgpe, o200k)
    lines = []
    for rel, n in (("si/flores200-devtest.txt", 200), ("si-en/news-codeswitched-lines.txt", 30)):
        path = DATA / "corpora" / rel
        if not path.exists():
            pytest.skip(f"{path} is absent")
        lines += path.read_text(encoding="utf-8").splitlines()[:n]
    # Characters o200k cuts into bytes (U+1D11E, U+13000), outside and next to an Indic run: the
    # SGPE vocabulary of the defaults keeps every Sinhala character, so Sinhala alone need not split any.
    lines.append("clef 𝄞 and 𓀀 ශ්‍රී ලංකාව 𝄞")
    dec = StreamingDecoder(tok)
    split_chars = 0
    for line in lines:
        ids = tok.encode(line)
        parts = [dec.decode_token(i) for i in ids]
        assert "".join(parts) + dec.flush() == tok.decode(ids) == line
        split_chars += parts.count("")
    if kind == "meta":
        assert split_chars > 0  # o200k splits some characters over tokens: the buffering was exercised


@pytest.mark.parametrize("variant", ["prefix", "words-superwords-prefix"])
def test_stream_drops_the_dummy_space_as_decode_does(variants, variant):
    """With ``prefix_space`` the stream drops the leading space, as ``decode`` does."""
    tok = variants[variant]
    assert tok.prefix_space
    dec = StreamingDecoder(tok)
    for text in ("ශ්‍රී ලංකාව", " ශ්‍රී", "  x", "", "abc ශ්‍රී"):
        ids = tok.encode(text)
        assert "".join(map(dec.decode_token, ids)) + dec.flush() == tok.decode(ids) == text
        for cut in range(len(ids) + 1):  # in chunks, and after a reset
            dec.decode_token(ids[0]) if ids else None
            dec.reset()
            assert dec.decode_tokens(ids[:cut]) + dec.decode_tokens(ids[cut:]) + dec.flush() == text



def test_a_strict_decoder_is_usable_after_bad_bytes(bytes_only):
    # After one error every later token raised it again (the bad bytes stayed pending), and the
    # error was a bare UnicodeDecodeError.
    good = bytes_only.encode("ok ශ්‍රී")
    dec = StreamingDecoder(bytes_only, errors="strict")
    assert dec.decode_token(0xE0) == ""  # a lead byte
    with pytest.raises(TokenizerError, match="not UTF-8"):
        dec.flush()
    assert dec.pending == b""
    assert dec.decode_tokens(good) + dec.flush() == "ok ශ්‍රී"
    with pytest.raises(TokenizerError, match="not UTF-8"):
        dec.decode_tokens([0xE0, *good])  # a lead byte without its continuation bytes
    assert dec.pending == b""
    assert dec.decode_tokens(good) + dec.flush() == "ok ශ්‍රී"


def test_a_strict_error_carries_the_text_completed_before_the_bad_bytes(bytes_only):
    # decode_tokens of a long stream ending in a bad byte raised and lost every valid character
    # before it, which the same ids fed one at a time would have returned.
    good = bytes_only.encode("Hello ශ්‍රී")
    sinhala = "ශ".encode()
    dec = StreamingDecoder(bytes_only, errors="strict")
    for ids, text in (([*good, 0xFF], "Hello ශ්‍රී"), ([*good, sinhala[0], sinhala[1], 0x41], "Hello ශ්‍රී"),
                      ([0xFF, *good], "")):
        with pytest.raises(TokenizerError, match="not UTF-8") as caught:
            dec.decode_tokens(ids)
        assert caught.value.text == text
    assert dec.decode_token(good[0]) == "H"  # the text so far was returned; the rest still raises
    with pytest.raises(TokenizerError) as caught:
        dec.decode_tokens([*good[1:], 0xC3])
        dec.flush()
    assert caught.value.text == ""


def test_a_strict_error_is_also_the_unicode_decode_error_decode_raises(bytes_only):
    """``decode(ids, errors="strict")`` raises UnicodeDecodeError (as tiktoken), and the streaming
    decoder must raise one too, not a TokenizerError that is none, or code catching one misses the
    other."""
    import pickle

    from wwho.errors import NotUTF8Error

    ids = [*bytes_only.encode("ok"), 0xFF]
    with pytest.raises(UnicodeDecodeError):
        bytes_only.decode(ids, errors="strict")
    with pytest.raises(UnicodeDecodeError) as caught:
        StreamingDecoder(bytes_only, errors="strict").decode_tokens(ids)
    error = caught.value
    assert isinstance(error, NotUTF8Error) and isinstance(error, TokenizerError)
    assert error.text == "ok" and error.reason == "invalid start byte" and "not UTF-8" in str(error)
    again = pickle.loads(pickle.dumps(error))
    assert (str(again), again.text, again.start, again.end) == (str(error), "ok", error.start, error.end)


def test_surrogatepass_bytes_that_are_no_utf8_after_a_surrogate_are_not_utf8_error(bytes_only):
    """With ``errors="surrogatepass"``, bad bytes after a lone surrogate's bytes must not make the
    error's own text (decoded strictly) raise a plain UnicodeDecodeError instead."""
    from wwho.errors import NotUTF8Error

    ids = [*bytes_only.encode("ok"), 0xED, 0xA0, 0x80, 0xFF]
    for call in (lambda: StreamingDecoder(bytes_only, errors="surrogatepass").decode_tokens(ids),
                 lambda: bytes_only.decode(ids, errors="surrogatepass")):
        with pytest.raises(NotUTF8Error) as caught:
            call()
        assert caught.value.text == "ok\ud800" and caught.value.start == 5


@pytest.mark.parametrize("errors", ["bogus", 5, None, "replace\x00", "\ud800"])
def test_errors_must_name_an_error_handler(bytes_only, errors):
    # A typo was accepted and failed only at the first bad byte (a LookupError).
    with pytest.raises(TokenizerError, match="errors"):
        StreamingDecoder(bytes_only, errors=errors)


def test_a_bad_id_is_named_by_its_position(tokenizers):
    # SGPE's message said "position 0" whatever the position.
    sgpe = tokenizers["sinhala"]
    ok = sgpe.encode("ශ්‍රී")
    with pytest.raises(TokenizerError, match=rf"ids\[{len(ok)}\]: token id -1 is out of range"):
        StreamingDecoder(sgpe).decode_tokens([*ok, -1])


@pytest.mark.parametrize("kind", ["bytes", "sgpe", "prefix", "meta"])
def test_skipping_special_tokens_streams_what_decode_skipping_them_gives(bytes_only, tokenizers, variants, o200k,
                                                                          kind):
    """``StreamingDecoder(tok, skip_special_tokens=True)``, token by token and in chunks, gives
    ``decode(ids, skip_special_tokens=True)``, as HF's ``DecodeStream`` takes the option; with a
    dummy space, the first token after skipped ones at the start still loses it."""
    import random

    from wwho.meta import MetaTokenizer

    tok = {"bytes": lambda: bytes_only, "sgpe": lambda: tokenizers["sinhala"], "prefix": lambda: variants["prefix"],
           "meta": lambda: MetaTokenizer(tokenizers["sinhala"], o200k)}[kind]()
    specials = [i for i in range(tok.vocab_size + 300) if tok.is_special_token(i)]
    assert specials
    rng = random.Random(7)
    texts = ["ශ්‍රී ලංකාව", " hello 😀 world", "", "a"]
    for _ in range(300):
        ids = tok.encode(rng.choice(texts))
        for _ in range(rng.randint(0, 3)):
            ids.insert(rng.randint(0, len(ids)), rng.choice(specials))
        dec = StreamingDecoder(tok, skip_special_tokens=True)
        expected = tok.decode(ids, skip_special_tokens=True)
        assert "".join(map(dec.decode_token, ids)) + dec.flush() == expected
        cut = rng.randint(0, len(ids))
        assert dec.decode_tokens(ids[:cut]) + dec.decode_tokens(ids[cut:]) + dec.flush() == expected
    with pytest.raises(WrongTypeError, match="skip_special_tokens"):
        StreamingDecoder(tok, skip_special_tokens="yes")


@pytest.mark.parametrize("value", ["text", None, 7])
def test_a_tokenizer_whose_token_bytes_is_no_bytes_is_named(value):
    """Any object with ``token_bytes`` is taken (a tokenizer of the caller's own): one that returns a
    str or None was a TypeError from inside the UTF-8 decoder; it is named, on every method. Bytes-like
    values are taken as bytes."""
    from wwho import StreamingDecoder
    from wwho.errors import WrongTypeError

    class Mine:
        def __init__(self, value):
            self.value = value

        def token_bytes(self, token_id):
            return self.value

        def is_special_token(self, token_id):
            return False

    for options in ({}, {"skip_special_tokens": True}):
        dec = StreamingDecoder(Mine(value), **options)
        with pytest.raises(WrongTypeError, match=rf"Mine.token_bytes\(3\) returned {type(value).__name__}, not bytes"):
            dec.decode_token(3)
        with pytest.raises(WrongTypeError, match="not bytes"):
            dec.decode_tokens([3])
    assert StreamingDecoder(Mine(bytearray(b"ab"))).decode_token(3) == "ab"
    assert StreamingDecoder(Mine(np.bytes_(b"ef"))).decode_token(3) == "ef"  # a subclass of bytes
    assert StreamingDecoder(Mine(memoryview(b"cd"))).decode_tokens([3, 3]) == "cdcd"
