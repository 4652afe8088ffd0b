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
    cases = {
        "square.npy": "a 2-dimensional array of int32, not a flat array of integer ids",
        "floats.npy": "a 1-dimensional array of float64, not a flat array of integer ids",
        "both.npz": "an .npz archive; give the .npy array of ids that wwho encode --npy writes",
        "cut.npy": "not a .npy array of ids",
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
