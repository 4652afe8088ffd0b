"""Shared test helpers: where the real data lives, and skipping cleanly when it is absent."""

from __future__ import annotations

import contextlib
import os
import signal
import warnings
from collections import Counter
from pathlib import Path

import pytest

# A test run started in the background by a shell without job control (`make test &`, nohup, some
# CI runners) inherits SIGINT ignored, and Python then keeps ignoring it, in this process and in the
# commands the tests start. The Ctrl-C tests need it delivered as a terminal delivers it: a Python
# handler here is reset to the default in every child at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def deliver_signals() -> None:
    """``preexec_fn`` of a command a test interrupts or ends: SIGINT, SIGTERM and SIGHUP at their
    defaults and not blocked in the child, whatever the test process inherited or a library left in
    it (an ignored or blocked signal survives ``exec``: a full run once saw every start-up interrupt
    ignored this way, and a suite started under ``nohup`` ignores SIGHUP)."""
    stops = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    for sig in stops:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)


def _shared_data() -> Path:
    """``$WWHO_SHARED_DATA``, else ``../shared/data`` beside the repository (CI clones the repo
    beside shared/). A checkout elsewhere (a git worktree in another folder) sets
    ``WWHO_SHARED_DATA``; without the folder, the tests that need it are skipped, saying so."""
    if os.environ.get("WWHO_SHARED_DATA"):
        return Path(os.environ["WWHO_SHARED_DATA"])
    return Path(__file__).resolve().parents[2] / "shared" / "data"


DATA = _shared_data()
CORPORA = DATA / "corpora"
#: The verified o200k_base ranks file (tiktoken's own download, kept offline).
O200K_FILE = DATA / "tiktoken" / "o200k_base.tiktoken"
#: Set WWHO_FULL_CORPORA=1 to run corpus tests on whole files instead of slices.
FULL = os.environ.get("WWHO_FULL_CORPORA") == "1"


def kill_after_checkpoints(monkeypatch, train, count: int = 2) -> None:
    """Run ``train()`` as if killed right after its ``count``-th SGPE checkpoint was written (a
    KeyboardInterrupt from ``checkpoints.save``), then give ``save`` back."""
    from wwho.sgpe import checkpoints

    real_save = checkpoints.save
    calls = []

    def save_then_die(*args, **kwargs):
        real_save(*args, **kwargs)
        calls.append(1)
        if len(calls) == count:
            raise KeyboardInterrupt

    monkeypatch.setattr(checkpoints, "save", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        train()
    monkeypatch.setattr(checkpoints, "save", real_save)


def corpus_files(*langs: str) -> list[Path]:
    if not CORPORA.is_dir():
        return []
    return sorted(p for lang in langs for p in (CORPORA / lang).glob("*.txt"))


def require_data(path: Path = DATA) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent: this test needs the shared data folder "
                    "(set WWHO_SHARED_DATA, or put it at ../shared/data beside the repository)")
    return path


def char_of_each_byte(text: str) -> list[int]:
    """The index of the character each byte of ``text``'s UTF-8 belongs to (surrogates by
    ``surrogatepass``): the oracle of token offsets, counted from the text, not the bytes' kinds."""
    return [k for k, ch in enumerate(text) for _ in ch.encode("utf-8", "surrogatepass")]


def read_slice(path: Path, max_bytes: int = 1_500_000) -> str:
    """The whole file, or its first ``max_bytes`` (cut at a line end) unless WWHO_FULL_CORPORA=1."""
    with open(path, encoding="utf-8") as f:
        if FULL:
            return f.read()
        text = f.read(max_bytes)
        rest = f.readline()
    return text + rest


# --- trained SGPE tokenizers shared by the SGPE and export tests -------------------------

TRAIN = {
    "sinhala": [("si", "news-bbcsinhala.txt")],
    "devanagari": [("hi", "tico19-test.txt"), ("mr", "tico19-test.txt")],
    "mixed": [("si", "news-bbcsinhala.txt"), ("hi", "tico19-test.txt")],
    # One file per language (Odia has only FLORES; these are test fixtures, not benchmark numbers).
    "bengali": [("bn", "tico19-test.txt")],
    "gurmukhi": [("pa", "ntrex128-newstest2019.txt")],
    "gujarati": [("gu", "ntrex128-newstest2019.txt")],
    "odia": [("or", "flores200-devtest.txt")],
    "tamil": [("ta", "tico19-test.txt")],
    "telugu": [("te", "ntrex128-newstest2019.txt")],
    "kannada": [("kn", "ntrex128-newstest2019.txt")],
    "malayalam": [("ml", "ntrex128-newstest2019.txt")],
    "indic": [(lang, "flores200-devtest.txt") for lang in ("si", "hi", "bn", "pa", "gu", "or", "ta", "te", "kn", "ml")],
}
EVAL = {"sinhala": ("si", "si-en"), "devanagari": ("hi", "mr", "ne", "sa", "hi-en"), "mixed": ("si-en", "hi-en"),
        "bengali": ("bn",), "gurmukhi": ("pa",), "gujarati": ("gu",), "odia": ("or",), "tamil": ("ta",),
        "telugu": ("te",), "kannada": ("kn",), "malayalam": ("ml",), "indic": ("si-en", "bn", "ta", "ml", "pa")}
