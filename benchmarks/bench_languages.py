"""SGPE against SentencePiece and HF BPE on every Indic language of the shared data, in two pairings.

    python benchmarks/bench_languages.py [--langs si hi ...] [--sizes 8000 32000] [--sgpe NAME ...]

Per language and vocabulary size, every tokenizer is trained on the same text (the language's
shared files other than FLORES; Sinhala: the BBC news and the small files, 14.8 MB, so that the
peers train in minutes; Odia, which has FLORES only, is cross-fitted: trained on each half of
FLORES and measured on the other) and measured on FLORES-200 devtest (held out): tokens per
whitespace word, lines decoded back exactly, and, for SGPE, token boundaries inside a syllable
the vocabulary knows (bare or with its leading space; must be 0).

Two pairings, like with like:

* **word-bounded**: SGPE without superwords against SentencePiece BPE and Unigram as usually
  configured (``split_by_whitespace``; character coverage 1.0, byte fallback) and HF BPE with
  the Metaspace pre-tokenizer (byte fallback, lossless);
* **across spaces**: SGPE with superwords against the same peers allowed to cross spaces
  (SentencePiece ``split_by_whitespace=False``, HF Metaspace ``split=False``).

``--tradeoff PNG`` plots what keeping syllables costs: tokens per word, relative to the best peer,
against the share of token boundaries inside a syllable, every language and tokenizer.
``--sgpe NAME=JSON`` adds SGPE variants (``train_sgpe`` options as JSON) to both pairings, for
experiments. Trained models are cached in .cache/bench_languages/ (``--fresh`` retrains SGPE).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from _measure import CORPORA, ROOT, installed, machine, measure, need, require

CACHE = ROOT / ".cache" / "bench_languages"
SCRIPTS = {
    "si": "sinhala",
    "hi": "devanagari",
    "mr": "devanagari",
    "ne": "devanagari",
    "sa": "devanagari",
    "bn": "bengali",
    "pa": "gurmukhi",
    "gu": "gujarati",
    "or": "odia",
    "ta": "tamil",
    "te": "telugu",
    "kn": "kannada",
    "ml": "malayalam",
}
FLORES = "flores200-devtest.txt"
SI_NEWS_KEPT = "news-bbcsinhala.txt"  # the other Sinhala news files (63 MB) are left out: see the docstring

# name -> (pairing, train_sgpe options); the pairing decides which peers a row is compared with
SGPE_KINDS: dict[str, tuple[str, dict]] = {
    "sgpe-words": ("word-bounded", dict(superword_share=0)),
    "sgpe-words-prefix": ("word-bounded", dict(superword_share=0, prefix_space=True)),
    "sgpe": ("across spaces", {}),
    "sgpe-prefix": ("across spaces", dict(prefix_space=True)),
}
PEERS = {
    "word-bounded": ["spm-bpe", "spm-uni", "hf-meta"],
    "across spaces": ["spm-bpe-x", "spm-uni-x", "hf-meta-x"],
}
LABELS = {
    "sgpe-words": "SGPE, no superwords",
    "sgpe-words-prefix": "SGPE, no superwords, prefix",
    "sgpe": "SGPE (superwords)",
    "sgpe-prefix": "SGPE (superwords), prefix",
    "spm-bpe": "SentencePiece BPE",
    "spm-uni": "SentencePiece Unigram",
    "hf-meta": "HF BPE Metaspace",
    "spm-bpe-x": "SentencePiece BPE across spaces",
    "spm-uni-x": "SentencePiece Unigram across spaces",
    "hf-meta-x": "HF BPE Metaspace across spaces",
}

SGPE_JOB = """
from wwho.sgpe import SGPETokenizer
SGPETokenizer.train({files!r}, vocab_size={vocab}, script={script!r}, progress=False, **{options!r}).save({out!r})
"""
SPM_JOB = """
import sentencepiece as spm
spm.SentencePieceTrainer.train(input={files!r}, model_prefix={out!r}, vocab_size={vocab}, model_type={model!r},
    character_coverage=1.0, byte_fallback=True, input_sentence_size=0, num_threads=2, minloglevel=2,
    hard_vocab_limit=False, max_sentence_length=100000, split_by_whitespace={split!r})
