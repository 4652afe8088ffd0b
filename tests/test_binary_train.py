"""Training: id layout, special tokens, padding, template, counts, determinism, real binaries, errors.

Oracles: hand-computed merges on a tiny corpus; stock HF training on the expanded
windows (our counted feed must give the same tokenizer); stock HF loading and
encoding of the saved file; and real system binaries for compression.
"""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, trainers

from wwho import binary
from wwho.binary import IngestOptions, OptionError, train, train_from_counts
from wwho.binary.train import STANDARD_SPECIALS
from wwho.errors import CorpusError, VocabError

TINY = {"specials": dict(standard_specials=False, mask=False, unk=False, reserve=0),
        "plain": dict(pad_to_power_of_two=False)}


def merges_of(tok: Tokenizer) -> list[tuple[bytes, bytes]]:
    merges = json.loads(tok.to_str())["model"]["merges"]
    return [(a.encode("latin-1"), b.encode("latin-1")) for a, b in merges]


def test_merges_follow_the_counts_hand_computed():
    # pairs: ab: 5*2 + 3 = 13, ba: 5, then (ab, ab) in "abab" x5 = 5 >= min_frequency 4, x: never paired
    tok = train_from_counts({b"abab": 5, b"ab": 3, b"x": 9}, vocab_size=258, min_frequency=4,
                            pad_to_power_of_two=False, **TINY["specials"])
    assert merges_of(tok) == [(b"a", b"b"), (b"ab", b"ab")]
    assert tok.get_vocab_size() == 258 and tok.token_to_id("abab") == 257
    # min_frequency stops merging: (ab, ab) occurs 5 times < 6
    tok = train_from_counts({b"abab": 5, b"ab": 3}, vocab_size=300, min_frequency=6,
                            pad_to_power_of_two=False, **TINY["specials"])
    assert merges_of(tok) == [(b"a", b"b")]


def test_counted_feed_equals_stock_hf_on_the_expanded_windows():
    counts = {bytes([i % 7, i % 5, 0, 0, i % 3]) * (1 + i % 4): 1 + (i * 37) % 2000 for i in range(60)}
    ours = train_from_counts(counts, vocab_size=400, min_frequency=3, pad_to_power_of_two=False,
                             **TINY["specials"])
    ref = Tokenizer(models.BPE())
    expanded = [w.decode("latin-1") for w, n in counts.items() for _ in range(n)]
    ref.train_from_iterator(expanded, trainers.BpeTrainer(
        vocab_size=400, min_frequency=3, initial_alphabet=[chr(b) for b in range(256)], show_progress=False))
    assert json.loads(ours.to_str())["model"] == json.loads(ref.to_str())["model"]


def test_default_layout_bytes_then_merges_then_specials_then_padding():
    data = {bytes([i % 11, i % 13]) * 8: 3 for i in range(400)}
    tok = train_from_counts(data, vocab_size=600, min_frequency=2)
    vocab = tok.get_vocab(with_added_tokens=True)
    model = tok.get_vocab_size(with_added_tokens=False)
    assert all(vocab[chr(b)] == b for b in range(256))
    assert model == 600 - 135  # vocab_size counts the 135 default special tokens
    names = [*STANDARD_SPECIALS, "<|mask|>", "<|unk|>"] + [f"<|reserved:{i}|>" for i in range(128)]
    assert [vocab[n] for n in names] == list(range(model, model + 135))
    assert tok.get_vocab_size() == 1024  # 600 padded to the next power of two
    pads = [f"<|reserved:{i}|>" for i in range(128, 128 + 1024 - 600)]
    assert [vocab[n] for n in pads] == list(range(600, 1024))
    added = tok.get_added_tokens_decoder()
    assert all(added[i].special for i in range(model, 1024))
    assert sorted(vocab.values()) == list(range(1024))


