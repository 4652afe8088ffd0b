"""Tokenizers sent to other processes: pickle, copy and deepcopy of every kind, and pools.

What DataLoader workers, ``datasets.map(num_proc=...)`` and ``multiprocessing`` pools do with a
tokenizer: pickle it (``spawn``: always; per task when it is an argument) or inherit it (``fork``).
Each kind must come back as an object giving the very ids of the original, on real lines of every
script of the shared corpora and on hostile text; the transformers class must also keep what
transformers adds (added tokens, special tokens), and its pickle must not carry its vocabulary
dict, which doubled the pickle (the meta tokenizer's own pickle is the cost that is left).
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import pickle
import subprocess
import sys
import textwrap
import threading
from collections import Counter

import pytest
from conftest import CORPORA, DATA, O200K_FILE

SAMPLE = "src/wwho/data/sinhala-wikipedia-sample.txt"
HOSTILE = ["", " ", "\x00", "a\x00b\x00", "\u200d", "\u200c\u200d\u200c", "ශ\u200d්\u200dර", "e\u0301\u0301\u0301", "\u0301",
           "👩\u200d👩\u200d👧\u200d👦🇱🇰👍🏽🏳️\u200d🌈", "a\r\nb\r\n\r\n", "\r", "ශ්‍රී ලංකා" * 2000, " " * 5000, "\ufeff",
           "\uffff\U0010ffff", "\u2028\u2029\x85", "क्\u200dष ক্\u200cষ", "[PAD] [CLS]", "⟦sgpe⟧[PAD]"]
SURROGATES = ["\ud800", "a\udfffb", "ශ\ud83d", "\ud83d\ude00"]


def corpus_lines(per_file: int = 4000) -> list[str]:
    """The first lines (``per_file`` bytes) of every file of every language in the shared corpora."""
    if not CORPORA.is_dir():
        pytest.skip(f"{CORPORA} is absent: this test needs the shared data folder (set WWHO_SHARED_DATA)")
    lines = []
    for path in sorted(CORPORA.glob("*/*.txt")):
        with open(path, encoding="utf-8") as f:
            lines += f.read(per_file).splitlines()[:-1]  # the last may be cut mid-line
    return [line for line in lines if "<|" not in line]  # special-token text is tested apart


@pytest.fixture(scope="module")
def texts():
    return corpus_lines() + HOSTILE


@pytest.fixture(scope="module")
def sgpe():
    from wwho.sgpe import SGPETokenizer, train_sgpe

    return SGPETokenizer(train_sgpe(SAMPLE, vocab_size=1000, progress=False, workers=1, segments_only=True))


@pytest.fixture(scope="module")
def kinds(sgpe):
    """name -> tokenizer, one of each kind (those needing shared files only when they are there)."""
    from wwho import ByteBPE, MetaTokenizer
    from wwho.binary import BinaryTokenizer
    from wwho.binary.train import train_from_counts

    data = open(SAMPLE, "rb").read()[:200_000]
    binary = BinaryTokenizer(train_from_counts(Counter(data[i:i + 32] for i in range(0, len(data), 32)),
                                               vocab_size=600))
    out = {"sgpe": sgpe, "binary": binary}
    if O200K_FILE.is_file():
        out["bytelevel"] = ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
        out["meta"] = MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE)
    gguf = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
    if gguf.is_file():
        out["gguf"] = ByteBPE.from_gguf(gguf)
    try:
        from wwho.hf import WWHOTokenizer
    except ImportError:
        pass
    else:
        if "meta" in out:
            out["transformers"] = WWHOTokenizer(meta_tokenizer=out["meta"])
    return out


def ids(kind: str, tok, texts: list[str]) -> list:
    if kind == "binary":
        return [tok.encode(t.encode("utf-8", "surrogatepass")) for t in texts]
    if kind == "transformers":
        return tok(texts, add_special_tokens=False)["input_ids"]
    return [tok.encode(t) for t in texts]


def get(kinds, kind):
    if kind not in kinds:
        pytest.skip(f"{kind}: needs a shared data file (o200k_base ranks or the llama-bpe GGUF) or transformers")
    return kinds[kind]


KINDS = ["sgpe", "meta", "bytelevel", "gguf", "binary", "transformers"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("how", ["pickle", "deepcopy", "copy"])
def test_copies_give_the_same_ids(kinds, texts, kind, how):
    tok = get(kinds, kind)
    again = {"pickle": lambda t: pickle.loads(pickle.dumps(t, pickle.HIGHEST_PROTOCOL)),
             "deepcopy": copy.deepcopy, "copy": copy.copy}[how](tok)
    assert type(again) is type(tok)
    assert ids(kind, again, texts) == ids(kind, tok, texts)
    if kind != "binary":
        # Lone surrogates: each kind answers as it does (its ids or its error), and the copy alike.
        assert [repr_or_ids(kind, again, t) for t in SURROGATES] == [repr_or_ids(kind, tok, t) for t in SURROGATES]


def repr_or_ids(kind, tok, text):
    try:
        return ids(kind, tok, [text])
    except Exception as exc:  # noqa: BLE001 (the copy must fail the same way)
        return f"{type(exc).__name__}: {exc}"


def test_the_transformers_class_keeps_added_tokens_and_its_pickle_is_the_meta_tokenizers(kinds):
    """The pickle does not hold the vocabulary dict (200,000 token strings) beside the meta
    tokenizer, which would double its size: the dict is rebuilt from the meta tokenizer."""
    tok = copy.copy(get(kinds, "transformers"))
    meta = kinds["meta"]
    tok.add_tokens(["<wwho-pickled>"])
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>"]})
    data = pickle.dumps(tok, pickle.HIGHEST_PROTOCOL)
    assert len(data) < 1.2 * len(pickle.dumps(meta, pickle.HIGHEST_PROTOCOL))
    again = pickle.loads(data)
    text = "x <wwho-pickled> ශ්‍රී<|im_start|>"
    assert again.encode(text, add_special_tokens=False) == tok.encode(text, add_special_tokens=False)
    assert again.get_vocab() == tok.get_vocab() and len(again) == len(tok)
    assert again.decode(again.encode(text, add_special_tokens=False)) == text
    assert (again.pad_token_id, again.eos_token_id) == (tok.pad_token_id, tok.eos_token_id)


def _pool_job(texts):
    return {kind: ids(kind, tok, texts) for kind, tok in _POOL_TOKENIZERS.items()}


def _pool_init(tokenizers):
    global _POOL_TOKENIZERS
    _POOL_TOKENIZERS = tokenizers


_POOL_TOKENIZERS: dict = {}


def test_spawn_pool_workers_give_the_parents_ids(kinds, texts):
    """``spawn`` workers get every kind by pickle (the start method of macOS, Windows, and of
    CUDA-using programs); each worker's ids are the parent's."""
    parts = [texts[i:i + 50] for i in range(0, len(texts), 50)]
    want = {kind: ids(kind, tok, texts) for kind, tok in kinds.items()}
    with multiprocessing.get_context("spawn").Pool(2, initializer=_pool_init, initargs=(kinds,)) as pool:
        # (bounded: a worker whose start fails is started again and again, and map would wait for ever)
        got = pool.map_async(_pool_job, parts).get(timeout=600)
    for kind in kinds:
        assert [row for part in got for row in part[kind]] == want[kind], kind


def test_threads_share_one_transformers_tokenizer(kinds, texts):
    tok = get(kinds, "transformers")
    want = ids("transformers", tok, texts)
    results = [None] * 4

    def work(k):
        results[k] = ids("transformers", tok, texts)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 4


def test_fork_pool_of_the_transformers_class_while_a_thread_encodes(kinds, tmp_path):
    """A fork-context pool (PyTorch DataLoader workers) made while another thread of the parent
    encodes with the same object: the children neither hang nor give other ids."""
    get(kinds, "transformers")
    kinds["transformers"].save_pretrained(tmp_path)
    source = textwrap.dedent(f"""
        import multiprocessing, threading
        from wwho.hf import WWHOTokenizer
        tok = WWHOTokenizer.from_pretrained({str(tmp_path)!r}, tiktoken_file={str(O200K_FILE)!r})
        texts = [f"line {{i}} ශ්‍රී ලංකා {{i * 7}} नमस्ते 🦜" for i in range(600)]
        want = tok(texts, add_special_tokens=False)["input_ids"]
        stop = False
        def loop():
            while not stop:
                tok(texts[:100], add_special_tokens=False)
                tok.meta.encode_batch(texts, num_threads=2)
        worker = threading.Thread(target=loop)
        worker.start()
        def job(i):
            return tok(texts[i:i + 60], add_special_tokens=False)["input_ids"]
        with multiprocessing.get_context("fork").Pool(2) as pool:
            got = [row for part in pool.map(job, range(0, 600, 60)) for row in part]
        stop = True
        worker.join()
        print("same" if got == want else "different")
    """)
    try:
        done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120,
                              cwd=os.getcwd())
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the pool hung; its output: {exc.stdout!r} {exc.stderr!r}")
    assert done.returncode == 0 and done.stdout.split()[-1:] == ["same"], (done.returncode, done.stderr[-3000:])


@pytest.mark.parametrize("change", ["two tokens of one id", "a special token not in the vocabulary",
                                    "a merge of tokens it lacks", "an unknown fallback"])
def test_an_altered_sgpe_pickle_is_a_vocab_error(kinds, change):
    """A pickle whose vocabulary was altered on the way gave a bare KeyError or IndexError, or was
    taken with two tokens of one id; it is checked as it is unpickled, more cheaply than a file is."""
    import dataclasses
    import pickle

    from wwho.errors import VocabError
    from wwho.sgpe.tokenizer import _restore

    file = get(kinds, "sgpe").file
    first, second = list(file.vocab)[5:7]
    unk = "token"
    if change == "two tokens of one id":
        file = dataclasses.replace(file, vocab={**file.vocab, second: file.vocab[first]})
    elif change == "a special token not in the vocabulary":
        file = dataclasses.replace(file, special_tokens=(*file.special_tokens, "[NEW]"))
    elif change == "a merge of tokens it lacks":
        file = dataclasses.replace(file, merges=[("\ue000", "\ue001"), *file.merges])
    else:
        unk = "tokens"

    class Altered:
        def __reduce__(self):
            return (_restore, (file, unk))

    with pytest.raises(VocabError, match="a pickled SGPETokenizer"):
        pickle.loads(pickle.dumps(Altered()))


def test_an_altered_binary_pickle_is_a_vocab_error(kinds):
    """HF's own pickle of the tokenizer gave a bare ``Exception`` for altered bytes (neither a
    WwhoError nor a ValueError): the tokenizer.json is checked as a file is."""
    import pickle

    from wwho.errors import VocabError

    data = pickle.dumps(get(kinds, "binary"))
    assert b'"special"' in data
    with pytest.raises(VocabError, match="a pickled BinaryTokenizer"):
        pickle.loads(data.replace(b'"special"', b'"spatial"', 1))


def test_an_unpickled_binary_tokenizer_keeps_special_token_text_as_bytes(kinds):
    """HF's own pickle dropped ``encode_special_tokens``, which wwho's loader sets (special-token text
    inside the data is bytes)."""
    import pickle

    tok = get(kinds, "binary")
    assert pickle.loads(pickle.dumps(tok)).hf.encode_special_tokens is True


def test_an_altered_meta_pickle_is_a_vocab_error(kinds):
    """A meta tokenizer's pickle whose tiktoken part names its special token by another id was taken,
    and decoded that id as the special token (``&``, id 5 of o200k_base, as ``<|endoftext|>``)."""
    import dataclasses
    import pickle

    from wwho.errors import VocabError
    from wwho.meta import _unpickled

    meta = get(kinds, "meta")
    part = dataclasses.replace(meta.tiktoken, special_tokens={**meta.tiktoken.special_tokens, "<|endoftext|>": 5})

    class Altered:
        def __reduce__(self):
            return (_unpickled, (meta.sgpe, meta._model(), part, 1 << 20))

    with pytest.raises(VocabError, match="a pickled MetaTokenizer: its tiktoken part does not agree"):
        pickle.loads(pickle.dumps(Altered()))
    assert pickle.loads(pickle.dumps(meta)).encode("hello ශ්‍රී") == meta.encode("hello ශ්‍රී")


@pytest.mark.parametrize("kind", ["sgpe", "meta", "bytelevel", "binary"])
@pytest.mark.parametrize("how", ["pickle", "deepcopy", "copy"])
def test_a_subclass_comes_back_as_itself(kinds, kind, how):
    """A subclass's copy came back as the base class, losing its methods (tiktoken keeps an
    Encoding subclass); like tiktoken's, the copy does not carry attributes set on the instance."""
    tok = get(kinds, kind)
    mine = type(f"My{type(tok).__name__}", (type(tok),), {"mine": lambda self: "mine"})
    # (the pickle finds the class by name, as it finds any class a program defines)
    globals()[mine.__name__], mine.__module__, mine.__qualname__ = mine, __name__, mine.__name__
    sub = copy.copy(tok)
    sub.__class__ = mine
    back = {"pickle": lambda t: pickle.loads(pickle.dumps(t)), "deepcopy": copy.deepcopy, "copy": copy.copy}[how](sub)
    assert type(back) is mine and back.mine() == "mine"
    assert ids(kind, back, HOSTILE) == ids(kind, tok, HOSTILE)
    assert type({"pickle": lambda t: pickle.loads(pickle.dumps(t)), "deepcopy": copy.deepcopy,
                 "copy": copy.copy}[how](tok)) is type(tok)  # (the base class's pickle is as before)


