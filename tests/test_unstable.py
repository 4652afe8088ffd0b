"""``ByteBPE.encode_with_unstable`` (wwho.bytelevel.unstable) against tiktoken's own, id for id.

The oracle is tiktoken's ``Encoding.encode_with_unstable`` over the same o200k_base ranks file
(completions compared as sets: tiktoken returns its set's order), with o200k's regex and with
cl100k's as tiktoken defines it (whose ``\\s*[\\r\\n]+`` makes tiktoken widen the unstable end over
whitespace tokens). Besides, the promise its docstring states, checked on its own: the stable ids
spell a prefix of the text, and the stable ids followed by any completion spell the text and more.
"""

from __future__ import annotations

import pytest
from conftest import O200K_FILE, require_data
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wwho.bytelevel import ByteBPE, DisallowedSpecialError

tiktoken = pytest.importorskip("tiktoken")

#: Texts whose ends tiktoken treats in each of its ways: a word cut short, whitespace runs and
#: newlines (the widening), characters o200k splits between tokens, a special token at the end or
#: before the last piece, one character, nothing.
CASES = ["hello fan", "hello fanta", "a", "", "x<|endoftext|>", "x<|endoftext|>y", "hello\n \n",
         "tab\t\t", "Hello, world!!", "ශ්‍රී ලංකා", "नमस्ते दुनि", "emoji 🇱🇰", "a\n\n", "3.14159",
         "don't", "x \ud83d", "a" * 300,
         # a whitespace token before a last piece that starts with whitespace: the widening itself
         " \n  ", "\t\t\t\u093f", "\t  \t\t\t\u093f"]


@pytest.fixture(scope="module")
def encoders():
    """name -> (wwho's tokenizer, tiktoken's encoding), over the same ranks and specials."""
    from tiktoken.load import load_tiktoken_bpe

    require_data(O200K_FILE)
    ours = ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
    ranks = load_tiktoken_bpe(str(O200K_FILE))
    specials = dict(ours.special_tokens)
    out = {"o200k": (ours, tiktoken.Encoding("o200k", pat_str=ours._pat_str, mergeable_ranks=ranks,
                                             special_tokens=specials))}
    cl100k = ByteBPE(ours.ranks, pattern="cl100k", special_tokens=specials)
    out["cl100k"] = (cl100k, tiktoken.Encoding("cl100k-pattern", pat_str=_cl100k_pattern(ranks),
                                               mergeable_ranks=ranks, special_tokens=specials))
    return out


def _cl100k_pattern(ranks) -> str:
    """cl100k's regex as tiktoken itself defines it (its loader stubbed: no download)."""
    import tiktoken_ext.openai_public as public

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(public, "load_tiktoken_bpe", lambda *a, **k: ranks)
        return public.cl100k_base()["pat_str"]


def _same(ours: ByteBPE, ref, text: str, **options) -> tuple[list[int], list[list[int]]]:
    got = ours.encode_with_unstable(text, **options)
    # tiktoken cannot take lone surrogates; wwho reads them as U+FFFD, as its encode does
    want = ref.encode_with_unstable(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"), **options)
    assert got[0] == want[0], text
    assert sorted(map(tuple, got[1])) == sorted(set(map(tuple, want[1]))), text
    assert got[1] == sorted(got[1]), "completions come sorted"
    return got


def _spells(tok: ByteBPE, text: str, stable: list[int], completions: list[list[int]]) -> None:
    data = text.encode("utf-8", "replace")
    assert data.startswith(tok.decode_bytes(stable))
    for seq in completions:
        assert tok.decode_bytes(stable + seq).startswith(data), (text, seq)


@pytest.mark.parametrize("name", ["o200k", "cl100k"])
@pytest.mark.parametrize("text", CASES)
def test_equals_tiktoken_on_each_kind_of_end(encoders, name, text):
    ours, ref = encoders[name]
    stable, completions = _same(ours, ref, text, allowed_special="all")
    if "\ud83d" not in text:
        _spells(ours, text, stable, completions)


# Short texts of the characters whose ends differ: letters, digits, punctuation, spaces, tabs and
# newlines, Sinhala with its joiner, Devanagari. (A text ending in a lone space has 100k
# completions, every token that starts with a space: a few of those are enough.)
_ALPHABET = st.sampled_from(list("ab Z9.,!'\n\t") + ["  ", "\r\n", "ශ්‍රී", "ලං", "का", "ि", "🦙"])


@pytest.mark.parametrize("name", ["o200k", "cl100k"])
def test_equals_tiktoken_on_any_short_text(encoders, name):
    ours, ref = encoders[name]

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(text=st.lists(_ALPHABET, max_size=6).map("".join))
    @example(text="a \n")
    def check(text):
        stable, completions = _same(ours, ref, text)
        _spells(ours, text, stable, completions)

    check()


def test_special_tokens_as_encode_takes_them(encoders):
    ours, ref = encoders["o200k"]
    with pytest.raises(DisallowedSpecialError, match="<|endoftext|>"):
        ours.encode_with_unstable("x<|endoftext|>")
    with pytest.raises(ValueError):
        ref.encode_with_unstable("x<|endoftext|>")
    # nothing after a special token is unstable; as plain text it is the last piece's
    assert ours.encode_with_unstable("x<|endoftext|>", allowed_special="all") == (ours.encode("x<|endoftext|>", allowed_special="all"), [])
    _same(ours, ref, "x<|endoftext|>", disallowed_special=())


@settings(max_examples=200, deadline=None)
@given(data=st.binary(min_size=1, max_size=40) | st.binary(min_size=300, max_size=1200))  # short, and past the heap
def test_merge_bytes_is_tiktokens_byte_pair_encode(encoders, data):
    """The core's merge of one piece with no lookup of the whole, against tiktoken's for pieces that
    are no token (for a token tiktoken's ``_encode_single_piece`` looks the whole up first)."""
    ours, ref = encoders["o200k"]
    if data not in ours.ranks:
        assert ours._core.merge_bytes(data) == ref._encode_single_piece(data)
