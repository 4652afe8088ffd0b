"""A corpus cut into shards, and counting one shard with the local code.

A :class:`Shard` is a byte range of a plain uncompressed text file, cut at line ends (so its
lines are exactly lines of the file), a whole file (JSONL and compressed files cannot be cut
without reading them), or a batch of texts (from an iterator). Counting a shard runs the same
functions a local run does: :func:`wwho.counting.count_file` for SGPE (the core reads the byte
range), and :func:`wwho.bytelevel.train.count_bytelevel` over :func:`wwho.corpus.file_documents`
for byte-level BPE (handed over by the trainer). Messages keep the file's line numbers, so a bad line gives the same
``file:line`` error as a local run. The sum of the shards' counts is the corpus's count.

This module does not schedule shards (:mod:`wwho.scale.ray_counter` does) and does not train.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wwho import _core
from wwho.corpus import MAX_LINE_BYTES, CorpusStats, check_unchanged, file_documents, file_stamp
from wwho.counting import core_reads, count_file
from wwho.sizes import check_range

#: Default shard size: big enough that a task's start-up is noise, small enough to spread a
#: file over a few workers and to retry cheaply.
SHARD_BYTES = 32 << 20


@dataclass(frozen=True)
class Shard:
    """``path[start:end]`` (``end=None``: to the end of the file), or ``texts``."""

    index: int
    path: Path | None = None
    start: int = 0
    end: int | None = None
    size: int = 0
    texts: tuple[str, ...] = field(default=(), repr=False)
    #: A cut file's size, change time and inode when it was cut: a task finding another file there
    #: refuses it, as the cut points may fall inside its lines.
    stamp: tuple[int, int, int] | None = None


@dataclass(frozen=True)
class CountOptions:
    """What counting a shard needs besides the shard (the trainers' counting options)."""

    kind: str  # "sgpe" or "bytelevel"
    text_field: str = "text"
    skip_bad_lines: bool = False
    max_line_bytes: int = MAX_LINE_BYTES
    scripts: tuple[str, ...] | None = None  # SGPE: count only these scripts' runs (meta)
    prefix_space: bool = False  # SGPE: a space before each document (the dummy prefix)
    span_breaks: str | None = None  # SGPE: count superword spans ending after these characters
    pattern: str = ""  # byte-level: the pre-tokenizer regex
    specials: tuple[str, ...] = ()  # byte-level: special tokens cut out of the text
    #: byte-level: the trainer's counting function (``wwho.bytelevel.train.count_bytelevel``), handed
    #: over by the trainer so that this module stays below it (no import cycle)
    count_documents: Callable[..., Counter[str]] | None = None


def plan_shards(files: list[Path], *, shard_bytes: int | None = None, max_line_bytes: int = MAX_LINE_BYTES,
                ranged: bool = True) -> list[Shard]:
    """Files (in order) cut into shards of about ``shard_bytes`` (default :data:`SHARD_BYTES`),
    each cut just after a line end.

    ``ranged=False``: whole files only. Finding a cut reads from the target offset to the next
    line end; the driver reads nothing else of the file."""
    shard_bytes = SHARD_BYTES if shard_bytes is None else check_range(shard_bytes, "shard_bytes", 1, 2**50)
    shards: list[Shard] = []
    for path in files:
        size = path.stat().st_size
        if not ranged or not core_reads(path, max_line_bytes) or size <= shard_bytes:
            shards.append(Shard(len(shards), path, 0, None, size))
            continue
        start = 0
        with open(path, "rb") as f:
            stamp = file_stamp(path)
            while start < size:
                cut = _line_end_after(f, start + shard_bytes) if start + shard_bytes < size else size
                shards.append(Shard(len(shards), path, start, None if cut >= size else cut, cut - start, stamp=stamp))
                start = cut
    return shards


def _check_unchanged(shard: Shard) -> None:
    """A :class:`CorpusError` if the cut file is no longer the one that was cut (replaced, or
    written to): its lines would be counted cut in two at the shards' ends, without a word."""
    if shard.path is not None:
        check_unchanged(shard.path, shard.stamp, what=" (it was cut into shards at its line ends, which are no "
                                                      "longer there)")


def _line_end_after(f, offset: int) -> int:
    """The offset just after the first line end at or after ``offset`` (the file's size if none)."""
    f.seek(offset)
    while chunk := f.read(1 << 16):
        i = chunk.find(b"\n")
        if i >= 0:
            return offset + i + 1
        offset += len(chunk)
    return offset


def text_shards(texts, *, shard_bytes: int = 8_000_000, first_index: int = 0):
    """Batches of about ``shard_bytes`` characters of texts, as shards (lazily)."""
    batch: list[str] = []
    size = 0
    index = first_index
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= shard_bytes:
            yield Shard(index, size=size, texts=tuple(batch))
            index += 1
            batch, size = [], 0
    if batch:
        yield Shard(index, size=size, texts=tuple(batch))


def count_shard(shard: Shard, options: CountOptions) -> tuple[bytes | dict[str, int], CorpusStats]:
    """Count one shard on one thread: SGPE counts as :meth:`PieceCounter.to_bytes`, byte-level
    counts as a dict, and what was read (``files`` is 1 for a shard of a file)."""
    stats = CorpusStats()
    if shard.path is None:
        stats.documents = sum(1 for text in shard.texts if text)
    _check_unchanged(shard)  # before the count, and after it (below): written to while counted
    if options.kind == "sgpe":
        router = None
        if options.scripts:
            from wwho.router import core_router

            router = core_router(options.scripts)
        counter = _core.PieceCounter(router, prefix_space=options.prefix_space,
                                     span_breaks=options.span_breaks)
        if shard.path is None:
            counter.count_texts(list(shard.texts), threads=1)
        else:
            count_file(counter, shard.path, text_field=options.text_field,
                       skip_bad_lines=options.skip_bad_lines, stats=stats, workers=1,
                       max_line_bytes=options.max_line_bytes, start=shard.start, end=shard.end)
            _check_unchanged(shard)
        return counter.to_bytes(), stats
    if options.count_documents is None:
        raise ValueError("CountOptions.count_documents is needed for byte-level shards")
    if shard.path is None:
        documents = iter(shard.texts)
    else:
        documents = file_documents(shard.path, text_field=options.text_field,
                                   skip_bad_lines=options.skip_bad_lines, stats=stats,
                                   max_line_bytes=options.max_line_bytes, start=shard.start, end=shard.end)
    counts: Counter[str] = options.count_documents(documents, pattern=options.pattern,
                                           specials=list(options.specials), workers=1, progress=False)
    _check_unchanged(shard)
    return dict(counts), stats
