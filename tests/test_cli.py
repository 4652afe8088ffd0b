"""The generic verbs on every file kind: inspect shows what users need to see; errors are one line."""

from __future__ import annotations

import pytest
from conftest import DATA, O200K_FILE

from wwho.cli import main

GGUF = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"


@pytest.mark.skipif(not GGUF.is_file(), reason=f"{GGUF} is absent")
def test_inspect_gguf_shows_model_pretokenizer_merges_specials(capsys):
    assert main(["inspect", str(GGUF), "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "llama-bpe" in out and "n_vocab 128,256" in out
    assert "pre-tokenizer: llama-bpe" in out
    assert "merge rule: 280,147 merges" in out
    assert "<|begin_of_text|>=128000" in out and "bos 128000 (add: True)" in out


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_inspect_and_encode_a_tiktoken_file(capsys):
    assert main(["inspect", str(O200K_FILE)]) == 0
    assert "ranks (tiktoken)" in capsys.readouterr().out
    assert main(["encode", "--tokenizer", str(O200K_FILE), "hello world"]) == 0
    assert capsys.readouterr().out.split() == ["24912", "2375"]  # tiktoken's ids for it


def test_errors_are_one_line_with_exit_code_2(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wwho: error:") and err.count("\n") == 1
    assert main(["train", "--kind", "nope"]) == 2
    assert "unknown --kind 'nope'" in capsys.readouterr().err
