"""Counting a corpus: documents -> pre-token ("piece") frequencies, in worker processes.

Trainers do not tokenize every occurrence of every word. They split each document
into pieces with one C-backed regex (``findall``) and count them with ``Counter``
(C-backed too); the expensive part (syllables, words) then runs once per *distinct*
piece. For SGPE the pieces are whitespace-delimited chunks with the space before them
(``PIECES``); byte-level BPE passes its own pre-tokenizer pattern.

Documents are cut into batches of about ``batch_bytes`` in input order, counted in a
``multiprocessing`` pool (``imap``, ordered), and summed in the main process. When
the running counter holds more than ``max_in_memory`` distinct pieces it is spilled to
a sorted file in a temporary directory; at the end the spills are merged exactly with
``heapq.merge`` (an external merge sort), so memory is bounded by the number of
distinct pieces kept, not by the corpus. The result does not depend on the number of
workers. (Spec 001 pruned partial counters approximately while merging; the exact
merge gives the same memory bound without changing any count.)

SGPE's pattern (``PIECES``) is counted by the compiled core instead (:func:`count_corpus`,
``rust/src/count.rs``): plain-text files are read there in blocks shared among threads
without the GIL, other formats come through :func:`wwho.corpus.iter_documents` in batches,
and the counts (64-bit) stay in the core for the SGPE trainer's next phase. Its counts are
held in memory: about 60 bytes plus the piece's UTF-8 bytes per distinct piece.

This module knows nothing of syllables or vocabularies.
"""

from __future__ import annotations

import heapq
import itertools
import multiprocessing as mp
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from wwho import _core
from wwho.corpus import MAX_LINE_BYTES, CorpusStats, file_format, iter_documents
from wwho.progress import progress_bar

#: SGPE pieces: a whitespace-free chunk with the single space before it, or one whitespace character.
PIECES = r" ?[^ \t\n\r]+|[ \t\n\r]"

_worker_findall = None


def _init_worker(pattern: str, engine: str) -> None:
    global _worker_findall
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


def _batches(documents: Iterable[str], batch_bytes: int) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for doc in documents:
        batch.append(doc)
        size += len(doc)
        if size >= batch_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def count_pieces(
    documents: Iterable[str],
    *,
    pattern: str = PIECES,
    engine: str = "re",
    workers: int | None = None,
    batch_bytes: int = 8_000_000,
    max_in_memory: int = 5_000_000,
    spill_dir: str | os.PathLike | None = None,
    progress: bool = True,
) -> Counter[str]:
    """Count the pieces of every document. See the module docstring."""
    if pattern == PIECES and engine == "re":  # SGPE's pieces: the core counts them
        counter = _core.PieceCounter()
        with progress_bar(desc="counting", unit="char", unit_scale=True, disable=not progress) as bar:
            for batch in _batches(documents, batch_bytes):
                counter.count_texts(batch, threads=0 if workers is None else max(1, int(workers)))
                bar.update(sum(map(len, batch)))
        return Counter(dict(counter.items()))
    workers = default_workers() if workers is None else max(1, int(workers))
    total: Counter[str] = Counter()
    spills: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="wwho-count-", dir=spill_dir) as tmp:
        bar = progress_bar(desc="counting", unit="char", unit_scale=True, disable=not progress)
        batches = _batches(documents, batch_bytes)
        if workers == 1:
            _init_worker(pattern, engine)
            results: Iterable[tuple[Counter[str], int]] = map(_count_batch, batches)
            pool = None
        else:
            pool = mp.get_context("fork").Pool(workers, _init_worker, (pattern, engine))
            results = pool.imap(_count_batch, batches)
        try:
            for counts, size in results:
                total.update(counts)
                bar.update(size)
                if len(total) > max_in_memory:
                    spills.append(_spill(total, Path(tmp), len(spills)))
                    total = Counter()
        finally:
            if pool is not None:
                pool.terminate()
            bar.close()
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


