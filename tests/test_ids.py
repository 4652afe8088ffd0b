"""Every decoder takes the same ids (wwho.ids): ints, numpy integers, ``__index__`` objects; never bools.

So ``ByteBPE.decode([True])`` does not return token 1 where SGPE refuses bools, and SGPE takes the
``numpy.int64`` ids that the other kinds take.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import O200K_FILE, char_of_each_byte
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.errors import TokenizerError


class Index:
    """An object that is an integer only through ``__index__`` (as some array libraries' scalars)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


@pytest.fixture(scope="module")
def kinds(tokenizers):
    from wwho import binary
    from wwho.binary.mapping import decode_to_bytes, encode_bytes
    from wwho.bytelevel import ByteBPE

    sgpe = tokenizers["sinhala"]
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"abc": 257})
    bytelevel = ByteBPE(ranks, pattern="gpt2")
    counts = {bytes(range(i, i + 32)): 4 for i in range(0, 200, 8)}
    tok = binary.train_from_counts(counts, vocab_size=512, min_frequency=1)

    class Binary:  # the binary kind's decoder, with the interface of the others
        def encode(self, text):
            return encode_bytes(tok, text.encode()).ids

        def decode(self, ids):
            return decode_to_bytes(tok, ids).decode()

    out = {"sgpe": sgpe, "bytelevel": bytelevel, "binary": Binary()}
    if O200K_FILE.is_file():
        from wwho.meta import MetaTokenizer

        out["meta"] = MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE)
    return out


KINDS = ["sgpe", "meta", "bytelevel", "binary"]
# Two sentences: with superword merges (the default) "ශ්‍රී ලංකාව" alone can be one token.
TEXT = {"sgpe": "ශ්‍රී ලංකාව. ලංකාව", "meta": "ශ්‍රී ලංකාව in 2024", "bytelevel": "abc cab", "binary": "hello abc"}


def _get(kinds, kind):
    if kind not in kinds:
        pytest.skip(f"{O200K_FILE} is absent")
    return kinds[kind]


@pytest.mark.parametrize("kind", KINDS)
def test_integer_types_decode_alike(kinds, kind):
    tok = _get(kinds, kind)
    ids = tok.encode(TEXT[kind])
    assert len(ids) >= 2
    want = tok.decode(ids)
    assert want == TEXT[kind]
    dtype = np.int64 if max(ids) >= 2**16 else np.uint16
    for variant in ([np.int64(i) for i in ids], [dtype(i) for i in ids], np.array(ids, dtype=np.int64),
                    np.array(ids, dtype=dtype), [Index(i) for i in ids], tuple(ids), iter(ids)):
        assert tok.decode(variant) == want, type(variant)


@pytest.mark.parametrize("kind", ["sgpe", "meta", "bytelevel"])
@pytest.mark.parametrize("make", [int, np.int64, Index])
@pytest.mark.parametrize("value", [-1, 2**40])
def test_an_id_outside_32_bits_is_an_id_range_error_whatever_its_integer_type(kinds, kind, make, value):
    """ByteBPE.token_bytes(np.int64(-1)) raises IdRangeError (an OverflowError, as tiktoken), as -1
    and the other kinds do, not an UnknownTokenError."""
    from wwho.errors import IdRangeError

    tok = _get(kinds, kind)
    with pytest.raises(IdRangeError):
        tok.token_bytes(make(value))
    with pytest.raises(IdRangeError):
        tok.decode([make(value)])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bad", [True, False, np.bool_(True), 1.5, np.float64(2.0), "3", None, b"\x01"])
def test_bools_and_non_integers_are_refused(kinds, kind, bad):
    tok = _get(kinds, kind)
    ids = tok.encode(TEXT[kind])
    with pytest.raises(TokenizerError, match="position 1"):
        tok.decode([ids[0], bad])
    if hasattr(tok, "token_bytes"):
        with pytest.raises(TokenizerError):
            tok.token_bytes(bad)


