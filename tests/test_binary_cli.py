"""``wwho train --kind binary`` (through ``wwho.cli.main``), config files, and the binary
encode / decode / inspect functions of ``wwho.cli.binary``.

Every failing command must exit with status 2, print one ``wwho: error:`` line naming
the problem, and leave no output file (nor a temporary file) behind.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import sys
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from wwho import binary
from wwho.binary import IngestOptions
from wwho.binary.config import ConfigError, load_config, parse_size, resolve
from wwho.cli import binary as bcli
from wwho.cli import main
from wwho.errors import TokenizerError

FAST = ["--vocab-size", "512", "--min-frequency", "2", "--no-progress"]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    rng = random.Random(0)
    words = [rng.randbytes(rng.randrange(2, 7)) for _ in range(30)]
    root = tmp_path / "corpus"
    root.mkdir()
    for i in range(4):
        (root / f"f{i}.bin").write_bytes(b"".join(rng.choice(words) for _ in range(3000)))
    return root


def run_train(*args: str) -> int:
    return main(["train", "--kind", "binary", *map(str, args)])


def files_in(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def test_cli_train_writes_the_same_tokenizer_as_the_library(corpus, tmp_path, capsys):
    out = tmp_path / "out" / "tok.json"
    assert run_train(corpus, "-o", out, "--mode", "random", "--seed", "3", "--with-template", *FAST) == 0
    assert capsys.readouterr().err == ""  # --no-progress: not a line of progress or summary
    lib = binary.train([corpus], vocab_size=512, min_frequency=2, template=True,
                       ingest=IngestOptions(mode="random", seed=3))
    assert out.read_text(encoding="utf-8") == lib.to_str()
    assert binary.is_binary_tokenizer(out)
    assert Tokenizer.from_file(str(out)).get_vocab_size() == 512


def test_pretty_output_and_size_suffixes(corpus, tmp_path):
    out = tmp_path / "tok.json"
    assert run_train(corpus, "-o", out, "--pretty", "--window-bytes", "1k", *FAST) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("{\n  ")
    lib = binary.train([corpus], vocab_size=512, min_frequency=2, ingest=IngestOptions(window_bytes=1024))
    assert text == lib.to_str(pretty=True)


@pytest.mark.parametrize("pretty", [[], ["--pretty"]], ids=["compact", "pretty"])
def test_an_earlier_output_inside_the_input_folder_is_not_trained_on(corpus, tmp_path, pretty):
    """Not only this run's -o is left out: a second run with another -o in the folder would train on
    the first run's tokenizer.json as data (the same tokenizer as training on it beside the corpus)."""
    first = corpus / "tok.json"
    assert run_train(corpus, "-o", first, *pretty, *FAST) == 0
    (corpus / "data.json").write_text('{"version": "mine", "x": [1, 2, 3]}\n', encoding="utf-8")  # data: read
    assert run_train(corpus, "-o", corpus / "tok2.json", *FAST) == 0
    (corpus / "tok.json").unlink()
    (corpus / "tok2.json").rename(tmp_path / "tok2.json")
    assert run_train(corpus, "-o", tmp_path / "tok3.json", *FAST) == 0
    assert (tmp_path / "tok2.json").read_bytes() == (tmp_path / "tok3.json").read_bytes()


def test_config_file_with_flags_overriding_it(corpus, tmp_path):
    cfg = tmp_path / "conf" / "binary.toml"
    cfg.parent.mkdir()
    cfg.write_text('inputs = ["../corpus"]\noutput = "from-config.json"\nvocab_size = "1k"\n'
                   'min-frequency = 2\nmode = "fixed"\nwindow_bytes = 64\nprogress = false\nreserve = 8\n',
                   encoding="utf-8")
    assert run_train("--config", cfg) == 0
    made = cfg.parent / "from-config.json"  # relative paths are relative to the config file
    tok = binary.load(made)
    assert tok.get_vocab_size() == 1024 and tok.token_to_id("<|reserved:7|>") is not None
    lib = binary.train([corpus], vocab_size=1024, min_frequency=2, reserve=8,
                       ingest=IngestOptions(window_bytes=64))
    assert made.read_text(encoding="utf-8") == lib.to_str()

    out = tmp_path / "override.json"
    assert run_train("--config", cfg, "-o", out, "--vocab-size", "600", "--no-pad",
                     "--window-bytes", "128") == 0
    tok = binary.load(out)
    assert tok.get_vocab_size() == 600  # flag beat the config's 1k, and padding is off
    lib = binary.train([corpus], vocab_size=600, min_frequency=2, reserve=8, pad_to_power_of_two=False,
                       ingest=IngestOptions(window_bytes=128))
    assert out.read_text(encoding="utf-8") == lib.to_str()


