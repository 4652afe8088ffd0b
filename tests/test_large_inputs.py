"""No input crashes an encode: 10 MB of pathological text through every tokenizer kind.

The text holds what can break or bloat the encoders: a run of 1,050,000 spaces (tiktoken's
regex overflows from about a million, and PanicException is a BaseException), a
1,000,000-letter piece (a Python object per byte would make the byte-level merge's memory
many times the input's), and real Sinhala and English news to fill 10 MB. Each kind runs
in a fresh interpreter (``tests/memory.py``), which reports the peak memory above what
the loaded tokenizer already held. Checked: no exception, ``decode(encode(text)) == text``,
ids equal to a reference we did not write where one exists (HF ``tokenizers`` on the
exported ``tokenizer.json``, on the pathological head and the news after it; for the meta tokenizer, tiktoken's ids on Latin text are checked
in ``test_safe_tiktoken.py`` and here against wwho's own o200k encoder), and the peak memory
under a bound of the same order as the input (the figures are in docs/reliability.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPORA, DATA, O200K_FILE
from memory import MB, measure

GGUF = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
TESTS = Path(__file__).parent

#: Builds the 10 MB text in the measured process (not passed through argv: it is 10 MB).
TEXT = f"""
def _news(path, size):
    with open(path, encoding="utf-8") as f:
        return f.read(size)
head = "word " + " " * 1_050_000 + "word " + "a" * 1_000_000 + " ශ්‍රී ලංකා\\n"
filler = (_news({str(CORPORA / "si" / "news-bbcsinhala.txt")!r}, 3_000_000)
          + _news({str(CORPORA / "en" / "news-lk_news.txt")!r}, 1_000_000)).encode()
text = head + filler[: 10_000_000 - len(head.encode())].decode("utf-8", "ignore")
assert 9_999_990 <= len(text.encode()) <= 10_000_000, len(text.encode())
"""
#: Checks run after the measured encode (their memory is not counted).
CHECK = """
assert tok.decode(ids) == text
"""
#: The reference's part of the text: the pathological head and the first 300,000 characters of news
#: after it (HF ``tokenizers`` takes seconds a megabyte on Sinhala news; the rest is more of the same).
REFERENCE_PART = "part = text[: len(head) + 300_000]\n"


def _need(*paths: Path) -> None:
    for p in paths:
        if not p.exists():
            pytest.skip(f"{p} is absent: the shared data folder is needed for this test")


@pytest.fixture(scope="module")
def sgpe_dir(tokenizers, tmp_path_factory):
    path = tmp_path_factory.mktemp("sgpe10mb")
    tokenizers["sinhala"].save(path)
    return path


def _run(setup: str, check: str = CHECK) -> tuple[object, int]:
    work = """
ids = tok.encode(text) if not hasattr(tok, "encode_ordinary") else tok.encode_ordinary(text)
"""
    result, growth = measure(setup + TEXT, work, check + "\nresult = len(ids)\n", cwd=TESTS)
    print(f"peak memory above the loaded tokenizer: {growth / MB:.0f} MB")
    return result, growth


def test_sgpe_10mb(sgpe_dir):
    _need(CORPORA)
    ids, growth = _run(f"""
from wwho.sgpe import SGPETokenizer
tok = SGPETokenizer.load({str(sgpe_dir)!r})
""", CHECK + REFERENCE_PART + f"""
from tokenizers import Tokenizer
hf = Tokenizer.from_file({str(sgpe_dir / "tokenizer.json")!r})
assert hf.encode(part, add_special_tokens=False).ids == tok.encode(part)  # the exact HF export is the reference
""")
    assert ids > 0
    assert growth < 160 * MB, f"{growth / MB:.0f} MB"  # (figures: docs/reliability.md)


def test_meta_10mb(sgpe_dir):
    _need(CORPORA, O200K_FILE)
    ids, growth = _run(f"""
from wwho.meta import MetaTokenizer
from wwho.sgpe import SGPETokenizer
tok = MetaTokenizer(SGPETokenizer.load({str(sgpe_dir)!r}), "o200k_base", tiktoken_file={str(O200K_FILE)!r})
tok.encode_ordinary("warm up: tiktoken and the ranks table ශ්‍රී")
""")
    assert ids > 0
    assert growth < 250 * MB, f"{growth / MB:.0f} MB"  # (figures: docs/reliability.md)


def test_meta_equals_wwhos_o200k_encoder_on_latin_text_past_tiktokens_limit(sgpe_dir):
    """No Indic character: the meta tokenizer's ids are o200k_base's, here beyond where tiktoken crashes."""
    _need(O200K_FILE)
    from wwho.bytelevel import ByteBPE
    from wwho.meta import MetaTokenizer
    from wwho.sgpe import SGPETokenizer

    meta = MetaTokenizer(SGPETokenizer.load(sgpe_dir), "o200k_base", tiktoken_file=O200K_FILE)
    o200k = ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
    text = "Colombo, 2024: " + " \u3000" * 525_000 + "done.\n" + "\t" * 20 + "end"
    assert meta.encode_ordinary(text) == o200k.encode_ordinary(text)


@pytest.mark.parametrize("name", ["o200k", "llama-bpe"])
def test_bytelevel_10mb(name, tmp_path):
    _need(CORPORA, O200K_FILE if name == "o200k" else GGUF)
    load = (f"ByteBPE.from_tiktoken('o200k_base', tiktoken_file={str(O200K_FILE)!r})" if name == "o200k"
            else f"ByteBPE.from_gguf({str(GGUF)!r})")
    check = CHECK
    if name == "llama-bpe":  # HF tokenizers on the exported tokenizer.json is the reference
        check += REFERENCE_PART + f"""
tok.export_hf({str(tmp_path / "tokenizer.json")!r})
from tokenizers import Tokenizer
hf = Tokenizer.from_file({str(tmp_path / "tokenizer.json")!r})
assert hf.encode(part, add_special_tokens=False).ids == tok.encode_ordinary(part)
"""
    ids, growth = _run(f"""
from wwho.bytelevel import ByteBPE
tok = {load}
""", check)
    assert ids > 0
    bound = {"o200k": 240, "llama-bpe": 320}[name]  # (figures: docs/reliability.md)
    assert growth < bound * MB, f"{growth / MB:.0f} MB"


def test_binary_10mb(tmp_path):
    """10 MB of structured bytes (frequent words, runs, noise)."""
    ids, growth = measure("""
import random
from wwho import binary
from wwho.binary.mapping import decode_to_bytes, encode_bytes
rng = random.Random(7)
words = [bytes(rng.randrange(256) for _ in range(rng.randrange(2, 9))) for _ in range(60)]
def sample(n):
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) if rng.random() < 0.8 else bytes([rng.randrange(256)]) * rng.randrange(1, 40)
    return bytes(out[:n])
train = sample(300_000)
counts = {}
for i in range(0, len(train), 512):
    counts[train[i:i + 512]] = counts.get(train[i:i + 512], 0) + 1
tok = binary.train_from_counts(counts, vocab_size=2048, min_frequency=2)
data = sample(9_000_000) + bytes(1_000_000)
""", """
enc = encode_bytes(tok, data)
""", """
assert decode_to_bytes(tok, enc.ids) == data
assert b"".join(enc.tokens) == data
result = len(enc.ids)
""", cwd=TESTS)
    print(f"peak memory above the loaded tokenizer: {growth / MB:.0f} MB")
    assert ids > 0
    # The result itself (ids, token bytes, offsets: Python objects) is most of it.
    assert growth < 600 * MB, f"{growth / MB:.0f} MB"  # (figures: docs/reliability.md)

