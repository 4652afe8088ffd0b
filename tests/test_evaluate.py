"""Evaluation: metrics with hand-computed answers, every SPEC kind, errors, JSON schema, plot."""

from __future__ import annotations

import json
import os
from importlib import resources

import pytest
from conftest import CORPORA, O200K_FILE, one_line_error, run_wwho

from wwho.errors import CorpusError, TokenizerError, VocabError, WwhoError
from wwho.eval_specs import Evaluated, load_spec
from wwho.evaluate import evaluate, evaluate_all, parity


def by_char():
    """A character-level tokenizer: every code point is one token (ids are code points)."""
    def encode(text):
        ends, pos = [], 0
        for ch in text:
            pos += len(ch.encode())
            ends.append(pos)
        return [ord(c) for c in text], ends
    return Evaluated("chars", encode, lambda ids: "".join(map(chr, ids)), lambda i: i == ord("?"), 0x110000)


def by_words():
    """One token per whitespace-separated piece with its leading space."""
    import re

    def encode(text):
        pieces = re.findall(r" ?\S+| ", text)
        ends, pos = [], 0
        for p in pieces:
            pos += len(p.encode())
            ends.append(pos)
        return [hash(p) & 0xFFFF for p in pieces], ends
    return Evaluated("words", encode, lambda ids: "?", lambda i: False, 0x10000)


def test_character_tokenizer_on_shri():
    # ශ්‍රී = ශ + ් + ZWJ + ර + ී: one syllable; Unicode clusters "ශ්‍" and "රී".
    # Boundaries after ශ, ් (inside "ශ්‍"), after ZWJ (a cluster boundary), after ර (inside "රී"):
    # 3 of 4 inside a cluster, 4 of 4 inside the syllable.
    m = evaluate(by_char(), ["ශ්‍රී"])
    assert (m.tokens, m.words, m.chars, m.bytes) == (5, 1, 5, 15)
    assert (m.boundaries, m.boundaries_in_cluster, m.boundaries_in_syllable) == (4, 3, 4)
    assert m.fertility == 5 and m.bytes_per_token == 3 and m.lossless_rate == 1


def test_word_tokenizer_never_cuts_and_counts_fertility():
    m = evaluate(by_words(), ["ශ්‍රී ලංකාව", "a b c"])
    assert m.words == 5 and m.tokens == 5 and m.fertility == 1
    assert m.boundaries == 1 + 2 and m.boundaries_in_cluster == 0 and m.boundaries_in_syllable == 0
    assert m.lossless_lines == 0  # its decode is deliberately broken


def test_latin_text_has_no_syllables_but_clusters():
    m = evaluate(by_char(), ["e\u0301a?"])  # é decomposed: the boundary after e cuts the cluster
    assert (m.boundaries, m.boundaries_in_cluster, m.boundaries_in_syllable) == (3, 1, 0)
    assert m.fallback_tokens == 1 and m.vocab_used == 4


@pytest.mark.parametrize(("corpus", "shown"), [("flores.txt", "words on flores.txt:"),
                                               ("data/si/flores.txt", "words on si/flores.txt:")])
def test_the_progress_bar_names_the_corpus_and_its_folder(capsys, monkeypatch, corpus, shown):
    monkeypatch.setattr("wwho.evaluate.BAR_DELAY", 0)  # (a bar is drawn after a second)
    evaluate(by_words(), ["a b"], corpus=corpus, progress=True)
    err = capsys.readouterr().err
    assert shown in err and "on /" not in err


def test_parity():
    tok = by_char()
    a = evaluate(tok, ["abcd", "ef"], corpus="a")
    b = evaluate(tok, ["ab", "c"], corpus="b")
    assert parity(a, b) == 2.0
    with pytest.raises(TokenizerError, match="line-aligned"):
        parity(a, evaluate(tok, ["x"], corpus="c"))


def test_unreadable_corpus_is_a_clear_error(tmp_path):
    from wwho.cli import main

    assert main(["eval", "--corpus", str(tmp_path / "absent.txt"), "--tokenizer", "hf:x", "--quiet"]) == 2


