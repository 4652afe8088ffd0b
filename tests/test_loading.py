"""Loading any kind (``wwho.loading``) reports broken and mixed files with one clear error; the
CLI turns each into one line and exit code 2 (the real ``wwho`` command, in a subprocess); the HF
adapter's batch encoding (any tokenizer.json HF runs as it is)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from conftest import O200K_FILE, one_line_error, run_wwho, without_each_merge_result

from wwho import load_tokenizer
from wwho.errors import VocabError
from wwho.loading import detect_kind
from wwho.sgpe import SGPETokenizer, train_sgpe

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "wwho" / "data" / "sinhala-wikipedia-sample.txt"


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    root = tmp_path_factory.mktemp("two")
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    out = []
    for k, size in enumerate((1000, 1300)):
        corpus = root / f"{k}.txt"
        corpus.write_text("\n".join(lines[k * 1000:(k + 1) * 1000]), encoding="utf-8")
        SGPETokenizer(train_sgpe(corpus, vocab_size=size, progress=False, workers=1)).save(root / f"m{k}")
        out.append(root / f"m{k}")
    return out


def test_files_of_two_saves_in_one_directory_are_named(two, tmp_path):
    """The file the SGPE loader reads (vocab.json) from another save is an error; a Hugging Face file
    it never reads (tokenizer.json) is a warning naming it, in the API and in the CLI."""
    from wwho.errors import ChangedFileWarning

    mixed = tmp_path / "mixed"
    shutil.copytree(two[0], mixed)
    shutil.copy(two[1] / "tokenizer.json", mixed / "tokenizer.json")
    with pytest.warns(ChangedFileWarning, match=r"mixed: tokenizer.json changed since wwho saved"):
        load_tokenizer(mixed)
    done = run_wwho("encode", "--tokenizer", mixed, "ශ්‍රී")
    assert done.returncode == 0 and "wwho: warning: " in done.stderr and "tokenizer.json changed" in done.stderr
    shutil.copy(two[1] / "vocab.json", mixed / "vocab.json")
    with pytest.raises(VocabError, match=r"mixed: vocab.json does not match"):
        load_tokenizer(mixed)
    line = one_line_error(run_wwho("encode", "--tokenizer", mixed, "ශ්‍රී"))
    assert "vocab.json does not match wwho-manifest.json" in line


def test_a_foreign_file_in_a_saved_directory_is_not_taken_for_the_model(two, tmp_path):
    from wwho.bytelevel import ByteBPE

    directory = tmp_path / "d"
    ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2").save(directory)
    shutil.copy(two[0] / "vocab.json", directory / "vocab.json")  # detect_kind would pick vocab.json first
    with pytest.raises(VocabError, match=r"vocab.json not listed in wwho-manifest.json"):
        load_tokenizer(directory)


@pytest.mark.skipif(not O200K_FILE.is_file(), reason=f"{O200K_FILE} is absent")
def test_meta_sgpe_vocab_must_stay_in_the_directory(two, tmp_path):
    from wwho.meta import MetaTokenizer

    directory = tmp_path / "meta"
    MetaTokenizer(SGPETokenizer.load(two[0]), "o200k_base", tiktoken_file=O200K_FILE).save(directory)
    (directory / "wwho-manifest.json").unlink()
    (directory / "vocab.json").unlink()
    os.symlink(two[1] / "vocab.json", directory / "vocab.json")
    with pytest.raises(VocabError, match=r"'sgpe_vocab' 'vocab.json' is a link to a file outside"):
        MetaTokenizer.load(directory, tiktoken_file=O200K_FILE)


def test_binary_tokenizer_ids_are_checked_before_hf_sees_them(tmp_path):
    from wwho import binary

    tok = binary.train_from_counts({bytes(range(i, i + 8)): 50 for i in range(0, 200, 3)}, vocab_size=512,
                                   min_frequency=1, progress=False)
    path = tmp_path / "tokenizer.json"
    binary.save(tok, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    merges = data["model"]["merges"]
    data["model"]["merges"] = merges[:-10]  # a truncated file: HF tokenizers loads it silently
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(VocabError, match=r"tokenizer.json: 10 tokens of several bytes are the result of no merge"):
        load_tokenizer(path)
    data["model"]["merges"] = merges
    vocab = data["model"]["vocab"]
    last = max(vocab, key=vocab.get)
    for value, message in ((0, r"have the same id 0"), (2 ** 63, r"id 9223372036854775808 is not an integer in"),
                           (False, r"id False is not an integer")):
        vocab[last] = value
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(VocabError, match=r"tokenizer.json: .*" + message):
            load_tokenizer(path)


# Short ids: pytest 8.0 puts a test's id (here 100 kB) in PYTEST_CURRENT_TEST, and every command it
# starts then fails with "Argument list too long".
@pytest.mark.parametrize("name, content", [
    ("tokenizer.json", '{"model": ' + "[" * 200_000 + "]" * 200_000 + "}"),
    ("vocab.json", "[" * 200_000),
    ("bytelevel.json", '{"format": "wwho-bytelevel", "version": 1, "x": ' + "{\"a\":" * 100_000 + "1" + "}" * 100_001),
], ids=["tokenizer.json", "vocab.json", "bytelevel.json"])
def test_deeply_nested_json_is_one_line(tmp_path, name, content):
    (tmp_path / name).write_text(content, encoding="utf-8")
    line = one_line_error(run_wwho("inspect", tmp_path / name if name == "tokenizer.json" else tmp_path))
    assert "nested too deeply" in line and name in line


def test_out_pointing_at_a_file_fails_before_any_work(two, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("ශ්‍රී ලංකාව\n" * 50, encoding="utf-8")
    target = tmp_path / "out"
    target.write_text("my notes")
    for kind in ("sgpe", "bytelevel"):
        line = one_line_error(run_wwho("train", "--kind", kind, corpus, "--out", target, "--vocab-size", "400",
                                       "--quiet", "--workers", "1"))
        assert f"{target}: exists and is not a directory" in line
    line = one_line_error(run_wwho("export", "hf", two[0], "-o", target))
    assert f"{target}: exists and is not a directory" in line
    assert target.read_text() == "my notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "out"]


@pytest.fixture(scope="module")
def hf():
    from tokenizers import Tokenizer, models, pre_tokenizers

    from wwho.loading import HFTokenizer

    words = ["[UNK]", "hello", "world", "abc", "?"]
    tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return HFTokenizer(tok)


@pytest.mark.parametrize("threads", [None, 1, 2])
def test_encode_batch_in_order_on_any_thread_count(hf, threads):
    texts = ["abc hello", "", "zyx?", "hello world abc"] * 50
    assert hf.encode_batch(texts, num_threads=threads) == [hf.encode(t) for t in texts]


def test_a_tokenizer_file_named_without_its_suffix_is_told_by_its_content(tmp_path):
    """``wwho train --kind binary -o mytok`` writes a file whose kind inspect, encode and decode can
    tell; a GGUF file renamed likewise."""
    import shutil

    from conftest import DATA

    from wwho.binary import train_from_counts
    from wwho.binary.tokenizer import BinaryTokenizer

    tok = BinaryTokenizer(train_from_counts({bytes(range(i, i + 16)): 4 for i in range(0, 200, 8)}, vocab_size=512,
                                            min_frequency=1))
    tok.save(tmp_path / "mytok")
    assert detect_kind(tmp_path / "mytok") == "binary"
    assert load_tokenizer(tmp_path / "mytok").decode(tok.encode(b"\x00\x01\x02")) == b"\x00\x01\x02"
    gguf = DATA / "gguf-vocab" / "ggml-vocab-gpt-2.gguf"
    if gguf.is_file():
        shutil.copy(gguf, tmp_path / "model")
        assert detect_kind(tmp_path / "model") == "gguf"
    (tmp_path / "notes").write_text("hello\n")
    with pytest.raises(VocabError, match="cannot tell what kind of tokenizer this is"):
        detect_kind(tmp_path / "notes")


def test_a_directory_without_its_kinds_own_file_is_refused(tmp_path):
    """A meta directory without meta_config.json must not load as its SGPE vocabulary, silently
    giving other ids, nor a byte-level one without bytelevel.json as its tokenizer.json."""
    from wwho.bytelevel import ByteBPE

    directory = tmp_path / "bl"
    ByteBPE({bytes([b]): b for b in range(256)} | {b"ab": 256}, pattern="gpt2").save(directory, hf=True)
    (directory / "bytelevel.json").unlink()
    with pytest.raises(VocabError, match="bytelevel.json is missing: the directory was saved as a byte-level"):
        load_tokenizer(directory)
    if O200K_FILE.is_file():
        from wwho.meta import MetaTokenizer

        sgpe = SGPETokenizer(train_sgpe(SAMPLE, vocab_size=600, progress=False, workers=1, segments_only=True))
        MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE).save(tmp_path / "meta")
        (tmp_path / "meta" / "meta_config.json").unlink()
        with pytest.raises(VocabError, match="meta_config.json is missing: the directory was saved as a meta"):
            load_tokenizer(tmp_path / "meta")


def test_a_directory_of_two_kinds_without_a_manifest_is_refused(two, tmp_path):
    """With no manifest to say which, a folder holding a byte-level save and an SGPE one must not load
    as SGPE, nor a meta folder whose meta_config.json is gone as its SGPE vocabulary, silently."""
    from wwho.bytelevel import ByteBPE
    from wwho.manifest import MANIFEST

    mixed = tmp_path / "mixed"
    ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2").save(mixed)
    (mixed / MANIFEST).unlink()
    shutil.copy(two[0] / "vocab.json", mixed / "vocab.json")
    with pytest.raises(VocabError, match=r"mixed: it holds the files of two kinds of tokenizer \(bytelevel.json and "
                                         r"vocab.json\)"):
        load_tokenizer(mixed)
    meta = tmp_path / "meta"
    meta.mkdir()
    shutil.copy(two[0] / "vocab.json", meta / "vocab.json")
    (meta / "tokenizer_meta.json").write_text("{}", encoding="utf-8")
    with pytest.raises(VocabError, match="meta_config.json is missing beside tokenizer_meta.json"):
        load_tokenizer(meta)


@pytest.mark.parametrize("how", ["deleted", "dangling link"])
def test_an_sgpe_folder_without_its_vocab_json_is_refused(tmp_path, how):
    # It loaded as its tokenizer.json (an HF tokenizer, other ids, no token_bytes), silently.
    directory = tmp_path / "sgpe"
    SGPETokenizer(train_sgpe(SAMPLE, vocab_size=600, progress=False, workers=1, segments_only=True)).save(directory)
    (directory / "vocab.json").unlink()
    if how == "dangling link":
        (directory / "vocab.json").symlink_to(tmp_path / "nowhere.json")
        with pytest.raises(VocabError, match="vocab.json"):
            load_tokenizer(directory)
        (directory / "wwho-manifest.json").unlink()  # without the manifest too: the loader names the link
        with pytest.raises(VocabError, match="vocab.json"):
            load_tokenizer(directory)
    else:
        with pytest.raises(VocabError, match="vocab.json is missing: the directory was saved as an SGPE"):
            load_tokenizer(directory)


def test_a_fifo_named_without_a_suffix_is_refused_by_name(tmp_path):
    """A FIFO or /dev/zero is named as such, not 'cannot tell what kind of tokenizer this is'."""
    os.mkfifo(tmp_path / "tok")
    with pytest.raises(VocabError, match="is a FIFO"):
        detect_kind(tmp_path / "tok")


def _bpe_json(path: Path, merges: list, prefix: str) -> Path:
    vocab = {"a": 0, "b": 1, "##b": 2, "ab": 3, "é": 4, "#é": 5}
    path.write_text(json.dumps({
        "version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None, "decoder": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "model": {"type": "BPE", "vocab": vocab, "merges": merges, "continuing_subword_prefix": prefix},
    }), encoding="utf-8")
    return path


@pytest.mark.parametrize("merge,right", [("a b", "'b'"), (["a", "#é"], "'#é'")])
def test_a_merge_shorter_than_the_subword_prefix_is_an_error_not_a_panic(tmp_path, merge, right):
    # HF tokenizers cuts the prefix's bytes off each merge's right part, and panics (a
    # BaseException, past any `except Exception`) where the part is shorter or the cut splits a
    # character.
    path = _bpe_json(tmp_path / "tokenizer.json", [merge], "##")
    with pytest.raises(VocabError, match=rf"model.merges\[0\]: its right part {right} does not go on past"):
        load_tokenizer(path)
    line = one_line_error(run_wwho("encode", "--tokenizer", path, "ab"))
    assert "continuing_subword_prefix '##'" in line


def test_a_merge_whose_result_is_no_token_is_named_and_hf_never_panics(tmp_path, capfd, metaspace_bpe_json):
    """Each merge of a Metaspace BPE that HF runs, its result taken out of ``model.vocab`` in turn: a
    VocabError naming that merge, and nothing printed from inside HF (which panics on some such
    files, printing the panic before its exception)."""
    path = tmp_path / "tokenizer.json"
    for n, text in without_each_merge_result(metaspace_bpe_json):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(VocabError, match=rf"model\.merges\[{n}\] .*: .* is not a token of model\.vocab"):
            load_tokenizer(path)
    assert "panicked" not in capfd.readouterr().err


def test_a_merge_with_the_subword_prefix_loads_in_hf(tmp_path):
    tok = load_tokenizer(_bpe_json(tmp_path / "tokenizer.json", ["a ##b"], "##"))
    assert tok.vocab_size == 6


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc/self/mem")
def test_a_file_that_cannot_be_read_is_a_vocab_error_naming_it():
    # /proc/self/mem is a regular file whose first read fails (EIO): a typed error, by name.
    with pytest.raises(VocabError, match=r"/proc/self/mem: cannot read: Input/output error"):
        load_tokenizer("/proc/self/mem")
    line = one_line_error(run_wwho("inspect", "/proc/self/mem"))
    assert "/proc/self/mem: cannot read" in line


def test_the_hf_adapter_checks_ids_and_texts_as_every_kind(hf):
    from wwho.errors import TokenizerError

    # HF decoded an unknown id to "" without a word, and -1 or a str was an OverflowError/TypeError.
    with pytest.raises(TokenizerError, match="out of range|not in this vocabulary|is 1000000"):
        hf.decode([1, 10**6])
    with pytest.raises(TokenizerError, match="-1"):
        hf.decode([-1])
    with pytest.raises(TokenizerError, match="expected text as str, got int"):
        hf.encode(5)
    assert hf.decode([1, 2]) == "hello world" and repr(hf) == "<HFTokenizer WordLevel vocab_size=5>"
    from wwho.errors import UnknownTokenError, WrongTypeError

    with pytest.raises(UnknownTokenError, match="'nope' is not a token string"):  # as every kind
        hf.token_to_id("nope")
    with pytest.raises(WrongTypeError, match="not NoneType"):
        hf.token_to_id(None)


@pytest.mark.parametrize("num_threads", [0, -1, True, 2**64, 1.5, "2"])
def test_the_hf_adapter_checks_threads_batches_and_single_ids_as_every_kind(hf, num_threads):
    """The adapter checks num_threads, its decode_batch errors name the batch's item, and
    id_to_token(2**32) is not HF's bare OverflowError."""
    from wwho.errors import IdRangeError, TokenizerError

    for encode in (hf.encode_batch, hf.encode_batch_to_numpy):
        with pytest.raises(TokenizerError, match="num_threads must be an integer from 1"):
            encode(["hello"], num_threads=num_threads)
    with pytest.raises(TokenizerError, match=r"^batch\[1\]: token id 7 at position 1"):
        hf.decode_batch([[1], [1, 7]])
    for big in (2**32, 2**63):
        with pytest.raises(IdRangeError, match=f"token id {big} is out of range"):
            hf.id_to_token(big)


