"""The speed devices on and off: alternating A/B runs in fresh processes, one device at a time.

    python benchmarks/bench_devices.py [--rounds 5] [--devices cache evalcache ...] [--out FILE] [--summary]

A device is one mechanism that never changes a result, only what a result costs (the byte-level
piece cache, the evaluator's line cache, ...). For each round and each device, two fresh processes run
the same benchmarks, one with the device on and one with it off, in alternating order (on first in
even rounds, off first in odd ones), so drift in the machine's speed falls on both arms alike. Each
process reports:

* ``encode``: o200k_base ``ByteBPE`` (offline from the shared ranks file) on English and Sinhala
  news, one ``encode`` per line, cold (a fresh tokenizer's first pass) and warm (its second pass),
  in MB/s of the thread's CPU time, and the tokenizer's construction time; ``encode_batch`` of
  2,000-line batches on 1 and 2 threads, a fresh tokenizer each, first and second pass (one
  thread: MB/s of its CPU time; two: of wall time, and of the process's CPU time); llama-bpe (GGUF, the merges
  rule) on English, cold and warm; SGPE (a 32,000-token vocabulary trained by ``--setup``) on
  Sinhala, cold and warm, and in 2-thread batches;
* ``train``: SGPE training, 32,000 tokens on about 20 MB of Sinhala news, wall seconds and the
  process's peak RSS; ``train_full`` the same on all 84.6 MB of the Sinhala news;
* ``evaluate``: ``wwho.evaluate.evaluate_all`` of two tokenizers on the Sinhala FLORES devtest.

Each device names the benchmarks it can move (``DEVICES``). Switches: ``cache`` passes
``cache_bytes=0`` to ``ByteBPE``; ``evalcache`` sets the evaluator's line cache bound to 0; the core's
devices (``alloc``, ``huge``, ``ints``, ``bloom``, ``prefetch``, ``pools``) are turned off by
``WWHO_AB_OFF=name,...`` in a build with the temporary switches (see ``DEVICES``).

Results go to ``--out`` (JSON lines, one per process; appended, so runs can be resumed), then a
table: per device and benchmark, min/median/max of each arm, the ratio of the medians (on's
speed over off's, or off's RSS over on's: above 1 means the device helps) and whether the arms'
ranges overlap. The load average is recorded with every process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _measure import CORPORA, DATA, O200K_FILE, ROOT, require

LLAMA_GGUF = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
CACHE = ROOT / ".cache" / "bench_devices"
SGPE_DIR = CACHE / "sgpe-si-32k"
TRAIN_FILES = [CORPORA / "si" / "news-bbcsinhala.txt", CORPORA / "si" / "news-lankadeepa.txt"]
EN_FILE = CORPORA / "en" / "news-lk_news.txt"
SI_FILE = CORPORA / "si" / "news-adaderana.txt"
EVAL_FILE = CORPORA / "si" / "flores200-devtest.txt"
TEXT_BYTES = 4 << 20
TRAIN_BYTES = 20 << 20

#: device -> the workers whose benchmarks it can move. The devices kept after the A/B run of
#: docs/benchmarks.md ("Speed devices, on/off"); only ``cache`` and ``evalcache`` can be turned off
#: in every build. The others need the core's temporary ``WWHO_AB_OFF`` switches (commit
#: "bench_devices: A/B switches for the speed devices (temporary)"; revert the commit that removed
#: them, build, and name the devices with ``--devices``).
DEVICES = {
    "alloc": ["encode", "train", "train_full"],
    "huge": ["encode", "train"],
    "cache": ["encode"],
    "ints": ["encode"],
    "bloom": ["encode", "train"],
    "prefetch": ["encode", "train"],
    "pools": ["encode"],
    "evalcache": ["evaluate"],
}
#: the devices every build can turn off
RUNTIME = ["cache", "evalcache"]

#: metrics where lower is better (the rest are speeds)
LOWER = {"train_s", "train_rss_mb", "train_full_s", "train_full_rss_mb", "evaluate_s", "o200k_load_s"}


def lines_of(path: Path, limit: int) -> list[str]:
    out, size = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            out.append(line)
            size += len(line.encode())
            if size >= limit:
                break
    return out


def per_line(encode, lines: list[str], mb: float) -> float:
    t0 = time.thread_time()
    for line in lines:
        encode(line)
    return mb / (time.thread_time() - t0)


def batches(tok, lines: list[str], mb: float, threads: int) -> dict[str, float]:
    """Two passes of 2,000-line batches: MB/s of the calling thread's CPU time on one thread; on
    two, of wall time and of the process's CPU time (which a loaded machine inflates less)."""
    r = {}
    for name in ("cold", "warm"):
        t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
        for i in range(0, len(lines), 2000):
            tok.encode_batch(lines[i:i + 2000], num_threads=threads)
        if threads == 1:
            r[name] = mb / (time.thread_time() - c0)
        else:
            r[name] = mb / (time.perf_counter() - t0)
            r[name + "_cpu"] = mb / (time.process_time() - p0)
    return r


