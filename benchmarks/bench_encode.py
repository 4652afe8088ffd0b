"""Encoding speed on held-out Sinhala: wwho SGPE vs tiktoken o200k_base vs HF tokenizers, one run.

    python benchmarks/bench_encode.py [--vocab DIR] [FILES...]

The SGPE vocabulary is the 32k one trained on the Sinhala news by bench_train.py
(.cache/bench_train/wwho-32000; trained here if missing). Held-out text (not in the news):
si/wikipedia-floresv1.txt, si/ntrex128-newstest2019.txt, si/flores200-devtest.txt.
Single-thread MB/s (UTF-8 bytes, 10^6) for each encoder on the same lines (best of 3, cold
cache for wwho's first pass reported too), plus HF tokenizers running wwho's exported
tokenizer.json with encode_batch on 2 threads.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from _measure import CORPORA, ROOT, machine, o200k

HELD_OUT = ["wikipedia-floresv1.txt", "ntrex128-newstest2019.txt", "flores200-devtest.txt"]


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), times[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--vocab", type=Path, default=ROOT / ".cache" / "bench_train" / "si-wwho-32000")
    args = ap.parse_args()
    files = args.files or [CORPORA / "si" / f for f in HELD_OUT]
    files = [f for f in files if f.exists()]
    if not files:
        sys.exit("no input")
    from wwho.sgpe import SGPETokenizer

    if not (args.vocab / "vocab.json").exists():
        print(f"training the 32k vocabulary into {args.vocab} (run bench_train.py to time it)")
        news = sorted(str(p) for p in (CORPORA / "si").glob("news-*.txt"))
        SGPETokenizer.train(news, vocab_size=32_000, progress=False).save(args.vocab)
    lines = [l for f in files for l in f.read_text(encoding="utf-8").splitlines()]
    mb = sum(len(l.encode()) for l in lines) / 1e6
    print(f"machine: {machine()}")
    print(f"input: {', '.join(f.name for f in files)}: {len(lines):,} lines, {mb:.1f} MB (held out: not in training)")

    tok = SGPETokenizer.load(args.vocab)
    enc = o200k()
    os.environ.setdefault("RAYON_NUM_THREADS", "2")
    from tokenizers import Tokenizer

    hf = Tokenizer.from_file(str(args.vocab / "tokenizer.json"))
    rows = []
    seconds, cold = best(lambda: [tok.encode(l) for l in lines])
    rows.append(("wwho SGPE (native, 1 thread)", seconds, cold))
    seconds, _ = best(lambda: [enc.encode_ordinary(l) for l in lines])
    rows.append(("tiktoken o200k_base (1 thread)", seconds, None))
    seconds, _ = best(lambda: enc.encode_ordinary_batch(lines, num_threads=2))
    rows.append(("tiktoken o200k_base (encode_batch, 2 threads)", seconds, None))
    seconds, _ = best(lambda: [hf.encode(l, add_special_tokens=False) for l in lines])
    rows.append(("HF tokenizers, wwho's tokenizer.json (1 thread)", seconds, None))
    seconds, _ = best(lambda: hf.encode_batch(lines, add_special_tokens=False))
    rows.append(("HF tokenizers, wwho's tokenizer.json (batch, 2 thr)", seconds, None))
    base = rows[1][1]
    print(f"\n{'encoder':52} {'MB/s':>7} {'vs tiktoken 1 thread':>21}")
    for name, seconds, cold in rows:
        extra = f"   (first pass, empty cache: {mb / cold:.1f} MB/s)" if cold else ""
        print(f"{name:52} {mb / seconds:7.2f} {base / seconds:21.2f}{extra}")
    same = sum(hf.encode(l, add_special_tokens=False).ids == tok.encode(l, allowed_special="all") for l in lines)
    print(f"\nHF ids identical to native on {same:,} of {len(lines):,} lines")


if __name__ == "__main__":
    main()
