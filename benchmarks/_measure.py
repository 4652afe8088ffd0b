"""Benchmark plumbing: run a job in a fresh process, time it, sample the process tree's memory.

``measure(code)`` runs ``python -c code`` and returns (seconds, peak RSS in MB summed over the
process and all its children, sampled every 20 ms, stdout). Separate processes keep one
tokenizer's memory from counting against the next.

Where the shared data a benchmark needs is absent, every script ends the same way, through
``require(*paths)`` (or ``skip(reason)``): one line starting ``skipped:`` on stderr, naming what is
missing, and exit status 0, before anything is written; so does one whose optional package is not
installed (``need(module, extra)``). Nothing is ever downloaded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[1]
# $WWHO_SHARED_DATA, else ../shared/data beside the repository (a checkout elsewhere sets the variable)
DATA = Path(os.environ.get("WWHO_SHARED_DATA") or ROOT.parent / "shared" / "data")
CORPORA = DATA / "corpora"
O200K_FILE = DATA / "tiktoken" / "o200k_base.tiktoken"
#: The Hindi training text of the benchmarks (TICO-19, WMT14, Tatoeba, classical verse; 2.6 MB).
HI_TRAIN = [CORPORA / "hi" / f for f in
            ("literature-classical-ltrc.txt", "tatoeba-test.txt", "tico19-test.txt", "wmt14-newstest2014.txt")]


def skip(reason: str) -> NoReturn:
    """End the benchmark as skipped: one line ``skipped: REASON`` on stderr, exit status 0 (run_all.py
    copies the line into its report)."""
    print(f"skipped: {reason}", file=sys.stderr, flush=True)
    raise SystemExit(0)


#: The 32k SGPE vocabulary of the Sinhala news that bench_train.py trains and times, which the
#: encoding benchmarks use (:func:`ensure_vocabulary`).
SI_32K = ROOT / ".cache" / "bench_train" / "si-wwho-32000"


def ensure_vocabulary(path: Path) -> None:
    """Where no SGPE vocabulary is saved at ``path``, train :data:`SI_32K`'s into it (32k, on the
    Sinhala news; the caller requires those files). The caller loads it, fresh where it times that."""
    if not (path / "vocab.json").exists():
        from wwho.sgpe import SGPETokenizer

        print(f"training the 32k vocabulary into {path} (run bench_train.py to time it)")
        news = sorted(str(p) for p in (CORPORA / "si").glob("news-*.txt"))
        SGPETokenizer.train(news, vocab_size=32_000, progress=False).save(path)


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (an optional package: SentencePiece, matplotlib, Ray)."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def need(module: str, extra: str | None = None) -> ModuleType:
    """``module``, imported; the benchmark is skipped (see :func:`skip`) where it is not installed,
    naming the package to install (wwho's extra ``extra`` where it has one)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        how = f"pip install 'wwho[{extra}]'" if extra else f"pip install {module}"
        skip(f"{module} is not installed ({how})")


def _psutil() -> ModuleType:
    return need("psutil", "test")


def _present(path: Path) -> bool:
    if any(c in path.name for c in "*?["):  # a pattern: one match at least
        return any(path.parent.glob(path.name))
    return path.exists()


def require(*paths: Path | str) -> None:
    """Skip the benchmark (see :func:`skip`) unless every path exists; a path whose last part is a
    pattern (``si/news-*.txt``) needs one match at least. Call it before writing anything."""
    absent = [str(p) for p in paths if not _present(Path(p))]
    if absent:
        skip(f"{', '.join(absent)} {'is' if len(absent) == 1 else 'are'} absent (the shared data folder: "
             f"$WWHO_SHARED_DATA, else ../shared/data beside the repository)")


def o200k():
    """tiktoken's o200k_base, offline from the shared ranks file (the benchmark is skipped without it:
    nothing is downloaded)."""
    from wwho.bytelevel.tiktoken_loader import get_encoding

    require(O200K_FILE)
    return get_encoding("o200k_base", tiktoken_file=O200K_FILE)


def size_label(vocab_size: int) -> str:
    """A vocabulary's size as the tables name it: ``32k`` for 32,000, else the number (``32,768``)."""
    return f"{vocab_size // 1000}k" if vocab_size % 1000 == 0 else f"{vocab_size:,}"


def measure(code: str, *, interval: float = 0.02, cpu: bool = False):
    """``(seconds, peak RSS MB, stdout)``; with ``cpu=True`` also the CPU seconds (user + system) of
    the job and its children, which a busy shared machine inflates less than wall time."""
    import resource

    psutil = _psutil()  # (before the job starts: a skip leaves no child behind)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    ps = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            total = ps.memory_info().rss + sum(c.memory_info().rss for c in ps.children(recursive=True))
        except psutil.Error:
            total = 0
        peak = max(peak, total)
        time.sleep(interval)
    seconds = time.perf_counter() - t0
    out, err = proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"benchmark job failed ({proc.returncode}):\n{err[-3000:]}")
    if cpu:
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return seconds, peak / 1e6, out, used
    return seconds, peak / 1e6, out


def machine() -> str:
    import platform

    psutil = _psutil()
    return (f"{platform.processor() or platform.machine()}, {psutil.cpu_count()} cores, "
            f"{psutil.virtual_memory().total / 2**30:.0f} GiB, Python {platform.python_version()}")
