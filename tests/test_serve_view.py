"""What ``wwho serve`` shows, without a web server: tokens laid over the input, cuts, comparison.

Oracles we did not write: tiktoken's own ids and token bytes for o200k_base, ``regex`` ``\\X`` for
grapheme clusters, strict UTF-8 decoding for "not whole characters". Syllables come from
``wwho.segment`` + the script's syllabifier (the definition the whole project measures against).
"""

from __future__ import annotations

import itertools

import pytest
import regex
from conftest import DATA, FUZZ_INDIC, O200K_FILE
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wwho import Syllabifier, segment
from wwho.eval_specs import Evaluated, load_spec
from wwho.serve.view import TextLayout, compare, fair_shares, token_pieces, token_view

LLAMA3 = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
ALPHABET = FUZZ_INDIC + list("ab Z1.,\t\n") + ["\u200d", "\u200c", "é", "e\u0301", "🏏", "👍🏽", "中"]
CONTINUATION = bytes(range(0x80, 0xC0))
TEXTS = st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join)


@pytest.fixture(scope="module")
def o200k_spec(monkeypatch_module):
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    monkeypatch_module.setenv("WWHO_TIKTOKEN_FILE", str(O200K_FILE))
    return load_spec("tiktoken:o200k_base")


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def llama3():
    if not LLAMA3.is_file():
        pytest.skip(f"{LLAMA3} is absent")
    return load_spec(str(LLAMA3))


@pytest.fixture(scope="module")
def llama3_native(llama3):
    """wwho's ByteBPE on the Llama 3 vocabulary: its ids are checked against llama.cpp's in test_gguf.py."""
    from wwho import ByteBPE

    return ByteBPE.from_gguf(LLAMA3)


@pytest.fixture(scope="module")
def sgpe(tokenizers, tmp_path_factory):
    path = tmp_path_factory.mktemp("sgpe-mixed")
    tokenizers["mixed"].save(path)
    return path


@pytest.fixture(scope="module")
def sgpe_spec(sgpe):
    """The saved SGPE tokenizer as ``wwho serve`` loads it (once, not for every example)."""
    return load_spec(str(sgpe))


@pytest.fixture(scope="module")
def hf_spec(sgpe):
    """Its HF export as ``wwho serve`` loads ``hf:tokenizer.json``, and HF ``tokenizers``' own load."""
    from tokenizers import Tokenizer

    return load_spec(f"hf:{sgpe / 'tokenizer.json'}"), Tokenizer.from_file(str(sgpe / "tokenizer.json"))


# -- oracles -------------------------------------------------------------------------------------

def char_starts(text: str) -> list[int]:
    out = [0]
    for ch in text:
        out.append(out[-1] + len(ch.encode("utf-8")))
    return out


def inside_clusters(text: str) -> set[int]:
    starts, out, pos = char_starts(text), set(), 0
    for m in regex.finditer(r"\X", text):
        out.update(range(starts[pos] + 1, starts[pos + len(m.group())]))
        pos += len(m.group())
    return out


def inside_syllables(text: str) -> set[int]:
    """Byte offsets inside a syllable of an Indic run (other text has no syllables, as in ``wwho eval``)."""
    starts, out, pos = char_starts(text), set(), 0
    for seg in segment(text):
        pos += seg.has_leading_space
        if not seg.is_indic:
            pos += len(seg.text)
            continue
        # (the syllabifier itself: a run may hold another script's letters, which syllabify warns of)
        for unit in Syllabifier.for_script(seg.script.value).tokenize(seg.text):
            out.update(range(starts[pos] + 1, starts[pos + len(unit)]))
            pos += len(unit)
    assert pos == len(text)
    return out


def check_against_bytes(view, text: str, ids: list[int], pieces: list[bytes]) -> None:
    """The view of ``text`` says what the token ids and bytes (from the tokenizer itself) imply."""
    assert view.aligned
    assert [t.id for t in view.tokens] == ids
    assert [bytes.fromhex(t.bytes) for t in view.tokens] == pieces
    assert "".join(t.text for t in view.tokens) == text
    data, starts = text.encode("utf-8"), char_starts(text)
    at_char = set(starts)
    clusters, syllables = inside_clusters(text), inside_syllables(text)
    pos = 0
    for k, (t, piece) in enumerate(zip(view.tokens, pieces)):
        end = pos + len(piece)
        assert data[pos:end] == piece
        try:
            piece.decode("utf-8", "strict")
            whole = True
        except UnicodeDecodeError:
            whole = False
        assert t.partial == (not whole)
        # the characters shown are those whose first byte is in this token
        assert t.text == "".join(ch for ch, s in zip(text, starts) if pos <= s < end)
        assert t.lead == (0 if pos in at_char else len(piece) - len(piece.lstrip(CONTINUATION)))
        last = k == len(view.tokens) - 1
        assert t.cut_cluster == (not last and end in clusters)
        assert t.cut_syllable == (not last and end in syllables)
        pos = end
    assert view.cuts_in_syllable == sum(t.cut_syllable for t in view.tokens)
    assert view.boundaries == max(len(ids) - 1, 0)


