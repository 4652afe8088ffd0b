"""``wwho extend`` against hostile input: bases that lack byte tokens or hide bad regexes, corpora
of one huge line, sizes beyond what stays quick. Each case is a defect that was found and fixed.

The bases are small GGUF files written byte by byte here (the 256 byte tokens, no merges), so
nothing here needs the shared data folder, and every extension takes well under a second.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from wwho.bytelevel.pretokenize import bytes_to_unicode
from wwho.errors import VocabError
from wwho.extend import NotExtendable, extend_tokenizer, load_base
from wwho.extend.extension import MAX_PAD_MULTIPLE, SAMPLE_CHARS, SAMPLE_LINES, _sample_lines
from wwho.extend.scripts import ScriptSet
from wwho.extend.verify import syllable_cuts

SINHALA = "ශ්‍රී ලංකාවේ ජනාධිපති කතා කළේය. "


def _s(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _strings(key: str, values: list[str]) -> bytes:
    return _s(key) + struct.pack("<IIQ", 9, 8, len(values)) + b"".join(_s(v) for v in values)


def _gguf(path: Path, tokens: list[str] | None = None) -> Path:
    """A vocab-only GGUF v3 file: Llama 3's pre-tokenizer, ``tokens`` (default: the 256 byte tokens)."""
    if tokens is None:
        tokens = [bytes_to_unicode(bytes([b])) for b in range(256)]
    kvs = [
        _s("tokenizer.ggml.model") + struct.pack("<I", 8) + _s("gpt2"),
        _s("tokenizer.ggml.pre") + struct.pack("<I", 8) + _s("llama-bpe"),
        _strings("tokenizer.ggml.tokens", tokens),
        _strings("tokenizer.ggml.merges", []),
    ]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))
    return path


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "si.txt"
    path.write_text((SINHALA * 20 + "\n") * 50, encoding="utf-8")
    return path


@pytest.mark.parametrize("verify", [True, False])
def test_a_base_without_a_byte_of_the_script_is_refused_before_the_corpus(tmp_path, corpus, verify):
    """A base lacking the byte 0xE0 (the lead byte of every Sinhala character): an extension would
    write a merge of that byte into tokenizer.json, which Hugging Face refuses ("Token `à` out of
    vocabulary"), as a traceback with the checks on, with --no-verify as a written output that
    nothing can load. It is refused at once, naming the file and the byte."""
    tokens = [bytes_to_unicode(bytes([b])) for b in range(256) if b != 0xE0]
    base = _gguf(tmp_path / "no-e0.gguf", tokens)
    with pytest.raises(NotExtendable, match=r"no-e0.gguf: the base has no token for 1 byte\(s\) \(0xE0\)"):
        extend_tokenizer(
            base, [tmp_path / "absent.txt"], add=100, scripts=["sinhala"], verify=verify, progress=False
        )


def test_a_base_without_the_space_is_refused(tmp_path, corpus):
    tokens = [bytes_to_unicode(bytes([b])) for b in range(256) if b != 0x20]
    with pytest.raises(NotExtendable, match=r"\(0x20\)"):
        extend_tokenizer(_gguf(tmp_path / "no-space.gguf", tokens), [corpus], add=100, progress=False)


def test_the_cli_refuses_it_in_one_line(tmp_path, corpus):
    tokens = [bytes_to_unicode(bytes([b])) for b in range(256) if b != 0xB6]
    base = _gguf(tmp_path / "no-b6.gguf", tokens)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "wwho",
            "extend",
            "--base",
            str(base),
            "--corpus",
            str(corpus),
            "--add",
            "100",
            "--script",
            "sinhala",
            "-o",
            str(tmp_path / "out"),
            "--no-verify",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and "no-b6.gguf: the base has no token" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_base_with_every_byte_extends_and_loads_in_tokenizers(tmp_path, corpus):
    from tokenizers import Tokenizer

    ext = extend_tokenizer(
        _gguf(tmp_path / "bytes.gguf"), [corpus], add=100, scripts=["sinhala"], progress=False
    )
    out = ext.save(tmp_path / "out")
    hf = Tokenizer.from_file(str(out / "tokenizer.json"))
    assert hf.encode(SINHALA, add_special_tokens=False).ids == ext.tokenizer.encode_ordinary(SINHALA)


class _CountingSlices(str):
    """A str that adds up the characters of every slice taken of it."""

    sliced = 0

    def __getitem__(self, key):
        part = str.__getitem__(self, key)
        if isinstance(key, slice):
            _CountingSlices.sliced += len(part)
        return part


