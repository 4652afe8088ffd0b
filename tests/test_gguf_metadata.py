"""The GGUF metadata reader: the same metadata as the ``gguf`` package's GGUFReader, a header read
in pieces, and counts, types and files it refuses before reading them, naming the key and offset.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from test_gguf import _raw_gguf, _s, _vocab  # noqa: E402 (after the importorskip above)

from wwho.bytelevel import gguf_metadata  # noqa: E402
from wwho.bytelevel.gguf_metadata import MAX_METADATA_ENTRIES, GGUFError, Skipped, read_metadata  # noqa: E402


def test_metadata_reader_equals_gguf_package():
    path = _vocab("deepseek-coder")
    ours = read_metadata(path)
    theirs = read_metadata(path, engine="gguf")  # gguf.GGUFReader
    fields = gguf.GGUFReader(path).fields
    assert ours.keys() == theirs.keys()
    skipped = {key for key, value in ours.items() if isinstance(value, Skipped)}
    # The model's hyper-parameters are walked over, not read; the tokenizer's keys and general.name are read.
    assert skipped == {key for key in ours if not key.startswith(("tokenizer.", "general."))}
    assert "general.name" in ours and "llama.block_count" in skipped
    for key, value in ours.items():
        if isinstance(value, Skipped):  # its type and size, as GGUFReader finds them
            field = fields[key]
            assert value.type == gguf.GGUFValueType(field.types[0]).name.lower(), key
            assert value.size == sum(part.nbytes for part in field.parts[3:]), key
        elif isinstance(value, np.ndarray):
            assert np.array_equal(value, theirs[key]), key
        elif isinstance(value, float):
            assert value == pytest.approx(float(theirs[key])), key
        else:
            assert value == theirs[key], key


@pytest.mark.parametrize("value_type, value, what", [
    (9, struct.pack("<IQ", 6, 1 << 61), "an array of 2305843009213693952 items"),  # float32 items
    (9, struct.pack("<IQ", 8, 1 << 24), "an array of 16,777,216 items"),
    (8, struct.pack("<Q", 1 << 60), "a 1152921504606846976-byte string"),
])
def test_a_count_no_file_could_hold_is_refused_at_once_in_a_model_sized_file(tmp_path, value_type, value, what):
    """In a file larger than the first read (a model's), such a count is not read on, a larger read
    at a time, to end with an error naming neither the key nor the offset."""
    def s(b: bytes) -> bytes:
        return struct.pack("<Q", len(b)) + b

    entries = [(b"tokenizer.ggml.model", 8, s(b"gpt2")), (b"tokenizer.ggml.token_type", value_type, value)]
    header = (b"GGUF" + struct.pack("<IQQ", 3, 1, len(entries))
              + b"".join(s(k) + struct.pack("<I", t) + v for k, t, v in entries))
    path = tmp_path / "model.gguf"
    with open(path, "wb") as f:
        f.write(header)
        f.truncate(4 * gguf_metadata.FIRST_READ)  # sparse: the tensors' place
    with pytest.raises(GGUFError, match=rf"file is truncated \({what}\) at byte offset \d+ \(while reading "
                                        r"metadata entry 1, key 'tokenizer.ggml.token_type'"):
        read_metadata(path)


@pytest.mark.parametrize("key, kind, value, what", [
    (b"general.name", 8, struct.pack("<Q", 1 << 30), "a 1073741824-byte string"),
    (b"general.name", 8, struct.pack("<Q", (256 << 20) - 10), r"a \d+-byte string"),
    (b"llama.blob", 8, struct.pack("<Q", 1 << 30), "a 1073741824-byte string"),  # walked over, not read
    (b"llama.blob", 9, struct.pack("<IQ", 0, 1 << 30), "an array of 1,073,741,824 items"),
])
def test_a_value_past_the_header_limit_is_refused_before_it_is_read(tmp_path, key, kind, value, what):
    """A string claiming more than the header may hold, in a file that large (sparse), is refused
    at once, naming the key: it was read on in ever larger pieces (to 256 MiB, with that much memory)
    before the header was refused."""
    import resource

    path = tmp_path / "big.gguf"
    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key + struct.pack("<I", kind)
                + value)
        f.truncate(4 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(GGUFError, match=rf"big.gguf: {what} would take the metadata past 256 MiB .* at byte offset "
                                        rf"\d+ \(while reading metadata entry 0, key '{key.decode()}'\)"):
        read_metadata(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 << 10  # KiB: no 256 MiB read


@pytest.mark.parametrize("first_read", [24, 100, 4096, 1 << 20])
def test_a_header_read_in_pieces_is_read_whole(monkeypatch, first_read):
    # The header is read in growing pieces; wherever a piece ends, the metadata is the same.
    path = _vocab("gpt-2")
    expected = read_metadata(path)
    monkeypatch.setattr(gguf_metadata, "FIRST_READ", first_read)
    found = read_metadata(path)
    assert found.keys() == expected.keys()
    for key, value in expected.items():
        assert np.array_equal(found[key], value) if isinstance(value, np.ndarray) else found[key] == value


@pytest.mark.parametrize("entry, message", [
    # Counts that the bytes left in the file cannot hold: refused before anything is allocated.
    (_s("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 2**61), r"truncated \(an array of 2305843009213693952"),
    (_s("tokenizer.ggml.added") + struct.pack("<IIQ", 9, 8, 2**62), r"truncated"),  # (walked over, not read)
    (_s("llama.junk") + struct.pack("<IIQ", 9, 9, 2**63) + struct.pack("<IQ", 0, 0), "truncated"),
    (_s("llama.junk") + struct.pack("<IIQ", 9, 12, 2**62), "truncated"),
    (_s("llama.junk") + struct.pack("<IQ", 8, 2**64 - 1), "truncated"),
    (_s("llama.junk") + struct.pack("<IIQ", 9, 13, 0), "unknown value type 13"),
    (_s("llama.junk") + struct.pack("<IIQ", 9, 9, 1) + struct.pack("<IQ", 99, 0), "unknown value type 99"),
    (_s("tokenizer.ggml.x") + struct.pack("<IIQ", 9, 13, 0), "unknown value type 13"),
    (_s("general.x") + struct.pack("<I", 77), "unknown value type 77"),
], ids=["scores", "strings", "arrays", "skipped-f64", "skipped-string", "item-type", "inner-type", "needed-type",
        "scalar-type"])
def test_impossible_counts_and_types_are_refused_naming_the_key(tmp_path, entry, message):
    path = _raw_gguf(tmp_path / "c.gguf", entry)
    key = entry[8:8 + int.from_bytes(entry[:8], "little")].decode()
    with pytest.raises(GGUFError, match=rf"c.gguf: .*{message}.* at byte offset \d+ \(while reading metadata entry \d+, key '{key}'(, after '[\w.]+')?\)"):
        read_metadata(path)


def test_a_fifo_or_device_is_refused_not_read(tmp_path):
    """A FIFO named like a GGUF file blocked `wwho inspect` until Ctrl-C; a device was mapped. Both are
    refused at once, in one line naming the path (run in a child, with a time limit, for the hang)."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "model.gguf"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        done = subprocess.run([sys.executable, "-c", "import sys\nfrom wwho.bytelevel.gguf_metadata import GGUFError, "
                               "read_metadata\ntry:\n    read_metadata(sys.argv[1])\nexcept GGUFError as e:\n"
                               "    print(e)\n", str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        assert str(path) in done.stdout and ("FIFO" in done.stdout or "device" in done.stdout), done.stdout


def test_a_header_of_millions_of_metadata_entries_is_refused_before_reading_them(tmp_path):
    # 8 million one-byte entries took two minutes and 2.5 GB
    path = tmp_path / "many.gguf"
    entry = struct.pack("<Q", 1) + b"k" + struct.pack("<IB", 0, 1)  # key "k", a uint8 of 1
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, MAX_METADATA_ENTRIES + 1) + entry * 4)
    with pytest.raises(GGUFError, match=f"many.gguf: the header says {MAX_METADATA_ENTRIES + 1:,} metadata entries"):
        read_metadata(path)


def test_an_array_of_more_strings_than_a_vocabulary_holds_is_refused_before_it_is_read(tmp_path):
    # 20 million empty tokens (a 160 MB file) took 2.7 GB before an error
    from wwho.sizes import MAX_VOCAB_SIZE

    key = b"tokenizer.ggml.tokens"
    path = tmp_path / "huge.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
                     + struct.pack("<IIQ", 9, 8, MAX_VOCAB_SIZE + 1) + struct.pack("<Q", 0) * 64)
    with pytest.raises(GGUFError, match=f"an array of {MAX_VOCAB_SIZE + 1:,} strings, more than"):
        read_metadata(path)
