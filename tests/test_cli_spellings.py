"""One tokenizer, one meaning, whatever its spelling: ``o200k_base`` and ``tiktoken:o200k_base``
work in every verb, and an official ranks file is known by its content, not its name. The real
``wwho`` command, offline (the ranks file given by ``WWHO_TIKTOKEN_FILE``)."""

from __future__ import annotations

import os

import pytest
from conftest import O200K_FILE, one_line_error, run_wwho

pytestmark = pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")

HELLO_IDS = ["24912", "2375"]  # tiktoken's o200k_base ids for "hello world"


def offline() -> dict:
    return {**os.environ, "WWHO_TIKTOKEN_FILE": str(O200K_FILE)}


@pytest.mark.parametrize("spec", ["o200k_base", "tiktoken:o200k_base"])
def test_encode_decode_inspect_take_both_spellings(spec):
    encoded = run_wwho("encode", "--tokenizer", spec, "hello world", env=offline())
    assert encoded.returncode == 0, encoded.stderr
    assert encoded.stdout.split() == HELLO_IDS
    decoded = run_wwho("decode", "--tokenizer", spec, *HELLO_IDS, env=offline())
    assert decoded.returncode == 0 and decoded.stdout == "hello world\n", decoded.stderr
    shown = run_wwho("inspect", spec, env=offline())
    assert shown.returncode == 0 and "o200k_base" in shown.stdout, shown.stderr


@pytest.mark.parametrize("spec", ["o200k_base", "tiktoken:o200k_base"])
def test_eval_takes_both_spellings(spec, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\nශ්‍රී ලංකාව\n", encoding="utf-8")
    proc = run_wwho("eval", "--corpus", corpus, "--tokenizer", spec, "--json", "--quiet", env=offline())
    assert proc.returncode == 0, proc.stderr
    import json

    (result,) = json.loads(proc.stdout)["results"]
    assert result["tokenizer"] == "tiktoken:o200k_base" and result["lines"] == 2


def test_an_unknown_tiktoken_name_says_which_are_known():
    line = one_line_error(run_wwho("encode", "--tokenizer", "tiktoken:p99k_base", "x", env=offline()))
    assert "tiktoken:p99k_base" in line and "o200k_base" in line
    line = one_line_error(run_wwho("encode", "--tokenizer", "p99k_base", "x", env=offline()))
    assert "no such file or directory, nor a known encoding" in line


def test_a_renamed_official_file_is_known_by_its_content(tmp_path):
    renamed = tmp_path / "my.tiktoken"
    os.symlink(O200K_FILE, renamed)  # same bytes, another name
    proc = run_wwho("encode", "--tokenizer", renamed, "hello world")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == HELLO_IDS
    shown = run_wwho("inspect", renamed)
    assert shown.returncode == 0 and "byte-level BPE o200k_base" in shown.stdout, shown.stdout


def test_a_renamed_file_in_python_gets_the_encodings_specials(tmp_path):
    from wwho.bytelevel import ByteBPE

    renamed = tmp_path / "ranks.bin.tiktoken"
    os.symlink(O200K_FILE, renamed)
    tok = ByteBPE.from_tiktoken(renamed)
    assert tok.name == "o200k_base" and tok.special_tokens["<|endoftext|>"] == 199999
