"""The suite's own lists (slow_tests.txt, module_order.txt) name what exists: a stale entry would silently do nothing
(a slow test left in ``make check``, a long module no longer run first)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from conftest import LONG_MODULES, SLOW_TESTS, _run_order

TESTS = Path(__file__).resolve().parent


@functools.cache  # (slow_tests.txt names many tests of one module)
def _test_functions(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    return frozenset(name for name in names if name.startswith("test"))


def test_every_long_module_exists_once():
    assert len(set(LONG_MODULES)) == len(LONG_MODULES)
    assert [name for name in LONG_MODULES if not (TESTS / name).is_file()] == []


def test_every_slow_test_names_a_test_function_of_its_module():
    missing = []
    for nodeid in sorted(SLOW_TESTS):
        module, _, name = nodeid.partition("::")
        path = TESTS.parent / module
        function = name.split("[")[0].split("::")[-1]
        if not path.is_file() or function not in _test_functions(path):
            missing.append(nodeid)
    assert missing == []


class _Item:
    def __init__(self, module: str, name: str) -> None:
        self.path = TESTS / module
        self.name = name


def test_long_modules_come_first_and_each_module_keeps_its_order():
    items = [_Item("test_a.py", "1"), _Item(LONG_MODULES[1], "x"), _Item("test_b.py", "1"),
             _Item("test_b.py", "2"), _Item(LONG_MODULES[0], "y"), _Item("test_a.py", "2"),
             _Item("test_b.py", "3"), _Item(LONG_MODULES[1], "z")]
    _run_order(items)
    assert [(item.path.name, item.name) for item in items] == [
        (LONG_MODULES[0], "y"), (LONG_MODULES[1], "x"), (LONG_MODULES[1], "z"),
        ("test_b.py", "1"), ("test_b.py", "2"), ("test_b.py", "3"),  # then the most tests first
        ("test_a.py", "1"), ("test_a.py", "2"),
    ]
