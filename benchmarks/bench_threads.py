"""``encode_batch`` from 1 thread to every core: how far each tokenizer's batches scale.

    python benchmarks/bench_threads.py [--threads 1 2 4 8 16] [--mb 0] [--peer-mb 20] [--repeat 2]
                                       [--vocab DIR] [--text FILE]

One batch, the lines of the four Sinhala news files (84.6 MB; ``--text`` reads another file,
``.xz`` allowed; ``--mb`` keeps the first MB of it), encoded by:

* SGPE (``--vocab``, default the 32,000-token Sinhala model of ``bench_languages.py``) and
  ``ByteBPE`` o200k_base (offline from the shared ranks file), each as lists
  (``encode_batch``) and as arrays (``encode_batch_to_numpy``: one uint32 array and offsets);
* for scale, on the first ``--peer-mb`` MB only (they are 10-20 times slower): tiktoken's
  ``encode_ordinary_batch`` and HF ``tokenizers`` ``encode_batch`` on the SGPE model's own
  ``tokenizer.json`` (its thread count set by ``RAYON_NUM_THREADS`` in a fresh process each).

Each tokenizer is warmed by one pass over its batch first (so every thread count sees the same
caches: this is the warm figure), then ``--repeat`` rounds run every thread count once each, and
each count's best wall time is kept (rounds, so that a drift in the machine's speed moves every
count alike); MB/s and the speed-up over 1 thread are printed. Arrays are checked equal to the
lists, and every thread count's ids to 1 thread's, each result turned into arrays outside the
timed call: the lists of a batch kept alive would be walked by every full collection of
Python's garbage collector during the next one. Wall time is what it measures: run it on a
machine with nothing else running (the load average is printed).
"""

from __future__ import annotations

import argparse
import lzma
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS threads would spin beside us

import numpy as np
from _measure import CORPORA, O200K_FILE, ROOT, machine, o200k, require, size_label

MB = 1e6
NEWS = sorted((CORPORA / "si").glob("news-*.txt"))


def read_lines(paths: list[Path], limit_mb: float) -> list[str]:
    text = "".join(
        (lzma.open(p, "rt", encoding="utf-8") if p.suffix == ".xz" else p.open(encoding="utf-8")).read()
        for p in paths
    )
    lines = text.splitlines()
    if limit_mb:
        out, size = [], 0
        for line in lines:
            size += len(line.encode()) + 1
            if size > limit_mb * MB:
                break
            out.append(line)
        lines = out
    return lines


def same(a, b) -> bool:
    """Two batch results, as (ids, offsets) arrays, hold the same ids."""
    return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def flat(result):
    """A batch result as (ids, offsets) arrays: lists of lists kept as such would make every
    collection of Python's cyclic garbage collector during the timed calls walk them."""
    if isinstance(result, tuple):
        return result
    lengths = np.fromiter((len(x) for x in result), dtype=np.int64, count=len(result))
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    ids = np.fromiter((i for x in result for i in x), dtype=np.uint32, count=int(offsets[-1]))
    return ids, offsets


def scale(name: str, run, lines: list[str], threads: list[int], repeat: int, reference=None):
    """Each thread count's best wall time over ``repeat`` rounds; returns the warm-up pass's ids
    as (ids, offsets) arrays (see :func:`flat`)."""
    mb = sum(len(line.encode("utf-8", "surrogatepass")) + 1 for line in lines) / MB
    want = flat(run(threads[0]))  # the warm-up pass
    if reference is not None and not same(want, reference):
        raise SystemExit(f"{name}: arrays differ from the lists")
    # Rounds over every thread count, not each count's runs in a row: a machine whose speed
    # drifts (a shared host, boost clocks) then shifts every count alike, not the ratios.
    best = dict.fromkeys(threads, float("inf"))
    for _ in range(repeat):
        for n in threads:
            t0 = time.perf_counter()
            got = run(n)
            best[n] = min(best[n], time.perf_counter() - t0)
            got = flat(got)
            if not same(got, want):
                raise SystemExit(f"{name}: {n} threads gave other ids than {threads[0]}")
            del got
    base = best[threads[0]]
    cells = [f"{n:>2}t {mb / best[n]:7.1f} MB/s x{base / best[n]:5.2f}" for n in threads]
    print(f"  {name:30s} {mb:5.1f} MB | " + " | ".join(cells), flush=True)
    return want


