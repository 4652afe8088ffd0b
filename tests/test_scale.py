"""Training from iterators and from counts, shards counted by the local code (no Ray here).

Oracles: a run on the corpus files (vocab.json / the saved files, byte for byte), ``collections.Counter``
over the shard's lines for the shard sums, and the local run's own error messages."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from collections import Counter
from pathlib import Path

import pytest
from conftest import CORPORA, require_data
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.bytelevel import ByteBPE
from wwho.bytelevel.train import count_bytelevel
from wwho.corpus import CorpusStats, file_documents, iter_documents
from wwho.counting import PIECES, count_corpus
from wwho.errors import CorpusError, VocabError
from wwho.scale.counts import MAX_COUNT, read_counts, write_counts
from wwho.scale.shards import CountOptions, Shard, count_shard, plan_shards
from wwho.scale.texts import iter_texts
from wwho.sgpe import SGPETokenizer

SI = CORPORA / "si" / "news-bbcsinhala.txt"
HI = CORPORA / "hi" / "tico19-test.txt"


def _lines(path: Path, n: int = 6000) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [next(f).rstrip("\n") for _ in range(n)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    require_data(SI)
    path = tmp_path_factory.mktemp("scale") / "corpus.txt"
    lines = _lines(SI) + (_lines(HI, 2000) if HI.exists() else [])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _saved(tok, tmp_path: Path, name: str) -> dict[str, bytes]:
    out = tmp_path / name
    tok.save(out)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if not p.name.startswith("wwho-manifest")}


# -- iterators ---------------------------------------------------------------------------

def test_iter_texts_takes_strings_and_batches():
    assert list(iter_texts(["a", ["b", "c"], ("d",), []], progress=False)) == ["a", "b", "c", "d"]
    assert list(iter_texts((t for t in ["x", "y"]), progress=False)) == ["x", "y"]


@pytest.mark.parametrize("bad, words", [
    ("just text", "not one str"),
    (Path("corpus.txt"), "not one PosixPath"),
    ([1], "item 0 of the iterator is int"),
    (["a", {"text": ["b"]}], "batch['text']"),
    ([["a", None]], "element 1 is NoneType"),
])
def test_iter_texts_refuses_what_is_not_text(bad, words):
    with pytest.raises(CorpusError) as err:
        list(iter_texts(bad, progress=False))
    assert words in str(err.value) and "\n" not in str(err.value)


def test_progress_shows_the_total_when_known(capsys):
    list(iter_texts(iter(["a"] * 7), length=7, progress=True))
    assert "7/7" in capsys.readouterr().err
    list(iter_texts(["a"] * 5, progress=True))  # len() of a list
    assert "5/5" in capsys.readouterr().err


@pytest.mark.parametrize("script", ["sinhala", "mixed"])
def test_sgpe_from_iterator_equals_training_on_the_file(corpus, tmp_path, script):
    kw = dict(vocab_size=2500, script=script, progress=False)
    want = SGPETokenizer.train(corpus, **kw).file.to_bytes()
    lines = corpus.read_text(encoding="utf-8").splitlines()
    batches = [lines[i:i + 777] for i in range(0, len(lines), 777)]  # as a datasets column in batches
    assert SGPETokenizer.train_from_iterator(batches, **kw).file.to_bytes() == want
    assert SGPETokenizer.train_from_iterator(iter(lines), length=len(lines), **kw).file.to_bytes() == want


def test_bytelevel_from_iterator_equals_training_on_the_file(corpus, tmp_path):
    kw = dict(vocab_size=400, progress=False, special_tokens=["<|end|>"])
    want = _saved(ByteBPE.train(corpus, **kw), tmp_path, "a")
    lines = corpus.read_text(encoding="utf-8").splitlines()
    got = ByteBPE.train_from_iterator((lines[i:i + 500] for i in range(0, len(lines), 500)), **kw)
    assert _saved(got, tmp_path, "b") == want


@pytest.mark.parametrize("train", [SGPETokenizer.train, ByteBPE.train])
def test_a_list_of_texts_given_as_corpus_points_to_train_from_iterator(train):
    for texts in (["ශ්‍රී ලංකාව " * 100], ["hello world", "second line"], ["x" * 5000]):
        with pytest.raises(CorpusError) as err:
            train(texts, vocab_size=1000, progress=False)
        message = str(err.value)
        assert "train_from_iterator" in message and "\n" not in message and len(message) < 300


# -- counts ------------------------------------------------------------------------------

def test_sgpe_from_counts_equals_training_on_the_file(corpus, tmp_path):
    kw = dict(vocab_size=2500, progress=False)
    # Piece counts hold no sentences: no superword stage (train_from_counts' default share is 0).
    want = SGPETokenizer.train(corpus, superword_share=0, **kw).file.to_bytes()
    counts = dict(count_corpus([corpus], progress=False).items())
    assert SGPETokenizer.train_from_counts(counts, **kw).file.to_bytes() == want
    with pytest.raises(VocabError, match="superword_share"):
        SGPETokenizer.train_from_counts(counts, superword_share=0.15, **kw)
    # as two TSV part files (a Spark job's output), with whitespace pieces escaped
    items = sorted(counts.items())
    write_counts(tmp_path / "part-00000.tsv", items[::2])
    write_counts(tmp_path / "part-00001.tsv", items[1::2])
    assert SGPETokenizer.train_from_counts(str(tmp_path / "part-*"), **kw).file.to_bytes() == want


def test_bytelevel_from_counts_equals_training_on_the_file(corpus, tmp_path):
    kw = dict(vocab_size=400, progress=False, special_tokens=["<|end|>"])
    want = _saved(ByteBPE.train(corpus, **kw), tmp_path, "a")
    tok = ByteBPE.train(corpus, **kw)
    counts = count_bytelevel(iter_documents([corpus]), pattern=tok.pretokenizer.patterns[0],
                             specials=["<|end|>"], progress=False)
    write_counts(tmp_path / "counts.tsv", counts)
    assert dict(read_counts(tmp_path / "counts.tsv")) == counts
    got = ByteBPE.train_from_counts(tmp_path / "counts.tsv", **kw)
    assert _saved(got, tmp_path, "b") == want


@pytest.mark.filterwarnings("ignore::wwho.errors.VocabSizeWarning")  # both sides alike: their size is not checked here
def test_counts_past_32_bits_train_like_their_ratio(corpus):
    counts = dict(count_corpus([corpus], progress=False).items())
    # Scope "words": the engine bounds total count x longest word below 2**62, and a whole piece (the
    # default scope) is a longer word than this 2**40 scale leaves room for.
    small = SGPETokenizer.train_from_counts(counts, vocab_size=2000, min_freq=2, prune_freq=2, progress=False,
                                            merge_scope="words")
    scale = 2**40
    big = SGPETokenizer.train_from_counts({p: n * scale for p, n in counts.items()}, vocab_size=2000,
                                          min_freq=2 * scale, prune_freq=2 * scale, progress=False,
                                          merge_scope="words")
    assert big.merges == small.merges and big.vocab == small.vocab


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz", ".bz2"])
def test_whitespace_pieces_round_trip_through_a_counts_file(tmp_path, suffix):
    """A counts file named as compressed is written compressed (it was plain text under a .gz
    name, which read_counts then refused), and the standard library's decompressor reads it."""
    counts = {"\t": 3, "\n": 2, "\r": 1, " ": 9, "\\": 4, "a\\tb": 5, " ශ්‍රී": MAX_COUNT}
    path = write_counts(tmp_path / f"c.tsv{suffix}", counts)
    assert dict(read_counts(path)) == counts
    plain = write_counts(tmp_path / "plain.tsv", counts).read_bytes()
    opener = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}.get(suffix, open)
    with opener(path, "rb") as f:
        assert f.read() == plain


