"""The package's layering: no import cycles between wwho's modules, and no test reference in the package.

Every ``import`` statement counts, including the ones inside functions and under
``TYPE_CHECKING``: a lazy import hides a cycle from Python, not from a reader. An import of
``wwho.a.b`` is an edge to that module (not to its parent packages); ``from wwho.a import b``
is an edge to ``wwho.a.b`` when that is a module, else to ``wwho.a``.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "wwho"
#: Compiled modules: leaves of the graph (they import no wwho module).
EXTENSIONS = ("wwho._core",)


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods | dict.fromkeys(EXTENSIONS)


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        if path is None:
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t in mods and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_checker_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    graph = import_graph()
    assert "wwho.bytelevel.tokenizer" in graph and graph["wwho.bytelevel.tokenizer"]  # the walk saw imports
    assert "wwho._core" in graph["wwho.bytelevel.tokenizer"]  # an edge to the extension, not to wwho
    assert cycles(graph) == []


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module or "")
    return found


def test_the_package_never_imports_the_tests_references():
    """``tests/reference/`` holds test oracles only (issue 28): nothing under ``src/wwho`` may run them."""
    for name, path in _modules().items():
        if path is None:
            continue
        bad = {m for m in _imports(path) if m.split(".")[0] in ("reference", "tests", "conftest")}
        assert not bad, f"{name} imports {sorted(bad)}"


def test_the_pure_python_counter_is_a_test_reference_only():
    """One implementation per job at run time, the core's: the ``findall`` counter in worker
    processes with spill files lives in ``tests/reference/counting.py``, not in the package."""
    import importlib.util

    for gone in ("wwho.bpe.count", "wwho.bpe.apply", "wwho.bytelevel.safe_tiktoken"):
        assert importlib.util.find_spec(gone) is None, f"{gone} is a test reference now"
    assert importlib.util.find_spec("wwho.counting") is not None
    for name, path in _modules().items():
        if path is None:
            continue
        text = path.read_text(encoding="utf-8")
        for definition in ("def count_pieces(", "def _merge_spills(", "def merge_ids(", "def pair_table(",
                           "def merge_units(", "class SafeEncoder"):
            assert definition not in text, f"{name} defines {definition[4:-1]}, a test reference"


ROOT = PACKAGE.parents[1]
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
#: Folders whose every module docs/ARCHITECTURE.md names, in a section headed by the folder.
DOCUMENTED = {"src/wwho": ".py", "rust/src": ".rs", "tests/reference": ".py", "benchmarks": ".py",
              "fuzz": (".py", ".sh")}


def _sections(text: str) -> dict[str, str]:
    """Each ``### `folder/``` section of the page by its folder."""
    found = {}
    for chunk in re.split(r"^(?=#{2,3} )", text, flags=re.M):
        heading = re.match(r"### `([^`]+)/`", chunk)
        if heading:
            found[heading.group(1)] = chunk
    return found


def test_architecture_names_every_module_in_its_folders_table():
    sections = _sections(ARCHITECTURE.read_text(encoding="utf-8"))
    missing = []
    for top, suffix in DOCUMENTED.items():
        for folder in [ROOT / top, *sorted(p for p in (ROOT / top).rglob("*") if p.is_dir())]:
            modules = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name.endswith(suffix))
            if modules in ([], ["__init__.py"]) or "__pycache__" in folder.parts or folder.name == "fuzz_targets":
                continue
            name = folder.relative_to(ROOT).as_posix()
            section = sections.get(name)
            if section is None:
                missing.append(f"{name}/ (no section)")
                continue
            missing += [f"{name}/{m}" for m in modules if f"`{m}`" not in section]
    assert not missing, f"docs/ARCHITECTURE.md does not name: {missing}"


#: A figure: a number with a unit of speed, size, time or share, or a ratio (``5x``, ``x2.5``).
FIGURE = re.compile(r"(?<![\w.])\d[\d,.]*\s*(?:[KMG]i?B/s|[KMGk]i?B\b|ms\b|µs\b|ns\b|s\b|%|times\b)"
                    r"|\b\d+(?:\.\d+)?x\b|\bx\d")


def test_architecture_carries_no_figures():
    """Measurements live in docs/benchmarks.md; prose that carries them drifts."""
    for number, line in enumerate(ARCHITECTURE.read_text(encoding="utf-8").splitlines(), 1):
        found = FIGURE.search(line)
        assert not found, f"docs/ARCHITECTURE.md:{number}: {found.group(0)!r} in {line.strip()[:100]!r}"


def test_the_figure_pattern():
    for figure in ("85 MB/s", "0.20 s", "28%", "5x", "x2.51", "12.6 MB", "4 MiB", "30-60 ms"):
        assert FIGURE.search(figure), figure
    for prose in ("`<0x41>`", "GB9c", "UAX #29", "PEP 393", "o200k_base", "64-bit", "1, 2 or 4 bytes"):
        assert not FIGURE.search(prose), prose


