"""SGPETokenizer: lossless, never splits a known syllable, fuzzed input, unk mode, errors.

Parametrized over the script modes; each is trained once per session on a slice
of the shared corpora (skipped with a reason when they are absent).
"""

from __future__ import annotations

import itertools

import pytest
from conftest import EVAL, FUZZ_INDIC, TRAIN, char_of_each_byte, corpus_files, read_slice
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.errors import TokenizerError
from wwho.sgpe import SGPETokenizer

SCRIPTS = list(TRAIN)


def byte_ends(pieces, encode=str.encode):
    return list(itertools.accumulate(len(p if isinstance(p, bytes) else encode(p)) for p in pieces))


def split_known_syllables(tok, text):
    """Token boundaries falling strictly inside a unit that is in the vocabulary with or without its
    leading space (a unit after a space known only bare may have a boundary after the space; a
    boundary token, no syllable, counts only as it stands).

    The units are the splitter's: the syllables of each word and each boundary token whole. A line
    is not one word, so ``syllables(line)`` is not used: it cuts a boundary token that the word rule
    keeps whole, such as a full stop with the U+200C that ``regex`` ``\\X`` joins to it."""
    ids = tok.encode(text)
    boundaries = set(byte_ends([tok.token_bytes(i) for i in ids]))
    if tok.prefix_space and text:  # the tokens hold the encoder's dummy space too
        text = " " + text
    bad = []
    pos = 0
    vocab = tok.vocab
    for is_word, units in tok.splitter.split(text):
        for syl in units:
            n = len(syl.encode("utf-8", "surrogatepass"))
            # Each case needs a boundary strictly inside the unit, which most units lack: that is
            # asked first (isdisjoint walks the range in C), the vocabulary only then.
            if not boundaries.isdisjoint(range(pos + 1, pos + n)):
                if syl in vocab:
                    bad.append(syl)
                elif (syl[:1] == " " and syl[1:] in vocab
                      and not boundaries.isdisjoint(range(pos + 2, pos + n))):
                    bad.append(syl)
                elif is_word and syl[:1] != " " and " " + syl in vocab:
                    bad.append(syl)
            pos += n
    assert pos == len(text.encode("utf-8", "surrogatepass")), "the units do not spell the text"
    return bad


@pytest.mark.parametrize("script", SCRIPTS)
def test_corpora_lossless_and_no_known_syllable_split(tokenizers, script):
    tok = tokenizers[script]
    files = corpus_files(*EVAL[script])
    assert files
    lines = list(itertools.chain.from_iterable(read_slice(p, 200_000).splitlines() for p in files))
    lossy = [l for l in lines if tok.decode(tok.encode(l)) != l]
    assert lossy == []
    split = [s for l in lines for s in split_known_syllables(tok, l)]
    assert split == []


fuzz_alphabet = st.sampled_from(
    FUZZ_INDIC
    + ["a", "Z", "1", "9", ".", ",", " ", "  ", "\t", "\n", "\r", "\u00a0", "\u200c", "\u200d", "🙂", "👍🏽",
       "\x00", "\x1b", "\ud800", "€", "[CLS]", "<0x41>"]
)
fuzz_text = st.lists(fuzz_alphabet, max_size=30).map("".join)


@pytest.mark.parametrize("script", SCRIPTS)
@given(text=fuzz_text)
@settings(max_examples=150, deadline=None)
def test_fuzzed_text_round_trips_and_keeps_known_syllables(tokenizers, script, text):
    tok = tokenizers[script]
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert split_known_syllables(tok, text) == []
    assert tok.encode(text) == ids  # deterministic (and the cache changes nothing)


@pytest.mark.parametrize("script", SCRIPTS)
@given(text=st.text(max_size=40))
@settings(max_examples=100, deadline=None)
def test_any_unicode_round_trips(tokenizers, script, text):
    tok = tokenizers[script]
    assert tok.decode(tok.encode(text)) == text


