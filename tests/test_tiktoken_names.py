"""tiktoken's remaining Encoding methods on ByteBPE (wwho.bytelevel.tiktoken_names), against tiktoken
itself on o200k_base, and their errors (a KeyError, as tiktoken raises, and a TokenizerError)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.bytelevel import ByteBPE
from wwho.errors import TokenizerError, UnknownTokenError

O200K_FILE = DATA / "tiktoken" / "o200k_base.tiktoken"
TEXTS = ["hello world", "ශ්‍රී ලංකාව", "नमस्ते दुनिया 2024", "🙂 emoji and  spaces\n", "a<|endoftext|>b", ""]


@pytest.fixture(scope="module")
def pair():
    if not O200K_FILE.exists():
        pytest.skip(f"{O200K_FILE} is absent: the shared data folder is needed for this test")
    from wwho.bytelevel.tiktoken_loader import get_encoding

    return (ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE),
            get_encoding("o200k_base", tiktoken_file=O200K_FILE))


@pytest.fixture(scope="module")
def small():
    """Every byte a token, "ab" one, one special token that is not <|endoftext|>."""
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    return ByteBPE(ranks, pattern="gpt2", special_tokens={"<|end|>": 257})


def test_the_special_tokens_set_and_decode_batch_are_tiktokens(pair):
    """special_tokens_set is a new set, as tiktoken's (which code may change), not a frozenset, and
    decode_batch takes num_threads."""
    ours, theirs = pair
    names = ours.special_tokens_set
    assert type(names) is set and names == theirs.special_tokens_set
    names.add("x")
    assert "x" not in ours.special_tokens_set
    ids = [ours.encode(t, allowed_special="all") for t in TEXTS]
    assert ours.decode_batch(ids, num_threads=2) == theirs.decode_batch(ids, num_threads=2)


def test_a_disallowed_name_the_vocabulary_lacks_is_not_advised_to_be_allowed(pair):
    """The refusal does not advise allowed_special={name}, which cannot help for a name that is no
    special token: it says to leave it out of disallowed_special."""
    ours, _ = pair
    for name in ("", "<|nope|>"):
        with pytest.raises(TokenizerError, match="is no special token of this vocabulary.*leave it out of "
                                                 "disallowed_special"):
            ours.encode(f"a{name}b", disallowed_special={name})


def test_every_method_of_tiktoken_is_there(pair):
    ours, theirs = pair
    names = {n for n in dir(type(theirs)) if not n.startswith("_")} - {"encode_with_unstable"}
    assert sorted(n for n in names if not hasattr(ours, n)) == []


@pytest.mark.parametrize("call", ["decode([None])", "decode([1.5])", "decode([-1])", "decode([2**40])",
                                  "decode([199998])", "encode(None)", "encode_batch(['a', None])",
                                  "decode_single_token_bytes(-1)", "encode_ordinary(b'x')",
                                  # each also the class tiktoken raises, not a ValueError (or KeyError) alone
                                  "decode_single_token_bytes(2**32)", "decode(5)", "decode('ab')",
                                  "decode(np.int64(5))", "decode_bytes(5)", "decode_tokens_bytes(5)",
                                  "decode_with_offsets(5)", "decode_batch([5])", "decode_bytes_batch([5])",
                                  "decode_batch(5)", "decode([1], errors=None)", "decode([1], errors=5)",
                                  "decode([127], errors='bogus')", "encode('a', allowed_special='ALL')",
                                  "encode('a', allowed_special='<|endoftext|>')",
                                  "encode('a', allowed_special={1})",
                                  "encode('hello', disallowed_special={''})"])
def test_errors_are_of_the_classes_tiktoken_raises(pair, call):
    """Code written for tiktoken catches what it catches there (a TypeError for a wrong type, an
    OverflowError for an id outside 32 bits, a KeyError for an id without a token); wwho's own
    class, with its clearer message, is a subclass of each."""
    ours, theirs = pair
    raised = []
    for tok in (theirs, ours):
        with pytest.raises(Exception) as caught:
            eval(f"tok.{call}", {"tok": tok, "np": np})
        raised.append(caught.value)
    theirs_error, ours_error = raised
    assert isinstance(ours_error, type(theirs_error)), (call, type(theirs_error), type(ours_error).__mro__)
    assert isinstance(ours_error, TokenizerError)


@pytest.mark.parametrize("text", TEXTS)
def test_the_lookups_equal_tiktokens(pair, text):
    ours, theirs = pair
    ids = theirs.encode(text, allowed_special="all")
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    assert [ours.decode_single_token_bytes(i) for i in ids] == [theirs.decode_single_token_bytes(i) for i in ids]
    assert [ours.is_special_token(i) for i in ids] == [theirs.is_special_token(i) for i in ids]
    for data in theirs.decode_tokens_bytes(ids):
        assert ours.encode_single_token(data) == theirs.encode_single_token(data)
    assert ours.decode_bytes_batch([ids, ids[:1], []]) == theirs.decode_bytes_batch([ids, ids[:1], []])


def test_the_vocabulary_equals_tiktokens(pair):
    ours, theirs = pair
    assert ours.eot_token == theirs.eot_token == 199999
    assert ours.max_token_value == theirs.max_token_value == 200018
    assert not ours.is_special_token(-1) and not theirs.is_special_token(-1)
    # numpy integers as the ints of their values (tiktoken takes ints only)
    assert not ours.is_special_token(np.int64(-1)) and not ours.is_special_token(np.int64(2**40))
    assert ours.is_special_token(np.uint32(199999))
    assert ours.token_byte_values() == theirs.token_byte_values()
    assert ours.encode_single_token("<|endofprompt|>") == theirs.encode_single_token("<|endofprompt|>")


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_offsets_equal_tiktokens_on_any_text(pair, text):
    ours, theirs = pair
    ids = theirs.encode_ordinary(text)
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)


def test_what_is_no_token_is_a_key_error_and_a_tokenizer_error(small):
    assert small.encode_single_token("ab") == 256 and small.encode_single_token(b"ab") == 256
    assert small.encode_single_token("<|end|>") == 257 and small.is_special_token(257)
    assert not small.is_special_token(256)
    for lookup in (lambda: small.encode_single_token("abc"), lambda: small.decode_single_token_bytes(999),
                   lambda: small.decode_single_token_bytes(-1), lambda: small.eot_token):
        with pytest.raises(KeyError) as info:
            lookup()
        assert isinstance(info.value, UnknownTokenError) and isinstance(info.value, TokenizerError)
        assert str(info.value) == info.value.args[0]  # the message as written, not KeyError's repr of it
    with pytest.raises(TokenizerError, match="expected str or bytes"):
        small.encode_single_token(5)  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="bool"):
        small.is_special_token(True)
    with pytest.raises(TokenizerError, match="num_threads"):
        small.decode_bytes_batch([[97]], num_threads=0)
    assert small.decode_tokens_bytes([256, 97]) == [b"ab", b"a"]
    assert small.max_token_value == 257
    # ids read as every decoder reads them (wwho.ids): not bytes' values, a dict's keys, a set, a float
    for tokens, words in ((b"ab", "got bytes"), ({97: 1}, "keys would be taken"), ({97, 98}, "set"),
                          ([1.0], "not an integer"), (5, "a single id"), (None, "NoneType")):
        for decode in (small.decode_tokens_bytes, small.decode_with_offsets):
            with pytest.raises(TokenizerError, match=words):
                decode(tokens)
    with pytest.raises(UnknownTokenError, match=r"ids\[1\]: token id 999 "):
        small.decode_tokens_bytes([97, 999])
    with pytest.raises(UnknownTokenError, match=r"ids\[0\]: token id -1 "):
        small.decode_tokens_bytes([-1])
    # A token that starts inside a character starts at that character (tiktoken's rule).
    assert small.decode_with_offsets([0xE0, 0xB6, 0xB8, 97]) == ("\u0db8a", [0, 0, 0, 1])


def test_an_encoding_built_from_the_private_names_as_tiktoken_shows(pair):
    """tiktoken's README extends an Encoding from ``_pat_str``, ``_mergeable_ranks`` and
    ``_special_tokens``; a ByteBPE has them too. Built from ours, a tiktoken
    Encoding gives tiktoken's ids, the new special token included."""
    import tiktoken

    ours, theirs = pair
    assert ours._pat_str == theirs._pat_str
    assert ours._mergeable_ranks == theirs._mergeable_ranks and ours._special_tokens == theirs._special_tokens
    extended = tiktoken.Encoding(name="o200k_im", pat_str=ours._pat_str, mergeable_ranks=ours._mergeable_ranks,
                                 special_tokens={**ours._special_tokens, "<|im_start|>": 200264})
    for text in TEXTS:
        assert extended.encode(text + "<|im_start|>", allowed_special="all") == (
            theirs.encode(text, allowed_special="all") + [200264])


