"""Byte-level BPE: exactness and speed against tiktoken and Hugging Face tokenizers, in one run.

1. Exactness: ``ByteBPE.from_tiktoken("o200k_base")`` against tiktoken on every line of every
   English and Sinhala corpus file (mismatching lines are counted and the first ones shown).
2. Construction: loading o200k (200,019 ranks) and llama-bpe's GGUF, ours vs the peers.
3. Speed, one thread, one ``encode`` call per line (how a data pipeline calls a tokenizer),
   held-out text (none of it was seen by any of these vocabularies), ids compared on every line:
   - o200k_base: ours vs tiktoken, English and Sinhala;
   - llama-bpe from GGUF: ours vs HF ``tokenizers`` running our exported ``tokenizer.json``.
   Ours "cold" is a fresh tokenizer (empty caches) on its first pass, "warm" a second pass; every
   pass (theirs too) reads its own fresh copies of the lines, so no one is spared the UTF-8 copy
   CPython keeps inside a str once an extension asked for it (see ``fresh``).
   The physical floor on the same bytes: one UTF-8 validation pass and one memchr pass (``bytes.count``).
4. No bad case: 1 MB adversarial inputs (a run of one character, of spaces, of a syllable, a long
   piece not in the vocabulary, alternating scripts) in ns/byte against ordinary text's.
5. ``encode_batch`` on 1 and 2 threads (ours, tiktoken, HF) on the same lines.
6. ``--train``: ``ByteBPE.train`` vs HF ``tokenizers``' BpeTrainer (same regex, ByteLevel, same
   vocabulary size) on the English news + the Sinhala news: wall time and peak RSS, each in a child
   process of its own.

Run: ``python benchmarks/bench_bytelevel.py`` (whole corpora) or ``--quick`` (slices); ``--o200k-only``
for the o200k speed part alone. Times are wall-clock, and for the per-line speed, training and batches
also CPU time (this process's, all threads): on a shared machine the CPU-time ratios are the ones to
read, and CPU time over wall time says how many cores a run got. For where the time goes
inside the core, see ``rust/examples/bytelevel_bench.rs`` (CPU time, and ``perf record``).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import tempfile
import time
from array import array
from itertools import chain, islice
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS threads would spin beside us

import tiktoken
import tokenizers
from _measure import DATA, O200K_FILE, require  # $WWHO_SHARED_DATA, else ../shared/data beside the repository

from wwho import load_tokenizer
from wwho.bytelevel import ByteBPE

O200K = O200K_FILE
LLAMA = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
O200K_CACHE_KEY = "fb374d419588a4632f3f557e76b4b70aebbca790"  # sha1 of the blob URL, tiktoken's cache name
MB = 1_000_000


def corpus(lang: str, quick: bool) -> list[str]:
    lines: list[str] = []
    for path in sorted((DATA / "corpora" / lang).glob("*.txt")):
        with open(path, encoding="utf-8") as f:
            lines += [line.rstrip("\n") for line in (islice(f, 2000) if quick else f)]
    return lines


def tiktoken_o200k(work: Path) -> tiktoken.Encoding:
    """tiktoken's own o200k_base, offline: the shared file linked into a cache folder under ``work``,
    which stays tiktoken's cache for the run (``construction`` loads it again)."""
    cache = work / "tiktoken-cache"
    cache.mkdir()
    os.symlink(O200K, cache / O200K_CACHE_KEY)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return tiktoken.get_encoding("o200k_base")


def timed(fn, lines: list[str]) -> tuple[float, list]:
    start = time.perf_counter()
    out = [fn(line) for line in lines]
    return time.perf_counter() - start, out


def cpu_timed(fn, lines: list[str]) -> tuple[float, float, list]:
    """(wall seconds, CPU seconds of this process, outputs): CPU time is not inflated by other
    processes taking turns on the cores, so on a loaded machine its ratios are the ones to read."""
    start, start_cpu = time.perf_counter(), time.process_time()
    out = [fn(line) for line in lines]
    return time.perf_counter() - start, time.process_time() - start_cpu, out


