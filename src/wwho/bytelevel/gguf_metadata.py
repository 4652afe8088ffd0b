"""The key/value metadata of a GGUF file (llama.cpp's model format), read from its header.

:func:`read_metadata` reads the header (v2 or v3, either byte order) and stops before the tensors,
so a multi-gigabyte model costs no more than a vocab-only file. Of the header it reads what a
tokenizer uses (``tokenizer.*`` but string arrays other than the tokens and merges, the scalars and
strings of ``general.*``); every other value is walked over by the core (``_core.gguf_skip``)
without being read, and is known by its type and size only (:class:`Skipped`). It uses the ``gguf``
package's type codes and can delegate to ``gguf.GGUFReader`` (``engine="gguf"``), but parses itself
by default: GGUFReader builds a numpy view per array element, slow on a large vocabulary, where this
reader's string arrays are walked by the core (``_core.gguf_strings``). The tests check that both
give the same metadata. Errors name the file, the byte offset and the entry being read.

It deliberately does not make a tokenizer of the metadata (:mod:`wwho.bytelevel.gguf` does), nor
read tensors.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wwho import _core
from wwho.errors import VocabError, brief
from wwho.fileio import open_regular
from wwho.imports import import_module
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
class RawStrings:
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
        count no file could hold is refused at once, naming where it is, not after reading on; so
        is one that would take the header past :data:`MAX_HEADER_BYTES`)."""
        if not self.whole and end is not None and MAX_HEADER_BYTES < end <= self.size:
            return self.fail(f"{what or 'a value'} would take the metadata past {MAX_HEADER_BYTES >> 20} MiB "
                             "(more than any tokenizer needs)")
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

    def string_array(self, count: int, *, raw: bool = False) -> list[str] | RawStrings:
        """``count`` strings (the core walks them: a 256k-token vocabulary is 400k strings);
        with ``raw``, left undecoded for :func:`wwho.bytelevel.gguf.load_gguf`."""
        try:
            texts, end = _core.gguf_strings(self.buf, self.pos, count, self.endian == ">", decode=not raw)
        except _core.CoreGGUFError as exc:
            kind, index, *_, offset, _array = exc.args
            self.pos = offset
            if kind == "truncated":
                raise self.truncated(f"string {index} of an array of {count}") from None
            raise self.fail(f"string {index} of an array is not UTF-8") from None
        found = RawStrings(bytes(self.buf[self.pos : end]), count, self.endian == ">") if raw else texts
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
                if self.pos + 12 + count * least > min(self.size, MAX_HEADER_BYTES):
                    raise self.truncated(f"an array of {count:,} items", end=self.pos + 12 + count * least)
        elif kind == _T.STRING and self.pos + 8 <= len(self.buf):  # (so is a string's length)
            (n,) = struct.unpack_from(self.endian + "Q", self.buf, self.pos)
            if self.pos + 8 + n > min(self.size, MAX_HEADER_BYTES):
                raise self.truncated(f"a {n}-byte string", end=self.pos + 8 + n)
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
    return read_header(Path(path), engine, frozenset())


def read_header(path: Path, engine: str, raw_keys: frozenset[str]) -> dict[str, Any]:
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
