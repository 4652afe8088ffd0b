"""Directory saves are all or nothing: a real saving process killed (SIGKILL) at every step, and at
random instants, always leaves the old model or the new one, loadable, with wwho's ids equal to
Hugging Face's; your own files survive; the next save leaves no temporary file; files of different
saves are reported at load.
"""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest
from conftest import O200K_FILE

from wwho.errors import VocabError
from wwho.sgpe import SGPETokenizer, train_sgpe

tokenizers = pytest.importorskip("tokenizers")

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
MANIFEST = "wwho-manifest.json"
TEXTS = ["ශ්‍රී ලංකාව ප්‍රජාතන්ත්‍රවාදී සමාජවාදී ජනරජය", "Hello ලෝකය 2024!", "ක්‍රිකට් තරඟය  \n\tනිමා විය"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Two different SGPE models (A and B), each saved once in a directory of its own."""
    root = tmp_path_factory.mktemp("models")
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    out = {}
    for name, size, part in (("A", 900, lines[:1500]), ("B", 1400, lines[1500:3500])):
        corpus = root / f"{name}.txt"
        corpus.write_text("\n".join(part), encoding="utf-8")
        tok = SGPETokenizer(train_sgpe(corpus, vocab_size=size, progress=False, workers=1))
        tok.save(root / name)
        out[name] = root / name
    return out


#: Loads models A and B once, then for each case: saves A into a fresh target with your own files
#: beside it, forks, and the child saves B into it and is SIGKILLed: by the save's own hook after
#: step N (``steps``), or by the parent after a random delay while it saves in a loop (``random``).
KILLER = textwrap.dedent("""
    import json, os, random, signal, sys, time
    from pathlib import Path
    from wwho import load_tokenizer
    mode, source_a, source_b, work, count = sys.argv[1:6]
    a, b = load_tokenizer(source_a), load_tokenizer(source_b)
    extra = {"hf": True} if (Path(source_a) / "bytelevel.json").exists() else {}
    rng = random.Random(7)
    for case in range(1, int(count) + 1):
        target = Path(work) / f"case{case}" / "out"
        a.save(target, **extra)
        (target / "notes.txt").write_text("mine", encoding="utf-8")
        (target / "data").mkdir()
        (target / "data" / "corpus.txt").write_text("corpus", encoding="utf-8")
        pid = os.fork()
        if pid == 0:
            if mode == "steps":
                os.environ["WWHO_CRASH_AFTER"] = str(case)
                b.save(target, **extra)
            else:
                while True:
                    b.save(target, **extra)
                    a.save(target, **extra)
            os._exit(0)
        if mode == "random":
            time.sleep(rng.uniform(0.0, 0.3))
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        print(json.dumps({"target": str(target), "killed": killed}), flush=True)
        if not killed:
            break
""")


def _run_killer(mode: str, a: Path, b: Path, work: Path, count: int, env: dict | None = None) -> list[dict]:
    import json

    env = dict(os.environ, TOKENIZERS_PARALLELISM="false", **(env or {}))
    env.pop("WWHO_CRASH_AFTER", None)
    proc = subprocess.run([sys.executable, "-c", KILLER, mode, str(a), str(b), str(work), str(count)],
                          capture_output=True, text=True, timeout=600, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _which(target: Path, models: dict[str, Path], names: tuple[str, ...]) -> str:
    """Which model's files ``target`` holds; asserts they are all of that one model."""
    owners = set(models)
    for name in names:  # some files are the same in both models (special_tokens_map.json)
        data = (target / name).read_bytes()
        owners &= {k for k, src in models.items() if (src / name).read_bytes() == data}
    assert len(owners) == 1, (owners, sorted(os.listdir(target)))
    return owners.pop()


def _check_loads_and_agrees(target: Path) -> None:
    tok = SGPETokenizer.load(target)  # checks the manifest too
    hf = tokenizers.Tokenizer.from_file(str(target / "tokenizer.json"))
    for text in TEXTS:
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text)


