"""wwho: syllable-aware tokenizers for Indic scripts, and the byte-level tools around them.

The public API is re-exported here; everything else is an implementation detail.
"""

# First: for the `wwho` command, Ctrl-C during the imports below is one line and exit 130 (the import
# installs that guard; for a program importing wwho it does nothing).
from wwho.cli import interrupts as _interrupts  # noqa: F401

try:  # the compiled core (Rust, rust/): there is no pure-Python fallback at run time
    from wwho import _core
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "wwho's compiled core (wwho._core) is not built. Build it from a checkout with `make venv` "
        "(or `pip install -e .`, or `maturin develop --release`); a source build needs a Rust toolchain "
        "(https://rustup.rs)."
    ) from exc

from wwho import words
from wwho.bytelevel import ByteBPE
from wwho.bytelevel.streaming import StreamingDecoder
from wwho.errors import CorpusError, SchemaError, TokenizerError, VocabError, WwhoError
from wwho.loading import detect_kind, load_tokenizer
from wwho.meta import MetaTokenizer, MetaVocab
from wwho.protocol import Tokenizer
from wwho.router import Script, TextSegment, join_segments, segment
from wwho.schema import Schema, available_scripts, load_schema
from wwho.sgpe import SGPETokenizer
from wwho.syllables import Syllabifier, check_schema, syllabify

__version__ = "0.2.0"
if _core.__version__ != __version__:  # a stale build from an older checkout
    raise ImportError(f"wwho._core is version {_core.__version__}, the Python package {__version__}: rebuild it "
                      "with `make venv` (or `maturin develop --release`)")

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
    "Tokenizer",
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