# -- tiktoken: ids and bytes straight from tiktoken ------------------------------------------------

def tiktoken_truth(text: str):
    from wwho.bytelevel.tiktoken_loader import get_encoding

    enc = get_encoding("o200k_base", tiktoken_file=O200K_FILE)
    ids = enc.encode_ordinary(text)
    return ids, [enc.decode_single_token_bytes(i) for i in ids]


@pytest.mark.parametrize("text", ["ශ්‍රී ලංකාව", "क्षत्रिय और नमस्ते", "Hello ශ්‍රී क्ष 🏏\n\tx", "", " ", "👍🏽"])
def test_o200k_view_is_tiktoken(o200k_spec, text):
    view = token_view(o200k_spec, TextLayout(text))
    check_against_bytes(view, text, *tiktoken_truth(text))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_o200k_view_property(o200k_spec, text):
    check_against_bytes(token_view(o200k_spec, TextLayout(text)), text, *tiktoken_truth(text))


@pytest.mark.parametrize("text, limit", [("", None), ("ශ්‍රී ලංකාව", 0), ("Hello world", 1)])
def test_every_column_has_one_entry_per_shown_token(o200k_spec, text, limit):
    """With no token shown (an empty text, a share of 0) the ``start`` column holds no entry, not
    [0]: docs/serve.md says one entry per shown token."""
    columns = token_view(o200k_spec, TextLayout(text), limit).to_json()
    assert {name: len(column) for name, column in columns["tokens"].items()} == \
        dict.fromkeys(columns["tokens"], columns["shown"])


def test_shri_is_one_syllable_cut_by_o200k(o200k_spec):
    # ශ්‍රී is one syllable: every boundary o200k_base puts inside it is a cut inside a syllable.
    view = token_view(o200k_spec, TextLayout("ශ්‍රී"))
    assert len(view.tokens) >= 2
    assert view.cuts_in_syllable == len(view.tokens) - 1


# -- byte-level pieces that are not whole characters (Llama 3 splits Sinhala letters) -------------

def test_llama3_splits_a_letter_and_the_page_still_lines_up(llama3, llama3_native):
    text = "ස"  # U+0DC3, three bytes; Llama 3 has no token for it
    own = llama3_native
    ids = own.encode(text)
    assert len(ids) >= 2
    view = token_view(llama3, TextLayout(text))
    check_against_bytes(view, text, ids, [own.token_bytes(i) for i in ids])
    first, *rest = view.tokens
    assert first.text == "ස" and first.partial and first.lead == 0 and first.cut_cluster and first.cut_syllable
    assert all(t.text == "" and t.lead == len(bytes.fromhex(t.bytes)) and t.partial for t in rest)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_llama3_view_property(llama3, llama3_native, text):
    own = llama3_native
    ids = own.encode(text)
    check_against_bytes(token_view(llama3, TextLayout(text)), text, ids, [own.token_bytes(i) for i in ids])


# -- SGPE, and its HF export run by HF tokenizers (offsets instead of token bytes) ------------------

@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_sgpe_view_property(tokenizers, sgpe_spec, text):
    tok = tokenizers["mixed"]
    ids = tok.encode(text)
    view = token_view(sgpe_spec, TextLayout(text))
    check_against_bytes(view, text, ids, [tok.token_bytes(i) for i in ids])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_hf_offsets_view_property(tokenizers, hf_spec, text):
    """``hf:tokenizer.json`` has no token bytes: they are cut from the input at HF's offsets; byte-fallback
    tokens share one character's offsets and are given one byte each."""
    spec, hf = hf_spec
    ids = hf.encode(text, add_special_tokens=False).ids
    tok = tokenizers["mixed"]
    assert ids == tok.encode(text)  # the export is exact (tested in test_export_sgpe_hf); the bytes are SGPE's
    view = token_view(spec, TextLayout(text))
    check_against_bytes(view, text, ids, [tok.token_bytes(i) for i in ids])


def test_hf_byte_fallback_tokens_get_one_byte_each(tokenizers, sgpe):
    text = "中"  # not in a Sinhala/Devanagari vocabulary: three byte-fallback tokens with the same offsets
    tok = tokenizers["mixed"]
    ids = tok.encode(text)
    assert len(ids) == 3
    view = token_view(load_spec(f"hf:{sgpe / 'tokenizer.json'}"), TextLayout(text))
    assert [t.bytes for t in view.tokens] == ["e4", "b8", "ad"]
    assert [t.text for t in view.tokens] == ["中", "", ""]


