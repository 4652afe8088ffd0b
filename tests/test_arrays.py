"""Ids as arrays (``wwho.arrays``): ``encode_to_numpy`` and ``encode_batch_to_numpy`` equal the list
forms for every tokenizer kind, with tiktoken's dtype, and every ``decode`` takes the arrays.

The byte-level o200k case is also checked against tiktoken's own ``encode_to_numpy``.
"""

from __future__ import annotations

import os
import re
import warnings
from importlib import resources

import numpy as np
import pytest
from conftest import O200K_FILE, tokenizer_kinds
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho import arrays

KINDS = ["bytelevel", "o200k", "sgpe", "meta", "binary"]
SAMPLE = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()
TEXTS = SAMPLE[:300] + ["", "Hello, world 123!", "ශ්‍රී ලංකාව 2024 🏏", " " * 300, "\ud800 lone"] + SAMPLE[300:400]


@pytest.fixture(scope="module")
def kinds():
    from wwho.sgpe import SGPETokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sgpe = SGPETokenizer.train_from_iterator(SAMPLE[:1000], vocab_size=1000, script="sinhala", progress=False)
    return tokenizer_kinds(sgpe)


def _get(kinds, kind):
    if kind not in kinds:
        pytest.skip(f"{O200K_FILE} is absent: the shared o200k_base ranks file is needed")
    return kinds[kind]


def _inputs(kind):
    if kind == "binary":
        return [t.encode("utf-8", "surrogatepass") for t in TEXTS]
    if kind == "sgpe":
        return [t for t in TEXTS if "\ud800" not in t]  # SGPE refuses lone surrogates
    return TEXTS


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("threads", [1, 2])
def test_arrays_equal_the_lists(kinds, kind, threads):
    tok = _get(kinds, kind)
    texts = _inputs(kind)
    lists = tok.encode_batch(texts, num_threads=threads)
    ids, offsets = tok.encode_batch_to_numpy(texts, num_threads=threads)
    assert ids.dtype == np.uint32 and offsets.dtype == np.int64
    assert len(offsets) == len(texts) + 1 and offsets[0] == 0 and offsets[-1] == len(ids)
    assert [part.tolist() for part in arrays.split(ids, offsets)] == lists
    for text, want in zip(texts[:50], lists[:50]):
        one = tok.encode_to_numpy(text)
        assert one.dtype == np.uint32 and one.tolist() == tok.encode(text) == want
    # Every decode takes an array as it takes a list.
    assert tok.decode(ids[offsets[1]:offsets[2]]) == tok.decode(lists[1])
    ids[:] = 0  # the arrays are the caller's own, writable
    assert tok.encode_batch_to_numpy(texts[:3])[0].tolist() == [i for ids in lists[:3] for i in ids]


@pytest.mark.parametrize("kind", KINDS)
def test_an_array_shares_no_memory_with_a_later_call(kinds, kind):
    """An array of many ids takes the vector they were made in; a few are copied out of a vector the
    thread keeps for its next call. Either way an array is the caller's own: writing to it changes
    no later result, and no later call writes to it."""
    tok = _get(kinds, kind)
    texts = [t for t in _inputs(kind) if t.strip()]
    many = (b" " if kind == "binary" else " ").join(texts * 2)
    expected = {i: tok.encode(text) for i, text in enumerate([many, texts[0], texts[1]])}
    assert len(expected[0]) >= 16_384  # past the count from which the vector is handed over
    arrays_made = []
    for _ in range(3):
        for i, text in enumerate([many, texts[0], texts[1]]):
            array = tok.encode_to_numpy(text)
            assert array.tolist() == expected[i] == tok.encode(text)
            arrays_made.append(array)
        for array in arrays_made[-3:]:
            array[:] = 7
    for array in arrays_made[:-3]:
        assert (array == 7).all()  # written by the caller only


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta"])
def test_large_batches_are_gathered_whole(kinds, kind):
    # Over a million ids (4 MiB): the result is copied together on several threads, each a run
    # of whole chunks; every id must land in its place, whatever the thread count.
    tok = _get(kinds, kind)
    texts = [t for t in _inputs(kind) if t.strip()] * 100
    lists = tok.encode_batch(texts, num_threads=1)
    assert sum(map(len, lists)) > 1_000_000
    flat = np.fromiter((i for ids in lists for i in ids), dtype=np.uint32)
    for threads in (1, 3, 8):
        ids, offsets = tok.encode_batch_to_numpy(texts, num_threads=threads)
        assert np.array_equal(ids, flat)
        assert np.array_equal(np.diff(offsets), [len(x) for x in lists])


