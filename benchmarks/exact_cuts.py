"""Where could a new Indic word be cut because no o200k_base token spans the boundary? An
experiment of docs/benchmarks.md ("Cold Indic words cut where no token spans"), not a wwho encoder.

A merge makes a token, so a boundary of a word that no token of the vocabulary spans (as a
substring of the word) is never crossed by a merge: the word's ids are its sides' ids, and sides
that repeat across words (a stem, an ending) could be merged once. For each FLORES devtest language,
over the distinct pieces of o200k's regex that are no token, longer than 16 bytes and made of
three-byte characters (after at most one byte below 0x80), this counts:

- the boundaries between characters that no token spans (every substring of the word looked up);
- those a test with one character of context finds: no token within the two characters, or
  holding both and part or all of the character before or after them (what the core would look up
  in small tables), checked never to cut where a token spans;
- the sides the word falls into at the found cuts, how many are distinct, and the merges of BPE
  (tiktoken's rule, counted in Python) over the distinct words against over the distinct sides.

    python benchmarks/exact_cuts.py [--langs ml ta hi ...]

Reads the shared o200k_base file and FLORES (skipped with a message where absent). Minutes per
language: the merges are counted by a plain Python loop.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import DATA, o200k, require  # noqa: E402
from bench_languages import SCRIPTS  # noqa: E402  (the Indic languages of the shared data)

LANGS = ["hi", "mr", "ne", "sa", "bn", "pa", "gu", "or", "ta", "te", "kn", "ml", "si"]


def shape(t: bytes):
    """A token as a word of three-byte characters could hold it: (the byte below 0x80 it starts
    with, or None; the one or two continuation bytes of a character begun before it; its whole
    characters; the one or two bytes of a character it ends inside), else None."""
    ascii, rest = (t[0], t[1:]) if t[0] < 0x80 else (None, t)
    h = 0
    while h < len(rest) and rest[h] & 0xC0 == 0x80:
        h += 1
    if (ascii is not None and h) or h > 2:
        return None
    chars, at = [], h
    while at < len(rest):
        c = rest[at:at + 3]
        if c[0] & 0xF0 != 0xE0 or any(b & 0xC0 != 0x80 for b in c[1:]):
            return None
        if len(c) < 3:
            return ascii, rest[:h], chars, c
        chars.append(c)
        at += 3
    return ascii, rest[:h], chars, b""


def tables(ranks: dict[bytes, int]):
    """Exact sets of what a token holds around a boundary between two characters."""
    within, pairs, around = set(), set(), set()
    for t in ranks:
        s = shape(t)
        if s is None:
            continue
        ascii, head, chars, tail = s
        if bool(head) + len(chars) + bool(tail) < 2:
            continue
        if head:
            nxt = chars[0] if chars else tail
            within.add(("head", head, nxt))
            if len(chars) >= 2:
                around.add(("head", head, chars[0], chars[1]))
            elif chars and tail:
                around.add(("head", head, chars[0], tail))
        if chars and tail:
            within.add(("end", chars[-1], tail))
            if len(chars) >= 2:
                around.add(("tail", chars[-2], chars[-1], tail))
        for x, y in zip(chars, chars[1:]):
            pairs.add((x, y))
        if ascii is None and not head and not tail and len(chars) == 2:
            within.add(("two", chars[0], chars[1]))
        for w, x, y in zip(chars, chars[1:], chars[2:]):
            around.add(("triple", w, x, y))
        if ascii is not None and len(chars) >= 2:
            around.add(("ascii", bytes([ascii]), chars[0], chars[1]))
    return within, pairs, around


def found(word: bytes, skip: int, i: int, within, pairs, around) -> bool:
    """The one-character test at byte `i` (a boundary between characters) of `word`."""
    x, y = word[i - 3:i], word[i:i + 3]
    for h in (x[2:], x[1:]):
        if any(("head", h, q) in within for q in (y[:1], y[:2], y)):
            return False
    if ("end", x, y[:1]) in within or ("end", x, y[:2]) in within or ("two", x, y) in within:
        return False
    if (x, y) not in pairs:
        return True
    if i - 6 >= skip:
        w = word[i - 6:i - 3]
        if ("triple", w, x, y) in around or any(("head", h, x, y) in around for h in (w[2:], w[1:])):
            return False
    elif skip and ("ascii", word[:1], x, y) in around:
        return False
    if i + 6 <= len(word):
        z = word[i + 3:i + 6]
        if ("triple", x, y, z) in around or ("tail", x, y, z[:1]) in around or ("tail", x, y, z[:2]) in around:
            return False
    return True


def merges(piece: bytes, ranks: dict[bytes, int]) -> int:
    """How many merges tiktoken's rule makes on `piece` from its bytes."""
    parts, n = [bytes([b]) for b in piece], 0
    while True:
        best = min(((ranks[a + b], i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in ranks),
                   default=None)
        if best is None:
            return n
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
        n += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # choices: a mistyped code would otherwise read as FLORES missing from the shared data (skipped)
    ap.add_argument("--langs", nargs="+", default=LANGS, choices=list(SCRIPTS), metavar="LANG",
                    help=f"FLORES languages, of: {' '.join(SCRIPTS)} (default: all)")
    args = ap.parse_args()
    files = {lang: DATA / "corpora" / lang / "flores200-devtest.txt" for lang in args.langs}
    require(*files.values())
    import regex

    enc = o200k()
    ranks, pattern = enc._mergeable_ranks, regex.compile(enc._pat_str)
    within, pairs, around = tables(ranks)
    longest = max(map(len, ranks))
    print("| FLORES | new words | boundaries | no token spans | found | wrongly found | sides (distinct)"
          " | merges: distinct words | distinct sides |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for lang, path in files.items():
        words = set()
        for m in pattern.finditer(path.read_text(encoding="utf-8")):
            p = m.group().encode()
            skip = int(p[0] < 0x80)
            body = p[skip:]
            if p in ranks or len(p) <= 16 or len(body) % 3 or any(body[k] & 0xF0 != 0xE0 for k in range(0, len(body), 3)):
                continue
            words.add(p)
        bounds = exact = hits = wrong = 0
        sides: Counter[bytes] = Counter()
        for p in words:
            skip, n = int(p[0] < 0x80), len(p)
            spanned = [False] * (n + 1)
            for a in range(n):
                for b in range(a + 2, min(n, a + longest) + 1):
                    if p[a:b] in ranks:
                        for k in range(a + 1, b):
                            spanned[k] = True
            cuts = []
            for i in range(skip + 3, n, 3):
                bounds += 1
                exact += not spanned[i]
                if found(p, skip, i, within, pairs, around):
                    hits += 1
                    wrong += spanned[i]
                    cuts.append(i)
            for a, b in zip([0, *cuts], [*cuts, n]):
                sides[p[a:b]] += 1
        mw, ms = sum(merges(w, ranks) for w in words), sum(merges(s, ranks) for s in sides)
        print(f"| {lang} | {len(words):,} | {bounds:,} | {exact:,} | {hits:,} | {wrong} | "
              f"{sum(sides.values()):,} ({len(sides):,}) | {mw:,} | {ms:,} ({ms / max(mw, 1):.2f}) |", flush=True)


if __name__ == "__main__":
    main()
