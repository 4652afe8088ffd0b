"""``benchmarks/bench_languages.py``'s held-out text with collapsed whitespace is the text that
SentencePiece encodes: checked against SentencePiece's own normalizer (the ``nmt_nfkc`` rule that
``SentencePieceTrainer`` uses by default, with its ``remove_extra_whitespaces``), not against our
reading of its documentation.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_languages import collapse_whitespace  # noqa: E402

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is a test dependency (pip install -e .[dev])")

# Letters of two Indic scripts and Latin, and the whitespace FLORES and other text hold: space,
# tab, no-break space, ideographic space. (Zero-width characters are not whitespace to Python, and
# SentencePiece maps some of them to spaces: they are outside what the function claims.)
TEXT = st.text(alphabet=st.sampled_from(list("abක්ෂकि ") + ["\t", "\u00a0", "\u3000"]), max_size=40)


@pytest.fixture(scope="module")
def normalizer():
    return spm.SentencePieceNormalizer(rule_name="nmt_nfkc")


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_collapsed_text_is_what_sentencepiece_encodes(normalizer, line):
    collapsed = collapse_whitespace(line)
    # SentencePiece writes its dummy prefix and every space as U+2581; an empty line stays empty.
    want = normalizer.normalize(line)
    assert ("\u2581" + collapsed.replace(" ", "\u2581") if collapsed else "") == want


def test_examples():
    assert collapse_whitespace("  ಡಯಾ  ಬಳಿ ") == "ಡಯಾ ಬಳಿ"
    assert collapse_whitespace("a\t\u00a0b") == "a b"
    assert collapse_whitespace(" \t ") == ""