def _check_user_files(target: Path) -> None:
    assert (target / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (target / "data" / "corpus.txt").read_text(encoding="utf-8") == "corpus"


def _litter(parent: Path) -> list[str]:
    return [str(p.relative_to(parent)) for p in parent.rglob(".wwho*")]


def _check_after_kill(target: Path, models: dict[str, Path], names: tuple[str, ...]) -> str:
    held = _which(target, models, names)  # the model's files all of one save ...
    assert _which(target, models, (*names, MANIFEST)) == held  # ... and the manifest with them
    assert (target / "notes.txt").read_text(encoding="utf-8") == "mine"  # a file is never away, even now
    # A subdirectory may sit beside the directory until the next save puts it back:
    assert (target / "data").is_dir() or any(p.name == "data" for p in target.parent.glob(".wwho-tmp-out.*/*"))
    return held


SGPE_FILES = ("vocab.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def test_sgpe_save_killed_at_every_step_leaves_the_old_or_the_new_model(models, tmp_path):
    cases = _run_killer("steps", models["A"], models["B"], tmp_path, 100)
    assert [c["killed"] for c in cases] == [True] * (len(cases) - 1) + [False]  # killed at every step, then done
    assert len(cases) > 10  # manifest, files, links, exchange, clean-up: each step was a kill point
    seen = []
    for case in cases:
        target = Path(case["target"])
        seen.append(_check_after_kill(target, models, SGPE_FILES))
        _check_loads_and_agrees(target)
        SGPETokenizer.load(models["B"]).save(target)  # the next save
        _check_user_files(target)
        assert _litter(target.parent) == []
        assert _which(target, models, SGPE_FILES) == "B"
    assert seen[0] == "A" and seen[-1] == "B" and set(seen) == {"A", "B"}


def test_sgpe_save_killed_at_random_instants(models, tmp_path):
    """No hook: a child saving B and A in a loop, killed by the clock (40 kills)."""
    cases = _run_killer("random", models["A"], models["B"], tmp_path, 40)
    assert len(cases) == 40 and all(c["killed"] for c in cases)
    seen = set()
    for case in cases:
        target = Path(case["target"])
        seen.add(_check_after_kill(target, models, SGPE_FILES))
        _check_loads_and_agrees(target)
        SGPETokenizer.load(models["B"]).save(target)
        _check_user_files(target)
        assert _litter(target.parent) == []
    assert seen == {"A", "B"}


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_meta_save_killed_at_every_step(models, tmp_path):
    from wwho.meta import MetaTokenizer

    sources = {}
    for name in ("A", "B"):
        sources[name] = tmp_path / f"meta{name}"
        MetaTokenizer(SGPETokenizer.load(models[name]), "o200k_base", tiktoken_file=O200K_FILE).save(sources[name])
    names = ("vocab.json", "meta_config.json", "tokenizer_meta.json")
    cases = _run_killer("steps", sources["A"], sources["B"], tmp_path / "work", 100,
                        env={"WWHO_TIKTOKEN_FILE": str(O200K_FILE)})
    assert len(cases) > 8 and cases[-1]["killed"] is False
    seen = set()
    for case in cases:
        target = Path(case["target"])
        seen.add(_check_after_kill(target, sources, names))
        MetaTokenizer.load(target, tiktoken_file=O200K_FILE)
    assert seen == {"A", "B"}


def test_bytelevel_save_killed_at_every_step(tmp_path):
    from wwho.bytelevel import ByteBPE

    corpus = tmp_path / "c.txt"
    corpus.write_text(SAMPLE.read_text(encoding="utf-8")[:200_000], encoding="utf-8")
    sources = {}
    for name, size in (("A", 400), ("B", 600)):
        sources[name] = tmp_path / f"bl{name}"
        ByteBPE.train(corpus, vocab_size=size, workers=1, progress=False).save(sources[name], hf=True)
    names = ("ranks.tiktoken", "merges.txt", "bytelevel.json", "tokenizer.json")
    cases = _run_killer("steps", sources["A"], sources["B"], tmp_path / "work", 100)
    assert len(cases) > 8 and cases[-1]["killed"] is False
    seen = set()
    for case in cases:
        target = Path(case["target"])
        seen.add(_check_after_kill(target, sources, names))
        tok = ByteBPE.load(target)
        hf = tokenizers.Tokenizer.from_file(str(target / "tokenizer.json"))
        assert all(hf.encode(t).ids == tok.encode(t) for t in TEXTS)
    assert seen == {"A", "B"}


# --- the rules, one by one --------------------------------------------------------------------


def test_a_save_keeps_your_files_and_drops_the_old_models_files(tmp_path):
    from wwho.savedir import save_files

    target = tmp_path / "out"
    save_files(target, {"a.json": b"1", "b.json": b"2"}, kind="x")
    (target / "mine.txt").write_text("keep")
    (target / "sub").mkdir()
    os.symlink("/nonexistent", target / "link")
    (target / "b.json").write_bytes(b"edited")  # changed by you after the save: now yours
    save_files(target, {"a.json": b"11", "c.json": b"3"}, kind="x")
    assert sorted(os.listdir(target)) == ["a.json", "b.json", "c.json", "link", "mine.txt", "sub", MANIFEST]
    assert (target / "b.json").read_bytes() == b"edited" and os.readlink(target / "link") == "/nonexistent"
    save_files(target, {"a.json": b"111"}, kind="x")
    assert sorted(os.listdir(target)) == ["a.json", "b.json", "link", "mine.txt", "sub", MANIFEST]  # c.json: wwho's
    assert _litter(tmp_path) == []


@pytest.mark.parametrize("name", [".wwho-save", ".wwho-save.next"])
def test_a_file_of_yours_at_a_name_the_save_uses_for_itself_is_refused_not_removed(tmp_path, name):
    """The save does not remove a user's ``.wwho-save`` when it is done, as if it were its own."""
    from wwho.errors import WriteError
    from wwho.savedir import check_target, save_files

    target = tmp_path / "out"
    target.mkdir()
    (target / name).write_text("my notes")
    with pytest.raises(WriteError, match=re.escape(name) + ": a save into .* no wwho save's: move it away"):
        check_target(target)
    with pytest.raises(WriteError, match="no wwho save's"):
        save_files(target, {"a.json": b"1"}, kind="x")
    assert os.listdir(target) == [name] and (target / name).read_text() == "my notes"
    assert os.listdir(tmp_path) == ["out"]


def test_a_file_of_yours_named_like_a_temporary_file_stays_in_the_directory(tmp_path):
    """An entry named like a wwho temporary file of a live process (pid 1) is linked into the new
    directory, not left to end in a hidden sibling, "left alone"."""
    from wwho.savedir import save_files

    target = tmp_path / "out"
    target.mkdir()
    (target / ".wwho-tmp-notes.1.2.tmp").write_text("mine")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save_files(target, {"a.json": b"1"}, kind="x")
    assert (target / ".wwho-tmp-notes.1.2.tmp").read_text() == "mine"
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_a_file_of_yours_that_would_decide_the_directorys_kind_is_refused_not_left(tmp_path):
    """A ``meta_config.json`` that no manifest lists (yours, or an old save's whose manifest you
    removed) beside a new SGPE save would make it load as a meta tokenizer and be refused ("not listed
    in wwho-manifest.json"), after the save had said it wrote the model. It is refused before anything
    is written, and left where it is."""
    from wwho.errors import WriteError
    from wwho.savedir import save_files

    for stray, writes in (("meta_config.json", "vocab.json"), ("vocab.json", "bytelevel.json"),
                          ("bytelevel.json", "tokenizer.json")):
        target = tmp_path / stray.split(".")[0]
        target.mkdir()
        (target / stray).write_text("yours")
        with pytest.raises(WriteError, match=f"{stray}: this file, which no wwho save there wrote, would make"):
            save_files(target, {writes: b"{}"}, kind="x")
        assert os.listdir(target) == [stray] and (target / stray).read_text() == "yours"
    # one the loader looks for after the save's own (a bytelevel.json beside vocab.json) is never read
    target = tmp_path / "after"
    target.mkdir()
    (target / "bytelevel.json").write_text("yours")
    save_files(target, {"vocab.json": b"{}"}, kind="sgpe")
    assert sorted(os.listdir(target)) == ["bytelevel.json", "vocab.json", MANIFEST]
    # an earlier save's file, which its manifest lists, is the old model's: replaced, as before
    target = tmp_path / "old"
    save_files(target, {"meta_config.json": b"{}", "vocab.json": b"1"}, kind="meta")
    save_files(target, {"vocab.json": b"2"}, kind="sgpe")
    assert sorted(os.listdir(target)) == ["vocab.json", MANIFEST]
    assert _litter(tmp_path) == []


def _mount_point_in(target: Path, monkeypatch) -> Path:
    """A subdirectory of ``target`` that the save takes for a mount point (its device differs from
    its parent's, as a mount point's does)."""
    from wwho import savedir

    sub = target / "mnt"
    sub.mkdir()
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        st = real_stat(path, *args, **kwargs)
        if os.fspath(path) == os.fspath(target):
            fields = list(st)
            fields[2] += 1  # st_dev
            return os.stat_result(fields)
        return st

    def refuse(real):
        def move(src, dst, *args, **kwargs):
            if Path(os.fspath(src)).name == "mnt":  # as a mount point refuses to move
                raise OSError(errno.EBUSY, "Device or resource busy", os.fspath(src))
            return real(src, dst, *args, **kwargs)
        return move

    monkeypatch.setattr(savedir.os, "stat", stat)
    monkeypatch.setattr(savedir.os, "rename", refuse(os.rename))
    monkeypatch.setattr(savedir.os, "replace", refuse(os.replace))
    return sub


def test_a_mount_point_in_the_directory_stays_in_it(tmp_path, monkeypatch):
    """No rename moves a mount point: a save by renaming would leave it (and what is mounted there) in
    the hidden sibling directory, exiting 0. Such a directory is saved in place."""
    from wwho.savedir import save_files

    target = tmp_path / "out"
    save_files(target, {"a.json": b"1"}, kind="x")
    sub = _mount_point_in(target, monkeypatch)
    (sub / "data.bin").write_bytes(b"mounted")
    save_files(target, {"a.json": b"2"}, kind="x")
    assert sorted(os.listdir(target)) == ["a.json", "mnt", MANIFEST]
    assert (target / "a.json").read_bytes() == b"2" and (sub / "data.bin").read_bytes() == b"mounted"
    assert _litter(tmp_path) == []


def test_a_real_mount_point_in_the_directory_stays_in_it(tmp_path):
    """The same with a real tmpfs mount, where the machine lets this process mount one."""
    from wwho.savedir import save_files

    target = tmp_path / "out"
    save_files(target, {"a.json": b"1"}, kind="x")
    (target / "mnt").mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(target / "mnt")],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({made.stderr.strip() or made.returncode}); the test above "
                    "stands in for it")
    try:
        (target / "mnt" / "data.bin").write_bytes(b"mounted")
        save_files(target, {"a.json": b"2"}, kind="x")
        assert os.path.ismount(target / "mnt") and (target / "mnt" / "data.bin").read_bytes() == b"mounted"
        assert (target / "a.json").read_bytes() == b"2" and _litter(tmp_path) == []
    finally:  # wherever the mount ended up (a failing save left it in the sibling)
        with open("/proc/mounts", encoding="utf-8") as mounts:
            points = [line.split()[1] for line in mounts if line.split()[1].startswith(str(tmp_path))]
        for point in points:
            subprocess.run(["umount", point], capture_output=True)


