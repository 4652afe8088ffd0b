"""GGUF tokenizers: llama.cpp's test vectors for every byte-level BPE vocabulary in shared/data,
refusal of SPM/WPM models, and clear errors for broken files (truncated, wrong magic, missing keys,
unknown pre-tokenizer). The metadata reader's own tests are in ``test_gguf_metadata.py``.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import gguf_py as reference_gguf

from wwho import _core
from wwho.bytelevel import ByteBPE
from wwho.bytelevel.gguf import describe, load_gguf
from wwho.bytelevel.gguf_metadata import GGUFError, Skipped, read_metadata
from wwho.bytelevel.pretokenize import bytes_to_unicode
from wwho.errors import TokenizerError, VocabError

gguf = pytest.importorskip("gguf")

from conftest import DATA  # noqa: E402 (after the importorskip above)

VOCABS = DATA / "gguf-vocab"
SEPARATOR = "\n__ggml_vocab_test__\n"
# Byte-level BPE vocabularies that have llama.cpp test vectors (see shared/data/README.md).
BPE_WITH_VECTORS = [
    "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gpt-2", "llama-bpe", "mpt", "qwen2",
    "refact", "starcoder",
]


def _vocab(name: str) -> Path:
    path = VOCABS / f"ggml-vocab-{name}.gguf"
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared data folder is needed for this test")
    return path


def _vectors(name: str) -> list[tuple[str, list[int]]]:
    """(input, expected ids) pairs in llama.cpp's test-tokenizer-0 format."""
    inputs = (VOCABS / f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8").split(SEPARATOR)
    assert inputs[-1] == "", "the .inp file ends with a separator"
    inputs = inputs[:-1]
    lines = (VOCABS / f"ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8").split("\n")
    expected = [[int(x) for x in line.split()] for line in lines[: len(inputs)]]
    assert len(inputs) == len(expected) == 46
    return list(zip(inputs, expected))


_LOADED: dict[str, ByteBPE] = {}


def _load(name: str) -> ByteBPE:
    if name not in _LOADED:
        _LOADED[name] = ByteBPE.from_gguf(_vocab(name))
    return _LOADED[name]


@pytest.mark.parametrize("name", BPE_WITH_VECTORS)
def test_llama_cpp_vectors(name):
    tok = _load(name)
    for n, (text, expected) in enumerate(_vectors(name)):
        assert tok.encode(text, disallowed_special=()) == expected, f"{name} vector {n}: {text!r}"
        assert tok.decode(expected) == text, f"{name} vector {n} does not decode back"


def test_deepseek_r1_qwen_vectors_with_the_qwen2_vocab():
    # No GGUF of its own in the data: its pre-tokenizer maps to Qwen2's and its .out equals qwen2's.
    tok = _load("qwen2")
    for text, expected in _vectors("deepseek-r1-qwen"):
        assert tok.encode(text) == expected


@pytest.mark.parametrize("name,model", [("llama-spm", "llama"), ("phi-3", "llama"), ("bert-bge", "bert"),
                                        ("baichuan", "llama")])
def test_non_bpe_models_are_refused(name, model):
    with pytest.raises(GGUFError, match=rf"tokenizer.ggml.model is '{model}' .*only byte-level BPE"):
        ByteBPE.from_gguf(_vocab(name))


def test_missing_pre_tokenizer_key():
    path = _vocab("gpt-neox")
    # (the known names listed, as for an unknown one: docs/bytelevel.md says both list them)
    with pytest.raises(GGUFError, match=r"no 'tokenizer.ggml.pre' key, so its pre-tokenizer must be given: pass "
                                        r"pretokenizer= \(known: .*gpt-2.*llama-bpe.*; or a regex\), or --pattern"):
        ByteBPE.from_gguf(path)
    tok = ByteBPE.from_gguf(path, pretokenizer="gpt-2")
    assert tok.decode(tok.encode("Hello world")) == "Hello world"


def test_the_command_line_gives_a_gguf_without_pre_key_its_pattern(tmp_path):
    """The error does not say to pass pretokenizer=, which the command line has no way to do:
    --pattern is that pre-tokenizer for a .gguf, and is refused for a GGUF that names its own, which
    it would silently replace."""
    from cli_run import one_line_error, wwho

    from wwho.loading import load_tokenizer

    path = _vocab("gpt-neox")
    want = ByteBPE.from_gguf(path, pretokenizer="gpt-2").encode("Hello world")
    assert load_tokenizer(path, pattern="gpt2").encode("Hello world") == want
    from wwho.extend.extension import load_base

    assert load_base(path, pattern="gpt2")[0].encode("Hello world") == want  # wwho extend --base it --pattern
    done = wwho("encode", "--tokenizer", path, "--pattern", "gpt2", "Hello world")
    assert done.returncode == 0 and done.stdout.decode().split() == [str(i) for i in want]
    line = one_line_error(wwho("encode", "--tokenizer", _vocab("llama-bpe"), "--pattern", "gpt2", "x"))
    assert "names its pre-tokenizer (tokenizer.ggml.pre = 'llama-bpe')" in line


def test_special_and_bos_handling():
    llama = _load("llama-bpe")
    assert llama.bos_id == 128000 and llama.eos_id == 128001 and llama.add_bos
    assert llama.encode("Hello", add_special_tokens=True) == [128000, 9906]
    assert llama.encode("<|begin_of_text|>Hi", allowed_special="all")[0] == 128000
    with pytest.raises(TokenizerError, match="special token '<\\|begin_of_text\\|>' at offset 0"):
        llama.encode("<|begin_of_text|>")
    assert llama.token_bytes(128000) == b"<|begin_of_text|>"
    command_r = _load("command-r")
    assert command_r.add_bos and command_r.bos_id == 5
    # USER_DEFINED tokens are split out of the text without asking (llama.cpp and HF do too).
    assert command_r.encode("x<|START_OF_TURN_TOKEN|>y")[1] == 255000
    gpt2 = _load("gpt-2")
    assert not gpt2.add_bos and gpt2.encode("Hello", add_special_tokens=True) == gpt2.encode("Hello")


def test_describe():
    info = describe(_vocab("qwen2"))
    assert info["model"] == "gpt2" and info["pre"] == "qwen2"
    assert info["tokens"] == 151936 and info["merges"] == 151387
    assert info["token_types"]["control"] == 3


@pytest.mark.parametrize("key, value_type, value, message", [
    ("merges", 7, b"\x01", "tokenizer.ggml.merges must be an array of strings"),  # a bool
    ("tokens", 9, struct.pack("<IQ", 9, 0), "tokenizer.ggml.tokens must be an array of strings"),  # of arrays
    ("tokens", 8, struct.pack("<Q", 3) + b"abc", "tokenizer.ggml.tokens must be an array of strings"),  # one string
    ("token_type", 8, struct.pack("<Q", 3) + b"abc", "tokenizer.ggml.token_type must be an array of integers"),
])
def test_describe_names_a_key_of_the_wrong_type(tmp_path, key, value_type, value, message):
    """describe() raises no bare TypeError (len() of a bool), and does not count the characters of a
    lone string as tokens."""
    def s(b: bytes) -> bytes:
        return struct.pack("<Q", len(b)) + b

    entries = [(b"tokenizer.ggml.model", 8, s(b"gpt2")), (f"tokenizer.ggml.{key}".encode(), value_type, value)]
    path = tmp_path / "d.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries))
                     + b"".join(s(k) + struct.pack("<I", t) + v for k, t, v in entries))
    with pytest.raises(GGUFError, match=message):
        describe(path)


