"""``encode_batch`` on threads, for every kind whose batches run in the core (SGPE, byte-level with
ranks and with merges, meta): exactly ``[encode(t) for t in texts]``, in order, on any thread count.

The core cuts a batch into chunks of ~32k characters and hands them to threads, the calling thread
converting finished chunks to Python lists in order while the others encode (``rust/src/batch.rs``);
below ~64k characters in all it uses one thread. So every case here is also run inside a batch big
enough to be spread: the case's texts between real corpus lines (``padded``). Oracles: ``encode``
per text (itself checked against tiktoken, HF and the Python references elsewhere), and tiktoken's
own batch for o200k. Speed is measured by ``benchmarks/bench_batch.py``, not here.
"""

from __future__ import annotations

import os
import textwrap
import threading

import pytest
from conftest import CORPORA, DATA, FUZZ_INDIC, O200K_FILE, read_slice, require_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wwho.errors import TokenizerError

THREADS = [1, 2, 3, 8, None]
LLAMA = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
FALCON = DATA / "gguf-vocab" / "ggml-vocab-falcon.gguf"
SPECIAL = "<|endoftext|>"


def _lines(lang: str, name: str, max_bytes: int = 200_000) -> list[str]:
    return read_slice(require_data(CORPORA / lang / name), max_bytes).splitlines()


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    """Real lines, Sinhala, Hindi and English (about 600 kB), for big batches."""
    return (_lines("si", "news-bbcsinhala.txt") + _lines("hi", "tico19-test.txt")
            + _lines("en", "news-lk_news.txt"))


@pytest.fixture(scope="module", params=["sgpe", "bytelevel-o200k", "bytelevel-llama", "meta"])
def kind(request, tokenizers):
    """(name, tokenizer, encode one text, encode a batch) for each kind."""
    name = request.param
    if name == "sgpe":
        tok = tokenizers["mixed"]
        return name, tok, tok.encode, lambda texts, n: tok.encode_batch(texts, num_threads=n)
    if name.startswith("bytelevel"):
        from wwho.bytelevel import ByteBPE

        if name == "bytelevel-o200k":
            tok = ByteBPE.from_tiktoken(require_data(O200K_FILE))
        else:
            tok = ByteBPE.from_gguf(require_data(LLAMA))
        return (name, tok, lambda t: tok.encode(t, disallowed_special=()),
                lambda texts, n: tok.encode_batch(texts, num_threads=n, disallowed_special=()))
    from wwho.bytelevel.tiktoken_loader import get_encoding
    from wwho.meta import MetaTokenizer

    tok = MetaTokenizer(tokenizers["mixed"], get_encoding("o200k_base", tiktoken_file=require_data(O200K_FILE)))
    return (name, tok, lambda t: tok.encode(t, disallowed_special=()),
            lambda texts, n: tok.encode_batch(texts, disallowed_special=(), num_threads=n))