def test_strict_decode_refuses_what_is_no_utf8_surrogates_included(tokenizers):
    # The default keeps a lone surrogate (lossless round trip); errors="strict" returned it too,
    # a str that cannot be written out as UTF-8.
    tok = tokenizers["sinhala"]
    ids = tok.encode("a\ud800b")
    assert tok.decode(ids) == "a\ud800b"
    with pytest.raises(UnicodeDecodeError):
        tok.decode(ids, errors="strict")
    with pytest.raises(UnicodeDecodeError):
        tok.decode(ids, "strict")  # by position, as tiktoken's decode takes it
    assert tok.decode(tok.encode("ශ්‍රී"), errors="strict") == "ශ්‍රී"


@given(parts=st.lists(st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=4),
                                st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
                                st.just(b"\xff")), max_size=12),
       errors=st.sampled_from(["replace", "ignore", "backslashreplace"]))
@settings(max_examples=200, deadline=None)
def test_a_lone_surrogate_decodes_alike_whatever_bytes_are_around_it(tokenizers, parts, errors):
    # Text, lone surrogates and the byte 0xFF (no UTF-8 wherever it is): each part's text is
    # Python's own decode of it alone, since none of them runs into its neighbours: a byte that is
    # not UTF-8 somewhere in the ids changes no surrogate elsewhere.
    tok = tokenizers["sinhala"]
    ids, expected = [], []
    for part in parts:
        if isinstance(part, bytes):
            ids.append(tok.encode_single_token(part))
            expected.append(part.decode("utf-8", errors))
        else:
            ids += tok.encode(part)
            expected.append(part)
    assert tok.decode(ids, errors=errors) == "".join(expected)


def test_surrogate_handlers_take_all_of_the_bytes(tokenizers):
    """surrogatepass names the bad byte's place in all of the bytes (not in the stretch after the
    last surrogate); surrogateescape's text encodes back to the very bytes."""
    tok = tokenizers["sinhala"]
    ids = tok.encode("ab\ud800cd") + [tok.encode_single_token(b"\xff")]
    with pytest.raises(UnicodeDecodeError) as caught:
        tok.decode(ids, errors="surrogatepass")
    assert (caught.value.start, caught.value.text) == (7, "ab\ud800cd")
    assert "at byte 7" in str(caught.value)
    ids = tok.encode("a\udc80") + [tok.encode_single_token(b"\x80")]
    text = tok.decode(ids, errors="surrogateescape")
    assert text.encode("utf-8", "surrogateescape") == tok.decode_bytes(ids)
def test_encode_batch_and_tokenize(tokenizers):
    tok = tokenizers["sinhala"]
    texts = ["ශ්‍රී ලංකාව", "", "abc ලංකා"]
    assert tok.encode_batch(texts) == [tok.encode(t) for t in texts]
    assert "".join(tok.tokenize("ශ්‍රී ලංකාව")) == "ශ්‍රී ලංකාව"


def test_special_tokens_are_text_unless_allowed(tokenizers):
    tok = tokenizers["sinhala"]
    cls = tok.vocab["[CLS]"]
    assert cls not in tok.encode("[CLS] ලංකාව")
    ids = tok.encode("[CLS] ලංකාව[SEP]", allowed_special="all")
    assert ids[0] == cls and ids[-1] == tok.vocab["[SEP]"]
    assert tok.decode(ids) == "[CLS] ලංකාව[SEP]"
    assert tok.decode(ids, skip_special_tokens=True) == " ලංකාව"
    assert tok.encode("x", allowed_special={"<|endoftext|>"}) == tok.encode("x")  # left out, as tiktoken does


