"""tiktoken without its crash on long whitespace runs, with tiktoken's ids (tests/reference/safe_tiktoken.py: a test oracle, not run by the package).

The oracle is tiktoken itself, for each of its three regex families (o200k_base, cl100k_base,
r50k/gpt2), run with the o200k_base ranks: the cut rule is checked on short texts with the
threshold at 2 (every whitespace run of two or more is cut out), on runs of up to 990,000
characters (tiktoken's own limit is about 1,000,000), and past the limit, where tiktoken
raises a PanicException and the safe encoder must not.
"""

from __future__ import annotations

import pytest
from conftest import O200K_FILE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.safe_tiktoken import SafeEncoder

from wwho.bytelevel.pretokenize import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN
from wwho.errors import TokenizerError

FAMILIES = {"o200k": O200K_PATTERN, "cl100k": CL100K_PATTERN, "gpt2": GPT2_PATTERN}
SPACES = [" ", "\t", "\x0b", "\x0c", "\x85", "\xa0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f",
          "\u205f", "\u3000"]
OTHERS = ["a", "B", "z", "ශ", "ා", "中", "1", "٣", "!", ".", "/", "'", "s", "'s", "\u0301", "\r", "\n", "\r\n",
          "\x1c", "🏏", "\ud83c", "\udfcf", "\ud800", "<|endoftext|>"]


@pytest.fixture(scope="module")
def encodings():
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    ranks = load_tiktoken_bpe(str(O200K_FILE))
    return {name: tiktoken.Encoding(f"wwho-test-{name}", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
            for name, pattern in FAMILIES.items()}


@pytest.fixture(scope="module")
def cut_everything(encodings):
    """Safe encoders that cut out every whitespace run of two or more (made once: they build a ranks table)."""
    return {name: SafeEncoder(enc, long_run=2) for name, enc in encodings.items()}


pieces = st.one_of(
    st.sampled_from(OTHERS + SPACES),
    st.builds(lambda ch, n: ch * n, st.sampled_from(SPACES + ["\n", " \u3000"]), st.integers(2, 9)),
)


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(pieces, max_size=14))
def test_cut_rule_gives_tiktoken_ids(encodings, cut_everything, family, parts):
    """With the threshold at 2 every whitespace run is cut out, so this checks the argument itself."""
    enc = encodings[family]
    text = "".join(parts)
    assert cut_everything[family].encode_ordinary(text) == enc.encode_ordinary(text)


CONTEXTS = [("", ""), ("x", "y"), ("x.", "!"), ("x\n", "y"), ("x.\n\n", "1"), ("x!\n \n", "'s"), ("ab\u3000", "\n y"),
            ("", "\udfcf"), ("\ud83c", "z"), ("x/", ""), ("\r\n", "ශ")]


@pytest.mark.parametrize("family", FAMILIES)
def test_long_runs_below_tiktokens_limit_give_its_ids(encodings, family):
    enc = encodings[family]
    safe = SafeEncoder(enc)
    for (before, after), run in zip(CONTEXTS, [" ", "\t \xa0", "\u3000"] * 4):
        text = before + run * (120_000 // len(run)) + after
        assert safe.encode_ordinary(text) == enc.encode_ordinary(text), (before, run, after)
    text = "word " + " " * 990_000 + "word"  # just below tiktoken's limit
    assert safe.encode_ordinary(text) == enc.encode_ordinary(text)


PAST_THE_LIMIT = {  # what overflows each family (measured with tiktoken 0.14: it raises PanicException)
    "o200k": "a " + " \u3000" * 525_000 + "b c" + "\t" * 1_050_000,  # followed by a letter; ending the text
    "cl100k": "a " + "\xa0 " * 525_000 + "b",
    "gpt2": "a " + " \n" * 525_000 + "b",  # newlines are part of the run in this family
}


@pytest.mark.parametrize("family", FAMILIES)
def test_runs_past_tiktokens_limit_do_not_crash(encodings, family):
    enc = encodings[family]
    text = PAST_THE_LIMIT[family]
    ids = SafeEncoder(enc).encode_ordinary(text)
    assert enc.decode(ids) == text


def test_an_unknown_pattern_falls_back_to_wwhos_encoder(encodings):
    import tiktoken

    base = encodings["o200k"]
    pattern = O200K_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}{1,2}")  # a variant: not a pattern this module knows
    enc = tiktoken.Encoding("wwho-test-custom", pat_str=pattern, mergeable_ranks=base._mergeable_ranks,
                            special_tokens={})
    safe = SafeEncoder(enc, long_run=2)
    for text in ["a  b", "x 12345  \n\t y", "  ", "ශ්‍රී ලංකා  2024!!  ", "a" + " " * 5000 + "b"]:
        assert safe.encode_ordinary(text) == enc.encode_ordinary(text)
    text = "x" + " " * 200_000 + "y"
    assert enc.decode(SafeEncoder(enc).encode_ordinary(text)) == text
    # A regex of the user's own with a lookahead runs on fancy-regex in the core, whose backtracking
    # stack holds 1,000,000 entries: past that, a clear error instead of tiktoken's PanicException
    # (docs/reliability.md). tiktoken's own three regex families never reach it.
    text = "x" + " " * 1_050_000 + "y"
    with pytest.raises(TokenizerError, match="failed on a piece of 1050002 bytes: .*stack"):
        SafeEncoder(enc).encode_ordinary(text)


def test_long_run_must_be_at_least_two(encodings):
    with pytest.raises(ValueError, match="long_run"):
        SafeEncoder(encodings["o200k"], long_run=1)