def test_options_change_the_special_tokens():
    counts = {b"abcabcabd" * 3: 4}
    tok = train_from_counts(counts, vocab_size=270, min_frequency=1, mask=False, unk=False, reserve=2,
                            pad_to_power_of_two=False)
    names = [t.content for _, t in sorted(tok.get_added_tokens_decoder().items())]
    assert names == [*STANDARD_SPECIALS, "<|reserved:0|>", "<|reserved:1|>"]
    bare = train_from_counts(counts, vocab_size=300, min_frequency=1, pad_to_power_of_two=False,
                             **TINY["specials"])
    assert bare.get_added_tokens_decoder() == {}
    assert bare.get_vocab_size() < 300  # stopped early: nothing left to merge, and no padding
    padded = train_from_counts(counts, vocab_size=300, min_frequency=1, **TINY["specials"])
    assert padded.get_vocab_size() == 512


def test_template_frames_single_and_pair_inputs_with_stock_hf():
    tok = train_from_counts({b"\x7fELF\x02\x01\x01" * 4: 10}, vocab_size=512, min_frequency=2, template=True)
    stock = Tokenizer.from_str(tok.to_str())
    start, end, sep = (stock.token_to_id(n) for n in ("<|start|>", "<|end|>", "<|sep|>"))
    a, b = "\x7fELF", "\x00\xff"
    ids_a = stock.encode(a, add_special_tokens=False).ids
    ids_b = stock.encode(b, add_special_tokens=False).ids
    assert stock.encode(a).ids == [start, *ids_a, end]
    assert stock.encode(a, b).ids == [start, *ids_a, sep, *ids_b, end]


@pytest.mark.parametrize("limit, longest", [(2, 2), (3, 3), (4, 4), (7, 4), (8, 8), (None, 300)])
def test_max_token_length_is_the_longest_token_in_bytes(limit, longest):
    # zero runs: 00, 000, 0000, then 0000+0000 = 8 (7 is never formed), ... as far as the limit allows
    tok = train_from_counts({b"\x00" * 300: 50, b"\x00\x00\x00": 50}, vocab_size=300, min_frequency=1,
                            max_token_length=limit, pad_to_power_of_two=False, **TINY["specials"])
    assert max(len(t) for t in tok.get_vocab()) == longest


def test_training_is_deterministic_and_thread_count_does_not_matter(tmp_path):
    for i in range(6):
        (tmp_path / f"f{i}").write_bytes(bytes((j * (i + 3)) % 251 for j in range(20_000)))
    kw = dict(vocab_size=1024, min_frequency=2, ingest=IngestOptions(mode="random", seed=5, max_exp=10))
    first = train([tmp_path], **kw).to_str()
    assert train([tmp_path], **kw).to_str() == first
    env = {k: os.environ.get(k) for k in ("TOKENIZERS_PARALLELISM", "RAYON_NUM_THREADS")}
    assert train([tmp_path], threads=1, **kw).to_str() == first
    assert {k: os.environ.get(k) for k in env} == env  # the thread limit is undone afterwards


def test_special_token_learned_from_the_data_is_refused():
    with pytest.raises(VocabError, match=r"special token '<\|end\|>' was learned"):
        train_from_counts({b"<|end|>": 5000}, vocab_size=1024, min_frequency=2)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"vocab_size": 390}, VocabError, r"vocab_size 390 is smaller than the 256-byte alphabet plus 135 .*391.*reserve=\)"),
    ({"vocab_size": 260, "reserve": 0, "mask": False}, VocabError, r"plus 6 special tokens \(262\)"),
    ({"template": True, "standard_specials": False}, OptionError, "template needs the standard"),
    ({"reserve": -1}, OptionError, "reserve must be an integer from 0 to 16,777,216"),
    ({"min_frequency": -1}, OptionError, "min_frequency must be an integer from 0 to "),
    ({"threads": 0}, OptionError, "threads must be an integer from 1 to 1,024"),
    # (the byte alphabet is the least: "from 1" named a bound that the next check then refused)
    ({"vocab_size": "1024"}, OptionError, "vocab_size must be an integer from 256 to 16,777,216, got '1024'"),
])
def test_bad_training_options_fail_before_reading_any_input(tmp_path, kwargs, error, message):
    with pytest.raises(error, match=message):
        train([tmp_path / "does-not-exist"], **kwargs)  # the option error wins over the missing path