@pytest.mark.parametrize("kind", ["sgpe", "meta", "bytelevel"])
def test_what_the_plain_list_path_cannot_take_is_checked(kinds, kind):
    # A list of plain ints with the default options is decoded by the core in one call; anything
    # else (a list subclass, an id past 2**32 or negative, one with no token) takes the checking
    # path: the same text, and errors that name the position.
    tok = _get(kinds, kind)
    ids = tok.encode(TEXT[kind])

    class Ids(list):
        pass

    assert tok.decode(Ids(ids)) == tok.decode(ids) == TEXT[kind]
    assert tok.decode_bytes(Ids(ids)) == tok.decode_bytes(ids) == TEXT[kind].encode()
    for bad in (2**32 + ids[0], 2**40, -1):
        for decode in (tok.decode, tok.decode_bytes):
            with pytest.raises(TokenizerError, match="position 1"):
                decode([ids[0], bad])


@pytest.mark.parametrize("kind", KINDS)
def test_a_bool_array_is_refused(kinds, kind):
    tok = _get(kinds, kind)
    with pytest.raises(TokenizerError):
        tok.decode(np.array([True, False]))


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel"])
def test_ids_outlive_their_tokenizer(kinds, kind):
    """The core makes each id's Python int on first use and keeps it (``rust/src/py/ints.rs``); the
    lists it returned stay whole when the tokenizer that holds those ints is freed, and a fresh
    tokenizer makes them again, on any number of threads at once."""
    import gc
    from concurrent.futures import ThreadPoolExecutor

    from wwho.bytelevel import ByteBPE
    from wwho.sgpe import SGPETokenizer

    def fresh():
        if kind == "sgpe":
            return SGPETokenizer(kinds["sgpe"].file)
        # Ids above 256: CPython keeps the ints up to 256 itself, whoever asks for them.
        return ByteBPE({token: 1000 + i for token, i in kinds["bytelevel"].ranks.items()}, pattern="gpt2")

    texts = [TEXT[kind] * n for n in range(1, 30)]
    expected = [fresh().encode(t) for t in texts]
    assert sum(i > 256 for ids in expected for i in ids) > 100
    tok = fresh()
    kept = [tok.encode(t) for t in texts]
    first = tok.encode(texts[0])
    del tok
    gc.collect()
    assert kept == expected
    assert first == expected[0] and all(type(i) is int for i in first)
    tok = fresh()
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(tok.encode, texts * 8)) == expected * 8


def test_encoding_keeps_no_utf8_copy_in_the_string(kinds):
    """Byte-level encoding converts a non-ASCII str to UTF-8 in a per-thread buffer of its own, so the
    str object does not grow: CPython's ``PyUnicode_AsUTF8AndSize`` keeps a UTF-8 copy inside every str
    it converts, for as long as the str lives (a corpus held in memory would carry a second copy)."""
    import sys

    tok = kinds["bytelevel"]
    for text in ["ශ්‍රී ලංකා " * 200, "naïve café " * 200, "😀 emoji " * 200, "a\ud800b " * 50]:
        before = sys.getsizeof(text)
        ids = tok.encode(text) + tok.encode_ordinary(text) + tok.encode(text, allowed_special="all")
        assert ids and sys.getsizeof(text) == before


def test_the_ints_of_ids_are_shared_and_their_references_balance():
    """The core makes one int per id and hands out new references to it (rust/src/py/ints.rs):
    a reference too few would free an int still in a list, one too many would leak it."""
    import gc
    import sys

    from wwho import ByteBPE

    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    tok = ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
    text = "Tokenizers turn text into integers, again and again. " * 50
    first = tok.encode_ordinary(text)
    x = next(i for i in first if i > 1000)  # not one of CPython's own small ints
    at = first.index(x)
    base = sys.getrefcount(x)
    lists = [tok.encode_ordinary(text) for _ in range(20)] + tok.encode_batch([text] * 20, num_threads=2)
    assert all(ids == first and ids[at] is x for ids in lists)
    assert sys.getrefcount(x) == base + sum(ids.count(x) for ids in lists)
    del lists
    gc.collect()
    assert sys.getrefcount(x) == base


