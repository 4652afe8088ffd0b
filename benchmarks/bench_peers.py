"""Byte-level o200k_base: wwho against every exact peer, cold, warm and in batches, ids checked.

    python benchmarks/bench_peers.py [--mb 2] [--rounds 3] [--langs en si] [--threads 1 2]

What: GPT-4o's o200k_base in wwho (``ByteBPE.from_tiktoken``: ``encode_ordinary``, ``encode_batch``,
``encode_to_numpy``, ``encode_batch_to_numpy``) and in every peer from the package index that is
meant to give tiktoken's ids: tiktoken itself, fastokens, quicktok-v1 (imported as ``quicktok``),
riptoken, bpe-openai and Hugging Face ``tokenizers``. A peer that is not installed is skipped with
a message (``pip install fastokens quicktok-v1 riptoken bpe-openai``).

Every tokenizer is loaded offline from the shared ranks file (``tiktoken/o200k_base.tiktoken`` in
``WWHO_SHARED_DATA``, else ``../shared/data``) where the library allows it:

- tiktoken: ``tiktoken.Encoding`` over ``load_tiktoken_bpe(file)`` (its cache off: ``shared_ranks``),
  o200k's pattern and specials;
- wwho: ``ByteBPE.from_tiktoken("o200k_base", tiktoken_file=file)``;
- fastokens: ``Tokenizer.from_tiktoken(file, encoding="o200k_base")`` (its o200k pattern preset);
- riptoken: ``CoreBPE(load_tiktoken_bpe(file), specials, o200k pattern)``;
- quicktok: the file's ranks written in quicktok's own vocabulary format (its importer's
  ``write_files``, with its o200k scanner) under ``.cache/bench_peers/``, then
  ``quicktok.Tokenizer("o200k_shared", that folder)``; the package also ships its own copy;
- HF ``tokenizers``: wwho's exact export of the same file (``ByteBPE.export_hf``: BPE model, a
  ``Split`` with o200k's regex, ``ByteLevel``), cached under ``.cache/bench_peers/``;
- bpe-openai: ships its own o200k inside its compiled backend (no way to load a file); its ranks
  (the copy its Python wrapper reads) are compared with the shared file's at start.

Data: held-out news text, English ``corpora/en/news-lk_news.txt`` and Sinhala
``corpora/si/news-bbcsinhala.txt``, one text per non-empty line; ``--mb`` caps the bytes used per
language (default: the whole file). ``--langs hi-flores bn-flores ...`` uses FLORES-200 devtest of
that language instead (about 0.35 MB: take ``--rounds 1``), and ``--langs si-en hi-en`` mixed text, the
shared code-switched corpora (Sinhala-English news lines, 1.7 MB; Hindi-English tweets, 1.1 MB). Line ``i`` belongs to round ``i % rounds``, so every round
has its own lines, of the same kind, never seen before by any object of that round's process.

Measured, for each tokenizer and each mode where the library has one:

- cold: a fresh tokenizer object's first pass over the round's lines, one call per line;
- warm: the second pass, same object;
- batch lists cold / warm: the library's batch call over all the round's lines, on a fresh object,
  then again on the same object; on 1 and 2 threads. wwho, tiktoken, quicktok and bpe-openai take
  a thread count; fastokens, riptoken and HF ``tokenizers`` have no thread option (each runs its
  own rayon pool), so each thread count runs in its own process with ``RAYON_NUM_THREADS`` (and
  ``RAYON_RS_NUM_CPUS``, ``FASTOKENS_BPE_THREADS``) set to it; quicktok's batch call returns
  arrays only, so it has no lists row;
- batch arrays cold / warm: the same, for calls that return flat arrays of ids
  (wwho ``encode_batch_to_numpy``, fastokens ``encode_batch_flat``, quicktok ``encode_batch``);
  per line, ``encode_to_numpy`` (wwho and tiktoken).

How: each round of each language runs in fresh processes (one for the per-line modes and the
1-thread batches, one per further thread count), so the per-line cold pass is cold for the process
too: the first object of each library pays that library's one-time setup (wwho's Unicode class
table is built on its first encode), as a user's fresh process does. The 1-thread batches run
after the per-line passes in that process: their objects are fresh, but each library's one-time
setup is already paid there (in the processes of the other thread counts it is not). Within a process the tokenizers are
interleaved so drift in the machine's load hits all of them alike: the per-line passes go chunk
by chunk (``--chunk-kb``), every tokenizer on each chunk before the next chunk, the order rotated
each chunk; batch passes go round-robin, the order rotated each round. Every timed pass reads its
own fresh copies of the lines (CPython keeps the UTF-8 form of a str once an extension has asked
for it, so the second tokenizer on the same str objects would be spared that copy). Outputs are
compared with tiktoken's ids and dropped outside the timed region, the collector run before each
timed call. What a pass keeps alive matters: with one chunk per pass (``--chunk-kb 10000``) a
pass's lists stay alive to its end, the collector walks them again and again, and the tokenizers
that make more Python objects (tiktoken's ids are int objects) slow down more, so every ratio to
tiktoken grows (wwho's cold English x2.3 becomes x3.1), while the ratios between the Rust peers
hardly move. Times: CPU time of the calling thread (``time.thread_time``) for the per-line modes,
CPU time of the whole process (``time.process_time``, all threads) for batches, and wall time
for both; shown as MB/s (10^6 bytes of UTF-8 per second) and as the ratio to tiktoken's same
mode in the same round, min-max over the rounds. On a shared machine the CPU-time figures are the
ones to read; wall time says what the load left.

Exactness: every line of every mode is compared with tiktoken's ``encode_ordinary`` ids; first, a
pre-check on adversarial inputs (runs of spaces, including ``" " * 1000``, of newlines and tabs,
random whitespace, random Latin-1, random CJK, long digit runs, mixed scripts and emoji), each
alone and as a batch. Non-exact peers are reported, not dropped.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata as md
import json
import os
import random
import subprocess
import sys
import time
from itertools import chain
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS threads would spin beside us

import numpy as np
from _measure import CORPORA, O200K_FILE, ROOT, machine, require

CACHE = ROOT / ".cache" / "bench_peers"
HF_JSON = CACHE / "o200k_base.tokenizer.json"
QT_DIR = CACHE / "quicktok"
CORPUS = {"en": CORPORA / "en" / "news-lk_news.txt", "si": CORPORA / "si" / "news-bbcsinhala.txt"}
#: FLORES-200 devtest of every other language of the shared corpora (``--langs hi-flores ...``): about
#: 0.35 MB each, so one round (``--rounds 1``) is the sensible setting.
CORPUS.update({f"{lang}-flores": CORPORA / lang / "flores200-devtest.txt"
               for lang in ("hi", "bn", "ta", "ml", "te", "kn", "mr", "gu", "pa", "or", "ne", "sa", "si", "en")})
#: Mixed text (``--langs si-en hi-en``): Sinhala news lines that switch to English words and names, and
#: Hindi-English tweets (romanized Hindi, Devanagari, emoji, URLs), the shared code-switched corpora.
CORPUS.update({"si-en": CORPORA / "si-en" / "news-codeswitched-lines.txt",
               "hi-en": CORPORA / "hi-en" / "hasoc2019-tweets-not-offensive.txt"})
PACKAGES = {
    "wwho": "wwho",
    "tiktoken": "tiktoken",
    "fastokens": "fastokens",
    "quicktok": "quicktok-v1",
    "riptoken": "riptoken",
    "bpe-openai": "bpe-openai",
    "HF tokenizers": "tokenizers",
}
MB = 1_000_000
SPECIALS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


# --- the tokenizers -----------------------------------------------------------------------------


def o200k_pattern() -> str:
    from wwho.bytelevel.tiktoken_loader import get_encoding

    return get_encoding("o200k_base", tiktoken_file=O200K_FILE)._pat_str


def shared_ranks() -> dict[bytes, int]:
    """The shared file's ranks, parsed by tiktoken's own ``load_tiktoken_bpe`` with its cache off:
    it caches a local path as it does a download, a 3.6 MB copy in $TMPDIR/data-gym-cache left
    behind, unless ``TIKTOKEN_CACHE_DIR`` is empty (its switch for no cache, tiktoken/load.py)."""
    import tiktoken.load

    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    try:
        return tiktoken.load.load_tiktoken_bpe(str(O200K_FILE))
    finally:
        if before is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before


def prepare() -> None:
    """The files that some peers load instead of the ``.tiktoken`` one (made once, cached)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    if not HF_JSON.exists():
        import wwho

        tmp = HF_JSON.with_name("tmp-" + HF_JSON.name)  # ending in .json: export_hf writes one file
        wwho.ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE).export_hf(tmp)
        tmp.replace(HF_JSON)
    try:
        from quicktok import _import_core as qt_core
    except ImportError:
        return
    if not (QT_DIR / "o200k_shared.enc").exists():
        QT_DIR.mkdir(parents=True, exist_ok=True)
        ranks = shared_ranks()
        qt_core.write_files(str(QT_DIR), "o200k_shared", ranks, SPECIALS, "o200k", False)
        qt_core.ensure_tables(str(QT_DIR), str(Path(qt_core.__file__).parent / "data"), "o200k", False)


