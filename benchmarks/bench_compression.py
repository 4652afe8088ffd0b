"""SGPE compression against peers trained on the same text, and where every id and token goes.

    python benchmarks/bench_compression.py [--langs si hi] [--sizes 8000 32000 64000] [--fresh]

Training text: the 84.6 MB of Sinhala news (si/news-*.txt) and the 2.6 MB of Hindi that
bench_train.py uses (_measure.HI_TRAIN). Held-out text: FLORES-200 devtest (the headline
figure: tokens per whitespace word), plus NTREX-128 (and, for Sinhala, the FLoRes v1
Wikipedia sentences) for "ids never used on held-out text". Every tokenizer is trained on
the same text in its own process (time and peak RSS measured; the machine is shared, so
times are indicative) and cached under .cache/bench_compression/ (--fresh retrains).

Tokenizers: SGPE with its classic options (words scope, prune_freq 2, min_freq 2, no
superwords), SGPE's steps to the new default (pieces scope; automatic pruning and
min_freq 1; superword merges = the default), the default with prefix_space, and the peers:
HF tokenizers BPE with its Whitespace pre-tokenizer (drops spaces, cannot decode) and with
Metaspace (SentencePiece-style dummy prefix, lossless), SentencePiece BPE and Unigram
(byte fallback, character coverage 1.0). At the middle size, like-for-like peers without a
dummy prefix are trained too, and an account of ids and tokens is printed.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections import Counter
from pathlib import Path

from _measure import CORPORA, HI_TRAIN, ROOT, machine, measure, need, require

CACHE = ROOT / ".cache" / "bench_compression"
SI_TRAIN = sorted((CORPORA / "si").glob("news-*.txt"))
LANGS = {
    "si": (
        SI_TRAIN,
        "sinhala",
        ["flores200-devtest.txt", "ntrex128-newstest2019.txt", "wikipedia-floresv1.txt"],
    ),
    "hi": (HI_TRAIN, "devanagari", ["flores200-devtest.txt", "ntrex128-newstest2019.txt"]),
}

SGPE = {  # name -> train_sgpe options
    "sgpe-classic": dict(merge_scope="words", prune_freq=2, min_freq=2, superword_share=0, bare_syllables=False),
    "sgpe-pieces": dict(prune_freq=2, min_freq=2, superword_share=0),
    "sgpe-pieces-auto": dict(superword_share=0),
    "sgpe": {},
    "sgpe-prefix": dict(prefix_space=True),
}
LABELS = {
    "sgpe-classic": "SGPE classic (words, prune 2, min_freq 2)",
    "sgpe-pieces": "SGPE + pieces scope",
    "sgpe-pieces-auto": "SGPE + pieces + auto prune, min_freq 1",
    "sgpe": "SGPE default (+ superwords 0.15)",
    "sgpe-prefix": "SGPE default + prefix_space",
    "hf-ws": "HF BPE, Whitespace (no spaces)",
    "hf-meta": "HF BPE, Metaspace (dummy prefix)",
    "hf-meta-never": "HF BPE, Metaspace, no dummy prefix",
    "spm-bpe": "SentencePiece BPE",
    "spm-bpe-noprefix": "SentencePiece BPE, no dummy prefix",
    "spm-uni": "SentencePiece Unigram",
}
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

SGPE_JOB = """
from wwho.sgpe import SGPETokenizer
tok = SGPETokenizer.train({files!r}, vocab_size={vocab}, script={script!r}, progress=False, **{options!r})
tok.save({out!r})
"""
HF_JOB = """
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
tok = Tokenizer(models.BPE(unk_token="[UNK]"))
if {kind!r} == "hf-ws":
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
else:
    scheme = "never" if {kind!r} == "hf-meta-never" else "always"
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=scheme)
    tok.decoder = decoders.Metaspace(prepend_scheme=scheme)
trainer = trainers.BpeTrainer(vocab_size={vocab}, special_tokens={specials!r}, show_progress=False)
tok.train({files!r}, trainer)
tok.save({out!r})
"""
SPM_JOB = """
import sentencepiece as spm
spm.SentencePieceTrainer.train(input={files!r}, model_prefix={out!r}, vocab_size={vocab},
    model_type={model!r}, character_coverage=1.0, byte_fallback=True, input_sentence_size=0, num_threads=2,
    add_dummy_prefix={prefix!r}, hard_vocab_limit=False, minloglevel=2, max_sentence_length=100000)
