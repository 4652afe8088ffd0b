"""10 MB of pathological input through every tokenizer kind: encode time and peak memory, cold.

    python benchmarks/bench_large_inputs.py [--only KIND ...]

The text (as ``tests/test_large_inputs.py``): a run of 1,050,000 spaces (tiktoken's regex
overflows from about a million), a 1,000,000-letter piece, then Sinhala and English news to
10,000,000 bytes; and 10,000,000 spaces alone, the worst case for a merge in Python (one
piece, ten million merges). The binary kind gets 10 MB of structured bytes. Each job runs in
a fresh process (a fresh tokenizer: cold caches); the peak is the whole process's resident
set, sampled, minus nothing (so it includes the loaded tokenizer). Peers on the same input:
tiktoken (o200k_base), Hugging Face ``tokenizers`` running the exported llama-bpe
``tokenizer.json``, and HF on the whole binary data (what ``encode_bytes`` did before).

    python benchmarks/bench_large_inputs.py --classes

instead times 1 MB of each bad input class (one character, ASCII or Sinhala, alone or after a space,
spaces, newlines, random whitespace, random Latin-1, random CJK) against 1 MB of English news, per byte, in one
process: ByteBPE o200k_base (lists, then arrays from ``encode_to_numpy``) and tiktoken
alternating, each call cold (the piece cache cleared), best of 5. It also times the first encode after construction against later cold ones of other
text, after other memory traffic and right after another call (lists and arrays, a fresh process
each, medians of 5; see ``FIRST_CALL``), and construction against ``tiktoken.get_encoding`` (both
libraries imported first: the times are the constructions', not the imports').
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _measure import CORPORA, DATA, O200K_FILE, machine, measure, require

# The first-call jobs import numpy: its BLAS threads would spin beside the thread being timed.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

GGUF = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"

TEXT = f"""
def _news(path, size):
    with open(path, encoding="utf-8") as f:
        return f.read(size)
head = "word " + " " * 1_050_000 + "word " + "a" * 1_000_000 + " ශ්‍රී ලංකා\\n"
filler = (_news({str(CORPORA / "si" / "news-bbcsinhala.txt")!r}, 3_000_000)
          + _news({str(CORPORA / "en" / "news-lk_news.txt")!r}, 1_000_000)).encode()
mixed = head + filler[: 10_000_000 - len(head.encode())].decode("utf-8", "ignore")
spaces = " " * 10_000_000
text = {{"mixed": mixed, "spaces": spaces}}[INPUT]
"""

BINARY = """
import random
from wwho import binary
from wwho.binary.mapping import encode_bytes
rng = random.Random(7)
words = [bytes(rng.randrange(256) for _ in range(rng.randrange(2, 9))) for _ in range(60)]
def sample(n):
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) if rng.random() < 0.8 else bytes([rng.randrange(256)]) * rng.randrange(1, 40)
    return bytes(out[:n])
train = sample(300_000)
counts = {}
for i in range(0, len(train), 512):
    counts[train[i:i + 512]] = counts.get(train[i:i + 512], 0) + 1
tok = binary.train_from_counts(counts, vocab_size=2048, min_frequency=2)
data = sample(9_000_000) + bytes(1_000_000)
"""

TIMED = """
import time
t0 = time.perf_counter()
try:
    n = len(ENCODE)
    outcome = f"{{n:,}} ids"
except BaseException as exc:  # tiktoken's PanicException is a BaseException
    outcome = type(exc).__name__
