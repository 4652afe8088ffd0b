"""The generic verbs on every file kind: inspect shows what users need to see; errors are one line."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
from conftest import DATA, O200K_FILE

from wwho.cli import main

GGUF = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"


@pytest.mark.skipif(not GGUF.is_file(), reason=f"{GGUF} is absent")
def test_inspect_gguf_shows_model_pretokenizer_merges_specials(capsys):
    assert main(["inspect", str(GGUF), "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "llama-bpe" in out and "n_vocab 128,256" in out
    assert "pre-tokenizer: llama-bpe" in out
    assert "merge rule: 280,147 merges" in out
    assert "<|begin_of_text|>=128000" in out and "bos 128000 (add: True)" in out


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_inspect_and_encode_a_tiktoken_file(capsys):
    assert main(["inspect", str(O200K_FILE)]) == 0
    out = capsys.readouterr().out
    assert "ranks (tiktoken)" in out
    assert "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+\n" in out  # whole
    assert main(["encode", "--tokenizer", str(O200K_FILE), "hello world"]) == 0
    assert capsys.readouterr().out.split() == ["24912", "2375"]  # tiktoken's ids for it


def test_inspect_cuts_a_regex_of_thousands_of_characters(tmp_path, capsys):
    from wwho.bytelevel import ByteBPE

    long = "(?:" + "|".join(f"word{i}" for i in range(400)) + ")|."
    tok = ByteBPE({bytes([b]): b for b in range(256)}, pattern=long)
    tok.save(tmp_path / "tok")
    assert main(["inspect", str(tmp_path / "tok")]) == 0
    shown = [line for line in capsys.readouterr().out.splitlines() if line.startswith("    (?:word0|")]
    assert len(shown) == 1 and len(shown[0]) < 300
    assert shown[0].endswith(f"... ({len(long):,} characters; the tokenizer's file holds it whole)")


def test_inspect_shows_control_characters_of_names_and_special_tokens_escaped(tmp_path, capsys):
    """A GGUF's or a saved file's name and special tokens are printed by ``wwho inspect``: a NUL or
    an escape sequence in them went to the terminal as it was (one could clear the screen)."""
    from wwho.bytelevel import ByteBPE
    from wwho.sgpe import SGPETokenizer

    tok = ByteBPE({bytes([b]): b for b in range(256)}, special_tokens={"<a\0\x1b[31m>": 300}, name="x\x1b[2Jy")
    tok.save(tmp_path / "tok")
    assert main(["inspect", str(tmp_path / "tok")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\0" not in out
    assert "byte-level BPE x<0x1B>[2Jy" in out and "<a<0x00><0x1B>[31m>=300" in out
    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    corpus = tmp_path / "c.txt"
    corpus.write_text(sample.read_text(encoding="utf-8")[:20_000], encoding="utf-8")
    sgpe = SGPETokenizer.train(corpus, vocab_size=400, special_tokens=["<s\x07>"], progress=False, superword_share=0)
    assert "<s<0x07>>" in sgpe.describe() and "\x07" not in sgpe.describe()


def test_inspect_a_tokenizer_json_of_another_model_shows_its_merges_and_tokens(tmp_path, capsys):
    """``wwho inspect out/tokenizer.json --top 3`` of an SGPE export prints its merges and tokens, not
    one line of kind and size: the README lists it with --top. The merges are read back from the file."""
    import json

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    hf = Tokenizer(models.BPE(unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.train_from_iterator(["ශ්‍රී ලංකාව ලස්සන රටකි", "hello world"] * 50,
                           trainers.BpeTrainer(vocab_size=120, special_tokens=["[UNK]", "[PAD]"], show_progress=False))
    hf.save(str(tmp_path / "tokenizer.json"))
    assert main(["inspect", str(tmp_path / "tokenizer.json"), "--top", "3"]) == 0
    out = capsys.readouterr().out
    merges = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))["model"]["merges"]
    first = [m.split(" ") if isinstance(m, str) else m for m in merges[:3]]
    assert f"BPE model, {hf.get_vocab_size():,} tokens" in out and "special tokens: [UNK] [PAD]" in out
    assert f"merges: {len(merges):,}; first 3:" in out
    assert all(f"{a!r} + {b!r} -> {a + b!r}" in out for a, b in first)
    longest = max(hf.get_vocab(), key=len)
    assert "longest 3 tokens:" in out and len(longest) == max(len(t) for t in hf.get_vocab())
    assert f"({len(longest)} chars" in out


def test_errors_are_one_line_with_exit_code_2(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wwho: error:") and err.count("\n") == 1
    assert main(["train", "--kind", "nope"]) == 2
    assert "unknown --kind 'nope'" in capsys.readouterr().err


# --- the real command: ids, lone surrogates, custom .tiktoken files, corpus line limits -----------


@pytest.fixture(scope="module")
def sgpe_dir(tokenizers, tmp_path_factory):
    path = tmp_path_factory.mktemp("cli-sgpe")
    tokenizers["sinhala"].save(path)
    return path


@pytest.mark.parametrize("ids", ["١٢", "１２", "1_2", "12x", "-3"])
def test_decode_takes_ascii_digits_only(sgpe_dir, ids):
    from cli_run import one_line_error, wwho

    assert "not a token id" in one_line_error(wwho("decode", "--tokenizer", sgpe_dir, ids))
    assert "not a token id" in one_line_error(wwho("decode", "--tokenizer", sgpe_dir, "-", input=f"{ids}\n".encode()))


def test_decode_names_a_byte_that_is_no_utf8_as_that_byte(sgpe_dir):
    """As the byte itself (``b'\\xff4'``), not as '\\udcff', the code point Python keeps such a byte in."""
    from cli_run import one_line_error, wwho

    line = one_line_error(wwho("decode", "--tokenizer", sgpe_dir, "-", input=b"1 2\n3 \xff4\n"))
    assert "stdin:2: item 1 is b'\\xff4', not a token id" in line, line
    line = one_line_error(wwho("decode", "--tokenizer", sgpe_dir, os.fsdecode(b"\xff")))
    assert "arguments: item 0 is b'\\xff', not a token id" in line, line


def test_lone_surrogates_through_encode_and_decode(sgpe_dir):
    """SGPE round-trips U+D800 (byte fallback); the CLI writes it as its surrogate-pass bytes ED A0 80
    and reads those back, instead of a traceback."""
    from cli_run import wwho

    from wwho.sgpe import SGPETokenizer

    tok = SGPETokenizer.load(sgpe_dir)
    text = "ශ්‍රී \ud800 x\udfff"
    ids = tok.encode(text)
    decoded = wwho("decode", "--tokenizer", sgpe_dir, *ids)
    assert decoded.returncode == 0 and b"Traceback" not in decoded.stderr
    assert decoded.stdout == text.encode("utf-8", "surrogatepass") + b"\n"
    encoded = wwho("encode", "--tokenizer", sgpe_dir, input=decoded.stdout)
    assert encoded.returncode == 0 and encoded.stdout.split() == [str(i).encode() for i in ids]
    as_json = wwho("encode", "--tokenizer", sgpe_dir, "--json", input=decoded.stdout)
    import json

    assert json.loads(as_json.stdout)["ids"] == ids  # \ud800 is escaped: the JSON is valid UTF-8
    bad = wwho("encode", "--tokenizer", sgpe_dir, input=b"ok\n\xff\xfe\n")
    assert bad.returncode == 2 and b"stdin:2: invalid UTF-8" in bad.stderr


@pytest.mark.parametrize("flag", ["--ids", "--json"])
def test_encode_output_decodes_back_line_by_line(sgpe_dir, flag):
    """``wwho encode [--json] | wwho decode``: every line back, a short one (a list of ids) and one
    whose ids or JSON pass a MiB (read as an array; encode's JSON object without its tokens)."""
    from cli_run import wwho

    long_line = " ".join(f"ලංකාව {i}" for i in range(60_000))  # (digits: a token each, many ids)
    text = ("ශ්‍රී ලංකාව\n\nHello, world 123!\n" + long_line + "\n").encode("utf-8")
    encoded = wwho("encode", "--tokenizer", sgpe_dir, flag, input=text)
    assert encoded.returncode == 0 and max(map(len, encoded.stdout.splitlines())) > 1 << 20
    decoded = wwho("decode", "--tokenizer", sgpe_dir, input=encoded.stdout)
    assert decoded.returncode == 0, decoded.stderr
    assert decoded.stdout == text


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_a_custom_tiktoken_file_loads_with_pattern(tmp_path):
    from cli_run import one_line_error, wwho

    from wwho.bytelevel import ByteBPE

    custom = tmp_path / "mine.tiktoken"
    custom.write_bytes(b"".join(O200K_FILE.read_bytes().splitlines(keepends=True)[:2000]))
    assert "--pattern" in one_line_error(wwho("encode", "--tokenizer", custom, "hello world"))
    for pattern in ("o200k", r"\s+|\S+"):
        want = ByteBPE.from_tiktoken(custom, pattern=pattern).encode("hello world, again")
        proc = wwho("encode", "--tokenizer", custom, "--pattern", pattern, "hello world, again")
        assert proc.returncode == 0 and [int(x) for x in proc.stdout.split()] == want
        back = wwho("decode", "--tokenizer", custom, "--pattern", pattern, *want)
        assert back.stdout == b"hello world, again\n"
    shown = wwho("inspect", custom, "--pattern", "gpt2")
    assert shown.returncode == 0 and b"2,000 tokens" in shown.stdout
    assert "invalid pre-tokenizer regex" in one_line_error(wwho("encode", "--tokenizer", custom, "--pattern", "(", "x"))
@pytest.mark.skipif(not O200K_FILE.is_file() or not (DATA / "corpora").is_dir(), reason="shared data absent")
@pytest.mark.parametrize("threads", ["1", "2"])
def test_encode_a_file_on_threads_keeps_line_order(tmp_path, threads):
    """The real ``wwho`` command, small blocks so that many are in flight: ids per line, in order."""
    import subprocess
    import sys
    from pathlib import Path

    from wwho.bytelevel import ByteBPE

    lines = []
    for lang in ("si", "en"):
        with open(DATA / "corpora" / lang / "flores200-devtest.txt", encoding="utf-8") as f:
            lines += [next(f).rstrip("\n") for _ in range(300)]
    lines += ["", "   ", "<|endoftext|> as text"]
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    wwho = Path(sys.executable).with_name("wwho")
    done = subprocess.run([str(wwho), "encode", "--tokenizer", str(O200K_FILE), "--file", str(path), "--threads",
                           threads, "--block-mb", "0.01", "--allow-special"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    tok = ByteBPE.from_tiktoken(O200K_FILE)
    expected = [" ".join(map(str, tok.encode(line, allowed_special="all"))) for line in lines]
    assert done.stdout.split("\n")[:-1] == expected
    piped = subprocess.run([str(wwho), "encode", "--tokenizer", str(O200K_FILE), "--threads", threads, "-"],
                           input="\n".join(lines[:50]) + "\n", capture_output=True, text=True, timeout=300)
    assert piped.stdout.split("\n")[:-1] == expected[:50]


def test_encode_refuses_text_and_file_together(tmp_path, capsys):
    from wwho.bytelevel import ByteBPE

    ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2").save(tmp_path / "bytes")
    assert main(["encode", "--tokenizer", str(tmp_path / "bytes"), "--file", str(tmp_path / "x"), "hello"]) == 2
    assert "either TEXT (or -) or --file" in capsys.readouterr().err
    # "-" too: standard input would be left unread without a word
    assert main(["encode", "--tokenizer", str(tmp_path / "bytes"), "--file", str(tmp_path / "x"), "-"]) == 2
    assert "either TEXT (or -) or --file" in capsys.readouterr().err
    # the batch API's bound, said of the flag (not of the Python parameter)
    from wwho.threads import MAX_THREADS

    for threads in ("0", str(MAX_THREADS + 1)):
        assert main(["encode", "--tokenizer", str(tmp_path / "bytes"), "--threads", threads, "hello"]) == 2
        assert f"--threads must be an integer from 1 to {MAX_THREADS}, not {threads}" in capsys.readouterr().err


@pytest.mark.skipif(not O200K_FILE.is_file() or not (DATA / "corpora").is_dir(), reason="shared data absent")
def test_encode_writes_every_block_before_a_bad_line(tmp_path):
    """Blocks (one line each here) are encoded one ahead of the writing: an invalid line is still
    reported after every block before it was written, in order, as without the look-ahead."""
    import subprocess
    import sys
    from pathlib import Path

    from wwho.bytelevel import ByteBPE

    with open(DATA / "corpora" / "si" / "flores200-devtest.txt", encoding="utf-8") as f:
        lines = [next(f).rstrip("\n") for _ in range(40)]
    path = tmp_path / "in.txt"
    path.write_bytes("\n".join(lines).encode() + b"\n\xff bad\nafter\n")
    wwho = Path(sys.executable).with_name("wwho")
    for threads in ("1", "2"):
        done = subprocess.run([str(wwho), "encode", "--tokenizer", str(O200K_FILE), "--file", str(path),
                               "--threads", threads, "--block-mb", "0.000001"], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 2
        assert f"in.txt:{len(lines) + 1}: invalid UTF-8" in done.stderr
        tok = ByteBPE.from_tiktoken(O200K_FILE)
        assert done.stdout.split("\n")[:-1] == [" ".join(map(str, tok.encode(line))) for line in lines]


# --- inputs that are not files (issue 27, item 4) ----------------------------------------------------


@pytest.fixture(scope="module")
def small_sgpe(tmp_path_factory):
    """A small SGPE tokenizer (vocabulary 400) on the bundled Sinhala sample."""
    from pathlib import Path

    from wwho.errors import VocabSizeWarning
    from wwho.sgpe import SGPETokenizer, train_sgpe

    root = tmp_path_factory.mktemp("cli-small")
    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    corpus = root / "c.txt"
    corpus.write_text("\n".join(sample.read_text(encoding="utf-8").splitlines()[:800]), encoding="utf-8")
    with warnings.catch_warnings():  # a small corpus: its size is not checked here
        warnings.simplefilter("ignore", VocabSizeWarning)
        SGPETokenizer(train_sgpe(corpus, vocab_size=400, progress=False, workers=1)).save(root / "tok")
    return root / "tok"


def test_inputs_that_are_not_files_are_one_line(tmp_path, small_sgpe):
    """A corpus that is a FIFO or a device says what it is (not ``no such file or directory``);
    ``/dev/zero`` given to a loader or to ``encode --file`` is refused at once (not read until memory
    runs out); a schema or config FIFO is refused instead of waiting for a writer."""
    import os

    from cli_run import one_line_error, wwho

    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    cases = [
        (["train", "--kind", "sgpe", "--quiet", "-o", tmp_path / "o1", fifo],
         f"{fifo}: is a FIFO (named pipe), not a corpus file"),
        (["train", "--kind", "bytelevel", "-o", tmp_path / "o2", "/dev/zero"], "/dev/zero: is a character device, "
                                                                               "not a corpus file"),
        (["eval", "--corpus", fifo, "--tokenizer", small_sgpe], f"{fifo}: is a FIFO (named pipe), not a corpus file"),
        (["encode", "--tokenizer", small_sgpe, "--file", "/dev/zero"],
         "/dev/zero: is a character device; a file to encode must be a regular file or a FIFO"),
        (["encode", "--tokenizer", small_sgpe, "--file", tmp_path],
         f"{tmp_path}: is a directory, not a file to encode"),
        (["schema", "check", fifo], f"{fifo}: is a FIFO (named pipe); a schema file must be a regular file"),
        (["syllabify", "--schema", "/dev/zero", "x"],
         "/dev/zero: is a character device; a schema file must be a regular file"),
        (["train", "--kind", "binary", "-o", tmp_path / "b.json", "--config", fifo, small_sgpe / "vocab.json"],
         f"{fifo}: is a FIFO (named pipe); a config file must be a regular file"),
    ]
    for args, message in cases:
        line = one_line_error(wwho(*args, timeout=60))
        assert line == f"wwho: error: {message}" or line.startswith(f"wwho: error: {message}"), (args, line)


def test_encode_reads_a_fifo_as_a_stream(tmp_path, small_sgpe):
    """``--file`` takes a FIFO (``--file <(zcat corpus.gz)``), read once in order as standard input
    is: the same ids as from a regular file."""
    import os
    import threading

    from cli_run import wwho

    text = "ශ්‍රී ලංකාව\nHello ලෝකය\n" * 50
    regular = tmp_path / "text.txt"
    regular.write_text(text, encoding="utf-8")
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w", encoding="utf-8") as f:
            f.write(text)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    streamed = wwho("encode", "--tokenizer", small_sgpe, "--file", fifo, timeout=60)
    writer.join(10)
    assert streamed.returncode == 0, streamed.stderr
    expected = wwho("encode", "--tokenizer", small_sgpe, "--file", regular).stdout
    assert streamed.stdout == expected
    # A writer that comes after wwho has opened the FIFO: its lines are encoded too, not none with exit 0.
    late = threading.Timer(1.5, feed)
    late.start()
    streamed = wwho("encode", "--tokenizer", small_sgpe, "--file", fifo, timeout=60)
    late.join(10)
    assert streamed.returncode == 0 and streamed.stdout == expected, streamed.stderr


def test_an_encode_decode_round_trip_keeps_every_line(tmp_path, small_sgpe):
    """decode keeps the empty ids line of an empty input line, so no line is lost on the way back."""
    from cli_run import wwho

    text = "ශ්‍රී ලංකාව\n\nHello\n\n\nලෝකය\n"
    source = tmp_path / "text.txt"
    source.write_text(text, encoding="utf-8")
    ids = wwho("encode", "--tokenizer", small_sgpe, "--file", source).stdout
    back = wwho("decode", "--tokenizer", small_sgpe, "-", input=ids)
    assert back.returncode == 0 and back.stdout.decode("utf-8") == text, back.stderr


@pytest.mark.parametrize("where, ids", [("arguments", None), ("stdin", "[" * 100_000),
                                        ("stdin", "[" + "9" * 5000 + "]"), ("stdin", "9" * 5000)])
def test_decode_of_hostile_ids_is_one_line(small_sgpe, where, ids):
    """Not a traceback of a ValueError (Python's limit on int() of 4,300 digits) or of a
    RecursionError from json."""
    from cli_run import one_line_error, wwho

    if where == "arguments":
        done = wwho("decode", "--tokenizer", small_sgpe, "9" * 5000)
    else:
        done = wwho("decode", "--tokenizer", small_sgpe, "-", input=ids.encode())
    assert " id" in one_line_error(done)


def test_syllabify_refuses_an_argument_that_is_not_utf8():
    """The raw bytes are not echoed, inside --json too (they would make invalid JSON)."""
    import os

    from cli_run import one_line_error, wwho

    if os.name != "posix":
        pytest.skip("arguments are bytes on POSIX only")
    assert "not UTF-8" in one_line_error(wwho("syllabify", "--json", os.fsdecode(b"\xff\xfe")))


def test_special_token_text_in_encode_names_the_line_and_the_flags(tmp_path, o200k):
    """Not the library's advice (``pass allowed_special=...``), which the command has no way to
    follow for plain text, and not ``texts[0]`` instead of the line."""
    from cli_run import one_line_error, wwho
    from conftest import O200K_FILE

    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    env = {"WWHO_TIKTOKEN_FILE": str(O200K_FILE)}
    path = tmp_path / "text.txt"
    path.write_text("x\ny\nz <|endoftext|>\n", encoding="utf-8")
    line = one_line_error(wwho("encode", "--tokenizer", "o200k_base", "--file", path, env=env))
    assert "text.txt: line 3: the special token '<|endoftext|>'" in line
    assert "--allow-special" in line and "--special-as-text" in line
    plain = wwho("encode", "--tokenizer", "o200k_base", "--special-as-text", "--file", path, env=env)
    special = wwho("encode", "--tokenizer", "o200k_base", "--allow-special", "--file", path, env=env)
    text = "z <|endoftext|>"  # tiktoken's own ids (o200k: tiktoken's Encoding, from conftest)
    assert plain.stdout.decode().splitlines()[2] == " ".join(map(str, o200k.encode(text, disallowed_special=())))
    assert special.stdout.decode().splitlines()[2] == " ".join(map(str, o200k.encode(text, allowed_special="all")))


def test_export_verify_writes_nothing_until_the_check_has_passed(tmp_path, small_sgpe):
    """The files are not saved first and checked after: a corpus that cannot be read (or an export
    that fails the check) must not leave new files in OUT, over the previous export with --force."""
    from cli_run import one_line_error, wwho

    from wwho.sgpe import SGPETokenizer, train_sgpe

    out = tmp_path / "out"
    assert wwho("export", "hf", small_sgpe, "-o", out, "--quiet").returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    other = tmp_path / "other"  # another vocabulary of the same text
    SGPETokenizer(train_sgpe(small_sgpe.parent / "c.txt", vocab_size=350, progress=False, workers=1)).save(other)
    not_gzip = tmp_path / "corpus.txt.gz"
    not_gzip.write_bytes(b"not gzip\n")
    line = one_line_error(wwho("export", "hf", other, "-o", out, "--force", "--quiet", "--verify", not_gzip))
    assert "corpus.txt.gz" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    fresh = tmp_path / "fresh"
    one_line_error(wwho("export", "hf", other, "-o", fresh, "--quiet", "--verify", not_gzip))
    assert not fresh.exists() or not any(fresh.iterdir())


def test_export_verify_checks_its_corpus_first_and_says_what_it_left_out(tmp_path, small_sgpe):
    """A FIFO given to --verify is refused before any file is written, and lines that are not text,
    left out of the check, are said."""
    import os

    from cli_run import one_line_error, wwho

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "is a FIFO" in one_line_error(wwho("export", "hf", small_sgpe, "-o", tmp_path / "a", "--quiet",
                                              "--verify", fifo))
    assert not (tmp_path / "a").exists()
    bad = tmp_path / "bad.txt"
    bad.write_bytes("ශ්‍රී ලංකාව\n".encode() + b"\xff\xfe\nmore\n")
    done = wwho("export", "hf", small_sgpe, "-o", tmp_path / "b", "--quiet", "--verify", bad)
    assert done.returncode == 0 and "wwho: warning: 1 corpus line not text, left out of the check" in done.stderr.decode()
    assert "bad.txt:2" in done.stderr.decode()


def test_export_hf_of_a_folder_of_no_tokenizer_says_what_it_expected(tmp_path):
    """Not '.../vocab.json: no such file': as every other verb, it says what a folder should hold."""
    from cli_run import one_line_error, wwho

    (tmp_path / "empty").mkdir()
    line = one_line_error(wwho("export", "hf", tmp_path / "empty", "-o", tmp_path / "out"))
    assert "empty: no tokenizer here (expected vocab.json, meta_config.json" in line
    assert not (tmp_path / "out").exists()


def test_export_hf_of_a_byte_level_tokenizer(tmp_path, o200k, small_sgpe):
    """`wwho export hf` reads byte-level tokenizers too (o200k_base, a GGUF), not SGPE vocabularies
    only, and does not send the user to wwho.load_tokenizer, which writes no Hugging Face files."""
    import tokenizers
    from cli_run import one_line_error, wwho
    from conftest import CORPORA, read_slice, require_data

    lines = read_slice(require_data(CORPORA / "si" / "flores200-devtest.txt"), 30_000).splitlines()
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "o200k-hf"
    done = wwho("export", "hf", "o200k_base", "--tiktoken-file", O200K_FILE, "-o", out, "--quiet", "--verify", corpus)
    assert done.returncode == 0, done.stderr
    assert f"{len(lines):,} lines checked: 0 with different ids" in done.stdout.decode()
    assert sorted(p.name for p in out.iterdir()) == ["special_tokens_map.json", "tokenizer.json",
                                                     "tokenizer_config.json", "wwho-manifest.json"]
    hf = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    assert [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)] == o200k.encode_batch(lines)
    again = one_line_error(wwho("export", "hf", "o200k_base", "--tiktoken-file", O200K_FILE, "-o", out, "--quiet"))
    assert "--force" in again  # the files are there: not replaced without it
    binary = tmp_path / "bin"
    binary.mkdir()
    (binary / "tokenizer.json").write_bytes((out / "tokenizer.json").read_bytes())
    assert "already Hugging Face's format" in one_line_error(wwho("export", "hf", binary, "-o", tmp_path / "x"))
    assert "--pattern is for a .tiktoken file" in one_line_error(
        wwho("export", "hf", small_sgpe, "--pattern", "o200k", "-o", tmp_path / "y"))


def _corpus(tmp_path):
    from conftest import CORPORA, read_slice, require_data

    path = tmp_path / "c.txt"
    path.write_text(read_slice(require_data(CORPORA / "si" / "news-bbcsinhala.txt"), 150_000), encoding="utf-8")
    return path


def test_standard_error_that_cannot_be_written_decides_nothing(tmp_path):
    """A training whose progress goes to a pipe with no reader (`2>&1 | head -1`) or to a full disk
    (2>/dev/full) trains, saves and exits 0 (a broken pipe on standard error is not standard
    output's), and an error there still exits 2."""
    import subprocess

    from conftest import wwho_command

    corpus = _corpus(tmp_path)
    read, write = os.pipe()
    os.close(read)  # a pipe whose reader has gone
    try:
        for name, stderr in (("pipe", write), ("full", "/dev/full")):
            out = tmp_path / name
            args = [*wwho_command(), "train", "--kind", "sgpe", "--script", "sinhala", "--vocab-size", "600",
                    "-o", str(out), str(corpus)]
            with open(stderr, "w") if isinstance(stderr, str) else os.fdopen(os.dup(stderr), "w") as err:
                done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=err, timeout=600, check=False)
                failed = subprocess.run([*wwho_command(), "encode", "--tokenizer", str(tmp_path / "absent"), "x"],
                                        stdout=subprocess.DEVNULL, stderr=err, timeout=600, check=False)
            assert done.returncode == 0 and (out / "vocab.json").is_file(), name
            assert failed.returncode == 2, name
    finally:
        os.close(write)


def test_control_characters_of_a_name_are_escaped_in_the_message(tmp_path):
    """A file name found in a corpus folder is escaped in the message: raw, an escape sequence would
    reach the terminal and a newline split the one-line error."""
    from cli_run import one_line_error, wwho

    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "x\x1b[2J\nname.txt").write_bytes(b"ok\n\xff\n")
    line = one_line_error(wwho("train", "--kind", "sgpe", "--script", "sinhala", "--vocab-size", "600", "--quiet",
                               "-o", tmp_path / "out", folder))
    assert "\x1b" not in line and "x\\x1b[2J\\nname.txt" in line


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_rayon_num_threads_beyond_the_bound_is_lowered(tmp_path):
    """Unbounded, RAYON_NUM_THREADS=10000 would make `wwho train` start that many threads (Hugging
    Face tokenizers' pool, for the export check), a long start in which Ctrl-C does nothing."""
    import subprocess
    import sys

    corpus = _corpus(tmp_path)
    code = ("import os, sys; from wwho.cli import main; rc = main(sys.argv[1:]); "
            "print(rc, len(os.listdir('/proc/self/task')))")
    done = subprocess.run([sys.executable, "-c", code, "train", "--kind", "sgpe", "--script", "sinhala",
                           "--vocab-size", "600", "--quiet", "-o", str(tmp_path / "out"), str(corpus)],
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "RAYON_NUM_THREADS": "2000"})
    rc, threads = map(int, done.stdout.split()[-2:])
    assert rc == 0 and threads < 300, (done.stdout, done.stderr[-2000:])
    assert "wwho: warning: RAYON_NUM_THREADS=2000 is more than 256 threads" in done.stderr


