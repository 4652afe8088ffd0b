"""Where ``wwho syllabify`` and ``wwho encode`` read their text: a TEXT argument, ``--file FILE``
(plain or compressed) or standard input; one text whatever the source, and errors that name it."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import shlex
import subprocess

import pytest
from cli_run import one_line_error, wwho
from conftest import wwho_command

TEXT = "ශ්‍රී ලංකාව and नमस्ते\r\nதமிழ் ಕನ್ನಡ  বাংলা\n\n12 ක්ෂ\nno final newline"


def _write(path, data: bytes):
    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix, open)
    with opener(path, "wb") as f:
        f.write(data)
    return path


@pytest.mark.parametrize("suffix", [".txt", ".gz", ".bz2"])
@pytest.mark.parametrize("options", [["--script", "sinhala"], ["--script", "indic", "--leading-space"],
                                     ["--script", "devanagari", "--json"]])
def test_syllabify_a_file_prints_what_standard_input_prints(tmp_path, suffix, options):
    path = _write(tmp_path / f"text{suffix}", TEXT.encode())
    from_stdin = wwho("syllabify", *options, input=TEXT.encode())
    from_file = wwho("syllabify", *options, "--file", path)
    assert from_stdin.returncode == 0 and from_file.returncode == 0, from_file.stderr
    assert from_file.stdout == from_stdin.stdout
    lines = from_file.stdout.decode().splitlines()
    assert len(lines) == 5  # one a line, the CRLF's CR no syllable, the empty line kept
    if "--json" in options:
        assert json.loads(lines[2]) == []


def test_syllabify_a_file_of_many_blocks_keeps_its_lines(tmp_path, monkeypatch):
    """Reads of 7 bytes (in this process): lines cut between reads, and one longer than a read, come
    out whole, as on standard input."""
    import io
    import sys

    from wwho import Syllabifier
    from wwho.cli import main
    from wwho.cli import syllabify as verb

    monkeypatch.setattr(verb, "BLOCK_BYTES", 7)
    text = "ශ්‍රී ලංකාව\n" * 5 + "ක" * 30 + "\nනමස්"
    path = _write(tmp_path / "t.txt", text.encode())
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="utf-8"))
    assert main(["syllabify", "--file", str(path)]) == 0
    syl = Syllabifier.for_script("sinhala")
    assert out.getvalue().decode() == "".join(syl.joined(line, " | ") + "\n" for line in text.split("\n"))


def test_syllabify_file_errors_name_the_file(tmp_path):
    bad = _write(tmp_path / "bad.txt", "ක\n".encode() * 3 + b"\xff\n")
    assert one_line_error(wwho("syllabify", "--file", bad)).endswith(
        f"{bad}:4: invalid UTF-8 at byte 0 of the line (byte 12 of the input)")
    long = _write(tmp_path / "long.txt", "ක\n".encode() + "ක".encode() * 400 + b"\n")
    assert one_line_error(wwho("syllabify", "--file", long, "--max-line-bytes", "1k")).endswith(
        f"{long}:2: the line is longer than 1,024 bytes (its line end included), the limit that bounds memory (raise it with --max-line-bytes)")
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress("ක\n".encode() * 1000)[:40])
    assert f"{cut}: cannot read (corrupt or truncated file?)" in one_line_error(wwho("syllabify", "--file", cut))
    assert one_line_error(wwho("syllabify", "--file", tmp_path / "absent.txt")).endswith(
        f"{tmp_path / 'absent.txt'}: no such file to split")
    assert "is a directory" in one_line_error(wwho("syllabify", "--file", tmp_path))
    assert one_line_error(wwho("syllabify", "--file", bad, "ක")).endswith(
        "give either TEXT (or -) or --file, not both")


def test_syllabify_refuses_a_file_it_would_append_its_own_output_to(tmp_path):
    path = _write(tmp_path / "t.txt", "ශ්‍රී\n".encode())
    with open(path, "ab") as out:
        proc = subprocess.run([*wwho_command(), "syllabify", "--file", str(path)], stdout=out,
                              stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode == 2 and b"is the file the results are written to" in proc.stderr
    assert path.read_bytes() == "ශ්‍රී\n".encode()


@pytest.mark.parametrize("verb", [["syllabify", "--script", "sinhala"], ["encode", "--tokenizer", "SGPE"]])
def test_a_text_argument_that_names_a_file_is_the_text_with_a_warning(tmp_path, tokenizers, verb):
    """``wwho encode corpus.txt`` printed the ids of the word "corpus.txt" and said nothing: it still
    does as documented (TEXT is the text), and says how to read the file."""
    sgpe = tmp_path / "sgpe"
    tokenizers["sinhala"].save(sgpe)
    verb = [str(sgpe) if arg == "SGPE" else arg for arg in verb]
    path = tmp_path / "ලංකාව.txt"
    path.write_text("ශ්‍රී\n", encoding="utf-8")
    named = wwho(*verb, path)
    assert named.returncode == 0, named.stderr
    assert f"wwho: warning: '{path}' is taken as the text itself, not read, though it names a file; to read " \
           f"the file, give --file {shlex.quote(str(path))}" in named.stderr.decode()
    path.unlink()
    text = wwho(*verb, path)
    assert text.returncode == 0 and b"names a file" not in text.stderr
    assert named.stdout == text.stdout and named.stdout.strip()


def test_decode_says_how_to_read_ids_from_a_file_an_argument_names(tmp_path, tokenizers):
    sgpe = tmp_path / "sgpe"
    tokenizers["sinhala"].save(sgpe)
    ids = tmp_path / "ids.txt"
    ids.write_text("1 2 3\n", encoding="utf-8")
    # (the item itself is shown shortened when it is long, as a temporary path may be)
    line = one_line_error(wwho("decode", "--tokenizer", sgpe, ids))
    assert "arguments: item 0 is " in line and line.endswith(
        f", not a token id (it names a file: read the ids from it with - < {shlex.quote(str(ids))})"), line
    ids.unlink()
    assert one_line_error(wwho("decode", "--tokenizer", sgpe, ids)).endswith(", not a token id")


def test_decode_says_how_to_read_a_npy_file(tmp_path, tokenizers):
    """A .npy of ids named as an argument, or on standard input, is pointed at --npy (not told to
    read it with ``- <``, which then fails on numpy's header)."""
    sgpe = tmp_path / "sgpe"
    tokenizers["sinhala"].save(sgpe)
    text = tmp_path / "t.txt"
    text.write_text("ශ්‍රී ලංකාව\n", encoding="utf-8")
    npy = tmp_path / "ids.npy"
    assert wwho("encode", "--tokenizer", sgpe, "--file", text, "--npy", "-o", npy, "--eot", "none").returncode == 0
    assert one_line_error(wwho("decode", "--tokenizer", sgpe, npy)).endswith(
        f"(it names a file: read the ids from it with --npy {shlex.quote(str(npy))})")
    assert one_line_error(wwho("decode", "--tokenizer", sgpe, "-", input=npy.read_bytes())).endswith(
        "(this is a .npy file of ids: decode it with --npy FILE, as encode --npy writes it)")


def test_encode_keeps_a_carriage_return_that_ends_no_line(tmp_path, tokenizers):
    """Only the line end (``\\n`` or ``\\r\\n``) is taken off a line: a ``\\r`` before it, or at
    the end of the last line, is text, and comes back from ``wwho decode`` (so ``ab\\r\\r\\n``
    does not encode as ``ab``)."""
    sgpe = tmp_path / "sgpe"
    tokenizers["sinhala"].save(sgpe)
    tok = tokenizers["sinhala"]
    path = tmp_path / "cr.txt"
    path.write_bytes("ශ්‍රී\r\r\nලංකාව\r\n\rx\r".encode())
    for source in (["--file", path], ["-"]):
        proc = wwho("encode", "--tokenizer", sgpe, *source, input=path.read_bytes() if source == ["-"] else None)
        assert proc.returncode == 0, proc.stderr
        lines = [[int(i) for i in line.split()] for line in proc.stdout.decode().splitlines()]
        assert lines == [tok.encode("ශ්‍රී\r"), tok.encode("ලංකාව"), tok.encode("\rx\r")]
        back = wwho("decode", "--tokenizer", sgpe, "-", input=proc.stdout)
        assert back.stdout.decode() == "ශ්‍රී\r\nලංකාව\n\rx\r\n"


def test_a_refused_byte_is_named_by_its_line_in_the_file(tmp_path):
    """A byte a vocabulary has no token for (Falcon's GGUF lacks ``\\x0b``) is named by the line of
    the file, as a refused special token is, not by its place in an internal block of lines
    (``texts[37856]``, moving with --block-mb)."""
    from conftest import DATA, require_data

    falcon = require_data(DATA / "gguf-vocab" / "ggml-vocab-falcon.gguf")
    path = tmp_path / "f.txt"
    path.write_text("hello world line\n" * 3_000 + "bad \x0b here\n", encoding="utf-8")
    for block in ("0.001", "4"):
        line = one_line_error(wwho("encode", "--tokenizer", falcon, "--file", path, "--block-mb", block,
                                   "-o", tmp_path / "out.txt"))
        assert line == f"wwho: error: {path}: line 3,001: byte b'\\x0b' at offset 4 has no token in this vocabulary"


LINE = "ශ්‍රී ලංකාව and नमस्ते\n"


def _changed_after_the_first_line(path, change: str):
    """A reader of lines that changes ``path`` once the first line is read, as a writer would while
    the verb reads it: cut at a line end (what is left reads as a shorter corpus), cut inside a
    character, or appended to."""
    def change_file():
        if change == "cut at a line end":
            os.truncate(path, len(LINE.encode()) * 500)
        elif change == "cut inside a character":
            os.truncate(path, len(LINE.encode()) * 500 + 2)
        else:
            with open(path, "ab") as f:
                f.write(LINE.encode())

    def wrap(read):
        def changed(*args, **kwargs):
            for n, item in enumerate(read(*args, **kwargs)):
                yield item
                if n == 0:
                    change_file()
        return changed
    return wrap


@pytest.mark.parametrize("change", ["cut at a line end", "cut inside a character", "appended"])
@pytest.mark.parametrize("verb", ["encode", "encode --npy", "syllabify"])
def test_a_file_that_changes_while_it_is_read_is_said_so(tmp_path, monkeypatch, capsys, verb, change):
    """Exit 2 and no output file where ``--file``'s file is written to while it is read: before, a
    file cut at a line end was read as a shorter corpus (exit 0, the ids of part of it), and one
    cut inside a character as bad UTF-8 at a line that was good text."""
    from wwho.cli import encode as encode_verb
    from wwho.cli import main
    from wwho.cli import syllabify as syllabify_verb
    from wwho.sgpe import train_sgpe

    path = tmp_path / "corpus.txt"
    path.write_text(LINE * 1000, encoding="utf-8")
    sgpe = tmp_path / "sgpe"
    train_sgpe(path, vocab_size=300, progress=False, workers=1, superword_share=0).save(sgpe)  # (one line: few superwords)
    wrap = _changed_after_the_first_line(path, change)
    if verb == "syllabify":
        monkeypatch.setattr(syllabify_verb, "BLOCK_BYTES", 4096)
        monkeypatch.setattr(syllabify_verb, "_texts", wrap(syllabify_verb._texts))
    else:
        monkeypatch.setattr(encode_verb, "bounded_lines", wrap(encode_verb.bounded_lines))
    out = tmp_path / ("out.npy" if "npy" in verb else "out")
    args = {"encode": ["encode", "--tokenizer", str(sgpe), "-o", str(out)],
            "encode --npy": ["encode", "--tokenizer", str(sgpe), "--npy", "--eot", "none", "-o", str(out)],
            "syllabify": ["syllabify"]}[verb]  # (to standard output, as it goes)
    assert main([*args, "--file", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: the file changed while it was read, so what was read is no one version of it" in err, err
    assert not out.exists() and sorted(os.listdir(tmp_path)) == ["corpus.txt", "sgpe"]