def test_export_hf_of_gguf_vocab_runs_in_tokenizers(tmp_path_factory):
    for name in ("llama-bpe", "deepseek-coder"):
        hf = _exported(name, tmp_path_factory.mktemp("gguf-export"))
        for text, expected in _vectors(name):
            assert hf.encode(text, add_special_tokens=False).ids == expected, (name, text)


_HF_EXPORTS: dict[str, object] = {}


def _exported(name: str, folder: Path):
    """HF ``tokenizers`` on wwho's export of a GGUF vocabulary (made once per module)."""
    if name not in _HF_EXPORTS:
        tokenizers = pytest.importorskip("tokenizers")
        _load(name).export_hf(folder / f"{name}.json")
        _HF_EXPORTS[name] = tokenizers.Tokenizer.from_file(str(folder / f"{name}.json"))
    return _HF_EXPORTS[name]


_WORDS = ["ශ්‍රී", " ලංකාව", "हिन्दी", " नमस्ते", " the", "Hello", "  ", "\n\n", "123", "4567", "'s", "'LL",
          " 😀", "中文", "\u00a0", "\t", "!!", "ok?"]
_GGUF_TEXTS = st.one_of(st.text(max_size=40),
                        st.lists(st.one_of(st.sampled_from(_WORDS), st.text(max_size=4)), max_size=12).map("".join))


@pytest.mark.parametrize("name", ["llama-bpe", "qwen2", "gpt-2", "deepseek-coder"])
def test_a_gguf_tokenizer_equals_hf_on_its_export_and_decodes_back(name, tmp_path_factory):
    # Any text: wwho's ids equal HF's on the tokenizer.json wwho exports (an HF model that loads the
    # GGUF through wwho gets the same ids), and the ids decode back to the text.
    tok = _load(name)
    hf = _exported(name, tmp_path_factory.mktemp("gguf-export"))

    @settings(max_examples=150, deadline=None)
    @given(text=_GGUF_TEXTS)
    def check(text):
        ids = tok.encode_ordinary(text)
        assert ids == hf.encode(text, add_special_tokens=False).ids
        assert tok.decode(ids) == text

    check()


@pytest.mark.parametrize("name", ["deepseek-coder", "deepseek-llm", "llama-bpe"])
def test_wwho_reads_its_own_export_of_a_gguf_vocabulary(name, tmp_path):
    """deepseek's user-defined tokens 'õ', 'ø' ... hold the ids of the byte tokens their strings spell
    (F5, F8: bytes no UTF-8 text holds), so the export lists those ids as added tokens and in
    model.vocab; ByteBPE.from_hf refused it ("id 32000 belongs to both ..."). It reads them as HF
    does, the added token's text: the same ids as the GGUF tokenizer and HF, decoded back."""
    tok, path = _load(name), tmp_path / "tokenizer.json"
    tok.export_hf(path)
    again = ByteBPE.from_hf(path)
    hf = pytest.importorskip("tokenizers").Tokenizer.from_file(str(path))
    for text in ["õ ö ø ÷", "helloõworld", "Ñoño ÿ", *(text for text, _ in _vectors(name))]:
        ids = tok.encode(text, allowed_special="all")
        assert again.encode(text, allowed_special="all") == ids == hf.encode(text, add_special_tokens=False).ids, text
        assert again.decode(ids) == text


#: tokenizer.ggml.padding_token_id of the shared GGUF vocabularies, as llama.cpp's own reader,
#: gguf-py 0.17's GGUFReader, reads them (None: no such key). Written out: that reader takes
#: seconds a file.
_PADDING_IDS = {"qwen2": 151643, "deepseek-coder": 32014, "deepseek-llm": 100001, "command-r": 0,
                "llama-bpe": None, "gpt-2": None}


@pytest.mark.parametrize("name", _PADDING_IDS)
def test_a_ggufs_padding_token_is_its_pad_id_and_the_exports_pad_role(name):
    """The GGUF's padding id was dropped: its export had no pad token, so transformers refused to
    pad a batch. It is the tokenizer's ``pad_id`` and the export's ``pad_token``; a GGUF that names
    none gives none (llama-bpe, gpt-2)."""
    from wwho.bytelevel.hf_files import model_roles

    tok, want = _load(name), _PADDING_IDS[name]
    assert tok.pad_id == want
    role = model_roles(tok.model).get("pad_token")
    assert (None if role is None else tok.get_vocab()[role]) == want


@pytest.mark.parametrize("name", ["deepseek-coder", "gpt-2"])
def test_a_ggufs_padding_token_survives_every_file_form(name, tmp_path):
    """wwho's own files, the HF export read by transformers (a padded batch) and ``from_hf`` of it."""
    transformers = pytest.importorskip("transformers")
    tok, want = _load(name), _PADDING_IDS[name]
    tok.save(tmp_path / "own")
    assert ByteBPE.load(tmp_path / "own").pad_id == want
    tok.export_hf(tmp_path / "hf")
    assert ByteBPE.from_hf(tmp_path / "hf" / "tokenizer.json").pad_id == want
    hf = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    assert hf.pad_token_id == want
    if want is not None:
        batch = hf(["a", "hello there"], padding=True, add_special_tokens=False)["input_ids"]
        assert batch[1] == tok.encode("hello there") and batch[0] == tok.encode("a") + [want] * (len(batch[1]) - 1)


