"""A corpus as one array of ids with an end-of-text token after each line: ``wwho encode --npy``
against the nanoGPT way with tiktoken, both whole processes, on the same file.

    python benchmarks/bench_npy.py [--file PATH] [--runs 2]

tiktoken's side is nanoGPT's data preparation written out: read the lines, ``encode_ordinary_batch``
on all cores in batches of 8,192 lines, ``eot_token`` appended to each, a ``numpy`` ``uint32`` array,
``np.save``. wwho's is ``wwho encode --tokenizer o200k_base --file F --special-as-text --npy --eot
"<|endoftext|>"``. Both load o200k_base from the shared ranks file (offline). Each run is a fresh
process, timed from start to exit with its peak memory; the two arrays are compared id for id
before anything is printed. Default file: the Sinhala BBC news. Not a test: figures go to
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _measure import CORPORA, O200K_FILE, ROOT, machine, measure, require

TIKTOKEN_WAY = """
import numpy as np
from wwho.bytelevel.tiktoken_loader import get_encoding

enc = get_encoding("o200k_base", tiktoken_file={ranks!r})
lines = open({path!r}, encoding="utf-8").read().splitlines()
out = []
for i in range(0, len(lines), 8192):
    for ids in enc.encode_ordinary_batch(lines[i:i + 8192]):
        ids.append(enc.eot_token)
        out.append(np.array(ids, dtype=np.uint32))
np.save({out!r}, np.concatenate(out) if out else np.zeros(0, dtype=np.uint32))
"""

WWHO_WAY = """
import sys
from wwho.cli import main

sys.exit(main(["encode", "--tokenizer", "o200k_base", "--tiktoken-file", {ranks!r}, "--file", {path!r},
               "--special-as-text", "--npy", "--eot", "<|endoftext|>", "-o", {out!r}, "--force", "--quiet"]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=CORPORA / "si" / "news-bbcsinhala.txt")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    require(O200K_FILE, args.file)
    import numpy as np

    with tempfile.TemporaryDirectory() as work:
        arrays = {name: str(Path(work) / f"{name}.npy") for name in ("tiktoken", "wwho")}
        codes = {name: code.format(ranks=str(O200K_FILE), path=str(args.file), out=arrays[name])
                 for name, code in (("tiktoken", TIKTOKEN_WAY), ("wwho", WWHO_WAY))}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in codes}
        for _ in range(args.runs):  # alternated
            for name, code in codes.items():
                seconds, peak, _ = measure(code)
                times[name].append((seconds, peak))
        theirs, ours = np.load(arrays["tiktoken"]), np.load(arrays["wwho"])
        if theirs.shape != ours.shape or not (theirs == ours).all():
            raise SystemExit("the two arrays differ: no figures")
    size = args.file.stat().st_size
    print(f"{args.file.relative_to(ROOT.parent) if args.file.is_relative_to(ROOT.parent) else args.file}: "
          f"{size / 1e6:.1f} MB, {len(ours):,} ids, equal; {machine()}")
    for name, runs in times.items():
        print(f"  {name:<8} " + ", ".join(f"{s:.2f} s {p:.0f} MB" for s, p in runs))
    best = {name: min(s for s, _ in runs) for name, runs in times.items()}
    print(f"  wwho / tiktoken, best runs: x{best['tiktoken'] / best['wwho']:.2f} faster")


if __name__ == "__main__":
    main()
