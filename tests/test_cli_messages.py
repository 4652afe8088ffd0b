"""What the commands say: help that names only options the verb takes, one set of output flags for
``wwho encode``, stage labels without gaps, a checkpoint banner only where a checkpoint can help,
progress bars with short names; and what eval measures: ``hf:`` cuts inside a character, and a
parity where lower is better. CLI behaviour is checked through the real ``wwho`` command."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest
from conftest import O200K_FILE, one_line_error, run_wwho

from wwho.eval_specs import Evaluated
from wwho.evaluate import evaluate, parity

SINHALA = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("messages") / "si.txt"
    path.write_text("\n".join(SINHALA[:200]) + "\n", encoding="utf-8")
    return path


def test_help_names_only_options_of_the_verb():
    eval_help = run_wwho("eval", "--help").stdout
    assert "--skip-bad-lines" not in eval_help and "a longer line is an error" in " ".join(eval_help.split())
    assert "lower is better" in " ".join(eval_help.split())
    export_help = " ".join(run_wwho("export", "--help").stdout.split())
    assert re.search(r"--text-field TEXT_FIELD with --verify: the JSONL field", export_help), export_help


def test_encode_has_one_set_of_output_flags(small_corpus, tmp_path):
    help_text = run_wwho("encode", "--help").stdout
    assert "--format" not in help_text and "--table" in help_text
    out = tmp_path / "sgpe"
    assert run_wwho("train", "--kind", "sgpe", small_corpus, "--out", out, "--vocab-size", "600", "--quiet",
                    "--no-verify", "--workers", "1").returncode == 0
    line = one_line_error(run_wwho("encode", "--tokenizer", out, "--table", "ශ්‍රී"))
    assert "--table is for binary tokenizers" in line
    ids = run_wwho("encode", "--tokenizer", out, "ශ්‍රී ලංකාව").stdout.split()
    assert run_wwho("encode", "--tokenizer", out, "--format", "ids", "ශ්‍රී ලංකාව").stdout.split() == ids  # old spelling


def test_stage_labels_count_without_gaps_and_no_banner_for_a_short_run(small_corpus, tmp_path):
    for superwords in ("0", "0.15"):
        proc = run_wwho("train", "--kind", "sgpe", small_corpus, "--out", tmp_path / f"o{superwords}",
                        "--vocab-size", "800", "--superwords", superwords, "--no-verify", "--workers", "1")
        assert proc.returncode == 0, proc.stderr
        labels = re.findall(r"^\[(\d)/(\d)\]", proc.stderr, re.M)
        total = int(labels[0][1])
        assert [int(k) for k, _ in labels] == list(range(1, total + 1)), proc.stderr
        assert {int(n) for _, n in labels} == {total}
        # 800 tokens cannot reach the default --checkpoint-every 20000 merges: nothing to resume from
        assert "checkpoints:" not in proc.stderr


def test_a_missing_corpus_fails_before_any_checkpoint_word(tmp_path):
    proc = run_wwho("train", "--kind", "sgpe", tmp_path / "absent.txt", "--out", tmp_path / "o", "--vocab-size",
                    "50000", "--checkpoint-every", "10")
    line = one_line_error(proc)
    assert "absent.txt: no such file or directory" in line
    assert not (tmp_path / "o" / "checkpoints").exists()


def _by_char(name: str) -> Evaluated:
    def encode(text):
        ids = [ord(c) for c in text]
        return ids, list(range(1, len(text.encode()) + 1)) if text.isascii() else None
    return Evaluated(name, encode, lambda ids: "".join(map(chr, ids)), lambda i: False, 0x110000)


def test_parity_is_lower_is_better_either_way():
    tok = _by_char("t")
    cheap = evaluate(tok, ["ab", "c"], corpus="si")
    costly = evaluate(tok, ["abcdef", "ghi"], corpus="en")
    # a tokenizer three times as costly on English as on Sinhala is as far from parity as the reverse
    assert parity(cheap, costly) == parity(costly, cheap) == 3.0
    assert parity(cheap, cheap) == 1.0


def test_eval_bars_show_short_names(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("wwho.evaluate.BAR_DELAY", 0)  # (a bar is drawn after a second)
    corpus = tmp_path / "deep" / "folder" / "si" / "c.txt"
    corpus.parent.mkdir(parents=True)
    evaluate(_by_char(str(tmp_path / "models" / "mine")), ["ab"] * 3, corpus=str(corpus), progress=True)
    err = capsys.readouterr().err
    assert "mine on si/c.txt" in err and str(tmp_path) not in err


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_hf_peer_cuts_are_counted_inside_a_character(tmp_path):
    """The same ids through wwho and through HF's tokenizer.json give the same cut counts: a cut inside
    a character (o200k cuts rare Sinhala letters into bytes) is seen in hf: too."""
    pytest.importorskip("tokenizers")
    from wwho.bytelevel import ByteBPE
    from wwho.eval_specs import _native, load_spec

    tok = ByteBPE.from_tiktoken(O200K_FILE)
    path = tok.export_hf(tmp_path / "o200k.json")
    lines = SINHALA[:40] + ["ඓතිහාසික Cricket", "ඎ ඏ ඐ"]
    native = evaluate(_native(tok, "o200k"), lines)
    hf = evaluate(load_spec(f"hf:{path}"), lines)
    assert native.tokens == hf.tokens and native.ids_used == hf.ids_used
    assert native.boundaries_in_cluster > 0
    assert (hf.boundaries, hf.boundaries_in_cluster, hf.boundaries_in_syllable) == (
        native.boundaries, native.boundaries_in_cluster, native.boundaries_in_syllable)


def test_eval_json_parity_is_at_least_one(small_corpus, tmp_path):
    ref = tmp_path / "en.txt"
    ref.write_text("".join(f"line {i} of the English side\n" for i in range(200)), encoding="utf-8")
    out = tmp_path / "sgpe"
    assert run_wwho("train", "--kind", "sgpe", small_corpus, "--out", out, "--vocab-size", "600", "--quiet",
                    "--no-verify", "--workers", "1").returncode == 0
    proc = run_wwho("eval", "--corpus", small_corpus, "--tokenizer", out, "--parity-with", ref, "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)["results"]
    assert result["parity"] >= 1.0


def _llama_and_corpus(tmp_path, lines: int):
    """llama.cpp's Llama 3 vocabulary and a file of ``lines`` Sinhala lines, for ``wwho extend``."""
    from conftest import DATA

    gguf = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
    if not gguf.is_file():
        pytest.skip(f"{gguf} is absent")
    corpus = tmp_path / "si.txt"
    corpus.write_text("\n".join(SINHALA[:lines]) + "\n", encoding="utf-8")
    return gguf, corpus


