"""The benchmark scripts' own promises, cheaply: a bad argument is refused in one line (exit 2, no
traceback) before any work, a failed measurement is not a success, temporary files are removed,
and what a report says (its command, its labels) is what ran.

Most run a script in a subprocess with ``WWHO_SHARED_DATA`` pointing to an empty folder, so that a
refusal that came after the data check would show up as "skipped" (exit 0) instead; the few that
need the shared data are skipped without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPORA, O200K_FILE, require_data

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))


def script(name: str, *args: str, tmp_path: Path, data: Path | None = None, tmpdir: Path | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess:
    """``python benchmarks/NAME ARGS`` from a folder of its own, with ``data`` as the shared data
    (default: an empty folder) and ``tmpdir`` as ``$TMPDIR``."""
    work = tmp_path / "cwd"
    work.mkdir(exist_ok=True)
    if data is None:
        data = tmp_path / "no-data"
        data.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    env.update(WWHO_SHARED_DATA=str(data), PYTHONDONTWRITEBYTECODE="1")
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return subprocess.run([sys.executable, str(BENCHMARKS / name), *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=timeout)


def refused(proc: subprocess.CompletedProcess) -> str:
    """The one line of a refusal: exit 2 (argparse's), no traceback, nothing on stdout."""
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output[-3000:]
    assert proc.returncode == 2, output[-3000:]
    assert not proc.stdout.strip(), proc.stdout
    return proc.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(("name", "args", "says"), [
    ("bench_binary.py", ["--runs", "wwho,bogus"], "unknown run 'bogus'; the runs: wwho, hf, capped, feed"),
    ("bench_large_inputs.py", ["--only", "zzz"], "no kind matches 'zzz'"),
    ("bench_lm.py", ["--sgpe", "x={bad"], "--sgpe x={bad: the options after NAME= are not JSON"),
    ("bench_lm.py", ["--sgpe", "x=5"], "must be a JSON object"),
    ("bench_lm.py", ["--langs", "xx"], "invalid choice: 'xx'"),
    ("bench_languages.py", ["--sgpe", "x={bad"], "--sgpe x={bad: the options after NAME= are not JSON"),
    ("bench_syllables.py", ["--repeat", "1", "/nonexistent.txt"], "no such file: /nonexistent.txt"),
    ("bench_syllables.py", ["--script", "klingon"], "invalid choice: 'klingon'"),
    ("bench_peers.py", ["--rounds", "0", "--mb", "0.1"], "--rounds must be 1 or more, got 0"),
    ("bench_devices.py", ["--summary", "--out", "/nonexistent/devices.jsonl"], "no such file"),
    ("bench_scale.py", ["--shard-bytes", "xyz"], "--shard-bytes: expected a size"),
    ("exact_cuts.py", ["--langs", "ml", "xx"], "invalid choice: 'xx'"),
    ("fewest_tokens.py", ["--langs", "xx"], "invalid choice: 'xx'"),
    ("gpt.py", ["--table", "/nonexistent/results.jsonl"], "--table: /nonexistent/results.jsonl: no such file"),
    ("gpt.py", ["/nonexistent/hi-sgpe.npz", "--cpu", "--steps", "1"], "no such streams file"),
])
def test_a_bad_argument_is_refused_in_one_line(name, args, says, tmp_path):
    line = refused(script(name, *args, tmp_path=tmp_path))
    assert line.startswith(f"{name}: error: ") and says in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "no-data"]  # nothing written
    assert not any((tmp_path / "cwd").iterdir())


def test_bench_lm_refuses_a_language_with_flores_only(tmp_path):
    """Odia has FLORES only: bench_languages.py cross-fits it, bench_lm.py says it does not."""
    data = tmp_path / "data"
    (data / "corpora" / "or").mkdir(parents=True)
    (data / "corpora" / "or" / "flores200-devtest.txt").write_text("ଓଡ଼ିଆ\n", encoding="utf-8")
    line = refused(script("bench_lm.py", "--langs", "or", tmp_path=tmp_path, data=data))
    assert "--langs or: no training text besides FLORES" in line and "cross-fits" in line, line


def test_help_describes_every_script(tmp_path):
    """--help starts with what the script measures (its docstring), and says what it draws."""
    for name in ("bench_scale.py", "bench_binary_interrupt.py"):
        proc = script(name, "--help", tmp_path=tmp_path)
        first = (BENCHMARKS / name).read_text(encoding="utf-8").split('"""')[1].splitlines()[0]
        assert proc.returncode == 0 and first in proc.stdout, proc.stdout
    helped = script("run_all.py", "--help", tmp_path=tmp_path).stdout
    assert "docs/img/eval-si.png and docs/img/eval-hi.png" in " ".join(helped.split())
    assert "eval.png" not in helped


