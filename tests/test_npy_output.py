"""``wwho encode --npy`` (wwho.cli.npy_output): every line's ids as one flat array, read back by numpy's own
``.npy`` reader and compared with tiktoken's ids (o200k_base), Hugging Face ``tokenizers``' ids (a
tokenizer.json of its own) and the library's encode; its dtype, its separators, its refusals, and no
output left by a run that fails part way."""

from __future__ import annotations

import warnings
from importlib import resources

import numpy as np
import pytest
from conftest import O200K_FILE, one_line_error, run_wwho
from hypothesis import given, settings
from hypothesis import strategies as st

SAMPLE = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()
LINES = SAMPLE[:400] + ["", "Hello, world 123!", "", "ශ්‍රී ලංකාව 2024 🏏", " " * 40]


@pytest.fixture(scope="module")
def sgpe_dir(tmp_path_factory):
    from wwho.sgpe import SGPETokenizer

    root = tmp_path_factory.mktemp("npy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = SGPETokenizer.train_from_iterator(SAMPLE[:1000], vocab_size=800, script="sinhala", progress=False,
                                                special_tokens=("<|endoftext|>", "[PAD]"))
    tok.save(root / "tok")
    (root / "lines.txt").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return root


def _npy(*args, out):
    done = run_wwho("encode", *args, "--npy", "-o", out)
    assert done.returncode == 0, done.stderr
    return np.load(out, mmap_mode="r")


@pytest.mark.parametrize("block_mb", ["4", "0.002"])  # one block, and a block every few lines
def test_sgpe_lines_with_an_end_token_after_each(sgpe_dir, tmp_path, block_mb):
    from wwho.sgpe import SGPETokenizer

    tok = SGPETokenizer.load(sgpe_dir / "tok")
    arr = _npy("--tokenizer", sgpe_dir / "tok", "--file", sgpe_dir / "lines.txt", "--eot", "<|endoftext|>",
               "--block-mb", block_mb, out=tmp_path / "ids.npy")
    assert arr.dtype == np.dtype("<u2") and arr.ndim == 1
    expected = [i for line in LINES for i in [*tok.encode(line), tok.eot_token]]
    assert arr.tolist() == expected


def test_sgpe_lines_run_together_with_no_end_token(sgpe_dir, tmp_path):
    from wwho.sgpe import SGPETokenizer

    tok = SGPETokenizer.load(sgpe_dir / "tok")
    arr = _npy("--tokenizer", sgpe_dir / "tok", "--file", sgpe_dir / "lines.txt", "--eot", "none",
               out=tmp_path / "ids.npy")
    assert arr.tolist() == [i for line in LINES for i in tok.encode(line)]
    assert tok.decode(arr) == "".join(LINES)


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_o200k_ids_are_tiktokens_in_uint32(sgpe_dir, tmp_path):
    """Special-token text as plain text (--special-as-text): tiktoken's encode_ordinary, its
    <|endoftext|> id after each line and nowhere else."""
    from wwho.bytelevel.tiktoken_loader import get_encoding

    lines = [*LINES[:200], "a <|endoftext|> b", ""]
    corpus = tmp_path / "lines.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    arr = _npy("--tokenizer", "o200k_base", "--tiktoken-file", O200K_FILE, "--file", corpus, "--special-as-text",
               "--eot", "<|endoftext|>", out=tmp_path / "ids.npy")
    theirs = get_encoding("o200k_base", tiktoken_file=O200K_FILE)
    assert arr.dtype == np.dtype("<u4")
    assert arr.tolist() == [i for line in lines for i in [*theirs.encode_ordinary(line), theirs.eot_token]]
    assert int((arr == theirs.eot_token).sum()) == len(lines)


