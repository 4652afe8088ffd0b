"""Byte-level BPE used the wrong way on purpose: options of the wrong type or misspelt, each of which
could be taken silently (a BOS added for ``add_special="no"``, a pre-tokenizer name such as ``gpt-4``
taken as a regex that matches nothing) or fail with a message that names nothing
(``dict(["<|end|>"])``'s), and an error that could name the wrong position.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import O200K_FILE, one_line_error, run_wwho

from wwho.bytelevel import ByteBPE
from wwho.bytelevel.pretokenize import Pretokenizer
from wwho.bytelevel.train import train_bytelevel, train_bytelevel_from_counts
from wwho.errors import TokenizerError, VocabError

RANKS = {bytes([b]): b for b in range(256)} | {b"ab": 256}


@pytest.fixture(scope="module")
def with_bos():
    """A vocabulary that asks for BOS and EOS, as a GGUF file may."""
    return ByteBPE(RANKS, pattern="gpt4", special_tokens={"<s>": 257, "</s>": 258}, bos_id=257, eos_id=258,
                   add_bos=True, add_eos=True)


@pytest.mark.parametrize("value", ["no", "False", 0, 1, None, np.True_, [True]])
def test_add_special_tokens_is_true_or_false(with_bos, value):
    # Read as a truth value, "no" would add BOS and EOS, and None or 0 add nothing, silently.
    calls = [
        lambda: with_bos.encode("ab", add_special_tokens=value),
        lambda: with_bos.encode_to_numpy("ab", add_special_tokens=value),
        lambda: with_bos.encode_batch(["ab"], add_special_tokens=value),
        lambda: with_bos.encode_batch_to_numpy(["ab"], add_special_tokens=value),
    ]
    for call in calls:
        with pytest.raises(TokenizerError, match="add_special_tokens must be True or False"):
            call()


def test_add_special_tokens_true_and_false(with_bos):
    assert with_bos.encode("ab", add_special_tokens=True) == [257, 256, 258]
    assert with_bos.encode("ab", add_special_tokens=False) == [256]
    assert with_bos.encode_to_numpy("ab", add_special_tokens=True).tolist() == [257, 256, 258]
    assert with_bos.encode_batch(["ab", ""], add_special_tokens=True) == [[257, 256, 258], [257, 258]]


def test_add_special_is_the_deprecated_name_of_add_special_tokens(with_bos):
    """The former keyword still works in every encode method, with a DeprecationWarning that
    points at the caller; given with the new name and a different value, it is an error."""
    calls = [
        (lambda **kw: with_bos.encode("ab", **kw), [257, 256, 258]),
        (lambda **kw: with_bos.encode_to_numpy("ab", **kw).tolist(), [257, 256, 258]),
        (lambda **kw: with_bos.encode_batch(["ab"], **kw), [[257, 256, 258]]),
        (lambda **kw: with_bos.encode_batch_to_numpy(["ab"], **kw).ids.tolist(), [257, 256, 258]),
    ]
    for call, want in calls:
        with pytest.warns(DeprecationWarning, match="add_special_tokens") as caught:
            assert call(add_special=True) == want
        assert caught[0].filename == __file__
        with pytest.warns(DeprecationWarning):
            assert call(add_special=True, add_special_tokens=True) == want
        with pytest.warns(DeprecationWarning), pytest.raises(TokenizerError, match="give one of them"):
            call(add_special=False, add_special_tokens=True)
        with pytest.warns(DeprecationWarning), pytest.raises(TokenizerError, match="add_special must be True"):
            call(add_special="no")


@pytest.mark.parametrize("option", ["add_bos", "add_eos"])
def test_add_bos_and_add_eos_are_true_or_false(option):
    with pytest.raises(VocabError, match=f"{option} must be True or False, not 'no'"):
        ByteBPE(RANKS, special_tokens={"<s>": 257}, bos_id=257, eos_id=257, **{option: "no"})


@pytest.mark.parametrize("option", ["bos", "eos"])
def test_adding_a_bos_or_eos_needs_its_id(option):
    # not taken with nothing added
    with pytest.raises(VocabError, match=f"add_{option}=True needs a {option}_id"):
        ByteBPE(RANKS, special_tokens={"<s>": 257}, **{f"add_{option}": True})


@pytest.mark.parametrize("name", ["gpt-4", "o200k-base", "GPT4o", "cl100k-base", "llama_bpe", "gpt"])
def test_a_misspelt_pattern_name_is_an_error_not_a_regex(name):
    # Taken as a regex, "gpt-4" matches nothing in real text: each document was one piece, and
    # training merged across words (" this " became a token) without a word of warning.
    with pytest.raises(VocabError, match=f"unknown pre-tokenizer '{name}'.*known: .*gpt4"):
        ByteBPE(RANKS, pattern=name)
    with pytest.raises(VocabError, match=f"unknown pre-tokenizer '{name}'"):
        train_bytelevel_from_counts({"ab": 5}, vocab_size=257, pattern=name, progress=False)
    with pytest.raises(VocabError, match=f"unknown pre-tokenizer '{name}'"):  # from_gguf(pretokenizer=)'s way
        Pretokenizer.coerce(name)


def test_names_and_regexes_still_load():
    for pattern in ["gpt4", "GPT4", "o200k_base", "gpt-2", "llama-bpe", r"\w+|\s+", ".", ["[a-z]+", r"\d"]]:
        assert ByteBPE(RANKS, pattern=pattern).decode(ByteBPE(RANKS, pattern=pattern).encode("ab cd")) == "ab cd"


@pytest.mark.parametrize("pattern", [5, None, b"gpt4", {"gpt4": 1}])
def test_a_pattern_of_the_wrong_type_is_named(pattern, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("ab ab ab\n", encoding="utf-8")
    with pytest.raises(VocabError, match="pattern must be a name, a regex or a list of regexes"):
        ByteBPE(RANKS, pattern=pattern)
    if not isinstance(pattern, bytes):  # bytes are a sequence of ints, refused by the regex check
        with pytest.raises(VocabError, match="pattern must be a name, a regex or a list of regexes"):
            train_bytelevel(corpus, vocab_size=300, pattern=pattern, progress=False)


def test_cli_refuses_a_misspelt_pattern_before_training(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 20, encoding="utf-8")
    proc = run_wwho("train", "--kind", "bytelevel", corpus, "--vocab-size", "300", "--pattern", "gpt-4",
                    "--out", tmp_path / "out", "--quiet")
    assert "unknown pre-tokenizer 'gpt-4'" in one_line_error(proc)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("option", ["special_tokens", "added_tokens", "extra_tokens"])
@pytest.mark.parametrize("value", [["<|end|>"], "<|end|>", 5])
def test_token_tables_of_the_wrong_type_are_named(option, value):
    # dict(["<|end|>"]) raised "dictionary update sequence element #0 has length 7; 2 is required".
    with pytest.raises(VocabError, match=f"{option} must be a dict of"):
        ByteBPE(RANKS, **{option: value})


@pytest.mark.parametrize("ranks", [[b"a", b"b"], None, "ab"])
def test_ranks_of_the_wrong_type_are_named(ranks):
    with pytest.raises(VocabError, match="ranks must be a dict of token bytes -> id"):
        ByteBPE(ranks)


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_from_tiktoken_options_of_the_wrong_type_are_named():
    with pytest.raises(VocabError, match="special_tokens must be a dict of name -> id, not \\['<|x|>'\\]"):
        ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE, special_tokens=["<|x|>"])
    with pytest.raises(VocabError, match="pattern must be a name"):
        ByteBPE.from_tiktoken(O200K_FILE, pattern=5)
    with pytest.raises(VocabError, match="unknown pre-tokenizer 'o200k-base'"):
        ByteBPE.from_tiktoken(O200K_FILE, pattern="o200k-base")
    for name in (None, 5, b"o200k_base"):
        with pytest.raises(VocabError, match="expected an encoding name or a path to a .tiktoken file"):
            ByteBPE.from_tiktoken(name)


def test_skip_special_tokens_names_the_position_the_caller_gave(with_bos):
    # The special tokens were dropped first, so the bad id at position 2 was reported at 0.
    with pytest.raises(TokenizerError, match="token id 999999 at position 2 is not in this vocabulary"):
        with_bos.decode([257, 258, 999999], skip_special_tokens=True)
    with pytest.raises(TokenizerError, match="position 1 is 'x'"):
        with_bos.decode(np.array([257, "x"], dtype=object), skip_special_tokens=True)
    assert with_bos.decode(np.array([257, 256, 258], dtype=np.uint16), skip_special_tokens=True) == "ab"


def test_numpy_integer_ids_are_ids(tmp_path):
    # An id read from an array was refused as "id 258 is not an integer", which is false.
    import base64

    ranks = tmp_path / "r.tiktoken"
    ranks.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for t, i in RANKS.items()), encoding="ascii")
    tok = ByteBPE.from_tiktoken(ranks, pattern="gpt2", special_tokens={"<s>": np.int64(257)})
    assert tok.encode("ab<s>", allowed_special="all") == [256, 257]
    tok = ByteBPE(RANKS | {b"cd": np.int64(257)}, special_tokens={"<s>": np.uint32(258)}, bos_id=258)
    assert tok.encode("abcd<s>", allowed_special="all") == [256, 257, 258]
    assert tok.decode([256, 257, 258]) == "abcd<s>"


def test_a_numpy_bos_id_is_kept_as_an_int_and_a_bool_is_refused(tmp_path):
    """``eos_id=np.int64(258)`` was kept as given: ``encode`` put a numpy integer among the ints (no
    JSON), and ``save`` failed on it with a bare TypeError; ``bos_id=True`` was taken as id 1 by the
    check and then given out as ``True``, and the saved folder refused to load."""
    import json

    tok = ByteBPE(RANKS, special_tokens={"<s>": 257, "</s>": 258}, bos_id=np.uint32(257), eos_id=np.int64(258),
                  add_bos=True, add_eos=True)
    ids = tok.encode("ab", add_special_tokens=True)
    assert ids == [257, 256, 258] and all(type(i) is int for i in ids) and json.dumps(ids)
    assert type(tok.bos_id) is int and type(tok.eos_id) is int
    tok.save(tmp_path / "tok")
    assert ByteBPE.load(tmp_path / "tok").encode("ab", add_special_tokens=True) == ids
    for option in ("bos_id", "eos_id"):
        with pytest.raises(VocabError, match=rf"{option}=True is not a token id"):
            ByteBPE(RANKS, **{option: True})


def test_an_empty_vocabulary_is_refused():
    # ByteBPE({}) built a tokenizer of no tokens, where every file loader refuses one.
    with pytest.raises(VocabError, match="ranks is empty"):
        ByteBPE({})


@pytest.mark.parametrize("method", ["load", "from_gguf", "from_hf"])
@pytest.mark.parametrize("path", [None, 5, b"dir"])
def test_a_path_that_is_no_path_is_named(method, path):
    # os.fspath's own TypeError ("expected str, bytes or os.PathLike object, not NoneType") named
    # neither the method nor what to pass; bytes would fail further in.
    with pytest.raises(VocabError, match=rf"ByteBPE.{method} takes a path \(str or os.PathLike\)"):
        getattr(ByteBPE, method)(path)


@pytest.mark.parametrize("where", ["merges.txt", "tokenizer.json"])
def test_an_error_about_a_huge_merge_shows_a_short_part_of_it(tmp_path, where):
    """The error does not repeat the whole entry: a merges.txt line of many MiB would make a message
    of several times its size."""
    import json

    from wwho import load_tokenizer
    from wwho.bytelevel import ByteBPE
    from wwho.errors import VocabError

    tok = ByteBPE({bytes([b]): b for b in range(256)} | {b"ab": 256}, pattern="gpt2", merges=[(b"a", b"b")])
    if where == "merges.txt":
        tok.save(tmp_path / "t")
        (tmp_path / "t" / "wwho-manifest.json").unlink()
        (tmp_path / "t" / "merges.txt").write_text("#version: 0.2\n" + "a" * 2_000_000 + "\n", encoding="utf-8")
        path = tmp_path / "t"
    else:
        tok.export_hf(tmp_path / "tokenizer.json")
        data = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
        data["model"]["merges"][0] = "\x01" * 2_000_000
        (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
        path = tmp_path / "tokenizer.json"
    with pytest.raises(VocabError, match="merge .* has no space") as err:
        load_tokenizer(path)
    assert len(str(err.value)) < 300 + len(str(tmp_path))
