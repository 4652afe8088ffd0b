"""wwho.hf.WWHOTokenizer: the meta tokenizer inside transformers.

Its ids must be exactly the meta tokenizer's (which tests/test_meta.py checks against
tiktoken), its decode exact, and the transformers machinery a Trainer uses must work:
padding and attention masks, truncation, special tokens, save_pretrained/from_pretrained,
added tokens, and the language-modelling data collator.
"""

from __future__ import annotations

import json

import pytest
from conftest import CORPORA, O200K_FILE, read_slice, require_data
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from wwho.errors import IdRangeError, TokenizerError, UnknownTokenError
from wwho.meta import MetaTokenizer
from wwho.meta_vocab import SGPE_PREFIX

transformers = pytest.importorskip("transformers")
from wwho.hf import WWHOTokenizer  # noqa: E402  (needs transformers)

EOS = 199_999  # tiktoken o200k_base's <|endoftext|>
N = 200_019  # o200k_base n_vocab: the SGPE offset


@pytest.fixture(scope="module")
def meta(o200k, tmp_path_factory):
    from wwho.sgpe import SGPETokenizer

    require_data(CORPORA)
    path = tmp_path_factory.mktemp("hf-train") / "train.txt"
    path.write_text(read_slice(CORPORA / "si" / "news-bbcsinhala.txt", 200_000)
                    + read_slice(CORPORA / "hi" / "tico19-test.txt", 200_000), encoding="utf-8")
    sgpe = SGPETokenizer.train(path, vocab_size=2500, script="mixed", segments_only=True, progress=False, workers=1)
    return MetaTokenizer(sgpe, o200k)


@pytest.fixture(scope="module")
def tok(meta):
    return WWHOTokenizer(meta_tokenizer=meta)


def lines(rel: str, max_bytes: int = 60_000) -> list[str]:
    return read_slice(require_data(CORPORA / rel), max_bytes).splitlines()


def test_ids_are_the_meta_tokenizers_and_decode_is_exact(tok, meta):
    texts = lines("si-en/news-codeswitched-lines.txt") + lines("hi-en/hasoc2019-tweets-not-offensive.txt")
    texts = [t for t in texts if "<|" not in t]
    assert len(texts) > 100
    batch = tok(texts, add_special_tokens=False)["input_ids"]
    assert batch == meta.encode_batch(texts)
    assert tok.batch_decode(batch) == texts
    assert tok.tokenize(texts[0]) == meta.convert_ids_to_tokens(meta.encode(texts[0]))


piece = st.sampled_from(["ශ්‍රී", "ලංකාව", " ", "  ", "\n", "\t", "नमस्ते", "क्ष", "।", "hello", " World", "42", "🦜",
                         "👍🏽", "\u200d", "\u200c", "é", ",", "[PAD]", "<|", "endoftext", "|>", "⟦sgpe⟧"])


@settings(max_examples=150, deadline=None)
@given(st.lists(piece, max_size=20).map("".join))
def test_fuzzed_text(tok, meta, text):
    assume("<|endoftext|>" not in text and "⟦sgpe⟧[PAD]" not in text)
    ids = tok.encode(text, add_special_tokens=False)
    assert ids == meta.encode(text, disallowed_special=())
    assert tok.decode(ids) == text
    tokens = tok.convert_ids_to_tokens(ids)
    assert tok.convert_tokens_to_ids(tokens) == ids
    assert tok.convert_tokens_to_string(tokens) == text


def test_special_tokens(tok, meta):
    assert (tok.eos_token, tok.eos_token_id) == ("<|endoftext|>", EOS)
    assert (tok.pad_token, tok.pad_token_id) == (SGPE_PREFIX + "[PAD]", N + meta.sgpe.vocab["[PAD]"])
    assert tok.bos_token is None and tok.unk_token is None
    # transformers recognizes special-token text in the input (its convention) ...
    text = "ශ්‍රී<|endoftext|> ලංකා next"
    ids = tok.encode(text, add_special_tokens=False)
    assert ids == meta.encode(text, allowed_special={"<|endoftext|>"})
    assert EOS in ids and tok.decode(ids) == text
    assert tok.decode(ids, skip_special_tokens=True) == "ශ්‍රී ලංකා next"
    # ... unless told not to
    assert tok.encode(text, add_special_tokens=False, split_special_tokens=True) == meta.encode(text, disallowed_special=())
    assert tok.encode("a b", add_special_tokens=True) == meta.encode("a b")  # no eos unless append_eos