@pytest.mark.parametrize("n", [255, 300, 4097])
def test_llama_runs_of_one_byte_equal_hf(tmp_path_factory, n):
    # Long runs of one byte take a shortcut in the core (rust/src/bytelevel/runs.rs), here under
    # the merges rule (GGUF); HF tokenizers on the exported tokenizer.json is the oracle.
    tok = _load("llama-bpe")
    hf = _exported("llama-bpe", tmp_path_factory.mktemp("gguf-export"))
    for char in [chr(c) for c in range(0x21, 0x7F)] + [" ", "\n", "\t"]:
        text = char * n
        assert tok.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids, (char, n)


@pytest.mark.parametrize("unit", ["ශ", "क", "é", "日", "😀", "ab", "කා", "日本"])
def test_llama_repeated_strings_equal_hf(tmp_path_factory, unit):
    # A piece of one short string repeated is merged from one copy where no token crosses a copy's
    # end, and a long run of one character inside a piece is cut between its copies
    # (rust/src/bytelevel/runs.rs, cuts.rs), under the merges rule too; HF is the oracle.
    tok = _load("llama-bpe")
    hf = _exported("llama-bpe", tmp_path_factory.mktemp("gguf-export"))
    for copies in (100, 701):
        for text in (unit * copies, " " + unit * copies, "(" + unit * copies + "'s", "a" + unit * copies + "."):
            assert tok.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids, (unit, copies)


_UNICODE_SPACES = " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2003\u2007\u200a\u2028\u2029\u202f\u205f\u3000"


@pytest.mark.parametrize("pool", [" \t\n\r", " \n", ["  ", "\t", "\n"], [" " * n for n in range(1, 140)] + ["\t", "\n"],
                                  _UNICODE_SPACES, ["\u3000", "\xa0", " ", "\n", "\xa9", "\u201f"]])
def test_llama_whitespace_equals_hf(tmp_path_factory, pool):
    # A long piece made of the UTF-8 bytes of whitespace characters is encoded in one pass by
    # compatible token pairs (rust/src/bytelevel/whitespace.rs), under the merges rule too (a
    # run of U+00A9 or U+201F, of the same bytes, is such a piece); HF is the oracle.
    import random

    tok = _load("llama-bpe")
    hf = _exported("llama-bpe", tmp_path_factory.mktemp("gguf-export"))
    rng = random.Random(str(pool))
    for length in (70, 300, 3000, 30_000):
        text = "".join(rng.choice(pool) for _ in range(length))
        for t in (text, "x" + text + "y"):
            assert tok.encode_ordinary(t) == hf.encode(t, add_special_tokens=False).ids, length


@pytest.mark.parametrize("first, last", [(0x4E00, 0x9FA5), (0x3040, 0x30FF), (0xAC00, 0xD7A3), (0x0400, 0x04FF),
                                         (0x61, 0x7A), (0xE0, 0xFF)])
def test_llama_long_pieces_equal_hf(tmp_path_factory, first, last):
    # Long pieces (one run of letters) are cut where no token can span and each part is merged
    # alone, under the merges rule too; HF tokenizers on the exported tokenizer.json is the oracle.
    import random

    tok = _load("llama-bpe")
    hf = _exported("llama-bpe", tmp_path_factory.mktemp("gguf-export"))
    rng = random.Random(first)
    for length in (70, 300, 3000):
        text = "".join(chr(rng.randint(first, last)) for _ in range(length))
        assert tok.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids, length


# --- broken files ---------------------------------------------------------------------------------


def _write_gguf(path: Path, *, model="gpt2", pre="gpt-2", tokens=True, merges=True, types=True,
                big_endian=False) -> Path:
    endian = gguf.GGUFEndian.BIG if big_endian else gguf.GGUFEndian.LITTLE
    writer = gguf.GGUFWriter(str(path), "gpt2", endianess=endian)
    if model is not None:
        writer.add_tokenizer_model(model)
    if pre is not None:
        writer.add_tokenizer_pre(pre)
    vocab = [bytes_to_unicode(bytes([b])) for b in range(256)] + ["ab", "<|end|>"]
    vocab[256] = bytes_to_unicode(b"ab")
    if tokens:
        writer.add_token_list(vocab)
    if types:
        writer.add_token_types([1] * 257 + [3])
    if merges:
        writer.add_token_merges(["a b"])
    writer.add_eos_token_id(257)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


@pytest.mark.parametrize("big_endian", [False, True])
def test_small_written_gguf_loads(tmp_path, big_endian):
    tok = ByteBPE.from_gguf(_write_gguf(tmp_path / "ok.gguf", big_endian=big_endian))
    assert tok.encode("abc") == [256, ord("c")]
    assert tok.eos_id == 257 and tok.special_tokens == {"<|end|>": 257}


@pytest.mark.parametrize(
    "options,message",
    [
        ({"model": None}, "missing key 'tokenizer.ggml.model'"),
        ({"tokens": False}, "missing key 'tokenizer.ggml.tokens'"),
        ({"merges": False}, "missing key 'tokenizer.ggml.merges'"),
        ({"pre": "no-such-pre"}, "unknown pre-tokenizer tokenizer.ggml.pre='no-such-pre'; known: .*llama"),
        ({"model": "t5"}, "'t5' \\(Unigram"),
    ],
)
def test_missing_or_bad_keys(tmp_path, options, message):
    path = _write_gguf(tmp_path / "bad.gguf", **options)
    with pytest.raises(GGUFError, match=message):
        ByteBPE.from_gguf(path)


