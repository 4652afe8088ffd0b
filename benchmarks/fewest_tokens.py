"""Would a fewest-tokens segmentation spend fewer tokens than SGPE's merges? An experiment of
docs/compression.md ("Where the extra tokens come from"), not a wwho encoder.

SGPE applies its merges in rank order, as BPE does. Over the same vocabulary, a segmentation that
uses the fewest tokens (a shortest path, as a Unigram model with equal scores would find) can only
spend as many or fewer. How many fewer says whether the gap to the peers is in the encoding or in
the vocabulary. For each FLORES devtest line, SGPE's tokens are grouped into words (a new group at
a token that starts with whitespace, or is whitespace); within a word the path may cut only where a
syllable ends (wwho's syllabifier) or where SGPE's own tokens meet (inside syllables the vocabulary
lacks), so it keeps every syllable the vocabulary knows whole; its steps are vocabulary strings.
Words holding a byte-fallback token keep SGPE's count.

    python benchmarks/fewest_tokens.py [--langs si hi ...] [--size 8000] [--kind sgpe-words-prefix]

Reads the models ``bench_languages.py`` trained (``.cache/bench_languages/<lang>-<kind>-<size>``);
run that first. Prints SGPE's tokens per FLORES word, the fewest-tokens path's, and the difference.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import require  # noqa: E402
from bench_languages import CACHE, CORPORA, FLORES, SCRIPTS  # noqa: E402


def words(tokens: list[str]) -> list[list[str]]:
    """SGPE's tokens of a line, grouped: a group starts at a token that begins with whitespace."""
    groups: list[list[str]] = []
    for t in tokens:
        if not groups or t[:1].isspace() or not t.strip():
            groups.append([])
        groups[-1].append(t)
    return groups


def fewest(text: str, cuts: set[int], vocab: set[str]) -> int:
    """The fewest vocabulary strings that cover ``text`` end to end, cut only at ``cuts``."""
    points = sorted(cuts | {0, len(text)})
    cost = [0] + [len(text) + 1] * (len(points) - 1)
    for b in range(1, len(points)):
        for a in range(b):
            if cost[a] + 1 < cost[b] and text[points[a]:points[b]] in vocab:
                cost[b] = cost[a] + 1
    return cost[-1]


def measure(lang: str, model: Path) -> tuple[float, float, int]:
    """(SGPE's tokens per word, the fewest path's, words) on the language's FLORES devtest."""
    import wwho

    tok = wwho.SGPETokenizer.load(model)
    vocab = set(tok.get_vocab())
    script = SCRIPTS[lang]
    lines = (CORPORA / lang / FLORES).read_text(encoding="utf-8").splitlines()
    n_words = sum(len(line.split()) for line in lines)
    ours = best = 0
    for line in lines:
        tokens = [tok.id_to_token(i) for i in tok.encode(line)]
        ours += len(tokens)
        for group in words(tokens):
            text = "".join(group)
            if any(t.startswith("<0x") for t in group):
                best += len(group)
                continue
            cuts, at = set(), 0
            for t in group:
                at += len(t)
                cuts.add(at)
            at = 0
            with warnings.catch_warnings():  # a word of digits or Latin letters is no Indic text
                warnings.simplefilter("ignore")
                syllables = wwho.syllabify(text, script, leading_space=True)
            for s in syllables:
                at += len(s)
                cuts.add(at)
            path = fewest(text, cuts, vocab)
            assert path <= len(group), (text, group)  # SGPE's own tokens are one such path
            best += path
    return ours / n_words, best / n_words, n_words


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # choices: a mistyped code would otherwise read as FLORES missing from the shared data (skipped)
    parser.add_argument("--langs", nargs="+", default=sorted(SCRIPTS), choices=sorted(SCRIPTS),
                        metavar="LANG", help=f"of: {' '.join(sorted(SCRIPTS))} (default: all)")
    parser.add_argument("--size", type=int, default=8000)
    parser.add_argument("--kind", default="sgpe-words-prefix",
                        help="the bench_languages model (default: word-bounded SGPE with the dummy prefix)")
    args = parser.parse_args(argv)
    require(*(CORPORA / lang / FLORES for lang in args.langs if lang != "or"))  # the held-out text measured
    print("lang | model | SGPE tokens/word | fewest-tokens path | difference")
    print("---|---|---:|---:|---:")
    for lang in args.langs:
        model = CACHE / f"{lang}-{args.kind}-{args.size}"
        if lang == "or":
            print(f"{lang} | - | (cross-fitted on FLORES halves in bench_languages.py: not measured here) | | ")
            continue
        if not (model / "vocab.json").exists():
            print(f"{lang} | {model.name} | (not trained: run bench_languages.py first) | | ")
            continue
        ours, best, _ = measure(lang, model)
        print(f"{lang} | {model.name} | {ours:.4f} | {best:.4f} | {(best - ours) / ours * 100:+.2f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