def test_the_hf_adapter_reads_a_lone_surrogate_as_tiktoken_does(hf):
    """HF ``tokenizers`` refuses a ``str`` holding a lone surrogate with a TypeError (a traceback from
    ``wwho encode``): read as U+FFFD, as tiktoken reads it."""
    from wwho.errors import WrongTypeError

    assert hf.encode("hello \ud800") == hf.encode("hello \ufffd") == [1, 0]
    assert hf.tokenize("\udc00world") == hf.tokenize("\ufffdworld")
    for threads in (None, 1):
        assert hf.encode_batch(["world", "abc \ud800"], num_threads=threads) == [[2], [3, 0]]
    with pytest.raises(WrongTypeError, match=r"texts\[1\]: expected text as str, got NoneType") as caught:
        hf.encode_batch(["world", None])
    assert caught.value.text_index == 1


def test_a_pattern_for_a_kind_that_names_its_own_is_refused(tmp_path):
    """``--pattern`` with an SGPE folder (or any kind but a .tiktoken file) is not accepted and
    ignored: it is refused, naming the kind."""
    from wwho.bytelevel import ByteBPE
    from wwho.errors import VocabError
    from wwho.loading import load_tokenizer

    ByteBPE({bytes([b]): b for b in range(256)}, pattern="gpt2").save(tmp_path / "bytes")
    with pytest.raises(VocabError, match=r"pattern= \(--pattern\) is for a .tiktoken file .* byte-level BPE") as e:
        load_tokenizer(tmp_path / "bytes", pattern="gpt2")
    assert "encoding's name" not in str(e.value)  # a named encoding refuses pattern= too
    assert load_tokenizer(tmp_path / "bytes").encode("ab") == [97, 98]


