"""``vocab.json`` loads right or not at all: ids, merges, a merge list cut short, field types, JSON
limits; every error names the file and the entry."""

from __future__ import annotations

import json

import pytest
from conftest import edited

from wwho.errors import VocabError
from wwho.sgpe import SGPETokenizer, load_vocab_file


@pytest.fixture(scope="module")
def saved(sgpe_vocab_json):
    """A trained vocabulary, as the JSON of its vocab.json."""
    return sgpe_vocab_json


def _load(tmp_path, data) -> None:
    path = tmp_path / "vocab.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), encoding="utf-8")
    load_vocab_file(path)


def _first_token(data, i=0):
    return next(t for t, k in data["vocab"].items() if k == i)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["vocab"].update({_first_token(d, 7): 8}), r"have the same id 8"),
    (lambda d: d["vocab"].update({_first_token(d, 7): 2 ** 63}), r"id 9223372036854775808 is out of range"),
    (lambda d: d["vocab"].update({_first_token(d, 7): -1}), r"id -1 is out of range"),
    (lambda d: d["vocab"].update({_first_token(d, 0): False}), r"'\[PAD\]': False is not an id"),
    (lambda d: d["vocab"].update({_first_token(d, 7): 7.0}), r"7\.0 is not an id"),
    (lambda d: d["vocab"].update({_first_token(d, 7): "7"}), r"'7' is not an id"),
])
def test_ids_must_be_0_to_n_minus_1_each_once(tmp_path, saved, change, message):
    with pytest.raises(VocabError, match=r"vocab.json: 'vocab' entr(y|ies) .*" + message):
        _load(tmp_path, edited(saved, change))


def test_a_huge_id_is_cut_short_in_the_error(tmp_path, saved):
    # JSON has no limit on an integer's digits and Python reads up to 4,300 of them: the one-line
    # error shows the start, as it does for every other value from the file.
    with pytest.raises(VocabError, match=r"'vocab' entry .*: id 10{20,}\.\.\. is out of range") as info:
        _load(tmp_path, edited(saved, lambda d: d["vocab"].update({_first_token(d, 7): 10 ** 4000})))
    assert len(str(info.value)) < 200 + len(str(tmp_path))


def test_a_truncated_merge_list_is_reported(tmp_path, saved):
    for key in ("merges", "syllable_merges"):
        for keep in (0, len(saved[key]) // 2, len(saved[key]) - 1):
            data = edited(saved, lambda d, key=key, keep=keep: d.update({key: d[key][:keep]}))
            data["num_merges"] = len(data["merges"])
            with pytest.raises(VocabError, match=r"vocab.json: \d+ tokens are the result of no merge, e\.g\. .* "
                                                 r"look truncated"):
                _load(tmp_path, data)


def test_merges_must_name_tokens(tmp_path, saved):
    a, b = saved["merges"][-1]
    bad = edited(saved, lambda d: d["vocab"].pop(a + b) and None)
    with pytest.raises(VocabError, match=r"is not in 'vocab'|same id|out of range"):
        _load(tmp_path, bad)
    bad = edited(saved, lambda d: d["merges"].append([a, "nope"]))
    bad["num_merges"] += 1
    with pytest.raises(VocabError, match=r"'merges'\[\d+\] .*'nope' is not in 'vocab'"):
        _load(tmp_path, bad)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(prune_freq="abc"), r"'prune_freq' must be a positive integer, not 'abc'"),
    (lambda d: d.update(min_freq=0), r"'min_freq' must be a positive integer, not 0"),
    (lambda d: d.update(min_freq=True), r"'min_freq' must be a positive integer, not True"),
    (lambda d: d.update(version=["x"]), r"'version' must be a string"),
    # Another version skipped the checks of wwho's files: a cut merge list loaded
    (lambda d: d.update(vocab_size=float(d["vocab_size"])), r"'vocab_size' is \d+\.0 but"),
    (lambda d: d.update(num_merges=float(d["num_merges"])), r"'num_merges' is \d+\.0 but"),
    (lambda d: d.update(version="wwho-sgpe/3", merges=d["merges"][:5], num_merges=5), r"'version' is 'wwho-sgpe/3'"),
    (lambda d: d.update(format="other/9"), r"'format' is 'other/9'"),
    (lambda d: d.update(fallback=["bytes"]), r"'fallback' must be 'bytes' or 'unk'"),
    (lambda d: d.update(script={"a": 1}), r"'script' must be one of"),
    (lambda d: d.update(special_tokens=["[PAD]", "[PAD]"]), r"lists a token twice"),
    (lambda d: d.update(merges=[["a"]]), r"'merges'\[0\]: a merge is a pair of non-empty strings"),
    (lambda d: d.update(vocab_size=[1]), r"'vocab_size' is \[1\]"),
    # (an empty token was "'vocab' entry '': 5 is not an id", of a valid id)
    (lambda d: d["vocab"].update({"": len(d["vocab"])}), r"'vocab' entry '': an empty token; tokens are non-empty"),
    (lambda d: d["vocab"].update({"x": "5"}), r"'vocab' entry 'x': '5' is not an id; ids are integers"),
])
def test_fields_of_the_wrong_type_are_named(tmp_path, saved, change, message):
    with pytest.raises(VocabError, match=r"vocab.json: .*" + message):
        _load(tmp_path, edited(saved, change))


def test_json_limits(tmp_path, saved):
    with pytest.raises(VocabError, match=r"vocab.json: JSON nested too deeply"):
        _load(tmp_path, '{"vocab": ' + "[" * 50_000 + "]" * 50_000 + "}")
    text = json.dumps(saved, ensure_ascii=False)
    with pytest.raises(VocabError, match=r"vocab.json: the key 'vocab' appears twice"):
        _load(tmp_path, text[:-1] + ', "vocab": {}}')


def test_a_valid_file_still_loads(tmp_path, saved):
    _load(tmp_path, saved)
    tok = SGPETokenizer.load(tmp_path / "vocab.json")
    assert tok.decode(tok.encode("ශ්‍රී ලංකාව")) == "ශ්‍රී ලංකාව"


def test_the_original_sgpe_version_still_loads(tmp_path, saved):
    # spec 000's "sgpe_v1.0.0": its syllable tokens come from no merge, so no truncation check
    _load(tmp_path, edited(saved, lambda d: d.update(version="sgpe_v1.0.0")))


def test_a_trained_tokenizer_describes_the_format_it_is_saved_in(tmp_path):
    # A fresh tokenizer and the same one saved name the same format.
    from wwho import SGPETokenizer
    from wwho.errors import VocabSizeWarning

    for options in ({}, {"merge_scope": "words", "superword_share": 0}):
        with pytest.warns(VocabSizeWarning, match="no pair of tokens left to merge"):  # (a tiny text)
            tok = SGPETokenizer.train_from_iterator(["ශ්‍රී ලංකාව ශ්‍රී ලංකාව"] * 20, vocab_size=400,
                                                    progress=False, **options)
        again = SGPETokenizer.load(tok.save(tmp_path / str(len(options))))
        assert tok.describe(top=0).splitlines()[0] == again.describe(top=0).splitlines()[0]
        assert f"format {again.file.format}" in tok.describe(top=0).splitlines()[0]