@pytest.fixture(scope="module")
def spec_zoo(tokenizers, tmp_path_factory):
    """One SPEC of every kind that can be built offline here."""
    specs = {}
    out = tmp_path_factory.mktemp("zoo")
    tokenizers["sinhala"].save(out / "sgpe")
    specs["sgpe directory"] = str(out / "sgpe")
    specs["sgpe vocab.json"] = str(out / "sgpe" / "vocab.json")
    specs["hf tokenizer.json"] = f"hf:{out / 'sgpe' / 'tokenizer.json'}"
    specs["wwho tokenizer.json"] = str(out / "sgpe" / "tokenizer.json")
    if O200K_FILE.is_file():
        specs["tiktoken"] = "tiktoken:o200k_base"
        specs[".tiktoken file"] = str(O200K_FILE)
    gguf = CORPORA.parent / "gguf-vocab" / "ggml-vocab-gpt-2.gguf"
    if gguf.is_file():
        specs[".gguf"] = str(gguf)
    spm = pytest.importorskip("sentencepiece")
    corpus = out / "spm.txt"
    corpus.write_text(resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8"))
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(out / "spm"), vocab_size=800,
                                   model_type="bpe", minloglevel=2)
    specs["spm"] = f"spm:{out / 'spm.model'}"
    return specs


def test_every_spec_kind_loads_and_evaluates(spec_zoo, monkeypatch):
    if O200K_FILE.is_file():
        monkeypatch.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    lines = ["ශ්‍රී ලංකාව යනු දිවයිනකි.", "Hello, world 123!"]
    for kind, spec in spec_zoo.items():
        m = evaluate(load_spec(spec), lines, corpus="tiny")
        assert m.tokens > 0 and m.lines == 2, kind
        if kind != "spm":  # SentencePiece normalizes some text
            assert m.lossless_rate == 1.0, kind


def test_parity_with_a_corpus_of_other_lines_is_said_not_left_null(spec_zoo, tmp_path):
    """A --parity-with corpus of another line count is said, not a parity of null without a word."""
    from wwho.errors import WwhoWarning

    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව\nනමස්කාරය\nතුන\n", encoding="utf-8")
    ref = tmp_path / "en.txt"
    ref.write_text("Sri Lanka\nHello\n")
    with pytest.warns(WwhoWarning, match=r"no parity for .*c\.txt: it has 3 lines and .*en\.txt has 2"):
        (m,) = evaluate_all([spec_zoo["sgpe directory"]], [str(corpus)], parity_with=str(ref))
    assert m.parity is None


