"""Temperature sampling of several corpora (wwho.balance) and the trainer's ``balance=`` option."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest
from conftest import kill_after_checkpoints

from wwho import balance
from wwho.errors import CorpusError, VocabError
from wwho.sgpe import SGPETokenizer, train_sgpe


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def corpora(tmp_path):
    big = _write(tmp_path / "big.txt", [f"ලංකාව {i}" for i in range(4000)])           # 4,000 lines
    small = _write(tmp_path / "small.txt", [f"नमस्ते {i}" for i in range(100)])          # 100 lines
    return big, small


def test_shares_follow_the_temperature():
    assert balance.temperature_shares([900, 100], 1) == pytest.approx([0.9, 0.1])
    assert balance.temperature_shares([900, 100], 0) == pytest.approx([0.5, 0.5])
    assert balance.temperature_shares([900, 100], 0.5) == pytest.approx([0.75, 0.25])  # 30 : 10
    for bad in (-0.1, 1.5, float("nan"), "0.3", True):
        with pytest.raises(CorpusError, match="alpha"):
            balance.temperature_shares([1, 2], bad)


def test_the_stream_has_each_corpus_share(corpora):
    big, small = corpora
    groups = balance.plan([big, small], 0.3)
    sizes = [g.bytes for g in groups]
    assert sizes == [sum(len(f"ලංකාව {i}".encode()) for i in range(4000)), sum(len(f"नमस्ते {i}".encode())
                                                                                  for i in range(100))]
    stream = list(balance.documents(groups, seed=1))
    got = Counter("big" if doc.startswith("ලං") else "small" for doc in stream)
    total = sum(len(d.encode()) for d in stream)
    # Measured shares within a few percent of n ** 0.3 normalized (the draws are random).
    expected = balance.temperature_shares(sizes, 0.3)
    small_bytes = sum(len(d.encode()) for d in stream if d.startswith("न"))
    assert small_bytes / total == pytest.approx(expected[1], rel=0.1)
    assert got["small"] > 100  # the small corpus is repeated
    assert got["big"] < 4000   # the big one subsampled
    assert total == pytest.approx(sum(sizes), rel=0.05)  # as long as both together
    # Seeded: the same stream every time, another with another seed.
    assert list(balance.documents(groups, seed=1)) == stream
    assert list(balance.documents(groups, seed=2)) != stream


def test_alpha_one_keeps_the_corpora(corpora):
    groups = balance.plan(list(corpora), 1)
    assert [g.rate for g in groups] == pytest.approx([1.0, 1.0])
    assert len(list(balance.documents(groups))) == 4100


def test_bad_plans(tmp_path, corpora):
    big, _ = corpora
    with pytest.raises(CorpusError, match="two corpora"):
        balance.plan([big], 0.3)
    empty = _write(tmp_path / "empty.txt", [])
    with pytest.raises(CorpusError, match="empty.txt: no text"):
        balance.plan([big, empty], 0.3)
    with pytest.raises(CorpusError):
        balance.plan([big, tmp_path / "missing.txt"], 0.3)


def test_a_file_in_two_corpora_is_refused(tmp_path, corpora):
    """A file named twice, or also inside a folder given as another corpus, is not read in both
    corpora (its language weighed twice, the report saying two files): the README says a file named
    again gets no more weight."""
    big, small = corpora
    with pytest.raises(CorpusError, match="corpus '.*big.txt' is given twice: balancing reads each file in one"):
        balance.plan([big, big], 0.3)
    with pytest.raises(CorpusError, match=r"big.txt' is in two corpora, '.*big.txt' and '.*[0-9]'"):
        balance.plan([big, small, tmp_path], 0.3)  # the folder holds both files
    link = tmp_path / "again.txt"
    link.symlink_to(small)
    with pytest.raises(CorpusError, match="is in two corpora"):
        balance.plan([small, link], 0.3)
    # a hard link (another name, the same file) is not read in both either
    (tmp_path / "hi").mkdir()
    hard = tmp_path / "hi" / "same.txt"
    os.link(small, hard)
    with pytest.raises(CorpusError, match=r"same.txt' is in two corpora"):
        balance.plan([small, tmp_path / "hi"], 0.3)


def test_an_empty_folder_among_the_corpora_is_named(tmp_path, corpora):
    """Not "the folders given hold none", where the others hold text."""
    big, small = corpora
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match=r"no corpus files given: \S*empty holds none that is read"):
        balance.plan([big, small, tmp_path / "empty"], 0.3)


def test_trainer_balances_its_corpora(corpora):
    big, small = corpora
    plain = train_sgpe([big, small], vocab_size=400, script="mixed", progress=False, workers=1)
    even = train_sgpe([big, small], vocab_size=400, script="mixed", progress=False, workers=1, balance=0)
    # Balanced, the small Devanagari corpus weighs as much as the Sinhala one: more of the
    # vocabulary goes to it, and its text takes fewer tokens.
    text = " ".join(f"नमस्ते {i}" for i in range(100))
    assert len(SGPETokenizer(even).encode(text)) < len(SGPETokenizer(plain).encode(text))
    again = train_sgpe([big, small], vocab_size=400, script="mixed", progress=False, workers=1, balance=0)
    assert again.to_bytes() == even.to_bytes()


def test_cli_balance(tmp_path, corpora, capsys):
    from wwho.cli import main

    big, small = corpora
    out = tmp_path / "out"
    assert main(["train", "--kind", "sgpe", "--script", "mixed", "--vocab-size", "400", "--balance", "0.3",
                 "--workers", "1", "--out", str(out), str(big), str(small)]) == 0
    err = capsys.readouterr().err
    assert "balance 0.3:" in err and "small.txt" in err
    assert json.loads((out / "vocab.json").read_text(encoding="utf-8"))["vocab"]
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--kind", "sgpe", "--balance", "2", "--out", str(tmp_path / "x"), str(big)])
    assert exit_.value.code == 2 and "expected a number from 0 to 1" in capsys.readouterr().err
    # With Ray, named as the command line names it (not "balance is an option of engine='local'").
    for kind in ("sgpe", "bytelevel"):
        assert main(["train", "--kind", kind, "--balance", "0.3", "--engine", "ray", "--out", str(tmp_path / "x"),
                     str(big), str(small)]) == 2
        assert "--balance is an option of --engine local" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore::wwho.errors.VocabSizeWarning")  # a small corpus: its size is not checked here
@pytest.mark.parametrize("kind", ["sgpe", "bytelevel"])
def test_a_balanced_training_reports_its_skipped_lines(corpora, tmp_path, capsys, kind):
    # The balanced stream reads the corpora itself; what it skipped is still counted in the
    # caller's stats (what the CLI prints) and, for SGPE, said as an unbalanced training says it.
    from wwho.bytelevel.train import train_bytelevel
    from wwho.corpus import CorpusStats

    big, _ = corpora
    bad = tmp_path / "bad.txt"
    bad.write_bytes("".join(f"नमस्ते {i}\n" for i in range(100)).encode() + b"\xff\xfe broken\n")
    stats = CorpusStats()
    train = train_sgpe if kind == "sgpe" else train_bytelevel
    options = dict(script="mixed") if kind == "sgpe" else {}
    train([big, bad], vocab_size=600, workers=1, balance=0.3, skip_bad_lines=True, stats=stats, **options)
    assert stats.bad_lines == 1
    if kind == "sgpe":
        assert "skipped 1 bad lines, e.g. " in capsys.readouterr().err


def test_bytelevel_trainer_balances_its_corpora(corpora, capsys):
    from wwho.bytelevel import ByteBPE
    from wwho.cli import main

    big, small = corpora
    plain = ByteBPE.train([big, small], vocab_size=400, progress=False, workers=1)
    even = ByteBPE.train([big, small], vocab_size=400, progress=False, workers=1, balance=0)
    text = " ".join(f"नमस्ते {i}" for i in range(100))
    assert len(even.encode(text)) < len(plain.encode(text))
    assert main(["train", "--kind", "bytelevel", "--vocab-size", "400", "--balance", "0.3", "--workers", "1",
                 "--out", str(big.parent / "bl"), str(big), str(small)]) == 0
    assert "balance 0.3:" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore::wwho.errors.VocabSizeWarning")  # a small corpus: its size is not checked here
def test_a_balanced_training_resumes_to_the_same_bytes(corpora, tmp_path, monkeypatch):
    big, small = corpora
    options = dict(vocab_size=600, script="mixed", progress=False, workers=1, balance=0.3)
    whole = train_sgpe([big, small], **options)
    ckpt = tmp_path / "ckpt"
    kill_after_checkpoints(monkeypatch, lambda: train_sgpe([big, small], checkpoint_dir=ckpt, checkpoint_every=20,
                                                           **options))
    resumed = train_sgpe([big, small], checkpoint_dir=ckpt, checkpoint_every=20, resume=True, **options)
    assert resumed.to_bytes() == whole.to_bytes()
    # Another seed is another stream: its checkpoint is refused.
    with pytest.raises(VocabError, match="checkpoint"):
        train_sgpe([big, small], checkpoint_dir=ckpt, resume=True, balance_seed=1, **options)


@pytest.mark.parametrize("seed", ["1", None, 1.5, True])
def test_a_seed_that_is_no_integer_is_one_clear_error(corpora, seed):
    """A string or None is refused before both corpora are read for their sizes, not a TypeError deep
    inside the draws, and a float must not seed another stream than the same integer."""
    with pytest.raises(CorpusError, match="the balancing seed must be an integer"):
        train_sgpe(list(corpora), vocab_size=400, balance=0.3, balance_seed=seed, script="mixed", progress=False,
                   workers=1)


def test_the_order_of_the_corpora_changes_nothing(corpora):
    """Each corpus's draws are not seeded by its place in the argument list, or naming the same
    corpora in another order would sample other documents and train another tokenizer. The trainers
    count, so the stream's own order does not matter."""
    big, small = corpora
    _same_stream_and_tokenizer([big, small], [small, big])