def test_extend_says_why_its_bars_run_twice(tmp_path):
    gguf, corpus = _llama_and_corpus(tmp_path, 300)
    proc = run_wwho("extend", "--base", gguf, "--corpus", corpus, "--add", "200", "--script", "sinhala", "-o",
                    tmp_path / "out", "--workers", "1", "--no-verify")
    assert proc.returncode == 0, proc.stderr
    assert "pass 1/2 (trial, to price a syllable): merges" in proc.stderr
    assert "pass 2/2 (kept): merges" in proc.stderr


def test_extend_refuses_a_tiktoken_file_it_would_ignore(tmp_path):
    from conftest import one_line_error

    gguf, corpus = _llama_and_corpus(tmp_path, 30)
    line = one_line_error(run_wwho("extend", "--base", gguf, "--corpus", corpus, "--add", "200", "--script",
                                   "sinhala", "-o", tmp_path / "out", "--tiktoken-file", tmp_path / "x.tiktoken"))
    assert "--tiktoken-file is for a BASE named as a tiktoken encoding" in line and str(gguf) in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, words", [
    (["encode", "--tokenizer", "{tok}", "--block-mb", "nan", "--file", "{corpus}"], "--block-mb must be a number"),
    (["encode", "--tokenizer", "{tok}", "--block-mb", "inf", "--file", "{corpus}"], "--block-mb must be a number"),
    (["encode", "--tokenizer", "{tok}", "x", "-o", ""], "-o is empty"),
    (["train", "--kind", "sgpe", "--vocab-size", "600", "--out=", "{corpus}"], "--out is empty"),
    # an empty value is not taken as not given (the default script, no parity, no file)
    (["syllabify", "--script", "", "x"], "--script is empty (an unset shell variable?)"),
    (["syllabify", "--schema=", "x"], "--schema is empty"),
    (["eval", "--corpus", "{corpus}", "--tokenizer", "{tok}", "--parity-with", ""], "--parity-with is empty"),
    (["encode", "--tokenizer", "o200k_base", "--tiktoken-file", "", "hi"], "--tiktoken-file is empty"),
    (["encode", "--tokenizer", "", "hi"], "--tokenizer is empty"),
    # (an empty name was added to the Host headers served on loopback: a request with an empty Host answered)
    (["serve", "--allow-host", "", "--port", "0"], "--allow-host is empty"),
    (["serve", "--allow-host=", "--port", "0"], "--allow-host is empty"),
    # an empty positional path would be the current directory: training would read every file under it
    (["train", "--kind", "sgpe", "--vocab-size", "600", "-o", "{out}", ""], "argument corpus: an empty path"),
    (["train", "--kind", "bytelevel", "--vocab-size", "600", "-o", "{out}", ""], "argument corpus: an empty path"),
    (["train", "--kind", "binary", "--vocab-size", "600", "-o", "{out}", ""], "argument INPUT: an empty path"),
    (["inspect", ""], "argument path: an empty path"),
    # named by the flags, not the API's arguments (prefix_space, segments_only)
    (["train", "--kind", "sgpe", "--vocab-size", "600", "--meta", "--prefix-space", "-o", "{out}", "{corpus}"],
     "--prefix-space cannot be used with --meta"),
    (["export", "hf", "", "-o", "{out}"], "argument path: an empty path"),
    (["schema", "check", ""], "argument path: an empty path"),
    (["eval", "--corpus", "{bad}", "--tokenizer", "{tok}"], "every line is measured: fix or remove it"),
    # bytes that are no UTF-8 in an argument (Python holds them as lone surrogates): a traceback
    # from deep inside training, after the corpus was counted
    (["train", "--kind", "sgpe", "--vocab-size", "600", "--special", "\udcff", "-o", "{out}", "{corpus}"],
     "special token '\\udcff' holds a lone surrogate, which is not valid Unicode"),
    (["train", "--kind", "bytelevel", "--vocab-size", "600", "--pattern", "a\udcff", "-o", "{out}", "{corpus}"],
     "the pre-tokenizer regex 'a\\udcff' holds a lone surrogate, which is not valid Unicode"),
    # blames the flag, not WWHO_TIKTOKEN_FILE, which the user never set
    (["encode", "--tokenizer", "o200k_base", "--tiktoken-file", "{missing}", "hi"],
     "(from --tiktoken-file): no such file. To fix: point --tiktoken-file at"),
    # not "item 0 is '-', not a token id"
    (["decode", "--tokenizer", "{tok}", "-", "5"], "- (read the ids from standard input) must be the only ID"),
    (["decode", "--tokenizer", "{tok}", "5", "-"], "- (read the ids from standard input) must be the only ID"),
    # the modes of several scripts too, not the bundled scripts only
    (["syllabify", "--script", "latin", "x"], "unknown script mode 'latin'; choose from bengali, devanagari, "
                                              "gujarati, gurmukhi, kannada, malayalam, odia, sinhala, tamil, "
                                              "telugu, mixed, indic"),
    # the floor is said of --vocab-size, not the API's vocab_size, and before the checkpoint plan
    (["train", "--kind", "sgpe", "--vocab-size", "5", "-o", "{out}", "{corpus}"],
     "--vocab-size 5 is too small: an SGPE vocabulary holds its 5 special tokens and 256 byte tokens, so at least 262"),
    (["train", "--kind", "bytelevel", "--vocab-size", "100", "--special", "<s>", "-o", "{out}", "{corpus}"],
     "--vocab-size 100 is too small: a byte-level vocabulary holds its 256 byte tokens and 1 special token, "
     "so at least 257"),
    # SGPE's --special, checked before anything is read
    (["train", "--kind", "sgpe", "--vocab-size", "257", "--special", "<s>", "-o", "{out}", "{corpus}"],
     "--vocab-size 257 is too small: an SGPE vocabulary holds its 1 special token and 256 byte tokens, "
     "so at least 258"),
    (["train", "--kind", "sgpe", "--vocab-size", "600", "--special", "<s>", "--special", "<s>", "-o", "{out}",
      "{corpus}"], "--special <s>: given twice"),
    (["train", "--kind", "sgpe", "--vocab-size", "600", "--special", "<0x41>", "-o", "{out}", "{corpus}"],
     "--special <0x41>: this is the text of a byte token"),
    (["train", "--kind", "sgpe", "--vocab-size", "600", "--special=", "-o", "{out}", "{corpus}"],
     "--special: a special token is a non-empty string"),
    # an output name ending with a slash is refused before the work, not by the write after it
    (["eval", "--tokenizer", "{tok}", "--corpus", "{corpus}", "--plot", "{out}.png/"],
     "--plot names a directory (it ends with '/'); give a file name such as"),
    (["encode", "--tokenizer", "{tok}", "--file", "{corpus}", "-o", "{out}.txt/"],
     "-o/--output names a directory (it ends with '/')"),
    # bytelevel refuses a repeat, as sgpe does
    (["train", "--kind", "bytelevel", "--vocab-size", "600", "--special", "<s>", "--special", "<s>", "-o", "{out}",
      "{corpus}"], "--special <s>: given twice"),
])
def test_hostile_arguments_are_one_line_errors(small_corpus, tmp_path, args, words):
    """No tracebacks (--block-mb nan, inf), no empty -o taken for standard output or the current
    directory, and eval never advises --skip-bad-lines, an option it does not have."""
    from cli_run import one_line_error, wwho

    tok = tmp_path / "tok"
    assert wwho("train", "--kind", "sgpe", "--vocab-size", "600", "--quiet", "-o", tok, small_corpus).returncode == 0
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\xfe\n")
    out = tmp_path / "out"
    filled = [a.format(tok=tok, corpus=small_corpus, bad=bad, missing=tmp_path / "missing.tiktoken", out=out)
              for a in args]
    assert words in one_line_error(wwho(*filled))
    assert not out.exists()