def test_a_link_at_a_name_the_save_writes_is_replaced_as_a_file_there_is(tmp_path):
    """Your symbolic link named ``a.json``: the save's file takes the name, as it does from a file
    of yours there, and what the link points to is left alone. The old directory holding the link is
    not left beside the target, to be warned about at every later save."""
    from wwho.savedir import save_files

    target = tmp_path / "out"
    save_files(target, {"a.json": b"1"}, kind="x")
    (tmp_path / "elsewhere.json").write_bytes(b"yours")
    (target / "a.json").unlink()
    (target / "a.json").symlink_to(tmp_path / "elsewhere.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save_files(target, {"a.json": b"2"}, kind="x")
        save_files(target, {"a.json": b"3"}, kind="x")
    assert (target / "a.json").read_bytes() == b"3" and not (target / "a.json").is_symlink()
    assert (tmp_path / "elsewhere.json").read_bytes() == b"yours"
    assert _litter(tmp_path) == []


def test_a_save_through_a_symlink_and_into_the_working_directory(tmp_path, monkeypatch):
    from wwho.savedir import save_files

    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    save_files(tmp_path / "link", {"a.json": b"1"}, kind="x")
    assert (tmp_path / "link").is_symlink() and (real / "a.json").read_bytes() == b"1"
    monkeypatch.chdir(real)
    save_files(".", {"a.json": b"2"}, kind="x")
    assert Path("a.json").read_bytes() == b"2" and os.path.samefile(os.getcwd(), real)


def test_two_processes_saving_into_one_directory_take_turns(tmp_path):
    """Neither takes the other's exchanged directory for a leftover: no whole old save is left
    beside the directory as a hidden sibling (which every later save would warn about)."""
    child = textwrap.dedent("""
        import sys, warnings
        from wwho.savedir import save_files
        warnings.simplefilter("error")  # a sibling "left alone" is a warning: fail on it
        warnings.filterwarnings("ignore", message=".*waiting for another wwho save")  # (the turns, said)
        target, tag = sys.argv[1], sys.argv[2]
        for i in range(60):
            save_files(target, {"a.json": f"{tag}{i}".encode() * 1000, "b.json": tag.encode()}, kind="x")
    """)
    (tmp_path / "mine.txt").write_text("mine")
    runs = [subprocess.Popen([sys.executable, "-c", child, str(tmp_path / "out"), tag], stderr=subprocess.PIPE)
            for tag in "AB"]
    errors = [run.communicate(timeout=120)[1].decode() for run in runs]
    assert [run.returncode for run in runs] == [0, 0], errors
    assert sorted(os.listdir(tmp_path)) == ["mine.txt", "out"]
    tag = (tmp_path / "out" / "b.json").read_text()
    assert (tmp_path / "out" / "a.json").read_text() == f"{tag}59" * 1000  # one save's files, both


def test_a_save_that_waits_for_another_process_says_so(tmp_path):
    from wwho.errors import WwhoWarning
    from wwho.savedir import save_files

    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        from pathlib import Path
        from wwho.savedir import _lock_folder, _unlock_folder
        fd = _lock_folder(Path(sys.argv[1]), Path(sys.argv[1]) / "other")
        print("held", flush=True)
        time.sleep(1)
        _unlock_folder(fd)
    """), str(tmp_path)], stdout=subprocess.PIPE)
    assert holder.stdout.readline() == b"held\n"
    with pytest.warns(WwhoWarning, match=f"out: waiting for another wwho save into {re.escape(str(tmp_path))} "
                                         r"\(of another process, or another thread of this one\) to finish") as said:
        save_files(tmp_path / "out", {"a.json": b"1"}, kind="x")
    assert said[0].filename == __file__  # the caller's line, as every warning of wwho's names
    assert holder.wait(timeout=60) == 0  # (the save went on once the other one was done)
    assert (tmp_path / "out" / "a.json").read_bytes() == b"1"


def test_a_child_forked_during_a_save_does_not_keep_the_folders_lock(tmp_path):
    """The child inherits the descriptor holding the lock; kept open, the lock would outlive the
    parent's save for as long as the child runs, and hold every other process's save off."""
    import fcntl

    from wwho.savedir import _lock_folder, _unlock_folder

    ready, up = os.pipe()
    fd = _lock_folder(tmp_path, tmp_path / "out")
    pid = os.fork()
    if pid == 0:  # the child (its fork handlers have run): runs on well past the parent's save
        os.write(up, b"1")
        time.sleep(1)
        os._exit(0)
    _unlock_folder(fd)
    os.read(ready, 1)
    os.close(ready), os.close(up)
    try:
        fd = os.open(tmp_path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError while the child holds a copy
        finally:
            os.close(fd)
    finally:
        os.waitpid(pid, 0)


def test_refusals(tmp_path):
    from wwho.errors import WriteError
    from wwho.savedir import save_files

    (tmp_path / "file").write_text("x")
    with pytest.raises(WriteError, match="exists and is not a directory"):
        save_files(tmp_path / "file", {"a.json": b"1"}, kind="x")
    os.symlink(tmp_path / "gone", tmp_path / "dangling")  # named as a link, not "not a directory"
    for target in (tmp_path / "dangling", tmp_path / "dangling" / "below"):
        with pytest.raises(WriteError, match=f"is a symbolic link to {re.escape(str(tmp_path / 'gone'))}, which "
                                             "does not exist"):
            save_files(target, {"a.json": b"1"}, kind="x")
    assert not (tmp_path / "gone").exists()
    os.symlink("dangling", tmp_path / "chain")  # a link to the dangling link: the end is named
    with pytest.raises(WriteError, match=f"chain: is a symbolic link to dangling, which leads to "
                                         f"{re.escape(str(tmp_path / 'gone'))}, which does not exist"):
        save_files(tmp_path / "chain", {"a.json": b"1"}, kind="x")
    os.symlink("loop", tmp_path / "loop")  # a WriteError, not pathlib's RuntimeError
    for target in (tmp_path / "loop", tmp_path / "loop" / "below"):
        with pytest.raises(WriteError, match="is a symbolic link to loop that loops"):
            save_files(target, {"a.json": b"1"}, kind="x")
    (tmp_path / "d" / "a.json").mkdir(parents=True)
    with pytest.raises(WriteError, match="is a directory"):
        save_files(tmp_path / "d", {"a.json": b"1"}, kind="x")
    for bad in ("../x", "a/b", MANIFEST, ".wwho-tmp-x"):
        with pytest.raises(ValueError):
            save_files(tmp_path / "e", {bad: b"1"}, kind="x")


def test_fallback_in_place_is_detected_at_load_when_killed(models, tmp_path, monkeypatch):
    """Where the directories cannot be exchanged, the files are renamed one by one over the old
    ones, the manifest last: a save killed half-way is then reported at load, naming the files."""
    from wwho import savedir

    def cannot(a, b):
        raise savedir._CannotExchange

    monkeypatch.setattr(savedir, "_exchange", cannot)
    target = tmp_path / "out"
    SGPETokenizer.load(models["A"]).save(target)
    SGPETokenizer.load(models["B"]).save(target)
    _check_loads_and_agrees(target)
    assert _which(target, models, ("vocab.json", "tokenizer.json", MANIFEST)) == "B"
    (target / "vocab.json").write_bytes((models["A"] / "vocab.json").read_bytes())  # as a kill half-way leaves it
    with pytest.raises(VocabError, match=r"out: vocab.json does not match wwho-manifest.json"):
        SGPETokenizer.load(target)


def _no_exchange(monkeypatch):
    from wwho import savedir

    def cannot(a, b):
        raise savedir._CannotExchange

    monkeypatch.setattr(savedir, "_exchange", cannot)


def test_fallback_in_place_keeps_the_old_save_when_a_write_fails(models, tmp_path, monkeypatch):
    """A full disk half-way through a save in place (a mount point, such as a Docker volume, cannot
    be exchanged): the old save is left whole and loads, and no temporary file stays. Before, the
    new manifest was written first, and the old model no longer loaded."""
    import errno

    from wwho.errors import WriteError

    _no_exchange(monkeypatch)
    target = tmp_path / "out"
    SGPETokenizer.load(models["A"]).save(target)
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    from wwho import savedir

    real_fsync, real_in_place, calls = os.fsync, savedir._save_in_place, []

    def full_disk(fd):  # the second file written in place finds the disk full
        if calls:
            calls.append(fd)
            if len(calls) == 3:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real_fsync(fd)

    def in_place(*args):
        calls.append("in place")
        return real_in_place(*args)

    monkeypatch.setattr(os, "fsync", full_disk)
    monkeypatch.setattr(savedir, "_save_in_place", in_place)
    # the file being written is named, not only its directory
    with pytest.raises(WriteError, match=re.escape(str(target)) + r"/[\w.]+: cannot write: No space left on device"):
        SGPETokenizer.load(models["B"]).save(target)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert len(calls) == 3  # the disk was full in place, not while staging a directory
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert _which(target, models, ("vocab.json", "tokenizer.json", MANIFEST)) == "A"
    SGPETokenizer.load(target)


def test_fallback_in_place_keeps_the_old_save_when_a_rename_is_refused(tmp_path, monkeypatch):
    """A rename refused half-way through a save in place (a folder anyone may write in, with the
    sticky bit, does not let one user replace another's file): every file is put back, the old save
    loads whole, no temporary file stays, and the error names the file. Before, the renames done
    stayed (a directory of two saves) and each try left its temporary files."""
    import errno

    from wwho.errors import WriteError
    from wwho.manifest import check_saved
    from wwho.savedir import save_files

    _no_exchange(monkeypatch)
    old, new = {"a.json": b"1", "b.json": b"2"}, {"a.json": b"11", "b.json": b"22", "c.json": b"3"}
    real_rename, real_replace = os.rename, os.replace
    for refused in range(1, 20):
        target = tmp_path / f"case{refused}"
        save_files(target, old, kind="x")
        before = {p.name: p.read_bytes() for p in target.iterdir()}
        calls = [0]

        def rename(src, dst, *, real, refused=refused, calls=calls):
            calls[0] += 1
            if calls[0] == refused:
                raise PermissionError(errno.EPERM, "Operation not permitted")
            return real(src, dst)

        monkeypatch.setattr(os, "rename", lambda a, b: rename(a, b, real=real_rename))
        monkeypatch.setattr(os, "replace", lambda a, b: rename(a, b, real=real_replace))
        try:
            save_files(target, new, kind="x")
        except WriteError as exc:
            assert "Operation not permitted" in str(exc) and str(target) in str(exc), exc
            assert {p.name: p.read_bytes() for p in target.iterdir()} == before, refused
            check_saved(target, old)
            continue
        finally:
            monkeypatch.setattr(os, "rename", real_rename)
            monkeypatch.setattr(os, "replace", real_replace)
        assert {p.name: p.read_bytes() for p in target.iterdir() if p.name != MANIFEST} == new
        break
    assert refused > 4  # every rename of the save was refused once


def test_fallback_in_place_interrupted_leaves_the_old_save_or_the_new(tmp_path, monkeypatch):
    """Ctrl-C after any step of a save in place: the old files or the new ones, each set loading,
    never a mix; no temporary file."""
    import signal

    from wwho.manifest import check_saved
    from wwho.savedir import save_files

    _no_exchange(monkeypatch)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    old, new = {"a.json": b"1", "b.json": b"2"}, {"a.json": b"11", "c.json": b"3"}
    for step in range(1, 100):
        target = tmp_path / f"case{step}"
        save_files(target, old, kind="x")
        monkeypatch.setenv("WWHO_INTERRUPT_AFTER", str(step))
        try:
            save_files(target, new, kind="x")
        except KeyboardInterrupt:
            interrupted = True
        else:
            interrupted = False
        finally:
            monkeypatch.delenv("WWHO_INTERRUPT_AFTER")
            signal.signal(signal.SIGINT, signal.default_int_handler)
        files = {p.name: p.read_bytes() for p in target.iterdir() if p.name != MANIFEST}
        assert files in (old, new), (step, files)
        check_saved(target, files)  # the manifest agrees with them
        if not interrupted:
            break
    assert step > 4


def test_files_of_different_saves_are_named_at_load(models, tmp_path):
    """A file the loader reads that is not the save's own is an error; one it does not read (SGPE's
    Hugging Face files, which ``save_pretrained`` rewrites in place) is a warning naming it. Before:
    an error for both, so a directory that a Hugging Face save had passed through no longer loaded."""
    import shutil

    from wwho.errors import ChangedFileWarning

    target = tmp_path / "out"
    SGPETokenizer.load(models["A"]).save(target)
    expected = SGPETokenizer.load(models["A"]).encode("ශ්‍රී ලංකාව")
    shutil.copy(models["B"] / "tokenizer.json", target / "tokenizer.json")
    for path in (target, target / "vocab.json"):
        with pytest.warns(ChangedFileWarning, match=r"tokenizer.json changed since wwho saved"):
            assert SGPETokenizer.load(path).encode("ශ්‍රී ලංකාව") == expected
    shutil.copy(models["B"] / "vocab.json", target / "vocab.json")
    with pytest.raises(VocabError, match=r"vocab.json does not match wwho-manifest.json"):
        SGPETokenizer.load(target)
    (target / MANIFEST).unlink()  # a directory without a manifest (made by hand, or by an older wwho)
    SGPETokenizer.load(target)


def test_a_byte_identical_copy_of_a_saved_file_loads(models, tmp_path):
    """``vocab-backup.json`` beside the save's ``vocab.json`` is not refused as not listed."""
    import shutil

    target = tmp_path / "out"
    shutil.copytree(models["A"], target)
    shutil.copy(target / "vocab.json", target / "vocab-backup.json")
    assert SGPETokenizer.load(target / "vocab-backup.json").vocab_size == SGPETokenizer.load(target).vocab_size
    (target / "vocab-other.json").write_bytes((models["B"] / "vocab.json").read_bytes())
    with pytest.raises(VocabError, match=r"vocab-other.json not listed in wwho-manifest.json"):
        SGPETokenizer.load(target / "vocab-other.json")


def _killed_save(target: Path, files: dict[str, bytes], step: int) -> bool:
    """Save ``files`` into ``target`` in a forked child SIGKILLed after the save's ``step``-th step;
    whether it was killed (False: the save finished first)."""
    import signal

    from wwho.savedir import save_files

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.environ["WWHO_CRASH_AFTER"] = str(step)
        try:
            save_files(target, files, kind="x")
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def test_a_killed_save_is_recovered_at_every_step(tmp_path):
    """What a genuinely killed save leaves (its marker, manifest, files, the old directory after the
    exchange) is cleaned up by the next recover(): your files and folders are back, nothing is left.
    After the exchange, the folder the save moved out is what recover() moves back."""
    from wwho.save_recovery import recover
    from wwho.savedir import save_files

    moved_back = []
    for step in range(1, 100):
        target = tmp_path / f"case{step}" / "out"
        save_files(target, {"a.json": b"1", "b.json": b"2"}, kind="x")
        (target / "mine.txt").write_text("mine")
        (target / "data").mkdir()
        (target / "data" / "corpus.txt").write_text("corpus")
        if not _killed_save(target, {"a.json": b"11", "c.json": b"3"}, step):
            break
        moved_back.append(recover(target))
        assert (target / "mine.txt").read_text() == "mine" and (target / "data" / "corpus.txt").read_text() == "corpus"
        assert sorted(os.listdir(target.parent)) == ["out"], (step, os.listdir(target.parent))
        assert _litter(target.parent) == [], step
        names = set(os.listdir(target))
        assert names in ({"a.json", "b.json", "mine.txt", "data", MANIFEST},
                         {"a.json", "c.json", "mine.txt", "data", MANIFEST}), (step, names)
    assert step > 8 and ["data"] in moved_back


def _planted(parent: Path, name: str = ".wwho-tmp-tok.4000000.x") -> Path:
    """What another user can create in a shared directory: a sibling named like a killed save's
    leftovers, holding Hugging Face files that would change how the tokenizer loads."""
    planted = parent / name
    planted.mkdir()
    (planted / "tokenizer_config.json").write_text(
        '{"bos_token": "<|planted|>", "chat_template": "{{ planted }}", '
        '"auto_map": {"AutoTokenizer": ["tokenization_evil.EvilTokenizer", null]}}')
    (planted / "tokenization_evil.py").write_text("import os  # code for trust_remote_code=True\n")
    return planted


def test_a_planted_directory_is_never_adopted(tmp_path):
    """The issue's case: a sibling ``.wwho-tmp-tok.<dead pid>.x/tokenizer_config.json`` that no save
    of yours wrote. The next save (here one that adds tokenizer.json, as ``hf=True``) must not move
    the planted files into the tokenizer directory: they stay where they are, with a warning."""
    from wwho.errors import WwhoWarning
    from wwho.save_recovery import recover
    from wwho.savedir import save_files

    target = tmp_path / "tok"
    save_files(target, {"ranks.tiktoken": b"r", "bytelevel.json": b"{}"}, kind="x")
    planted = _planted(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        save_files(target, {"ranks.tiktoken": b"r", "bytelevel.json": b"{}", "tokenizer.json": b"{}"}, kind="x")
    assert sorted(os.listdir(target)) == ["bytelevel.json", "ranks.tiktoken", "tokenizer.json", MANIFEST]
    assert sorted(os.listdir(planted)) == ["tokenization_evil.py", "tokenizer_config.json"]  # never deleted
    assert [str(w.message).split(": ")[:2] for w in caught if w.category is WwhoWarning] == [
        [str(planted), "left alone"]]
    # A marker planted with it does not help: a new directory's marker only lets wwho remove the files
    # it lists (never move one in), and what moves back after an exchange must be the very entry
    # (device, inode) the save moved out, listed in a marker inside the target.
    forged = {"format": "wwho-save/1", "target": "tok", "pid": 4000000, "token": "x", "files": [], "back": []}
    (planted / ".wwho-save").write_text(json.dumps(forged))
    with pytest.warns(WwhoWarning, match="left alone"):
        assert recover(target) == []
    (planted / ".wwho-save").unlink()
    ino = os.lstat(planted / "tokenizer_config.json").st_ino
    (target / ".wwho-save").write_text(json.dumps({**forged, "back": [["tokenizer_config.json", 1, ino]]}))
    with pytest.warns(WwhoWarning, match="left alone"):
        assert recover(target) == []
    assert sorted(os.listdir(target)) == [".wwho-save", "bytelevel.json", "ranks.tiktoken", "tokenizer.json",
                                          MANIFEST]
    assert sorted(os.listdir(planted)) == ["tokenization_evil.py", "tokenizer_config.json"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give files to another user")
def test_another_users_directory_or_temporary_file_is_never_touched(tmp_path):
    """Even with a marker that would pass, a sibling owned by another user (uid 65534) is left
    alone; so is another user's temporary file, which before was deleted by the next write."""
    from wwho.atomic_write import write_bytes
    from wwho.errors import WwhoWarning
    from wwho.savedir import save_files

    target = tmp_path / "tok"
    save_files(target, {"a.json": b"1"}, kind="x")
    planted = _planted(tmp_path)
    (planted / ".wwho-save").write_text(json.dumps(
        {"format": "wwho-save/1", "target": "tok", "pid": 4000000, "token": "x",
         "files": [], "back": []}))
    foreign_tmp = tmp_path / ".wwho-tmp-x.json.4000000.abcdef.tmp"
    foreign_tmp.write_text("theirs")
    for path in (planted, *planted.iterdir(), foreign_tmp):
        os.chown(path, 65534, 65534)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        save_files(target, {"a.json": b"2", "tokenizer.json": b"{}"}, kind="x")
    write_bytes(tmp_path / "x.json", b"{}")
    assert sorted(os.listdir(target)) == ["a.json", "tokenizer.json", MANIFEST]
    assert sorted(os.listdir(planted)) == [".wwho-save", "tokenization_evil.py", "tokenizer_config.json"]
    assert foreign_tmp.read_text() == "theirs"
    assert any("belongs to another user (uid 65534)" in str(w.message) for w in caught if w.category is WwhoWarning)


def test_an_interrupted_save_leaves_nothing(tmp_path):
    """Ctrl-C (KeyboardInterrupt) after any step of a save: the old files, whole, or the new ones;
    your files and folders in place; no staging directory, no marker."""
    import signal

    from wwho.savedir import save_files

    # The hook sends this process SIGINT: make sure it is handled here and not blocked.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    for step in range(1, 100):
        target = tmp_path / f"case{step}" / "out"
        save_files(target, {"a.json": b"1", "b.json": b"2"}, kind="x")
        (target / "mine.txt").write_text("mine")
        (target / "data").mkdir()
        interrupted = _interrupted_save(step, target, {"a.json": b"11", "c.json": b"3"})
        assert sorted(os.listdir(target.parent)) == ["out"], (step, os.listdir(target.parent))
        names = set(os.listdir(target))
        assert names in ({"a.json", "b.json", "mine.txt", "data", MANIFEST},
                         {"a.json", "c.json", "mine.txt", "data", MANIFEST}), (step, names)
        if not interrupted:
            break
    assert step > 8
    # into folders that do not exist yet: those made for it go too, unless the save went through
    for step in range(1, 100):
        interrupted = _interrupted_save(step, tmp_path / f"new{step}" / "sub" / "out", {"a.json": b"1"})
        made = tmp_path / f"new{step}"
        if made.exists():  # the save was whole before the interrupt came
            assert sorted(os.listdir(made / "sub" / "out")) == ["a.json", MANIFEST], step
        else:
            assert interrupted, step
        if not interrupted:
            break
    assert step > 4


def _interrupted_save(step: int, target, files: dict) -> bool:
    """``save_files(target, files)`` with a SIGINT after its ``step``-th step: whether it came."""
    import signal

    from wwho.savedir import save_files

    os.environ["WWHO_INTERRUPT_AFTER"] = str(step)
    try:
        save_files(target, files, kind="x")
    except KeyboardInterrupt:
        return True
    finally:
        del os.environ["WWHO_INTERRUPT_AFTER"]
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return False


@pytest.mark.parametrize("value", ["\u00b2", "\u0663", "x", ""])
def test_a_test_hook_that_is_no_ascii_number_is_off(tmp_path, monkeypatch, value):
    """WWHO_CRASH_AFTER='²' passes str.isdigit and fails in int(): it must not end the save in a
    ValueError traceback."""
    from wwho.savedir import save_files

    monkeypatch.setenv("WWHO_CRASH_AFTER", value)
    monkeypatch.setenv("WWHO_INTERRUPT_AFTER", value)
    save_files(tmp_path / "out", {"a.txt": b"a"}, kind="test")
    assert (tmp_path / "out" / "a.txt").read_bytes() == b"a"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="another process's working directory is read in /proc")
def test_a_process_working_in_the_directory_is_not_left_in_a_deleted_one(tmp_path):
    """Exchanging the directory itself would leave a shell after ``wwho train -o .`` (or an editor, a
    notebook) working in it in the deleted old one, where every relative path fails. Such a save is
    made in place."""
    from wwho.savedir import save_files

    target = tmp_path / "tok"
    save_files(target, {"a.json": b"1"}, kind="x")
    (target / "notes.txt").write_text("mine")
    shell = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], cwd=target,
                             stdin=subprocess.PIPE)
    try:
        save_files(target, {"a.json": b"2"}, kind="x")
        assert os.readlink(f"/proc/{shell.pid}/cwd") == str(target)  # not "... (deleted)"
    finally:
        shell.communicate(b"")
    assert (target / "a.json").read_bytes() == b"2" and (target / "notes.txt").read_text() == "mine"
    assert _litter(tmp_path) == []