def test_a_tokenizer_json_of_hugging_face_gives_its_ids(tmp_path):
    """A tokenizer.json wwho did not write (HF tokenizers' own BPE, its own special token): HF's ids."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.train_from_iterator(SAMPLE[:500], trainers.BpeTrainer(vocab_size=600, special_tokens=["</s>"],
                                                             show_progress=False,
                                                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    hf.save(str(tmp_path / "tokenizer.json"))
    corpus = tmp_path / "lines.txt"
    corpus.write_text("\n".join(LINES[:100]) + "\n", encoding="utf-8")
    arr = _npy("--tokenizer", tmp_path / "tokenizer.json", "--file", corpus, "--eot", "</s>", out=tmp_path / "ids.npy")
    eos = hf.token_to_id("</s>")
    assert arr.tolist() == [i for e in hf.encode_batch(LINES[:100], add_special_tokens=False) for i in [*e.ids, eos]]


@pytest.mark.parametrize(("args", "words"), [
    (["--npy", "-o", "{out}"], "--npy needs --eot: the special token written after each line's ids (as nanoGPT's "
                               "train.bin has <|endoftext|>), or --eot none to run the lines together; its special "
                               "tokens: <|endoftext|>, [PAD]"),
    (["--npy", "--eot", "[CLS]", "-o", "{out}"], "--eot [CLS]: not a special token of this tokenizer; its special "
                                                 "tokens: <|endoftext|>, [PAD]"),
    (["--npy", "--eot", "none"], "--npy writes a .npy file, whose header is completed at the end: give -o FILE.npy"),
    (["--npy", "--eot", "none", "-o", "-"], "give -o FILE.npy (a file, not standard output or a pipe)"),
    (["--npy", "--eot", "none", "-o", "/dev/null"], "give -o FILE.npy (a file, not standard output or a pipe)"),
    (["--ids", "--eot", "none"], "--eot is an option of --npy"),
])
def test_refusals_are_one_line_and_leave_no_file(sgpe_dir, tmp_path, args, words):
    out = tmp_path / "ids.npy"
    filled = [a.format(out=out) for a in args]
    line = one_line_error(run_wwho("encode", "--tokenizer", sgpe_dir / "tok", "--file", sgpe_dir / "lines.txt",
                                   *filled))
    assert words in line
    assert not out.exists()


def test_a_run_that_fails_part_way_leaves_no_output(sgpe_dir, tmp_path):
    """Invalid UTF-8 after many blocks have been written: the error names the line, and neither a
    half-written array nor a temporary file is left; an earlier output stays as it was."""
    corpus = tmp_path / "lines.txt"
    corpus.write_bytes(("\n".join(LINES * 5) + "\n").encode() + b"ok\n\xff\xfe\n")
    out = tmp_path / "ids.npy"
    out.write_bytes(b"earlier")
    line = one_line_error(run_wwho("encode", "--tokenizer", sgpe_dir / "tok", "--file", corpus, "--npy", "--eot",
                                   "none", "--block-mb", "0.002", "-o", out, "--force"))
    assert f"{corpus}:{len(LINES) * 5 + 2}: invalid UTF-8" in line
    assert out.read_bytes() == b"earlier" and sorted(p.name for p in tmp_path.iterdir()) == ["ids.npy", "lines.txt"]


def test_a_binary_tokenizer_says_npy_is_for_text(tmp_path):
    from wwho.binary import train_from_counts
    from wwho.binary.tokenizer import BinaryTokenizer

    counts = {bytes(range(i, i + 32)): 4 for i in range(0, 200, 8)}
    BinaryTokenizer(train_from_counts(counts, vocab_size=512, min_frequency=1)).save(tmp_path / "bin")
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)))
    line = one_line_error(run_wwho("encode", "--tokenizer", tmp_path / "bin", "--binary", data, "--npy", "--eot", "none",
                                   "-o", tmp_path / "ids.npy"))
    assert "--npy and --eot are for text tokenizers" in line


# -- wwho decode --npy: the array back to lines --------------------------------------------


def test_decode_gives_the_lines_back_byte_for_byte(sgpe_dir, tmp_path):
    """encode --npy, then decode --npy: the input file again (every line ended by its newline)."""
    corpus = sgpe_dir / "lines.txt"
    _npy("--tokenizer", sgpe_dir / "tok", "--file", corpus, "--eot", "<|endoftext|>", "--block-mb", "0.002",
         out=tmp_path / "ids.npy")
    done = run_wwho("decode", "--tokenizer", sgpe_dir / "tok", "--npy", tmp_path / "ids.npy", "--eot",
                    "<|endoftext|>", "-o", tmp_path / "back.txt")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "back.txt").read_bytes() == corpus.read_bytes()


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_decode_of_o200k_ids_made_by_numpy_itself(tmp_path):
    """An array numpy wrote (int64, tiktoken's ids): a line per end token, a last line without one
    too, and --eot none makes the whole array one line."""
    from wwho.bytelevel.tiktoken_loader import get_encoding

    theirs = get_encoding("o200k_base", tiktoken_file=O200K_FILE)
    lines = ["hello world", "", "ශ්‍රී ලංකාව 🏏", "last, without its end"]
    ids = [i for line in lines[:3] for i in [*theirs.encode_ordinary(line), theirs.eot_token]]
    np.save(tmp_path / "ids.npy", np.array(ids + theirs.encode_ordinary(lines[3]), dtype=np.int64))
    args = ("decode", "--tokenizer", "o200k_base", "--tiktoken-file", O200K_FILE, "--npy", tmp_path / "ids.npy")
    done = run_wwho(*args, "--eot", "<|endoftext|>")
    assert done.returncode == 0 and done.stdout == "\n".join(lines) + "\n", done.stderr
    done = run_wwho(*args, "--eot", "none")
    assert done.stdout == "<|endoftext|>".join(lines) + "\n"


def test_decode_refuses_what_is_no_array_of_ids(sgpe_dir, tmp_path):
    np.save(tmp_path / "square.npy", np.zeros((2, 2), dtype=np.int32))
    np.save(tmp_path / "floats.npy", np.zeros(3))
    np.savez(tmp_path / "both.npz", ids=np.zeros(3, dtype=np.uint32))
    np.save(tmp_path / "whole.npy", np.arange(100, dtype=np.uint32))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "whole.npy").read_bytes()[:200])
    np.save(tmp_path / "far.npy", np.array([5, 10**6], dtype=np.uint32))
    whole = (tmp_path / "whole.npy").read_bytes()
    # one byte of the header changed: numpy's parser fails with tokenize.TokenError
    (tmp_path / "open.npy").write_bytes(whole.replace(b"(100,)", b"(100, "))
    # a header that says fewer ids than the file holds: numpy maps them and ignores the rest
    (tmp_path / "short.npy").write_bytes(whole.replace(b"(100,)", b"(40,) "))
    cases = {
        "open.npy": "open.npy: not a .npy array of ids (TokenError",
        "short.npy": "short.npy: its header says 40 ids (160 bytes after a header of 128), but the file holds 400",
        "square.npy": "a 2-dimensional array of int32, not a flat array of integer ids",
        "floats.npy": "a 1-dimensional array of float64, not a flat array of integer ids",
        "both.npz": "an .npz archive; give the .npy array of ids that wwho encode --npy writes",
        "cut.npy": "cut.npy: its header says 100 ids (400 bytes after a header of 128), but the file holds 72",
        "far.npy": "far.npy: line 1 (ids 0 to 2): token id 1000000 at position 1 is out of range",
        ".": "not a regular file",
    }
    for name, words in cases.items():
        line = one_line_error(run_wwho("decode", "--tokenizer", sgpe_dir / "tok", "--npy", tmp_path / name,
                                       "--eot", "none", "-o", tmp_path / "out.txt"))
        assert words in line, (name, line)
        assert not (tmp_path / "out.txt").exists()
    line = one_line_error(run_wwho("decode", "--tokenizer", sgpe_dir / "tok", "--npy", sgpe_dir / "lines.txt",
                                   "--eot", "none"))
    assert "not a .npy file (no NumPy header)" in line
    assert "--eot is an option of --npy" in one_line_error(run_wwho("decode", "--tokenizer", sgpe_dir / "tok",
                                                                    "--eot", "none", "5"))
    assert "as --npy FILE or as IDs, not both" in one_line_error(
        run_wwho("decode", "--tokenizer", sgpe_dir / "tok", "--npy", tmp_path / "whole.npy", "--eot", "none", "5"))


def test_an_array_cut_while_it_is_read_is_an_error_naming_it(tmp_path):
    """A ``.npy`` file cut short while ``decode --npy`` reads it (a copy written over it) is an error
    naming the file, in a process that lives on: a memory map of it would die of SIGBUS there, with
    no message and the output's temporary file left behind. Run in a child, which such a death would
    end, not this test process."""
    import subprocess
    import sys

    path = tmp_path / "ids.npy"
    np.save(path, np.arange(1 << 20, dtype=np.uint32))
    code = ("import os, sys\nfrom wwho.cli.npy_output import read_npy\nfrom wwho.errors import CorpusError\n"
            "ids = read_npy(sys.argv[1])\nassert int(ids[5:6][0]) == 5 and len(ids) == 1 << 20\n"
            "os.truncate(sys.argv[1], 1000)\n"
            "try:\n    ids[0:len(ids)].sum()\nexcept CorpusError as exc:\n    print(exc)")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.startswith(f"{path}: cut while it was read: it ends before byte "), done.stdout


# -- a line longer than a block: decoded a block of ids at a time, as decode gives it whole --------


@pytest.fixture(scope="module")
def long_line_kinds(sgpe_dir):
    """SGPE (special tokens, and the dummy prefix), and with the shared o200k_base file o200k itself and the
    meta tokenizer: the kinds whose decode ``decode --npy`` cuts into blocks."""
    from wwho.sgpe import SGPETokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prefixed = SGPETokenizer.train_from_iterator(SAMPLE[:600], vocab_size=600, script="sinhala", progress=False,
                                                     prefix_space=True)
        plain = SGPETokenizer.train_from_iterator(SAMPLE[:600], vocab_size=600, script="sinhala", progress=False)
    kinds = {"sgpe": SGPETokenizer.load(sgpe_dir / "tok"), "sgpe-prefix": prefixed}
    if O200K_FILE.is_file():
        from wwho.bytelevel import ByteBPE
        from wwho.meta import MetaTokenizer

        kinds["o200k"] = ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
        kinds["meta"] = MetaTokenizer(plain, "o200k_base", tiktoken_file=O200K_FILE)
    return kinds


def _line_in_blocks(tok, ids: list[int], block: int, before: int = 0) -> bytes:
    """What ``decode --npy`` writes for ``ids`` as one line (after ``before`` other ids), ``block`` ids at a time."""
    import io
    from unittest import mock

    from wwho.cli import decode

    out = io.BytesIO()
    array = np.asarray([0] * before + ids, dtype=np.uint32)
    with mock.patch.object(decode, "LINE_BLOCK", block):
        decode._write_line(out, tok, array, before, len(array), "line 1")
    return out.getvalue()


def _assigned(tok, i: int) -> bool:
    from wwho.errors import TokenizerError

    try:
        return tok.token_bytes(i) is not None
    except TokenizerError:  # (o200k_base leaves a few ids unassigned)
        return False


TEXTS = st.text(st.sampled_from([*"ශ්‍රීලංකා ව", "\u200d", " ", "a", "🏏", "\ud800", "\udfff", "\n", "é"]), max_size=60)


@pytest.mark.parametrize("kind", ["sgpe", "sgpe-prefix", "o200k", "meta"])
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_a_long_line_in_blocks_is_decode_of_the_whole_line(long_line_kinds, kind, data):
    """Any ids (valid UTF-8 or not: a token may end inside a character, SGPE's byte tokens spell lone
    surrogates), cut into blocks of any size after any other ids: the bytes decode's text gives."""
    if kind not in long_line_kinds:
        pytest.skip(f"{O200K_FILE} is absent")
    tok = long_line_kinds[kind]
    if data.draw(st.booleans()):
        ids = tok.encode(data.draw(TEXTS))
    else:
        ids = data.draw(st.lists(st.integers(0, tok.n_vocab - 1).filter(lambda i: _assigned(tok, i)), max_size=40))
    block = data.draw(st.integers(1, max(1, len(ids))))
    expected = tok.decode(ids).encode("utf-8", "surrogatepass") + b"\n"
    assert _line_in_blocks(tok, ids, block, before=data.draw(st.integers(0, 3))) == expected


def test_decode_of_one_long_line_holds_a_block_at_a_time(sgpe_dir, tmp_path, monkeypatch):
    """--eot none makes the whole array one line: its text is never held whole (traced memory stays
    far below the line's text), and the file written is the whole line's decode."""
    import tracemalloc

    from wwho.cli import decode, main
    from wwho.sgpe import SGPETokenizer

    tok = SGPETokenizer.load(sgpe_dir / "tok")
    ids = np.tile(np.asarray(tok.encode(" ".join(LINES)), dtype=np.uint16), 40)  # about 4 MB of text
    np.save(tmp_path / "ids.npy", ids)
    monkeypatch.setattr(decode, "LINE_BLOCK", 1 << 14, raising=False)
    monkeypatch.setattr(decode, "load_tokenizer", lambda *args, **kwargs: tok)
    tracemalloc.start()
    try:
        code = main(["decode", "--tokenizer", str(sgpe_dir / "tok"), "--npy", str(tmp_path / "ids.npy"), "--eot", "none",
                     "-o", str(tmp_path / "back.txt")])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0
    text = (tmp_path / "back.txt").read_bytes()
    assert text == tok.decode(ids).encode("utf-8") + b"\n" and len(text) > 3_000_000
    assert peak < 2_000_000, f"{peak:,} bytes traced at the peak"


def test_a_tokenizer_json_line_longer_than_it_decodes_at_once_is_refused(tmp_path, monkeypatch, capsys):
    """A Hugging Face tokenizer.json decodes a line whole: one longer than HF_LINE ids is an error
    naming the line, and no output is left."""
    from tokenizers import Tokenizer, models

    from wwho.cli import decode, main

    Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]")).save(str(tmp_path / "tokenizer.json"))
    np.save(tmp_path / "ids.npy", np.zeros(50, dtype=np.uint16))
    args = ["decode", "--tokenizer", str(tmp_path / "tokenizer.json"), "--npy", str(tmp_path / "ids.npy"),
            "--eot", "none", "-o", str(tmp_path / "out.txt")]
    monkeypatch.setattr(decode, "HF_LINE", 40, raising=False)
    assert main(args) == 2
    assert "ids.npy: line 1: 50 ids, more than the 40 a Hugging Face tokenizer.json" in capsys.readouterr().err
    assert not (tmp_path / "out.txt").exists()
    monkeypatch.setattr(decode, "HF_LINE", 50)
    assert main(args) == 0
    assert (tmp_path / "out.txt").read_text() == " ".join("a" * 50) + "\n"


