"""SGPE as a hostile user meets it: ``vocab.json`` files edited by hand, text that looks like byte
tokens, and the Hugging Face export checked by ``tokenizers`` itself (an oracle wwho did not write).

Each test names what the code before it did wrong.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from conftest import edited
from hypothesis import given, settings
from hypothesis import strategies as st

from wwho.errors import VocabError
from wwho.sgpe import SGPETokenizer, load_vocab_file


@pytest.fixture(scope="module")
def saved(sgpe_vocab_json):
    """A trained vocabulary (words scope: every option set is a file format 1), as its vocab.json's JSON."""
    return sgpe_vocab_json


def _write(tmp_path, data) -> Path:
    path = tmp_path / "vocab.json"
    # ensure_ascii: a lone surrogate can only be written as a "\ud800" escape
    path.write_text(json.dumps(data, ensure_ascii=True), encoding="utf-8")
    return path


def _add_token(data, token):
    data["vocab"][token] = len(data["vocab"])
    data["vocab_size"] = len(data["vocab"])


def test_a_token_with_a_lone_surrogate_is_refused(tmp_path, saved):
    # Loaded, its save() would write a tokenizer.json that tokenizers refuses to read
    # ("unexpected end of hex escape").
    data = edited(saved, lambda d: _add_token(d, "\ud800"))
    with pytest.raises(VocabError, match=r"vocab.json: 'vocab' entry '\\ud800' holds a lone surrogate"):
        load_vocab_file(_write(tmp_path, data))


@pytest.mark.parametrize("which", ["left", "right", "result"])
def test_a_special_token_that_a_merge_uses_is_refused(tmp_path, saved, which):
    # Loaded (the trainer refuses such a vocabulary), plain text would give the special id, which
    # decode(..., skip_special_tokens=True) then drops.
    a, b = saved["merges"][0]
    special = {"left": a, "right": b, "result": a + b}[which]
    data = edited(saved, lambda d: d["special_tokens"].append(special))
    with pytest.raises(VocabError, match=r"vocab.json: special token .* is also an ordinary token \('merges'\[0\]"):
        load_vocab_file(_write(tmp_path, data))


def test_a_special_token_no_merge_uses_still_loads(tmp_path, saved):
    data = edited(saved, lambda d: (_add_token(d, "<|im_start|>"), d["special_tokens"].append("<|im_start|>")))
    tok = SGPETokenizer.load(_write(tmp_path, data))
    assert tok.decode(tok.encode("<|im_start|>ශ්‍රී")) == "<|im_start|>ශ්‍රී"
    assert tok.encode("<|im_start|>", allowed_special="all") == [tok.vocab["<|im_start|>"]]


def test_a_building_merge_across_two_syllables_is_refused(tmp_path, saved):
    # Loaded, its export would merge the end of one syllable with the start of the next, which the
    # native encoder (known syllables are units) never does: 'කාලා' would give different ids.
    units = SGPETokenizer.load(_write(tmp_path, saved)).splitter.split("කාලා")[0][1]
    assert units == ["කා", "ලා"]

    def change(d):
        _add_token(d, "ාල")
        d["syllable_merges"].insert(0, ["ා", "ල"])

    with pytest.raises(VocabError, match=r"vocab.json: 'syllable_merges'\[0\] \('ා', 'ල'\) joins 2 syllables"
                                         r".*if an earlier wwho trained it, whose 'sinhala' schema did not split "
                                         r"them, train it again"):
        load_vocab_file(_write(tmp_path, edited(saved, change)))