def test_wrong_magic_empty_and_missing_files(tmp_path):
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"GGML" + bytes(100))
    with pytest.raises(GGUFError, match="not a GGUF file"):
        ByteBPE.from_gguf(bad)
    bad.write_bytes(b"")
    with pytest.raises(GGUFError, match="too short"):
        ByteBPE.from_gguf(bad)
    with pytest.raises(GGUFError, match="absent.gguf: no such GGUF file"):
        ByteBPE.from_gguf(tmp_path / "absent.gguf")
    bad.write_bytes(b"GGUF" + (7).to_bytes(4, "little") + bytes(100))
    with pytest.raises(GGUFError, match="version 7 is not supported"):
        ByteBPE.from_gguf(bad)
    # a version whose low bytes are 0 is read as a big-endian file's, and said so (not 65536 as
    # "version 256", with no word of why)
    bad.write_bytes(b"GGUF" + (65536).to_bytes(4, "little") + bytes(100))
    with pytest.raises(GGUFError, match=r"version 256 \(read as a big-endian file's: its low bytes are 0\) is not"):
        ByteBPE.from_gguf(bad)


@pytest.mark.parametrize("fraction", [0.001, 0.2, 0.5, 0.9, 0.999])
def test_truncated_files(tmp_path, fraction):
    data = _vocab("gpt-2").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: max(24, int(len(data) * fraction))])
    message = r"file is truncated.* at byte offset \d+ \(while reading metadata entry \d+, key '[\w.]+'(, after '[\w.]+')?\)"
    with pytest.raises(GGUFError, match=message):
        ByteBPE.from_gguf(cut)


@pytest.mark.parametrize("fraction", [0.2, 0.9])
def test_truncated_files_read_in_pieces(tmp_path, monkeypatch, fraction):
    import wwho.bytelevel.gguf_metadata as module

    monkeypatch.setattr(module, "FIRST_READ", 1000)
    data = _vocab("gpt-2").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(GGUFError, match=r"file is truncated.* at byte offset \d+"):
        ByteBPE.from_gguf(cut)


def test_a_file_cut_short_while_it_is_read_is_an_error_not_a_crash(tmp_path):
    # A mapped file that another program shortens kills the reader with SIGBUS: the header is
    # read into memory instead. In a child process, so that a crash fails the test, not the run.
    import subprocess
    import sys

    path = tmp_path / "shrinking.gguf"
    path.write_bytes(_vocab("gpt-2").read_bytes())
    script = f"""
import os
import wwho.bytelevel.gguf_metadata as module
from wwho.bytelevel import ByteBPE
real = module._core.gguf_strings
def cut_first(*args, **kwargs):
    os.truncate({str(path)!r}, 4096)
    return real(*args, **kwargs)
module._core.gguf_strings = cut_first
tok = ByteBPE.from_gguf({str(path)!r})
print(tok.encode("hello world"))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(ByteBPE.from_gguf(_vocab("gpt-2")).encode("hello world"))


def test_a_key_given_twice_is_refused(tmp_path):
    # Which one would a reader take? Another reader took the last, llama.cpp refuses the file.
    def kv(key: str, value: str) -> bytes:  # a string value (type 8)
        return (struct.pack("<Q", len(key)) + key.encode() + struct.pack("<I", 8)
                + struct.pack("<Q", len(value)) + value.encode())

    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 3)
    (tmp_path / "twice.gguf").write_bytes(header + kv("tokenizer.ggml.model", "gpt2")
                                          + kv("tokenizer.ggml.pre", "gpt-2") + kv("tokenizer.ggml.pre", "llama3"))
    with pytest.raises(GGUFError, match="the key 'tokenizer.ggml.pre' appears twice .*while reading metadata entry \\d+, key"):
        ByteBPE.from_gguf(tmp_path / "twice.gguf")


def test_errors_are_vocab_errors():
    assert issubclass(GGUFError, VocabError)


# --- hostile metadata: wrong types, nested arrays, merge lists cut short ----------------------


def _byte_gguf(path: Path, extra: list[str], merges: list[str], *, types: list[int] | None = None,
               strings: dict[str, str] | None = None) -> Path:
    """A gpt-2 GGUF of the 256 byte tokens, then ``extra``, with ``merges`` (and ``types``, and
    string keys ``strings``)."""
    writer = gguf.GGUFWriter(str(path), "gpt2")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list([bytes_to_unicode(bytes([b])) for b in range(256)] + extra)
    if types is not None:
        writer.add_token_types(types)
    writer.add_token_merges(merges)
    for key, value in (strings or {}).items():
        writer.add_string(key, value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def test_string_arrays_a_tokenizer_does_not_use_are_not_read(tmp_path):
    """Not every tokenizer.* string array is decoded, a Python str per item, used or not: an unused
    array of millions of strings would take long and gigabytes."""
    path = tmp_path / "g.gguf"
    writer = gguf.GGUFWriter(str(path), "gpt2")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list([bytes_to_unicode(bytes([b])) for b in range(256)] + ["ab"])
    writer.add_token_merges(["a b"])
    writer.add_array("tokenizer.unused", ["x"] * 1000)
    writer.add_array("tokenizer.ggml.scores", [0.5] * 257)  # numbers: read, as numpy
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    meta = read_metadata(path)
    assert isinstance(meta["tokenizer.unused"], Skipped) and meta["tokenizer.unused"].count == 1000
    assert len(meta["tokenizer.ggml.scores"]) == 257 and len(meta["tokenizer.ggml.tokens"]) == 257
    assert ByteBPE.from_gguf(path).encode("abc") == [256, 99]


def test_a_string_bos_token_id_is_an_error_naming_the_key(tmp_path):
    path = _byte_gguf(tmp_path / "s.gguf", ["ab"], ["a b"], strings={"tokenizer.ggml.bos_token_id": "1"})
    with pytest.raises(GGUFError, match=r"s.gguf: tokenizer.ggml.bos_token_id is '1', not a token id"):
        ByteBPE.from_gguf(path)


def test_deeply_nested_arrays_are_refused(tmp_path):
    depth = 50_000
    key = b"general.nested"
    body = struct.pack("<Q", len(key)) + key + struct.pack("<I", 9)  # an ARRAY ...
    body += struct.pack("<IQ", 9, 1) * depth + struct.pack("<IQ", 4, 0)  # ... of arrays of ... of nothing
    path = tmp_path / "deep.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + body)
    with pytest.raises(GGUFError, match=r"deep.gguf: arrays nested more than 8 deep at byte offset \d+"):
        ByteBPE.from_gguf(path)


def test_a_merge_list_cut_short_is_an_error(tmp_path):
    # The merge "c d" is missing: "cd" can never be produced.
    writer_path = _byte_gguf(tmp_path / "cut2.gguf", ["ab", "cd"], ["a b"])
    with pytest.raises(GGUFError, match=r"cut2.gguf: 1 tokens of several bytes are the result of no merge, "
                                        r"e\.g\. 'cd' \(id 257\): the merge list \(1 merges\) looks truncated"):
        ByteBPE.from_gguf(writer_path)


@pytest.mark.skipif(not (VOCABS / "ggml-vocab-gpt-2.gguf").is_file(), reason="the GPT-2 GGUF vocabulary is absent")
def test_a_real_vocabulary_with_its_last_merges_dropped_is_refused(tmp_path):
    meta = read_metadata(_vocab("gpt-2"))
    writer = gguf.GGUFWriter(str(tmp_path / "g.gguf"), "gpt2")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(meta["tokenizer.ggml.tokens"])
    writer.add_token_types([int(t) for t in meta["tokenizer.ggml.token_type"]])
    writer.add_token_merges(meta["tokenizer.ggml.merges"][:-100])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    with pytest.raises(GGUFError, match=r"g.gguf: 100 tokens of several bytes are the result of no merge"):
        ByteBPE.from_gguf(tmp_path / "g.gguf")


@pytest.mark.skipif(not (VOCABS / "ggml-vocab-aquila.gguf").is_file(), reason="the Aquila GGUF vocabulary is absent")
def test_a_few_tokens_no_merge_makes_load_with_a_warning(tmp_path):
    """llama.cpp's own ggml-vocab-aquila.gguf has one NORMAL token no merge makes (``<|endoftext|>``,
    id 0), and llama.cpp and HF load it: it is not refused as a merge list cut short. A few such
    tokens load (they decode; encoding never makes them), with a warning; the
    merge lists cut short above are still refused."""
    from tokenizers import Tokenizer

    from wwho.errors import WwhoWarning

    with pytest.warns(WwhoWarning, match=r"1 NORMAL token\(s\) of several bytes are the result of no merge, "
                                         r"e\.g\. '<\|endoftext\|>' \(id 0\)"):
        tok = ByteBPE.from_gguf(_vocab("aquila"), pretokenizer="gpt-2")
    assert tok.decode([0]) == "<|endoftext|>"
    tok.export_hf(tmp_path / "tokenizer.json")
    hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in ["Hello world <|endoftext|>", "   spaces\n\n and 123456 ünïcödé 中文", "<|endoftext|><|endoftext|>"]:
        ids = tok.encode(text, disallowed_special=())
        assert 0 not in ids and ids == hf.encode(text, add_special_tokens=False).ids, text


# --- the core's reading of the tokenizer arrays against the Python reference ----------------------


def _pack(strings: list[str]) -> bytes:
    """A GGUF string array's payload: each string as a little-endian u64 length and its UTF-8."""
    return b"".join(len(b).to_bytes(8, "little") + b for b in (s.encode("utf-8") for s in strings))