"""
# Lossless HF BPE: the 256 byte tokens are in the vocabulary, so nothing becomes [UNK].
HF_JOB = """
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
tok = Tokenizer(models.BPE(byte_fallback=True))
tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split={split!r})
tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace(prepend_scheme="always")])
bytes_ = [f"<0x{{b:02X}}>" for b in range(256)]
trainer = trainers.BpeTrainer(vocab_size={vocab}, special_tokens=["<unk>", *bytes_], show_progress=False)
tok.train({files!r}, trainer)
tok.save({out!r})
"""


#: Another domain than the training text, where the shared data has one: the test file (left out
#: of training). Literature (verse, classical prose), Wikipedia sentences or Tatoeba's short
#: conversational lines, against training on news, health and parliament text.
DOMAIN = {
    "si": "wikipedia-floresv1.txt",
    "ne": "wikipedia-floresv1.txt",
    "hi": "literature-classical-ltrc.txt",
    "mr": "literature-wikisource.txt",
    "bn": "literature-wikisource.txt",
    "pa": "literature-gurbani.txt",
    "te": "literature-wikisource.txt",
    "ta": "tatoeba-test.txt",
    "ml": "tatoeba-test.txt",
}


DOMAIN_LINES = 3000  # the first lines of each DOMAIN file
HELD_OUT = {
    "flores": "FLORES-200 devtest",
    "flores-spaces": "FLORES-200 devtest, whitespace runs collapsed (as SentencePiece normalizes)",
    "domain": "another domain (see DOMAIN)",
}


def training_files(lang: str, *, leave_out: tuple[str, ...] = ()) -> list[Path]:
    files = sorted(p for p in (CORPORA / lang).glob("*.txt") if p.name not in (FLORES, *leave_out))
    if lang == "si":
        files = [p for p in files if not p.name.startswith("news-") or p.name == SI_NEWS_KEPT]
    return files


def read(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def collapse_whitespace(line: str) -> str:
    """``line`` with every run of whitespace made one space and none at either end: the text that
    SentencePiece's default normalization (``remove_extra_whitespaces``) encodes. Its tokens do not
    hold the spaces it removes, so it cannot give them back; SGPE and HF Metaspace spend a token on
    each such run, and both decode every one back."""
    return " ".join(line.split())


def folds(lang: str, split: str = "flores") -> list[tuple[list[Path], list[str], str]]:
    """(training files, held-out lines, cache tag) per fold. ``split="flores"``: FLORES devtest
    held out (one fold, or Odia's two cross-fitted halves); ``"flores-spaces"``: the same lines with
    :func:`collapse_whitespace`; ``"domain"``: :data:`DOMAIN`."""
    if split == "flores-spaces":
        return [(files, [collapse_whitespace(line) for line in test], tag) for files, test, tag in folds(lang)]
    if split == "domain":
        test = DOMAIN[lang]
        lines = read(CORPORA / lang / test)[:DOMAIN_LINES]
        return [(training_files(lang, leave_out=(test,)), lines, f"{lang}-domain")]
    flores = read(CORPORA / lang / FLORES)
    files = training_files(lang)
    if files:
        return [(files, flores, lang)]
    half = len(flores) // 2
    out = []
    for i, (train, test) in enumerate(((flores[:half], flores[half:]), (flores[half:], flores[:half]))):
        path = CACHE / f"{lang}-half{i}.txt"
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(train) + "\n", encoding="utf-8")
        out.append(([path], test, f"{lang}-half{i}"))
    return out


def train(tag: str, lang: str, kind: str, vocab: int, files: list[Path], fresh: bool) -> tuple[str, dict]:
    """Train (or reuse) one tokenizer; returns (``wwho eval`` SPEC, training record)."""
    base = CACHE / f"{tag}-{kind}-{vocab}"
    record_path = base.with_name(base.name + ".train.json")
    names = [str(f) for f in files]
    if kind in SGPE_KINDS:
        spec, done = str(base), (base / "vocab.json").exists() and not fresh
        job = SGPE_JOB.format(
            files=names, vocab=vocab, script=SCRIPTS[lang], options=SGPE_KINDS[kind][1], out=spec
        )
        if not done and base.exists():
            shutil.rmtree(base)
    elif kind.startswith("hf"):
        out = str(base) + ".json"
        spec, done = f"hf:{out}", Path(out).exists()
        job = HF_JOB.format(files=names, vocab=vocab, out=out, split=not kind.endswith("-x"))
    else:
        spec, done = f"spm:{base}.model", Path(f"{base}.model").exists()
        job = SPM_JOB.format(
            files=names,
            out=str(base),
            vocab=vocab,
            model="unigram" if "uni" in kind else "bpe",
            split=not kind.endswith("-x"),
        )
    if done and record_path.exists():
        return spec, json.loads(record_path.read_text())
    CACHE.mkdir(parents=True, exist_ok=True)
    seconds, rss, _ = measure(job)
    record = {"seconds": round(seconds, 1), "peak_mb": round(rss)}
    record_path.write_text(json.dumps(record))
    return spec, record


@dataclass
class Cell:
    """One tokenizer on one language's held-out lines (summed over folds)."""

    tokens: int = 0
    words: int = 0
    lines: int = 0
    lossless: int = 0
    boundaries: int = 0
    in_syllable: int = 0
    known_cuts: int | None = None
    vocab: int = 0

    @property
    def per_word(self) -> float:
        return self.tokens / self.words

    def add(self, m, known_cuts: int | None) -> None:
        self.tokens += m.tokens
        self.words += m.words
        self.lines += m.lines
        self.lossless += m.lossless_lines
        self.boundaries += m.boundaries
        self.in_syllable += m.boundaries_in_syllable
        self.vocab = max(self.vocab, m.vocab_size)
        if known_cuts is not None:
            self.known_cuts = (self.known_cuts or 0) + known_cuts


def measure_cell(lang: str, kind: str, size: int, split: str, fresh: bool) -> Cell:
    from wwho.eval_specs import load_spec
    from wwho.evaluate import evaluate

    cell = Cell()
    for files, test, tag in folds(lang, split):
        spec, _ = train(tag, lang, kind, size, files, fresh and kind in SGPE_KINDS)
        m = evaluate(load_spec(spec), test)
        cell.add(m, m.known_syllable_cuts if kind in SGPE_KINDS else None)
    return cell


def run(langs: list[str], sizes: list[int], split: str, fresh: bool) -> dict:
    held_out = HELD_OUT[split]
    results: dict = {}
    for size in sizes:
        for pairing in ("word-bounded", "across spaces"):
            ours = [k for k, (p, _) in SGPE_KINDS.items() if p == pairing]
            kinds = ours + PEERS[pairing]
            print(
                f"\n## {pairing}, {size:,} tokens, {held_out}: tokens per word "
                "(SGPE: cuts inside known syllables)\n"
            )
            print(
                f"| lang | {' | '.join(LABELS.get(k, k) for k in kinds)} | best peer | "
                + " | ".join(f"{LABELS.get(k, k)} / best" for k in ours)
                + " |"
            )
            print("|---" * (len(kinds) + len(ours) + 2) + "|")
            for lang in langs:
                cells = {kind: measure_cell(lang, kind, size, split, fresh) for kind in kinds}
                results.update({(lang, size, split, kind): cell for kind, cell in cells.items()})
                best = min(PEERS[pairing], key=lambda k: cells[k].per_word)
                row = [
                    f"{cells[k].per_word:.3f}" + (f" ({cells[k].known_cuts})" if k in ours else "")
                    for k in kinds
                ]
                ratios = [f"{cells[k].per_word / cells[best].per_word:.3f}" for k in ours]
                print(f"| {lang} | {' | '.join(row)} | {LABELS[best]} | {' | '.join(ratios)} |", flush=True)
            print(
                "\nLines decoded exactly, and token boundaries inside a schema syllable (share of all "
                "boundaries; SentencePiece's normalized lines are not measured):\n"
            )
            for lang in langs:
                parts = []
                for kind in kinds:
                    c = results[(lang, size, split, kind)]
                    cut = c.in_syllable / c.boundaries if c.boundaries else 0.0
                    parts.append(f"{LABELS.get(kind, kind)} {c.lossless}/{c.lines}, {cut:.1%}")
                print(f"- {lang}: " + "; ".join(parts))
    summary(langs, sizes, split, results)
    return results


def summary(langs: list[str], sizes: list[int], split: str, results: dict) -> None:
    """One line per language and size: each SGPE row against the best peer of its pairing."""
    print(
        f"\n## Summary ({HELD_OUT[split]}): tokens per word, "
        "SGPE / the best peer of the same pairing (below 1: SGPE spends fewer)\n"
    )
    ours = {p: [k for k, (q, _) in SGPE_KINDS.items() if q == p] for p in PEERS}
    print("| lang | size | " + " | ".join(LABELS.get(k, k) for p in PEERS for k in ours[p]) + " |")
    print("|---|---:|" + "---:|" * sum(map(len, ours.values())))
    at_or_below = {k: [] for p in PEERS for k in ours[p]}
    for lang in langs:
        for size in sizes:
            cells = []
            for pairing, peers in PEERS.items():
                # exact, in tokens: tokens / words of each against the best peer's
                best = min((results[(lang, size, split, k)] for k in peers), key=lambda c: c.per_word)
                for k in ours[pairing]:
                    c = results[(lang, size, split, k)]
                    cells.append(f"{c.per_word / best.per_word:.3f}")
                    at_or_below[k].append(c.tokens * best.words <= best.tokens * c.words)
            print(f"| {lang} | {size // 1000}k | " + " | ".join(cells) + " |")
    print(
        "\nAt or below the best peer of its pairing (exact, not rounded): "
        + "; ".join(f"{LABELS.get(k, k)} {sum(v)} of {len(v)}" for k, v in at_or_below.items())
    )


SWEEP_SIZES = [8000, 16000, 32000, 64000, 128000]
SWEEP_KINDS = ["sgpe", "sgpe-prefix", "sgpe-words-prefix", "spm-bpe", "spm-bpe-x"]
#: The WWHO paper's token-to-word ratios at 128k, on its own test set (not FLORES).
PAPER_128K = {"si": 1.274, "hi": 1.181}


def sweep(langs: list[str], plot: str | None) -> None:
    """FLORES tokens per word against the vocabulary size, SGPE and SentencePiece BPE."""
    print(
        "\n## Vocabulary-size sweep: FLORES-200 devtest tokens per word (actual vocabulary sizes where smaller)\n"
    )
    print("| lang | tokenizer | " + " | ".join(f"{s // 1000}k" for s in SWEEP_SIZES) + " |")
    print("|---|---|" + "---:|" * len(SWEEP_SIZES))
    curves = {}
    for lang in langs:
        for kind in SWEEP_KINDS:
            cells = [measure_cell(lang, kind, size, "flores", False) for size in SWEEP_SIZES]
            curves[lang, kind] = [(c.vocab, c.per_word) for c in cells]
            shown = [
                f"{c.per_word:.3f}" + (f" ({c.vocab:,})" if c.vocab < 0.98 * s else "")
                for c, s in zip(cells, SWEEP_SIZES, strict=True)
            ]
            print(f"| {lang} | {LABELS[kind]} | " + " | ".join(shown) + " |", flush=True)
        if lang in PAPER_128K:
            print(f"| {lang} | WWHO paper (its own test set, not FLORES) | | | | | {PAPER_128K[lang]:.3f} |")
    if plot and not installed("matplotlib"):
        print("plot: skipped (matplotlib is not installed: pip install 'wwho[plot]')")
    elif plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(langs), figsize=(5 * len(langs), 3.6), squeeze=False)
        for ax, lang in zip(axes[0], langs, strict=True):
            for kind in SWEEP_KINDS:
                xs, ys = zip(*curves[lang, kind], strict=True)
                ax.plot(
                    xs, ys, marker="o", label=LABELS[kind], linestyle="-" if kind.startswith("sgpe") else "--"
                )
            if lang in PAPER_128K:
                ax.plot(
                    [128000],
                    [PAPER_128K[lang]],
                    marker="*",
                    markersize=12,
                    linestyle="none",
                    label="WWHO paper (own test set)",
                )
            ax.set_xscale("log", base=2)
            ax.set_xticks(SWEEP_SIZES, [f"{s // 1000}k" for s in SWEEP_SIZES])
            ax.set_title(f"{lang}: FLORES devtest")
            ax.set_xlabel("vocabulary size")
            ax.set_ylabel("tokens per word")
            ax.grid(alpha=0.3)
        axes[0][-1].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(plot, dpi=120)
        print(f"\nplot: {plot}")


