"""tiktoken's Encoding names on the SGPE and meta kinds (wwho.encoding_names): the meta vocabulary against
tiktoken itself on o200k_base (every token, any text without an Indic run, a nanoGPT-style pipeline),
SGPE against its own vocabulary and decoder, and their errors (a KeyError where tiktoken raises one)."""

from __future__ import annotations

import warnings
from importlib import resources

import numpy as np
import pytest
from conftest import O200K_FILE
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from wwho.errors import IdRangeError, TokenizerError, UnknownTokenError, WrongTypeError
from wwho.sgpe.vocabfile import BYTE_TOKENS

SAMPLE = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()
TEXTS = SAMPLE[:50] + ["", "Hello, world 123!", "ශ්‍රී ලංකාව 2024 🏏", "a<|endoftext|>b [CLS] x", " " * 300]
#: tiktoken.Encoding's public names that only a vocabulary of ranks under one regex can answer.
BYTE_LEVEL_ONLY = {"encode_with_unstable"}


def _train(**options):
    from wwho.sgpe import SGPETokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SGPETokenizer.train_from_iterator(SAMPLE[:1000], vocab_size=1000, script="sinhala", progress=False,
                                                 **options)


@pytest.fixture(scope="module")
def sgpe():
    return _train()


@pytest.fixture(scope="module")
def tiktoken_o200k():
    if not O200K_FILE.exists():
        pytest.skip(f"{O200K_FILE} is absent: the shared o200k_base ranks file is needed")
    from wwho.bytelevel.tiktoken_loader import get_encoding

    return get_encoding("o200k_base", tiktoken_file=O200K_FILE)


@pytest.fixture(scope="module")
def meta(sgpe, tiktoken_o200k):
    from wwho.meta import MetaTokenizer

    return MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE)


@pytest.fixture(params=["sgpe", "meta"])
def tok(request):
    return request.getfixturevalue(request.param)


def has_sinhala(text: str) -> bool:
    return any("\u0d80" <= c <= "\u0dff" for c in text)


def test_every_public_name_of_tiktoken_is_there(tok, tiktoken_o200k):
    """SGPETokenizer and MetaTokenizer have tiktoken.Encoding's names (n_vocab, eot_token,
    encode_ordinary ...), so code written for o200k_base works on them."""
    names = {n for n in dir(tiktoken_o200k) if not n.startswith("_")} - {"name"} - BYTE_LEVEL_ONLY
    assert sorted(n for n in names if not hasattr(type(tok), n)) == []


def test_every_keyword_of_tiktokens_methods_is_taken(tok, tiktoken_o200k):
    """Found next: decode_batch(batch, num_threads=8), as tiktoken code calls it, was a TypeError on both
    kinds. (The first parameters are positional in tiktoken's use; wwho names them ids and texts.)"""
    import inspect

    missing = []
    for name in dir(type(tiktoken_o200k)):
        theirs = getattr(type(tiktoken_o200k), name)
        if name.startswith("_") or not callable(theirs) or name in BYTE_LEVEL_ONLY:
            continue
        ours = inspect.signature(getattr(type(tok), name)).parameters
        keywords = [p.name for p in inspect.signature(theirs).parameters.values()
                    if p.kind is inspect.Parameter.KEYWORD_ONLY]
        missing += [f"{name}({k}=)" for k in keywords if k not in ours]
    assert missing == []


# -- the meta vocabulary against tiktoken --------------------------------------------------


def test_meta_sizes_and_specials_extend_tiktokens(meta, sgpe, tiktoken_o200k):
    assert meta.n_vocab == tiktoken_o200k.n_vocab + sgpe.n_vocab == len(meta)
    assert meta.max_token_value == meta.n_vocab - 1
    assert meta.eot_token == tiktoken_o200k.eot_token
    assert meta.special_tokens_set == tiktoken_o200k.special_tokens_set | set(sgpe.special_tokens)
    for i in [*range(0, 1000, 37), 199_997, 199_998, 199_999, 200_017, 200_018]:
        assert meta.is_special_token(i) == tiktoken_o200k.is_special_token(i)
    for name in sgpe.special_tokens:
        assert meta.is_special_token(meta.offset + sgpe.vocab[name])
    assert not meta.is_special_token(meta.offset + max(sgpe.vocab[name] for name in sgpe.special_tokens) + 1)
    assert not meta.is_special_token(-1) and not meta.is_special_token(10**30)