MAKE = {
    "bytelevel": "from wwho import ByteBPE\nByteBPE({{bytes([i]): i for i in range(256)}}, pattern='gpt2')",
    "sgpe": "from wwho import SGPETokenizer\nSGPETokenizer.load({path!r})",
    "binary": "from wwho.binary import BinaryTokenizer\nBinaryTokenizer.load({path!r})",
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small SGPE and binary tokenizer saved, for fresh interpreters to load."""
    from wwho import binary
    from wwho.sgpe import SGPETokenizer, train_sgpe

    root = tmp_path_factory.mktemp("saved")
    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    text = root / "train.txt"
    text.write_text(sample.read_text(encoding="utf-8")[:20_000], encoding="utf-8")
    SGPETokenizer(train_sgpe(text, vocab_size=600, progress=False, workers=1)).save(root / "sgpe")
    binary.BinaryTokenizer(binary.train([text], vocab_size=600, progress=False)).save(root / "binary")
    return root


@pytest.mark.parametrize("kind", sorted(MAKE))
def test_a_new_tokenizer_loads_the_arrays_module_where_numpy_is_loaded(kind, saved):
    """The first ``encode_to_numpy`` or ``encode_batch_to_numpy`` of a process neither imports
    ``wwho.arrays`` nor has the core find numpy's C API during the call (the tokenizer did both
    when it was made: ``ready_numpy`` then has nothing left to do); a process without numpy does
    not get numpy from a tokenizer."""
    make = MAKE[kind].format(path=str(saved / kind))
    for numpy_first in (False, True):
        code = f"import sys\n{'import numpy' if numpy_first else ''}\n{make}\n" \
               "print('numpy' in sys.modules, 'wwho.arrays' in sys.modules)\n" \
               "from wwho import _core\n" \
               "print(('numpy' in sys.modules) and not _core.ready_numpy())"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [str(numpy_first)] * 3, (kind, numpy_first, out.stdout)


@pytest.mark.filterwarnings("ignore::wwho.errors.VocabSizeWarning")  # a small corpus: its size is not checked here
def test_single_id_and_batch_errors_name_what_they_should(kinds):
    """SGPE's id_to_token names no position (0) for its one id; ByteBPE's decode_bytes_batch names
    the list as well as the position; the binary kind's decode refuses a flag that is no bool with
    WrongTypeError (a TypeError), as the others do, not a TokenizerError that is no TypeError."""
    from wwho.errors import UnknownTokenError, WrongTypeError
    from wwho.sgpe import SGPETokenizer

    sgpe: SGPETokenizer = kinds["sgpe"]
    with pytest.raises(UnknownTokenError) as err:
        sgpe.id_to_token(10**9)
    assert "position" not in str(err.value)
    bytelevel = kinds["bytelevel"]
    with pytest.raises(UnknownTokenError, match=r"^batch\[1\]: token id 999 at position 1"):
        bytelevel.decode_bytes_batch([[97], [97, 999]])
    with pytest.raises(WrongTypeError, match=r"^batch\[1\]: expected a sequence"):
        bytelevel.decode_bytes_batch([[97], 5])
    from wwho import binary

    tok = binary.BinaryTokenizer(binary.train_from_counts({b"abcd" * 8: 4}, vocab_size=512, min_frequency=1))
    with pytest.raises(TypeError, match="skip_special_tokens must be True or False") as err:
        tok.decode([97], skip_special_tokens="yes")
    assert isinstance(err.value, WrongTypeError)


@pytest.mark.parametrize("kind", ["sgpe", "meta", "bytelevel"])
def test_a_memoryview_and_a_flat_form_packed_again_are_refused(kinds, kind):
    """``decode(memoryview(b"AB"))`` must not decode the bytes as ids 65 and 66 (bytes and bytearray
    are refused); ``decode_batch((ids, offsets))``, a FlatIds unpacked and packed again as a plain
    tuple, must not decode the offsets as a second text's ids, silently."""
    from wwho.arrays import FlatIds
    from wwho.errors import WrongTypeError

    tok = _get(kinds, kind)
    with pytest.raises(WrongTypeError, match="got a memoryview of bytes .*numpy.asarray"):
        tok.decode(memoryview(b"AB"))
    import numpy as np

    one_byte = np.asarray([65, 66], dtype=np.uint8)  # ids 65 and 66, not the bytes "AB"
    with pytest.raises(WrongTypeError, match=r"memoryview of bytes \(format 'B'\)"):
        tok.decode(memoryview(one_byte))  # as README says; numpy.asarray of it decodes
    assert tok.decode(np.asarray(memoryview(one_byte))) == tok.decode(one_byte.tolist())
    texts = [TEXT[kind], "", TEXT[kind]]
    ids, offsets = tok.encode_batch_to_numpy(texts)
    with pytest.raises(WrongTypeError, match=r"tuple \(ids, offsets\).*FlatIds"):
        tok.decode_batch((ids, offsets))
    # Unpacked into two arguments, the offsets land on errors: said once, naming the flat form
    # (not "batch[0]: errors must be the name of an error handler ... not ndarray").
    for second in (offsets, list(offsets)):
        with pytest.raises(WrongTypeError, match=r"takes the batch as one argument.*FlatIds.*not (numpy.ndarray|list)"):
            tok.decode_batch(ids, second)
    assert tok.decode_batch(FlatIds(ids, offsets)) == texts
    # Two texts' ids as a tuple of arrays are a batch as before, even of these dtypes.
    first, second = tok.encode_to_numpy(TEXT[kind]), tok.encode_to_numpy(TEXT[kind]).astype(np.int64)
    assert tok.decode_batch((first, second)) == [TEXT[kind]] * 2