def test_o200k_arrays_equal_tiktoken(kinds):
    tiktoken = pytest.importorskip("tiktoken")
    tok = _get(kinds, "o200k")
    from wwho.bytelevel.tiktoken_loader import get_encoding

    enc = get_encoding("o200k_base", tiktoken_file=O200K_FILE)
    assert isinstance(enc, tiktoken.Encoding)
    for text in TEXTS:
        # tiktoken refuses lone surrogates; both replace them with U+FFFD otherwise
        want = enc.encode_to_numpy(re.sub("[\ud800-\udfff]", "\ufffd", text))
        got = tok.encode_to_numpy(text)
        assert got.dtype == want.dtype and got.tolist() == want.tolist()


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta"])
@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(alphabet=st.sampled_from(list("ab ශ්‍රීලංකා\n🏏.1")), max_size=40), max_size=30))
def test_arrays_equal_the_lists_on_any_texts(kinds, kind, texts):
    tok = _get(kinds, kind)
    ids, offsets = tok.encode_batch_to_numpy(texts, num_threads=2)
    assert [part.tolist() for part in arrays.split(ids, offsets)] == tok.encode_batch(texts, num_threads=2)


def test_special_tokens_in_the_flat_form(kinds):
    tok = _get(kinds, "o200k")
    texts = ["a<|endoftext|>b", "plain"]
    ids, offsets = tok.encode_batch_to_numpy(texts, allowed_special="all")
    assert [p.tolist() for p in arrays.split(ids, offsets)] == tok.encode_batch(texts, allowed_special="all")
    from wwho.errors import TokenizerError

    with pytest.raises(TokenizerError, match="endoftext"):
        tok.encode_batch_to_numpy(texts)


def _one_text_arrays_are_encode(tok, texts, choices):
    """``encode_to_numpy`` gives ``encode``'s ids, or raises its error, for every text and options."""
    from wwho.errors import TokenizerError

    for text in texts:
        for options in choices:
            try:
                want = tok.encode(text, **options)
            except TokenizerError as exc:
                with pytest.raises(type(exc), match=re.escape(str(exc))):
                    tok.encode_to_numpy(text, **options)
                continue
            got = tok.encode_to_numpy(text, **options)
            assert got.dtype == np.uint32 and got.flags.writeable and got.tolist() == want
    with pytest.raises(TokenizerError, match="expected text"):
        tok.encode_to_numpy(b"bytes")


@pytest.mark.parametrize("kind", ["bytelevel", "o200k"])
def test_one_text_array_takes_encodes_options(kinds, kind):
    """The byte-level ``encode_to_numpy`` has its own path (not a batch of one): the same ids,
    special-token handling, errors and BOS/EOS as ``encode``."""
    tok = _get(kinds, kind)
    special = sorted(tok.special_tokens)[0] if tok.special_tokens else None
    # (the last has more ids than the core copies into an array: it hands its vector over)
    texts = ["", "plain text", " " * 3000 + "x", "ශ්‍රී ලංකාව 🏏 \ud800", "a" * 5000,
             "".join(f"word{i} ශ්‍රී {i % 97}, " for i in range(6000))]
    if special is not None:
        texts.append(f"a{special}b")
    _one_text_arrays_are_encode(tok, texts, [{}, {"disallowed_special": ()}, {"allowed_special": "all"},
                                             {"add_special_tokens": True}])
    assert len(tok.encode_to_numpy(texts[-2] if special is not None else texts[-1])) > 1 << 14


def test_a_large_array_outlives_its_tokenizer_and_is_its_own():
    """An array handed its ids' vector (a long text's) owns them: it outlives the tokenizer, is
    writable, and a later call gives a new array."""
    import gc

    from wwho.bytelevel import ByteBPE

    tok = ByteBPE({bytes([b]): b for b in range(256)} | {b"or": 256, b"word": 257}, pattern="gpt2")
    text = "".join(f"word{i} ශ්‍රී {i % 97}, " for i in range(6000))
    want = tok.encode(text)
    first = tok.encode_to_numpy(text)
    assert len(first) > 1 << 14 and first.tolist() == want
    first[:] = 7
    second = tok.encode_to_numpy(text)
    assert second.tolist() == want and (first == 7).all()
    del tok
    gc.collect()
    assert second.tolist() == want and second.sum() == sum(want) % 2**64 and first.sum() == 7 * len(first)