def _both(tokens: list[str], types: list[int], merges: list[str]):
    """(reference result or its refusal's args, core result or its refusal's args)."""
    try:
        expected = reference_gguf.vocab(tokens, types, merges)
    except reference_gguf.Found as found:
        expected = found.args
    try:
        got = _core.gguf_vocab(_pack(tokens), len(tokens), types, _pack(merges), len(merges), False)
    except _core.CoreGGUFError as exc:
        got = exc.args
    return expected, got


def _same(expected, got) -> None:
    if isinstance(expected, tuple) and isinstance(expected[0], str):  # a refusal
        assert got == expected
        return
    for mine, theirs in zip(got, expected):
        assert mine == theirs and (not isinstance(mine, dict) or list(mine) == list(theirs))
    assert len(got) == len(expected) == 6


# GPT-2 byte-level characters (a, b, Ġ for the space, é), characters outside the mapping (a space,
# an ideographic space) and the pieces of special-token text.
_CHARS = st.sampled_from(["a", "b", "Ġ", "é", " ", "\u3000", "<", ">", "s"])


@st.composite
def _vocabularies(draw):
    tokens = draw(st.lists(st.text(_CHARS, max_size=4), max_size=30))
    types = draw(st.lists(st.sampled_from([0, 1, 1, 1, 2, 3, 4, 5, 6, 99]), min_size=len(tokens),
                          max_size=len(tokens)))
    pick = st.sampled_from(tokens) if tokens else st.just("a")
    merge = st.one_of(st.tuples(pick, pick).map(" ".join), st.text(_CHARS, max_size=5))
    merges = draw(st.lists(merge, max_size=30))
    return tokens, types, merges


@settings(max_examples=400, deadline=None)
@given(_vocabularies())
def test_core_reads_random_vocabularies_as_the_reference(vocabulary):
    _same(*_both(*vocabulary))


def test_core_reads_merge_lists_the_reference_accepts():
    """The random lists above are mostly refused early; these are valid ones, cut short or not."""
    tokens = [bytes_to_unicode(bytes([b])) for b in range(256)] + ["ab", "abc", "Ġa", "<s>"]
    types = [1] * 259 + [3]
    merges = ["a b", "ab c", "Ġ a", "<s> a"]
    for cut in range(len(merges) + 1):
        _same(*_both(tokens, types, merges[:cut]))
    _same(*_both(tokens, types[:-1] + [1], merges))  # "<s>" ordinary: its merge now applies


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "qwen2", "command-r"])
def test_core_reads_real_vocabularies_as_the_reference(name):
    meta = read_metadata(_vocab(name))
    tokens, merges = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.merges"]
    types = [int(t) for t in meta["tokenizer.ggml.token_type"]][: len(tokens)]
    expected, got = _both(tokens, types, merges)
    _same(expected, got)
    assert got[5] is None and len(got[4]) >= 50_000


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=3), max_size=20, unique=True),
       st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=20))
def test_core_merges_check_equals_the_reference(tokens, picks):
    ranks = {t: i for i, t in enumerate(tokens)}
    pool = tokens + [b"zz", b"a"]
    merges = [(pool[i % len(pool)], pool[j % len(pool)]) for i, j in picks]
    assert _core.check_merges(ranks, merges) == reference_gguf.check_merges(ranks, merges)


