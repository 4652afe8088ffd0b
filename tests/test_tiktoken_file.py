"""One name for the offline tiktoken file (wwho.tiktoken_file): ``tiktoken_file=``, ``--tiktoken-file``,
``WWHO_TIKTOKEN_FILE``, honoured by every API and verb; the old spellings warn; messages end with the fix."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings

import pytest
from conftest import O200K_FILE, run_wwho

import wwho
from wwho.errors import VocabError
from wwho.tiktoken_file import ENV, FIX, missing, ranks_file_for

pytestmark = pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")


def _env(**extra) -> dict:
    """An environment with no tiktoken file anywhere and an empty tiktoken cache, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENV)}
    return {**env, "TIKTOKEN_CACHE_DIR": "/nonexistent/wwho-empty-cache", **extra}


def test_resolution_order(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV, raising=False)
    assert ranks_file_for("o200k_base") is None
    monkeypatch.setenv(ENV, "/a")
    assert ranks_file_for("o200k_base") == (__import__("pathlib").Path("/a"), ENV)
    monkeypatch.setenv(ENV + "_O200K_BASE", "/b")
    assert ranks_file_for("o200k_base")[1] == ENV + "_O200K_BASE"
    assert ranks_file_for("o200k_base", tmp_path)[1] == "tiktoken_file"


def test_message_ends_with_the_fix():
    message = missing("o200k_base", "somewhere")
    assert message.endswith("(the file is o200k_base.tiktoken, tiktoken's download)")
    assert FIX in message and "--tiktoken-file PATH" in message and "WWHO_TIKTOKEN_FILE=PATH" in message


def test_from_tiktoken_honours_the_environment_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # nothing there
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(VocabError, match=r"not available offline.*To fix: pass tiktoken_file=PATH"):
        wwho.ByteBPE.from_tiktoken("o200k_base")
    monkeypatch.setenv(ENV, str(O200K_FILE))
    enc = wwho.ByteBPE.from_tiktoken("o200k_base")  # the bug: this ignored WWHO_TIKTOKEN_FILE
    assert enc.encode("Hello world") == [13225, 2375]
    monkeypatch.setenv(ENV, str(tmp_path / "missing.tiktoken"))
    with pytest.raises(VocabError, match=r"missing.tiktoken \(from WWHO_TIKTOKEN_FILE\): no such file. To fix"):
        wwho.ByteBPE.from_tiktoken("o200k_base")


def test_the_shared_variable_serves_only_the_encoding_whose_file_it_holds(monkeypatch, tmp_path):
    """WWHO_TIKTOKEN_FILE set for o200k_base (as the README says) does not stand for cl100k_base: the
    message says so and names the variable for one encoding, and tiktoken's cache is looked at."""
    from wwho.bytelevel.files import TIKTOKEN_ENCODINGS, tiktoken_cache_path

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(ENV, str(O200K_FILE))
    with pytest.raises(VocabError) as caught:
        wwho.ByteBPE.from_tiktoken("cl100k_base")
    message = str(caught.value)
    assert "WWHO_TIKTOKEN_FILE names o200k_base's, which serves o200k_base only" in message
    assert "set WWHO_TIKTOKEN_FILE_CL100K_BASE=PATH" in message and "truncated" not in message
    cached = tiktoken_cache_path(TIKTOKEN_ENCODINGS["cl100k_base"].url)
    cached.write_bytes(b"not the ranks\n")
    with pytest.raises(VocabError, match=rf"{cached.name}: sha256 .* not that of the official cl100k_base"):
        wwho.ByteBPE.from_tiktoken("cl100k_base")  # the cache's file was read
    assert wwho.ByteBPE.from_tiktoken("o200k_base").encode("Hello world") == [13225, 2375]


@pytest.mark.parametrize("how", ["argument", "variable for the encoding"])
def test_another_encodings_file_given_for_one_is_refused_by_name(monkeypatch, how):
    monkeypatch.delenv(ENV, raising=False)
    options = {}
    if how == "argument":
        options["tiktoken_file"] = O200K_FILE
    else:
        monkeypatch.setenv(ENV + "_CL100K_BASE", str(O200K_FILE))
    with pytest.raises(VocabError, match=r"this is the official o200k_base ranks file, not cl100k_base's"):
        wwho.ByteBPE.from_tiktoken("cl100k_base", **options)