def test_a_syllable_built_through_a_start_that_is_no_syllable_loads(tmp_path):
    """Tamil's ஸ்ரீ is built through ஸ்ர, which alone splits as two syllables
    (the schema's state after ஸ்ர accepts only ீ), so the load check refused the vocabulary that
    training had just written. A merge that builds the start of a unit is inside it."""
    from tokenizers import Tokenizer

    corpus = tmp_path / "ta.txt"
    corpus.write_text("ஸ்ரீ லங்கா தமிழ்\n" * 300, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fewer tokens than asked, from so little text
        tok = SGPETokenizer.train([corpus], vocab_size=400, script="tamil", progress=False, workers=1)
    assert ("ஸ்", "ர") in tok.syllable_merges and tok.splitter.split("ஸ்ர")[0][1] == ["ஸ்", "ர"]
    loaded = SGPETokenizer.load(tok.save(tmp_path / "out").parent)
    hf = Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    for text in ("ஸ்ரீ லங்கா", "ஸ்ரா", "அஸ்ரம் ஸ்ரு", "ஸ்ரீலங்கா"):
        assert loaded.encode(text) == tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


#: Text whose runs a ``runs`` or ``pieces`` vocabulary learns as tokens that HF's ByteFallback
#: decoder reads as bytes (lower-case hex digits, a ``+`` sign), where wwho's are their text.
LOOKALIKES = "<0x6a>\t<0x+A>\t<0xe0>\t<0xBe>"


@pytest.mark.parametrize("scope", ["runs", "pieces"])
def test_tokens_that_look_like_byte_tokens_decode_as_text_in_the_export(tmp_path, scope):
    # HF must not decode the exported ids of "<0x6a>\t<0x+A>\t<0xe0>" as "j\t\n\t\ufffd".
    from tokenizers import Tokenizer

    docs = [LOOKALIKES + " ශ්‍රී ලංකාව"] * 200 + ["ලංකාව ශ්‍රී x"] * 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a small vocabulary: fewer merges than asked
        tok = SGPETokenizer.train_from_iterator(docs, vocab_size=340, script="sinhala", merge_scope=scope,
                                                superword_share=0, progress=False)
    assert {"<0x6a>", "<0x+A>", "<0xe0>", "<0xBe>"} <= set(tok.vocab)
    tok.save(tmp_path / "out")
    hf = Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    for text in (LOOKALIKES, "x <0xe0>ශ්‍රී", "<0x6a>", "€ 😀 <0x6a>"):
        ids = tok.encode(text)
        assert hf.encode(text, add_special_tokens=False).ids == ids
        assert hf.decode(ids) == tok.decode(ids) == text
    # real byte tokens still decode as bytes, next to a look-alike too
    ids = [tok.vocab["<0xE0>"], tok.vocab["<0xB6>"], tok.vocab["<0x9A>"], tok.vocab["<0xe0>"]]
    assert hf.decode(ids) == tok.decode(ids) == "ක<0xe0>"


def test_a_vocabulary_without_look_alikes_keeps_its_decoder(tmp_path, saved):
    tok = SGPETokenizer.load(_write(tmp_path, saved))
    tok.save(tmp_path / "out")
    decoder = json.loads((tmp_path / "out" / "tokenizer.json").read_text(encoding="utf-8"))["decoder"]
    assert [step["type"] for step in decoder["decoders"]] == ["ByteFallback", "Fuse"]


#: Characters around which scripts, whitespace, joiners and special tokens meet.
HOSTILE = (list("ශ්‍රීලංකාවනඖ") + list("नमस्तेक्षज़ँ।") + [" ශ්‍රී", "ලංකාව", " की", "a", "Z", "1", "é", "e\u0301", "中",
           "😀", "👨\u200d👩\u200d👧", "🇱🇰", "'s", ".", "!", "(", "…", "[CLS]", "[SEP]", "[PAD]", "<0x41>", "<0xe0>"]
           + [c for c in map(chr, range(0x3001)) if c.isspace()] + ["\u200b", "\u200c", "\u200d", "\ufeff", "\u0dca",
                                                                    "\u094d", "\u20e3", "\ufe0f"])


_EXPORTED: dict[str, object] = {}


@pytest.mark.parametrize("name", ["words", "runs", "pieces", "prefix", "words-superwords-prefix"])
@given(text=st.lists(st.sampled_from(HOSTILE), max_size=40).map("".join))
@settings(max_examples=120, deadline=None)
def test_every_option_equals_tokenizers_on_hostile_text(variants, name, text):
    from wwho.export.sgpe_hf import build_hf_tokenizer

    tok = variants[name]
    if name not in _EXPORTED:
        _EXPORTED[name] = build_hf_tokenizer(tok)
    hf = _EXPORTED[name]
    ids = tok.encode(text, allowed_special="all")
    assert hf.encode(text, add_special_tokens=False).ids == ids
    assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids)
    assert hf.decode(ids, skip_special_tokens=True) == tok.decode(ids, skip_special_tokens=True)
    assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize("prune_freq", ["auto", 1])
@pytest.mark.parametrize("unit", [
    "a" + "\u0301" * 3_000,    # one grapheme cluster of Latin: a boundary token
    "क" + "\u093c" * 3_000,    # one Devanagari syllable of 3,001 code points
    "क्" + "\u200d" * 3_000,   # a run of joiners
])
def test_an_endless_unit_takes_no_ids_of_its_own(tmp_path, unit, prune_freq):
    """One made-up unit (a letter and thousands of marks) must not become a symbol, whose building
    pieces (every prefix) would take an id each, and bytes, time and memory in the square of its
    length. A unit longer than the core's
    MAX_SYMBOL_UNITS code points is spelt by its characters, as a pruned syllable is."""
    from wwho import _core

    text = "नमस्ते दुनिया, यह एक वाक्य है।\n" * 40
    plain, hostile = tmp_path / "plain.txt", tmp_path / "hostile.txt"
    plain.write_text(text, encoding="utf-8")
    hostile.write_text(text + unit + "\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a vocabulary smaller than asked, from so little text
        base, tok = (SGPETokenizer.train([p], vocab_size=600, script="devanagari", progress=False, workers=1,
                                         prune_freq=prune_freq)
                     for p in (plain, hostile))
    added = tok.vocab.keys() - base.vocab.keys()
    assert all(len(t) == 1 for t in added), sorted(added, key=len)[-3:]  # its characters at most
    assert max(map(len, tok.vocab)) <= max(map(len, base.vocab)) < _core.MAX_SYMBOL_UNITS
    assert tok.decode(tok.encode(unit)) == unit
