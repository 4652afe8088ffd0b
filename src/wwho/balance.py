"""Temperature sampling of several corpora into one stream of documents (one tokenizer, many languages).

Each corpus (a language, say) of ``n_i`` bytes of text gets the share
``p_i = n_i ** alpha / sum_j n_j ** alpha`` of a stream as long as all of them together. ``alpha=1``
keeps the corpora as they are; smaller values give small corpora more weight (mT5 and XLM-R sample
with 0.3); ``alpha=0`` makes every corpus as large as every other. A corpus whose share is larger
than itself is repeated: each of its documents ``floor(r)`` times, ``r`` being its rate (share of
the stream over its own size), and once more with probability ``r - floor(r)``; a larger one is
subsampled document by document with probability ``r``. The draws are seeded (by ``seed`` and a
digest of each corpus's documents), so a stream is the same on every run, in any order of the
corpora, and wherever they are or however they are stored (renamed, moved, compressed), and a
resumed training sees the same counts.

Why temperature and not parity (sampling until every language costs as many tokens): parity needs
the tokenizer being trained to measure the languages with; temperature sampling needs nothing but
the sizes, and has one knob (``docs/joint-indic.md`` measures several).

Each corpus is read twice: once for its size, once for the stream. A file in two corpora (named
twice, or inside a folder named too) is refused: it would be read in both. This module does not detect
languages (each input is one group, a file or a folder), tokenize, or shuffle (the trainers count
pieces, so the order of documents changes nothing).
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from wwho.corpus import MAX_LINE_BYTES, CorpusStats, iter_documents
from wwho.corpus_files import file_identity, resolve_paths
from wwho.errors import CorpusError, brief, printable


@dataclass(frozen=True)
class Group:
    """One corpus of a balanced stream and what it contributes."""

    source: str
    bytes: int
    share: float
    #: Copies of each of its documents in the stream, on average (below 1: sampled).
    rate: float
    #: A digest of its documents, which seeds its draws (with the stream's seed).
    digest: str = ""


def temperature_shares(sizes: Sequence[int], alpha: float) -> list[float]:
    """``n_i ** alpha`` normalized: each corpus's share of the balanced stream."""
    check_alpha(alpha)
    weights = [n**alpha if n else 0.0 for n in sizes]
    total = sum(weights)
    return [w / total for w in weights]


def check_alpha(alpha: object) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1 or math.isnan(alpha):
        raise CorpusError(f"the balancing temperature alpha must be a number from 0 to 1, not {alpha!r}")
    return float(alpha)


def check_seed(seed: object) -> int:
    """A seed of the draws: an integer (a float or a string would be taken, and seed another stream
    than the same number as an int)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise CorpusError(f"the balancing seed must be an integer, not {brief(seed)}")
    return seed


def plan(corpora: Sequence[str | os.PathLike], alpha: float, *, text_field: str = "text",
         skip_bad_lines: bool = False, max_line_bytes: int = MAX_LINE_BYTES) -> list[Group]:
    """Each corpus's size (UTF-8 bytes of its documents), share and rate."""
    check_alpha(alpha)
    if len(corpora) < 2:
        raise CorpusError("balancing needs two corpora or more (one per language: a file or a folder each)")
    sizes = []
    owner: dict[object, int] = {}
    for k, corpus in enumerate(corpora):
        for path in resolve_paths(corpus):  # a missing input fails before any is read
            # A file in two corpora would be read in both, and weigh in two languages' shares.
            first = owner.setdefault(file_identity(path), k)
            if first == k:
                continue
            one, other = os.fspath(corpora[first]), os.fspath(corpus)
            where = (f"corpus {_quoted(one)} is given twice" if one == other else
                     f"{_quoted(path)} is in two corpora, {_quoted(one)} and {_quoted(other)}")
            raise CorpusError(f"{where}: balancing reads each file in one corpus (one corpus per language)")
    digests = []
    for corpus in corpora:
        size, digest = 0, hashlib.blake2b(digest_size=16)
        for doc in iter_documents(corpus, text_field=text_field, skip_bad_lines=skip_bad_lines,
                                  max_line_bytes=max_line_bytes):
            data = doc.encode("utf-8", "surrogatepass")
            size += len(data)
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        if not size:
            raise CorpusError(f"{os.fspath(corpus)}: no text to balance")
        sizes.append(size)
        digests.append(digest.hexdigest())
    shares = temperature_shares(sizes, alpha)
    total = sum(sizes)
    return [Group(os.fspath(c), n, p, p * total / n, d) for c, n, p, d in zip(corpora, sizes, shares, digests)]


def _quoted(path: str | os.PathLike) -> str:
    """A path in a message, whole (``brief`` would cut a long one) and printable."""
    return f"'{printable(os.fspath(path))}'"


def documents(groups: Sequence[Group], *, seed: int = 0, text_field: str = "text", skip_bad_lines: bool = False,
              max_line_bytes: int = MAX_LINE_BYTES, stats: CorpusStats | None = None) -> Iterator[str]:
    """The balanced stream of :func:`plan`'s groups (see the module docstring)."""
    check_seed(seed)
    # Each corpus's draws are seeded by its documents, not by its place in the argument list or its
    # path: the same texts named in another order, renamed, moved or compressed give the same stream.
    for group in groups:
        rng = random.Random(f"{seed}/{group.digest}")
        whole, part = divmod(group.rate, 1.0)
        for doc in iter_documents(group.source, text_field=text_field, skip_bad_lines=skip_bad_lines,
                                  max_line_bytes=max_line_bytes, stats=stats):
            for _ in range(int(whole) + (rng.random() < part)):
                yield doc


def describe(groups: Sequence[Group], alpha: float) -> list[str]:
    """One line per corpus: its size, share and rate (what the trainers print)."""
    return [f"balance {alpha:g}: {g.source}: {g.bytes / 1e6:,.1f} MB, share {g.share:.1%}, x{g.rate:.2f} in the stream"
            for g in groups]


def stream(corpus: str | os.PathLike | Iterable[str | os.PathLike], alpha: float, *, seed: int = 0,
           text_field: str = "text", skip_bad_lines: bool = False, max_line_bytes: int = MAX_LINE_BYTES,
           stats: CorpusStats | None = None, progress: bool = True) -> Iterator[str]:
    """What a trainer's ``balance=alpha`` counts: :func:`plan` (its lines printed with ``progress``),
    then :func:`documents`, whose reading is counted in ``stats``."""
    check_seed(seed)  # before the corpora are read for their sizes
    corpora = [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)
    groups = plan(corpora, alpha, text_field=text_field, skip_bad_lines=skip_bad_lines, max_line_bytes=max_line_bytes)
    if progress:
        print("\n".join(describe(groups, alpha)), file=sys.stderr)
    return documents(groups, seed=seed, text_field=text_field, skip_bad_lines=skip_bad_lines,
                     max_line_bytes=max_line_bytes, stats=stats)
