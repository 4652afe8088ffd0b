"""The README's examples, run as written (doctest-style), so the README cannot drift from what works.

Every fenced block is either run or carries ``<!-- readme-test: skip: REASON -->`` on the line
before it. Python blocks run in order in one namespace; a line ``EXPR  # LITERAL`` (a Python literal
after the comment sign) asserts that ``EXPR`` equals it. Shell blocks (``sh``) run line by line with
the installed ``wwho`` and must exit 0. The folder they run in holds ``corpus/`` (the bundled
Sinhala sample) and llama.cpp's ``ggml-vocab-llama-bpe.gguf``; ``WWHO_TIKTOKEN_FILE`` names the
o200k_base file, as the README says to do offline.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import warnings
from importlib import resources
from pathlib import Path

import pytest
from conftest import DATA, O200K_FILE

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
MARK = re.compile(r"<!-- readme-test: skip: (.+?) -->\s*$")
GGUF = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"


def blocks() -> list[tuple[int, str, str, str | None]]:
    """``(line, language, code, skip reason)`` of every fenced block."""
    text = README.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = MARK.search(before)
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2), skip.group(1) if skip else None))
    return out


def with_checks(code: str) -> str:
    """``EXPR  # LITERAL`` lines become ``assert (EXPR) == LITERAL``."""
    lines = []
    for line in code.splitlines():
        expr, sep, comment = line.partition("  #")
        try:
            expected = ast.literal_eval(comment.strip()) if sep else None
            ast.parse(expr.strip(), mode="eval")
            parsed = sep and expr.strip() and not line.startswith(" ")
        except (ValueError, SyntaxError):
            parsed = False
        lines.append(f"assert ({expr.strip()}) == {expected!r}, {expr.strip()!r}" if parsed else line)
    return "\n".join(lines)


def test_every_block_runs_or_says_why_not():
    for line, language, _, skip in blocks():
        assert language in ("python", "sh") or skip, f"README.md:{line}: a ```{language} block without a marker"
        if skip:
            assert len(skip) > 20, f"README.md:{line}: say why the block is not run"


def test_literal_checks_are_found():
    code = with_checks('wwho.syllabify("ශ්‍රී ලංකාව", leading_space=True)     # [\'ශ්‍රී\', \' ලං\', \'කා\', \'ව\']')
    assert code.startswith("assert (wwho.syllabify(")
    assert with_checks("x = 1  # a comment") == "x = 1  # a comment"


@pytest.fixture
def workdir(tmp_path_factory):
    if not O200K_FILE.is_file() or not GGUF.is_file():
        pytest.skip(f"{O200K_FILE} or {GGUF} is absent")
    root = tmp_path_factory.mktemp("readme")
    (root / "corpus").mkdir()
    sample = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8")
    (root / "corpus" / "si.txt").write_text(sample, encoding="utf-8")
    (root / GGUF.name).symlink_to(GGUF)
    return root


def test_python_examples(workdir, monkeypatch):
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    code = [(line, c) for line, lang, c, skip in blocks() if lang == "python" and not skip]
    assert len(code) >= 2
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a small corpus gives a smaller vocabulary than asked: said, not failed
        for line, block in code:
            exec(compile(with_checks(block), f"README.md:{line}", "exec"), namespace)  # noqa: S102


def test_shell_examples(workdir):
    env = {**os.environ, "WWHO_TIKTOKEN_FILE": str(O200K_FILE),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    code = [(line, c) for line, lang, c, skip in blocks() if lang == "sh" and not skip]
    assert code
    for line, block in code:
        for command in block.splitlines():
            if not command.strip():
                continue
            proc = subprocess.run(["bash", "-c", command], cwd=workdir, env=env, capture_output=True, text=True,
                                  timeout=600, check=False)
            assert proc.returncode == 0, f"README.md:{line}: {command}\n{proc.stderr[-2000:]}"
            if "--tokens" in command and "o200k_base" in command:
                assert "<0x" in proc.stdout and "\ufffd" not in proc.stdout
    assert (workdir / "ids.txt").read_text().split()
