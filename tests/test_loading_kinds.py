"""A loader given another kind of tokenizer says what the file is and which function loads it,
instead of the symptom (a missing key, a missing file); ``ByteBPE.export_hf`` of a path that is
not a ``.json`` writes a directory ``AutoTokenizer`` reads, BOS included where the model adds it."""

from __future__ import annotations

import json
import random

import pytest
from conftest import DATA, require_data, run_wwho

from wwho.bytelevel import ByteBPE
from wwho.errors import VocabError
from wwho.sgpe import SGPETokenizer

GGUF = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"


@pytest.fixture(scope="module")
def binary_json(tmp_path_factory):
    root = tmp_path_factory.mktemp("bin")
    rng = random.Random(0)
    words = [rng.randbytes(rng.randrange(2, 6)) for _ in range(20)]
    (root / "data.bin").write_bytes(b"".join(rng.choice(words) for _ in range(2000)))
    out = root / "out"
    proc = run_wwho("train", "--kind", "binary", root / "data.bin", "-o", out, "--vocab-size", "512",
                    "--min-frequency", "2", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    (path,) = out.glob("*.json") if out.is_dir() else [out]
    renamed = root / "bin.json"
    renamed.write_bytes(path.read_bytes())
    return renamed


def test_sgpe_load_of_a_binary_tokenizer_names_it(binary_json):
    with pytest.raises(VocabError) as err:
        SGPETokenizer.load(binary_json)
    message = str(err.value)
    assert "binary (bytes) tokenizer" in message and "not an SGPE vocabulary" in message
    assert "wwho.load_tokenizer" in message and "missing key" not in message


def test_sgpe_load_of_an_extend_directory_names_it(tmp_path):
    """A `wwho extend` directory: tokenizer.json and friends, with the extension's record."""
    require_data(GGUF)
    out = ByteBPE.from_gguf(GGUF).export_hf(tmp_path / "llama3-si")
    (out / "wwho_extend.json").write_text(json.dumps({"format": "wwho-extend/1"}), encoding="utf-8")
    with pytest.raises(VocabError) as err:
        SGPETokenizer.load(out)
    message = str(err.value)
    assert "`wwho extend` directory" in message and "wwho.load_tokenizer" in message
    assert "no such" not in message
    with pytest.raises(VocabError, match="`wwho extend` directory.*ByteBPE.load"):
        ByteBPE.load(out)


def test_sgpe_load_of_a_missing_file_still_says_so(tmp_path):
    with pytest.raises(VocabError, match="No such file|no such file"):
        SGPETokenizer.load(tmp_path / "absent.json")


def test_export_hf_without_json_suffix_writes_a_directory(tmp_path):
    require_data(GGUF)
    tokenizers = pytest.importorskip("tokenizers")
    tok = ByteBPE.from_gguf(GGUF)
    assert tok.add_bos
    out = tok.export_hf(tmp_path / "llama3-base")
    assert out.is_dir()
    names = {p.name for p in out.iterdir()}
    assert {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"} <= names
    config = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["add_bos_token"] is True and config["bos_token"] == "<|begin_of_text|>"
    hf = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    text = "hello world, again"
    assert hf.encode(text).ids == [tok.bos_id, *tok.encode(text)]  # BOS added, as the GGUF says
    assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text)
    # the one file and save(hf=True) add BOS too (without a post-processor the same call would give
    # [9906] there and [128000, 9906] from the directory)
    single = tok.export_hf(tmp_path / "t.json")
    assert tokenizers.Tokenizer.from_file(str(single)).encode(text).ids == [tok.bos_id, *tok.encode(text)]
    saved = tok.save(tmp_path / "saved", hf=True)
    assert tokenizers.Tokenizer.from_file(str(saved / "tokenizer.json")).encode(text).ids == [tok.bos_id,
                                                                                              *tok.encode(text)]
    saved_config = json.loads((saved / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert saved_config["bos_token"] == "<|begin_of_text|>"
    # and wwho loads the directory back
    back = run_wwho("encode", "--tokenizer", out, text)
    assert back.returncode == 0 and list(map(int, back.stdout.split())) == tok.encode(text)


def test_export_hf_directory_loads_in_transformers(tmp_path):
    require_data(GGUF)
    transformers = pytest.importorskip("transformers")
    tok = ByteBPE.from_gguf(GGUF)
    out = tok.export_hf(tmp_path / "llama3-base")
    auto = transformers.AutoTokenizer.from_pretrained(str(out))
    assert auto("hello")["input_ids"] == [tok.bos_id, *tok.encode("hello")]


def test_a_hugging_face_folder_loads_from_its_tokenizer_json(tmp_path):
    """A folder as gpt2, roberta and Qwen2 ship it (tokenizer.json beside a vocab.json of token -> id
    and merges.txt) loads by its tokenizer.json, not read as an SGPE vocabulary and refused
    ("vocab.json: missing key 'vocab'")."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from wwho.loading import detect_kind, load_tokenizer

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(["hello world, hello there", "vocab"] * 50,
                           trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    folder = tmp_path / "hub"
    folder.mkdir()
    hf.save(str(folder / "tokenizer.json"))
    hf.model.save(str(folder))  # vocab.json and merges.txt
    # a token "vocab" (Qwen2's and Llama 3's vocabularies have one) does not make it an SGPE file
    assert "vocab" in json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    assert detect_kind(folder) == detect_kind(folder / "tokenizer.json")
    text = "hello world, hello there!"
    assert load_tokenizer(folder).encode(text) == hf.encode(text).ids
    proc = run_wwho("encode", "--tokenizer", str(folder), "--ids", text)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(i) for i in hf.encode(text).ids]
    with pytest.raises(VocabError, match="Hugging Face"):
        SGPETokenizer.load(folder)  # names what the folder is


@pytest.mark.parametrize("broken", [{}, "no vocab key"])
def test_an_sgpe_directory_whose_vocab_json_is_broken_is_not_read_as_its_tokenizer_json(tmp_path, broken):
    """Without a manifest, a vocab.json emptied or without its "vocab" key made the directory look
    like a Hugging Face folder: the tokenizer.json beside it loaded in silence."""
    from wwho.loading import load_tokenizer

    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව ශ්‍රී ලංකා\n" * 50, encoding="utf-8")
    tok = SGPETokenizer.train(corpus, vocab_size=280, progress=False, superword_share=0)
    tok.save(tmp_path / "s")
    (tmp_path / "s" / "wwho-manifest.json").unlink(missing_ok=True)
    assert (tmp_path / "s" / "tokenizer.json").is_file()
    data = json.loads((tmp_path / "s" / "vocab.json").read_text(encoding="utf-8"))
    data = {} if broken == {} else {k: v for k, v in data.items() if k != "vocab"}
    (tmp_path / "s" / "vocab.json").write_text(json.dumps(data), encoding="utf-8")
    for load in (load_tokenizer, SGPETokenizer.load):
        with pytest.raises(VocabError, match=r"vocab.json: missing key 'vocab'"):
            load(tmp_path / "s")
    proc = run_wwho("inspect", str(tmp_path / "s"))
    assert proc.returncode == 2 and "missing key 'vocab'" in proc.stderr


def test_another_tools_tokenizer_json_takes_the_decode_options_of_every_kind(tmp_path):
    """``decode_batch(..., num_threads=2)`` is taken, and a flag that is no bool is WrongTypeError, as
    every other kind raises, not HF's TokenizerError."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from wwho.errors import WrongTypeError
    from wwho.loading import load_tokenizer

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(["hello world"] * 20, trainers.BpeTrainer(vocab_size=280))
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = load_tokenizer(tmp_path / "tokenizer.json")
    ids = tok.encode("hello world")
    assert tok.decode_batch([ids, ids], num_threads=2, skip_special_tokens=True) == ["hello world"] * 2
    with pytest.raises(WrongTypeError, match="skip_special_tokens must be True or False"):
        tok.decode(ids, skip_special_tokens="yes")
