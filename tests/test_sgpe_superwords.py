"""Superword merges: the span pattern (Python and HF agree), counts, hand-checkable merges, guards."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.counting import PIECES
from wwho.sgpe import SGPETokenizer, train_sgpe
from wwho.sgpe.superwords import SPANS, holds_a_letter, piece_counts, spans_pattern_source
from wwho.sgpe.vocabfile import BYTE_TOKENS, SPECIAL_TOKENS

ALPHABET = ["ශ්‍රී", "ලංකාව", "नमस्ते", "a", "1", ".", "।", "॥", "෴", "?", ":", ",",
            " ", "  ", "\n", "\t", "\u00a0", "🙂"]
texts = st.lists(st.sampled_from(ALPHABET), max_size=30).map("".join)


@given(text=texts)
@settings(max_examples=300, deadline=None)
def test_span_pattern_is_the_same_in_python_and_hf(text):
    from tokenizers import Regex, pre_tokenizers

    python = re.findall(SPANS, text)
    assert "".join(python) == text
    split = pre_tokenizers.Split(Regex(spans_pattern_source(onig=True)), "isolated")
    assert [s for s, _ in split.pre_tokenize_str(text)] == python
    for span in python:  # a span is whole pieces, and ends a sentence only at its end
        assert "".join(re.findall(PIECES, span)) == span
        assert not re.search(r"[.!?:;।॥෴] ", span)


def test_spans_by_hand():
    assert re.findall(SPANS, "ශ්‍රී ලංකාව යනු. දිවයිනකි  ය\nx") == [
        "ශ්‍රී ලංකාව යනු.", " දිවයිනකි", " ", " ය", "\n", "x"]


@given(spans=st.dictionaries(texts, st.integers(1, 5), max_size=10))
@settings(max_examples=100, deadline=None)
def test_piece_counts_equal_counting_pieces(spans):
    expected: Counter[str] = Counter()
    for span, count in spans.items():
        for piece in re.findall(PIECES, span):
            expected[piece] += count
    assert piece_counts(Counter(spans)) == expected


@given(docs=st.lists(texts | st.text(max_size=20), max_size=6), prefix=st.booleans())
@settings(max_examples=200, deadline=None)
def test_core_counts_spans_and_their_pieces_as_the_regex(docs, prefix):
    from wwho import _core
    from wwho.sgpe.superwords import SPAN_BREAKS

    counter = _core.PieceCounter(span_breaks=SPAN_BREAKS, prefix_space=prefix)
    counter.count_texts(docs, threads=2)
    seen = [" " + d if prefix and d else d for d in docs]
    spans = Counter(s for d in seen for s in re.findall(SPANS, d))
    assert dict(counter.items()) == spans
    assert dict(counter.pieces().items()) == piece_counts(spans)
    plain = _core.PieceCounter(prefix_space=prefix)
    plain.count_texts(docs, threads=1)
    assert dict(plain.items()) == Counter(p for d in seen for p in re.findall(PIECES, d))


def test_core_counts_spans_of_files_as_of_texts(tmp_path):
    from wwho import _core
    from wwho.sgpe.superwords import SPAN_BREAKS

    lines = ["ශ්‍රී ලංකාව යනු. දිවයිනකි  ය", "नमस्ते दुनिया। फिर", "", "  a b\tc  "] * 50
    path = tmp_path / "c.txt"
    path.write_text("\r\n".join(lines) + "\n", encoding="utf-8")
    for prefix in (False, True):
        from_file = _core.PieceCounter(span_breaks=SPAN_BREAKS, prefix_space=prefix)
        from_file.count_files([path], threads=2, block_bytes=1 << 16)
        from_texts = _core.PieceCounter(span_breaks=SPAN_BREAKS, prefix_space=prefix)
        from_texts.count_texts([line for line in lines if line], threads=1)
        assert dict(from_file.items()) == dict(from_texts.items())


@given(lines=st.lists(texts.map(lambda t: t.replace("\n", " ")), min_size=1, max_size=8))
@settings(max_examples=150, deadline=None)
def test_core_cuts_spans_of_file_lines_as_the_pattern_does(tmp_path_factory, lines):
    # Lines read from files are cut as UTF-8 (without decoding them), texts as code points.
    from wwho import _core
    from wwho.sgpe.superwords import SPAN_BREAKS

    path = tmp_path_factory.mktemp("spans") / "c.txt"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    counter = _core.PieceCounter(span_breaks=SPAN_BREAKS)
    counter.count_files([path], threads=1)
    read = path.read_text(encoding="utf-8").split("\n")  # as the core splits lines (\r stays)
    want = Counter(s for line in read for s in re.findall(SPANS, line.rstrip("\r\n")))
    assert dict(counter.items()) == want


def corpus(tmp_path, lines):
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_repeated_phrase_becomes_one_token(tmp_path):
    path = corpus(tmp_path, ["ශ්‍රී ලංකාව දිවයිනකි"] * 20 + ["ලංකාව", "දිවයිනකි"])
    # (the ids left over after the superword stage stay unused here: see the ending superwords below)
    vf = train_sgpe(path, vocab_size=2000, superword_share=0.5, complete_superwords=False, progress=False,
                    workers=1)
    # both pairs occur 20 times; the tie goes to the smaller string pair (" " < "ශ")
    assert vf.superword_merges == [(" ලංකාව", " දිවයිනකි"), ("ශ්‍රී", " ලංකාව දිවයිනකි")]
    tok = SGPETokenizer(vf)
    assert tok.tokenize("ශ්‍රී ලංකාව දිවයිනකි") == ["ශ්‍රී ලංකාව දිවයිනකි"]
    assert tok.tokenize("ලංකාව දිවයිනකි") == ["ලංකාව", " දිවයිනකි"]  # never seen together: no superword


ENDING_LINES = ["ඔහු කරනවා ගෙදර", "ඇය බලනවා ගෙදර", "අපි යනවා ගෙදර"] * 3 + ["මම කර බල ය"]


def test_ids_left_go_to_superwords_of_an_ending_and_the_next_word(tmp_path):
    # A tiny corpus: every training word is one token, and the ids the other stages leave go to a word's
    # ending and the word after it. Three verbs share the ending "නවා" before " ගෙදර"; a verb the text
    # never had then joins the next word too, and no token of the training text changes.
    path = corpus(tmp_path, ENDING_LINES)
    options = dict(vocab_size=3000, superword_share=0.5, progress=False, workers=1)
    vf, off = train_sgpe(path, **options), train_sgpe(path, complete_superwords=False, **options)
    assert ("නවා", " ගෙදර") in vf.superword_merges
    assert vf.superword_merges[:len(off.superword_merges)] == off.superword_merges  # ranked after them
    assert len(vf.vocab) > len(off.vocab) and len(vf.vocab) <= 3000
    tok, before = SGPETokenizer(vf), SGPETokenizer(off)
    new = "අපි දුවනවා ගෙදර"
    assert "නවා ගෙදර" in tok.tokenize(new) and "නවා ගෙදර" not in before.tokenize(new)
    assert tok.decode(tok.encode(new)) == new
    for line in ENDING_LINES:
        assert tok.tokenize(line) == before.tokenize(line)


def test_ending_superwords_need_two_occurrences_and_spare_ids(tmp_path, monkeypatch):
    from wwho.sgpe import superwords
    from wwho.sgpe.superwords import ending_superwords
    from wwho.sgpe.words import WordSplitter

    once = corpus(tmp_path, ["ඔහු කරනවා ගෙදර", "ඇය බලනවා පාසල"])
    vf = train_sgpe(once, vocab_size=3000, superword_share=0.5, progress=False, workers=1)
    assert not [m for m in vf.superword_merges if m[0] == "නවා"]

    class Final:  # a trained superword engine's spans, as token ids, and their counts
        symbols = ["කරනවා", " ගෙදර", " පාසල", "බලනවා", " ගෙදර පාසල", "[UNK]"]

        @staticmethod
        def words_and_counts():
            return [[0, 1], [3, 1], [0, 2], [3, 2], [0, 4], [3, 4, 5], [0, -1, 1]], [2, 1, 1, 1, 1, 5, 9]


    tokens = {*Final.symbols, "නවා", "වා"}
    syllables = WordSplitter("sinhala").syllables
    # After an ending: " ගෙදර" 2 + 1 + 1 + 5 times (the last two in front of longer words), " පාසල" twice, the
    # superword " ගෙදර පාසල" once (too rare); a span with an id that is no symbol counts nothing. Most
    # frequent first, ties by text.
    assert ending_superwords(Final, syllables, tokens, spare=10) == [
        ("නවා", " ගෙදර"), ("වා", " ගෙදර"), ("නවා", " පාසල"), ("වා", " පාසල")]
    assert ending_superwords(Final, syllables, tokens, spare=2) == [("නවා", " ගෙදර"), ("වා", " ගෙදර")]
    assert ending_superwords(Final, syllables, tokens, spare=10, min_freq=3) == [("නවා", " ගෙදර"), ("වා", " ගෙදර")]
    assert ending_superwords(Final, syllables, tokens, spare=0) == []
    # And a token that begins the next word (" ගෙ" of " ගෙදර"), after an ending or after the whole first
    # word: after "නවා" and "වා" 2 + 1 + 1 + 5 times, after the word "බලනවා" 1 + 5, "කරනවා" 2 + 1.
    begins = tokens | {" ගෙ"}
    assert ending_superwords(Final, syllables, begins, spare=10) == [
        ("නවා", " ගෙ"), ("නවා", " ගෙදර"), ("වා", " ගෙ"), ("වා", " ගෙදර"), ("බලනවා", " ගෙ"), ("කරනවා", " ගෙ"),
        ("නවා", " පාසල"), ("වා", " පාසල")]
    # Past MAX_ENDING_PAIRS pairs held, those seen once so far go: " පාසල" never gets a second count.
    monkeypatch.setattr(superwords, "MAX_ENDING_PAIRS", 3)
    assert ending_superwords(Final, syllables, tokens, spare=10) == [("නවා", " ගෙදර"), ("වා", " ගෙදර")]


def test_ending_superwords_export_to_hf_with_the_same_ids(tmp_path):
    from tokenizers import Tokenizer

    tok = SGPETokenizer(train_sgpe(corpus(tmp_path, ENDING_LINES), vocab_size=3000, superword_share=0.5,
                                   progress=False, workers=1))
    tok.save(tmp_path / "tok")
    hf = Tokenizer.from_file(str(tmp_path / "tok" / "tokenizer.json"))
    for text in ["අපි දුවනවා ගෙදර", "ඔහු කරනවා ගෙදර. ඇය බලනවා ගෙදර", "දුවනවා ගෙදර ගෙදර", *ENDING_LINES]:
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text), text


def test_no_superword_after_sentence_punctuation(tmp_path):
    path = corpus(tmp_path, ["ලංකාව. දිවයිනකි"] * 20)
    vf = train_sgpe(path, vocab_size=2000, superword_share=0.5, progress=False, workers=1)
    assert vf.superword_merges == []
    assert SGPETokenizer(vf).tokenize("ලංකාව. දිවයිනකි") == ["ලංකාව.", " දිවයිනකි"]


def test_a_piece_without_a_letter_joins_no_superword_unless_asked(tmp_path):
    # A danda set apart by a space and a verse number, as Marathi verse writes them: by default the
    # phrase may become one token but the danda and the number stay apart; superword_letters=False
    # lets superwords take them, as before the option.
    path = corpus(tmp_path, ["ශ්‍රී ලංකාව । 12 ॥ \"ලංකාව\""] * 20)
    vf = train_sgpe(path, vocab_size=2000, superword_share=0.5, progress=False, workers=1)
    made = [a + b for a, b in vf.superword_merges]
    assert "ශ්‍රී ලංකාව" in made
    assert all(holds_a_letter(piece) for token in made for piece in re.findall(PIECES, token)[1:])
    assert " \"ලංකාව\"" in {a + b for a, b in vf.merges}  # punctuation with a word is a word's piece
    tok = SGPETokenizer(vf)
    assert tok.tokenize("ශ්‍රී ලංකාව । 12") == ["ශ්‍රී ලංකාව", " ।", " 12"]
    before = train_sgpe(path, vocab_size=2000, superword_share=0.5, superword_letters=False, progress=False,
                        workers=1)
    assert {"ශ්‍රී ලංකාව ।", " 12 ॥"} <= {a + b for a, b in before.superword_merges}


# Pieces with and without a letter: a vowel sign alone (Alphabetic, though no letter category), digits of
# two scripts, a danda, an emoji, Latin and Sinhala words.
PIECE_WORDS = ["ලංකාව", "ශ්‍රී", "ා", "\u0dca", "12", "१२", "।", "॥", "🙂", '"x', "x", "-", "ක1"]


@pytest.mark.filterwarnings("ignore::wwho.errors.ScriptWarning")  # drawn lines may be more Latin than Sinhala: said, not checked here
@given(lines=st.lists(st.lists(st.sampled_from(PIECE_WORDS), min_size=1, max_size=6).map(" ".join),
                      min_size=1, max_size=8))
@settings(max_examples=40, deadline=None)
def test_the_core_cuts_spans_before_letterless_pieces_as_the_reference(tmp_path_factory, lines):
    from reference.train import train as reference_train

    path = tmp_path_factory.mktemp("letters") / "train.txt"
    text = lines * 3
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    for letters in (True, False):
        got = train_sgpe(path, vocab_size=600, superword_share=0.5, superword_letters=letters, progress=False,
                         workers=1)
        want = reference_train(text, vocab_size=600, superword_share=0.5, superword_letters=letters)
        assert got.superword_merges == want.superword_merges
        if letters:
            made = [a + b for a, b in got.superword_merges]
            assert all(holds_a_letter(p) for token in made for p in re.findall(PIECES, token)[1:])


def test_holds_a_letter():
    assert holds_a_letter(" ලංකාව") and holds_a_letter(' "x') and holds_a_letter("\u0dcf")
    assert not holds_a_letter(" ।") and not holds_a_letter("१२") and not holds_a_letter(" 🙂") and not holds_a_letter("")


def test_superwords_never_produce_a_special_or_byte_token(tmp_path):
    path = corpus(tmp_path, ["x [CLS] <0x41> [CLS] y"] * 30)
    vf = train_sgpe(path, vocab_size=1000, superword_share=0.5, progress=False, workers=1)
    made = {a + b for a, b in (*vf.merges, *vf.superword_merges)}
    assert not made & (set(SPECIAL_TOKENS) | set(BYTE_TOKENS))
    tok = SGPETokenizer(vf)
    assert tok.decode(tok.encode("x [CLS] <0x41> [CLS] y")) == "x [CLS] <0x41> [CLS] y"


def test_share_is_checked(tmp_path):
    import pytest

    from wwho.errors import VocabError

    path = corpus(tmp_path, ["ලංකාව"])
    for bad in (1.0, -0.1, "0.1"):
        with pytest.raises(VocabError, match="superword_share"):
            train_sgpe(path, vocab_size=1000, superword_share=bad, progress=False, workers=1)


@given(docs=st.lists(texts, max_size=6))
@settings(max_examples=100, deadline=None)
def test_span_counts_ship_as_bytes_into_span_and_plain_counters(docs):
    # Shards counted elsewhere arrive as bytes (wwho.scale): into a span counter, or into the plain
    # counter Ray's driver keeps, the spans and their pieces are the same.
    from wwho import _core
    from wwho.sgpe.superwords import SPAN_BREAKS

    counted = _core.PieceCounter(span_breaks=SPAN_BREAKS)
    counted.count_texts(docs, threads=2)
    spans = Counter(s for d in docs for s in re.findall(SPANS, d))
    shipped = counted.to_bytes()
    into_spans = _core.PieceCounter(span_breaks=SPAN_BREAKS)
    into_spans.add_bytes(shipped)
    into_spans.add_bytes(shipped)
    into_plain = _core.PieceCounter()
    into_plain.add_bytes(shipped)
    assert dict(into_plain.items()) == spans
    assert dict(into_spans.items()) == {s: 2 * n for s, n in spans.items()}
    assert len(into_spans) == len(spans) and into_spans.total_count() == 2 * sum(spans.values())
    assert dict(into_plain.pieces().items()) == dict(counted.pieces().items()) == piece_counts(spans)


def test_span_counter_add_counts_spans_and_refuses_overflow():
    import pytest

    from wwho import _core
    from wwho.errors import CorpusError
    from wwho.sgpe.superwords import SPAN_BREAKS

    c = _core.PieceCounter(span_breaks=SPAN_BREAKS)
    c.add([" a b", " a b", " c"], [2, 1, 5])
    assert dict(c.items()) == {" a b": 3, " c": 5}
    assert dict(c.pieces().items()) == {" a": 3, " b": 3, " c": 5}
    c.add([" a"], [2**64 - 1 - 3])
    with pytest.raises(CorpusError, match="passes 2"):
        c.add([" a"], [1])  # the span " a" fits, its piece " a" (3 already from " a b") does not
    assert dict(c.pieces().items())[" a"] == 2**64 - 1


def test_superword_stage_from_span_texts_equals_from_span_counts():
    # The Ray driver hands the trainer span texts in a plain counter; the result is the same.
    from wwho import _core
    from wwho.sgpe.phases import train_on_pieces
    from wwho.sgpe.superwords import SPAN_BREAKS
    from wwho.sgpe.words import WordSplitter

    lines = ["ශ්‍රී ලංකාව දිවයිනකි. ලංකාව යනු", "ලංකාව දිවයිනකි", "x [CLS] y", "ශ්‍රී ලංකාව දිවයිනකි"] * 10
    counted = _core.PieceCounter(span_breaks=SPAN_BREAKS)
    counted.count_texts(lines, threads=2)
    plain = _core.PieceCounter()
    plain.add_bytes(counted.to_bytes())
    files = [train_on_pieces(c, splitter=WordSplitter("sinhala"), vocab_size=700, superword_share=0.3,
                             spans=True, progress=False) for c in (counted, plain)]
    assert files[0].superword_merges and files[0].superword_merges == files[1].superword_merges
    assert files[0].vocab == files[1].vocab and files[0].merges == files[1].merges
    assert len(counted) == 0  # the superword stage consumed the span table


def test_superwords_never_produce_a_special_token_holding_a_space(tmp_path):
    # A reserved text with a space spans pieces: the span's text is searched, not its pieces.
    path = corpus(tmp_path, ["ලංකාව x y දිවයිනකි"] * 30)
    specials = (*SPECIAL_TOKENS, "x y")
    vf = train_sgpe(path, vocab_size=1000, superword_share=0.5, progress=False, workers=1,
                    special_tokens=specials)
    made = {a + b for a, b in (*vf.merges, *vf.superword_merges)}
    assert "x y" not in made and " x y" not in made
    assert not any("x y" in m for m in made)
    plain = train_sgpe(corpus(tmp_path, ["ලංකාව x z දිවයිනකි"] * 30), vocab_size=1000, superword_share=0.5,
                       progress=False, workers=1, special_tokens=specials)
    assert any(" x z" in a + b for a, b in plain.superword_merges)  # the guard is what stopped it


def test_a_preparation_left_unused_is_harmless():
    # Training that stops between prepare_superwords and superword_engine (an error, Ctrl-C)
    # drops the word counts while the preparation's thread may still run.
    import gc

    from wwho import _core
    from wwho.sgpe.superwords import SPAN_BREAKS
    from wwho.sgpe.words import WordSplitter

    splitter = WordSplitter("sinhala").core
    for _ in range(20):
        counter = _core.PieceCounter(span_breaks=SPAN_BREAKS)
        counter.count_texts(["ශ්‍රී ලංකාව දිවයිනකි. ලංකාව යනු"] * 50, threads=2)
        words = counter.pieces().words(splitter, scope="pieces")
        words.prepare_superwords(counter, splitter, scope="pieces")
        assert len(counter) == 0  # the span counts went to the preparation
        del words, counter
        gc.collect()


def test_the_superword_stage_runs_once_and_frees_what_it_used():
    # SuperwordStage is the whole stage: prepared when made, trained once, leaving the span counts,
    # the word types and the first engine's words empty (the first engine's merges stay).
    import pytest

    from wwho import _core
    from wwho.bpe import MergeEngine
    from wwho.sgpe.superwords import SuperwordStage, span_breaks
    from wwho.sgpe.words import WordSplitter

    assert span_breaks(0) is None and span_breaks(0.15)
    splitter = WordSplitter("sinhala").core
    counter = _core.PieceCounter(span_breaks=span_breaks(0.15))
    counter.count_texts(["ශ්‍රී ලංකාව දිවයිනකි. ලංකාව යනු", "ශ්‍රී ලංකාව දිවයිනකි"] * 20, threads=2)
    words = counter.pieces().words(splitter, scope="pieces")
    stage = SuperwordStage(counter, words, splitter, scope="pieces", reserved=[])
    symbols, core, *_ = words.engine_input(1, arrays=False)
    first = MergeEngine.from_core(core, symbols, tie_break="smaller")
    first.train(max_symbols=len(symbols) + 5, min_freq=1, progress=False)
    final = stage.train(first, max_symbols=len(first.symbols) + 20, progress=False)
    assert final.merges and final.symbols[: len(first.symbols)] == first.symbols
    assert len(counter) == 0 and len(words) == 0 and len(first.merges) == 5
    with pytest.raises(RuntimeError, match="runs once"):
        stage.train(first, max_symbols=100, progress=False)


def test_cli_superwords_any_piece(tmp_path):
    from wwho.cli import main

    path = corpus(tmp_path, ["ශ්‍රී ලංකාව । 12 ॥"] * 20)
    made = {}
    for flags in ([], ["--superwords-any-piece"]):
        out = tmp_path / f"out{len(flags)}"
        assert main(["train", "--kind", "sgpe", "--vocab-size", "2000", "--superwords", "0.5", "--out", str(out),
                     "--quiet", "--workers", "1", *flags, str(path)]) == 0
        made[bool(flags)] = {a + b for a, b in SGPETokenizer.load(out).file.superword_merges}
    assert "ශ්‍රී ලංකාව ।" in made[True] and "ශ්‍රී ලංකාව ।" not in made[False]


def test_cli_no_complete_superwords(tmp_path):
    from wwho.cli import main

    path = corpus(tmp_path, ENDING_LINES)
    made = {}
    for flags in ([], ["--no-complete-superwords"]):
        out = tmp_path / f"out{len(flags)}"
        assert main(["train", "--kind", "sgpe", "--vocab-size", "3000", "--superwords", "0.5", "--out", str(out),
                     "--quiet", "--workers", "1", *flags, str(path)]) == 0
        made[bool(flags)] = SGPETokenizer.load(out).file.superword_merges
    assert ("නවා", " ගෙදර") in made[False] and ("නවා", " ගෙදර") not in made[True]