#: Characters of every bundled script for fuzzed strings: conjuncts, joiners, khanda ta, addak, chillus, dot reph.
FUZZ_INDIC = (list("ශ්‍රීලංකාවනඖ") + list("नमस्तेक्षज़ँ।") + list("অ্যাৎক্ষৰ") + list("ਪੱਕਾਂੰ") + list("ક્ષર્ૐ")
              + list("ଓଡ଼ିଆ୍ୱ") + list("க்ஷஸ்ரீழ") + list("క్షత్రిం") + list("ಕೃಷ್ಣಂ") + list("അവൻ്റ\u0d4eൽ"))


@pytest.fixture(scope="session")
def tokenizers(tmp_path_factory):
    """An SGPE tokenizer per script mode, vocabulary 4000, trained on slices of the shared corpora
    (400 kB of each file; 60 kB of each FLORES file for ``indic``)."""
    from wwho.sgpe import SGPETokenizer, train_sgpe

    if not CORPORA.is_dir():
        pytest.skip(f"{CORPORA} is absent")
    out = {}
    for script, files in TRAIN.items():
        path = tmp_path_factory.mktemp(script) / "train.txt"
        size = 60_000 if script == "indic" else 400_000
        path.write_text("".join(read_slice(CORPORA / d / f, size) for d, f in files), encoding="utf-8")
        out[script] = SGPETokenizer(train_sgpe(path, vocab_size=4000, script=script, progress=False, workers=1))
    return out


#: SGPE options other than the defaults (merge scope "pieces", superwords 0.15, no dummy prefix), each trained
#: once on a mixed Sinhala + Hindi slice, for the tests that must hold for every option (export, lossless, ...).
VARIANTS = {
    "words": {"merge_scope": "words", "superword_share": 0},
    "runs": {"merge_scope": "runs", "superword_share": 0},
    "pieces": {"superword_share": 0},
    "prefix": {"prefix_space": True},
    "words-superwords-prefix": {"merge_scope": "words", "prefix_space": True, "prune_freq": 3},
    "words-punctuation": {"merge_scope": "words", "superword_share": 0, "split_punctuation": True},
    "runs-superwords-punctuation": {"merge_scope": "runs", "split_punctuation": True},
    "superwords-any-piece": {"superword_letters": False},
}


@pytest.fixture(scope="session")
def variants(tmp_path_factory):
    """name -> SGPE tokenizer (script mode "mixed", vocabulary 3000) trained with VARIANTS[name]."""
    from wwho.errors import WwhoWarning
    from wwho.sgpe import SGPETokenizer, train_sgpe

    if not CORPORA.is_dir():
        pytest.skip(f"{CORPORA} is absent")
    path = tmp_path_factory.mktemp("variants") / "train.txt"
    path.write_text(read_slice(CORPORA / "si" / "news-bbcsinhala.txt", 250_000)
                    + read_slice(CORPORA / "hi" / "tico19-test.txt", 150_000), encoding="utf-8")
    with warnings.catch_warnings():
        # The words and runs scopes with superwords: expected here (tests/test_sgpe_scopes.py checks it).
        warnings.filterwarnings("ignore", "merge_scope=.* superword merges", WwhoWarning)
        return {name: SGPETokenizer(train_sgpe(path, vocab_size=3000, script="mixed", progress=False, workers=1,
                                               **options))
                for name, options in VARIANTS.items()}


@pytest.fixture(scope="session")
def o200k():
    """tiktoken's o200k_base, loaded offline from the shared ranks file."""
    from wwho.bytelevel.tiktoken_loader import get_encoding

    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    return get_encoding("o200k_base", tiktoken_file=O200K_FILE)


# --- the real `wwho` command, in a subprocess -----------------------------------------------


def wwho_command() -> list[str]:
    """The installed ``wwho`` console script of this interpreter's environment (else ``python -m wwho``)."""
    import sys

    script = Path(sys.executable).with_name("wwho")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "wwho"]


def bound_by_permissions():
    """A ``preexec_fn`` for :mod:`subprocess` under which file permissions bind the child as they bind
    an ordinary user, so that a test of a refusal the kernel gives runs as root too: there the child
    drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (what lets root read and write any file) from its
    capability bounding set, so the command it starts has neither. None where not root; the test is
    skipped, saying why, where they cannot be dropped."""
    import ctypes
    import subprocess
    import sys

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None

    def drop() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")

    try:
        subprocess.run([sys.executable, "-c", "pass"], preexec_fn=drop, check=True, timeout=60)
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"running as root, and root's file capabilities cannot be dropped here: {exc}")
    return drop


