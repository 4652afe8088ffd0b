"""Ingestion: each chunk mode, each sampling option and cap, determinism, errors.

Expected values come from small hand-made trees and hand-written byte strings; the
delimiter splitter is also checked against a naive whole-buffer splitter with
hypothesis, with tiny read blocks so that delimiters straddle block boundaries.
"""

from __future__ import annotations

import io
import os
import random
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.binary import ingest
from wwho.binary.config import ConfigError, parse_hex
from wwho.binary.ingest import count_windows, iter_windows
from wwho.binary.ingest_types import IngestOptions, IngestStats
from wwho.binary.walk import iter_files
from wwho.errors import CorpusError


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def windows_of(data: bytes, seed: int = 0, **opts) -> list[bytes]:
    return list(iter_windows(io.BytesIO(data), IngestOptions(**opts), random.Random(seed)))


# --- chunk modes -----------------------------------------------------------------------------------

def test_fixed_mode_cuts_consecutive_windows():
    assert windows_of(b"0123456789", window_bytes=4) == [b"0123", b"4567", b"89"]
    assert windows_of(b"0123", window_bytes=4) == [b"0123"]


def test_file_mode_gives_whole_files_and_counts_duplicates(tmp_path):
    write(tmp_path / "x" / "1", b"same content")
    write(tmp_path / "x" / "2", b"same content")
    write(tmp_path / "x" / "3", b"other" * 2000)
    counted = count_windows([tmp_path / "x"], options=IngestOptions(mode="file"))
    assert counted.counts == {b"same content": 2, b"other" * 2000: 1}


def test_identical_windows_are_aggregated(tmp_path):
    write(tmp_path / "f", b"abcd" * 5 + b"xy")
    counted = count_windows([tmp_path / "f"], options=IngestOptions(window_bytes=4))
    assert counted.counts == {b"abcd": 5, b"xy": 1}
    assert counted.stats.windows_seen == 6 and counted.stats.distinct == 2 and counted.total == 6


def test_random_mode_sizes_stay_in_range_and_concatenate_to_the_file():
    data = bytes(range(256)) * 800
    wins = windows_of(data, min_exp=3, max_exp=10, mode="random")
    assert b"".join(wins) == data
    assert all(8 <= len(w) <= 1024 for w in wins[:-1])
    sizes = {len(w) for w in wins[:-1]}
    assert min(sizes) < 64 and max(sizes) > 512  # log-uniform: both scales appear
    assert windows_of(data, min_exp=5, max_exp=5, mode="random") == windows_of(data, window_bytes=32)


def test_random_mode_is_seeded(tmp_path):
    write(tmp_path / "f", bytes(range(256)) * 200)
    one = count_windows([tmp_path / "f"], options=IngestOptions(mode="random", seed=1)).counts
    again = count_windows([tmp_path / "f"], options=IngestOptions(mode="random", seed=1)).counts
    other = count_windows([tmp_path / "f"], options=IngestOptions(mode="random", seed=2)).counts
    assert list(one.items()) == list(again.items())
    assert one != other


def test_a_files_random_windows_do_not_depend_on_other_files(tmp_path):
    write(tmp_path / "t" / "b", bytes(range(256)) * 100)
    alone = count_windows([tmp_path / "t"], options=IngestOptions(mode="random", seed=3)).counts
    write(tmp_path / "t" / "a", os.urandom(5000))
    write(tmp_path / "t" / "c", os.urandom(5000))
    together = count_windows([tmp_path / "t"], options=IngestOptions(mode="random", seed=3)).counts
    assert all(together[w] >= n for w, n in alone.items())


def test_delim_mode_ends_pieces_after_each_delimiter():
    assert windows_of(b"ab\ncd\n\nxyz", mode="delim", delimiter=b"\n") == [b"ab\n", b"cd\n", b"\n", b"xyz"]
    assert windows_of(b"a\r\nb\r\n", mode="delim", delimiter=b"\r\n") == [b"a\r\n", b"b\r\n"]
    # pieces longer than window_bytes are cut into window_bytes pieces, from the piece's start
    assert windows_of(b"abcdefg\nhi", mode="delim", delimiter=b"\n", window_bytes=3) == [
        b"abc", b"def", b"g\n", b"hi"]


