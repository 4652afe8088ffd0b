"""Corpus input: formats, compression, directories, globs, bad lines named by file:line."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os

import pytest

from wwho.corpus import CorpusStats, iter_documents
from wwho.corpus_files import resolve_paths
from wwho.errors import CorpusError

DOCS = ["ශ්‍රී ලංකාව", "नमस्ते दुनिया", "plain english"]


@pytest.mark.parametrize("opener, suffix", [(open, ""), (gzip.open, ".gz"), (lzma.open, ".xz"), (bz2.open, ".bz2")])
@pytest.mark.parametrize("fmt", ["txt", "jsonl"])
def test_formats_and_compression(tmp_path, opener, suffix, fmt):
    path = tmp_path / f"corpus.{fmt}{suffix}"
    lines = DOCS if fmt == "txt" else [json.dumps({"text": d, "id": i}, ensure_ascii=False) for i, d in enumerate(DOCS)]
    with opener(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    assert list(iter_documents(path)) == DOCS


def test_text_field_and_empty_lines(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"body": "a"}\n\n{"body": "b"}\n', encoding="utf-8")
    assert list(iter_documents(path, text_field="body")) == ["a", "b"]


def test_directories_and_globs_in_sorted_order(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.txt").write_text("b\n")
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "sub" / "c.txt").write_text("c\n")
    (tmp_path / ".hidden").write_text("h\n")
    assert list(iter_documents(tmp_path)) == ["a", "b", "c"]
    assert list(iter_documents(str(tmp_path / "*.txt"))) == ["a", "b"]


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"text": "ok"}\n{"text": \n', r"c.jsonl:2: invalid JSON"),
        (b'{"text": "ok"}\n{"other": "x"}\n', r"c.jsonl:2: no field 'text'"),
        (b'{"text": 3}\n', r"c.jsonl:1: field 'text' is a number, not a string"),
        (b'{"text": null}\n', r"c.jsonl:1: field 'text' is null, not a string"),  # was "NoneType"
        (b'{"text": ["a"]}\n', r"c.jsonl:1: field 'text' is a list, not a string"),
        (b'["a"]\n', r"c.jsonl:1: a JSONL line must be an object"),
        (b'{"text": "ok"}\n\xff\xfe\n', r"c.jsonl:2: invalid UTF-8 at byte 0"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "c.jsonl"
    path.write_bytes(content)
    with pytest.raises(CorpusError, match=message):
        list(iter_documents(path))
    stats = CorpusStats()
    docs = list(iter_documents(path, skip_bad_lines=True, stats=stats))
    assert stats.bad_lines == 1 and stats.first_bad and "c.jsonl" in stats.first_bad[0]
    assert docs == (["ok"] if b"ok" in content else [])


def test_truncated_gzip_is_a_clear_error(tmp_path):
    path = tmp_path / "c.txt.gz"
    data = gzip.compress(("line\n" * 10000).encode())
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusError, match="c.txt.gz:.*corrupt or truncated"):
        list(iter_documents(path))


# --- line length: a line longer than max_line_bytes is a file:line error, read in bounded memory ---

BOMB_MB = 512  # what the one endless line expands to


@pytest.fixture(scope="module")
def bomb(tmp_path_factory):
    """A ~0.5 MB .gz holding one ordinary line, then 512 MB of 'a' with no newline."""
    import zlib

    path = tmp_path_factory.mktemp("bomb") / "bomb.txt.gz"
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip framing
    chunk = b"a" * 2**20
    with open(path, "wb") as f:
        f.write(deflate.compress("ශ්‍රී ලංකා\n".encode()))
        for _ in range(BOMB_MB):
            f.write(deflate.compress(chunk))
        f.write(deflate.flush())
    assert path.stat().st_size < 2**20
    return path


def test_an_endless_line_is_a_file_line_error_read_in_bounded_memory(bomb):
    from memory import MB, measure

    result, growth = measure("from wwho.corpus import iter_documents\nfrom wwho.errors import CorpusError\n", f"""
docs = []
try:
    for doc in iter_documents({str(bomb)!r}):
        docs.append(doc)
except CorpusError as exc:
    result = [docs, str(exc)]