def test_resolve_merges_defaults_config_and_flags(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('inputs = ["x"]\noutput = "o.json"\nmode = "delim"\ndelimiter_hex = "0a"\nseed = 4\n'
                   'ext = "so,gz"\n', encoding="utf-8")
    run = resolve({"seed": "9", "inputs": [], "ext": None}, cfg)
    assert run.inputs == [tmp_path / "x"] and run.output == tmp_path / "o.json"
    assert run.ingest == IngestOptions(mode="delim", delimiter=b"\n", seed=9, extensions=(".so", ".gz"))
    assert (run.train["vocab_size"], run.train["min_frequency"], run.train["reserve"]) == (32768, 2, 128)
    assert parse_size("16MiB", "x") == 16 << 20 and parse_size(" 4k ", "x") == 4096


@pytest.mark.parametrize("text, message", [
    ("vocab_size = [1, 2", r"c.toml: invalid TOML: Unclosed array"),
    ("a = 1\nb = = 2\n", r"c.toml: invalid TOML: .*line 2"),
    ("vocab_size = 1024\nwindow = 5\n", r"c.toml: unknown key 'window'"),
    ("vocab_size = true\n", r"c.toml: key 'vocab_size': expected a size"),
    ("sample_rate = \"half\"\n", r"c.toml: key 'sample_rate': expected a number"),
    ("mode = \"lines\"\n", r"c.toml: key 'mode': expected one of file, fixed, random, delim"),
    ("delimiter_hex = \"0g\"\n", r"c.toml: key 'delimiter_hex': expected hex bytes"),
    ("vocab-size = 600\nvocab_size = 700\n", r"c.toml: keys 'vocab-size' and 'vocab_size' are the same option"),
    ("with_template = true\n", r"c.toml: key 'with_template' is a command-line switch.*use template = true"),
    ("no-pad = true\n", r"c.toml: key 'no-pad' is a command-line switch.*use pad_to_power_of_two = false"),
    ("quiet = true\n", r"c.toml: key 'quiet' is a command-line switch.*use progress = false"),
])
def test_bad_config_files_name_the_file_and_key(tmp_path, text, message):
    cfg = tmp_path / "c.toml"
    cfg.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(cfg)


@pytest.mark.parametrize("args, message", [
    (["{missing}", "-o", "{out}"], "missing: no such file or directory"),
    (["{empty}", "-o", "{out}"], "no data to train on"),
    (["{corpus}", "-o", "{out}", "--vocab-size", "300"], "--vocab-size 300 is smaller than the 256-byte"),
    (["{corpus}", "-o", "{out}", "--mode", "delim", "--delimiter-hex", "xyz"], "--delimiter-hex: expected"),
    (["{corpus}", "-o", "{out}", "--mode", "delim"], "needs a delimiter"),
    (["{corpus}", "-o", "{out}", "--config", "{badtoml}"], "invalid TOML"),
    (["{corpus}", "-o", "{out}", "--config", "{missing}"], "config file not found"),
    (["{corpus}", "-o", "{out}", "--sample-rate", "2"], r"--sample-rate: expected a number in \(0, 1\], got '2'"),
    (["{corpus}", "-o", "{out}", "--min-exp", "10", "--max-exp", "5"], r"--min-exp \(10\) is larger than --max-exp \(5\)"),
    (["{corpus}", "-o", "{out}", "--max-token-length", "1"], "--max-token-length must be an integer from 2 to "),
    (["{corpus}", "-o", "{out}", "--max-docs", "-3"], "--max-docs must be an integer from 1 to "),
    (["{corpus}", "-o", "{out}", "--threads", "x"], "--threads: expected an integer"),
    (["{corpus}"], "no output"),
    (["-o", "{out}"], "no inputs"),
    (["{corpus}", "-o", "{outdir}"], "output is a directory"),
    (["{corpus}", "-o", "{out}/"], r"output names a directory \(it ends with '/'\)"),
    (["{corpus}", "--config", "{slashtoml}"], r"output names a directory \(it ends with '/'\)"),
])
def test_bad_inputs_exit_2_with_one_line_and_no_output(corpus, tmp_path, capsys, args, message):
    work = tmp_path / "work"
    work.mkdir()
    (work / "empty").mkdir()
    (work / "empty" / "zero.bin").write_bytes(b"")
    (work / "bad.toml").write_text("vocab_size = \n", encoding="utf-8")
    (work / "slash.toml").write_text('output = "made/"\n', encoding="utf-8")
    (work / "outdir").mkdir()
    before = files_in(work)
    fill = {"missing": work / "missing", "empty": work / "empty", "corpus": corpus, "out": work / "tok.json",
            "badtoml": work / "bad.toml", "outdir": work / "outdir", "slashtoml": work / "slash.toml"}
    # An option may be given once (wwho.cli.options): the case's own --vocab-size replaces FAST's.
    fast = FAST[2:] if "--vocab-size" in args else FAST
    assert run_train(*fast, *(a.format(**fill) for a in args)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("wwho: error: ") and re.search(message, err[-1]), err
    assert files_in(work) == before  # no tokenizer.json, no temporary file


def test_failure_after_training_leaves_no_output(tmp_path, capsys):
    (tmp_path / "in.bin").write_bytes(b"<|end|>" * 5000)  # the special token's text becomes a learned token
    out = tmp_path / "tok.json"
    assert run_train(tmp_path / "in.bin", "-o", out, "--vocab-size", "1k", "--min-frequency", "2",
                     "--no-progress") == 2
    assert "was learned" in capsys.readouterr().err
    assert files_in(tmp_path) == ["in.bin"]


def test_unknown_kind_and_help(capsys):
    with pytest.raises(SystemExit) as exc:
        run_train("--help")
    assert exc.value.code == 0
    assert "wwho train --kind binary" in capsys.readouterr().out


# --- encode / decode / inspect ---------------------------------------------------------------------

@pytest.fixture
def tok_path(corpus, tmp_path) -> Path:
    path = tmp_path / "tok.json"
    assert run_train(corpus, "-o", path, "--with-template", *FAST) == 0
    return path


def parse(add, argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add(p)
    return p.parse_args(argv)


def test_encode_json_then_decode_from_stdin_round_trips(tok_path, corpus, tmp_path, capsys, monkeypatch):
    data = (corpus / "f1.bin").read_bytes()[:5000] + bytes(range(256))
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    assert bcli.run_encode(parse(bcli.add_encode_arguments, ["--tokenizer", str(tok_path), "--binary",
                                                             str(src)])) == 0
    shown = json.loads(capsys.readouterr().out)
    tok = binary.load(tok_path)
    enc = binary.encode_bytes(tok, data)
    assert shown["ids"] == enc.ids
    assert shown["tokens"] == [t.hex() for t in enc.tokens]
    assert [tuple(o) for o in shown["offsets"]] == enc.offsets
    assert b"".join(bytes.fromhex(t) for t in shown["tokens"]) == data

    out = tmp_path / "decoded.bin"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(shown).encode())))  # as a real one
    assert bcli.run_decode(parse(bcli.add_decode_arguments, ["--tokenizer", str(tok_path), "--binary", "-o",
                                                             str(out), "-"])) == 0
    assert out.read_bytes() == data


