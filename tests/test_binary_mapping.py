"""Latin-1 bridge, encode_bytes / decode_to_bytes round trips, and tokenizer.json save/load/detection.

Oracles we did not write: Python's own ``chr``/``bytes``, and stock HF ``tokenizers``
(``Tokenizer.from_str`` / ``from_file`` + ``encode``) for ids and offsets.
"""

from __future__ import annotations

import array
import json
import random

import numpy as np
import pytest
from conftest import binary_corpus, train_binary_sample
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from wwho import binary
from wwho.binary import bytes_to_text, decode_to_bytes, encode_bytes, text_to_bytes
from wwho.errors import TokenizerError, VocabError, WrongTypeError


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return train_binary_sample(200_000)


def test_all_256_bytes_map_to_their_code_points():
    data = bytes(range(256))
    text = bytes_to_text(data)
    assert text == "".join(chr(i) for i in range(256))
    assert text_to_bytes(text) == data
    assert bytes_to_text(bytearray(data)) == bytes_to_text(memoryview(data)) == text


@given(st.binary(max_size=4096))
def test_mapping_round_trip(data):
    text = bytes_to_text(data)
    assert len(text) == len(data)
    assert text_to_bytes(text) == data


def test_text_above_latin1_is_an_error_naming_the_offset():
    with pytest.raises(TokenizerError, match=r"U\+0101.*offset 2"):
        text_to_bytes("ab\u0101")
    with pytest.raises(TokenizerError, match="encodes bytes, not str"):
        bytes_to_text("text")  # type: ignore[arg-type]


@pytest.mark.parametrize("data,message", [("text", "encodes bytes, not str: pass text.encode"),
                                          (5, "expected bytes, got int"), (None, "expected bytes, got NoneType"),
                                          # numpy's str arrays have the buffer protocol: their UCS-4 bytes
                                          # were encoded, and decoded to b"a\x00\x00\x00b..."
                                          (np.array(["ab"]), r"encodes bytes, not text \(ndarray of characters"),
                                          (np.array(["2020-01-01"], dtype="datetime64[D]"), "expected bytes, got ndarray"),
                                          (array.array("u", "ab"), r"encodes bytes, not text \(array of characters")])
def test_encoding_anything_but_bytes_is_a_clear_error(tok, data, message):
    # bytes(5) would be five zero bytes and bytes("text") a TypeError from inside: neither.
    with pytest.raises(TokenizerError, match=message):
        encode_bytes(tok, data)
    with pytest.raises(TokenizerError, match=message):
        binary.BinaryTokenizer(tok).encode(data)
    # In a batch the error names the item, as the text kinds' do, not the message alone.
    wrapped = binary.BinaryTokenizer(tok)
    for encode in (wrapped.encode_batch, wrapped.encode_batch_to_numpy):
        with pytest.raises(TokenizerError, match=r"^texts\[2\]: .*" + message):
            encode([b"a", b"b", data])


@pytest.mark.parametrize("data", [np.int64(3), np.array(3, dtype=np.int64), np.int64(-1), np.uint64(10**12),
                                  np.arange(6, dtype=np.uint16).reshape(2, 3),
                                  np.arange(12, dtype=np.uint16).reshape(3, 4)[:, ::2],
                                  np.zeros((0, 3), np.uint8), np.zeros((3, 0))])
def test_a_buffer_is_encoded_as_its_bytes(tok, data):
    # As hashlib takes it: the object's bytes. bytes(np.int64(3)) would be three zero bytes (a
    # negative one a ValueError, a large one a MemoryError), and len() of a 2-D array counts rows.
    expected = memoryview(data).tobytes()
    wrapped = binary.BinaryTokenizer(tok)
    assert wrapped.decode(wrapped.encode(data)) == expected
    assert encode_bytes(tok, data).ids == encode_bytes(tok, expected).ids
    assert wrapped.encode_batch([b"a", data]) == [wrapped.encode(b"a"), wrapped.encode(expected)]
    assert bytes_to_text(data) == bytes_to_text(expected)


