"""Documents from an iterable: strings, or batches (lists, tuples) of strings, as HF ``tokenizers``'
``train_from_iterator`` takes them, e.g. a ``datasets`` column or ``IterableDataset`` batches.

Each string is one document, as one line of a text file is: a newline inside it is text (for
SGPE, its own piece). The progress bar counts the iterable's items (strings or batches) against
``length`` or ``len(iterable)`` when either is known, and shows a count otherwise; it is drawn on
stderr whether or not that is a terminal.

A ``datasets.Dataset`` (or any table of that shape) is read by its text column in slices
(:func:`dataset_texts`), as Hugging Face users pass one.

This module does not read files (:mod:`wwho.corpus` does) and does not count.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from wwho.errors import CorpusError
from wwho.progress import progress_bar

#: What ``train_from_iterator`` takes: strings, batches (lists, tuples) of strings, or a table shaped
#: like ``datasets.Dataset`` (iterated, its rows are mappings; read by :func:`dataset_texts`).
TextSource = Iterable[str] | Iterable[Sequence[str]] | Iterable[Mapping[str, Any]]


def iter_texts(
    iterable: Iterable[str | list[str] | tuple[str, ...]],
    *,
    length: int | None = None,
    progress: bool = True,
    files_hint: str = "train",
) -> Iterator[str]:
    """Every string of ``iterable`` (see the module docstring); anything else is a
    :class:`CorpusError` naming the item. ``files_hint``: the API for files, named when
    ``iterable`` is a path."""
    if isinstance(iterable, (str, bytes, os.PathLike)):
        raise CorpusError(f"train_from_iterator takes an iterable of strings, not one "
                          f"{type(iterable).__name__}; for files use {files_hint}(...), for one text pass [text]")
    if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 0):
        raise CorpusError(f"length must be a non-negative integer or None, not {length!r}")
    if length is None and hasattr(iterable, "__len__"):
        try:
            length = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            length = None
    with progress_bar(iterable, total=length, desc="reading", unit="item", disable=not progress) as items:
        for index, item in enumerate(items):
            if isinstance(item, str):
                yield item
            elif isinstance(item, (list, tuple)):
                for k, text in enumerate(item):
                    if not isinstance(text, str):
                        raise CorpusError(f"item {index} of the iterator: element {k} is "
                                          f"{type(text).__name__}, not a string")
                    yield text
            else:
                hint = " (a datasets batch is a dict: pass batch['text'])" if isinstance(item, dict) else ""
                raise CorpusError(f"item {index} of the iterator is {type(item).__name__}: "
                                  f"expected a string or a list of strings{hint}")


def _column_of_rows(rows: Iterable[Any], text_column: str) -> Iterator[Any]:
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping) or text_column not in row:
            columns = ", ".join(map(str, row)) if isinstance(row, Mapping) else type(row).__name__
            raise CorpusError(f"row {index} of the dataset has no column {text_column!r} (it has: {columns}); "
                              "pass text_column= to name the one holding the text")
        yield row[text_column]


#: Rows of a dataset read per slice by :func:`dataset_texts`.
DATASET_SLICE = 1000


def dataset_texts(data: TextSource, text_column: str = "text",
                  length: int | None = None) -> tuple[TextSource, int | None]:
    """``(iterable, length)`` for :func:`iter_texts`. A table of columns, as
    ``datasets.Dataset`` is (``column_names``; rows by ``len`` and slices), gives its ``text_column``
    in slices of :data:`DATASET_SLICE` rows (as HF ``tokenizers`` users write ``dataset[i:i + 1000]["text"]``;
    the whole column is never held at once); one without ``len`` (``IterableDataset``) gives the column
    of each row; anything else is returned as is. ``datasets`` itself is not imported: any object of
    that shape works."""
    names = getattr(data, "column_names", None)
    if isinstance(names, dict):  # a DatasetDict (a dict of its splits): {split: columns}
        raise CorpusError(f"train_from_iterator got a DatasetDict of splits {', '.join(map(str, names))}: "
                          "pass one split, e.g. dataset['train']")
    if isinstance(data, (str, bytes, dict)) or not hasattr(data, "column_names"):
        return data, length
    if names is None:  # a streamed dataset whose columns are known only from its rows (from_generator)
        return _column_of_rows(data, text_column), length
    if text_column not in names:
        raise CorpusError(f"the dataset has no column {text_column!r} (its columns: {', '.join(map(str, names))}); "
                          "pass text_column= to name the one holding the text")
    try:
        rows = len(data)
    except TypeError:  # streamed: rows one by one
        return (row[text_column] for row in data), length

    def slices():
        for start in range(0, rows, DATASET_SLICE):
            yield list(data[start:start + DATASET_SLICE][text_column])
    return slices(), -(-rows // DATASET_SLICE) if length is None else length
