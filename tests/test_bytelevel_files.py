"""Byte-level files load right or not at all (``bytelevel/files.py``, ``bytelevel/validate.py``):
ids, merge lists cut short, ``.tiktoken`` files cut at a line end, referenced files outside the
directory, field types. Errors name the file and the entry and never show a foreign file's content.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from conftest import O200K_FILE, one_line_error, run_wwho
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import files_py as reference_files

from wwho import _core, load_tokenizer
from wwho.bytelevel import ByteBPE
from wwho.bytelevel.files import _parse_merges_txt
from wwho.bytelevel.pretokenize import unicode_to_bytes
from wwho.errors import TokenizerError, VocabError

tokenizers = pytest.importorskip("tokenizers")

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("bl")
    corpus = root / "c.txt"
    corpus.write_text(SAMPLE.read_text(encoding="utf-8")[:150_000], encoding="utf-8")
    tok = ByteBPE.train(corpus, vocab_size=500, special_tokens=["<|end|>"], workers=1, progress=False)
    tok.save(root / "dir")
    tok.export_hf(root / "dir" / "tokenizer.json")
    return root / "dir"


def _copy(src: Path, dst: Path, *, manifest: bool = True) -> Path:
    import shutil

    shutil.copytree(src, dst)
    if not manifest:
        (dst / "wwho-manifest.json").unlink()  # a directory made by hand: its content is what is checked
    return dst


# --- Hugging Face tokenizer.json ------------------------------------------------------------------


def _hf(trained, tmp_path, change) -> Path:
    data = json.loads((trained / "tokenizer.json").read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _a_token(data, i=300):
    return next(t for t, k in data["model"]["vocab"].items() if k == i)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["model"]["vocab"].update({_a_token(d): 301}), r"id 301 belongs to both token .* and token"),
    (lambda d: d["model"]["vocab"].update({_a_token(d): 2 ** 63}), r"id 9223372036854775808 is out of range"),
    (lambda d: d["model"]["vocab"].update({_a_token(d): -3}), r"id -3 is out of range"),
    (lambda d: d["model"]["vocab"].update({_a_token(d): True}), r"id True is not an integer"),
    (lambda d: d["model"]["vocab"].update({_a_token(d): 100_000}), r"has id 100000, far beyond the 500 tokens"),
    (lambda d: d["model"].update(merges=d["model"]["merges"][:-20]),
     r"20 tokens of several bytes are the result of no merge, e\.g\. .* looks truncated"),
    (lambda d: d["model"]["merges"].append("Ġ zzzq"), r"merge \d+ \(' ' \+ 'zzzq'\): 'zzzq' is not a token"),
    (lambda d: d["added_tokens"][0].update(id="5"), r"added_tokens\[0\]: id '5' is not an integer"),
])
def test_tokenizer_json_that_would_load_wrong_is_refused(trained, tmp_path, change, message):
    path = _hf(trained, tmp_path, change)
    with pytest.raises(VocabError, match=r"tokenizer.json: .*" + message):
        ByteBPE.from_hf(path)
    with pytest.raises(VocabError, match=message):  # not handed to HF tokenizers instead, which would load it
        load_tokenizer(path)


def test_tokenizer_json_duplicate_keys_and_nesting(trained, tmp_path):
    path = tmp_path / "tokenizer.json"
    text = (trained / "tokenizer.json").read_text(encoding="utf-8")
    path.write_text(text[:-2] + ', "model": {}}\n', encoding="utf-8")
    with pytest.raises(VocabError, match=r"tokenizer.json: the key 'model' appears twice"):
        load_tokenizer(path)
    path.write_text('{"model": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(VocabError, match=r"tokenizer.json: JSON nested too deeply"):
        load_tokenizer(path)


def test_other_hf_tokenizers_still_go_to_hf_but_with_checked_ids(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    hf = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.save(str(tmp_path / "tokenizer.json"))
    assert load_tokenizer(tmp_path / "tokenizer.json").encode("a b") == [0, 1]
    data = json.loads((tmp_path / "tokenizer.json").read_text())
    data["model"]["vocab"]["b"] = 0  # HF would keep one of the two tokens and lose the other
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    with pytest.raises(VocabError, match=r"model.vocab entries 'a' and 'b' have the same id 0"):
        load_tokenizer(tmp_path / "tokenizer.json")


def _word_level(path: Path, **settings) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers

    hf = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2, "[PAD]": 3}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.save(str(path))
    data = json.loads(path.read_text())
    data.update(settings)
    path.write_text(json.dumps(data))
    return path


PADDING = {"strategy": {"Fixed": 2_000_000_000}, "direction": "Right", "pad_to_multiple_of": None,
           "pad_id": 3, "pad_type_id": 0, "pad_token": "[PAD]"}
TRUNCATION = {"direction": "Right", "max_length": 2, "strategy": "LongestFirst", "stride": 0}


@pytest.mark.parametrize("settings", [{"padding": PADDING}, {"truncation": TRUNCATION},
                                      {"padding": PADDING, "truncation": TRUNCATION}])
def test_a_files_padding_and_truncation_do_not_shape_its_ids(tmp_path, settings):
    """Fixed padding of two billion ids would abort the process on the first encode (an 8 GB
    allocation), and truncation at 2 ids cut every text without a word."""
    tok = load_tokenizer(_word_level(tmp_path / "tokenizer.json", **settings))
    assert tok.encode("a b a b a") == [0, 1, 0, 1, 0]
    assert tok.encode_batch(["a b a", "b"]) == [[0, 1, 0], [1]]
    assert tok.encode_batch(["a b a", "b"], num_threads=1) == [[0, 1, 0], [1]]


def test_a_byte_level_files_truncation_does_not_cut_its_ids(trained, tmp_path):
    path = tmp_path / "tokenizer.json"
    data = json.loads((trained / "tokenizer.json").read_text())
    data["truncation"] = TRUNCATION
    path.write_text(json.dumps(data))
    tok = load_tokenizer(path)
    assert isinstance(tok, ByteBPE)
    text = "hello world, hello"
    assert tok.encode(text) == ByteBPE.load(trained).encode(text)
    assert len(tok.encode(text)) > 2


def test_a_panic_of_hf_tokenizers_while_encoding_is_a_tokenizer_error(tmp_path):
    """A pattern that backtracks past the limit of HF's regex engine makes it panic: no
    PanicException (no Exception) and Rust backtrace come out of encode."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers

    hf = Tokenizer(models.WordLevel({"a": 0, "!": 1, "[UNK]": 2}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Split(Regex(r"(a+)+$|\s+|\S"), "isolated")
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = load_tokenizer(tmp_path / "tokenizer.json")
    text = "a" * 40 + "!"
    for encode in (tok.encode, tok.tokenize, lambda t: tok.encode_batch([t]),
                   lambda t: tok.encode_batch([t], num_threads=1)):
        with pytest.raises(TokenizerError, match="HF tokenizers failed"):
            encode(text)
    assert tok.encode("a!") == [0, 1]


TEXTS = ["", "hello world", "ශ්‍රී ලංකාව <|end|> and  <|end|>x", "a\n\n  b\t<|end|>", "tabs ts t"]


def _same_as_hf(ours, path: Path) -> None:
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in TEXTS:
        ids = hf.encode(text, add_special_tokens=True).ids
        assert ours.encode(text, allowed_special="all", add_special_tokens=True) == ids, text
        assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False), text


def _template(single, ids=None):
    def change(d):
        end = d["model"]["vocab"]["<|end|>"]
        d["post_processor"] = {"type": "TemplateProcessing", "single": single, "pair": single,
                               "special_tokens": {"<|end|>": {"id": "<|end|>", "ids": ids or [end],
                                                              "tokens": ["<|end|>"]}}}
    return change


SEQ, END = {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<|end|>", "type_id": 0}}


@pytest.mark.parametrize("change", [
    lambda d: d["model"]["merges"].append(d["model"]["merges"][0]),  # HF: the last place counts
    lambda d: d["model"]["merges"].insert(0, d["model"]["merges"][40]),
    _template([END, SEQ]),
    _template([SEQ, END]),
    _template([END, SEQ, END]),
    lambda d: d.update(post_processor={"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        _template([END, SEQ])(d) or d["post_processor"]]}),
    lambda d: d.update(decoder={"type": "Sequence", "decoders": [d["decoder"]]}),
])
def test_tokenizer_json_variants_encode_and_decode_as_hf(trained, tmp_path, change):
    path = _hf(trained, tmp_path, change)
    _same_as_hf(ByteBPE.from_hf(path), path)


def test_a_merge_listed_twice_has_its_last_place_as_in_hf(tmp_path):
    """HF's BPE gives a pair listed twice the rank of its last place: with the merges `a b`,
    `b c`, `a b`, the text `abc` is `a` + `bc`, where the first place would give `ab` + `c`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer, hf.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    data = json.loads(hf.to_str())
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    data["model"]["vocab"] = {**{c: i for i, c in enumerate(alphabet)}, "ab": 256, "bc": 257}
    data["model"]["merges"] = ["a b", "b c", "a b"]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    hf = Tokenizer.from_file(str(path))
    assert hf.encode("abc").tokens == ["a", "bc"]
    ours = ByteBPE.from_hf(path)
    for text in ("abc", "xabcab", "ab bc abc"):
        assert ours.encode(text) == hf.encode(text).ids, text


@pytest.mark.parametrize("special", [False, True])
def test_an_added_token_that_a_merge_makes_too_is_read_as_hf_reads_it(tmp_path, special):
    """An added token whose text is also an ordinary token made by a merge (HF's `add_tokens(["ab"])`
    on a vocabulary with `ab`) keeps its one id in HF, which cuts it out of the text first and merges
    it too; ByteBPE.from_hf loads such a file rather than refuse it ("merge 0: 'ab' is not a token")."""
    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer, hf.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    hf.train_from_iterator(["ab cab xab abc"] * 50, trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    word = "ab"
    assert hf.token_to_id(word) is not None and ["a", "b"] in json.loads(hf.to_str())["model"]["merges"]
    (hf.add_special_tokens if special else hf.add_tokens)([tokenizers.AddedToken(word, special=special)])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    ours = ByteBPE.from_hf(path)
    assert ours.n_vocab == hf.get_vocab_size() and ours.token_bytes(hf.token_to_id(word)) == word.encode()
    for text in (word, f"x{word}y {word}{word}", f"{word[0]} {word[1:]}", *TEXTS):
        ids = hf.encode(text).ids
        assert ours.encode(text, allowed_special="all") == ids, text
        assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False), text
    exported = ours.export_hf(tmp_path / "again.json")
    again = tokenizers.Tokenizer.from_file(str(exported))
    assert again.encode(f"x{word}y {word}").ids == hf.encode(f"x{word}y {word}").ids


@pytest.mark.parametrize("special", [False, True])
def test_long_added_tokens_in_the_vocab_load_in_linear_time_as_hf_reads_them(tmp_path, special):
    """Whether an added token that model.vocab also lists is an ordinary token too (a merge makes it)
    is not found by cutting it at every offset, in time quadratic in its length: a long token is
    looked up among the merges' products instead, with the same answer: one a merge makes is both, one none
    makes is only an added token."""
    import time

    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer, hf.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    word = "x" * 100
    hf.train_from_iterator([f"{word} ab"] * 50, trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    assert any("".join(pair) == word for pair in json.loads(hf.to_str())["model"]["merges"])
    (hf.add_special_tokens if special else hf.add_tokens)([tokenizers.AddedToken(word, special=special)])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    data = json.loads(path.read_text(encoding="utf-8"))
    unmade, unmade_id = "y" * 200_000, hf.get_vocab_size()
    data["model"]["vocab"][unmade] = unmade_id
    data["added_tokens"].append({**data["added_tokens"][0], "id": unmade_id, "content": unmade})
    path.write_text(json.dumps(data), encoding="utf-8")
    start = time.perf_counter()
    ours = ByteBPE.from_hf(path)
    assert time.perf_counter() - start < 3  # linear: far less; quadratic: far more
    assert ours.n_vocab == hf.get_vocab_size() + 1 and ours.token_bytes(unmade_id) == unmade.encode()
    for text in (word, f"x{word}y {word}{word}", f"{word[:50]} {word[50:]}", word + "x"):
        assert ours.encode(text, allowed_special="all") == hf.encode(text).ids, text
    assert ours.encode(f"{unmade}y", allowed_special="all") == [unmade_id, hf.token_to_id("y")]
    assert unmade_id not in ours.encode(unmade[1:], allowed_special="all")


@pytest.mark.parametrize("change, message", [
    (lambda d: d["added_tokens"][0].update(lstrip=True), r"added_tokens\[0\] has lstrip=true"),
    (lambda d: d["added_tokens"][0].update(rstrip=True, single_word=True), "has rstrip/single_word=true"),
    (lambda d: d.update(decoder=None), "decoder None is not ByteLevel"),
    (lambda d: d.update(decoder={"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                                 "split": True}), "decoder 'Metaspace' is not ByteLevel"),
    (lambda d: d["pre_tokenizer"]["pretokenizers"][0].update(pattern={"Regex": "x*"}),
     "Split pattern 'x\\*' matches the empty string"),
    (_template([END, SEQ], ids=[5]), "post-processor special token '<|end|>' has ids \\[5\\], not its token's id"),
    (_template([END, END, SEQ]), "is not one special token before and/or after the text"),
    (lambda d: d.update(post_processor={"type": "RobertaProcessing", "sep": ["<|end|>", 1], "cls": ["<|end|>", 1]}),
     "post-processor 'RobertaProcessing' is not supported"),
    # HF maps the bytes twice (' ' is 'Ġ', whose two bytes are mapped again)
    (lambda d: d["pre_tokenizer"]["pretokenizers"].append(dict(d["pre_tokenizer"]["pretokenizers"][-1])),
     "a second ByteLevel pre-tokenizer"),
    # HF merges the whole text as one piece
    (lambda d: d.update(pre_tokenizer={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                       "use_regex": False}), "use_regex=false with no Split"),
])
def test_tokenizer_json_that_bytebpe_would_run_otherwise_goes_to_hf(trained, tmp_path, change, message):
    # What ByteBPE does not run exactly as HF does is not ByteBPE's: load_tokenizer hands it to HF.
    from wwho.bytelevel.hf_files import NotByteLevel
    from wwho.loading import HFTokenizer

    path = _hf(trained, tmp_path, change)
    with pytest.raises(NotByteLevel, match=message):
        ByteBPE.from_hf(path)
    assert isinstance(load_tokenizer(path), HFTokenizer)


# --- wwho's directory ---------------------------------------------------------------------------


def _cut_lines(path: Path, drop: int) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-drop]))  # cut at a line end: every line left is valid


def test_a_directory_with_a_file_cut_at_a_line_end_is_refused(trained, tmp_path):
    for name, message in (("merges.txt", r"merges.txt: has [\d,]+ entries but .*bytelevel.json records"),
                          ("ranks.tiktoken", r"ranks.tiktoken: has [\d,]+ entries but .*bytelevel.json records")):
        with_manifest = _copy(trained, tmp_path / f"m-{name}")
        _cut_lines(with_manifest / name, 5)
        with pytest.raises(VocabError, match=rf"{name} does not match wwho-manifest.json"):
            ByteBPE.load(with_manifest)
        by_hand = _copy(trained, tmp_path / f"h-{name}", manifest=False)
        _cut_lines(by_hand / name, 5)
        with pytest.raises(VocabError, match=message):
            ByteBPE.load(by_hand)
        config = json.loads((by_hand / "bytelevel.json").read_text())
        del config["checks"]  # an older wwho's directory: the merge rule still finds the cut
        (by_hand / "bytelevel.json").write_text(json.dumps(config))
        with pytest.raises(VocabError, match=r"are the result of no merge|is not a token"):
            ByteBPE.load(by_hand)


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_a_huge_rank_in_a_tiktoken_file_is_cut_short_in_the_error(tmp_path):
    # Python reads up to 4,300 digits: the one-line error shows the start, as for any other value.
    path = tmp_path / "huge.tiktoken"
    lines = [f"{base64.b64encode(bytes([i])).decode()} {i}" for i in range(256)]
    path.write_text("\n".join([*lines, f"{base64.b64encode(b'ab').decode()} {'9' * 4000}"]) + "\n")
    with pytest.raises(VocabError, match=r"huge.tiktoken:257: rank: id 9{20,}\.\.\. is out of range") as info:
        ByteBPE.from_tiktoken(path, pattern="gpt2")
    assert len(str(info.value)) < 200 + len(str(tmp_path))


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_a_known_tiktoken_file_cut_at_a_line_end_is_refused(tmp_path):
    cut = tmp_path / "o200k_base.tiktoken"
    cut.write_bytes(b"".join(O200K_FILE.read_bytes().splitlines(keepends=True)[:150_000]))
    with pytest.raises(VocabError, match=r"sha256 .* is not that of the official o200k_base ranks file .*"
                                         r"199,998 lines, this one has 150,000\): truncated"):
        ByteBPE.from_tiktoken(cut)
    with pytest.raises(VocabError, match=r"sha256"):
        load_tokenizer(cut)


@pytest.mark.parametrize("change, message", [
    (lambda c: c.update(bos_id="3"), r"'bos_id' must be a int, not '3'"),
    (lambda c: c.update(add_bos="yes"), r"'add_bos' must be a bool"),
    (lambda c: c.update(ignore_merges=1), r"'ignore_merges' must be a bool"),
    (lambda c: c.update(special_tokens={"<|end|>": 2 ** 40}),
     r"special_tokens entry '<\|end\|>': id 1099511627776 is out of range"),
    (lambda c: c.update(extra_tokens={"x": "AA=="}), r"extra_tokens entry 'x'"),
    (lambda c: c["pretokenizer"].update(patterns="abc"), r"pretokenizer: pretokenizer.patterns must be a list"),
    (lambda c: c.update(files=[]), r"'files' must be a dict"),
    (lambda c: c.update(bos_id=10 ** 6), r"bos_id 1000000 is not the id of any token"),
    # a hundred thousand regexes would take gigabytes to compile; a flag of any type must not load;
    # add_bos without a BOS would add nothing, in silence
    (lambda c: c["pretokenizer"].update(patterns=["."] * 65), r"pretokenizer: a pre-tokenizer of 65 regexes"),
    (lambda c: c["pretokenizer"].update(space_split="no"), r"pretokenizer: pretokenizer\.space_split must be true or false"),
    (lambda c: c.update(add_bos=True, bos_id=None), r"add_bos is true but there is no bos_id"),
    # the field is named, not the core's message alone, without the file's name
    (lambda c: c.update(special_tokens={"": 300}), r"special_tokens: a special or added token cannot be empty"),
    (lambda c: c.update(added_tokens={"": 300}), r"added_tokens: a special or added token cannot be empty"),
])
def test_bytelevel_json_fields_of_the_wrong_type(trained, tmp_path, change, message):
    directory = _copy(trained, tmp_path / "d", manifest=False)
    config = json.loads((directory / "bytelevel.json").read_text())
    change(config)
    (directory / "bytelevel.json").write_text(json.dumps(config))
    with pytest.raises(VocabError, match=r"bytelevel.json: " + message):
        ByteBPE.load(directory)


def test_a_file_named_by_bytelevel_json_stays_in_the_directory(trained, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("root:x:0:0:SECRET CONTENT\n")
    for name, ranks in (("abs", str(outside)), ("up", "../secret.txt"), ("etc", "/etc/passwd")):
        directory = _copy(trained, tmp_path / name, manifest=False)
        config = json.loads((directory / "bytelevel.json").read_text())
        config["files"]["ranks"] = ranks
        (directory / "bytelevel.json").write_text(json.dumps(config))
        with pytest.raises(VocabError, match=r"files.ranks must be a file name in the same directory") as info:
            ByteBPE.load(directory)
        assert "SECRET" not in str(info.value) and "root:" not in str(info.value)
        line = one_line_error(run_wwho("inspect", directory))
        assert "SECRET" not in line and "root:x" not in line and "files.ranks" in line
    linked = _copy(trained, tmp_path / "link", manifest=False)
    (linked / "ranks.tiktoken").unlink()
    os.symlink(outside, linked / "ranks.tiktoken")
    with pytest.raises(VocabError, match=r"'ranks.tiktoken' is a link to a file outside") as info:
        ByteBPE.load(linked)
    assert "SECRET" not in str(info.value)


def test_space_split_is_not_taken_from_the_file(trained, tmp_path):
    directory = _copy(trained, tmp_path / "d", manifest=False)
    config = json.loads((directory / "bytelevel.json").read_text())
    config["pretokenizer"].update(patterns=[r"\S+\s*"], name="custom", space_split=True)  # a false promise
    (directory / "bytelevel.json").write_text(json.dumps(config))
    tok = ByteBPE.load(directory)
    assert tok.pretokenizer.space_split is False
    assert ByteBPE.load(trained).pretokenizer.space_split is True  # the named pattern it was trained with


# --- the core's reading of merges and GPT-2 strings against the Python reference ---------------

# GPT-2 byte-level characters, characters outside the mapping (a space, U+3000, a lone surrogate).
_MERGE_CHARS = st.sampled_from(["a", "b", "Ġ", "é", " ", "\u3000", "\ud800", "ĉ"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(
    st.text(_MERGE_CHARS, max_size=6),
    st.lists(st.text(_MERGE_CHARS, max_size=3), min_size=1, max_size=3),
    st.tuples(st.text(_MERGE_CHARS, max_size=3), st.text(_MERGE_CHARS, max_size=3)),
    st.sampled_from([None, 5, ["a", 5], b"a b"]),
), max_size=12))
def test_core_merge_pairs_equal_the_reference(merges):
    try:
        got = _core.merge_pairs(merges)
    except _core.CoreMergeError as exc:
        got = exc.args
    assert got == reference_files.merge_pairs(merges)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=6), st.text(_MERGE_CHARS, max_size=6), st.just(7)), max_size=10))
def test_core_gpt2_bytes_equal_unicode_to_bytes(texts):
    assert _core.gpt2_bytes(texts) == [unicode_to_bytes(t) if isinstance(t, str) else None for t in texts]


def test_merges_txt_errors_name_their_line(tmp_path):
    path = tmp_path / "merges.txt"
    for body, message in [
        ("#version: 0.2\na b\n\nab\n", r"merges.txt:4: merge 'ab' has no space"),
        ("a b\n\u3000 b\n", r"merges.txt:2: '\\u3000 b' is not a pair of GPT-2 byte-level strings"),
    ]:
        path.write_text(body, encoding="utf-8")
        with pytest.raises(VocabError, match=message):
            _parse_merges_txt(path, path.read_bytes())
    path.write_text("#version: 0.2\nĠ a\n\na b\n", encoding="utf-8")
    assert _parse_merges_txt(path, path.read_bytes()) == [(b" ", b"a"), (b"a", b"b")]


@pytest.mark.parametrize("key", ["²", "9" * 5000, "99999999999"])
def test_an_extra_token_id_that_is_no_ascii_number_is_named(trained, tmp_path, key):
    """Not a bare ValueError from ``int()`` ('²' is a digit to ``str.isdigit``; Python refuses to
    read thousands of digits)."""
    by_hand = _copy(trained, tmp_path / "d", manifest=False)
    config = json.loads((by_hand / "bytelevel.json").read_text())
    config["extra_tokens"] = {key: "QQ=="}
    (by_hand / "bytelevel.json").write_text(json.dumps(config))
    with pytest.raises(VocabError, match=r"bytelevel.json: extra_tokens entry .*expected"):
        ByteBPE.load(by_hand)


def test_a_pattern_for_a_known_encoding_name_is_refused_not_ignored():
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    with pytest.raises(VocabError, match="pattern= is for a .tiktoken file of your own; o200k_base has its own"):
        ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE, pattern="gpt2")
    custom = ByteBPE.from_tiktoken(O200K_FILE, pattern="gpt2")  # the file itself, another regex: honoured
    assert custom.encode_ordinary("don't") != ByteBPE.from_tiktoken(O200K_FILE).encode_ordinary("don't")


@pytest.mark.parametrize("regex", ["(" * 5000 + "a" + ")" * 5000, "a(b"])
def test_a_bad_split_regex_is_an_error_naming_the_file(trained, tmp_path, regex):
    # A regex nested thousands deep was a RecursionError from the regex module; a bad one was an
    # error that did not say which tokenizer.json held it.
    import re

    data = json.loads((trained / "tokenizer.json").read_text(encoding="utf-8"))
    data["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = regex
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(VocabError, match=rf"^{re.escape(str(bad))}: invalid pre-tokenizer regex"):
        ByteBPE.from_hf(bad)


@pytest.mark.parametrize("pattern", ["", r"\w*", r"\s*|\S+"])
def test_a_pretokenizer_matching_the_empty_string_is_not_exported(tmp_path, pattern):
    """Such a pre-tokenizer (``from_gguf(..., pretokenizer=r"\\w*")``) would export a tokenizer.json
    whose ids differ, HF's Split cutting around empty matches its own way. Training refuses these
    regexes; the export does too, rather than write other ids."""
    from wwho.bytelevel import ByteBPE
    from wwho.errors import VocabError

    tok = ByteBPE({bytes([b]): b for b in range(256)} | {b"ab": 256}, pattern=[pattern])
    with pytest.raises(VocabError, match="matches the empty string.*the ids would differ"):
        tok.export_hf(tmp_path / "tokenizer.json")
    assert not (tmp_path / "tokenizer.json").exists()


@pytest.mark.parametrize("edit", [
    lambda pre: pre["pretokenizers"][-1].update(use_regex="false"),
    lambda pre: pre["pretokenizers"][-1].update(add_prefix_space=0),
    lambda pre: pre["pretokenizers"].insert(0, {"type": "Digits", "individual_digits": "false"}),
])
def test_a_flag_that_is_no_boolean_is_refused_as_hf_refuses_it(tmp_path, edit):
    """``"use_regex": "false"`` must not be read as true (nor ``"individual_digits": "false"`` split
    digits one by one): HF tokenizers itself refuses such files."""
    import json

    from tokenizers import Tokenizer

    from wwho.bytelevel import ByteBPE
    from wwho.errors import VocabError

    ByteBPE({bytes([b]): b for b in range(256)} | {b"ab": 256}, pattern="gpt2").export_hf(tmp_path / "t.json")
    data = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    edit(data["pre_tokenizer"])
    (tmp_path / "t.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(Exception, match="expected a boolean|invalid type"):
        Tokenizer.from_file(str(tmp_path / "t.json"))  # HF's own refusal
    with pytest.raises(VocabError, match="t.json: pre_tokenizer (ByteLevel|Digits): .* must be true or false"):
        ByteBPE.from_hf(tmp_path / "t.json")


@pytest.mark.parametrize("change,message", [
    (lambda d: d.update(version=7), r"version must be '1.0', not 7"),
    (lambda d: d.update(version="x"), r"version must be '1.0', not 'x'"),
    (lambda d: d.update(added_tokens={}), r"added_tokens must be a list, not \{\}"),
    (lambda d: d.update(added_tokens=None), r"added_tokens must be a list, not None"),
    (lambda d: d.update(truncation="x"), r"truncation must be an object or null"),
    (lambda d: d.update(padding=7), r"padding must be an object or null"),
    (lambda d: d["model"].update(unk_token={}), r"model.unk_token must be a string or null"),
    (lambda d: d["decoder"].pop("trim_offsets"), r"decoder ByteLevel: trim_offsets is missing"),
    (lambda d: d["decoder"].update(use_regex=None), r"decoder ByteLevel: use_regex must be true or false"),
    (lambda d: d["pre_tokenizer"]["pretokenizers"][-1].pop("add_prefix_space"),
     r"pre_tokenizer ByteLevel: add_prefix_space is missing"),
    (lambda d: d["pre_tokenizer"]["pretokenizers"][-1].update(trim_offsets=[]),
     r"pre_tokenizer ByteLevel: trim_offsets must be true or false"),
    (lambda d: d["pre_tokenizer"]["pretokenizers"][0].pop("invert"), r"pre_tokenizer Split: invert is missing"),
    (lambda d: d.update(post_processor={"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}),
     r"post_processor ByteLevel: trim_offsets is missing"),
    (lambda d: d.update(post_processor={"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": 0, "trim_offsets": False}]}),
     r"post_processor ByteLevel: add_prefix_space must be true or false"),
])
def test_fields_hf_refuses_by_their_type_are_refused_though_bytebpe_does_not_read_them(trained, tmp_path, change,
                                                                                       message):
    """Loaded, such a file would encode while HF tokenizers (and transformers, which reads it)
    cannot load it; HF's own refusal is the oracle."""
    from tokenizers import Tokenizer

    path = _hf(trained, tmp_path, change)
    with pytest.raises(Exception):  # noqa: B017 (HF raises an Exception of its own)
        Tokenizer.from_file(str(path))
    with pytest.raises(VocabError, match=r"tokenizer.json: " + message):
        ByteBPE.from_hf(path)


@pytest.mark.parametrize("where", ["added_tokens", "special_tokens", "hf"])
def test_a_lone_surrogate_in_a_saved_token_is_named(trained, tmp_path, where):
    """A lone surrogate (a JSON escape) in a token is refused where the file is read, naming the
    field: the core refused it with replacement characters for the token and no file."""
    if where == "hf":  # tokenizer.json: HF refuses such a file too
        data = json.loads((trained / "tokenizer.json").read_text(encoding="utf-8"))
        data["added_tokens"][0]["content"] = "\ud800"
        path = tmp_path / "tokenizer.json"
        path.write_text(json.dumps(data), encoding="utf-8")  # (ensure_ascii: the escape)
        with pytest.raises(VocabError, match=r"tokenizer.json: added_tokens\[0\]: content '\\ud800' holds a lone"):
            ByteBPE.from_hf(path)
        return
    directory = _copy(trained, tmp_path / "d", manifest=False)
    config = json.loads((directory / "bytelevel.json").read_text())
    config[where]["x\udfff"] = 600
    (directory / "bytelevel.json").write_text(json.dumps(config))  # (ensure_ascii: the escape)
    with pytest.raises(VocabError, match=rf"bytelevel.json: {where} entry 'x\\udfff' holds a lone surrogate"):
        ByteBPE.load(directory)
    proc = run_wwho("inspect", str(directory))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr


def test_a_name_from_a_file_name_of_no_utf8_saves_and_loads(tmp_path):
    """A tokenizer named after a file whose name is no UTF-8 (Python keeps its bytes as lone
    surrogates) is named with U+FFFD instead: its saved bytelevel.json loads back, and `wwho
    inspect` prints it; a name holding a lone surrogate in a file saved before loads too."""
    ranks = tmp_path / os.fsdecode(b"r\xff.tiktoken")
    ranks.write_bytes(b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256)))
    tok = ByteBPE.from_tiktoken(ranks, pattern="gpt2")
    assert tok.name == "r\ufffd"
    tok.save(tmp_path / "d")
    assert ByteBPE.load(tmp_path / "d").name == "r\ufffd"
    (tmp_path / "d" / "wwho-manifest.json").unlink()
    config = json.loads((tmp_path / "d" / "bytelevel.json").read_text())
    config["name"] = "r\udcff"
    (tmp_path / "d" / "bytelevel.json").write_text(json.dumps(config))
    assert ByteBPE.load(tmp_path / "d").name == "r\udcff"
    proc = run_wwho("inspect", str(tmp_path / "d"))
    assert proc.returncode == 0 and "byte-level BPE r<0xED><0xB3><0xBF>" in proc.stdout, proc.stderr


def test_a_lone_surrogate_in_a_token_given_to_bytebpe_is_shown_escaped():
    with pytest.raises(VocabError, match=r"special_tokens: the token '\\ud800' holds a lone surrogate, which is no character"):
        ByteBPE({bytes([b]): b for b in range(256)}, special_tokens={"\ud800": 300})


def test_an_added_token_that_is_a_base_byte_loads_as_hf_reads_it(tmp_path):
    # An added token "a" that is also a byte token of the vocabulary: it was dropped from the
    # ranks (no merge makes a one-byte token), and the first merge ('a' + 'n') then named a token
    # that was not there: a file HF loads and runs was refused.
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    from wwho import load_tokenizer

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(["banana bandana " * 50], trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    hf.add_tokens([AddedToken("a", normalized=False)])
    hf.save(str(tmp_path / "tokenizer.json"))
    hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    ours = load_tokenizer(tmp_path / "tokenizer.json")
    for text in ("banana", "a bandana band", "xyz"):
        assert ours.encode(text) == hf.encode(text).ids, text
        assert ours.decode(ours.encode(text)) == text


@pytest.mark.parametrize("behavior", ["isolated", "contiguous"])
def test_a_punctuation_pre_tokenizer_cuts_where_hf_does(tmp_path, behavior):
    """HF's Punctuation reads older Unicode tables than the core's \\p{P}: the Telugu and Kannada
    siddham signs, U+113D4 and others were cut out as punctuation by ByteBPE.from_hf, not by HF."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Punctuation(behavior),
                                                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    hf.decoder = decoders.ByteLevel()
    data = json.loads(hf.to_str())
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {c: i for i, c in enumerate(alphabet)}
    mapping = dict(enumerate(_byte_chars()))
    merges = []
    for token in ("a\u0c77", "x\U000113d4", "\u0c84!"):
        raw = token.encode()
        pieces = [mapping[b] for b in raw]
        while len(pieces) > 1:  # merge left to right into one token
            merges.append(f"{pieces[0]} {pieces[1]}")
            joined = pieces[0] + pieces[1]
            vocab.setdefault(joined, len(vocab))
            pieces = [joined, *pieces[2:]]
    data["model"]["vocab"], data["model"]["merges"] = vocab, merges
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    hf = Tokenizer.from_file(str(path))
    ours = ByteBPE.from_hf(path)
    for text in ("a\u0c77 x\U000113d4 \u0c84!", "a\u0c77\u0c77!!x\U000113d4", "(a\u0c77)"):
        assert ours.encode(text) == hf.encode(text).ids, text
    assert len(hf.encode("a\u0c77").ids) == 1  # the merges are used, so a cut would show
    exported = Tokenizer.from_file(str(ours.export_hf(tmp_path / "out") / "tokenizer.json"))  # HF reads it alike
    for text in ("a\u0c77 x\U000113d4 \u0c84!", "a\u0c77\u0c77!!x\U000113d4", "(a\u0c77)", "[-]^\\"):
        assert exported.encode(text).ids == hf.encode(text).ids, text


def _byte_chars() -> list[str]:
    from wwho.bytelevel.pretokenize import BYTE_TO_UNICODE

    return [BYTE_TO_UNICODE[b] for b in range(256)]


def _bytes_only_bpe() -> dict:
    """A byte-level BPE tokenizer.json of the 256 byte tokens and the merge ``h e``, no added tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer, hf.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    data = json.loads(hf.to_str())
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet(), key=lambda c: unicode_to_bytes(c)[0])
    data["model"]["vocab"] = {**{c: i for i, c in enumerate(alphabet)}, "he": 256}
    data["model"]["merges"] = ["h e"]
    return data


_ADDED_TEXTS = ["<|a|>", "<|b|>", "<s>", "he", "zz", "XY", "<|end|>"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_ADDED_TEXTS), st.integers(0, 400), st.booleans()), max_size=6,
                unique_by=lambda t: t[0]))