@pytest.mark.parametrize("kind", ["sgpe", "meta", "bytelevel"])
def test_arrays_of_every_layout_decode_as_their_lists_and_name_a_bad_id(kinds, kind):
    """An integer array is read by the core as one block (no int object per id, not a list made of
    it, several times a list's memory). Each layout the block read
    takes or leaves to the checking path gives the list's text; a bad id is named with its
    position either way."""
    import array

    from wwho.errors import IdRangeError, UnknownTokenError

    tok = _get(kinds, kind)
    ids = tok.encode(TEXT[kind])
    want = tok.decode(ids)
    u32 = np.array(ids, dtype=np.uint32)
    layouts = [u32, u32.astype(np.int64), u32.astype(np.uint64), u32.astype(np.int32), u32.astype(">u4"),
               u32.astype(">i8"), u32.astype(object), np.repeat(u32, 2)[::2], u32[::-1][::-1],
               array.array("I", u32.tobytes()), array.array("q", u32.astype(np.int64).tobytes())]
    for layout in layouts:
        assert tok.decode(layout) == want, (type(layout), getattr(layout, "dtype", None))
        assert tok.decode_bytes(layout) == want.encode()
    size = len(tok.get_vocab()) if kind == "sgpe" else tok.vocab_size
    for bad, error in ((np.array([ids[0], -1]), IdRangeError), (np.array([ids[0], 2**32], dtype=np.uint64), IdRangeError),
                       (np.array([ids[0], size], dtype=np.uint32), UnknownTokenError),
                       (np.array([ids[0], size], dtype=np.int64), UnknownTokenError)):
        with pytest.raises(error, match="position 1"):
            tok.decode(bad)
    with pytest.raises(TokenizerError):
        tok.decode(np.array([[ids[0]]], dtype=np.uint32))  # two dimensions