@pytest.mark.parametrize("kind", ["sgpe", "meta"])
def test_sgpe_and_meta_one_text_array_takes_encodes_options(kinds, kind):
    """SGPE's and the meta tokenizer's ``encode_to_numpy`` have their own path too: the same ids,
    special tokens and errors as ``encode``, short texts and long ones (encoded without the GIL)."""
    tok = _get(kinds, kind)
    special = sorted(tok.special_tokens)[0]
    texts = ["", "ශ්‍රී ලංකාව 🏏 hello", f"a{special}b", "ශ්‍රී ලංකාව hello " * 20_000]
    choices = [{}, {"allowed_special": "all"}, {"allowed_special": [special]},
               {"allowed_special": ["no such token"]}]
    if kind == "meta":
        choices += [{"disallowed_special": ()}, {"disallowed_special": [special]}]
    _one_text_arrays_are_encode(tok, texts, choices)


@pytest.mark.parametrize("bos, eos", [(1, None), (None, 2), (1, 2), (None, None)])
def test_add_bos_eos(bos, eos):
    lists = [[5, 6], [], [7]]
    ids, offsets = arrays.from_lists(lists)
    out, out_offsets = arrays.add_bos_eos(ids, offsets, bos, eos)
    want = [([bos] if bos is not None else []) + ids + ([eos] if eos is not None else []) for ids in lists]
    assert [p.tolist() for p in arrays.split(out, out_offsets)] == want


def test_from_lists_of_nothing():
    ids, offsets = arrays.from_lists([])
    assert ids.tolist() == [] and offsets.tolist() == [0]


@pytest.mark.parametrize("kind", KINDS)
def test_decode_batch_takes_the_flat_form_back_whole(kinds, kind):
    # encode_batch_to_numpy's (ids, offsets) is a FlatIds: decode_batch reads it as its texts,
    # not as a batch of two id lists (the offsets decoded as ids).
    tok = _get(kinds, kind)
    texts = _inputs(kind)[:40]
    flat = tok.encode_batch_to_numpy(texts)
    assert isinstance(flat, arrays.FlatIds) and isinstance(flat, tuple)
    assert tok.decode_batch(flat) == tok.decode_batch(tok.encode_batch(texts))


@pytest.mark.parametrize("ids, offsets, message", [
    (np.arange(6), np.array([0, 4, 2, 6]), r"offsets go backwards at index 2 \(4 then 2\)"),
    (np.arange(6), np.array([0, 4, 99]), "offsets must start at 0 and end at len\\(ids\\) = 6"),
    (np.arange(6), np.array([1, 6]), "must start at 0"),
    (np.arange(6), np.array([0.0, 6.0]), "offsets must be a one-dimensional array of integers"),
    (np.arange(6).reshape(2, 3), np.array([0, 6]), "ids must be a one-dimensional array of integers"),
    # Unsigned offsets: numpy's diff wraps (4 then 2 a step of 2**64 - 2), which must not be taken.
    (np.arange(6), np.array([0, 4, 2, 6], dtype=np.uint64), r"offsets go backwards at index 2 \(4 then 2\)"),
    (np.arange(6), np.array([0, 4, 2, 6], dtype=np.uint8), r"offsets go backwards at index 2 \(4 then 2\)"),
    (np.arange(6), np.array([0, 2**64 - 1], dtype=np.uint64), r"offsets must be below 2\*\*63"),
    # A step back whose difference wraps: np.diff sees none, and a split must not slice from -2.
    (np.arange(6), np.array([0, 2**63 - 1, -2, 6]), r"offsets go backwards at index 2"),
    ([[1, 2], [3]], np.array([0, 2]), "ids and offsets must be one-dimensional arrays"),
])
def test_split_and_add_bos_eos_check_offsets(ids, offsets, message):
    from wwho.errors import TokenizerError

    with pytest.raises(TokenizerError, match=message):
        arrays.split(ids, offsets)
    with pytest.raises(TokenizerError, match=message):
        arrays.add_bos_eos(ids, offsets, 1, 2)


@pytest.mark.parametrize("dtype", [np.uint64, np.uint32, np.uint8, np.int32])
def test_split_and_add_bos_eos_take_offsets_of_any_integer_dtype(dtype):
    # uint64 offsets plus the int64 shifts must not become float64, nor add_bos_eos an IndexError.
    ids, offsets = arrays.from_lists([[5, 6], [], [7]])
    offsets = offsets.astype(dtype)
    assert [p.tolist() for p in arrays.split(ids, offsets)] == [[5, 6], [], [7]]
    out, out_offsets = arrays.add_bos_eos(ids, offsets, 1, 2)
    assert out_offsets.dtype == np.int64
    assert [p.tolist() for p in arrays.split(out, out_offsets)] == [[1, 5, 6, 2], [1, 2], [1, 7, 2]]


