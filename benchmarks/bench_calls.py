"""What one call costs: the fixed price of each public entry point on a tiny input, us against peers.

    python benchmarks/bench_calls.py

A chat turn, a streamed token, a dataloader's batch of a few short texts: there a call's own cost
(argument checks, conversions, thread pools) weighs more than the encoding. Each entry point is
called in a loop on the same small input (warm: nothing here is about the cache) and the best of
five loops is printed in ns per call, with the same call of tiktoken (o200k_base, from the shared
ranks file) and of Hugging Face ``tokenizers`` (ByteBPE's own ``tokenizer.json`` export, the same
vocabulary) where they have one, and their ratio to ours. SGPE and the meta tokenizer (o200k_base
plus an SGPE vocabulary trained here on the bundled Sinhala sample) have rows of their own.
Results and outputs are checked equal first. Not a test: figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from _measure import O200K_FILE, ROOT, machine, require

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS threads would spin beside us

import numpy  # noqa: E402,F401 (imported before any timing: the array calls need it)

LINE = "The quick brown fox jumps over the lazy dog, and then it rests for a while."
SINHALA = "ශ්‍රී ලංකාව දකුණු ආසියාවේ දූපතකි."


def per_call(call, *, loops: int = 5, budget: float = 0.2) -> float:
    """ns per call, the best of ``loops`` loops of about ``budget`` seconds each."""
    n, t = 1, 0.0
    while t < budget / 10:  # how many calls make a loop
        n *= 4
        start = time.perf_counter()
        for _ in range(n):
            call()
        t = time.perf_counter() - start
    n = max(1, int(n * budget / t))
    best = float("inf")
    for _ in range(loops):
        start = time.perf_counter()
        for _ in range(n):
            call()
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e9


def rows_bytelevel(work: Path) -> list[tuple[str, dict[str, object]]]:
    """(entry point, {library: call}) for o200k_base in wwho, tiktoken and HF tokenizers."""
    import tokenizers
    from tokenizers.decoders import DecodeStream

    from wwho.bytelevel import ByteBPE
    from wwho.bytelevel.streaming import StreamingDecoder
    from wwho.bytelevel.tiktoken_loader import get_encoding

    ours = ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
    tt = get_encoding("o200k_base", tiktoken_file=O200K_FILE)
    ours.export_hf(work / "o200k.json")
    hf = tokenizers.Tokenizer.from_file(str(work / "o200k.json"))
    ids = ours.encode(LINE)
    assert ids == tt.encode(LINE) == hf.encode(LINE, add_special_tokens=False).ids
    assert ours.decode(ids) == tt.decode(ids) == hf.decode(ids) == LINE
    batch = ["a b", "c d e"]
    assert ours.encode_batch(batch) == tt.encode_batch(batch)

    ours_stream, hf_stream = StreamingDecoder(ours), DecodeStream(skip_special_tokens=False)
    steps = iter(range(1 << 62))

    def ours_step():
        return ours_stream.decode_token(ids[next(steps) % len(ids)])

    def hf_step():
        return hf_stream.step(hf, ids[next(steps) % len(ids)])

    return [
        ('encode("a")', {"wwho": lambda: ours.encode("a"), "tiktoken": lambda: tt.encode("a"),
                         "HF": lambda: hf.encode("a", add_special_tokens=False).ids}),
        (f"encode(a line of {len(LINE)} characters)",
         {"wwho": lambda: ours.encode(LINE), "tiktoken": lambda: tt.encode(LINE),
          "HF": lambda: hf.encode(LINE, add_special_tokens=False).ids}),
        ("encode_ordinary(the line)", {"wwho": lambda: ours.encode_ordinary(LINE),
                                       "tiktoken": lambda: tt.encode_ordinary(LINE)}),
        ("encode_to_numpy(the line)", {"wwho": lambda: ours.encode_to_numpy(LINE),
                                       "tiktoken": lambda: tt.encode_to_numpy(LINE)}),
        (f"decode({len(ids)} ids)", {"wwho": lambda: ours.decode(ids), "tiktoken": lambda: tt.decode(ids),
                                     "HF": lambda: hf.decode(ids)}),
        ("decode_bytes(the ids)", {"wwho": lambda: ours.decode_bytes(ids), "tiktoken": lambda: tt.decode_bytes(ids)}),
        ("token_bytes(an id)", {"wwho": lambda: ours.token_bytes(ids[1]),
                                "tiktoken": lambda: tt.decode_single_token_bytes(ids[1])}),
        ("a streaming decoder's step", {"wwho": ours_step, "HF": hf_step}),
        # (each library's default thread count: tiktoken starts a pool of up to 8 threads per call)
        ("encode_batch(2 short texts, defaults)", {"wwho": lambda: ours.encode_batch(batch),
                                         "tiktoken": lambda: tt.encode_batch(batch),
                                         "HF": lambda: hf.encode_batch(batch, add_special_tokens=False)}),
        ("encode_batch_to_numpy(2 short texts)", {"wwho": lambda: ours.encode_batch_to_numpy(batch)}),
    ]


def rows_sgpe_meta(work: Path) -> list[tuple[str, dict[str, object]]]:
    from wwho.bytelevel.streaming import StreamingDecoder
    from wwho.meta import MetaTokenizer
    from wwho.sgpe import SGPETokenizer

    sample = ROOT / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    sgpe = SGPETokenizer.train([sample], vocab_size=4000, progress=False)
    meta = MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE)
    rows = []
    for name, tok, text in (("SGPE", sgpe, SINHALA), ("meta", meta, SINHALA + " in 2024")):
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        stream = StreamingDecoder(tok)
        steps = iter(range(1 << 62))

        def step(stream=stream, ids=ids, steps=steps):
            return stream.decode_token(ids[next(steps) % len(ids)])

        batch = [text[:10], text[10:]]
        rows += [
            (f"{name} encode(a line of {len(text)} characters)", {"wwho": lambda tok=tok, t=text: tok.encode(t)}),
            (f"{name} decode({len(ids)} ids)", {"wwho": lambda tok=tok, ids=ids: tok.decode(ids)}),
            (f"{name} token_bytes(an id)", {"wwho": lambda tok=tok, ids=ids: tok.token_bytes(ids[1])}),
            (f"{name} streaming decoder's step", {"wwho": step}),
            (f"{name} encode_batch(2 short texts)", {"wwho": lambda tok=tok, b=batch: tok.encode_batch(b)}),
        ]
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.parse_args(argv)
    require(O200K_FILE)
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    print("ns per call, best of 5 loops (warm); x: the peer's time over ours (above 1: we are faster)\n")
    print("entry point | wwho | tiktoken | HF tokenizers")
    print("---|---:|---:|---:")
    with tempfile.TemporaryDirectory(prefix="wwho-bench-calls-") as tmp:
        rows = rows_bytelevel(Path(tmp)) + rows_sgpe_meta(Path(tmp))
        for name, calls in rows:
            ours = per_call(calls["wwho"])
            cells = [f"{ours:,.0f}"]
            for peer in ("tiktoken", "HF"):
                if peer in calls:
                    theirs = per_call(calls[peer])
                    cells.append(f"{theirs:,.0f} (x{theirs / ours:.2f})")
                else:
                    cells.append("-")
            print(f"{name} | " + " | ".join(cells), flush=True)
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