@pytest.mark.parametrize("value,threads", [("4", 4), ("0", None), ("", None), ("\u00b2", None), (" 4", None),
                                           ("x", None), ("300", 300)])
def test_rayon_num_threads_is_read_as_rayon_reads_it(monkeypatch, value, threads):
    """One reading for the command's bound and the binary kind's call sizes: RAYON_NUM_THREADS='²'
    passes str.isdigit, and must not fail in int() with a ValueError."""
    from wwho.binary.mapping import _calls
    from wwho.threads import rayon_threads

    monkeypatch.setenv("RAYON_NUM_THREADS", value)
    assert rayon_threads() == threads
    texts = ["ab"] * 10
    assert [t for call in _calls(texts) for t in call] == texts


def test_encode_file_reads_compressed_files_as_train_does(tmp_path, capsys):
    # a .gz file is read decompressed, not as raw bytes ("invalid UTF-8 at byte 1")
    import bz2
    import gzip
    import lzma

    from wwho.bytelevel import ByteBPE

    ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2").save(tmp_path / "bytes")
    text = "ab\nශ්‍රී\n"
    expected = "".join(" ".join(str(b) for b in line.encode()) + "\n" for line in text.splitlines())
    for suffix, compress in ((".gz", gzip.compress), (".xz", lzma.compress), (".bz2", bz2.compress)):
        path = tmp_path / f"lines.txt{suffix}"
        path.write_bytes(compress(text.encode()))
        assert main(["encode", "--tokenizer", str(tmp_path / "bytes"), "--file", str(path)]) == 0
        assert capsys.readouterr().out == expected
    # compressed under a plain name, and cut short: named, not read as text
    (tmp_path / "plain.txt").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "cut.gz").write_bytes(gzip.compress(text.encode())[:12])
    for name, words in (("plain.txt", "is gzip-compressed, not text"), ("cut.gz", "corrupt or truncated")):
        assert main(["encode", "--tokenizer", str(tmp_path / "bytes"), "--file", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0], err


@pytest.mark.parametrize("decode_args", [["-"], []])
def test_decode_reads_a_pipe_without_ids_as_encode_does(tmp_path, small_sgpe, decode_args):
    """``wwho encode ... | wwho decode --tokenizer T`` does not stop at "the following arguments are
    required: ID": encode reads standard input when given no text, and so does decode."""
    from cli_run import wwho

    text = "ශ්‍රී ලංකාව\nHello\n"
    ids = wwho("encode", "--tokenizer", small_sgpe, input=text.encode()).stdout
    back = wwho("decode", "--tokenizer", small_sgpe, *decode_args, input=ids)
    assert back.returncode == 0 and back.stdout.decode("utf-8") == text, back.stderr




# --- special tokens of an SGPE vocabulary from the command line ----------------------------------


def test_sgpe_special_tokens_are_named_on_the_command_line(small_sgpe, tmp_path):
    """``wwho train --kind bytelevel`` takes ``--special``, and so does the SGPE kind (the API's
    ``special_tokens=``), so a vocabulary with ``<|endoftext|>`` can be trained from the command line.
    HF ``tokenizers``, reading the exported tokenizer.json, takes their text as those tokens, as
    ``--allow-special`` does."""
    import tokenizers
    from cli_run import wwho

    from wwho.sgpe import SGPETokenizer

    corpus, out = small_sgpe.parent / "c.txt", tmp_path / "tok"
    done = wwho("train", "--kind", "sgpe", "--vocab-size", "600", "--quiet", "--special", "<|endoftext|>",
                "--special", "<|im_start|>", "-o", out, corpus)
    assert done.returncode == 0, done.stderr.decode()
    tok = SGPETokenizer.load(out)
    assert tok.special_tokens == ("<|endoftext|>", "<|im_start|>") and "[CLS]" not in tok.vocab
    assert (tok.eot_token, tok.encode_single_token("<|im_start|>")) == (0, 1)
    text = "<|im_start|>ශ්‍රී ලංකාව<|endoftext|>"
    hf = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json")).encode(text, add_special_tokens=False).ids
    assert hf == tok.encode(text, allowed_special="all") and hf[0] == 1 and hf[-1] == 0
    shown = wwho("encode", "--tokenizer", out, "--allow-special", "--ids", text)
    assert shown.returncode == 0 and [int(i) for i in shown.stdout.split()] == hf


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_a_special_token_the_meta_tokenizer_has_already_is_refused_before_training(small_sgpe, tmp_path):
    from cli_run import one_line_error, wwho

    line = one_line_error(wwho("train", "--kind", "sgpe", "--vocab-size", "600", "--meta", "--special",
                               "<|endoftext|>", "--tiktoken-file", O200K_FILE, "-o", tmp_path / "out",
                               small_sgpe.parent / "c.txt"))
    assert "--special <|endoftext|>: o200k_base has this special token already" in line
    assert not (tmp_path / "out").exists()


# --- a progress bar for encode --file, on a terminal only ------------------------------------------


def _on_a_terminal(*args) -> tuple[int, str]:
    """``wwho ARGS`` with standard error on a pseudo-terminal of 100 columns (tqdm draws nothing on
    one of 0): its exit code and what it wrote there."""
    import fcntl
    import struct
    import subprocess
    import termios

    from conftest import wwho_command

    try:
        main_end, terminal = os.openpty()
    except OSError as exc:  # a container without /dev/pts: nothing of wwho's to test there
        pytest.skip(f"no pseudo-terminal can be opened here: {exc}")
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen([*wwho_command(), *map(str, args)], stderr=terminal, stdout=subprocess.DEVNULL)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(main_end, 1 << 16)
        except OSError:  # (EIO: the other end is closed)
            break
        if not chunk:
            break
        shown += chunk
    os.close(main_end)
    return proc.wait(timeout=120), shown.decode("utf-8", "replace")


def test_encode_of_a_file_draws_a_progress_bar_on_a_terminal(small_sgpe, tmp_path):
    """Encoding a large corpus may take minutes: encode draws a bar, as train and eval do. The bar
    counts the file's bytes; a log (standard error not a terminal) and --quiet get none, and the
    results are the same."""
    from cli_run import wwho

    corpus = small_sgpe.parent / "c.txt"
    code, shown = _on_a_terminal("encode", "--tokenizer", small_sgpe, "--file", corpus, "-o", tmp_path / "a.txt",
                                 "--block-mb", "0.01")
    size = corpus.stat().st_size
    assert code == 0 and "encode c.txt:" in shown and "100%" in shown, shown
    assert f"/{size / 1024:.0f}k" in shown or f"/{size / 1024:.1f}k" in shown, shown
    code, shown = _on_a_terminal("encode", "--tokenizer", small_sgpe, "--file", corpus, "-o", tmp_path / "b.txt",
                                 "--quiet")
    assert code == 0 and shown == ""
    logged = wwho("encode", "--tokenizer", small_sgpe, "--file", corpus, "-o", tmp_path / "c.txt")
    assert logged.returncode == 0 and logged.stderr == b""
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes() == (tmp_path / "c.txt").read_bytes()


def test_syllabify_of_a_file_draws_a_progress_bar_on_a_terminal(small_sgpe, tmp_path):
    """As encode's: the bar counts the file's bytes where standard error is a terminal; --quiet and a
    log get none, and the syllables are the same."""
    import subprocess

    from conftest import wwho_command

    corpus = tmp_path / "c.txt"
    corpus.write_bytes(((small_sgpe.parent / "c.txt").read_bytes().rstrip(b"\n") + b"\n") * 20)  # blocks of the reader
    code, shown = _on_a_terminal("syllabify", "--file", corpus)
    size = corpus.stat().st_size
    assert code == 0 and "syllabify c.txt:" in shown and "100%" in shown, shown
    assert f"/{size / 1024 ** 2:.3g}M" in shown, shown  # (tqdm: three significant digits)
    code, shown = _on_a_terminal("syllabify", "--file", corpus, "--quiet")
    assert code == 0 and shown == ""
    logged = subprocess.run([*wwho_command(), "syllabify", "--file", str(corpus)], capture_output=True)
    quiet = subprocess.run([*wwho_command(), "syllabify", "--file", str(corpus), "--quiet"], capture_output=True)
    assert logged.returncode == 0 and logged.stderr == b"" and logged.stdout == quiet.stdout
    assert logged.stdout.count(b"\n") == corpus.read_bytes().count(b"\n")


@pytest.mark.parametrize("argv, verb_module", [(["-V"], None), (["--help"], None),
                                              (["syllabify", "--script", "sinhala", "ශ්‍රී"], "wwho.cli.syllabify")])
def test_a_verb_loads_only_its_own_code(argv, verb_module):
    """``wwho --version`` loads no verb's module, and a verb none of the others'."""
    import subprocess
    import sys

    code = ("import sys\nfrom wwho.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('wwho.cli.', 'wwho.sgpe.', 'wwho.binary', "
            "'wwho.serve', 'asyncio'))), file=sys.stderr)")
    run = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    loaded = eval(run.stderr.strip().splitlines()[-1])
    from wwho.cli import VERBS

    verbs = [module for module, _ in VERBS.values()]
    if verb_module is None:
        assert not [m for m in loaded if m in verbs or m.startswith(("wwho.sgpe.", "wwho.binary", "asyncio"))]
    else:  # (verbs share some helpers, such as the encode verb's input reading)
        assert verb_module in loaded
        assert not {"wwho.cli.serve", "wwho.cli.eval", "wwho.cli.extend", "wwho.cli.export"} & set(loaded), loaded
