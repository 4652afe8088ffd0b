"""Shared test helpers: where the real data lives, and skipping cleanly when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: ../shared/data next to the repository (CI clones the repo beside shared/).
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CORPORA = DATA / "corpora"
#: The verified o200k_base ranks file (tiktoken's own download, kept offline).
O200K_FILE = DATA / "tiktoken" / "o200k_base.tiktoken"
#: Set WWHO_FULL_CORPORA=1 to run corpus tests on whole files instead of slices.
FULL = os.environ.get("WWHO_FULL_CORPORA") == "1"


def corpus_files(*langs: str) -> list[Path]:
    if not CORPORA.is_dir():
        return []
    return sorted(p for lang in langs for p in (CORPORA / lang).glob("*.txt"))


def require_data(path: Path = DATA) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared data folder is needed for this test")
    return path


def read_slice(path: Path, max_bytes: int = 1_500_000) -> str:
    """The whole file, or its first ``max_bytes`` (cut at a line end) unless WWHO_FULL_CORPORA=1."""
    with open(path, encoding="utf-8") as f:
        if FULL:
            return f.read()
        text = f.read(max_bytes)
        rest = f.readline()
    return text + rest


# --- trained SGPE tokenizers shared by the SGPE and export tests -------------------------

TRAIN = {
    "sinhala": [("si", "news-bbcsinhala.txt")],
    "devanagari": [("hi", "tico19-test.txt"), ("mr", "tico19-test.txt")],
    "mixed": [("si", "news-bbcsinhala.txt"), ("hi", "tico19-test.txt")],
}
EVAL = {"sinhala": ("si", "si-en"), "devanagari": ("hi", "mr", "ne", "sa", "hi-en"), "mixed": ("si-en", "hi-en")}


@pytest.fixture(scope="session")
def tokenizers(tmp_path_factory):
    """An SGPE tokenizer per script mode, vocabulary 4000, trained on slices of the shared corpora."""
    from wwho.sgpe import SGPETokenizer, train_sgpe

    if not CORPORA.is_dir():
        pytest.skip(f"{CORPORA} is absent")
    out = {}
    for script, files in TRAIN.items():
        path = tmp_path_factory.mktemp(script) / "train.txt"
        path.write_text("".join(read_slice(CORPORA / d / f, 400_000) for d, f in files), encoding="utf-8")
        out[script] = SGPETokenizer(train_sgpe(path, vocab_size=4000, script=script, progress=False, workers=1))
    return out


#: SGPE options other than the defaults (merge scope "pieces", superwords 0.15, no dummy prefix), each trained
#: once on a mixed Sinhala + Hindi slice, for the tests that must hold for every option (export, lossless, ...).
VARIANTS = {
    "words": {"merge_scope": "words", "superword_share": 0},
    "runs": {"merge_scope": "runs", "superword_share": 0},
    "pieces": {"superword_share": 0},
    "prefix": {"prefix_space": True},
    "words-superwords-prefix": {"merge_scope": "words", "prefix_space": True, "prune_freq": 3},
}


@pytest.fixture(scope="session")
def variants(tmp_path_factory):
    """name -> SGPE tokenizer (script mode "mixed", vocabulary 3000) trained with VARIANTS[name]."""
    from wwho.sgpe import SGPETokenizer, train_sgpe

    if not CORPORA.is_dir():
        pytest.skip(f"{CORPORA} is absent")
    path = tmp_path_factory.mktemp("variants") / "train.txt"
    path.write_text(read_slice(CORPORA / "si" / "news-bbcsinhala.txt", 250_000)
                    + read_slice(CORPORA / "hi" / "tico19-test.txt", 150_000), encoding="utf-8")
    return {name: SGPETokenizer(train_sgpe(path, vocab_size=3000, script="mixed", progress=False, workers=1,
                                           **options))
            for name, options in VARIANTS.items()}


@pytest.fixture(scope="session")
def o200k():
    """tiktoken's o200k_base, loaded offline from the shared ranks file."""
    from wwho.bytelevel.tiktoken_loader import get_encoding

    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    return get_encoding("o200k_base", ranks_file=O200K_FILE)
