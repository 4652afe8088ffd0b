"""Binary BPE: byte-native tokenizers for arbitrary files, trained and run by HF ``tokenizers``.

Bytes travel through HF as Latin-1 characters (``mapping``); files become counted
windows (``ingest``); HF's ``BpeTrainer`` learns the merges (``train``); the result is
a standard ``tokenizer.json`` (``io``). See ``docs/binary.md``.
"""

from wwho.binary.ingest import count_windows, iter_sampled, iter_windows
from wwho.binary.ingest_types import IngestOptions, IngestStats, OptionError, WindowCounts
from wwho.binary.io import is_binary_tokenizer, load, save
from wwho.binary.mapping import (
    BinaryEncoding,
    bytes_to_text,
    decode_to_bytes,
    encode_bytes,
    encode_bytes_batch,
    encode_bytes_parts,
    text_to_bytes,
)
from wwho.binary.tokenizer import BinaryTokenizer
from wwho.binary.train import special_tokens, train, train_from_counts
from wwho.binary.walk import iter_files

__all__ = [
    "BinaryEncoding",
    "BinaryTokenizer",
    "IngestOptions",
    "IngestStats",
    "OptionError",
    "WindowCounts",
    "bytes_to_text",
    "count_windows",
    "decode_to_bytes",
    "encode_bytes",
    "encode_bytes_batch",
    "encode_bytes_parts",
    "is_binary_tokenizer",
    "iter_files",
    "iter_sampled",
    "iter_windows",
    "load",
    "save",
    "special_tokens",
    "text_to_bytes",
    "train",
    "train_from_counts",
]