def test_encode_stdin_with_specials_and_other_formats(tok_path, capsys, monkeypatch):
    tok = binary.load(tok_path)
    data = b"\x00\x01ab<|end|>\xff"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    bcli.run_encode(parse(bcli.add_encode_arguments, ["--tokenizer", str(tok_path), "-", "--specials",
                                                      "--format", "table"]))
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    enc = binary.encode_bytes(tok, data, add_special_tokens=True)
    assert [int(r[0]) for r in rows] == enc.ids
    assert rows[0][1] == "<|start|>" and rows[-1][1] == "<|end|>"
    assert b"".join(bytes.fromhex(r[1]) for r in rows[1:-1]) == data
    assert [(int(r[2]), int(r[3])) for r in rows] == enc.offsets

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    bcli.run_encode(parse(bcli.add_encode_arguments, ["--tokenizer", str(tok_path), "-", "--format", "ids"]))
    ids = capsys.readouterr().out.split()
    assert list(map(int, ids)) == binary.encode_bytes(tok, data).ids


def test_decode_ids_from_arguments_to_stdout(tok_path, capsysbinary):
    tok = binary.load(tok_path)
    data = b"ELF\x00\x00\x00\x7f"
    ids = binary.encode_bytes(tok, data, add_special_tokens=True).ids
    bcli.run_decode(parse(bcli.add_decode_arguments, ["--tokenizer", str(tok_path), *map(str, ids)]))
    assert capsysbinary.readouterr().out == data
    bcli.run_decode(parse(bcli.add_decode_arguments, ["--tokenizer", str(tok_path), "--keep-specials",
                                                      ",".join(map(str, ids))]))
    assert capsysbinary.readouterr().out == b"<|start|>" + data + b"<|end|>"


