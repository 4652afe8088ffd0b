"""The ``wwho`` command line: one set of verbs for every tokenizer kind.

``wwho train --kind K ...`` hands its arguments to the trainer of kind ``K``
(``wwho.cli.train_<K>``); the other verbs live in one module each. This module only
dispatches and turns :class:`wwho.WwhoError` (and an ``OSError`` of the machine: a full disk,
a permission) into a one-line message and exit code 2, and Ctrl-C, at any moment, into
``wwho: interrupted`` and exit code 130 (:mod:`wwho.cli.interrupts`).
"""

from __future__ import annotations

from wwho.cli import interrupts  # first of all: it guards the command's start-up (see its docstring)

# isort: split
import argparse
import contextlib
import importlib
import os
import sys
import warnings
from collections.abc import Iterable, Iterator

from wwho.background import ThreadStartError
from wwho.cli.options import strict
from wwho.errors import WwhoError, WwhoWarning, printable
from wwho.threads import MAX_THREADS, cpus, rayon_threads  # at import: one inside a verb can swallow Ctrl-C

_python_show_warning = warnings.showwarning

#: verb -> module implementing ``add_arguments(parser)`` and ``run(args) -> int``
VERBS = {
    "syllabify": ("wwho.cli.syllabify", "split text into orthographic syllables"),
    "schema": ("wwho.cli.schema", "validate a script schema and check its grammar against its automaton"),
    "encode": ("wwho.cli.encode", "text (or bytes) to token ids"),
    "decode": ("wwho.cli.decode", "token ids to text (or bytes)"),
    "inspect": ("wwho.cli.inspect", "show what a tokenizer file holds"),
    "export": ("wwho.cli.export", "write a vocabulary in another ecosystem's format (hf)"),
    "eval": ("wwho.cli.eval", "compare tokenizers on corpora: fertility, integrity, parity"),
    "extend": ("wwho.cli.extend", "add Indic syllable tokens to a byte-level BPE (Llama 3, Qwen2, o200k), "
               "keeping every base id"),
    "serve": ("wwho.cli.serve", "a local page showing how tokenizers cut your text, side by side"),
}
#: kind -> module with ``main(argv) -> int`` for ``wwho train --kind``
TRAIN_KINDS: dict[str, str] = {
    "sgpe": "wwho.cli.train_sgpe",
    "binary": "wwho.cli.train_binary",
    "bytelevel": "wwho.cli.train_bytelevel",
}


#: kind -> one line for ``wwho train --help``
TRAIN_HELP = {
    "sgpe": "syllable-aware BPE for Indic scripts (the default); --meta adds o200k_base for the rest",
    "bytelevel": "byte-level BPE as tiktoken / GPT-2 / Llama 3 (text corpora)",
    "binary": "byte-native BPE for arbitrary files (executables, archives), an HF tokenizer.json",
}


def train_help() -> str:
    lines = ["usage: wwho train [--kind KIND] [options] INPUT...", "", "Train a tokenizer. Kinds:"]
    width = max(map(len, TRAIN_KINDS))
    lines += [f"  {kind:<{width}}  {TRAIN_HELP.get(kind, '')}" for kind in TRAIN_KINDS]
    lines += ["", ("Each kind's options: wwho train --kind KIND --help. Across kinds: --vocab-size, "
                   "--min-frequency (or --min-freq), --out/-o, --quiet (or --no-progress), --force.")]
    return "\n".join(lines)


def _dispatch_train(argv: list[str]) -> int:
    pre = argparse.ArgumentParser(prog="wwho train", add_help=False)
    pre.add_argument("--kind", default="sgpe")
    head = argv[:argv.index("--")] if "--" in argv else argv  # after --, every argument is an input
    for i, arg in enumerate(head):
        if arg == "--kind" and (i + 1 == len(head) or head[i + 1].startswith("-")):
            raise WwhoError(f"argument --kind: expected one of {', '.join(TRAIN_KINDS)}")
    known, _ = pre.parse_known_args(head)
    if ("-h" in head or "--help" in head) and "--kind" not in " ".join(head):
        print(train_help())
        return 0
    if known.kind not in TRAIN_KINDS:
        raise WwhoError(f"unknown --kind {known.kind!r}; choose from: {', '.join(TRAIN_KINDS) or 'none yet'}")
    module = importlib.import_module(TRAIN_KINDS[known.kind])
    return module.main(argv)


