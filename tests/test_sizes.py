"""Sizes are checked before anything is allocated (wwho.sizes), in the library, TOML and the real CLI.

Before, ``wwho train --kind binary ... --vocab-size 1G`` (or ``"999T"`` in a TOML config) aborted
the process inside HF's trainer (exit 134), a huge ``--workers`` forked that many processes,
and ``--vocab-size ١٢`` was read as 12.
"""

from __future__ import annotations

import pytest
from cli_run import one_line_error, wwho

from wwho.sizes import MAX_VOCAB_SIZE, SizeError, check_range, parse_int, parse_size


@pytest.mark.parametrize("text, value", [("4096", 4096), (" 4k ", 4096), ("16MiB", 16 << 20), ("1G", 1 << 30),
                                         ("2t", 2 << 40), (7, 7)])
def test_parse_size(text, value):
    assert parse_size(text, "x") == value


@pytest.mark.parametrize("text", ["١٢", "１２", "4x", "", "-1", "1.5k", True, None, 2.0])
def test_parse_size_takes_ascii_digits_only(text):
    with pytest.raises(SizeError, match="expected a size"):
        parse_size(text, "--window-bytes")


@pytest.mark.parametrize("text", ["١٢", "１２", "1_000", "", True, 1.0])
def test_parse_int_takes_ascii_digits_only(text):
    with pytest.raises(SizeError, match="expected an integer"):
        parse_int(text, "--seed")


def test_range_errors_name_the_option_and_the_range():
    with pytest.raises(SizeError, match=r"vocab_size must be an integer from 1 to 16,777,216, got 1073741824"):
        check_range(1 << 30, "vocab_size", 1, MAX_VOCAB_SIZE)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sizes")
    (folder / "c.txt").write_text("ශ්‍රී ලංකාව hello world\n" * 50, encoding="utf-8")
    (folder / "blob.bin").write_bytes(bytes(range(256)) * 64)
    return folder


@pytest.mark.parametrize("flag, value, message", [
    ("--vocab-size", "1G", "--vocab-size must be an integer from 256 to 16,777,216, got 1073741824"),
    ("--vocab-size", "1", "--vocab-size must be an integer from 256 to 16,777,216, got 1"),  # one range both ways
    ("--vocab-size", "999T", "got 1098412116148224"),
    ("--window-bytes", "999T", "--window-bytes must be an integer from 1 to 16,777,216"),
    ("--max-exp", "40", "--max-exp must be an integer from 0 to 24"),
    ("--reserve", "1000000000000", "--reserve must be an integer from 0 to 16,777,216"),
    ("--threads", "100000", "--threads must be an integer from 1 to 1,024"),
    ("--vocab-size", "١٢", "expected a size"),
])
def test_binary_sizes_fail_before_any_allocation(corpus, tmp_path, flag, value, message):
    proc = wwho("train", "--kind", "binary", corpus / "blob.bin", "-o", tmp_path / "t.json", flag, value)
    assert message in one_line_error(proc)  # not exit 134 from inside HF's trainer
    assert not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("key, value, message", [
    ("vocab_size", '"999T"', "key 'vocab_size' must be an integer from 256 to 16,777,216"),
    ("vocab_size", "1099511627776", "key 'vocab_size' must be an integer from 256 to 16,777,216"),
    ("vocab_size", "1", "key 'vocab_size' must be an integer from 256 to 16,777,216"),
    ("window_bytes", '"1G"', "key 'window_bytes' must be an integer from 1 to 16,777,216"),
    ("max_docs", '"١٢"', "expected an integer"),
])
def test_binary_toml_sizes_fail_before_any_allocation(corpus, tmp_path, key, value, message):
    config = tmp_path / "config.toml"
    config.write_text(f'inputs = ["{corpus / "blob.bin"}"]\noutput = "t.json"\n{key} = {value}\n', encoding="utf-8")
    proc = wwho("train", "--kind", "binary", "--config", config)
    assert message in one_line_error(proc)
    assert not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel"])
@pytest.mark.parametrize("flag, value, message", [
    ("--vocab-size", "1000000000000", "must be an integer from 1 to 16,777,216"),
    ("--vocab-size", "١٢", "expected a size such as 32000 or 32k"),  # ASCII digits; a count, not bytes
    ("--workers", "1000000", "must be an integer from 1 to 1,024"),
    ("--min-freq", "0", "must be an integer from 1 to"),
    ("--max-line-bytes", "2T", "--max-line-bytes must be an integer from 1 to 1,099,511,627,776"),
])
def test_text_trainer_sizes_fail_before_reading_the_corpus(corpus, tmp_path, kind, flag, value, message):
    proc = wwho("train", "--kind", kind, corpus / "c.txt", "--out", tmp_path / "out", "--quiet", flag, value)
    assert message in one_line_error(proc)
    assert not (tmp_path / "out").exists()


def test_library_trainers_check_sizes_first(corpus):
    from wwho.bytelevel.train import train_bytelevel
    from wwho.sgpe import train_sgpe

    for train in (train_sgpe, train_bytelevel):
        with pytest.raises(SizeError, match="from .* to 16,777,216"):
            train(corpus / "c.txt", vocab_size=10**12, progress=False)
        with pytest.raises(SizeError, match="workers"):
            train(corpus / "c.txt", vocab_size=1000, workers=10**6, progress=False)