def test_decode_errors_leave_no_output(tok_path, tmp_path):
    out = tmp_path / "never.bin"
    for ids, message in ((["1", "99999"], "id 99999 at position 1 is out of range"),
                         (["1", "x2"], "item 1 is 'x2', not a token id")):
        with pytest.raises(TokenizerError, match=message):
            bcli.run_decode(parse(bcli.add_decode_arguments,
                                  ["--tokenizer", str(tok_path), "-o", str(out), *ids]))
    assert not out.exists()


def test_encode_specials_need_a_template(corpus, tmp_path):
    path = tmp_path / "plain.json"
    assert run_train(corpus, "-o", path, *FAST) == 0
    (tmp_path / "x").write_bytes(b"abc")
    with pytest.raises(TokenizerError, match="has no template"):
        bcli.run_encode(parse(bcli.add_encode_arguments, ["--tokenizer", str(path), str(tmp_path / "x"),
                                                          "--specials"]))


def test_argument_adders_share_options_a_verb_already_has(tok_path, capsys, tmp_path):
    p = argparse.ArgumentParser()
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--binary", action="store_true")
    bcli.add_encode_arguments(p)  # must not raise "conflicting option string"
    (tmp_path / "x").write_bytes(b"xyz")
    bcli.run_encode(p.parse_args(["--tokenizer", str(tok_path), "--binary", str(tmp_path / "x")]))
    expected = [t.hex() for t in binary.encode_bytes(binary.load(tok_path), b"xyz").tokens]
    assert json.loads(capsys.readouterr().out)["tokens"] == expected


def test_inspect_reports_sizes_specials_merges_and_longest_tokens(tmp_path):
    data = (b"\x00" * 64 + b"\x7fELF\x02\x01") * 400
    (tmp_path / "in.bin").write_bytes(data)
    path = tmp_path / "tok.json"
    assert run_train(tmp_path / "in.bin", "-o", path, "--vocab-size", "400", "--min-frequency", "2",
                     "--reserve", "4", "--no-progress", "--with-template", "--window-bytes", "70") == 0
    report = bcli.inspect_tokenizer(path)
    tok = Tokenizer.from_file(str(path))
    model = tok.get_vocab_size(with_added_tokens=False)
    assert f"vocabulary: 512 = {model} model (256 bytes + {model - 256} merges) + {512 - model} added" \
        in report
    assert f"<|start|>={model}" in report and f"<|unk|>={model + 6}" in report
    n_reserved = 512 - model - 7
    last = f"<|reserved:{n_reserved - 1}|>=511"
    assert f"reserved: {n_reserved} (<|reserved:0|>={model + 7} .. {last})" in report
    assert "template: single '<|start|> $A <|end|>', pair '<|start|> $A <|sep|> $B <|end|>'" in report
    assert "0: 00 + 00 -> id 256" in report  # the most frequent pair in this data
    longest = max(tok.get_vocab(with_added_tokens=False), key=len)
    assert f"{len(longest):>5} bytes: " in report


