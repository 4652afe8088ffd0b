"""``wwho train --kind binary INPUT... -o tokenizer.json``: train a byte-native BPE tokenizer.

Flags override ``--config config.toml``, which overrides the defaults. Everything is
checked before the first file is read, and the output is written atomically at the
end, so a failed run leaves no file behind. The work is done by ``wwho.binary``.

It does not train text tokenizers (``--kind sgpe`` and ``--kind bytelevel`` are
:mod:`wwho.cli.train_sgpe` and :mod:`wwho.cli.train_bytelevel`), and it does not resume: a binary
run keeps no checkpoints.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from wwho.binary.budget import check as check_budget
from wwho.binary.config import resolve
from wwho.binary.ingest import count_windows
from wwho.binary.ingest_types import MODES, NothingSampledError
from wwho.binary.io import save
from wwho.binary.train import added_tokens_at_most, check_options, describe_size, train_from_counts
from wwho.binary.walk import shown
from wwho.cli.options import output_path, path_argument, strict
from wwho.cli.outputs import add_force, check_output_file, refuse_output_among_inputs
from wwho.errors import WwhoError, WwhoWarning, printable
from wwho.notices import plural, warn


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="wwho train --kind binary",
        description="Train a byte-level BPE tokenizer for arbitrary binary files with HF tokenizers. "
                    "Writes a standard tokenizer.json. Sizes accept k/M/G suffixes (binary).")
    p.add_argument("--kind", help=argparse.SUPPRESS)
    p.add_argument("inputs", nargs="*", metavar="INPUT", type=path_argument, help="files and directories to train on")
    p.add_argument("-o", "--output", "--out", dest="output", type=output_path,
                   help="tokenizer.json to write (an existing file needs --force)")
    add_force(p)
    p.add_argument("--config", help="TOML file with any of these options (flags override it)")
    p.add_argument("--pretty", action="store_true", default=None, help="indent the JSON")

    g = p.add_argument_group("training")
    g.add_argument("--vocab-size",
                   help="total vocabulary incl. special tokens, before padding (default 32768)")
    g.add_argument("--min-frequency", "--min-freq", dest="min_frequency",
                   help="stop merging when the best pair occurs fewer times (default 2: --vocab-size ends "
                        "training on a megabyte or more)")
    g.add_argument("--max-token-length", help="longest token in bytes (default: no limit)")
    g.add_argument("--threads", help="threads for the HF trainer (default: all cores)")
    _switch(g, "progress", "progress bars on stderr, also when it is not a terminal (default on)",
            on="--progress", off="--no-progress")
    g.add_argument("--quiet", dest="progress", action="store_false", default=None,
                   help="no progress output (same as --no-progress)")

    g = p.add_argument_group("memory (estimated from the file sizes before anything is read)")
    g.add_argument("--memory-budget", metavar="SIZE",
                   help="refuse (or sample, --over-budget sample) when training would need more "
                        "(default: half of physical memory, or of a container's memory limit where lower); e.g. 2G")
    g.add_argument("--over-budget", choices=("refuse", "sample"),
                   help="refuse: stop and say which --sample-rate / --max-docs fit (default); "
                        "sample: lower --sample-rate to fit")

    g = p.add_argument_group("special tokens")
    _switch(g, "standard_specials", "<|start|> <|end|> <|sep|> <|cls|> <|pad|> (default on)",
            on="--with-standard-specials", off="--no-standard-specials")
    _switch(g, "mask", "<|mask|> (default on)", on="--with-mask", off="--no-mask")
    _switch(g, "unk", "<|unk|> (default on)", on="--with-unk", off="--no-unk")
    g.add_argument("--reserve", metavar="N",
                   help="<|reserved:0|>..<|reserved:N-1|> placeholders (default 128)")
    _switch(g, "template",
            "post-processor <|start|> $A <|end|> / <|start|> $A <|sep|> $B <|end|> (default off)",
            on="--with-template", off="--no-template")
    _switch(g, "pad_to_power_of_two", "pad the total vocabulary to a power of two with reserved tokens "
            "(default on)", on="--pad-to-power-of-two", off="--no-pad")

    g = p.add_argument_group("input files")
    _switch(g, "follow_symlinks", "follow symlinks inside directories (default off)",
            on="--follow-symlinks", off="--no-follow-symlinks")
    g.add_argument("--ext", action="append",
                   help="only files inside directories ending with these extensions "
                        "(repeat or comma-separate: --ext so,gz)")
    g.add_argument("--max-file-size", help="skip files larger than this (default: no limit)")

    g = p.add_argument_group("windows")
    g.add_argument("--mode", choices=MODES, help="file: whole files; fixed: --window-bytes pieces (default); "
                   "random: 2^min-exp..2^max-exp bytes; delim: pieces ending at --delimiter-hex")
    g.add_argument("--window-bytes", help="fixed window size; longest piece in delim mode (default 4096)")
    g.add_argument("--min-exp", help="random mode: smallest window 2^N bytes (default 3)")
    g.add_argument("--max-exp", help="random mode: largest window 2^N bytes (default 14)")
    g.add_argument("--delimiter-hex", help="delim mode: delimiter bytes in hex, e.g. 0a or 0d0a")

    g = p.add_argument_group("sampling (bounds memory)")
    g.add_argument("--max-docs", help="keep a uniform random sample of at most N windows in total")
    g.add_argument("--max-docs-per-file", help="keep at most N windows of each file (uniform random)")
    g.add_argument("--sample-rate", help="keep each window with this probability (default 1.0)")
    g.add_argument("--seed", help="seed for random windows and sampling (default 0)")
    return strict(p)


def _switch(g: argparse._ArgumentGroup, dest: str, help_text: str, *, on: str, off: str) -> None:
    g.add_argument(on, dest=dest, action="store_true", default=None, help=f"{help_text}; opposite: {off}")
    g.add_argument(off, dest=dest, action="store_false", default=None, help=argparse.SUPPRESS)


def _refuse_a_corpus_file(output: Path, inputs: list[Path]) -> None:
    """An existing output inside an input directory (where it points, for a link) is left out of the
    training data and replaced with ``--force``: only a binary tokenizer, an earlier run's output. Any
    other file there is the user's corpus (``-o run/ls --force`` with ``run`` an input replaced a
    program that was training data), refused with ``--force`` too."""
    from wwho.binary.io import is_binary_tokenizer

    if not output.exists():
        return
    where = Path(os.path.realpath(output))
    for path in inputs:
        folder = Path(os.path.realpath(path))
        if folder.is_dir() and folder in where.parents and not is_binary_tokenizer(where):
            raise WwhoError(f"{printable(str(output))}: -o/--output is a file in the input directory "
                            f"{printable(str(path))} that is no binary tokenizer (an earlier output): a file "
                            "of yours, which --force would replace; choose another output")


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    flags = {k: v for k, v in vars(args).items() if k not in ("kind", "config", "force")}
    run = resolve(flags, args.config)
    check_output_file(run.output, force=args.force)
    refuse_output_among_inputs(run.output, run.inputs, flag="-o/--output")
    _refuse_a_corpus_file(run.output, run.inputs)
    from wwho.sgpe import checkpoints

    checkpoints.refuse_as_output(run.output, flag="-o/--output", file=True)  # a kept SGPE --checkpoint-dir
    specials = len(check_options(**run.train))  # fail on a bad vocabulary size before reading any input

    progress = run.train["progress"]
    exclude = [run.output]  # an existing output inside an input directory is not training data
    added = added_tokens_at_most(specials, run.train["vocab_size"], run.train["pad_to_power_of_two"])
    ingest, estimate, note = check_budget(run.inputs, run.ingest, budget=run.memory_budget,
                                          over_budget=run.over_budget, exclude=exclude, added_tokens=added)
    if note:
        warn(note, WwhoWarning)  # it changes the result: said even with --quiet
    say = _say if progress else _silent
    if not note:
        say(estimate.describe())
    started = time.perf_counter()
    try:  # (no more of each file than was estimated: one that grew since is cut there, and said)
        counted = count_windows(run.inputs, options=ingest, progress=progress, exclude=exclude, sizes=estimate.sizes)
    except NothingSampledError as exc:  # said with the flags, and why the rate was what it was
        advice = ("--over-budget sample chose that rate to fit --memory-budget: raise --memory-budget, or "
                  "bound the data with --max-docs N instead of sampling") if note else None
        raise NothingSampledError(exc.rate, exc.windows, exc.where, name="--sample-rate", advice=advice) from None
    st = counted.stats
    read_s = time.perf_counter() - started
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(st.skipped.items())) or "none"
    say(f"read {st.bytes_read:,} bytes from {plural(st.files, 'file')} in {read_s:.1f}s (skipped: {skipped}); "
        f"{st.windows_seen:,} windows, {st.windows_counted:,} kept, {st.distinct:,} distinct")

    tokenizer = train_from_counts(counted.counts, **run.train)
    del counted
    save(tokenizer, run.output, pretty=run.pretty, replace=args.force)
    total = tokenizer.get_vocab_size(with_added_tokens=True)
    model = tokenizer.get_vocab_size(with_added_tokens=False)
    say(f"wrote {shown(run.output)}: {describe_size(model, specials, total - model - specials)} "
        f"({time.perf_counter() - started:.1f}s)")
    return 0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _silent(line: str) -> None:
    pass
