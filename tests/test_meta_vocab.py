"""MetaVocab and the token strings of the meta vocabulary (``wwho.meta_vocab``).

Oracles we did not write: tiktoken's o200k_base layout (its ``n_vocab``) and HF ``tokenizers``'
ByteLevel mapping for the token strings. The SGPE part is a small vocabulary trained here on the
Indic runs of corpus slices (``segments_only``), as in ``test_meta.py``.
"""

from __future__ import annotations

import pytest
from test_meta import O200K_N_VOCAB, mixed_sgpe_part

from wwho.errors import TokenizerError, VocabError
from wwho.meta_vocab import MetaVocab, bytes_to_token_string


@pytest.fixture(scope="module")
def sgpe(tmp_path_factory):
    return mixed_sgpe_part(tmp_path_factory)


def test_metavocab_id_space(sgpe, o200k):
    mv = MetaVocab(o200k.n_vocab, sgpe.vocab)
    assert mv.offset == O200K_N_VOCAB
    assert len(mv) == mv.size == O200K_N_VOCAB + len(sgpe.vocab)
    ids = [mv.encode_sgpe_token(t) for t in sgpe.vocab]
    assert sorted(ids) == list(range(O200K_N_VOCAB, mv.size))  # no collision, no gap, none in tiktoken's range
    for token, raw in sgpe.vocab.items():
        uid = raw + O200K_N_VOCAB
        assert mv.decode_id(uid) == token and mv.sgpe_id(uid) == raw and not mv.is_tiktoken_id(uid)
    assert mv.decode_id(0) is None and mv.decode_id(O200K_N_VOCAB - 1) is None
    assert mv.is_tiktoken_id(O200K_N_VOCAB - 1) and mv.is_sgpe_id(O200K_N_VOCAB)


def test_metavocab_errors(sgpe):
    mv = MetaVocab(O200K_N_VOCAB, sgpe.vocab)
    for bad in (-1, mv.size, True, 1.5, "3"):
        with pytest.raises(TokenizerError):
            mv.decode_id(bad)
    with pytest.raises(VocabError, match="not a token"):
        mv.encode_sgpe_token("no such token")
    assert mv.encode_sgpe_token("no such token", unk_id_raw=sgpe.vocab["[UNK]"]) == O200K_N_VOCAB + sgpe.vocab["[UNK]"]
    with pytest.raises(VocabError):
        mv.encode_sgpe_token("no such token", unk_id_raw=mv.sgpe_size)
    with pytest.raises(TokenizerError):
        mv.sgpe_id(5)
    with pytest.raises(VocabError):
        MetaVocab(10, {"a": 0, "b": 0})


def test_token_strings_use_the_byte_level_mapping_of_hf_tokenizers():
    from tokenizers import pre_tokenizers

    assert sorted(pre_tokenizers.ByteLevel.alphabet()) == sorted(set(map(bytes_to_token_string, map(bytes_chr, range(256)))))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    for text in ("Hello world", " ශ්‍රී\t\n", "🦜 x\u00a0y", "\x00\x7f\xad"):
        assert byte_level.pre_tokenize_str(text)[0][0] == bytes_to_token_string(text.encode())


def bytes_chr(b: int) -> bytes:
    return bytes([b])