def test_the_hf_adapter_gives_the_array_forms_of_every_kind(hf):
    """Another tool's tokenizer.json loads as an HFTokenizer with encode_to_numpy and
    encode_batch_to_numpy, which the README promises of every kind."""
    import numpy as np

    texts = ["hello world", "", "abc ? hello"]
    one = hf.encode_to_numpy(texts[0])
    assert one.dtype == np.uint32 and one.tolist() == hf.encode(texts[0])
    ids, offsets = hf.encode_batch_to_numpy(texts)
    assert ids.dtype == np.uint32 and offsets.dtype == np.int64 and len(offsets) == len(texts) + 1
    assert [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])] == hf.encode_batch(texts)
    assert hf.decode_batch(hf.encode_batch_to_numpy(texts)) == [hf.decode(hf.encode(t)) for t in texts]


def test_tiktoken_file_is_given_to_the_kinds_that_read_ranks(two, tmp_path, monkeypatch):
    """``load_tokenizer`` takes ``tiktoken_file=``, so a meta directory loads without
    ``WWHO_TIKTOKEN_FILE`` set: the README says the keyword works everywhere."""
    from wwho import ByteBPE, MetaTokenizer
    from wwho.errors import WwhoWarning

    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    for var in [v for v in os.environ if v.startswith(("WWHO_TIKTOKEN_FILE", "TIKTOKEN_CACHE_DIR"))]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "no-cache"))
    registry = sys.modules.get("tiktoken.registry")
    if registry is not None:  # an encoding tiktoken holds in this process serves too (wwho.meta)
        monkeypatch.setattr(registry, "ENCODINGS", {})
    sgpe = SGPETokenizer.load(two[0])
    MetaTokenizer(sgpe, "o200k_base", tiktoken_file=O200K_FILE).save(tmp_path / "meta")
    with pytest.raises(VocabError, match="tiktoken_file=PATH"):
        load_tokenizer(tmp_path / "meta")
    text = "ශ්‍රී ලංකාව and Hello"
    meta = load_tokenizer(tmp_path / "meta", tiktoken_file=O200K_FILE)
    assert isinstance(meta, MetaTokenizer) and meta.decode(meta.encode(text)) == text
    by_name = load_tokenizer("o200k_base", tiktoken_file=O200K_FILE)
    assert by_name.encode("Hello") == ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE).encode("Hello")
    with pytest.warns(WwhoWarning, match="tiktoken_file= is unused"):
        assert load_tokenizer(two[0], tiktoken_file=O200K_FILE).encode(text) == sgpe.encode(text)