def test_run_all_quotes_the_command_it_ran(monkeypatch, tmp_path):
    """A section's line is the command with its arguments, paths shortened, not the script alone."""
    import _measure
    import run_all

    script_file = tmp_path / "bench_fake.py"
    script_file.write_text("")
    data = _measure.DATA
    folder = tmp_path / "texts"
    folder.mkdir()
    texts = [folder / f"{n}.txt" for n in ("a", "b")]
    for path in texts:
        path.write_text("x\n")
    cmd = ["bench_fake.py", "--mb", "40", "--runs", "wwho,hf", "--eval", str(data / "corpora" / "hi" / "f.txt"),
           "--plot", str(ROOT / "docs" / "img" / "x.png"), *map(str, texts)]
    monkeypatch.setattr(run_all, "BENCHMARKS", {"fake": ("A fake benchmark", cmd)})
    monkeypatch.setattr(run_all, "HERE", tmp_path)
    monkeypatch.setattr(run_all, "require", lambda *paths: None)
    monkeypatch.setattr(run_all, "run", lambda args, cwd=None: ("figures", 3.0, 0))
    out = tmp_path / "benchmarks.md"
    monkeypatch.setattr(sys, "argv", ["run_all.py", "--only", "fake", "--out", str(out)])
    run_all.main()
    report = out.read_text(encoding="utf-8")
    want = (f"`python benchmarks/bench_fake.py --mb 40 --runs wwho,hf --eval $WWHO_SHARED_DATA/corpora/hi/f.txt "
            f"--plot docs/img/x.png {folder}/*.txt` (3 s)")
    assert want in report, report


def test_bench_binary_exits_non_zero_when_a_run_fails(monkeypatch, tmp_path, capsys):
    import bench_binary

    elf = tmp_path / "a.elf"
    elf.write_bytes(b"\x7fELF" + bytes(100))
    monkeypatch.setattr(bench_binary, "elf_files", lambda: [elf])

    def failing(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, stdout="", stderr="the child's error\n")

    monkeypatch.setattr(bench_binary.subprocess, "run", failing)
    monkeypatch.setattr(sys, "argv", ["bench_binary.py", "--mb", "0.001", "--runs", "wwho,hf"])
    with pytest.raises(SystemExit) as stop:
        bench_binary.main()
    assert stop.value.code == "failed: wwho, hf (see above)"
    out = capsys.readouterr().out
    assert "wwho: failed\nthe child's error" in out and "hf: failed" in out


def test_bench_extend_quick_trains_no_meta_vocabulary(monkeypatch, tmp_path, capsys):
    """--quick (2 MB of training text) does not train bench_meta's vocabulary on its 74 MB."""
    import bench_extend
    import bench_meta

    def never(*args, **kwargs):
        raise AssertionError("--quick trained the meta vocabulary")

    monkeypatch.setattr(bench_meta, "CACHE", tmp_path / "bench_meta")
    monkeypatch.setattr(bench_meta, "train", never)
    monkeypatch.setattr(bench_meta, "training_text", never)
    assert bench_extend.meta_row(train=False) is None
    assert "meta vocabulary left out: --quick does not train it" in capsys.readouterr().out
    assert not (tmp_path / "bench_meta").exists()


def test_bench_peers_leaves_no_tiktoken_cache(monkeypatch, tmp_path):
    """tiktoken's load_tiktoken_bpe copies even a local file into $TMPDIR/data-gym-cache: not here."""
    import base64
    import tempfile

    import bench_peers

    ranks = tmp_path / "small.tiktoken"
    ranks.write_bytes(b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256)))
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(bench_peers, "O200K_FILE", ranks)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    for name in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    loaders = {e["name"]: e["load"] for e in bench_peers.entries(r"\S+|\s+")}
    enc = loaders["tiktoken"]()
    assert enc.encode_ordinary("ab c") == [97, 98, 32, 99]
    assert not any(temp.iterdir()), list(temp.iterdir())
    assert "TIKTOKEN_CACHE_DIR" not in os.environ  # as it was