HF_JOB = """
import json, sys, time
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1])
lines = open(sys.argv[2], encoding="utf-8").read().splitlines()
tok.encode_batch(lines, add_special_tokens=False)
best = min(
    (lambda t0: (tok.encode_batch(lines, add_special_tokens=False), time.perf_counter() - t0)[1])(time.perf_counter())
    for _ in range(int(sys.argv[3]))
)
print(best)
"""


def hf_scale(tokenizer_json: Path, lines: list[str], threads: list[int], repeat: int) -> None:
    """HF ``tokenizers`` reads its thread count once per process: one fresh process per count."""
    path = ROOT / ".cache" / "bench_threads" / "peer-lines.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    mb = sum(len(line.encode()) + 1 for line in lines) / MB
    cells, base = [], None
    for n in threads:
        env = {**os.environ, "RAYON_NUM_THREADS": str(n), "TOKENIZERS_PARALLELISM": "true"}
        out = subprocess.run(
            [sys.executable, "-c", HF_JOB, str(tokenizer_json), str(path), str(repeat)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        seconds = float(out.stdout.split()[-1])
        base = base or seconds
        cells.append(f"{n:>2}t {mb / seconds:7.1f} MB/s x{base / seconds:5.2f}")
    print(f"  {'HF tokenizers (SGPE export)':30s} {mb:5.1f} MB | " + " | ".join(cells), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2, 4, 8, 16])
    ap.add_argument("--text", type=Path, nargs="*", default=NEWS)
    ap.add_argument("--mb", type=float, default=0, help="keep the first MB of the text (0: all of it)")
    ap.add_argument("--peer-mb", type=float, default=20, help="MB for tiktoken and HF (0: skip them)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--vocab", type=Path, default=ROOT / ".cache" / "bench_languages" / "si-sgpe-32000")
    args = ap.parse_args()
    require(O200K_FILE, *([CORPORA / "si" / "news-*.txt"] if args.text == NEWS else []))  # the shared data's
    if not args.text or not all(p.is_file() for p in args.text):
        sys.exit(f"no text to encode (the Sinhala news under {CORPORA / 'si'}, or --text FILE)")
    if not (args.vocab / "vocab.json").is_file():
        sys.exit(f"{args.vocab}: no SGPE vocabulary (run bench_languages.py, or pass --vocab)")
    from wwho.bytelevel import ByteBPE
    from wwho.sgpe import SGPETokenizer

    lines = read_lines(args.text, args.mb)
    print(f"machine: {machine()}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the start")
    print(
        f"encode_batch, one batch of {len(lines):,} lines, warm, best of {args.repeat} (wall time):",
        flush=True,
    )
    sgpe = SGPETokenizer.load(args.vocab)
    ours = ByteBPE.from_tiktoken(O200K_FILE)
    for label, tok, as_lists in (
        (f"SGPE {size_label(sgpe.vocab_size)}", sgpe, sgpe.encode_batch),  # --vocab's own size
        ("ByteBPE o200k", ours, ours.encode_ordinary_batch),
    ):
        lists = scale(
            f"{label}, lists", lambda n, f=as_lists: f(lines, num_threads=n), lines, args.threads, args.repeat
        )
        scale(
            f"{label}, arrays",
            lambda n, t=tok: t.encode_batch_to_numpy(lines, num_threads=n),
            lines,
            args.threads,
            args.repeat,
            reference=lists,
        )
        del lists
    if args.peer_mb:
        few = read_lines(args.text, args.peer_mb)
        enc = o200k()
        scale(
            "tiktoken o200k, lists",
            lambda n: enc.encode_ordinary_batch(few, num_threads=n),
            few,
            args.threads,
            1,
        )
        hf_scale(args.vocab / "tokenizer.json", few, args.threads, 1)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