def work_encode(off: set[str]) -> dict[str, float]:
    from wwho import ByteBPE
    from wwho.sgpe import SGPETokenizer

    cache = {} if "cache" not in off else {"cache_bytes": 0}
    en, si = lines_of(EN_FILE, TEXT_BYTES), lines_of(SI_FILE, TEXT_BYTES)
    en_mb = sum(len(x.encode()) for x in en) / 1e6
    si_mb = sum(len(x.encode()) for x in si) / 1e6
    r: dict[str, float] = {}

    def o200k():
        return ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE, **cache)

    t0 = time.thread_time()
    tok = o200k()
    r["o200k_load_s"] = time.thread_time() - t0
    r["o200k_en_cold"] = per_line(tok.encode_ordinary, en, en_mb)
    r["o200k_en_warm"] = per_line(tok.encode_ordinary, en, en_mb)
    tok = o200k()
    r["o200k_si_cold"] = per_line(tok.encode_ordinary, si, si_mb)
    r["o200k_si_warm"] = per_line(tok.encode_ordinary, si, si_mb)
    del tok
    for threads in (1, 2):
        for k, v in batches(o200k(), en, en_mb, threads).items():
            r[f"o200k_en_batch{threads}_{k}"] = v
    llama = ByteBPE.from_gguf(LLAMA_GGUF, **cache)
    r["llama_en_cold"] = per_line(llama.encode_ordinary, en, en_mb)
    r["llama_en_warm"] = per_line(llama.encode_ordinary, en, en_mb)
    del llama
    sgpe = SGPETokenizer.load(SGPE_DIR)
    r["sgpe_si_cold"] = per_line(sgpe.encode, si, si_mb)
    r["sgpe_si_warm"] = per_line(sgpe.encode, si, si_mb)
    for k, v in batches(SGPETokenizer.load(SGPE_DIR), si, si_mb, 2).items():
        r[f"sgpe_si_batch2_{k}"] = v
    return r


def training_text() -> Path:
    path = CACHE / "train-si-20mb.txt"
    if not path.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        text = "".join(Path(f).read_text(encoding="utf-8") for f in TRAIN_FILES)
        path.write_bytes(text.encode()[:TRAIN_BYTES].decode(errors="ignore").rsplit("\n", 1)[0].encode() + b"\n")
    return path


