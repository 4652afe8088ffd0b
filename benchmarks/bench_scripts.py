"""Every Indic script of the shared corpora: SGPE vs SentencePiece, HF BPE, o200k_base, Llama 3, Qwen2.

    python benchmarks/bench_scripts.py [--langs bn pa ...] [--vocab-size 8000] [--plot docs/img/scripts.png]

Per language, on FLORES-200 devtest (held out): tokens per whitespace word, UTF-8 bytes per
token, and the share of token boundaries that fall inside a schema syllable or inside an
extended grapheme cluster (``regex`` ``\\X``), measured by :mod:`wwho.evaluate` (the metrics of
``wwho eval``). SGPE, SentencePiece BPE and HF BPE are trained here on the same text: every
file of the language's shared corpora except the FLORES devtest file. Odia has no other
file, so its trained tokenizers are cross-fitted: one is trained on each half of the FLORES
lines and evaluated on the other half (every line is measured by a tokenizer that did not
see it; the vocabulary is smaller, see the table). o200k_base (tiktoken, offline ranks
file) and Llama 3 / Qwen2 (``wwho.ByteBPE.from_gguf`` on llama.cpp's vocabulary files) are
used as published. Then syllabification speed per script against ``regex`` ``\\X`` on all the
language's files (best of 3, warm: patterns compiled before timing).

Trained vocabularies are cached in .cache/bench_scripts/ (delete it to retrain).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import fields
from pathlib import Path

import regex
from _measure import CORPORA, DATA, O200K_FILE, ROOT, machine, require

from wwho import Syllabifier
from wwho.eval_specs import load_spec
from wwho.evaluate import Metrics, evaluate, read_lines

CACHE = ROOT / ".cache" / "bench_scripts"
LANGS = {"bn": "bengali", "pa": "gurmukhi", "gu": "gujarati", "or": "odia", "ta": "tamil", "te": "telugu",
         "kn": "kannada", "ml": "malayalam"}
GGUF = {"Llama 3": "ggml-vocab-llama-bpe.gguf", "Qwen2": "ggml-vocab-qwen2.gguf"}
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_all(tag: str, script: str, files: list[Path], vocab: int) -> dict[str, str]:
    """Train SGPE, SentencePiece BPE and HF BPE on ``files``; return name -> eval SPEC (cached)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    specs: dict[str, str] = {}
    out = CACHE / f"{tag}-sgpe-{vocab}"
    if not (out / "vocab.json").exists():
        from wwho.sgpe import SGPETokenizer

        SGPETokenizer.train([str(f) for f in files], vocab_size=vocab, script=script, progress=False).save(out)
    specs["wwho SGPE"] = str(out)
    try:
        import sentencepiece as spm

        model = CACHE / f"{tag}-spm-{vocab}"
        if not model.with_suffix(".model").exists():
            spm.SentencePieceTrainer.train(
                input=[str(f) for f in files], model_prefix=str(model), vocab_size=vocab, model_type="bpe",
                character_coverage=1.0, byte_fallback=True, input_sentence_size=0, num_threads=2, minloglevel=2,
                max_sentence_length=100000)
        specs["SentencePiece BPE"] = f"spm:{model}.model"
    except ImportError:
        print("SentencePiece: skipped (not installed)")
    hf = CACHE / f"{tag}-hf-{vocab}.json"
    if not hf.exists():
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        tok = Tokenizer(models.BPE(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        tok.train([str(f) for f in files], trainers.BpeTrainer(vocab_size=vocab, special_tokens=SPECIALS,
                                                                show_progress=False))
        tok.save(str(hf))
    specs["HF BPE"] = f"hf:{hf}"
    return specs


def add(a: Metrics, b: Metrics) -> Metrics:
    """Two halves of a cross-fitted evaluation as one."""
    out = Metrics(tokenizer=a.tokenizer, corpus=a.corpus, vocab_size=max(a.vocab_size, b.vocab_size))
    for f in fields(Metrics):
        if f.type in ("int", int) and f.name != "vocab_size":
            setattr(out, f.name, getattr(a, f.name) + getattr(b, f.name))
    return out


def measure_language(lang: str, vocab: int) -> list[dict]:
    script = LANGS[lang]
    flores = CORPORA / lang / "flores200-devtest.txt"
    lines = read_lines(flores)
    train = sorted(p for p in (CORPORA / lang).glob("*.txt") if p.name != flores.name)
    rows: list[tuple[str, Metrics, str]] = []
    if train:
        mb = sum(p.stat().st_size for p in train) / 1e6
        note = f"{mb:.1f} MB: {', '.join(p.name for p in train)}"
        for name, spec in train_all(lang, script, train, vocab).items():
            rows.append((name, evaluate(load_spec(spec), lines, corpus=lang), note))
    else:  # cross-fitting on the two halves of FLORES
        half = len(lines) // 2
        parts = [lines[:half], lines[half:]]
        small = vocab // 2
        per_fold = []
        for i, part in enumerate(parts):
            path = CACHE / f"{lang}-fold{i}.txt"
            CACHE.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(part) + "\n", encoding="utf-8")
            per_fold.append(train_all(f"{lang}-fold{i}", script, [path], small))
        note = (f"no training file: cross-fitted on FLORES halves ({sum(len(x.encode()) for x in parts[0]) / 1e6:.2f} "
                f"MB each), vocabulary {small:,}")
        for name in per_fold[0]:
            a = evaluate(load_spec(per_fold[0][name]), parts[1], corpus=lang)
            b = evaluate(load_spec(per_fold[1][name]), parts[0], corpus=lang)
            rows.append((name, add(a, b), note))
    rows.append(("o200k_base", evaluate(load_spec("tiktoken:o200k_base"), lines, corpus=lang), "as published"))
    for name, file in GGUF.items():
        path = DATA / "gguf-vocab" / file
        if path.exists():
            rows.append((name, evaluate(load_spec(str(path)), lines, corpus=lang), "as published"))
    return [{"lang": lang, "script": script, "tokenizer": name, "vocab_size": m.vocab_size, "lines": m.lines,
             "tokens_per_word": m.fertility, "bytes_per_token": m.bytes_per_token,
             "syllable_cut_rate": m.syllable_cut_rate, "cluster_cut_rate": m.cluster_cut_rate,
             "lossless_rate": m.lossless_rate, "fallback_rate": m.fallback_rate, "trained_on": note}
            for name, m, note in rows]


def best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def speed(lang: str) -> dict:
    text = "".join(p.read_text(encoding="utf-8") for p in sorted((CORPORA / lang).glob("*.txt")))
    mb = len(text.encode()) / 1e6
    syl = Syllabifier.for_script(LANGS[lang])
    syl.tokenize("warm up")
    ours = mb / best_of(lambda: syl.tokenize(text, leading_space=True))
    pattern = regex.compile(r"\X")
    peer = mb / best_of(lambda: pattern.findall(text))
    return {"lang": lang, "mb": mb, "wwho": ours, "regex_X": peer}


def plot(rows: list[dict], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot: skipped (matplotlib is not installed)")
        return
    langs = list(dict.fromkeys(r["lang"] for r in rows))
    names = list(dict.fromkeys(r["tokenizer"] for r in rows))
    fig, ax = plt.subplots(figsize=(11, 4.2))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [next((r["tokens_per_word"] for r in rows if r["lang"] == lang and r["tokenizer"] == name), 0)
                  for lang in langs]
        ax.bar([x + i * width for x in range(len(langs))], values, width, label=name)
    ax.set_xticks([x + width * (len(names) - 1) / 2 for x in range(len(langs))])
    ax.set_xticklabels([f"{lang}\n{LANGS[lang]}" for lang in langs])
    ax.set_ylabel("tokens per word (lower is better)")
    ax.set_title("FLORES-200 devtest: tokens per whitespace word")
    ax.legend(ncol=3, fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"\n![tokens per word per language]({os.path.relpath(path, ROOT / 'docs')})")



def _rate(value: float | None) -> str:
    """A cut rate, or "-" where no boundary could be placed (every line normalized by the tokenizer)."""
    return "-" if value is None else f"{value:.1%}"

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--langs", nargs="*", default=list(LANGS), choices=list(LANGS))
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "scripts.png")
    args = ap.parse_args()
    require(CORPORA)
    if O200K_FILE.is_file():
        os.environ.setdefault("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    print(f"machine: {machine()} (shared with other work: timings are indicative)")
    rows: list[dict] = []
    for lang in args.langs:
        t0 = time.perf_counter()
        rows += measure_language(lang, args.vocab_size)
        print(f"  {lang}: measured in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"\nFLORES-200 devtest, {rows[0]['lines']:,} lines per language. Trained tokenizers: vocabulary "
          f"{args.vocab_size:,} (SGPE: more when the syllables alone need more; see 'vocab'), trained on every "
          "other file of the language's shared corpora.\n")
    print("| lang | tokenizer | vocab | tokens/word | bytes/token | cuts in syllables | cuts in clusters | lossless |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['lang']} | {r['tokenizer']} | {r['vocab_size']:,} | {r['tokens_per_word']:.2f} | "
              f"{r['bytes_per_token']:.2f} | {_rate(r['syllable_cut_rate'])} | {_rate(r['cluster_cut_rate'])} | "
              f"{r['lossless_rate']:.1%} |")
    print("\nTraining text per language:")
    for lang in args.langs:
        print(f"- {lang}: {next(r['trained_on'] for r in rows if r['lang'] == lang and r['tokenizer'] == 'wwho SGPE')}")
    print("\ncuts: share of token boundaries strictly inside a syllable of the script's schema (Indic runs) or "
          "inside an extended grapheme cluster (regex \\X); SGPE can only cut syllables absent from its vocabulary "
          "(left to byte fallback). lossless: lines decoded back exactly (HF BPE with a Whitespace pre-tokenizer "
          "drops spaces).")
    print("\nSyllabification speed (leading_space=True, warm, best of 3), all files of the language:\n")
    print("| lang | script | MB | wwho MB/s | regex \\X MB/s | wwho / \\X |")
    print("|---|---|---:|---:|---:|---:|")
    for lang in args.langs:
        s = speed(lang)
        print(f"| {lang} | {LANGS[lang]} | {s['mb']:.1f} | {s['wwho']:.1f} | {s['regex_X']:.1f} | "
              f"{s['wwho'] / s['regex_X']:.2f} |")
    (CACHE / "results.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
    plot(rows, args.plot)


if __name__ == "__main__":
    main()