def test_cli_json_validates_and_plot_is_a_png(spec_zoo, tmp_path, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("matplotlib")
    from wwho.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව\nනමස්කාරය\n", encoding="utf-8")
    ref = tmp_path / "en.txt"
    ref.write_text("Sri Lanka\nHello\n")
    png = tmp_path / "out.png"
    assert main(["eval", "--quiet", "--corpus", str(corpus), "--tokenizer", spec_zoo["sgpe directory"],
                 spec_zoo["spm"], "--parity-with", str(ref), "--json", "--plot", str(png)]) == 0
    data = json.loads(capsys.readouterr().out)
    schema = json.loads(resources.files("wwho.data").joinpath("eval.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert len(data["results"]) == 2 and data["results"][0]["parity"] is not None
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["eval", "--quiet", "--corpus", str(corpus), "--tokenizer", spec_zoo["sgpe directory"],
                 "--markdown"]) == 0
    assert capsys.readouterr().out.startswith("| tokenizer | corpus | tokens/word")
    # a plot that cannot be written: the error, and no table printed before it
    # PNG bytes under another name are not written without a word
    assert main(["eval", "--quiet", "--corpus", str(corpus), "--tokenizer", spec_zoo["sgpe directory"],
                 "--plot", str(tmp_path / "out.svg")]) == 2
    printed = capsys.readouterr()
    assert printed.out == "" and "give a file name ending in .png, such as plot.png" in printed.err and not (tmp_path / "out.svg").exists()
    if os.path.isdir("/proc/self"):  # a folder where no file can be made (access() allows it, as root)
        assert main(["eval", "--quiet", "--corpus", str(corpus), "--tokenizer", spec_zoo["sgpe directory"],
                     "--plot", "/proc/wwho-eval-plot.png"]) == 2
        printed = capsys.readouterr()
        assert printed.out == "" and "--plot cannot be written: nothing can be created in /proc" in printed.err, \
            printed


@pytest.fixture(scope="module")
def binary_dir(tmp_path_factory):
    """A small binary tokenizer saved as its tokenizer.json."""
    from wwho.binary import train_from_counts
    from wwho.binary.tokenizer import BinaryTokenizer

    counts = {bytes(range(i, i + 32)): 4 for i in range(0, 200, 8)}
    out = tmp_path_factory.mktemp("binary")
    BinaryTokenizer(train_from_counts(counts, vocab_size=512, min_frequency=1)).save(out / "tokenizer.json")
    return out


def test_a_binary_tokenizer_is_refused_when_loaded(binary_dir, tmp_path):
    """Refused at load, not failing on the corpus's first line (its encode takes bytes)."""
    for spec in (binary_dir, binary_dir / "tokenizer.json"):
        with pytest.raises(VocabError, match=f"binary tokenizer .* give hf:{binary_dir / 'tokenizer.json'} "):
            load_spec(str(spec))
    corpus = tmp_path / "en.txt"
    corpus.write_text("Hello world\n")
    assert "is a binary tokenizer" in one_line_error(run_wwho("eval", "--quiet", "--corpus", corpus, "--tokenizer",
                                                              binary_dir / "tokenizer.json"))
    assert evaluate(load_spec(f"hf:{binary_dir / 'tokenizer.json'}"), ["Hello world"]).tokens > 0  # what it suggests
    # wwho serve loads its tokenizers the same way: its message names it (it named wwho eval alone)
    served = run_wwho("serve", "--port", "0", "--tokenizer", binary_dir / "tokenizer.json")
    assert served.returncode == 2  # (after its "loading" line)
    assert "wwho eval and wwho serve take text tokenizers" in served.stderr.splitlines()[-1]


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="needs FIFOs and /dev/zero")
def test_hf_and_spm_paths_must_be_regular_files(tmp_path):
    """Opened by the libraries, a FIFO would hang, and /dev/zero hang (spm:) or be read until memory
    runs out (hf:)."""
    pytest.importorskip("sentencepiece")
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    corpus = tmp_path / "en.txt"
    corpus.write_text("Hello world\n")
    for kind, what in (("hf", "a tokenizer file"), ("spm", "a SentencePiece model")):
        for path, shown in ((fifo, "a FIFO (named pipe)"), ("/dev/zero", "a character device")):
            message = one_line_error(run_wwho("eval", "--quiet", "--corpus", corpus, "--tokenizer", f"{kind}:{path}",
                                              timeout=60))
            assert f"{path}: is {shown}; {what} must be a regular file" in message


def test_a_tokenizer_file_larger_than_the_read_limit_is_refused(spec_zoo, monkeypatch):
    monkeypatch.setenv("WWHO_MAX_FILE_BYTES", "100")
    for kind in ("hf tokenizer.json", "spm"):
        with pytest.raises(VocabError, match="more than the 100 wwho reads"):
            load_spec(spec_zoo[kind])


def test_a_corpus_or_tokenizer_given_twice_is_refused(tmp_path):
    """Refused: otherwise a repeated corpus gives one row, a repeated tokenizer two identical ones."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello\n")
    spec = f"hf:{tmp_path / 'no.json'}"  # refused before anything is loaded or read
    with pytest.raises(WwhoError, match="corpus .*c.txt is given twice: give each corpus once"):
        evaluate_all([spec], [str(corpus), str(corpus)])
    with pytest.raises(WwhoError, match=r"is given twice \(as .*c.txt\)"):
        evaluate_all([spec], [str(corpus), f"{tmp_path}/./c.txt"])
    with pytest.raises(WwhoError, match="tokenizer hf:.*no.json is given twice: give each tokenizer once"):
        evaluate_all([spec, spec], [str(corpus)])
    message = one_line_error(run_wwho("eval", "--quiet", "--corpus", corpus, "--tokenizer", "o200k_base",
                                      "tiktoken:o200k_base"))
    assert "tokenizer tiktoken:o200k_base is given twice (as o200k_base)" in message


def test_a_corpus_without_text_is_refused(tmp_path, monkeypatch):
    """Not measured: not lossless 0.0% and rates of 0.00 over no text."""
    monkeypatch.setattr("wwho.evaluate.load_spec", lambda spec, pattern=None: by_char())
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blank.txt").write_text("\n\r\n\n")
    (tmp_path / "good.txt").write_text("text\n")
    for name in ("empty.txt", "blank.txt"):
        corpus = tmp_path / name
        with pytest.raises(CorpusError, match=f"{name}: no text to measure"):
            evaluate_all(["chars"], [str(corpus)])
        with pytest.raises(CorpusError, match=f"{name}: no text to measure"):
            evaluate_all(["chars"], [str(tmp_path / "good.txt")], parity_with=str(corpus))


def test_lines_counts_the_non_empty_lines(tmp_path, monkeypatch):
    monkeypatch.setattr("wwho.evaluate.load_spec", lambda spec, pattern=None: by_char())
    corpus = tmp_path / "c.txt"
    corpus.write_text("a\n\n   \nb\n")
    (m,) = evaluate_all(["chars"], [str(corpus)])
    assert (m.lines, m.chars) == (3, 5)  # an empty line is no line; one of spaces is


def test_a_misspelt_tokenizer_is_refused_before_any_corpus_is_read(tmp_path):
    """Every corpus was read whole first (a 151 MB one in a second), then a typo in a SPEC refused."""
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\n")
    with pytest.raises(VocabError, match="tiktokn"):
        evaluate_all(["tiktokn:o200k_base"], [str(bad)])


def test_each_tokenizer_reads_the_corpus_again_and_the_same_text(tmp_path, monkeypatch):
    """Corpora are read a line at a time for each tokenizer, not held whole (a corpus cost its size
    in memory, and several corpora their sum); a corpus that changes between two tokenizers' passes
    would give rows of other texts, and is refused."""
    corpus, reference = tmp_path / "c.txt", tmp_path / "r.txt"
    corpus.write_text("ab\ncd\n")
    reference.write_text("x\ny\n")
    read = []

    def counting(name, on_first=None):
        tok = by_char()
        encode = tok.encode

        def counted(text):
            read.append((name, text))
            if on_first is not None and len(read) == 5:  # B's first line: its pass over the reference
                on_first()
            return encode(text)
        return Evaluated(name, counted, tok.decode, tok.is_fallback, tok.vocab_size)

    specs = {"A": counting("A"), "B": counting("B")}
    monkeypatch.setattr("wwho.evaluate.load_spec", lambda spec, pattern=None: specs[spec])
    rows = evaluate_all(["A", "B"], [str(corpus)], parity_with=str(reference))
    assert [r.tokens for r in rows] == [4, 4] and [r.parity for r in rows] == [2.0, 2.0]
    assert read == [(t, line) for t in "AB" for line in ("x", "y", "ab", "cd")]
    read.clear()
    specs["B"] = counting("B", on_first=lambda: corpus.write_text("ab\ncd\nef\n"))
    with pytest.raises(CorpusError, match="c.txt: changed while the tokenizers were measured on it"):
        evaluate_all(["A", "B"], [str(corpus)], parity_with=str(reference))


def test_names_with_line_ends_stay_on_one_line(tmp_path):
    """A corpus named with a line end breaks no table row, and messages stay on one line."""
    from wwho.cli.eval import table

    m = evaluate(by_char(), ["ab"], corpus="we\nird\x1b.txt")
    m.tokenizer = "to\rk"
    for markdown in (False, True):
        rows = table([m], markdown=markdown).splitlines()
        assert len(rows) == 3 and "we\\nird\\x1b.txt" in rows[2].replace("\\\\", "\\"), rows
        assert "to\\rk" in rows[2].replace("\\\\", "\\")
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello\n")
    odd = tmp_path / "no\nsuch.json"
    assert "no\\nsuch.json: no such" in one_line_error(run_wwho("eval", "--quiet", "--corpus", corpus,
                                                                   "--tokenizer", f"hf:{odd}"))
    message = one_line_error(run_wwho("eval", "--quiet", "--corpus", corpus, "--tokenizer", str(odd)))
    assert "no\\nsuch.json: not a file or directory" in message


def test_fallback_counts_tokens_not_dropped_characters(binary_dir):
    """As docs/eval.md says: an hf: tokenizer without an unknown token drops what it cannot spell; no
    token stands for it, so fallback/UNK does not count it and lossless shows it."""
    m = evaluate(load_spec(f"hf:{binary_dir / 'tokenizer.json'}"), ["ශ්‍රී ලංකාව"])
    assert m.fallback_tokens == 0 and m.lossless_lines == 0


def test_rows_of_corpora_with_the_same_short_name_are_told_apart():
    """``a/si/f.txt`` and ``b/si/f.txt`` would both read ``si/f.txt``: the rows take as many folders
    as tell them apart; others keep ``lang/file.txt``."""
    from wwho.cli.eval import short_names, table
    from wwho.evaluate import Metrics

    names = short_names(["x/a/si/f.txt", "x/b/si/f.txt", "/data/hi/g.txt", "f.txt"])
    assert names == {"x/a/si/f.txt": "a/si/f.txt", "x/b/si/f.txt": "b/si/f.txt", "/data/hi/g.txt": "hi/g.txt",
                     "f.txt": "f.txt"}
    rows = table([Metrics("t", "x/a/si/f.txt", lines=1, words=2, tokens=3),
                  Metrics("t", "x/b/si/f.txt", lines=1, words=2, tokens=4)]).splitlines()[2:]
    assert [r.split()[1] for r in rows] == ["a/si/f.txt", "b/si/f.txt"]


def test_a_ratio_over_nothing_is_not_measured_rather_than_zero():
    """A corpus of spaces has tokens and no words: its tokens per word is not a measured 0.000 but "-"
    in the table and null in JSON."""
    from wwho.cli.eval import table
    from wwho.evaluate import Metrics

    spaces = Metrics("t", "s.txt", lines=1, chars=3, bytes=3, tokens=1)
    assert spaces.fertility is None and spaces.to_json()["fertility"] is None
    jsonschema = pytest.importorskip("jsonschema")  # the published schema allows the null
    from wwho.cli.eval import to_json

    schema = json.loads(resources.files("wwho.data").joinpath("eval.schema.json").read_text())
    jsonschema.validate(to_json([spaces], None), schema)
    assert spaces.bytes_per_token == 3.0
    assert table([spaces]).splitlines()[2].split()[2] == "-"
    assert Metrics("t", "e.txt", lines=1).bytes_per_token is None
    # No token at all (an hf: BPE without an unknown token, on a script it lacks): its fallback rate
    # is not a measured 0.00%.
    none = Metrics("t", "e.txt", lines=2, words=3, chars=10, bytes=30)
    assert none.fallback_rate is None and none.to_json()["fallback_rate"] is None
    jsonschema.validate(to_json([none], None), schema)
    assert table([none]).splitlines()[2].count(" - ") >= 3


def test_cut_rates_over_no_boundary_are_not_measured_rather_than_zero():
    """With no token boundary measured (a corpus of spaces, or every line normalized by a
    SentencePiece model) the cut rates are not 0.00%, "0.00% (200 unmeasured lines)", a measured,
    perfect score, but "-" and null, as every other ratio over nothing."""
    from wwho.cli.eval import table, to_json
    from wwho.evaluate import Metrics

    unplaced = Metrics("spm", "hi.txt", lines=200, words=4000, chars=20000, bytes=50000, tokens=5000,
                       unmeasured_lines=200)
    assert unplaced.cluster_cut_rate is None and unplaced.syllable_cut_rate is None
    data = to_json([unplaced], None)
    row = table([unplaced]).splitlines()[2]
    assert row.count("- (200 unmeasured lines)") == 2  # both cut columns (0.00% is the fallback rate)
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(resources.files("wwho.data").joinpath("eval.schema.json").read_text())
    jsonschema.validate(data, schema)
    measured = Metrics("t", "x.txt", lines=1, words=2, tokens=3, boundaries=4, boundaries_in_syllable=1)
    assert measured.syllable_cut_rate == 0.25 and measured.cluster_cut_rate == 0.0


def _known_units(tok, line):
    """(start, unit, bare-known-only) of each word syllable of ``line`` that ``tok``'s vocabulary knows
    as it is or with a space before it, and of a spaced one known only bare."""
    out, pos = [], 0
    for is_word, units in tok.splitter.split(line):
        for unit in units:
            if is_word and (unit in tok.vocab or " " + unit in tok.vocab):
                out.append((pos, unit, False))
            elif is_word and unit[:1] == " " and unit[1:] in tok.vocab:
                out.append((pos, unit, True))
            pos += len(unit.encode("utf-8"))
    return out


@pytest.mark.parametrize("script", ["sinhala", "indic", "sinhala, no bare syllables"])
def test_known_syllable_cuts_are_zero_for_sgpe_and_count_every_cut_made(tokenizers, tmp_path, script):
    """``wwho eval``'s integrity count: 0 on SGPE's own tokens; a boundary put inside a known
    syllable counts one, one after the space of a syllable known only bare, or inside a syllable
    the vocabulary lacks, counts none. Without ``bare_syllables`` a syllable may be known only after a
    space, and inside a word the encoder then spells it: those are counted, not assumed away."""
    from wwho.sgpe import SGPETokenizer

    if script.endswith("no bare syllables"):
        sample = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt")
        tok = SGPETokenizer.train([str(sample)], vocab_size=2000, bare_syllables=False, progress=False)
    else:
        tok = tokenizers[script]
    evaluated = load_spec(str(tok.save(tmp_path / "t")))
    lines = [x for x in (CORPORA / "si" / "flores200-devtest.txt").read_text("utf-8").splitlines()[:40] if x]
    if script == "indic":
        lines += (CORPORA / "ta" / "flores200-devtest.txt").read_text("utf-8").splitlines()[:20]
    found = evaluate(evaluated, lines).known_syllable_cuts
    assert found == 0 if "bare" not in script else found > 0, found
    known = bare = unknown = 0
    for line in lines:
        ids, ends = evaluated.encode(line)
        before = evaluated.known_cuts(line, ends)
        for start, unit, bare_only in _known_units(tok, line):
            width = len(unit[1 if bare_only else 0].encode("utf-8"))  # its first character's bytes
            if len(unit) < 2 + bare_only:
                continue
            at = start + width + (1 if bare_only else 0)  # after its first character (after the space)
            assert evaluated.known_cuts(line, sorted({*ends, at})) == before + (at not in ends), (line, unit)
            known += 1
            if bare_only:
                assert evaluated.known_cuts(line, sorted({*ends, start + 1})) == before, (line, unit)
                bare += 1
        pos = 0
        for is_word, units in tok.splitter.split(line):
            for unit in units:
                if is_word and len(unit) > 1 and unit.strip() not in tok.vocab and " " + unit.strip() not in tok.vocab:
                    assert evaluated.known_cuts(line, sorted({*ends, pos + len(unit[0].encode("utf-8"))})) == before
                    unknown += 1
                pos += len(unit.encode("utf-8"))
    assert known > 100 and bare + unknown > 0, (known, bare, unknown)


def test_known_syllable_cuts_of_a_meta_tokenizer_and_none_for_others(tokenizers, spec_zoo, tmp_path, monkeypatch):
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    monkeypatch.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    from wwho import MetaTokenizer

    MetaTokenizer(tokenizers["sinhala"], "o200k_base").save(tmp_path / "meta")
    lines = ["ශ්‍රී ලංකාව යනු දිවයිනකි. Hello, world 123!", "emoji 😀 and ශ්‍රී"]
    assert evaluate(load_spec(str(tmp_path / "meta")), lines).known_syllable_cuts == 0
    for kind in ("tiktoken", "hf tokenizer.json", "spm"):
        assert evaluate(load_spec(spec_zoo[kind]), lines).known_syllable_cuts is None, kind


def test_a_meta_tokenizer_counts_its_sgpe_parts_fallback_tokens(tokenizers, tmp_path, monkeypatch):
    """A meta tokenizer's vocabulary is not a dict: read as one by the fallback column, its
    byte-fallback tokens would never be counted (0%)."""
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    monkeypatch.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    from wwho import MetaTokenizer

    meta = MetaTokenizer(tokenizers["sinhala"], "o200k_base")
    meta.save(tmp_path / "meta")
    line = "\u0d80 ලංකා hello"  # U+0D80 is no Sinhala character SGPE has: byte fallback
    ids = meta.encode(line)
    fallback = [i for i in ids if i >= meta.offset and meta.sgpe.id_to_token(i - meta.offset).startswith("<0x")]
    assert fallback, meta.tokenize(line)
    m = evaluate(load_spec(str(tmp_path / "meta")), [line])
    assert m.fallback_tokens == len(fallback) and m.tokens == len(ids)


@pytest.mark.parametrize("kind", ["meta", "bytelevel", "sgpe"])
def test_special_token_text_in_a_corpus_line_is_ordinary_text(kind, tokenizers, tmp_path, monkeypatch):
    """A corpus line holding "<|endoftext|>" does not end ``wwho eval`` of a meta or byte-level
    tokenizer with DisallowedSpecialError: it is read as text, as tiktoken:NAME reads it."""
    if kind != "sgpe" and not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    monkeypatch.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    from wwho import ByteBPE, MetaTokenizer

    if kind == "meta":
        tok = MetaTokenizer(tokenizers["sinhala"], "o200k_base")
    elif kind == "bytelevel":
        tok = ByteBPE.from_tiktoken("o200k_base")
    else:
        tok = tokenizers["sinhala"]
    tok.save(tmp_path / "t")
    lines = ["hello <|endoftext|> world ලංකා [CLS]", "ශ්‍රී ලංකාව"]
    m = evaluate(load_spec(str(tmp_path / "t")), lines)
    assert m.lines == 2 and m.lossless_rate == 1.0
    assert m.tokens == sum(len(tok.encode(x, disallowed_special=())) for x in lines)


def test_hf_character_offsets_end_the_dummy_prefix_where_it_starts(tmp_path):
    """HF gives a lone leading "▁" (Metaspace's dummy prefix) the first character's offsets too, so
    taking each token's end would count the line start's boundary inside that character: a cut
    counted twice on every line whose first character is a token of its own."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    from wwho.eval_specs import _hf_object

    line = "\u0da9\u0dd0"  # ඩැ: one grapheme cluster, one syllable, two characters
    tok = Tokenizer(models.BPE({"▁": 0, "[UNK]": 1}, [], unk_token="[UNK]"))
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.Metaspace(), decoders.Metaspace()
    e = tok.encode(line)
    assert e.tokens == ["▁", "[UNK]", "[UNK]"] and e.offsets[0] == e.offsets[1] == (0, 1)
    m = evaluate(_hf_object(tok, "hf"), [line])
    assert m.boundaries == 1 and m.boundaries_in_cluster == 1  # inside ඩැ, once (the line start is none)


def test_a_boundary_two_tokens_share_and_a_line_of_tabs_count_once():
    """Token ends repeat where a token covers no text (an end of 1, then 1 again): one boundary,
    not two; words are split on any whitespace run, tabs and double spaces too."""
    from wwho.eval_specs import Evaluated

    line = "a\tb  c"
    tok = Evaluated(name="stub", encode=lambda text: ([1, 2, 3], [1, 1, len(text)]),
                    decode=lambda ids: line, is_fallback=lambda i: False, vocab_size=4)
    m = evaluate(tok, [line])
    assert m.boundaries == 1 and m.words == 3 and m.tokens == 3


def test_the_line_start_is_no_boundary_after_a_dummy_space_token(tmp_path):
    """A prefix-space SGPE whose dummy space is a token of its own ends that token at offset 0, which
    must not count as a boundary (it would lower every cut rate). Counted here from the token strings
    themselves."""
    import warnings

    from wwho.eval_specs import load_spec
    from wwho.sgpe import SGPETokenizer

    sample = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = SGPETokenizer.train_from_iterator(sample[:800], vocab_size=600, script="sinhala", progress=False,
                                                prefix_space=True)
    tok.save(tmp_path / "px")
    lines = [line for line in sample[900:1200] if line.strip()]
    assert any(tok.tokenize(line)[0] == " " for line in lines)  # the case: a lone dummy space first
    want = 0
    for line in lines:
        ends, at = set(), -1  # the dummy space is no byte of the line
        for i in tok.encode(line):  # (a byte token's string is "<0xE0>": its bytes are one)
            at += len(tok.decode_single_token_bytes(i))
            ends.add(at)
        want += len({e for e in ends if 0 < e < len(line.encode("utf-8"))})
    for spec in (str(tmp_path / "px"), f"hf:{tmp_path / 'px' / 'tokenizer.json'}"):
        m = evaluate(load_spec(spec), lines)
        assert m.boundaries == want, spec


def test_a_share_that_is_not_all_or_nothing_never_prints_as_if_it_were():
    """2,999 lossless lines of 3,000 must not print "100.0%" (nor a share under 0.005% "0.00%"),
    which reads as every line exact (or none cut)."""
    from wwho.cli.eval import table
    from wwho.evaluate import Metrics

    m = Metrics("A", "x.txt", lines=3000, words=3000, tokens=4000, boundaries=100_000, boundaries_in_cluster=1,
                boundaries_in_syllable=0, lossless_lines=2999, fallback_tokens=0)
    row = table([m]).splitlines()[-1]
    assert ">99.9%" in row and "100.0%" not in row and "<0.01%" in row and "0.00%" in row
    m.lossless_lines = 3000
    assert "100.0%" in table([m]).splitlines()[-1]


def test_one_tokenizer_has_one_vocab_size_however_it_is_named(spec_zoo, monkeypatch):
    """tiktoken:o200k_base reports 200,000 (the tokens), as the same ranks file named as a file and
    every other kind report, not 200,019 (the id space)."""
    if "tiktoken" not in spec_zoo:
        pytest.skip("the shared o200k_base ranks file is absent (set WWHO_SHARED_DATA)")
    monkeypatch.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    named, filed = (load_spec(spec_zoo[k]).vocab_size for k in ("tiktoken", ".tiktoken file"))
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(O200K_FILE))  # tiktoken's own reader: 199,998 ranks, and two specials
    assert named == filed == len(ranks) + 2


def test_a_pattern_no_tokenizer_takes_is_refused_not_ignored(spec_zoo, monkeypatch):
    """``--pattern`` was dropped in silence for ``tiktoken:``, ``hf:`` and ``spm:`` SPECs (and a
    ``tiktoken:PATH`` of one's own was refused for want of the pattern it was given)."""
    if O200K_FILE.is_file():
        monkeypatch.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    for kind in ("hf tokenizer.json", "spm", "tiktoken"):
        if kind in spec_zoo:
            with pytest.raises(VocabError, match="pattern"):
                load_spec(spec_zoo[kind], pattern="gpt2")
    if ".tiktoken file" in spec_zoo:  # the file's regex is o200k's own: given as another, it is the one used
        ids = load_spec(f"tiktoken:{spec_zoo['.tiktoken file']}", pattern="gpt2").encode("Hello world's 12345")[0]
        assert ids != load_spec("tiktoken:o200k_base").encode("Hello world's 12345")[0]


def test_eval_reads_the_text_field_it_is_told(tmp_path, monkeypatch):
    """``--text-field``, which the JSONL errors of ``wwho eval`` told users to give, and it lacked."""
    monkeypatch.setattr("wwho.evaluate.load_spec", lambda spec, pattern=None: by_char())
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"body": "ab c"}\n{"body": "d"}\n')
    (m,) = evaluate_all(["chars"], [str(corpus)], text_field="body")
    assert (m.lines, m.chars, m.words) == (2, 5, 3)
    with pytest.raises(CorpusError, match="no field 'text' \\(use --text-field"):
        evaluate_all(["chars"], [str(corpus)])