def tradeoff_plot(langs: list[str], sizes: list[int], split: str, results: dict, path: str) -> None:
    """Tokens per word (relative to the language's best peer of the pairing) against the share of
    token boundaries inside a syllable, every language and tokenizer: one panel per pairing and size."""
    if not installed("matplotlib"):
        print("plot: skipped (matplotlib is not installed: pip install 'wwho[plot]')")
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairings = list(PEERS)
    fig, axes = plt.subplots(len(sizes), len(pairings), figsize=(6 * len(pairings), 4 * len(sizes)), squeeze=False)
    markers = "osD^vP*X"
    for row, size in enumerate(sizes):
        for col, pairing in enumerate(pairings):
            ax = axes[row][col]
            kinds = [k for k, (p, _) in SGPE_KINDS.items() if p == pairing] + PEERS[pairing]
            for i, kind in enumerate(kinds):
                xs, ys = [], []
                for lang in langs:
                    best = min(results[(lang, size, split, k)].per_word for k in PEERS[pairing])
                    c = results[(lang, size, split, kind)]
                    xs.append(100 * c.in_syllable / c.boundaries if c.boundaries else 0.0)
                    ys.append(c.per_word / best)
                ax.scatter(xs, ys, marker=markers[i % len(markers)], s=22, label=LABELS.get(kind, kind),
                           alpha=0.85)
            ax.axhline(1.0, color="grey", linewidth=0.8)
            ax.set_title(f"{pairing}, {size // 1000}k: {len(langs)} languages")
            ax.set_xlabel("token boundaries inside a syllable (% of all)")
            ax.set_ylabel("tokens per word / best peer")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\ntrade-off plot: {path}")