def test_a_file_made_in_the_directory_during_a_save_stays_in_it(tmp_path, monkeypatch):
    """A file another program creates in the directory after the save linked the entries it keeps
    must not go with the old directory into a hidden ``.wwho-tmp-*`` sibling, left there without a
    word."""
    from wwho import savedir

    target = tmp_path / "tok"
    savedir.save_files(target, {"a.json": b"1"}, kind="x")
    real = savedir._exchange

    def exchange_after_a_write(a, b):
        (target / "late.log").write_text("written during the save")
        real(a, b)

    monkeypatch.setattr(savedir, "_exchange", exchange_after_a_write)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no "left alone" warning
        savedir.save_files(target, {"a.json": b"2"}, kind="x")
    assert sorted(os.listdir(target)) == ["a.json", "late.log", MANIFEST]
    assert (target / "late.log").read_text() == "written during the save" and _litter(tmp_path) == []


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel"])
def test_a_saved_file_of_another_size_is_refused_before_it_is_read(tmp_path, kind):
    """A saved vocab.json grown to a gigabyte is not read and parsed (twice, for SGPE) before the
    manifest says it is not the file saved: its size is compared first, and the file is never read."""
    from wwho import load_tokenizer
    from wwho.bytelevel import ByteBPE
    from wwho.errors import VocabError
    from wwho.sgpe import SGPETokenizer

    if kind == "sgpe":
        sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
        SGPETokenizer.train([str(sample)], vocab_size=600, progress=False).save(tmp_path / "t")
        name = "vocab.json"
    else:
        ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2").save(tmp_path / "t")
        name = "bytelevel.json"
    with open(tmp_path / "t" / name, "r+b") as f:
        f.truncate(64 << 20)  # sparse
    # (the size, named, comes from the check before any read: after one, the message has no size)
    with pytest.raises(VocabError, match=rf"{name} does not match wwho-manifest.json .*it is 67,108,864 bytes"):
        load_tokenizer(tmp_path / "t")