def build_parser(verbs: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every verb but ``train`` (whose kinds build their own), strict about repeats.

    Only the ``verbs`` named (all when None) get their options, and only their modules are
    imported: ``wwho --version`` or ``wwho encode`` does not load every verb's code.
    """
    from wwho import __version__

    chosen = set(VERBS if verbs is None else verbs)
    parser = argparse.ArgumentParser(prog="wwho", description="Syllable-aware tokenizers for Indic scripts.")
    parser.add_argument("-V", "--version", action="version", version=f"wwho {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.add_parser("train", help="train a tokenizer (wwho train --kind K --help)")
    for verb, (module_name, help_text) in VERBS.items():
        p = sub.add_parser(verb, help=help_text, description=help_text)
        if verb in chosen:
            module = importlib.import_module(module_name)
            module.add_arguments(p)
            p.set_defaults(run=module.run)
    return strict(parser)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """wwho's own warnings as one line, like its errors; others as Python shows them."""
    if issubclass(category, WwhoWarning):
        print(f"wwho: warning: {printable(str(message))}", file=sys.stderr)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


class BestEffortStream:
    """Standard error while a verb runs: a write or flush that fails (a pipe whose reader has gone,
    a log on a full disk) is dropped. Progress, warnings and messages are for a person; they must
    not stop the work, nor turn a saved model into a failure or a failure into success (a broken
    pipe on standard output means the reader of the results went away, and exits 0)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (OSError, ValueError):  # ValueError: the stream was closed
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if sys.stderr is None:
        # Started with standard error closed (2>&-): print(..., file=sys.stderr) would then write
        # errors and warnings to standard output, into the results. They go nowhere instead; the
        # exit code still says what happened.
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the process's life)
    from wwho.fileio import parsing_once

    try:
        with parsing_once():  # a verb tells the tokenizer's kind, then loads it: one parse of its JSON
            code = _run(argv)
        interrupts.finished(code)
        return code
    finally:  # also after argparse's --help, --version and usage errors, which print, then exit
        _flush_standard_output()


def _flush_standard_output() -> None:
    """Write what standard output still holds now, where a reader that went away (``| head -1``)
    can be taken quietly: Python would find it at exit, print ``BrokenPipeError`` and exit 120."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        _drop_standard_output()
    except (OSError, ValueError):  # a closed or odd stream: nothing more to write to it
        pass


def _drop_standard_output() -> None:
    """Standard output to ``/dev/null`` from now on: its reader went away, and what is still held
    (Python's buffer, flushed again at exit) has no one to read it."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no file descriptor to replace
        pass


@contextlib.contextmanager
def _standard_streams() -> Iterator[None]:
    """The verb's standard streams (inside the SIGINT handler's block, as all of a verb's work):
    a text standard output that escapes what its encoding cannot hold, a best-effort standard
    error, and ``RAYON_NUM_THREADS`` bounded before any pool reads it."""
    _lossless_stdout()
    given = sys.stderr
    sys.stderr = BestEffortStream(given)
    try:
        _bound_rayon_threads()
        yield
    finally:
        sys.stderr.flush()
        sys.stderr = given


def _no_current_directory() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def _bound_rayon_threads() -> None:
    """``RAYON_NUM_THREADS`` sizes the thread pool of Hugging Face ``tokenizers`` (the export check
    of ``wwho train`` and ``wwho export``, the binary kind), made on its first use in the process:
    ``RAYON_NUM_THREADS=100000`` would make thousands of threads, for seconds in which Ctrl-C could
    not act. A value above :data:`wwho.threads.MAX_THREADS` is lowered to this process's CPUs, with a
    warning (wwho's own pools take their sizes from ``--threads``, bounded the same way)."""
    n = rayon_threads()
    if n is not None and n > MAX_THREADS:
        use = cpus()
        os.environ["RAYON_NUM_THREADS"] = str(use)
        print(f"wwho: warning: RAYON_NUM_THREADS={n} is more than {MAX_THREADS} threads; using {use}, "
              "one per CPU", file=sys.stderr)


def _lossless_stdout() -> None:
    """Standard output in an encoding that cannot hold the text (``LC_ALL=C``, ``PYTHONIOENCODING=ascii``):
    what it cannot hold is written as Python escapes (``\\u0dc1``), not a ``UnicodeEncodeError`` after
    the work is done. (The verbs that write results as bytes write UTF-8 whatever the locale.)"""
    stream = sys.stdout
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
    if stream is None or encoding in ("utf-8", "utf8") or not hasattr(stream, "reconfigure"):
        return
    try:
        stream.reconfigure(errors="backslashreplace")
    except (OSError, ValueError):  # a stream that cannot change: left as it is
        pass


def _run(argv: list[str]) -> int:
    warnings.showwarning = _show_warning
    with interrupts.handling() as state, _standard_streams():
        try:
            code = _main(argv)
            if state.interrupted:  # a library caught the KeyboardInterrupt and went on
                return interrupts.report()
            return code
        except KeyboardInterrupt:
            return interrupts.report()
        except WwhoError as exc:
            if state.interrupted:  # compiled code reported the interrupt as an error
                return interrupts.report()
            print(f"wwho: error: {printable(str(exc))}", file=sys.stderr)  # a name may hold a newline, an escape
            return 2
        except MemoryError as exc:  # the input needs more than the process may have: said, not a traceback
            if state.interrupted:
                return interrupts.report()
            if isinstance(exc, ThreadStartError):
                print(f"wwho: error: out of memory: {exc}", file=sys.stderr)
            else:
                print("wwho: error: out of memory: this input needs more memory than the process may have (a "
                      "very long line? lower --max-line-bytes where the verb has it, or split the input)",
                      file=sys.stderr)
            return 2
        except BrokenPipeError:  # the reader went away (| head -1): quietly, as the shell's own tools
            _drop_standard_output()
            return 0
        except OSError as exc:  # the machine's, not wwho's: a full disk, a permission, a vanished file
            if state.interrupted:
                return interrupts.report()
            where = f"{exc.filename}: " if exc.filename else ""
            what = str(exc.strerror or exc)
            if not where and isinstance(exc, FileNotFoundError) and _no_current_directory():
                what = "the current directory no longer exists (deleted while the shell was in it): cd to another"
            print(f"wwho: error: {printable(where + what)}", file=sys.stderr)
            return 2
        except Exception:
            if state.interrupted:  # a library wrapped the KeyboardInterrupt in its own exception
                return interrupts.report()
            raise


#: Options naming a path wwho writes: an empty one (an unset shell variable) is refused, not taken
#: for the current directory or standard output.
OUTPUT_OPTIONS = ("-o", "--out", "--output", "--plot", "--checkpoint-dir")
#: Options whose empty value would be taken as not given (``--script ""``: the default script) or as
#: the current directory: refused as well.
INPUT_OPTIONS = ("--script", "--schema", "--parity-with", "--tiktoken-file", "--pattern", "--tokenizer",
                 "--file", "--base", "--corpus", "--allow-host")


def _refuse_empty_outputs(argv: list[str]) -> None:
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        empty = (eq and not value) if eq else (i + 1 < len(argv) and argv[i + 1] == "")
        if name in OUTPUT_OPTIONS and empty:
            raise WwhoError(f"{name} is empty: give the path of the file or directory to write")
        if name in INPUT_OPTIONS and empty:
            raise WwhoError(f"{name} is empty (an unset shell variable?): give its value, or leave the option out")


def _main(argv: list[str]) -> int:
    _refuse_empty_outputs(argv)
    if argv and argv[0] == "train":
        return _dispatch_train(argv[1:])
    parser = build_parser(argv[:1])  # a verb comes first (the top level's only options are -h and -V)
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    code = int(args.run(args) or 0)
    if getattr(args, "tiktoken_file", None):
        from wwho.cli.encode import warn_if_tiktoken_file_unused

        warn_if_tiktoken_file_unused()
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