def test_decode_of_standard_input_holds_a_line_as_an_array_and_decodes_it_in_blocks(sgpe_dir, tmp_path, monkeypatch,
                                                                                   capsys):
    """``wwho decode -``: a line of plain ids longer than a block is decoded a block at a time into
    its whole decode; an id out of range is named by its line, and, in a long line, by its block."""
    import io

    from wwho.cli import decode, main
    from wwho.sgpe import SGPETokenizer

    tok = SGPETokenizer.load(sgpe_dir / "tok")
    lines = [tok.encode(" ".join(LINES[:150])), [], tok.encode("ශ්‍රී ලංකාව"), tok.encode(" ".join(LINES[150:]))]
    assert len(lines[0]) > 3_000 and len(lines[3]) > 3_000
    monkeypatch.setattr(decode, "LINE_BLOCK", 1000)
    monkeypatch.setattr(decode, "SHORT_LINE_BYTES", 1000)  # (a line of more bytes: an array)

    def run(data: bytes) -> int:
        monkeypatch.setattr(decode, "standard_input", lambda *args, **kwargs: io.BytesIO(data))
        return main(["decode", "--tokenizer", str(sgpe_dir / "tok"), "-", "-o", str(tmp_path / "out.txt"), "--force"])

    assert run(b"".join(" ".join(map(str, ids)).encode() + b"\n" for ids in lines)) == 0
    expected = b"".join(tok.decode(ids).encode("utf-8", "surrogatepass") + b"\n" for ids in lines)
    assert (tmp_path / "out.txt").read_bytes() == expected
    far = list(lines[0])
    far[1005] = 10**6
    assert run(b"5 6\n" + " ".join(map(str, far)).encode() + b"\n") == 2
    assert "stdin:2 (ids 1,000 to 2,000): token id 1000000 at position 5 is out of range" in capsys.readouterr().err
    assert run(b"5 1000000\n") == 2
    assert "stdin:1: token id 1000000 at position 1 is out of range" in capsys.readouterr().err


