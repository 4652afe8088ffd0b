"""The WWHO meta tokenizer (o200k_base + SGPE) vs o200k_base alone on code-switched text, one run.

    python benchmarks/bench_meta.py [--sizes 32000 64000] [--news-mb 3] [--retrain]
    python benchmarks/bench_meta.py --vs-bytebpe [--lines 20000] [--tokenizer META_DIR]

Training (cached under .cache/bench_meta/meta-<size>/, made with ``wwho train --kind sgpe
--script mixed --meta``): the Sinhala news (si/news-ada, news-adaderana, news-lankadeepa)
without the lines of si-en/, plus the Hindi corpora (hi/*.txt) without hi/flores200-devtest.
Held out for evaluation, so that no evaluated line was trained on:

* si-en/ (Sinhala news lines with >= 3 Latin words; removed from the training text),
* hi-en/ (Hindi/English tweets),
* the Sinhala news: the first ``--news-mb`` MB of si/news-bbcsinhala.txt (not trained on),
* pure text for comparison with the original's figures: si/ and hi/flores200-devtest.txt.

For each set: tokens per whitespace word and total tokens for each tokenizer, the meta
tokenizer's reduction in tokens vs o200k_base, lossless round trip (meta), and single-thread
encode MB/s (10^6 UTF-8 bytes/s, one line at a time; o200k_base: tiktoken, best of 3; the
meta tokenizer: one pass with an empty piece cache ("cold") and one pass after encoding 3.8 MB
of other news and Hindi ("after warm-up", the steady state of a long-running encoder: the lines
measured are new to it)).
The original reports 61.7% fewer tokens than o200k_base on Sinhala and 27.0% on Hindi with a
128k SGPE vocabulary.

``--vs-bytebpe`` times the meta tokenizer against ``ByteBPE.from_tiktoken("o200k_base")`` (the
core's byte-level encoder, which encodes every non-Indic span of the meta tokenizer) on
``--lines`` English lines (en/news-lk_news.txt) and as many Sinhala ones (si/news-bbcsinhala.txt):
``encode`` one line at a time and ``encode_batch`` (all cores), each the best of 3 passes after one
untimed pass, the two tokenizers' passes interleaved; the English ids must be equal. The SGPE part
is ``--tokenizer META_DIR``, else a 16k one trained once on 3 MB of si/news-ada.txt (cached).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from _measure import CORPORA, O200K_FILE, ROOT, machine, o200k, require

CACHE = ROOT / ".cache" / "bench_meta"
SI_TRAIN = ["news-ada.txt", "news-adaderana.txt", "news-lankadeepa.txt"]
HI_HELD_OUT = "flores200-devtest.txt"


def read_lines(path: Path, max_bytes: int | None = None) -> list[str]:
    lines, size = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            lines.append(line)
            size += len(line.encode())
            if max_bytes is not None and size >= max_bytes:
                break
    return lines


def training_text() -> Path:
    path = CACHE / "train-si-news-hi.txt"
    if path.exists():
        return path
    exclude = set(read_lines(CORPORA / "si-en" / "news-codeswitched-lines.txt"))
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    kept = dropped = 0
    with open(tmp, "w", encoding="utf-8") as out:
        for name in SI_TRAIN:
            for line in read_lines(CORPORA / "si" / name):
                if line in exclude:
                    dropped += 1
                    continue
                out.write(line + "\n")
                kept += 1
        for p in sorted((CORPORA / "hi").glob("*.txt")):
            if p.name != HI_HELD_OUT:
                for line in read_lines(p):
                    out.write(line + "\n")
                    kept += 1
    tmp.rename(path)
    print(f"training text: {kept:,} lines ({dropped:,} si-en lines left out), {path.stat().st_size / 1e6:.1f} MB")
    return path


def train(size: int, corpus: Path, retrain: bool) -> tuple[Path, float | None]:
    out = CACHE / f"meta-{size}"
    if (out / "meta_config.json").exists() and not retrain:
        return out, None
    from wwho.cli.train_sgpe import main as train_main

    t = time.perf_counter()
    rc = train_main(["--script", "mixed", "--vocab-size", str(size), "--meta", "--tiktoken-file", str(O200K_FILE),
                     "--out", str(out), "--quiet", str(corpus)])
    if rc:
        sys.exit(f"training {size} failed")
    return out, time.perf_counter() - t


def best_of(fn, lines, repeat=3) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for line in lines:
            fn(line)
        times.append(time.perf_counter() - t)
    return min(times), times[0]


def small_meta() -> Path:
    """A meta directory with a 16k SGPE part trained on 3 MB of si/news-ada.txt (not evaluated)."""
    out = CACHE / "meta-small-16000"
    if (out / "meta_config.json").exists():
        return out
    corpus = CACHE / "train-si-ada-3mb.txt"
    if not corpus.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        corpus.write_text("\n".join(read_lines(CORPORA / "si" / "news-ada.txt", 3_000_000)) + "\n", encoding="utf-8")
    from wwho.cli.train_sgpe import main as train_main

    rc = train_main(["--script", "mixed", "--vocab-size", "16000", "--meta", "--tiktoken-file", str(O200K_FILE),
                     "--out", str(out), "--quiet", "--no-verify", str(corpus)])
    if rc:
        sys.exit("training the small meta tokenizer failed")
    return out


def interleaved(fns: dict, repeat: int = 3) -> dict[str, float]:
    """Best of ``repeat`` seconds of each function, after one untimed call each; calls interleaved."""
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t)
    return best


def vs_bytebpe(n_lines: int, directory: Path | None) -> None:
    from wwho.bytelevel import ByteBPE
    from wwho.meta import MetaTokenizer

    require(O200K_FILE, CORPORA / "en" / "news-lk_news.txt", CORPORA / "si" / "news-bbcsinhala.txt",
            *([] if directory else [CORPORA / "si" / "news-ada.txt"]))  # small_meta()'s training text
    print(f"machine: {machine()}")
    directory = directory or small_meta()
    t = time.perf_counter()
    meta = MetaTokenizer.load(directory, tiktoken_file=O200K_FILE)
    t_meta = time.perf_counter() - t
    t = time.perf_counter()
    bpe = ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
    t_bpe = time.perf_counter() - t
    print(f"load: MetaTokenizer {t_meta:.2f} s ({directory.name}, SGPE {meta.sgpe.vocab_size:,} tokens), "
          f"ByteBPE {t_bpe:.2f} s")
    sets = {"English (en/news-lk_news.txt)": read_lines(CORPORA / "en" / "news-lk_news.txt")[:n_lines],
            "Sinhala (si/news-bbcsinhala.txt)": read_lines(CORPORA / "si" / "news-bbcsinhala.txt")[:n_lines]}
    print("| set | lines | MB | ByteBPE encode s | meta encode s | ratio | ByteBPE batch s | meta batch s | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    results = {}
    for name, lines in sets.items():
        mb = sum(len(line.encode()) for line in lines) / 1e6
        if name.startswith("English"):
            assert meta.encode_batch(lines) == bpe.encode_batch(lines), "English ids differ"
        one = interleaved({"bpe": lambda lines=lines: [bpe.encode(x) for x in lines],
                           "meta": lambda lines=lines: [meta.encode(x) for x in lines]})
        batch = interleaved({"bpe": lambda lines=lines: bpe.encode_batch(lines),
                             "meta": lambda lines=lines: meta.encode_batch(lines)})
        results[name] = {"lines": len(lines), "mb": mb, "encode": one, "batch": batch}
        print(f"| {name} | {len(lines):,} | {mb:.2f} | {one['bpe']:.3f} | {one['meta']:.3f} | "
              f"{one['meta'] / one['bpe']:.2f}x | {batch['bpe']:.3f} | {batch['meta']:.3f} | "
              f"{batch['meta'] / batch['bpe']:.2f}x |")
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "vs-bytebpe.json").write_text(json.dumps({"machine": machine(), "sets": results}, indent=1),
                                           encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[32_000, 64_000])
    ap.add_argument("--news-mb", type=float, default=3.0)
    ap.add_argument("--retrain", action="store_true")
    ap.add_argument("--vs-bytebpe", action="store_true", help="time MetaTokenizer against ByteBPE (o200k_base)")
    ap.add_argument("--lines", type=int, default=20_000, help="lines per language for --vs-bytebpe")
    ap.add_argument("--tokenizer", type=Path, help="a meta directory for --vs-bytebpe")
    args = ap.parse_args()
    if args.vs_bytebpe:
        vs_bytebpe(args.lines, args.tokenizer)
        return
    from wwho.meta import MetaTokenizer

    # o200k_base offline, the training text (training_text()) and the held-out and warm-up sets below
    require(O200K_FILE, CORPORA / "si-en" / "news-codeswitched-lines.txt", *(CORPORA / "si" / f for f in SI_TRAIN),
            CORPORA / "hi" / "*.txt", CORPORA / "hi-en" / "hasoc2019-tweets-not-offensive.txt",
            CORPORA / "si" / "news-bbcsinhala.txt", CORPORA / "si" / "flores200-devtest.txt",
            CORPORA / "hi" / HI_HELD_OUT, CORPORA / "si" / "news-lankadeepa.txt",
            CORPORA / "hi" / "wmt14-newstest2014.txt")
    print(f"machine: {machine()}")
    enc = o200k()
    corpus = training_text()
    sets = {
        "si-en (code-switched news)": read_lines(CORPORA / "si-en" / "news-codeswitched-lines.txt"),
        "hi-en (code-switched tweets)": read_lines(CORPORA / "hi-en" / "hasoc2019-tweets-not-offensive.txt"),
        f"si news (bbcsinhala, first {args.news_mb:g} MB)": read_lines(CORPORA / "si" / "news-bbcsinhala.txt",
                                                                    int(args.news_mb * 1e6)),
        "si flores200-devtest": read_lines(CORPORA / "si" / "flores200-devtest.txt"),
        "hi flores200-devtest": read_lines(CORPORA / "hi" / HI_HELD_OUT),
    }
    # Warm-up text for the "after warm-up" speed: other news and other Hindi, never evaluated.
    warmup = (read_lines(CORPORA / "si" / "news-lankadeepa.txt", 3_000_000)
              + read_lines(CORPORA / "hi" / "wmt14-newstest2014.txt"))
    base = {}
    for name, lines in sets.items():
        words = sum(len(line.split()) for line in lines)
        mb = sum(len(line.encode()) for line in lines) / 1e6
        tokens = sum(len(enc.encode_ordinary(line)) for line in lines)
        warm, _ = best_of(enc.encode_ordinary, lines)
        base[name] = {"lines": len(lines), "words": words, "mb": mb, "tokens": tokens, "mbps": mb / warm}
    results = {"machine": machine(), "sets": base, "meta": {}}
    for size in args.sizes:
        directory, seconds = train(size, corpus, args.retrain)
        if seconds is not None:
            print(f"trained meta-{size} in {seconds:.0f}s -> {directory}")
        tok = MetaTokenizer.load(directory, tiktoken_file=O200K_FILE)
        composition = {script: sum(1 for t in tok.sgpe.vocab if any(lo <= ord(c) <= hi for c in t))
                       for script, (lo, hi) in {"sinhala": (0x0D80, 0x0DFF), "devanagari": (0x0900, 0x097F)}.items()}
        print(f"meta-{size}: SGPE part {tok.sgpe.vocab_size:,} tokens, {len(tok.sgpe.merges):,} merges; tokens with "
              f"a Sinhala character: {composition['sinhala']:,}, with a Devanagari one: {composition['devanagari']:,}")
        results.setdefault("composition", {})[size] = composition
        rows = {}
        for name, lines in sets.items():
            tok.clear_cache()
            _, cold = best_of(tok.encode_ordinary, lines, repeat=1)
            tok.clear_cache()
            for line in warmup:
                tok.encode_ordinary(line)
            # one pass: a second over the same lines would find them cached, no steady state
            warm, _ = best_of(tok.encode_ordinary, lines, repeat=1)
            ids = [tok.encode_ordinary(line) for line in lines]
            tokens = sum(map(len, ids))
            lossless = sum(tok.decode(i) == line for i, line in zip(ids, lines))
            sgpe_share = sum(1 for seq in ids for i in seq if i >= tok.offset) / max(tokens, 1)
            rows[name] = {"tokens": tokens, "lossless_lines": lossless, "mbps": base[name]["mb"] / warm,
                          "mbps_cold": base[name]["mb"] / cold, "sgpe_token_share": sgpe_share,
                          "sgpe_vocab": tok.sgpe.vocab_size}
        results["meta"][size] = rows

    print()
    print("| set | lines | MB | o200k tok/word | " + " | ".join(f"meta-{s // 1000}k tok/word | fewer tokens"
                                                         for s in args.sizes) + " |")
    print("|---|---:|---:|---:|" + "---:|---:|" * len(args.sizes))
    for name, b in base.items():
        cells = [f"{b['tokens'] / b['words']:.3f}"]
        for size in args.sizes:
            r = results["meta"][size][name]
            cells += [f"{r['tokens'] / b['words']:.3f}", f"{100 * (1 - r['tokens'] / b['tokens']):.1f}%"]
        print(f"| {name} | {b['lines']:,} | {b['mb']:.2f} | " + " | ".join(cells) + " |")
    print()
    print("| set | o200k MB/s | " + " | ".join(f"meta-{s // 1000}k MB/s warm (cold) | lossless | SGPE share"
                                               for s in args.sizes) + " |")
    print("|---|---:|" + "---:|---:|---:|" * len(args.sizes))
    for name, b in base.items():
        cells = [f"{b['mbps']:.2f}"]
        for size in args.sizes:
            r = results["meta"][size][name]
            cells += [f"{r['mbps']:.2f} ({r['mbps_cold']:.2f})", f"{r['lossless_lines']}/{b['lines']}",
                      f"{100 * r['sgpe_token_share']:.0f}%"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    out = CACHE / "results.json"
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"\nresults: {os.path.relpath(out)}")


if __name__ == "__main__":
    main()