def test_added_tokens_take_the_ids_hf_gives_them(tmp_path_factory, tokens):
    """Stock HF tokenizers is the oracle: whatever ``id`` a file gives an added token, HF numbers one
    that model.vocab lacks itself (after the model's tokens, in the file's order); wwho takes the
    ids HF takes, or refuses the file, never other ids."""
    import warnings

    from tokenizers import Tokenizer

    data = _bytes_only_bpe()
    data["model"]["vocab"]["zz"] = 1000  # an id past the vocabulary's size (a gap)
    data["model"]["merges"].append("z z")
    data["added_tokens"] = [{"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": special} for text, i, special in tokens]
    path = tmp_path_factory.mktemp("added") / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    hf = Tokenizer.from_file(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ours = ByteBPE.from_hf(path)
        except VocabError as exc:  # only a file whose ids then collide (HF keeps one of the two tokens)
            assert "belongs to both" in str(exc), exc
            return
    for text, _, _ in tokens:
        assert {**ours.special_tokens, **ours.added_tokens}.get(text, ours.ranks.get(text.encode())) == \
            hf.token_to_id(text), text
    text = "x".join(t for t, _, _ in tokens) + " hehe zz"
    assert ours.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


def test_an_added_token_given_another_id_than_hf_gives_it_is_warned_about(tmp_path):
    data = _bytes_only_bpe()
    data["added_tokens"] = [{"id": 300, "content": "<|fim|>", "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": False, "special": True}]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.warns(UserWarning, match=r"added_tokens\[0\] '<\|fim\|>' has id 300, but HF tokenizers gives it "
                                         r"257 .*: wwho takes HF's ids"):
        ours = ByteBPE.from_hf(path)
    assert ours.encode("x<|fim|>", allowed_special="all") == [120, 257]


def test_merges_in_two_forms_are_refused_as_hf_refuses_them(tmp_path):
    from tokenizers import Tokenizer

    data = _bytes_only_bpe()
    data["model"]["vocab"]["ll"] = 257
    data["model"]["merges"] = [["h", "e"], "l l"]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(Exception):  # noqa: B017 (HF's own parse error)
        Tokenizer.from_file(str(path))
    with pytest.raises(VocabError, match="model.merges mixes 'a b' strings and \\[a, b\\] pairs"):
        ByteBPE.from_hf(path)


def test_special_tokens_left_out_of_added_tokens_are_named_as_a_likely_cause(tmp_path):
    data = _bytes_only_bpe()
    data["model"]["vocab"].update({"<|endoftext|>": 257, "<s>": 258})
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(VocabError, match=r"2 tokens of several bytes are the result of no merge.* looks truncated, "
                                         r"or they are special tokens that added_tokens does not list"):
        ByteBPE.from_hf(path)


def test_a_byte_without_a_token_is_an_error_where_hf_drops_it(tmp_path):
    """A vocabulary without a token for some byte (a trainer not given ByteLevel.alphabet(); falcon's
    and starcoder's GGUF vocabularies, and wwho's exports of them) loads: a text holding that byte is
    a TokenizerError naming it, where HF drops the byte in silence; every other text gets HF's ids."""
    from tokenizers import Tokenizer

    data = _bytes_only_bpe()
    data["model"]["vocab"].pop("\u010b")  # the byte 0x0B
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    hf, ours = Tokenizer.from_file(str(path)), ByteBPE.from_hf(path)
    assert hf.encode("a\x0bhe", add_special_tokens=False).ids == [97, 256]  # (the byte dropped)
    with pytest.raises(TokenizerError, match=r"byte b'\\x0b' at offset 1 has no token in this vocabulary"):
        ours.encode("a\x0bhe")
    for text in ("hello there", "ශ්‍රී ලංකාව", "a\tb\x0c"):
        assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids, text