@pytest.mark.parametrize("content, message", [
    (b"a\t1\nb 2\n", "c.tsv:2: expected piece<TAB>count, found 0 tabs"),
    (b"a\t1\na\tb\t2\n", "c.tsv:2: expected piece<TAB>count, found 2 tabs"),
    (b"a\tx\n", "c.tsv:1: the count 'x' is not a whole number"),
    (b"a\t0\n", "c.tsv:1: the count '0' is not a whole number"),
    (b"a\t-3\n", "c.tsv:1: the count '-3'"),
    (b"a\t18446744073709551616\n", "c.tsv:1: the count '18446744073709551616'"),
    (b"\t3\n", "c.tsv:1: the piece is empty"),
    (b"a\\q\t3\n", "c.tsv:1: unknown escape"),
    (b"ok\t1\n\xff\t3\n", "c.tsv:2: invalid UTF-8 at byte 0"),
    (b"\n", "c.tsv:1: expected piece<TAB>count"),
])
def test_bad_rows_name_file_and_line(tmp_path, content, message):
    (tmp_path / "c.tsv").write_bytes(content)
    with pytest.raises(CorpusError) as err:
        SGPETokenizer.train_from_counts(tmp_path / "c.tsv", vocab_size=1000, progress=False)
    assert message in str(err.value)


def test_header_and_crlf_are_accepted(tmp_path):
    (tmp_path / "c.tsv").write_bytes(b"piece\tcount\r\n a\t3\r\nb\t18446744073709551615\r\n")
    assert dict(read_counts(tmp_path / "c.tsv")) == {" a": 3, "b": MAX_COUNT}