def exactness(ours: ByteBPE, ref: tiktoken.Encoding, quick: bool) -> None:
    print("== exactness: o200k_base, every line, ours vs tiktoken")
    for lang in ("en", "si"):
        for path in sorted((DATA / "corpora" / lang).glob("*.txt")):
            with open(path, encoding="utf-8") as f:
                lines = [line.rstrip("\n") for line in (islice(f, 2000) if quick else f)]
            bad = [i for i, line in enumerate(lines) if ours.encode(line) != ref.encode(line)]
            first = [i + 1 for i in bad[:5]]
            status = "all equal" if not bad else f"{len(bad)} MISMATCHES, first lines {first}"
            print(f"  {lang}/{path.name}: {len(lines)} lines, {status}")


def construction(work: Path) -> None:
    print("== construction (best of 3, wall time)")

    def best(fn) -> float:
        times = []
        for _ in range(3):
            gc.collect()
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    import tiktoken.registry

    def fresh_tiktoken():
        getattr(tiktoken.registry, "ENCODINGS", {}).clear()
        return tiktoken.get_encoding("o200k_base")

    ours, theirs = best(lambda: ByteBPE.from_tiktoken(O200K)), best(fresh_tiktoken)
    print(f"  o200k_base: ours {ours * 1e3:.0f} ms | tiktoken {theirs * 1e3:.0f} ms (x{theirs / ours:.2f})")
    if LLAMA.exists():
        path = work / "llama-bpe.json"
        ByteBPE.from_gguf(LLAMA).export_hf(path)
        ours = best(lambda: ByteBPE.from_gguf(LLAMA))
        theirs = best(lambda: tokenizers.Tokenizer.from_file(str(path)))
        print(f"  llama-bpe: ours from GGUF {ours * 1e3:.0f} ms | HF from its tokenizer.json "
              f"{theirs * 1e3:.0f} ms "
              f"(x{theirs / ours:.2f})")
        # The same tokenizer.json read by both; load_tokenizer tells its kind first, as the CLI does.
        ours = best(lambda: load_tokenizer(path))
        print(f"  llama-bpe tokenizer.json: ours (load_tokenizer) {ours * 1e3:.0f} ms | HF "
              f"{theirs * 1e3:.0f} ms (x{theirs / ours:.2f})")


def floor(label: str, lines: list[str]) -> float:
    """MB/s of one UTF-8 validation pass and one memchr pass over the same bytes."""
    raw = "\n".join(lines).encode("utf-8")
    t = time.perf_counter()
    raw.decode("utf-8")
    t_utf8 = time.perf_counter() - t
    t = time.perf_counter()
    raw.count(b"\n")
    t_memchr = time.perf_counter() - t
    mb = len(raw) / MB
    print(f"  {label} floor: UTF-8 validation (bytes.decode) {mb / t_utf8:8.0f} MB/s | memchr (bytes.count) "
          f"{mb / t_memchr:8.0f} MB/s")
    return mb / t_utf8


def fresh(lines: list[str]) -> list[str]:
    """Copies of ``lines`` as new str objects. A Rust extension reads a str through the UTF-8 copy
    CPython makes on first request and keeps inside the object (``PyUnicode_AsUTF8AndSize``), so
    whichever tokenizer saw a non-ASCII line first paid for that copy and the others did not (39% of
    the English lines and every Sinhala line are non-ASCII): each timed pass gets its own copies."""
    return [line.encode("utf-8").decode("utf-8") for line in lines]


def flat(ids: list[list[int]]) -> tuple[array, array]:
    """A chunk's ids as two arrays, every id and each line's count: equal exactly when the lists are.
    Arrays are not tracked by Python's garbage collector and hold no int objects, so the chunk kept
    for the comparison costs the other tokenizer's timed pass nothing. Until November 2026 this file
    kept both chunks' lists through the next timed pass, and every pass was slower for it (the
    collector walks kept lists, and tiktoken's lists hold ints of their own): in three alternating
    runs, English cold took 31 ns/byte for us and 74-85 for tiktoken that way, 23 and 63-65 this way."""
    return array("I", chain.from_iterable(ids)), array("I", map(len, ids))


