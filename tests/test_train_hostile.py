"""SGPE training against a hostile user: checkpoints edited by hand or damaged while still valid JSON,
names of wwho's checkpoint files taken by a FIFO or a folder, a disk too full for the first
checkpoint, two trainings using one checkpoint folder or one output folder, and option values of
the wrong type. Each case is one clear error naming the file, and nothing is left half-written or
deleted that wwho did not write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import one_line_error, run_wwho, wwho_command

from wwho.errors import VocabError
from wwho.sgpe import checkpoints, train_sgpe

fcntl = pytest.importorskip("fcntl")  # POSIX only: the locks, and the file size limit below
resource = pytest.importorskip("resource")

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
OPTIONS = {"vocab_size": 1200, "progress": False, "workers": 1}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "c.txt"
    path.write_text("\n".join(SAMPLE.read_text(encoding="utf-8").splitlines()[:500]), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    """An uninterrupted training's vocab.json, and the checkpoint folder it left."""
    folder = tmp_path_factory.mktemp("ck") / "ck"
    vocab = train_sgpe(corpus, checkpoint_dir=folder, checkpoint_every=100, **OPTIONS)
    out = folder.parent / "whole" / "vocab.json"
    vocab.save(out)
    return out.read_bytes(), folder


def _copy_checkpoint(folder: Path, to: Path, edit=None) -> Path:
    to.mkdir()
    (to / checkpoints.MARKER).write_bytes((folder / checkpoints.MARKER).read_bytes())
    data = json.loads((folder / checkpoints.FILE).read_text(encoding="utf-8"))
    if edit is not None:
        edit(data)
    (to / checkpoints.FILE).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return to


def _swap_two(data):
    merges = data["merges"]
    merges[0], merges[1] = merges[1], merges[0]


def _move_forward(data):
    merges = data["merges"]
    data["merges"] = [merges[10], *merges[:10], *merges[11:]]


@pytest.mark.parametrize("edit", [_swap_two, _move_forward])
def test_merges_edited_in_a_valid_checkpoint_are_refused(corpus, tmp_path, trained, edit):
    """Merges put in another order (by hand, or a damaged byte that left valid JSON) are not replayed
    without a word, where the resumed vocabulary would differ from an uninterrupted one."""
    _, folder = trained
    copy = _copy_checkpoint(folder, tmp_path / "ck", edit)
    with pytest.raises(VocabError, match=r"ck/checkpoint.json: its merges do not match the sha256"):
        train_sgpe(corpus, checkpoint_dir=copy, resume=True, **OPTIONS)


def test_a_checkpoint_of_an_earlier_version_without_a_sha256_still_resumes(corpus, tmp_path, trained):
    whole, folder = trained
    copy = _copy_checkpoint(folder, tmp_path / "ck", lambda data: data.pop("merges_sha256", None))
    with pytest.warns(UserWarning, match=r"ck/checkpoint.json: the checkpoint has no 'merges_sha256' .*: its "
                                         r"[\d,]+ merges are taken unchecked"):
        resumed = train_sgpe(corpus, checkpoint_dir=copy, resume=True, **OPTIONS)
    resumed.save(tmp_path / "resumed" / "vocab.json")
    assert (tmp_path / "resumed" / "vocab.json").read_bytes() == whole


def test_a_checkpoint_of_a_newer_format_says_so(corpus, tmp_path, trained):
    _, folder = trained
    copy = _copy_checkpoint(
        folder, tmp_path / "ck", lambda data: data.update(format="wwho-sgpe-checkpoint/2")
    )
    with pytest.raises(
        VocabError, match="'wwho-sgpe-checkpoint/2', which this version of wwho does not read"
    ):
        train_sgpe(corpus, checkpoint_dir=copy, resume=True, **OPTIONS)


@pytest.mark.parametrize("kind", ["fifo", "folder", "link"])
def test_a_marker_that_is_no_regular_file_is_refused_and_left(tmp_path, kind):
    """A FIFO named like the marker must not hang the end of training (if removal read it), nor a
    folder of that name fail it with a bare 'Is a directory' after the model is saved."""
    folder = tmp_path / "ck"
    folder.mkdir()
    marker = folder / checkpoints.MARKER
    if kind == "fifo":
        os.mkfifo(marker)
    elif kind == "folder":
        marker.mkdir()
    else:
        (tmp_path / "created").write_text("created\n")
        marker.symlink_to(tmp_path / "created")
    with pytest.raises(VocabError, match=r"holds '.wwho-checkpoints', which is not a regular file"):
        checkpoints.claim(folder)
    checkpoints.remove(folder)  # returns at once, and touches nothing
    assert os.listdir(folder) == [checkpoints.MARKER]