def fast_lists(enc, texts, threads):
    return [e.ids for e in enc.encode_batch(texts)]


def fast_flat(enc, texts, threads):
    ids, offsets = enc.encode_batch_flat(texts)
    return np.frombuffer(ids, dtype=np.uint32), np.frombuffer(offsets, dtype=np.uint64)


def entries(pattern: str) -> list[dict]:
    """Each tokenizer and API: ``load()`` a fresh object, ``line(obj)`` the per-line call or None,
    ``batch(obj, texts, threads)`` or None, ``kind``: what the calls return (lists or arrays)."""
    out: list[dict] = []

    def add(name, lib, kind, load, line=None, batch=None):
        out.append({"name": name, "lib": lib, "kind": kind, "load": load, "line": line, "batch": batch})

    import tiktoken

    def tiktoken_load():
        return tiktoken.Encoding(
            name="o200k_base",
            pat_str=pattern,
            special_tokens=SPECIALS,
            mergeable_ranks=shared_ranks(),
        )

    add(
        "tiktoken",
        "tiktoken",
        "lists",
        tiktoken_load,
        lambda e: e.encode_ordinary,
        lambda e, texts, n: e.encode_ordinary_batch(texts, num_threads=n),
    )
    add("tiktoken encode_to_numpy", "tiktoken", "arrays", tiktoken_load, lambda e: e.encode_to_numpy)

    import wwho

    def wwho_load():
        return wwho.ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)

    add(
        "wwho",
        "wwho",
        "lists",
        wwho_load,
        lambda e: e.encode_ordinary,
        lambda e, texts, n: e.encode_batch(texts, num_threads=n),
    )
    add(
        "wwho arrays",
        "wwho",
        "arrays",
        wwho_load,
        lambda e: e.encode_to_numpy,
        lambda e, texts, n: e.encode_batch_to_numpy(texts, num_threads=n),
    )
    try:
        import fastokens

        def fast_load():
            return fastokens.Tokenizer.from_tiktoken(str(O200K_FILE), encoding="o200k_base")

        add(
            "fastokens",
            "fastokens",
            "lists",
            fast_load,
            lambda e: lambda t: e.encode_ordinary(t).ids,
            fast_lists,
        )
        add("fastokens arrays", "fastokens", "arrays", fast_load, None, fast_flat)
    except ImportError:
        print("fastokens: skipped (not installed: pip install fastokens)", file=sys.stderr)
    try:
        import quicktok

        def qt_load():
            return quicktok.Tokenizer("o200k_shared", str(QT_DIR))

        add("quicktok", "quicktok", "lists", qt_load, lambda e: e.encode_ordinary)
        add(
            "quicktok arrays",
            "quicktok",
            "arrays",
            qt_load,
            None,
            lambda e, texts, n: e.encode_batch(texts, n),
        )
    except ImportError:
        print("quicktok: skipped (not installed: pip install quicktok-v1)", file=sys.stderr)
    try:
        import riptoken

        def rip_load():
            return riptoken.CoreBPE(riptoken.load_tiktoken_bpe(str(O200K_FILE)), SPECIALS, pattern)

        add(
            "riptoken",
            "riptoken",
            "lists",
            rip_load,
            lambda e: e.encode_ordinary,
            lambda e, texts, n: e.encode_ordinary_batch(texts),
        )
    except ImportError:
        print("riptoken: skipped (not installed: pip install riptoken)", file=sys.stderr)
    try:
        import bpe_openai

        add(
            "bpe-openai",
            "bpe-openai",
            "lists",
            lambda: bpe_openai.get_encoding("o200k_base"),
            lambda e: e.encode_ordinary,
            lambda e, texts, n: e.encode_ordinary_batch(texts, num_threads=n),
        )
    except ImportError:
        print("bpe-openai: skipped (not installed: pip install bpe-openai)", file=sys.stderr)
    import tokenizers

    add(
        "HF tokenizers",
        "HF tokenizers",
        "lists",
        lambda: tokenizers.Tokenizer.from_file(str(HF_JSON)),
        lambda e: lambda t: e.encode(t, add_special_tokens=False).ids,
        lambda e, texts, n: [x.ids for x in e.encode_batch_fast(texts, add_special_tokens=False)],
    )
    return out