def test_schema_check_lengths_are_bounded(capsys):
    """-5 is refused (not "equals the automaton on every string up to length -5"), and so are lengths
    past the bound, which would run for minutes."""
    from wwho.cli import main

    for bad in ("-5", "0", "7"):
        with pytest.raises(SystemExit):
            main(["schema", "check", "sinhala", "--max-length", bad])
        assert "--max-length: invalid choice" in capsys.readouterr().err


def test_eval_markdown_escapes_a_bar_in_a_name():
    """A corpus or tokenizer named with '|' adds no column to its row."""
    from wwho.cli.eval import table

    m = evaluate(_by_char("my|tok"), ["ab", "c"], corpus="we|ird.txt")
    rows = table([m], markdown=True).splitlines()
    cells = lambda row: len(re.findall(r"(?<!\\)\|", row))  # noqa: E731
    assert cells(rows[2]) == cells(rows[0]) and "my\\|tok" in rows[2] and "we\\|ird.txt" in rows[2]


def test_progress_bars_redraw_rarely_when_stderr_is_no_terminal(monkeypatch):
    # A log file or CI log keeps every redraw as a line: 18 for an eval of 1.7 s.
    import io
    import sys

    from wwho.progress import LOG_INTERVAL, progress_bar

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with progress_bar(range(3), file=sys.stderr) as bar:
        assert bar.mininterval == LOG_INTERVAL == 10
    with progress_bar(range(3), file=sys.stderr, mininterval=0.5) as bar:  # a caller's own choice stays
        assert bar.mininterval == 0.5


