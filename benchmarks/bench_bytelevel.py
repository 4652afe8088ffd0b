"""Byte-level BPE encoding speed and exactness against tiktoken and Hugging Face tokenizers.

1. Exactness: ``ByteBPE.from_tiktoken("o200k_base")`` against tiktoken on every line of every
   English and Sinhala corpus file (mismatching lines are counted and the first ones shown).
2. Speed, single thread, one ``encode`` call per line (how a data pipeline calls a tokenizer):
   - o200k_base: ours vs tiktoken, on English and on Sinhala text;
   - llama-bpe from GGUF: ours vs HF ``tokenizers`` running our exported ``tokenizer.json``
     (``TOKENIZERS_PARALLELISM=false``; exactness is checked on the same lines).
   Ours is timed twice: "cold" (fresh tokenizer, empty caches) and "warm" (second pass).
3. Where our time goes (``--profile``): cProfile of a cold pass.
4. Training (``--train``): ``ByteBPE.train`` vs HF ``tokenizers``' BpeTrainer (same regex, ByteLevel,
   same vocabulary size) on the English news + the Sinhala news: wall time and peak RSS, each in a
   child process of its own.

Run: ``python benchmarks/bench_bytelevel.py`` (whole corpora) or ``--quick`` (slices).
Numbers depend on the machine and its load; the ratios are what to read.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import tiktoken
import tokenizers

from wwho.bytelevel import ByteBPE

DATA = Path(os.environ.get("WWHO_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
if not DATA.is_dir():
    DATA = Path("/work/shared/data")
O200K = DATA / "tiktoken" / "o200k_base.tiktoken"
LLAMA = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
O200K_CACHE_KEY = "fb374d419588a4632f3f557e76b4b70aebbca790"  # sha1 of the blob URL, tiktoken's cache name


def corpus(lang: str, quick: bool) -> list[str]:
    lines: list[str] = []
    for path in sorted((DATA / "corpora" / lang).glob("*.txt")):
        with open(path, encoding="utf-8") as f:
            file_lines = f.read().splitlines()
        lines += file_lines[:2000] if quick else file_lines
    return lines


def tiktoken_o200k() -> tiktoken.Encoding:
    cache = tempfile.mkdtemp()
    os.symlink(O200K, Path(cache) / O200K_CACHE_KEY)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    return tiktoken.get_encoding("o200k_base")


def timed(fn, lines: list[str]) -> tuple[float, list]:
    start = time.perf_counter()
    out = [fn(line) for line in lines]
    return time.perf_counter() - start, out


def exactness(ours: ByteBPE, ref: tiktoken.Encoding, quick: bool) -> None:
    print("== exactness: o200k_base, every line, ours vs tiktoken")
    for lang in ("en", "si"):
        for path in sorted((DATA / "corpora" / lang).glob("*.txt")):
            lines = path.read_text(encoding="utf-8").splitlines()
            if quick:
                lines = lines[:2000]
            bad = [i for i, line in enumerate(lines) if ours.encode(line) != ref.encode(line)]
            first = [i + 1 for i in bad[:5]]
            status = "all equal" if not bad else f"{len(bad)} MISMATCHES, first lines {first}"
            print(f"  {lang}/{path.name}: {len(lines)} lines, {status}")


def speed(name: str, ours_factory, theirs, theirs_name: str, lines: list[str], chunk: int = 5000) -> None:
    """Ours (a first, cold pass, then a warm one) vs theirs, in chunks whose outputs are compared
    and dropped, so the ids of a whole corpus are never all in memory."""
    mb = sum(len(line.encode("utf-8")) for line in lines) / 1e6
    ours = ours_factory()
    t_cold = t_theirs = t_warm = 0.0
    same = True
    gc.collect()
    for start in range(0, len(lines), chunk):
        part = lines[start : start + chunk]
        dt, ids_ours = timed(ours.encode, part)
        t_cold += dt
        dt, ids_theirs = timed(theirs, part)
        t_theirs += dt
        same = same and ids_ours == ids_theirs
    for start in range(0, len(lines), chunk):
        t_warm += timed(ours.encode, lines[start : start + chunk])[0]
    print(
        f"  {name}: {len(lines)} lines, {mb:.2f} MB | {theirs_name} {mb / t_theirs:6.2f} MB/s | "
        f"ours cold {mb / t_cold:6.2f} MB/s (x{t_theirs / t_cold:.2f}) | ours warm {mb / t_warm:6.2f} MB/s "
        f"(x{t_theirs / t_warm:.2f}) | ids equal: {same} | "
        f"cache: {len(ours._cache)} pieces, {len(ours._words)} words"
    )


_TRAIN_CHILD = r"""
import json, resource, sys, time
kind, files, vocab_size, workers = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
start = time.perf_counter()
if kind == "wwho":
    from wwho.bytelevel import ByteBPE
    tok = ByteBPE.train(files, vocab_size=vocab_size, pattern="gpt4", special_tokens=["<|endoftext|>"],
                        workers=workers, progress=False)
    size = tok.vocab_size
else:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from wwho.bytelevel.pretokenize import _LLAMA3  # cl100k in the form Oniguruma reads as tiktoken does
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(_LLAMA3), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train(files, trainer)
    size = tok.get_vocab_size()
seconds = time.perf_counter() - start
# VmHWM: this process's own peak (ru_maxrss would include what the parent had when it forked us);
# RUSAGE_CHILDREN: the counting workers this process forked.
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
peak = max(hwm, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"seconds": seconds, "rss_mb": peak / 1024, "vocab": size}))
"""


def train_benchmark(vocab_size: int, quick: bool) -> None:
    import json
    import subprocess

    files = [str(DATA / "corpora" / "en" / "news-lk_news.txt")]
    files += [str(p) for p in sorted((DATA / "corpora" / "si").glob("news-*.txt"))]
    if quick:
        files = files[:2]
    mb = sum(Path(f).stat().st_size for f in files) / 1e6
    workers = max(1, os.cpu_count() or 1)
    print(f"== training: vocab {vocab_size}, {len(files)} files, {mb:.1f} MB, gpt4 regex "
          f"(wwho: {workers} counting processes; HF: its default threads)")
    results = {}
    for kind in ("wwho", "hf"):
        out = subprocess.run([sys.executable, "-c", _TRAIN_CHILD, kind, json.dumps(files), str(vocab_size),
                              str(workers)], capture_output=True, text=True, check=True)
        results[kind] = json.loads(out.stdout.strip().splitlines()[-1])
        r = results[kind]
        print(f"  {kind}: {r['seconds']:.1f} s, peak RSS {r['rss_mb']:.0f} MB (largest process), "
              f"vocabulary {r['vocab']}")
    print(f"  time ratio wwho/HF: {results['wwho']['seconds'] / results['hf']['seconds']:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first 2000 lines of each file only")
    parser.add_argument("--profile", action="store_true", help="cProfile one cold pass of ours per language")
    parser.add_argument("--no-exactness", action="store_true")
    parser.add_argument("--no-speed", action="store_true", help="skip the encoding speed part")
    parser.add_argument("--train", action="store_true", help="also benchmark training (several minutes)")
    parser.add_argument("--vocab-size", type=int, default=32_000, help="for --train (default 32000)")
    args = parser.parse_args(argv)
    if not O200K.exists():
        print(f"{O200K} is missing", file=sys.stderr)
        return 2

    ref = tiktoken_o200k()
    ours = ByteBPE.from_tiktoken(O200K)
    if not args.no_exactness:
        exactness(ours, ref, args.quick)

    if args.train:
        train_benchmark(args.vocab_size, args.quick)
    if args.no_speed:
        return 0
    english, sinhala = corpus("en", args.quick), corpus("si", args.quick)
    print("== speed: o200k_base, single thread, encode() per line")
    for label, lines in (("English", english), ("Sinhala", sinhala)):
        speed(label, lambda: ByteBPE.from_tiktoken(O200K), ref.encode, "tiktoken", lines)

    if LLAMA.exists():
        print("== speed: llama-bpe (GGUF), single thread, encode per line, vs HF tokenizers on our export")
        llama = ByteBPE.from_gguf(LLAMA)
        path = Path(tempfile.mkdtemp()) / "tokenizer.json"
        llama.export_hf(path)
        hf = tokenizers.Tokenizer.from_file(str(path))

        def hf_encode(line: str) -> list[int]:
            return hf.encode(line, add_special_tokens=False).ids

        for label, lines in (("English", english), ("Sinhala", sinhala)):
            speed(label, lambda: ByteBPE.from_gguf(LLAMA), hf_encode, "HF tokenizers", lines)

    if args.profile:
        for label, lines in (("English", english), ("Sinhala", sinhala)):
            print(f"== profile: ours, cold, {label}")
            fresh = ByteBPE.from_tiktoken(O200K)
            profiler = cProfile.Profile()
            profiler.enable()
            for line in lines:
                fresh.encode(line)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(8)
    return 0


if __name__ == "__main__":
    sys.exit(main())