def test_token_pieces_without_ends_is_none():
    ev = Evaluated("x", lambda s: ([1], None), lambda ids: "", lambda i: False, 2)
    assert token_pieces(ev, [1], None, b"a") is None


# -- normalizing tokenizers -------------------------------------------------------------------------

def test_hf_offsets_lay_a_normalizing_tokenizer_over_the_input(tmp_path):
    """HF offsets point into the input, so a lowercasing tokenizer is drawn over the original text
    (a gap the pre-tokenizer dropped goes to the token after it)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"hello": 0, "world": 1, "[UNK]": 2}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "lower.json"
    tok.save(str(path))
    view = token_view(load_spec(f"hf:{path}"), TextLayout("Hello World"))
    assert view.aligned
    assert [(t.id, t.text) for t in view.tokens] == [(0, "Hello"), (1, " World")]


def test_tokens_whose_bytes_are_not_the_input_are_shown_unaligned():
    """An [UNK] token or a normalized piece cannot be laid over the input: shown as pieces, not compared."""
    def encode(text):
        return [ord(c) for c in text], None
    upper = Evaluated("upper", encode, lambda ids: "", lambda i: False, 0x110000,
                      lambda i: chr(i).upper().encode())
    layout = TextLayout("ab")
    view = token_view(upper, layout)
    assert not view.aligned
    assert [(t.id, t.text, t.bytes) for t in view.tokens] == [(97, "A", "41"), (98, "B", "42")]
    assert not any(t.cut_cluster or t.cut_syllable or t.start is not None for t in view.tokens)
    assert [(s.text, s.agree) for s in compare([view], layout)] == [("ab", True)]
    no_bytes = Evaluated("x", encode, lambda ids: "", lambda i: False, 0x110000)
    view = token_view(no_bytes, layout)
    assert not view.aligned and [t.id for t in view.tokens] == [97, 98]


def test_an_hf_unknown_token_is_shown_unaligned_as_the_tokenizers_pieces(tmp_path):
    """HF gives an [UNK] the offsets of the text it stands for: cut from the input there, it looked like
    a token holding that text. A line with one is shown unaligned, as the tokenizer's own pieces."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"hello": 0, "world": 1, "[UNK]": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "unk.json"
    tok.save(str(path))
    spec = load_spec(f"hf:{path}")
    view = token_view(spec, TextLayout("hello zzz"))
    assert not view.aligned
    assert [(t.id, t.text, t.bytes) for t in view.tokens] == [(0, "hello", ""), (2, "[UNK]", "")]
    assert token_view(spec, TextLayout("hello world")).aligned  # no [UNK]: laid over the input


def test_a_normalizing_sentencepiece_model_is_shown_as_its_pieces(tmp_path):
    """A SentencePiece model that normalizes the text (spaces collapsed, a dummy space added) does not
    decode back to it: shown unaligned as its pieces, not as a row of empty tokens."""
    spm = pytest.importorskip("sentencepiece")
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b c ab bc abc\n" * 200, encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"), vocab_size=12,
                                   model_type="bpe", minloglevel=2)
    spec = load_spec(f"spm:{tmp_path / 'm.model'}")
    view = token_view(spec, TextLayout("ab  c"))
    assert not view.aligned
    ids = [t.id for t in view.tokens]
    assert [t.text for t in view.tokens] == [spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
                                             .id_to_piece(i) for i in ids]
    assert "".join(t.text for t in view.tokens).replace("\u2581", " ").strip() == "ab c"


def test_a_dummy_space_before_the_text_is_not_laid_over_it():
    """SentencePiece-style tokenizers (and SGPE with prefix_space) encode " " + text."""
    def encode(text):
        return [ord(c) for c in " " + text], None
    spaced = Evaluated("spaced", encode, lambda ids: "", lambda i: False, 0x110000, lambda i: chr(i).encode())
    view = token_view(spaced, TextLayout("ab"))
    assert view.aligned and view.prefix == " "
    assert [(t.text, t.bytes, t.start, t.end) for t in view.tokens] == [("", "20", 0, 0), ("a", "61", 0, 1),
                                                                         ("b", "62", 1, 2)]

    def encode_joined(text):  # the dummy space inside the first token
        return [1, 2], None
    pieces = {1: b" a", 2: b"b"}
    joined = Evaluated("joined", encode_joined, lambda ids: "", lambda i: False, 3, pieces.__getitem__)
    view = token_view(joined, TextLayout("ab"))
    assert view.prefix == " " and [(t.text, t.bytes) for t in view.tokens] == [("a", "2061"), ("b", "62")]
    assert token_view(joined, TextLayout("xb")).aligned is False  # not a dummy space: not laid over


# -- comparison ---------------------------------------------------------------------------------------