""")
    docs, message = result
    assert docs == ["ශ්‍රී ලංකා"]
    assert f"{bomb}:2:" in message and "67,108,864 bytes" in message and "--max-line-bytes" in message
    assert growth < 200 * MB, f"{growth / MB:.0f} MB for a line of {BOMB_MB} MB"  # the limit is 64 MiB


def test_skip_bad_lines_skips_an_endless_line_in_bounded_memory(tmp_path, bomb):
    import shutil

    from memory import MB, measure

    path = tmp_path / "bomb-then-more.txt.gz"
    shutil.copy(bomb, path)
    with open(path, "ab") as f:  # a second gzip member: the endless line ends, then more lines
        f.write(gzip.compress(b"\nafter\nthe end\n"))
    result, growth = measure("from wwho.corpus import CorpusStats, iter_documents\n", f"""
stats = CorpusStats()
result = [list(iter_documents({str(path)!r}, skip_bad_lines=True, stats=stats, max_line_bytes=2**20)),
          stats.bad_lines, stats.first_bad]
""")
    docs, bad, first = result
    assert docs == ["ශ්‍රී ලංකා", "after", "the end"]
    assert bad == 1 and f"{path}:2:" in first[0]
    assert growth < 40 * MB, f"{growth / MB:.0f} MB"


def test_max_line_bytes_counts_the_line_end(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(b"abcd\n" + b"abcde\n" + b"xy")
    with pytest.raises(CorpusError, match=r"c\.txt:2: the line is longer than 5 bytes"):
        list(iter_documents(path, max_line_bytes=5))
    assert list(iter_documents(path, max_line_bytes=6)) == ["abcd", "abcde", "xy"]
    stats = CorpusStats()
    assert list(iter_documents(path, max_line_bytes=5, skip_bad_lines=True, stats=stats)) == ["abcd", "xy"]
    assert stats.bad_lines == 1 and stats.bytes == path.stat().st_size


@pytest.mark.parametrize("bad", [0, -1, 2**40 + 1, 1.5, "64M", True])
def test_max_line_bytes_is_checked(tmp_path, bad):
    path = tmp_path / "c.txt"
    path.write_text("x\n")
    with pytest.raises(CorpusError, match="max_line_bytes must be an integer from 1 to"):
        list(iter_documents(path, max_line_bytes=bad))


@pytest.mark.parametrize("verb", [["train", "--kind", "sgpe", "--vocab-size", "400", "--out", "{out}", "--quiet"],
                                  ["train", "--kind", "bytelevel", "--vocab-size", "300", "--out", "{out}", "--quiet"],
                                  ["eval", "--tokenizer", "{o200k}", "--quiet", "--corpus"]])
def test_every_trainer_and_eval_stop_at_an_endless_line(tmp_path, bomb, verb):
    from cli_run import one_line_error, wwho
    from conftest import O200K_FILE

    if "{o200k}" in verb and not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    args = [a.format(out=tmp_path / "out", o200k=O200K_FILE) for a in verb]
    message = one_line_error(wwho(*args, bomb))
    assert f"{bomb}:2:" in message and "--max-line-bytes" in message
    assert not (tmp_path / "out").exists()


def test_the_line_limit_is_a_flag(tmp_path):
    from cli_run import one_line_error, wwho

    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකා\n" + "ලංකා " * 400 + "\n", encoding="utf-8")  # line 2: 5,201 bytes
    args = ["train", "--kind", "sgpe", corpus, "--vocab-size", 400, "--quiet", "--no-verify"]
    message = one_line_error(wwho(*args, "--out", tmp_path / "a", "--max-line-bytes", "4k"))
    assert "c.txt:2: the line is longer than 4,096 bytes" in message
    assert wwho(*args, "--out", tmp_path / "b", "--max-line-bytes", "8k").returncode == 0
    skipped = wwho(*args, "--out", tmp_path / "c", "--max-line-bytes", "4k", "--skip-bad-lines")
    assert skipped.returncode == 0 and b"1 bad lines skipped" in skipped.stderr


# --- inputs that exist but are not files (issue 27, item 4) ------------------------------------------


def test_a_fifo_put_in_a_files_place_is_refused_without_blocking(tmp_path):
    """The check is made again on the open file, which is opened without blocking: a FIFO that
    replaced a corpus file after the paths were resolved cannot hang the run."""
    import threading

    from wwho.corpus import file_documents

    fifo = tmp_path / "corpus.txt.gz"
    os.mkfifo(fifo)
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(list(file_documents(fifo)))
        except CorpusError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        with open(fifo, "wb"):
            pass
        thread.join(10)
        pytest.fail("blocked on a FIFO")
    assert isinstance(outcome[0], CorpusError) and "is a FIFO (named pipe)" in str(outcome[0])


def test_compressed_files_close_the_file_under_them(tmp_path):
    """A decompressor given a file object does not close it: open_binary closes both (no file left
    open, no ResourceWarning)."""
    import gc
    import warnings

    from wwho.corpus import open_binary

    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for suffix, compress in ((".gz", gzip.compress), (".xz", lzma.compress), (".bz2", bz2.compress)):
            path = tmp_path / f"c.txt{suffix}"
            path.write_bytes(compress(b"one\ntwo\n"))
            with open_binary(path) as f:
                assert f.readline() == b"one\n"
            assert list(iter_documents(path)) == ["one", "two"]
        if before is not None:
            assert len(os.listdir("/proc/self/fd")) == before
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_a_jsonl_line_nested_too_deeply_is_a_bad_line(tmp_path):
    """Not a RecursionError traceback from json, with skip_bad_lines or without."""
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "one"}\n{"text": "x", "n": ' + "[" * 5000 + "]" * 5000 + '}\n{"text": "two"}\n')
    with pytest.raises(CorpusError, match=r"d.jsonl:2: JSON nested too deeply"):
        list(iter_documents(path))
    stats = CorpusStats()
    assert list(iter_documents(path, skip_bad_lines=True, stats=stats)) == ["one", "two"] and stats.bad_lines == 1


def test_a_jsonl_line_giving_the_text_field_twice_is_a_bad_line(tmp_path):
    """``{"text": "ශ්‍රී", "text": "abc"}`` must not be read as "abc" (JSON keeps the last) in silence;
    a nested object's own "text", and the word in the text, are no second field."""
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "one"}\n{"text": "ශ්\u200dරී", "text": "abc"}\n'
                    '{"meta": {"text": "inner"}, "text": "two text"}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"d.jsonl:2: the field 'text' is given twice"):
        list(iter_documents(path))
    stats = CorpusStats()
    assert list(iter_documents(path, skip_bad_lines=True, stats=stats)) == ["one", "two text"]
    assert stats.bad_lines == 1


