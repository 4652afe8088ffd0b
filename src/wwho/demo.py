"""``make demo``: train a small SGPE vocabulary on the bundled Sinhala sample and compare it with o200k_base.

The sample (Wikipedia sentences of FLORES v1, CC BY-SA 4.0) is split 90/10: the vocabulary is
trained on the first 90% of the lines and every figure is measured on the last 10%. The vocabulary
is saved to ``wwho-demo/`` in the current directory (or the folder given as the first argument),
and the demo says so. The
o200k_base column needs tiktoken's ranks file: it is found through ``WWHO_TIKTOKEN_FILE``,
tiktoken's cache, or ``../shared/data/tiktoken`` next to the repository (never downloaded);
without it the comparison is skipped with a message.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

from wwho.readable import readable
from wwho.sgpe import SGPETokenizer

SAMPLE = "sinhala-wikipedia-sample.txt"
VOCAB_SIZE = 8000
#: where the demo saves its vocabulary (a folder in the current directory; ``python -m wwho.demo DIR`` to choose)
OUT = "wwho-demo"


def sample_lines() -> list[str]:
    return resources.files("wwho.data").joinpath(SAMPLE).read_text(encoding="utf-8").splitlines()


def o200k():
    from wwho.bytelevel.tiktoken_loader import get_encoding
    from wwho.errors import WwhoError

    shared = _shared_ranks()
    try:
        return get_encoding("o200k_base", tiktoken_file=shared)
    except WwhoError as exc:
        print(f"(o200k_base comparison skipped: {exc})\n")
        return None


def _shared_ranks() -> Path | None:
    """A developer's checkout may hold the ranks file in the shared data folder (``WWHO_SHARED_DATA``,
    else ``../shared/data`` beside the repository); a user's install never does, and finds it the
    usual way (``WWHO_TIKTOKEN_FILE`` or tiktoken's cache)."""
    if os.environ.get("WWHO_TIKTOKEN_FILE"):
        return None
    roots = [os.environ.get("WWHO_SHARED_DATA"), Path(__file__).resolve().parents[3] / "shared" / "data"]
    for root in roots:
        if root and (Path(root) / "tiktoken" / "o200k_base.tiktoken").is_file():
            return Path(root) / "tiktoken" / "o200k_base.tiktoken"
    return None


def main() -> None:
    lines = sample_lines()
    cut = len(lines) * 9 // 10
    train, held_out = lines[:cut], lines[cut:]
    print(f"wwho demo: SGPE on Sinhala ({len(train):,} training lines of the bundled Wikipedia sample, "
          f"{len(held_out):,} held out)\n")
    out = Path(sys.argv[1] if len(sys.argv) > 1 else OUT).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "train.txt"
        corpus.write_text("\n".join(train) + "\n", encoding="utf-8")
        t0 = time.perf_counter()
        tok = SGPETokenizer.train(corpus, vocab_size=VOCAB_SIZE, progress=False, workers=1)
        seconds = time.perf_counter() - t0
    tok.save(out)  # all at once; other files in the folder are kept (see docs/reliability.md)
    print(f"trained {tok.vocab_size:,} tokens ({len(tok.merges):,} merges) in {seconds:.1f}s\n"
          f"saved to {out}/ (vocab.json, and tokenizer.json for Hugging Face, exact): load it with "
          f"wwho.SGPETokenizer.load({str(out)!r}) or AutoTokenizer.from_pretrained({str(out)!r})\n")
    enc = o200k()
    for text in ["ශ්‍රී ලංකාව", *held_out[:3]]:
        print(text)
        print(f"  wwho   ({len(tok.encode(text)):3} tokens): {' | '.join(tok.tokenize(text))}")
        if enc is not None:
            # A byte-level token may hold part of a character: shown as <0xNN>, never as U+FFFD.
            pieces = [readable(enc.decode_single_token_bytes(i)) for i in enc.encode_ordinary(text)]
            print(f"  o200k  ({len(pieces):3} tokens): {' | '.join(pieces)}")
        print()
    words = sum(len(l.split()) for l in held_out)
    ours = sum(len(tok.encode(l)) for l in held_out)
    lossless = sum(tok.decode(tok.encode(l)) == l for l in held_out)
    print(f"held-out lines: {len(held_out):,}, {words:,} words")
    print(f"  wwho SGPE ({tok.vocab_size:,} tokens): {ours / words:.2f} tokens per word, "
          f"{lossless}/{len(held_out)} lines decode exactly")
    if enc is not None:
        theirs = sum(len(enc.encode_ordinary(l)) for l in held_out)
        print(f"  o200k_base (200,019 tokens): {theirs / words:.2f} tokens per word "
              f"({theirs / ours:.1f}x wwho's count)")


if __name__ == "__main__":
    sys.exit(main())
