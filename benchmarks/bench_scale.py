"""Counting throughput: the local path against Ray with 1 and 2 worker CPUs, on the Sinhala news.

Usage: ``python benchmarks/bench_scale.py [--bytelevel] [--shard-bytes 16M]``

What is timed: counting only (the merge loop runs on the driver either way and is the same
code). The four news files (84.6 MB) are read once before timing, so every run reads from the
page cache (warm file cache; each count starts from a fresh counter). For Ray, a local instance
with N CPUs is started first; its start-up is printed apart and not in the counting time; a
task's worker process start-up is in it. Printed: seconds, MB/s, the ratio to the local run with
one worker, the distinct pieces, and the driver's memory (RSS after counting minus before, and
the total's own size where known). Every Ray total is checked equal to the local one.

The machine may be shared: treat the numbers as indicative; run it twice.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import CORPORA, machine, need, require, skip  # noqa: E402

from wwho.corpus import iter_documents  # noqa: E402
from wwho.counting import count_corpus  # noqa: E402
from wwho.sizes import arg_type, check_range  # noqa: E402

FILES = sorted((CORPORA / "si").glob("news-*.txt"))
#: ``--shard-bytes``: a size (16M, 4096, 64k), refused by argparse in one line otherwise.
SHARD_BYTES = arg_type(lambda v, w: check_range(v, w, 1, 2**50), "--shard-bytes", size=True)


def rss_mb() -> float:
    return need("psutil", "test").Process().memory_info().rss / 1e6


def run(label, fn, total_bytes, base=None):
    before = rss_mb()
    t0 = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - t0
    grew = rss_mb() - before
    ratio = "" if base is None else f"{base / seconds:5.2f}x"
    print(f"  {label:<28} {seconds:7.2f} s {total_bytes / 1e6 / seconds:7.1f} MB/s {ratio:>7}  "
          f"driver RSS +{grew:6.0f} MB")
    return result, seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bytelevel", action="store_true", help="also byte-level BPE (gpt4 pattern; slow)")
    ap.add_argument("--shard-bytes", type=SHARD_BYTES, default="16M", metavar="BYTES",
                    help="bytes per Ray shard, k/M/G suffixes allowed (default 16M)")
    args = ap.parse_args()
    require(CORPORA / "si" / "news-*.txt")
    if len(FILES) != 4:
        skip(f"{len(FILES)} Sinhala news files under {CORPORA / 'si'}, not the 4 of the shared data")
    ray = need("ray", "ray")

    from wwho.scale.ray_counter import count_on_ray
    from wwho.scale.shards import CountOptions, plan_shards

    shard_bytes = args.shard_bytes
    size = sum(p.stat().st_size for p in FILES)
    for p in FILES:  # warm the page cache
        p.read_bytes()
    shards = plan_shards(FILES, shard_bytes=shard_bytes)
    print(f"{machine()}\ncorpus: {len(FILES)} Sinhala news files, {size / 1e6:.1f} MB; "
          f"{len(shards)} shards of about {shard_bytes / 2**20:.0f} MiB; ray {ray.__version__}")

    kinds = ["sgpe"] + (["bytelevel"] if args.bytelevel else [])
    for kind in kinds:
        print(f"\n{kind}: counting")
        if kind == "sgpe":
            def local(w):
                return lambda: count_corpus(FILES, workers=w, progress=False)
            options = CountOptions("sgpe")
        else:
            from wwho.bytelevel.pretokenize import Pretokenizer
            from wwho.bytelevel.train import count_bytelevel

            pattern = Pretokenizer.coerce("gpt4").patterns[0]

            def local(w):
                return lambda: count_bytelevel(iter_documents(FILES), pattern=pattern, specials=[], workers=w,  # noqa: B023
                                               progress=False)
            options = CountOptions("bytelevel", pattern=pattern, count_documents=count_bytelevel)
        want, base = run("local, 1 worker", local(1), size)
        distinct = len(want)
        run("local, 2 workers", local(2), size, base)
        want_items = dict(want.items()) if kind == "sgpe" else want
        for cpus in (1, 2):
            t0 = time.perf_counter()
            ray.init(num_cpus=cpus, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
            started = time.perf_counter() - t0
            try:
                got, _ = run(f"ray, {cpus} CPU{'s' if cpus > 1 else ''} (start {started:.1f} s)",
                             lambda: count_on_ray(shards, options, total_bytes=size, progress=False), size, base)  # noqa: B023
            finally:
                ray.shutdown()
            same = (dict(got.items()) if kind == "sgpe" else got) == want_items
            print(f"    equal to the local counts: {same}")
            if not same:
                return 1
        print(f"  distinct pieces: {distinct:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