def test_the_private_ranks_are_one_dict_kept_as_tiktoken_keeps_its_own(pair):
    """Code reads ``_mergeable_ranks`` a token at a time, as tiktoken's is a dict it holds: ours is
    one copy, made on the first read and then the same dict (a new copy of 200,000 entries on each
    read took milliseconds); changing it, as changing tiktoken's, changes no encoding."""
    import copy
    import pickle

    ours, theirs = pair
    fresh = copy.deepcopy(ours)
    assert fresh._mergeable_ranks is fresh._mergeable_ranks
    fresh._mergeable_ranks.clear()
    assert fresh._mergeable_ranks == {} and theirs._mergeable_ranks  # the one kept, as tiktoken's
    assert [fresh.encode_ordinary(text) for text in TEXTS] == [theirs.encode_ordinary(text) for text in TEXTS]
    assert pickle.loads(pickle.dumps(fresh))._mergeable_ranks == theirs._mergeable_ranks  # not pickled


def test_a_pre_tokenizer_of_several_regexes_has_no_single_pattern():
    from wwho.bytelevel import ByteBPE

    ranks = {bytes([b]): b for b in range(256)}
    tok = ByteBPE(ranks, pattern=["\\d+|\\D+", "\\s+|\\S+"])
    assert not hasattr(tok, "_pat_str")  # (an AttributeError, as for an attribute an object lacks)
    with pytest.raises(AttributeError, match="regexes in turn"):
        getattr(tok, "_pat_str")  # noqa: B009


def test_disallowed_special_false_checks_nothing_as_in_tiktoken(pair):
    """``disallowed_special=False`` appears in code written for tiktoken, which reads it as no
    check: the special text is encoded as plain text, as with ``()``."""
    ours, theirs = pair
    text = "a <|endoftext|> b"
    assert ours.encode(text, disallowed_special=False) == theirs.encode(text, disallowed_special=False)
    # (tiktoken's encode_batch raises TypeError for False; ours reads it as encode does)
    assert ours.encode_batch([text], disallowed_special=False) == theirs.encode_batch([text], disallowed_special=())
