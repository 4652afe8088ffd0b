"""The meta tokenizer, its router and the streaming decoder, used as a hostile user would: ids and
options of the wrong kind, arrays of other dtypes, streams fed one id at a time, one tokenizer on
many threads, and the syllables the router must keep whole.

Oracles we did not write: the text itself (round trips), Python's own UTF-8 decoder (what a stream
must equal), and, for the router, the syllabifier of each script (an Indic syllable never
straddles a run boundary). The SGPE part is a small Sinhala vocabulary of the bundled sample.
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from importlib import resources

import numpy as np
import pytest
from conftest import O200K_FILE
from hypothesis import example, given, settings
from hypothesis import strategies as st

from wwho import StreamingDecoder, arrays, syllabify
from wwho.errors import TokenizerError, VocabError
from wwho.meta import MetaTokenizer
from wwho.router import segment

SAMPLE = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()
#: Sinhala and Devanagari with their signs, joiners, Latin, digits, emoji (some cut by o200k), marks.
MIXED = st.lists(
    st.sampled_from(
        list("ශ්‍රීලංකාවනඖෘෟෲ")
        + list("नमस्तेक्षज़ँ।॥")
        + list("ab1 \t\n.,<|>\u200c\u200d\u00a0\u0301\ufe0f")
        + ["🙂", "🏏", "🦙", "😀\u200d😀", "🇱🇰", "漢字", "\U0010ffff", "<|endoftext|>"]
    ),
    max_size=40,
).map("".join)


@pytest.fixture(scope="module")
def sgpe():
    from wwho.sgpe import SGPETokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SGPETokenizer.train_from_iterator(
            SAMPLE[:1000], vocab_size=1000, script="sinhala", progress=False
        )


@pytest.fixture(scope="module")
def meta(sgpe):
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent: the shared o200k_base ranks file is needed")
    return MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE)


# -- ids of the wrong kind -----------------------------------------------------------------


def test_convert_ids_to_tokens_takes_what_decode_takes(meta):
    # A dict would give its keys' tokens and a set its ids in hash order, one id alone a bare
    # TypeError ("'int' object is not iterable"); decode refuses all three by name.
    ids = meta.encode("ශ්‍රී ලංකා Cricket 2024")
    want = [meta.id_to_token(i) for i in ids]
    assert meta.convert_ids_to_tokens(ids) == want
    for array in (np.array(ids, dtype=np.uint32), np.array(ids, dtype=np.int64), np.array(ids, dtype=">u8")):
        assert meta.convert_ids_to_tokens(array) == want
    for value, message in [
        ({ids[0]: 1}, "not a dict"),
        (set(ids), "not a set"),
        (5, "a single id"),
        (np.int64(5), "a single id"),
        (None, "got NoneType"),
        ("ab", "got str"),
    ]:
        with pytest.raises(TokenizerError, match=message):
            meta.convert_ids_to_tokens(value)
        with pytest.raises(TokenizerError, match=message):
            meta.decode(value)
    for value, message in [
        ([-1], "token id -1 at position 0 is out of range"),
        ([1, True], "position 1 is True"),
        ([meta.vocab_size], "out of range"),
    ]:
        with pytest.raises(TokenizerError, match=message):
            meta.convert_ids_to_tokens(value)


def test_decode_takes_arrays_of_every_integer_dtype_and_refuses_the_rest(meta):
    text = "ශ්‍රී ලංකා Cricket 🏏"
    ids = meta.encode(text)
    for dtype in (np.uint32, np.int64, np.uint64, ">i4", np.int32, object):
        assert meta.decode(np.array(ids, dtype=dtype)) == text
    for bad, message in [
        (np.array([1.0]), "not an integer"),
        (np.array([-1]), "out of range"),
        (np.array([2**40], dtype=np.uint64), "out of range"),
        (np.array([True]), "not an integer"),
        (np.array([199_998]), "token id 199998 at position 0 is not assigned"),
        ([5, 6, 199_998], "token id 199998 at position 2 is not assigned"),
    ]:
        with pytest.raises(TokenizerError, match=message):
            meta.decode(bad)
    with pytest.raises(TokenizerError, match=r"batch\[1\]: token id 200000 at position 1 is not assigned"):
        meta.decode_batch([[5], [6, 200_000]])


def test_decode_batch_of_a_flat_form_with_unsigned_offsets(meta):
    # Unsigned offsets that go backwards would wrap in numpy's diff: texts would come back empty or
    # twice, silently.
    texts = ["ශ්‍රී ලංකා", "Cricket", "2024 🏏"]
    flat = meta.encode_batch_to_numpy(texts)
    assert meta.decode_batch(arrays.FlatIds(flat.ids, flat.offsets.astype(np.uint64))) == texts
    backwards = flat.offsets.copy()
    backwards[1], backwards[2] = backwards[2], backwards[1]
    with pytest.raises(TokenizerError, match="offsets go backwards at index 2"):
        meta.decode_batch(arrays.FlatIds(flat.ids, backwards.astype(np.uint64)))


# -- options -------------------------------------------------------------------------------


@pytest.mark.parametrize("cache_bytes", [-1, 2**70, True, 1.5, "256M", None])
def test_cache_bytes_is_checked_by_load_as_by_the_constructor(meta, sgpe, tmp_path, cache_bytes):
    # Checked before any file is read, not handed to the core after (OverflowError, TypeError, or
    # True taken as a one-byte cache); the constructor does not let 2**70 through to an OverflowError.
    meta.save(tmp_path / "m")
    message = r"cache_bytes must be an int in \[0, 2\*\*63\)"
    with pytest.raises(VocabError, match=message):
        MetaTokenizer.load(tmp_path / "m", tiktoken_file=O200K_FILE, cache_bytes=cache_bytes)
    with pytest.raises(VocabError, match=message):
        MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE, cache_bytes=cache_bytes)
    assert MetaTokenizer.load(tmp_path / "m", tiktoken_file=O200K_FILE, cache_bytes=0).encode(
        "ක"
    ) == meta.encode("ක")


# -- round trips, streams, threads ---------------------------------------------------------


@given(text=MIXED)
@settings(max_examples=300, deadline=None)
def test_a_stream_fed_one_id_at_a_time_gives_the_text_without_replacement_characters(meta, text):
    ids = meta.encode(text, disallowed_special=())
    assert meta.decode(ids) == text
    assert meta.encode_to_numpy(text, disallowed_special=()).tolist() == ids
    dec = StreamingDecoder(meta, errors="strict")
    parts = [dec.decode_token(i) for i in np.array(ids, dtype=np.uint32)]
    assert "".join(parts) + dec.flush() == text
    assert not any("\ufffd" in part for part in parts)


def test_a_stream_cut_inside_a_character_says_so_at_the_end_and_starts_again(meta):
    text = "ක🦙"
    ids = meta.encode(text)
    cut = len(ids) - 1  # o200k_base spells the llama in several tokens: the last one is missing
    dec = StreamingDecoder(meta, errors="strict")
    head = "".join(dec.decode_token(i) for i in ids[:cut])
    assert "\ufffd" not in head and dec.pending
    with pytest.raises(TokenizerError, match="not UTF-8"):
        dec.flush()
    assert dec.pending == b""
    assert "".join(dec.decode_token(i) for i in ids) + dec.flush() == text  # the decoder is reusable
    loose = StreamingDecoder(meta)
    assert "".join(loose.decode_token(i) for i in ids[:cut]) + loose.flush() == meta.decode(ids[:cut])


def test_one_tokenizer_on_many_threads_equals_one_thread(meta):
    lines = SAMPLE[:600] + [f"{line} Cricket {k} 🏏 नमस्ते" for k, line in enumerate(SAMPLE[:200])]
    want = [meta.encode(line) for line in lines]

    def work(k: int) -> list[tuple[int, list[int]]]:
        out = [(i, meta.encode(line)) for i, line in enumerate(lines) if i % 4 == k % 4]
        if k % 3 == 0:
            meta.clear_cache()  # another thread clearing the cache never changes an id
        return out

    with ThreadPoolExecutor(8) as pool:
        got = [pair for part in pool.map(work, range(16)) for pair in part]
    assert all(want[i] == ids for i, ids in got)
    assert meta.encode_batch(lines, num_threads=4) == want
    assert [part.tolist() for part in meta.encode_batch_to_numpy(lines, num_threads=4).split()] == want


# -- the router keeps syllables whole ------------------------------------------------------


@pytest.mark.filterwarnings("ignore::wwho.errors.ScriptWarning")  # mixed text, on purpose
@given(text=MIXED)
@example(text="\U0001f642\u093c\u200d\U0001f642")  # a run with no letter
@settings(max_examples=300, deadline=None)
def test_no_indic_syllable_straddles_a_run_boundary(text):
    # Every place where an Indic run meets other text is a syllable boundary of that run's
    # script, except where the Indic run starts with a sign that has no letter before it in
    # its own script (a vowel sign after "b"): the syllabifier then joins it to whatever came
    # before, which the router leaves to tiktoken. A run with no letter at all (a nukta and a
    # joiner between two emoji) holds no syllable of its script: the syllabifier joins it to
    # the text around it (there one grapheme cluster with the emoji, 🙂़\u200d🙂), and neither
    # of its ends is asked about.
    cuts, position = [], 0
    segments = segment(text, scripts=("sinhala", "devanagari"))
    for k, seg in enumerate(segments):
        start = position
        position += len(seg.text) + seg.has_leading_space
        if seg.is_indic and any(ch.isalpha() for ch in seg.text):
            if k + 1 < len(segments) and not segments[k + 1].is_indic:
                cuts.append((position, seg.script.value))
            if k and not segments[k - 1].is_indic and seg.text[0].isalpha():
                cuts.append((start, seg.script.value))
    for cut, script in cuts:
        ends, end = set(), 0
        for syllable in syllabify(text, script):
            end += len(syllable)
            ends.add(end)
        assert cut in ends, (text, cut, script)


def test_a_huge_number_in_the_meta_config_is_named_cut_short(tmp_path):
    # Printed whole, a 4,000-digit offset made a 4 kB error line.
    import json

    from wwho.errors import VocabError
    from wwho.export.meta_files import CONFIG_FILE, CONFIG_FORMAT, FORMAT_VERSION, read_meta_config

    path = tmp_path / CONFIG_FILE
    huge = "1" + "0" * 4000
    path.write_text(f'{{"format": {json.dumps(CONFIG_FORMAT)}, "format_version": {FORMAT_VERSION}, "offset": {huge}}}',
                    encoding="utf-8")
    with pytest.raises(VocabError, match="'offset' is 1000") as caught:
        read_meta_config(path)
    assert len(str(caught.value)) < 300
