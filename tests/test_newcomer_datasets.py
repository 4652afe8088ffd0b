"""``SGPETokenizer.train_from_iterator(dataset)`` and ``ByteBPE.train_from_iterator(dataset)`` take a
Hugging Face ``datasets.Dataset`` as HF users pass it (its text column, or the one named by ``text_column=``). ``datasets`` need not be
installed: a table of the same shape stands in for it, and the real one is used when present."""

from __future__ import annotations

from importlib import resources

import pytest

from wwho.errors import CorpusError
from wwho.scale.texts import DATASET_SLICE
from wwho.sgpe import SGPETokenizer

SINHALA = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()[:1500]


class Table:
    """The shape of ``datasets.Dataset`` that matters here: ``column_names``, ``len``, a slice of rows
    as a dict of columns, and a column by name; iterating gives rows as dicts (as datasets does)."""

    def __init__(self, columns: dict[str, list]):
        self.columns = columns
        self.slices = 0

    @property
    def column_names(self) -> list[str]:
        return list(self.columns)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values())))

    def __getitem__(self, key):
        if isinstance(key, str):
            return self.columns[key]
        if isinstance(key, slice):
            self.slices += 1
            return {name: values[key] for name, values in self.columns.items()}
        raise TypeError(key)

    def __iter__(self):
        names = list(self.columns)
        for row in zip(*self.columns.values()):
            yield dict(zip(names, row))


class Streamed(Table):
    """``IterableDataset``: columns, rows, no length."""

    def __len__(self):
        raise TypeError("an IterableDataset has no len()")


def _train(data, **options):
    return SGPETokenizer.train_from_iterator(data, vocab_size=700, progress=False, workers=1, **options)


@pytest.fixture(scope="module")
def expected():
    return _train(SINHALA).file.to_bytes()


def test_a_dataset_trains_on_its_text_column(expected):
    table = Table({"id": list(range(len(SINHALA))), "text": SINHALA})
    assert _train(table).file.to_bytes() == expected
    assert table.slices == -(-len(SINHALA) // DATASET_SLICE)  # read in slices, not the column at once


def test_another_column_by_name_and_a_streamed_dataset(expected):
    assert _train(Table({"sentence": SINHALA, "n": [1] * len(SINHALA)}), text_column="sentence").file.to_bytes() \
        == expected
    assert _train(Streamed({"text": SINHALA})).file.to_bytes() == expected


def test_a_missing_column_and_a_dataset_dict_are_named():
    with pytest.raises(CorpusError, match=r"no column 'text' \(its columns: sentence, n\); pass text_column="):
        _train(Table({"sentence": SINHALA, "n": [1] * len(SINHALA)}))

    class Splits:
        column_names = {"train": ["text"], "test": ["text"]}

    with pytest.raises(CorpusError, match=r"DatasetDict of splits train, test: pass one split"):
        _train(Splits())


def test_the_real_datasets_package(expected):
    # The stand-ins above are what wwho reads of a dataset; this checks them against the real package
    # (a test dependency), in memory: a Dataset, one streamed (IterableDataset), another column, and a
    # DatasetDict, which is refused with the names of its splits.
    import datasets

    table = datasets.Dataset.from_dict({"sentence": SINHALA, "n": [1] * len(SINHALA)})
    assert _train(table, text_column="sentence").file.to_bytes() == expected
    assert _train(table.rename_column("sentence", "text").to_iterable_dataset()).file.to_bytes() == expected
    with pytest.raises(CorpusError, match=r"no column 'text' \(its columns: sentence, n\); pass text_column="):
        _train(table)
    with pytest.raises(CorpusError, match=r"DatasetDict of splits train, test: pass one split"):
        _train(datasets.DatasetDict({"train": table, "test": table}))
    # A streamed dataset made from a generator knows its columns only from its rows.

    def rows(column="text"):
        yield from ({column: line, "n": 1} for line in SINHALA)

    generated = datasets.IterableDataset.from_generator(rows)
    assert generated.column_names is None
    assert _train(generated).file.to_bytes() == expected
    with pytest.raises(CorpusError, match=r"row 0 of the dataset has no column 'text' \(it has: body, n\)"):
        _train(datasets.IterableDataset.from_generator(rows, gen_kwargs={"column": "body"}))


def test_byte_level_training_takes_a_dataset_too():
    from wwho import ByteBPE

    def train(data, **options):
        return ByteBPE.train_from_iterator(data, vocab_size=600, progress=False, workers=1, **options)

    want = train(SINHALA).encode_batch(SINHALA[:50])
    assert train(Table({"id": list(range(len(SINHALA))), "text": SINHALA})).encode_batch(SINHALA[:50]) == want
    assert train(Streamed({"body": SINHALA}), text_column="body").encode_batch(SINHALA[:50]) == want