def test_is_binary_tokenizer_is_exported_from_the_cli_module(tok_path, tmp_path):
    assert bcli.is_binary_tokenizer(tok_path)
    (tmp_path / "text.json").write_text('{"model": {"type": "BPE", "vocab": {"a": 0}}}', encoding="utf-8")
    assert not bcli.is_binary_tokenizer(tmp_path / "text.json")


def test_encode_file_reads_that_file_not_standard_input(tok_path, tmp_path, capsys, monkeypatch):
    """``wwho encode --tokenizer BIN --file F`` reads F, not standard input."""
    import io

    src = tmp_path / "in.bin"
    src.write_bytes(b"\x00\x01file bytes")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"stdin bytes")))
    assert main(["encode", "--tokenizer", str(tok_path), "--file", str(src)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["ids"] == binary.encode_bytes(binary.load(tok_path), src.read_bytes()).ids
    assert main(["encode", "--tokenizer", str(tok_path), "--file", str(src), "other.bin"]) == 2
    assert "not both" in capsys.readouterr().err


def test_text_given_to_a_binary_tokenizer_says_it_encodes_files(tok_path, tmp_path, capsys):
    """``wwho encode --tokenizer BIN "ÿ"`` encodes the text, not ``ÿ: cannot read: No such file or
    directory``: encode's help calls INPUT text (a file only with --binary). A file named without
    --binary is still read."""
    assert main(["encode", "--tokenizer", str(tok_path), "ÿ"]) == 2
    err = capsys.readouterr().err
    assert "a binary tokenizer encodes the bytes of a file (--binary FILE" in err and len(err.splitlines()) == 1
    src = tmp_path / "in.bin"
    src.write_bytes(b"\x00\x01file bytes")
    want = binary.encode_bytes(binary.load(tok_path), src.read_bytes()).ids
    for flags in ([], ["--binary"]):
        assert main(["encode", "--tokenizer", str(tok_path), *flags, str(src)]) == 0
        assert json.loads(capsys.readouterr().out)["ids"] == want


def test_a_folder_holding_a_binary_tokenizer_is_taken_by_every_verb(tok_path, tmp_path, capsys):
    """``--tokenizer DIR`` (and ``inspect DIR``) with DIR/tokenizer.json a binary tokenizer is taken
    by encode, decode and inspect, as load_tokenizer, eval and export take the folder, not "is a
    directory, not a tokenizer"."""
    import shutil

    folder = tmp_path / "bdir"
    folder.mkdir()
    shutil.copy(tok_path, folder / "tokenizer.json")
    src = tmp_path / "in.bin"
    src.write_bytes(b"\x00\x01file bytes")
    assert main(["encode", "--tokenizer", str(folder), "--binary", str(src), "--ids"]) == 0
    ids = capsys.readouterr().out.split()
    assert [int(i) for i in ids] == binary.encode_bytes(binary.load(tok_path), src.read_bytes()).ids
    out = tmp_path / "out.bin"
    assert main(["decode", "--tokenizer", str(folder), "--binary", *ids, "-o", str(out)]) == 0
    assert out.read_bytes() == src.read_bytes()
    assert main(["inspect", str(folder)]) == 0
    assert "binary BPE tokenizer" in capsys.readouterr().out


@pytest.mark.parametrize("specials", [False, True])
def test_encode_ids_writes_the_ids_alone_in_slices(tok_path, tmp_path, capsys, monkeypatch, specials):
    """``encode --binary FILE --ids`` does not build every token's bytes, offsets and hex string to
    print the ids: the ids path builds ids only, written a slice at a time; the output is the same."""
    from conftest import binary_corpus

    from wwho.binary.mapping import encode_bytes_ids

    src = tmp_path / "in.bin"
    src.write_bytes(binary_corpus(4, 200_000))
    tok = binary.load(tok_path)
    want = encode_bytes_ids(tok, src.read_bytes(), add_special_tokens=specials)
    assert want == binary.encode_bytes(tok, src.read_bytes(), add_special_tokens=specials).ids
    argv = ["encode", "--tokenizer", str(tok_path), "--binary", str(src), "--ids", *(["--specials"] if specials else [])]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.endswith("\n") and out.count("\n") == 1 and [int(i) for i in out.split()] == want
    (tmp_path / "empty.bin").write_bytes(b"")
    assert main(["encode", "--tokenizer", str(tok_path), "--binary", str(tmp_path / "empty.bin"), "--ids"]) == 0
    assert capsys.readouterr().out == "\n"


# --- bounds: what was estimated is what is read; standard input --------------------------------------

def test_a_file_growing_after_the_estimate_is_read_up_to_its_estimated_size(corpus, tmp_path, capsys, monkeypatch):
    """A file appended to after the memory estimate is not read to its new end, past the budget. Here
    it grows by 200 KB between the estimate and the read: the
    run reads the bytes estimated, says which file grew, and trains on the rest."""
    from wwho.cli import train_binary

    grows = corpus / "f3.bin"
    estimated = sum(p.stat().st_size for p in corpus.iterdir())
    size = grows.stat().st_size
    real_check = train_binary.check_budget

    def then_grow(*args, **kwargs):
        result = real_check(*args, **kwargs)
        with open(grows, "ab") as f:
            f.write(os.urandom(200_000))
        return result

    monkeypatch.setattr(train_binary, "check_budget", then_grow)
    assert run_train(corpus, "-o", tmp_path / "t.json", "--vocab-size", "512") == 0
    err = capsys.readouterr().err
    assert f"read {estimated:,} bytes from 4 files" in err
    assert f"wwho: warning: {grows}: grew after the memory estimate" in err
    assert f"({size:,} bytes then, {size + 200_000:,} when read); only its first {size:,} bytes were read" in err


def test_a_rate_over_budget_sample_chose_that_keeps_nothing_says_so(tmp_path, capsys):
    """--mode file --over-budget sample may choose a --sample-rate (0.0024) that keeps no file: the
    run does not end with "no data to train on" alone. The error names the rate, that
    --over-budget sample chose it, and what to do instead."""
    from wwho.binary.budget import BASE_BYTES, BYTES_PER_ADDED_TOKEN, check
    from wwho.binary.ingest import _rng
    from wwho.binary.train import added_tokens_at_most, special_tokens

    root = tmp_path / "d"
    root.mkdir()
    for name in ("a.bin", "b.bin"):
        (root / name).write_bytes(os.urandom(100_000))
    added = added_tokens_at_most(len(special_tokens()), 512, True)  # FAST's vocabulary, padded as by default
    budget = BASE_BYTES + added * BYTES_PER_ADDED_TOKEN + (1 << 20)
    rate = check([root], IngestOptions(mode="file"), budget=budget, over_budget="sample",
                 added_tokens=added)[0].sample_rate
    assert 0 < rate < 0.2
    seed = next(s for s in range(1000)
                if all(_rng(IngestOptions(seed=s), "keep", name).random() >= rate for name in ("a.bin", "b.bin")))
    assert run_train(root, "-o", tmp_path / "t.json", "--mode", "file", "--memory-budget", str(budget),
                     "--over-budget", "sample", "--seed", seed, *FAST) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (f"wwho: error: no data to train on in {root}: --sample-rate {rate:g} kept none of its 2 windows; "
                       "--over-budget sample chose that rate to fit --memory-budget: raise --memory-budget, or bound "
                       "the data with --max-docs N instead of sampling")
    assert not (tmp_path / "t.json").exists()


class Endless(io.RawIOBase):
    """A stream that never ends (``/dev/zero``, ``yes``), counting what was read from it."""

    def __init__(self, unit: bytes) -> None:
        self.unit, self.given = unit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = len(buffer) - len(buffer) % len(self.unit) or len(buffer)
        buffer[:n] = (self.unit * (n // len(self.unit) + 1))[:n]
        self.given += n
        if self.given > 10 << 20:  # a reader without a bound: fail the test, never hang it
            raise AssertionError("read more than 10 MiB of standard input")
        return n


@pytest.mark.parametrize("verb, unit", [("encode", b"\0"), ("decode", b"256\n")])
def test_standard_input_is_read_up_to_the_file_bound(tok_path, capsys, monkeypatch, verb, unit):
    """``wwho encode --binary -`` and ``wwho decode --binary -`` do not read all of standard input,
    where /dev/zero (or `yes 256`) would end in a MemoryError traceback. Standard input is bounded as a
    file is (WWHO_MAX_FILE_BYTES), in one line naming it, the bound and how to raise it."""
    limit = tok_path.stat().st_size + 5000  # (the tokenizer file is read under the same bound)
    monkeypatch.setenv("WWHO_MAX_FILE_BYTES", str(limit))
    stream = Endless(unit)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(stream)))
    extra = ["--ids"] if verb == "encode" else []
    assert main([verb, "--tokenizer", str(tok_path), "--binary", "-", *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        f"wwho: error: stdin: more than {limit:,} bytes, the most wwho reads from standard input "
        f"(set WWHO_MAX_FILE_BYTES to read more, e.g. WWHO_MAX_FILE_BYTES={2 * limit})\n")
    assert stream.given <= limit + 1 + 8192  # one byte past the bound, and a buffer's worth


@pytest.mark.parametrize("verb", ["encode", "decode"])
def test_standard_input_within_the_bound_is_read_whole(tok_path, tmp_path, capsysbinary, monkeypatch, verb):
    data = bytes(range(256)) * 40
    tok = binary.load(tok_path)
    ids = binary.encode_bytes(tok, data).ids
    given = data if verb == "encode" else " ".join(map(str, ids)).encode()
    monkeypatch.setenv("WWHO_MAX_FILE_BYTES", str(max(tok_path.stat().st_size, len(given))))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(given)))
    extra = ["--ids"] if verb == "encode" else []
    assert main([verb, "--tokenizer", str(tok_path), "--binary", "-", *extra]) == 0
    out = capsysbinary.readouterr().out
    assert (list(map(int, out.split())) if verb == "encode" else out) == (ids if verb == "encode" else data)


@pytest.mark.parametrize("form", ["ids", "json"])
def test_decode_writes_blocks_and_nothing_before_a_bad_id(tok_path, capsysbinary, monkeypatch, form):
    """``wwho decode --binary -`` decodes and writes a block of ids at a time (encode's JSON read
    without its tokens and offsets), the bytes as all at once; an id out of range at the end is
    named before the first block is written."""
    from wwho.binary import mapping

    data = bytes(range(256)) * 40
    tok = binary.load(tok_path)
    encoding = binary.encode_bytes(tok, data)
    monkeypatch.setattr(mapping, "DECODE_BLOCK", 7)
    for ids, expected in ((encoding.ids, 0), (encoding.ids + [10**6], 2)):
        if form == "ids":
            given = " ".join(map(str, ids))
        else:
            given = json.dumps({"ids": ids, "tokens": ["00"] * len(ids), "offsets": [[0, 1]] * len(ids)})
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(given.encode())))
        assert main(["decode", "--tokenizer", str(tok_path), "--binary", "-"]) == expected
        out = capsysbinary.readouterr().out
        assert out == (data if expected == 0 else b"")