def test_a_byte_order_mark_and_compressed_count_files(tmp_path):
    """A byte order mark before the header must not make it a bad row, nor before a first piece go
    into the piece (a token '\\ufeff ...' trained); Spark's part-00000.gz is not 'invalid UTF-8 at
    byte 1'. The mark is dropped as the corpus readers drop it; .gz/.xz/.bz2 are read by
    their names, compressed files under other names are named as such, a cut one by its line."""
    import gzip

    bom = b"\xef\xbb\xbf"
    (tmp_path / "header.tsv").write_bytes(bom + b"piece\tcount\n a\t3\n")
    (tmp_path / "rows.tsv").write_bytes(bom + b" a\t3\nb\t2\n")
    assert dict(read_counts(tmp_path / "header.tsv")) == {" a": 3}
    assert dict(read_counts(tmp_path / "rows.tsv")) == {" a": 3, "b": 2}
    packed = gzip.compress(b" a\t3\nb\t2\n")
    (tmp_path / "part-00000.gz").write_bytes(packed)
    assert dict(read_counts(tmp_path / "part-00000.gz")) == {" a": 3, "b": 2}
    (tmp_path / "part-00001").write_bytes(packed)
    with pytest.raises(CorpusError, match="part-00001: is gzip-compressed, not text"):
        list(read_counts(tmp_path / "part-00001"))
    (tmp_path / "cut.gz").write_bytes(packed[:12])
    with pytest.raises(CorpusError, match=r"cut.gz:1: cannot read \(corrupt or truncated file\?\)"):
        list(read_counts(tmp_path / "cut.gz"))


@pytest.mark.parametrize("train", [SGPETokenizer.train_from_counts, ByteBPE.train_from_counts])
def test_sums_past_64_bits_and_bad_dicts_are_refused(train):
    for counts, words in (({"a": 0}, "whole number"), ({"": 3}, "non-empty"),
                          ({"a": True}, "whole number"), ({"a": 1.5}, "whole number")):
        with pytest.raises(CorpusError, match=words):
            train(counts, vocab_size=1000, progress=False)
    with pytest.raises(CorpusError, match="passes 2\\*\\*64 - 1"):
        train([_two_files()[0], _two_files()[1]], vocab_size=1000, progress=False)


_FILES: list[Path] = []


def _two_files() -> list[Path]:
    if not _FILES:
        import tempfile

        d = Path(tempfile.mkdtemp(prefix="wwho-test-counts-"))
        for name in ("a.tsv", "b.tsv"):
            (d / name).write_text(f" x\t{MAX_COUNT}\n", encoding="utf-8")
            _FILES.append(d / name)
    return _FILES


# -- shards ------------------------------------------------------------------------------

def _local(path: Path, kind: str, **kw):
    if kind == "sgpe":
        stats = CorpusStats()
        return dict(count_corpus([path], progress=False, stats=stats, workers=1, **kw).items()), stats
    stats = CorpusStats()
    docs = iter_documents([path], stats=stats, **kw)
    return dict(count_bytelevel(docs, pattern=r"\S+|\s+", specials=[], workers=1, progress=False)), stats


def _sharded(path: Path, kind: str, shard_bytes: int, **kw):
    from wwho import _core

    total: Counter = Counter()
    stats = CorpusStats()
    options = CountOptions(kind, pattern=r"\S+|\s+", count_documents=count_bytelevel, **kw)
    for shard in plan_shards([path], shard_bytes=shard_bytes):
        counts, s = count_shard(shard, options)
        if kind == "sgpe":
            c = _core.PieceCounter()
            c.add_bytes(counts)
            counts = dict(c.items())
        total.update(counts)
        stats.documents += s.documents
        stats.bytes += s.bytes
        stats.bad_lines += s.bad_lines
        stats.first_bad.extend(s.first_bad)
    return dict(total), stats


lines = st.lists(st.text(st.sampled_from("ab ශ්\u200dර\t\r"), max_size=30), max_size=40)


