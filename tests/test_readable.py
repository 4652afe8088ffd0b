"""How tokens are shown (wwho.readable) and ``wwho encode --tokens`` for every kind, run as the real command."""

from __future__ import annotations

import json
import re

import pytest
from conftest import DATA, O200K_FILE, run_wwho
from hypothesis import given
from hypothesis import strategies as st

from wwho.readable import readable


def test_escapes_what_is_not_text():
    assert readable("ශ්‍රී ලංකා".encode()) == "ශ්‍රී ලංකා"
    assert readable(b"\xe0\xb6") == "<0xE0><0xB6>"  # the first two bytes of a three-byte character
    assert readable(b"a\nb\x00\x7f") == "a<0x0A>b<0x00><0x7F>"
    assert readable("ශ".encode()[1:] + b"x") == "<0xB7><0x81>x"
    assert readable(b"\xed\xa0\x80") == "<0xED><0xA0><0x80>"  # a lone surrogate is not UTF-8


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs"))))
def test_printable_text_is_itself(text):
    assert readable(text.encode("utf-8")) == text


@given(st.binary())
def test_never_replacement_characters(data):
    shown = readable(data)
    assert "\ufffd" not in shown or "\ufffd".encode() in data


def _tokens(tokenizer, text, *extra):
    proc = run_wwho("encode", "--tokenizer", tokenizer, "--tokens", *extra, text,
                    env={"PATH": "/usr/bin:/bin", "WWHO_TIKTOKEN_FILE": str(O200K_FILE)})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.rstrip("\n").split(" | ")


def _ids(tokenizer, text):
    proc = run_wwho("encode", "--tokenizer", tokenizer, "--json", text,
                    env={"PATH": "/usr/bin:/bin", "WWHO_TIKTOKEN_FILE": str(O200K_FILE)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def sgpe_dir(tmp_path_factory):
    from importlib import resources

    import wwho

    lines = resources.files("wwho.data").joinpath("sinhala-wikipedia-sample.txt").read_text("utf-8").splitlines()
    root = tmp_path_factory.mktemp("readable")
    (root / "c.txt").write_text("\n".join(lines[:300]) + "\n", encoding="utf-8")
    tok = wwho.SGPETokenizer.train(root / "c.txt", vocab_size=700, progress=False, workers=1)
    tok.save(root / "sgpe")
    return root


TEXT = "Cricket ශ්‍රී ලංකාව"


def unescape(shown: list[str]) -> bytes:
    """The bytes the shown tokens stand for (``<0xNN>`` back to its byte)."""
    return b"".join(bytes.fromhex(part[3:5]) if part.startswith("<0x") else part.encode()
                    for s in shown for part in re.split(r"(<0x[0-9A-F]{2}>)", s) if part)


def test_tokens_of_sgpe_are_text(sgpe_dir):
    shown = _tokens(sgpe_dir / "sgpe", TEXT)
    assert unescape(shown) == TEXT.encode() and "\ufffd" not in "".join(shown)
    assert "Cricket" in "".join(shown) and "ලංකාව" in "".join(shown)


def test_tokens_of_o200k_and_meta_are_text_with_byte_escapes(sgpe_dir):
    if not O200K_FILE.is_file():
        pytest.skip(f"{O200K_FILE} is absent")
    import wwho

    shown = _tokens("o200k_base", "ශ්‍රී")
    assert "\ufffd" not in "".join(shown) and "Ġ" not in "".join(shown)
    # o200k cuts this syllable inside a character: the cut bytes are escaped, the rest is text
    enc = wwho.ByteBPE.from_tiktoken("o200k_base", tiktoken_file=O200K_FILE)
    assert shown == [readable(enc.token_bytes(i)) for i in enc.encode("ශ්‍රී")]
    meta = sgpe_dir / "meta"
    wwho.MetaTokenizer(wwho.SGPETokenizer.load(sgpe_dir / "sgpe"), tiktoken_file=O200K_FILE).save(meta)
    shown = _tokens(meta, "Hello " + TEXT)
    assert " Cricket" in shown and unescape(shown) == ("Hello " + TEXT).encode()  # not ĠCricket


def test_tokens_of_gguf_are_not_replacement_characters():
    path = DATA / "gguf-vocab" / "ggml-vocab-llama-bpe.gguf"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    shown = _tokens(path, TEXT)
    assert "\ufffd" not in "".join(shown) and unescape(shown) == TEXT.encode()
    assert any(s.startswith("<0x") for s in shown)  # Llama 3 splits Sinhala characters into bytes
    assert _ids(path, TEXT)["tokens"] == shown


def test_tokens_of_binary_are_readable(tmp_path):
    from wwho import binary

    data = b"\x7fELF\x02\x01\x01\x00hello world\n" * 40
    tok = binary.train_from_counts({data: 5}, vocab_size=400, min_frequency=2, progress=False)
    binary.save(tok, tmp_path / "tokenizer.json")
    (tmp_path / "in.bin").write_bytes(data[:32])
    proc = run_wwho("encode", "--tokenizer", tmp_path / "tokenizer.json", "--tokens", tmp_path / "in.bin")
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout.rstrip("\n").split(" | ")
    assert "".join(shown).startswith("<0x7F>ELF<0x02><0x01><0x01><0x00>hello world<0x0A>")