def run_wwho(*args, env: dict | None = None, timeout: float = 300, **kwargs):
    """Run ``wwho ARGS...``; returns the CompletedProcess (text output)."""
    import subprocess

    return subprocess.run([*wwho_command(), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=env, **kwargs)


@contextlib.contextmanager
def real_server(log: Path, *tokenizers: str | Path, ignore_sigint: bool = False):
    """The real ``wwho serve`` of ``tokenizers`` (``tiktoken:o200k_base`` read from the shared ranks
    file) on 127.0.0.1 and a free port, its stderr in ``log``: (process, port). Skipped when a file
    it needs is absent. ``ignore_sigint``: started with SIGINT ignored, as a shell that is not
    interactive starts a background job."""
    import select
    import subprocess
    import sys
    import time

    for needed in [O200K_FILE, *(t for t in tokenizers if isinstance(t, Path))]:
        if not needed.exists():  # a file, or a saved tokenizer's directory
            pytest.skip(f"{needed} is absent")
    env = dict(os.environ, WWHO_TIKTOKEN_FILE=str(O200K_FILE))
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "wwho", "serve", "--host", "127.0.0.1", "--port", "0",
                                 "--tokenizer", *map(str, tokenizers)],
                                stdout=subprocess.PIPE, stderr=err, text=True, env=env,
                                preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint
                                else None)
    try:
        port = None
        deadline = time.monotonic() + 90
        while port is None and time.monotonic() < deadline and proc.poll() is None:
            if select.select([proc.stdout], [], [], 1)[0]:
                line = proc.stdout.readline()
                if line.startswith("wwho serve: http://127.0.0.1:"):
                    port = int(line.split(":")[3].split("/")[0])
        if port is None:
            pytest.fail(f"wwho serve did not start: {log.read_text()}")
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def sgpe_vocab_json(tmp_path_factory) -> dict:
    """An SGPE vocabulary trained on 1,500 lines of the bundled Sinhala sample (2,500 tokens), as
    the JSON of its vocab.json; :func:`edited` gives changed copies of it."""
    from wwho.sgpe import train_sgpe

    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    corpus = tmp_path_factory.mktemp("sgpe-vocab") / "c.txt"
    corpus.write_text("\n".join(sample.read_text(encoding="utf-8").splitlines()[:1500]), encoding="utf-8")
    return train_sgpe(corpus, vocab_size=2500, progress=False, workers=1).to_json()


@pytest.fixture(scope="module")
def metaspace_bpe_json(tmp_path_factory) -> dict:
    """An HF Metaspace BPE (byte fallback, 600 tokens) trained by HF ``tokenizers`` on 150,000
    characters of the bundled Sinhala sample, as the JSON of its tokenizer.json: a file that
    ``load_tokenizer`` hands to HF (``ByteBPE`` does not run it)."""
    import json

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    text = tmp_path_factory.mktemp("metaspace") / "text.txt"
    text.write_text(sample.read_text(encoding="utf-8")[:150_000] + "\nThe quick brown fox, 2024.\n", encoding="utf-8")
    hf = Tokenizer(models.BPE(byte_fallback=True))
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    hf.decoder = decoders.Metaspace()
    hf.train([str(text)], trainers.BpeTrainer(vocab_size=600, show_progress=False))
    return json.loads(hf.to_str())


def edited(data: dict, change) -> dict:
    """A deep copy of ``data`` after ``change(copy)``."""
    import json

    copy = json.loads(json.dumps(data))
    change(copy)
    return copy


def without_each_merge_result(data: dict):
    """``(n, text)`` for each merge of an HF BPE ``tokenizer.json``'s JSON: the file's text with
    merge ``n``'s result taken out of ``model.vocab``."""
    import json

    for n, (left, right) in enumerate(data["model"]["merges"]):
        yield n, json.dumps(edited(data, lambda d, made=left + right: d["model"]["vocab"].pop(made)))


def binary_corpus(seed: int, n: int) -> bytes:
    """``n`` bytes with frequent pairs and runs, so that binary BPE learns real merges."""
    import random

    rng = random.Random(seed)
    words = [bytes(rng.randrange(256) for _ in range(rng.randrange(2, 9))) for _ in range(40)]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) if rng.random() < 0.8 else bytes([rng.randrange(256)]) * rng.randrange(1, 40)
    return bytes(out[:n])


