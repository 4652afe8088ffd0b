"""wwho: syllable-aware tokenizers for Indic scripts, and the byte-level tools around them.

The public API is re-exported here; everything else is an implementation detail.
"""

from wwho import words
from wwho.bytelevel import ByteBPE
from wwho.bytelevel.streaming import StreamingDecoder
from wwho.errors import CorpusError, SchemaError, TokenizerError, VocabError, WwhoError
from wwho.loading import detect_kind, load_tokenizer
from wwho.meta import MetaTokenizer, MetaVocab
from wwho.router import Script, TextSegment, join_segments, segment
from wwho.schema import Schema, available_scripts, load_schema
from wwho.sgpe import SGPETokenizer
from wwho.syllables import Syllabifier, check_schema, syllabify

__version__ = "0.1.0"

__all__ = [
    "ByteBPE",    "CorpusError",
    "MetaTokenizer",
    "MetaVocab",
    "SGPETokenizer",
    "SchemaError",
    "Schema",
    "Script",
    "StreamingDecoder",
    "Syllabifier",
    "TextSegment",
    "TokenizerError",
    "VocabError",
    "WwhoError",
    "available_scripts",
    "check_schema",
    "detect_kind",
    "load_tokenizer",
    "join_segments",
    "load_schema",
    "segment",
    "syllabify",
    "words",
]
