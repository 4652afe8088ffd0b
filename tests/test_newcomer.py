"""No silent surprises for a new user (issue 18): script warnings, a vocabulary smaller than asked,
text given as a corpus, ``wwho export hf`` of a meta directory, ``wwho.hf`` without transformers,
plurals, ``wwho --version``, ``wwho train --help``, and the flags every kind shares. CLI tests run
the real ``wwho`` command."""

from __future__ import annotations

import subprocess
import sys
import warnings
from importlib import resources
from pathlib import Path

import pytest
from conftest import O200K_FILE, run_wwho

import wwho
from wwho.errors import CorpusError, ScriptWarning, VocabSizeWarning
from wwho.notices import plural

SINHALA = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()


@pytest.fixture(scope="module")
def sinhala_corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("newcomer") / "si.txt"
    path.write_text("\n".join(SINHALA[:300]) + "\n", encoding="utf-8")
    return path


def test_syllabify_warns_on_another_script():
    with pytest.warns(ScriptWarning, match="0% of the letters of the text are sinhala; it is 100% devanagari: "
                                           "pass script=devanagari"):
        assert wwho.syllabify("नमस्ते") == ["न", "म", "स", "्", "त", "े"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert wwho.syllabify("नमस्ते", "devanagari") == ["न", "म", "स्ते"]
        wwho.syllabify("ශ්‍රී ලංකාව 2024, Cricket!")  # mostly Sinhala letters: no warning
        wwho.syllabify("123 !?")  # no letters: nothing to judge


def test_syllabify_says_what_it_does_with_latin_text():
    """The warning says what the output shows, not that Latin text is kept whole, byte by byte (what
    training does), above an output that cuts it into characters."""
    with pytest.warns(ScriptWarning, match="which sinhala has no syllables for: each of its characters is a "
                                           "piece of its own"):
        assert wwho.syllabify("hello world") == list("hello world")
    done = run_wwho("syllabify", "hello world")
    assert done.stdout.startswith("h | e | l") and "each of its characters is a piece" in done.stderr


def test_a_mode_of_many_scripts_is_named_in_the_warning_not_listed(tmp_path):
    """The warning listed all ten scripts of ``indic``, twice, joined by slashes."""
    done = run_wwho("syllabify", "--script", "indic", "hello world")
    assert done.returncode == 0 and done.stdout.startswith("h | e | l")
    assert ("only 0% of the letters of the input are indic (10 scripts); it is 100% other scripts (Latin, ...), "
            "which indic (10 scripts) has no syllables for") in done.stderr and "bengali" not in done.stderr
    assert "of the input are sinhala/devanagari; it is 100% tamil" in run_wwho("syllabify", "--script", "mixed",
                                                                               "தமிழ்").stderr
    corpus = tmp_path / "en.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog\n" * 50, encoding="utf-8")
    trained = run_wwho("train", "--kind", "sgpe", "--script", "indic", "--vocab-size", "600", "-o", tmp_path / "m",
                       corpus)
    assert "of the letters of the corpus are indic (10 scripts); it is 100% other scripts" in trained.stderr


def test_syllabify_judges_a_long_text_on_a_sample():
    from wwho.scriptcheck import SAMPLE_CHARS, sample

    hindi = "नमस्ते दुनिया " * 20_000  # 280,000 characters
    picked = sample(hindi)
    assert len(picked) <= SAMPLE_CHARS + 16 and set(picked) <= set(hindi + "\n")
    assert sample("short") == "short"
    # Windows spread over the whole text: a text that changes script half way is seen as mixed.
    half = "ශ්‍රී ලංකාව " * 20_000 + "नमस्ते दुनिया " * 20_000
    assert "ශ" in sample(half) and "न" in sample(half)
    with pytest.warns(ScriptWarning, match="pass script=devanagari"):
        assert len(wwho.syllabify(hindi)) > len(hindi) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wwho.syllabify("ශ්‍රී ලංකාව " * 20_000 + "Cricket! " * 1000)


def test_cli_syllabify_warns_in_one_line():
    proc = run_wwho("syllabify", "नमस्ते")
    assert proc.returncode == 0 and proc.stdout.strip() == "न | म | स | ् | त | े"
    assert proc.stderr.strip() == ("wwho: warning: only 0% of the letters of the input are sinhala; it is 100% "
                                   "devanagari: pass --script devanagari")
    assert run_wwho("syllabify", "--script", "devanagari", "नमस्ते").stderr == ""