def test_disallowed_special_refuses_texts_holding_them(tokenizers):
    """SGPE's encoders take disallowed_special, as the other kinds (and tiktoken) do. The default
    disallows none (SGPE's special tokens are ordinary text unless allowed)."""
    from wwho.errors import DisallowedSpecialError

    tok = tokenizers["sinhala"]
    text = "ලංකාව [CLS] x"
    assert tok.encode(text, disallowed_special=()) == tok.encode(text)
    for encode, at in ((tok.encode, None), (tok.encode_to_numpy, None),
                       (lambda t, **o: tok.encode_batch(["x", t], **o)[1], 1),
                       (lambda t, **o: tok.encode_batch_to_numpy(["x", t], **o).split()[1], 1)):
        for disallowed in ("all", {"[CLS]"}, {"[SEP]", "[CLS]"}):
            with pytest.raises(DisallowedSpecialError) as refused:
                encode(text, disallowed_special=disallowed)
            assert (refused.value.token, refused.value.offset, refused.value.text_index) == ("[CLS]", 6, at)
        allowed = list(encode(text, allowed_special={"[CLS]"}, disallowed_special="all"))  # allowed wins
        assert allowed == list(encode(text, allowed_special={"[CLS]"}))
        assert list(encode(text, disallowed_special={"[SEP]"})) == list(encode(text))


def test_unk_token_mode_reproduces_the_spec(tokenizers):
    tok = tokenizers["sinhala"]
    spec_like = SGPETokenizer(tok.file, unk="token")
    unk = tok.vocab["[UNK]"]
    ids = spec_like.encode("ඖඖ ලංකාව 🙂")
    assert unk in ids
    assert "ලං" in spec_like.decode(ids)
    assert tok.decode(tok.encode("ඖඖ ලංකාව 🙂")) == "ඖඖ ලංකාව 🙂"  # the default stays lossless


@pytest.mark.parametrize("bad", [-1, 10 ** 9, "3", 2.0, True])
def test_out_of_range_ids(tokenizers, bad):
    tok = tokenizers["sinhala"]
    with pytest.raises(TokenizerError, match="out of range|not an integer"):
        tok.decode([bad])


def test_non_str_input(tokenizers):
    with pytest.raises(TokenizerError, match="expected text as str"):
        tokenizers["sinhala"].encode(b"bytes")


def test_mixed_vocabulary_holds_both_scripts(tokenizers):
    tok = tokenizers["mixed"]
    assert tok.splitter.scripts == ("sinhala", "devanagari")
    text = "ශ්‍රී ලංකාව और भारत"
    tokens = tok.tokenize(text)
    assert "".join(tokens) == text
    assert not any(t.startswith("<0x") for t in tokens)


# --- the compiled encoder against the pure-Python one (tests/reference/sgpe.py) --------------

from reference.sgpe import Encoder as ReferenceEncoder  # noqa: E402

#: script -> (the tokenizer, its reference encoder), built once a tokenizer
_PLAIN_REFERENCES: dict = {}


@pytest.mark.parametrize("script", SCRIPTS)
@given(text=fuzz_text)
@settings(max_examples=100, deadline=None)
def test_core_encoder_equals_the_reference(tokenizers, script, text):
    tok = tokenizers[script]
    if _PLAIN_REFERENCES.get(script, (None,))[0] is not tok:  # built once, not for every example
        _PLAIN_REFERENCES[script] = (tok, ReferenceEncoder(tok.file))
    assert tok.encode(text) == _PLAIN_REFERENCES[script][1].encode(text)


@pytest.mark.parametrize("script", ["sinhala", "mixed"])
@given(text=st.text(max_size=40))
@settings(max_examples=100, deadline=None)
def test_core_encoder_equals_the_reference_on_any_unicode(tokenizers, script, text):
    tok = tokenizers[script]
    if _REFERENCES.get(script, (None,))[0] is not tok:  # built once, not for every example
        _REFERENCES[script] = (tok, ReferenceEncoder(tok.file), SGPETokenizer(tok.file, unk="token"),
                               ReferenceEncoder(tok.file, fallback="unk"))
    _, reference, spec_like, spec_like_reference = _REFERENCES[script]
    assert tok.encode(text) == reference.encode(text)
    assert spec_like.encode(text) == spec_like_reference.encode(text)


_REFERENCES: dict = {}


@pytest.mark.parametrize("script", SCRIPTS)
def test_core_encoder_equals_the_reference_on_the_corpora(tokenizers, script):
    tok = tokenizers[script]
    ref = ReferenceEncoder(tok.file)
    lines = [l for p in corpus_files(*EVAL[script]) for l in read_slice(p, 60_000).splitlines()]
    assert lines
    assert [tok.encode(l) for l in lines] == [ref.encode(l) for l in lines]