def test_eval_refuses_a_plot_of_too_many_bars_and_a_json_that_is_no_tokenizer(tmp_path):
    from wwho.cli.eval import MAX_PLOT_BARS

    corpora = []
    for i in range(MAX_PLOT_BARS + 1):
        corpora.append(tmp_path / f"c{i}.txt")
        corpora[-1].write_text("x\n")
    message = one_line_error(run_wwho("eval", "--quiet", "--corpus", *corpora, "--tokenizer", "o200k_base",
                                      "--plot", tmp_path / "p.png"))
    assert f"{MAX_PLOT_BARS + 1:,} bars, more than the {MAX_PLOT_BARS}" in message
    assert not (tmp_path / "p.png").exists()
    notok = tmp_path / "notok.json"
    notok.write_text('{"a": 1}')
    with pytest.raises(VocabError, match="not a tokenizer.json \\(no 'model' object\\)"):
        load_spec(f"hf:{notok}")


@pytest.mark.parametrize("n", [1, 10, 12, 20, 21, 120])
def test_every_tokenizer_of_a_plot_has_its_own_color(n):
    """matplotlib's default cycle repeats after ten tokenizers: the eleventh looked like the first."""
    pytest.importorskip("matplotlib")
    from wwho.cli.eval import series_colors

    colors = series_colors(n)
    assert len(colors) == n and len({tuple(round(x, 6) for x in c) for c in colors}) == n