def test_training_in_the_wrong_script_warns(sinhala_corpus, tmp_path):
    proc = run_wwho("train", "--script", "devanagari", "--vocab-size", "2000", "--quiet", "--no-verify",
                    "--out", tmp_path / "out", sinhala_corpus)
    assert proc.returncode == 0, proc.stderr
    assert "wwho: warning: only 0% of the letters of the corpus are devanagari; it is 100% sinhala: pass " \
           "--script / script=sinhala" in proc.stderr


def test_unreachable_vocabulary_size_is_said(sinhala_corpus):
    with pytest.warns(VocabSizeWarning, match=r"the vocabulary has [0-9,]+ tokens, not the 32,000 asked.*lower "
                                              r"--min-freq \(now 2\)"):
        tok = wwho.SGPETokenizer.train(sinhala_corpus, vocab_size=32_000, progress=False, workers=1, min_freq=2)
    assert tok.vocab_size < 32_000
    with pytest.warns(VocabSizeWarning, match=r"not the 32,000 asked: the training text has no pair of tokens left "
                                              r"to merge\. To reach 32,000, train on more text$"):
        wwho.SGPETokenizer.train(sinhala_corpus, vocab_size=32_000, progress=False, workers=1)  # min_freq=1
    with pytest.warns(VocabSizeWarning, match="not the 30,000 asked"):
        wwho.ByteBPE.train(sinhala_corpus, vocab_size=30_000, progress=False, workers=1)


def test_cli_says_an_unreachable_vocabulary_size(sinhala_corpus, tmp_path):
    proc = run_wwho("train", "--kind", "bytelevel", "--vocab-size", "30000", "--min-frequency", "3", "--quiet",
                    "-o", tmp_path / "b", sinhala_corpus)
    assert proc.returncode == 0, proc.stderr
    assert "wwho: warning: the vocabulary has" in proc.stderr and "not the 30,000 asked" in proc.stderr


@pytest.mark.parametrize("corpus", [["ශ්‍රී ලංකාව\nදෙවන පේළිය"], ["x" * 300], ["hello world"]])
def test_text_given_as_a_corpus_is_a_one_line_error(corpus):
    with pytest.raises(CorpusError, match="train_from_iterator") as info:
        wwho.SGPETokenizer.train(corpus, vocab_size=400, progress=False)
    assert "\n" not in str(info.value).replace("\\n", "")


def test_export_hf_refuses_a_meta_directory(sinhala_corpus, tmp_path):
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    sgpe = wwho.SGPETokenizer.train(sinhala_corpus, vocab_size=600, progress=False, workers=1)
    wwho.MetaTokenizer(sgpe, tiktoken_file=O200K_FILE).save(tmp_path / "meta")
    for path in (tmp_path / "meta", tmp_path / "meta" / "vocab.json"):
        proc = run_wwho("export", "hf", path, "-o", tmp_path / "hf")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "is a meta vocabulary" in proc.stderr and "WWHOTokenizer.from_pretrained" in proc.stderr
    assert not (tmp_path / "hf" / "tokenizer.json").exists()


def test_wwho_hf_without_transformers_names_the_extra():
    code = "import sys; sys.modules['transformers'] = None\nfrom wwho.hf import WWHOTokenizer"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1
    assert "wwho.hf needs transformers" in proc.stderr and "pip install 'wwho[hf]'" in proc.stderr


def test_plurals():
    assert plural(1, "file") == "1 file" and plural(2, "file") == "2 files" and plural(0, "file") == "0 files"
    assert plural(1, "boundary token") == "1 boundary token" and plural(1_000, "line") == "1,000 lines"


def test_version_and_train_help():
    proc = run_wwho("--version")
    assert (proc.returncode, proc.stdout.strip()) == (0, f"wwho {wwho.__version__}")
    proc = run_wwho("train", "--help")
    assert proc.returncode == 0
    from wwho.cli import TRAIN_KINDS

    for kind in TRAIN_KINDS:
        assert f"  {kind} " in proc.stdout, kind
    assert "--min-frequency" in proc.stdout


#: What neither ``import wwho`` nor ``wwho --version`` may import: each is imported where it is used.
HEAVY = ("numpy", "tokenizers", "regex", "tqdm", "gguf", "tiktoken")
HEAVY_WWHO = ("wwho.extend", "wwho.evaluate", "wwho.eval_specs", "wwho.cut_structure")