RUST = Path(__file__).resolve().parents[1] / "rust" / "src"
_RUST_SKIP = re.compile(
    r"//[^\n]*|/\*.*?\*/"  # comments (doc comments too: a link is no dependency)
    r"|b?r(#*)\".*?\"\1"  # raw strings
    r"|b?\"(?:\\.|[^\\\"])*\""  # strings
    r"|b?'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'",  # characters (not lifetimes)
    re.S,
)
_RUST_PATH = re.compile(r"\b(crate\s*::|(?:super\s*::\s*)+)\s*|\bmod\s+(\w+)\s*\{|[{}]")
_RUST_STEP = re.compile(r"(super\s*::\s*)+|(\w+)")


def _rust_names(text: str, at: int) -> list[str]:
    """The first name of each path at ``text[at:]``: ``a::b`` gives ``a``, ``{a, b::{c}}`` gives ``a``, ``b``."""
    if text[at] != "{":
        m = re.match(r"\w+", text[at:])
        return [m.group()] if m else []
    names, depth, start = [], 0, True
    for m in re.finditer(r"[{},]|\w+", text[at:]):
        token = m.group()
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            if depth == 0:
                break
        elif token == ",":
            start = depth == 1
        elif start and depth == 1:
            names.append(token)
            start = False
    return names


def rust_references(text: str, path: list[str]) -> set[str]:
    """Top-level modules that Rust source ``text`` of the module at ``path`` (``["py", "count"]``)
    names: ``crate::x``, ``$crate::x``, ``use crate::{x, y::z}``, and ``super::`` paths that climb
    to the crate root (counted from the file's module and the inline ``mod m { ... }`` around them)."""
    text = _RUST_SKIP.sub(" ", text)
    found: set[str] = set()
    stack: list[str | None] = []  # per open brace: the inline module it opens, if any
    for m in _RUST_PATH.finditer(text):
        token = m.group()
        if m.group(2):
            stack.append(m.group(2))
        elif token == "{":
            stack.append(None)
        elif token == "}":
            if stack:
                stack.pop()
        elif m.group(1).startswith("crate"):
            found.update(_rust_names(text, m.end()))
        else:
            here = path + [name for name in stack if name]
            up = m.group(1).count("super")
            if up >= len(here):  # climbs to the crate root
                found.update(_rust_names(text, m.end()))
    return found


def rust_module_graph() -> dict[str, set[str]]:
    """The crate's top-level modules (``rust/src/x.rs`` and ``rust/src/x/``) and which name which."""
    files: dict[str, list[tuple[Path, list[str]]]] = {}
    for file in RUST.rglob("*.rs"):
        parts = list(file.relative_to(RUST).with_suffix("").parts)
        if parts == ["lib"]:
            continue
        if parts[-1] == "mod":
            parts = parts[:-1]
        files.setdefault(parts[0], []).append((file, parts))
    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, sources in files.items():
        for file, parts in sources:
            names = rust_references(file.read_text(encoding="utf-8"), parts)
            graph[module].update(n for n in names if n in graph and n != module)
    return graph


def test_the_rust_checker_reads_paths():
    text = """use crate::{a, b::{c, d}, e::f};
    // crate::commented
    let s = "crate::quoted"; let c = '"';
    mod tests { use super::*; fn t() { super::super::g::h(); } }
    fn k() { $crate::i::j!(); super::l::m(); }
    """
    assert rust_references(text, ["x"]) == {"a", "b", "e", "g", "i", "l"}
    assert rust_references(text, ["x", "y"]) == {"a", "b", "e", "i"}


def test_no_rust_module_cycles():
    """The core's modules (``rust/src``) form layers, as the package's do: no module names one that
    names it back, through any chain (a cycle is listed by its modules)."""
    graph = rust_module_graph()
    assert "units" in graph["sgpe"] and graph["py"]  # the walk saw references
    assert cycles(graph) == []


def _string_errors(text: str) -> list[str]:
    """Each ``Result<T, E>`` of Rust source ``text`` whose error ``E`` is a bare string (``String``,
    ``&str``, ``Vec<String>``), nested generics and line breaks included; comments and strings skipped."""
    text = _RUST_SKIP.sub(" ", text)
    found = []
    for m in re.finditer(r"\bResult\s*<", text):
        depth, i, parts, start = 1, m.end(), [], m.end()
        while depth and i < len(text):
            c = text[i]
            if c in "<([":
                depth += 1
            elif c in ")]" or (c == ">" and text[i - 1] != "-"):
                depth -= 1
            elif c == "," and depth == 1:
                parts.append(text[start:i])
                start = i + 1
            i += 1
        parts.append(text[start : i - 1])
        if len(parts) == 2 and re.fullmatch(r"(?:&\s*(?:'\w+\s*)?str|String|Vec\s*<\s*String\s*>)", parts[1].strip()):
            found.append(" ".join(text[m.start() : i].split()))
    return found


