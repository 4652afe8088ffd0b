"""Byte-level BPE tokenizers from the metadata of GGUF files (llama.cpp's model format).

:func:`read_metadata` reads the key/value header of a GGUF file (v2 or v3, either byte
order) and stops before the tensors, so a multi-gigabyte model costs no more than a
vocab-only file. Of the header it reads what a tokenizer uses (``tokenizer.*`` but string arrays
other than the tokens and merges, the scalars and strings of ``general.*``); every other value is
walked over by the core (``_core.gguf_skip``) without being read, and is known by its type and
size only (:class:`Skipped`). It uses the ``gguf`` package's type codes and can delegate to
``gguf.GGUFReader`` (``engine="gguf"``), but parses itself by default: GGUFReader builds
a numpy view per array element, slow on a large vocabulary, where this reader's string arrays
are walked by the core (``_core.gguf_strings``). The tests check
that both give the same metadata.

:func:`load_gguf` turns ``tokenizer.ggml.*`` into a :class:`~wwho.bytelevel.model.ByteLevelModel`:
tokens are GPT-2 byte-level strings, merges are ``"a b"`` strings whose order is their
rank, and ``tokenizer.ggml.pre`` names the pre-tokenizer (see
:data:`wwho.bytelevel.pretokenize.GGUF_PRETOKENIZERS`). Token types: NORMAL -> ordinary token,
CONTROL/UNKNOWN -> special token, USER_DEFINED -> added token (always split out of
the text, as llama.cpp and Hugging Face do), UNUSED or non-byte-level text ->
decode-only. That loop, over 128k tokens and 280k merges for Llama 3, runs in the core
(``_core.gguf_vocab``, which also checks the merge list); its Python form is the reference the
tests compare it with (``tests/reference/gguf_py.py``). SentencePiece (``llama``), WordPiece
(``bert``) and other models are refused with a clear error: they are not byte-level BPE.

Not here: tensors, chat templates, SPM/WPM/UGM tokenizers.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wwho import _core
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import GGUF_PRETOKENIZERS, Pretokenizer, unicode_to_bytes
from wwho.bytelevel.validate import check_model, merge_problem, pretokenizer_option
from wwho.errors import VocabError, brief
from wwho.fileio import open_regular
from wwho.imports import import_module
from wwho.notices import warn
from wwho.sizes import MAX_VOCAB_SIZE

# numpy and gguf (which imports numpy and yaml) under the lock a fork waits for: a child forked while
# another thread imported them waited for ever at its own first GGUF file (wwho.imports)
np = import_module("numpy")
gguf = import_module("gguf")

_T = gguf.GGUFValueType
_SCALARS = {
    _T.UINT8: "B", _T.INT8: "b", _T.UINT16: "H", _T.INT16: "h", _T.UINT32: "I", _T.INT32: "i",
    _T.FLOAT32: "f", _T.BOOL: "?", _T.UINT64: "Q", _T.INT64: "q", _T.FLOAT64: "d",
}
_MODEL_KINDS = {
    "gpt2": "byte-level BPE",
    "llama": "SentencePiece (SPM)",
    "bert": "WordPiece (WPM)",
    "t5": "Unigram (UGM)",
    "rwkv": "RWKV",
    "plamo2": "PLaMo-2",
    "no_vocab": "no vocabulary",
    "none": "no vocabulary",
}


#: Arrays of arrays deeper than this are refused (tokenizer metadata has none).
MAX_ARRAY_DEPTH = 8
#: The header is read in a first piece of this many bytes, then in pieces four times as large
#: while it goes on, up to :data:`MAX_HEADER_BYTES`.
FIRST_READ = 16 << 20
#: Metadata longer than this is refused (far more than any tokenizer's vocabulary and merges take).
MAX_HEADER_BYTES = 256 << 20
#: More metadata entries than this are refused: a model's file holds a few hundred, and each entry
#: read costs a Python object (millions of one-byte entries would take minutes and gigabytes).
MAX_METADATA_ENTRIES = 1 << 16
#: llama.cpp's token types (``llama_token_type``; 0, UNDEFINED, is never written by its converters).
NORMAL, BYTE = 1, 6
TOKEN_TYPES = "1 NORMAL, 2 UNKNOWN, 3 CONTROL, 4 USER_DEFINED, 5 UNUSED, 6 BYTE"


class GGUFError(VocabError):
    """A GGUF file is unreadable, truncated, or lacks a needed key (names file, key, offset)."""


@dataclass(frozen=True)
class Skipped:
    """A metadata value the tokenizer does not need, walked over without being read (see
    :func:`read_metadata`): its GGUF ``type`` (``"uint32"``, ``"string"``, ``"array[array]"``...),
    its ``size`` in bytes in the file, and for an array its item ``count``."""

    type: str
    size: int
    count: int | None = None

    def __str__(self) -> str:
        items = "" if self.count is None else f"{self.count:,} items, "
        return f"{self.type} ({items}{self.size:,} bytes, not read)"


#: The string arrays a tokenizer is made of; any other is walked over (each string read would be a
#: Python object: a hostile array of millions of empty strings costs memory and seconds).
STRING_ARRAYS = frozenset({"tokenizer.ggml.tokens", "tokenizer.ggml.merges"})


def _needed(key: str, kind: int, item: int | None) -> bool:
    """Whether :func:`read_metadata` reads the value of ``key`` (of type ``kind``; ``item``: the
    type of an array's items): ``tokenizer.*`` and the scalars and strings of ``general.*``, except
    arrays of arrays, which no tokenizer key is, and string arrays other than :data:`STRING_ARRAYS`."""
    if item == _T.ARRAY or (item == _T.STRING and key not in STRING_ARRAYS):
        return False
    return key.startswith("tokenizer.") or (key.startswith("general.") and kind != _T.ARRAY)


def _type_name(kind: int) -> str:
    return _T(kind).name.lower()


@dataclass(frozen=True)
class _Raw:
    """A string array left undecoded: its ``count`` length-prefixed strings, as in the file."""

    data: bytes
    count: int
    big_endian: bool


class _MoreNeeded(Exception):
    """The header goes on past the part of the file read so far."""


class _Reader:
    """Sequential little/big-endian reader over the first bytes of a file (all of them where
    ``whole``), with offsets in its errors."""

    def __init__(self, buf: bytes, path: Path, *, whole: bool = True, size: int | None = None) -> None:
        self.buf, self.path, self.pos, self.endian = buf, path, 0, "<"
        self.whole = whole
        self.size = len(buf) if size is None else size  # of the whole file
        self.context = "header"

    def fail(self, what: str) -> GGUFError:
        return GGUFError(f"{self.path}: {what} at byte offset {self.pos} (while reading {self.context})")

    def truncated(self, what: str = "", end: int | None = None) -> Exception:
        """The file ends here: an error, or, where only its first bytes were read, more to read;
        never more where what is read would end at ``end``, past the end of the whole file (a
        count no file could hold is refused at once, naming where it is, not after reading on)."""
        if not self.whole and (end is None or end <= self.size):
            return _MoreNeeded()
        return self.fail("file is truncated" + (f" ({what})" if what else ""))

    def unpack(self, fmt: str) -> Any:
        size = struct.calcsize(self.endian + fmt)
        if self.pos + size > len(self.buf):
            raise self.truncated(end=self.pos + size)
        (value,) = struct.unpack_from(self.endian + fmt, self.buf, self.pos)
        self.pos += size
        return value

    def string(self) -> str:
        raw = self.raw_string()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail("string is not UTF-8") from None

    def raw_string(self) -> bytes:
        n = self.unpack("Q")
        if self.pos + n > len(self.buf):
            raise self.truncated(f"a {n}-byte string", end=self.pos + n)
        raw = self.buf[self.pos : self.pos + n]
        self.pos += n
        return raw

    def string_array(self, count: int, *, raw: bool = False) -> list[str] | _Raw:
        """``count`` strings (the core walks them: a 256k-token vocabulary is 400k strings);
        with ``raw``, left undecoded for :func:`load_gguf`."""
        try:
            texts, end = _core.gguf_strings(self.buf, self.pos, count, self.endian == ">", decode=not raw)
        except _core.CoreGGUFError as exc:
            kind, index, *_, offset, _array = exc.args
            self.pos = offset
            if kind == "truncated":
                raise self.truncated(f"string {index} of an array of {count}") from None
            raise self.fail(f"string {index} of an array is not UTF-8") from None
        found = _Raw(bytes(self.buf[self.pos : end]), count, self.endian == ">") if raw else texts
        self.pos = end
        return found

    def array_item(self) -> int | None:
        """The item type of the array that starts here (None if the file ends first)."""
        if self.pos + 4 > len(self.buf):
            return None
        return struct.unpack_from(self.endian + "I", self.buf, self.pos)[0]

    def value(self, kind: int, *, raw: bool = False) -> Any:
        """A scalar, a string or an array of either (an array of arrays is never read: see :meth:`skip`).
        Nothing is allocated before the file is known to hold it: a string array's count is
        checked as the core walks it, a number array's before it is copied."""
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _T.STRING:
            return self.string()
        if kind == _T.ARRAY:
            item, count = self.unpack("I"), self.unpack("Q")
            if item == _T.STRING:
                if count > MAX_VOCAB_SIZE:  # (tokens or merges: refused before the core walks them)
                    raise self.fail(f"an array of {count:,} strings, more than the {MAX_VOCAB_SIZE:,} tokens "
                                    "a vocabulary has at most")
                if self.pos + 8 * count > self.size:  # each string has its 8-byte length at least
                    raise self.truncated(f"an array of {count:,} strings", end=self.pos + 8 * count)
                return self.string_array(count, raw=raw)
            if item in _SCALARS:
                dtype = np.dtype(self.endian + _SCALARS[item])
                if count > (len(self.buf) - self.pos) // dtype.itemsize:
                    raise self.truncated(f"an array of {count} items", end=self.pos + count * dtype.itemsize)
                array = np.frombuffer(self.buf, dtype=dtype, count=count, offset=self.pos).copy()
                self.pos += dtype.itemsize * count
                return array
            raise self.fail(f"unknown value type {item} (the items of an array)")
        raise self.fail(f"unknown value type {kind}")

    def skip(self, kind: int) -> Skipped:
        """Walk over a value of type ``kind`` without reading it (the core walks arrays: linear
        in their bytes, with no object per item; at most :data:`MAX_ARRAY_DEPTH` deep)."""
        start, name, count = self.pos, None, None
        if kind == _T.ARRAY and self.pos + 12 <= len(self.buf):
            item, count = struct.unpack_from(self.endian + "IQ", self.buf, self.pos)
            if item in _SCALARS or item in (_T.STRING, _T.ARRAY):
                name = f"array[{_type_name(item)}]"
                # The least each item takes: a count the rest of the file cannot hold is refused now,
                # not after reading on to the end of a model's file.
                least = struct.calcsize(_SCALARS[item]) if item in _SCALARS else 8 if item == _T.STRING else 12
                if self.pos + 12 + count * least > self.size:
                    raise self.truncated(f"an array of {count:,} items", end=self.pos + 12 + count * least)
        try:
            end = _core.gguf_skip(self.buf, self.pos, kind, self.endian == ">", MAX_ARRAY_DEPTH)
        except _core.CoreGGUFError as exc:
            what, *rest, offset = exc.args
            self.pos = offset
            if what == "past":
                raise self.truncated() from None
            if what == "deep":
                raise self.fail(f"arrays nested more than {MAX_ARRAY_DEPTH} deep") from None
            raise self.fail(f"unknown value type {rest[0]}") from None
        self.pos = end
        return Skipped(name or _type_name(kind), end - start, count)


def command_line_pretokenizer(path: str | Path, pattern: str | None) -> str | None:
    """``--pattern`` for a GGUF file: the pre-tokenizer of one that has no ``tokenizer.ggml.pre``
    (older conversions) or names one wwho does not know, refused for one that names a known one,
    which it would silently replace."""
    if pattern is None:
        return None
    pre = read_metadata(path).get("tokenizer.ggml.pre")
    if pre is not None and (not isinstance(pre, str) or pre in GGUF_PRETOKENIZERS):
        raise GGUFError(f"{path}: names its pre-tokenizer (tokenizer.ggml.pre = {brief(pre)}); --pattern "
                        "(pattern=) is for a GGUF file that has none, or a .tiktoken file")
    return pattern


def read_metadata(path: str | Path, *, engine: str = "fast") -> dict[str, Any]:
    """The key/value metadata of a GGUF file, every key in file order.

    What a tokenizer uses is read: ``tokenizer.*`` and the scalars and strings of ``general.*``
    (arrays of numbers as numpy arrays; of strings, only the tokens and merges, as lists). Every
    other value (the model's hyper-parameters, ``general.*`` arrays, any array of arrays) is walked
    over without being read and is a :class:`Skipped` (its type and size): a hostile value costs
    time linear in its bytes and no memory of its own, where reading it would make a Python object
    per item. ``engine="gguf"`` reads every value with ``gguf.GGUFReader`` (slow, unbounded:
    for comparisons only).
    """
    return _read(Path(path), engine, frozenset())


def _read(path: Path, engine: str, raw_keys: frozenset[str]) -> dict[str, Any]:
    """:func:`read_metadata`, leaving the string arrays of ``raw_keys`` undecoded (fast engine)."""
    if engine == "gguf":
        return _read_with_gguf(path)
    # A regular file only (a FIFO would block, a device never ends), never read whole: its first
    # bytes, then more while the header goes on. Read, not mapped: a mapped file that another
    # program shortens kills the process with SIGBUS, where a read sees a shorter file.
    f = open_regular(path, error=GGUFError, what="GGUF file")
    try:
        with f:
            size = f.seek(0, 2)
            if size < 24:
                raise GGUFError(f"{path}: {size} bytes is too short for a GGUF header")
            want = min(size, FIRST_READ)
            while True:
                f.seek(0)
                buf = f.read(want)
                try:
                    return _parse(_Reader(buf, path, whole=len(buf) < want or want == size, size=size), raw_keys)
                except _MoreNeeded:
                    if want >= MAX_HEADER_BYTES:
                        raise GGUFError(f"{path}: the metadata goes on past {MAX_HEADER_BYTES >> 20} MiB, "
                                        "more than any tokenizer's") from None
                    want = min(size, 4 * want, MAX_HEADER_BYTES)
    except OSError as exc:
        raise GGUFError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _parse(r: _Reader, raw_keys: frozenset[str]) -> dict[str, Any]:
    if r.buf[:4] != b"GGUF":
        raise GGUFError(f"{r.path}: not a GGUF file (magic {bytes(r.buf[:4])!r}, expected b'GGUF')")
    r.pos = 4
    version = r.unpack("I")
    if version & 0xFFFF == 0:  # written big-endian
        r.endian = ">"
        version = struct.unpack(">I", struct.pack("<I", version))[0]
    if version not in (2, 3):
        read = " (read as a big-endian file's: its low bytes are 0)" if r.endian == ">" else ""
        raise GGUFError(f"{r.path}: GGUF version {version}{read} is not supported (only 2 and 3)")
    r.unpack("Q")  # tensor count
    n_kv = r.unpack("Q")
    if n_kv > MAX_METADATA_ENTRIES:
        raise GGUFError(f"{r.path}: the header says {n_kv:,} metadata entries, more than the "
                        f"{MAX_METADATA_ENTRIES:,} wwho reads (a model's file has a few hundred)")
    metadata: dict[str, Any] = {}
    previous = None
    for index in range(n_kv):
        r.context = f"metadata entry {index}"
        key = r.string()
        # What is read as a key here may be the end of the value before it, where that value's count
        # was wrong (a token read as a key name): the key before is named too.
        after = f", after {previous!r}" if previous is not None else ""
        r.context = f"metadata entry {index}, key {key!r}{after}"
        previous = key
        if key in metadata:  # which of the two would a reader take? llama.cpp refuses it too
            raise r.fail(f"the key {brief(key)} appears twice")
        kind = r.unpack("I")
        if _needed(key, kind, r.array_item() if kind == _T.ARRAY else None):
            metadata[key] = r.value(kind, raw=key in raw_keys)
        else:
            metadata[key] = r.skip(kind)
    return metadata


def _read_with_gguf(path: Path) -> dict[str, Any]:
    try:
        reader = gguf.GGUFReader(path)
    except Exception as exc:  # noqa: BLE001 -- the reader raises ValueError, IndexError, ... on bad files
        raise GGUFError(f"{path}: gguf.GGUFReader cannot read it: {exc}") from None
    out: dict[str, Any] = {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        if field.types[0] == _T.ARRAY and field.types[-1] in _SCALARS:
            out[key] = np.array([field.parts[i][0] for i in field.data])
        elif field.types[0] == _T.ARRAY and field.types[-1] == _T.STRING:
            out[key] = _utf8(path, key, [bytes(field.parts[i]) for i in field.data])
        else:
            try:
                out[key] = field.contents()
            except UnicodeDecodeError as exc:  # (gguf decodes a string with no handler)
                raise GGUFError(f"{path}: {key}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    return out


#: At most this many NORMAL tokens of several bytes that no merge makes, and at most this share of the
#: tokens, are taken as they are: llama.cpp and HF load such a file (``ggml-vocab-aquila.gguf`` has one,
#: ``<|endoftext|>`` as NORMAL), and the encoder never produces such a token. More is a merge list cut
#: short, which would silently encode differently.
MAX_LOST, MAX_LOST_SHARE = 16, 0.001


def _few_lost(problem: tuple, tokens: int, path: Path) -> bool:
    """Whether the core's merges finding is a few tokens no merge makes (warned about), not a fault."""
    if problem[0] != "lost" or problem[1] > min(MAX_LOST, MAX_LOST_SHARE * tokens):
        return False

    from wwho.errors import WwhoWarning

    _, count, first, id_ = problem
    warn(f"{path}: {count} NORMAL token(s) of several bytes are the result of no merge, e.g. "
         f"{brief(first.decode('utf-8', 'backslashreplace'))} (id {id_}): they decode, and encoding never "
         "produces them (as in llama.cpp)", WwhoWarning)
    return True


def _utf8(path: Path, key: str, strings: list[bytes]) -> list[str]:
    """The strings of an array, a GGUFError naming ``key`` and the item where one is not UTF-8."""
    out = []
    for n, raw in enumerate(strings):
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise GGUFError(f"{path}: {key}: string {n} of the array is not UTF-8 ({exc.reason} at its byte "
                            f"{exc.start})") from None
    return out


def describe(path: str | Path) -> dict[str, Any]:
    """A short summary of a GGUF tokenizer; ``skipped``: the keys it does not need, each as its type
    and size (:class:`Skipped`), never their values."""
    meta = read_metadata(path)
    types = meta.get("tokenizer.ggml.token_type")
    counts = {}
    if isinstance(types, np.ndarray) and types.dtype.kind in "iu":
        for t in gguf.TokenType:
            counts[t.name.lower()] = int((types == t.value).sum())
    elif types is not None:
        raise GGUFError(f"{path}: tokenizer.ggml.token_type must be an array of integers, not {brief(types)}")

    def strings(key: str) -> int:
        value = meta.get(f"tokenizer.ggml.{key}")
        return 0 if value is None else _strings(Path(path), key, value).count

    return {
        "model": meta.get("tokenizer.ggml.model"),
        "pre": meta.get("tokenizer.ggml.pre"),
        "tokens": strings("tokens"),
        "merges": strings("merges"),
        "token_types": counts,
        "bos_token_id": meta.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": meta.get("tokenizer.ggml.eos_token_id"),
        "add_bos_token": meta.get("tokenizer.ggml.add_bos_token"),
        "skipped": {key: str(value) for key, value in meta.items() if isinstance(value, Skipped)},
    }



def _strings(path: Path, key: str, value: Any) -> _Raw:
    """``tokenizer.ggml.<key>`` as a raw string array (the ``gguf`` engine gives a list: packed)."""
    if isinstance(value, _Raw):
        return value
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        data = b"".join(len(b).to_bytes(8, "little") + b for b in (t.encode("utf-8") for t in value))
        return _Raw(data, len(value), False)
    raise GGUFError(f"{path}: tokenizer.ggml.{key} must be an array of strings")


def _vocab_error(path: Path, args: tuple) -> GGUFError:
    """The core's finding about the tokenizer arrays, worded with the file and the entry."""
    kind, *rest = args
    if kind == "twice":
        text, first, second = rest
        return GGUFError(f"{path}: token {text!r} appears twice (ids {first} and {second})")
    if kind == "no_space":
        rank, line = rest
        return GGUFError(f"{path}: tokenizer.ggml.merges[{rank}] = {brief(line)} has no space")
    if kind == "not_token":
        rank, line, part = rest
        return GGUFError(f"{path}: tokenizer.ggml.merges[{rank}] = {brief(line)}: {brief(part)} is not a token")
    index, *_, array = rest
    what = "is not UTF-8" if kind == "utf8" else "runs past the end of the array"
    return GGUFError(f"{path}: tokenizer.ggml.{array}[{index}] {what}")


def _check_repeats(path: Path, types: list[int], ranks: dict[bytes, int], special: dict[str, int],
                   added: dict[str, int], extra: dict[int, bytes]) -> None:
    """Refuse two tokens with the same text that encoding could both produce.

    The core has refused two special or added tokens with one text, and kept a repeated ordinary
    token as decode-only. Here: an ordinary (NORMAL or BYTE) token that repeats an earlier one's
    byte-level text, and a special or added token whose text is also an ordinary token's, are
    errors naming both ids (llama.cpp stops on every repeated text; a Hugging Face vocabulary, a
    dict, cannot hold one). Repeats that encoding never produces stay allowed, decode-only: of an
    UNUSED token, of empty text, of text that is not byte-level. Costs one look-up per special,
    added and decode-only token.
    """
    def twice(text: str, ids: tuple[int, int]) -> GGUFError:
        first, second = sorted(ids)
        return GGUFError(f"{path}: token {text!r} appears twice (ids {first} and {second})")

    for i, raw in extra.items():
        if types[i] in (NORMAL, BYTE):
            text = raw.decode("utf-8")
            data = unicode_to_bytes(text)
            if data and data in ranks:
                raise twice(text, (ranks[data], i))
    for named in (special, added):
        for text, i in named.items():
            data = unicode_to_bytes(text)
            if data and data in ranks:
                raise twice(text, (ranks[data], i))


def load_gguf(
    path: str | Path, *, pretokenizer: str | Pretokenizer | None = None, engine: str = "fast"
) -> ByteLevelModel:
    """A merges-rule model from a GGUF file's tokenizer metadata.

    ``pretokenizer`` overrides ``tokenizer.ggml.pre`` (needed when the file has none).
    """
    path = Path(path)
    meta = _read(path, engine, STRING_ARRAYS)  # (handed to the core undecoded)

    def need(key: str) -> Any:
        if key not in meta:
            raise GGUFError(f"{path}: missing key {key!r}")
        return meta[key]

    def typed(key: str, kind: type, default: Any = None) -> Any:
        value = meta.get(key, default)
        if value is not None and type(value) is not kind:
            raise GGUFError(f"{path}: {key} must be a {kind.__name__}, not {brief(value)}")
        return value

    model = need("tokenizer.ggml.model")
    if not isinstance(model, str):
        raise GGUFError(f"{path}: tokenizer.ggml.model must be a string, not {brief(model)}")
    if model != "gpt2":
        kind = _MODEL_KINDS.get(model, "unknown")
        raise GGUFError(
            f"{path}: tokenizer.ggml.model is {model!r} ({kind}); ByteBPE supports only byte-level BPE "
            f"models ('gpt2')"
        )
    pre = typed("tokenizer.ggml.pre", str)
    if pretokenizer is None:
        if pre is None:
            raise GGUFError(f"{path}: no 'tokenizer.ggml.pre' key, so its pre-tokenizer must be given: pass "
                            f"pretokenizer= (known: {', '.join(sorted(GGUF_PRETOKENIZERS))}; or a regex), or --pattern "
                            "on the command line")
        if pre not in GGUF_PRETOKENIZERS:
            raise GGUFError(
                f"{path}: unknown pre-tokenizer tokenizer.ggml.pre={brief(pre)}; "
                f"known: {', '.join(sorted(GGUF_PRETOKENIZERS))}. To load it with one of them (or a regex), "
                "pass pretokenizer= (command line: --pattern)"
            )
        spec = GGUF_PRETOKENIZERS[pre]
        pretok, ignore_merges = Pretokenizer.named(pre), spec.ignore_merges
    else:
        pretok = pretokenizer_option(pretokenizer, "pretokenizer")
        ignore_merges = pretok.name in GGUF_PRETOKENIZERS and GGUF_PRETOKENIZERS[pretok.name].ignore_merges
    tokens = _strings(path, "tokens", need("tokenizer.ggml.tokens"))
    merges_raw = _strings(path, "merges", need("tokenizer.ggml.merges"))
    types = meta.get("tokenizer.ggml.token_type")
    if types is None:
        types = np.full(tokens.count, gguf.TokenType.NORMAL, dtype=np.int32)
    if not isinstance(types, np.ndarray) or types.dtype.kind not in "iu":
        raise GGUFError(f"{path}: tokenizer.ggml.token_type must be an array of integers")
    if len(types) != tokens.count:  # (longer: types of no token, which llama.cpp's writers never make)
        raise GGUFError(
            f"{path}: tokenizer.ggml.token_type has {len(types)} entries for {tokens.count} tokens"
        )
    types = types.astype(np.int64)
    unknown = np.flatnonzero((types < 1) | (types > 6))
    if unknown.size:
        first = int(unknown[0])
        raise GGUFError(
            f"{path}: tokenizer.ggml.token_type[{first}] = {int(types[first])} is not a token type "
            f"({TOKEN_TYPES}); {unknown.size:,} such {'entry' if unknown.size == 1 else 'entries'}"
        )
    types = types.tolist()
    try:
        ranks, special, added, extra, merges, problem = _core.gguf_vocab(
            tokens.data, tokens.count, types, merges_raw.data, merges_raw.count, tokens.big_endian)
    except _core.CoreGGUFError as exc:
        raise _vocab_error(path, exc.args) from None
    _check_repeats(path, types, ranks, special, added, extra)
    n_tokens = tokens.count
    if not ranks:
        raise GGUFError(f"{path}: none of its {n_tokens:,} tokens is NORMAL or BYTE by "
                        f"tokenizer.ggml.token_type ({TOKEN_TYPES}), so byte-level BPE has nothing to merge")

    def token_id(key: str) -> int | None:
        value = meta.get(key)
        if value is None:
            return None
        if type(value) is not int or not 0 <= value < n_tokens:
            raise GGUFError(f"{path}: {key} is {brief(value)}, not a token id (0..{n_tokens - 1})")
        return value

    add_bos = typed("tokenizer.ggml.add_bos_token", bool)
    bos_id = token_id("tokenizer.ggml.bos_token_id")
    model_data = ByteLevelModel(
        ranks,
        pretok,
        special_tokens=special,
        merges=merges,
        ignore_merges=ignore_merges,
        added_tokens=added,
        extra_tokens=extra,
        bos_id=bos_id,
        eos_id=token_id("tokenizer.ggml.eos_token_id"),
        add_bos=bool(add_bos) if add_bos is not None else ignore_merges and pre is not None and bos_id is not None,
        add_eos=typed("tokenizer.ggml.add_eos_token", bool, False),
        name=typed("general.name", str) or pre or path.stem,
    )
    try:
        check_model(model_data, str(path), merges_checked=True)
        if problem is not None and not _few_lost(problem, len(ranks), path):
            raise merge_problem(model_data, str(path), problem)
    except GGUFError:
        raise
    except VocabError as exc:
        hint = ""
        if "tokenizer.ggml.token_type" not in meta:  # every token was taken for NORMAL: say so
            hint = ("; this file has no tokenizer.ggml.token_type, so every token counts as NORMAL, special "
                    "ones too (llama.cpp's converters write it, with special tokens CONTROL)")
        raise GGUFError(f"{exc}{hint}") from None
    return model_data