def _imported_by(code: str) -> tuple[list[str], str]:
    """Run ``code`` in a fresh interpreter; the heavy modules it left in ``sys.modules``, and its stdout."""
    probe = (f"{code}\nimport sys\n"
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} "
             f"or m.startswith({HEAVY_WWHO!r})), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return eval(proc.stderr.strip().splitlines()[-1]), proc.stdout  # noqa: S307 -- our own repr of a list


def test_import_wwho_is_light():
    """Start-up: ``import wwho`` loads the core and nothing heavy; each public name loads on first use."""
    assert _imported_by("import wwho")[0] == []
    loaded, out = _imported_by("import wwho\nfrom wwho import ByteBPE, words\n"
                               "print(ByteBPE.__name__, words.__name__, set(wwho.__all__) <= set(dir(wwho)))")
    assert out.split() == ["ByteBPE", "wwho.words", "True"]
    assert "numpy" not in loaded  # numpy only when arrays are asked for
    for name in wwho.__all__:
        assert getattr(wwho, name) is not None, name
    assert _imported_by("import wwho\nwwho.sgpe.SGPETokenizer\nwwho.bytelevel.ByteBPE")[0] == []
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        wwho.NoSuchThing  # noqa: B018


def test_the_binary_kind_is_reached_from_import_wwho_alone():
    """``wwho.binary`` (and ``wwho.BinaryTokenizer``, one of the four kinds) after ``import wwho``
    alone, in a fresh interpreter: not only once another import has loaded it."""
    out = _imported_by("import wwho\nprint(wwho.binary.BinaryTokenizer is wwho.BinaryTokenizer)")[1]
    assert out.split() == ["True"]


def test_the_package_tells_type_checkers_it_is_typed():
    """PEP 561: without ``py.typed`` mypy skips an installed wwho and every value is ``Any``."""
    from importlib.resources import files

    assert files("wwho").joinpath("py.typed").is_file()


def test_version_imports_nothing_heavy():
    """``wwho --version`` builds the parser of every verb, none of which imports a heavy module."""
    loaded, out = _imported_by("import sys\nsys.argv = ['wwho', '--version']\nfrom wwho.cli import main\n"
                               "try:\n    main()\nexcept SystemExit:\n    pass")
    assert out.strip() == f"wwho {wwho.__version__}"
    assert loaded == []


def test_quiet_sgpe_training_does_not_import_tqdm(sinhala_corpus, tmp_path):
    """Training's fixed cost: ``--quiet`` shows no bar, so nothing imports tqdm (the export check
    included)."""
    argv = ["train", "--kind", "sgpe", "--vocab-size", "600", "--quiet", "-o", str(tmp_path / "out"),
            str(sinhala_corpus)]
    loaded, _ = _imported_by(f"from wwho.cli import main\nassert main({argv!r}) == 0")
    assert "tqdm" not in {m.split(".")[0] for m in loaded}
    assert (tmp_path / "out" / "tokenizer.json").is_file()


@pytest.mark.parametrize("kind", ["sgpe", "bytelevel", "binary"])
def test_flags_agree_across_kinds(kind, sinhala_corpus, tmp_path):
    """--min-freq and --min-frequency, --out and -o, --quiet and --no-progress on every kind."""
    size = "400" if kind == "binary" else "600"
    extra = ["--reserve", "0"] if kind == "binary" else ["--no-verify"] if kind == "sgpe" else []
    outputs = {}
    for n, (freq, out, quiet) in enumerate([("--min-freq", "-o", "--quiet"),
                                            ("--min-frequency", "--out", "--no-progress")]):
        target = tmp_path / (f"o{n}.json" if kind == "binary" else f"o{n}")
        proc = run_wwho("train", "--kind", kind, "--vocab-size", size, freq, "3", out, target, quiet, *extra,
                        sinhala_corpus)
        assert proc.returncode == 0, proc.stderr
        assert "it/s" not in proc.stderr and "%|" not in proc.stderr  # no progress bar
        outputs[n] = target
    first, second = (p if kind == "binary" else p / ("vocab.json" if kind == "sgpe" else "ranks.tiktoken")
                     for p in outputs.values())
    assert first.read_bytes() == second.read_bytes()
    proc = run_wwho("train", "--kind", kind, "--vocab-size", size, "--min-freq", "3", "--min-frequency", "4",
                    "-o", tmp_path / "x", sinhala_corpus)
    assert proc.returncode == 2 and "given twice" in proc.stderr