def test_a_first_checkpoint_whose_marker_cannot_be_written_leaves_nothing(corpus, tmp_path):
    """Written in place, the marker on a full disk would leave the output folder, its checkpoints
    folder and an empty marker, which makes the folder look adopted: never removed afterwards."""

    def small_files():  # every file may grow to 4 bytes: the marker's write fails as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4, 4))

    out = tmp_path / "new" / "out"
    proc = subprocess.run(
        [*wwho_command(), *_train_args(corpus, out)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=small_files,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    line = one_line_error(proc)
    assert ".wwho-checkpoints: cannot write" in line
    assert os.listdir(tmp_path) == []  # not even the folders above it


def _train_args(corpus: Path, out: Path) -> list[str]:
    """A small SGPE training into ``out`` that checkpoints every 100 merges."""
    return ["train", "--kind", "sgpe", str(corpus), "--out", str(out), "--vocab-size", "1200", "--workers", "1",
            "--checkpoint-every", "100", "--quiet", "--no-verify"]


def _hold(folder: Path) -> int:
    """Lock ``folder`` as another training would (a descriptor of its own)."""
    fd = os.open(folder, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_a_checkpoint_folder_another_training_uses_is_refused(corpus, tmp_path, trained):
    """The second training must not overwrite the first one's checkpoint, nor the end of either
    delete the other's."""
    _, folder = trained
    copy = _copy_checkpoint(folder, tmp_path / "ck")
    before = (copy / checkpoints.FILE).read_bytes()
    fd = _hold(copy)
    try:
        proc = run_wwho(
            "train",
            "--kind",
            "sgpe",
            corpus,
            "--out",
            tmp_path / "out",
            "--vocab-size",
            "1200",
            "--workers",
            "1",
            "--checkpoint-dir",
            copy,
            "--quiet",
            "--no-verify",
        )
        line = one_line_error(proc)
        assert "ck: another wwho training is using it" in line
        checkpoints.remove(copy)  # not this process's: left alone
    finally:
        os.close(fd)
    assert (copy / checkpoints.FILE).read_bytes() == before
    assert not (tmp_path / "out").exists()


def test_a_second_training_into_the_same_output_is_refused(corpus, tmp_path):
    out = tmp_path / "out"
    (out / "checkpoints").mkdir(parents=True)
    (out / "mine.txt").write_text("mine")
    fd = _hold(out / "checkpoints")  # the first training, still counting (no checkpoint yet)
    try:
        proc = run_wwho(*_train_args(corpus, out))
        assert "another wwho training is using it" in one_line_error(proc)
    finally:
        os.close(fd)
    assert sorted(os.listdir(out)) == ["checkpoints", "mine.txt"]


def test_an_output_written_while_training_is_not_replaced_without_force(
    corpus, tmp_path, monkeypatch, capsys
):
    """The output is checked after training too: one written meanwhile (another run with its own
    --checkpoint-dir) is not replaced without --force."""
    from wwho.cli import main, train_sgpe

    real = train_sgpe._train

    def train_while_another_saves(*args):
        tok = real(*args)
        (out / "vocab.json").write_text("theirs")
        return tok

    monkeypatch.setattr(train_sgpe, "_train", train_while_another_saves)
    out = tmp_path / "out"
    argv = _train_args(corpus, out)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "already holds vocab.json" in err and "written while this training ran" in err
    assert "--resume --force" in err and (out / "checkpoints" / "checkpoint.json").exists()
    assert (out / "vocab.json").read_text() == "theirs"
    monkeypatch.setattr(train_sgpe, "_train", real)
    assert main([*argv, "--resume", "--force"]) == 0  # saved from the checkpoint kept for it
    assert (out / "vocab.json").read_text() != "theirs" and not (out / "checkpoints").exists()


def test_a_byte_level_output_written_while_training_is_not_replaced_without_force(
    corpus, tmp_path, monkeypatch, capsys
):
    """As for SGPE: another run's save to the same --out while this one trained is kept."""
    from wwho.bytelevel import ByteBPE
    from wwho.cli import main

    real = ByteBPE.train.__func__

    def train_while_another_saves(cls, *args, **kwargs):
        tok = real(cls, *args, **kwargs)
        real(cls, *args, **{**kwargs, "vocab_size": 260}).save(out)  # the other run's
        return tok

    monkeypatch.setattr(ByteBPE, "train", classmethod(train_while_another_saves))
    out = tmp_path / "out"
    argv = ["train", "--kind", "bytelevel", "--quiet", "--vocab-size", "300", "-o", str(out), str(corpus)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "already holds ranks.tiktoken" in err and "written while this training ran" in err
    assert ByteBPE.load(out).vocab_size == 260
    monkeypatch.setattr(ByteBPE, "train", classmethod(real))
    assert main([*argv, "--force"]) == 0
    assert ByteBPE.load(out).vocab_size == 300


@pytest.mark.parametrize("value", [b"ck", 5, ""])
def test_a_checkpoint_dir_of_the_wrong_type_is_one_clear_error(corpus, tmp_path, monkeypatch, value):
    """Bytes and numbers do not fail deep inside pathlib with a TypeError, and "" does not keep
    checkpoints in the working directory."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(VocabError, match="checkpoint_dir"):
        train_sgpe(corpus, checkpoint_dir=value, **OPTIONS)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kind, stray", [("sgpe", "meta_config.json"), ("bytelevel", "vocab.json")])
def test_training_into_a_folder_with_another_kinds_file_is_refused_first(corpus, tmp_path, kind, stray):
    """Training must not exit 0 into a folder holding a file no manifest lists that decides a saved
    folder's kind, where the model it writes could not be loaded."""
    out = tmp_path / "out"
    out.mkdir()
    (out / stray).write_text("yours")
    for force in ([], ["--force"]):  # the file is not wwho's to remove either way
        line = one_line_error(run_wwho("train", "--kind", kind, "--vocab-size", "600", "--quiet", "-o", out,
                                       *force, corpus))
        assert f"{stray}: this file, which no wwho save there wrote" in line, line
        assert os.listdir(out) == [stray] and (out / stray).read_text() == "yours"

