"""SGPE checkpoints (``sgpe/checkpoints.py``): wwho never deletes a checkpoint folder it did not
create, refuses a symlinked or foreign one before training, says where checkpoints go, and reports
every kind of corrupted checkpoint in one line naming the file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import one_line_error, run_wwho

from wwho.errors import VocabError
from wwho.sgpe import train_sgpe

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("ck") / "c.txt"
    path.write_text("\n".join(SAMPLE.read_text(encoding="utf-8").splitlines()[:800]), encoding="utf-8")
    return path


def _train(corpus, out, *extra):
    return run_wwho("train", "--kind", "sgpe", corpus, "--out", out, "--vocab-size", "1500", "--workers", "1",
                    "--checkpoint-every", "100", "--no-verify", *extra)


def test_an_existing_checkpoints_folder_of_yours_is_refused_and_kept(corpus, tmp_path):
    out = tmp_path / "out"
    (out / "checkpoints").mkdir(parents=True)
    (out / "checkpoints" / "important.txt").write_text("mine")
    line = one_line_error(_train(corpus, out, "--quiet"))
    assert "checkpoints: holds files wwho did not write (e.g. 'important.txt')" in line
    assert (out / "checkpoints" / "important.txt").read_text() == "mine"
    assert not (out / "vocab.json").exists()  # refused before training, not after


@pytest.mark.parametrize("every", ["0", "5000"])
def test_a_checkpoints_folder_of_yours_is_left_alone_where_none_is_written(corpus, tmp_path, every):
    # --checkpoint-every 0, or more merges than the run makes: no checkpoint is written, so a model
    # folder's own checkpoints/ (a common name) is no reason to refuse the training.
    out = tmp_path / "out"
    (out / "checkpoints").mkdir(parents=True)
    (out / "checkpoints" / "model.pt").write_text("mine")
    result = run_wwho("train", "--kind", "sgpe", corpus, "--out", out, "--vocab-size", "1500", "--workers", "1",
                      "--checkpoint-every", every, "--no-verify", "--quiet")
    assert result.returncode == 0, result.stderr
    assert (out / "vocab.json").exists()
    assert os.listdir(out / "checkpoints") == ["model.pt"]
    assert (out / "checkpoints" / "model.pt").read_text() == "mine"


@pytest.mark.parametrize("where", ["default", "given"])
def test_a_file_of_yours_named_checkpoint_json_is_refused_and_kept(corpus, tmp_path, where):
    # Its name alone made it wwho's: overwritten by the first checkpoint, deleted at the end.
    folder = tmp_path / "out" / "checkpoints" if where == "default" else tmp_path / "ck"
    folder.mkdir(parents=True)
    (folder / "checkpoint.json").write_text("my precious notes")
    extra = ("--checkpoint-dir", folder) if where == "given" else ()
    line = one_line_error(_train(corpus, tmp_path / "out", "--quiet", *extra))
    assert "holds 'checkpoint.json' without wwho's marker .wwho-checkpoints" in line
    assert (folder / "checkpoint.json").read_text() == "my precious notes"


def test_a_symlinked_checkpoints_folder_is_refused_and_its_target_untouched(corpus, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "data.bin").write_bytes(b"precious")
    os.symlink(elsewhere, out / "checkpoints")
    line = one_line_error(_train(corpus, out, "--quiet"))
    assert "checkpoints: is a symbolic link" in line
    assert sorted(os.listdir(elsewhere)) == ["data.bin"] and (out / "checkpoints").is_symlink()


def test_checkpoints_go_where_help_and_training_say_and_only_wwhos_files_are_removed(corpus, tmp_path):
    help_text = run_wwho("train", "--kind", "sgpe", "--help").stdout
    assert "OUT/checkpoints" in " ".join(help_text.split()) and "removed after success" in help_text
    out = tmp_path / "out"
    proc = _train(corpus, out)
    assert proc.returncode == 0, proc.stderr
    assert f"checkpoints: {out / 'checkpoints' / 'checkpoint.json'}" in proc.stderr
    assert (out / "vocab.json").exists() and not (out / "checkpoints").exists()
    kept = tmp_path / "kept"
    proc = _train(corpus, tmp_path / "out2", "--checkpoint-dir", kept, "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(kept)) == [".wwho-checkpoints", "checkpoint.json"]  # a given folder is kept


def test_remove_deletes_only_wwhos_files(tmp_path):
    from wwho.sgpe import checkpoints

    folder = checkpoints.claim(tmp_path / "ck")
    assert not folder.exists()  # created with the first checkpoint, not before
    checkpoints.save(folder, merges=[("a", "b")], fingerprint="f", elapsed=0)
    (folder / "late.txt").write_text("someone's")  # appeared during training
    checkpoints.remove(folder)
    assert sorted(os.listdir(folder)) == ["late.txt"]
    checkpoints.remove(folder)
    yours = tmp_path / "yours"
    yours.mkdir()  # an empty folder of yours, given as --checkpoint-dir
    checkpoints.save(checkpoints.claim(yours), merges=[], fingerprint="f", elapsed=0)
    checkpoints.remove(yours)
    assert yours.is_dir() and os.listdir(yours) == []  # emptied of wwho's files, but not removed
    unclaimed = tmp_path / "theirs"
    unclaimed.mkdir()
    (unclaimed / "checkpoint.json").write_text("{}")
    checkpoints.remove(unclaimed)  # no marker: not wwho's folder
    assert (unclaimed / "checkpoint.json").exists()


def _corrupt(kind: str, good: dict) -> bytes:
    data = dict(good)
    if kind == "binary":
        return b"\x89PNG\r\n\x1a\n\xff\xfe"
    if kind == "list":
        return b"[1, 2, 3]"
    if kind == "no_merges":
        data.pop("merges")
    elif kind == "merge_not_pair":
        data["merges"] = [["a"]] + data["merges"]
    elif kind == "merge_numbers":
        data["merges"] = [[1, 2]]
    elif kind == "step":
        data["step"] = "many"
    elif kind == "unknown_symbol":
        data["merges"] = [["\u0dbd\u0d82\u0d9a\u0dcf", "zzz"]] + data["merges"]
        data["step"] += 1
    elif kind == "fingerprint":
        data["fingerprint"] = {"x": 1}
    elif kind == "truncated":
        return json.dumps(data).encode()[:-40]
    elif kind == "deep":
        return b'{"merges": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    return json.dumps(data).encode()


def _checkpoint_folder(path: Path) -> Path:
    """A folder as wwho makes it for checkpoints (with its marker file)."""
    path.mkdir(parents=True)
    (path / ".wwho-checkpoints").touch()
    return path


KINDS = ["binary", "list", "no_merges", "merge_not_pair", "merge_numbers", "step", "unknown_symbol", "fingerprint",
         "truncated", "deep"]


@pytest.fixture(scope="module")
def good_checkpoint(corpus, tmp_path_factory):
    folder = tmp_path_factory.mktemp("good")
    train_sgpe(corpus, vocab_size=1500, progress=False, workers=1, checkpoint_dir=folder, checkpoint_every=100)
    return json.loads((folder / "checkpoint.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("kind", KINDS)
def test_a_corrupted_checkpoint_is_one_clear_error(corpus, tmp_path, good_checkpoint, kind):
    folder = _checkpoint_folder(tmp_path / "ck")
    (folder / "checkpoint.json").write_bytes(_corrupt(kind, good_checkpoint))
    with pytest.raises(VocabError, match=r"ck/checkpoint.json: "):
        train_sgpe(corpus, vocab_size=1500, progress=False, workers=1, checkpoint_dir=folder, resume=True)


def test_a_step_of_the_wrong_type_is_said_so(corpus, tmp_path, good_checkpoint):
    """A step of "5178" against 5,178 merges is a step of the wrong type, not a count that does not match."""
    folder = _checkpoint_folder(tmp_path / "ck")
    data = {**good_checkpoint, "step": str(good_checkpoint["step"])}
    (folder / "checkpoint.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(VocabError, match=r"'step' must be a whole number, not '\d+' \(str\)"):
        train_sgpe(corpus, vocab_size=1500, progress=False, workers=1, checkpoint_dir=folder, resume=True)


@pytest.mark.parametrize("kind", ["truncated", "binary"])
def test_a_damaged_checkpoint_says_what_and_to_start_over(corpus, tmp_path, good_checkpoint, kind):
    """One cut short says that it is damaged and what to do, not only where its JSON stopped (or that
    it was not UTF-8)."""
    words = "damaged, not the JSON wwho wrote"
    folder = _checkpoint_folder(tmp_path / "ck")
    (folder / "checkpoint.json").write_bytes(_corrupt(kind, good_checkpoint))
    with pytest.raises(VocabError) as caught:
        train_sgpe(corpus, vocab_size=1500, progress=False, workers=1, checkpoint_dir=folder, resume=True)
    assert words in str(caught.value) and str(caught.value).endswith("to start over")


@pytest.mark.parametrize("kind", ["binary", "merge_not_pair", "unknown_symbol", "deep"])
def test_a_corrupted_checkpoint_from_the_cli(corpus, tmp_path, good_checkpoint, kind):
    out = tmp_path / "out"
    folder = _checkpoint_folder(out / "checkpoints")
    (folder / "checkpoint.json").write_bytes(_corrupt(kind, good_checkpoint))
    line = one_line_error(_train(corpus, out, "--resume", "--quiet"))
    assert "checkpoint.json: " in line


def test_a_first_checkpoint_that_cannot_be_written_leaves_no_folder(tmp_path, monkeypatch):
    """A full disk at the first checkpoint must not leave a checkpoints folder holding only wwho's
    marker inside the old model's directory."""
    from wwho.errors import WriteError
    from wwho.sgpe import checkpoints

    def full_disk(path, *args, **kwargs):
        raise WriteError(f"{path}: cannot write: No space left on device")

    monkeypatch.setattr(checkpoints, "write_json", full_disk)
    model = tmp_path / "model"
    model.mkdir()
    (model / "vocab.json").write_text("{}")  # the old model, untouched
    with pytest.raises(WriteError, match="No space left"):
        checkpoints.save(model / "checkpoints", merges=[("a", "b")], fingerprint="f", elapsed=0.0)
    assert sorted(p.name for p in model.iterdir()) == ["vocab.json"]