def test_a_pickle_naming_a_class_that_is_no_tokenizer_is_refused(kinds):
    from wwho.errors import VocabError
    from wwho.sgpe.tokenizer import _restore

    sgpe = kinds["sgpe"]
    with pytest.raises(VocabError, match="names <class 'dict'>, which is no subclass of SGPETokenizer"):
        _restore(sgpe.file, "bytes", dict)


def test_a_meta_subclass_loads_as_itself(kinds, tmp_path):
    meta = get(kinds, "meta")
    meta.save(tmp_path / "m")
    mine = type("MyMeta", (type(meta),), {})
    assert type(mine.load(tmp_path / "m", tiktoken_file=O200K_FILE)) is mine


@pytest.mark.parametrize("engine", ["auto", "regex"])
def test_a_syllabifier_pickles_and_copies(engine):
    """It could not be pickled ("cannot pickle 'wwho._core.Automaton'"), so no worker process could
    get one; a bundled script's goes by its name."""
    from wwho import Syllabifier, load_schema
    from wwho.schema import bundled_schema

    bundled = Syllabifier(bundled_schema("tamil"), engine=engine)
    own = Syllabifier(load_schema("src/wwho/schemas/tamil.json"), engine=engine)
    text = "தமிழ் ஸ்ரீ ශ්‍රී abc " * 3
    for syllabifier in (bundled, own):
        for back in (pickle.loads(pickle.dumps(syllabifier)), copy.deepcopy(syllabifier), copy.copy(syllabifier)):
            assert (type(back), back.engine, back.schema) == (Syllabifier, engine if engine == "regex" else "table",
                                                              syllabifier.schema)
            assert back.tokenize(text) == syllabifier.tokenize(text)
            assert back.tokenize(text, leading_space=True) == syllabifier.tokenize(text, leading_space=True)
    assert len(pickle.dumps(bundled)) < 200 < len(pickle.dumps(own))