def naive_delim(data: bytes, delim: bytes, limit: int) -> list[bytes]:
    out, start = [], 0
    while start < len(data):
        j = data.find(delim, start)
        end = len(data) if j < 0 else j + len(delim)
        out += [data[c:min(c + limit, end)] for c in range(start, end, limit)]
        start = end
    return out


@settings(max_examples=300, deadline=None)
@given(data=st.lists(st.sampled_from([b"a", b"b", b"ab", b"\n", b"ba"]), max_size=60).map(b"".join),
       delim=st.sampled_from([b"\n", b"ab", b"aab", b"ba\n"]), limit=st.integers(1, 9),
       block=st.integers(1, 7))
def test_delim_streaming_equals_whole_buffer_split(data, delim, limit, block):
    saved, ingest._BLOCK = ingest._BLOCK, block  # tiny reads: delimiters straddle block boundaries
    try:
        got = windows_of(data, mode="delim", delimiter=delim, window_bytes=limit)
    finally:
        ingest._BLOCK = saved
    assert got == naive_delim(data, delim, limit)


# --- sampling and caps -----------------------------------------------------------------------------

@pytest.fixture
def many(tmp_path: Path) -> Path:
    """Three files of 400, 100 and 5 distinct 8-byte windows."""
    for name, n in (("a", 400), ("b", 100), ("c", 5)):
        write(tmp_path / "many" / name, b"".join(f"{name}{i:07d}".encode() for i in range(n)))
    return tmp_path / "many"


def opts(**kw) -> IngestOptions:
    return IngestOptions(window_bytes=8, **kw)


def test_sample_rate_keeps_a_seeded_subset_of_about_that_fraction(many):
    full = count_windows([many], options=opts()).counts
    half = count_windows([many], options=opts(sample_rate=0.5, seed=4)).counts
    assert set(half) < set(full)
    assert 200 < sum(half.values()) < 310  # Binomial(505, 0.5); fixed seed, so not flaky
    assert count_windows([many], options=opts(sample_rate=0.5, seed=4)).counts == half
    assert count_windows([many], options=opts(sample_rate=0.5, seed=5)).counts != half


def test_max_docs_per_file_caps_each_file(many):
    counted = count_windows([many], options=opts(max_docs_per_file=20, seed=1))
    by_file = {name: sum(1 for w in counted.counts if w[:1] == name.encode()) for name in "abc"}
    assert by_file == {"a": 20, "b": 20, "c": 5}
    a_windows = [w for w in counted.counts if w.startswith(b"a")]
    assert a_windows == sorted(a_windows)  # kept in file order
    assert max(int(w[1:]) for w in a_windows) > 200  # a random sample, not the first 20


def test_max_docs_caps_the_total_with_a_uniform_sample(many):
    counted = count_windows([many], options=opts(max_docs=50, seed=2))
    assert counted.total == 50 and counted.stats.windows_seen == 505
    full = count_windows([many], options=opts()).counts
    assert set(counted.counts) <= set(full)
    assert {w[:1] for w in counted.counts} >= {b"a", b"b"}  # not just the first file


def test_caps_combine_in_the_documented_order(many):
    counted = count_windows([many], options=opts(sample_rate=0.5, max_docs_per_file=30, max_docs=40, seed=9))
    st_ = counted.stats
    assert st_.windows_seen == 505
    assert st_.windows_sampled <= 30 + 30 + 5
    assert counted.total == st_.windows_counted == 40


def test_same_seed_same_counts_in_the_same_order(many):
    o = opts(sample_rate=0.7, max_docs_per_file=50, max_docs=60, seed=11)
    assert list(count_windows([many], options=o).counts.items()) == list(count_windows([many], options=o).counts.items())


def test_memory_is_bounded_by_the_caps_not_the_input(tmp_path):
    big = write(tmp_path / "big.bin", random.Random(0).randbytes(8 << 20))
    tracemalloc.start()
    try:
        counted = count_windows([big], options=IngestOptions(max_docs=8, window_bytes=4096))
        _, capped_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        uncapped = count_windows([big], options=IngestOptions(window_bytes=4096))
        _, full_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert counted.total == 8 and uncapped.total == 2048
    assert capped_peak < 1 << 20  # 8 windows of 4 KiB and bookkeeping, not 8 MiB
    assert full_peak > 8 << 20  # the same measurement does see an uncapped corpus