def padded(texts: list[str], corpus: list[str]) -> tuple[list[str], list[int]]:
    """``texts`` spread among ~300 kB of corpus lines (so that the batch runs on several threads),
    and the positions they landed at."""
    out: list[str] = []
    where = []
    step = max(1, 1500 // (len(texts) + 1))
    for k, text in enumerate(texts):
        out += corpus[k * step:(k + 1) * step]
        where.append(len(out))
        out.append(text)
    out += corpus[len(texts) * step:len(texts) * step + 1500]
    return out, where


def test_corpus_batches_equal_encode_on_any_thread_count(kind, corpus):
    name, _, encode, batch = kind
    want = [encode(t) for t in corpus]
    for n in THREADS:
        assert batch(corpus, n) == want, (name, n)
    assert batch([], 2) == []
    assert batch([""], 2) == [encode("")]


def test_one_huge_text_among_small_ones(kind, corpus):
    name, _, encode, batch = kind
    half = len(corpus) // 2
    huge = "\n".join(corpus[:half])  # ~300 kB in one text: a chunk of its own
    texts = corpus[half:half + 400] + [huge] + ["", " ", "x"] * 50 + corpus[half + 400:]
    want = [encode(t) for t in texts]
    for n in (1, 2, 3):
        assert batch(texts, n) == want, (name, n)
    assert batch([huge], 2) == [want[400]]


def test_many_empty_and_tiny_texts(kind):
    _, _, encode, batch = kind
    texts = ["", " ", "a", "ක", "\n", "क्ष"] * 20_000  # 120,000 texts, many chunks of tiny work
    want = {t: encode(t) for t in set(texts)}
    for n in (1, 2):
        assert batch(texts, n) == [want[t] for t in texts]


fuzz_text = st.lists(st.sampled_from(FUZZ_INDIC + list("ab Z09\n\t.,'’🙂\u200d\u00e9") + [SPECIAL]),
                     max_size=40).map("".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(texts=st.lists(fuzz_text, max_size=12), threads=st.sampled_from([1, 2, 3]))
def test_fuzzed_texts_in_a_big_batch(kind, corpus, texts, threads):
    _, _, encode, batch = kind
    big, where = padded(texts, corpus)
    got = batch(big, threads)
    assert [got[i] for i in where] == [encode(t) for t in texts]
    assert len(got) == len(big)
    assert batch(texts, threads) == [encode(t) for t in texts]


def test_the_first_failing_text_is_the_one_reported(kind, corpus):
    name, tok, _, _ = kind
    texts = list(corpus)
    texts[1000] = 5
    for method in (tok.encode_batch, tok.encode_batch_to_numpy):
        with pytest.raises(TokenizerError, match=r"texts\[1000\]: expected text") as caught:
            method(texts, num_threads=2)
        assert caught.value.text_index == 1000
    if name == "sgpe":
        return  # SGPE encodes special-token text as text unless it is allowed: no other error
    special = "<|end_of_text|>" if name == "bytelevel-llama" else SPECIAL
    texts = list(corpus)
    texts[1000] = f"a b {special} c"  # offset 4
    texts[-10] = special  # offset 0, later in the batch
    for n in (1, 2, 3):
        # the error names the first failing text (in order) and the offset in it, in both forms
        for method in (tok.encode_batch, tok.encode_batch_to_numpy):
            with pytest.raises(TokenizerError, match=r"texts\[1000\]: .*offset 4") as caught:
                method(texts, num_threads=n)
            assert caught.value.text_index == 1000


@pytest.mark.skipif(not FALCON.is_file(), reason=f"{FALCON} is absent")
def test_a_byte_without_a_token_names_its_text_in_a_batch(corpus):
    """Falcon's vocabulary has no token for the byte 0x0B: the error names the text, as every batch
    error does (its ``text_index``), and a single encode's error has none."""
    from wwho.bytelevel import ByteBPE

    tok = ByteBPE.from_gguf(FALCON)
    texts = [line for line in corpus[:3000] if "\x0b" not in line]
    texts[2500] = "a b\x0bc"
    for method in (tok.encode_batch, tok.encode_batch_to_numpy):
        with pytest.raises(TokenizerError, match=r"texts\[2500\]: byte b'\\x0b' at offset 3") as caught:
            method(texts, num_threads=2)
        assert caught.value.text_index == 2500
    with pytest.raises(TokenizerError) as caught:
        tok.encode(texts[2500])
    assert caught.value.text_index is None


def test_not_a_list_of_str(kind):
    _, tok, _, _ = kind
    for bad in (["ok", b"bytes"], ["ok", None]):
        with pytest.raises(TokenizerError):
            tok.encode_batch(bad, num_threads=2)
    with pytest.raises(TokenizerError, match="num_threads"):
        tok.encode_batch(["ok"], num_threads=0)


def test_byte_level_batches_replace_lone_surrogates_as_encode_does(corpus):
    """The threads make the UTF-8 themselves: a lone surrogate is U+FFFD and a surrogate pair its
    character, as ``encode`` (and tiktoken) do."""
    tok = _o200k()
    odd = ["a\ud800b", "\ud83d\ude00", "\ude00\ud83d", "\ud83d\ud83d\ude00x", "é\udfff", "\udbff\udfff",
           "x" * 5 + "\ud800", "ක\ud800क", "\x80\xff", "plain"]
    big, where = padded(odd, corpus)
    for n in (1, 2):
        got = tok.encode_batch(big, num_threads=n)
        assert [got[i] for i in where] == [tok.encode(t) for t in odd]


@settings(max_examples=60, deadline=None)
@given(text=st.lists(st.one_of(st.integers(0xD800, 0xDFFF).map(chr), st.sampled_from("aé\x80ක🙂 ")),
                    max_size=20).map("".join))
def test_surrogate_replacement_is_pythons(text):
    from wwho.bytelevel.pretokenize import _replace_surrogates

    tok = _o200k()
    assert tok.encode_batch([text, "ok"]) == [tok.encode(_replace_surrogates(text)), tok.encode("ok")]


_O200K = []


def _o200k():
    from wwho.bytelevel import ByteBPE

    if not _O200K:
        _O200K.append(ByteBPE.from_tiktoken(require_data(O200K_FILE)))
    return _O200K[0]


def test_o200k_batches_equal_tiktokens_batches(corpus):
    from wwho.bytelevel.tiktoken_loader import get_encoding

    ref = get_encoding("o200k_base", tiktoken_file=require_data(O200K_FILE))
    assert _o200k().encode_batch(corpus, num_threads=2, disallowed_special=()) == \
        ref.encode_ordinary_batch(corpus, num_threads=2)


def test_concurrent_batches_share_the_threads(kind, corpus):
    """Several Python threads each running 2-thread batches at once (the pool threads are shared
    between calls): every result equal to one thread's."""
    _, _, encode, batch = kind
    parts = [corpus[k::4] for k in range(4)]
    want = [batch(p, 1) for p in parts]
    failures = []

    def run(k: int) -> None:
        for _ in range(2):
            if batch(parts[k % 4], 2 + k % 2) != want[k % 4]:
                failures.append(k)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert want[0][:50] == [encode(t) for t in parts[0][:50]]


def _child_batch(batch, texts, want, queue) -> None:
    queue.put(batch(texts, 2) == want)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is not available on this platform")
def test_a_forked_child_runs_threaded_batches(kind, corpus):
    """A child made by fork after a threaded batch (a data loader's workers) has none of the
    pool's threads; its own threaded batches must still finish, with the same ids."""
    import multiprocessing

    _, _, _, batch = kind
    want = batch(corpus, 2)  # the parent's pool now exists
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_batch, args=(batch, corpus, want, queue))
    child.start()
    child.join(120)
    if child.is_alive():
        child.kill()
        pytest.fail("a threaded batch in a forked child never finished")
    assert child.exitcode == 0 and queue.get(timeout=10)


#: A batch run under an address-space limit a little above what the process holds, so that the
#: pool's threads cannot have their stacks: ``ok`` and the threads the process has after it, or
#: the error. Argument: the tokenizer directory, then the room left in kB.
BATCH_WITHOUT_THREADS = textwrap.dedent("""
    import os, resource, sys
    from wwho.sgpe import SGPETokenizer
    tok = SGPETokenizer.load(sys.argv[1])
    texts = ["ශ්‍රී ලංකාව " * 600] * 12  # (just large enough to be shared among threads)
    want = [tok.encode(t) for t in texts]
    size = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmSize:"))
    limit = (size + int(sys.argv[2])) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        same = tok.encode_batch(texts, num_threads=8) == want
        print("ok" if same else "wrong ids", len(os.listdir("/proc/self/task")))
    except MemoryError as exc:
        print("MemoryError", exc)
    except BaseException as exc:
        print("failed", type(exc).__name__, exc)
""")


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux's /proc to count threads")
def test_a_batch_whose_threads_are_refused_runs_on_the_calling_thread(tmp_path):
    """Where the system refuses the pool's threads (memory for their stacks), the core must not panic
    and ``encode_batch`` raise "internal error ... (please report this)": the calling thread does the
    work alone, with the same ids. Swept over the room left, below
    what one thread's stack needs: a ``MemoryError`` while the room is too small for the batch
    itself, then the ids, with no thread started."""
    import subprocess
    import sys
    from pathlib import Path

    from wwho.sgpe import SGPETokenizer, train_sgpe

    sample = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"
    SGPETokenizer(train_sgpe(sample, vocab_size=1000, progress=False, workers=1)).save(tmp_path / "tok")
    for room_kb in range(256, 2048, 128):  # (a thread's stack is 2 MiB: none fits)
        done = subprocess.run([sys.executable, "-c", BATCH_WITHOUT_THREADS, str(tmp_path / "tok"), str(room_kb)],
                              capture_output=True, text=True, timeout=120)
        words = done.stdout.split()
        assert done.returncode == 0 and words and words[0] in ("ok", "MemoryError"), (room_kb, done.stdout,
                                                                                     done.stderr[-2000:])
        if words[0] == "ok":
            assert words == ["ok", "1"], (room_kb, words)
            break
    else:
        pytest.fail("no room below a thread's stack sufficed for the batch: the case was not tried")