def test_long_runs_equal_the_reference(tokenizers):
    # Words longer than the merge scan's limit take the rank-bucket path; one long piece of a
    # repeated syllable, an unknown character, alternating scripts.
    tok = tokenizers["mixed"]
    ref = ReferenceEncoder(tok.file)
    a, b = tok.merges[0]
    for text in [(a + b).strip() * 300, "ක" * 500, "🙂" * 200, "කa" * 300, "कක" * 300, "ශ්‍රී" * 150]:
        assert tok.encode(text) == ref.encode(text)


def test_encode_batch_threads_keep_order_and_ids(tokenizers):
    tok = tokenizers["mixed"]
    lines = [l for p in corpus_files(*EVAL["mixed"]) for l in read_slice(p, 100_000).splitlines()]
    want = [tok.encode(l) for l in lines]
    assert tok.encode_batch(lines, num_threads=1) == want
    assert tok.encode_batch(lines, num_threads=2) == want
    assert tok.encode_batch(lines, num_threads=7) == want
    assert tok.encode_batch(lines) == want
    assert tok.encode_batch([]) == []
    with pytest.raises(TokenizerError, match="num_threads"):
        tok.encode_batch(lines, num_threads=0)
    with pytest.raises(TokenizerError, match="expected text as str"):
        tok.encode_batch(["ok", b"bytes"])
    with pytest.raises(TokenizerError, match="expected text as str, got bytes"):
        tok.encode_batch_to_numpy(["ok", b"bytes"])
    ids = tok.encode_batch(["[CLS] ලංකාව"], allowed_special="all")[0]
    assert ids[0] == tok.vocab["[CLS]"]


def test_one_tokenizer_shared_by_many_threads(tokenizers):
    from concurrent.futures import ThreadPoolExecutor

    tok = tokenizers["mixed"]
    lines = [l for p in corpus_files(*EVAL["mixed"]) for l in read_slice(p, 100_000).splitlines()]
    want = [tok.encode(l) for l in lines]
    big = "\n".join(lines)
    want_big = tok.encode(big)

    def work(k):
        if k % 3 == 0:
            return tok.encode(big) == want_big  # long: encoded without the GIL
        if k % 3 == 1:
            return tok.encode_batch(lines, num_threads=2) == want
        return [tok.encode(l) for l in lines] == want

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(work, range(24)))


def test_pickled_tokenizer_encodes_the_same(tokenizers):
    import pickle

    for tok in (tokenizers["sinhala"], SGPETokenizer(tokenizers["sinhala"].file, unk="token")):
        copy = pickle.loads(pickle.dumps(tok))
        text = "ශ්‍රී ලංකාව ඖ 🙂 abc"
        assert copy.encode(text) == tok.encode(text)
        assert copy.fallback == tok.fallback


def test_decode_rejects_what_is_not_an_int_id(tokenizers):
    tok = tokenizers["sinhala"]
    for bad in ([True], [None], [2 ** 70], [-(2 ** 70)], 5):
        with pytest.raises(TokenizerError):
            tok.decode(bad)
    assert tok.decode(iter(tok.encode("ලංකාව"))) == "ලංකාව"
    with pytest.raises(TokenizerError, match="out of range"):
        tok.token_bytes(len(tok))


@pytest.mark.parametrize("script", ["sinhala", "mixed"])
@given(texts=st.lists(fuzz_text, max_size=6))
@settings(max_examples=60, deadline=None)
def test_routed_batch_is_runs_encoded_and_spans_between(tokenizers, script, texts):
    # The meta tokenizer's split, in the core: each script run (with the space before it) is
    # SGPE-encoded, everything else is handed back as a span.
    from wwho.router import core_router, segment

    tok = tokenizers[script]
    scripts = tok.splitter.scripts
    got = tok._core.encode_routed_batch(texts, core_router(scripts), 2)
    for text, items in zip(texts, got):
        want, pos = [], 0
        for seg in segment(text, scripts=scripts):
            part = " " + seg.text if seg.has_leading_space else seg.text
            if seg.is_indic:
                want.append(tok.encode(part))
            else:
                want.append((pos, pos + len(part)))
            pos += len(part)
        assert items == want