def test_merges_whose_result_is_not_byte_level_text_are_refused(tmp_path):
    # "ab" is a control token's text.
    path = _byte_gguf(tmp_path / "m.gguf", ["ab"], ["a b"], types=[1] * 256 + [3])
    with pytest.raises(GGUFError, match=r"m.gguf: merge 0 \('a' \+ 'b'\): 'ab' is not a token"):
        ByteBPE.from_gguf(path)


@pytest.mark.parametrize("merge,message", [
    ("ab", r"tokenizer.ggml.merges\[1\] = 'ab' has no space"),
    ("a zz", r"tokenizer.ggml.merges\[1\] = 'a zz': 'zz' is not a token"),
])
def test_bad_merge_lines_name_their_index(tmp_path, merge, message):
    path = _byte_gguf(tmp_path / "bad.gguf", ["ab"], ["a b", merge])
    with pytest.raises(GGUFError, match=r"bad.gguf: " + message):
        ByteBPE.from_gguf(path)


def test_strings_that_are_not_utf8_are_named(tmp_path):
    path = _write_gguf(tmp_path / "u.gguf")
    data = path.read_bytes()
    marker = b"<|end|>"  # the last token: patch it to bytes that are not UTF-8
    at = data.rindex(marker)
    path.write_bytes(data[:at] + b"\xff\xfe" + data[at + 2:])
    with pytest.raises(GGUFError, match=r"u.gguf: tokenizer.ggml.tokens\[257\] is not UTF-8"):
        ByteBPE.from_gguf(path)
    with pytest.raises(GGUFError, match=r"u.gguf: string 257 of an array is not UTF-8 at byte offset "
                                        rf"{at} \(while reading metadata entry \d+, key 'tokenizer.ggml.tokens'(, after '[\w.]+')?\)"):
        read_metadata(path)
    # The gguf package's engine would let the UnicodeDecodeError out.
    with pytest.raises(GGUFError, match=r"u.gguf: tokenizer.ggml.tokens: string 257 of the array is not UTF-8"):
        read_metadata(path, engine="gguf")
    patched = _write_gguf(tmp_path / "p.gguf", pre="gpt-\u00e9")
    data = patched.read_bytes()
    patched.write_bytes(data.replace("gpt-\u00e9".encode(), b"gpt-\xff\xfe"))
    with pytest.raises(GGUFError, match=r"p.gguf: tokenizer.ggml.pre: not UTF-8"):
        read_metadata(patched, engine="gguf")


@pytest.mark.parametrize("pretokenizer, message", [
    (5, "pretokenizer must be a name, a regex or a list of regexes, not 5"),
    (["gpt2"], "plain word 'gpt2'"),
])
def test_a_pretokenizer_of_the_wrong_kind_is_a_vocab_error(tmp_path, pretokenizer, message):
    """pretokenizer=5 is no bare TypeError from deep inside, and ["gpt2"] not the regex "gpt2", under
    which every text is one piece."""
    with pytest.raises(VocabError, match=message):
        ByteBPE.from_gguf(_write_gguf(tmp_path / "ok.gguf"), pretokenizer=pretokenizer)


def test_a_gguf_naming_an_unknown_pre_tokenizer_takes_pattern_on_the_command_line(tmp_path):
    """A GGUF whose tokenizer.ggml.pre wwho does not know (llama.cpp knows more names) is refused
    without --pattern, so --pattern must be taken for it though it names one: otherwise there is no
    way to use it from the command line."""
    from cli_run import one_line_error, wwho

    path = _write_gguf(tmp_path / "new.gguf", pre="some-new-model")
    line = one_line_error(wwho("encode", "--tokenizer", path, "ab ab"))
    assert "unknown pre-tokenizer tokenizer.ggml.pre='some-new-model'" in line and "--pattern" in line
    done = wwho("encode", "--tokenizer", path, "--pattern", "gpt2", "ab ab")
    want = ByteBPE.from_gguf(path, pretokenizer="gpt2").encode("ab ab")
    assert done.returncode == 0 and done.stdout.decode().split() == [str(i) for i in want]


def test_the_gguf_engine_loads_the_same_tokenizer():
    path = _vocab("gpt-2")
    ours = load_gguf(path)
    theirs = load_gguf(path, engine="gguf")
    assert ours == theirs


def test_merges_are_kept_as_loaded_and_other_pairs_are_rebuilt():
    merges = [(b"a", b"b")]
    tok = ByteBPE({b"a": 0, b"b": 1, b"ab": 2}, pattern="gpt-2", merges=merges)
    assert tok.merges == merges and tok.merges is not merges
    for odd in ([[b"a", b"b"]], [(bytearray(b"a"), b"b")], [(type("B", (bytes,), {})(b"a"), b"b")]):
        tok = ByteBPE({b"a": 0, b"b": 1, b"ab": 2}, pattern="gpt-2", merges=odd)
        assert tok.merges == [(b"a", b"b")] and all(type(x) is bytes for pair in tok.merges for x in pair)
        assert tok.encode("ab") == [2]


# --- metadata the tokenizer does not need: walked over, not read (issue 27, item 5) ----------------


def _s(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _kv_string(key: str, value: str) -> bytes:
    return _s(key) + struct.pack("<I", 8) + _s(value)


def _kv_strings(key: str, values: list[str]) -> bytes:
    return _s(key) + struct.pack("<IIQ", 9, 8, len(values)) + b"".join(_s(v) for v in values)


def _raw_gguf(path: Path, *entries: bytes, tokens: list[str] | None = None, types: list[int] | None = None,
              merges: list[str] | None = None) -> Path:
    """A little-endian GGUF v3 file written byte by byte: a gpt-2 vocabulary (the 256 byte tokens,
    or ``tokens``; ``types``; ``merges``), then the raw key/value ``entries``."""
    tokens = [bytes_to_unicode(bytes([b])) for b in range(256)] if tokens is None else tokens
    kvs = [_kv_string("tokenizer.ggml.model", "gpt2"), _kv_string("tokenizer.ggml.pre", "gpt-2"),
           _kv_strings("tokenizer.ggml.tokens", tokens), _kv_strings("tokenizer.ggml.merges", merges or [])]
    if types is not None:
        kvs.append(_s("tokenizer.ggml.token_type") + struct.pack("<IIQ", 9, 5, len(types))
                   + struct.pack(f"<{len(types)}i", *types))
    kvs += entries
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))
    return path