# --- errors -----------------------------------------------------------------------------------------

def test_missing_input_is_a_corpus_error(tmp_path):
    with pytest.raises(CorpusError, match="nope.bin: no such file"):
        count_windows([tmp_path / "nope.bin"])


def test_unreadable_file_is_a_corpus_error(tmp_path, monkeypatch):
    secret = write(tmp_path / "d" / "secret.bin", b"data")
    secret.chmod(0)
    try:
        if os.access(secret, os.R_OK):  # running as root: simulate the refusal the kernel would give
            real_open = os.open

            def refuse(path, *args, **kwargs):
                if Path(path) == secret:
                    raise PermissionError(13, "Permission denied", str(path))
                return real_open(path, *args, **kwargs)

            monkeypatch.setattr(os, "open", refuse)
        with pytest.raises(CorpusError, match=r"secret.bin: cannot read: Permission denied"):
            count_windows([tmp_path / "d"])
    finally:
        secret.chmod(0o644)


def test_empty_corpus_is_a_corpus_error_saying_what_was_skipped(tmp_path):
    write(tmp_path / "e" / "empty", b"")
    write(tmp_path / "e" / ".git" / "x", b"x")
    with pytest.raises(CorpusError, match=r"no data to train on .*skipped: 1 empty, 1 hidden"):
        count_windows([tmp_path / "e"])
    with pytest.raises(CorpusError, match="no input paths"):
        count_windows([])


def test_delimiter_hex_parsing():
    assert parse_hex("0a", "--delimiter-hex") == b"\n"
    assert parse_hex("0x0D0A", "--delimiter-hex") == b"\r\n"
    assert parse_hex("0d 0a", "--delimiter-hex") == b"\r\n"
    for bad in ("zz", "0", "", "0x", 10):
        with pytest.raises(ConfigError, match="--delimiter-hex: expected hex bytes"):
            parse_hex(bad, "--delimiter-hex")


# --- properties -------------------------------------------------------------------------------------

@settings(max_examples=120, deadline=None)
@given(data=st.binary(max_size=3000), mode=st.sampled_from(["file", "fixed", "random", "delim"]),
       window=st.integers(1, 700), exps=st.tuples(st.integers(0, 9), st.integers(0, 9)),
       delim=st.binary(min_size=1, max_size=3), seed=st.integers(0, 2**32))
def test_windows_of_every_mode_concatenate_back_to_the_file(data, mode, window, exps, delim, seed):
    opts = dict(mode=mode, window_bytes=window, min_exp=min(exps), max_exp=max(exps),
                delimiter=delim if mode == "delim" else None)
    wins = windows_of(data, seed, **opts)
    assert b"".join(wins) == data and all(wins)
    assert windows_of(data, seed, **opts) == wins  # same rng seed, same windows
    if mode in ("fixed", "delim"):
        assert all(len(w) <= window for w in wins)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 400), min_size=1, max_size=5), rate=st.floats(0.05, 1.0),
       per_file=st.none() | st.integers(1, 30), total=st.none() | st.integers(1, 60), seed=st.integers(0, 99))
def test_sampling_keeps_a_bounded_sub_multiset_deterministically(tmp_path_factory, sizes, rate, per_file,
                                                                 total, seed):
    root = tmp_path_factory.mktemp("prop")
    for i, n in enumerate(sizes):
        (root / f"f{i}").write_bytes(b"".join(f"{i:02d}{j:06d}".encode() for j in range(n)))  # 8-byte windows
    full = count_windows([root], options=IngestOptions(window_bytes=8)).counts
    o = IngestOptions(window_bytes=8, sample_rate=rate, max_docs_per_file=per_file, max_docs=total, seed=seed)
    try:
        got = count_windows([root], options=o)
    except CorpusError:  # everything sampled away: only possible with a low rate
        assert rate < 1.0
        return
    assert all(full.get(w, 0) >= n for w, n in got.counts.items())
    if per_file is not None:
        for i in range(len(sizes)):
            assert sum(n for w, n in got.counts.items() if w[:2] == f"{i:02d}".encode()) <= per_file
    if total is not None:
        assert got.total <= total
    if rate == 1.0 and per_file is None and total is not None:
        assert got.total == min(total, sum(sizes))
    assert list(count_windows([root], options=o).counts.items()) == list(got.counts.items())