@pytest.mark.parametrize(("field", "second"), [
    ("text", r'"te\u0078t"'),          # an ASCII letter escaped
    ("text", r'"\u0074\u0065xt"'),    # two, upper part of the key plain
    ("body/x", r'"body\/x"'),          # JSON's escaped slash
    ("මූලය", r'"\u0db8\u0dd6\u0dbd\u0dba"'),  # a key of another script, escaped throughout
])
def test_the_text_field_given_twice_with_escapes_is_a_bad_line(tmp_path, field, second):
    """A second spelling of the field counts as the field twice, not only the field as it is, or
    ``{"text": "a", "te\\u0078t": "b"}`` would be read as "b" in silence. JSON's own parser
    (``json.loads`` keeps the last of two equal keys) decides which keys are equal."""
    first = json.dumps(field, ensure_ascii=False)
    assert json.loads("{" + f"{first}: 1, {second}: 2" + "}") == {field: 2}  # the same key to JSON
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({field: "one"}, ensure_ascii=False) + "\n" + "{" + f'{first}: "a", {second}: "b"'
                    + "}\n" + "{" + f'{second}: "two"' + "}\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"d.jsonl:2: the field .* is given twice"):
        list(iter_documents(path, text_field=field))
    assert list(iter_documents(path, text_field=field, skip_bad_lines=True)) == ["one", "two"]