def count_corpus(
    files: list[Path],
    *,
    text_field: str = "text",
    skip_bad_lines: bool = False,
    stats: CorpusStats | None = None,
    workers: int | None = None,
    progress: bool = True,
    router: _core.Router | None = None,
    batch_bytes: int = 8_000_000,
    max_line_bytes: int = MAX_LINE_BYTES,
    prefix_space: bool = False,
    span_breaks: str | None = None,
) -> _core.PieceCounter:
    """SGPE piece counts of corpus files, held in the core (see the module docstring).

    ``workers`` threads (default: all cores). ``router``: count only the script runs of each
    document. Plain uncompressed text files are read by the core; JSONL and compressed files
    through :func:`wwho.corpus.iter_documents`. Bad lines are reported as there (``file:line``),
    and so are lines longer than ``max_line_bytes``.
    """
    stats = stats if stats is not None else CorpusStats()
    counter = _core.PieceCounter(router, prefix_space=prefix_space, span_breaks=span_breaks)
    with progress_bar(desc="counting", unit="B", unit_scale=True, disable=not progress) as bar:
        for path in files:
            count_file(counter, path, text_field=text_field, skip_bad_lines=skip_bad_lines, stats=stats,
                       workers=workers, progress=bar.update, batch_bytes=batch_bytes,
                       max_line_bytes=max_line_bytes)
    return counter


def core_reads(path: Path, max_line_bytes: int = MAX_LINE_BYTES) -> bool:
    """Whether :func:`count_file` has the core read ``path`` (plain, uncompressed text), which
    is also what lets a file be cut into byte ranges (``start``/``end``)."""
    return (_block_bytes(max_line_bytes) >= 1 << 16 and file_format(path) == "text"
            and path.suffix.lower() not in (".gz", ".xz", ".bz2"))


def _block_bytes(max_line_bytes: int) -> int:
    # The core checks the length of a line that starts a block; every other line of a block is
    # shorter than the block, so blocks no longer than the limit make the check complete.
    return min(8 << 20, max_line_bytes)


def count_file(
    counter: _core.PieceCounter,
    path: Path,
    *,
    text_field: str = "text",
    skip_bad_lines: bool = False,
    stats: CorpusStats,
    workers: int | None = None,
    progress=None,
    batch_bytes: int = 8_000_000,
    max_line_bytes: int = MAX_LINE_BYTES,
    start: int = 0,
    end: int | None = None,
) -> None:
    """Count one corpus file into ``counter`` (the body of :func:`count_corpus`, also what a
    shard of a cluster run executes: :mod:`wwho.scale`). ``start``/``end``: only those bytes
    of the file, cut at line ends (plain text read by the core only, see :func:`core_reads`);
    line numbers in messages stay the file's. ``progress(n)`` is called with bytes read."""
    threads = 0 if workers is None else max(1, int(workers))
    if core_reads(path, max_line_bytes):
        n_files, documents, size, bad, first_bad = counter.count_files(
            [path], threads=threads, skip_bad_lines=skip_bad_lines, progress=progress,
            block_bytes=_block_bytes(max_line_bytes), max_line_bytes=max_line_bytes, start=start, end=end)
        stats.files += n_files
        stats.documents += documents
        stats.bytes += size
        stats.bad_lines += bad
        stats.first_bad.extend(first_bad[: max(0, 5 - len(stats.first_bad))])
        return
    if start != 0 or end is not None:
        raise ValueError(f"{path}: only plain uncompressed text files can be counted by byte range")
    before = stats.bytes
    docs = iter_documents([path], text_field=text_field, skip_bad_lines=skip_bad_lines, stats=stats,
                          max_line_bytes=max_line_bytes)
    for batch in _batches(docs, batch_bytes):
        counter.count_texts(batch, threads=threads)
        if progress is not None:
            progress(stats.bytes - before)
        before = stats.bytes


def default_workers() -> int:
    """All cores but one, at least one (the main process merges while workers count)."""
    return max(1, (os.cpu_count() or 1) - 1)
