"""Counting a corpus in pure Python: documents -> piece frequencies with ``findall``, in worker processes.

The tests' reference for the core's counting (``rust/src/counting/``: :func:`wwho.counting.count_corpus`
for SGPE's pieces, :func:`wwho.bytelevel.train.count_bytelevel` for a pre-tokenizer, which ``wwho
extend`` uses too). Production never runs it.

Each document is split into pieces with one regex (``findall``: only the matches count, never the
text between them) and counted with ``Counter``. Documents are cut into batches of about
``batch_bytes`` in input order, counted in a ``multiprocessing`` pool (``imap``, ordered), and summed
in the main process. When the running counter holds more than ``max_in_memory`` distinct pieces it
is spilled to a sorted file in a temporary directory; at the end the spills are merged exactly with
``heapq.merge`` (an external merge sort), so memory is bounded by the number of distinct pieces
kept, not by the corpus. The result does not depend on the number of workers.
"""

from __future__ import annotations

import heapq
import itertools
import multiprocessing as mp
import os
import signal
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from wwho.counting import PIECES, batches

_worker_findall = None


def _default_sigterm() -> None:
    """Pool.terminate() stops the workers with SIGTERM; a handler the test process had (ray.init()
    installs one that exits) comes with the fork, and a worker it did not stop held a lock another
    had died with: a test hung in terminate() (seen once in `make test`)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _init_worker(pattern: str, engine: str, forked: bool = False) -> None:
    global _worker_findall
    if forked:
        _default_sigterm()
    if engine == "regex":
        import regex

        _worker_findall = regex.compile(pattern).findall
    else:
        import re

        _worker_findall = re.compile(pattern).findall


def _count_batch(docs: list[str]) -> tuple[Counter[str], int]:
    counts: Counter[str] = Counter()
    findall = _worker_findall
    size = 0
    for doc in docs:
        counts.update(findall(doc))  # type: ignore[misc]
        size += len(doc)
    return counts, size


def count_pieces(
    documents: Iterable[str],
    *,
    pattern: str = PIECES,
    engine: str = "re",
    workers: int | None = None,
    batch_bytes: int = 8_000_000,
    max_in_memory: int = 5_000_000,
    spill_dir: str | os.PathLike | None = None,
) -> Counter[str]:
    """Count the ``findall`` matches of ``pattern`` in every document. See the module docstring."""
    workers = default_workers() if workers is None else max(1, int(workers))
    total: Counter[str] = Counter()
    spills: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="wwho-count-", dir=spill_dir) as tmp:
        chunks = batches(documents, batch_bytes)
        if workers == 1:
            _init_worker(pattern, engine)
            results: Iterable[tuple[Counter[str], int]] = map(_count_batch, chunks)
            pool = None
        else:
            pool = mp.get_context("fork").Pool(workers, _init_worker, (pattern, engine, True))
            results = pool.imap(_count_batch, chunks)
        try:
            for counts, _size in results:
                total.update(counts)
                if len(total) > max_in_memory:
                    spills.append(_spill(total, Path(tmp), len(spills)))
                    total = Counter()
        except BaseException:
            if pool is not None:
                pool.terminate()
            raise
        else:
            if pool is not None:  # every batch answered: the workers end on their own
                pool.close()
                pool.join()
        if spills:
            if total:
                spills.append(_spill(total, Path(tmp), len(spills)))
            total = _merge_spills(spills)
    return total


def _spill(counts: Counter[str], directory: Path, index: int) -> Path:
    # Pieces never contain a tab or newline except the one-character whitespace pieces,
    # which are escaped so that each record is exactly one line.
    path = directory / f"spill-{index:05d}.tsv"
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for key, piece in sorted((_escape(p), p) for p in counts):
            f.write(f"{key}\t{counts[piece]}\n")
    return path


def _escape(piece: str) -> str:
    return piece.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append({"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}[text[i + 1]])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _read_spill(path: Path) -> Iterator[tuple[str, int]]:
    with open(path, encoding="utf-8", newline="\n") as f:
        for line in f:
            key, _, count = line.rstrip("\n").rpartition("\t")
            yield key, int(count)


def _merge_spills(paths: list[Path]) -> Counter[str]:
    total: Counter[str] = Counter()
    # Records are merged by their escaped form (the order they were sorted and written in).
    merged = heapq.merge(*(_read_spill(p) for p in paths), key=lambda kv: kv[0])
    for key, group in itertools.groupby(merged, key=lambda kv: kv[0]):
        total[_unescape(key)] = sum(c for _, c in group)
    return total


def default_workers() -> int:
    """All cores but one, at least one (the main process merges while workers count)."""
    return max(1, (os.cpu_count() or 1) - 1)