def test_each_byte_is_its_own_token_with_id_equal_to_the_byte(tok):
    for b in range(256):
        assert tok.token_to_id(chr(b)) == b
        enc = encode_bytes(tok, bytes([b]))
        assert enc.ids == [b] and enc.tokens == [bytes([b])] and enc.offsets == [(0, 1)]
    assert decode_to_bytes(tok, list(range(256))) == bytes(range(256))
    # a BinaryTokenizer, which encode_bytes takes, too (not an AttributeError)
    wrapped = binary.BinaryTokenizer(tok)
    assert decode_to_bytes(wrapped, encode_bytes(wrapped, b"\x00\xff ab").ids) == b"\x00\xff ab"
    with pytest.raises(TokenizerError, match="expected a tokenizers.Tokenizer or a wwho BinaryTokenizer"):
        decode_to_bytes(object(), [1])


@pytest.mark.parametrize("size", [1024, 64 * 1024, 1024 * 1024])
def test_random_buffers_round_trip_with_and_without_specials(tok, size):
    data = random.Random(size).randbytes(size)
    plain = encode_bytes(tok, data)
    assert decode_to_bytes(tok, plain.ids) == data
    assert not any(plain.special_tokens_mask)
    framed = encode_bytes(tok, data, add_special_tokens=True)
    start, end = tok.token_to_id("<|start|>"), tok.token_to_id("<|end|>")
    assert framed.ids == [start, *plain.ids, end]
    assert decode_to_bytes(tok, framed.ids) == data
    assert decode_to_bytes(tok, framed.ids, skip_special=False) == b"<|start|>" + data + b"<|end|>"


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=3000) | st.builds(lambda n, seed: binary_corpus(seed, n), st.integers(0, 3000),
                                             st.integers(0, 50)))
def test_round_trip_offsets_and_tokens_cover_the_input(tok, data):
    enc = encode_bytes(tok, data)
    assert decode_to_bytes(tok, enc.ids) == data
    assert b"".join(enc.tokens) == data
    pos = 0
    for token, (start, end) in zip(enc.tokens, enc.offsets):
        assert start == pos and data[start:end] == token
        pos = end
    assert pos == len(data)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2000))
def test_ids_equal_stock_hf_on_the_saved_json(tok, data):
    stock = Tokenizer.from_str(tok.to_str())  # no wwho code involved in encoding
    text = data.decode("latin-1")
    stock.encode_special_tokens = True
    expected = stock.encode(text, add_special_tokens=False)
    enc = encode_bytes(tok, data)
    assert enc.ids == expected.ids
    assert enc.offsets == expected.offsets
    assert stock.decode(expected.ids).encode("latin-1") == data


def test_special_token_text_inside_data_stays_data(tok):
    data = b"\x00<|end|>\xff<|start|><|reserved:3|>"
    enc = encode_bytes(tok, data)
    assert tok.token_to_id("<|end|>") not in enc.ids
    assert not any(enc.special_tokens_mask)
    assert decode_to_bytes(tok, enc.ids) == data  # would lose bytes if they had become special ids


def test_special_token_text_stays_data_with_a_stock_loaded_tokenizer(tok):
    stock = Tokenizer.from_str(tok.to_str())  # HF does not save encode_special_tokens: it is False here
    assert stock.encode_special_tokens is False
    data = b"ab<|end|>cd<|pad|>"
    enc = encode_bytes(stock, data)
    assert not any(enc.special_tokens_mask) and b"".join(enc.tokens) == data
    assert decode_to_bytes(stock, enc.ids) == data


def test_decode_rejects_bad_ids_naming_the_position(tok):
    size = tok.get_vocab_size(with_added_tokens=True)
    with pytest.raises(TokenizerError, match=rf"id {size} at position 2 is out of range"):
        decode_to_bytes(tok, [1, 2, size])
    with pytest.raises(TokenizerError, match="id -1 at position 0"):
        decode_to_bytes(tok, [-1])
    with pytest.raises(TokenizerError, match="position 1 is '7'"):
        decode_to_bytes(tok, [7, "7"])  # type: ignore[list-item]
    with pytest.raises(TokenizerError, match="position 0 is True"):
        decode_to_bytes(tok, [True])
    assert decode_to_bytes(tok, []) == b""
    assert decode_to_bytes(tok, np.array([104, 105], dtype=np.int64)) == b"hi"  # numpy ids are fine


