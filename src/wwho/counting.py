"""Counting a corpus in the compiled core: SGPE's pieces (:data:`PIECES`) and the batches of documents the core counts.

Trainers do not tokenize every occurrence of every word: they count the pieces of the corpus
once, and the expensive part (syllables, words) then runs once per *distinct* piece. For SGPE
the pieces are whitespace-delimited chunks with the space before them (:data:`PIECES`), counted
by the core (:func:`count_corpus`, ``rust/src/counting/``): plain-text files are read there in
blocks shared among threads without the GIL, other formats come through
:func:`wwho.corpus.iter_documents` in batches (:func:`batches`), and the counts (64-bit) stay in
the core for the SGPE trainer's next phase. Counts are held in memory: about 60 bytes plus the
piece's UTF-8 bytes per distinct piece. Byte-level training and ``wwho extend`` count in the core
too, with a pre-tokenizer (:func:`wwho.bytelevel.train.count_bytelevel`).

The pure-Python counter these replaced (``findall`` in a process pool, spill files) is the
tests' reference: ``tests/reference/counting.py``. This module knows nothing of syllables or
vocabularies.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from wwho import _core
from wwho.corpus import (
    MAX_LINE_BYTES,
    CorpusStats,
    check_text_file,
    file_format,
    iter_documents,
    unchanged_while_read,
)
from wwho.progress import progress_bar

#: SGPE pieces: a whitespace-free chunk with the single space before it, or one whitespace character.
PIECES = r" ?[^ \t\n\r]+|[ \t\n\r]"


def batches(documents: Iterable[str], batch_chars: int) -> Iterator[list[str]]:
    """``documents`` in lists of about ``batch_chars`` characters (at least one document), in order."""
    batch: list[str] = []
    size = 0
    for doc in documents:
        batch.append(doc)
        size += len(doc)
        if size >= batch_chars:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


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
    if not start:
        check_text_file(path)
    if core_reads(path, max_line_bytes):
        with unchanged_while_read(path):
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
    for batch in batches(docs, batch_bytes):
        counter.count_texts(batch, threads=threads)
        if progress is not None:
            progress(stats.bytes - before)
        before = stats.bytes
