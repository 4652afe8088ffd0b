"""One joint Indic tokenizer: SGPE 64k on a balanced mixture of 13 Indic languages
plus English, against SentencePiece BPE 64k on the same mixture and o200k_base, Llama 3 and Qwen2.

    python benchmarks/bench_joint.py [--alpha 0.3] [--word-tilt 0] [--total-mb 40] [--vocab 64000]
                                     [--kinds sgpe sgpe-words spm-bpe ...] [--seed 0] [--no-meta]
                                     [--collapse-whitespace]

What it does, each step cached under .cache/bench_joint/ (delete a file to redo its step):

1. **Mixture.** Training text per language: every shared file of the language
   (``../shared/data/corpora``, or ``$WWHO_SHARED_DATA``) except ``flores200-devtest.txt``, which is
   held out. Sinhala: of its news files only ``news-bbcsinhala.txt`` (the other news files, 63 MB,
   would drown every other language), plus its small files. Odia has FLORES only: it trains on the
   first half of its FLORES lines and is measured on the second half. The code-switched folders
   ``si-en/`` and ``hi-en/`` are left out (they are not one of the 14 languages; their Latin parts
   are English news words and romanized Hindi tweets). The languages are balanced by **temperature
   sampling**: language i gets a share of the mixture proportional to n_i ** alpha, n_i its
   training text in UTF-8 bytes (``--alpha 0.3`` as in mT5 and XLM-R; ``--alpha 1`` is the raw
   mixture), realized on whole lines to ``--total-mb`` MB: a small language's lines are repeated
   (whole passes, then a seeded random subset of lines), a large one is subsampled (a seeded random
   subset). The lines are shuffled with the same seeded RNG and written to
   ``mixture-a{alpha}.txt`` (``-{total}mb`` appended when ``--total-mb`` is not the default), so
   the mixture is deterministic. Each language's share before and after is printed.
   ``--word-tilt BETA`` tilts those shares towards the Indic languages of longer words (a share times
   the language's UTF-8 bytes per word over the Indic geometric mean, to the power BETA; English keeps
   its share), a parity-style balance that needs no tokenizer; the mixture is then
   ``mixture-a{alpha}-w{BETA}.txt``.
   Why temperature and not parity-style balancing (sampling so that every language ends with the
   same number of *tokens*): parity-style balancing needs a tokenizer to measure the languages
   with, and the tokenizer is what is being trained (an iterated fit); temperature sampling is the
   standard of mT5 and XLM-R, needs none, and its one knob is reported.
2. **Training**, each tokenizer in its own process (``_measure.measure``: wall seconds, CPU
   seconds and peak RSS, printed and stored beside the model as ``*.train.json``), all on the same
   mixture: SGPE ``script="indic"`` with today's defaults (``sgpe``), SGPE word-bounded
   (``superword_share=0``, ``sgpe-words``), SentencePiece BPE (character coverage 1.0, byte
   fallback, all lines, 2 threads) word-bounded (``spm-bpe``) and across spaces
   (``split_by_whitespace=False``, ``spm-bpe-x``); SGPE with ``prefix_space=True``, with and
   without superwords (``sgpe-prefix``, ``sgpe-words-prefix``: SentencePiece adds a dummy prefix
   space by default, so these are like with like); and SGPE ``segments_only=True``
   (``sgpe-meta``: trained on the Indic runs only, as ``wwho train --meta`` does, for the meta
   tokenizer, which refuses a ``prefix_space`` vocabulary). Each SGPE variant is compared with the
   SentencePiece BPE of its pairing (superwords: across spaces; word-bounded: word-bounded).
3. **Measure** on FLORES-200 devtest of every language (Odia: its second half; English:
   ``en/flores200-devtest.txt``): tokens per whitespace word for each trained tokenizer and for
   o200k_base (the shared ranks file), Llama 3 and Qwen2 (the shared GGUF vocabularies); every line
   decoded back exactly; for SGPE the token boundaries inside a syllable the vocabulary knows
   (``wwho eval``'s known-syllable cuts; must be 0). **Parity** (lower is better): (a) the
   max/min over the 14 languages of tokens per word; (b) each language's tokens relative to
   English on the same line-aligned FLORES sentences (sum of tokens over the lines / English's on
   the same lines), and its max and mean over the 13 Indic languages. ``--collapse-whitespace``
   measures the same on FLORES with each run of whitespace made one space and none at a line's ends:
   the text SentencePiece's default normalization encodes (it removes those runs, which SGPE keeps
   and spends a token on).
4. **Export.** Each joint SGPE directory holds the Hugging Face ``tokenizer.json`` (``save``
   writes it); HF ``tokenizers`` must give wwho's ids on every FLORES line of every language.
5. **Meta.** o200k_base + the joint SGPE part (``MetaTokenizer``, with ``sgpe-meta`` and with
   ``sgpe``): tokens per word per language and lossless decode.
6. **Where the difference is** (word-bounded pairing with prefix space, where a line's tokens are
   the sum of its words' tokens): SGPE's and SentencePiece's tokens on the FLORES words made of
   letters only, words with punctuation or symbols, with digits, with Latin letters.

Results are printed as Markdown (docs/joint-indic.md holds a run) and written to
``results-<mixture>.json``. ``make joint-indic`` runs it with the defaults.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import time
from pathlib import Path

from _measure import CORPORA, DATA, O200K_FILE, ROOT, machine, measure, need, require
from bench_languages import FLORES, collapse_whitespace, training_files

from wwho import balance

CACHE = ROOT / ".cache" / "bench_joint"
LANGS = ["si", "hi", "mr", "ne", "sa", "bn", "pa", "gu", "or", "ta", "te", "kn", "ml", "en"]
INDIC = LANGS[:-1]
DEFAULT_TOTAL_MB = 40.0
GGUF = DATA / "gguf-vocab"

# name -> (label, train_sgpe options)
SGPE_KINDS: dict[str, tuple[str, dict]] = {
    "sgpe": ("SGPE joint (superwords)", {}),
    "sgpe-words": ("SGPE joint, word-bounded", {"superword_share": 0}),
    "sgpe-prefix": ("SGPE joint (superwords), prefix_space", {"prefix_space": True}),
    "sgpe-words-prefix": (
        "SGPE joint, word-bounded, prefix_space",
        {"superword_share": 0, "prefix_space": True},
    ),
    "sgpe-meta": ("SGPE joint, Indic runs only (meta part)", {"segments_only": True}),
}
SPM_KINDS: dict[str, tuple[str, bool]] = {
    "spm-bpe": ("SentencePiece BPE, word-bounded", True),
    "spm-bpe-x": ("SentencePiece BPE, across spaces", False),
}
PEERS = {
    "o200k": "o200k_base",
    "llama3": "Llama 3 (GGUF llama-bpe)",
    "qwen2": "Qwen2 (GGUF qwen2)",
}
#: Like with like: each SGPE variant against the SentencePiece BPE of its pairing.
PAIRED = {
    "sgpe": "spm-bpe-x",
    "sgpe-prefix": "spm-bpe-x",
    "sgpe-words": "spm-bpe",
    "sgpe-words-prefix": "spm-bpe",
}
#: Trained on the Indic runs only: its English (and digits, punctuation) are o200k_base's job in the
#: meta tokenizer, so it is measured there, not in the table of standalone tokenizers.
META_ONLY = {"sgpe-meta"}
DEFAULT_KINDS = [
    "sgpe",
    "sgpe-words",
    "sgpe-prefix",
    "sgpe-words-prefix",
    "sgpe-meta",
    "spm-bpe",
    "spm-bpe-x",
]

SGPE_JOB = """
from wwho.sgpe import SGPETokenizer
SGPETokenizer.train([{mixture!r}], vocab_size={vocab}, script="indic", progress=False, **{options!r}).save({out!r})
"""
SPM_JOB = """
import sentencepiece as spm
spm.SentencePieceTrainer.train(input={mixture!r}, model_prefix={out!r}, vocab_size={vocab}, model_type="bpe",
    character_coverage=1.0, byte_fallback=True, input_sentence_size=0, num_threads=2, minloglevel=2,
    hard_vocab_limit=False, max_sentence_length=100000, split_by_whitespace={split!r})
