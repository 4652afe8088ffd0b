"""One interface for every tokenizer kind (wwho.protocol.Tokenizer), checked with one parametrized
test per property over SGPE, meta, byte-level and binary; token strings checked against HF
``tokenizers`` reading each kind's exported ``tokenizer.json`` (an oracle we did not write)."""

from __future__ import annotations

import inspect
from importlib import resources

import pytest
from conftest import DATA, O200K_FILE
from tokenizers import Tokenizer as HFTokenizer

import wwho
from wwho import binary
from wwho.errors import TokenizerError, UnknownTokenError, WrongTypeError
from wwho.protocol import Tokenizer

KINDS = ["sgpe", "meta", "bytelevel", "binary"]
LINES = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()[:400]
TEXTS = ["ශ්‍රී ලංකාව", "Hello ශ්‍රී ලංකා Cricket 2024 🏏", "", *LINES[:5]]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("protocol") / "train.txt"
    path.write_text("\n".join(LINES + ["Hello world, the quick brown fox."] * 20) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tokenizers(corpus):
    sgpe = wwho.SGPETokenizer.train(corpus, vocab_size=900, progress=False, workers=1)
    byte = wwho.ByteBPE.train(corpus, vocab_size=400, special_tokens=["<|end|>"], progress=False, workers=1)
    data = corpus.read_bytes()
    counts = {data[i:i + 64]: 3 for i in range(0, len(data), 64)}
    binary_tok = binary.BinaryTokenizer(binary.train_from_counts(counts, vocab_size=512, min_frequency=2,
                                                                 template=True))
    return {"sgpe": sgpe, "bytelevel": byte, "binary": binary_tok}


def _kind_tok(kind, tokenizers):
    if kind == "meta":
        if not O200K_FILE.is_file():
            pytest.skip(f"{O200K_FILE} is absent")
        return kind, wwho.MetaTokenizer(tokenizers["sgpe"], "o200k_base", tiktoken_file=O200K_FILE)
    return kind, tokenizers[kind]


@pytest.fixture(params=KINDS)
def kind_tok(request, tokenizers):
    return _kind_tok(request.param, tokenizers)


@pytest.fixture(params=[kind for kind in KINDS if kind != "binary"])
def text_kind_tok(request, tokenizers):
    """The kinds of text, which answer to tiktoken's names too."""
    return _kind_tok(request.param, tokenizers)


def _data(kind: str, text: str):
    return text.encode("utf-8") if kind == "binary" else text


def _sample_ids(tok) -> list[int]:
    vocab = tok.get_vocab()
    ids = sorted(vocab.values())
    return ids if len(ids) < 2000 else ids[:300] + ids[-600:] + ids[::997]


def test_every_kind_satisfies_the_protocol(kind_tok):
    kind, tok = kind_tok
    assert isinstance(tok, Tokenizer)
    for name, _member in inspect.getmembers(Tokenizer):
        if not name.startswith("_") or name == "__len__":
            assert hasattr(tok, name), (kind, name)
    assert tok.vocab_size == len(tok) == len(tok.get_vocab())
    assert len(set(tok.get_vocab().values())) == tok.vocab_size


def test_token_strings_and_ids_agree(kind_tok):
    kind, tok = kind_tok
    vocab = tok.get_vocab()
    for i in _sample_ids(tok):
        token = tok.id_to_token(i)
        assert isinstance(token, str)
        assert vocab[token] == i and tok.token_to_id(token) == i, (kind, i, token)
    # an UnknownTokenError (a KeyError, as for an id without a token) and a TypeError for a non-str,
    # on every kind (not a plain TokenizerError either way)
    with pytest.raises(UnknownTokenError, match="not a token string"):
        tok.token_to_id("\x00no such token\x00")
    for wrong in (None, 5, b"a"):
        with pytest.raises(WrongTypeError, match=f"a token string is a str, not {type(wrong).__name__}"):
            tok.token_to_id(wrong)
    with pytest.raises(TokenizerError):
        tok.id_to_token(10**9)
    with pytest.raises(TokenizerError):
        tok.id_to_token(True)


def test_encode_decode_and_batches(kind_tok):
    kind, tok = kind_tok
    items = [_data(kind, t) for t in TEXTS]
    encoded = [tok.encode(t) for t in items]
    assert tok.encode_batch(items) == encoded
    assert [tok.decode(ids) for ids in encoded] == items
    assert tok.decode_batch(encoded) == items
    assert tok.decode_batch(encoded, skip_special_tokens=True) == items
    joined = b"".join(tok.token_bytes(i) for i in encoded[1])
    assert joined == TEXTS[1].encode("utf-8")


def test_skip_special_tokens_drops_specials(kind_tok):
    kind, tok = kind_tok
    special = {"sgpe": "[CLS]", "meta": "<|endoftext|>", "bytelevel": "<|end|>", "binary": "<|start|>"}[kind]
    sid = tok.token_to_id(special)
    ids = tok.encode(_data(kind, "ශ්‍රී ලංකා"))
    both = [sid, *ids, sid]
    assert tok.decode(both, skip_special_tokens=True) == tok.decode(ids)
    kept = tok.decode(both)
    assert kept != tok.decode(ids) and _data(kind, special) in kept


@pytest.mark.parametrize("options, words", [
    ({"errors": 5}, "errors must be the name of an error handler"),
    ({"errors": "bogus"}, "errors='bogus' is no error handler"),
    # (codecs raises ValueError, not LookupError, for these names)
    ({"errors": "replace\x00"}, "is no error handler"),
    ({"errors": "\ud800"}, "is no error handler"),
    ({"skip_special_tokens": "yes"}, "skip_special_tokens must be True or False"),
])
def test_decode_options_are_checked(kind_tok, options, words):
    # SGPE decoded with errors=5 or "bogus" while the bytes were valid, meta raised a bare
    # TypeError, and skip_special_tokens="yes" counted as True.
    kind, tok = kind_tok
    ids = tok.encode(_data(kind, "ශ්‍රී ලංකා"))
    if kind == "binary" and "errors" in options:  # it returns bytes: no errors option to misspell
        with pytest.raises(TypeError, match="errors"):
            tok.decode(ids, **options)
        return
    with pytest.raises(TokenizerError, match=words):
        tok.decode(ids, **options)


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel", "binary"])
def test_token_strings_are_hf_tokenizers_own(kind, tokenizers, tmp_path):
    """get_vocab() is exactly what stock HF tokenizers reads from the kind's tokenizer.json."""
    tok = tokenizers[kind]
    if kind == "sgpe":
        tok.save(tmp_path / "out")
        path = tmp_path / "out" / "tokenizer.json"
    elif kind == "bytelevel":
        path = tok.export_hf(tmp_path / "tokenizer.json")
    else:
        path = tok.save(tmp_path / "tokenizer.json")
    hf = HFTokenizer.from_file(str(path))
    assert hf.get_vocab(with_added_tokens=True) == tok.get_vocab()
    for i in range(0, tok.vocab_size, 7):
        assert hf.id_to_token(i) == tok.id_to_token(i)


def test_sgpe_token_list_is_kept_under_a_clear_name(tokenizers):
    tok = tokenizers["sgpe"]
    assert tok.tokens[5] == tok.id_to_token(5) and len(tok.tokens) == tok.vocab_size


def test_load_tokenizer_gives_the_interface_for_binary(tokenizers, tmp_path):
    path = tokenizers["binary"].save(tmp_path / "tokenizer.json")
    loaded = wwho.load_tokenizer(path)
    assert isinstance(loaded, binary.BinaryTokenizer) and isinstance(loaded, Tokenizer)
    assert loaded.encode(b"\x00\xffabc") == tokenizers["binary"].encode(b"\x00\xffabc")


def test_decode_only_token_strings_are_hf_tokenizers_own(tmp_path):
    """A GGUF vocabulary's decode-only tokens (command-r has 1,403: control and unused tokens) have
    the strings its HF export gives them, not their bytes in GPT-2's byte characters, where some
    would share a string with an ordinary token and ``token_to_id(id_to_token(i)) != i``."""
    path = DATA / "gguf-vocab" / "ggml-vocab-command-r.gguf"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    tok = wwho.ByteBPE.from_gguf(path)
    hf = HFTokenizer.from_file(str(tok.export_hf(tmp_path / "tokenizer.json")))
    assert hf.get_vocab(with_added_tokens=True) == tok.get_vocab()
    assert [tok.id_to_token(i) for i in range(len(tok))] == [hf.id_to_token(i) for i in range(len(tok))]


def test_every_kind_takes_the_protocols_first_arguments_by_position(kind_tok):
    """The protocol's first arguments are positional (each kind names them for what they are); the
    options after them are keywords of the same names on every kind (``decode_batch(...,
    num_threads=2)`` too, on binary)."""
    kind, tok = kind_tok
    ids = tok.encode(_data(kind, TEXTS[1]))
    assert tok.encode_batch([_data(kind, TEXTS[1])]) == [ids]
    assert tok.decode_batch([ids], skip_special_tokens=True, num_threads=2) == [tok.decode(ids)]
    assert tok.id_to_token(ids[0]) == tok.id_to_token(token_id=ids[0])
    assert tok.token_bytes(ids[0])
    with pytest.raises(WrongTypeError, match="skip_special_tokens must be True or False"):
        tok.decode(ids, skip_special_tokens="yes")


def test_tiktoken_names_take_ids_and_drop_specials_alike(text_kind_tok):
    """``decode_tokens_bytes``/``decode_with_offsets`` take ``ids`` on every text kind (byte-level
    and meta named it ``tokens``, SGPE ``ids``), and ``decode_bytes`` drops special tokens where
    ``decode`` does (SGPE's alone did)."""
    _, tok = text_kind_tok
    ids = tok.encode(TEXTS[1])
    special = tok.encode(next(iter(tok.special_tokens)), allowed_special="all")
    assert len(special) == 1
    assert tok.decode_tokens_bytes(ids=ids) == tok.decode_tokens_bytes(ids)
    assert tok.decode_with_offsets(ids=ids) == tok.decode_with_offsets(ids)
    with_special = [*special, *ids, *special]
    assert tok.decode_bytes(with_special, skip_special_tokens=True) == tok.decode_bytes(ids)
    assert tok.decode_bytes(with_special, skip_special_tokens=True).decode() == \
        tok.decode(with_special, skip_special_tokens=True) == TEXTS[1]
    with pytest.raises(WrongTypeError, match="skip_special_tokens must be True or False"):
        tok.decode_bytes(ids, skip_special_tokens=1)


def test_tables_a_tokenizer_encodes_with_are_read_only(kind_tok):
    """Taken, ``meta.special_tokens[...] = ...`` would make the next encode fail with a bare KeyError,
    and ``sgpe.vocab[...] = ...`` a save that does not load."""
    kind, tok = kind_tok
    tables = {"sgpe": [tok.vocab] if kind == "sgpe" else [],
              "meta": [getattr(tok, "special_tokens", None), getattr(tok, "tiktoken_specials", None)],
              "bytelevel": [tok.special_tokens] if kind == "bytelevel" else [],
              "binary": []}[kind]
    for table in tables:
        with pytest.raises(TypeError):
            table["<|new|>"] = 1
        # Still a dict to read: JSON writes it, and a pickle (a worker process returning it) or a
        # copy is a plain dict, which may be changed.
        import copy
        import json
        import pickle

        assert json.loads(json.dumps(table)) == dict(table)
        for copied in (pickle.loads(pickle.dumps(table)), copy.copy(table), copy.deepcopy(table)):
            assert type(copied) is dict and copied == table
            copied["<|new|>"] = 1
    before = tok.get_vocab()
    before["<|new|>"] = 1  # a copy: the tokenizer is unchanged
    assert "<|new|>" not in tok.get_vocab()