@pytest.fixture(scope="module")
def long_binary(tmp_path_factory) -> tuple[Path, Path]:
    """A tokenizer with a template, and 400 kB of data: six pieces or so, each a part of its own under
    :func:`one_piece_parts`."""
    from conftest import binary_corpus

    root = tmp_path_factory.mktemp("long-binary")
    data = binary_corpus(7, 400_000)
    (root / "data.bin").write_bytes(data)
    tok = binary.train([root / "data.bin"], vocab_size=600, min_frequency=2, template=True, progress=False)
    tok.save(str(root / "tok.json"))
    return root / "tok.json", root / "data.bin"


@pytest.fixture
def one_piece_parts(monkeypatch):
    """A part of the encoding per piece (of ``CHUNK_BYTES``), not per eight: the parts and their joins
    are the same, with an eighth of the data (and of the time) to have several."""
    from wwho.binary import mapping

    monkeypatch.setattr(mapping, "_PART_PIECES", 1)


@pytest.fixture(scope="module")
def long_encoding(long_binary):
    """The whole encoding of :func:`long_binary`'s data, template tokens included (``encode_bytes``),
    and how many parts ``encode_bytes_parts`` gives of it under :func:`one_piece_parts`: made once,
    the same for every format."""
    from wwho.binary import mapping

    tok, data = long_binary
    enc = mapping.encode_bytes(binary.load(tok), data.read_bytes(), add_special_tokens=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mapping, "_PART_PIECES", 1)
        parts = list(mapping.encode_bytes_parts(binary.load(tok), data.read_bytes(), add_special_tokens=True))
    return enc, len(parts)