def test_source_build_without_cargo_fails_at_once(tmp_path):
    """The build backend (build_backend/wwho_build.py, maturin behind a check) refuses in one line,
    naming what to install, when cargo is not on PATH: maturin alone would download a toolchain."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    hooks = ["get_requires_for_build_wheel()", "get_requires_for_build_editable()", "get_requires_for_build_sdist()",
             f"prepare_metadata_for_build_wheel({str(tmp_path)!r})", f"build_wheel({str(tmp_path)!r})",
             f"build_sdist({str(tmp_path)!r})"]
    bare = tmp_path / "bin"  # a PATH with python but no cargo
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    for hook in hooks:
        code = f"import sys; sys.path.insert(0, 'build_backend'); import wwho_build; wwho_build.{hook}"
        proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60,
                              env={"PATH": str(bare), "MATURIN_NO_INSTALL_RUST": ""})
        assert proc.returncode == 1, (hook, proc.stderr[-2000:])
        assert proc.stderr.strip() == ("wwho needs a Rust toolchain to build from source: install Rust 1.85 or "
                                       "newer from https://rustup.rs, or install a wheel"), hook
    assert list(tmp_path.iterdir()) == [bare]  # nothing was built or written


@pytest.mark.parametrize("version, refused", [("1.63.0", True), ("1.84.1", True), ("1.85.0", False), ("1.95.0", False)])
def test_source_build_with_an_old_cargo_fails_at_once(tmp_path, version, refused):
    """A cargo older than the crate's ``rust-version`` (Debian 12 packages 1.63) is refused in one line
    naming both versions, before maturin fetches a crate."""
    root = Path(__file__).resolve().parent.parent
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    cargo = bare / "cargo"
    cargo.write_text(f"#!/bin/sh\necho 'cargo {version} (0000000 2022-01-01)'\n")
    cargo.chmod(0o755)
    code = "import sys; sys.path.insert(0, 'build_backend'); import wwho_build; wwho_build._need_cargo()"
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60,
                          env={"PATH": str(bare)})
    if refused:
        assert proc.returncode == 1
        assert proc.stderr.strip() == (f"wwho needs Rust 1.85 or newer to build from source, and {cargo} is "
                                       f"{version}: install Rust 1.85 or newer from https://rustup.rs, or install a wheel")
    else:
        assert proc.returncode == 0, proc.stderr


def test_the_latin_warning_says_what_the_schema_keeps_whole():
    """Each script's warning says what it does with Latin text: every bundled schema but Sinhala's
    keeps grapheme clusters whole, not each character as a piece of its own."""
    import warnings

    from wwho import syllabify

    for script, words in (("sinhala", "each of its characters is a piece"),
                          ("devanagari", "each of its grapheme clusters is a piece")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            syllabify("hello world, e\u0301 and a flag", script)
        assert any(words in str(w.message) for w in caught), (script, [str(w.message) for w in caught])


def test_wwho_hf_with_a_broken_transformers_says_why_not_install_it():
    # a dependency of transformers failing is not reported as "transformers ... is not installed"
    code = ("import sys, types\nbroken = types.ModuleType('transformers')\n"
            "def __getattr__(name):\n    raise ImportError('cannot import name X from huggingface_hub.utils', "
            "name='huggingface_hub.utils')\nbroken.__getattr__ = __getattr__\nsys.modules['transformers'] = broken\n"
            "from wwho.hf import WWHOTokenizer")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1
    assert "wwho.hf cannot import transformers: cannot import name X from huggingface_hub.utils" in proc.stderr
    assert "not installed" not in proc.stderr


def test_one_version_in_the_three_places_it_is_written():
    """``pyproject.toml`` (the wheel's metadata), ``rust/Cargo.toml`` (the core, checked against the
    package at import) and ``wwho.__version__`` (``wwho --version``) say the same version: bumping
    one alone gave a wheel whose metadata and command disagree."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    crate = tomllib.loads((root / "rust" / "Cargo.toml").read_text(encoding="utf-8"))["package"]["version"]
    assert project == crate == wwho.__version__
