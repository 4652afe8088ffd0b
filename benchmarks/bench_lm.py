"""Which tokenizer's tokens are easiest to predict: the same language model on each, bits per character.

    python benchmarks/bench_lm.py [--langs si hi] [--size 8000] [--kinds sgpe spm-bpe ...]
                                  [--sgpe NAME=JSON ...] [--analyse] [--order 4] [--normalize]
                                  [--gpu] [--export DIR] [--fresh]
    python benchmarks/bench_lm.py --order 4 --analyse      # docs/language-model.md (a few minutes)
    python benchmarks/bench_lm.py --order 4 --normalize    # its "normalized" columns
    python benchmarks/bench_lm.py --selftest

For each language, every tokenizer of ``bench_languages.py`` (its cache, .cache/bench_languages/;
a missing one is trained there with the same recipe) encodes the same training text (that script's
``training_files(lang)``: for Sinhala the BBC news and the small files, 14.8 MB; for Hindi every
shared Hindi file but FLORES, 3.2 MB) and FLORES-200 devtest (held out). Each line is one document,
tokenized on its own. The same language model is trained on each stream and scored on FLORES:

    bits per character = sum over FLORES lines of -log2 p(tokens of the line, then end of line)
                         / (characters of the original lines + one newline per line)

The end of each line is predicted as a token, so the newline counts as one character; the
characters are those of the original lines (SentencePiece's NFKC does not change them), the
same for every tokenizer. A line's first token is predicted from a begin-of-line context.

* Always (CPU, numpy): interpolated modified Kneser-Ney n-gram models over token ids, orders
  1 to ``--order`` (unigram: discounted counts interpolated with the uniform distribution).
  The discounts start from Chen and Goodman's estimates and are scaled per order to minimise
  the loss on a dev slice of the training text (every 50th line, left out of the counts), never
  on FLORES.
* ``--gpu`` (PyTorch and CUDA): ``gpt.py``'s small GPT (6 layers, 384 wide, context 256), the same
  seed, tokens per step and steps for every tokenizer, the weights of the evaluation with the least
  loss on the dev slice kept; torch is imported only there. ``--export DIR`` writes each
  tokenizer's streams for ``gpt.py`` to train on another machine, several at once
  (``device_checks.sh``).

The SGPE variants of :data:`VARIANTS` (and any ``--sgpe NAME=JSON``, options of
``SGPETokenizer.train``, plus ``"danda_as_punct": true``, which maps the dandas to punctuation
in the training text and every line before encoding) are trained here, into .cache/bench_lm/, and
so is ``syl-uni``, SentencePiece Unigram over syllables (``syllable_unigram.py``, an experiment). A kind ending in ``+sp`` is that tokenizer
fed each line with a space before it (the dummy prefix at encoding time only). ``--analyse``
prints where the bits go (per kind of token, the first token of a line, rare tokens, byte
fallback) and how consistently each frequent FLORES word is cut across its occurrences in the
training text and FLORES. ``--normalize`` feeds every tokenizer the lines as SentencePiece's
default normalizer leaves them (NFKC, runs of spaces made one): what SentencePiece gains by not
being lossless. Token streams are cached in .cache/bench_lm/. ``--selftest`` checks the n-gram
code on streams whose answer is known.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from _measure import CORPORA, ROOT, machine, need, require

CACHE = ROOT / ".cache" / "bench_lm"
#: SGPE variants of docs/language-model.md, trained here (``sgpe`` and ``sgpe-words`` come from bench_languages)
VARIANTS: dict[str, dict] = {
    "pfx": {"prefix_space": True, "superword_share": 0},
    "pfx-sw": {"prefix_space": True},
    "runs": {"merge_scope": "runs", "superword_share": 0},
    "runs-pfx": {"merge_scope": "runs", "prefix_space": True, "superword_share": 0},
    "words": {"merge_scope": "words", "superword_share": 0},
    "words-pfx": {"merge_scope": "words", "prefix_space": True, "superword_share": 0},
    "words-pfx-sw": {"merge_scope": "words", "prefix_space": True},
    "wp-sw05": {"merge_scope": "words", "prefix_space": True, "superword_share": 0.05},
    "wp-p1": {"merge_scope": "words", "prefix_space": True, "superword_share": 0, "prune_freq": 1},
    "wp-p5": {"merge_scope": "words", "prefix_space": True, "superword_share": 0, "prune_freq": 5},
    "wp-p20": {"merge_scope": "words", "prefix_space": True, "superword_share": 0, "prune_freq": 20},
    # not an SGPE option: the text is mapped through DANDA_AS_PUNCT before training and encoding
    "wp-danda": {"merge_scope": "words", "prefix_space": True, "superword_share": 0, "danda_as_punct": True},
    # the option that does it: the schema's punctuation (the dandas, the abbreviation sign, ...) ends a word
    "wp-punct": {"merge_scope": "words", "prefix_space": True, "superword_share": 0, "split_punctuation": True},
}
#: The dandas (U+0964, U+0965) to characters of no script (U+00A6, U+00A7; in none of the shared
#: Sinhala or Hindi files): a lossless change after which SGPE's words scope treats them as punctuation.
DANDA_AS_PUNCT = str.maketrans({"\u0964": "\u00a6", "\u0965": "\u00a7"})
DEFAULT_KINDS = ["sgpe", "sgpe-words", "sgpe-words+sp", *VARIANTS]
PEERS = ["spm-bpe", "spm-uni", "spm-bpe-x", "spm-uni-x", "hf-meta", "hf-meta-x"]
BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
DEV_EVERY = 50


# --------------------------------------------------------------------------- tokenizers and streams


class Encoder:
    """One tokenizer behind a common face: ``encode(lines) -> (ids, offsets)`` and each id's bytes."""

    def __init__(self, kind: str, path: str, space: bool = False, table: dict | None = None) -> None:
        self.kind, self.path, self.space, self.table = kind, path, space, table
        if kind == "syl-uni":  # SentencePiece Unigram over syllables (syllable_unigram.py)
            from syllable_unigram import SyllableUnigram

            self.syl = SyllableUnigram(Path(path).with_suffix(""))
            self.sp = self.syl.sp
            self.vocab = self.sp.get_piece_size()
            control = {i for i in range(self.vocab) if self.sp.is_control(i) or self.sp.is_unknown(i)}
            self.bytes = [b"" if i in control else piece_bytes(self.syl.piece_text(i)) for i in range(self.vocab)]
        elif kind.startswith("spm"):
            import sentencepiece as spm

            self.sp = spm.SentencePieceProcessor(model_file=path)
            self.vocab = self.sp.get_piece_size()
            pieces = [self.sp.id_to_piece(i) for i in range(self.vocab)]
            control = {i for i in range(self.vocab) if self.sp.is_control(i) or self.sp.is_unknown(i)}
            self.bytes = [
                b"" if i in control else piece_bytes(p.replace("\u2581", " ")) for i, p in enumerate(pieces)
            ]
        elif kind.startswith("hf"):
            from tokenizers import Tokenizer

            self.hf = Tokenizer.from_file(path)
            self.vocab = self.hf.get_vocab_size()
            self.bytes = [
                piece_bytes((self.hf.id_to_token(i) or "").replace("\u2581", " ")) for i in range(self.vocab)
            ]
        else:
            from wwho.sgpe import SGPETokenizer

            self.sgpe = SGPETokenizer.load(path)
            self.vocab = self.sgpe.vocab_size
            specials = set(self.sgpe.special_tokens)
            self.bytes = [
                b"" if t in specials else self.sgpe.token_bytes(i) for i, t in enumerate(self.sgpe.tokens)
            ]
        self.byte_ids = np.array(
            [i for i, b in enumerate(self._pieces()) if BYTE.fullmatch(b)], dtype=np.int64
        )

    def _pieces(self) -> list[str]:
        if hasattr(self, "sp"):
            return [self.sp.id_to_piece(i) for i in range(self.vocab)]
        if hasattr(self, "hf"):
            return [self.hf.id_to_token(i) or "" for i in range(self.vocab)]
        return list(self.sgpe.tokens)

    def encode(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        if self.space:
            lines = [" " + line for line in lines]
        if self.table:
            lines = [line.translate(self.table) for line in lines]
        if hasattr(self, "sgpe"):
            ids, offsets = self.sgpe.encode_batch_to_numpy(lines)
            return ids.astype(np.int64), offsets.astype(np.int64)
        if hasattr(self, "syl"):
            seqs = self.syl.encode(lines)
        elif hasattr(self, "sp"):
            seqs = self.sp.encode(lines)
        else:
            seqs = [e.ids for e in self.hf.encode_batch(lines, add_special_tokens=False)]
        offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
        np.cumsum([len(s) for s in seqs], out=offsets[1:])
        return np.fromiter((i for s in seqs for i in s), dtype=np.int64, count=int(offsets[-1])), offsets


def piece_bytes(piece: str) -> bytes:
    m = BYTE.fullmatch(piece)
    return bytes([int(m.group(1), 16)]) if m else piece.encode("utf-8", "surrogatepass")


def tokenizer_path(lang: str, kind: str, size: int, variants: dict[str, dict]) -> str:
    """The model of ``kind``: an SGPE variant trained here, else bench_languages' cached model."""
    import bench_languages as bl

    if kind in variants:
        out = CACHE / f"{lang}-{kind}-{size}"
        if not (out / "vocab.json").exists():
            from wwho.sgpe import SGPETokenizer

            CACHE.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            options = {"progress": False, **variants[kind]}
            files = [str(p) for p in bl.training_files(lang)]
            if options.pop("danda_as_punct", False):  # the training text mapped as the encoder maps it
                (CACHE / "danda").mkdir(exist_ok=True)
                for i, f in enumerate(files):
                    files[i] = str(CACHE / "danda" / f"{lang}-{Path(f).name}")
                    text = Path(f).read_text(encoding="utf-8")
                    Path(files[i]).write_text(text.translate(DANDA_AS_PUNCT), encoding="utf-8")
            SGPETokenizer.train(files, vocab_size=size, script=bl.SCRIPTS[lang], **options).save(str(out))
            print(f"  trained {out.name} in {time.perf_counter() - t0:.0f} s", flush=True)
        return str(out)
    if kind == "syl-uni":
        from syllable_unigram import train

        prefix = CACHE / f"{lang}-syl-uni-{size}"
        if not prefix.with_suffix(".model").exists():
            t0 = time.perf_counter()
            train(training_lines(lang), bl.SCRIPTS[lang], size, prefix)
            print(f"  trained {prefix.name} in {time.perf_counter() - t0:.0f} s", flush=True)
        return str(prefix.with_suffix(".model"))
    if kind not in bl.SGPE_KINDS and kind not in bl.LABELS:
        raise SystemExit(f"unknown tokenizer {kind!r}: one of {', '.join(bl.LABELS)} or an --sgpe variant")
    spec, _ = bl.train(lang, lang, kind, size, bl.training_files(lang), False)
    # a ``wwho eval`` spec ("spm:PATH", "hf:PATH") or an SGPE directory
    return spec.split(":", 1)[1] if spec.startswith(("spm:", "hf:")) else spec


def training_lines(lang: str) -> list[str]:
    import bench_languages as bl

    return [line for path in bl.training_files(lang) for line in bl.read(path)]


def flores_lines(lang: str) -> list[str]:
    import bench_languages as bl

    return bl.read(CORPORA / lang / bl.FLORES)


def normalize(line: str) -> str:
    """What SentencePiece's default normalizer does to a line before it tokenizes: NFKC, and
    runs of whitespace (and the line's ends) reduced to single spaces."""
    return " ".join(unicodedata.normalize("NFKC", line).split())


def streams(
    lang: str,
    kind: str,
    size: int,
    variants: dict,
    train: list[str],
    test: list[str],
    fresh: bool,
    tag: str = "",
):
    """(encoder, train ids, train offsets, test ids, test offsets), cached by model mtime."""
    base = kind.removesuffix("+sp")
    path = tokenizer_path(lang, base, size, variants)
    table = DANDA_AS_PUNCT if variants.get(base, {}).get("danda_as_punct") else None
    enc = Encoder(base, path, space=kind.endswith("+sp"), table=table)
    stamp = (
        Path(path).stat().st_mtime if not Path(path).is_dir() else (Path(path) / "vocab.json").stat().st_mtime
    )
    cache = CACHE / f"{lang}-{kind}-{size}{tag}.npz"
    if cache.exists() and not fresh:
        z = np.load(cache)
        if float(z["stamp"]) == stamp and int(z["lines"]) == len(train) + len(test):
            return enc, z["train_ids"], z["train_off"], z["test_ids"], z["test_off"]
    t0 = time.perf_counter()
    train_ids, train_off = enc.encode(train)
    test_ids, test_off = enc.encode(test)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez(
        cache,
        train_ids=train_ids,
        train_off=train_off,
        test_ids=test_ids,
        test_off=test_off,
        stamp=stamp,
        lines=len(train) + len(test),
    )
    print(
        f"  encoded {kind}: {len(train_ids):,} training tokens in {time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    return enc, train_ids, train_off, test_ids, test_off


def select_lines(ids: np.ndarray, offsets: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lines where ``keep`` is true, as a new (ids, offsets)."""
    lengths = np.diff(offsets)[keep]
    mask = np.repeat(keep, np.diff(offsets))
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return ids[mask], out


# --------------------------------------------------------------------------- the n-gram model


class KneserNey:
    """Interpolated modified Kneser-Ney over token ids, every order up to ``order``, counted with numpy.

    Each line is ``order - 1`` begin tokens, its ids, an end token; every id and the end token is a
    target. An n-gram is packed into one int64 key (base ``vocab + 2``). The model of order n uses
    raw counts at its top level and continuation counts (distinct left neighbours) below, except
    for n-grams that begin with the begin token, which keep raw counts (they have no left
    neighbour); the lowest level is interpolated with the uniform distribution over the ids and
    the end token."""

    def __init__(self, ids: np.ndarray, offsets: np.ndarray, vocab: int, order: int = 3) -> None:
        self.vocab, self.order, self.base = vocab, order, vocab + 2
        if self.base**order >= 2**63:
            raise ValueError(f"order {order} does not fit int64 keys at vocabulary {vocab}")
        keys = self._keys(ids, offsets)
        self.raw, self.cont = {}, {}
        for k in range(1, order + 1):
            self.raw[k] = np.unique(keys[k], return_counts=True)
        for k in range(1, order):
            upper = self.raw[k + 1][0]
            suffix, n = np.unique(upper % self.base**k, return_counts=True)
            grams, raw = self.raw[k]
            assert np.array_equal(suffix, grams)  # every k-gram of a target has a (k+1)-gram
            begins = grams // self.base ** (k - 1) == vocab if k > 1 else np.zeros(len(grams), bool)
            self.cont[k] = (grams, np.where(begins, raw, n))
        self.tables = {}
        for n in range(1, order + 1):
            for k in range(1, n + 1):
                grams, counts = self.raw[k] if k == n else self.cont[k]
                self.tables[k, k == n] = self._table(grams, counts, k)
        self.scale = {n: np.ones(n + 1) for n in range(1, order + 1)}

    def _keys(self, ids: np.ndarray, offsets: np.ndarray) -> dict[int, np.ndarray]:
        """The key of the k-gram ending at every target, for k = 1..order."""
        lengths = np.diff(offsets)
        lines, pad = len(lengths), self.order - 1
        total = len(ids) + lines * (pad + 1)
        s = np.full(total, self.vocab, dtype=np.int64)  # begin token everywhere, then overwritten
        starts = np.concatenate(([0], np.cumsum(lengths + pad + 1)[:-1])).astype(np.int64)
        dest = np.arange(len(ids)) - np.repeat(offsets[:-1], lengths) + np.repeat(starts + pad, lengths)
        s[dest] = ids
        ends = starts + pad + lengths
        s[ends] = self.vocab + 1
        target = np.ones(total, dtype=bool)
        for j in range(pad):
            target[starts + j] = False
        keys, cur = {}, s.copy()
        for k in range(1, self.order + 1):
            if k > 1:
                cur = np.concatenate((np.zeros(1, np.int64), cur[:-1])) * self.base + s
            keys[k] = cur[target]
        return keys

    def _table(self, grams: np.ndarray, counts: np.ndarray, k: int):
        """Per context (the k-gram less its last id): total count and how many continuations occur 1, 2, 3+ times."""
        ctx = grams // self.base if k > 1 else np.zeros(len(grams), np.int64)
        uctx, inv = np.unique(ctx, return_inverse=True)
        stats = np.stack(
            [
                np.bincount(inv, weights=w, minlength=len(uctx))
                for w in (counts, counts == 1, counts == 2, counts >= 3)
            ]
        )
        cc = np.bincount(np.minimum(counts, 5), minlength=6)[1:5].astype(float)  # n1..n4
        y = cc[0] / (cc[0] + 2 * cc[1]) if cc[0] + cc[1] else 0.5
        d = np.array(
            [
                1 - 2 * y * cc[1] / cc[0] if cc[0] else 0.5,
                2 - 3 * y * cc[2] / cc[1] if cc[1] else 1.0,
                3 - 4 * y * cc[3] / cc[2] if cc[2] else 1.5,
            ]
        )
        return grams, counts, uctx, stats, np.clip(d, 0.05, [1, 2, 3])

    def lookups(self, ids: np.ndarray, offsets: np.ndarray):
        """Everything the probabilities need from the counts, for the targets of (ids, offsets)."""
        keys = self._keys(ids, offsets)
        out = {}
        for (k, top), (grams, counts, uctx, stats, _) in self.tables.items():
            i = np.clip(np.searchsorted(grams, keys[k]), 0, len(grams) - 1)
            c = np.where(grams[i] == keys[k], counts[i], 0)
            ctx = keys[k] // self.base if k > 1 else np.zeros(len(c), np.int64)
            j = np.clip(np.searchsorted(uctx, ctx), 0, len(uctx) - 1)
            found = uctx[j] == ctx
            out[k, top] = (c, np.where(found, stats[:, j], 0))
        return out

    def probs(self, look, n: int, scale: np.ndarray | None = None) -> np.ndarray:
        """p(target | context) under the model of order ``n``."""
        scale = self.scale[n] if scale is None else scale
        p = None
        for k in range(1, n + 1):
            c, (total, n1, n2, n3) = look[k, k == n]
            d = np.clip(self.tables[k, k == n][4] * scale[k], 0.0, [1, 2, 3])
            lower = np.full(len(c), 1.0 / (self.vocab + 1)) if p is None else p
            discount = np.select([c == 1, c == 2, c >= 3], d, 0.0)
            gamma = d[0] * n1 + d[1] * n2 + d[2] * n3
            safe = np.maximum(total, 1)
            p = np.where(total > 0, (np.maximum(c - discount, 0) + gamma * lower) / safe, lower)
        return p

    def tune(self, look, n: int, grid=(0.3, 0.5, 0.7, 0.85, 1.0, 1.15, 1.3, 1.5, 1.8)) -> float:
        """Scale order n's discounts, level by level, to the least loss on ``look``; returns bits."""
        scale = np.ones(n + 1)
        best = -np.log2(self.probs(look, n, scale)).sum()
        for _ in range(2):
            for k in range(n, 0, -1):
                for g in grid:
                    trial = scale.copy()
                    trial[k] = g
                    bits = -np.log2(self.probs(look, n, trial)).sum()
                    if bits < best:
                        best, scale = bits, trial
        self.scale[n] = scale
        return best


def selftest() -> None:
    """The n-gram code on streams whose answer is known."""
    rng = np.random.default_rng(0)
    ok = True

    def lines_of(seqs):
        off = np.zeros(len(seqs) + 1, np.int64)
        np.cumsum([len(s) for s in seqs], out=off[1:])
        return np.concatenate(seqs).astype(np.int64), off

    # Uniform random ids over V: the unigram model costs log2 V bits per token (plus the end token).
    v = 64
    ids, off = lines_of([rng.integers(0, v, 200) for _ in range(2000)])
    dids, doff = lines_of([rng.integers(0, v, 200) for _ in range(100)])
    tids, toff = lines_of([rng.integers(0, v, 200) for _ in range(200)])
    m = KneserNey(ids, off, v, order=3)
    look, dev = m.lookups(tids, toff), m.lookups(dids, doff)
    for n in (1, 2, 3):
        m.tune(dev, n)
        p = m.probs(look, n)
        ends = np.cumsum(np.diff(toff) + 1) - 1
        per_token = -np.log2(np.delete(p, ends)).mean()
        print(
            f"  uniform random over {v} ids, order {n}: {per_token:.4f} bits per token (expected {np.log2(v):.4f})"
        )
        ok &= abs(per_token - np.log2(v)) < (0.01 if n == 1 else 0.06)
    # A deterministic alternating stream: order >= 2 costs almost nothing, order 1 one bit per token.
    ids, off = lines_of([np.tile([3, 7], 100) for _ in range(500)])
    tids, toff = lines_of([np.tile([3, 7], 100) for _ in range(50)])
    m = KneserNey(ids, off, 10, order=3)
    look = m.lookups(tids, toff)
    for n in (1, 2, 3):
        p = m.probs(look, n)
        per_token = -np.log2(np.delete(p, np.cumsum(np.diff(toff) + 1) - 1)).mean()
        expected = 1.0 if n == 1 else 0.0
        print(
            f"  alternating 3 7 3 7 ..., order {n}: {per_token:.4f} bits per token (expected about {expected:.0f})"
        )
        ok &= abs(per_token - expected) < 0.05
    # Probabilities sum to 1 over the vocabulary and the end token, in a seen and an unseen context.
    ids, off = lines_of([rng.integers(0, 20, rng.integers(1, 30)) for _ in range(300)])
    m = KneserNey(ids, off, 20, order=3)
    for ctx in ([4, 9], [19, 19], []):
        cands = [np.array([*ctx, w], np.int64) for w in range(20)] + [np.array(ctx, np.int64)]
        tids, toff = lines_of(cands)
        look = m.lookups(tids, toff)
        for n in (1, 2, 3):
            p = m.probs(look, n)
            last = np.cumsum(np.diff(toff) + 1) - 1
            where = last - 1
            where[-1] = last[-1]  # the end token after the bare context
            total = p[where].sum()
            ok &= abs(total - 1) < 1e-9
        print(f"  context {ctx}: probabilities sum to {total:.12f} (order 3)")
    print("selftest:", "ok" if ok else "FAILED")
    if not ok:
        sys.exit(1)


# --------------------------------------------------------------------------- analyses


def categories(enc: Encoder) -> np.ndarray:
    """A category per id: 0 letters of the script, 1 digits, 2 punctuation or symbols, 3 Latin,
    4 a byte-fallback token, 5 a space alone, 6 mixed; the end token is 7."""
    cats = np.zeros(enc.vocab + 2, dtype=np.int8)
    byte_ids = set(enc.byte_ids.tolist())
    for i, b in enumerate(enc.bytes):
        s = b.decode("utf-8", "replace").strip()
        if i in byte_ids:
            cats[i] = 4
        elif not s:
            cats[i] = 5
        elif all(ch.isdigit() or ch in ".,:" for ch in s) and any(ch.isdigit() for ch in s):
            cats[i] = 1
        elif all(unicodedata.category(ch)[0] in "PSZ" for ch in s):
            cats[i] = 2
        elif any("a" <= ch.lower() <= "z" for ch in s):
            cats[i] = 3
        elif any(unicodedata.category(ch)[0] in "PSN" for ch in s):
            cats[i] = 6
    cats[enc.vocab + 1] = 7
    return cats


CATEGORY_NAMES = ["script", "digits", "punct", "latin", "bytes", "space", "mixed", "end"]


def word_runs(text: str) -> list[tuple[int, int, str]]:
    """The words of ``text`` as (start, end, word): maximal runs of letters, marks, digits and
    format characters (ZWJ), so ``"है।"`` is the word ``"है"`` and the danda around it."""
    out, start = [], None
    for i, ch in enumerate(text + " "):
        inside = unicodedata.category(ch)[0] in "LMN" or ch in "\u200c\u200d"
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            out.append((start, i, text[start:i]))
            start = None
    return out


def word_cuts(enc: Encoder, ids: np.ndarray, offsets: np.ndarray, words: set[str]):
    """For every occurrence of a word in ``words``: the tuple of the ids that overlap it (a token
    that also holds a space, punctuation or a neighbouring word is another cut than the word's
    own), and whether it is the first word of its line."""
    lengths = np.array([len(b) for b in enc.bytes], dtype=np.int64)
    out = defaultdict(Counter)
    initial = defaultdict(Counter)
    for li in range(len(offsets) - 1):
        seq = ids[offsets[li] : offsets[li + 1]]
        if not len(seq):
            continue
        text = b"".join(enc.bytes[i] for i in seq).decode("utf-8", "replace")
        at = np.concatenate(([0], np.cumsum([len(ch.encode("utf-8", "surrogatepass")) for ch in text])))
        ends = np.cumsum(lengths[seq])
        starts = ends - lengths[seq]
        for n, (s, e, word) in enumerate(word_runs(text)):
            if word in words:
                a = int(np.searchsorted(ends, at[s], side="right"))
                b = int(np.searchsorted(starts, at[e], side="left"))
                cut = tuple(seq[a:b].tolist())
                out[word][cut] += 1
                if n == 0:
                    initial[word][cut] += 1
    return out, initial


def consistency(enc, tr_ids, tr_off, te_ids, te_off, test: list[str], top: int = 1000) -> dict:
    """How the ``top`` most frequent FLORES words are cut over their occurrences in the training
    text and FLORES: distinct cuts per word, share of occurrences off the word's usual cut, and
    the entropy of the cut given the word (bits per occurrence)."""
    freq = Counter(w for line in test for _, _, w in word_runs(line))
    words = {
        unicodedata.normalize("NFKC", w) if enc.kind.startswith("spm") else w
        for w, _ in freq.most_common(top)
    }
    cuts, initial = word_cuts(
        enc, np.concatenate((tr_ids, te_ids)), np.concatenate((tr_off, tr_off[-1] + te_off[1:])), words
    )
    occ = off_mode = 0
    types = entropy = 0.0
    init_off = 0
    for w, c in cuts.items():
        n = sum(c.values())
        mode, m = c.most_common(1)[0]
        occ += n
        off_mode += n - m
        types += len(c)
        p = np.array(list(c.values()), float) / n
        entropy += -(p * np.log2(p)).sum() * n
        init_off += sum(v for cut, v in initial[w].items() if cut != mode)
    return {
        "words": len(cuts),
        "occurrences": occ,
        "cuts_per_word": types / max(len(cuts), 1),
        "off_usual": off_mode / max(occ, 1),
        "off_usual_line_initial": init_off / max(occ, 1),
        "bits_per_occurrence": entropy / max(occ, 1),
    }


# --------------------------------------------------------------------------- the run


def run_language(lang: str, args, variants: dict) -> None:
    train, test = training_lines(lang), flores_lines(lang)
    chars = sum(len(line) + 1 for line in test)  # of the original lines, whatever each tokenizer does to them
    fed_train, fed_test = (
        ([normalize(x) for x in train], [normalize(x) for x in test]) if args.normalize else (train, test)
    )
    keep = np.arange(len(train)) % DEV_EVERY != DEV_EVERY - 1
    mb = sum(len(line.encode()) + 1 for line in train) / 1e6
    normalized = " (lines normalized as SentencePiece does)" if args.normalize else ""
    print(
        f"\n## {lang}, {args.size:,}{normalized}: training text {mb:.1f} MB ({len(train):,} lines, every {DEV_EVERY}th "
        f"for tuning); FLORES devtest {len(test):,} lines, {chars:,} characters with newlines\n",
        flush=True,
    )
    orders = list(range(1, args.order + 1))
    head = (
        f"{'tokenizer':22} {'vocab':>6} {'tok/char':>8} {'tok/word':>8} {'bytes%':>7}"
        + "".join(f" {o}-gram".rjust(8) for o in orders)
        + (f" {'GPT':>7}" if args.gpu else "")
    )
    rows, analyses = [head], []
    for kind in args.kinds:
        t0 = time.perf_counter()
        enc, tr_ids, tr_off, te_ids, te_off = streams(
            lang,
            kind,
            args.size,
            variants,
            fed_train,
            fed_test,
            args.fresh,
            "-norm" if args.normalize else "",
        )
        vocab = max(enc.vocab, int(tr_ids.max()) + 1, int(te_ids.max()) + 1)
        fit_ids, fit_off = select_lines(tr_ids, tr_off, keep)
        dev_ids, dev_off = select_lines(tr_ids, tr_off, ~keep)
        model = KneserNey(fit_ids, fit_off, vocab, order=args.order)
        dev_look, look = model.lookups(dev_ids, dev_off), model.lookups(te_ids, te_off)
        bits = {}
        for n in orders:
            model.tune(dev_look, n)
            bits[n] = -np.log2(model.probs(look, n))
        words = sum(len(line.split()) for line in test)
        byte_share = np.isin(te_ids, enc.byte_ids).mean() if len(enc.byte_ids) else 0.0
        row = (
            f"{kind:22} {enc.vocab:6d} {len(te_ids) / (chars - len(test)):8.4f} {len(te_ids) / words:8.3f}"
            f" {100 * byte_share:7.3f}" + "".join(f" {bits[n].sum() / chars:7.4f}" for n in orders)
        )
        if args.export or args.gpu:
            stream = export(args.export or CACHE / "gpt", lang, kind, vocab, chars, len(te_ids) / words,
                            (fit_ids, fit_off, dev_ids, dev_off, te_ids, te_off),
                            {n: float(bits[n].sum() / chars) for n in orders})
        if args.gpu:
            import gpt

            result = gpt.train(stream, args.steps, args.batch, args.seed, 100, "cuda")
            row += f" {result['bits_per_char']:7.4f}"
        rows.append(row)
        print(row + f"   ({time.perf_counter() - t0:.0f} s)", flush=True)
        if args.analyse:
            analyses.append(analyse(kind, enc, tr_ids, tr_off, te_ids, te_off, test, bits, chars, keep))
    print("\n" + "\n".join(rows))
    if args.analyse:
        print_analyses(analyses, test, train)


def export(folder: Path, lang: str, kind: str, vocab: int, chars: int, per_word: float, arrays, ngram) -> Path:
    """One tokenizer's streams of one language as gpt.py reads them (ids as uint16 where they fit)."""
    folder.mkdir(parents=True, exist_ok=True)
    dtype = np.uint16 if vocab + 2 <= 1 << 16 else np.uint32
    names = ("fit_ids", "fit_off", "dev_ids", "dev_off", "test_ids", "test_off")
    out = folder / f"{lang}-{kind}.npz"
    np.savez_compressed(
        out,
        **{n: a.astype(dtype if n.endswith("ids") else np.int64) for n, a in zip(names, arrays)},
        vocab=vocab, chars=chars, lang=lang, kind=kind, tokens_per_word=per_word, ngram=json.dumps(ngram),
    )
    return out


def analyse(kind, enc, tr_ids, tr_off, te_ids, te_off, test, bits, chars, keep) -> dict:
    """Where the bigram and trigram bits go, and how consistently words are cut."""
    n_lines = len(te_off) - 1
    ends = np.cumsum(np.diff(te_off) + 1) - 1
    targets = np.full(len(te_ids) + n_lines, enc.vocab + 1, dtype=np.int64)
    mask = np.ones(len(targets), bool)
    mask[ends] = False
    targets[mask] = te_ids
    first = np.zeros(len(targets), bool)
    first[np.concatenate(([0], ends[:-1] + 1))[np.diff(te_off) > 0]] = True
    table = categories(enc)
    cats = table[np.minimum(targets, len(table) - 1)]
    counts = np.bincount(tr_ids, minlength=enc.vocab + 2)
    rare = counts[np.minimum(targets, len(counts) - 1)]
    out = {"kind": kind, "chars": chars}
    for n in (2, 3):
        b = bits[n]
        out[n] = {
            "total": b.sum() / chars,
            "by_category": {
                CATEGORY_NAMES[c]: (b[cats == c].sum() / chars, int((cats == c).sum())) for c in range(8)
            },
            "line_initial": b[first].sum() / chars,
            "rare<100": b[(rare < 100) & (targets < enc.vocab)].sum() / chars,
            "rare_tokens": int(((rare < 100) & (targets < enc.vocab)).sum()),
        }
    out["vocab_rare"] = int((counts[: enc.vocab] < 10).sum())
    out["consistency"] = consistency(enc, tr_ids, tr_off, te_ids, te_off, test)
    out["word_bits"] = word_bits(enc, te_ids, te_off, bits[3], test)
    return out


def word_bits(enc: Encoder, ids, offsets, bits, test: list[str]) -> dict | None:
    """Trigram bits and tokens of each whitespace word of each FLORES line, for a tokenizer whose
    tokens never hold a space past their first byte (a token that starts with a space starts a
    word); lines whose tokens do not group into the line's words (extra spaces) are left out."""
    if any(b" " in b[1:] for b in enc.bytes):
        return None
    starts_word = np.array([b[:1] == b" " for b in enc.bytes] + [False, False])
    out, pos = {}, 0
    for li, line in enumerate(test):
        seq = ids[offsets[li] : offsets[li + 1]]
        b = bits[pos : pos + len(seq)]
        pos += len(seq) + 1
        group = np.cumsum(starts_word[seq] | (np.arange(len(seq)) == 0)) - 1
        if len(seq) and group[-1] + 1 == len(line.split()):
            out[li] = (np.bincount(group, weights=b), np.bincount(group))
    return out


def print_analyses(analyses: list[dict], test: list[str], train: list[str]) -> None:
    print(
        "\nwhere the bits go (FLORES; bits per character of all text spent predicting each kind of token; "
        "count of tokens in brackets)\n"
    )
    for n in (2, 3):
        print(f"{n}-gram:")
        print(
            f"{'tokenizer':22} {'total':>7}"
            + "".join(f" {c:>15}" for c in CATEGORY_NAMES)
            + f" {'1st token':>9} {'rare<100':>15}"
        )
        for a in analyses:
            d = a[n]
            print(
                f"{a['kind']:22} {d['total']:7.4f}"
                + "".join(f" {v:7.4f} ({k:5d})" for v, k in d["by_category"].values())
                + f" {d['line_initial']:9.4f} {d['rare<100']:7.4f} ({d['rare_tokens']:5d})"
            )
    print(
        "\nhow the 1,000 most frequent FLORES words (runs of letters, marks and digits) are cut over "
        "their occurrences (training text + FLORES)\n"
    )
    print(
        f"{'tokenizer':22} {'occurrences':>11} {'cuts/word':>9} {'off usual':>9} {'of which 1st':>12}"
        f" {'H(cut|word)':>11} {'vocab ids seen <10x':>19}"
    )
    for a in analyses:
        c = a["consistency"]
        print(
            f"{a['kind']:22} {c['occurrences']:11,} {c['cuts_per_word']:9.2f} {100 * c['off_usual']:8.2f}%"
            f" {100 * c['off_usual_line_initial']:11.2f}% {c['bits_per_occurrence']:11.4f} {a['vocab_rare']:19,}"
        )
    bounded = [a for a in analyses if a["word_bits"] is not None]
    if bounded:
        common = sorted(set.intersection(*(set(a["word_bits"]) for a in bounded)))
        freq = Counter(w for line in train for w in line.split())
        edges = [0, 1, 10, 100, 1000]
        bucket = [
            [int(np.searchsorted(edges, freq[w], side="right")) - 1 for w in test[li].split()]
            for li in common
        ]
        labels = ["unseen", "1-9", "10-99", "100-999", "1000+"]
        occ = np.bincount(np.concatenate(bucket), minlength=5)
        print(
            f"\ntrigram bits per character spent on FLORES whitespace words by the word's frequency in the "
            f"training text ({len(common)} lines where every word-bounded tokenizer's tokens group into the "
            f"words; tokens in brackets)\n"
        )
        print(
            f"{'tokenizer':22}" + "".join(f" {f'{x} ({o})':>17}" for x, o in zip(labels, occ)) + "    total"
        )
        for a in bounded:
            bits, toks = np.zeros(5), np.zeros(5, int)
            for li, ks in zip(common, bucket):
                b, t = a["word_bits"][li]
                np.add.at(bits, ks, b)
                np.add.at(toks, ks, t)
            print(
                f"{a['kind']:22}"
                + "".join(f" {x / a['chars']:8.4f} ({t:6d})" for x, t in zip(bits, toks))
                + f" {bits.sum() / a['chars']:8.4f}"
            )


def main() -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    import bench_languages as bl

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--langs", nargs="*", default=["si", "hi"], choices=list(bl.SCRIPTS), metavar="LANG",
                    help=f"of: {' '.join(bl.SCRIPTS)} (default: si hi; not or: FLORES only)")
    ap.add_argument("--size", type=int, default=8000)
    ap.add_argument("--kinds", nargs="*", default=None, help="default: every SGPE variant, then the peers")
    ap.add_argument("--sgpe", nargs="*", default=[], metavar="NAME=JSON", help="SGPE variants, trained here")
    ap.add_argument(
        "--order", type=int, default=3, help="highest n-gram order (keys are int64: 4 at most at 8k)"
    )
    ap.add_argument(
        "--analyse", action="store_true", help="where the bits go, and how consistently words are cut"
    )
    ap.add_argument(
        "--normalize",
        action="store_true",
        help="feed every tokenizer the lines as SentencePiece normalizes them (NFKC, single spaces)",
    )
    ap.add_argument("--gpu", action="store_true", help="also a small GPT, gpt.py's (needs PyTorch and CUDA)")
    ap.add_argument("--export", type=Path, help="write each tokenizer's streams here for gpt.py (another machine)")
    ap.add_argument("--steps", type=int, default=1200, help="GPT training steps")
    ap.add_argument("--batch", type=int, default=64, help="GPT windows of 256 tokens per step")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fresh", action="store_true", help="re-encode the streams")
    ap.add_argument("--selftest", action="store_true", help="check the n-gram code on known streams and exit")
    args = ap.parse_args()
    if args.selftest:
        selftest()
        return
    variants = dict(VARIANTS)
    for spec in args.sgpe:
        name, _, options = spec.partition("=")
        try:
            variants[name] = json.loads(options)
        except json.JSONDecodeError as exc:
            ap.error(f"--sgpe {spec}: the options after NAME= are not JSON ({exc})")
        if not isinstance(variants[name], dict):
            ap.error(f"--sgpe {spec}: the options after NAME= must be a JSON object of SGPE options")
    args.kinds = args.kinds or [*DEFAULT_KINDS, *(v for v in variants if v not in VARIANTS), *PEERS]
    require(*(CORPORA / lang / "flores200-devtest.txt" for lang in args.langs))  # and the training text beside it
    if args.gpu:  # (checked before anything is trained: the GPT is the run's last step)
        need("torch")
    # Odia has FLORES only: bench_languages.py cross-fits it (trains on each half of FLORES, measures
    # on the other), which would take two models per kind and two n-gram fits here: not done.
    flores_only = [lang for lang in args.langs if not bl.training_files(lang)]
    if flores_only:
        ap.error(f"--langs {' '.join(flores_only)}: no training text besides FLORES in {CORPORA} (bench_languages.py "
                 "cross-fits such a language on FLORES halves; this benchmark does not)")
    print(f"machine: {machine()}")
    for lang in args.langs:
        run_language(lang, args, variants)


if __name__ == "__main__":
    main()