def _empty_arrays(key: str, n: int) -> bytes:
    """``key``: an array of ``n`` empty arrays (of uint8), 12 bytes each: a type and a count."""
    return _s(key) + struct.pack("<IIQ", 9, 9, n) + struct.pack("<IQ", 0, 0) * n


def _mixed_arrays(key: str, n: int) -> bytes:
    """``key``: ``n`` inner arrays that alternate in shape (empty, one string, two int32s, one array of
    one float64), so that no run of equal headers can be jumped over at once."""
    shapes = [struct.pack("<IQ", 0, 0), struct.pack("<IQ", 8, 1) + _s("x"), struct.pack("<IQ", 5, 2) + bytes(8),
              struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 12, 1) + bytes(8)]
    return _s(key) + struct.pack("<IIQ", 9, 9, n) + b"".join(shapes[i % 4] for i in range(n))


@pytest.mark.parametrize("key", ["llama.junk", "general.junk", "tokenizer.ggml.junk"])
def test_an_array_of_millions_of_arrays_is_walked_over_not_read(tmp_path, key):
    """An array of 4M empty arrays (48 MB) is not loaded as a Python list and a numpy array per item:
    the core walks it, and what the file says of it is its type and size."""
    import time

    path = _raw_gguf(tmp_path / "m.gguf", _empty_arrays(key, 4_000_000), _mixed_arrays("other.mixed", 400_000))
    start = time.perf_counter()
    tok = ByteBPE.from_gguf(path)
    took = time.perf_counter() - start
    assert tok.encode("hi") == [ord("h"), ord("i")]
    assert took < 2.0, f"{took:.1f} s to load a 48 MB file"
    meta = read_metadata(path)
    assert meta[key] == Skipped("array[array]", 12 + 12 * 4_000_000, 4_000_000)
    assert str(meta[key]) == "array[array] (4,000,000 items, 48,000,012 bytes, not read)"
    assert isinstance(meta["other.mixed"], Skipped) and meta["other.mixed"].count == 400_000
    info = describe(path)
    assert info["skipped"] == {key: str(meta[key]), "other.mixed": str(meta["other.mixed"])}
    assert info["tokens"] == 256


def test_skipping_a_large_array_of_arrays_costs_little_memory(tmp_path):
    """1M empty arrays (12 MB): the peak resident memory of loading rises by about the file's own
    pages (the file is mapped), not by a Python object per array."""
    from memory import MB, measure

    path = _raw_gguf(tmp_path / "m.gguf", _empty_arrays("llama.junk", 1_000_000))
    result, growth = measure(
        "from wwho.bytelevel import ByteBPE",
        f"result = len(ByteBPE.from_gguf({str(path)!r}))",
    )
    assert result == 256
    assert growth < 64 * MB, f"loading a 12 MB file grew the peak RSS by {growth / MB:.0f} MB"


@pytest.mark.parametrize("count", [255, 257])
def test_token_types_not_one_per_token_are_refused(tmp_path, count):
    """A token_type array longer than the tokens is refused, as one shorter is, not loaded with its
    extra entries, even invalid ones, ignored."""
    path = _raw_gguf(tmp_path / "t.gguf", types=[1] * (count - 1) + [9])
    with pytest.raises(GGUFError, match=rf"tokenizer.ggml.token_type has {count} entries for 256 tokens"):
        ByteBPE.from_gguf(path)


@pytest.mark.parametrize("bad", [0, 7, -1, 255])
def test_an_unknown_token_type_is_refused_naming_the_id(tmp_path, bad):
    types = [1] * 256
    types[100] = bad
    path = _raw_gguf(tmp_path / "t.gguf", types=types)
    with pytest.raises(GGUFError, match=rf"t.gguf: tokenizer.ggml.token_type\[100\] = {bad} is not a token type "
                                        r"\(1 NORMAL, .* 6 BYTE\); 1 such entry$"):
        ByteBPE.from_gguf(path)


def _bytes_tokens(*extra: str) -> list[str]:
    return [bytes_to_unicode(bytes([b])) for b in range(256)] + list(extra)


@pytest.mark.parametrize("extra, types, ids", [
    (["a"], [1], (97, 256)),  # an ordinary token repeated: llama.cpp stops, this was silently decode-only
    (["ab", "ab"], [1, 1], (256, 257)),
    (["a"], [6], (97, 256)),  # BYTE is ordinary too
    (["<s>", "<s>"], [1, 3], (256, 257)),  # a special token whose text is also an ordinary token's
    (["<s>", "<s>"], [4, 1], (256, 257)),
    (["<s>", "<s>"], [3, 4], (256, 257)),  # two named tokens: refused before too
])
def test_a_repeated_token_text_is_refused_naming_both_ids(tmp_path, extra, types, ids):
    merges = ["a b"] if "ab" in extra else []
    path = _raw_gguf(tmp_path / "d.gguf", tokens=_bytes_tokens(*extra), types=[1] * 256 + types, merges=merges)
    text = extra[-1]
    with pytest.raises(GGUFError, match=rf"d.gguf: token {text!r} appears twice \(ids {ids[0]} and {ids[1]}\)"):
        ByteBPE.from_gguf(path)


@pytest.mark.parametrize("extra, types", [
    (["a"], [5]),  # UNUSED: never produced by encoding
    (["x y", "x y"], [1, 1]),  # not byte-level text (a space): decode-only either way
    (["", ""], [3, 1]),  # empty text
])
def test_repeats_that_encoding_never_produces_are_allowed(tmp_path, extra, types):
    path = _raw_gguf(tmp_path / "ok.gguf", tokens=_bytes_tokens(*extra), types=[1] * 256 + types)
    tok = ByteBPE.from_gguf(path)
    assert tok.encode("a") == [97]
    assert tok.decode([256 + len(extra) - 1]) == extra[-1]


def test_a_file_without_token_types_says_every_token_counts_as_normal(tmp_path):
    """A special token without types is not blamed on the merge list ("looks truncated") alone: the
    missing key is why it counts as NORMAL."""
    path = _write_gguf(tmp_path / "untyped.gguf", types=False)
    with pytest.raises(GGUFError, match="looks truncated; this file has no tokenizer.ggml.token_type, so every"):
        ByteBPE.from_gguf(path)
    assert ByteBPE.from_gguf(_write_gguf(tmp_path / "typed.gguf")).encode("ab") == [256]