def speed(name: str, ours_factory, theirs, theirs_name: str, lines: list[str], chunk: int = 5000) -> None:
    """Ours (a first, cold pass, then a warm one) vs theirs, in chunks whose outputs are compared
    and dropped, so the ids of a whole corpus are never all in memory; every pass on fresh copies
    of the lines (see ``fresh``)."""
    nbytes = sum(len(line.encode("utf-8")) for line in lines)
    mb = nbytes / MB
    ours = ours_factory()
    t_cold = t_theirs = t_warm = 0.0
    c_cold = c_theirs = c_warm = 0.0
    differing = 0  # chunks whose ids differ from theirs
    gc.collect()
    for start in range(0, len(lines), chunk):
        part = lines[start : start + chunk]
        dt, dc, out = cpu_timed(ours.encode, fresh(part))
        t_cold, c_cold = t_cold + dt, c_cold + dc
        ids_ours = flat(out)
        del out  # before the next timed pass: see ``flat``
        dt, dc, out = cpu_timed(theirs, fresh(part))
        t_theirs, c_theirs = t_theirs + dt, c_theirs + dc
        differing += flat(out) != ids_ours
        del out
    for start in range(0, len(lines), chunk):
        dt, dc = cpu_timed(ours.encode, fresh(lines[start : start + chunk]))[:2]
        t_warm, c_warm = t_warm + dt, c_warm + dc
    pieces, cache = ours.cache_info()
    verdict = "yes" if not differing else f"NO, in {differing} chunks of {chunk} lines"
    print(
        f"  {name}: {len(lines)} lines, {mb:.2f} MB | {theirs_name} {mb / t_theirs:6.2f} MB/s | "
        f"ours cold {mb / t_cold:6.2f} MB/s (x{t_theirs / t_cold:.2f}) | ours warm {mb / t_warm:6.2f} MB/s "
        f"(x{t_theirs / t_warm:.2f}) | ids equal: {verdict} | piece cache: {pieces} pieces, {cache / MB:.1f} MB"
    )
    print(
        f"    in CPU time: {theirs_name} {mb / c_theirs:6.2f} MB/s | ours cold {mb / c_cold:6.2f} MB/s "
        f"(x{c_theirs / c_cold:.2f}) | ours warm {mb / c_warm:6.2f} MB/s (x{c_theirs / c_warm:.2f}) | "
        f"load average {os.getloadavg()[0]:.1f}"
    )