def test_npy_output_must_be_named_npy_and_hf_special_text_is_refused(tmp_path):
    """Following docs/pretraining.md: ``-o train.bin`` must not write a .npy file, whose header
    nanoGPT's raw reader takes for 64 ids; and with a tokenizer.json, special-token text in a
    document must not silently become the --eot id (an extra document boundary), --special-as-text
    is not ignored and --allow-special is no traceback."""
    from cli_run import one_line_error, wwho

    from wwho.sgpe import SGPETokenizer

    tok = SGPETokenizer.train_from_iterator(["ශ්‍රී ලංකාව ප්‍රජාතන්ත්‍රවාදී"] * 50, vocab_size=300, progress=False,
                                            special_tokens=("<|endoftext|>", "[PAD]"), superword_share=0)
    tok.save(tmp_path / "sgpe")
    hf = tmp_path / "sgpe" / "tokenizer.json"
    doc = tmp_path / "doc.txt"
    doc.write_text("ශ්‍රී\nලංකාව <|endoftext|> ශ්‍රී\n", encoding="utf-8")
    npy = ["--npy", "--eot", "<|endoftext|>"]
    assert "--npy writes a .npy file (numpy's header, then the ids), not raw ids: name it -o NAME.npy" in \
        one_line_error(wwho("encode", "--tokenizer", tmp_path / "sgpe", "--file", doc, *npy, "-o", tmp_path / "t.bin"))
    assert not (tmp_path / "t.bin").exists()
    line = one_line_error(wwho("encode", "--tokenizer", hf, "--file", doc, *npy, "-o", tmp_path / "t.npy"))
    assert line.endswith(f"{doc}: line 2: the special token '<|endoftext|>' at offset 6: a tokenizer.json reads it "
                         "as that token; add --allow-special to encode it so"), line
    assert "cannot encode that text as plain text" in one_line_error(
        wwho("encode", "--tokenizer", hf, "--file", doc, "--special-as-text"))
    allowed = wwho("encode", "--tokenizer", hf, "--file", doc, "--allow-special")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.decode().splitlines()[1].split().count(str(tok.vocab["<|endoftext|>"])) == 1