@pytest.mark.parametrize("bos", [True, 1.5, np.float64(2.0), "1", 2**32, np.uint64(2**32)])
def test_add_bos_eos_refuses_a_bos_that_is_no_integer(bos):
    # True must not be stored as token 1, nor 1.5 as 1.
    from wwho.errors import TokenizerError

    ids, offsets = arrays.from_lists([[5, 6]])
    with pytest.raises(TokenizerError, match=r"bos must be a token id in \[0, 2\*\*32\)"):
        arrays.add_bos_eos(ids, offsets, bos, None)
    assert arrays.add_bos_eos(ids, offsets, np.uint64(3), None).ids.tolist() == [3, 5, 6]


def test_add_bos_eos_refuses_ids_that_no_uint32_holds():
    from wwho.errors import TokenizerError

    with pytest.raises(TokenizerError, match=r"ids must be token ids in \[0, 2\*\*32\)"):
        arrays.add_bos_eos(np.array([-1, 5]), np.array([0, 2]), 1, None)
    with pytest.raises(TokenizerError, match=r"bos must be a token id"):
        arrays.add_bos_eos(np.array([1, 5], dtype=np.uint32), np.array([0, 2]), -1, None)


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta"])  # the small byte-level one has no special tokens
def test_special_names_as_an_array_read_as_a_collection(kinds, kind):
    # A numpy array of names is a collection of names, in every form; never numpy's "truth value
    # of an array is ambiguous".
    tok = _get(kinds, kind)
    names = sorted(tok.special_tokens)[:2]
    text = "a" + names[0] + "b"
    plain = {} if kind == "sgpe" else {"disallowed_special": ()}  # SGPE: special text is ordinary unless allowed
    for allowed in (np.array(names), np.array([], dtype=str)):
        want = tok.encode(text, allowed_special=list(allowed), **plain)
        assert tok.encode(text, allowed_special=allowed, **plain) == want
        assert tok.encode_to_numpy(text, allowed_special=allowed, **plain).tolist() == want
        assert tok.encode_batch([text], allowed_special=allowed, **plain) == [want]
        flat = tok.encode_batch_to_numpy([text], allowed_special=allowed, **plain)
        assert flat.ids.tolist() == want


@pytest.mark.parametrize("when", ["first array", "construction"])
def test_a_ctrl_c_while_numpys_c_api_is_found_is_a_keyboard_interrupt(when):
    """Finding numpy's C API runs numpy's version check; a Ctrl-C arriving then (here: sent from
    inside that check) is raised inside it, and the binding must not make a Rust panic of it
    (``PanicException``, which ``except KeyboardInterrupt`` misses). It is a
    ``KeyboardInterrupt`` at the caller's next step, and the next array is made. The API is found
    on the first array of a process whose tokenizer was made before numpy was imported, or when a
    tokenizer is made where numpy is imported: both moments are checked."""
    import subprocess
    import sys
    import textwrap

    make = ('SGPETokenizer.train_from_iterator(["ශ්‍රී ලංකා"] * 50, vocab_size=300, script="sinhala", '
            "progress=False)")
    step = "tok.encode_to_numpy('ශ්‍රී')" if when == "first array" else f"tok = {make}"
    source = textwrap.dedent(f"""
        import os, signal, warnings
        warnings.simplefilter("ignore")
        from wwho import SGPETokenizer
        tok = {make}
        import numpy, numpy.lib
        real = numpy.lib.NumpyVersion
        def interrupted(version):
            os.kill(os.getpid(), signal.SIGINT)
            return real(version)
        numpy.lib.NumpyVersion = interrupted
        try:
            {step}
            for _ in range(1000):  # the interrupt comes at a step of Python's, after the call at the latest
                pass
            print("no interrupt")
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
        numpy.lib.NumpyVersion = real
        print(tok.encode_to_numpy("ශ්‍රී").tolist() == tok.encode("ශ්‍රී"))
    """)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "RUST_BACKTRACE": "0"})
    assert done.stdout.split() == ["KeyboardInterrupt", "True"], (done.stdout, done.stderr[-2000:])
    assert "panicked" not in done.stderr, done.stderr[-2000:]