# --- measuring ----------------------------------------------------------------------------------


def fresh(lines: list[str]) -> list[str]:
    """New str objects with the same text (see the module's docstring)."""
    return [line.encode("utf-8").decode("utf-8") for line in lines]


def flatten(out, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Ids and per-line counts of a per-line pass or a batch call, for the comparison."""
    if kind == "arrays" and isinstance(out, tuple):
        ids, offsets = out
        return np.asarray(ids, dtype=np.uint32), np.diff(np.asarray(offsets, dtype=np.int64))
    if kind == "arrays":
        return (
            np.concatenate(out).astype(np.uint32) if out else np.zeros(0, np.uint32),
            np.array([len(a) for a in out], dtype=np.int64),
        )
    return (
        np.fromiter(chain.from_iterable(out), dtype=np.uint32),
        np.fromiter(map(len, out), dtype=np.int64, count=len(out)),
    )


class Reference:
    """tiktoken's ids of a list of lines, as arrays (not tracked by the collector)."""

    def __init__(self, enc, lines: list[str]):
        self.ids, self.counts = flatten([enc.encode_ordinary(t) for t in lines], "lists")
        self.starts = np.zeros(len(lines) + 1, dtype=np.int64)
        np.cumsum(self.counts, out=self.starts[1:])

    def check(self, out, kind: str, first: int, n: int) -> list[int]:
        """Indexes (from ``first``) of the lines among ``first:first+n`` whose ids differ."""
        ids, counts = flatten(out, kind)
        want_counts = self.counts[first : first + n]
        want = self.ids[self.starts[first] : self.starts[first + n]]
        if np.array_equal(counts, want_counts) and np.array_equal(ids, want):
            return []
        bad = []
        got_starts = np.concatenate([[0], np.cumsum(counts)])
        for i in range(n):
            g = ids[got_starts[i] : got_starts[i + 1]]
            w = self.ids[self.starts[first + i] : self.starts[first + i + 1]]
            if not np.array_equal(g, w):
                bad.append(first + i)
        return bad


def timed(call, *args):
    """``call(*args)``, its CPU time (this thread, this process) and wall time, the collector run first."""
    gc.collect()
    t0, p0, w0 = time.thread_time(), time.process_time(), time.perf_counter()
    out = call(*args)
    return out, time.thread_time() - t0, time.process_time() - p0, time.perf_counter() - w0


def per_line_pass(fn, texts: list[str]) -> list:
    return [fn(x) for x in texts]


def chunks(lines: list[str], size: int) -> list[tuple[int, int]]:
    spans, start, acc = [], 0, 0
    for i, line in enumerate(lines):
        acc += len(line.encode("utf-8"))
        if acc >= size:
            spans.append((start, i + 1))
            start, acc = i + 1, 0
    if start < len(lines):
        spans.append((start, len(lines)))
    return spans


def worker(args) -> None:
    """One round of one language in this process; prints a JSON record."""
    pattern = o200k_pattern()
    todo = entries(pattern)
    lines = round_lines(args.lang, args.mb, args.rounds, args.round)
    nbytes = sum(len(t.encode("utf-8")) for t in lines)
    ref_enc = todo[0]["load"]()
    ref = Reference(ref_enc, lines)
    del ref_enc
    res: dict = {"bytes": nbytes, "lines": len(lines), "times": {}, "load": {}, "bad": {}}

    def record(name, mode, t, p, w, bad):
        res["times"].setdefault(name, {})[mode] = [t, p, w]
        if bad:
            res["bad"].setdefault(name, {})[mode] = [len(bad), bad[0], lines[bad[0]][:80]]

    def load(e):
        obj, t, p, w = timed(e["load"])
        res["load"].setdefault(e["name"], []).append(p)
        return obj

    rot, threads = args.round, args.threads[0]
    if threads == 1:  # per-line modes, chunk by chunk
        per_line = [e for e in todo if e["line"]]
        objs = {e["name"]: load(e) for e in per_line}
        spans = chunks(lines, args.chunk_kb * 1000)
        for mode in ("cold", "warm"):
            acc = {e["name"]: [0.0, 0.0, 0.0, []] for e in per_line}
            for c, (a, b) in enumerate(spans):
                k = (rot + c) % len(per_line)
                for e in per_line[k:] + per_line[:k]:
                    texts, fn = fresh(lines[a:b]), e["line"](objs[e["name"]])
                    out, t, p, w = timed(per_line_pass, fn, texts)
                    s = acc[e["name"]]
                    s[0] += t
                    s[1] += p
                    s[2] += w
                    s[3] += ref.check(out, e["kind"], a, b - a)
                    del out, texts
            for name, (t, p, w, bad) in acc.items():
                record(name, mode, t, p, w, bad)
        del objs
    batched = [e for e in todo if e["batch"]]
    k = rot % len(batched)
    batched = batched[k:] + batched[:k]
    objs = {e["name"]: load(e) for e in batched}
    for mode in ("cold", "warm"):
        for e in batched:
            texts, obj = fresh(lines), objs[e["name"]]
            out, t, p, w = timed(e["batch"], obj, texts, threads)
            record(e["name"], f"batch {mode} {threads}t", t, p, w, ref.check(out, e["kind"], 0, len(lines)))
            del out, texts
    print(json.dumps(res))


def round_lines(lang: str, mb: float | None, rounds: int, r: int) -> list[str]:
    lines, total = [], 0
    with open(CORPUS[lang], encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            lines.append(line)
            total += len(line.encode("utf-8"))
            if mb and total >= mb * MB:
                break
    return lines[r::rounds]


# --- exactness pre-check ------------------------------------------------------------------------


def adversarial() -> dict[str, str]:
    rnd = random.Random(30)
    ws = " \t\n\r\x0b\x0c\u00a0\u1680\u2000\u2009\u200a\u2028\u2029\u202f\u205f\u3000\x85"
    latin1 = [chr(c) for c in range(0x20, 0x100) if c != 0x7F]
    return {
        '" " * 1000': " " * 1000,
        '" " * 1001 + "x"': " " * 1001 + "x",
        '" " * 100000': " " * 100_000,
        '"\\n" * 10000': "\n" * 10_000,
        '" \\n" * 5000': " \n" * 5000,
        '"\\t" * 5000 + "a"': "\t" * 5000 + "a",
        '"a " + " " * 5000 + "b"': "a " + " " * 5000 + "b",
        "random whitespace (64k)": "".join(rnd.choice(ws) for _ in range(65536)),
        "random whitespace and letters (64k)": "".join(rnd.choice(ws + "ab.1") for _ in range(65536)),
        "random Latin-1 (64k)": "".join(rnd.choice(latin1) for _ in range(65536)),
        "random CJK (32k)": "".join(chr(rnd.randrange(0x4E00, 0xA000)) for _ in range(32768)),
        "digits (10k)": "".join(rnd.choice("0123456789") for _ in range(10_000)),
        "one letter (100k)": "a" * 100_000,
        "mixed scripts and emoji": "Hello, ශ්‍රී ලංකාව! नमस्ते 世界 🙂🙂 Ünïcödé's 'll 're \r\n\r\n  x",
        "contractions and punctuation": "I'M HERE, you're THERE's... don't!!! ??? ///\\\\ $$$ 12345678",
    }


def precheck() -> None:
    """Prints a JSON record: for each tokenizer, the cases whose ids differ from tiktoken's."""
    pattern = o200k_pattern()
    todo = entries(pattern)
    ref_enc = todo[0]["load"]()
    cases = adversarial()
    texts = list(cases.values())
    ref = Reference(ref_enc, texts)
    out: dict = {"cases": len(cases), "bad": {}}
    names = list(cases)
    for e in todo:
        obj = e["load"]()
        bad = []
        if e["line"]:
            fn = e["line"](obj)
            for i, text in enumerate(texts):
                try:
                    got = [fn(text)]
                except Exception as exc:  # noqa: BLE001 - a refusal is reported like a mismatch
                    bad.append(f"{names[i]} (per line): {type(exc).__name__}: {exc}"[:200])
                    continue
                if ref.check(got, e["kind"], i, 1):
                    want = ref.ids[ref.starts[i] : ref.starts[i + 1]][:4].tolist()
                    got_ids = np.asarray(got[0])[:4].tolist()
                    bad.append(
                        f"{names[i]} (per line): {len(got[0])} ids {got_ids}..., tiktoken "
                        f"{ref.counts[i]} ids {want}..."
                    )
        if e["batch"]:
            for n in (1, 2):
                try:
                    wrong = ref.check(e["batch"](obj, list(texts), n), e["kind"], 0, len(texts))
                except Exception as exc:  # noqa: BLE001
                    bad.append(f"batch ({n}t): {type(exc).__name__}: {exc}"[:200])
                    continue
                bad += [f"{names[i]} (batch, {n}t)" for i in wrong]
        out["bad"][e["name"]] = bad
    print(json.dumps(out))


# --- the report ---------------------------------------------------------------------------------


def versions() -> str:
    out = []
    for label, dist in PACKAGES.items():
        try:
            out.append(f"{label} {md.version(dist)}")
        except md.PackageNotFoundError:
            out.append(f"{label} (not installed)")
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        out[0] += f" (main at `{head}`)" if head else ""
    except OSError:
        pass
    return ", ".join(out + [f"numpy {np.__version__}"])


def spawn(args, extra: list[str], threads: int) -> dict:
    env = dict(os.environ)
    for var in ("RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS", "FASTOKENS_BPE_THREADS"):
        env[var] = str(threads)
    env["TOKENIZERS_PARALLELISM"] = "true"
    cmd = [
        sys.executable,
        __file__,
        *extra,
        "--threads",
        str(threads),
        "--rounds",
        str(args.rounds),
        "--chunk-kb",
        str(args.chunk_kb),
    ] + (["--mb", str(args.mb)] if args.mb else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode:
        sys.exit(f"worker {' '.join(extra)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def span(values: list[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:{fmt}}-{hi:{fmt}}" if f"{lo:{fmt}}" != f"{hi:{fmt}}" else f"{lo:{fmt}}"


MODE_COLUMNS = ["cold", "warm"]


def table(lang: str, runs: list[dict], threads: list[int], clock: int, names: list[str],
          not_exact: frozenset[str] = frozenset()) -> list[str]:
    """One Markdown table: rows = tokenizers, columns = modes; ``clock`` 0/1 CPU, 2 wall. The lead
    rows compare wwho with the best of the exact peers (``not_exact``: left out of them)."""
    cols = MODE_COLUMNS + [f"batch {m} {n}t" for n in threads for m in ("cold", "warm")]

    def mbps(run, name, col):
        t = run["times"].get(name, {}).get(col)
        if t is None:
            return None
        seconds = t[0] if (clock == 0 and not col.startswith("batch")) else t[1] if clock != 2 else t[2]
        return run["bytes"] / MB / seconds if seconds > 0 else float("inf")

    def cell(name, col):
        speeds = [mbps(r, name, col) for r in runs]
        if None in speeds:
            return "-"
        base = [mbps(r, "tiktoken", col) for r in runs]
        return f"x{span([s / b for s, b in zip(speeds, base)], '.2f')} ({span(speeds, '.1f')})"

    lines = ["| " + lang + " | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(cell(name, c) for c in cols) + " |")
    peers = [n for n in names if not n.startswith("wwho") and n not in not_exact]

    def lead(ours: list[str], theirs: list[str], col):
        ratios = []
        for r in runs:
            mine = [s for n in ours if (s := mbps(r, n, col)) is not None]
            best = [s for n in theirs if (s := mbps(r, n, col)) is not None]
            if not mine or not best:
                return "-"
            ratios.append(max(mine) / max(best))
        return f"x{span(ratios, '.2f')}"

    kinds = {n: ("arrays" if ("arrays" in n or "numpy" in n) else "lists") for n in names}
    for label, ours, theirs in (
        ("wwho lists / best peer lists", ["wwho"], [n for n in peers if kinds[n] == "lists"]),
        ("wwho arrays / best peer arrays", ["wwho arrays"], [n for n in peers if kinds[n] == "arrays"]),
        ("wwho best / best peer (any API)", ["wwho", "wwho arrays"], peers),
    ):
        lines.append(f"| **{label}** | " + " | ".join(lead(ours, theirs, c) for c in cols) + " |")
    return lines


#: The peers' libraries (a name of the tables starts with one): one not installed is named beside the
#: lead rows, which then compare with fewer peers.
PEER_LIBRARIES = ("fastokens", "quicktok", "riptoken", "bpe-openai")

#: Rounds shorter than this (MB) were measured to rank nothing (docs/benchmarks.md, "English and
#: Sinhala news in a quiet hour").
SHORTEST_ROUND_MB = 0.25


def report(args) -> None:
    start_load = os.getloadavg()
    print(f"machine: {machine()}")
    print(f"versions: {versions()}")
    print(f"load average at start: {start_load[0]:.2f} {start_load[1]:.2f} {start_load[2]:.2f}")
    if args.mb and args.mb / args.rounds < SHORTEST_ROUND_MB:
        print(f"NOTE: rounds of {args.mb / args.rounds:.2f} MB: a mode's time in a round is then a few milliseconds, "
              f"which ranks nothing on a shared machine; take --mb {SHORTEST_ROUND_MB * args.rounds:g} or more "
              f"for {args.rounds} rounds")
    prepare()
    shared = shared_ranks()
    try:
        from bpe_openai import registry

        same = registry.o200k_base()["mergeable_ranks"] == shared
        print(
            f"bpe-openai ships its own o200k_base (not loadable from a file); its ranks "
            f"{'equal' if same else 'DIFFER FROM'} the shared file's"
        )
    except ImportError:
        pass
    try:
        import quicktok

        bundled = quicktok.Tokenizer("o200k_base", "")
        same = len(bundled.token_byte_values()) == len(shared) and all(
            bundled.encode_single_token(b) == r for b, r in shared.items()
        )
        print(
            f"quicktok ships its own o200k_base too (not used here); its ranks "
            f"{'equal' if same else 'DIFFER FROM'} the shared file's"
        )
    except ImportError:
        pass
    del shared
    pre = spawn(args, ["--precheck"], 1)
    print(
        f"\nexactness pre-check, {pre['cases']} adversarial inputs, per call and as one batch (1 and 2 threads):"
    )
    for name, bad in pre["bad"].items():
        print(f"  {name}: " + ("exact on every case" if not bad else "NOT EXACT:\n    " + "\n    ".join(bad)))
    inexact = {name for name, bad in pre["bad"].items() if bad}
    loads = [os.getloadavg()[0]]
    runs: dict[str, list[dict]] = {lang: [] for lang in args.langs}
    for r in range(args.rounds):
        for lang in args.langs:
            parts = [spawn(args, ["--worker", "--lang", lang, "--round", str(r)], n) for n in args.threads]
            merged = parts[0]
            for part in parts[1:]:
                for name, modes in part["times"].items():
                    merged["times"].setdefault(name, {}).update(modes)
                for name, modes in part["bad"].items():
                    merged["bad"].setdefault(name, {}).update(modes)
                for name, secs in part["load"].items():
                    merged["load"].setdefault(name, []).extend(secs)
            runs[lang].append(merged)
            loads.append(os.getloadavg()[0])
            print(
                f"  round {r + 1}/{args.rounds} {lang}: {merged['bytes'] / MB:.2f} MB, "
                f"{merged['lines']:,} lines; load {loads[-1]:.2f}",
                flush=True,
            )
    end_load = os.getloadavg()
    names = list(runs[args.langs[0]][0]["times"])
    order = ["wwho", "wwho arrays", "tiktoken", "tiktoken encode_to_numpy"]
    names = [n for n in order if n in names] + [n for n in names if n not in order]
    missing = [lib for lib in PEER_LIBRARIES if not any(n.startswith(lib) for n in names)]
    for lang in args.langs:
        rs = runs[lang]
        bad: dict[tuple[str, str], list] = {}  # (tokenizer, mode) -> [lines over all rounds, first, its text]
        for r in rs:
            for n, modes in r["bad"].items():
                for m, (count, first, text) in modes.items():
                    seen = bad.setdefault((n, m), [0, first, text])
                    seen[0] += count
        not_exact = frozenset(inexact | {n for n, _ in bad if not n.startswith("wwho")})
        per_round = rs[0]["bytes"] / MB
        print(
            f"\n### {lang}: {CORPUS[lang].name}, {args.rounds} rounds of {per_round:.2f} MB "
            f"({sum(r['bytes'] for r in rs) / MB:.2f} MB in all, each round its own lines)\n"
        )
        for clock, what in (
            (0, "CPU time (per line: the calling thread; batches: the whole process)"),
            (2, "wall time"),
        ):
            print(f"{what}: x tiktoken's same mode (MB/s), min-max over rounds\n")
            print("\n".join(table(lang, rs, args.threads, clock, names, not_exact)) + "\n")
        compared = [n for n in names if not n.startswith("wwho") and n not in not_exact]
        print("best peer among: " + ", ".join(compared)
              + (f"; left out, not exact: {', '.join(sorted(not_exact))}" if not_exact else "")
              + (f"; not installed: {', '.join(missing)}" if missing else ""))
        print(
            "load (CPU s, every fresh object of the run): "
            + ", ".join(
                f"{n} {span([s for r in rs for s in r['load'].get(n, [])], '.2f')}"
                for n in names
                if any(n in r["load"] for r in rs)
            )
        )
        helpers = {
            n: max(r["times"][n][m][1] / r["times"][n][m][0] for r in rs for m in MODE_COLUMNS)
            for n in names
            if "cold" in rs[0]["times"].get(n, {})
        }
        helpers = {n: x for n, x in helpers.items() if x > 1.1}
        if helpers:  # per-line figures use the calling thread's time: say where other threads worked too
            print(
                "per-line passes whose process CPU time exceeds the calling thread's: "
                + ", ".join(f"{n} x{x:.2f}" for n, x in helpers.items())
            )
        checked = sum(r["lines"] for r in rs)
        if not bad:
            print(f"ids equal to tiktoken's on every line ({checked:,}) of every mode, every tokenizer")
        else:
            print(f"ids checked on {checked:,} lines per mode; NOT EXACT:")
            for (n, m), (count, _first, text) in sorted(bad.items()):
                print(f"  {n}, {m}: {count} lines (e.g. {text!r})")
    print(
        f"\nload average at end: {end_load[0]:.2f} {end_load[1]:.2f} {end_load[2]:.2f}; "
        f"1-minute load between rounds {min(loads):.2f}-{max(loads):.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=None, help="bytes per language to use, in MB (default: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--langs", nargs="+", default=["en", "si"], choices=sorted(CORPUS))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts of the batch modes")
    ap.add_argument("--chunk-kb", type=int, default=128, help="per-line passes alternate every this many kB")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--precheck", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--lang", help=argparse.SUPPRESS)
    ap.add_argument("--round", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds must be 1 or more, got {args.rounds}")
    # o200k_base from the shared data, and the text of the languages run (the precheck has its own)
    langs = [] if args.precheck else [args.lang] if args.worker and args.lang else args.langs
    require(O200K_FILE, *(CORPUS[lang] for lang in langs))
    if args.precheck:
        precheck()
    elif args.worker:
        worker(args)
    else:
        if args.threads[0] != 1:
            sys.exit("--threads must start with 1 (that process runs the per-line modes)")
        report(args)


if __name__ == "__main__":
    main()