"""


_TRAINED: set[str] = set()


def train(lang: str, kind: str, vocab: int, fresh: bool) -> tuple[str, dict]:
    """Train (or reuse) one tokenizer; returns its wwho.evaluate SPEC and the training record."""
    files, script, _ = LANGS[lang]
    base = CACHE / f"{lang}-{kind}-{vocab}"
    record_path = base.with_name(base.name + ".train.json")
    if kind.startswith("sgpe"):
        spec, out, done = str(base), str(base), (base / "vocab.json").exists()
        job = SGPE_JOB.format(
            files=list(map(str, files)), vocab=vocab, script=script, options=SGPE[kind], out=out
        )
    elif kind.startswith("hf"):
        out = str(base) + ".json"
        spec, done = f"hf:{out}", Path(out).exists()
        job = HF_JOB.format(kind=kind, files=list(map(str, files)), vocab=vocab, specials=SPECIALS, out=out)
    else:
        out = str(base)
        spec, done = f"spm:{out}.model", Path(out + ".model").exists()
        job = SPM_JOB.format(
            files=list(map(str, files)),
            out=out,
            vocab=vocab,
            prefix=not kind.endswith("noprefix"),
            model="unigram" if kind == "spm-uni" else "bpe",
        )
    if done and (not fresh or base.name in _TRAINED) and record_path.exists():
        return spec, json.loads(record_path.read_text())
    _TRAINED.add(base.name)  # --fresh retrains each tokenizer once per run, not at every use
    if kind.startswith("sgpe") and base.exists():
        shutil.rmtree(base)
    seconds, rss, _ = measure(job)
    record = {"seconds": round(seconds, 1), "peak_mb": round(rss)}
    record_path.write_text(json.dumps(record))
    return spec, record


def lines_of(lang: str, name: str) -> list[str]:
    from wwho.evaluate import read_lines

    return read_lines(CORPORA / lang / name)


def evaluate(spec: str, lines: list[str]):
    from wwho.eval_specs import load_spec
    from wwho.evaluate import evaluate as run

    return run(load_spec(spec), lines)


def compression_table(langs, sizes, fresh) -> dict:
    results = {}
    for lang in langs:
        flores = lines_of(lang, "flores200-devtest.txt")
        words = sum(len(line.split()) for line in flores)
        print(
            f"\n## {lang}: FLORES-200 devtest, {len(flores):,} lines, {words:,} words; training text "
            f"{sum(p.stat().st_size for p in LANGS[lang][0]) / 1e6:.1f} MB\n"
        )
        print(
            f"{'tokenizer':44} {'vocab':>7}"
            + "".join(f" {f'tok/word @{s // 1000}k':>13}" for s in sizes)
            + f" {'lossless':>9} {'syllable cuts':>14} {'in known':>9} {'train s':>8} {'peak MB':>8}"
        )
        middle = sizes[len(sizes) // 2]
        kinds = [*SGPE, "hf-ws", "hf-meta", "spm-bpe", "spm-uni"]
        for kind in kinds:
            row, detail = [], None
            for size in sizes:
                spec, record = train(lang, kind, size, fresh)
                m = evaluate(spec, flores)
                results[(lang, kind, size)] = (spec, m, record)
                row.append(f"{m.fertility:13.3f}")
                if size == middle:
                    detail = (spec, m, record)
            spec, m, record = detail
            cuts = f"{m.boundaries_in_syllable:,}" + ("*" if m.unmeasured_lines else "")
            known = f"{m.known_syllable_cuts:,}" if kind.startswith("sgpe") else "-"
            print(
                f"{LABELS[kind]:44} {m.vocab_size:7,}"
                + " ".join([""] + row)
                + f" {m.lossless_rate:9.1%} {cuts:>14} {known:>9}"
                + f" {record['seconds']:8.1f} {record['peak_mb']:8,}"
            )
        print(
            f"(vocab, lossless lines, cuts, training time and memory: at {middle:,}. Cuts: token boundaries "
            "inside a schema syllable of the Indic runs; 'in known': inside a syllable that is in the SGPE "
            "vocabulary. Training measured on a shared 2-core machine: indicative. * = lines SentencePiece "
            "normalizes are not measured)"
        )
    return results


def like_for_like(langs, size, fresh) -> None:
    print(f"\n## Dummy prefix or not, like for like, {size:,} tokens (FLORES devtest tokens per word)\n")
    print(f"{'':10} {'SGPE':>8} {'HF Metaspace':>13} {'SentencePiece BPE':>18}")
    for lang in langs:
        flores = lines_of(lang, "flores200-devtest.txt")
        cell = {
            k: evaluate(train(lang, k, size, fresh)[0], flores).fertility
            for k in ("sgpe", "sgpe-prefix", "hf-meta-never", "hf-meta", "spm-bpe-noprefix", "spm-bpe")
        }
        print(
            f"{lang} plain   {cell['sgpe']:8.3f} {cell['hf-meta-never']:13.3f} "
            f"{cell['spm-bpe-noprefix']:18.3f}"
        )
        print(f"{lang} prefix  {cell['sgpe-prefix']:8.3f} {cell['hf-meta']:13.3f} {cell['spm-bpe']:18.3f}")


def second_held_out(langs, size, fresh) -> None:
    """The defaults were chosen looking at FLORES devtest: check the ranking on another held-out set."""
    print(f"\n## Another held-out set: NTREX-128 (1,997 sentences), {size:,} tokens, tokens per word\n")
    kinds = ["sgpe-classic", "sgpe-pieces-auto", "sgpe", "sgpe-prefix", "hf-ws", "hf-meta", "spm-bpe"]
    kinds.append("spm-uni")
    print(f"{'tokenizer':44}" + "".join(f" {lang:>7}" for lang in langs))
    ntrex = {lang: lines_of(lang, "ntrex128-newstest2019.txt") for lang in langs}
    for kind in kinds:
        cells = [evaluate(train(lang, kind, size, fresh)[0], ntrex[lang]).fertility for lang in langs]
        print(f"{LABELS[kind]:44}" + "".join(f" {c:7.3f}" for c in cells))


def sgpe_account(lang: str, kind: str, size: int) -> None:
    """Where the ids of an SGPE vocabulary go, which are used, and what its FLORES tokens are."""
    from wwho.corpus import iter_documents
    from wwho.sgpe import SGPETokenizer
    from wwho.sgpe.vocabfile import BYTE_TOKENS
    from wwho.words import is_boundary_token, script_char_pattern

    tok = SGPETokenizer.load(CACHE / f"{lang}-{kind}-{size}")
    scripts = tok.splitter.scripts
    learned = {a + b for a, b in tok.merges}
    superwords = {a + b for a, b in tok.superword_merges}
    byte_tokens = set(BYTE_TOKENS)

    def category(t: str) -> str:
        if t in tok.special_tokens:
            return "special"
        if t in byte_tokens:
            return "byte"
        if t in superwords:
            return "superword merge"
        if is_boundary_token(t, scripts):
            return "boundary merge" if t in learned else "boundary symbol"
        if t in learned:
            return "word merge"
        return "syllable" if tok.splitter.syllables(t) == [t] else "building piece"

    cats = {i: category(t) for i, t in enumerate(tok.tokens)}
    held = [line for name in LANGS[lang][2] for line in lines_of(lang, name)]
    used_held = {i for line in held for i in tok.encode(line)}
    used_train: set[int] = set()
    for doc in iter_documents(LANGS[lang][0]):
        used_train.update(tok.encode(doc))
    alloc = Counter(cats.values())
    unused_held = Counter(cats[i] for i in cats if i not in used_held)
    unused_train = Counter(cats[i] for i in cats if i not in used_train)
    print(f"\n### {LABELS[kind]}, {lang}, {size:,}: where the ids go\n")
    print(f"{'kind of id':18} {'ids':>7} {'never used, held-out':>21} {'never used, training text':>26}")
    for c in (
        "special",
        "byte",
        "boundary symbol",
        "boundary merge",
        "syllable",
        "building piece",
        "word merge",
        "superword merge",
    ):
        if alloc[c]:
            print(f"{c:18} {alloc[c]:7,} {unused_held[c]:21,} {unused_train[c]:26,}")
    print(f"{'total':18} {len(cats):7,} {sum(unused_held.values()):21,} {sum(unused_train.values()):26,}")
    spaced = sum(1 for i, c in cats.items() if c == "syllable" and tok.tokens[i].startswith(" "))
    print(
        f"held-out: {len(held):,} lines; syllable ids with a leading space: {spaced:,} of "
        f"{alloc['syllable']:,}; "
        f"prune_freq {tok.file.prune_freq}, min_freq {tok.file.min_freq}"
    )
    flores = lines_of(lang, "flores200-devtest.txt")
    words = sum(len(line.split()) for line in flores)
    script_char = script_char_pattern(scripts)
    kinds: Counter[str] = Counter()
    for line in flores:
        for i in tok.encode(line):
            t = tok.tokens[i]
            other = script_char.sub("", t).replace(" ", "")  # what is not script nor space
            if cats[i] == "byte":
                kinds["byte fallback"] += 1
            elif " " in t[1:]:
                kinds["superword (several words)"] += 1
            elif is_boundary_token(t, scripts):
                kinds[
                    "boundary: "
                    + (
                        "whitespace"
                        if not other
                        else "digits"
                        if other.isdigit()
                        else "letters"
                        if other.isalpha()
                        else "punctuation/mixed"
                    )
                ] += 1
            elif other:
                kinds["syllables + punctuation/digits"] += 1
            else:
                kinds["one syllable" if len(tok.splitter.syllables(t)) == 1 else "several syllables"] += 1
    total = sum(kinds.values())
    print(f"FLORES tokens by kind ({total:,} tokens, {total / words:.3f} per word):")
    for k, n in kinds.most_common():
        print(f"  {k:28} {n:7,} {n / total:6.1%} {n / words:7.3f} per word")
    if not tok.prefix_space:
        spaced = sum(len(tok.encode(" " + line)) for line in flores)
        print(
            f"a space put before every FLORES line (a dummy prefix by hand): {total - spaced:,} fewer tokens "
            f"({(total - spaced) / total:.1%}): the cost of the unspaced syllables of line-initial words"
        )


WORD_KINDS = ("script only", "script + other", "digits", "Latin letters", "other, no script")


def word_kinds(lang: str, size: int) -> None:
    """Tokens per FLORES word by kind of word, each word encoded alone after a space (so SGPE's
    superwords do not count here: classic SGPE against the peers, to see where its gap was)."""
    import re

    from wwho.eval_specs import load_spec
    from wwho.words import script_char_pattern

    scripts = ("sinhala",) if lang == "si" else ("devanagari",)
    script_char = script_char_pattern(scripts)
    words = [w for line in lines_of(lang, "flores200-devtest.txt") for w in line.split()]

    def kind(w: str) -> str:
        other = script_char.sub("", w)
        if len(other) < len(w):
            return "script + other" if other else "script only"
        return (
            "digits"
            if w.isdigit()
            else "Latin letters"
            if re.fullmatch("[A-Za-z]+", w)
            else "other, no script"
        )

    kinds = Counter(map(kind, words))
    print(
        f"\n### {lang}, {size:,}: tokens per FLORES word by kind of word (each word alone, after a space)\n"
    )
    print(f"{'tokenizer':44}" + "".join(f" {f'{k} ({kinds[k]:,})':>22}" for k in WORD_KINDS))
    for name in ("sgpe-classic", "hf-ws", "hf-meta", "spm-bpe"):
        tok = load_spec(train(lang, name, size, False)[0])
        native = name.startswith("sgpe")  # the peers add their own prefix (or drop spaces)
        cost = Counter()
        for w in words:
            cost[kind(w)] += len(tok.encode(" " + w if native else w)[0])
        print(f"{LABELS[name]:44}" + "".join(f" {cost[k] / kinds[k]:22.3f}" for k in WORD_KINDS))


def share_sweep(langs, size: int, fresh: bool) -> None:
    print(f"\n### superword share, {size:,} tokens: FLORES tokens per word (0.15 is the default)\n")
    for share in (0.0, 0.1, 0.15, 0.2, 0.3):
        kind = {0.0: "sgpe-pieces-auto", 0.15: "sgpe"}.get(share, f"sgpe-share{share}")  # reuse those two
        SGPE.setdefault(kind, {"superword_share": share})
        cells = [
            evaluate(train(lang, kind, size, fresh)[0], lines_of(lang, "flores200-devtest.txt")).fertility
            for lang in langs
        ]
        print(f"  {share:4}" + "".join(f"  {lang} {c:.3f}" for lang, c in zip(langs, cells, strict=True)))


def peer_account(lang: str, kind: str, size: int) -> None:
    spec = train(lang, kind, size, False)[0]
    held = [line for name in LANGS[lang][2] for line in lines_of(lang, name)]
    m = evaluate(spec, held)
    print(
        f"{LABELS[kind]:44} {m.vocab_size:7,} ids, {m.vocab_size - m.vocab_used:7,} never used on "
        "held-out text"
    )


def ablation(lang: str, size: int, fresh: bool) -> None:
    """prune_freq and min_freq, one at a time, on the default (superwords off, to see them alone)."""
    flores = lines_of(lang, "flores200-devtest.txt")
    print(
        f"\n### {lang}, {size:,}: pruning and min_freq (pieces scope, no superwords), "
        "FLORES tokens per word\n"
    )
    for label, options in (
        ("prune_freq 1", dict(prune_freq=1)),
        ("prune_freq 2", dict(prune_freq=2)),
        ("prune_freq auto", {}),
        ("prune_freq 10", dict(prune_freq=10)),
        ("prune_freq 100", dict(prune_freq=100)),
        ("min_freq 2", dict(min_freq=2)),
    ):
        kind = "sgpe-abl-" + label.replace(" ", "")
        SGPE[kind] = dict(superword_share=0, **options)
        spec, _ = train(lang, kind, size, fresh)
        m = evaluate(spec, flores)
        print(
            f"  {label:16} {m.fertility:.3f}  ({m.boundaries_in_syllable:,} syllable cuts, "
            f"{m.known_syllable_cuts} in syllables of the vocabulary)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--langs", nargs="*", default=["si", "hi"])
    ap.add_argument("--sizes", nargs="*", type=int, default=[8000, 32000, 64000])
    ap.add_argument(
        "--fresh", action="store_true", help="retrain everything (else reuse .cache/bench_compression)"
    )
    ap.add_argument(
        "--sweep", action="store_true", help="also try superword shares 0 to 0.3 (4 more trainings)"
    )
    args = ap.parse_args()
    # the training text (SI_TRAIN: that pattern's files) and the held-out files
    training = {"si": [CORPORA / "si" / "news-*.txt"]}
    require(*(p for lang in args.langs for p in training.get(lang, LANGS[lang][0])),
            *(CORPORA / lang / name for lang in args.langs for name in LANGS[lang][2]))
    need("sentencepiece", "spm")
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}")
    compression_table(args.langs, args.sizes, args.fresh)
    middle = args.sizes[len(args.sizes) // 2]
    like_for_like(args.langs, middle, args.fresh)
    second_held_out(args.langs, middle, args.fresh)
    print(f"\n## Where the ids and tokens go, {middle:,} tokens")
    for lang in args.langs:
        for kind in ("sgpe-classic", "sgpe"):
            sgpe_account(lang, kind, middle)
        print(
            f"\n### peers, {lang}, {middle:,}: ids never used on the held-out text "
            f"({', '.join(LANGS[lang][2])})\n"
        )
        for kind in ("sgpe-classic", "sgpe", "hf-ws", "hf-meta", "spm-bpe", "spm-uni"):
            peer_account(lang, kind, middle)
        word_kinds(lang, middle)
        ablation(lang, middle, args.fresh)
    if args.sweep:
        share_sweep(args.langs, middle, args.fresh)


if __name__ == "__main__":
    main()