def by_units(name: str, units: list[str]) -> Evaluated:
    """A fake tokenizer that cuts the text into the given units (ids are positions)."""
    def encode(text):
        assert "".join(units) == text
        ends, pos = [], 0
        for u in units:
            pos += len(u.encode())
            ends.append(pos)
        return list(range(len(units))), ends
    return Evaluated(name, encode, lambda ids: "", lambda i: False, 100)


def test_compare_marks_the_spans_where_cuts_differ():
    text = "abcdef"
    layout = TextLayout(text)
    a = token_view(by_units("a", ["ab", "cd", "ef"]), layout)
    b = token_view(by_units("b", ["ab", "c", "d", "ef"]), layout)
    c = token_view(by_units("c", ["a", "b", "cd", "ef"]), layout)
    assert [(s.text, s.agree) for s in compare([a, b], layout)] == [("ab", True), ("cd", False), ("ef", True)]
    assert [(s.text, s.agree) for s in compare([a, b, c], layout)] == [("ab", False), ("cd", False), ("ef", True)]
    assert [(s.text, s.agree) for s in compare([a, a], layout)] == [("abcdef", True)]
    assert compare([a], TextLayout("")) == []


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
@example(text="🏏क")
def test_compare_property(o200k_spec, llama3, sgpe_spec, text):
    layout = TextLayout(text)
    views = [token_view(t, layout) for t in (o200k_spec, llama3, sgpe_spec)]
    spans = compare(views, layout)
    assert "".join(s.text for s in spans) == text
    assert all(s.text == text[s.start:s.end] and s.start < s.end for s in spans)
    starts = char_starts(text)
    for s in spans:
        # in an agreeing span every tokenizer cuts at the same bytes, its first byte included; in a
        # disagreeing one they differ. (The first byte counts: in "🏏क" o200k keeps the emoji's last
        # byte with "क", llama-bpe cuts before "क", so they disagree on where "क" starts.)
        a, b = starts[s.start], starts[s.end]
        inner = [frozenset(e for e in v.ends if a <= e < b) for v in views]
        assert s.agree == (len(set(inner)) == 1), (s, inner)
    for s, nxt in itertools.pairwise(spans):
        assert s.end == nxt.start
        assert not (s.agree and nxt.agree), "two agreeing spans in a row are one span"


# -- bounded output -----------------------------------------------------------------------------------

def test_a_limit_lays_out_only_the_first_tokens_but_counts_them_all(o200k_spec):
    text = "ශ්‍රී ලංකාව " * 40
    layout = TextLayout(text)
    full = token_view(o200k_spec, layout)
    cut = token_view(o200k_spec, layout, limit=7)
    assert cut.truncated and not full.truncated
    assert len(cut.ids) == len(cut.texts) == len(cut.cut_syllable) == len(cut.starts) == 7
    assert cut.tokens == full.tokens[:7]  # the same tokens as far as they go, flags after the 7th included
    assert (cut.count, cut.boundaries, cut.cuts_in_syllable, cut.cuts_in_cluster) == \
           (full.count, full.boundaries, full.cuts_in_syllable, full.cuts_in_cluster)
    assert cut.covered == len("".join(full.texts[:7]).encode()) and full.covered == len(layout.data)
    assert token_view(o200k_spec, layout, limit=full.count).tokens == full.tokens


def test_compare_stops_where_the_shortest_truncated_view_stops():
    text = "abcdefgh"
    layout = TextLayout(text)
    a = token_view(by_units("a", ["ab", "cd", "ef", "gh"]), layout, limit=2)
    b = token_view(by_units("b", ["ab", "c", "d", "ef", "gh"]), layout)
    assert [(s.text, s.agree) for s in compare([a, b], layout)] == [("ab", True), ("cd", False)]
    assert compare([token_view(by_units("a", ["ab", "cd"]), TextLayout("abcd"), limit=0)], TextLayout("abcd")) == []


@pytest.mark.parametrize(("counts", "budget", "shares"), [
    ([10, 20, 30], 100, [10, 20, 30]),     # enough for all
    ([10, 50_000, 30_000], 40_000, [10, 19_995, 19_995]),  # what the small one leaves goes to the others
    ([30, 30, 30], 30, [10, 10, 10]),
    ([], 10, []),
    ([5, 0], 3, [3, 0]),
])
def test_fair_shares(counts, budget, shares):
    assert fair_shares(counts, budget) == shares
    assert sum(shares) <= budget


def test_each_token_bytes_is_asked_once_per_id():
    calls = []

    def token_bytes(i):
        calls.append(i)
        return b"ab"[i:i + 1]
    tok = Evaluated("ab", lambda text: ([0, 1] * (len(text) // 2), None), lambda ids: "", lambda i: False, 2,
                    token_bytes)
    view = token_view(tok, TextLayout("ab" * 1000))
    assert view.aligned and view.count == 2000 and sorted(calls) == [0, 1]