def test_decode_without_a_decoder_still_concatenates(tok):
    bare = Tokenizer.from_str(tok.to_str())
    bare.decoder = None
    data = binary_corpus(7, 5000)
    ids = encode_bytes(tok, data, add_special_tokens=True).ids
    assert decode_to_bytes(bare, ids) == data
    assert decode_to_bytes(bare, ids, skip_special=False) == b"<|start|>" + data + b"<|end|>"


@pytest.mark.parametrize("pretty", [False, True])
def test_tokenizer_json_survives_save_and_load_unchanged(tok, tmp_path, pretty):
    path = tmp_path / "tokenizer.json"
    binary.save(tok, path, pretty=pretty)
    text = path.read_text(encoding="utf-8")
    assert text == tok.to_str(pretty=pretty)
    loaded = binary.load(path)
    assert loaded.to_str(pretty=pretty) == text
    stock = Tokenizer.from_file(str(path))  # stock HF loads it unchanged
    assert stock.to_str(pretty=pretty) == text
    assert stock.get_vocab() == tok.get_vocab()
    stock.save(str(tmp_path / "again.json"), pretty=pretty)
    assert json.loads((tmp_path / "again.json").read_text(encoding="utf-8")) == json.loads(text)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.json", "tokenizer.json"]  # no temp file


def test_saved_pipeline_has_nothing_that_changes_bytes(tok):
    data = json.loads(tok.to_str())
    assert data["normalizer"] is None and data["pre_tokenizer"] is None
    assert data["decoder"] == {"type": "Fuse"}
    assert data["model"]["type"] == "BPE" and data["model"]["byte_fallback"] is False
    assert all(chr(b) in data["model"]["vocab"] for b in range(256))


def test_detects_binary_tokenizers_by_content(tok, tmp_path):
    ours = tmp_path / "ours.json"
    binary.save(tok, ours)
    assert binary.is_binary_tokenizer(ours)

    text_tok = Tokenizer(models.BPE())
    text_tok.pre_tokenizer = pre_tokenizers.ByteLevel()
    text_tok.decoder = decoders.ByteLevel()
    text_tok.train_from_iterator(["hello world"] * 10, trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    gpt2_style = tmp_path / "bytelevel.json"
    text_tok.save(str(gpt2_style))
    assert not binary.is_binary_tokenizer(gpt2_style)

    (tmp_path / "junk.gguf").write_bytes(b"GGUF\x03\x00\x00\x00")
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    assert not binary.is_binary_tokenizer(tmp_path / "junk.gguf")
    assert not binary.is_binary_tokenizer(tmp_path / "broken.json")
    assert not binary.is_binary_tokenizer(tmp_path / "missing.json")


def test_load_errors_are_typed_and_name_the_file(tmp_path):
    with pytest.raises(VocabError, match="missing.json: no such tokenizer"):
        binary.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "model": ,\n}', encoding="utf-8")
    with pytest.raises(VocabError, match=r"bad.json: invalid JSON at line 2"):
        binary.load(bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"model": {"type": "WordPiece", "vocab": {}}}), encoding="utf-8")
    with pytest.raises(VocabError, match="not a binary tokenizer"):
        binary.load(other)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(2, 6000), chunk=st.integers(1, 700), specials=st.booleans())
def test_long_data_in_pieces_gives_hfs_ids_on_the_whole(tok, seed, size, chunk, specials):
    """Data longer than chunk_bytes is cut only between bytes that no token holds side by side;
    the ids, tokens and offsets are exactly what HF computes on the whole data."""
    data = binary_corpus(seed, size)
    whole = tok.encode(bytes_to_text(data), add_special_tokens=specials)
    pieces = encode_bytes(tok, data, add_special_tokens=specials, chunk_bytes=chunk)
    assert pieces.ids == whole.ids
    assert pieces.offsets == [tuple(o) for o in whole.offsets]
    assert pieces.special_tokens_mask == whole.special_tokens_mask
    assert pieces == encode_bytes(tok, data, add_special_tokens=specials, chunk_bytes=10**9)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(0, 9000), chunk=st.integers(1, 700), specials=st.booleans())
