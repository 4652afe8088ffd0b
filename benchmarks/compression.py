"""Tokens per word, losslessness and syllable integrity of trained vocabularies (used by bench_train).

A thin layer over :mod:`wwho.evaluate` (the metrics of ``wwho eval``), with o200k_base added.
"""

from __future__ import annotations

from pathlib import Path

from _measure import O200K_FILE

SPEC = {"wwho": "{out}", "hf": "hf:{out}", "spm": "spm:{out}.model"}


def evaluate_all(trained: dict[str, tuple[str, str]], corpus: Path, *, script: str = "sinhala") -> list[dict]:
    import os

    from wwho.eval_specs import load_spec
    from wwho.evaluate import evaluate, read_lines

    if O200K_FILE.is_file():
        os.environ.setdefault("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    lines = read_lines(corpus)
    specs = {"tiktoken o200k_base": "tiktoken:o200k_base",
             **{name: SPEC[key].format(out=out) for name, (key, out) in trained.items()}}
    rows = []
    for name, spec in specs.items():
        try:
            tok = load_spec(spec)
        except Exception as exc:  # a peer that cannot load is reported, not fatal
            print(f"{name}: cannot evaluate ({exc})")
            continue
        m = evaluate(tok, lines, corpus=str(corpus))
        rows.append({"name": name, "lines": m.lines, "words": m.words, "tokens_per_word": m.fertility,
                     "lossless": m.lossless_rate, "split_syllables": m.boundaries_in_syllable,
                     "in_cluster": m.boundaries_in_cluster, "fallback": m.fallback_tokens,
                     "lines_without_exact_offsets": m.unmeasured_lines})
    return rows
