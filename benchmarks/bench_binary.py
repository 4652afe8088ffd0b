"""Binary BPE: training throughput and peak memory on system binaries, bytes per token held out.

Input: ELF executables and shared libraries under /usr/lib, /usr/bin, /usr/sbin and
/usr/libexec (regular files, not symlinks, at most 64 MiB each), in sorted path order.
Every 10th file is held out; the others are taken in order until ``--mb`` megabytes
(10^6 bytes). Each run trains in a fresh child process so that its peak RSS
(``ru_maxrss``) is its own.

Runs (``--runs``, comma separated):
- ``wwho``: ``wwho.binary.train`` phases: ingestion (walk, fixed windows, counting),
  then HF ``BpeTrainer`` fed the counted windows. MB/s = input MB / total seconds.
- ``hf``: the peer: stock HF ``train_from_iterator`` on the list of window strings read
  the naive way (every window kept, no aggregation): same merges, no wwho code.
- ``capped``: ``wwho`` with ``--max-docs`` (default: a quarter of the windows), to show
  how the caps bound memory and time.
- ``feed`` (not in the default list): the cost of feeding counted windows versus HF's plain
  list, isolated by training a single merge; and a corpus of one window repeated.

Wall times depend on what else runs on the machine; CPU seconds are printed too.

After the ``wwho`` run, the tokenizer encodes the held-out files (up to ``--heldout-mb``)
and prints bytes/token, the round-trip check, and encode MB/s.

    .venv/bin/python benchmarks/bench_binary.py [--mb 200] [--vocab 32768] [--min-frequency 1024]
        [--window 4096] [--runs wwho,hf,capped] [--heldout-mb 20] [--threads N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOTS = ["/usr/lib", "/usr/bin", "/usr/sbin", "/usr/libexec"]
RUNS = ("wwho", "hf", "capped", "feed")  # see the module docstring
MAX_FILE = 64 << 20


def elf_files() -> list[Path]:
    found = []
    for root in ROOTS:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = Path(dirpath) / name
                try:
                    if path.is_symlink() or not path.is_file() or not 0 < path.stat().st_size <= MAX_FILE:
                        continue
                    with open(path, "rb") as f:
                        if f.read(4) == b"\x7fELF":
                            found.append(path)
                except OSError:
                    continue
    return found


def split(files: list[Path], mb: float, heldout_mb: float) -> tuple[list[Path], list[Path]]:
    train, held, n_train, n_held = [], [], 0, 0
    for i, path in enumerate(files):
        size = path.stat().st_size
        if i % 10 == 9:
            if n_held + size <= heldout_mb * 1e6:
                held.append(path)
                n_held += size
        elif n_train < mb * 1e6:
            train.append(path)
            n_train += size
    return train, held


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def child(spec: dict) -> dict:
    """One run, in this (fresh) process; returns timings and memory."""
    if spec.get("threads"):
        os.environ["RAYON_NUM_THREADS"] = str(spec["threads"])
    from tokenizers import Tokenizer, models, trainers

    from wwho import binary
    from wwho.binary import IngestOptions, count_windows, train_from_counts

    files = [Path(p) for p in spec["files"]]
    out: dict = {"run": spec["run"]}
    if spec["run"] == "feed":
        return feed_child(files, spec["window"])
    t0 = time.perf_counter()
    if spec["run"] == "hf":
        windows = []
        for path in files:
            data = path.read_bytes()
            w = spec["window"]
            windows.extend(data[i:i + w].decode("latin-1") for i in range(0, len(data), w))
        out["ingest_s"] = time.perf_counter() - t0
        out["rss_after_ingest_mb"] = rss_mb()
        tok = Tokenizer(models.BPE())
        trainer = trainers.BpeTrainer(vocab_size=spec["vocab"] - 135, min_frequency=spec["min_frequency"],
                                      initial_alphabet=[chr(b) for b in range(256)], show_progress=False)
        tok.train_from_iterator(windows, trainer, length=len(windows))
        out["windows"] = len(windows)
    else:
        options = IngestOptions(window_bytes=spec["window"], max_docs=spec.get("max_docs"))
        counted = count_windows(files, options=options)
        out["ingest_s"] = time.perf_counter() - t0
        out["rss_after_ingest_mb"] = rss_mb()
        out["windows"] = counted.stats.windows_seen
        out["kept"] = counted.stats.windows_counted
        out["distinct"] = counted.stats.distinct
        out["kept_bytes"] = sum(len(w) * n for w, n in counted.counts.items())
        tok = train_from_counts(counted.counts, vocab_size=spec["vocab"], min_frequency=spec["min_frequency"])
        del counted
    out["total_s"] = time.perf_counter() - t0
    out["train_s"] = out["total_s"] - out["ingest_s"]
    out["peak_rss_mb"] = rss_mb()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out["cpu_s"] = usage.ru_utime + usage.ru_stime
    out["model_vocab"] = tok.get_vocab_size(with_added_tokens=False)
    out["model_sha256"] = hashlib.sha256(json.dumps(json.loads(tok.to_str())["model"]).encode()).hexdigest()
    out["total_vocab"] = tok.get_vocab_size(with_added_tokens=True)
    if spec.get("heldout"):
        n_bytes = n_tokens = 0
        ok = True
        t1 = time.perf_counter()
        for path in spec["heldout"]:
            data = Path(path).read_bytes()
            ids = binary.encode_bytes(tok, data).ids
            ok &= binary.decode_to_bytes(tok, ids) == data
            n_bytes += len(data)
            n_tokens += len(ids)
        out["heldout"] = {"files": len(spec["heldout"]), "bytes": n_bytes, "tokens": n_tokens,
                          "bytes_per_token": n_bytes / n_tokens, "round_trip": ok,
                          "encode_decode_s": time.perf_counter() - t1}
        if spec.get("save"):
            binary.save(tok, spec["save"])
    return out


def feed_child(files: list[Path], window: int) -> dict:
    """Cost of handing windows to HF: counted (wwho) vs the plain list (HF), one merge only.

    Both train to 257 tokens, so the time is feeding + HF's pair counting, which is the
    same work on both sides; the difference is the feed. Best of 3, alternating.
    """
    from tokenizers import Tokenizer, models, trainers

    from wwho.binary import train_from_counts

    windows = []
    for path in files:
        data = path.read_bytes()
        windows.extend(data[i:i + window] for i in range(0, len(data), window))
    counts: dict[bytes, int] = {}
    for w in windows:
        counts[w] = counts.get(w, 0) + 1
    texts = [w.decode("latin-1") for w in windows]
    no_specials = dict(standard_specials=False, mask=False, unk=False, reserve=0, pad_to_power_of_two=False)

    def hf(items: list[str]) -> float:
        t = time.perf_counter()
        trainer = trainers.BpeTrainer(vocab_size=257, initial_alphabet=[chr(b) for b in range(256)],
                                      show_progress=False)
        Tokenizer(models.BPE()).train_from_iterator(items, trainer, length=len(items))
        return time.perf_counter() - t

    def ours(c: dict[bytes, int]) -> float:
        t = time.perf_counter()
        train_from_counts(c, vocab_size=257, min_frequency=0, **no_specials)
        return time.perf_counter() - t

    # A corpus of one repeated window: the counted feed repeats it; HF gets the same repeats as a list.
    dup_n = max(1, sum(map(len, windows)) // window)
    dup = {windows[len(windows) // 2]: dup_n}
    dup_list = [windows[len(windows) // 2].decode("latin-1")] * dup_n
    best = {"hf": [], "wwho": [], "hf_dup": [], "wwho_dup": []}
    for _ in range(3):
        best["hf"].append(hf(texts))
        best["wwho"].append(ours(counts))
        best["hf_dup"].append(hf(dup_list))
        best["wwho_dup"].append(ours(dup))
    return {"run": "feed", "bytes": sum(map(len, windows)), "windows": len(windows), "distinct": len(counts),
            "dup_n": dup_n, **{k: min(v) for k, v in best.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--min-frequency", type=int, default=1024)
    ap.add_argument("--window", type=int, default=4096)
    ap.add_argument("--runs", default="wwho,hf,capped", help=f"comma separated, of: {', '.join(RUNS)}")
    ap.add_argument("--max-docs", type=int, help="for the capped run (default: a quarter of the windows)")
    ap.add_argument("--heldout-mb", type=float, default=20)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--save", help="write the wwho run's tokenizer.json here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(Path(args.child).read_text()))))
        return
    runs = args.runs.split(",")
    unknown = [run for run in runs if run not in RUNS]
    if unknown:  # child() would measure any other name as the wwho run
        ap.error(f"--runs: unknown run {', '.join(map(repr, unknown))}; the runs: {', '.join(RUNS)}")

    files = elf_files()
    train, held = split(files, args.mb, args.heldout_mb)
    n_train = sum(p.stat().st_size for p in train)
    n_held = sum(p.stat().st_size for p in held)
    print(f"{len(files)} ELF files found; training on {len(train)} files = {n_train / 1e6:.1f} MB, "
          f"held out {len(held)} files = {n_held / 1e6:.1f} MB; vocab {args.vocab}, min_frequency "
          f"{args.min_frequency}, window {args.window}, {os.cpu_count()} CPUs, "
          f"threads {args.threads or 'all'}")
    if n_train < args.mb * 1e6 * 0.9:
        print(f"note: only {n_train / 1e6:.1f} MB of ELF files on this machine")
    results, failed = {}, []
    for run in runs:
        spec = {"run": run, "files": [str(p) for p in train], "vocab": args.vocab,
                "min_frequency": args.min_frequency, "window": args.window, "threads": args.threads}
        if run == "wwho":
            spec["heldout"] = [str(p) for p in held]
            spec["save"] = args.save
        if run == "capped":
            spec["max_docs"] = args.max_docs or max(1, int(n_train / args.window / 4))
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(spec, f)
        try:
            proc = subprocess.run([sys.executable, __file__, "--child", f.name],
                                  capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        if proc.returncode != 0:
            print(f"{run}: failed\n{proc.stderr}")
            failed.append(run)
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results[run] = r
        if run == "feed":
            mb = r["bytes"] / 1e6
            print(f"   feed: {mb:.1f} MB in {r['windows']:,} windows ({r['distinct']:,} distinct), "
                  f"feed + pair counting, best of 3: wwho {r['wwho']:.2f} s, hf {r['hf']:.2f} s, "
                  f"ratio {r['wwho'] / r['hf']:.2f}x; "
                  f"one window x {r['dup_n']:,}: wwho {r['wwho_dup']:.2f} s, hf {r['hf_dup']:.2f} s, "
                  f"ratio {r['wwho_dup'] / r['hf_dup']:.2f}x")
            continue
        mbps = n_train / 1e6 / r["total_s"]
        extra = f", max_docs {spec['max_docs']:,}: {r['kept']:,} windows kept" if run == "capped" else ""
        print(f"{run:>7}: {r['total_s']:8.1f} s total ({r['ingest_s']:.1f} s reading, "
              f"{r['train_s']:.1f} s training)"
              f" = {mbps:.3f} MB input/s; peak RSS {r['peak_rss_mb']:,.0f} MB (after reading "
              f"{r['rss_after_ingest_mb']:,.0f} MB); CPU {r['cpu_s']:.0f} s; "
              f"model vocab {r['model_vocab']:,}, total {r['total_vocab']:,}"
              f"{extra}")
        if "distinct" in r and run == "wwho":
            print(f"         {r['windows']:,} windows, {r['distinct']:,} distinct")
        if "heldout" in r:
            h = r["heldout"]
            print(f"         held out: {h['bytes']:,} bytes -> {h['tokens']:,} tokens = "
                  f"{h['bytes_per_token']:.3f} bytes/token; "
                  f"round trip {'exact' if h['round_trip'] else 'FAILED'}; "
                  f"encode+decode {h['bytes'] / 1e6 / h['encode_decode_s']:.2f} MB/s")
            if not h["round_trip"]:
                failed.append(f"{run} (round trip)")
    if "wwho" in results and "hf" in results:
        w, h = results["wwho"], results["hf"]
        print(f"ratios wwho/hf: time {w['total_s'] / h['total_s']:.2f}x, peak RSS "
              f"{w['peak_rss_mb'] / h['peak_rss_mb']:.2f}x, "
              f"identical BPE model: {w['model_sha256'] == h['model_sha256']}")
    if "wwho" in results and "capped" in results:
        w, c = results["wwho"], results["capped"]
        print(f"ratios capped/wwho: time {c['total_s'] / w['total_s']:.2f}x, peak RSS "
              f"{c['peak_rss_mb'] / w['peak_rss_mb']:.2f}x")
    if failed:  # after the others' figures, but never a success: run_all.py records the exit status
        sys.exit(f"failed: {', '.join(failed)} (see above)")


if __name__ == "__main__":
    main()