def test_printable_names_stay_on_one_line():
    import os

    from wwho.errors import printable

    name = os.fsdecode(b"we\xfeird\n\x1b") + "\u2028\ud800ok"
    assert printable(name) == "we\\xfeird\\n\\x1b\\u2028\\ud800ok"
    assert printable("ශ්‍රී ලංකා.txt") == "ශ්‍රී ලංකා.txt"  # joiners and Indic text are printable


def test_a_tiktoken_file_no_tokenizer_used_is_said(small_corpus, tmp_path):
    """``--tiktoken-file`` is not silently left unused when no tokenizer given is an encoding named by
    its name (a typo in ``--tokenizer`` would look as if it had read the file)."""
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent: the shared data folder is needed for this test")
    corpus, tok = small_corpus, tmp_path / "tok"
    assert run_wwho("train", "--kind", "sgpe", "--vocab-size", "300", "--quiet", "-o", tok, corpus).returncode == 0
    unused = f"wwho: warning: --tiktoken-file {O200K_FILE} was not used: no tokenizer given is a tiktoken encoding"
    # (export of an SGPE folder was silent before)
    for args in (["encode", "--tokenizer", tok, "--ids", "x"], ["eval", "--quiet", "--corpus", corpus, "--tokenizer", tok],
                 ["export", "hf", tok, "-o", tmp_path / "exported"]):
        proc = run_wwho(*args, "--tiktoken-file", O200K_FILE)
        assert proc.returncode == 0 and unused in proc.stderr, proc.stderr
    for args in (["encode", "--tokenizer", "o200k_base", "--ids", "x"], ["decode", "--tokenizer", "o200k_base", "87"],
                 ["eval", "--quiet", "--corpus", corpus, "--tokenizer", tok, "tiktoken:o200k_base"]):
        proc = run_wwho(*args, "--tiktoken-file", O200K_FILE)
        assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
