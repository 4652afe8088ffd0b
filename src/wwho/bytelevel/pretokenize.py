"""Pre-tokenizers for byte-level BPE, and the GPT-2 byte <-> unicode mapping.

A pre-tokenizer cuts text into pieces; BPE never merges across pieces. Here a
pre-tokenizer is a sequence of regexes, each applied to every piece the previous
one produced, keeping both the matches and the text between them (the Hugging Face
``Split`` pre-tokenizer with behaviour ``Isolated``; llama.cpp applies its regex
lists the same way). A single regex that matches every character (GPT-2, cl100k,
o200k) therefore behaves exactly like tiktoken's ``findall``.

Some Hugging Face pipelines keep splitting *after* their ``ByteLevel`` step, i.e. on
the GPT-2 byte-mapped text (``"Ġ123"`` rather than ``" 123"``); ``byte_patterns``
are those regexes. Pieces are then bytes and may cut a UTF-8 character.

Named patterns (facts from tiktoken and llama.cpp / Hugging Face tokenizer
configs, written out here): ``gpt2``, ``gpt4`` (= ``cl100k``), ``o200k``, and the
GGUF ``tokenizer.ggml.pre`` names in :data:`GGUF_PRETOKENIZERS`.

Matching runs in the compiled core (``wwho._core.Pretokenizer``, ``rust/src/pretokenize``):
the o200k, cl100k, Llama 3, Qwen2 and GPT-2 regexes on hand-written scanners that split exactly
as the regexes do, any other regex on Rust's ``regex`` / ``fancy-regex`` after translating the
few places where Python's ``regex`` dialect differs (see docs/bytelevel.md). Character classes
are Unicode 16.0, as in tiktoken and Hugging Face ``tokenizers``. The pure-Python matcher that
ran before the core is the tests' reference (``tests/reference/pretokenize_py.py``).

Deliberately not here: Unicode normalisation, special tokens (``ByteBPE`` splits
those out first), BPE itself.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources

from wwho import _core
from wwho.errors import VocabError, brief, holds_surrogate

# --- the GPT-2 byte <-> unicode mapping ---------------------------------------------------
# Printable Latin-1 bytes stand for themselves; the other 68 bytes (controls, space,
# DEL, NBSP, soft hyphen) are moved to U+0100.. in byte order, so every token of a
# byte-level vocabulary is a printable string.


def _byte_to_unicode() -> dict[int, str]:
    keep = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(0x100 + extra)
            extra += 1
    return table


BYTE_TO_UNICODE: dict[int, str] = _byte_to_unicode()
UNICODE_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_UNICODE.items()}
# str.translate tables: bytes decoded as Latin-1 -> GPT-2 chars, and back. The reverse
# table sends the Latin-1 chars that are *not* GPT-2 chars (controls, space, NBSP ...)
# to U+FFFF so that encoding the result as Latin-1 fails for them, as for any char >= 256.
_TO_UNICODE_TABLE = {b: c for b, c in BYTE_TO_UNICODE.items()}
_TO_LATIN1_TABLE = {cp: 0xFFFF for cp in range(256)} | {ord(c): b for c, b in UNICODE_TO_BYTE.items()}


def bytes_to_unicode(data: bytes) -> str:
    """GPT-2 byte-level string of ``data`` (``b" hi"`` -> ``"Ġhi"``)."""
    return data.decode("latin-1").translate(_TO_UNICODE_TABLE)


def unicode_to_bytes(text: str) -> bytes | None:
    """Inverse of :func:`bytes_to_unicode`; ``None`` if ``text`` has a char outside the mapping."""
    try:
        return text.translate(_TO_LATIN1_TABLE).encode("latin-1")
    except UnicodeEncodeError:
        return None


# --- named patterns -----------------------------------------------------------------------

#: GPT-2 / r50k (tiktoken's possessive form of the original GPT-2 regex).
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
#: cl100k_base ("gpt4").
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
#: o200k_base.
_O200K_LETTERS_LOWER_LAST = r"""[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
_O200K_LETTERS_UPPER_FIRST = r"""[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
O200K_PATTERN = "|".join(  # one alternative per line, as tiktoken writes it
    [
        r"""[^\r\n\p{L}\p{N}]?""" + _O200K_LETTERS_LOWER_LAST + r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?""" + _O200K_LETTERS_UPPER_FIRST + r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# The original GPT-2 regex as Hugging Face's ByteLevel(use_regex=True) writes it.
_HF_GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# Llama 3 (the pre-possessive cl100k regex) and Qwen2 (the same with single digits).
_LLAMA3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
_QWEN2 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# DeepSeek LLM's letter class is the cased letters (Unicode category LC) as code-point
# ranges. Written as numbers: several of these characters (U+1F7D, U+1FBE, U+2126,
# U+212A ...) have singleton canonical decompositions, and an NFC-normalising copy of
# the source would silently change them.
_DEEPSEEK_LETTERS = (
    (0x41, 0x5A), (0x61, 0x7A), (0xB5, 0xB5), (0xC0, 0xD6), (0xD8, 0xF6), (0xF8, 0x1BA), (0x1BC, 0x1BF),
    (0x1C4, 0x293), (0x295, 0x2AF), (0x370, 0x373), (0x376, 0x377), (0x37B, 0x37D), (0x37F, 0x37F),
    (0x386, 0x386), (0x388, 0x38A), (0x38C, 0x38C), (0x38E, 0x3A1), (0x3A3, 0x3F5), (0x3F7, 0x481),
    (0x48A, 0x52F), (0x531, 0x556), (0x10A0, 0x10C5), (0x13A0, 0x13F5), (0x13F8, 0x13FD), (0x1C90, 0x1CBA),
    (0x1CBD, 0x1CBF), (0x1D00, 0x1D2B), (0x1D6B, 0x1D77), (0x1D79, 0x1D9A), (0x1E00, 0x1F15),
    (0x1F18, 0x1F1D), (0x1F20, 0x1F45), (0x1F48, 0x1F4D), (0x1F50, 0x1F57), (0x1F59, 0x1F59),
    (0x1F5B, 0x1F5B), (0x1F5D, 0x1F5D), (0x1F5F, 0x1F7D), (0x1F80, 0x1FB4), (0x1FB6, 0x1FBC),
    (0x1FBE, 0x1FBE), (0x1FC2, 0x1FC4), (0x1FC6, 0x1FCC), (0x1FD0, 0x1FD3), (0x1FD6, 0x1FDB),
    (0x1FE0, 0x1FEC), (0x1FF2, 0x1FF4), (0x1FF6, 0x1FFC), (0x2102, 0x2102), (0x2107, 0x2107),
    (0x210A, 0x2113), (0x2115, 0x2115), (0x2119, 0x211D), (0x2124, 0x2124), (0x2126, 0x2126),
    (0x2128, 0x2128), (0x212A, 0x212D), (0x212F, 0x2134), (0x2139, 0x2139), (0x213C, 0x213F),
    (0x2145, 0x2149), (0x214E, 0x214E), (0x2183, 0x2184), (0x2C00, 0x2C7B), (0x2C7E, 0x2CE4),
    (0x2CEB, 0x2CEE), (0x2CF2, 0x2CF3), (0xA640, 0xA66D), (0xA680, 0xA69B), (0xA722, 0xA76F),
    (0xA771, 0xA787), (0xA78B, 0xA78E), (0xAB70, 0xABBF), (0xFB00, 0xFB06), (0xFB13, 0xFB17),
    (0xFF21, 0xFF3A), (0xFF41, 0xFF5A), (0x10400, 0x1044F), (0x104B0, 0x104D3), (0x104D8, 0x104FB),
    (0x10C80, 0x10CB2), (0x10CC0, 0x10CF2), (0x118A0, 0x118DF), (0x1E900, 0x1E943),
)
_DEEPSEEK_PUNCT = (
    (0x21, 0x2F), (0x3A, 0x7E), (0xFF01, 0xFF0F), (0xFF1A, 0xFF5E), (0x2018, 0x201F), (0x3000, 0x3002),
)
_CJK = ((0x4E00, 0x9FA5), (0x800, 0x4E00), (0xAC00, 0xD7FF))  # sic: DeepSeek's own ranges


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    def one(cp: int) -> str:  # escape only what is special inside [...], in every regex dialect
        return "\\" + chr(cp) if chr(cp) in "\\[]^-" else chr(cp)

    return "[" + "".join(one(a) if a == b else f"{one(a)}-{one(b)}" for a, b in ranges) + "]"


_DEEPSEEK_LLM = (
    "[\r\n]",
    "\\s?" + _char_class(_DEEPSEEK_LETTERS) + "+",
    "\\s?" + _char_class(_DEEPSEEK_PUNCT) + "+",
    "\\s+$",
    _char_class(_CJK) + "+",
    "\\p{N}+",
)
_DEEPSEEK_CODER = ("[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", _char_class(_CJK) + "+", "\\p{N}")
# Hugging Face Punctuation(): ASCII punctuation (incl. the symbols $+<=>^`|~) or Unicode P* (as
# llama.cpp reads it in GGUF files; HF's own tables are older: hf_punctuation_class).
_PUNCT_RUN = r"""[\p{P}$+<=>^`|~]+"""


@functools.lru_cache(maxsize=1)
def hf_punctuation_class() -> str:
    """A regex class of the characters Hugging Face's ``Punctuation`` pre-tokenizer splits on, by its
    own Unicode tables (``wwho/data/hf_punctuation.json``), older than the core's: some characters that
    Unicode 16 counts as punctuation, Indic signs among them, are none to it (docs/reliability.md)."""
    ranges = json.loads(resources.files("wwho.data").joinpath("hf_punctuation.json").read_text("utf-8"))["ranges"]
    return _char_class(tuple((a, b) for a, b in ranges))  # the characters themselves: every engine reads them


#: Unicode version the pre-tokenizers classify characters by (that of tiktoken 0.14's Rust regex and
#: of Hugging Face tokenizers' Oniguruma, and of the core's tables); see :class:`Pretokenizer`.
UNICODE_VERSION = "16.0"
#: The most regexes a pre-tokenizer runs in turn (far more than any named one has): each compiled
#: regex holds tens of kB, so a file could otherwise ask for gigabytes.
MAX_REGEXES = 64


@dataclass(frozen=True)
class Pretokenizer:
    """A sequence of splitting regexes (see the module docstring), compiled by the core.

    Character classes (``\\p{L}``, ``\\s``, ``\\d`` ...) see characters as Unicode 16.0 does.
    ``unicode`` records that (``"16.0"``, the default); ``None``, which older files write for "the
    installed ``regex`` module's tables", is accepted and also means the core's 16.0 tables.
    """

    patterns: tuple[str, ...]
    byte_patterns: tuple[str, ...] = ()
    name: str = ""
    unicode: str | None = UNICODE_VERSION
    #: True if no piece ever holds a space with non-whitespace on both sides (set for the named
    #: pre-tokenizers, which are tested for it). Kept in files; the core does not need it.
    space_split: bool = False
    _core: _core.Pretokenizer = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", tuple(self.patterns))
        object.__setattr__(self, "byte_patterns", tuple(self.byte_patterns))
        if not self.patterns and not self.byte_patterns:
            raise VocabError("a pre-tokenizer needs at least one regex")
        if len(self.patterns) + len(self.byte_patterns) > MAX_REGEXES:
            raise VocabError(f"a pre-tokenizer of {len(self.patterns) + len(self.byte_patterns):,} regexes: at most "
                             f"{MAX_REGEXES} are run in turn (each compiled one holds tens of kB)")
        if self.unicode not in (None, UNICODE_VERSION):
            raise VocabError(f"unicode={brief(self.unicode)}: only {UNICODE_VERSION!r} or None is available")
        for p in (*self.patterns, *self.byte_patterns):
            if not isinstance(p, str):
                raise VocabError(f"a pre-tokenizer regex must be a str, not {brief(p)}")
            if holds_surrogate(p):
                raise VocabError(f"the pre-tokenizer regex {brief(p)} holds a lone surrogate, which is not valid "
                                 "Unicode (bytes that are no UTF-8, from the command line?)")
        try:
            compiled = _core.Pretokenizer(list(self.patterns), list(self.byte_patterns))
        except _core.CoreVocabError as exc:
            raise VocabError(str(exc)) from None
        object.__setattr__(self, "_core", compiled)

    def __reduce__(self):
        return (Pretokenizer.from_json, (self.to_json(),))

    @classmethod
    def named(cls, name: str) -> Pretokenizer:
        """``gpt2``, ``gpt4``/``cl100k``, ``o200k`` or a GGUF ``tokenizer.ggml.pre`` name."""
        key = name.lower()
        if key in PATTERNS:
            return cls((PATTERNS[key],), name=key, space_split=True)
        if key in GGUF_PRETOKENIZERS:
            spec = GGUF_PRETOKENIZERS[key]
            return cls(spec.patterns, spec.byte_patterns, name=key, space_split=True)
        known = sorted({*PATTERNS, *GGUF_PRETOKENIZERS})
        raise VocabError(f"unknown pre-tokenizer {name!r}; known: {', '.join(known)}")

    @classmethod
    def coerce(cls, pattern: str | Sequence[str] | Pretokenizer) -> Pretokenizer:
        """A :class:`Pretokenizer` from a name, one regex, or a list of regexes. One plain word that
        is no name (``gpt-4``, ``llama-3``) is a :class:`VocabError` listing the names: as a regex
        it would match only that word, and every text would be one piece."""
        if isinstance(pattern, Pretokenizer):
            return pattern
        if isinstance(pattern, str):
            key = pattern.lower()
            if key in PATTERNS or key in GGUF_PRETOKENIZERS:
                return cls.named(key)
            if _NAME_LIKE.fullmatch(pattern):
                try:
                    return cls.named(pattern)  # raises, naming the known ones
                except VocabError as exc:
                    raise VocabError(f"{exc} (a regex that is one plain word would match only that word, "
                                     "so it is taken as a misspelt name)") from None
            return cls((pattern,))
        patterns = tuple(pattern)
        for p in patterns:
            if isinstance(p, str) and _NAME_LIKE.fullmatch(p):  # as for one string: a name, not a regex
                raise VocabError(f"a list of regexes holds the plain word {p!r}, which as a regex would match only "
                                 f"that word; a named pre-tokenizer is given alone (pattern={p!r}), not in a list")
        return cls(patterns)

    @property
    def has_byte_stage(self) -> bool:
        return bool(self.byte_patterns)

    @property
    def engines(self) -> list[str]:
        """How the core runs each regex: a named scanner (``o200k``, ``cl100k``, ``llama3``,
        ``qwen2``, ``gpt2``), ``regex`` (a DFA) or ``fancy-regex`` (backtracking)."""
        return self._core.stage_kinds()

    def split(self, text: str) -> list[str]:
        """The pieces of ``text`` after the text regexes (the whole pipeline if no byte stage)."""
        try:
            return self._core.split(text)
        except UnicodeEncodeError:  # lone surrogates: split as the text would be encoded
            return self._core.split(_replace_surrogates(text))
        except TypeError:
            raise VocabError(f"expected text (str), got {type(text).__name__}") from None
        except _core.CoreError as exc:
            raise VocabError(str(exc)) from None

    def split_bytes(self, text: str) -> list[bytes]:
        """The UTF-8 pieces of ``text`` after the whole pipeline, byte stage included."""
        try:
            return self._core.split_bytes(text)
        except UnicodeEncodeError:
            return self._core.split_bytes(_replace_surrogates(text))
        except TypeError:
            raise VocabError(f"expected text (str), got {type(text).__name__}") from None
        except _core.CoreError as exc:
            raise VocabError(str(exc)) from None

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "patterns": list(self.patterns),
            "byte_patterns": list(self.byte_patterns),
            "unicode": self.unicode,
            "space_split": self.space_split,
        }

    @classmethod
    def from_json(cls, data: dict) -> Pretokenizer:
        """The inverse of :meth:`to_json`. ``space_split`` is a promise about the regexes that
        a file cannot make: it holds only when they are a named pre-tokenizer's (tested ones)."""
        patterns, byte_patterns = data["patterns"], data.get("byte_patterns", [])
        for key, value in (("patterns", patterns), ("byte_patterns", byte_patterns)):
            if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
                raise VocabError(f"pretokenizer.{key} must be a list of regexes (strings)")
        name = data.get("name", "")
        if not isinstance(name, str):
            raise VocabError("pretokenizer.name must be a string")
        if not isinstance(data.get("space_split", False), bool):
            raise VocabError(f"pretokenizer.space_split must be true or false, not {brief(data['space_split'])}")
        named = None
        if name.lower() in PATTERNS or name.lower() in GGUF_PRETOKENIZERS:
            named = cls.named(name)
        same = named is not None and (named.patterns, named.byte_patterns) == (tuple(patterns), tuple(byte_patterns))
        return cls(
            tuple(patterns),
            tuple(byte_patterns),
            name=name,
            unicode=data.get("unicode", UNICODE_VERSION),
            space_split=same and named.space_split and bool(data.get("space_split", False)),
        )


