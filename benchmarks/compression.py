"""Tokens per word, losslessness and syllable integrity of trained vocabularies (used by bench_train)."""

from __future__ import annotations

from pathlib import Path


def load(key: str, out: str):
    """``(encode, decode, is_fallback)``; encode(text) -> (ids, token end offsets in UTF-8 bytes, or None)."""
    if key == "wwho":
        from wwho.sgpe import SGPETokenizer

        tok = SGPETokenizer.load(out)
        return (lambda t: (ids := tok.encode(t), ends_of([tok.token_bytes(i) for i in ids]))), tok.decode, \
            (lambda i: tok.id_to_token[i].startswith("<0x"))
    if key == "hf":
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(out)
        unk = tok.token_to_id("[UNK]")

        def enc(t):
            e = tok.encode(t, add_special_tokens=False)
            starts = [0]
            for ch in t:  # char offset -> byte offset
                starts.append(starts[-1] + len(ch.encode("utf-8", "surrogatepass")))
            return e.ids, [starts[b] for _, b in e.offsets]
        return enc, lambda ids: tok.decode(ids), (lambda i: i == unk)
    if key == "spm":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=out + ".model")

        def enc(t):
            ids = sp.encode(t)
            if sp.decode(ids) != t:
                return ids, None  # normalization changed the text: no exact boundaries
            return ids, [len(sp.decode(ids[:k]).encode()) for k in range(1, len(ids) + 1)]
        return enc, sp.decode, (lambda i: sp.is_byte(i) or sp.is_unknown(i))
    if key == "tiktoken":
        from _measure import o200k

        enc_ = o200k()
        return (lambda t: (ids := enc_.encode_ordinary(t), ends_of([enc_.decode_single_token_bytes(i) for i in ids]))), \
            enc_.decode, (lambda i: False)
    raise ValueError(key)


def ends_of(pieces: list[bytes]) -> list[int]:
    out, pos = [], 0
    for p in pieces:
        pos += len(p)
        out.append(pos)
    return out


def split_syllables(text: str, ends: list[int], script: str = "sinhala") -> int:
    """Syllables (of the script's schema) whose bytes contain a token boundary."""
    from wwho import syllabify

    bounds = set(ends)
    count, pos = 0, 0
    for syl in syllabify(text, script, leading_space=True):
        n = len(syl.encode())
        if any(b in bounds for b in range(pos + 1, pos + n)):
            count += 1
        pos += n
    return count


def evaluate_all(trained: dict[str, tuple[str, str]], corpus: Path, *, script: str = "sinhala") -> list[dict]:
    lines = corpus.read_text(encoding="utf-8").splitlines()
    words = sum(len(l.split()) for l in lines)
    rows = []
    for name, (key, out) in {"tiktoken o200k_base": ("tiktoken", ""), **trained}.items():
        try:
            encode, decode, is_fallback = load(key, out)
        except Exception as exc:  # a peer that cannot load is reported, not fatal
            print(f"{name}: cannot evaluate ({exc})")
            continue
        tokens = lossless = splits = fallback = unmeasured = 0
        for line in lines:
            ids, ends = encode(line)
            tokens += len(ids)
            lossless += decode(ids) == line
            fallback += sum(map(is_fallback, ids))
            if ends is None:
                unmeasured += 1
            else:
                splits += split_syllables(line, ends, script)
        rows.append({"name": name, "lines": len(lines), "words": words, "tokens_per_word": tokens / words,
                     "lossless": lossless / len(lines), "split_syllables": splits, "fallback": fallback,
                     "lines_without_exact_offsets": unmeasured})
    return rows