def test_meta_single_tokens_are_tiktokens_but_where_sgpe_takes_the_text(meta, tiktoken_o200k):
    """Every o200k_base token: the meta vocabulary gives tiktoken's id, except for text its router
    sends to SGPE and SGPE makes one token of; that id has the same bytes and is what encode gives."""
    moved = 0
    for i in range(tiktoken_o200k.n_vocab):
        try:
            data = tiktoken_o200k.decode_single_token_bytes(i)
        except KeyError:
            with pytest.raises(KeyError):
                meta.decode_single_token_bytes(i)
            continue
        found = meta.encode_single_token(data)
        if found != i:
            assert found >= meta.offset and meta.decode_single_token_bytes(found) == data, i
            assert has_sinhala(data.decode("utf-8")) and meta.encode_ordinary(data.decode("utf-8")) == [found]
            moved += 1
    assert 0 < moved < 2000


def test_meta_single_tokens_of_the_sgpe_part(meta, sgpe):
    """Each SGPE token's bytes give an id of those bytes, the SGPE token itself where tiktoken has
    no token of them; a special token by its name, of either part."""
    for i, token in enumerate(sgpe.tokens):
        data = sgpe.token_bytes(i)
        found = meta.encode_single_token(data)
        assert meta.decode_single_token_bytes(found) == data
        if token in sgpe.special_tokens:
            assert found == meta.offset + i
    assert meta.encode_single_token("<|endofprompt|>") == 200_018


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=6))
def test_meta_ordinary_batches_are_tiktokens_without_an_indic_run(meta, tiktoken_o200k, texts):
    texts = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]  # (tiktoken refuses lone surrogates)
    assume(not any(has_sinhala(t) for t in texts))
    assert meta.encode_ordinary_batch(texts, num_threads=2) == tiktoken_o200k.encode_ordinary_batch(texts)


def test_a_nanogpt_style_pipeline_runs_on_the_meta_vocabulary(meta, tiktoken_o200k):
    """nanoGPT's data preparation: encode_ordinary, eot_token appended, ids stored as uint16/uint32
    below n_vocab; here through the ordinary batch, decoded back."""
    docs = SAMPLE[:20] + ["hello <|endoftext|> world"]
    stream = []
    for ids in meta.encode_ordinary_batch(docs):
        stream += [*ids, meta.eot_token]
    arr = np.array(stream, dtype=np.uint32)
    assert arr.max() <= meta.max_token_value
    assert meta.decode(arr) == "".join(d + "<|endoftext|>" for d in docs)
    assert stream.count(meta.eot_token) == len(docs)


def test_a_lone_surrogate_is_no_single_token_and_says_so(tok, tiktoken_o200k):
    """tiktoken raises UnicodeEncodeError from inside the codec; wwho's error is that too, and a
    TokenizerError naming the method and the character, on every kind."""
    from wwho import ByteBPE

    with pytest.raises(UnicodeEncodeError):
        tiktoken_o200k.encode_single_token("a\ud800")
    for kind in (tok, ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)):
        with pytest.raises(UnicodeEncodeError) as caught:
            kind.encode_single_token("a\ud800")
        assert isinstance(caught.value, TokenizerError)
        assert str(caught.value) == ("encode_single_token: '\\ud800' at character 1 is a surrogate code point "
                                     "(no character: even a pair of them in a str is two), which has no UTF-8 "
                                     "bytes and so is in no token")


# -- SGPE ----------------------------------------------------------------------------------


def test_sgpe_single_tokens_are_its_tokens(sgpe):
    """Every token's bytes give that token, but a byte token whose byte a character token also is,
    which gives the character's token (what encode gives it); a special token by its name."""
    byte_ids = {sgpe.vocab[t] for t in BYTE_TOKENS}
    for i, token in enumerate(sgpe.tokens):
        data = sgpe.decode_single_token_bytes(i)
        found = sgpe.encode_single_token(data)
        if i in byte_ids and data[0] < 0x80 and data.decode("ascii") in sgpe.vocab:
            assert found == sgpe.vocab[data.decode("ascii")] != i
        else:
            assert found == i, token
    assert sgpe.encode_single_token(b"\xe0") == sgpe.vocab["<0xE0>"]