def _same_stream_and_tokenizer(corpora: list, others: list) -> Counter:
    """Assert that ``corpora`` and ``others`` give one balanced stream and one tokenizer; the stream."""
    stream = Counter(balance.documents(balance.plan(corpora, 0.3), seed=3))
    assert stream == Counter(balance.documents(balance.plan(others, 0.3), seed=3))
    a = train_sgpe(corpora, vocab_size=400, script="mixed", balance=0.3, progress=False, workers=1)
    b = train_sgpe(others, vocab_size=400, script="mixed", balance=0.3, progress=False, workers=1)
    assert a.to_bytes() == b.to_bytes()
    return stream


def test_the_same_texts_elsewhere_or_compressed_give_the_same_stream(corpora, tmp_path):
    """The draws are seeded by each corpus's texts, not its path: the same corpora renamed, moved
    into folders that sort the other way, or compressed, train the same tokenizer (and a resumed
    training may find them moved)."""
    import gzip

    big, small = corpora
    (tmp_path / "zz").mkdir()
    (tmp_path / "aa").mkdir()
    moved_big = tmp_path / "zz" / "big-copy.txt.gz"
    moved_big.write_bytes(gzip.compress(big.read_bytes()))
    moved_small = tmp_path / "aa" / "hindi.txt"
    moved_small.write_bytes(small.read_bytes())
    here = _same_stream_and_tokenizer([big, small], [moved_big, moved_small])
    other = Counter(balance.documents(balance.plan([big, small], 0.3), seed=4))
    assert other != here  # (the seed still matters)