def _written(tok: Path, data: Path, flag: str, tmp_path: Path) -> bytes:
    assert main(["encode", "--tokenizer", str(tok), "--binary", str(data), flag, "--specials",
                 "-o", str(tmp_path / "out.txt"), "--force"]) == 0
    return (tmp_path / "out.txt").read_bytes()


@pytest.mark.parametrize("flag", ["--ids", "--tokens", "--json", "--table"])
def test_a_long_binary_file_is_written_as_the_whole_encoding_says(long_binary, long_encoding, one_piece_parts,
                                                                  tmp_path, flag):
    """``wwho encode --binary`` writes a part of the encoding at a time; the output is what the
    whole encoding (``encode_bytes``: HF's ids, tested elsewhere) gives by the formats' plain
    definitions, template tokens included."""
    from wwho.readable import readable

    tok, data = long_binary
    enc, parts = long_encoding
    shown = [t.decode("utf-8") if special else t.hex() for t, special in zip(enc.tokens, enc.special_tokens_mask)]
    expected = {  # (each made only for its own flag)
        "--ids": lambda: " ".join(map(str, enc.ids)) + "\n",
        "--tokens": lambda: " | ".join(t.decode("utf-8") if special else readable(t)
                                       for t, special in zip(enc.tokens, enc.special_tokens_mask)) + "\n",
        "--json": lambda: json.dumps({"ids": enc.ids, "tokens": shown,
                                      "offsets": [list(o) for o in enc.offsets]}) + "\n",
        "--table": lambda: "".join(f"{i}\t{t}\t{s}\t{e}\n" for i, t, (s, e) in zip(enc.ids, shown, enc.offsets)),
    }[flag]()
    assert sum(enc.special_tokens_mask) == 2 and len(enc.ids) > 50_000
    assert parts >= 2 + 4, parts  # the template's two and several of the data
    assert _written(tok, data, flag, tmp_path).decode("utf-8") == expected


