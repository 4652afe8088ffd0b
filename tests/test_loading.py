"""wwho.loading: the HF adapter's batch encoding (any tokenizer.json HF runs as it is)."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from wwho.loading import HFTokenizer


@pytest.fixture(scope="module")
def hf() -> HFTokenizer:
    words = ["[UNK]", "hello", "world", "abc", "?"]
    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return HFTokenizer(tok)


@pytest.mark.parametrize("threads", [None, 1, 2])
def test_encode_batch_in_order_on_any_thread_count(hf, threads):
    texts = ["abc hello", "", "zyx?", "hello world abc"] * 50
    assert hf.encode_batch(texts, num_threads=threads) == [hf.encode(t) for t in texts]