def _replace_surrogates(text: str) -> str:
    """Lone surrogates cannot be UTF-8: each becomes U+FFFD (a valid pair its character), as in tiktoken."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


#: A pattern of these characters only is meant as a name (see :meth:`Pretokenizer.coerce`).
_NAME_LIKE = re.compile(r"[A-Za-z0-9_-]+")

#: Named single regexes for :class:`Pretokenizer` and ``ByteBPE.train(pattern=...)``.
PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "r50k": GPT2_PATTERN,
    "gpt4": CL100K_PATTERN,
    "cl100k": CL100K_PATTERN,
    "cl100k_base": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
    "o200k_base": O200K_PATTERN,
}


@dataclass(frozen=True)
class _Spec:
    patterns: tuple[str, ...]
    byte_patterns: tuple[str, ...] = ()
    ignore_merges: bool = False  # Hugging Face BPE "ignore_merges" (whole-piece lookup first)


_STARCODER = _Spec((r"\p{N}", _HF_GPT2))  # Digits(individual) then GPT-2 regex
#: GGUF ``tokenizer.ggml.pre`` -> pre-tokenizer (regex lists as in llama.cpp's llama-vocab.cpp;
#: where llama.cpp rewrites ``(?i:...)`` for std::regex, the original Hugging Face form is used).
GGUF_PRETOKENIZERS: dict[str, _Spec] = {
    "llama-bpe": _Spec((_LLAMA3,), ignore_merges=True),
    "llama3": _Spec((_LLAMA3,), ignore_merges=True),
    "llama-v3": _Spec((_LLAMA3,), ignore_merges=True),
    "dbrx": _Spec((_LLAMA3,)),
    "smaug-bpe": _Spec((_LLAMA3,)),
    "qwen2": _Spec((_QWEN2,)),
    "deepseek-r1-qwen": _Spec((_QWEN2,)),
    "stablelm2": _Spec((_QWEN2,)),
    "gpt-2": _Spec((_HF_GPT2,)),
    "mpt": _Spec((_HF_GPT2,)),
    "olmo": _Spec((_HF_GPT2,)),
    "phi-2": _Spec((_HF_GPT2,)),
    "jais": _Spec((_HF_GPT2,)),
    "falcon": _Spec((_PUNCT_RUN, _HF_GPT2, "[0-9][0-9][0-9]")),
    "deepseek-llm": _Spec(_DEEPSEEK_LLM),
    "deepseek-coder": _Spec(_DEEPSEEK_CODER),
    "starcoder": _STARCODER,
    "refact": _STARCODER,
    "command-r": _STARCODER,
    "smollm": _STARCODER,
    "codeshell": _STARCODER,
    "exaone": _STARCODER,
    "chatglm-bpe": _Spec((_LLAMA3,)),
    "glm4": _Spec((_LLAMA3,)),
}