@pytest.mark.parametrize("kind", ["sgpe", "meta", "bytelevel"])
def test_arrays_of_any_integer_width_and_memory_maps_are_read_as_one_block(kinds, kind, tmp_path, monkeypatch):
    """uint16 (what ``wwho encode --npy`` writes for vocabularies up to 65,536), the other widths,
    and a memory-mapped array (``np.load(..., mmap_mode="r")``, as pipelines keep ids) are read by
    the core as one block: Python's traced memory stays far below an int object per id, which the
    checking path's ``tolist()`` made (a memmap, an ndarray subclass, took that path)."""
    import array
    import tracemalloc

    tok = _get(kinds, kind)
    ids = tok.encode(TEXT[kind]) * 20_000
    want = tok.decode(ids)
    u32 = np.array(ids, dtype=np.uint32)
    np.save(tmp_path / "ids.npy", u32)
    mapped = np.load(tmp_path / "ids.npy", mmap_mode="r")
    assert type(mapped) is np.memmap
    layouts = {"memmap": mapped, "memmap slice": mapped[3:], "int64 memmap": u32.astype(np.int64)}
    if max(ids) < 2**15:
        layouts.update(uint16=u32.astype(np.uint16), int16=u32.astype(np.int16),
                       array_H=array.array("H", u32.astype(np.uint16).tobytes()))
    if max(ids) < 2**7:
        layouts.update(uint8=u32.astype(np.uint8), int8=u32.astype(np.int8))
    assert len(layouts) > 3 or kind == "meta"  # (o200k's ids need 32 bits)

    def traced(layout) -> tuple[str, int]:
        tracemalloc.start()
        try:
            return tok.decode(layout), tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    block = traced(u32)[1]  # the text made, and nothing per id
    expected = {"memmap slice": tok.decode(ids[3:])}

    def per_id(*args):
        raise AssertionError("a memmap read an id at a time")

    for method in ("tolist", "__iter__", "__getitem__"):  # (what the checking path reads a memmap by)
        monkeypatch.setattr(np.memmap, method, per_id)
    for name, layout in layouts.items():
        got, peak = traced(layout)
        assert got == expected.get(name, want), name
        # a list of the ids would be 8 bytes an id (its int objects more, but the ones below 257)
        assert peak < block + 2 * len(ids), (name, peak, block, len(ids))
    with pytest.raises(TokenizerError, match="got a memoryview of bytes"):
        tok.decode(memoryview(bytes(range(4))))  # bytes: still refused


@pytest.mark.parametrize("dtype", [np.uint32, np.int64, np.uint16])
def test_an_id_without_a_token_in_an_array_is_named_without_a_list_made_of_it(kinds, dtype):
    """A bad id at the end of an array was named from a list made of the array, then a Python loop
    over it, many times the time and memory of decoding it: the core names it, from the block."""
    import tracemalloc

    from wwho.errors import UnknownTokenError

    tok = _get(kinds, "bytelevel")
    ids = np.array(tok.encode(TEXT["bytelevel"]) * 100_000 + [300], dtype=dtype)
    tracemalloc.start()
    try:
        with pytest.raises(UnknownTokenError, match=f"token id 300 at position {len(ids) - 1} "):
            tok.decode(ids)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(ids), (peak, len(ids))  # a list of them is 8 bytes an id


@pytest.mark.parametrize("kind", KINDS)
def test_an_id_too_long_for_python_to_print_is_an_id_error(kinds, kind):
    """``decode([1 << 100000])`` was a bare ValueError from formatting the message (Python converts at
    most 4,300 digits to text): an id error like any other, its number described."""
    from wwho.errors import IdRangeError

    tok = _get(kinds, kind)
    for ids in ([1 << 100_000], np.array([1 << 100_000], dtype=object)):
        with pytest.raises((IdRangeError, TokenizerError)) as info:
            tok.decode(ids)
        assert "an integer of 100,001 bits" in str(info.value) or len(str(info.value)) < 300, str(info.value)[:300]