@pytest.mark.parametrize("not_a_batch", ["hello", {"hello": 1}, {"hello", "world"}])
def test_the_hf_adapter_refuses_what_is_no_batch_as_every_kind(hf, not_a_batch):
    """The adapter's encode_batch refuses "hello" (five texts) and a dict's keys or a set in no order,
    as every kind does."""
    from wwho.errors import WrongTypeError

    for method in (hf.encode_batch, hf.encode_batch_to_numpy):
        with pytest.raises(WrongTypeError, match="takes a list of texts"):
            method(not_a_batch)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_hf_adapters_flat_batch_is_built_a_slice_at_a_time(hf, threads, monkeypatch):
    """One HF call over a whole batch would hold every Encoding at once, many times the ids' memory:
    the slices give the same flat form, and errors name the text's place."""
    from wwho import loading
    from wwho.errors import WrongTypeError

    texts = ["abc hello", "", "zyx?", "hello world abc", "?"] * 7
    want = hf.encode_batch(texts, num_threads=threads)
    monkeypatch.setattr(loading, "_SLICE", 3)
    ids, offsets = hf.encode_batch_to_numpy(texts, num_threads=threads)
    assert offsets.dtype == "int64" and ids.dtype == "uint32"
    assert [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])] == want
    empty_ids, empty_offsets = hf.encode_batch_to_numpy([])
    assert len(empty_ids) == 0 and empty_offsets.tolist() == [0]
    with pytest.raises(WrongTypeError, match=r"texts\[7\]"):
        hf.encode_batch_to_numpy([*texts[:7], None], num_threads=threads)