def test_sgpe_sizes_and_specials(sgpe):
    assert sgpe.n_vocab == sgpe.vocab_size == sgpe.max_token_value + 1
    assert sgpe.special_tokens_set == set(sgpe.special_tokens)
    assert [i for i in range(sgpe.n_vocab) if sgpe.is_special_token(i)] == sorted(
        sgpe.vocab[s] for s in sgpe.special_tokens)
    with pytest.raises(KeyError, match="no <|endoftext|> special token"):
        sgpe.eot_token  # noqa: B018
    ends = _train(special_tokens=("<|endoftext|>", "[UNK]"))
    assert ends.eot_token == ends.vocab["<|endoftext|>"] and ends.is_special_token(ends.eot_token)
    assert ends.decode([*ends.encode_ordinary("ශ්‍රී"), ends.eot_token]) == "ශ්‍රී<|endoftext|>"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40) | st.sampled_from(TEXTS), max_size=6))
def test_sgpe_ordinary_encodes_are_its_encodes(sgpe, texts):
    """SGPE's specials are ordinary text by default, so encode_ordinary is encode, in a batch too."""
    assert [sgpe.encode_ordinary(t) for t in texts] == [sgpe.encode(t) for t in texts]
    assert sgpe.encode_ordinary_batch(texts, num_threads=2) == sgpe.encode_batch(texts)


def test_a_prefix_space_vocabulary_finds_single_tokens_by_their_bytes():
    """A dummy-prefix vocabulary encodes "x" as " x": the single token of "x" is still the token of
    the bytes "x", never the one encode gives."""
    tok = _train(prefix_space=True, merge_scope="words", superword_share=0)
    bare = [t for t in tok.tokens if len(t) > 1 and has_sinhala(t) and not t.startswith(" ") and " " + t in tok.vocab]
    assert len(bare) > 20
    for text in bare:
        assert tok.encode_ordinary(text) == [tok.vocab[" " + text]]
        assert tok.encode_single_token(text) == tok.vocab[text]


# -- both ----------------------------------------------------------------------------------


def test_byte_values_are_every_ordinary_tokens_bytes_once(tok):
    values = tok.token_byte_values()
    assert values == sorted(set(values))
    specials = {tok.decode_single_token_bytes(i) for i in range(tok.n_vocab) if tok.is_special_token(i)}
    every = set()
    for i in range(tok.n_vocab):
        if not tok.is_special_token(i):
            try:
                every.add(tok.decode_single_token_bytes(i))
            except KeyError:
                pass  # o200k_base's unassigned ids
    assert set(values) == every and not specials & set(values) - every


def test_decode_bytes_batch_is_each_decode_bytes(tok):
    batch = [tok.encode(t, allowed_special="all") for t in TEXTS]
    assert tok.decode_bytes_batch(batch, num_threads=2) == [tok.decode_bytes(ids) for ids in batch]
    assert tok.decode_batch(batch, num_threads=2) == [tok.decode(ids) for ids in batch]
    with pytest.raises(TokenizerError):
        tok.decode_bytes_batch(batch, num_threads=0)
    with pytest.raises(TokenizerError):
        tok.decode_batch(batch, num_threads=0)
    with pytest.raises(TypeError, match="a single id"):
        tok.decode_bytes_batch([1, 2])


@pytest.mark.parametrize(("call", "error"), [
    ("encode_single_token(5)", WrongTypeError),
    ("encode_single_token('no such token at all')", UnknownTokenError),
    ("encode_single_token(b'\\xff\\xfe\\xfd\\xfc')", UnknownTokenError),
    ("decode_single_token_bytes(-1)", UnknownTokenError),
    ("decode_single_token_bytes(10**30)", IdRangeError),
    ("decode_single_token_bytes(1.0)", WrongTypeError),
    ("is_special_token('1')", WrongTypeError),
    ("encode_ordinary(b'x')", WrongTypeError),
    ("encode_ordinary_batch('one text')", WrongTypeError),
    ("encode_ordinary_batch(['a', 5])", WrongTypeError),
])
def test_errors_are_typed_and_a_key_error_where_tiktoken_raises_one(tok, call, error):
    with pytest.raises(error):
        eval(f"tok.{call}")
    if error is UnknownTokenError:
        with pytest.raises(KeyError):
            eval(f"tok.{call}")


def test_special_ids_of_a_vocabulary_of_thousands_of_special_tokens():
    """Answered from a set made on first use (docs/benchmarks.md has its speed): the same answers, and
    the same after pickling, which does not carry the set."""
    import pickle

    from wwho.bytelevel import ByteBPE

    specials = {f"<|s{i}|>": 256 + i for i in range(5000)}
    tok = ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2", special_tokens=specials)
    assert [i for i in range(6000) if tok.is_special_token(i)] == list(range(256, 5256))
    again = pickle.loads(pickle.dumps(tok))
    assert [i for i in range(6000) if again.is_special_token(i)] == list(range(256, 5256))
