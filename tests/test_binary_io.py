"""Binary tokenizer files that were edited, cut or corrupted, and tokenizers with HF settings that
change the bytes: each is a one-line ``VocabError`` at load, or encodes exactly as stock HF does and
decodes back to the bytes encoded.

Oracles we did not write: stock HF ``tokenizers`` (``Tokenizer.from_str`` + ``encode``) for ids,
and the bytes themselves for the round trip.
"""

from __future__ import annotations

import json
import random
import re

import pytest
from cli_run import one_line_error, wwho
from conftest import binary_corpus, train_binary_sample
from tokenizers import AddedToken, Tokenizer

from wwho import binary
from wwho.binary import bytes_to_text, encode_bytes
from wwho.binary import io as binary_io
from wwho.errors import VocabError, WwhoError


@pytest.fixture(scope="module")
def saved() -> dict:
    """A trained binary tokenizer (with its template) as parsed tokenizer.json."""
    return json.loads(train_binary_sample(100_000).to_str())


def _write(tmp_path, data: dict, name: str = "tokenizer.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _hf_ids(path, data: bytes, *, specials: bool = False) -> list[int]:
    hf = Tokenizer.from_file(str(path))
    hf.encode_special_tokens = True
    return hf.encode(bytes_to_text(data), add_special_tokens=specials).ids


def _edit(saved: dict, change) -> dict:
    data = json.loads(json.dumps(saved))
    change(data)
    return data


def _data_twice(d: dict) -> None:
    """The template ``<|start|> $A $A <|end|>``: the data twice."""
    single = d["post_processor"]["single"]
    data = next(item for item in single if "Sequence" in item)
    single.insert(single.index(data), data)


# --- settings that lose, add or scramble bytes ----------------------------------------------------


@pytest.mark.parametrize(
    "key, change",
    [
        (
            "truncation",
            lambda d: d.update(
                truncation={"direction": "Right", "max_length": 5, "strategy": "LongestFirst", "stride": 0}
            ),
        ),
        (
            "padding",
            lambda d: d.update(
                padding={
                    "strategy": {"Fixed": 4096},
                    "direction": "Right",
                    "pad_to_multiple_of": None,
                    "pad_id": 0,
                    "pad_type_id": 0,
                    "pad_token": "<|pad|>",
                }
            ),
        ),
        ("model.end_of_word_suffix", lambda d: d["model"].update(end_of_word_suffix="x")),
        ("model.continuing_subword_prefix", lambda d: d["model"].update(continuing_subword_prefix="##")),
        ("model.dropout", lambda d: d["model"].update(dropout=0.5)),
        ("post_processor", lambda d: d["post_processor"].update(single=[], pair=[])),
        ("post_processor", _data_twice),
    ],
)
def test_a_setting_that_changes_the_bytes_is_refused_at_load(saved, tmp_path, key, change):
    """Each of these made decode(encode(b)) != b without a word (a cut after 5 tokens, pad tokens,
    a lost last byte, random ids, no ids at all, every byte twice); a continuing_subword_prefix made
    HF panic, a traceback past every ``except Exception``."""
    path = _write(tmp_path, _edit(saved, change))
    with pytest.raises(VocabError, match=rf"tokenizer\.json: {key.replace('.', '[.]')}"):
        binary.load(path)
    data = tmp_path / "data.bin"
    data.write_bytes(binary_corpus(2, 3000))
    assert key in one_line_error(wwho("encode", "--tokenizer", path, "--binary", data))


def _special_spelt_as_a_byte(d: dict) -> None:
    entry = next(e for e in d["added_tokens"] if e["special"])
    entry["content"] = "a"


def _template_special_at_a_byte_id(d: dict) -> None:
    name = next(iter(d["post_processor"]["special_tokens"]))
    d["post_processor"]["special_tokens"][name]["ids"] = [97]


@pytest.mark.parametrize("change, words", [
    (_special_spelt_as_a_byte, "added_tokens[0] 'a' is a special token spelt as the model token of id 97"),
    (_template_special_at_a_byte_id, "as ids [97], not as the special tokens of those names"),
])
def test_special_tokens_that_would_drop_or_add_data_are_refused_at_load(saved, tmp_path, change, words):
    """Both loaded, and a round trip then lost every byte 'a' (decode drops special tokens, and the
    byte's token was spelt as one), or gained one (the template added byte 0x61's id as its
    special token); stock HF does the same with such a file."""
    path = _write(tmp_path, _edit(saved, change))
    data = tmp_path / "data.bin"
    data.write_bytes(b"xa" + binary_corpus(2, 300))
    hf = Tokenizer.from_file(str(path))  # (what the file does where it is not refused)
    ids = hf.encode(bytes_to_text(data.read_bytes()), add_special_tokens=True).ids
    assert hf.decode(ids).encode("latin-1") != data.read_bytes()
    with pytest.raises(VocabError, match=re.escape(words)):
        binary.load(path)
    assert words in one_line_error(wwho("encode", "--tokenizer", path, "--binary", data))


@pytest.mark.parametrize("merges", [5, True, "a b"])
def test_merges_that_are_no_list_are_a_vocab_error(saved, tmp_path, merges):
    """model.merges of 5 or true is no bare TypeError traceback."""
    path = _write(tmp_path, _edit(saved, lambda d: d["model"].update(merges=merges)))
    with pytest.raises(VocabError, match=r"tokenizer\.json: model\.merges must be a list of merges"):
        binary.load(path)
    assert "model.merges must be a list" in one_line_error(wwho("inspect", path))


def test_a_panic_in_hf_loading_is_a_vocab_error(saved, tmp_path, monkeypatch):
    """A panic of HF's Rust loader reaches Python as ``PanicException``, a ``BaseException``."""

    class PanicException(BaseException):  # noqa: N818 -- pyo3's name, which load recognises
        pass

    def panic(text):
        raise PanicException("slice index starts at 1 but ends at 0")

    monkeypatch.setattr(Tokenizer, "from_str", panic)
    with pytest.raises(VocabError, match="tokenizer.json: HF tokenizers cannot load it: 'slice index"):
        binary.load(_write(tmp_path, saved))


def test_ids_with_a_gap_are_refused_at_load(saved, tmp_path):
    """HF counts tokens instead of taking the largest id: past a gap, encode gave ids that decode
    refused as out of range."""

    def move(d):
        token = next(t for t, i in d["model"]["vocab"].items() if i == 300)
        d["model"]["vocab"][token] = 5000

    with pytest.raises(VocabError, match=r"tokenizer\.json: no token has id 300, but id 5000 exists"):
        binary.load(_write(tmp_path, _edit(saved, move)))


def test_the_saved_tokenizer_still_loads(saved, tmp_path):
    tok = binary.load(_write(tmp_path, saved))
    data = binary_corpus(3, 5000) + b"<|end|>"
    assert binary.decode_to_bytes(tok, encode_bytes(tok, data, add_special_tokens=True).ids) == data


# --- data encoded in pieces -----------------------------------------------------------------------


def test_pieces_never_cut_inside_a_non_special_added_token(saved, tmp_path):
    """Added tokens that are not special are matched in the data; a cut inside one split it."""
    d = _edit(
        saved,
        lambda d: d["added_tokens"].append(
            {
                "id": len(d["model"]["vocab"]) + len(d["added_tokens"]),
                "content": "QRS",
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": False,
            }
        ),
    )
    path = _write(tmp_path, d)
    tok = binary.load(path)
    rng = random.Random(0)
    data = b"".join(rng.randbytes(rng.randrange(1, 60)) + b"QRS" for _ in range(300))
    assert encode_bytes(tok, data, chunk_bytes=7).ids == _hf_ids(path, data)
    assert binary.decode_to_bytes(tok, encode_bytes(tok, data, chunk_bytes=7).ids) == data


@pytest.mark.parametrize("setting", ["truncation", "padding"])
def test_pieces_of_a_truncating_or_padding_tokenizer_give_hfs_ids(saved, setting):
    """Each piece was cut (or padded) on its own: ids that stock HF never gives."""
    tok = Tokenizer.from_str(json.dumps(saved))
    if setting == "truncation":
        tok.enable_truncation(100)
    else:
        tok.enable_padding(length=5000, pad_id=tok.token_to_id("<|pad|>"), pad_token="<|pad|>")
    data = binary_corpus(4, 3000)
    tok.encode_special_tokens = True
    whole = tok.encode(bytes_to_text(data), add_special_tokens=False).ids
    assert encode_bytes(tok, data, chunk_bytes=50).ids == whole


def test_pieces_with_a_non_special_added_token_that_strips_spaces_give_hfs_ids(saved):
    tok = Tokenizer.from_str(json.dumps(saved))
    tok.add_tokens([AddedToken("QRS", lstrip=True, rstrip=True, special=False)])
    tok.encode_special_tokens = True
    data = b"    ".join(b"ab QRS  cd" for _ in range(200))
    assert (
        encode_bytes(tok, data, chunk_bytes=3).ids
        == tok.encode(bytes_to_text(data), add_special_tokens=False).ids
    )


# --- random edits ---------------------------------------------------------------------------------


def _mutate(d: dict, rng: random.Random) -> None:
    """One random edit of the kind a hand, a tool or a bad copy makes."""
    model, added = d["model"], d["added_tokens"]
    vocab = model["vocab"]
    k = rng.randrange(10)
    if k == 0:
        model["merges"] = model["merges"][: rng.randrange(len(model["merges"]))]
    elif k == 1:
        vocab[rng.choice(list(vocab))] = rng.choice([-1, 2**40, "7", None, 1.5, True, 5, len(vocab) + 3])
    elif k == 2:
        del vocab[rng.choice(list(vocab))]
    elif k == 3:
        model["merges"][rng.randrange(len(model["merges"]))] = rng.choice(
            [[], ["a"], ["a", "b", "c"], "ab", 5, None, ["\u0100", "a"], ["\x01", "\x02"]]
        )
    elif k == 4:
        added[rng.randrange(len(added))] = rng.choice(
            [{}, {"id": 5}, {"id": 300, "content": "<|foo|>"}, None]
        )
    elif k == 5:
        d["post_processor"] = rng.choice([None, {}, {"type": "TemplateProcessing"}, {"type": "ByteLevel"}, 5])
    elif k == 6:
        d["decoder"] = rng.choice([None, {"type": "Fuse"}, {"type": "ByteLevel"}, 3])
    elif k == 7:
        model[
            rng.choice(
                [
                    "dropout",
                    "unk_token",
                    "continuing_subword_prefix",
                    "end_of_word_suffix",
                    "fuse_unk",
                    "byte_fallback",
                    "ignore_merges",
                ]
            )
        ] = rng.choice([None, 0.5, "<|unk|>", "##", True, 1, "x"])
    elif k == 8:
        d[rng.choice(["truncation", "padding"])] = rng.choice([None, 5, {"max_length": 5}])
    else:
        vocab[rng.choice(["ab", "", "AAA", "<|end|>"])] = rng.choice([len(vocab), 5])


def test_randomly_edited_files_load_as_hf_does_or_fail_in_one_line(saved, tmp_path):
    """150 files with one to three random edits (seeded): each load is a ``WwhoError`` of one line
    naming the file, or a tokenizer whose ids are stock HF's and whose decode gives the bytes back."""
    rng = random.Random(11)
    data = rng.randbytes(2000) + b"<|end|><|start|>" + bytes(300)
    loaded = 0
    for n in range(150):
        d = json.loads(json.dumps(saved))
        for _ in range(rng.randrange(1, 4)):
            _mutate(d, rng)
        path = _write(tmp_path, d, f"m{n}.json")
        try:
            tok = binary.load(path)
        except WwhoError as exc:
            assert f"m{n}.json" in str(exc) and "\n" not in str(exc), str(exc)
            continue
        loaded += 1
        ids = encode_bytes(tok, data).ids
        assert ids == _hf_ids(path, data), n
        assert binary.decode_to_bytes(tok, ids) == data, n
        framed = encode_bytes(tok, data, add_special_tokens=True)
        assert framed.ids == _hf_ids(path, data, specials=True), n
        assert binary.decode_to_bytes(tok, framed.ids) == data, n
    assert loaded > 5  # harmless edits (a merge list, an unused flag) still load


def test_the_load_checks_are_the_modules_own(saved):
    """``check_bytes_kept`` and ``check_dense_ids`` take the parsed file and the name to report."""
    with pytest.raises(VocabError, match="^src: truncation is 5;"):
        binary_io.check_bytes_kept(_edit(saved, lambda d: d.update(truncation=5)), "src")
    binary_io.check_dense_ids(saved, "src")


def test_tokenizers_used_and_dropped_give_their_memory_back(tmp_path):
    """HF's BPE cache, which here keys whole inputs (no pre-tokenizer), holds up to 10,000 windows
    per tokenizer, and tokenizers does not give it back when the tokenizer is dropped: loading, using
    and dropping binary tokenizers would grow a process without bound. The wrapper turns that cache
    off."""
    from memory import measure

    train_binary_sample(40_000).save(str(tmp_path / "tokenizer.json"))
    setup = (f"import random, wwho\nfrom wwho.binary.tokenizer import BinaryTokenizer\n"
             f"path = {str(tmp_path / 'tokenizer.json')!r}\nrng = random.Random(1)\n"
             "def use():\n    tok = BinaryTokenizer.load(path)\n"
             "    for _ in range(100):\n        tok.encode(rng.randbytes(150))\n"
             "use()")
    _, growth = measure(setup, "for _ in range(150):\n    use()")
    assert growth < 40 * 2**20, f"{growth / 2**20:.0f} MB for 150 tokenizers used and dropped"
