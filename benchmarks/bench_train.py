"""SGPE training vs HF tokenizers BpeTrainer (Whitespace and Metaspace pre-tokenizers) and SentencePiece BPE
on the same text, one run.

    python benchmarks/bench_train.py [--vocab-size 32000] [--script sinhala] [--eval FILE] [--tag NAME] [FILES...]

Default input: the 84.6 MB Sinhala news (corpora/si/news-*.txt of the shared data folder: $WWHO_SHARED_DATA,
else ../shared/data), evaluated on
si/flores200-devtest.txt. ``--script devanagari --tag hi`` with Hindi files benchmarks Hindi. Each trainer
runs in its own process; wall time, CPU time (user + system, all processes) and peak RSS (all
processes of the job) are reported,
then tokens per whitespace word on si/flores200-devtest.txt with each trained vocabulary,
the share of lines each decodes back exactly, and how many syllables each splits.
Vocabularies are written to .cache/bench_train/ (reused by bench_encode.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _measure import CORPORA, ROOT, machine, measure, require

CACHE = ROOT / ".cache" / "bench_train"

WWHO = """
import glob, sys
from wwho.sgpe import SGPETokenizer
tok = SGPETokenizer.train({files!r}, vocab_size={vocab}, script={script!r}, progress=False)
tok.save({out!r})
"""
HF = """
from tokenizers import Tokenizer, models, pre_tokenizers, trainers, decoders
tok = Tokenizer(models.BPE(unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
if {metaspace!r}:  # SentencePiece-style: spaces kept as a prefix mark, lossless
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
trainer = trainers.BpeTrainer(vocab_size={vocab}, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
                              show_progress=False)
tok.train({files!r}, trainer)
tok.save({out!r})
"""
SPM = """
import sentencepiece as spm
spm.SentencePieceTrainer.train(input={files!r}, model_prefix={out!r}, vocab_size={vocab}, model_type="bpe",
    character_coverage=1.0, byte_fallback=True, input_sentence_size=0, num_threads=2,
    train_extremely_large_corpus=False, minloglevel=2, max_sentence_length=100000)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--vocab-size", type=int, default=32_000)
    ap.add_argument("--skip", nargs="*", default=[], help="trainers to skip: wwho hf spm")
    ap.add_argument("--script", default="sinhala", help="SGPE script mode (default sinhala)")
    ap.add_argument("--eval", type=Path, default=CORPORA / "si" / "flores200-devtest.txt",
                    help="held-out corpus for tokens per word (default si/flores200-devtest.txt)")
    ap.add_argument("--tag", default="si", help="cache name prefix (default si)")
    args = ap.parse_args()
    if not args.files:  # the shared data's (or pass files)
        require(CORPORA / "si" / "news-*.txt")
    files = args.files or sorted(str(p) for p in (CORPORA / "si").glob("news-*.txt"))
    size = sum(Path(f).stat().st_size for f in files) / 1e6
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}")
    print(f"input: {len(files)} files, {size:.1f} MB; vocabulary {args.vocab_size:,}")
    jobs = {
        "wwho SGPE": ("wwho", WWHO, str(CACHE / f"{args.tag}-wwho-{args.vocab_size}")),
        "HF tokenizers BPE (Whitespace)": ("hf", HF, str(CACHE / f"{args.tag}-hf-{args.vocab_size}.json")),
        "HF tokenizers BPE (Metaspace)": ("hf", HF, str(CACHE / f"{args.tag}-hfmeta-{args.vocab_size}.json")),
        "SentencePiece BPE": ("spm", SPM, str(CACHE / f"{args.tag}-spm-{args.vocab_size}")),
    }
    results = {}
    for name, (key, template, out) in jobs.items():
        if key in args.skip:
            continue
        try:
            if key == "spm":
                import sentencepiece  # noqa: F401
        except ImportError:
            print(f"{name}: skipped (sentencepiece is not installed)")
            continue
        code = template.format(files=files, vocab=args.vocab_size, out=out, script=args.script,
                               metaspace="Metaspace" in name)
        seconds, rss, _, cpu = measure(code, cpu=True)
        results[name] = (seconds, rss, key, out, cpu)
        print(f"  {name}: {seconds:.1f} s, CPU {cpu:.1f} s, peak RSS {rss:.0f} MB", flush=True)
    base = results.get("wwho SGPE")
    print(f"\n{'trainer':34} {'seconds':>8} {'CPU s':>7} {'peak MB':>8} {'time / wwho':>12} {'CPU / wwho':>11} "
          f"{'RSS / wwho':>11}")
    for name, (seconds, rss, _, _, cpu) in results.items():
        ratio = f"{seconds / base[0]:12.2f} {cpu / base[4]:11.2f} {rss / base[1]:11.2f}" if base else ""
        print(f"{name:34} {seconds:8.1f} {cpu:7.1f} {rss:8.0f} {ratio}")
    if base and "HF tokenizers BPE (Whitespace)" in results:
        hf = results["HF tokenizers BPE (Whitespace)"]
        print(f"wwho / HF BpeTrainer: wall {base[0] / hf[0]:.2f}x (target <= 0.5), peak RSS {base[1] / hf[1]:.2f}x "
              "(target <= 1.5)")
    if base and "SentencePiece BPE" in results:
        print(f"wwho / SentencePiece: wall {base[0] / results['SentencePiece BPE'][0]:.2f}x (target < 1)")
    compression(results, args.eval, args.tag, args.script)


def compression(results, flores: Path, tag: str, script: str) -> None:
    from compression import evaluate_all

    if not flores.exists():
        print(f"compression: skipped ({flores} is absent)")
        return
    rows = evaluate_all({name: (key, out) for name, (_, _, key, out, _) in results.items()}, flores, script=script)
    print(f"\ncompression on {flores.name} ({rows[0]['lines']} lines, {rows[0]['words']:,} words)")
    print(f"{'tokenizer':34} {'tokens/word':>11} {'vs wwho':>8} {'lossless lines':>15} {'cuts in syllables':>18} "
          f"{'cuts in clusters':>17} {'fallback/UNK':>13}")
    ours = next((r["tokens_per_word"] for r in rows if r["name"] == "wwho SGPE"), None)
    for r in rows:
        note = f" (+{r['lines_without_exact_offsets']} lines not measurable)" if r["lines_without_exact_offsets"] else ""
        ratio = f"{r['tokens_per_word'] / ours:8.2f}" if ours else ""
        print(f"{r['name']:34} {r['tokens_per_word']:11.3f} {ratio} {r['lossless']:14.1%} {r['split_syllables']:18,} "
              f"{r['in_cluster']:17,} {r['fallback']:13,}{note}")
    print(f"cuts: token boundaries strictly inside a syllable ({script} schema, Indic runs) or inside an extended "
          "grapheme cluster (regex \\X); for wwho only syllables absent from its vocabulary can be cut; "
          "fallback/UNK: byte-fallback or [UNK] tokens")
    (CACHE / f"{tag}-compression.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
