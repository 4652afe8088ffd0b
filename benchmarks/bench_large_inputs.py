"""10 MB of pathological input through every tokenizer kind: encode time and peak memory, cold.

    python benchmarks/bench_large_inputs.py [--only KIND ...]

The text (as ``tests/test_large_inputs.py``): a run of 1,050,000 spaces (tiktoken's regex
overflows from about a million), a 1,000,000-letter piece, then Sinhala and English news to
10,000,000 bytes; and 10,000,000 spaces alone, the worst case for a merge in Python (one
piece, ten million merges). The binary kind gets 10 MB of structured bytes. Each job runs in
a fresh process (a fresh tokenizer: cold caches); the peak is the whole process's resident
set, sampled, minus nothing (so it includes the loaded tokenizer). Peers on the same input:
tiktoken (o200k_base), Hugging Face ``tokenizers`` running the exported llama-bpe
``tokenizer.json``, and HF on the whole binary data (what ``encode_bytes`` did before).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _measure import CORPORA, DATA, O200K_FILE, measure

GGUF = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"

TEXT = f"""
def _news(path, size):
    with open(path, encoding="utf-8") as f:
        return f.read(size)
head = "word " + " " * 1_050_000 + "word " + "a" * 1_000_000 + " ශ්‍රී ලංකා\\n"
filler = (_news({str(CORPORA / "si" / "news-bbcsinhala.txt")!r}, 3_000_000)
          + _news({str(CORPORA / "en" / "news-lk_news.txt")!r}, 1_000_000)).encode()
mixed = head + filler[: 10_000_000 - len(head.encode())].decode("utf-8", "ignore")
spaces = " " * 10_000_000
text = {{"mixed": mixed, "spaces": spaces}}[INPUT]
"""

BINARY = """
import random
from wwho import binary
from wwho.binary.mapping import encode_bytes
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
"""

TIMED = """
import time
t0 = time.perf_counter()
try:
    n = len(ENCODE)
    outcome = f"{{n:,}} ids"
except BaseException as exc:  # tiktoken's PanicException is a BaseException
    outcome = type(exc).__name__
print(f"{{time.perf_counter() - t0:.1f}}\\t{{outcome}}")
"""


def loaders(sgpe_dir: Path, hf_json: Path) -> dict[str, tuple[str, str]]:
    """kind -> (code that makes ``tok``, the expression timed)."""
    o200k = f"tiktoken_file={str(O200K_FILE)!r}"
    return {
        "SGPE": (f"from wwho.sgpe import SGPETokenizer\ntok = SGPETokenizer.load({str(sgpe_dir)!r})", "tok.encode(text)"),
        "meta (o200k + SGPE)": ((f"from wwho.meta import MetaTokenizer\nfrom wwho.sgpe import SGPETokenizer\n"
                                 f"tok = MetaTokenizer(SGPETokenizer.load({str(sgpe_dir)!r}), 'o200k_base', {o200k})\n"
                                 "tok.encode('warm up')"), "tok.encode(text)"),
        "peer: tiktoken o200k_base": (("from wwho.bytelevel.tiktoken_loader import get_encoding\n"
                                       f"tok = get_encoding('o200k_base', tiktoken_file={str(O200K_FILE)!r})"),
                                      "tok.encode_ordinary(text)"),
        "ByteBPE o200k_base": (("from wwho.bytelevel import ByteBPE\n"
                                f"tok = ByteBPE.from_tiktoken('o200k_base', tiktoken_file={str(O200K_FILE)!r})"),
                               "tok.encode_ordinary(text)"),
        "ByteBPE llama-bpe (GGUF)": (f"from wwho.bytelevel import ByteBPE\ntok = ByteBPE.from_gguf({str(GGUF)!r})",
                                     "tok.encode_ordinary(text)"),
        "peer: HF tokenizers llama-bpe": (f"from tokenizers import Tokenizer\ntok = Tokenizer.from_file({str(hf_json)!r})",
                                          "tok.encode(text, add_special_tokens=False).ids"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="substrings of the kinds to run")
    args = parser.parse_args()
    for path in (CORPORA, O200K_FILE, GGUF):
        if not path.exists():
            print(f"skipped: {path} is absent")
            return 0
    from wwho.bytelevel import ByteBPE
    from wwho.sgpe import SGPETokenizer

    work = Path(tempfile.mkdtemp(prefix="wwho-bench-large-"))
    sample = work / "train.txt"
    with open(CORPORA / "si" / "news-bbcsinhala.txt", encoding="utf-8") as f:
        sample.write_text(f.read(1_000_000), encoding="utf-8")
    SGPETokenizer.train([sample], vocab_size=4000, progress=False, workers=1).save(work / "sgpe")
    ByteBPE.from_gguf(GGUF).export_hf(work / "llama.json")

    print("kind | input | encode s | peak RSS MB | outcome")
    print("---|---|---:|---:|---")
    for kind, (load, expr) in loaders(work / "sgpe", work / "llama.json").items():
        if args.only and not any(o.lower() in kind.lower() for o in args.only):
            continue
        for name in ("mixed", "spaces"):
            code = load + f"\nINPUT = {name!r}\n" + TEXT + TIMED.format().replace("ENCODE", expr)
            _, peak, out = measure(code)
            took, outcome = out.strip().splitlines()[-1].split("\t")
            print(f"{kind} | {name} 10 MB | {took} | {peak:.0f} | {outcome}", flush=True)
    for kind, expr in (("binary (encode_bytes, in pieces)", "encode_bytes(tok, data).ids"),
                       ("peer: HF on the whole binary data", "tok.encode(data.decode('latin-1')).ids")):
        if args.only and not any(o.lower() in kind.lower() for o in args.only):
            continue
        _, peak, out = measure(BINARY + TIMED.format().replace("ENCODE", expr))
        took, outcome = out.strip().splitlines()[-1].split("\t")
        print(f"{kind} | structured bytes 10 MB | {took} | {peak:.0f} | {outcome}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
