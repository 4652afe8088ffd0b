"""How fast Ctrl-C stops binary training: HF's trainer called directly (as wwho did before) vs wwho.

Each run starts a child process that counts ``--docs`` windows of ``--input`` (default /usr/bin),
then trains a 32,768-token binary vocabulary; SIGINT is sent ``--after`` seconds after training
starts (the merge phase, where HF never looks at signals), and the time from the signal to the
child's exit is printed. Indicative only: the machine may be shared.

    python benchmarks/bench_binary_interrupt.py [--input DIR] [--docs N] [--after S]
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time

CHILD = r"""
import sys
from tokenizers import Tokenizer, models, trainers
from wwho.binary import IngestOptions, count_windows
from wwho.binary.train import ALPHABET, _feed, train_from_counts
counts = count_windows([sys.argv[2]], options=IngestOptions(max_docs=int(sys.argv[3]))).counts
print("ready", flush=True)
if sys.argv[1] == "direct":
    trainer = trainers.BpeTrainer(vocab_size=32768, min_frequency=2, show_progress=False, initial_alphabet=ALPHABET)
    Tokenizer(models.BPE()).train_from_iterator(_feed(counts), trainer, length=sum(counts.values()))
else:
    train_from_counts(counts, vocab_size=32768, min_frequency=2, progress=False)
print("finished", flush=True)
"""


def run(mode: str, path: str, docs: int, after: float) -> tuple[float, str]:
    child = subprocess.Popen([sys.executable, "-c", CHILD, mode, path, str(docs)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    if child.stdout.readline().strip() != "ready":  # it failed: say why, not a bare AssertionError
        child.wait()
        raise SystemExit(f"the {mode} child failed before training (exit {child.returncode}):\n"
                         f"{child.stderr.read()[-2000:]}")
    time.sleep(after)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    child.wait()
    return time.monotonic() - sent, f"exit {child.returncode}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default="/usr/bin", help="a file or folder of binaries (default /usr/bin)")
    ap.add_argument("--docs", type=int, default=2500, help="windows counted before training (default 2500)")
    ap.add_argument("--after", type=float, default=8.0,
                    help="seconds from the start of training to SIGINT (default 8)")
    args = ap.parse_args()
    for mode in ("direct", "wwho"):
        seconds, how = run(mode, args.input, args.docs, args.after)
        print(f"{mode:>6}: stopped {seconds:.2f} s after SIGINT ({how})", flush=True)


if __name__ == "__main__":
    main()
