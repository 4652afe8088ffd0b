"""Byte-level BPE encoding speed and exactness against tiktoken and Hugging Face tokenizers.

1. Exactness: ``ByteBPE.from_tiktoken("o200k_base")`` against tiktoken on every line of every
   English and Sinhala corpus file (mismatching lines are counted and the first ones shown).
2. Speed, single thread, one ``encode`` call per line (how a data pipeline calls a tokenizer):
   - o200k_base: ours vs tiktoken, on English and on Sinhala text;
   - llama-bpe from GGUF: ours vs HF ``tokenizers`` running our exported ``tokenizer.json``
     (``TOKENIZERS_PARALLELISM=false``; exactness is checked on the same lines).
   Ours is timed twice: "cold" (fresh tokenizer, empty caches) and "warm" (second pass).
3. Where our time goes (``--profile``): cProfile of a cold pass.

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

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first 2000 lines of each file only")
    parser.add_argument("--profile", action="store_true", help="cProfile one cold pass of ours per language")
    parser.add_argument("--no-exactness", action="store_true")
    args = parser.parse_args(argv)
    if not O200K.exists():
        print(f"{O200K} is missing", file=sys.stderr)
        return 2

    ref = tiktoken_o200k()
    ours = ByteBPE.from_tiktoken(O200K)
    if not args.no_exactness:
        exactness(ours, ref, args.quick)

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
