"""Will a schema's grammar make a backtracking regex engine slow? A static check, at load.

The syllable engine's fast path is the grammar compiled to a Python ``re`` pattern. ``re``
backtracks: when a match fails it tries every other way the pattern could have matched the
same characters. A grammar such as ``(C*)*(C*)*(C*)* H`` has exponentially many ways to
match a run of ``C`` and takes seconds on a word of 30 consonants; ``C* C* H`` has
polynomially many. Both come from *ambiguity*, which can be decided on the grammar alone:

* positions: every class label of the grammar is a position; ``follow[p][q]`` counts the
  distinct ways the pattern can go from position ``p`` to position ``q`` (``(C*)*`` goes from
  ``C`` back to ``C`` in two ways: the inner loop or the outer one);
* **exponential** (EDA): some position has two different cycles reading the same text:
  in the product of the automaton with itself, a strongly connected component holds a pair
  ``(q, q)`` and a pair ``(p, q)`` with ``p != q``, or an edge taken two ways;
* **polynomial** (IDA): two different positions ``p``, ``q`` with loops, and a path from ``p``
  to ``q``, all three reading the same text (``C* C*``).

:func:`check_grammar` raises :class:`SchemaError` for either, naming the position. Alternatives
of single classes (``(N | Z | P)``) are one position, as the compiled pattern is one
character class. What is left is finite ambiguity, where a failed match costs at most a
constant factor more than a successful one. This module does not compile or run regexes.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from wwho.errors import SchemaError

#: Grammars with more class labels than this are refused (the bundled ones have at most 260).
MAX_POSITIONS = 2000
#: Group nesting deeper than this is refused (each level is a recursion of the parser).
MAX_DEPTH = 64
#: Pairs of positions the exponential check may look at, and states the polynomial one may
#: visit, in all (each costs memory and time): a bound on a schema's load.
MAX_PAIR_WORK = 500_000

_TOKEN = re.compile(r"\s*(?:([A-Z][A-Za-z0-9_]*)|([()|?*+]))")


@dataclass
class _Node:
    nullable: bool
    first: dict[int, int]  # position -> number of ways to start there
    last: dict[int, int]  # position -> number of ways to end there


class _Analysis:
    """Parses the grammar notation into positions and their follow multiplicities."""

    def __init__(self, grammar: str, source: str) -> None:
        self.grammar, self.source = grammar, source
        # (the trailing whitespace left out: there each start of the search would run through all of it)
        self.tokens = [(m.start(1) if m.group(1) else m.start(2), m.group(1) or m.group(2))
                       for m in _TOKEN.finditer(grammar.rstrip())]
        self.i = 0
        self.labels: list[frozenset[str]] = []
        self.offsets: list[int] = []
        self.follow: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.start: dict[int, int] = {}

    def fail(self, message: str) -> SchemaError:
        return SchemaError(f"{self.source}: grammar: {message}")

    def run(self) -> None:
        node = self.alternation(0)
        if self.i != len(self.tokens):
            raise self.fail(f"unexpected {self.tokens[self.i][1]!r} at offset {self.tokens[self.i][0]}")
        self.start = node.first

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def alternation(self, depth: int) -> _Node:
        if depth > MAX_DEPTH:
            raise self.fail(f"groups nested more than {MAX_DEPTH} deep")
        branches = [self.sequence(depth)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence(depth))
        if len(branches) == 1:
            return branches[0]
        return _Node(any(b.nullable for b in branches), _sum(b.first for b in branches),
                     _sum(b.last for b in branches))

    def sequence(self, depth: int) -> _Node:
        node = _Node(True, {}, {})
        while self.peek() not in (None, "|", ")"):
            item = self.repeat(depth)
            self.link(node.last, item.first)
            first = _sum([node.first, item.first]) if node.nullable else node.first
            last = _sum([node.last, item.last]) if item.nullable else item.last
            node = _Node(node.nullable and item.nullable, first, last)
        return node

    def repeat(self, depth: int) -> _Node:
        node = self.atom(depth)
        while self.peek() in ("?", "*", "+"):
            op = self.tokens[self.i][1]
            self.i += 1
            if op in "*+":
                self.link(node.last, node.first)  # one more round
            node = _Node(node.nullable or op != "+", node.first, node.last)
        return node

    def atom(self, depth: int) -> _Node:
        if self.i >= len(self.tokens):
            raise self.fail("incomplete expression")
        offset, token = self.tokens[self.i]
        self.i += 1
        if token == "(":
            labels = self._class_group()
            if labels is not None:
                return self.position(labels, offset)
            node = self.alternation(depth + 1)
            if self.peek() != ")":
                raise self.fail(f"unclosed group at offset {offset}")
            self.i += 1
            return node
        if token[0].isalpha():
            return self.position(frozenset([token]), offset)
        raise self.fail(f"unexpected {token!r} at offset {offset}")

    def _class_group(self) -> frozenset[str] | None:
        """``(A | B | C)`` right after ``(``: one position for the union (as the compiled regex)."""
        j, labels = self.i, []
        while j < len(self.tokens):
            token = self.tokens[j][1]
            if not token[0].isalpha() or token == "O":
                return None
            labels.append(token)
            j += 1
            if j < len(self.tokens) and self.tokens[j][1] == ")":
                self.i = j + 1
                return frozenset(labels)
            if j >= len(self.tokens) or self.tokens[j][1] != "|":
                return None
            j += 1
        return None

    def position(self, labels: frozenset[str], offset: int) -> _Node:
        if len(self.labels) >= MAX_POSITIONS:
            raise self.fail(f"more than {MAX_POSITIONS} class labels")
        self.labels.append(labels)
        self.offsets.append(offset)
        p = len(self.labels) - 1
        return _Node(False, {p: 1}, {p: 1})

    def link(self, last: dict[int, int], first: dict[int, int]) -> None:
        for p, a in last.items():
            row = self.follow[p]
            for q, b in first.items():
                row[q] = min(2, row[q] + a * b)  # only "once" or "more than once" matters


def _sum(maps) -> dict[int, int]:
    out: dict[int, int] = defaultdict(int)
    for m in maps:
        for k, v in m.items():
            out[k] = min(2, out[k] + v)
    return dict(out)


def check_grammar(grammar: str, *, source: str = "<schema>") -> None:
    """Raise :class:`SchemaError` if ``grammar`` is infinitely ambiguous (see the module docstring)."""
    a = _Analysis(grammar, source)
    a.run()
    n = len(a.labels)
    edges = {p: {q: m for q, m in a.follow[p].items()} for p in range(n)}
    component = _components(n, edges)

    def meets(*ps: int) -> bool:
        common = a.labels[ps[0]]
        for p in ps[1:]:
            common = common & a.labels[p]
        return bool(common)

    def where(p: int) -> str:
        return f"{'|'.join(sorted(a.labels[p]))} at offset {a.offsets[p]}"

    # Exponential: within one component, the pair automaton links (q, q) with a diverging pair.
    members: dict[int, list[int]] = defaultdict(list)
    for p in range(n):
        members[component[p]].append(p)
    work = 0
    for group in members.values():
        inside = set(group)
        # Only the pairs that two runs from one position can reach matter (a diagonal pair's
        # component): built from the diagonal outwards, within a bound of work, which a grammar
        # with many overlapping alternatives inside one repetition exceeds.
        pair_edges: dict[tuple[int, int], list[tuple[int, int]]] = {}
        todo = [(p, p) for p in group]
        while todo:
            p, q = todo.pop()
            if (p, q) in pair_edges:
                continue
            outs = [(p2, q2) for p2 in edges[p] if p2 in inside for q2 in edges[q] if q2 in inside and meets(p2, q2)]
            work += len(edges[p]) * len(edges[q]) + 1
            if work > MAX_PAIR_WORK:
                raise a.fail(f"the repetition around {where(p)} is too large to check for ambiguity (more than "
                             f"{MAX_PAIR_WORK:,} steps: many alternatives in one repetition begin with the same "
                             "classes); factor their common beginnings (C (V | N) for C V | C N) or drop repeats")
            pair_edges[(p, q)] = outs
            todo.extend(outs)
        pair_component = _components_of(pair_edges)
        for (p, q), outs in pair_edges.items():
            if p != q:
                continue
            for p2, q2 in outs:
                same = pair_component[(p, q)] == pair_component[(p2, q2)]
                if same and (p2 != q2 or edges[p][p2] > 1):
                    raise a.fail(f"the repetition around {where(p)} can match the same text in exponentially "
                                 "many ways (like (C*)* or (C | C)*): a backtracking regex engine would take "
                                 "exponential time on some words; rewrite it without nested or overlapping "
                                 "repetition")
        diagonal = {pair_component[(x, x)] for x in group}
        for (p, q) in pair_edges:
            if p != q and pair_component[(p, q)] in diagonal:
                raise a.fail(f"the repetition around {where(p)} can match the same text in exponentially "
                             "many ways: rewrite it without nested or overlapping repetition")

    # Polynomial: p != q, both on cycles, in different components, p -> p, p -> q, q -> q on one word.
    looping = [p for p in range(n) if any(component[q] == component[p] for q in edges[p])]
    for p in looping:
        for q in looping:
            if component[p] == component[q]:
                continue
            found, steps = _three_paths(p, q, edges, component, meets)
            work += steps
            if work > MAX_PAIR_WORK:
                raise a.fail(f"the repetitions around {where(p)} and {where(q)} are too many to check for "
                             f"ambiguity (more than {MAX_PAIR_WORK:,} steps); write the grammar with fewer "
                             "repetitions of the same classes")
            if found:
                raise a.fail(f"the repetitions around {where(p)} and {where(q)} can split the same text in "
                             "many ways (like C* C*): a backtracking regex engine would take polynomial time "
                             "on long runs; merge them into one")


def _three_paths(p: int, q: int, edges, component, meets) -> tuple[bool, int]:
    """Is there a word w with p -w-> p, p -w-> q and q -w-> q (first and last stay in their components)?
    With the number of states looked at."""
    start, goal = (p, p, q), (p, q, q)
    seen = {start}
    todo = [start]
    steps = 0
    while todo:
        x, y, z = todo.pop()
        steps += 1
        if steps > MAX_PAIR_WORK:
            break
        for x2 in edges[x]:
            if component[x2] != component[p]:
                continue
            for y2 in edges[y]:
                if not meets(x2, y2):
                    continue
                for z2 in edges[z]:
                    if component[z2] != component[q] or not meets(x2, y2, z2):
                        continue
                    state = (x2, y2, z2)
                    if state == goal:
                        return True, steps
                    if state not in seen:
                        seen.add(state)
                        todo.append(state)
    return False, steps


def _components(n: int, edges: dict[int, dict[int, int]]) -> list[int]:
    comp = _components_of({p: list(edges[p]) for p in range(n)})
    return [comp[p] for p in range(n)]


def _components_of(graph: dict) -> dict:
    """Strongly connected components (Tarjan, iterative): node -> component number."""
    index: dict = {}
    low: dict = {}
    comp: dict = {}
    stack: list = []
    on_stack: set = set()
    counter = 0
    for root, targets in graph.items():
        if root in index:
            continue
        work = [(root, iter(targets))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp[member] = index[node]
                    if member == node:
                        break
    return comp