@given(n=st.integers(0, 200), k=st.integers(1, 50), seed=st.integers(0, 10))
def test_reservoir_sample_size_order_and_membership(n, k, seed):
    got = ingest.reservoir(range(n), k, random.Random(seed))
    assert len(got) == min(n, k) and got == sorted(set(got)) and all(0 <= x < n for x in got)


def test_a_file_replaced_by_a_fifo_after_listing_is_refused_not_waited_on(tmp_path, monkeypatch):
    # Listing refuses a FIFO; one put in a listed file's place before it is read blocked a plain
    # open() until a writer came, for ever. The alarm turns such a hang into a failure.
    import signal

    path = tmp_path / "a.bin"
    path.write_bytes(b"x" * 100)
    listed = list(iter_files([tmp_path], options=IngestOptions()))
    assert [p for p, _ in listed] == [path]
    path.unlink()
    os.mkfifo(path)

    def too_long(signum, frame):
        raise TimeoutError("blocked opening a FIFO")

    previous = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(10)
    try:
        with pytest.raises(CorpusError, match="a.bin: .*FIFO"):
            list(ingest._file_windows(*listed[0], IngestOptions(), IngestStats(), None))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- what the memory estimate saw bounds what is read ----------------------------------------------

def test_a_file_that_grew_after_the_estimate_is_read_only_up_to_its_estimated_size(tmp_path):
    """A file appended to between the estimate (its stat) and the read is not read to its new end,
    past the budget. Given the estimate's sizes, each file
    is read up to that size and the growth is said in one warning naming the file; a file that
    appeared after the estimate is not read."""
    from wwho.binary.budget import estimate
    from wwho.errors import WwhoWarning

    root = tmp_path / "d"
    write(root / "a.bin", bytes(range(64)) * 32)
    grows = write(root / "grows.bin", b"G" * 1000)
    options = IngestOptions(window_bytes=64)
    est = estimate([root], options)
    assert est.file_bytes == 2048 + 1000
    with open(grows, "ab") as f:  # written to after the estimate, as a log is
        f.write(b"X" * 50_000)
    write(root / "new.bin", b"N" * 5000)
    with pytest.warns(WwhoWarning) as said:
        counted = count_windows([root], options=options, sizes=est.sizes)
    assert counted.stats.bytes_read == est.file_bytes
    assert not any(b"X" in w or b"N" in w for w in counted.counts)
    messages = [str(w.message) for w in said]
    assert any(m.startswith(f"{grows}: grew after the memory estimate (1,000 bytes then, 51,000 when read); "
                            "only its first 1,000 bytes were read") for m in messages), messages
    assert any(m.startswith(f"{root / 'new.bin'}: appeared after the memory estimate; not read") for m in messages)
    assert counted.stats.skipped == {"appeared after the memory estimate": 1}


@pytest.mark.parametrize("mode", ["file", "fixed", "random", "delim"])
def test_every_mode_stops_at_the_estimated_size(tmp_path, mode):
    from wwho.binary.budget import estimate

    path = write(tmp_path / "f.bin", b"ab\n" * 3000)
    options = IngestOptions(mode=mode, window_bytes=100, delimiter=b"\n" if mode == "delim" else None)
    est = estimate([path], options)
    with open(path, "ab") as f:
        f.write(b"more\n" * 10_000)
    with pytest.warns(Warning, match="grew after the memory estimate"):
        counted = count_windows([path], options=options, sizes=est.sizes)
    assert counted.stats.bytes_read == 9000
    assert sum(len(w) * n for w, n in counted.counts.items()) == 9000