def train_binary_sample(n: int):
    """A binary tokenizer of 1,024 ids (with its template) trained on :func:`binary_corpus` ``(1, n)``
    cut into 512-byte windows."""
    from wwho import binary

    data = binary_corpus(1, n)
    counts: dict[bytes, int] = {}
    for i in range(0, len(data), 512):
        counts[data[i:i + 512]] = counts.get(data[i:i + 512], 0) + 1
    return binary.train_from_counts(counts, vocab_size=1024, min_frequency=2, template=True)


def one_line_error(proc) -> str:
    """Assert the process failed as the CLI promises (exit 2, one line, no traceback); return the line."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wwho: error: "), proc.stderr[-2000:]
    return lines[0]


#: Tests that feed text of another script (Latin, or another Indic script) on purpose: the
#: ScriptWarning that ``wwho.syllabify`` and SGPE training give for such input is expected there
#: and is not shown. Anywhere else one is a surprise, and pytest's warnings summary shows it.
#: (The tests that check the warning itself catch it with ``pytest.warns``: tests/test_newcomer.py.)
EXPECTED_SCRIPT_WARNINGS = {
    "test_bpe_engine.py::test_core_engine_equals_the_python_engine_on_real_text",  # real lines, English in them
    "test_bpe_engine.py::test_hf_tokenizers_choices_are_most_frequent_pairs",
    "test_script_modes.py::test_earlier_modes_retrain_to_the_same_file",  # a mostly Sinhala corpus, each script
    "test_scripts.py::test_foreign_clusters_kept_whole_examples",  # foreign clusters, each script
    "test_sgpe_scopes.py::test_merges_never_produce_a_special_or_byte_token",  # generated corpora
    "test_sgpe_superwords.py::test_superwords_never_produce_a_special_or_byte_token",
    "test_syllables.py::test_whitespace_table_of_section_2_3",  # the spec's table: "a b" among its rows
    "test_words.py::test_equals_spec_segment_into_words",  # generated text: Sinhala, Latin, digits
}


#: Test files that train on a handful of lines on purpose (hand-computed merges, special tokens,
#: error paths): a vocabulary smaller than the size asked, and its VocabSizeWarning, is expected
#: there. The tests of the warning itself catch it with ``pytest.warns``, which still sees it.
EXPECTED_VOCAB_SIZE_WARNINGS = {
    "test_binary_train.py", "test_bytelevel_train.py", "test_sgpe_train.py", "test_sgpe_superwords.py",
    "test_sgpe_scopes.py", "test_sgpe_budget.py",
    "test_docs.py::test_hf_export_names_the_class_autotokenizer_returns",  # a 3-line corpus
}


def _listed(name: str) -> list[str]:
    """The lines of a list beside this file, without comments and blank lines."""
    lines = (Path(__file__).parent / name).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


#: Measured slow tests (see the file's header): marked ``slow`` for the fast tier, ``make check``.
SLOW_TESTS = frozenset(_listed("slow_tests.txt"))
#: The modules that take longest, longest first (see the file's header): handed out first.
LONG_MODULES = tuple(_listed("module_order.txt"))


def _run_order(items) -> None:
    tests = Counter(item.path.name for item in items)
    first = {name: i for i, name in enumerate(LONG_MODULES)}
    # (stable: a module's tests keep their order)
    items.sort(key=lambda item: (first.get(item.path.name, len(first)), -tests[item.path.name], str(item.path)))


def pytest_collection_modifyitems(config, items):
    _run_order(items)
    expected = pytest.mark.filterwarnings("ignore::wwho.errors.ScriptWarning")
    small = pytest.mark.filterwarnings("ignore::wwho.errors.VocabSizeWarning")
    for item in items:
        if f"tests/{item.nodeid.split('tests/')[-1]}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        name = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        if name in EXPECTED_SCRIPT_WARNINGS:
            item.add_marker(expected)
        if item.path.name in EXPECTED_VOCAB_SIZE_WARNINGS or name in EXPECTED_VOCAB_SIZE_WARNINGS:
            item.add_marker(small)


def tokenizer_kinds(sgpe) -> dict:
    """One small tokenizer of each kind around ``sgpe``: byte-level (a few ranks), binary (trained on
    made-up counts), and, with the shared o200k_base file, the meta tokenizer and o200k itself.
    For tests that run the same check on every kind."""
    from wwho.binary import train_from_counts
    from wwho.binary.tokenizer import BinaryTokenizer
    from wwho.bytelevel import ByteBPE

    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"abc": 257})
    counts = {bytes(range(i, i + 32)): 4 for i in range(0, 200, 8)}
    out = {
        "bytelevel": ByteBPE(ranks, pattern="gpt2"),
        "sgpe": sgpe,
        "binary": BinaryTokenizer(train_from_counts(counts, vocab_size=512, min_frequency=1)),
    }
    if O200K_FILE.is_file():
        from wwho.meta import MetaTokenizer

        out["o200k"] = ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
        out["meta"] = MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE)
    return out
