"""Misuse of the public methods is answered with a TokenizerError that says what was wrong, the same
for every tokenizer kind (issue 27, item 11; the checks live in ``wwho.ids`` and ``wwho.threads``).

None of these may pass or fail obscurely: ``encode_batch("hello")`` encoding each character,
``decode({5: 1})`` decoding the dict's keys, ``decode(np.int64(5))`` raising a bare ``TypeError``,
``num_threads=2**64`` a bare ``OverflowError``, or ``num_threads=100_000`` accepted, leaving hundreds
of pool threads alive.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from conftest import O200K_FILE, tokenizer_kinds

from wwho.errors import TokenizerError
from wwho.threads import MAX_THREADS, cpus, thread_count

KINDS = ["bytelevel", "sgpe", "meta", "binary"]
SINHALA = ["ශ්‍රී ලංකාව ශ්‍රී ලංකා මම ගෙදර යනවා"] * 50


def _sgpe():
    from wwho.sgpe import SGPETokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a small vocabulary: fewer tokens than asked
        return SGPETokenizer.train_from_iterator(SINHALA, vocab_size=300, script="sinhala", progress=False)


@pytest.fixture(scope="module")
def kinds():
    return tokenizer_kinds(_sgpe())


def _get(kinds, kind):
    if kind not in kinds:
        pytest.skip(f"{O200K_FILE} is absent")
    return kinds[kind]


def _one(kind):
    """One input of the kind's encoder."""
    return b"hello abc" if kind == "binary" else SINHALA[0] if kind in ("sgpe", "meta") else "abc cab"


def _batch_methods(tok, kind):
    """Every batch encoder of the kind, as (name, method)."""
    names = {"bytelevel": ["encode_batch", "encode_ordinary_batch"], "sgpe": ["encode_batch", "encode_routed_batch"],
             "meta": ["encode_batch"], "binary": ["encode_batch"]}[kind]
    return [(name, getattr(tok, name)) for name in names]


@pytest.mark.parametrize("kind", KINDS)
def test_one_text_is_not_a_batch(kinds, kind):
    tok = _get(kinds, kind)
    one = _one(kind)
    singles = [one, b"abc", bytearray(b"abc"), "abc"] if kind == "binary" else [one, "hello", b"hello"]
    for name, method in _batch_methods(tok, kind):
        for single in singles:
            with pytest.raises(TokenizerError, match=rf"{name} takes a list of .*, not a single {type(single).__name__}"):
                method(single)
        for unordered, word in (({one: 1}, "dict"), ({one}, "set"), (frozenset([one]), "frozenset")):
            with pytest.raises(TokenizerError, match=rf"{name} takes a list of .*, not a {word}"):
                method(unordered)
        # What a batch is: any ordered collection of texts.
        want = [tok.encode(one)]
        for good in ([one], (one,), iter([one])):
            got = method(good)
            assert (got == want) if name != "encode_routed_batch" else len(got) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_decode_refuses_dicts_sets_and_single_ids(kinds, kind):
    tok = _get(kinds, kind)
    ids = tok.encode(_one(kind))
    for unordered, word in (({ids[0]: 1}, "dict"), ({ids[0]}, "set"), ({}.fromkeys(ids).keys(), "dict_keys")):
        with pytest.raises(TokenizerError, match=rf"expected a sequence of token ids, not a {word}"):
            tok.decode(unordered)
    for single, name in ((np.int64(ids[0]), "numpy.int64"), (np.uint32(ids[0]), "numpy.uint32"),
                         (np.array(ids[0]), "numpy.ndarray"), (ids[0], "int")):
        with pytest.raises(TokenizerError, match=rf"got {name}, a single id: for one id use decode\(\[id\]\)"):
            tok.decode(single)
    assert tok.decode([np.int64(ids[0])]) == tok.decode(ids[:1])
    with pytest.raises(TokenizerError, match="decode_batch takes a list of lists of token ids, not a dict"):
        tok.decode_batch({0: ids})
    with pytest.raises(TokenizerError, match="got int, a single id"):
        tok.decode_batch(ids)  # a flat list: each item is one id
    assert tok.decode_batch((ids, ids)) == [tok.decode(ids)] * 2