@pytest.mark.parametrize("name", ["pieces", "prefix", "words-superwords-prefix"])
@settings(max_examples=150, deadline=None)
@given(text=st.text(st.sampled_from([*FUZZ_INDIC, " ", "a", "7", ".", "\n", "😀"]), max_size=40))
def test_decode_with_offsets_names_each_tokens_first_character(variants, name, text):
    tok = variants[name]
    ids = tok.encode(text)
    decoded, offsets = tok.decode_with_offsets(ids)
    assert decoded == text
    parts = tok.decode_tokens_bytes(ids)
    dummy = b" " if tok.prefix_space and text else b""  # the encoder's space, which decoding drops
    assert b"".join(parts) == dummy + tok.decode_bytes(ids)
    if dummy:
        parts[0] = parts[0][1:]
    owner = char_of_each_byte(text)
    assert offsets == [owner[sum(map(len, parts[:i]))] for i in range(len(parts))]


def test_a_save_with_unk_token_says_it_writes_no_hugging_face_files(tokenizers, tmp_path):
    """Such a save must not write vocab.json alone without a word: the docs promise an exact
    tokenizer.json beside it."""
    from wwho.errors import WwhoWarning

    lossy = SGPETokenizer(tokenizers["sinhala"].file, unk="token")
    with pytest.warns(WwhoWarning, match="without the Hugging Face files: with unk='token'"):
        lossy.save(tmp_path / "u")
    assert sorted(p.name for p in (tmp_path / "u").iterdir()) == ["vocab.json", "wwho-manifest.json"]
    SGPETokenizer.load(tmp_path / "u").save(tmp_path / "b")  # the same vocabulary, byte fallback: exported
    assert (tmp_path / "b" / "tokenizer.json").exists()


def test_a_special_token_that_is_a_syllable_is_text_unless_allowed(tmp_path):
    """With a special token that is a syllable the vocabulary has no ordinary token for (ශ්‍රී in a
    small vocabulary), text holding that syllable is not encoded as the special token, by default
    and with ``--special-as-text``: the encoder must not look each syllable up among all the tokens,
    the special ones too. It is ordinary text unless allowed, as
    ``[CLS]`` is; the Hugging Face export (whose special tokens are always matched) and
    ``allowed_special="all"`` give the special token, in the SGPE and the meta tokenizer alike."""
    from importlib import resources

    import tokenizers
    from conftest import O200K_FILE

    sample = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()
    special = "ශ්\u200dරී"
    tok = SGPETokenizer.train_from_iterator(sample, vocab_size=1000, script="sinhala", progress=False,
                                            special_tokens=(special, "<|eot|>"))
    sid = tok.vocab[special]
    texts = [f"{special} ලංකාව", f"ලංකා{special}", special, f"a{special}b <|eot|>"]
    tok.save(tmp_path / "tok")
    theirs = tokenizers.Tokenizer.from_file(str(tmp_path / "tok" / "tokenizer.json"))
    reference = ReferenceEncoder(tok.file)
    for text in texts:
        ids = tok.encode(text)
        assert sid not in ids and tok.decode(ids) == text, text
        assert ids == reference.encode(text) == tok.encode_to_numpy(text).tolist() == tok.encode_batch([text])[0]
        allowed = tok.encode(text, allowed_special="all")
        assert sid in allowed and tok.decode(allowed) == text
        assert theirs.encode(text, add_special_tokens=False).ids == allowed
    if O200K_FILE.is_file():
        from wwho.meta import MetaTokenizer

        meta = MetaTokenizer(tok, "o200k_base", tiktoken_file=O200K_FILE)
        for text in texts:
            ids = meta.encode(text)
            assert meta.offset + sid not in ids and meta.decode(ids) == text
            assert meta.offset + sid in meta.encode(text, allowed_special={special})