def work_train(off: set[str]) -> dict[str, float]:
    from wwho.sgpe import SGPETokenizer

    path = training_text()
    t0 = time.perf_counter()
    SGPETokenizer.train([str(path)], vocab_size=32_000, script="sinhala", progress=False)
    seconds = time.perf_counter() - t0
    return {"train_s": seconds, "train_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def work_train_full(off: set[str]) -> dict[str, float]:
    """The same training on all the Sinhala news (84.6 MB): where freed memory weighs most."""
    from wwho.sgpe import SGPETokenizer

    files = sorted(str(f) for f in (CORPORA / "si").glob("news-*.txt"))
    t0 = time.perf_counter()
    SGPETokenizer.train(files, vocab_size=32_000, script="sinhala", progress=False)
    seconds = time.perf_counter() - t0
    return {"train_full_s": seconds,
            "train_full_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def work_evaluate(off: set[str]) -> dict[str, float]:
    import wwho.cut_structure as cuts
    import wwho.evaluate as ev

    if "evalcache" in off:
        cuts._STRUCTURES.max_bytes = 0
    os.environ.setdefault("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    t0 = time.perf_counter()
    ev.evaluate_all([str(SGPE_DIR), "tiktoken:o200k_base"], [str(EVAL_FILE)])
    return {"evaluate_s": time.perf_counter() - t0}


WORKERS = {"encode": work_encode, "train": work_train, "train_full": work_train_full, "evaluate": work_evaluate}
#: worker -> the shared data it reads
NEEDS = {"encode": [EN_FILE, SI_FILE, O200K_FILE, LLAMA_GGUF], "train": TRAIN_FILES,
         "train_full": [CORPORA / "si" / "news-*.txt"], "evaluate": [O200K_FILE, EVAL_FILE]}


def run(worker: str, off: str) -> dict:
    env = dict(os.environ, WWHO_AB_OFF=off)
    proc = subprocess.run([sys.executable, __file__, "--worker", worker], env=env, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{worker} (off: {off or '-'}) failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def setup() -> None:
    if not (SGPE_DIR / "vocab.json").is_file():
        from wwho.sgpe import SGPETokenizer

        SGPE_DIR.parent.mkdir(parents=True, exist_ok=True)
        SGPETokenizer.train([str(training_text())], vocab_size=32_000, script="sinhala", progress=False).save(SGPE_DIR)


def summary(path: Path, devices: list[str]) -> None:
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []
    if not rows:  # (--rounds 0 writes none)
        sys.exit(f"{path}: no results")
    loads = [r["load"] for r in rows]
    print(f"{len(rows)} processes; load average (1 min) {min(loads):.2f}-{max(loads):.2f}, "
          f"median {statistics.median(loads):.2f}")
    print("| device | benchmark | on: min / median / max | off: min / median / max | on vs off, paired: "
          "median (min-max) | rounds on ahead |")
    print("|---|---|---|---|---:|---:|")
    for device in devices:
        mine = [r for r in rows if r["device"] == device]
        metrics = sorted({k for r in mine for k in r["metrics"]})
        for m in metrics:
            pairs = {}
            for r in mine:
                if m in r["metrics"]:
                    pairs.setdefault(r["round"], {})[r["arm"]] = r["metrics"][m]
            pairs = [p for p in pairs.values() if len(p) == 2]
            if not pairs:
                continue
            on, off = [p["on"] for p in pairs], [p["off"] for p in pairs]
            # above 1: the device helps (faster, or a lower time or RSS)
            ratios = [p["off"] / p["on"] if m in LOWER else p["on"] / p["off"] for p in pairs]
            fmt = (lambda v: f"{v:.2f}") if m in LOWER else (lambda v: f"{v:.1f}")
            print(f"| {device} | {m} | {fmt(min(on))} / {fmt(statistics.median(on))} / {fmt(max(on))} | "
                  f"{fmt(min(off))} / {fmt(statistics.median(off))} / {fmt(max(off))} | "
                  f"x{statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
                  f"{sum(x > 1 for x in ratios)}/{len(ratios)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", choices=sorted(WORKERS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--first-round", type=int, default=0, help="number of the first round (to add rounds to --out)")
    ap.add_argument("--devices", nargs="*", default=RUNTIME, choices=list(DEVICES),
                    help=f"default: {' '.join(RUNTIME)} (the others need the A/B switches, see DEVICES)")
    ap.add_argument("--out", type=Path, default=CACHE / "devices.jsonl")
    ap.add_argument("--summary", action="store_true", help="only print the table of --out")
    args = ap.parse_args()
    if args.summary and not args.out.is_file():
        ap.error(f"--summary: {args.out}: no such file (a run without --summary writes it)")
    if args.worker:
        require(*NEEDS[args.worker])
        off = {x for x in os.environ.get("WWHO_AB_OFF", "").split(",") if x}
        print(json.dumps(WORKERS[args.worker](off)))
        return
    if not args.summary:
        workers = {w for device in args.devices for w in DEVICES[device]}
        require(*dict.fromkeys([*TRAIN_FILES, *(p for w in sorted(workers) for p in NEEDS[w])]))  # setup(): TRAIN_FILES
        setup()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        for rnd in range(args.first_round, args.first_round + args.rounds):
            for device in args.devices:
                for worker in DEVICES[device]:
                    for arm in (("on", "off") if rnd % 2 == 0 else ("off", "on")):
                        load = os.getloadavg()[0]
                        metrics = run(worker, device if arm == "off" else "")
                        row = {"round": rnd, "device": device, "arm": arm, "worker": worker,
                               "load": load, "metrics": metrics}
                        with open(args.out, "a") as f:
                            f.write(json.dumps(row) + "\n")
                        print(f"round {rnd} {device} {arm} {worker} load {load:.2f}", file=sys.stderr, flush=True)
    summary(args.out, args.devices)


if __name__ == "__main__":
    main()
