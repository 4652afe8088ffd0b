"""The scoring plumbing of ``benchmarks/gpt.py`` (numpy only; the model itself needs PyTorch and a GPU).

Bits per character are only comparable between tokenizers if every token of every line, and its
end, is predicted exactly once, from that line's own start: these tests check the windows that
the GPT is scored on, and the documents it is trained on, against counts made here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import gpt  # noqa: E402

VOCAB = 100


def flat(lines: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(lines) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in lines], out=offsets[1:])
    ids = np.array([i for x in lines for i in x], dtype=np.int64)
    return ids, offsets


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, VOCAB - 1), max_size=40), min_size=1, max_size=8),
       st.integers(2, 9))
def test_every_target_is_scored_once_from_its_own_line(lines, ctx):
    ids, offsets = flat(lines)
    items = gpt.windows(ids, offsets, VOCAB, ctx=ctx)
    # Each line's targets, in order: its ids, then the end token; and for each the tokens before it.
    want = [(line[:k], (line + [VOCAB + 1])[k]) for line in lines for k in range(len(line) + 1)]
    got = []
    for x, y in items:
        assert len(x) == len(y) <= ctx
        for k in np.flatnonzero(y != -100):
            got.append((x[: k + 1], int(y[k])))
    assert len(got) == len(want)
    for (seen, target), (before, want_target) in zip(got, want):
        assert target == want_target
        # the inputs are the tokens just before the target: all of them while the line fits,
        # else at least half a context
        context = [VOCAB, *before]
        assert seen.tolist() == context[-len(seen):]
        assert len(seen) >= min(len(context), max(1, ctx // 2))


def test_documents_are_begin_ids_end():
    ids, offsets = flat([[5, 6], [], [7]])
    assert gpt.documents(ids, offsets, VOCAB).tolist() == [VOCAB, 5, 6, VOCAB + 1, VOCAB, VOCAB + 1, VOCAB, 7,
                                                           VOCAB + 1]


def test_batches_pad_without_scoring_the_padding():
    ids, offsets = flat([[1, 2, 3, 4, 5], [9]])
    items = gpt.windows(ids, offsets, VOCAB, ctx=8)
    (x, y), = list(gpt.batches(items, 8))
    assert x.shape == y.shape == (2, 6)
    assert (y != -100).sum() == 5 + 1 + 1 + 1  # every id and both ends
    assert y[0, 2:].tolist() == [-100] * 4  # the short line's padding


@pytest.mark.parametrize("size", [1, 3])
def test_batches_keep_every_item(size):
    ids, offsets = flat([[1] * n for n in range(7)])
    items = gpt.windows(ids, offsets, VOCAB, ctx=4)
    scored = sum(int((y != -100).sum()) for _, y in gpt.batches(items, size))
    assert scored == len(ids) + len(offsets) - 1


def test_every_run_gets_the_model_size_and_tables_keep_sizes_apart(monkeypatch, tmp_path, capsys):
    started = []

    class Done:
        returncode = 0

        def __init__(self, args):
            self.args = args
            started.append(args)

        def poll(self):
            return 0

    monkeypatch.setattr(gpt.subprocess, "Popen", Done)
    monkeypatch.setattr(gpt.time, "sleep", lambda _: None)
    args = gpt.argparse.Namespace(
        seeds=[0, 1], more_seeds_for=["spm-uni"], steps=5, batch=2, every=5, size="small", cpu=False,
        jobs=4, deadline=0, out=str(tmp_path / "out.jsonl"),
    )
    gpt.run_all([Path("hi-sgpe.npz"), Path("hi-spm-uni.npz")], args)
    assert len(started) == 3  # both streams with seed 0, then only spm-uni with seed 1
    for command in started:
        assert command[command.index("--size") + 1] == "small"
    assert gpt.SIZES["base"] == (gpt.LAYERS, gpt.WIDTH, gpt.HEADS, gpt.DROPOUT)

    row = {"lang": "hi", "kind": "pfx", "seed": 0, "tokens_per_word": 1.4, "bits_per_char": 2.4,
           "best_step": 100, "ngram": {"2": 2.5}}
    out = tmp_path / "results.jsonl"
    out.write_text("\n".join(gpt.json.dumps({**row, **extra}) for extra in ({}, {"size": "small"})))
    gpt.table(out)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("hi")]
    assert [line.split()[1:3] for line in lines] == [["pfx", "1.400"], ["pfx", "(small)"]]


def test_failed_runs_are_named_by_stream_and_seed(monkeypatch, tmp_path, capsys):
    class Failed:
        returncode = 1

        def __init__(self, args):
            self.args = args

        def poll(self):
            return 1

    monkeypatch.setattr(gpt.subprocess, "Popen", Failed)
    monkeypatch.setattr(gpt.time, "sleep", lambda _: None)
    args = gpt.argparse.Namespace(
        seeds=[0, 3], more_seeds_for=[], steps=5, batch=2, every=5, size="small", cpu=True, jobs=2, deadline=0,
        out=str(tmp_path / "out.jsonl"),
    )
    assert gpt.run_all([Path("hi-sgpe.npz")], args) == ["hi-sgpe.npz seed 0", "hi-sgpe.npz seed 3"]
    assert "a run failed (exit status 1): hi-sgpe.npz seed 3\n" in capsys.readouterr().out


def test_a_failed_run_fails_the_whole(monkeypatch, tmp_path, capsys):
    """The runs that ended are tabled, and the exit status says that one did not."""
    stream = tmp_path / "hi-pfx.npz"
    stream.write_bytes(b"")
    out = tmp_path / "results.jsonl"
    row = {"lang": "hi", "kind": "pfx", "seed": 0, "tokens_per_word": 1.4, "bits_per_char": 2.4,
           "best_step": 100, "ngram": {"2": 2.5}}
    out.write_text(gpt.json.dumps(row) + "\n")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())  # PyTorch "installed"
    monkeypatch.setattr(gpt, "run_all", lambda paths, args: [f"{stream} seed 1"])
    monkeypatch.setattr(sys, "argv", ["gpt.py", str(stream), "--seeds", "0", "1", "--out", str(out)])
    with pytest.raises(SystemExit) as stop:
        gpt.main()
    assert stop.value.code == f"gpt.py: 1 run failed: {stream} seed 1"
    assert any(line.split()[:3] == ["hi", "pfx", "1.400"] for line in capsys.readouterr().out.splitlines())


def test_without_pytorch_nothing_starts(monkeypatch, tmp_path):
    stream = tmp_path / "hi-pfx.npz"
    stream.write_bytes(b"")

    def never(paths, args):
        raise AssertionError("a run was started without PyTorch")

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(gpt, "run_all", never)
    monkeypatch.setattr(sys, "argv", ["gpt.py", str(stream), "--out", str(tmp_path / "results.jsonl")])
    with pytest.raises(SystemExit) as stop:
        gpt.main()
    assert str(stop.value.code).startswith("gpt.py: PyTorch is not installed here")