@settings(max_examples=40, deadline=None)
@given(lines=lines, shard_bytes=st.integers(1, 200), kind=st.sampled_from(["sgpe", "bytelevel"]))
def test_shards_sum_to_the_whole_file(tmp_path_factory, lines, shard_bytes, kind):
    path = tmp_path_factory.mktemp("shards") / "c.txt"
    path.write_bytes("\n".join(lines).encode())
    shards = plan_shards([path], shard_bytes=shard_bytes)
    data = path.read_bytes()
    for a, b in zip(shards, shards[1:]):
        assert b.start == a.end and data[b.start - 1:b.start] == b"\n"  # cut just after a line end
    assert sum(s.size for s in shards) == len(data)
    want, wstats = _local(path, kind)
    got, gstats = _sharded(path, kind, shard_bytes)
    assert got == want
    assert (gstats.documents, gstats.bytes) == (wstats.documents, wstats.bytes)


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel"])
def test_a_bad_line_in_a_later_shard_has_the_local_message(tmp_path, kind):
    path = tmp_path / "c.txt"
    body = b"".join(b"line %d ok\n" % i for i in range(2000))
    path.write_bytes(body + b"bad \xff\n" + body + b"bad again \xfe\n")
    with pytest.raises(CorpusError) as local:
        _local(path, kind)
    with pytest.raises(CorpusError) as sharded:
        _sharded(path, kind, 5000)
    assert str(sharded.value) == str(local.value) and f"{path}:2001:" in str(local.value)
    _, wstats = _local(path, kind, skip_bad_lines=True)
    _, gstats = _sharded(path, kind, 5000, skip_bad_lines=True)
    assert gstats.first_bad == wstats.first_bad and gstats.bad_lines == 2


def test_compressed_and_jsonl_files_are_whole_shards(tmp_path):
    gz = tmp_path / "a.txt.gz"
    gz.write_bytes(gzip.compress(b"x y\n" * 100_000))
    js = tmp_path / "b.jsonl"
    js.write_text("".join(json.dumps({"text": f"w{i}"}) + "\n" for i in range(50_000)), encoding="utf-8")
    shards = plan_shards([gz, js], shard_bytes=1000)
    assert [(s.path, s.start, s.end) for s in shards] == [(gz, 0, None), (js, 0, None)]
    with pytest.raises(ValueError, match="byte range"):
        list(file_documents(gz, start=10))


def test_a_text_shard_counts_its_texts():
    counts, _ = count_shard(Shard(0, texts=("a b", " a")), CountOptions("sgpe"))
    from wwho import _core

    c = _core.PieceCounter()
    c.add_bytes(counts)
    import regex

    assert dict(c.items()) == Counter(regex.findall(PIECES, "a b") + regex.findall(PIECES, " a"))


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel"])
def test_a_cut_file_that_changed_before_its_shard_is_counted_is_refused(tmp_path, kind):
    """A corpus file replaced between the driver's cut and a task's count must not be counted with
    lines split at the old cut points (a vocabulary of neither file), without a word. Each cut shard
    carries the file's size, change time and inode, and a task refuses another file, before its
    count and after it."""
    from wwho.bytelevel.train import count_bytelevel

    path = tmp_path / "c.txt"
    path.write_text("".join(f"ලංකාව line {i}\n" for i in range(3000)), encoding="utf-8")
    shards = plan_shards([path], shard_bytes=20_000)
    assert len(shards) > 2 and all(s.stamp is not None for s in shards)
    options = CountOptions(kind=kind, pattern="gpt2", count_documents=count_bytelevel)
    count_shard(shards[1], options)  # the file as it was cut
    path.write_text("abcdefg " + path.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(CorpusError, match="c.txt: the file changed while it was read"):
        count_shard(shards[1], options)
    assert plan_shards([path], shard_bytes=10**9)[0].stamp is None  # a file read whole is not cut


def test_counts_whose_pieces_are_not_text_are_refused_not_emptied():
    # Counts travel between processes as to_bytes buffers; one that is not of counted text gave
    # every such piece as '' in items() (two pieces became two ('', n) entries) and dropped it from
    # the words training reads, silently.
    import struct

    from wwho import _core
    from wwho.errors import CorpusError

    def entry(piece: bytes, n: int) -> bytes:
        return struct.pack("<I", len(piece)) + piece + struct.pack("<Q", n)

    for counter in (_core.PieceCounter(), _core.PieceCounter(span_breaks=".")):  # (items and words both read it)
        with pytest.raises(CorpusError, match="a piece-count buffer holding a piece that is not UTF-8 text"):
            counter.add_bytes(b"WWHOCNT1" + entry(b"\xff\xfe", 5) + entry("ශ්‍රී".encode(), 3))
    lone = _core.PieceCounter()
    lone.add_bytes(b"WWHOCNT1" + entry("\ud800".encode("utf-8", "surrogatepass"), 2))  # WTF-8: a lone surrogate
    assert dict(lone.items()) == {"\ud800": 2}
    good = _core.PieceCounter()
    good.add_bytes(b"WWHOCNT1" + entry(b"", 3) + entry("ශ්‍රී".encode(), 2))
    assert dict(good.items()) == {"": 3, "ශ්‍රී": 2}
