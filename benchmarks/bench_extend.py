"""``wwho extend``: Llama 3, Qwen2 and o200k_base extended with Sinhala or Devanagari syllables.

    python benchmarks/bench_extend.py [--sizes 8000 16000 32000] [--bases llama3 qwen2 o200k]
                                      [--check-size 16000] [--quick]

Training text (FLORES devtest held out): Sinhala: si/news-*.txt (84.6 MB); Devanagari: every file
of hi/, mr/, ne/, sa/ except flores200-devtest.txt (16.6 MB). Each extension is built with the
defaults of ``wwho extend`` (automatic syllable threshold, half the budget at most for syllables).

Measured per base, script and size:

* FLORES-200 devtest tokens per whitespace word (si for Sinhala, hi for Devanagari), before and
  after; the share of token boundaries that fall inside a schema syllable (any syllable, known to
  the extension or not); the English FLORES lines (and the other script's FLORES lines) whose ids
  are identical to the base's, which must be all of them;
* at ``--check-size``: stock HF ``tokenizers`` and ``transformers.AutoTokenizer.from_pretrained``
  (no custom code) loading the written directory, against wwho (``ByteBPE.from_hf`` of the same
  file), on every line of the shared corpora of the script (si/ and si-en/, or hi/ mr/ ne/ sa/
  hi-en/), of the other script's code-switched corpus and of en/; every line there without a
  character of the script's blocks must also get the base's ids;
* encode speed of stock HF ``tokenizers``, one line at a time on one thread, of the extended
  ``tokenizer.json`` against the base's own (written by ``ByteBPE.export_hf``), on the FLORES
  devtest of the script and of English: a fresh ``Tokenizer`` (cold, its word cache empty) and a
  second pass (warm).

Next to them, the meta vocabulary (o200k_base + a 32k SGPE part, ``bench_meta.py``'s, trained on
the Sinhala news without si-en lines plus hi/; cached under .cache/bench_meta/).

``--quick`` takes 2 MB of training text per script and leaves out the whole-corpus check; it trains
nothing on the full text, so its meta row is there only if bench_meta.py's vocabulary is cached.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

from _measure import CORPORA, DATA, O200K_FILE, machine, require

GGUF = DATA / "gguf-vocab"
BASES = {
    "llama3": GGUF / "ggml-vocab-llama-bpe.gguf",
    "qwen2": GGUF / "ggml-vocab-qwen2.gguf",
    "o200k": "tiktoken:o200k_base",
}
LANG = {"sinhala": "si", "devanagari": "hi"}
CHECK_LANGS = {
    "sinhala": ("si", "si-en", "hi-en", "en"),
    "devanagari": ("hi", "mr", "ne", "sa", "hi-en", "si-en", "en"),
}


def training_files(script: str) -> list[Path]:
    if script == "sinhala":
        return sorted((CORPORA / "si").glob("news-*.txt"))
    return [
        p
        for lang in ("hi", "mr", "ne", "sa")
        for p in sorted((CORPORA / lang).glob("*.txt"))
        if p.name != "flores200-devtest.txt"
    ]


def lines_of(path: Path, max_bytes: int | None = None) -> list[str]:
    out, size = [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                out.append(line)
                size += len(line.encode())
                if max_bytes and size >= max_bytes:
                    break
    return out


def flores(lang: str) -> list[str]:
    return lines_of(CORPORA / lang / "flores200-devtest.txt")


def words(lines: list[str]) -> int:
    return sum(len(line.split()) for line in lines)


def boundary_share(encode, token_bytes, lines, scripts) -> float:
    """Share of token boundaries (after any token but the last of a line) inside a schema syllable."""
    inside = total = 0
    for line in lines:
        ends = list(itertools.accumulate(len(token_bytes(i)) for i in encode(line)))[:-1]
        total += len(ends)
        cuts = set()
        for m in scripts.word_regex.finditer(line):
            pos = len(line[: m.start()].encode()) + (m.group()[0] == " ")
            for syl in scripts.syllables(m.group()):
                n = len(syl.encode())
                cuts.update(range(pos + 1, pos + n))
                pos += n
        inside += sum(1 for e in ends if e in cuts)
    return inside / total if total else 0.0


def hf_speed(path: Path, lines: list[str]) -> tuple[float, float]:
    """(cold, warm) MB/s of stock tokenizers, one line at a time."""
    from tokenizers import Tokenizer

    mb = sum(len(line.encode()) for line in lines) / 1e6
    tok = Tokenizer.from_file(str(path))
    times = []
    for _ in range(2):
        t = time.perf_counter()
        for line in lines:
            tok.encode(line, add_special_tokens=False)
        times.append(time.perf_counter() - t)
    return mb / times[0], mb / times[1]


def full_check(ext_dir: Path, base, script: str) -> tuple[int, int, int, int, int]:
    """(lines, stock tokenizers != wwho, AutoTokenizer != wwho, lines without the script, of which
    != base) over every line of the script's corpora, the other script's code-switched corpus and en/.
    """
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    from wwho.bytelevel import ByteBPE
    from wwho.extend.scripts import ScriptSet

    hf = Tokenizer.from_file(str(ext_dir / "tokenizer.json"))
    auto = AutoTokenizer.from_pretrained(str(ext_dir))  # no trust_remote_code: PreTrainedTokenizerFast
    ours = ByteBPE.from_hf(ext_dir / "tokenizer.json")
    scripts = ScriptSet([script])
    n = bad = bad_auto = plain = bad_base = 0
    for lang in CHECK_LANGS[script]:
        for path in sorted((CORPORA / lang).glob("*.txt")):
            lines = lines_of(path)
            want = [ours.encode(line, allowed_special="all") for line in lines]
            n += len(lines)
            bad += sum(hf.encode(x, add_special_tokens=False).ids != ids for x, ids in zip(lines, want))
            for i in range(0, len(lines), 4096):
                got = auto(lines[i : i + 4096], add_special_tokens=False)["input_ids"]
                bad_auto += sum(g != w for g, w in zip(got, want[i : i + 4096]))
            for line, ids in zip(lines, want):
                if not scripts.has_block_char(line):
                    plain += 1
                    bad_base += base.encode(line, allowed_special="all") != ids
    return n, bad, bad_auto, plain, bad_base


def meta_row(train: bool = True) -> dict[str, float] | None:
    """FLORES tokens per word of the meta vocabulary (o200k_base + 32k SGPE), bench_meta's training;
    with ``train=False`` (``--quick``) only if it is cached: training it takes bench_meta's 74 MB of
    text, which ``--quick`` is there to avoid."""
    try:
        import bench_meta

        from wwho.meta import MetaTokenizer

        directory = bench_meta.CACHE / "meta-32000"  # where bench_meta.train(32_000, ...) keeps it
        if not (directory / "meta_config.json").exists():
            if not train:
                print(f"meta vocabulary left out: --quick does not train it ({directory} is absent; "
                      "bench_meta.py makes it)")
                return None
            directory, _ = bench_meta.train(32_000, bench_meta.training_text(), retrain=False)
        meta = MetaTokenizer.load(directory, tiktoken_file=O200K_FILE)
    except Exception as exc:  # noqa: BLE001 (a missing peer is reported, not fatal)
        print(f"meta vocabulary skipped: {exc}")
        return None
    return {
        lang: sum(len(meta.encode_ordinary(x)) for x in flores(lang)) / words(flores(lang))
        for lang in ("si", "hi")
    }


def extensions(args, tmp: Path):
    """Every extension of ``args``, measured: (English FLORES, rows, whole-corpus checks, speeds);
    its files go to ``tmp``."""
    from wwho.extend import count_words, extend_tokenizer, load_base
    from wwho.extend.scripts import ScriptSet

    counts, train_paths = {}, {}
    for script in args.scripts:
        paths = training_files(script)
        if args.quick:
            small = tmp / f"{script}.txt"
            small.write_text(
                "\n".join(itertools.chain.from_iterable(lines_of(p, 2_000_000 // len(paths)) for p in paths)),
                encoding="utf-8",
            )
            paths = [small]
        t = time.perf_counter()
        counts[script] = count_words(paths, ScriptSet([script]), skip_bad_lines=True, progress=False)
        train_paths[script] = paths
        mb = sum(p.stat().st_size for p in paths) / 1e6
        print(
            f"{script}: {mb:.1f} MB of training text, {len(counts[script]):,} distinct script words, "
            f"counted in {time.perf_counter() - t:.1f}s"
        )
    en = flores("en")
    rows, checks, speeds = [], [], []
    for base_name in args.bases:
        base, _ = load_base(BASES[base_name])
        for script in args.scripts:
            lang = LANG[script]
            other = "hi" if lang == "si" else "si"
            evals = flores(lang)
            scripts = ScriptSet([script])
            before = sum(len(base.encode_ordinary(x)) for x in evals) / words(evals)
            before_cut = boundary_share(base.encode_ordinary, base.token_bytes, evals, scripts)
            row = {"base": base_name, "lang": lang, "before": before, "before_cut": before_cut, "after": {}}
            for size in args.sizes:
                t = time.perf_counter()
                ext = extend_tokenizer(
                    base,
                    train_paths[script],
                    add=size,
                    scripts=[script],
                    word_counts=counts[script],
                    verify=False,
                    progress=False,
                    skip_bad_lines=True,
                )
                seconds = time.perf_counter() - t
                tok = ext.tokenizer
                after = sum(len(tok.encode_ordinary(x)) for x in evals) / words(evals)
                cut = boundary_share(tok.encode_ordinary, tok.token_bytes, evals, scripts)
                same_en = sum(tok.encode_ordinary(x) == base.encode_ordinary(x) for x in en)
                same_other = sum(tok.encode_ordinary(x) == base.encode_ordinary(x) for x in flores(other))
                row["after"][size] = (after, cut, same_en, same_other, seconds, ext.stats)
                print(
                    f"{base_name} + {size:,} {script}: {before:.3f} -> {after:.3f} tokens/word, boundaries "
                    f"in a syllable {100 * before_cut:.1f}% -> {100 * cut:.2f}%, en lines unchanged "
                    f"{same_en}/{len(en)}, {other} lines unchanged {same_other}/{len(flores(other))}; "
                    f"built in {seconds:.0f}s ({ext.stats.known_syllables:,} syllables known, "
                    f"{ext.stats.learned_merges:,} merges)",
                    flush=True,
                )
                if size == args.check_size:
                    out = ext.save(tmp / f"{base_name}-{script}-{size}")
                    base_json = tmp / f"{base_name}.json"
                    if not base_json.exists():
                        base.export_hf(base_json)
                    for name, lines in ((lang, evals), ("en", en)):
                        speeds.append(
                            (
                                base_name,
                                script,
                                name,
                                hf_speed(base_json, lines),
                                hf_speed(out / "tokenizer.json", lines),
                            )
                        )
                    if not args.quick:
                        t = time.perf_counter()
                        n, bad, bad_auto, plain, bad_base = full_check(out, base, script)
                        checks.append(
                            (base_name, script, size, n, bad, bad_auto, plain, bad_base, time.perf_counter() - t)
                        )
                        print(
                            f"  whole corpora: {n:,} lines, stock tokenizers != wwho on {bad}, AutoTokenizer "
                            f"!= wwho on {bad_auto}; {plain:,} lines without {script}, != base on {bad_base}",
                            flush=True,
                        )
                del ext, tok
                gc.collect()
            rows.append(row)
        del base
        gc.collect()
    return en, rows, checks, speeds


def report(args, en, rows, checks, speeds, meta) -> None:
    print()
    print("FLORES-200 devtest, tokens per whitespace word (share of token boundaries inside a syllable):")
    print()
    print("| base | FLORES | base alone | " + " | ".join(f"+{s // 1000}k" for s in args.sizes) + " |")
    print("|---|---|---:|" + "---:|" * len(args.sizes))
    for r in rows:
        cells = [f"{a:.3f} ({100 * c:.1f}%)" for a, c, *_ in (r["after"][s] for s in args.sizes)]
        print(
            f"| {r['base']} | {r['lang']} | {r['before']:.3f} ({100 * r['before_cut']:.1f}%) | "
            + " | ".join(cells)
            + " |"
        )
    for lang, value in (meta or {}).items():
        blanks = " |" * len(args.sizes)
        print(f"| meta vocabulary: o200k_base + 32k SGPE (wwho's own class) | {lang} | {value:.3f} |{blanks}")
    print()
    results = [v for r in rows for v in r["after"].values()]
    same_en = min((v[2] for v in results), default=len(en))
    same_other = min((v[3] for v in results), default=0)
    print(
        f"English FLORES lines whose ids equal the base's, worst extension: {same_en}/{len(en)}; "
        f"FLORES lines of the other script: {same_other}/1012."
    )
    if checks:
        print()
        print(
            "| extension | lines | stock tokenizers != wwho | AutoTokenizer != wwho | lines without the script "
            "| of which != base | s |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for b, s, size, n, bad, bad_auto, plain, bad_base, sec in checks:
            print(f"| {b} + {size // 1000}k {s} | {n:,} | {bad} | {bad_auto} | {plain:,} | {bad_base} | {sec:.0f} |")
    if speeds:
        print()
        print("Stock HF tokenizers encode, one line at a time (MB/s, cold first pass / warm second pass):")
        print()
        print("| base | extension | text | base tokenizer.json | extended tokenizer.json | ratio (warm) |")
        print("|---|---|---|---:|---:|---:|")
        for b, s, name, (bc, bw), (ec, ew) in speeds:
            print(
                f"| {b} | +{args.check_size // 1000}k {s} | FLORES {name} | {bc:.2f} / {bw:.2f} | "
                f"{ec:.2f} / {ew:.2f} | {ew / bw:.2f}x |"
            )
    if any(v[2] != len(en) for r in rows for v in r["after"].values()) or any(
        c[4] or c[5] or c[7] for c in checks
    ):
        sys.exit("an extension broke a promise (see above)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[8_000, 16_000, 32_000])
    ap.add_argument("--bases", nargs="+", default=list(BASES), choices=list(BASES))
    ap.add_argument("--scripts", nargs="+", default=list(LANG), choices=list(LANG))
    ap.add_argument(
        "--check-size", type=int, default=16_000, help="size whose files get the whole-corpus check"
    )
    ap.add_argument("--quick", action="store_true", help="2 MB of training text per script, no full check, "
                    "the meta row only if cached")
    args = ap.parse_args()
    training = {"sinhala": [CORPORA / "si" / "news-*.txt"], "devanagari": [CORPORA / "hi" / "*.txt"]}
    require(O200K_FILE,  # tiktoken offline (o200k_base, and the meta vocabulary's)
            *(p for script in args.scripts for p in training[script]),
            *(CORPORA / lang / "flores200-devtest.txt" for lang in ("en", "si", "hi")),
            *(BASES[b] for b in args.bases if isinstance(BASES[b], Path)))
    os.environ.setdefault("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    print(f"machine: {machine()} (shared with other jobs: timings are indicative)")
    # The --quick texts, the saved extensions and the bases' tokenizer.json (tens of MB): gone at the end.
    with tempfile.TemporaryDirectory(prefix="bench-extend-") as folder:
        en, rows, checks, speeds = extensions(args, Path(folder))
    meta = meta_row(train=not args.quick)
    report(args, en, rows, checks, speeds, meta)


if __name__ == "__main__":
    main()
