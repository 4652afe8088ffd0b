"""The tokenizers ``wwho serve`` offers (``serve/tokenizers.py``): loading errors, and the names
that tell two files of one name apart."""

from __future__ import annotations

import pytest
from conftest import DATA

from wwho.errors import VocabError
from wwho.serve.tokenizers import load_tokenizers

LLAMA3 = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"


def test_load_tokenizers_errors(tmp_path):
    with pytest.raises(VocabError, match="given twice"):
        load_tokenizers(["tiktoken:o200k_base", "tiktoken:o200k_base"])
    with pytest.raises(VocabError, match="no such file"):
        load_tokenizers([str(tmp_path / "missing")])


def test_names_are_short_and_two_files_of_one_name_are_told_apart_by_folder(tmp_path):
    if not LLAMA3.is_file():
        pytest.skip(f"{LLAMA3} is absent")
    for folder in ("a", "b"):
        (tmp_path / folder / "x").mkdir(parents=True)
        (tmp_path / folder / "x" / "llama.gguf").symlink_to(LLAMA3)
    specs = [str(LLAMA3), str(tmp_path / "a" / "x" / "llama.gguf"), str(tmp_path / "b" / "x" / "llama.gguf"),
             f"{tmp_path}/a/./x/llama.gguf"]
    assert [t.name for t in load_tokenizers(specs)] == [LLAMA3.name, "a/x/llama.gguf (1)", "b/x/llama.gguf",
                                                        "a/x/llama.gguf (2)"]
