"""Warm batches of wwho and fastokens alternated in one process, many times: the peer table's
closest cell, measured with less noise.

    FASTOKENS_BPE_THREADS=1 RAYON_NUM_THREADS=1 python benchmarks/bench_warm_ab.py [--runs 30]

What: ``ByteBPE.encode_batch_to_numpy(num_threads=1)`` and fastokens' ``encode_batch_flat`` over
round 0 of ``bench_peers.py``'s English lines (1.34 MB of held-out news, fresh ``str`` copies
for every call, as that benchmark makes), after one cold pass each, alternated ``--runs`` times
(the order flips every run), CPU time of the process. Prints each one's median and best MB/s and
the ratio of the medians. Both objects live in one process, as in ``bench_peers.py``, so each
pass runs after the other's has used the CPU's caches.

It does not check ids (``bench_peers.py`` does, on the same lines) or time anything else.
"""

from __future__ import annotations

import argparse
import statistics
import time

from _measure import need, require
from bench_peers import CORPUS, O200K_FILE, fast_flat, fresh, round_lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    require(O200K_FILE, CORPUS["en"])  # the shared data's o200k_base ranks and English news
    fastokens = need("fastokens")
    import wwho

    lines = round_lines("en", 4.0, 3, 0)
    mb = sum(len(line.encode("utf-8")) for line in lines) / 1e6
    ours = wwho.ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
    theirs = fastokens.Tokenizer.from_tiktoken(str(O200K_FILE), encoding="o200k_base")
    calls = {
        "wwho encode_batch_to_numpy": lambda texts: ours.encode_batch_to_numpy(texts, num_threads=1),
        "fastokens encode_batch_flat": lambda texts: fast_flat(theirs, texts, 1),
    }
    for call in calls.values():  # the cold pass
        call(fresh(lines))
    rates: dict[str, list[float]] = {name: [] for name in calls}
    for run in range(args.runs):
        for name in list(calls) if run % 2 == 0 else list(calls)[::-1]:
            texts = fresh(lines)
            start = time.process_time()
            calls[name](texts)
            rates[name].append(mb / (time.process_time() - start))
    for name, values in rates.items():
        print(f"{name:32} median {statistics.median(values):6.1f} MB/s, best {max(values):6.1f}")
    ours_median, theirs_median = (statistics.median(v) for v in rates.values())
    print(f"wwho / fastokens, medians: x{ours_median / theirs_median:.2f} ({args.runs} runs, {mb:.2f} MB each)")


if __name__ == "__main__":
    main()