@pytest.mark.parametrize("kind", ["sgpe", "meta", "bytelevel"])
def test_a_batchs_flat_form_given_to_decode_says_what_to_call(kinds, kind):
    tok = _get(kinds, kind)
    flat = tok.encode_batch_to_numpy([TEXT[kind], TEXT[kind]])
    with pytest.raises(TokenizerError, match=r"the flat form of a batch \(FlatIds\): decode_batch\(flat\)"):
        tok.decode(flat)
    assert tok.decode(flat.ids) == TEXT[kind] * 2


@pytest.mark.parametrize("value", [np.zeros((2, 300_000), np.uint32), np.zeros((0, 3), np.uint32),
                                   [[1] * 300_000], [1, "x" * 1_000_000]])
def test_a_wrong_id_is_named_in_a_short_message(kinds, value):
    """A 2-D array (an empty one too: its rows would be ids) is refused as one, naming its shape;
    a wrong item is shown cut, not as its whole repr (megabytes of message)."""
    tok = _get(kinds, "bytelevel")
    with pytest.raises(TokenizerError) as info:
        tok.decode(value)
    assert len(str(info.value)) < 300, len(str(info.value))
    if isinstance(value, np.ndarray):
        assert f"2-D array of shape {value.shape}" in str(info.value)


@pytest.mark.parametrize("kind", ["sgpe", "meta", "bytelevel"])
def test_memoryviews_of_ids_and_masked_arrays_take_one_rule_on_every_method(kinds, kind):
    """The core's fast path of some methods and the others must agree: a memoryview of uint32 (or
    uint16) ids decoded by some and refused by others, and a numpy masked array whose masked-out ids
    are decoded silently on that path, are not. A memoryview of integers is ids everywhere, one of
    bytes nowhere, and a masked array with masked entries is refused everywhere."""
    from wwho.errors import WrongTypeError

    tok = _get(kinds, kind)
    ids = tok.encode(TEXT[kind])
    want = tok.decode(ids)
    methods = [tok.decode, lambda x: tok.decode(x, skip_special_tokens=True), tok.decode_bytes,
               lambda x: tok.decode(x, errors="strict")]
    if kind == "bytelevel":
        methods += [lambda x: tok.decode_with_offsets(x)[0], lambda x: b"".join(tok.decode_tokens_bytes(x))]
    u32 = np.array(ids, dtype=np.uint32)
    views = [memoryview(u32), memoryview(u32.astype(np.int64)), memoryview(np.repeat(u32, 2))[::2]]
    if max(ids) < 2**16:
        views.append(memoryview(u32.astype(np.uint16)))
    masked = np.ma.array(np.append(u32, u32[0]), mask=[False] * len(ids) + [True])
    for method in methods:
        expected = method(ids)
        assert expected in (want, want.encode())
        for view in views:
            assert method(view) == expected, view.format
        assert method(np.ma.array(u32)) == expected  # nothing masked
        with pytest.raises(WrongTypeError, match="masked array with masked entries"):
            method(masked)
        with pytest.raises(WrongTypeError, match="got a memoryview of bytes"):
            method(memoryview(bytes(u32)))
        # A byte order Python's memoryview cannot read: a typed error, not NotImplementedError.
        with pytest.raises(WrongTypeError, match="memoryview of format '>I'.*numpy.asarray"):
            method(memoryview(u32.astype(">u4")))
        assert method(np.asarray(memoryview(u32.astype(">u4")))) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40), st.data())
def test_char_offsets_name_the_character_each_part_starts_in(text, data):
    from wwho.ids import char_offsets

    raw = text.encode("utf-8", "surrogatepass")
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(raw) - 1)))) & set(range(1, len(raw))))
    bounds = [0, *cuts, len(raw)] if raw else []
    parts = [raw[a:b] for a, b in zip(bounds, bounds[1:])]
    owner = char_of_each_byte(text)
    assert char_offsets(parts) == [owner[a] for a in bounds[:-1]]