def test_missing_input_and_empty_corpus(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        train([tmp_path / "missing"], vocab_size=1024)
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(CorpusError, match="no data to train on"):
        train([tmp_path], vocab_size=1024)


# --- real binaries -----------------------------------------------------------------------------------

def _pick(patterns: list[str], magic: bytes, *, budget: int, n_test: int) -> tuple[list[Path], list[Path]]:
    """Sorted candidates of 20..400 KB with the magic; even ones train (up to budget), odd ones test."""
    found = []
    for pattern in patterns:
        for name in sorted(glob.glob(pattern)):
            path = Path(name)
            if path.is_symlink() or not path.is_file() or not 20_000 <= path.stat().st_size <= 400_000:
                continue
            try:
                with open(path, "rb") as f:
                    if f.read(len(magic)) == magic:
                        found.append(path)
            except OSError:
                continue
    train_files, total = [], 0
    for path in found[0::2]:
        if total >= budget:
            break
        train_files.append(path)
        total += path.stat().st_size
    held_out = found[1::2][:n_test]
    if total < budget // 2 or not held_out:
        pytest.skip(f"not enough files matching {patterns} with magic {magic.hex()} on this machine")
    return train_files, held_out


@pytest.mark.parametrize("kind, patterns, magic, min_ratio", [
    ("ELF", ["/usr/bin/*", "/usr/lib/*", "/usr/lib/x86_64-linux-gnu/*", "/usr/lib/aarch64-linux-gnu/*"],
     b"\x7fELF", 1.6),
    ("gzip", ["/usr/share/doc/*/*.gz", "/usr/share/man/man1/*.gz"], b"\x1f\x8b", 1.0),
])
def test_real_binaries_compress_held_out_files_and_round_trip(tmp_path, kind, patterns, magic, min_ratio):
    train_files, held_out = _pick(patterns, magic, budget=800_000 if kind == "ELF" else 500_000, n_test=4)
    tok = train(train_files, vocab_size=1024, min_frequency=2)
    path = tmp_path / "tokenizer.json"
    binary.save(tok, path)
    stock = Tokenizer.from_file(str(path))
    stock.encode_special_tokens = True
    n_bytes = n_tokens = 0
    for f in held_out:
        data = f.read_bytes()
        enc = binary.encode_bytes(tok, data)
        assert binary.decode_to_bytes(tok, enc.ids) == data, f
        if len(data) <= 100_000:  # stock HF gives the same ids (checked on the smaller files for time)
            assert stock.encode(data.decode("latin-1"), add_special_tokens=False).ids == enc.ids, f
        n_bytes += len(data)
        n_tokens += len(enc.ids)
    ratio = n_bytes / n_tokens
    print(f"\n{kind}: trained on {len(train_files)} files, {n_bytes:,} held-out bytes -> {n_tokens:,} tokens "
          f"= {ratio:.3f} bytes/token")
    assert ratio > min_ratio


@pytest.mark.parametrize("user, threads, during", [
    (None, 4, None), ("f", 4, "true"), ("", 2, "true"), ("n", 2, "true"), ("true", 4, "true"), ("x", 1, "false"),
])
def test_thread_limit_reads_tokenizers_parallelism_as_hf_does(monkeypatch, user, threads, during):
    """HF reads "", f, n (and false, off, no, 0) as no: an asked thread count overrides them all (before:
    "f", "n" and "" left training on one thread without a word). Unset stays unset (HF then turns
    parallelism off in a forked child itself); everything is restored after."""
    from wwho.binary.train import thread_limit

    if user is None:
        monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    else:
        monkeypatch.setenv("TOKENIZERS_PARALLELISM", user)
    with thread_limit(threads):
        assert os.environ.get("TOKENIZERS_PARALLELISM") == during
        assert os.environ["RAYON_NUM_THREADS"] == str(threads)
        with thread_limit(1):  # nested: restored to the outer block's values
            assert os.environ["TOKENIZERS_PARALLELISM"] == "false"
        assert os.environ.get("TOKENIZERS_PARALLELISM") == during
    assert os.environ.get("TOKENIZERS_PARALLELISM") == user