def test_a_file_removed_or_truncated_while_the_inputs_are_read_is_a_warning(tmp_path, monkeypatch):
    """A folder being written to, as tar takes one: a file listed and then removed before it is read
    stopped the whole run (``cannot access: No such file or directory``, after every other file was
    read), and one truncated after the estimate was read short without a word. Both are now one
    warning naming the file, and the rest is trained on."""
    from wwho.binary.budget import estimate
    from wwho.errors import WwhoWarning

    root = tmp_path / "d"
    write(root / "a.bin", bytes(range(64)) * 32)
    shrinks = write(root / "shrinks.bin", b"S" * 1000)
    gone = write(root / "z.bin", b"Z" * 500)
    options = IngestOptions(window_bytes=64)
    est = estimate([root], options)
    os.truncate(shrinks, 300)
    real = ingest.open_regular

    def removed_first(path, **kwargs):  # (removed between the listing and the open)
        if Path(path) == gone:
            gone.unlink()
        return real(path, **kwargs)

    monkeypatch.setattr(ingest, "open_regular", removed_first)
    with pytest.warns(WwhoWarning) as said:
        counted = count_windows([root], options=options, sizes=est.sizes)
    assert counted.stats.bytes_read == 2048 + 300
    messages = [str(w.message) for w in said]
    assert f"{shrinks}: shrank after the memory estimate (1,000 bytes then); only the 300 left were read" in messages
    assert f"{gone}: removed while the inputs were read; not read" in messages
    assert counted.stats.skipped == {"removed while read": 1}


@pytest.mark.parametrize("mode", ["file", "fixed", "random", "delim"])
def test_a_file_read_as_estimated_is_not_warned_of_in_any_mode(tmp_path, mode):
    import warnings

    from wwho.binary.budget import estimate

    path = write(tmp_path / "f.bin", b"ab\n" * 3000)
    options = IngestOptions(mode=mode, window_bytes=100, delimiter=b"\n" if mode == "delim" else None,
                            max_docs_per_file=5)
    est = estimate([path], options)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counted = count_windows([path], options=options, sizes=est.sizes)
    assert counted.stats.bytes_read == 9000 and not counted.stats.shrunk


def test_file_mode_samples_a_file_before_reading_it(tmp_path):
    """--mode file does not read each file whole and then sample it: whether a file is kept is drawn
    before it is opened (the same draw, so the same files are kept); a file sampled out is never
    read."""
    root = tmp_path / "d"
    for i in range(40):
        write(root / f"f{i:02}.bin", bytes([i]) * (100 + i))
    options = IngestOptions(mode="file", sample_rate=0.3, seed=5)
    kept = [f"f{i:02}.bin" for i in range(40) if ingest._rng(options, "keep", f"f{i:02}.bin").random() < 0.3]
    assert 0 < len(kept) < 40
    counted = count_windows([root], options=options)
    assert list(counted.counts) == [(root / name).read_bytes() for name in kept]
    st = counted.stats
    assert st.files == len(kept) and st.bytes_read == sum((root / name).stat().st_size for name in kept)
    assert (st.windows_seen, st.windows_sampled) == (40, len(kept))


def test_a_sample_that_keeps_nothing_says_the_sample_rate_did(tmp_path):
    """Not "no data to train on in d (2 files read; skipped: nothing)", with nothing about the
    sampling that dropped every window."""
    root = tmp_path / "d"
    write(root / "a.bin", b"a" * 100)
    write(root / "b.bin", b"b" * 100)
    for mode in ("file", "fixed"):
        with pytest.raises(ingest.NothingSampledError) as info:
            count_windows([root], options=IngestOptions(mode=mode, sample_rate=1e-9))
        assert str(info.value) == f"no data to train on in {root}: sample_rate 1e-09 kept none of its 2 windows; " \
                                  "raise sample_rate"
        assert isinstance(info.value, CorpusError)


def test_options_are_keyword_only(tmp_path):
    """The data positional, the options keyword-only: ``IngestOptions("random", 4096)`` took its twelve
    fields by position, and ``count_windows(paths, options)`` a second positional argument."""
    (tmp_path / "f").write_bytes(b"x" * 64)
    with pytest.raises(TypeError):
        IngestOptions("random", 4096)
    for call in (count_windows, iter_files, ingest.iter_sampled):
        with pytest.raises(TypeError):
            list(call([tmp_path], IngestOptions()))
    assert count_windows([tmp_path], options=IngestOptions(window_bytes=8)).counts == {b"x" * 8: 8}