def test_the_string_error_finder():
    text = """fn a() -> Result<Vec<(Vec<u8>, u32)>, String> {}
    fn b(f: impl FnMut(u64) -> Result<(), String>) -> Result<u8,
        &'static str> {}
    fn c() -> Result<Vec<String>, CountError> {} // Result<(), String>
    fn d() -> PyResult<String> {}"""
    assert _string_errors(text) == ["Result<Vec<(Vec<u8>, u32)>, String>", "Result<(), String>",
                                    "Result<u8, &'static str>"]


def test_the_core_reports_typed_errors():
    """Every error of the core is an enum (or type) that says what went wrong and where, never a
    message string: the bindings choose the Python exception by the variant (``py::errors``)."""
    found = [f"{path.relative_to(RUST.parent.parent).as_posix()}: {sig}" for path in sorted(RUST.rglob("*.rs"))
             for sig in _string_errors(path.read_text(encoding="utf-8"))]
    assert not found, found


#: A measured figure in the package's prose: a time something took or costs, a size something
#: took to do, a speed ratio or a throughput. A limit or default stated as its value (``at most
#: 5 s``, ``default 64 MiB``, ``16 MiB``) is a constant of the design, not a measurement.
_NUMBER = r"\d[\d,.]*(?:\s*[-–]\s*\d[\d,.]*)?"
_TIME = (rf"(?:{_NUMBER}\s*(?:ns|µs|us|ms|s|sec|seconds?|minutes?|hours?)\b"
         r"|(?:a|one|half\s+a|a\s+tenth\s+of\s+a|a\s+few|several)\s+(?:seconds?|minutes?|hours?)\b)")
_SIZE = rf"{_NUMBER}\s*(?:[KMGT]i?B|bytes)\b"
_ABOUT = r"(?:(?:about|some|nearly|almost|roughly|around|over|under|only|just|~)\s*)?"
MEASURED = re.compile(
    rf"\b(?:took|takes?|taking|costs?|costing|spent|spends?|lasts?|lasted|needs?|needed)\s+{_ABOUT}{_TIME}"
    rf"|\b(?:took|kept|some)\s+{_ABOUT}{_SIZE}"
    rf"|(?:{_TIME}|{_SIZE})\s+to\s+(?:react|parse|build|load|run|read|write|train|encode|decode|compile|import)\b"
    r"|\b(?:twice|thrice|half|\w+\s+times)\s+as\s+(?:fast|slow|long|quick)\b"
    r"|(?:\btimes|%|\dx)\s+(?:faster|slower|quicker)\b"
    r"|(?<![\\\w])x\d+(?:\.\d+)?\b"
    rf"|{_NUMBER}\s*(?:[KMGT]i?B|tokens?|lines?|chars?|characters?|bytes?)\s*/\s*s\b",
    re.I)


def _prose(path: Path) -> list[tuple[int, str]]:
    """The comments and docstrings of a module, each as ``(first line, text)``; a block of
    comment lines is one text, its lines kept (a figure may run over a line break)."""
    source = path.read_text(encoding="utf-8")
    found: list[tuple[int, str]] = []
    block: list[str] = []
    start = last = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        if block and line != last + 1:
            found.append((start, "\n".join(block)))
            block = []
        if not block:
            start = line
        block.append(token.string.lstrip("#:").strip())
        last = line
    if block:
        found.append((start, "\n".join(block)))
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            found.append((node.lineno, node.value.value))
    return found


def measured_figures(path: Path) -> list[str]:
    """Each measured figure in ``path``'s comments and docstrings, as ``path:line: figure in context``."""
    return [f"{path.relative_to(ROOT)}:{line + text.count(chr(10), 0, m.start())}: {m.group(0)!r} in "
            f"{' '.join(text[max(0, m.start() - 40):m.end() + 40].split())!r}"
            for line, text in _prose(path) for m in MEASURED.finditer(text)]


def test_the_package_prose_carries_no_measured_figures():
    """Measurements live in docs/benchmarks.md and the README's results; a comment that carries one
    drifts from the code it describes. Say the reason in words, or point at docs/benchmarks.md."""
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in measured_figures(path)]
    assert not found, "\n".join(found)


def test_the_measured_figure_pattern():
    for measured in ("rebuilding them took 80 ms", "costs about a second", "20,000 take a second",
                     "(44 s to react on a large run)", "some 20 GB to parse", "takes about twice as long",
                     "several times slower", "x2.3 over HF", "12% faster", "85 MB/s", "a tenth of a second to build",
                     "merges cost 0.12-0.18 s as Python sets", "kept 56 MB for good", "2.5x faster"):
        assert MEASURED.search(measured), measured
    for constant in ("at most 5 s", "(default 64 MiB)", "a row longer than 16 MiB", "batches of about 8 MB of text",
                     "10 ms, at most 200 ms", "(4.4 MB)", "``\\x1b``", "0x41", "four times as large",
                     "ends: shrinking by 1%", "keeps one line under ~400 MB", "2**24 tokens", "a tenth of the memory"):
        assert not MEASURED.search(constant), constant