ADVERSARIAL = {
    "one letter, 1 MB": "a" * MB,
    "spaces, 1 MB": " " * MB,
    "one Sinhala letter, 1 MB": "ශ" * (MB // 3),
    "one syllable (ශ්‍රී), 1 MB": "ශ්‍රී" * (MB // 12),
    "newlines, 1 MB": "\n" * MB,
    "digits, 1 MB": "7" * MB,
    "a piece not in the vocabulary (CJK, 1 MB)": "".join(chr(0x4E00 + i * 7919 % 20000)
                                                          for i in range(MB // 3)),
    "a piece not in the vocabulary (random letters, 1 MB)": "".join(
        "abcdefghijklmnopqrstuvwxyz"[i * 7919 % 26] for i in range(MB)),
    "alternating scripts (aශ), 1 MB": "aශ" * (MB // 4),
    "random Latin-1 text, 1 MB": random.Random(0).randbytes(MB).decode("latin-1"),
    # o200k's tokens span nearly every place in these, so their pieces are cut into long parts
    "words of 300 random letters a-j, 1 MB": " ".join(
        "".join(random.Random(i).choices("abcdefghij", k=300)) for i in range(MB // 301)),
    "lines of 10,000 random ACGT, 1 MB": "\n".join(
        "".join(random.Random(i).choices("ACGT", k=10_000)) for i in range(MB // 10_001)),
}


def adversarial(ordinary: str, factory=None, tokenizer: str = "o200k_base") -> None:
    """Each bad case with a fresh tokenizer from ``factory`` (default: o200k_base), against
    ``ordinary`` text encoded the same way: one string of about 1 MB, one ``encode_ordinary`` call
    of a fresh tokenizer (like for like: a per-line average would add each line's call and list)."""
    factory = factory or (lambda: ByteBPE.from_tiktoken(O200K))
    tok = factory()
    text = fresh([ordinary])[0]
    t = time.perf_counter()
    tok.encode_ordinary(text)
    ordinary_ns = (time.perf_counter() - t) * 1e9 / len(text.encode("utf-8"))
    print(f"== no bad case: 1 MB inputs, ours (a fresh {tokenizer} each, one encode_ordinary call), against "
          f"{len(ordinary.encode('utf-8')) / MB:.2f} MB of English news in one call the same way "
          f"({ordinary_ns:.1f} ns/byte)")
    for name, text in ADVERSARIAL.items():
        tok = factory()
        nbytes = len(text.encode("utf-8"))
        t = time.perf_counter()
        ids = tok.encode_ordinary(text)
        dt = time.perf_counter() - t
        assert tok.decode(ids) == text
        ns = dt * 1e9 / nbytes
        print(f"  {name:45s} {ns:8.1f} ns/byte  x{ns / ordinary_ns:5.2f} of ordinary  ({len(ids)} ids)")


def batches(ref: tiktoken.Encoding, hf, lines: list[str], rounds: int = 3) -> None:
    """Warm: each tokenizer encodes the lines once first, then 1 and 2 threads alternate, ``rounds``
    times each, every pass on fresh copies of the lines; the best of each. (Run cold on 1 thread and
    then warm on 2, the same object's second pass found its caches full and looked like a speed-up.)"""
    print(f"== encode_batch on 1 and 2 threads, warm ({len(lines)} lines, {sum(map(len, lines)) / MB:.1f} M "
          f"chars; one pass first, then {rounds} alternated passes of each, best)")
    ours = ByteBPE.from_tiktoken(O200K)
    rows = []
    for name, run in (
        ("ours", lambda n, texts: ours.encode_batch(texts, num_threads=n)),
        ("tiktoken", lambda n, texts: ref.encode_batch(texts, num_threads=n)),
    ):
        run(2, fresh(lines))
        t, cpu = {1: float("inf"), 2: float("inf")}, {1: float("inf"), 2: float("inf")}
        for _ in range(rounds):
            for n in (1, 2):
                texts = fresh(lines)
                gc.collect()
                start, start_cpu = time.perf_counter(), time.process_time()
                run(n, texts)
                wall, used = time.perf_counter() - start, time.process_time() - start_cpu
                if wall < t[n]:
                    t[n], cpu[n] = wall, used
        rows.append((name, t, cpu))
    for name, t, cpu in rows:
        # CPU time over wall time says how many cores the run got: on a loaded machine the wall-time
        # speed-up says little, and the CPU time of 2 threads against 1 says what threads cost.
        print(f"  {name:9s} 1 thread {t[1]:6.2f} s ({cpu[1] / t[1]:.2f} cores) | 2 threads {t[2]:6.2f} s "
              f"({cpu[2] / t[2]:.2f} cores) | speed-up x{t[1] / t[2]:.2f} | CPU time 2 threads / 1: "
              f"x{cpu[2] / cpu[1]:.2f}")
    print(f"  ours vs tiktoken, 2 threads: x{rows[1][1][2] / rows[0][1][2]:.2f}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


_TRAIN_CHILD = r"""
import json, resource, sys, time
kind, files, vocab_size, workers = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
start, start_cpu = time.perf_counter(), time.process_time()
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
cpu = time.process_time() - start_cpu + sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])
# VmHWM: this process's own peak (ru_maxrss would include what the parent had when it forked us);
# RUSAGE_CHILDREN: the counting workers this process forked.
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
peak = max(hwm, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"seconds": seconds, "cpu": cpu, "rss_mb": peak / 1024, "vocab": size}))
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
          f"(wwho: {workers} counting threads; HF: its default threads)")
    results = {}
    for kind in ("wwho", "hf"):
        out = subprocess.run([sys.executable, "-c", _TRAIN_CHILD, kind, json.dumps(files), str(vocab_size),
                              str(workers)], capture_output=True, text=True, check=True)
        results[kind] = json.loads(out.stdout.strip().splitlines()[-1])
        r = results[kind]
        print(f"  {kind}: {r['seconds']:.1f} s, CPU time {r['cpu']:.1f} s (all threads and processes), "
              f"peak RSS {r['rss_mb']:.0f} MB (largest process), vocabulary {r['vocab']}")
    print(f"  time ratio wwho/HF: {results['wwho']['seconds'] / results['hf']['seconds']:.2f} (wall), "
          f"{results['wwho']['cpu'] / results['hf']['cpu']:.2f} (CPU time); load average {os.getloadavg()[0]:.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first 2000 lines of each file only")
    parser.add_argument("--no-exactness", action="store_true")
    parser.add_argument("--no-speed", action="store_true", help="skip the encoding speed parts")
    parser.add_argument("--train", action="store_true", help="also benchmark training (several minutes)")
    parser.add_argument("--o200k-only", action="store_true",
                        help="speed: only o200k_base against tiktoken (no construction, GGUF, bad cases, batches)")
    parser.add_argument("--vocab-size", type=int, default=32_000, help="for --train (default 32000)")
    args = parser.parse_args(argv)
    corpora = DATA / "corpora"
    require(O200K,
            *([] if args.no_speed else [corpora / "en" / "*.txt", corpora / "si" / "*.txt"]),
            *([corpora / "en" / "news-lk_news.txt", corpora / "si" / "news-*.txt"] if args.train else []))
    # tiktoken's cache folder and the llama-bpe exports (6.6 MB each): removed at the end, whatever happens
    cache = os.environ.get("TIKTOKEN_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="bench-bytelevel-") as work:
        try:
            return run(args, Path(work))
        finally:  # not left naming the removed folder (main can be called in a process that goes on)
            if cache is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = cache


def run(args: argparse.Namespace, work: Path) -> int:
    ref = tiktoken_o200k(work)
    if not args.no_exactness:
        exactness(ByteBPE.from_tiktoken(O200K), ref, args.quick)
    print(f"load average at the start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.train:
        train_benchmark(args.vocab_size, args.quick)
    if args.no_speed:
        return 0
    if not args.o200k_only:
        construction(work)
    english, sinhala = corpus("en", args.quick), corpus("si", args.quick)
    print("== speed: o200k_base, one thread, encode() per line")
    for label, lines in (("English", english), ("Sinhala", sinhala)):
        floor(label, lines)
        speed(label, lambda: ByteBPE.from_tiktoken(O200K), ref.encode, "tiktoken", lines)

    if args.o200k_only:
        return 0
    hf = None
    if LLAMA.exists():
        print("== speed: llama-bpe (GGUF), one thread, encode per line, vs HF tokenizers on our export")
        path = work / "tokenizer.json"
        ByteBPE.from_gguf(LLAMA).export_hf(path)
        hf = tokenizers.Tokenizer.from_file(str(path))

        def hf_encode(line: str) -> list[int]:
            return hf.encode(line, add_special_tokens=False).ids

        for label, lines in (("English", english), ("Sinhala", sinhala)):
            speed(label, lambda: ByteBPE.from_gguf(LLAMA), hf_encode, "HF tokenizers", lines)

    ordinary = "\n".join(english)[:MB]  # (about a MB: the bad cases' size)
    adversarial(ordinary)
    if LLAMA.exists():  # the merges rule (GGUF): its own bad cases, against its own ordinary text
        adversarial(ordinary, lambda: ByteBPE.from_gguf(LLAMA), "llama-bpe (GGUF)")
    batches(ref, hf, (sinhala + english)[: 40_000 if args.quick else 200_000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