def test_vocabulary_size_and_added_tokens(meta):
    tok = WWHOTokenizer(meta_tokenizer=meta)
    assert tok.vocab_size == len(tok) == meta.vocab_size == N + meta.sgpe.vocab_size
    vocab = tok.get_vocab()
    assert len(vocab) == meta.vocab_size and sorted(vocab.values()) == list(range(meta.vocab_size))
    assert tok.add_tokens(["<wwho-new>"]) == 1
    new_id = tok.convert_tokens_to_ids("<wwho-new>")
    assert new_id == meta.vocab_size == len(tok) - 1  # after every existing id, no collision
    ids = tok.encode("x <wwho-new> ශ්‍රී", add_special_tokens=False)
    assert new_id in ids and tok.decode(ids) == "x <wwho-new> ශ්‍රී"


def test_padding_attention_masks_truncation(tok):
    texts = ["a", "ශ්‍රී ලංකා Cricket ටීම් 2024", "नमस्ते दुनिया"]
    lengths = [len(tok.encode(t, add_special_tokens=False)) for t in texts]
    batch = tok(texts, padding=True, return_tensors="np")
    assert batch["input_ids"].shape == (3, max(lengths))
    for row, mask, n in zip(batch["input_ids"], batch["attention_mask"], lengths):
        assert list(mask) == [1] * n + [0] * (max(lengths) - n)
        assert list(row[n:]) == [tok.pad_token_id] * (max(lengths) - n)
    left = tok(texts, padding="max_length", max_length=20, padding_side="left")
    assert all(len(r) == 20 for r in left["input_ids"])
    assert left["input_ids"][0][:19] == [tok.pad_token_id] * 19 and left["attention_mask"][0][-1] == 1
    cut = tok(texts[1], truncation=True, max_length=3)["input_ids"]
    assert cut == tok.encode(texts[1], add_special_tokens=False)[:3]


def test_language_modelling_collator(tmp_path, meta):
    from transformers import DataCollatorForLanguageModeling

    tok = WWHOTokenizer(meta_tokenizer=meta, append_eos=True)
    features = [tok(t) for t in ["short", "ශ්‍රී ලංකා and हिंदी text"]]
    assert all(f["input_ids"][-1] == EOS for f in features)
    batch = DataCollatorForLanguageModeling(tokenizer=tok, mlm=False, return_tensors="np")(features)
    ids, labels = batch["input_ids"], batch["labels"]
    assert ((labels == -100) == (ids == tok.pad_token_id)).all()  # padding is ignored, eos is learned
    assert (labels == EOS).sum() == 2


