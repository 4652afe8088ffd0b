"""``-o``/``--out``/``--output``/``--plot`` never replace an existing output without ``--force``
(wwho.cli.outputs), on every verb that writes, with the real ``wwho`` command.

Each case runs the verb twice on the same output: the second run must exit 2 with one line
naming the output and ``--force``, leave the first run's files byte-identical, and succeed
with ``--force``. ``--help`` says so.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from cli_run import one_line_error, wwho
from conftest import wwho_command


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, tokenizers):
    folder = tmp_path_factory.mktemp("outputs")
    corpus = folder / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව ලස්සන රටකි. hello world\n" * 200, encoding="utf-8")
    blob = folder / "blob.bin"
    blob.write_bytes(bytes(range(256)) * 200)
    sgpe = folder / "sgpe"
    tokenizers["sinhala"].save(sgpe)
    from wwho import binary
    from wwho.binary.io import save

    counts = {bytes(range(i, i + 64)): 3 for i in range(0, 192, 16)}
    save(binary.train_from_counts(counts, vocab_size=512, min_frequency=1), folder / "binary.json")
    return {"corpus": corpus, "blob": blob, "sgpe": sgpe, "binary": folder / "binary.json"}


def _cases(inputs, out):
    """verb arguments, with the output path ``out`` in them, and the files the verb writes."""
    i = inputs
    return {
        "train sgpe": (["train", "--kind", "sgpe", i["corpus"], "--vocab-size", 600, "--out", out, "--quiet",
                        "--no-verify"], ["vocab.json"]),
        "train bytelevel": (["train", "--kind", "bytelevel", i["corpus"], "--vocab-size", 300, "--out", out,
                             "--quiet"], ["bytelevel.json", "ranks.tiktoken"]),
        "train binary": (["train", "--kind", "binary", i["blob"], "-o", out, "--vocab-size", 512,
                          "--min-frequency", 2, "--reserve", 0, "--no-progress"], [""]),
        "encode --binary -o": (["encode", "--tokenizer", i["binary"], "--binary", i["blob"], "-o", out], [""]),
        "decode -o (binary)": (["decode", "--tokenizer", i["binary"], "1", "2", "3", "-o", out], [""]),
        "decode -o (text)": (["decode", "--tokenizer", i["sgpe"], "10", "11", "-o", out], [""]),
        "encode -o (text)": (["encode", "--tokenizer", i["sgpe"], "ශ්‍රී ලංකාව", "-o", out], [""]),
        "export hf -o": (["export", "hf", i["sgpe"], "-o", out, "--quiet"], ["vocab.json", "tokenizer.json"]),
    }


CASES = ["train sgpe", "train bytelevel", "train binary", "encode --binary -o", "decode -o (binary)",
         "decode -o (text)", "encode -o (text)", "export hf -o"]


@pytest.mark.parametrize("case", CASES)
def test_an_existing_output_needs_force(inputs, tmp_path, case):
    out = tmp_path / "out"
    args, files = _cases(inputs, out)[case]
    first = wwho(*args)
    assert first.returncode == 0, first.stderr.decode()[-2000:]
    paths = [out / f if f else out for f in files]
    before = {p: p.read_bytes() for p in paths}
    mtimes = {p: p.stat().st_mtime_ns for p in paths}
    message = one_line_error(wwho(*args))
    assert str(out) in message and "--force" in message
    assert {p: p.read_bytes() for p in paths} == before
    assert {p: p.stat().st_mtime_ns for p in paths} == mtimes
    again = wwho(*args, "--force")
    assert again.returncode == 0, again.stderr.decode()[-2000:]


def test_eval_plot_needs_force(inputs, tmp_path):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "m.png"
    plot.write_bytes(b"not mine")
    args = ["eval", "--corpus", inputs["corpus"], "--tokenizer", inputs["sgpe"], "--plot", plot, "--quiet"]
    message = one_line_error(wwho(*args))
    assert str(plot) in message and "--force" in message
    assert plot.read_bytes() == b"not mine"
    assert wwho(*args, "--force").returncode == 0 and plot.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("which", ["corpus", "parity", "tokenizer", "link to the corpus"])
def test_eval_plot_over_one_of_its_inputs_is_refused_even_with_force(inputs, tmp_path, which):
    """With --force too, the plot does not replace the corpus, the parity corpus or the tokenizer file
    named as --plot (through a link too)."""
    pytest.importorskip("matplotlib")
    corpus = tmp_path / "c.png"
    corpus.write_bytes(inputs["corpus"].read_bytes())
    vocab = tmp_path / "v.png"
    vocab.write_bytes((inputs["sgpe"] / "vocab.json").read_bytes())
    args = ["eval", "--corpus", corpus, "--tokenizer", inputs["sgpe"], "--quiet", "--force"]
    plot = {"corpus": corpus, "parity": corpus, "tokenizer": vocab, "link to the corpus": tmp_path / "l.png"}[which]
    if which == "parity":
        args = ["eval", "--corpus", inputs["corpus"], "--parity-with", corpus, "--tokenizer", inputs["sgpe"],
                "--quiet", "--force"]
    elif which == "tokenizer":
        args = ["eval", "--corpus", inputs["corpus"], "--tokenizer", vocab, "--quiet", "--force"]
    elif which == "link to the corpus":
        plot.symlink_to(corpus)
    before = {p: p.read_bytes() for p in (corpus, vocab)}
    message = one_line_error(wwho(*args, "--plot", plot))
    assert "is also an input" in message
    assert {p: p.read_bytes() for p in (corpus, vocab)} == before


@pytest.mark.parametrize("which", ["--file", "tokenizer file", "tokenizer folder's file", "tokenizer folder's name",
                                   "ranks file", "ranks file by variable", "--npy", "standard input", "link"])
def test_encode_and_decode_output_over_one_of_their_inputs_is_refused_even_with_force(inputs, tmp_path, which):
    """``-o`` naming what the verb reads (the text, the tokenizer, a file of its folder, the ranks file,
    the array, the ids on standard input; through a link too) would replace it with the results:
    refused, ``--force`` or not, and the input left as it was. A file of the tokenizer folder's names
    is refused where it is not there yet too: it would change what the folder loads as."""
    import shutil

    from conftest import O200K_FILE

    text = tmp_path / "text.txt"
    text.write_text("ශ්‍රී ලංකාව hello\n", encoding="utf-8")
    sgpe = tmp_path / "sgpe"
    shutil.copytree(inputs["sgpe"], sgpe)
    ranks = tmp_path / "ranks.tiktoken"
    encode = ["encode", "--tokenizer", sgpe, "--file", text, "--force", "-o"]
    stdin, env = None, None
    if which == "--file":
        args, output = encode, text
    elif which == "link":
        output = tmp_path / "link.txt"
        output.symlink_to(text)
        args = encode
    elif which == "tokenizer file":
        args, output = ["encode", "--tokenizer", sgpe / "vocab.json", "--file", text, "--force", "-o"], sgpe / "vocab.json"
    elif which == "tokenizer folder's file":
        args, output = encode, sgpe / "tokenizer.json"
    elif which == "tokenizer folder's name":  # (no merges.txt there: it would make the folder another save's)
        args, output = encode, sgpe / "merges.txt"
    elif which.startswith("ranks file"):
        if not O200K_FILE.is_file():
            pytest.skip("the shared o200k_base ranks file is absent")
        shutil.copyfile(O200K_FILE, ranks)
        args, output = ["encode", "--tokenizer", "o200k_base", "--file", text, "--force", "-o"], ranks
        if which == "ranks file":
            args[3:3] = ["--tiktoken-file", ranks]
        else:
            env = {**os.environ, "WWHO_TIKTOKEN_FILE": str(ranks)}
    elif which == "--npy":
        output = tmp_path / "ids.npy"
        assert wwho("encode", "--tokenizer", sgpe, "--file", text, "--npy", "--eot", "none", "-o", output).returncode == 0
        args = ["decode", "--tokenizer", sgpe, "--npy", output, "--eot", "none", "--force", "-o"]
    else:  # standard input: decode -o ids.txt < ids.txt
        output = tmp_path / "ids.txt"
        output.write_text("10 11\n", encoding="utf-8")
        args, stdin = ["decode", "--tokenizer", sgpe, "--force", "-o"], output
    watched = [p for p in (text, output, *sgpe.iterdir()) if p.exists()]
    before = {p: p.read_bytes() for p in watched}
    if stdin is not None:
        with open(stdin, "rb") as f:
            done = subprocess.run([*wwho_command(), *map(str, args), str(output)], stdin=f, capture_output=True,
                                  timeout=120)
    else:
        done = wwho(*args, output, env=env)
    message = one_line_error(done)
    assert "-o/--output is also an input" in message or "is a file of the tokenizer folder" in message, message
    assert {p: p.read_bytes() for p in watched} == before
    assert sorted(p.name for p in sgpe.iterdir()) == sorted(p.name for p in inputs["sgpe"].iterdir())


def test_a_plot_named_as_a_directory_is_told_a_png_name(inputs, tmp_path):
    """The advice is a name ending in .png, not in /out, which --plot would refuse."""
    folder = tmp_path / "d.png"
    folder.mkdir()
    line = one_line_error(wwho("eval", "--corpus", inputs["corpus"], "--tokenizer", inputs["sgpe"], "--quiet",
                               "--plot", folder))
    assert f"give a file name such as {folder / 'plot.png'}" in line


def test_an_npy_output_named_as_a_directory_is_told_an_npy_name(inputs, tmp_path):
    """--npy refuses any name but NAME.npy, so the advice for a folder is one."""
    folder = tmp_path / "d.npy"
    folder.mkdir()
    line = one_line_error(wwho("encode", "--tokenizer", inputs["sgpe"], "--file", inputs["corpus"], "--npy",
                               "--eot", "none", "-o", folder))
    assert f"give a file name such as {folder / 'out.npy'}" in line


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel"])
def test_the_line_saying_what_was_written_escapes_the_name(inputs, tmp_path, kind):
    """A newline in the output's name split the success line in two (the errors escaped it already)."""
    out = tmp_path / "a\nb"
    done = wwho("train", "--kind", kind, inputs["corpus"], "--vocab-size", "300" if kind == "bytelevel" else "600",
                "--quiet", "--out", out)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.decode().splitlines()  # (and a warning: this corpus runs out of pairs)
    assert lines[-1].startswith(f"wrote {tmp_path}/a\\nb"), lines
    assert not any(line.startswith("b") for line in lines), lines