def _reference_cuts(tok, text, scripts, known):
    """syllable_cuts as it was (quadratic), the reference for its results."""
    import itertools

    ids = tok.encode_ordinary(text)
    ends = set(itertools.accumulate(len(tok.token_bytes(i)) for i in ids))
    cuts = []
    for match in scripts.word_regex.finditer(text):
        pos = match.start() + (match.group()[0] == " ")
        for syl in scripts.syllables(match.group()):
            if syl in known:
                start = len(text[:pos].encode("utf-8"))
                if any(b in ends for b in range(start + 1, start + len(syl.encode("utf-8")))):
                    cuts.append((syl, pos))
            pos += len(syl)
    return cuts


def test_syllable_cuts_reads_a_long_line_once(tmp_path, corpus):
    """The check of known syllables encoded the whole line before each syllable again: a 2 MB corpus
    line took 7 minutes, a 50 MB one never ended. Counted here in characters sliced, not seconds."""
    ext = extend_tokenizer(
        _gguf(tmp_path / "b.gguf"), [corpus], add=100, scripts=["sinhala"], progress=False, verify=False
    )
    known = set(ext.known_syllables)
    rare = " ඵෞ ඣෛ"  # syllables of two characters the corpus never shows: built from their characters
    line = "(x) " + SINHALA * 200 + rare + "ශ" + " abc ශ්‍රී" + rare
    _CountingSlices.sliced = 0
    cuts = syllable_cuts(ext.tokenizer, _CountingSlices(line), ext.scripts, known)
    assert _CountingSlices.sliced <= 2 * len(line), (
        f"{_CountingSlices.sliced:,} characters sliced of {len(line):,}"
    )
    assert cuts == []
    # Asked about syllables it does not know, it finds them cut, where the reference does.
    unknown = {"ඵෞ", "ඣෛ", "ශ්‍රී"}
    found = syllable_cuts(ext.tokenizer, line, ext.scripts, unknown)
    assert found == _reference_cuts(ext.tokenizer, line, ext.scripts, unknown)
    assert [syl for syl, _ in found] == ["ඵෞ", "ඣෛ", "ඵෞ", "ඣෛ"]
    assert all(line[pos : pos + len(syl)] == syl for syl, pos in found)


