"""``wwho encode``'s output lines (``--ids``, ``--tokens``, ``--json``): the plain join and
``json.dumps`` of each line, whatever the pieces a long line is written in; and a long line's
tokens are never all held as Python strings."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.cli import results_text
from wwho.cli.results_text import id_text, json_text, token_text

#: Token texts that JSON must escape, that hold the separators, a lone surrogate, nothing at all.
SHOWN = ["a", '"q"', "\\", "\n\t", "\ud800", "ශ්‍රී", "", " | ", "\x7f"]


def show(i: int) -> str:
    return SHOWN[i % len(SHOWN)] + str(i)


def expected(kind: str, lines: list[list[int]]) -> bytes:
    """What each writer must give: the plain join, or ``json.dumps``: not code of the module."""
    if kind == "ids":
        return "".join(" ".join(map(str, ids)) + "\n" for ids in lines).encode()
    if kind == "tokens":
        return "".join(" | ".join(map(show, ids)) + "\n" for ids in lines).encode("utf-8", "surrogatepass")
    text = "".join(json.dumps({"ids": ids, "tokens": [show(i) for i in ids]}, ensure_ascii=False) + "\n"
                   for ids in lines)
    return text.encode("utf-8", "backslashreplace")


def writer(kind: str):
    return id_text() if kind == "ids" else (token_text if kind == "tokens" else json_text)(show)


#: ``MAX_ID_TABLE`` in these tests (made small): ids below it and past it.
TABLE = 64
ID = st.one_of(st.integers(0, 40), st.integers(TABLE - 2, TABLE + 2))


@pytest.mark.parametrize("kind", ["ids", "tokens", "json"])
@settings(max_examples=150, deadline=None)
@given(blocks=st.lists(st.lists(st.lists(ID, max_size=12), max_size=8), max_size=4), at_once=st.integers(1, 9))
def test_lines_are_the_plain_join_whatever_the_pieces(kind, blocks, at_once):
    """Blocks of lines, some longer than ``IDS_AT_ONCE``, some of ids past the table (both made small):
    one writer (its tables kept across blocks) gives the reference text."""
    with mock.patch.object(results_text, "IDS_AT_ONCE", at_once), mock.patch.object(results_text, "MAX_ID_TABLE", TABLE):
        out = io.BytesIO()
        write = writer(kind)
        for lines in blocks:
            write.write(out, lines)
        assert out.getvalue() == expected(kind, [ids for lines in blocks for ids in lines])


def test_a_negative_id_in_a_list_is_its_own_text():
    """A list from a foreign tokenizer (an HF one's) is not trusted to hold ids a table can index."""
    out = io.BytesIO()
    id_text().write(out, [[3, -1, 2]])
    assert out.getvalue() == b"3 -1 2\n"


@pytest.mark.parametrize("show_flag", ["--tokens", "--json"])
def test_a_long_lines_tokens_are_never_all_held(tmp_path, show_flag):
    """``--tokens`` and ``--json`` do not make a Python string per token of a line all at once (for a
    long line, millions of strings, many times its size): a line's ids are turned into text
    ``IDS_AT_ONCE`` at a time, so the memory Python traces while a line of 1.8M tokens or more is
    written stays under 15 times the line (its text, its UTF-8 and the list of its ids take most)."""
    from wwho.bytelevel import ByteBPE
    from wwho.cli import main

    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    ByteBPE.train(sample, vocab_size=300, progress=False, workers=1).save(tmp_path / "tok")
    line = "ab! " * 600_000  # (a vocabulary of Sinhala: three tokens a repeat or more)
    (tmp_path / "in.txt").write_text(line + "\n", encoding="utf-8")
    tracemalloc.start()
    try:
        assert main(["encode", "--tokenizer", str(tmp_path / "tok"), show_flag, "--file", str(tmp_path / "in.txt"),
                     "-o", str(tmp_path / "out.txt"), "--threads", "1"]) == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    written = (tmp_path / "out.txt").read_bytes()
    tokens = len(ByteBPE.load(tmp_path / "tok").encode(line))
    shown = written.decode().rstrip("\n").split(" | ") if show_flag == "--tokens" else json.loads(written)["tokens"]
    assert tokens >= 1_800_000 and len(shown) == tokens
    assert peak < 15 * len(line), (peak, len(line))