print(f"{{time.perf_counter() - t0:.1f}}\\t{{outcome}}")
"""


#: The binary kinds: (kind, the expression timed on BINARY's ``tok`` and ``data``).
BINARY_KINDS = {"binary (encode_bytes, in pieces)": "encode_bytes(tok, data).ids",
                "peer: HF on the whole binary data": "tok.encode(data.decode('latin-1')).ids"}


def loaders(sgpe_dir: Path, hf_json: Path) -> dict[str, tuple[str, str]]:
    """kind -> (code that makes ``tok``, the expression timed)."""
    o200k = f"tiktoken_file={str(O200K_FILE)!r}"
    return {
        "SGPE": (f"from wwho.sgpe import SGPETokenizer\ntok = SGPETokenizer.load({str(sgpe_dir)!r})", "tok.encode(text)"),
        "meta (o200k + SGPE)": ((f"from wwho.meta import MetaTokenizer\nfrom wwho.sgpe import SGPETokenizer\n"
                                 f"tok = MetaTokenizer(SGPETokenizer.load({str(sgpe_dir)!r}), 'o200k_base', {o200k})\n"
                                 "tok.encode('warm up')"), "tok.encode(text)"),
        "peer: tiktoken o200k_base": (("from wwho.bytelevel.tiktoken_loader import get_encoding\n"
                                       f"tok = get_encoding('o200k_base', tiktoken_file={str(O200K_FILE)!r})"),
                                      "tok.encode_ordinary(text)"),
        "ByteBPE o200k_base": (("from wwho.bytelevel import ByteBPE\n"
                                f"tok = ByteBPE.from_tiktoken('o200k_base', tiktoken_file={str(O200K_FILE)!r})"),
                               "tok.encode_ordinary(text)"),
        "ByteBPE llama-bpe (GGUF)": (f"from wwho.bytelevel import ByteBPE\ntok = ByteBPE.from_gguf({str(GGUF)!r})",
                                     "tok.encode_ordinary(text)"),
        "peer: HF tokenizers llama-bpe": (f"from tokenizers import Tokenizer\ntok = Tokenizer.from_file({str(hf_json)!r})",
                                          "tok.encode(text, add_special_tokens=False).ids"),
    }


MB = 1_000_000
#: White_Space characters: ASCII, Latin-1 and the Unicode spaces.
UNICODE_SPACES = (" \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                  "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _random_text(pool, nbytes: int, seed: int) -> str:
    rng = random.Random(seed)
    out, n = [], 0
    while n < nbytes:
        c = rng.choice(pool)
        out.append(c)
        n += len(c.encode())
    return "".join(out)


def class_inputs() -> dict[str, str]:
    with open(CORPORA / "en" / "news-lk_news.txt", encoding="utf-8") as f:
        english = f.read(2 * MB).encode()[:MB].decode("utf-8", "ignore")
    return {
        "English news (the baseline)": english,
        "one character (a)": "a" * MB,
        # (one piece of one three-byte character repeated; after a space, a piece that is not only
        # the run)
        "one character (Sinhala ශ)": "ශ" * (MB // 3),
        "a space and one character (Sinhala ශ)": " " + "ශ" * (MB // 3),
        "spaces": " " * MB,
        "newlines": "\n" * MB,
        "random whitespace, Unicode": _random_text(UNICODE_SPACES, MB, 1),
        "random whitespace, \\t\\n\\r and space": _random_text(" \t\n\r", MB, 2),
        "random whitespace, space and \\n": _random_text(" \n", MB, 3),
        "random whitespace, 2 spaces, \\t, \\n": _random_text(["  ", "\t", "\n"], MB, 4),
        "random Latin-1": random.Random(0).randbytes(MB).decode("latin-1"),
        "random CJK": _random_text([chr(c) for c in range(0x4E00, 0xA000)], MB, 5),
    }


#: One fresh process: construction, then the first encode of 100 kB of English news, then ten other
#: 100 kB of the same news, one at a time after ``clear_cache()``: five after 48 MB of other memory
#: traffic (the CPU's caches then hold none of the tokenizer's tables, as when a program does other
#: work between calls) and five right after the previous call (they hold what the last call used).
#: Per byte, the thread's CPU time. Process ``{k}`` starts at the ``k``-th of the eleven pieces of
#: text, so that across processes each piece is first in some. Every call gets text it has not seen:
#: a repeat of the same text takes the same instructions as new text with every cache cleared, but
#: less time (the CPU's branch predictors have seen it; docs/benchmarks.md, "The first encode
#: against new text"). ``{arrays}``: ``encode_to_numpy`` (numpy imported first, as a program
#: that wants arrays has it) or ``encode_ordinary`` (lists of ints). ``{ours}``: ByteBPE, else
#: tiktoken itself through the same steps (it keeps no cache: its first call against its later ones
#: is what a process's first call costs any tokenizer: code, branch predictors and allocator arenas
#: still cold).
FIRST_CALL = """
import statistics, time
if {arrays}:
    import numpy