WORD_KINDS = ("script only", "script + other", "digits", "Latin letters", "other")


def account(lang: str, size: int) -> None:
    """Where word-bounded SGPE (prefix) and the best word-bounded peer spend their FLORES tokens.

    Each FLORES word is encoded alone, as it is inside a line (SGPE after a space, the peers with
    their dummy prefix). For the words of the script where the peer needs fewer tokens, how often
    the peer's tokens cut a syllable: what syllable integrity costs. Tokens spent on syllables
    the SGPE vocabulary does not know (falling back to characters or bytes) are counted apart.
    """
    import re
    from collections import Counter

    from wwho.eval_specs import load_spec
    from wwho.sgpe import SGPETokenizer
    from wwho.words import script_char_pattern

    (files, lines, tag), *_ = folds(lang)
    ours = SGPETokenizer.load(train(tag, lang, "sgpe-words-prefix", size, files, False)[0])
    peers = {k: measure_cell(lang, k, size, "flores", False).per_word for k in PEERS["word-bounded"]}
    best = min(peers, key=peers.get)
    peer = load_spec(train(tag, lang, best, size, files, False)[0])
    script_char = script_char_pattern((SCRIPTS[lang],))

    def kind(word: str) -> str:
        other = script_char.sub("", word)
        if len(other) < len(word):
            return "script + other" if other else "script only"
        return "digits" if word.isdigit() else "Latin letters" if re.fullmatch("[A-Za-z]+", word) else "other"

    words = [w for line in lines for w in line.split()]
    count, cost, unknown = Counter(), Counter(), 0
    peer_fewer = peer_fewer_cutting = 0
    for word in words:
        k = kind(word)
        count[k] += 1
        ids = ours.encode(word)  # the dummy space puts it after a space, as inside a line
        peer_ids, peer_ends = peer.encode(word)
        cost[k, "sgpe"] += len(ids)
        cost[k, "peer"] += len(peer_ids)
        syllables = ours.splitter.syllables(" " + word)
        for s in syllables:
            if s not in ours.vocab and s.lstrip(" ") not in ours.vocab:
                unknown += 1
        if k == "script only" and len(peer_ids) < len(ids) and peer_ends is not None:
            peer_fewer += 1
            starts, pos = set(), 0
            for s in word and ours.splitter.syllables(word):
                pos += len(s.encode("utf-8"))
                starts.add(pos)
            peer_fewer_cutting += any(e not in starts for e in peer_ends[:-1])
    total = len(words)
    # Whole lines against their words alone: what the line's whitespace costs beyond one space
    # between words (doubled spaces, spaces at either end), which SentencePiece removes.
    extra_runs = sum(
        1
        for line in lines
        for run in re.finditer(r"\s+", line)
        if run.group() != " " or run.start() == 0 or run.end() == len(line)
    )
    line_cost = {"sgpe": 0, "peer": 0}
    for line in lines:
        words_alone = line.split()
        line_cost["sgpe"] += len(ours.encode(line)) - sum(len(ours.encode(w)) for w in words_alone)
        line_cost["peer"] += len(peer.encode(line)[0]) - sum(len(peer.encode(w)[0]) for w in words_alone)
    print(
        f"\n### {lang}, {size:,}: FLORES tokens per word by kind of word, SGPE (no superwords, prefix) "
        f"against {LABELS[best]}\n"
    )
    print("| kind of word | words | SGPE | peer | extra SGPE tokens |")
    print("|---|---:|---:|---:|---:|")
    for k in WORD_KINDS:
        if count[k]:
            print(
                f"| {k} | {count[k]:,} | {cost[k, 'sgpe'] / count[k]:.3f} | {cost[k, 'peer'] / count[k]:.3f} | "
                f"{cost[k, 'sgpe'] - cost[k, 'peer']:+,} |"
            )
    sgpe_total = sum(cost[k, "sgpe"] for k in WORD_KINDS)
    peer_total = sum(cost[k, "peer"] for k in WORD_KINDS)
    print(
        f"| all | {total:,} | {sgpe_total / total:.3f} | {peer_total / total:.3f} | {sgpe_total - peer_total:+,} |"
    )
    print(
        f"\nSyllables the SGPE vocabulary does not know (left to characters): {unknown:,} in {total:,} words. "
        f"Words of the script where {LABELS[best]} needs fewer tokens: {peer_fewer:,}, of which "
        f"{peer_fewer_cutting:,} ({peer_fewer_cutting / max(peer_fewer, 1):.0%}) have a token boundary "
        "inside a syllable."
    )
    print(
        f"Whitespace beyond one space between words (doubled spaces, spaces at a line's ends): {extra_runs:,} "
        f"runs; whole lines cost SGPE {line_cost['sgpe']:+,} tokens against their words alone, "
        f"{LABELS[best]} {line_cost['peer']:+,}"
        + (" (its normalization removes those runs)." if best.startswith("spm") else ".")
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--langs", nargs="*", default=list(SCRIPTS))
    ap.add_argument("--sizes", nargs="*", type=int, default=[8000, 32000])
    ap.add_argument(
        "--sgpe",
        nargs="*",
        default=[],
        metavar="NAME=JSON[@PAIRING]",
        help="extra SGPE variants, e.g. 'sgpe-x={\"prefix_space\": true}@across spaces'",
    )
    ap.add_argument(
        "--split",
        choices=tuple(HELD_OUT),
        default="flores",
        help="held-out text: FLORES devtest; the same with runs of whitespace collapsed to one space (the "
        "text SentencePiece's normalization encodes); or another domain than the training text",
    )
    ap.add_argument("--sweep", action="store_true", help="vocabulary sizes 8k-128k (default langs: si hi)")
    ap.add_argument("--plot", help="with --sweep: write the plot to this PNG")
    ap.add_argument("--account", action="store_true", help="where the tokens go (word-bounded, per language)")
    ap.add_argument("--tradeoff", metavar="PNG", help="also plot tokens per word against cuts inside syllables")
    ap.add_argument("--fresh", action="store_true", help="retrain the SGPE models")
    args = ap.parse_args()
    unknown = set(args.langs) - set(SCRIPTS)
    if unknown:
        sys.exit(f"unknown language(s): {', '.join(sorted(unknown))}; known: {', '.join(SCRIPTS)}")
    for spec in args.sgpe:
        name, _, rest = spec.partition("=")
        options, _, pairing = rest.partition("@")
        if pairing and pairing not in PEERS:
            ap.error(f"--sgpe {spec}: unknown pairing {pairing!r}; the pairings: {', '.join(PEERS)}")
        try:
            SGPE_KINDS[name] = (pairing or "word-bounded", json.loads(options))
        except json.JSONDecodeError as exc:
            ap.error(f"--sgpe {spec}: the options after NAME= are not JSON ({exc})")
        if not isinstance(SGPE_KINDS[name][1], dict):
            ap.error(f"--sgpe {spec}: the options after NAME= must be a JSON object of SGPE options")
        LABELS[name] = name
    require(CORPORA)
    need("sentencepiece", "spm")  # (the peers' columns)
    print(f"machine: {machine()}")
    langs = [lang for lang in args.langs if args.split != "domain" or lang in DOMAIN]
    if args.sweep:
        sweep(args.langs if args.langs != list(SCRIPTS) else ["si", "hi"], args.plot)
        return
    if args.account:
        for size in args.sizes:
            for lang in langs:
                account(lang, size)
        return
    results = run(langs, args.sizes, args.split, args.fresh)
    if args.tradeoff:
        tradeoff_plot(langs, args.sizes, args.split, results, args.tradeoff)


if __name__ == "__main__":
    main()