def test_a_changed_file_is_named_with_where_it_came_from(monkeypatch, tmp_path):
    changed = tmp_path / "o200k_base.tiktoken"
    changed.write_bytes(O200K_FILE.read_bytes()[:-40])
    monkeypatch.setenv(ENV, str(changed))
    with pytest.raises(VocabError, match=r"o200k_base.tiktoken \(from WWHO_TIKTOKEN_FILE\): sha256 .* To fix: "
                                         r".* \(or WWHO_TIKTOKEN_FILE_O200K_BASE=PATH, for o200k_base alone\)"):
        wwho.ByteBPE.from_tiktoken("o200k_base")


def test_the_same_keyword_everywhere(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    from wwho.bytelevel.tiktoken_loader import get_encoding

    assert wwho.ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE).n_vocab == 200019
    assert get_encoding("o200k_base", tiktoken_file=O200K_FILE).n_vocab == 200019


def test_old_spellings_warn_and_still_work(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    from wwho.bytelevel.tiktoken_loader import get_encoding

    with pytest.warns(DeprecationWarning, match="ranks_path= is deprecated; use tiktoken_file="):
        enc = wwho.ByteBPE.from_tiktoken("o200k_base", ranks_path=O200K_FILE)
    assert enc.encode("Hello world") == [13225, 2375]
    with pytest.warns(DeprecationWarning, match="ranks_file= is deprecated; use tiktoken_file="):
        assert get_encoding("o200k_base", ranks_file=O200K_FILE).n_vocab == 200019
    with pytest.raises(TypeError, match="give tiktoken_file= only"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wwho.ByteBPE.from_tiktoken("o200k_base", ranks_path=O200K_FILE, tiktoken_file=O200K_FILE)


def test_encode_decode_inspect_take_the_flag_and_the_variable(tmp_path):
    for how in (["--tiktoken-file", str(O200K_FILE)], []):
        env = _env() if how else _env(WWHO_TIKTOKEN_FILE=str(O200K_FILE))
        proc = run_wwho("encode", "--tokenizer", "o200k_base", *how, "Hello world", env=env)
        assert (proc.returncode, proc.stdout) == (0, "13225 2375\n"), proc.stderr
        proc = run_wwho("decode", "--tokenizer", "o200k_base", *how, "13225", "2375", env=env)
        assert (proc.returncode, proc.stdout) == (0, "Hello world\n"), proc.stderr
        proc = run_wwho("inspect", "o200k_base", *how, env=env)
        assert proc.returncode == 0 and "200,019" in proc.stdout.replace("200019", "200,019"), proc.stderr


def test_without_the_file_the_cli_says_what_to_pass():
    proc = run_wwho("encode", "--tokenizer", "o200k_base", "Hello", env=_env())
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith("(the file is o200k_base.tiktoken, tiktoken's download)"), proc.stderr
    assert "--tiktoken-file PATH" in proc.stderr


def test_eval_takes_the_flag_it_tells_you_to_pass(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("Hello world\nශ්‍රී ලංකාව\n", encoding="utf-8")
    proc = run_wwho("eval", "--corpus", corpus, "--tokenizer", "tiktoken:o200k_base", "--json", "--quiet",
                    "--tiktoken-file", O200K_FILE, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert '"tokenizer": "tiktoken:o200k_base"' in proc.stdout


def test_meta_load_and_train_take_the_same_flag(tmp_path):
    lines = ["ශ්‍රී ලංකාව Cricket", "ලංකාවේ ජනතාව"] * 50
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = run_wwho("train", "--kind", "sgpe", "--meta", "--tiktoken-file", O200K_FILE, "--vocab-size", "400",
                    "--quiet", "--no-verify", "--out", tmp_path / "meta", corpus, env=_env())
    assert proc.returncode == 0, proc.stderr
    proc = run_wwho("encode", "--tokenizer", tmp_path / "meta", "Hello", env=_env(WWHO_TIKTOKEN_FILE=str(O200K_FILE)))
    assert (proc.returncode, proc.stdout) == (0, "13225\n"), proc.stderr


def test_demo_hint_is_whole_and_the_demo_keeps_its_vocabulary(tmp_path):
    env = _env(WWHO_SHARED_DATA=str(tmp_path / "none"))
    code = ("import wwho.demo as d; d._shared_ranks = lambda: None; import sys; "
            "sys.argv = ['demo', sys.argv[1]]; d.main()")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "demo-out")], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    hint = next(line for line in proc.stdout.splitlines() if "comparison skipped" in line)
    assert hint.endswith("(the file is o200k_base.tiktoken, tiktoken's download))"), hint
    assert "WWHO_TIKTOKEN_FILE=PATH" in hint and "..." not in hint
    saved = tmp_path / "demo-out"
    assert f"saved to {saved}/" in proc.stdout
    assert (saved / "vocab.json").is_file() and (saved / "tokenizer.json").is_file()
    assert wwho.SGPETokenizer.load(saved).vocab_size > 1000
    shutil.rmtree(saved)


@pytest.mark.skipif(not O200K_FILE.is_file(), reason="the o200k_base ranks file is absent")
def test_demo_shows_o200k_tokens_without_replacement_characters(tmp_path):
    """A byte-level token holding part of a character is shown as <0xNN>, as `wwho encode --tokens` does."""
    code = "import wwho.demo as d; import sys; sys.argv = ['demo', sys.argv[1]]; d.main()"
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "demo-out")], capture_output=True,
                          text=True, env=_env(WWHO_TIKTOKEN_FILE=str(O200K_FILE)), cwd=tmp_path, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    shown = [line for line in proc.stdout.splitlines() if line.lstrip().startswith("o200k  (")]
    assert shown, proc.stdout
    assert not any("\ufffd" in line for line in shown)
    assert any("<0x" in line for line in shown)  # the sample has characters that o200k cuts