def test_a_file_of_no_normal_token_is_a_gguf_error_naming_it(tmp_path):
    """Not ``VocabError: ranks is empty``, naming neither the file nor the token types."""
    path = _byte_gguf(tmp_path / "control.gguf", [bytes_to_unicode(b"ab")], ["a b"], types=[3] * 257)
    with pytest.raises(GGUFError, match=r"control\.gguf: none of its 257 tokens is NORMAL or BYTE"):
        ByteBPE.from_gguf(path)


def test_a_wrong_array_count_names_the_key_before_what_it_misreads(tmp_path):
    """A token array one item shorter than its tokens: the next token is read as a key name. The
    message names the entry and the key before it, the array whose count is wrong, not only that
    token as the key being read."""
    path = _write_gguf(tmp_path / "ok.gguf")
    data = bytearray(path.read_bytes())
    count_at = data.index(b"tokenizer.ggml.tokens") + len("tokenizer.ggml.tokens") + 4 + 4
    count = int.from_bytes(data[count_at:count_at + 8], "little")
    data[count_at:count_at + 8] = (count - 1).to_bytes(8, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(GGUFError, match=r"while reading metadata entry \d+, key .*, after 'tokenizer.ggml.tokens'\)"):
        ByteBPE.from_gguf(path)


def test_a_whitespace_run_past_the_backtracking_stack_encodes_as_hf(tmp_path_factory):
    # DeepSeek LLM's `\s+$` went to the backtracking engine (for `$`'s lookahead), whose stack a run
    # of a million spaces overflowed: a TokenizerError, where HF encodes the text.
    tok = _load("deepseek-llm")
    hf = _exported("deepseek-llm", tmp_path_factory.mktemp("gguf-export"))
    text = "x" + " " * 1_000_001 + "y"
    assert tok.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids
    for text in (" " * 1_000_001, "x" + "\t" * 1_000_001 + "\n"):  # (HF is slow on these: the round trip)
        assert tok.decode(tok.encode_ordinary(text)) == text


#: sha256 of tokenizer.chat_template in the shared GGUF vocabularies as gguf-py 0.19's GGUFReader
#: reads it (None: no such key). Written out: that reader takes seconds a file.
_CHAT_TEMPLATES = {"qwen2": "af9c0233881b083b52ff773580215222b5440ac3d0beeeca99b76329b048f8db",
                   "command-r": "9db2cf47ce03bfd0aab6ec59942503714fa0372f09f7e1d54cbcd71a1110b863",
                   "llama-bpe": None}


@pytest.mark.parametrize("name", _CHAT_TEMPLATES)
def test_a_ggufs_chat_template_reaches_the_hugging_face_export(name, tmp_path):
    """``wwho export hf model.gguf`` dropped the file's chat template (``wwho extend`` kept it):
    transformers' ``apply_chat_template`` then had none. It is the tokenizer's ``chat_template``,
    kept by wwho's own files, and the export's, as transformers reads it."""
    import hashlib

    transformers = pytest.importorskip("transformers")
    from wwho.cli import main

    tok, want = _load(name), _CHAT_TEMPLATES[name]
    got = tok.chat_template
    assert (None if got is None else hashlib.sha256(got.encode()).hexdigest()) == want
    assert main(["export", "hf", str(_vocab(name)), "-o", str(tmp_path / "hf"), "--quiet"]) == 0
    hf = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    assert hf.chat_template == got
    tok.save(tmp_path / "own")
    assert ByteBPE.load(tmp_path / "own").chat_template == got


def test_an_ordinary_token_named_as_bos_is_no_role_of_the_export(tmp_path):
    """aquila's GGUF names its NORMAL token ``<|endoftext|>`` (id 0, produced by no merge) as BOS and
    EOS: the export gave it those roles, transformers made it special and split it out of text
    (``x<|endoftext|>y`` became ``[88, 0, 89]``, and skip_special_tokens lost it), where the
    tokenizer and the export's own tokenizer.json read it as bytes. Left out of the roles, with a
    warning; the ids of transformers, HF ``tokenizers`` and wwho agree."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer

    from wwho.errors import WwhoWarning

    with pytest.warns(WwhoWarning, match="NORMAL token"):
        tok = ByteBPE.from_gguf(_vocab("aquila"), pretokenizer="llama-bpe")
    with pytest.warns(WwhoWarning) as said:
        tok.export_hf(tmp_path / "hf")
    assert [str(w.message).split(":")[0] for w in said] == [
        "bos_token 0 ('<|endoftext|>') and eos_token 0 ('<|endoftext|>')"]
    text = "x<|endoftext|>y <|endoftext|>"
    ids = tok.encode(text)
    assert 0 not in ids
    assert Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json")).encode(text, add_special_tokens=False).ids == ids
    hf = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    assert hf.encode(text, add_special_tokens=False) == ids
    assert hf.decode(ids, skip_special_tokens=True) == text


def test_a_merge_listed_twice_applies_and_exports_at_its_first_place(tmp_path):
    """llama.cpp keeps a repeated merge at its first rank, HF at its last: the loader keeps the first
    and drops the repeat, so the HF export (read by stock ``tokenizers``) cuts the text alike."""
    from tokenizers import Tokenizer

    path = _byte_gguf(tmp_path / "twice.gguf", ["he", "el"], ["h e", "e l", "h e"])
    tok = ByteBPE.from_gguf(path)
    assert tok.merges == [(b"h", b"e"), (b"e", b"l")]
    assert [tok.decode_single_token_bytes(i) for i in tok.encode("hel")] == [b"he", b"l"]
    tok.export_hf(tmp_path / "tokenizer.json")
    assert Tokenizer.from_file(str(tmp_path / "tokenizer.json")).encode("hel").ids == tok.encode("hel")
    # Given to the constructor, a repeat applies at its first place too, and is exported once.
    made = ByteBPE(dict(tok.ranks), pattern="gpt-2", merges=[(b"h", b"e"), (b"e", b"l"), (b"h", b"e")])
    made.export_hf(tmp_path / "made.json")
    assert Tokenizer.from_file(str(tmp_path / "made.json")).encode("hel").ids == made.encode("hel") == tok.encode("hel")