def test_save_pretrained_from_pretrained(tok, meta, tmp_path):
    saved = tok.save_pretrained(tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["meta_config.json", "tokenization_wwho.py", "tokenizer_config.json", "tokenizer_meta.json",
                     "vocab.json", "wwho-manifest.json"]
    assert "tokenizer.json" not in names  # AutoTokenizer must not find an SGPE-only tokenizer here
    assert {str(tmp_path / n) for n in ("vocab.json", "meta_config.json")} <= set(map(str, saved))
    config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["tokenizer_class"] == "WWHOTokenizer" and config["eos_token"] == "<|endoftext|>"
    for loaded in (WWHOTokenizer.from_pretrained(tmp_path), WWHOTokenizer.from_pretrained(tmp_path, tiktoken_file=O200K_FILE)):
        assert (loaded.eos_token_id, loaded.pad_token_id, len(loaded)) == (tok.eos_token_id, tok.pad_token_id, len(tok))
        texts = lines("si-en/news-codeswitched-lines.txt", 20_000)
        assert loaded(texts, add_special_tokens=False)["input_ids"] == meta.encode_batch(texts)
    # the saved directory is also a plain meta tokenizer directory
    assert MetaTokenizer.load(tmp_path).encode("ශ්‍රී x") == meta.encode("ශ්‍රී x")


def test_offsets_are_refused_not_dropped(tok, meta):
    """return_offsets_mapping=True gives the offsets, not input_ids and attention_mask only, in silence."""
    with pytest.raises(TokenizerError, match="gives no offset_mapping"):
        tok(["ශ්‍රී x"], return_offsets_mapping=True)
    text, offsets = meta.decode_with_offsets(meta.encode("ශ්‍රී x"))
    assert text == "ශ්‍රී x" and offsets[0] == 0


def test_from_pretrained_of_a_directory_without_meta_config_says_so(tok, tmp_path):
    """It must not say WWHOTokenizer needs "a saved directory (WWHOTokenizer.from_pretrained(
    directory))", which is the call made."""
    tok.save_pretrained(tmp_path)
    (tmp_path / "meta_config.json").unlink()
    with pytest.raises(TokenizerError, match=r"has no meta_config.json, so it is no meta tokenizer's directory"):
        WWHOTokenizer.from_pretrained(tmp_path)


def test_auto_tokenizer_loads_a_saved_directory(tok, meta, tmp_path):
    """transformers knows no class named WWHOTokenizer: without more it falls back to its Rust
    backend and fails with "You need to have sentencepiece or tiktoken installed", with or without
    trust_remote_code. tokenizer_config.json's auto_map names the module save_pretrained writes,
    which imports the class from wwho. In a child interpreter: transformers copies that module into
    HF_MODULES_CACHE."""
    import os
    import subprocess
    import sys

    tok.save_pretrained(tmp_path / "saved")
    config = json.loads((tmp_path / "saved" / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["auto_map"] == {"AutoTokenizer": ["tokenization_wwho.WWHOTokenizer", None]}
    source = f"""
from transformers import AutoTokenizer
from wwho.hf import WWHOTokenizer
try:
    AutoTokenizer.from_pretrained({str(tmp_path / "saved")!r})
except ValueError as exc:
    assert "trust_remote_code=True" in str(exc), exc
else:
    raise AssertionError("loaded without trust_remote_code")
for directory in ({str(tmp_path / "saved")!r}, {str(tmp_path / "again")!r}):
    auto = AutoTokenizer.from_pretrained(directory, trust_remote_code=True, tiktoken_file={str(O200K_FILE)!r})
    assert type(auto) is WWHOTokenizer, type(auto)
    print("ids", auto.encode("ශ්‍රී ලංකා and हिंदी 🦜", add_special_tokens=False))
    auto.save_pretrained({str(tmp_path / "again")!r})  # the same files again, not a copy of wwho's hf.py
"""
    env = {**os.environ, "HF_MODULES_CACHE": str(tmp_path / "modules"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)  # transformers asks on standard input without trust_remote_code
    assert done.returncode == 0, done.stderr[-3000:]
    want = f"ids {meta.encode('ශ්‍රී ලංකා and हिंदी 🦜')}"
    # (the prompt transformers printed without trust_remote_code ends without a new line)
    assert [line[line.index("ids"):] for line in done.stdout.splitlines() if "ids [" in line] == [want, want], done.stdout
    assert sorted(p.name for p in (tmp_path / "again").iterdir()) == sorted(p.name for p in (tmp_path / "saved").iterdir())


def test_a_meta_save_over_a_save_pretrained_directory_keeps_its_module(tok, meta, tmp_path):
    """``MetaTokenizer.save`` over a ``save_pretrained`` directory removed ``tokenization_wwho.py`` (a file
    of wwho's last save it did not write again) while transformers' ``tokenizer_config.json`` stayed,
    naming it in ``auto_map``: AutoTokenizer then failed with "does not appear to have a file named
    tokenization_wwho.py"."""
    from wwho.export.meta_files import AUTO_MODULE_SOURCE

    tok.save_pretrained(tmp_path / "saved")
    meta.save(tmp_path / "saved")
    assert (tmp_path / "saved" / "tokenization_wwho.py").read_text(encoding="utf-8") == AUTO_MODULE_SOURCE
    assert "auto_map" in json.loads((tmp_path / "saved" / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert WWHOTokenizer.from_pretrained(tmp_path / "saved", tiktoken_file=O200K_FILE).encode("ශ්‍රී") == tok.encode("ශ්‍රී")
    meta.save(tmp_path / "plain")  # a directory save_pretrained never wrote gets no module
    assert not (tmp_path / "plain" / "tokenization_wwho.py").exists()


def test_append_eos_survives_save(meta, tmp_path):
    tok = WWHOTokenizer(meta_tokenizer=meta, append_eos=True)
    tok.save_pretrained(tmp_path)
    again = WWHOTokenizer.from_pretrained(tmp_path)
    assert again("ශ්‍රී")["input_ids"] == meta.encode("ශ්‍රී") + [EOS]


def test_errors(tok, meta):
    with pytest.raises(TokenizerError, match="200005"):
        tok.decode([1, 200_005])
    with pytest.raises(TokenizerError):
        tok.decode([len(tok) + 5])
    # The error classes and positions of every wwho decode (not a plain TokenizerError without a
    # position; an unassigned id's position is in the whole list, not in the stretch between special
    # tokens).
    eos = tok.eos_token_id
    for bad, error, message in [([5, -1], IdRangeError, "token id -1 at position 1 is out of range"),
                                ([5, 2**32], IdRangeError, "at position 1 is out of range"),
                                ([5, len(tok)], UnknownTokenError, f"token id {len(tok)} at position 1 is out of"),
                                ([5, eos, 6, 199_998], UnknownTokenError, "199998 at position 3 is not assigned")]:
        with pytest.raises(error, match=message):
            tok.decode(bad)
    # An unknown token string is None without an unknown token, as transformers' own tokenizers
    # answer (code asks ``convert_tokens_to_ids("<|im_start|>") is None``), not an error.
    assert tok.convert_tokens_to_ids(["no such token string"]) == [None]
    assert tok.convert_tokens_to_ids("<|im_start|>") is None
    # Every value meta.decode refuses, the wrapper refuses too: int() would have made ids of them.
    np = pytest.importorskip("numpy")
    for bad, message in ((np.array([13225.9, 2375.99]), r"13225.9\)?, not an integer"),
                         (np.array([True, False]), r"is (np\.)?True_?, (a bool, )?not an integer"), (["13225", "2375"], "'13225', not an integer")):
        with pytest.raises(TokenizerError, match=message):
            tok.decode(bad)
        with pytest.raises(TokenizerError, match=message):
            meta.decode(bad)
    with pytest.raises(TokenizerError, match="meta_tokenizer"):
        WWHOTokenizer()
    with pytest.raises(TokenizerError, match="filename_prefix"):
        tok.save_vocabulary("/tmp", filename_prefix="x")


def test_pickles_for_worker_processes(tok):
    """DataLoader workers and datasets.map(num_proc=...) send the tokenizer to other processes."""
    import pickle

    again = pickle.loads(pickle.dumps(tok))
    text = "ශ්‍රී ලංකා and हिंदी 🦜"
    assert again(text)["input_ids"] == tok(text)["input_ids"] and again.decode(again(text)["input_ids"]) == text


def test_a_special_token_of_the_sgpe_part_decodes_to_its_token_string(tok):
    """The pad token ⟦sgpe⟧[PAD] must not decode to "[PAD]" (its SGPE bytes), or the text of the pad
    token in an input would not come back from decode(encode(text))."""
    ids = tok("x", padding="max_length", max_length=3)["input_ids"]
    assert tok.decode(ids) == "".join(tok.convert_ids_to_tokens(ids)) == "x" + tok.pad_token * 2
    for text in ("a " + tok.pad_token + " b", "a<|endoftext|>b"):
        assert tok.decode(tok.encode(text, add_special_tokens=False)) == text


def test_an_unregistered_special_of_the_sgpe_part_decodes_as_the_meta_tokenizer_does(tok, meta):
    """An SGPE special does not decode to its prefixed token string (⟦sgpe⟧[MASK]), text neither
    MetaTokenizer.decode gives nor that encodes back to the id; only the pad token is registered."""
    mask = N + meta.sgpe.vocab["[MASK]"]
    ids = meta.encode("ශ්‍රී [MASK] ලංකා", allowed_special="all")
    assert mask in ids and mask not in tok.all_special_ids
    assert tok.decode(ids) == meta.decode(ids) == "ශ්‍රී [MASK] ලංකා"


def test_skipping_special_tokens_drops_what_the_meta_tokenizer_drops(tok, meta):
    """``skip_special_tokens=True`` drops tiktoken's <|endofprompt|> and SGPE's [CLS]/[MASK] too, not
    only the registered eos and pad tokens, as MetaTokenizer.decode(skip_special_tokens=True) does."""
    prompt = meta.tiktoken.special_tokens["<|endofprompt|>"]
    ids = meta.encode("a<|endoftext|>b<|endofprompt|>c [MASK] d", allowed_special="all")
    ids += [tok.pad_token_id]
    assert prompt in ids and N + meta.sgpe.vocab["[MASK]"] in ids
    assert tok.decode(ids, skip_special_tokens=True) == meta.decode(ids, skip_special_tokens=True) == "abc  d"
    mask = tok.get_special_tokens_mask(ids, already_has_special_tokens=True)
    assert [i for i, m in zip(ids, mask) if m] == [i for i in ids if i in meta._special_id_values() or i == tok.pad_token_id]
    assert tok.decode(ids) == meta.decode(ids[:-1]) + tok.pad_token


@pytest.mark.parametrize("pair", [False, True])
def test_append_eos_without_transformers_special_tokens_pattern(meta, pair):
    """transformers 4 ignores the special_tokens_pattern that transformers 5 builds sequences from,
    so append_eos would append nothing there: the sequences are built by the class itself."""
    tok = WWHOTokenizer(meta_tokenizer=meta, append_eos=True)
    tok.special_tokens_pattern = None  # as transformers 4 leaves it
    a, b = meta.encode("ශ්‍රී"), meta.encode("hello")
    enc = tok("ශ්‍රී", "hello") if pair else tok("ශ්‍රී")
    assert enc["input_ids"] == (a + [EOS] + b + [EOS] if pair else a + [EOS])
    mask = tok.get_special_tokens_mask(a, b if pair else None)
    assert mask == ([0] * len(a) + [1] + [0] * len(b) + [1] if pair else [0] * len(a) + [1])
    assert tok.num_special_tokens_to_add(pair=pair) == (2 if pair else 1)
    plain = WWHOTokenizer(meta_tokenizer=meta)
    plain.special_tokens_pattern = None
    assert plain("ශ්‍රී")["input_ids"] == a and plain.num_special_tokens_to_add() == 0
    with pytest.raises(TokenizerError, match="append_eos=True needs an eos_token"):
        WWHOTokenizer(meta_tokenizer=meta, append_eos=True, eos_token=None)("x")


@pytest.mark.parametrize(("edit", "words"), [
    ({"added_tokens_decoder": {"5": {"content": "hello", "special": False}}}, "has id 5, which is another token"),
    ({"added_tokens_decoder": {"300000": {"content": "<far>", "special": False}}}, "has id 300000, past the next"),
    ({"append_eos": "false"}, "append_eos must be True or False, not 'false'"),
])
def test_a_config_that_would_change_ids_is_refused(tok, tmp_path, edit, words):
    """A ``tokenizer_config.json`` naming an added token at another token's id made one id two tokens
    (``decode(encode("&"))`` gave "hello"); one past the vocabulary gave ids ``decode`` refuses and an
    embedding of ``len(tokenizer)`` rows cannot hold; ``"append_eos": "false"`` turned appending on."""
    tok.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    for key, value in edit.items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(TokenizerError, match=words):
        WWHOTokenizer.from_pretrained(tmp_path)


def test_a_save_pretrained_that_fails_leaves_the_folder_as_it_was(meta, tmp_path):
    """transformers wrote ``tokenizer_config.json`` before it asked for the meta tokenizer's files: a
    save whose meta part then failed left the new config (``append_eos``, ``model_max_length``) over
    the old vocabulary, and the folder loaded with appending on. The meta part is saved first now."""
    from wwho.errors import WriteError

    WWHOTokenizer(meta_tokenizer=meta).save_pretrained(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    (tmp_path / "tokenization_wwho.py").unlink()
    (tmp_path / "tokenization_wwho.py").mkdir()  # (a name the save needs for a file)
    with pytest.raises(WriteError, match="tokenization_wwho.py: is a directory"):
        WWHOTokenizer(meta_tokenizer=meta, append_eos=True, model_max_length=7).save_pretrained(tmp_path)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after == {name: data for name, data in before.items() if name != "tokenization_wwho.py"}
