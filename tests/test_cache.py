"""Caches bounded in bytes (wwho.cache), and every encoder's memory held to its ``cache_bytes``.

The memory figures are the resident set of a fresh interpreter (``tests/memory.py``), not
the caches' own estimates, so an estimate that undercounts would fail here.
"""

from __future__ import annotations

import pytest
from conftest import DATA, O200K_FILE
from memory import MB, measure

from wwho.cache import MAX_CACHED_KEY, PieceCache, entry_size

GGUF = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"


def test_a_piece_cache_stays_within_its_bytes_and_keeps_the_recent_half():
    cache = PieceCache(50_000)
    for i in range(5_000):
        key = f"piece {i}"
        cache.put(key, [i, i + 1, i + 2])
        assert cache.nbytes <= 50_000
        assert cache.get(key) == [i, i + 1, i + 2]  # the newest entry is always kept
    assert 0 < len(cache) < 5_000
    assert cache.nbytes == sum(entry_size(k, v) for k, v in cache.data.items())
    assert "piece 4999" in cache and "piece 0" not in cache


def test_long_keys_and_oversized_entries_are_not_cached():
    cache = PieceCache(10_000)
    long_key = "ශ" * (MAX_CACHED_KEY + 1)
    assert cache.put(long_key, [1]) == [1] and long_key not in cache
    assert cache.put("x" * MAX_CACHED_KEY, [2]) == [2] and len(cache) == 1
    assert cache.put("big", list(range(5_000))) and "big" not in cache  # larger than the whole bound
    off = PieceCache(0)
    off.put("a", [1])
    assert len(off) == 0 and off.nbytes == 0
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0


@pytest.mark.parametrize("bad", [-1, 1.5, "256M", True, None])
def test_cache_bytes_must_be_a_non_negative_int(bad):
    with pytest.raises(ValueError, match="cache_bytes"):
        PieceCache(bad)


# --- every encoder, measured -------------------------------------------------------------

#: Distinct random Sinhala pieces (consonant + sign syllables), built in the measured process.
PIECES = """
import random
_rng = random.Random({seed})
_cons = [chr(c) for c in range(0x0D9A, 0x0DC7)]
_signs = ["", "ා", "ි", "ු", "ෙ", "්"]
pieces = [" " + "".join(_rng.choice(_cons) + _rng.choice(_signs) for _ in range({size}))[:{size}]
          for _ in range({count})]
"""
WORK = """
for p in pieces:
    tok.encode(p)
"""


@pytest.fixture(scope="module")
def sgpe_dir(tokenizers, tmp_path_factory):
    path = tmp_path_factory.mktemp("sgpe-cache")
    tokenizers["sinhala"].save(path)
    return path


def _load(kind: str, sgpe_dir, cache_bytes: str = "") -> str:
    option = f", cache_bytes={cache_bytes}" if cache_bytes else ""
    if kind == "sgpe":  # the compiled SGPE encoder keeps no cache: nothing to bound
        return f"from wwho.sgpe import SGPETokenizer\ntok = SGPETokenizer.load({str(sgpe_dir)!r})\n"
    if kind == "meta":
        return (f"from wwho.meta import MetaTokenizer\nfrom wwho.sgpe import SGPETokenizer\n"
                f"tok = MetaTokenizer(SGPETokenizer.load({str(sgpe_dir)!r}), 'o200k_base', "
                f"tiktoken_file={str(O200K_FILE)!r}{option})\n")
    if kind == "o200k":
        return (f"from wwho.bytelevel import ByteBPE\n"
                f"tok = ByteBPE.from_tiktoken('o200k_base', tiktoken_file={str(O200K_FILE)!r}{option})\n")
    return f"from wwho.bytelevel import ByteBPE\ntok = ByteBPE.from_gguf({str(GGUF)!r}{option})\n"


def _need(kind: str) -> None:
    path = {"meta": O200K_FILE, "o200k": O200K_FILE, "llama": GGUF}.get(kind)
    if path is not None and not path.exists():
        pytest.skip(f"{path} is absent")


@pytest.mark.parametrize("kind", ["sgpe", "meta", "o200k"])
def test_an_encoder_holds_no_more_than_its_cache_bytes(kind, sgpe_dir):
    """12,000 distinct 100-character pieces, which are cached: with a cache_bytes of 2 MiB an encoder
    grows by a few MB at most, however many pieces it has seen."""
    _need(kind)
    setup = _load(kind, sgpe_dir, "2 * 2**20") + "tok.encode('warm up ශ්‍රී ලංකා')\n"
    _, growth = measure(setup + PIECES.format(seed=1, size=100, count=12_000), WORK)
    print(f"{kind}: {growth / MB:.1f} MB above the loaded tokenizer")
    bound = {"sgpe": 5, "meta": 7, "o200k": 6}[kind]  # meta: its run cache, 2 MiB
    assert growth < bound * MB, f"{kind}: {growth / MB:.1f} MB"


@pytest.mark.parametrize("kind", ["sgpe", "meta"])
def test_long_distinct_pieces_do_not_grow_an_encoder(kind, sgpe_dir):
    """The issue's scenario, with default options: 2,000 distinct 2,000-character Sinhala pieces
    (cached, they would grow the meta tokenizer by gigabytes). Pieces that long are never cached."""
    _need(kind)
    setup = _load(kind, sgpe_dir) + "tok.encode('warm up ශ්‍රී ලංකා')\n"
    _, growth = measure(setup + PIECES.format(seed=2, size=2_000, count=2_000), WORK)
    print(f"{kind}: {growth / MB:.1f} MB above the loaded tokenizer")
    assert growth < 8 * MB, f"{kind}: {growth / MB:.1f} MB"  # (cached, they would take tens of MB)