@pytest.mark.parametrize(("chunk", "at_once"), [(7, 3), (64, 1), (1 << 22, 1 << 12)])
def test_decode_of_many_lines_written_together_is_each_lines_decode(sgpe_dir, tmp_path, monkeypatch, capsys,
                                                                     chunk, at_once):
    """``decode --npy --eot``: the lines of a chunk of the array are decoded from it in memory and
    written a group at a time (not a read, a write and a flush a line); lines across
    chunks, in any grouping, give the file back byte for byte, and an id out of range is named by
    its line and ids, with no output."""
    from wwho.cli import decode, main

    corpus = sgpe_dir / "lines.txt"
    ids = np.array(_npy("--tokenizer", sgpe_dir / "tok", "--file", corpus, "--eot", "<|endoftext|>",
                        out=tmp_path / "ids.npy"), dtype=np.uint32)
    monkeypatch.setattr(decode, "NPY_CHUNK", chunk)
    monkeypatch.setattr(decode, "TEXTS_AT_ONCE", at_once)
    args = ["decode", "--tokenizer", str(sgpe_dir / "tok"), "--eot", "<|endoftext|>"]
    assert main([*args, "--npy", str(tmp_path / "ids.npy"), "-o", str(tmp_path / "back.txt")]) == 0
    assert (tmp_path / "back.txt").read_bytes() == corpus.read_bytes()
    eot = int(ids[-1])
    ends = np.flatnonzero(ids == eot)
    line = len(ends) // 2  # a line in the middle, with an id no vocabulary has
    start = int(ends[line - 2]) + 1
    ids[start] = 10**6
    np.save(tmp_path / "far.npy", ids)
    assert main([*args, "--npy", str(tmp_path / "far.npy"), "-o", str(tmp_path / "far.txt")]) == 2
    assert (f"far.npy: line {line:,} (ids {start:,} to {int(ends[line - 1]):,}): token id 1000000 at position 0"
            in capsys.readouterr().err)
    assert not (tmp_path / "far.txt").exists()