@pytest.mark.parametrize("flag", ["--tokens", "--json"])
def test_a_long_binary_file_holds_no_python_object_per_token(long_binary, one_piece_parts, tmp_path, flag):
    """``wwho encode --binary FILE --tokens`` (or ``--json``, ``--table``) does not hold every token's
    bytes, text and offsets, and the whole output, as Python objects: the encoding is written a part
    at a time, so for 800 kB Python's traced memory stays under 80 times the file (a part's tokens, the
    cut search's arrays; ``--json`` 4 bytes a token for its ids)."""
    import tracemalloc

    tok, data = long_binary
    twice = tmp_path / "twice.bin"
    twice.write_bytes(data.read_bytes() * 2)
    tracemalloc.start()
    try:
        _written(tok, twice, flag, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 80 * twice.stat().st_size, (peak / twice.stat().st_size)


@pytest.mark.parametrize("fmt", ["--ids", "--json"])
def test_encode_draws_a_bar_of_the_bytes_encoded(tmp_path, monkeypatch, capsys, fmt):
    """Encoding 100 MB ran minutes with nothing on a terminal: a bar of the bytes, as --file draws
    for text (on a terminal only, the results going elsewhere), and the same output as without it."""
    from conftest import binary_corpus, train_binary_sample

    import wwho.progress as progress

    path = tmp_path / "t.json"
    path.write_text(train_binary_sample(20_000).to_str(), encoding="utf-8")
    data = tmp_path / "data.bin"
    data.write_bytes(binary_corpus(3, 300_000))
    assert main(["encode", "--tokenizer", str(path), "--binary", str(data), fmt, "-o", str(tmp_path / "plain")]) == 0
    assert "encoding data.bin" not in capsys.readouterr().err
    monkeypatch.setattr(progress, "stderr_is_a_terminal", lambda: True)
    assert main(["encode", "--tokenizer", str(path), "--binary", str(data), fmt, "-o", str(tmp_path / "bar")]) == 0
    err = capsys.readouterr().err
    assert "encoding data.bin: 100%" in err and f"{len(data.read_bytes()) / 1024:.0f}k" in err.replace("kB", "k"), err
    assert (tmp_path / "bar").read_bytes() == (tmp_path / "plain").read_bytes()