@pytest.mark.parametrize("setting", ["none", "o200k's file in the shared variable"])
def test_an_encoding_read_through_tiktoken_is_never_downloaded(monkeypatch, tmp_path, setting):
    """r50k_base and p50k_base are read through the tiktoken package: without their file, or with
    WWHO_TIKTOKEN_FILE holding o200k_base's (which serves o200k_base only), and with a cached file
    that is not the official one, the error says what to pass; tiktoken's download is never called."""
    tiktoken_load = pytest.importorskip("tiktoken.load")
    from wwho.bytelevel.files import tiktoken_cache_path
    from wwho.bytelevel.tiktoken_loader import KNOWN, get_encoding

    def download(*args, **kwargs):
        raise AssertionError("tiktoken was asked to download")

    monkeypatch.setattr(tiktoken_load, "read_file", download)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    for var in [v for v in os.environ if v.startswith(ENV)]:
        monkeypatch.delenv(var)
    if setting != "none":
        monkeypatch.setenv(ENV, str(O200K_FILE))
    expected = ("WWHO_TIKTOKEN_FILE names o200k_base's, which serves o200k_base only" if setting != "none"
                else "the r50k_base ranks file is not available offline")
    with pytest.raises(VocabError, match=expected):
        get_encoding("r50k_base")
    cached = tiktoken_cache_path(KNOWN["p50k_base"][0])
    cached.write_bytes(b"not the ranks\n")
    with pytest.raises(VocabError, match=rf"{cached.name} \(tiktoken's cache of p50k_base\): sha256 .* wwho does not "
                                         "download it again"):
        get_encoding("p50k_base")


def test_a_changed_file_of_a_known_name_tells_the_command_line_its_option(tmp_path):
    """A cut ``o200k_base.tiktoken`` given to ``wwho encode``: the fix names ``--pattern``, the
    option the command line has, besides Python's ``pattern=``."""
    cut = tmp_path / "o200k_base.tiktoken"
    cut.write_bytes(b"".join(O200K_FILE.read_bytes().splitlines(keepends=True)[:1000]))
    proc = run_wwho("encode", "--tokenizer", str(cut), "hello world")
    assert proc.returncode == 2 and "1,000" in proc.stderr and "--pattern" in proc.stderr, proc.stderr