@pytest.mark.filterwarnings("ignore::wwho.errors.VocabSizeWarning")  # a small corpus: its size is not checked here
@pytest.mark.parametrize("kind", ["sgpe", "bytelevel"])
def test_cli_balance_seed_is_the_apis(corpora, tmp_path, capsys, kind):
    """The command line had no way to the API's balance_seed: one stream of draws only."""
    from wwho.bytelevel.train import train_bytelevel
    from wwho.cli import main

    big, small = corpora
    options = dict(script="mixed") if kind == "sgpe" else {}
    train = train_sgpe if kind == "sgpe" else train_bytelevel
    seeded = train([big, small], vocab_size=400, progress=False, workers=1, balance=0.3, balance_seed=7, **options)
    unseeded = train([big, small], vocab_size=400, progress=False, workers=1, balance=0.3, **options)
    out = tmp_path / "out"
    assert main(["train", "--kind", kind, "--vocab-size", "400", "--balance", "0.3", "--balance-seed", "7",
                 "--workers", "1", "--quiet", *(["--script", "mixed"] if kind == "sgpe" else []), "--out", str(out),
                 str(big), str(small)]) == 0
    if kind == "sgpe":
        assert (out / "vocab.json").read_bytes() == seeded.to_bytes() != unseeded.to_bytes()
    else:
        from wwho.bytelevel import ByteBPE

        assert ByteBPE.load(out).ranks == seeded.ranks != unseeded.ranks
    capsys.readouterr()
    assert main(["train", "--kind", kind, "--balance-seed", "7", "--out", str(tmp_path / "x"), str(big)]) == 2
    assert "--balance-seed is an option of --balance" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--kind", kind, "--balance", "0.3", "--balance-seed", "1.5", "--out", str(tmp_path / "x"),
              str(big)])
    assert "expected an integer, not '1.5'" in capsys.readouterr().err