def test_a_link_loop_is_named_as_one_not_as_a_missing_file(tmp_path):
    """load_tokenizer, ``wwho encode`` and ``wwho inspect`` name a symbolic-link loop as such, not
    "no such file or directory"."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(VocabError, match="a: cannot read: Too many levels of symbolic links"):
        load_tokenizer(tmp_path / "a")
    assert "Too many levels of symbolic links" in one_line_error(run_wwho("inspect", tmp_path / "a"))


def test_a_file_or_folder_that_may_not_be_read_is_named_so(two, tmp_path):
    """An unreadable file under a manifest is not "does not match wwho-manifest.json ... save the
    tokenizer again", nor a folder that may not be searched "no tokenizer here"."""
    import subprocess

    from conftest import bound_by_permissions

    def loaded(path) -> str:  # (in a child, which file permissions bind as root too)
        code = ("import sys\nfrom wwho import load_tokenizer\ntry:\n    load_tokenizer(sys.argv[1])\n"
                "except Exception as exc:\n    print(type(exc).__name__, exc)")
        return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                              check=True, preexec_fn=bound_by_permissions()).stdout

    shutil.copytree(two[0], tmp_path / "t")
    (tmp_path / "t" / "vocab.json").chmod(0)
    try:
        assert loaded(tmp_path / "t").startswith(f"VocabError {tmp_path / 't' / 'vocab.json'}: cannot read: "
                                                 "Permission denied")
    finally:
        (tmp_path / "t" / "vocab.json").chmod(0o644)
    (tmp_path / "t").chmod(0o600)  # readable, not searchable
    try:
        assert loaded(tmp_path / "t").startswith(f"VocabError {tmp_path / 't'}: cannot read: Permission denied")
    finally:
        (tmp_path / "t").chmod(0o755)