@pytest.mark.parametrize("name", ["a.txt", "a.jsonl", "a.txt.gz"])
def test_a_byte_order_mark_at_the_start_of_a_file_is_no_text(tmp_path, name):
    # Windows editors write one; it was read as text (a token '\ufeff', glued to the first word).
    lines = ['{"text": "ශ්‍රී ලංකාව"}', '{"text": "\ufeffinside is text"}'] if ".jsonl" in name else \
        ["ශ්‍රී ලංකාව", "\ufeffinside is text"]
    data = ("\ufeff" + "\n".join(lines) + "\n").encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    stats = CorpusStats()
    assert list(iter_documents(path, stats=stats)) == ["ශ්‍රී ලංකාව", "\ufeffinside is text"]
    assert stats.bytes == len(data)


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel"])
def test_training_on_files_with_a_byte_order_mark_equals_training_without(tmp_path, kind):
    # The compiled core reads plain text files itself: the mark is dropped there too.
    from pathlib import Path

    from wwho import ByteBPE, SGPETokenizer

    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    lines = sample.read_text(encoding="utf-8").splitlines()[:600]
    for folder, mark in (("plain", ""), ("marked", "\ufeff")):
        (tmp_path / folder).mkdir()
        for k in range(40):  # enough marks for a merge of their bytes, were they text
            (tmp_path / folder / f"{k}.txt").write_text(mark + "\n".join(lines[k::40]) + "\n", encoding="utf-8")

    def train(folder):
        if kind == "sgpe":
            return SGPETokenizer.train(tmp_path / folder, vocab_size=900, progress=False, workers=1).vocab
        return ByteBPE.train(tmp_path / folder, vocab_size=1500, progress=False, workers=1).merges

    assert train("marked") == train("plain")


@pytest.mark.parametrize("compress, name, message", [
    (gzip.compress, "c.txt", "is gzip-compressed, not text: name it c.txt.gz to have it read"),
    (lzma.compress, "c", "is xz-compressed, not text: name it c.xz"),
    (bz2.compress, "c.txt", "is bzip2-compressed, not text: name it c.txt.bz2"),
    (lambda data: b"\x28\xb5\x2f\xfd" + data, "c.txt.zst", "is zstd-compressed, not text: decompress it first"),
])
def test_a_compressed_file_read_as_text_is_named_not_trained_on(tmp_path, compress, name, message):
    # It was "invalid UTF-8 at byte 1", and with --skip-bad-lines the compressed bytes were trained on.
    from wwho import SGPETokenizer

    path = tmp_path / name
    path.write_bytes(compress("ශ්‍රී ලංකාව\n".encode() * 500))
    with pytest.raises(CorpusError, match=message):
        list(iter_documents(path, skip_bad_lines=True))
    with pytest.raises(CorpusError, match=message):  # the core's own reader of plain text
        SGPETokenizer.train(path, vocab_size=500, progress=False, skip_bad_lines=True)


def test_text_that_begins_like_a_magic_number_is_text(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("BZh is how bzip2 files begin\nPK is a zip's\n", encoding="utf-8")
    assert list(iter_documents(path)) == ["BZh is how bzip2 files begin", "PK is a zip's"]


def test_a_dash_as_a_corpus_says_standard_input_is_not_read(tmp_path, monkeypatch):
    with pytest.raises(CorpusError, match="-: standard input is not read as a corpus"):
        resolve_paths("-")
    monkeypatch.chdir(tmp_path)  # a file named "-" is a file like any other
    (tmp_path / "-").write_text("a\n", encoding="utf-8")
    assert list(iter_documents("-")) == ["a"]


@pytest.mark.filterwarnings("ignore::wwho.errors.VocabSizeWarning")  # a small corpus: its size is not checked here
def test_a_tokenizer_saved_in_a_corpus_folder_is_not_read_as_corpus(tmp_path):
    """`wwho train -o corpus corpus` run a second time must not read the first run's vocab.json,
    tokenizer.json and manifest as training text, and learn another vocabulary."""
    from wwho.errors import WwhoWarning
    from wwho.sgpe import SGPETokenizer

    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "text.txt").write_text("ශ්‍රී ලංකාව\n" * 200 + "ලංකා\n" * 50, encoding="utf-8")
    first = SGPETokenizer.train([folder], vocab_size=300, script="sinhala", progress=False, workers=1)
    first.save(folder)
    (folder / "notes.txt").write_text("ලංකාව\n", encoding="utf-8")  # the user's own file beside it: read
    with pytest.warns(WwhoWarning, match="the files of a tokenizer wwho saved there"):
        files = resolve_paths([folder])
    assert [p.name for p in files] == ["notes.txt", "text.txt"]
    (folder / "notes.txt").unlink()
    with pytest.warns(WwhoWarning):
        again = SGPETokenizer.train([folder], vocab_size=300, script="sinhala", progress=False, workers=1)
    assert again.file.to_bytes() == first.file.to_bytes()




