"""Time the BPE merge engine alone on real word types, as SGPE (syllable ids) or byte-level BPE feeds it.

SGPE input (default): Sinhala news (``si/news-bbcsinhala.txt``; ``--all-news`` for the 84.6 MB of
``si/news-*.txt``) split on spaces; each distinct chunk is syllabified once with a leading space
(``wwho.syllabify(" " + chunk, leading_space=True)``) and grouped with
``wwho.words.segment_into_words``; word types are counted with ``collections.Counter``;
syllables rarer than ``--prune-freq`` become UNK; syllable ids in sorted order; tie-break
"smaller". (Real SGPE counting leaves the first word of a line without its leading space; that
does not change the shape of what the engine sees.)

Byte-level input (``--bytes``): the same files cut by the GPT-2 pre-tokenizer pattern, word types
as UTF-8 bytes over the 256 byte symbols; tie-break "greater".

Input preparation is timed apart and is not the engine's. Printed: input size, engine init (pair
counting and index), the merge loop (merges/s), ``symbol_frequencies``, the RSS the engine adds.
The engine is the compiled core's (``rust/src/engine/``); ``--reference`` also times the
pure-Python engine it replaced (``tests/reference/engine.py``) on the same input and checks that
both make the same merges; ``--profile`` shows the top functions of that Python loop. The whole-training
comparison with HF tokenizers and SentencePiece is ``bench_train.py``.

    .venv/bin/python benchmarks/bench_engine.py [--all-news] [--bytes] [--merges N] [--repeat N] [--profile]
    .venv/bin/python benchmarks/bench_engine.py --bytes "${WWHO_SHARED_DATA:-../shared/data}"/corpora/*/*.txt   # 132 MB, 55 files
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import gc
import pstats
import sys
import time
import warnings
from pathlib import Path

import regex

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the Python reference engine
from _measure import CORPORA, require  # noqa: E402

import wwho  # noqa: E402
from wwho.bpe import UNK, MergeEngine  # noqa: E402
from wwho.errors import ScriptWarning  # noqa: E402
from wwho.words import segment_into_words  # noqa: E402

DATA = CORPORA / "si"
GPT2 = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def syllable_word_types(files: list[Path], prune_freq: int) -> tuple[list[list[int]], list[int], list[str]]:
    chunks: collections.Counter[str] = collections.Counter()
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                chunks.update(line.rstrip("\n").split(" "))
    words: collections.Counter[tuple[str, ...]] = collections.Counter()
    with warnings.catch_warnings():  # (the news's Latin chunks: a ScriptWarning each, as the trainer meets them too)
        warnings.simplefilter("ignore", ScriptWarning)
        for chunk, n in chunks.items():
            for word in segment_into_words(wwho.syllabify(" " + chunk, leading_space=True)):
                words[tuple(word)] += n
    syllables: collections.Counter[str] = collections.Counter()
    for word, n in words.items():
        for s in word:
            syllables[s] += n
    symbols = sorted(s for s, n in syllables.items() if n >= prune_freq)
    ids = {s: i for i, s in enumerate(symbols)}
    return [[ids.get(s, UNK) for s in word] for word in words], list(words.values()), symbols


def byte_word_types(files: list[Path]) -> tuple[list[list[int]], list[int], list[bytes]]:
    words: collections.Counter[str] = collections.Counter()
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                words.update(GPT2.findall(line))
    return [list(w.encode()) for w in words], list(words.values()), [bytes([i]) for i in range(256)]


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="corpus files (default: si/news-bbcsinhala.txt)")
    parser.add_argument("--all-news", action="store_true", help="use all si/news-*.txt (84.6 MB)")
    parser.add_argument("--bytes", action="store_true", help="byte-level input (GPT-2 pre-tokenizer)")
    parser.add_argument("--merges", type=int, default=30_000, help="merge budget (new symbols)")
    parser.add_argument("--min-freq", type=int, default=2)
    parser.add_argument("--prune-freq", type=int, default=1, help="SGPE: rarer syllables become UNK")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the fastest is reported")
    parser.add_argument("--reference", action="store_true", help="also time the pure-Python reference engine")
    parser.add_argument("--profile", action="store_true", help="the reference engine's loop under cProfile")
    args = parser.parse_args()

    if not args.files:  # the shared data's
        require(DATA / ("news-*.txt" if args.all_news else "news-bbcsinhala.txt"))
    files = args.files or (sorted(DATA.glob("news-*.txt")) if args.all_news else [DATA / "news-bbcsinhala.txt"])
    if not all(f.exists() for f in files):
        raise SystemExit(f"corpus not found: {[str(f) for f in files if not f.exists()]}")
    mb = sum(f.stat().st_size for f in files) / 1e6

    t0 = time.perf_counter()
    if args.bytes:
        words, counts, symbols = byte_word_types(files)
        tie_break = "greater"
    else:
        words, counts, symbols = syllable_word_types(files, args.prune_freq)
        tie_break = "smaller"
    t_prep = time.perf_counter() - t0
    n_occ = sum(map(len, words))
    n_unk = sum(w.count(UNK) for w in words)
    unit = "bytes" if args.bytes else "syllables"
    names = ", ".join(f.name for f in files) if len(files) <= 4 else f"{len(files)} files"
    print(f"corpus: {names} ({mb:.1f} MB), {unit}")
    print(
        f"input: {len(words):,} word types, {n_occ:,} symbol occurrences ({n_unk:,} UNK), "
        f"{len(symbols):,} symbols; prepared in {t_prep:.2f} s (not the engine's time)"
    )

    max_symbols = len(symbols) + args.merges
    runs = []
    for _ in range(args.repeat):
        gc.collect()
        rss0 = rss_mb()
        t0 = time.perf_counter()
        engine = MergeEngine(words, counts, symbols, tie_break=tie_break)
        t1 = time.perf_counter()
        engine.train(max_symbols=max_symbols, min_freq=args.min_freq, progress=False)
        t2 = time.perf_counter()
        engine.symbol_frequencies()
        t3 = time.perf_counter()
        runs.append((t3 - t0, t1 - t0, t2 - t1, t3 - t2, rss_mb() - rss0, len(engine.merges)))
        del engine
    total, t_init, t_train, t_freq, _, n = min(runs)
    rss = runs[0][4]  # later runs reuse memory the first one freed
    print(f"engine ({tie_break}), fastest of {len(runs)} runs (all totals: "
          f"{', '.join(f'{r[0]:.2f}' for r in runs)} s):")
    print(f"  init (copy, count pairs, index): {t_init:7.3f} s")
    print(f"  merge loop:                      {t_train:7.3f} s  {n:,} merges = {n / t_train:,.0f} merges/s")
    print(f"  symbol_frequencies:              {t_freq:7.3f} s")
    print(f"  total:                           {total:7.3f} s")
    print(f"  RSS added by the engine (first run): {rss:.0f} MB")

    if args.reference or args.profile:
        from reference.engine import MergeEngine as ReferenceEngine

        t0 = time.perf_counter()
        python = ReferenceEngine(words, counts, symbols, tie_break=tie_break)
        python.train(max_symbols=max_symbols, min_freq=args.min_freq, progress=False)
        seconds = time.perf_counter() - t0
        core = MergeEngine(words, counts, symbols, tie_break=tie_break)
        core.train(max_symbols=max_symbols, min_freq=args.min_freq, progress=False)
        same = core.merges == python.merges and core.symbols == python.symbols
        print(f"pure-Python reference engine (init + loop): {seconds:.3f} s = {seconds / total:.1f}x the core's; "
              f"same merges: {same}")

    if args.profile:
        from reference.engine import MergeEngine as ReferenceEngine

        engine = ReferenceEngine(words, counts, symbols, tie_break=tie_break)
        profiler = cProfile.Profile()
        profiler.enable()
        engine.train(max_symbols=max_symbols, min_freq=args.min_freq, progress=False)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
