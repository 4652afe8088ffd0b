"""Binary training's inputs and output: any file name, any depth, each file once, hidden files,
the output never trained on, checks before any work, and typed errors for wrong arguments."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from cli_run import one_line_error, wwho

from wwho import binary
from wwho.binary import IngestOptions, IngestStats, OptionError, count_windows, iter_files
from wwho.cli import main, train_binary
from wwho.errors import CorpusError, TokenizerError

FAST = ["--vocab-size", "512", "--min-frequency", "2"]


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def corpus_bytes(seed: int, n: int = 3000) -> bytes:
    rng = random.Random(seed)
    words = [rng.randbytes(rng.randrange(2, 7)) for _ in range(30)]
    return b"".join(rng.choice(words) for _ in range(n))


# --- file names that are not UTF-8 ------------------------------------------------------------------

@pytest.mark.parametrize("opts", [{"mode": "fixed"}, {"mode": "random"}, {"mode": "file"},
                                  {"mode": "delim", "delimiter": b"\0"}, {"sample_rate": 0.5},
                                  {"max_docs_per_file": 2}, {"max_docs": 3}])
def test_a_file_name_that_is_not_utf8_is_read_in_every_mode(tmp_path, opts):
    root = os.fsencode(tmp_path / "weird")
    os.makedirs(root)
    with open(root + b"/f\xfe.bin", "wb") as f:
        f.write(corpus_bytes(0, 5000))
    options = IngestOptions(**opts)
    by_dir = count_windows([os.fsdecode(root)], options=options)  # a str holding a surrogate, as os.listdir gives
    by_name = count_windows([root + b"/f\xfe.bin"], options=options)
    assert by_dir.stats.files == by_name.stats.files == 1 and by_dir.counts == by_name.counts


def test_the_seed_of_a_utf8_name_is_unchanged(tmp_path):
    """The seed is the name's bytes, which for a UTF-8 name are what the text seed hashed: windows
    drawn before stay the same."""
    import random as stdlib_random

    write(tmp_path / "d" / "é.bin", corpus_bytes(1, 500))
    options = IngestOptions(mode="random", seed=5)
    got = list(count_windows([tmp_path / "d"], options=options).counts)
    rng = stdlib_random.Random("wwho.binary:5:size:é.bin")
    with open(tmp_path / "d" / "é.bin", "rb") as f:
        want = list(binary.iter_windows(f, options, rng))
    assert got == list(dict.fromkeys(want))


def test_cli_trains_on_a_name_that_is_not_utf8_and_names_it_safely(tmp_path):
    weird = os.fsencode(tmp_path / "weird")
    os.makedirs(weird)
    with open(weird + b"/f\xfe.bin", "wb") as f:
        f.write(corpus_bytes(0))
    proc = wwho("train", "--kind", "binary", os.fsdecode(weird), "-o", tmp_path / "t.json", *FAST, "--quiet")
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr[-2000:]
    missing = os.fsdecode(weird + b"/gone\xfe.bin")
    line = one_line_error(wwho("train", "--kind", "binary", missing, "-o", tmp_path / "u.json", *FAST))
    assert "gone\\xfe.bin: no such file or directory" in line


# --- the walk -----------------------------------------------------------------------------------------

def test_a_very_deep_directory_is_walked_without_running_out_of_stack(tmp_path):
    deep = path = tmp_path / "deep"
    deep.mkdir()
    for _ in range(1500):  # one level at a time: makedirs recurses per level
        path = path / "d"
        path.mkdir()
    (path / "x.bin").write_bytes(b"deep file")
    (deep / "a.bin").write_bytes(b"top file")
    try:
        assert [key for _, key in iter_files([deep])] == ["a.bin", "d/" * 1500 + "x.bin"]
    finally:  # bottom up: pytest's cleanup (shutil.rmtree) recurses per level and would fail on it
        (path / "x.bin").unlink()
        while path != deep:
            path.rmdir()
            path = path.parent


def test_a_file_reached_through_many_symlinked_paths_is_read_once(tmp_path):
    """Each level links twice to the next: 2**12 paths lead to the one file."""
    levels = 12
    for i in range(levels):
        (tmp_path / f"d{i}").mkdir()
        for name in ("a", "b"):
            os.symlink(tmp_path / f"d{i + 1}", tmp_path / f"d{i}" / name)
    write(tmp_path / f"d{levels}" / "f.bin", b"only once")
    stats = IngestStats()
    found = [key for _, key in iter_files([tmp_path / "d0"], options=IngestOptions(follow_symlinks=True), stats=stats)]
    assert found == ["a/" * levels + "f.bin"]
    assert stats.skipped == {"already read by another path": levels}


def test_an_input_named_twice_or_hard_linked_is_read_once(tmp_path):
    one = write(tmp_path / "d" / "one.bin", b"data")
    os.link(one, tmp_path / "d" / "two.bin")
    stats = IngestStats()
    found = [key for _, key in iter_files([tmp_path / "d", one], stats=stats)]
    assert found == ["one.bin"] and stats.skipped == {"already read by another path": 2}


def test_hidden_files_and_folders_are_skipped_inside_directories_but_read_when_named(tmp_path):
    write(tmp_path / "home" / "notes.bin", b"public")
    secret = write(tmp_path / "home" / ".ssh" / "id_ed25519", b"private key")
    write(tmp_path / "home" / ".netrc", b"password")
    write(tmp_path / "home" / "sub" / ".hidden.bin", b"hidden")
    stats = IngestStats()
    assert [key for _, key in iter_files([tmp_path / "home"], stats=stats)] == ["notes.bin"]
    assert stats.skipped == {"hidden": 3}
    assert [key for _, key in iter_files([secret])] == ["id_ed25519"]


# --- the output ---------------------------------------------------------------------------------------

def test_an_output_that_is_an_input_is_refused(tmp_path):
    victim = write(tmp_path / "victim.bin", corpus_bytes(2))
    line = one_line_error(wwho("train", "--kind", "binary", victim, "-o", victim, "--force", *FAST))
    assert "-o/--output is also an input" in line
    assert victim.read_bytes() == corpus_bytes(2)


def test_an_existing_output_inside_an_input_directory_is_not_trained_on(tmp_path, capsys):
    data = write(tmp_path / "data" / "f.bin", corpus_bytes(3)).parent
    out = data / "tok.json"
    assert main(["train", "--kind", "binary", str(data), "-o", str(out), *FAST, "--quiet"]) == 0
    first = out.read_text(encoding="utf-8")
    assert main(["train", "--kind", "binary", str(data), "-o", str(out), *FAST, "--force"]) == 0
    assert "1 output" in capsys.readouterr().err  # the summary counts it among the skips
    assert out.read_text(encoding="utf-8") == first  # the previous tokenizer was not trained on


@pytest.mark.parametrize("through", ["named", "a link"])
def test_a_corpus_file_inside_an_input_directory_is_never_the_output(tmp_path, capsys, through):
    """``-o data/f.bin --force`` (or ``-o out.json --force`` with out.json a link to it), with ``data``
    an input, replaced a file of the corpus (a program the run was skipping as its output): refused,
    --force or not, unless the file is a binary tokenizer (an earlier run's output, above)."""
    victim = write(tmp_path / "data" / "f.bin", corpus_bytes(5))
    write(tmp_path / "data" / "g.bin", corpus_bytes(6))
    out = victim
    if through == "a link":
        out = tmp_path / "out.json"
        out.symlink_to(victim)
    assert main(["train", "--kind", "binary", str(victim.parent), "-o", str(out), *FAST, "--force", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "is a file in the input directory" in err and "which --force would replace" in err, err
    assert "no binary tokenizer" in err
    assert victim.read_bytes() == corpus_bytes(5)


def test_an_output_directory_that_cannot_be_written_is_refused_before_reading(tmp_path, monkeypatch, capsys):
    write(tmp_path / "in.bin", corpus_bytes(4))
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path / "ro")
    (tmp_path / "ro").mkdir()

    def read(*args, **kwargs):
        raise AssertionError("inputs were read before the output was checked")

    monkeypatch.setattr(train_binary, "check_budget", read)
    assert main(["train", "--kind", "binary", str(tmp_path / "in.bin"), "-o", str(tmp_path / "ro" / "t.json"),
                 *FAST]) == 2
    assert "no permission to write in" in capsys.readouterr().err


def test_a_read_only_output_directory_is_refused_at_once(tmp_path):
    from conftest import bound_by_permissions

    write(tmp_path / "in.bin", corpus_bytes(4))
    (tmp_path / "ro").mkdir(mode=0o555)
    try:
        line = one_line_error(wwho("train", "--kind", "binary", tmp_path / "in.bin", "-o", tmp_path / "ro" / "t.json",
                                   *FAST, preexec_fn=bound_by_permissions()))
    finally:
        (tmp_path / "ro").chmod(0o755)
    assert "no permission to write in" in line


def test_quiet_prints_nothing_but_what_changes_the_result(tmp_path):
    write(tmp_path / "in.bin", corpus_bytes(5, 20000))
    quiet = wwho("train", "--kind", "binary", tmp_path / "in.bin", "-o", tmp_path / "a.json", *FAST, "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == b"", quiet.stderr
    sampled = wwho("train", "--kind", "binary", tmp_path / "in.bin", "-o", tmp_path / "b.json", *FAST, "--quiet",
                   "--memory-budget", str((200 << 20) + (1 << 20)), "--over-budget", "sample")
    lines = sampled.stderr.decode().splitlines()
    assert sampled.returncode == 0 and len(lines) == 1 and lines[0].startswith("wwho: warning: "), lines
    assert "--sample-rate" in lines[0]


# --- library arguments --------------------------------------------------------------------------------

def test_encode_bytes_refuses_a_piece_size_that_is_not_positive(tmp_path):
    write(tmp_path / "in.bin", corpus_bytes(6))
    tok = binary.train_from_counts(count_windows([tmp_path / "in.bin"]).counts, vocab_size=512, reserve=0)
    for bad in (0, -5, 1.5, "64k", True, None):
        with pytest.raises(TokenizerError, match="chunk_bytes must be a positive integer"):
            binary.encode_bytes(tok, b"x" * 10, chunk_bytes=bad)
    assert binary.encode_bytes(tok, corpus_bytes(7), chunk_bytes=1).ids == binary.encode_bytes(tok, corpus_bytes(7)).ids


def test_one_path_is_a_list_of_one(tmp_path):
    # Refused before ("pass [path]"), while SGPETokenizer.train and ByteBPE.train took one path.
    write(tmp_path / "c1" / "x.bin", b"data")
    path = str(tmp_path / "c1")
    for one in (path, tmp_path / "c1", os.fsencode(path)):
        assert [p for p, _ in iter_files(one)] == [p for p, _ in iter_files([path])]
        assert count_windows(one).counts == count_windows([path]).counts
    with pytest.raises(OptionError, match=r"paths\[1\] is int, not a file or directory path"):
        list(iter_files([path, 3]))


@pytest.mark.parametrize("bad", ["so", b"so", ("so", 3), 5])
def test_extensions_must_be_a_tuple_of_strings(bad):
    with pytest.raises(OptionError, match="extensions must be a tuple of strings"):
        IngestOptions(extensions=bad)


def test_train_refuses_ingest_options_that_are_not_ingest_options(tmp_path):
    write(tmp_path / "in.bin", corpus_bytes(8))
    with pytest.raises(OptionError, match="ingest must be an IngestOptions, not dict"):
        binary.train([tmp_path / "in.bin"], ingest={"mode": "file"}, vocab_size=512, progress=False)


@pytest.mark.parametrize("counts, message", [
    ({"abc": 3}, "window 'abc' is str, not bytes"),
    ({b"abc": -3}, "window b'abc' has count -3, not an integer from 1"),
    ({b"abc": 0}, "has count 0"),
    ({b"abc": 2.0}, "has count 2.0"),
    ([b"abc"], "counts must be a mapping"),
])
def test_train_from_counts_refuses_wrong_counts_with_a_typed_error(counts, message):
    with pytest.raises(CorpusError, match=message):
        binary.train_from_counts(counts, vocab_size=512)