BAD_COUNTS = [2**64, 2**63, 100_000, MAX_THREADS + 1, 0, -1, True, False, 2.0, "2", np.float64(2)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bad", BAD_COUNTS, ids=repr)
def test_bad_thread_counts_are_refused(kinds, kind, bad):
    tok = _get(kinds, kind)
    for _, method in _batch_methods(tok, kind):
        with pytest.raises(TokenizerError, match=rf"num_threads must be an integer from 1 to {MAX_THREADS}"):
            method([_one(kind)], num_threads=bad)


@pytest.mark.parametrize("kind", KINDS)
def test_thread_counts_that_are_integers_are_taken(kinds, kind):
    tok = _get(kinds, kind)
    texts = [_one(kind)] * 3
    want = [tok.encode(t) for t in texts]
    for n in (1, 2, np.int64(3), np.uint8(2), MAX_THREADS, None):
        got = tok.encode_batch(texts, num_threads=n)
        assert got == want, n


def test_thread_count():
    assert thread_count(None) is None
    assert thread_count(1) == 1
    assert thread_count(MAX_THREADS) == min(MAX_THREADS, cpus())
    assert thread_count(np.int32(2)) == min(2, cpus())
    assert MAX_THREADS >= 256


@pytest.mark.parametrize("kind", ["bytelevel", "sgpe"])
def test_a_large_thread_count_leaves_no_crowd_of_threads(kind):
    """The core keeps a pool of threads per count asked for, so ``num_threads=200`` would keep 200
    threads alive: a count is lowered to the CPUs the process may use."""
    make = ("from wwho.bytelevel import ByteBPE\n"
            "tok = ByteBPE({bytes([b]): b for b in range(256)}, pattern='gpt2')" if kind == "bytelevel" else
            "import warnings\nwarnings.simplefilter('ignore')\nfrom wwho.sgpe import SGPETokenizer\n"
            f"tok = SGPETokenizer.train_from_iterator({SINHALA!r}, vocab_size=300, script='sinhala', progress=False)")
    code = make + textwrap.dedent("""
        import os
        texts = ["abc cab " * 20 + str(i) for i in range(4000)]  # 660 kB: enough for the core to use threads
        want = [tok.encode(t) for t in texts]
        before = len(os.listdir("/proc/self/task"))
        assert tok.encode_batch(texts, num_threads=200) == want
        print(len(os.listdir("/proc/self/task")) - before)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    added = int(proc.stdout.split()[-1])
    assert added <= cpus(), f"{added} threads left alive after encode_batch(num_threads=200)"


# --- special-token options and special-token lists ------------------------------------------------


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta"])
@pytest.mark.parametrize("bad, words", [("[CLS]", "must be 'all' or a collection"), (5, "not int"),
                                        ([1, "a"], r"names \(str\), not 1")])
def test_a_bad_special_token_set_is_one_typed_error_on_every_encoder(kinds, kind, bad, words):
    """Not a TypeError from inside (numbers), nor a name taken as its characters (SGPE)."""
    tok = _get(kinds, kind)
    encoders = [tok.encode, lambda t, **o: tok.encode_batch([t], **o), tok.encode_to_numpy]
    for encode in encoders:
        with pytest.raises(TokenizerError, match=words):
            encode("a [CLS] b", allowed_special=bad)


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta"])
def test_names_the_vocabulary_lacks_are_left_out_as_tiktoken_leaves_them(kinds, kind):
    """A name the vocabulary lacks is no TokenizerError, so one allowed set written for several
    encodings (tiktoken code passing {"<|endoftext|>", "<|fim_prefix|>"} to each) works. As tiktoken
    does: an allowed one is left out; a disallowed one is looked for in the text."""
    from wwho.bytelevel import DisallowedSpecialError

    tok = _get(kinds, kind)
    encoders = [(tok.encode, None), (lambda t, **o: tok.encode_batch(["x", t], **o)[1], 1),
                (tok.encode_to_numpy, None)]
    for encode, at in encoders:
        assert list(encode("a [CLS] b", allowed_special={"<|nope|>"})) == list(encode("a [CLS] b"))
        if kind != "sgpe":  # (SGPE's encode has no disallowed_special)
            assert list(encode("a <nope> b", disallowed_special={"<|nope|>"})) == list(encode("a <nope> b"))
            with pytest.raises(DisallowedSpecialError) as refused:
                encode("a <|nope|> b", disallowed_special={"<|nope|>", "b"})
            assert (refused.value.token, refused.value.offset, refused.value.text_index) == ("<|nope|>", 2, at)


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta"])
def test_none_is_no_special_token_on_every_encoder(kinds, kind):
    """``allowed_special=None`` allows none on every encoder, encode and encode_batch alike (not a
    TypeError in the meta tokenizer's encode and taken in its encode_batch)."""
    tok = _get(kinds, kind)
    text = "a [CLS] b"
    plain = tok.encode(text)
    assert tok.encode(text, allowed_special=None) == plain
    assert tok.encode_batch([text], allowed_special=None) == [plain]
    if kind != "sgpe":  # SGPE has no disallowed_special: its special-token text is ordinary text
        assert tok.encode("<|endoftext|>", disallowed_special=None) == tok.encode("<|endoftext|>", disallowed_special=())


@pytest.mark.parametrize("special_tokens, words", [
    ("[A]", "not the string '\\[A\\]'"), (["[A]", "[A]"], "lists '\\[A\\]' twice"), ([""], "non-empty strings"),
    (["<0x41>"], "text of a byte token"), (["ශ"], "also an ordinary token"),
    (5, "must be a list of strings, not 5"), ({"[A]": 1}, "must be a list of strings, not {"),
])
def test_sgpe_training_refuses_special_tokens_its_loader_would_refuse(special_tokens, words):
    """Refused at training: otherwise training and saving succeed and loading the saved directory
    fails (a name twice, an empty one), or a special token shares an ordinary token's id (skipping
    special tokens in decode then deletes ordinary text)."""
    from wwho.errors import VocabError
    from wwho.sgpe import SGPETokenizer

    with warnings.catch_warnings(), pytest.raises(VocabError, match=words):
        warnings.simplefilter("ignore")
        SGPETokenizer.train_from_iterator(SINHALA, vocab_size=300, script="sinhala", progress=False,
                                          special_tokens=special_tokens)


def test_bytelevel_training_refuses_one_string_of_special_tokens():
    """``special_tokens="<s>"`` must not make '<', 's' and '>' special, where every text with an 's'
    would then be refused."""
    from wwho.bytelevel import ByteBPE
    from wwho.errors import VocabError

    with pytest.raises(VocabError, match="write \\['<s>'\\]"):
        ByteBPE.train_from_iterator(["some text"] * 10, vocab_size=300, progress=False, special_tokens="<s>")


@pytest.mark.parametrize("options, words", [
    (dict(merges=[("a", "b")]), r"merges\[0\]: expected a pair of bytes"),
    (dict(merges=[(b"a",)]), r"merges\[0\]: expected a pair of bytes"),
    (dict(cache_bytes=2**70), r"cache_bytes must be an int in \[0, 2\*\*63\)"),
    (dict(pattern=None), "pattern must be a name, a regex or a list of regexes"),
])
def test_bytebpe_constructor_arguments_are_typed_errors(options, words):
    """Not a TypeError, an OverflowError, or a TypeError from inside the pre-tokenizer."""
    from wwho.bytelevel import ByteBPE
    from wwho.errors import VocabError

    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    with pytest.raises(VocabError, match=words):
        ByteBPE(ranks, **options)


def test_true_or_false_options_name_themselves():
    # "no" would be true; the core's and HF's own TypeErrors named no option.
    from pathlib import Path

    from wwho import SGPETokenizer, binary
    from wwho.binary.tokenizer import BinaryTokenizer
    from wwho.errors import TokenizerError, VocabError

    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    for option in ("prefix_space", "superword_letters", "script_characters", "bare_syllables", "skip_bad_lines"):
        with pytest.raises(VocabError, match=f"{option} must be True or False, not 'no'"):
            SGPETokenizer.train(sample, vocab_size=1000, progress=False, **{option: "no"})
    # The same from texts and from counts, which do not go through train_sgpe's own checks.
    for option in ("prefix_space", "superword_letters", "script_characters", "bare_syllables", "complete_syllables",
                   "complete_words", "complete_endings", "complete_superwords"):
        with pytest.raises(VocabError, match=f"{option} must be True or False, not 'no'"):
            SGPETokenizer.train_from_iterator(["ශ්‍රී ලංකාව."], vocab_size=1000, progress=False, **{option: "no"})
        with pytest.raises(VocabError, match=f"{option} must be True or False, not 'no'"):
            SGPETokenizer.train_from_counts({" ලංකාව.": 3}, vocab_size=1000, progress=False, **{option: "no"})
    counts = {bytes(range(i, i + 64)): 3 for i in range(0, 192, 16)}
    tok = BinaryTokenizer(binary.train_from_counts(counts, vocab_size=512, min_frequency=1))
    with pytest.raises(TokenizerError, match="add_special_tokens must be True or False, not 'y'"):
        tok.encode(b"abc", add_special_tokens="y")
    with pytest.raises(TokenizerError, match="add_special_tokens must be True or False"):
        tok.encode_batch([b"abc"], add_special_tokens=1)
    with pytest.raises(TokenizerError, match="skip_special_tokens must be True or False"):
        tok.decode([1, 2], skip_special_tokens="y")
    with pytest.raises(TokenizerError, match="pretty must be True or False"):
        tok.save("never.json", pretty="y")
    assert tok.decode(tok.encode(b"abc")) == b"abc"


def test_decode_takes_errors_by_position_in_every_text_kind():
    # tiktoken's decode(tokens, errors): ByteBPE took it by position, SGPE and meta by keyword only.
    import inspect

    from wwho import ByteBPE, MetaTokenizer, SGPETokenizer

    for cls in (ByteBPE, SGPETokenizer, MetaTokenizer):
        for method in (cls.decode, cls.decode_batch):
            names = list(inspect.signature(method).parameters)
            assert names[2] == "errors", (cls.__name__, method.__name__, names)
            assert inspect.signature(method).parameters["errors"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta", "binary"])
def test_errors_name_the_item_of_a_batch_and_no_position_for_one_id(kinds, kind):
    """An id out of range in a batch's second list names the list as well as its position in it;
    SGPE's and the meta tokenizer's encode_batch name the text that is not a str; a binary
    tokenizer's token_bytes(-1) does not speak of "position 0", nor its encode_batch_to_numpy(b"ab")
    of encode_batch."""
    tok = _get(kinds, kind)
    with pytest.raises(TokenizerError, match=r"^batch\[1\]: token id 1000000000 at position 1 "):
        tok.decode_batch([[5], [5, 10**9]])
    if kind != "binary":
        with pytest.raises(TokenizerError, match=r"texts\[1\]: expected text"):
            tok.encode_batch(["a", 5])
    with pytest.raises(TokenizerError) as one:
        tok.token_bytes(-1)
    assert "position" not in str(one.value) and "-1" in str(one.value)
    if kind == "binary":
        with pytest.raises(TokenizerError, match="encode_batch_to_numpy takes a list of byte strings"):
            tok.encode_batch_to_numpy(b"ab")


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta", "binary"])
def test_an_id_without_a_token_is_a_key_error_on_every_decoder(kinds, kind):
    """tiktoken raises KeyError for an id without a token: every kind raises UnknownTokenError, both a
    TokenizerError and a KeyError."""
    from wwho.errors import UnknownTokenError

    tok = _get(kinds, kind)
    decoders = [tok.decode, lambda ids: tok.decode_batch([ids]), lambda ids: tok.token_bytes(ids[0])]
    if kind != "binary":
        decoders.append(tok.decode_bytes)
    for decode in decoders:
        for bad in ([10**9], [-1]):
            with pytest.raises(KeyError) as refused:
                decode(bad)
            assert isinstance(refused.value, UnknownTokenError) and isinstance(refused.value, TokenizerError)


def _loaders():
    import wwho
    from wwho.binary.tokenizer import BinaryTokenizer
    from wwho.bytelevel import ByteBPE
    from wwho.meta import MetaTokenizer
    from wwho.sgpe import SGPETokenizer

    return {"load_tokenizer": wwho.load_tokenizer, "detect_kind": wwho.detect_kind,
            "SGPETokenizer.load": SGPETokenizer.load, "MetaTokenizer.load": MetaTokenizer.load,
            "BinaryTokenizer.load": BinaryTokenizer.load, "ByteBPE.load": ByteBPE.load,
            "ByteBPE.from_gguf": ByteBPE.from_gguf, "ByteBPE.from_hf": ByteBPE.from_hf}


@pytest.mark.parametrize("name", list(_loaders()))
@pytest.mark.parametrize("bad, words", [(None, "takes a path (str or os.PathLike), not None"),
                                        (5, "takes a path (str or os.PathLike), not 5"),
                                        ("vocab\0.json", "holds a NUL character"),
                                        # Path("") is the current directory, which was then loaded
                                        ("", "an empty path")])
def test_a_path_that_names_no_file_is_one_vocab_error_naming_the_call(name, bad, words):
    """One VocabError naming the call from every loader, not a bare TypeError from os.fspath nor the
    ValueError of an embedded NUL."""
    from wwho.errors import VocabError

    with pytest.raises(VocabError, match=rf"^{re.escape(name)}\b.*{re.escape(words)}"):
        _loaders()[name](bad)


def test_a_path_like_of_bytes_is_one_vocab_error():
    """An os.PathLike whose __fspath__ gives bytes is a VocabError, not a bare TypeError."""
    from wwho.errors import VocabError

    class Bytes:
        def __fspath__(self):
            return b"vocab.json"

    for load in _loaders().values():
        with pytest.raises(VocabError, match=r"takes a path \(str or os.PathLike of str\)"):
            load(Bytes())


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta"])
def test_a_special_token_allowed_and_disallowed_at_once_is_refused_with_the_right_advice(kinds, kind):
    """SGPE refuses the text of a special token named in both ``allowed_special`` and
    ``disallowed_special``, as tiktoken, the byte-level and the meta kinds do (an explicit disallowed
    name is looked for whatever is allowed), and it refuses a disallowed token of its own vocabulary
    without the advice meant for a name it lacks ("leave it out of disallowed_special"): allowing it
    or disallowing nothing is the fix."""
    from wwho.errors import DisallowedSpecialError

    tok = _get(kinds, kind)
    name = "<|endoftext|>" if kind == "o200k" else "[CLS]"
    assert name in tok.special_tokens_set if kind == "o200k" else name in tok.special_tokens
    text = f"ab{name}"
    calls = [lambda **kw: tok.encode(text, **kw), lambda **kw: tok.encode_batch(["x", text], **kw),
             lambda **kw: tok.encode_to_numpy(text, **kw), lambda **kw: tok.encode_batch_to_numpy([text], **kw)]
    advice = r"at offset 2; pass allowed_special=\{'.*'\} \(or 'all'\)"
    # (named in both: not the advice to allow it, which was done)
    both = r"at offset 2; '.*' is in both allowed_special and disallowed_special .*take it out of disallowed_special"
    for call in calls:
        for allowed in ({name}, "all"):
            with pytest.raises(DisallowedSpecialError, match=both):
                call(allowed_special=allowed, disallowed_special={name})
        with pytest.raises(DisallowedSpecialError, match=advice):
            call(disallowed_special="all")
        with pytest.raises(DisallowedSpecialError, match="'ab' is no special token of this vocabulary"):
            call(allowed_special={name}, disallowed_special={"ab"})  # a name it lacks: leave it out
    if kind == "o200k":  # the oracle: tiktoken refuses the text too
        from wwho.bytelevel.tiktoken_loader import get_encoding

        theirs = get_encoding("o200k_base", tiktoken_file=O200K_FILE)
        with pytest.raises(ValueError, match="disallowed special token"):
            theirs.encode(text, allowed_special={name}, disallowed_special={name})


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta"])
def test_allowed_special_as_an_iterator_is_read_as_its_set_with_disallowed_special(kinds, kind):
    """Read twice when ``disallowed_special`` is given (once for the refusal, once for the ids),
    ``allowed_special`` as an iterator, which the type ``Iterable[str]`` allows, would be used up by
    the first read and the special token encoded as plain text, without a word. (tiktoken takes sets
    only: it refuses an iterator with "all".) Every kind reads it as its set, on each encoder."""
    tok = _get(kinds, kind)
    name = "<|endoftext|>" if kind == "o200k" else "[CLS]"
    text = f"ab{name} cd"
    calls = {"encode": lambda **kw: list(tok.encode(text, **kw)),
             "encode_batch": lambda **kw: tok.encode_batch(["x", text], **kw)[1],
             "encode_to_numpy": lambda **kw: tok.encode_to_numpy(text, **kw).tolist(),
             "encode_batch_to_numpy": lambda **kw: tok.encode_batch_to_numpy(["x", text], **kw).ids.tolist()}
    for method, call in calls.items():
        for disallowed in ("all", {"[SEP]"}, ()):
            expected = call(allowed_special={name}, disallowed_special=disallowed)
            assert call(allowed_special=iter([name]), disallowed_special=disallowed) == expected, (method, disallowed)
            assert call(allowed_special=(n for n in [name]), disallowed_special=disallowed) == expected
    assert tok.encode_single_token(name) in tok.encode(text, allowed_special=iter([name]), disallowed_special="all")


@pytest.mark.parametrize("kind", ["o200k", "sgpe", "meta"])
def test_bytes_that_are_no_utf8_are_one_error_class_for_every_decoder(kinds, kind):
    """``decode(ids, errors="strict")`` raises no plain UnicodeDecodeError, which ``except
    TokenizerError`` misses, but NotUTF8Error (both classes), as the streaming decoder does for the
    same ids: every decoder raises NotUTF8Error, with the text before the bytes."""
    from wwho import StreamingDecoder
    from wwho.errors import NotUTF8Error

    tok = _get(kinds, kind)
    bad = tok.encode_single_token(b"\xff") if kind != "sgpe" else tok.vocab["<0xFF>"]
    ids = [*tok.encode("ab"), bad]
    offset = len(tok.decode(ids[:-1]).encode())
    calls = {"strict": lambda: tok.decode(ids, errors="strict"),
             "surrogatepass": lambda: tok.decode(ids, errors="surrogatepass"),
             "decode_with_offsets": lambda: tok.decode_with_offsets(ids),
             "decode_batch": lambda: tok.decode_batch([ids[:-1], ids], errors="strict"),
             "stream": lambda: [StreamingDecoder(tok, errors="strict").decode_tokens(ids)]}
    for name, call in calls.items():
        with pytest.raises(NotUTF8Error) as caught:
            call()
        assert isinstance(caught.value, TokenizerError) and isinstance(caught.value, UnicodeDecodeError), name
        assert caught.value.start == offset and caught.value.text == "ab", (name, caught.value.start)
        # a batch names the item, as its other errors do (the name was in args, which str() ignored)
        assert str(caught.value).startswith("batch[1]: the tokens' bytes" if name == "decode_batch" else
                                            "the tokens' bytes"), (name, str(caught.value))
    assert tok.decode(ids) == "ab\ufffd"


def test_a_bad_path_to_save_or_read_is_one_typed_error():
    """save(None), save(5) and a NUL gave bare TypeError and ValueError; a lone surrogate (no file
    name) a UnicodeEncodeError from inside, in a save and a load alike; tiktoken_file=5 a bare
    TypeError; a misspelt unk= a bare ValueError, once the file was looked for."""
    from wwho.bytelevel import ByteBPE
    from wwho.errors import VocabError, WriteError
    from wwho.sgpe import SGPETokenizer

    tok = ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2")
    for bad, words in [(None, "save takes a path (str or os.PathLike), not None"), (5, "not 5"),
                       ("a\0b", "holds a NUL character"), ("x\ud800", "holds a lone surrogate")]:
        with pytest.raises(WriteError, match=re.escape(words)):
            tok.save(bad)
        with pytest.raises(WriteError, match=re.escape(words)):
            _sgpe().save(bad)
    for load in _loaders().values():
        with pytest.raises(VocabError, match="holds a lone surrogate, which no file name does"):
            load("x\ud800")
    with pytest.raises(VocabError, match=re.escape("tiktoken_file= takes a path (str or os.PathLike), not 5")):
        ByteBPE.from_tiktoken("o200k_base", tiktoken_file=5)
    with pytest.raises(VocabError, match="unk must be 'bytes' or 'token', not 'nope'"):
        SGPETokenizer.load("/no/such/vocab.json", unk="nope")


def test_small_api_misuse_is_a_typed_error(kinds):
    """describe(top=None) and top=1.5 raised from inside, top=-1 printed every token; join_segments
    of anything but segments, and MetaVocab's token lookup of a list, raised bare errors."""
    import wwho
    from wwho.errors import WrongTypeError

    for kind in ("bytelevel", "sgpe", "meta"):
        if kind not in kinds:
            continue
        for bad in (None, 1.5, True):
            with pytest.raises(WrongTypeError, match="top must be a whole number of 0 or more"):
                kinds[kind].describe(top=bad)
        with pytest.raises(TokenizerError, match="top must be a whole number of 0 or more, not -1"):
            kinds[kind].describe(top=-1)
    for bad in (None, ["a"], "text"):
        with pytest.raises(WrongTypeError, match="join_segments takes"):
            wwho.join_segments(bad)
    text = "ශ්‍රී ලංකාව and ok"
    assert wwho.join_segments(wwho.segment(text)) == text
    if "meta" in kinds:
        vocab = kinds["meta"].vocab
        with pytest.raises(WrongTypeError, match="an SGPE token is a str, not list"):
            vocab.encode_sgpe_token(["a"])
        assert type(vocab.sgpe_id(np.int64(vocab.offset + 1))) is int


def test_equal_schemas_hash_alike():
    """A frozen dataclass promises a hash; its dict fields made hash() a bare TypeError."""
    import wwho

    path = "src/wwho/schemas/sinhala.json"
    a, b = wwho.load_schema(path), wwho.load_schema(path)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