def test_the_parts_of_an_encoding_are_hfs_whole_encoding(tok, seed, size, chunk, specials):
    """``encode_bytes_parts`` (what ``wwho encode --binary`` writes a part at a time) and its ids
    form give, joined, HF's encoding of the whole data: the template's tokens, ids, tokens and
    offsets; and a part holds ``_PART_PIECES`` pieces (the template's tokens, a part each)."""
    from wwho.binary.mapping import _PART_PIECES, _pieces, encode_bytes_ids_parts, encode_bytes_parts

    data = binary_corpus(seed, size)
    whole = tok.encode(bytes_to_text(data), add_special_tokens=specials)
    parts = list(encode_bytes_parts(tok, data, add_special_tokens=specials, chunk_bytes=chunk))
    assert [i for p in parts for i in p.ids] == whole.ids
    assert [o for p in parts for o in p.offsets] == [tuple(o) for o in whole.offsets]
    assert [m for p in parts for m in p.special_tokens_mask] == whole.special_tokens_mask
    assert [t for p in parts for t in p.tokens] == encode_bytes(tok, data, add_special_tokens=specials).tokens
    assert [p.ids for p in parts] == list(encode_bytes_ids_parts(tok, data, add_special_tokens=specials,
                                                                 chunk_bytes=chunk))
    pieces = _pieces(tok, data, chunk) if len(data) > chunk else None
    framed = 2 if specials and pieces and tok.post_processor is not None else 0
    assert len(parts) == (1 if pieces is None else -(-len(pieces) // _PART_PIECES) + framed)


def _cuts_by_definition(tok, data: bytes, size: int) -> list[tuple[int, int]]:
    """Each cut: the first position at least ``size`` after the one before where no token of the
    vocabulary holds the two bytes around it side by side (the definition, in plain Python)."""
    inside = {(x, y) for token in tok.get_vocab(with_added_tokens=False)
              for x, y in zip(token.encode("latin-1"), token.encode("latin-1")[1:])}
    free = [p for p in range(1, len(data)) if (data[p - 1], data[p]) not in inside]
    cuts = [0]
    for p in free:
        if p >= cuts[-1] + size:
            cuts.append(p)
    return list(zip(cuts, cuts[1:] + [len(data)]))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(2, 5000), chunk=st.integers(1, 300), scan=st.integers(1, 900))
def test_the_cuts_are_searched_a_stretch_at_a_time_as_whole(tok, seed, size, chunk, scan):
    """The search for cuts between pieces looks at ``_SCAN_BYTES`` positions at a time, not at arrays
    of the whole data at once: the cuts are the definition's, whatever the stretch."""
    from unittest import mock

    from wwho.binary import mapping

    data = binary_corpus(seed, size)
    with mock.patch.object(mapping, "_SCAN_BYTES", scan):
        assert mapping._pieces(tok, data, chunk) == _cuts_by_definition(tok, data, chunk)


def test_the_search_for_cuts_holds_no_array_as_long_as_the_data(tok):
    """Python's traced memory while the cuts of 4 MB are found, 64 kB of positions at a time:
    under half the data (the arrays are a stretch's, about 14 bytes a position), where it was
    10 times it (arrays as long as the data)."""
    import tracemalloc
    from unittest import mock

    from wwho.binary import mapping

    data = binary_corpus(5, 4_000_000)
    with mock.patch.object(mapping, "_SCAN_BYTES", 1 << 16, create=True):
        tracemalloc.start()
        try:
            pieces = mapping._pieces(tok, data, mapping.CHUNK_BYTES)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert len(pieces) > 50 and peak < len(data) / 2, (len(pieces), peak / len(data))


@pytest.mark.parametrize("threads", [None, 1, 2])
def test_encode_bytes_batch_equals_one_at_a_time(tok, threads):
    items = [binary_corpus(seed, 3000) for seed in range(20)] + [b"", b"<|end|>"]
    batch = binary.encode_bytes_batch(tok, items, add_special_tokens=True, num_threads=threads)
    assert batch == [encode_bytes(tok, data, add_special_tokens=True) for data in items]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_batch_item_longer_than_a_piece_is_encoded_in_pieces(tok, threads, monkeypatch):
    """A batch cuts a long item into pieces, as one item alone is, rather than encoding it as one HF
    word, whose time and memory grow with the item. The ids are HF's on the whole item either way;
    the ids-only forms are the full forms' ids."""
    from wwho.binary import mapping

    monkeypatch.setattr(mapping, "CHUNK_BYTES", 500)  # (the cut is tested, not its size)
    items = [binary_corpus(seed, size) for seed, size in ((1, 3000), (2, 40), (3, 2200), (4, 0))]
    for specials in (False, True):
        whole = [tok.encode(bytes_to_text(d), add_special_tokens=specials) for d in items]
        batch = binary.encode_bytes_batch(tok, items, add_special_tokens=specials, num_threads=threads)
        assert [e.ids for e in batch] == [w.ids for w in whole]
        assert [e.offsets for e in batch] == [[tuple(o) for o in w.offsets] for w in whole]
        assert mapping.encode_bytes_batch_ids(tok, items, add_special_tokens=specials,
                                              num_threads=threads) == [w.ids for w in whole]
        for data, w in zip(items, whole):
            assert mapping.encode_bytes_ids(tok, data, add_special_tokens=specials, chunk_bytes=300) == w.ids
    calls = []
    monkeypatch.setattr(mapping, "_pieces", lambda *a: calls.append(a) or None)
    binary.encode_bytes_batch(tok, items, num_threads=threads)
    assert len(calls) == 2  # the two items over the piece size, each asked to be cut


def test_special_token_names_decode_as_utf8_as_token_bytes_says(tok):
    # A special token's bytes are its name in UTF-8 (token_bytes). decode gave "é" in a name as the
    # one Latin-1 byte e9, and refused a name outside Latin-1 as "not a byte".
    from tokenizers import AddedToken

    named = Tokenizer.from_str(tok.to_str())
    named.add_special_tokens([AddedToken(name, special=True, normalized=False) for name in ("<|é|>", "<|ශ|>")])
    first, last = named.token_to_id("<|é|>"), named.token_to_id("<|ශ|>")
    data = bytes(range(256)) + b"<|\xe9|>"
    ids = [first, *encode_bytes(named, data).ids, last, last]
    expected = "<|é|>".encode() + data + "<|ශ|>".encode() * 2
    assert decode_to_bytes(named, ids, skip_special=False) == expected
    wrapped = binary.BinaryTokenizer(named)
    assert wrapped.decode(ids) == expected == b"".join(wrapped.token_bytes(i) for i in ids)
    assert decode_to_bytes(named, ids) == wrapped.decode(ids, skip_special_tokens=True) == data


def test_encode_bytes_takes_a_binary_tokenizer_too(tok):
    """Given a wwho BinaryTokenizer (not its HF tokenizer), encode_bytes gives its ids: not a bare
    AttributeError on data longer than a piece, nor the bytes taken for text on shorter data."""
    wrapped = binary.BinaryTokenizer(tok)
    data = bytes(random.Random(3).randrange(256) for _ in range(5000))
    for chunk in (64, 1 << 16):
        assert encode_bytes(wrapped, data, chunk_bytes=chunk).ids == encode_bytes(tok, data, chunk_bytes=chunk).ids
    assert [e.ids for e in binary.encode_bytes_batch(wrapped, [data, b"ab"])] == [
        encode_bytes(tok, data).ids, encode_bytes(tok, b"ab").ids]
    with pytest.raises(TokenizerError, match="expected a tokenizers.Tokenizer or a wwho BinaryTokenizer"):
        encode_bytes("not a tokenizer", data)  # type: ignore[arg-type]


def test_a_batch_is_encoded_in_calls_that_let_ctrl_c_through(tok, monkeypatch):
    """HF's ``encode_batch`` holds Python's signal handling back until it returns: a batch given to it
    whole would answer Ctrl-C only once every item was encoded. The batch goes in
    calls of a bounded size per core, with the same ids; here, calls of a few items, and a SIGINT sent
    early is a KeyboardInterrupt long before a whole batch's time."""
    import os
    import signal
    import threading
    import time

    from wwho.binary import mapping

    items = [random.Random(k).randbytes(4000) for k in range(250)]
    def ids():
        return [e.ids for e in binary.encode_bytes_batch(tok, items)]

    whole = ids()
    monkeypatch.setattr(mapping, "_CALL_BYTES_PER_CORE", 8000)
    assert len(list(mapping._calls([bytes_to_text(d) for d in items]))) > 30
    assert ids() == whole
    started = time.perf_counter()
    for _ in range(3):
        ids()
    batch_seconds = (time.perf_counter() - started) / 3
    sent: list[float] = []
    timer = threading.Timer(batch_seconds / 10, lambda: (sent.append(time.perf_counter()),
                                                         os.kill(os.getpid(), signal.SIGINT)))
    with pytest.raises(KeyboardInterrupt):
        timer.start()
        for _ in range(10):  # (the interrupt comes in the first batch, with room to spare)
            ids()
    late = time.perf_counter() - sent[0]
    assert late < batch_seconds / 2, (late, batch_seconds)


def test_any_bytes_like_object_is_encoded_as_its_bytes(tok):
    """A numpy uint8 array (a bytes-like object, as hashlib and bytes() take it) is encoded, as a
    memoryview of it is."""
    import mmap

    import numpy as np

    data = bytes(range(256)) * 3
    wrapped = binary.BinaryTokenizer(tok)
    want = wrapped.encode(data)
    region = mmap.mmap(-1, len(data))
    region.write(data)
    spread = np.zeros(2 * len(data), dtype=np.uint8)
    spread[::2] = np.frombuffer(data, dtype=np.uint8)
    for same in (np.frombuffer(data, dtype=np.uint8), spread[::2], region):  # (spread[::2]: not contiguous)
        assert wrapped.encode(same) == want and encode_bytes(tok, same).ids == want
    assert wrapped.encode_batch([b"ab", np.frombuffer(b"ab", dtype=np.uint8)]) == [wrapped.encode(b"ab")] * 2


@settings(max_examples=60, deadline=None)
@given(data=st.data(), block=st.integers(1, 9), keep=st.booleans(),
       kind=st.sampled_from(["list", "int64", "uint32"]))
def test_decoding_in_blocks_gives_the_bytes_of_all_at_once(tok, data, block, keep, kind):
    """``wwho decode --binary`` writes the bytes of a block of ids at a time: joined, they are the
    bytes of the whole (special tokens dropped or spelt out), for a list and for arrays of ids."""
    from wwho.binary.mapping import decode_to_byte_blocks

    size = tok.get_vocab_size(with_added_tokens=True)
    ids = data.draw(st.lists(st.integers(0, size - 1), max_size=40))
    given_ids = ids if kind == "list" else np.array(ids, dtype=kind)
    joined = b"".join(decode_to_byte_blocks(tok, given_ids, skip_special=not keep, block=block))
    assert joined == decode_to_bytes(tok, ids, skip_special=not keep)


@pytest.mark.parametrize("kind", ["list", "int64"])
@pytest.mark.parametrize("bad", [-1, 10**6])
def test_every_id_is_checked_before_the_first_block(tok, kind, bad):
    """An id out of range after many good ones is named, with its position, before any block is
    made: ``wwho decode --binary`` then writes nothing, not the bytes before it."""
    from wwho.binary.mapping import decode_to_byte_blocks

    ids = [65] * 50 + [bad]
    given_ids = ids if kind == "list" else np.array(ids, dtype=np.int64)
    with pytest.raises(TokenizerError, match="position 50"):
        decode_to_byte_blocks(tok, given_ids, block=4)


@pytest.mark.parametrize("bad", ["text", 5])
def test_a_batch_item_that_is_not_bytes_is_named(tok, bad):
    items = [b"abc", b"", bad, b"def"]
    with pytest.raises(WrongTypeError, match=r"^texts\[2\]: ") as caught:
        binary.encode_bytes_batch(tok, items)
    assert caught.value.text_index == 2
