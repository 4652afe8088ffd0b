"""A small GPT on each tokenizer's token streams, scored in bits per character: bench_lm.py's GPU model.

    python benchmarks/gpt.py STREAMS.npz ... [--steps 1200] [--batch 64] [--seeds 0 1] [--jobs 8]
                             [--more-seeds-for KIND ...] [--deadline SECONDS] [--out results.jsonl]
    python benchmarks/gpt.py --table results.jsonl

Each STREAMS file (``bench_lm.py --export DIR`` writes one per language and tokenizer) holds one
tokenizer's encoding of the training lines (``fit``), the dev slice (every 50th training line, never
trained on) and FLORES devtest (``test``), its vocabulary size, the test's character count (the
original lines plus one newline each, the same for every tokenizer) and the n-gram bits that
bench_lm.py measured on it. It needs numpy and PyTorch only, so it runs where wwho is not built.

The model is the same for every stream: a pre-norm GPT, 6 layers, 384 wide, 6 heads, context 256,
learned positions, the output layer tied to the token embeddings, dropout 0.2, bf16 autocast
(``--size base``; ``--size small``: 4 layers, 256 wide, 4 heads, dropout 0.3, for a text too small
for the base model to beat an n-gram model on, such as the 3.2 MB of shared Hindi). Each
line is a document ``begin ids end``; training draws ``--batch`` random windows of 257 tokens from
the concatenated documents per step, AdamW (lr 1e-3, 100 warm-up steps, cosine to a tenth, weight
decay 0.1), the same seed, steps and tokens per step for every tokenizer. Every ``--every`` steps the
dev slice is scored, and the weights with its least loss are the ones scored on FLORES: a small
text is seen many times over, and the dev slice picks the step before the model overfits.

Scoring predicts every token of a line and its end from the line's start alone, as bench_lm.py's
n-gram models do; a line longer than the context (no FLORES line is, at 8,000 tokens) is scored in
windows that move on by half a context, so each token sees at least 128 tokens before it. Bits per
character = the test's total bits / its characters.

Several streams train at once in separate processes on the one GPU (``--jobs``); each writes one
JSON line to ``--out`` when done. With ``--deadline``, a wave of seeds is started only while the
previous wave's time still fits before it. What it deliberately does not do: tune anything per
tokenizer, or read FLORES before the weights are chosen.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

CTX, WIDTH, LAYERS, HEADS, DROPOUT = 256, 384, 6, 6, 0.2
#: ``--size``: (layers, width, heads, dropout); the same for every stream of a run.
SIZES = {"base": (6, 384, 6, 0.2), "small": (4, 256, 4, 0.3)}
LR, WARMUP, WEIGHT_DECAY = 1e-3, 100, 0.1


def documents(ids: np.ndarray, offsets: np.ndarray, vocab: int) -> np.ndarray:
    """Each line as ``begin ids end`` (begin = vocab, end = vocab + 1), concatenated."""
    n = np.diff(offsets)
    out = np.full(len(ids) + 2 * len(n), vocab, np.int64)
    starts = offsets[:-1] + 2 * np.arange(len(n))
    out[np.arange(len(ids)) - np.repeat(offsets[:-1], n) + np.repeat(starts + 1, n)] = ids
    out[starts + n + 1] = vocab + 1
    return out


def windows(ids: np.ndarray, offsets: np.ndarray, vocab: int, ctx: int = CTX):
    """Every target of every line (its ids, then its end) exactly once, as (inputs, targets) pairs
    of at most ``ctx`` tokens; a target that another window scores is -100 (ignored). A line
    longer than the context is scored in windows that move on by half of it, so that every
    target sees at least half a context of its line before it (or all of it)."""
    step = max(1, ctx // 2)
    items = []
    for i in range(len(offsets) - 1):
        doc = np.concatenate(([vocab], ids[offsets[i] : offsets[i + 1]], [vocab + 1])).astype(np.int64)
        first = 1  # the first target not yet scored
        while first < len(doc):
            end = min(first + (ctx if first == 1 else step), len(doc))  # targets first .. end-1
            start = max(0, end - 1 - ctx)
            x, y = doc[start : end - 1], doc[start + 1 : end].copy()
            y[: len(y) - (end - first)] = -100
            items.append((x, y))
            first = end
    return items


def batches(items, size: int):
    """Padded (inputs, targets) arrays, items sorted by length so that padding stays small."""
    items = sorted(items, key=lambda xy: len(xy[0]))
    for at in range(0, len(items), size):
        chunk = items[at : at + size]
        width = max(len(x) for x, _ in chunk)
        x = np.zeros((len(chunk), width), np.int64)
        y = np.full((len(chunk), width), -100, np.int64)
        for row, (a, b) in enumerate(chunk):
            x[row, : len(a)], y[row, : len(b)] = a, b
        yield x, y


def build_model(vocab: int):
    import torch
    from torch import nn
    from torch.nn import functional as F

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
            self.qkv, self.proj = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
            self.up, self.down = nn.Linear(WIDTH, 4 * WIDTH), nn.Linear(4 * WIDTH, WIDTH)
            self.drop = nn.Dropout(DROPOUT)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, c // HEADS).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=DROPOUT if self.training else 0.0
            )
            x = x + self.drop(self.proj(a.transpose(1, 2).reshape(b, t, c)))
            return x + self.drop(self.down(F.gelu(self.up(self.ln2(x)))))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab + 2, WIDTH), nn.Embedding(CTX, WIDTH)
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.norm, self.drop = nn.LayerNorm(WIDTH), nn.Dropout(DROPOUT)
            for name, p in self.named_parameters():
                if p.dim() == 2:  # residual projections scaled down with depth, as GPT-2 does
                    std = (
                        0.02 / math.sqrt(2 * LAYERS)
                        if name.endswith(("proj.weight", "down.weight"))
                        else 0.02
                    )
                    nn.init.normal_(p, 0.0, std)
                elif name.endswith("bias"):
                    nn.init.zeros_(p)

        def forward(self, x):
            h = self.drop(self.tok(x) + self.pos(torch.arange(x.shape[1], device=x.device)))
            for block in self.blocks:
                h = block(h)
            return self.norm(h) @ self.tok.weight.T

    return GPT()


def train(path: Path, steps: int, batch: int, seed: int, every: int, device: str) -> dict:
    import torch
    from torch.nn import functional as F

    z = np.load(path)
    vocab = int(z["vocab"])
    torch.manual_seed(seed)
    gen = torch.Generator(device=device).manual_seed(seed)
    stream = torch.from_numpy(documents(z["fit_ids"], z["fit_off"], vocab)).to(device)
    dev_items = windows(z["dev_ids"], z["dev_off"], vocab)
    test_items = windows(z["test_ids"], z["test_off"], vocab)
    model = build_model(vocab).to(device)
    decay = [p for p in model.parameters() if p.dim() == 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": rest, "weight_decay": 0.0}],
        lr=LR,
        betas=(0.9, 0.95),
        fused=device == "cuda",
    )

    def lr_at(step: int) -> float:
        if step < WARMUP:
            return LR * (step + 1) / WARMUP
        done = (step - WARMUP) / max(1, steps - WARMUP)
        return LR * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * done)))

    @torch.no_grad()
    def nats(items) -> float:
        model.eval()
        total = torch.zeros((), dtype=torch.float64, device=device)
        for x, y in batches(items, 256):
            x, y = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
            with torch.autocast(device, torch.bfloat16):
                logits = model(x)
            total += F.cross_entropy(
                logits.float().flatten(0, 1), y.flatten(), ignore_index=-100, reduction="sum"
            )
        model.train()
        return float(total)

    offsets = torch.arange(CTX + 1, device=device)
    curve, best, losses = [], (float("inf"), 0, None), []
    t0 = time.perf_counter()
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        at = torch.randint(0, len(stream) - CTX - 1, (batch,), generator=gen, device=device)
        xy = stream[at[:, None] + offsets]
        with torch.autocast(device, torch.bfloat16):
            logits = model(xy[:, :-1])
        loss = F.cross_entropy(logits.float().flatten(0, 1), xy[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.detach())
        if (step + 1) % every == 0 or step + 1 == steps:
            on_dev = nats(dev_items)
            train_loss = float(torch.stack(losses).mean())
            losses = []
            curve.append((step + 1, round(train_loss, 4), round(on_dev / len(z["dev_ids"]), 4)))
            if on_dev < best[0]:
                best = (on_dev, step + 1, {k: v.detach().clone() for k, v in model.state_dict().items()})
    seconds = time.perf_counter() - t0
    model.load_state_dict(best[2])
    test_nats = nats(test_items)
    chars = int(z["chars"])
    return {
        "lang": str(z["lang"]),
        "kind": str(z["kind"]),
        "seed": seed,
        "size": next((k for k, v in SIZES.items() if v == (LAYERS, WIDTH, HEADS, DROPOUT)), "custom"),
        "steps": steps,
        "batch": batch,
        "vocab": vocab,
        "tokens_per_word": float(z["tokens_per_word"]),
        "chars": chars,
        "bits_per_char": test_nats / math.log(2) / chars,
        "nats_per_token": test_nats / (len(z["test_ids"]) + len(z["test_off"]) - 1),
        "best_step": best[1],
        "seconds": round(seconds, 1),
        "fit_tokens": int(len(z["fit_ids"])),
        "ngram": {k: float(v) for k, v in json.loads(str(z["ngram"])).items()},
        "curve": curve,
        "device": torch.cuda.get_device_name() if device == "cuda" else device,
    }


def run_all(paths: list[Path], args) -> list[str]:
    """One process per (stream, seed), ``--jobs`` at a time; a seed's wave only while it fits.
    Returns the runs that failed, each as ``STREAM seed N``."""
    started, out, failed = time.perf_counter(), Path(args.out), []
    for n, seed in enumerate(args.seeds):
        wave = time.perf_counter()
        # later seeds: only the streams named by --more-seeds-for (all of them when it is not given)
        chosen = [
            p
            for p in paths
            if n == 0 or not args.more_seeds_for or p.stem.split("-", 1)[1] in args.more_seeds_for
        ]
        options = ["--seed", str(seed), "--steps", str(args.steps), "--batch", str(args.batch), "--every",
                   str(args.every), "--size", args.size, "--out", str(out)] + (["--cpu"] if args.cpu else [])
        # (what a failure names, the command)
        pending = [(f"{p} seed {seed}", [sys.executable, __file__, "--one", str(p), *options]) for p in chosen]
        running: list[tuple[str, subprocess.Popen]] = []
        while pending or running:
            while pending and len(running) < args.jobs:
                label, command = pending.pop(0)
                running.append((label, subprocess.Popen(command)))
            time.sleep(0.5)
            for label, proc in [r for r in running if r[1].poll() is not None]:
                running.remove((label, proc))
                if proc.returncode:
                    print(f"a run failed (exit status {proc.returncode}): {label}", flush=True)
                    failed.append(label)
        took = time.perf_counter() - wave
        print(f"seed {seed}: {len(chosen)} runs in {took:.0f} s", flush=True)
        if args.deadline and time.perf_counter() - started + took > args.deadline:
            print(
                f"stopping after seed {seed}: another wave would pass the {args.deadline} s deadline",
                flush=True,
            )
            break
    return failed


def table(out: Path) -> None:
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    by = {}
    for r in rows:
        by.setdefault(
            (r["lang"], r["kind"] + ("" if r.get("size", "base") == "base" else f" ({r['size']})")), []
        ).append(r)
    print(
        f"{'lang':4} {'tokenizer':22} {'tok/word':>8} {'2-gram':>7} {'3-gram':>7} {'4-gram':>7} "
        f"{'GPT bits/char (seeds)':>28} {'mean':>7} {'best step':>10}"
    )
    for (lang, kind), rs in sorted(by.items()):
        rs.sort(key=lambda r: r["seed"])
        bits = [r["bits_per_char"] for r in rs]
        g = rs[0]["ngram"]
        print(
            f"{lang:4} {kind:22} {rs[0]['tokens_per_word']:8.3f} {g.get('2', 0):7.4f} {g.get('3', 0):7.4f} "
            f"{g.get('4', 0):7.4f} {' / '.join(f'{b:.4f}' for b in bits):>28} {np.mean(bits):7.4f} "
            f"{','.join(str(r['best_step']) for r in rs):>10}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("streams", type=Path, nargs="*")
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--batch", type=int, default=64, help="windows of 256 tokens per step")
    ap.add_argument("--every", type=int, default=100, help="score the dev slice every N steps")
    ap.add_argument("--seeds", type=int, nargs="*", default=[0])
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument(
        "--more-seeds-for",
        nargs="*",
        default=[],
        metavar="KIND",
        help="run the seeds after the first only for these tokenizers",
    )
    ap.add_argument("--jobs", type=int, default=8, help="runs at once on the GPU")
    ap.add_argument("--deadline", type=float, default=0, help="start no wave of seeds that would end past it")
    ap.add_argument("--out", default="gpt-results.jsonl")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cpu", action="store_true", help="run on the CPU (a check of the code, not a result)")
    ap.add_argument("--size", choices=sorted(SIZES), default="base", help="the model (see above)")
    ap.add_argument("--table", type=Path, help="print the table of a results file and exit")
    args = ap.parse_args()
    if args.table:
        if not args.table.is_file():
            ap.error(f"--table: {args.table}: no such file")
        table(args.table)
        return
    global LAYERS, WIDTH, HEADS, DROPOUT
    LAYERS, WIDTH, HEADS, DROPOUT = SIZES[args.size]
    if args.one:
        device = "cpu" if args.cpu else "cuda"
        import torch

        if device == "cuda" and not torch.cuda.is_available():  # said in one line, not by a CUDA traceback
            sys.exit("gpt.py: no CUDA device here (--cpu runs on the CPU, as a check of the code)")
        result = train(args.streams[0], args.steps, args.batch, args.seed, args.every, device)
        with open(args.out, "a", encoding="utf-8") as f:  # one short line per run: appends do not interleave
            f.write(json.dumps(result) + "\n")
        print(
            f"{result['lang']} {result['kind']} seed {args.seed}: {result['bits_per_char']:.4f} bits/char "
            f"(best step {result['best_step']}, {result['seconds']} s)",
            flush=True,
        )
        return
    if not args.streams:
        sys.exit("no streams: bench_lm.py --export DIR writes them")
    missing = [str(p) for p in args.streams if not p.is_file()]
    if missing:  # else each run would fail on it, one traceback per seed
        ap.error(f"no such streams file: {', '.join(missing)} (bench_lm.py --export DIR writes them)")
    if importlib.util.find_spec("torch") is None:
        sys.exit("gpt.py: PyTorch is not installed here (the model needs it; bench_lm.py --export DIR writes "
                 "the streams for a machine that has it)")
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    failed = run_all(args.streams, args)
    if Path(args.out).is_file():  # the runs that ended (and any earlier ones the file holds)
        table(Path(args.out))
    if failed:
        sys.exit(f"gpt.py: {len(failed)} run{'s' if len(failed) > 1 else ''} failed: {'; '.join(failed)}")


if __name__ == "__main__":
    main()