from wwho.bytelevel import ByteBPE
from wwho.bytelevel.tiktoken_loader import get_encoding
import tiktoken  # both libraries imported before either is timed: construction, not imports
t0 = time.perf_counter()
if {ours}:
    tok = ByteBPE.from_tiktoken("o200k_base", tiktoken_file={o200k!r})
else:
    tok = get_encoding("o200k_base", tiktoken_file={o200k!r})
t1 = time.perf_counter()
clear = getattr(tok, "clear_cache", lambda: None)
encode = tok.encode_to_numpy if {arrays} else tok.encode_ordinary
with open({english!r}, encoding="utf-8") as f:
    news = f.read(1_100_000)
pieces = [news[i : i + 100_000] for i in range(0, 1_100_000, 100_000)]
texts = iter(pieces[{k} % 11 :] + pieces[: {k} % 11])
def per_byte():
    text = next(texts)
    n = len(text.encode())
    c = time.thread_time(); encode(text); return (time.thread_time() - c) / n
first = per_byte()
other, work = bytearray(48 << 20), bytearray(48 << 20)  # bytearrays: the copy makes no temporary
after_work, right_after = [], []
for i in range(5):
    clear(); other[:] = work; work[i] ^= 1
    after_work.append(per_byte())
for _ in range(5):
    clear()
    right_after.append(per_byte())