@pytest.mark.parametrize("encoding, name, sign", [
    ("utf-16", "UTF-16LE", "byte order mark FF FE"),  # Python writes a little-endian BOM
    ("utf-16-be", "UTF-16BE", "a NUL byte beside each character"),
    ("utf-16-le", "UTF-16LE", "a NUL byte beside each character"),
    ("utf-32", "UTF-32LE", "byte order mark FF FE 00 00"),
])
def test_utf16_and_utf32_files_are_named_not_trained_on(tmp_path, encoding, name, sign):
    # ASCII in UTF-16 without a byte order mark is valid UTF-8 with a NUL between the characters:
    # it was trained on with exit 0 (tokens such as ' \x00'); with a mark, "invalid UTF-8 at byte 0".
    from wwho import ByteBPE, SGPETokenizer

    path = tmp_path / "c.txt"
    path.write_bytes("the quick brown fox jumps over the lazy dog\n".encode(encoding) * 50)
    message = f"c.txt: is {name} text \\({'it begins with the ' if 'mark' in sign else ''}{sign}.*iconv -f {name}"
    with pytest.raises(CorpusError, match=message):
        list(iter_documents(path, skip_bad_lines=True))
    with pytest.raises(CorpusError, match=message):
        ByteBPE.train(path, vocab_size=300, progress=False, workers=1)
    with pytest.raises(CorpusError, match=message):  # the core's own reader of plain text
        SGPETokenizer.train(path, vocab_size=500, progress=False, skip_bad_lines=True)


def test_utf16_input_to_encode_and_syllabify_is_named(tmp_path):
    from conftest import run_wwho

    from wwho import ByteBPE

    text = tmp_path / "text.txt"
    text.write_text("the quick brown fox\n" * 20, encoding="utf-8")
    ByteBPE.train(text, vocab_size=265, progress=False, workers=1).save(tmp_path / "tok")
    path = tmp_path / "c.txt"
    path.write_bytes("ශ්‍රී ලංකාව\n".encode("utf-16"))
    for args in (("encode", "--tokenizer", tmp_path / "tok", "--file", path), ("syllabify", "--file", path)):
        done = run_wwho(*args)
        assert done.returncode == 2 and "is UTF-16LE text (it begins with the byte order mark FF FE)" in done.stderr


@pytest.mark.parametrize("text", [
    "\x00" * 10,  # too short to tell
    "a\x00b\x00c\x00" * 3,
    ("word\x00" * 100),  # NULs, but not one beside each character
    "\x00a" * 20 + "ශ්‍රී ලංකාව " * 20,  # a NUL beside each character of only part of the head
])
def test_utf8_text_holding_nul_characters_is_read(tmp_path, text):
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")
    assert list(iter_documents(path)) == [text]


@pytest.mark.parametrize("depth, bad", [(399, False), (499, False), (500, True), (600, True)])  # (+1: the line's object)
def test_jsonl_nesting_has_one_limit_on_every_python(tmp_path, depth, bad):
    # Python up to 3.12 refused about 1,000 levels (its recursion limit), 3.13 far more: one corpus
    # read two ways. Brackets inside strings do not nest.
    path = tmp_path / "d.jsonl"
    strings = '"' + "[{" * 1000 + '\\"]"'
    path.write_text('{"text": "x", "s": ' + strings + ', "n": ' + "[" * depth + "]" * depth + "}\n", encoding="utf-8")
    if bad:
        with pytest.raises(CorpusError, match=r"d.jsonl:1: JSON nested too deeply"):
            list(iter_documents(path))
    else:
        assert list(iter_documents(path)) == ["x"]
