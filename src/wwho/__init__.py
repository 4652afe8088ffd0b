"""wwho: syllable-aware tokenizers for Indic scripts, and the byte-level tools around them.

The public API is re-exported here; everything else is an implementation detail. Each name is
imported on first use (PEP 562): ``import wwho`` loads only the compiled core, so a program (or
``wwho --version``) that needs one tokenizer does not pay for the others, nor for numpy, HF
``tokenizers``, ``regex`` or ``tqdm``. ``from wwho import ByteBPE`` and ``wwho.ByteBPE`` work as
before.
"""

# First, for the `wwho` command, Ctrl-C during the imports below is one line and exit 130 (these
# imports install that guard; for a program importing wwho they do nothing).
from wwho import startup as _startup  # noqa: F401

# isort: split
# Then the fork handlers: a fork while another thread imports wwho waits for that import (a child
# forked before them, while argparse or a module of wwho's was half imported, waited for ever).
from wwho import imports as _imports  # noqa: F401

# isort: split
from wwho.cli import interrupts as _interrupts  # noqa: F401

# isort: split
import importlib
from typing import TYPE_CHECKING

try:  # the compiled core (Rust, rust/): there is no pure-Python fallback at run time
    from wwho import _core
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "wwho's compiled core (wwho._core) is not built. Build it from a checkout with `make venv` "
        "(or `pip install -e .`, or `maturin develop --release`); a source build needs a Rust toolchain "
        "(https://rustup.rs)."
    ) from exc

__version__ = "0.2.0"
if _core.__version__ != __version__:  # a stale build from an older checkout
    raise ImportError(f"wwho._core is version {_core.__version__}, the Python package {__version__}: rebuild it "
                      "with `make venv` (or `maturin develop --release`)")

#: public name -> the module it comes from (a module named ``wwho.<name>`` is the name itself)
_EXPORTS = {
    "BinaryTokenizer": "wwho.binary",
    "ByteBPE": "wwho.bytelevel",
    "StreamingDecoder": "wwho.bytelevel.streaming",
    "CorpusError": "wwho.errors",
    "SchemaError": "wwho.errors",
    "TokenizerError": "wwho.errors",
    "VocabError": "wwho.errors",
    "WwhoError": "wwho.errors",
    "detect_kind": "wwho.loading",
    "load_tokenizer": "wwho.loading",
    "MetaTokenizer": "wwho.meta",
    "MetaVocab": "wwho.meta_vocab",
    "Tokenizer": "wwho.protocol",
    "Script": "wwho.router",
    "TextSegment": "wwho.router",
    "join_segments": "wwho.router",
    "segment": "wwho.router",
    "Schema": "wwho.schema_types",
    "available_scripts": "wwho.schema",
    "load_schema": "wwho.schema",
    "SGPETokenizer": "wwho.sgpe",
    "Syllabifier": "wwho.syllables",
    "check_schema": "wwho.syllables",
    "syllabify": "wwho.syllables",
    "words": "wwho.words",
}
#: submodules reachable from ``import wwho`` alone (``wwho.sgpe.X`` works after it), imported on first use
_SUBMODULES = frozenset({"binary", "bytelevel", "errors", "loading", "meta", "protocol", "router", "schema", "sgpe",
                         "syllables"})


def __getattr__(name: str):
    """Import a public name on first use and keep it (later lookups do not come here)."""
    source = _EXPORTS.get(name) or (f"wwho.{name}" if name in _SUBMODULES else None)
    if source is None:
        raise AttributeError(f"module 'wwho' has no attribute {name!r}")
    module = importlib.import_module(source)
    value = module if source == f"wwho.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # what type checkers and editors see: the names above, as if imported here
    from wwho import words
    from wwho.binary import BinaryTokenizer
    from wwho.bytelevel import ByteBPE
    from wwho.bytelevel.streaming import StreamingDecoder
    from wwho.errors import CorpusError, SchemaError, TokenizerError, VocabError, WwhoError
    from wwho.loading import detect_kind, load_tokenizer
    from wwho.meta import MetaTokenizer
    from wwho.meta_vocab import MetaVocab
    from wwho.protocol import Tokenizer
    from wwho.router import Script, TextSegment, join_segments, segment
    from wwho.schema import available_scripts, load_schema
    from wwho.schema_types import Schema
    from wwho.sgpe import SGPETokenizer
    from wwho.syllables import Syllabifier, check_schema, syllabify

__all__ = [
    "BinaryTokenizer",
    "ByteBPE",
    "CorpusError",
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