t2 = time.perf_counter(); get_encoding("o200k_base", tiktoken_file={o200k!r}); t3 = time.perf_counter()
print(t1 - t0, first, statistics.median(after_work), statistics.median(right_after), t3 - t2)
"""


def first_call(reps: int) -> None:
    """Construction and the first encode against later cold ones (see ``FIRST_CALL``), for ByteBPE
    and, as the baseline of what a first call costs any library, for tiktoken."""
    for arrays in (False, True):
        for ours in (True, False):
            codes = [FIRST_CALL.format(arrays=arrays, ours=ours, o200k=str(O200K_FILE), k=k,
                                       english=str(CORPORA / "en" / "news-lk_news.txt"))
                     for k in range(reps)]
            runs = [[float(x) for x in measure(code)[2].split()] for code in codes]
            build, first, after_work, right_after, tt_build = (statistics.median(r[i] for r in runs)
                                                               for i in range(5))
            ratios = [r[1] / r[2] for r in runs]
            kind = "encode_to_numpy" if arrays else "encode_ordinary (lists)"
            who = "ByteBPE" if ours else "tiktoken"
            built = (f"o200k_base construction {build:.3f} s (tiktoken.get_encoding {tt_build:.3f} s); "
                     if ours else "")
            print(f"{who} {kind}: {built}the first encode after construction {first * 1e9:.1f} ns/byte; "
                  f"a later cold one (other text, after clear_cache) after 48 MB of other memory traffic "
                  f"{after_work * 1e9:.1f} (first / that x{min(ratios):.2f}-{max(ratios):.2f}, median "
                  f"x{statistics.median(ratios):.2f}), right "
                  f"after another call {right_after * 1e9:.1f} (x{first / right_after:.2f}); 100 kB of "
                  f"English, CPU time of the thread, medians of {reps} processes", flush=True)


def classes(reps: int = 5) -> None:
    """The bad input classes against English, ours and tiktoken's, per byte (see the docs)."""
    from wwho.bytelevel import ByteBPE
    from wwho.bytelevel.tiktoken_loader import get_encoding

    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    first_call(reps)
    ours = ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
    theirs = get_encoding("o200k_base", tiktoken_file=O200K_FILE)
    inputs = class_inputs()
    import numpy  # noqa: F401 (imported before the timing, as a program that wants arrays has it)

    # Per class: ByteBPE with lists, ByteBPE with arrays (``encode_to_numpy``), tiktoken.
    best: dict[str, list[float]] = {name: [float("inf")] * 3 for name in inputs}
    failed: dict[str, str] = {}
    for _ in range(reps):
        for name, text in inputs.items():
            # The last class's ids are freed here, not inside the next call's timing.
            ids = array = expected = None
            ours.clear_cache()
            t = time.perf_counter()
            ids = ours.encode_ordinary(text)
            best[name][0] = min(best[name][0], time.perf_counter() - t)
            ours.clear_cache()
            t = time.perf_counter()
            array = ours.encode_to_numpy(text)
            best[name][1] = min(best[name][1], time.perf_counter() - t)
            if array.tolist() != ids:
                failed[name] = "arrays differ from lists!"
            if name in failed:
                continue
            try:
                t = time.perf_counter()
                expected = theirs.encode_ordinary(text)
                best[name][2] = min(best[name][2], time.perf_counter() - t)
            except BaseException as exc:  # noqa: BLE001 (tiktoken's regex overflow is a PanicException)
                failed[name] = type(exc).__name__
                continue
            if ids != expected:
                failed[name] = "ids differ!"
    english = inputs["English news (the baseline)"]
    base = [t / len(english.encode()) for t in best["English news (the baseline)"]]
    print(f"1 MB of each class, cold, best of {reps}, alternating; per byte and against English")
    print("input | ByteBPE lists ns/byte | x English | ByteBPE arrays ns/byte | x English "
          "| tiktoken ns/byte | x English")
    print("---|---:|---:|---:|---:|---:|---")
    for name, text in inputs.items():
        n = len(text.encode())
        lists, arrays, theirs_t = (t / n for t in best[name])
        tt = (f"{theirs_t * 1e9:.1f} | x{theirs_t / base[2]:.2f}" if name not in failed
              else f"{failed[name]} | -")
        print(f"{name} | {lists * 1e9:.1f} | x{lists / base[0]:.2f} | {arrays * 1e9:.1f} "
              f"| x{arrays / base[1]:.2f} | {tt}", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


def kinds_of_text(args, work: Path) -> None:
    """The rows of the text kinds (the mixed text and spaces), their models made under ``work``."""
    from wwho.bytelevel import ByteBPE
    from wwho.sgpe import SGPETokenizer

    chosen = {kind: job for kind, job in loaders(work / "sgpe", work / "llama.json").items()
              if not args.only or any(o.lower() in kind.lower() for o in args.only)}
    if not chosen:  # only binary kinds: no model to make
        return
    sample = work / "train.txt"
    with open(CORPORA / "si" / "news-bbcsinhala.txt", encoding="utf-8") as f:
        sample.write_text(f.read(1_000_000), encoding="utf-8")
    SGPETokenizer.train([sample], vocab_size=4000, progress=False, workers=1).save(work / "sgpe")
    ByteBPE.from_gguf(GGUF).export_hf(work / "llama.json")
    for kind, (load, expr) in chosen.items():
        for name in ("mixed", "spaces"):
            code = load + f"\nINPUT = {name!r}\n" + TEXT + TIMED.format().replace("ENCODE", expr)
            _, peak, out = measure(code)
            took, outcome = out.strip().splitlines()[-1].split("\t")
            print(f"{kind} | {name} 10 MB | {took} | {peak:.0f} | {outcome}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="substrings of the kinds to run")
    parser.add_argument("--classes", action="store_true", help="the bad input classes against English (see above)")
    args = parser.parse_args()
    kinds = [*loaders(Path(), Path()), *BINARY_KINDS]
    unknown = [o for o in args.only or [] if not any(o.lower() in kind.lower() for kind in kinds)]
    if unknown:  # else the run measures nothing and prints an empty table
        parser.error(f"--only: no kind matches {', '.join(map(repr, unknown))}; the kinds: {'; '.join(kinds)}")
    if args.classes:
        require(CORPORA / "en" / "news-lk_news.txt", O200K_FILE)
        classes()
        return 0
    require(CORPORA / "si" / "news-bbcsinhala.txt", CORPORA / "en" / "news-lk_news.txt", O200K_FILE, GGUF)
    print("kind | input | encode s | peak RSS MB | outcome")
    print("---|---|---:|---:|---")
    # the sample, its SGPE model and the llama-bpe export (about 9 MB): removed at the end
    with tempfile.TemporaryDirectory(prefix="wwho-bench-large-") as work:
        kinds_of_text(args, Path(work))
    for kind, expr in BINARY_KINDS.items():
        if args.only and not any(o.lower() in kind.lower() for o in args.only):
            continue
        _, peak, out = measure(BINARY + TIMED.format().replace("ENCODE", expr))
        took, outcome = out.strip().splitlines()[-1].split("\t")
        print(f"{kind} | structured bytes 10 MB | {took} | {peak:.0f} | {outcome}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