def test_bench_syllables_command_row_counts_lines_and_says_so(tmp_path):
    text = tmp_path / "si.txt"
    text.write_text("අම්මා ගෙදර යනවා\nශ්‍රී ලංකා\n", encoding="utf-8")
    proc = script("bench_syllables.py", "--repeat", "1", "--spec-mb", "0.001", str(text), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {line[:44].strip(): line[44:].split() for line in proc.stdout.splitlines()}
    assert rows["method"][-1] == "output"
    assert rows["wwho syllabify (the command, whole process)"][-2:] == ["2", "lines"]
    assert rows["wwho.syllabify (leading_space=False)"][-1] == "tokens"


def test_bench_bytelevel_removes_its_temporary_files(tmp_path):
    require_data(O200K_FILE)
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = script("bench_bytelevel.py", "--quick", "--no-speed", "--no-exactness", tmp_path=tmp_path,
                  data=O200K_FILE.parents[1], tmpdir=temp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not any(temp.iterdir()), list(temp.iterdir())


def test_bench_large_inputs_removes_its_temporary_files(tmp_path):
    require_data(CORPORA / "si" / "news-bbcsinhala.txt")
    temp = tmp_path / "tmp"
    temp.mkdir()
    # the cheapest text kind: the SGPE model and the llama-bpe export are still made for it
    proc = script("bench_large_inputs.py", "--only", "peer: tiktoken", tmp_path=tmp_path,
                  data=CORPORA.parent, tmpdir=temp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "peer: tiktoken o200k_base | spaces 10 MB" in proc.stdout
    assert not any(temp.iterdir()), list(temp.iterdir())


def test_bench_threads_labels_sgpe_by_its_size(tmp_path):
    """Not "SGPE 32k" for every --vocab: the size of the one given."""
    require_data(O200K_FILE)
    from wwho.sgpe import SGPETokenizer

    text = require_data(CORPORA / "si" / "flores200-devtest.txt")
    tok = SGPETokenizer.train([str(text)], vocab_size=1000, progress=False, workers=1)
    tok.save(tmp_path / "vocab")
    proc = script("bench_threads.py", "--vocab", str(tmp_path / "vocab"), "--text", str(text), "--mb", "0.05",
                  "--peer-mb", "0", "--threads", "1", "--repeat", "1", tmp_path=tmp_path, data=O200K_FILE.parents[1])
    assert proc.returncode == 0, proc.stderr[-3000:]
    from _measure import size_label

    assert f"SGPE {size_label(tok.vocab_size)}, lists" in proc.stdout, proc.stdout
    assert "SGPE 32k" not in proc.stdout


def test_bench_compression_accounts_for_an_sgpe_vocabulary(monkeypatch, tmp_path, capsys):
    """`sgpe_account` (every run of bench_compression.py) read the tokenizer's id list by a name
    that had become a method, and the run ended in a traceback after its tables."""
    require_data(CORPORA / "si" / "flores200-devtest.txt")
    import bench_compression

    from wwho.sgpe import SGPETokenizer

    corpus = tmp_path / "train.txt"
    sample = ROOT / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    corpus.write_text(sample.read_text(encoding="utf-8")[:60_000], encoding="utf-8")
    SGPETokenizer.train(corpus, vocab_size=600, progress=False).save(tmp_path / "si-sgpe-600")
    monkeypatch.setattr(bench_compression, "CACHE", tmp_path)
    monkeypatch.setitem(bench_compression.LANGS, "si", ([corpus], "sinhala", ["flores200-devtest.txt"]))
    bench_compression.sgpe_account("si", "sgpe", 600)
    out = capsys.readouterr().out
    assert "where the ids go" in out and "syllable ids with a leading space" in out


def test_bench_binary_interrupt_child_counts_and_trains(tmp_path):
    """The child of bench_binary_interrupt.py called count_windows with its options as a positional
    argument, so every run ended in a bare AssertionError."""
    import bench_binary_interrupt

    data = tmp_path / "blob.bin"
    data.write_bytes(bytes(range(256)) * 64)
    proc = subprocess.run([sys.executable, "-c", bench_binary_interrupt.CHILD, "wwho", str(data), "5"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["ready", "finished"]


def test_a_missing_optional_package_skips_in_one_line(tmp_path):
    """SentencePiece, Ray, PyTorch, psutil or fastokens not installed: a ``skipped:`` line naming
    the package to install and exit 0, as for missing data (several scripts ended in a traceback)."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); sys.modules['sentencepiece'] = None; "
            "from _measure import need; need('sentencepiece', 'spm'); print('went on')")
    proc = subprocess.run([sys.executable, "-c", code, str(BENCHMARKS)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "went on" not in proc.stdout, proc.stderr
    assert proc.stderr.strip() == "skipped: sentencepiece is not installed (pip install 'wwho[spm]')"
    if not O200K_FILE.is_file() or not (CORPORA / "si").is_dir():
        return
    # a whole script: bench_languages.py with the data present and SentencePiece hidden
    run = ("import os, runpy, sys; sys.modules['sentencepiece'] = None; sys.argv = [sys.argv[1], '--langs', 'si']; "
           "sys.path.insert(0, os.path.dirname(sys.argv[0])); runpy.run_path(sys.argv[0], run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", run, str(BENCHMARKS / "bench_languages.py")], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "skipped: sentencepiece is not installed" in proc.stderr


def test_bench_languages_plots_are_skipped_without_matplotlib(monkeypatch, capsys):
    import bench_languages

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    bench_languages.tradeoff_plot(["si"], [8000], "flores", {}, "never-written.png")
    assert capsys.readouterr().out.strip() == "plot: skipped (matplotlib is not installed: pip install 'wwho[plot]')"