def test_checkpoints_in_the_output_directory_are_refused_at_once(tmp_path):
    """Taken by the first run, the folder would be refused by every later run (--resume too) for the
    model's own files."""
    from cli_run import one_line_error, wwho

    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව\n" * 50, encoding="utf-8")
    out = tmp_path / "out"
    line = one_line_error(wwho("train", "--kind", "sgpe", "--vocab-size", "600", "--checkpoint-dir", out, "-o", out,
                               corpus))
    assert "--checkpoint-dir must be a folder of its own" in line and not out.exists()


def test_resume_without_a_checkpoint_says_it_starts_over(corpus, tmp_path):
    # A mistyped --checkpoint-dir redid the whole training without a word.
    done = _train(corpus, tmp_path / "out", "--quiet", "--resume", "--checkpoint-dir", tmp_path / "typo")
    assert done.returncode == 0, done.stderr
    assert "wwho: warning: resume: no checkpoint in" in done.stderr and "training from the start" in done.stderr


def test_checkpoints_every_merge_cost_linear_work_and_resume_exactly(corpus, tmp_path, monkeypatch):
    # Each checkpoint holds every merge so far: written after every merge, as asked, a training of
    # M merges would write M * M / 2 of them (8k Sinhala tokens: seconds became a minute). Past ten
    # intervals they are spaced by a tenth of the merges so far; the first ten are as asked.
    from wwho.sgpe import checkpoints

    real_save = checkpoints.save
    sizes: list[int] = []

    def counting_save(directory, *, merges, **kwargs):
        sizes.append(len(merges))
        real_save(directory, merges=merges, **kwargs)

    monkeypatch.setattr(checkpoints, "save", counting_save)
    options = dict(vocab_size=1500, progress=False, workers=1, checkpoint_dir=tmp_path / "ck", checkpoint_every=1)
    vocab = train_sgpe(corpus, **options)
    total = len(vocab.merges)
    assert total > 400  # enough merges for the spacing to matter
    assert sizes[:10] == list(range(1, 11))
    for before, after in zip(sizes[:-2], sizes[1:-1]):  # the last one is the end's, whenever it comes
        assert after - before == max(1, before // 10)
    # Steps of a tenth make the spaced checkpoints a geometric series, at most about 11 times the
    # last one (floors make the steps a little shorter), and the end's checkpoint holds every merge.
    assert sum(sizes) <= 13 * total
    # A checkpoint written late in the spacing resumes to the same vocabulary.
    middle = sizes[len(sizes) // 2]

    def save_then_stop(directory, *, merges, **kwargs):
        real_save(directory, merges=merges, **kwargs)
        if len(merges) == middle:
            raise KeyboardInterrupt

    monkeypatch.setattr(checkpoints, "save", save_then_stop)
    with pytest.raises(KeyboardInterrupt):
        train_sgpe(corpus, **{**options, "checkpoint_dir": tmp_path / "ck2"})
    saved = json.loads((tmp_path / "ck2" / checkpoints.FILE).read_text(encoding="utf-8"))
    assert len(saved["merges"]) == middle
    monkeypatch.setattr(checkpoints, "save", real_save)
    assert train_sgpe(corpus, **{**options, "checkpoint_dir": tmp_path / "ck2"}, resume=True) == vocab


def test_a_run_writes_only_the_checkpoints_it_announces(corpus, tmp_path):
    """A Ctrl-C after the merges must not leave an unannounced OUT/checkpoints: --checkpoint-every 0
    writes none; a short run (fewer merges than it) writes none into OUT/checkpoints, and with
    --checkpoint-dir the one it writes when the merges end is announced."""
    kept = tmp_path / "kept"

    def train(out, *extra):
        return run_wwho("train", "--kind", "sgpe", corpus, "--out", out, "--vocab-size", "1500", "--workers", "1",
                        "--no-verify", *extra)

    proc = train(tmp_path / "out", "--checkpoint-dir", kept, "--checkpoint-every", "0")
    assert proc.returncode == 0, proc.stderr
    assert not kept.exists() and "checkpoints:" not in proc.stderr
    proc = train(tmp_path / "out2", "--checkpoint-dir", kept, "--checkpoint-every", "1000000")
    assert proc.returncode == 0, proc.stderr
    assert f"checkpoints: {kept / 'checkpoint.json'} when the merges end (kept;" in proc.stderr
    assert (kept / "checkpoint.json").exists()
    proc = train(tmp_path / "out3", "--checkpoint-every", "1000000")
    assert proc.returncode == 0, proc.stderr
    assert "checkpoints:" not in proc.stderr and not (tmp_path / "out3" / "checkpoints").exists()


def test_a_checkpoint_directory_that_cannot_be_written_is_refused_before_the_corpus_is_read(tmp_path, monkeypatch):
    """Not at the first checkpoint, after the counting and the merges (a read-only mount, say).
    os.access says what such a mount says."""
    from wwho.sgpe import checkpoints

    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(tmp_path) else real(p, mode, **kw))
    with pytest.raises(VocabError, match=r"cannot be written \(.* is read-only or not writable\)"):
        checkpoints.claim(tmp_path / "new" / "ck")
    assert not (tmp_path / "new").exists()


def test_a_run_without_resume_does_not_replace_an_earlier_checkpoint(corpus, tmp_path):
    """A training started without --resume must not replace an earlier run's checkpoint (a killed
    run's in OUT/checkpoints, or one kept with --checkpoint-dir) in silence, or a forgotten flag loses
    that run's work. It is refused, naming both ways on; --force starts over."""
    kept = tmp_path / "kept"
    proc = _train(corpus, tmp_path / "out", "--checkpoint-dir", kept)
    assert proc.returncode == 0, proc.stderr
    before = (kept / "checkpoint.json").read_bytes()
    line = one_line_error(_train(corpus, tmp_path / "out2", "--checkpoint-dir", kept))
    assert f"{kept / 'checkpoint.json'}: an earlier training's checkpoint is there: pass --resume" in line, line
    assert (kept / "checkpoint.json").read_bytes() == before and not (tmp_path / "out2").exists()
    resumed = _train(corpus, tmp_path / "out3", "--checkpoint-dir", kept, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert (tmp_path / "out3" / "vocab.json").read_bytes() == (tmp_path / "out" / "vocab.json").read_bytes()
    assert _train(corpus, tmp_path / "out4", "--checkpoint-dir", kept, "--force").returncode == 0


def test_an_output_that_is_a_kept_checkpoint_folder_is_refused(corpus, tmp_path):
    """Accepted, ``-o`` naming a kept --checkpoint-dir of an earlier run would put the model into it,
    and every later ``--resume --checkpoint-dir`` of it would be refused as "holds files wwho did not
    write". Refused (SGPE and byte-level, the folder and inside it), and the checkpoint still resumes."""
    kept = tmp_path / "kept"
    assert _train(corpus, tmp_path / "out", "--quiet", "--checkpoint-dir", kept).returncode == 0
    before = sorted(p.name for p in kept.iterdir())
    for out in (kept, kept / "model"):
        line = one_line_error(_train(corpus, out, "--quiet", "--force"))
        assert f"--out {out} " in line and "a folder of a training's checkpoints (wwho's .wwho-checkpoints" in line
        assert f"--resume --checkpoint-dir {kept}" in line, line
    line = one_line_error(run_wwho("train", "--kind", "bytelevel", corpus, "--out", kept, "--vocab-size", "300",
                                   "--quiet"))
    assert f"--out {kept} is a folder of a training's checkpoints" in line
    line = one_line_error(run_wwho("train", "--kind", "binary", corpus, "-o", kept / "bin.json", "--vocab-size",
                                   "1000", "--quiet"))
    assert f"-o/--output {kept / 'bin.json'} is inside {kept}, a folder of a training's checkpoints" in line
    assert sorted(p.name for p in kept.iterdir()) == before
    resumed = _train(corpus, tmp_path / "out2", "--quiet", "--resume", "--checkpoint-dir", kept)
    assert resumed.returncode == 0, resumed.stderr
    assert (tmp_path / "out2" / "vocab.json").read_bytes() == (tmp_path / "out" / "vocab.json").read_bytes()


def test_an_output_inside_the_checkpoint_dir_of_the_same_run_is_refused(corpus, tmp_path):
    ck = tmp_path / "ck"
    line = one_line_error(_train(corpus, ck / "model", "--quiet", "--checkpoint-dir", ck))
    assert "--checkpoint-dir must be a folder of its own, not the output directory" in line
    assert "or a folder above it" in line and not ck.exists()


def test_the_api_does_not_replace_an_earlier_checkpoint_without_being_told(corpus, tmp_path):
    """``train_from_iterator(checkpoint_dir=X)`` (and ``train``) without ``resume`` does not replace
    the checkpoint in X in silence, as ``wwho train`` refuses it without --resume or --force: a
    VocabError before any work; ``overwrite_checkpoint=True`` starts over, ``resume=True``
    continues."""
    from wwho.sgpe import SGPETokenizer

    kept = tmp_path / "kept"
    texts = corpus.read_text(encoding="utf-8").splitlines()
    options = dict(vocab_size=1500, progress=False, workers=1, checkpoint_dir=kept, checkpoint_every=100)
    first = SGPETokenizer.train_from_iterator(texts, **options)
    before = (kept / "checkpoint.json").read_bytes()
    for train in (lambda **kw: SGPETokenizer.train_from_iterator(iter(["never read"]), **kw),
                  lambda **kw: train_sgpe(tmp_path / "missing.txt", **kw)):
        with pytest.raises(VocabError, match=r"checkpoint\.json: an earlier training's checkpoint is there: pass "
                                             r"resume=True .* or overwrite_checkpoint=True to start over"):
            train(**options)
    assert (kept / "checkpoint.json").read_bytes() == before
    with pytest.raises(VocabError, match="overwrite_checkpoint must be True or False"):
        SGPETokenizer.train_from_iterator(texts, **options, overwrite_checkpoint="yes")
    assert SGPETokenizer.train_from_iterator(texts, **options, resume=True).file.to_bytes() == first.file.to_bytes()
    other = SGPETokenizer.train_from_iterator(texts[:400], **options, overwrite_checkpoint=True)
    assert (kept / "checkpoint.json").read_bytes() != before
    assert SGPETokenizer.train_from_iterator(texts[:400], **options, resume=True).file.to_bytes() == \
        other.file.to_bytes()


def test_a_training_on_another_thread_cannot_share_the_directory(tmp_path):
    """Two trainings on two threads of one process, given one checkpoint_dir, are not both let in
    (the directory's lock belongs to the process), where they would overwrite each other's
    checkpoints; two processes are refused too. A thread's own nested use still goes in."""
    import threading

    from wwho.sgpe import checkpoints

    directory = tmp_path / "ckpt"
    directory.mkdir()
    inside, leave, outcome = threading.Event(), threading.Event(), {}

    def first():
        with checkpoints.using(directory), checkpoints.using(directory):  # nested on one thread: fine
            inside.set()
            leave.wait(30)

    def second():
        try:
            with checkpoints.using(directory):
                outcome["second"] = "in"
        except VocabError as exc:
            outcome["second"] = str(exc)

    holder = threading.Thread(target=first)
    holder.start()
    assert inside.wait(30)
    other = threading.Thread(target=second)
    other.start()
    other.join(30)
    leave.set()
    holder.join(30)
    assert "another wwho training (on another thread of this process) is using it" in outcome["second"]
    other = threading.Thread(target=second)  # once the first has left, the directory is free
    other.start()
    other.join(30)
    assert outcome["second"] == "in"


def test_an_output_inside_the_corpus_folder_is_not_warned_of_by_the_export_check(tmp_path):
    """With --out inside the corpus folder, the export check after training reads the corpus again
    and must not warn of the checkpoint folder the same run has written there since."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "c.txt").write_text("\n".join(SAMPLE.read_text(encoding="utf-8").splitlines()[:800]), encoding="utf-8")
    proc = run_wwho("train", "--kind", "sgpe", folder, "--out", folder / "out", "--vocab-size", "1500",
                    "--workers", "1", "--checkpoint-every", "100", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr, proc.stderr
    (folder / "out" / "checkpoints").mkdir(exist_ok=True)
    (folder / "out" / "checkpoints" / ".wwho-checkpoints").write_text("created\n", encoding="utf-8")
    (folder / "out" / "checkpoints" / "checkpoint.json").write_text("{}", encoding="utf-8")
    again = run_wwho("train", "--kind", "sgpe", folder, "--out", tmp_path / "other", "--vocab-size", "1500",
                     "--workers", "1", "--quiet")
    assert again.returncode == 0, again.stderr  # a first reading still says it, once each
    assert again.stderr.count("the files of a wwho training checkpoint there are not read as corpus") == 1
    assert again.stderr.count("the files of a tokenizer wwho saved there") == 1