def test_plot_labels_are_text_not_mathtext():
    from wwho.cli.eval import _label

    assert _label("p$x^2$.txt") == "p\\$x^2\\$.txt" and _label("b\udcff") == "b\\xff"


@pytest.mark.parametrize("name", ["b\udcff.txt", "a$\\foo$.txt"])
def test_eval_plot_draws_any_corpus_name(inputs, tmp_path, name):
    """A name that is no UTF-8, or one matplotlib reads as mathtext ($...$), does not fail the plot
    with a matplotlib traceback (nor draw a formula)."""
    pytest.importorskip("matplotlib")
    corpus = tmp_path / os.fsdecode(os.fsencode(name))
    corpus.write_bytes(inputs["corpus"].read_bytes())
    done = wwho("eval", "--corpus", corpus, "--tokenizer", inputs["sgpe"], "--quiet", "--plot", tmp_path / "p.png")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")


def test_a_directory_with_other_files_is_fine_and_they_stay(inputs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    proc = wwho("export", "hf", inputs["sgpe"], "-o", out, "--quiet")
    assert proc.returncode == 0, proc.stderr.decode()
    assert (out / "notes.txt").read_text() == "mine" and (out / "tokenizer.json").exists()


@pytest.mark.parametrize("verb", [["train", "--kind", "sgpe"], ["train", "--kind", "bytelevel"],
                                  ["train", "--kind", "binary"], ["encode"], ["decode"], ["export"], ["eval"]])
def test_help_says_force(verb):
    proc = wwho(*verb, "--help")
    assert proc.returncode == 0
    assert b"--force" in proc.stdout


def test_a_file_output_that_is_a_directory_is_refused(inputs, tmp_path):
    message = one_line_error(wwho("encode", "--tokenizer", inputs["binary"], "--binary", inputs["blob"],
                                  "-o", tmp_path))
    assert "is a directory" in message


@pytest.mark.parametrize("case", ["train binary", "encode --binary -o", "decode -o (text)", "encode -o (text)",
                                  "train sgpe", "export hf -o"])
def test_an_output_below_a_file_is_refused_before_any_work(inputs, tmp_path, case):
    # The binary trainer and encode -o refuse first, not after the whole job with "File exists".
    afile = tmp_path / "afile"
    afile.write_text("mine")
    args, _ = _cases(inputs, afile / "sub" / "out")[case]
    message = one_line_error(wwho(*args))
    assert str(afile) in message and ("is a file" in message or "not a directory" in message), message
    assert afile.read_text() == "mine"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc, where nothing can be created")
@pytest.mark.parametrize("case", CASES)
def test_an_output_where_nothing_can_be_created_is_refused_before_any_work(inputs, case):
    # As root, access() says /proc can be written in; the first write then failed after the work.
    args, _ = _cases(inputs, "/proc/wwho-nowhere/out")[case]
    message = one_line_error(wwho(*args))
    assert "cannot be written: nothing can be created in /proc" in message, message


def test_eval_plot_below_a_file_is_refused_before_any_work(inputs, tmp_path):
    (tmp_path / "afile").write_text("mine")
    message = one_line_error(wwho("eval", "--corpus", inputs["corpus"], "--tokenizer", inputs["sgpe"], "--plot",
                                  tmp_path / "afile" / "m.png", "--quiet"))
    assert "--plot cannot be written" in message and "afile is a file" in message


# Short ids: pytest 8.0 puts a test's id (here 100 kB) in PYTEST_CURRENT_TEST, and every command it
# starts then fails with "Argument list too long".
@pytest.mark.parametrize("data", [
    "ශ්‍රී ලංකාව\nනමස්\n", "no final newline\nශ්‍රී", "\n\nක\n\n", "crlf\r\nලංකා\r\n", "", "ක" * 50_000 + "\n",
], ids=["lines", "no-final-newline", "blank-lines", "crlf", "empty", "long-line"])
def test_syllabify_stdin_prints_each_line_alone(data):
    """Standard input goes through the core in blocks; the output is each line syllabified alone."""
    from wwho import Syllabifier

    syl = Syllabifier.for_script("sinhala")
    lines = data.replace("\r\n", "\n").split("\n")  # a CRLF line end is no syllable
    if lines and lines[-1] == "":
        lines.pop()
    want = "".join(syl.joined(line, " | ") + "\n" for line in lines)
    proc = subprocess.run([*wwho_command(), "syllabify"], input=data.encode(), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == want


@pytest.mark.parametrize("mode", ["indic", "mixed"])
@pytest.mark.parametrize("options", [[], ["--leading-space"], ["--json"], ["--json", "--leading-space"]])
def test_syllabify_a_multi_script_mode_prints_each_line_as_the_splitter_splits_it(mode, options):
    """``--script indic``: each script run by its own schema, the units ``wwho train --script indic``
    counts; the blocks of standard input and ``--json`` alike."""
    from wwho.sgpe.words import WordSplitter

    data = "ශ්‍රී ලංකාව and नमस्ते\r\nதமிழ் ಕನ್ನಡ  বাংলা\n\n12 ക്ഷ"
    proc = subprocess.run([*wwho_command(), "syllabify", "--script", mode, *options], input=data.encode(),
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = data.replace("\r\n", "\n").split("\n")
    tokens = [WordSplitter(mode).tokenize(line, leading_space="--leading-space" in options) for line in lines]
    if "--json" in options:
        assert [json.loads(line) for line in proc.stdout.decode().splitlines()] == tokens
    else:
        assert proc.stdout.decode() == "".join(" | ".join(t) + "\n" for t in tokens)
    assert ["ශ්‍රී"] == tokens[0][:1] and "स्ते" in tokens[0] and "ழ்" in tokens[1]


def test_syllabify_stdin_not_utf8_names_the_byte():
    proc = subprocess.run([*wwho_command(), "syllabify"], input="ක\n".encode() * 10 + b"\xff\n",
                          capture_output=True, timeout=120)
    assert proc.returncode == 2
    assert b"stdin:11: invalid UTF-8 at byte 0 of the line (byte 40 of the input)" in proc.stderr
    assert b"Traceback" not in proc.stderr


def test_syllabify_stdin_blocks_join_long_lines(monkeypatch):
    """A line longer than a block, and lines split between blocks, come out whole."""
    import io
    import sys

    from wwho.cli import main
    from wwho.cli import syllabify as verb

    monkeypatch.setattr(verb, "BLOCK_BYTES", 7)
    data = ("ශ්‍රී ලංකාව " * 5 + "\nකා\n\nනම").encode()
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="utf-8"))
    assert main(["syllabify"]) == 0
    from wwho import Syllabifier

    syl = Syllabifier.for_script("sinhala")
    want = "".join(syl.joined(line, " | ") + "\n" for line in data.decode().split("\n"))
    assert out.getvalue().decode() == want


@pytest.mark.parametrize("verb", ["encode", "decode"])
def test_one_line_longer_than_the_bound_is_refused_naming_it(inputs, tmp_path, verb):
    # A line is processed whole, in memory several times its size. Lines up to the bound
    # (line end counted, as for a corpus) go through.
    unit = "ශ්‍රී " if verb == "encode" else "10 "
    fits = (unit * (1024 // len(unit.encode())))[: 1023]
    while len(fits.encode()) > 1023:  # and its line end: 1,024 bytes
        fits = fits[:-1]
    over = fits + unit
    source = "\n".join(["x" if verb == "encode" else "11", fits, over]) + "\n"
    proc = wwho(verb, "--tokenizer", inputs["sgpe"], "-", "--max-line-bytes", "1k", input=source.encode())
    assert proc.returncode == 2
    assert proc.stderr.decode().strip().splitlines()[-1] == (
        "wwho: error: stdin:3: the line is longer than 1,024 bytes (its line end included), the limit that bounds memory "
        "(raise it with --max-line-bytes)")
    if verb == "decode":  # (encode reads a block of lines before it writes any of them)
        assert proc.stdout.decode().count("\n") == 2  # the two lines before it were written


def test_a_dash_is_standard_input_and_output(inputs):
    # `encode --file -` read a file named "-", and `-o -` wrote one.
    text = "ශ්‍රී ලංකාව\nhello\n".encode()
    want = wwho("encode", "--tokenizer", inputs["sgpe"], "-", input=text).stdout
    assert wwho("encode", "--tokenizer", inputs["sgpe"], "--file", "-", input=text).stdout == want
    assert wwho("encode", "--tokenizer", inputs["sgpe"], "-", "-o", "-", input=text).stdout == want
    ids = want.decode().splitlines()[0].split()
    assert wwho("decode", "--tokenizer", inputs["sgpe"], *ids, "-o", "-").stdout.decode() == "ශ්‍රී ලංකාව\n"


@pytest.mark.parametrize("args, words", [
    (["encode", "--binary", "x.bin"], "--binary is for binary tokenizers; {sgpe} is an SGPE vocabulary"),
    (["decode", "--binary", "5", "6"], "--binary is for binary tokenizers; {sgpe} is an SGPE vocabulary"),
    (["encode", "--specials", "ශ්‍රී"], "--specials is for binary tokenizers"),
    (["inspect", "--top", "-1"], "--top must be a count from 0 to 999,999,999, not '-1'"),
    (["inspect", "--top", "1000000000"], "--top must be a count from 0 to 999,999,999, not '1000000000'"),
])
def test_binary_only_flags_on_a_text_tokenizer_say_so(inputs, args, words):
    # --binary said "is a directory, not a tokenizer" of an SGPE folder that loads; --specials did
    # nothing; --top -1 printed every merge but the last.
    verb, *rest = args
    line = one_line_error(wwho(verb, *(["--tokenizer", inputs["sgpe"]] if verb != "inspect" else [inputs["sgpe"]]),
                               *rest))
    assert words.format(sgpe=inputs["sgpe"]) in line, line


def test_syllabify_json_drops_the_carriage_return_of_crlf_lines():
    proc = wwho("syllabify", "--script", "sinhala", "--json", input="ශ්‍රී\r\nලංකා\r\n".encode())
    assert proc.returncode == 0 and proc.stdout.decode().splitlines() == ['["ශ්‍රී"]', '["ලං", "කා"]']


@pytest.mark.parametrize("json_mode", [False, True])
@pytest.mark.parametrize("source, want", [
    # Only the CR of a CRLF line end goes (--json dropped every trailing CR; plain mode printed it)
    ("ක\r\r\nකා\r\n", [["ක", "\r"], ["කා"]]),
    # An argument's newlines end lines, as on standard input (plain mode printed "\n" as a syllable)
    (["ක\nකා"], [["ක"], ["කා"]]),
    ([""], [[]]),
])
def test_syllabify_modes_split_lines_alike(json_mode, source, want):
    args = ["syllabify", "--script", "sinhala", *(["--json"] if json_mode else [])]
    if isinstance(source, list):
        proc = wwho(*args, *source)
    else:
        proc = wwho(*args, input=source.encode())
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode("utf-8").split("\n")
    assert lines[-1] == ""
    if json_mode:
        assert [json.loads(line) for line in lines[:-1]] == want
    else:
        assert lines[:-1] == [" | ".join(syllables) for syllables in want]


@pytest.mark.parametrize("json_mode", [False, True])
def test_syllabify_refuses_what_is_not_utf8_in_every_mode(json_mode):
    # --json wrote the byte 0xFF into its JSON (exit 0), or crashed under another stdin encoding;
    # an argument holding an encoded surrogate was a UnicodeEncodeError traceback.
    extra = ["--json"] if json_mode else []
    proc = wwho("syllabify", "--script", "devanagari", *extra, input="क".encode() + b"\xff" + "ख\n".encode(),
                env={"PYTHONIOENCODING": "latin-1"})
    assert proc.returncode == 2 and one_line_error(proc).endswith("stdin:1: invalid UTF-8 at byte 3 of the line (byte 3 of the input)")
    proc = wwho("syllabify", "--script", "devanagari", *extra, os.fsdecode("क".encode() + b"\xed\xa0\x80"))
    assert proc.returncode == 2 and "a surrogate code point at character 1" in one_line_error(proc)


def test_syllabify_writes_utf8_whatever_the_locale():
    proc = wwho("syllabify", "--script", "sinhala", "--json", "ශ්‍රී", env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0 and proc.stdout.decode("utf-8") == '["ශ්‍රී"]\n'


def test_eval_json_is_valid_json_for_a_path_that_is_no_utf8(inputs, tmp_path):
    import json

    corpus = os.fsdecode(bytes(tmp_path) + b"/bad\xff.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("ශ්‍රී ලංකාව\n")
    proc = wwho("eval", "--corpus", corpus, "--tokenizer", inputs["sgpe"], "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    json.loads(proc.stdout.decode("utf-8"))  # strict UTF-8, then JSON


def test_every_output_file_in_a_folder_that_cannot_be_written_is_refused_first(tmp_path, monkeypatch):
    # encode -o, eval --plot and binary training share the check: an unwritable folder was found
    # only when the finished output was written.
    from wwho.cli.outputs import check_output_file
    from wwho.errors import WwhoError

    (tmp_path / "ro").mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: os.fspath(path) != str(tmp_path / "ro") and real_access(path, mode))
    for target in (tmp_path / "ro" / "out.txt", tmp_path / "ro" / "new" / "deeper" / "out.txt"):
        with pytest.raises(WwhoError, match=r"--plot cannot be written: no permission to write in .*ro$"):
            check_output_file(target, force=False, flag="--plot")
    assert check_output_file(tmp_path / "out.txt", force=False) == tmp_path / "out.txt"


def test_an_output_folder_that_cannot_be_written_is_refused_first(tmp_path, monkeypatch):
    # Training, export and extend write a folder of files: an unwritable one (or one whose nearest
    # existing parent is unwritable, or that lies below a file) was found only after the work.
    from wwho.cli.outputs import SGPE_FILES, check_output_dir
    from wwho.errors import WwhoError

    (tmp_path / "ro").mkdir()
    (tmp_path / "afile").write_text("x")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: os.fspath(path) != str(tmp_path / "ro") and real_access(path, mode))
    for target in (tmp_path / "ro", tmp_path / "ro" / "new" / "model"):
        with pytest.raises(WwhoError, match=r"--out cannot be written: no permission to write in .*ro$"):
            check_output_dir(target, SGPE_FILES, force=False)
    with pytest.raises(WwhoError, match=r"afile is a file, not a directory"):
        check_output_dir(tmp_path / "afile" / "model", SGPE_FILES, force=True)
    assert check_output_dir(tmp_path / "new" / "model", SGPE_FILES, force=False) == tmp_path / "new" / "model"


def test_the_refusal_names_the_files_of_the_old_save_that_force_removes(tmp_path):
    """The refusal of a byte-level save over an SGPE directory names more than tokenizer.json: the
    SGPE vocab.json (and the other files of that save), which --force removes too."""
    from cli_run import one_line_error, wwho

    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව යනු දිවයිනකි\n" * 300, encoding="utf-8")
    out = tmp_path / "out"
    assert wwho("train", "--kind", "sgpe", "--script", "sinhala", "--vocab-size", "300", "--quiet", "-o", out,
                corpus).returncode == 0
    line = one_line_error(wwho("train", "--kind", "bytelevel", "--vocab-size", "300", "--quiet", "-o", out, corpus))
    # (a byte-level save writes the three HF files too, so those are named as replaced)
    assert "already holds tokenizer.json, tokenizer_config.json, special_tokens_map.json and a saved " \
           "tokenizer's vocab.json, which the new save removes" in line
    assert "which the new save removes" in line and "--force" in line
    again = one_line_error(wwho("train", "--kind", "sgpe", "--script", "sinhala", "--vocab-size", "300", "--quiet",
                                "-o", out, corpus))
    assert "a saved tokenizer's" not in again  # the same kind of save: the same files, nothing else goes
    # A file of that save changed since (a note added) is not named as removed: the save keeps it.
    with open(out / "vocab.json", "a", encoding="utf-8") as f:
        f.write("\n")
    line = one_line_error(wwho("train", "--kind", "bytelevel", "--vocab-size", "300", "--quiet", "-o", out, corpus))
    assert "a saved tokenizer's" not in line and "already holds tokenizer.json" in line


def test_a_file_of_yours_named_like_the_manifest_needs_force(tmp_path):
    """A file of the user's own named wwho-manifest.json in --out is not taken for wwho's and replaced
    by the save without --force; a manifest of wwho's own is replaced."""
    from wwho.cli.outputs import SGPE_FILES, check_output_dir
    from wwho.errors import WwhoError
    from wwho.manifest import MANIFEST

    out = tmp_path / "out"
    out.mkdir()
    (out / MANIFEST).write_text("my notes\n", encoding="utf-8")
    with pytest.raises(WwhoError, match=rf"out already holds {MANIFEST}; pass --force"):
        check_output_dir(out, SGPE_FILES, force=False)
    assert check_output_dir(out, SGPE_FILES, force=True) == out
    (out / MANIFEST).write_text(json.dumps({"format": "wwho-manifest/1", "kind": "sgpe", "files": {}}),
                                encoding="utf-8")
    assert check_output_dir(out, SGPE_FILES, force=False) == out


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["syllabify", "--script", "sinhala", "ශ්‍රී ලංකාව"],
                                  ["schema", "check", "sinhala"]])
def test_a_reader_gone_before_the_output_is_flushed_ends_quietly(args):
    """With standard output buffered (no ``PYTHONUNBUFFERED``), a reader gone before the output is
    written (``| head -1``, ``| true``) must not make Python fail at exit (``Exception ignored ...
    BrokenPipeError`` and exit 120): the promise is a quiet exit 0. The pipe's
    read end is closed before the command starts."""
    read, write = os.pipe()
    os.close(read)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    try:
        done = subprocess.run([*wwho_command(), *args], stdout=write, stderr=subprocess.PIPE, text=True,
                              env=env, timeout=120)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr[-2000:]


class _FillingRawFile:
    """Standard output as PYTHONUNBUFFERED leaves it: a raw file whose write takes only part of a
    large block, as a disk filling up does, then fails."""

    def __init__(self, room: int):
        self.room, self.data = room, bytearray()

    def write(self, data) -> int:
        if len(self.data) >= self.room:
            raise OSError(28, "No space left on device")
        taken = bytes(data[: min(4096, self.room - len(self.data))])
        self.data += taken
        return len(taken)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("room", [10**6, 10_000])
def test_standard_output_writes_every_byte_or_says_why(monkeypatch, room):
    from wwho.cli.outputs import StandardOutput
    from wwho.errors import WriteError

    raw = _FillingRawFile(room)
    text_stream = type("Text", (), {"buffer": raw, "flush": lambda self: None})()
    monkeypatch.setattr("sys.stdout", text_stream)
    block = bytes(range(256)) * 1000
    out = StandardOutput()
    if room >= len(block):
        assert out.write(block) == len(block)
        assert raw.data == block
    else:
        with pytest.raises(WriteError, match="standard output.*No space left"):
            out.write(block)


def test_a_ctrl_c_while_the_output_folder_is_tried_leaves_nothing(tmp_path, monkeypatch):
    """The folder made to try the output's place is removed before a Ctrl-C acts (a run of the
    interrupt tests found it left in the output folder)."""
    import signal

    from wwho.cli import outputs

    real = os.rmdir

    def interrupted_first(path):
        signal.raise_signal(signal.SIGINT)
        real(path)

    monkeypatch.setattr(os, "rmdir", interrupted_first)
    with pytest.raises(KeyboardInterrupt):
        outputs.check_output_dir(tmp_path / "out", ["vocab.json"], force=False)
    assert os.listdir(tmp_path) == []
