"""Fuzz the compiled core's SGPE and training entry points for a bounded time.

    python fuzz/sgpe_core.py [--seconds 60] [--seed N]

Random inputs (biased towards edge cases: empty, huge, out-of-range, lone surrogates, invalid
UTF-8, overlapping classes, ids beyond the vocabulary) go to every entry point of
``wwho._core`` that takes tables, ids or files from outside:

* ``Automaton``: class ranges, transitions, start, accept and emit states;
* ``Router`` and ``WordSplitter``: ranges, automata, any text;
* ``SGPEEncoder``: token tables, merge triples, byte ids, special ids; ``encode``,
  ``encode_batch``, ``decode_bytes`` and ``token_bytes`` with any ids;
* ``MergeEngine``: words, counts and symbols of any shape; ``step``, ``train``, ``replay``;
* ``PieceCounter``: files of random bytes (bad UTF-8, no final newline, long lines), texts;
* ``building_merges``: any strings.

Each call must return or raise an ordinary exception (a ``wwho.errors.WwhoError``, or the
``TypeError``/``OverflowError``/``ValueError`` PyO3 raises for arguments of the wrong type or
range); a crash or a ``PanicException`` fails the run. Prints how many calls of each kind
ran and what was raised. ``tests/test_fuzz_core.py`` runs it for a few seconds with a fixed
seed; docs/reliability.md records a long run.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import random
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__" and importlib.util.find_spec("wwho") is None:
    # run from a checkout whose package is not installed: its own (only then: a test importing this
    # module must not put an unbuilt src/ before the installed package, for itself or the processes
    # it spawns, which inherit sys.path)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from wwho import _core  # noqa: E402
from wwho.errors import WwhoError  # noqa: E402

ALLOWED = (WwhoError, TypeError, OverflowError, ValueError)
CHARS = ["a", " ", "\t", "\n", "\r", "ක", "\u0dca", "\u200d", "ා", "न", "\u094d", "🙂", "\ud800", "\x00", "\uffff"]


def rnd_int(rng: random.Random) -> int:
    return rng.choice([0, 1, 2, 3, -1, -2, 255, 256, 2**16, 2**31 - 1, 2**32, 2**63, -(2**63), rng.randrange(64)])


def rnd_text(rng: random.Random, n: int = 40) -> str:
    return "".join(rng.choice(CHARS) for _ in range(rng.randrange(n)))


def rnd_ranges(rng: random.Random) -> list[tuple[int, int]]:
    out = []
    for _ in range(rng.randrange(4)):
        a = rng.choice([0, 0x20, 0x0D80, 0x0D9A, 0x200D, 0xD800, 0x10FFFF, 0x110000, rng.randrange(0x11_0000)])
        b = a + rng.choice([0, 1, 5, -1, 100])
        out.append((a, b))
    return out


def valid_automaton(rng):
    """Mostly valid tables (so the walk runs), over a few characters of CHARS."""
    cps = sorted({ord(c) for c in rng.sample(CHARS, rng.randrange(1, 6))})
    classes = [[(cp, cp)] for cp in cps]
    n_states = rng.randrange(2, 6)
    transitions = [[(rng.randrange(len(classes) + 1), rng.randrange(1, n_states)) for _ in range(rng.randrange(1, 5))]
                   for _ in range(n_states)]
    accept = sorted({rng.randrange(1, n_states) for _ in range(rng.randrange(1, n_states))})
    emit = [s for s in accept if rng.random() < 0.3]
    return classes, transitions, 0, accept, emit


def fuzz_automaton(rng):
    if rng.random() < 0.7:
        classes, transitions, start, accept, emit = valid_automaton(rng)
    else:
        n_states = rng.randrange(0, 6)
        classes = [rnd_ranges(rng) for _ in range(rng.randrange(4))]
        transitions = [[(rng.randrange(len(classes) + 2), rng.randrange(n_states + 1)) for _ in range(rng.randrange(4))]
                       for _ in range(n_states)]
        start, accept = rng.randrange(n_states + 1), [rng.randrange(n_states + 1)]
        emit = [rng.randrange(n_states + 1)] if rng.random() < 0.5 else []
    a = _core.Automaton(classes, transitions, start, accept, emit)
    text = rnd_text(rng)
    tokens = a.tokenize(text, rng.random() < 0.5)
    assert "".join(tokens) == text
    return a


def valid_ranges(rng):
    return sorted({(cp, cp) for cp in (ord(c) for c in rng.sample(CHARS, rng.randrange(0, 5)))})


def fuzz_splitter(rng):
    automata = []
    while len(automata) < rng.randrange(1, 4):
        try:
            automata.append(fuzz_automaton(rng))
        except ALLOWED:
            pass
    ranges = valid_ranges if rng.random() < 0.8 else rnd_ranges
    router = _core.Router([(ranges(rng), ranges(rng)) for _ in automata]) if rng.random() < 0.6 else None
    if router is None:
        automata = automata[:1]
    splitter = _core.WordSplitter(ranges(rng), ranges(rng), automata, router)
    text = rnd_text(rng)
    parts = splitter.split(text)
    assert "".join(t for _, tokens in parts for t in tokens) == text
    if router is not None:
        runs = router.segment(text)
        assert all(0 <= s <= e <= len(text) for s, e, _, _ in runs)
    return splitter


def fuzz_encoder(rng):
    splitter = fuzz_splitter(rng)
    tokens = list(dict.fromkeys([rnd_text(rng, 4) or "x" for _ in range(rng.randrange(1, 30))]))
    n = len(tokens)
    valid = rng.random() < 0.8
    n_text = len(tokens)  # merges join these (never byte tokens, whose bytes are not their text)
    if valid and rng.random() < 0.7:  # byte tokens present, as in every vocab.json with fallback "bytes"
        tokens += [f"<0x{b:02X}>" for b in range(256)]
    n = len(tokens)
    pick = (lambda: rng.randrange(n)) if valid else (lambda: rnd_int(rng) % (n + 2))
    merges = [(pick(), pick(), pick()) for _ in range(rng.randrange(40))]
    if valid:  # merges whose result is the two tokens joined, as a vocab.json has them
        index = {t: i for i, t in enumerate(tokens)}
        merges = []
        for _ in range(rng.randrange(40)):
            a, b = rng.randrange(n_text), rng.randrange(n_text)
            joined = tokens[a] + tokens[b]
            if joined not in index:
                index[joined] = len(tokens)
                tokens.append(joined)
            merges.append((a, b, index[joined]))
        n = len(tokens)
    byte_ids = None
    if rng.random() < 0.7:
        byte_ids = [tokens.index(f"<0x{b:02X}>") for b in range(256)] if "<0x00>" in tokens else [
            pick() for _ in range(rng.choice([256, 255]))]
    enc = _core.SGPEEncoder(splitter, tokens, merges, byte_ids=byte_ids, unk_id=rnd_int(rng) if byte_ids is None
                            else None, special_ids=[pick() for _ in range(rng.randrange(3))],
                            scope=rng.choice(["words", "runs", "pieces"] * 3 + ["nope"]))
    text = rnd_text(rng, 200)
    ids = enc.encode(text)
    assert enc.encode_batch([text, "", text], [], rng.randrange(4)) == [ids, [], ids]
    if byte_ids is not None and len(set(byte_ids)) == 256:
        assert enc.decode_bytes(ids) == text.encode("utf-8", "surrogatepass")
    enc.decode_bytes([rnd_int(rng) for _ in range(rng.randrange(5))], rng.random() < 0.5)
    enc.token_bytes(rnd_int(rng))


def fuzz_engine(rng):
    symbols = list(dict.fromkeys(rnd_text(rng, 3) or "s" for _ in range(rng.randrange(1, 8))))
    if rng.random() < 0.3:
        symbols = [s.encode("utf-8", "surrogatepass") for s in symbols]
    valid = rng.random() < 0.8
    ids = [-1, *range(len(symbols))] if valid else [-1, -2, 2**40, len(symbols), *range(len(symbols))]
    words = [[rng.choice(ids) for _ in range(rng.randrange(12))] for _ in range(rng.randrange(12))]
    counts = [rng.choice([1, 2, 5, 2**40] if valid else [0, 1, -3, 2**70]) for _ in words]
    e = _core.MergeEngine(words, counts, symbols, rng.random() < 0.5)
    e.step(rnd_int(rng) % 4)
    e.train(len(symbols) + rng.randrange(10), rng.randrange(-1, 4))
    e.replay([(rnd_int(rng), rnd_int(rng))])
    e.pair_counts()
    e.words_and_counts()


def fuzz_counter(rng, tmp: Path):
    path = tmp / f"c{rng.randrange(1000)}.txt"
    data = b"".join(rng.choice([b"a b", b" ", b"\n", b"\r\n", b"\xe0\xb6\x9a", b"\xff", b"\xe0\xb6", b"\xed\xa0\x80",
                                b"x" * 5000, b"\t"]) for _ in range(rng.randrange(60)))
    path.write_bytes(data)
    counter = _core.PieceCounter()
    counter.count_files([path], threads=rng.randrange(4), skip_bad_lines=rng.random() < 0.5,
                        block_bytes=rng.choice([1, 1 << 16, 1 << 20]))
    counter.count_texts([rnd_text(rng) for _ in range(rng.randrange(5))], threads=rng.randrange(3))
    len(counter)
    counter.items()


def fuzz_building(rng):
    _core.building_merges([rnd_text(rng, 6) for _ in range(rng.randrange(10))])


def run(seconds: float, seed: int) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """Fuzz for ``seconds``; returns the calls and the expected errors by entry point. A crash
    or a panic raises."""
    rng = random.Random(seed)
    targets = {"automaton": fuzz_automaton, "splitter": fuzz_splitter, "encoder": fuzz_encoder,
               "engine": fuzz_engine, "building_merges": fuzz_building}
    calls: collections.Counter[str] = collections.Counter()
    raised: collections.Counter[str] = collections.Counter()
    end = time.monotonic() + seconds
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() < end:
            name = rng.choice([*targets, "counter"])
            calls[name] += 1
            try:
                if name == "counter":
                    fuzz_counter(rng, Path(tmp))
                else:
                    targets[name](rng)
            except ALLOWED as exc:
                raised[f"{name}: {type(exc).__name__}"] += 1
            except BaseException as exc:  # a PanicException or anything unexpected: a finding
                raise AssertionError(f"finding (seed {seed}) in {name}: {type(exc).__name__}: {exc}") from exc
    return calls, raised


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    args = ap.parse_args()
    calls, raised = run(args.seconds, args.seed)
    print(f"seed {args.seed}, {args.seconds:g} s, {sum(calls.values()):,} calls: "
          + ", ".join(f"{k} {v:,}" for k, v in sorted(calls.items())))
    print("expected errors raised: " + ", ".join(f"{k} {v:,}" for k, v in sorted(raised.items())))
    print("no crash, no panic")


if __name__ == "__main__":
    main()