"""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def read(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def size_of(lines: list[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


# -- 1. the mixture -------------------------------------------------------------------------


def training_lines(lang: str) -> tuple[list[str], list[str]]:
    """(training lines, the names of their sources)."""
    if lang == "or":
        flores = read(CORPORA / lang / FLORES)
        return flores[: len(flores) // 2], [f"{FLORES} (first half)"]
    files = training_files(lang)
    return [line for f in files for line in read(f)], [f.name for f in files]


def test_lines(lang: str, *, collapse: bool = False) -> list[str]:
    """FLORES devtest (Odia: its second half); ``collapse``: with runs of whitespace collapsed to one
    space (:func:`bench_languages.collapse_whitespace`), the text SentencePiece's normalization encodes."""
    flores = read(CORPORA / lang / FLORES)
    if collapse:
        flores = [collapse_whitespace(line) for line in flores]
    return flores[len(flores) // 2 :] if lang == "or" else flores


def mixture_name(alpha: float, total_mb: float, tilt: float = 0.0) -> str:
    tail = "" if total_mb == DEFAULT_TOTAL_MB else f"-{total_mb:g}mb"
    return f"mixture-a{alpha:g}{f'-w{tilt:g}' if tilt else ''}{tail}"


def temperature_shares(sizes: dict[str, int], alpha: float) -> dict[str, float]:
    """The shares of `wwho train --balance` (wwho.balance), by language."""
    return dict(zip(sizes, balance.temperature_shares(list(sizes.values()), alpha)))


def take(lines: list[str], target: int, rng: random.Random) -> list[str]:
    """Whole lines of about ``target`` bytes: whole passes over ``lines``, then a random subset."""
    out: list[str] = []
    size = size_of(lines)
    passes = int(target // size)
    out.extend(lines * passes)
    rest = target - passes * size
    order = list(range(len(lines)))
    rng.shuffle(order)
    got = 0
    for i in order:
        if got >= rest:
            break
        out.append(lines[i])
        got += len(lines[i].encode("utf-8")) + 1
    return out


def bytes_per_word(lines: list[str]) -> float:
    return sum(len(line.encode("utf-8")) for line in lines) / max(1, sum(len(line.split()) for line in lines))


def build_mixture(alpha: float, total_mb: float, seed: int, tilt: float = 0.0) -> tuple[Path, dict]:
    name = mixture_name(alpha, total_mb, tilt)
    path = CACHE / f"{name}.txt"
    info_path = CACHE / f"{name}.json"
    if path.exists() and info_path.exists():
        info = json.loads(info_path.read_text())
        if info.get("seed") == seed:
            return path, info
    CACHE.mkdir(parents=True, exist_ok=True)
    log(f"building {path.name}")
    lines = {}
    sources = {}
    for lang in LANGS:
        lines[lang], sources[lang] = training_lines(lang)
    sizes = {lang: size_of(ls) for lang, ls in lines.items()}
    shares = temperature_shares(sizes, alpha)
    if tilt:
        # Parity-style, with no tokenizer: more text for the Indic languages of longer words (the
        # ones a shared vocabulary serves worst), relative to the Indic languages' geometric mean;
        # English keeps its temperature share, so that its tokens do not rise to flatter the
        # figures relative to English.
        words = {lang: bytes_per_word(ls) for lang, ls in lines.items() if lang != "en"}
        middle = math.exp(sum(math.log(w) for w in words.values()) / len(words))
        weights = {lang: shares[lang] * (words[lang] / middle) ** tilt if lang in words else shares[lang]
                   for lang in LANGS}
        shares = {lang: w / sum(weights.values()) for lang, w in weights.items()}
    target = total_mb * 1e6
    mixed: list[str] = []
    taken = {}
    for k, lang in enumerate(LANGS):
        rng = random.Random(seed * 1000 + k)
        chosen = take(lines[lang], round(shares[lang] * target), rng)
        taken[lang] = size_of(chosen)
        mixed.extend(chosen)
    random.Random(seed).shuffle(mixed)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(mixed) + "\n", encoding="utf-8")
    tmp.replace(path)
    total_raw, total_taken = sum(sizes.values()), sum(taken.values())
    info = {
        "alpha": alpha,
        "word_tilt": tilt,
        "total_mb": total_mb,
        "seed": seed,
        "bytes": path.stat().st_size,
        "lines": len(mixed),
        "langs": {
            lang: {
                "sources": sources[lang],
                "raw_bytes": sizes[lang],
                "raw_share": sizes[lang] / total_raw,
                "bytes": taken[lang],
                "share": taken[lang] / total_taken,
                "repeats": taken[lang] / sizes[lang],
            }
            for lang in LANGS
        },
    }
    info_path.write_text(json.dumps(info, indent=1))
    return path, info


def print_mixture(path: Path, info: dict) -> None:
    print(
        f"\n## Mixture {path.name}: alpha {info['alpha']:g}, word tilt {info.get('word_tilt', 0):g}, "
        f"{info['bytes'] / 1e6:.1f} MB, "
        f"{info['lines']:,} lines, seed {info['seed']}\n"
    )
    print("| lang | training text MB | share before | share after | MB in mixture | times its text |")
    print("|---|---:|---:|---:|---:|---:|")
    for lang, d in info["langs"].items():
        print(
            f"| {lang} | {d['raw_bytes'] / 1e6:.2f} | {d['raw_share']:.1%} | {d['share']:.1%} | "
            f"{d['bytes'] / 1e6:.2f} | {d['repeats']:.2f} |"
        )
    print(
        "\nSources: " + "; ".join(f"{lang}: {', '.join(d['sources'])}" for lang, d in info["langs"].items())
    )


# -- 2. training ----------------------------------------------------------------------------


def train(kind: str, mixture: Path, vocab: int) -> tuple[str, dict]:
    """Train (or reuse) one tokenizer; returns (``wwho.evaluate`` spec, training record)."""
    base = CACHE / f"{mixture.stem}-{kind}-{vocab}"
    record_path = base.with_name(base.name + ".train.json")
    if kind in SGPE_KINDS:
        spec, done = str(base), (base / "vocab.json").exists()
        job = SGPE_JOB.format(mixture=str(mixture), vocab=vocab, options=SGPE_KINDS[kind][1], out=spec)
        if not done and base.exists():
            shutil.rmtree(base)
    else:
        spec, done = f"spm:{base}.model", Path(f"{base}.model").exists()
        job = SPM_JOB.format(mixture=str(mixture), out=str(base), vocab=vocab, split=SPM_KINDS[kind][1])
    if done and record_path.exists():
        return spec, json.loads(record_path.read_text())
    log(f"training {kind} ({vocab:,}) on {mixture.name}")
    seconds, rss, _, cpu = measure(job, cpu=True)
    record = {
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "peak_mb": round(rss),
        "load": os.getloadavg(),
    }
    record_path.write_text(json.dumps(record))
    log(f"trained {kind}: {seconds:.0f} s wall, {cpu:.0f} s CPU, {rss:.0f} MB peak")
    return spec, record


# -- 3. measuring ---------------------------------------------------------------------------


def peer_spec(name: str) -> str:
    if name == "o200k":
        os.environ.setdefault("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
        return "tiktoken:o200k_base"
    return str(GGUF / {"llama3": "ggml-vocab-llama-bpe.gguf", "qwen2": "ggml-vocab-qwen2.gguf"}[name])


def measure_all(
    specs: dict[str, str], tests: dict[str, list[str]], sgpe: set[str], *, collapse: bool = False
) -> tuple[dict, dict]:
    """(name -> lang -> {tokens, words, lines, lossless, known_cuts}, name -> lang -> the tokens of the
    English FLORES lines aligned with that language's test lines); cached per model file."""

    from wwho.eval_specs import load_spec
    from wwho.evaluate import evaluate

    en = test_lines("en", collapse=collapse)
    half = len(en) - len(tests["or"])  # Odia is measured on the second half of FLORES
    out: dict = {}
    en_tokens: dict = {}
    for name, spec in specs.items():
        cache = eval_cache(name, spec, "-spaces" if collapse else "")
        if cache.exists():
            data = json.loads(cache.read_text())
        else:
            log(f"measuring {name}")
            tok = load_spec(spec)
            data = {"langs": {}}
            for lang in LANGS:
                m = evaluate(tok, tests[lang])
                cell = {"tokens": m.tokens, "words": m.words, "lines": m.lines, "lossless": m.lossless_lines}
                if name in sgpe:
                    cell["known_cuts"] = m.known_syllable_cuts
                data["langs"][lang] = cell
            data["en_lines"] = [len(tok.encode(line)[0]) for line in en]
            cache.write_text(json.dumps(data))
        out[name] = data["langs"]
        per_line = data["en_lines"]
        en_tokens[name] = {lang: sum(per_line[half:] if lang == "or" else per_line) for lang in LANGS}
    return out, en_tokens


def eval_cache(name: str, spec: str, variant: str = "") -> Path:
    """Where one tokenizer's measurements are kept: named after the model and its file's time (and
    ``variant``, the held-out text's)."""
    path = Path(spec.partition(":")[2] if spec.startswith("spm:") else spec)
    if not path.exists():
        return CACHE / f"eval-{name}{variant}.json"
    stamp = (path / "vocab.json" if path.is_dir() else path).stat().st_mtime_ns
    return CACHE / f"eval-{path.name}-{stamp}{variant}.json"


def parity_figures(results: dict, en_tokens: dict[str, dict[str, int]]) -> dict:
    figures = {}
    for name, cells in results.items():
        per_word = {lang: c["tokens"] / c["words"] for lang, c in cells.items()}
        rel = {lang: cells[lang]["tokens"] / en_tokens[name][lang] for lang in INDIC}
        figures[name] = {
            "per_word": per_word,
            "max_min": max(per_word.values()) / min(per_word.values()),
            "worst": max(per_word, key=per_word.get),
            "best": min(per_word, key=per_word.get),
            "vs_en": rel,
            "vs_en_max": max(rel.values()),
            "vs_en_mean": sum(rel.values()) / len(rel),
        }
    return figures


# -- 4. export, 5. meta ---------------------------------------------------------------------


def export_check(spec: str, tests: dict[str, list[str]]) -> dict:
    from tokenizers import Tokenizer

    from wwho.sgpe import SGPETokenizer

    tok = SGPETokenizer.load(spec)
    path = Path(spec) / "tokenizer.json"
    hf = Tokenizer.from_file(str(path))
    lines = mismatches = 0
    first = None
    for lang in LANGS:
        for line in tests[lang]:
            lines += 1
            if hf.encode(line, add_special_tokens=False).ids != tok.encode(line):
                mismatches += 1
                first = first or f"{lang}: {line[:60]}"
    return {"file": str(path.relative_to(ROOT)), "lines": lines, "mismatches": mismatches, "first": first}


def meta_check(spec: str, tests: dict[str, list[str]]) -> dict:
    from wwho.meta import MetaTokenizer
    from wwho.sgpe import SGPETokenizer

    meta = MetaTokenizer(SGPETokenizer.load(spec), "o200k_base", tiktoken_file=O200K_FILE)
    out = {"sgpe_part": Path(spec).name, "vocab_size": meta.vocab_size, "langs": {}}
    for lang in LANGS:
        tokens = words = lossless = 0
        for line in tests[lang]:
            ids = meta.encode(line)
            tokens += len(ids)
            words += len(line.split())
            lossless += meta.decode(ids) == line
        out["langs"][lang] = {
            "tokens": tokens,
            "words": words,
            "lines": len(tests[lang]),
            "lossless": lossless,
        }
    return out


# -- report ---------------------------------------------------------------------------------


def word_classes(ours: str, peer: str, tests: dict[str, list[str]]) -> dict:
    """lang -> word class -> [words, SGPE tokens, SentencePiece tokens], each word encoded alone."""
    import unicodedata

    from wwho.eval_specs import load_spec

    a, b = load_spec(ours), load_spec(peer)

    def kind(word: str) -> str:
        if any(c.isdigit() for c in word):
            return "digits"
        if any("a" <= c.lower() <= "z" for c in word):
            return "Latin"
        if any(unicodedata.category(c)[0] in "PS" for c in word):
            return "punctuation"
        return "letters"

    out: dict = {}
    for lang in LANGS:
        counts: dict = {}
        for line in tests[lang]:
            for word in line.split():
                counts[word] = counts.get(word, 0) + 1
        cells = out[lang] = {k: [0, 0, 0] for k in ("letters", "punctuation", "digits", "Latin")}
        for word, n in counts.items():
            cell = cells[kind(word)]
            cell[0] += n
            cell[1] += n * len(a.encode(word)[0])
            cell[2] += n * len(b.encode(word)[0])
    return out


def print_word_classes(classes: dict) -> None:
    names = ("letters", "punctuation", "digits", "Latin")
    print(
        "\n## Where the difference is: SGPE / SentencePiece tokens by kind of word (word-bounded, prefix space)\n"
    )
    print("| lang | " + " | ".join(f"{k}: share of words, SGPE/SPM" for k in names) + " | all |")
    print("|---" * (len(names) + 2) + "|")
    for lang, cells in classes.items():
        words = sum(c[0] for c in cells.values())
        parts = [
            f"{c[0] / words:.0%}, {c[1] / c[2]:.3f}" if c[2] else f"{c[0] / words:.0%}, -"
            for c in (cells[k] for k in names)
        ]
        total = sum(c[1] for c in cells.values()) / sum(c[2] for c in cells.values())
        print(f"| {lang} | " + " | ".join(parts) + f" | {total:.3f} |")


def label(name: str) -> str:
    return {**{k: v[0] for k, v in SGPE_KINDS.items()}, **{k: v[0] for k, v in SPM_KINDS.items()}, **PEERS}[
        name
    ]


def report(results: dict, figures: dict, records: dict, vocab: int) -> None:
    names = [name for name in results if name not in META_ONLY]
    print(
        f"\n## FLORES-200 devtest, tokens per whitespace word (lower is better; {vocab:,}-token joint models)\n"
    )
    print("| tokenizer | vocab | " + " | ".join(LANGS) + " | max/min | vs en: max | vs en: mean |")
    print("|---" * (len(LANGS) + 5) + "|")
    for name in names:
        f = figures[name]
        cells = " | ".join(f"{f['per_word'][lang]:.3f}" for lang in LANGS)
        print(
            f"| {label(name)} | {records[name].get('vocab', '')} | {cells} | {f['max_min']:.2f} | "
            f"{f['vs_en_max']:.2f} | {f['vs_en_mean']:.2f} |"
        )
    print("\nPublished beside it: Sarvam-1 (68k vocabulary) 1.4-2.1 tokens per word over 10 Indic languages,")
    print("on Sarvam's own test data, not FLORES (not comparable line for line).")
    print("\n## Tokens relative to English on the same FLORES lines (lower is better)\n")
    print("| tokenizer | " + " | ".join(INDIC) + " |")
    print("|---" * (len(INDIC) + 1) + "|")
    for name in names:
        print(
            f"| {label(name)} | " + " | ".join(f"{figures[name]['vs_en'][lang]:.2f}" for lang in INDIC) + " |"
        )
    print(
        "\nA tokenizer that is better at English scores worse on this figure: it is a ratio to its own"
        "\nEnglish tokens. Read it beside the table above."
    )
    head_to_head(figures)
    print("\n## Lossless lines and cuts inside known syllables (SGPE; must be 0)\n")
    for name in results:
        lossless = sum(c["lossless"] for c in results[name].values())
        lines = sum(c["lines"] for c in results[name].values())
        cuts = [c.get("known_cuts") for c in results[name].values()]
        known = f", cuts inside known syllables {sum(cuts)}" if None not in cuts else ""
        print(f"- {label(name)}: {lossless:,}/{lines:,} lines decoded exactly{known}")
    print("\n## Training (wall and CPU seconds, peak RSS)\n")
    for name, r in records.items():
        if "seconds" in r:
            print(
                f"- {label(name)}: {r['seconds']:.0f} s wall, {r['cpu_seconds']:.0f} s CPU, {r['peak_mb']:,} MB; "
                f"load average at the end {r['load'][0]:.1f}"
            )


def head_to_head(figures: dict) -> None:
    """SGPE / SentencePiece per language (below 1: SGPE spends fewer tokens), like with like, and
    the best SGPE variant against the better SentencePiece BPE."""
    pairs = [(ours, peer) for ours, peer in PAIRED.items() if ours in figures and peer in figures]
    ours_all = [k for k in figures if k in SGPE_KINDS and k not in META_ONLY]
    peers_all = [k for k in figures if k in SPM_KINDS]
    if not pairs:
        return
    print("\n## SGPE / SentencePiece BPE, tokens per word (below 1.000: SGPE spends fewer)\n")
    print("| SGPE | against | " + " | ".join(LANGS) + " | wins | max/min, SGPE vs SPM | vs en mean |")
    print("|---" * (len(LANGS) + 5) + "|")
    rows = [(label(a), label(b), figures[a]["per_word"], figures[b]["per_word"], a, b) for a, b in pairs]
    if len(ours_all) > 1 or len(peers_all) > 1:
        best_ours = {g: min(figures[k]["per_word"][g] for k in ours_all) for g in LANGS}
        best_peer = {g: min(figures[k]["per_word"][g] for k in peers_all) for g in LANGS}
        rows.append(("best SGPE variant", "the better SentencePiece BPE", best_ours, best_peer, None, None))
    for a, b, mine, theirs, ka, kb in rows:
        ratio = {g: mine[g] / theirs[g] for g in LANGS}
        wins = sum(r <= 1 for r in ratio.values())
        extra = ""
        if ka:
            fa, fb = figures[ka], figures[kb]
            extra = f"{fa['max_min']:.2f} vs {fb['max_min']:.2f} | {fa['vs_en_mean']:.2f} vs {fb['vs_en_mean']:.2f}"
        else:
            extra = " | "
        print(
            f"| {a} | {b} | "
            + " | ".join(f"{ratio[g]:.3f}" for g in LANGS)
            + f" | {wins}/{len(LANGS)} | {extra} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alpha", type=float, default=0.3, help="temperature exponent (1: the raw mixture)")
    ap.add_argument("--total-mb", type=float, default=DEFAULT_TOTAL_MB, help="size of the mixture in MB")
    ap.add_argument("--word-tilt", type=float, default=0.0, metavar="BETA",
                    help="multiply each share by the language's UTF-8 bytes per word ** BETA (0: off)")
    ap.add_argument("--vocab", type=int, default=64000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", nargs="*", default=DEFAULT_KINDS, choices=[*SGPE_KINDS, *SPM_KINDS])
    ap.add_argument("--peers", nargs="*", default=list(PEERS), choices=list(PEERS))
    ap.add_argument("--train-only", action="store_true", help="build the mixture and train, measure nothing")
    ap.add_argument("--no-meta", action="store_true", help="skip the meta tokenizer check")
    ap.add_argument(
        "--collapse-whitespace",
        action="store_true",
        help="measure on FLORES with runs of whitespace collapsed to one space (SentencePiece removes them)",
    )
    args = ap.parse_args()
    require(CORPORA)
    if any(kind.startswith("spm") for kind in args.kinds):
        need("sentencepiece", "spm")
    print(f"machine: {machine()}; load average at the start {os.getloadavg()[0]:.1f}")
    mixture, info = build_mixture(args.alpha, args.total_mb, args.seed, args.word_tilt)
    print_mixture(mixture, info)
    specs, records = {}, {}
    for kind in args.kinds:
        specs[kind], records[kind] = train(kind, mixture, args.vocab)
    if args.train_only:
        return
    for name in args.peers:
        specs[name], records[name] = peer_spec(name), {}
    from wwho.eval_specs import load_spec

    for name, spec in specs.items():
        records[name]["vocab"] = f"{load_spec(spec).vocab_size:,}"
    tests = {lang: test_lines(lang, collapse=args.collapse_whitespace) for lang in LANGS}
    if args.collapse_whitespace:
        print("\nHeld-out text: FLORES with runs of whitespace collapsed to one space (`--collapse-whitespace`)")
    sgpe = {k for k in args.kinds if k in SGPE_KINDS}
    results, en_tokens = measure_all(specs, tests, sgpe, collapse=args.collapse_whitespace)
    figures = parity_figures(results, en_tokens)
    report(results, figures, records, args.vocab)
    out = {"mixture": info, "results": results, "figures": figures, "training": records}
    exported = [k for k in specs if k in SGPE_KINDS]
    if exported:
        out["export"] = {}
        print(
            "\n## HF export: `tokenizers.Tokenizer.from_file(tokenizer.json)` against wwho, every FLORES line\n"
        )
        for kind in exported:
            log(f"checking the HF export of {kind}")
            check = out["export"][kind] = export_check(specs[kind], tests)
            first = f"; first: {check['first']}" if check["first"] else ""
            print(
                f"- {label(kind)} ({check['file']}): same ids on {check['lines'] - check['mismatches']:,} of "
                f"{check['lines']:,} lines, {check['mismatches']} mismatches{first}"
            )
    if "sgpe-words-prefix" in specs and "spm-bpe" in specs:
        log("counting tokens by kind of word")
        out["word_classes"] = word_classes(specs["sgpe-words-prefix"], specs["spm-bpe"], tests)
        print_word_classes(out["word_classes"])
    parts = [k for k in ("sgpe-meta", "sgpe") if k in specs]
    if parts and not args.no_meta:
        out["meta"] = {}
        print("\n## Meta tokenizer: o200k_base + the joint SGPE part, FLORES devtest\n")
        print("| SGPE part | ids | " + " | ".join(LANGS) + " |")
        print("|---" * (len(LANGS) + 2) + "|")
        for part in parts:
            log(f"checking the meta tokenizer with {part}")
            meta = out["meta"][part] = meta_check(specs[part], tests)
            cells = meta["langs"]
            row = " | ".join(f"{cells[g]['tokens'] / cells[g]['words']:.3f}" for g in LANGS)
            print(f"| {label(part)}: tokens per word | {meta['vocab_size']:,} | {row} |")
            row = " | ".join(f"{cells[g]['lossless']}/{cells[g]['lines']}" for g in LANGS)
            print(f"| {label(part)}: lines decoded exactly | | {row} |")
    (CACHE / f"results-{mixture.stem}{'-spaces' if args.collapse_whitespace else ''}.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
