"""Repeated command-line options (wwho.cli.options): list options accumulate, single-valued ones
refuse a second value, contradicting flags are refused, on every verb and every ``train`` kind,
checked on the parsers and through the real ``wwho`` command in a subprocess."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPORA, O200K_FILE, one_line_error, run_wwho

from wwho.cli import TRAIN_KINDS, build_parser
from wwho.cli.options import _ConstOnce, _StoreOnce, strict

WWHO = Path(sys.executable).with_name("wwho")
ACCEPTED = (_StoreOnce, _ConstOnce, argparse._ExtendAction, argparse._AppendAction, argparse._CountAction,
            argparse._HelpAction, argparse._VersionAction)


def _parsers() -> dict[str, argparse.ArgumentParser]:
    top = build_parser()
    subs = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    found = {f"wwho {verb}": p for verb, p in subs.choices.items() if verb != "train"}
    for kind, module in TRAIN_KINDS.items():
        found[f"wwho train --kind {kind}"] = importlib.import_module(module).build_parser()
    return found


def test_every_option_of_every_verb_is_strict():
    parsers = _parsers()
    assert "wwho eval" in parsers and "wwho train --kind sgpe" in parsers
    for name, parser in parsers.items():
        for action in parser._actions:
            if action.option_strings:
                assert isinstance(action, ACCEPTED), f"{name} {action.option_strings[0]}: {type(action).__name__}"


def test_rules_on_a_parser():
    p = argparse.ArgumentParser(exit_on_error=False)
    p.add_argument("--one")
    p.add_argument("--many", nargs="+")
    p.add_argument("--flag", dest="mode", action="store_const", const="a")
    p.add_argument("--other", dest="mode", action="store_const", const="b")
    strict(p)
    args = p.parse_args(["--many", "x", "y", "--many", "z", "--one", "1", "--flag", "--flag"])
    assert args.many == ["x", "y", "z"] and args.one == "1" and args.mode == "a"
    assert not hasattr(args, "_wwho_given_options")
    assert p.parse_args([]).many is None  # defaults untouched
    with pytest.raises(SystemExit):
        p.parse_args(["--one", "1", "--one", "2"])
    with pytest.raises(SystemExit):
        p.parse_args(["--flag", "--other"])


def _wwho(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(WWHO), *args], capture_output=True, text=True, input=stdin, timeout=300)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["encode", "--tokenizer", "a", "--tokenizer", "b", "x"], "--tokenizer given twice (--tokenizer a, then --tokenizer b)"),
        (["decode", "--tokenizer", "a", "--tokenizer", "b", "1"], "--tokenizer given twice"),
        (["inspect", "x", "--top", "1", "--top", "2"], "--top given twice"),
        (["export", "hf", "x", "-o", "a", "--out", "b"], "given twice (-o a, then --out b)"),
        (["syllabify", "--schema", "a", "--schema", "b", "x"], "--schema given twice"),
        (["train", "--kind", "bytelevel", "c.txt", "--out", "a", "--out", "b"], "--out given twice"),
        (["train", "--kind", "sgpe", "c.txt", "--out", "a", "--vocab-size", "5", "--vocab-size", "6"], "--vocab-size given twice"),
        (["train", "--kind", "binary", "c", "-o", "a", "-o", "b"], "given twice"),
        (["encode", "--tokenizer", "a", "--ids", "--json", "x"], "not allowed with"),
        (["extend", "--base", "a", "--base", "b", "--corpus", "c", "--add", "5", "--script", "sinhala", "-o", "o"],
         "--base given twice (--base a, then --base b)"),
        (["extend", "--base", "a", "--corpus", "c", "--add", "5", "--add", "6", "--script", "sinhala", "-o", "o"],
         "--add given twice"),
    ],
)
def test_the_real_command_refuses_a_second_value(argv, message):
    if not WWHO.exists():
        pytest.skip(f"{WWHO}: the wwho command is not installed in this environment")
    done = _wwho(*argv)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr


@pytest.mark.skipif(not O200K_FILE.is_file() or not CORPORA.is_dir(), reason="shared data absent")
def test_the_real_command_evaluates_every_tokenizer_given(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\nශ්‍රී ලංකාව\n", encoding="utf-8")
    done = _wwho("eval", "--corpus", str(corpus), "--tokenizer", str(O200K_FILE), "--tokenizer",
                 f"hf:{tmp_path / 'missing.json'}", "--quiet")
    assert done.returncode == 2 and "missing.json" in done.stderr  # the second one was not dropped
    done = _wwho("eval", "--corpus", str(corpus), "--corpus", str(corpus), "--tokenizer", str(O200K_FILE),
                 "--json", "--quiet")
    assert done.returncode == 2 and "is given twice" in done.stderr  # not one row, silently


@pytest.mark.parametrize("args", [
    ["train", "--kind", "sgpe", "--vocab-size", "-1", "-o", "x", "c.txt"],
    ["train", "--kind", "bytelevel", "--vocab-size", "abc", "-o", "x", "c.txt"],
    ["extend", "--add", "-3"],
    ["encode", "--tokenizr", "x"],
    ["decode"],
    ["nosuchverb"],
])
def test_argument_errors_are_one_line_for_every_verb(args):
    """argparse's usage block is not printed first (many lines for ``train --kind sgpe``): as every
    other error of the command, one line."""
    from cli_run import one_line_error, wwho

    line = one_line_error(wwho(*args))
    assert "--help" in line  # where the options are listed


@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_ray_address_is_refused_not_a_local_run(tmp_path, address):
    # --address "$RAY_HEAD" with the variable unset started a local Ray instance instead.
    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව\n" * 50, encoding="utf-8")
    line = one_line_error(run_wwho("train", "--kind", "sgpe", corpus, "--out", tmp_path / "o", "--engine", "ray",
                                   "--address", address, "--quiet"))
    assert "--address is empty" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("verb", [["train", "--kind", "sgpe"], ["train", "--kind", "bytelevel"]])
def test_text_field_on_a_file_not_named_jsonl_is_refused(tmp_path, verb):
    # It was ignored: the raw JSON lines were trained on, "Ġ\"" and "\":" learnt as tokens.
    data = '{"body": "ශ්‍රී ලංකාව hello"}\n' * 50
    (tmp_path / "data.json").write_text(data, encoding="utf-8")
    (tmp_path / "data.jsonl").write_text(data, encoding="utf-8")
    line = one_line_error(run_wwho(*verb, tmp_path / "data.json", "--text-field", "body", "--out", tmp_path / "o",
                                   "--vocab-size", "300", "--quiet"))
    assert "data.json: --text-field 'body' applies to JSONL files, named .jsonl or .ndjson" in line
    assert not (tmp_path / "o").exists()
    done = run_wwho(*verb, tmp_path / "data.jsonl", "--text-field", "body", "--out", tmp_path / "o",
                    "--vocab-size", "300", "--quiet")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("args", [["encode", "--tokenizer", "x"], ["decode", "--tokenizer", "x", "1"], ["inspect", "x"],
                                  ["syllabify"], ["eval", "--corpus", "x", "--tokenizer", "y"]])
def test_an_unknown_option_of_a_verb_names_the_verb_and_its_help(args):
    # The top parser reported it: "unrecognized arguments: --bogus (options: wwho --help)".
    verb = args[0]
    line = one_line_error(run_wwho(*args, "--bogus"))
    assert f"wwho: error: {verb}: unrecognized arguments: --bogus (options: wwho {verb} --help)" in line, line


HELP_PAGES = [["train", "--kind", kind] for kind in ("sgpe", "bytelevel", "binary")] + [
    [verb] for verb in ("syllabify", "schema", "encode", "decode", "inspect", "export", "eval", "extend", "serve")]


@pytest.mark.parametrize("verb", HELP_PAGES, ids=" ".join)
def test_help_names_no_design_document_the_package_does_not_ship(verb):
    # tests/test_docs.py holds the docs to this; --help said "'words' spec 000: words of syllables only"
    import re

    done = run_wwho(*verb, "--help")
    assert done.returncode == 0 and "usage: wwho" in done.stdout, done.stderr
    assert not re.search(r"\bspec 0\d\d\b", done.stdout, re.IGNORECASE), done.stdout


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel", "binary"])
def test_vocab_size_takes_a_k_suffix_on_every_kind(tmp_path, kind):
    """The README says training flags mean the same on every kind; --vocab-size 1k trained a binary
    tokenizer and was refused by the other two ("expected an integer"). 1k is 1,024, as binary's
    sizes are read (docs/binary.md)."""
    import json

    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    out = tmp_path / ("b.json" if kind == "binary" else "out")
    done = run_wwho("train", "--kind", kind, sample, "--vocab-size", "1k", "-o", out, "--quiet")
    assert done.returncode == 0, done.stderr
    if kind == "binary":
        size = len(json.loads(out.read_text(encoding="utf-8"))["model"]["vocab"])
    else:
        from wwho import load_tokenizer

        size = load_tokenizer(out).vocab_size
    assert size <= 1024 and (kind == "binary" or size == 1024), size
    assert "expected a size such as 32" in run_wwho("train", "--kind", kind, sample, "--vocab-size", "1q",
                                                          "-o", tmp_path / "x", "--quiet").stderr