def test_the_checks_read_a_bounded_sample(tmp_path):
    """The checks before writing took the first 2,000 documents whole: a corpus of one 50 MB line was
    held (and encoded three times) whole. The sample is now bounded in characters too."""
    big = tmp_path / "big.txt"
    big.write_text("ශ්‍රී " * (SAMPLE_CHARS // 2) + "\n" + "tail\n", encoding="utf-8")
    lines = _sample_lines([big], "text", 1 << 30)
    assert len(lines) == 1 and len(lines[0]) == SAMPLE_CHARS
    many = tmp_path / "many.txt"
    many.write_text("ශ්‍රී ලංකා\n" * (SAMPLE_LINES + 10), encoding="utf-8")
    assert len(_sample_lines([many], "text", 1 << 30)) == SAMPLE_LINES
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("ab\n" + "c" * SAMPLE_CHARS + "\nd\n", encoding="utf-8")
    assert [len(x) for x in _sample_lines([mixed], "text", 1 << 30)] == [2, SAMPLE_CHARS - 2]


def test_padding_is_bounded_and_the_cli_says_the_same_bound(tmp_path, corpus):
    """pad_to_multiple_of=1,048,576 is refused, where it would run for a long time (every padding id
    is a special token, and the checks encode with all of them allowed), and the command's help
    says the same bound."""
    from wwho.cli import build_parser
    from wwho.cli import extend as cli_extend

    assert cli_extend.MAX_PAD_MULTIPLE == MAX_PAD_MULTIPLE
    with pytest.raises(VocabError, match="pad_to_multiple_of must be an integer from 1 to 65,536"):
        extend_tokenizer(
            _gguf(tmp_path / "b.gguf"), [corpus], add=100, pad_to_multiple_of=MAX_PAD_MULTIPLE + 1
        )
    args = ["extend", "--base", "b", "--corpus", "c", "--add", "5", "--script", "sinhala", "-o", "o"]
    assert build_parser().parse_args([*args, "--pad-to-multiple-of", "65536"]).pad_to_multiple_of == 65536
    done = subprocess.run(
        [sys.executable, "-m", "wwho", *args, "--pad-to-multiple-of", "65537"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "from 1 to 65,536, got 65537" in done.stderr, done.stderr


def _hf_base(folder: Path, pre_tokenizer: dict) -> Path:
    folder.mkdir()
    vocab = {bytes_to_unicode(bytes([b])): b for b in range(256)}
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": [],
        },
    }
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def _split(regex: str) -> dict:
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    split = {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}
    return {"type": "Sequence", "pretokenizers": [split, byte_level]}


@pytest.mark.parametrize(
    "pre_tokenizer, message",
    [
        # A regex nested thousands deep: a RecursionError traceback from inside the regex module.
        (_split("(" * 5000 + "a" + ")" * 5000), "invalid pre-tokenizer regex"),
        # Errors of the regex engines and of an empty pre-tokenizer did not say which file was wrong.
        (_split("\\X"), "invalid pre-tokenizer regex"),
        (
            {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
                ],
            },
            "ByteLevel use_regex=false with no Split before it is not supported",
        ),
    ],
    ids=["nested", "bad-regex", "no-regex"],
)
def test_a_bad_hugging_face_base_is_an_error_naming_it(tmp_path, pre_tokenizer, message):
    folder = _hf_base(tmp_path / "base", pre_tokenizer)
    with pytest.raises(VocabError, match=message) as info:
        load_base(folder)
    assert str(folder) in str(info.value)


def test_a_base_that_is_not_a_regular_file_says_what_it_is(tmp_path):
    """A FIFO given as the base is named as such, not "not a byte-level BPE file", like a file of the
    wrong kind."""
    import os

    fifo = tmp_path / "base"
    os.mkfifo(fifo)
    with pytest.raises(VocabError, match=r"base: is a FIFO \(named pipe\); the base must be a regular file"):
        load_base(fifo)


def test_a_base_loads_with_its_own_pre_tokenizer_unchanged(tmp_path):
    """The guard above changes only messages: a good base loads as before."""
    folder = _hf_base(tmp_path / "base", _split(r"\p{L}+|\p{N}+|[^\p{L}\p{N}]+"))
    tok, _ = load_base(folder)
    assert tok.encode("ab 12") == [ord(c) for c in "ab 12"]
    assert ScriptSet(["sinhala"]).label == "sinhala"


def test_a_script_word_of_a_million_characters_is_one_piece(tmp_path, corpus):
    # The extension's pre-tokenizer (?:W)|(?:B) runs on the backtracking engine when the base's B
    # has a lookahead; a script word longer than its stack was an error where Hugging Face encodes.
    from tokenizers import Tokenizer

    ext = extend_tokenizer(
        _gguf(tmp_path / "bytes.gguf"), [corpus], add=100, scripts=["sinhala"], progress=False
    )
    out = ext.save(tmp_path / "out")
    hf = Tokenizer.from_file(str(out / "tokenizer.json"))
    text = "ab " + "කතා" * 500_000 + " cd"
    assert ext.tokenizer.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids


# A Vedic accent (U+1CD0, a mark) after an anusvara, and a Vedic sign (U+1CD3, punctuation: a syllable
# of its own) after a known syllable that ends in one. Both characters start with the bytes E1 B3.
VEDIC = "कों को कों मं\u1cd0 कों\u1cd3 मं\u1cd0 को\n"


@pytest.mark.parametrize("verify", [True, False])
def test_a_cluster_never_merges_onto_a_character_that_starts_a_syllable(tmp_path, verify):
    """Built byte by byte onto the anusvara, the cluster ं + U+1CD0 would have a first merge (ं, E1),
    ranked before every syllable's, that fires on any character led by E1, U+1CD3 too: the known
    syllable कों would be cut (को | ं<E1><B3> | <93>), so `wwho extend` would refuse this corpus, and
    with --no-verify write a tokenizer that breaks its own promise."""
    from tokenizers import Tokenizer

    corpus = tmp_path / "vedic.txt"
    corpus.write_text(VEDIC * 20, encoding="utf-8")
    ext = extend_tokenizer(_gguf(tmp_path / "bytes.gguf"), [corpus], add=60, scripts=["devanagari"],
                           min_syllable_freq=2, progress=False, verify=verify)
    assert "कों" in ext.known_syllables and "मं\u1cd0" in ext.known_syllables
    scripts = ScriptSet(["devanagari"])
    for text in (VEDIC, "कों\u1cd3", "कों\u1cd0", "मं\u1cd3 कों\u1cd2"):
        assert syllable_cuts(ext.tokenizer, text, scripts, set(ext.known_syllables)) == []
    assert [ext.tokenizer.token_bytes(i) for i in ext.tokenizer.encode_ordinary("कों\u1cd3")][0] == "कों".encode()
    hf = Tokenizer.from_file(str(ext.save(tmp_path / "out") / "tokenizer.json"))
    assert hf.encode(VEDIC, add_special_tokens=False).ids == ext.tokenizer.encode_ordinary(VEDIC)


def test_a_cut_is_reported_with_the_text_around_it(tmp_path, corpus, monkeypatch):
    """The message does not quote the line's first 80 characters, which need not hold the syllable it
    names (on a line whose cut comes later)."""
    from wwho.extend import verify

    ext = extend_tokenizer(_gguf(tmp_path / "bytes.gguf"), [corpus], add=100, scripts=["sinhala"],
                           progress=False, verify=False)
    line = "x" * 200 + "කා" + "y" * 200
    monkeypatch.setattr(verify, "syllable_cuts", lambda tok, text, scripts, known: [("කා", 200)])
    with pytest.raises(verify.ExtensionCheckError) as err:
        verify.check_extension(ext, [line])
    message = str(err.value)
    assert "'කා' at character 200 of a line" in message and "xකාy" in message and "x" * 40 not in message


CHECK_UNDER_CTRL_C = """
import os, signal, sys, threading, time
import tokenizers
from wwho.extend import extend_tokenizer
from wwho.extend.verify import check_extension

ext = extend_tokenizer(sys.argv[1], [sys.argv[2]], add=100, scripts=["sinhala"], progress=False, verify=False)
real = tokenizers.Tokenizer.from_str
loading = threading.Event()

def from_str(text):
    # As Hugging Face's load of a large vocabulary: native code that never looks at signals (here
    # the signal is blocked in the calling thread for the time of the load).
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        loading.set()
        time.sleep(5)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    return real(text)

tokenizers.Tokenizer.from_str = from_str
sent = []

def ctrl_c():
    loading.wait()
    time.sleep(0.2)
    sent.append(time.monotonic())
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=ctrl_c, daemon=True).start()
try:
    check_extension(ext, ["ශ්‍රී ලංකා"])
    print("not interrupted")
except KeyboardInterrupt:
    print(f"{time.monotonic() - sent[0]:.3f}")
"""


def test_the_check_takes_ctrl_c_while_hugging_face_loads_the_export(tmp_path, corpus):
    """The check builds the export in Hugging Face ``tokenizers``, a long load for a large vocabulary
    with no look at Ctrl-C; it runs on a helper thread, and the waiting main thread takes the
    interrupt at once (without the helper, as late as the load is long)."""
    done = subprocess.run([sys.executable, "-c", CHECK_UNDER_CTRL_C, str(_gguf(tmp_path / "bytes.gguf")),
                           str(corpus)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) < 1.0, done.stdout  # the load it interrupted takes 5 s


@pytest.mark.parametrize("base", ["folder", "its tokenizer.json", "corpus"])
def test_an_output_that_is_the_base_or_a_file_it_reads_is_refused_even_with_force(tmp_path, corpus, base):
    """``-o`` naming the base's own folder, or a folder whose file of the save's names is the base or a
    corpus file, would replace what the extension is made from: refused before any work, ``--force``
    or not, every file left as it was."""
    def extend(base: Path, out: Path, *more: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "wwho", "extend", "--base", str(base), "--corpus", str(corpus),
                               *more, "--add", "100", "--script", "sinhala", "-o", str(out), "--no-verify"],
                              capture_output=True, text=True, timeout=120)

    first = tmp_path / "ext"
    assert extend(_gguf(tmp_path / "base.gguf"), first).returncode == 0
    if base == "folder":
        args = (first, first)
    elif base == "its tokenizer.json":
        args = (first / "tokenizer.json", first)
    else:  # a corpus file named as a file of the save, in the output folder
        corpus.replace(first / "tokenizer_config.json")
        corpus = first / "tokenizer_config.json"
        args = (_gguf(tmp_path / "base.gguf"), first)
    before = {p.name: p.read_bytes() for p in first.iterdir()}
    done = extend(*args, "--force")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert "-o/--out is also an input" in done.stderr, done.stderr
    assert {p.name: p.read_bytes() for p in first.iterdir()} == before