def test_an_empty_path_is_refused_not_the_working_directory(tmp_path, monkeypatch):
    """``save("")`` (an unset variable) wrote a whole tokenizer into the working directory, where
    ``load("")`` is refused as an empty path."""
    from wwho.bytelevel import ByteBPE
    from wwho.errors import WriteError
    from wwho.savedir import save_files

    monkeypatch.chdir(tmp_path)
    with pytest.raises(WriteError, match="an empty path: give the directory to save the tokenizer in"):
        save_files("", {"a.json": b"1"}, kind="x")
    with pytest.raises(WriteError, match="an empty path"):
        ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2").save("")
    assert list(tmp_path.iterdir()) == []


def test_threads_saving_into_one_directory_at_once_leave_one_save_and_nothing_else(tmp_path):
    """Two threads saving into one directory each took the other's exchanged directory for a
    leftover: whole old saves stayed beside it as hidden siblings (3 of 5 tries in a probe), some
    with a warning to remove them by hand. A process's saves into one directory go one at a time."""
    import threading

    from wwho.bytelevel import ByteBPE

    tok = ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2")
    for trial in range(12):
        parent = tmp_path / str(trial)
        out = parent / "model"
        tok.save(out)  # an existing save, replaced by both
        start = threading.Barrier(3)
        failed: list[BaseException] = []

        def save(start: threading.Barrier = start, out: Path = out, failed: list = failed) -> None:
            start.wait()
            try:
                tok.save(out)
            except BaseException as exc:  # noqa: BLE001 (reported below)
                failed.append(exc)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            threads = [threading.Thread(target=save) for _ in range(3)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert failed == [] and [str(w.message) for w in caught] == []
        assert os.listdir(parent) == ["model"]
        assert ByteBPE.load(out).encode("hello") == tok.encode("hello")
