"""Time the BPE merge engine alone on real Sinhala word types (syllable ids), as SGPE feeds it.

Input: the Sinhala news (default ``si/news-bbcsinhala.txt``; ``--all-news`` for the 84.6 MB of
``si/news-*.txt``), split on spaces; each distinct chunk is syllabified once with a leading space
(``wwho.syllabify(" " + chunk, leading_space=True)``) and grouped with
``wwho.words.segment_into_words``; word types are counted with ``collections.Counter``, syllables
with frequency < ``--prune-freq`` become UNK, and syllables get ids in sorted order. (Real SGPE
counting leaves the first word of a line without its leading space; this does not change the
shape of the input the engine sees.) Input preparation is timed separately and is not the engine's.

Prints: input size, engine construction time (pair counting, index, heap), the merge loop's
merges/s, ``symbol_frequencies`` time, and with ``--profile`` the top functions by cProfile.
Peer numbers for whole training (HF tokenizers, SentencePiece) are in ``bench_train.py``.

    .venv/bin/python benchmarks/bench_engine.py [--all-news] [--merges 30000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import collections
import pstats
import time
from pathlib import Path

import wwho
from wwho.bpe import UNK, MergeEngine
from wwho.words import segment_into_words

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpora" / "si"


def word_types(files: list[Path], prune_freq: int) -> tuple[list[list[int]], list[int], list[str]]:
    chunks: collections.Counter[str] = collections.Counter()
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                chunks.update(line.rstrip("\n").split(" "))
    words: collections.Counter[tuple[str, ...]] = collections.Counter()
    for chunk, n in chunks.items():
        for word in segment_into_words(wwho.syllabify(" " + chunk, leading_space=True)):
            words[tuple(word)] += n
    syllables: collections.Counter[str] = collections.Counter()
    for word, n in words.items():
        for s in word:
            syllables[s] += n
    symbols = sorted(s for s, n in syllables.items() if n >= prune_freq)
    ids = {s: i for i, s in enumerate(symbols)}
    id_words = [[ids.get(s, UNK) for s in word] for word in words]
    return id_words, list(words.values()), symbols


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all-news", action="store_true", help="use all si/news-*.txt (84.6 MB)")
    parser.add_argument("--merges", type=int, default=30_000, help="merge budget (new symbols)")
    parser.add_argument("--min-freq", type=int, default=2)
    parser.add_argument("--prune-freq", type=int, default=1, help="syllables rarer than this become UNK")
    parser.add_argument("--tie-break", choices=["smaller", "greater"], default="smaller")
    parser.add_argument("--profile", action="store_true", help="run the merge loop under cProfile")
    args = parser.parse_args()

    files = sorted(DATA.glob("news-*.txt")) if args.all_news else [DATA / "news-bbcsinhala.txt"]
    if not all(f.exists() for f in files):
        raise SystemExit(f"corpus not found under {DATA}")
    mb = sum(f.stat().st_size for f in files) / 1e6

    t0 = time.perf_counter()
    words, counts, symbols = word_types(files, args.prune_freq)
    t_prep = time.perf_counter() - t0
    n_occ = sum(map(len, words))
    n_unk = sum(w.count(UNK) for w in words)
    print(f"corpus: {', '.join(f.name for f in files)} ({mb:.1f} MB)")
    print(
        f"input: {len(words):,} word types, {n_occ:,} symbol occurrences ({n_unk:,} UNK), "
        f"{len(symbols):,} symbols; prepared in {t_prep:.2f} s (not the engine's time)"
    )

    t0 = time.perf_counter()
    engine = MergeEngine(words, counts, symbols, tie_break=args.tie_break)
    t_init = time.perf_counter() - t0
    print(f"engine init (count pairs, index, heap): {t_init:.3f} s, {len(engine.pair_counts()):,} pairs")

    max_symbols = len(symbols) + args.merges
    profiler = cProfile.Profile() if args.profile else None
    t0 = time.perf_counter()
    if profiler:
        profiler.enable()
    engine.train(max_symbols=max_symbols, min_freq=args.min_freq, progress=False)
    if profiler:
        profiler.disable()
    t_train = time.perf_counter() - t0
    n = len(engine.merges)
    print(
        f"merge loop: {n:,} merges ({len(engine.symbols) - len(symbols):,} new symbols) in {t_train:.3f} s "
        f"= {n / t_train:,.0f} merges/s{' (under cProfile)' if profiler else ''}"
    )

    t0 = time.perf_counter()
    engine.symbol_frequencies()
    t_freq = time.perf_counter() - t0
    print(f"symbol_frequencies: {t_freq:.3f} s")
    print(f"engine total: {t_init + t_train + t_freq:.3f} s")
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