def test_a_tokenizer_json_whose_ids_have_a_gap_decodes_what_it_encodes(tmp_path):
    """A WordPiece vocab.txt with a line twice leaves no id 2, and an added token may sit far past the
    rest: the id space is one past the largest id (as tiktoken's n_vocab), not HF's count of tokens,
    and HF ``tokenizers`` itself is the oracle for the ids and the text."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    from wwho.errors import UnknownTokenError

    (tmp_path / "vocab.txt").write_text("[UNK]\n[CLS]\nhello\nworld\nhello\n", encoding="utf-8")
    hf = Tokenizer(models.WordPiece.from_file(str(tmp_path / "vocab.txt"), unk_token="[UNK]"))
    hf.pre_tokenizer, hf.decoder = pre_tokenizers.Whitespace(), decoders.WordPiece()
    hf.add_tokens([AddedToken("<extra>", special=False)])
    spec = json.loads(hf.to_str())
    spec["added_tokens"][0]["id"] = 70000
    spec["model"]["vocab"]["<extra>"] = 70000
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    tok = load_tokenizer(tmp_path / "tokenizer.json")
    text = "hello <extra> world"
    ids = hf.encode(text).ids
    assert 70000 in ids and tok.encode(text) == ids and list(tok.encode_to_numpy(text)) == ids
    assert tok.decode(ids) == hf.decode(ids) and tok.id_to_token(70000) == "<extra>"
    assert tok.vocab_size == len(tok) == 70001
    with pytest.raises(UnknownTokenError, match="token id 2 at position 1 is not in this vocabulary"):
        tok.decode([3, 2])  # in the gap: HF would drop it without a word
    (tmp_path / "text.txt").write_text(text + "\n", encoding="utf-8")
    run = run_wwho("encode", "--tokenizer", tmp_path / "tokenizer.json", "--file", tmp_path / "text.txt", "--npy",
                   "--eot", "none", "-o", tmp_path / "ids.npy")
    assert run.returncode == 0, run.stderr
    import numpy as np

    assert np.load(tmp_path / "ids.npy").tolist() == ids


def test_a_tokenizer_json_is_parsed_once_to_tell_its_kind_and_load_it(tmp_path, monkeypatch):
    """``load_tokenizer`` and the CLI tell a file's kind and then load it: its JSON is parsed once
    (a large vocabulary's is slow to parse), and nothing parsed is held once it has loaded."""
    from wwho import fileio
    from wwho.bytelevel import ByteBPE
    from wwho.cli import main

    ByteBPE.train(SAMPLE, vocab_size=400, progress=False, workers=1).export_hf(tmp_path / "hf")
    path = tmp_path / "hf" / "tokenizer.json"
    parsed = []
    real = fileio._parse_json
    monkeypatch.setattr(fileio, "_parse_json", lambda data, **kw: parsed.append(kw["source"]) or real(data, **kw))
    want = ByteBPE.from_hf(path).encode("abc ශ්‍රී")
    for given in (path, path.parent):
        parsed.clear()
        assert load_tokenizer(given).encode("abc ශ්‍රී") == want
        assert parsed.count(str(path)) == 1, parsed
        assert fileio._kept.get() is None
    parsed.clear()
    assert main(["encode", "--tokenizer", str(path), "abc"]) == 0
    assert parsed.count(str(path)) == 1, parsed


def test_a_tokenizer_json_that_hf_runs_is_parsed_once(tmp_path, monkeypatch):
    """A ``tokenizer.json`` that ``ByteBPE`` does not run (here a WordLevel model) goes to HF
    ``tokenizers``: wwho still parses its JSON once, telling its kind, trying ``ByteBPE`` and checking
    it, and HF reads those very bytes, not the file again."""
    import pickle

    import tokenizers
    from tokenizers import models, pre_tokenizers

    from wwho import fileio
    from wwho.bytelevel import ByteBPE
    from wwho.bytelevel.hf_files import NotByteLevel
    from wwho.cli import main

    hf = tokenizers.Tokenizer(models.WordLevel({"[UNK]": 0, "ශ්‍රී": 1, "abc": 2}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    parsed = []
    real = fileio._parse_json
    monkeypatch.setattr(fileio, "_parse_json", lambda data, **kw: parsed.append(kw["source"]) or real(data, **kw))
    monkeypatch.setattr(tokenizers.Tokenizer, "from_file", None)  # (a read of the file again fails)
    for given in (path, tmp_path):
        parsed.clear()
        assert load_tokenizer(given).encode("abc ශ්‍රී zz") == [2, 1, 0]
        assert parsed.count(str(path)) == 1, parsed
        assert fileio._kept.get() is None
    parsed.clear()
    assert main(["encode", "--tokenizer", str(path), "abc"]) == 0
    assert parsed.count(str(path)) == 1, parsed
    with pytest.raises(NotByteLevel) as caught:
        ByteBPE.from_hf(path)
    assert caught.value.raw == path.read_bytes()
    again = pickle.loads(pickle.dumps(caught.value))  # (to another process: the message, not the file)
    assert str(again) == str(caught.value) and again.raw is None and again.data is None
