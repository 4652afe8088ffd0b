"""Docs a user can follow: no references to files a user of the package cannot see, every code
block closed and every link to a file or a heading of the docs resolving, the class
``AutoTokenizer`` really returns named in docs/hf-export.md, and the eval plot labelled like the table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import regex

ROOT = Path(__file__).resolve().parents[1]
USER_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


#: Folders of the machine a checkout lives on: the checkout itself and the folder around it
#: (unless that is the file system's root, which every absolute path starts with).
MACHINE_FOLDERS = (str(ROOT), *([str(ROOT.parent) + "/"] if ROOT.parent != ROOT.parent.parent else []))


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: p.name)
def test_no_references_to_unpublished_files(path):
    """No relative path that leaves the repository, no absolute path into this machine's folders,
    and no design document the repository does not ship (named "spec NNN")."""
    text = path.read_text(encoding="utf-8")
    for found in re.finditer(r"(?<![.\w])\.\./[^\s)\]'\"`]+", text):
        target = (path.parent / found.group()).resolve()
        assert target.is_relative_to(ROOT), f"{path.name} points outside the repository: {found.group()!r}"
    for folder in MACHINE_FOLDERS:
        assert folder not in text, f"{path.name} names a folder of this machine: {folder!r}"
    found = re.search(r"\bspec 0\d\d\b", text, re.IGNORECASE)
    assert not found, f"{path.name}: {text[max(0, found.start() - 60):found.end() + 60]!r}"


FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def outside_code(text: str) -> list[str]:
    """The lines of a Markdown text outside fenced code blocks (CommonMark's rule: a block ends at
    a fence of the same character at least as long as the one that opened it)."""
    lines, opened = [], None
    for line in text.splitlines():
        fence = FENCE.match(line)
        if opened is None:
            if fence:
                opened = fence.group(1)
            else:
                lines.append(line)
        elif fence and fence.group(1)[0] == opened[0] and len(fence.group(1)) >= len(opened) \
                and not line.strip()[len(fence.group(1)):].strip():
            opened = None
    return lines


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``path`` (github-slugger's rule): lower case, every
    character but letters, marks, digits, ``_``, ``-`` and spaces dropped, spaces made ``-``, and
    ``-1``, ``-2`` ... after a repeated one."""
    found: set[str] = set()
    for line in outside_code(path.read_text(encoding="utf-8")):
        heading = re.match(r"#{1,6} +(.*?)[ #]*$", line)
        if heading:
            slug = regex.sub(r"[^\p{L}\p{M}\p{N}\p{Pc}\- ]", "", heading.group(1).lower()).replace(" ", "-")
            repeated, n = slug, 0
            while repeated in found:
                n += 1
                repeated = f"{slug}-{n}"
            found.add(repeated)
    return found


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: p.name)
def test_code_blocks_are_closed(path):
    """A fence left open turns the rest of the page inside out (text shown as code, code as text)."""
    lines, opened = path.read_text(encoding="utf-8").splitlines(), None
    for number, line in enumerate(lines, 1):
        fence = FENCE.match(line)
        if opened is None and fence:
            opened = (number, fence.group(1))
        elif opened and fence and fence.group(1)[0] == opened[1][0] and len(fence.group(1)) >= len(opened[1]):
            opened = None
    assert opened is None, f"{path.name}: the code block opened on line {opened[0]} is never closed"


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: p.name)
def test_links_resolve(path):
    """Every relative link names a file of the repository and, after ``#``, a heading of it."""
    text = "\n".join(outside_code(path.read_text(encoding="utf-8")))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans are not links
    broken = []
    for link in re.finditer(r"\]\(([^)\s]+)\)", text):
        target = link.group(1)
        if re.match(r"[a-z]+:", target):
            continue
        name, _, fragment = target.partition("#")
        linked = (path.parent / name).resolve() if name else path
        if not linked.exists():
            broken.append(target)
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(target)
    assert not broken, f"{path.name}: links to no file or heading: {broken}"


def test_hf_export_names_the_class_autotokenizer_returns(tmp_path):
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    import wwho

    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව\nලංකාවේ ජනතාව\n" * 30, encoding="utf-8")
    wwho.SGPETokenizer.train(corpus, vocab_size=300, progress=False, workers=1).save(tmp_path / "out")
    name = type(AutoTokenizer.from_pretrained(str(tmp_path / "out"))).__name__
    doc = (ROOT / "docs" / "hf-export.md").read_text(encoding="utf-8")
    line = next(line for line in doc.splitlines() if "AutoTokenizer.from_pretrained" in line)
    assert name in line or f"`{name}`" in doc.split("Which class `AutoTokenizer` returns")[1][:600], name


def test_eval_plot_series_are_percentages_with_unmeasured_marked_and_lossless():
    from wwho.cli.eval import plot_series
    from wwho.evaluate import Metrics

    a = Metrics("A", "si/x.txt", lines=10, words=10, tokens=20, boundaries=10, boundaries_in_cluster=1,
                boundaries_in_syllable=2, lossless_lines=9, fallback_tokens=1)
    b = Metrics("B", "si/x.txt", lines=10, words=10, tokens=30, boundaries=20, lossless_lines=10)
    b.boundaries_in_syllable = 0
    series = dict(plot_series([a, b]))
    cuts = next(t for t in series if t.startswith("in-cluster cuts"))
    assert cuts.startswith("in-cluster cuts (%)") and series[cuts]["A"] == [pytest.approx(100 * a.cluster_cut_rate)]
    assert series["lossless (%)"] == {"A": [pytest.approx(90.0)], "B": [pytest.approx(100.0)]}
    assert "tokens/word" in series and "parity" not in series  # parity was not measured for anyone
    c = Metrics("C", "si/x.txt", lines=10, words=10, tokens=20, lossless_lines=10, parity=1.5)
    assert dict(plot_series([a, c]))["parity"] == {"A": [None], "C": [1.5]}  # None: drawn as "n/m", not 0


def test_eval_plot_draws(tmp_path):
    pytest.importorskip("matplotlib")
    from wwho.cli.eval import plot
    from wwho.evaluate import Metrics

    results = [Metrics("A", "si/x.txt", lines=10, words=10, tokens=20, lossless_lines=9, parity=1.2),
               Metrics("B", "si/x.txt", lines=10, words=10, tokens=20, lossless_lines=10)]
    plot(results, str(tmp_path / "m.png"))
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_absolute_paths_of_one_machine():
    """The shared data is found through ``WWHO_SHARED_DATA`` or ``../shared/data`` beside the
    repository, never through a folder of one particular machine."""
    import subprocess

    files = subprocess.run(["git", "ls-files", "src", "tests", "benchmarks", "fuzz", "rust", "Makefile"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    own = Path(__file__).resolve()
    for name in files:
        path = ROOT / name
        if path.resolve() == own or path.suffix not in (".py", ".rs", ".sh", ".toml", ".md", "") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not any(folder in text for folder in MACHINE_FOLDERS), f"{name} names a machine's folder"
