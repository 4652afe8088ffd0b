"""Tokenizer evaluation: how many tokens a text costs and how well tokens respect the script.

``load_spec(spec)`` turns a SPEC into an :class:`Evaluated` tokenizer:

| SPEC | tokenizer |
|---|---|
| a wwho directory or file (``vocab.json``, meta directory, ``.gguf``, ``.tiktoken``, ``tokenizer.json``) | :func:`wwho.load_tokenizer` |
| ``tiktoken:NAME`` | tiktoken's encoding (offline via ``WWHO_TIKTOKEN_FILE``) |
| ``hf:PATH`` | HF ``tokenizers`` ``Tokenizer.from_file(PATH)`` as is |
| ``spm:MODEL`` | a SentencePiece model (optional extra ``sentencepiece``) |

``evaluate(tokenizer, lines)`` measures, per corpus (:class:`Metrics`): tokens per
whitespace word (fertility), UTF-8 bytes and characters per token, the share of token
boundaries that fall inside an extended grapheme cluster (``regex`` ``\\X``) and inside a
schema syllable (Indic runs found by the router, syllabified by their schema), the
byte-fallback/UNK rate, the number of distinct ids used, and the share of lines that
decode back exactly. For SGPE and meta tokenizers it also counts the boundaries inside a
syllable that the vocabulary knows, with or without its leading space (``known_syllable_cuts``:
the integrity wwho promises, 0 unless something is wrong), and for a ``wwho extend`` directory
those inside a syllable the extension built; other tokenizers have no syllable vocabulary, and
that count is None. Boundaries are measured in UTF-8 byte offsets from each token's
bytes (wwho, tiktoken), HF's character offsets, or SentencePiece's decoded prefixes (lines
that SentencePiece normalizes are not measured, and counted). ``parity(a, b)`` compares
token counts of line-aligned corpora (FLORES, NTREX). ``inside_offsets(text)`` is the cut
structure of one text (``wwho serve`` draws it), as flag bytes: a line costs a few times its size.

A binary tokenizer (bytes in) is refused when loaded; ``hf:`` and ``spm:`` files are read here
(regular files only, bounded by :func:`wwho.fileio.max_file_bytes`). ``evaluate_all`` refuses a
corpus or tokenizer given twice and a corpus without text. Names in messages go through
:func:`wwho.errors.printable`.

Output formats (table, Markdown, JSON, plot) live in :mod:`wwho.cli.eval`.
"""

from __future__ import annotations

import os
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbcSet
from dataclasses import asdict, dataclass, field
from itertools import accumulate
from pathlib import Path

import regex

from wwho.cache import ENTRY_OVERHEAD, PieceCache
from wwho.corpus import MAX_LINE_BYTES, check_max_line_bytes
from wwho.errors import CorpusError, TokenizerError, VocabError, WwhoError, WwhoWarning, brief, printable
from wwho.fileio import read_bytes
from wwho.graphemes import cluster_bounds
from wwho.notices import warn
from wwho.syllables import Syllabifier

#: encode(text) -> (ids, token end offsets in UTF-8 bytes, or None when unknown); the offsets are any
#: sequence of ints (an ``array`` for a long line)
Encoder = Callable[[str], tuple[list[int], Sequence[int] | None]]


@dataclass
class Evaluated:
    """A tokenizer under evaluation, whatever its origin."""

    name: str
    encode: Encoder
    decode: Callable[[list[int]], str]
    is_fallback: Callable[[int], bool]
    vocab_size: int
    #: id -> the token's bytes where the tokenizer defines them (wwho kinds, tiktoken), else None
    token_bytes: Callable[[int], bytes] | None = None
    #: (line, token end offsets) -> boundaries inside a syllable the vocabulary knows (SGPE, meta)
    known_cuts: Callable[[str, Sequence[int]], int] | None = None


@dataclass
class Metrics:
    tokenizer: str
    corpus: str
    lines: int = 0
    words: int = 0
    chars: int = 0
    bytes: int = 0
    tokens: int = 0
    boundaries: int = 0
    boundaries_in_cluster: int = 0
    boundaries_in_syllable: int = 0
    #: boundaries inside a syllable the vocabulary knows, bare or after a space (None: no syllable
    #: vocabulary, or a line without offsets)
    known_syllable_cuts: int | None = None
    unmeasured_lines: int = 0
    fallback_tokens: int = 0
    lossless_lines: int = 0
    vocab_used: int = 0
    vocab_size: int = 0
    parity: float | None = None
    ids_used: set = field(default_factory=set, repr=False)

    # A ratio over no words or no tokens is not measured (None: "-" in the table, null in JSON), not a
    # zero that would read as measured (a corpus of spaces has tokens and no words).
    @property
    def fertility(self) -> float | None:
        return self.tokens / self.words if self.words else None

    @property
    def bytes_per_token(self) -> float | None:
        return self.bytes / self.tokens if self.tokens else None

    @property
    def chars_per_token(self) -> float | None:
        return self.chars / self.tokens if self.tokens else None

    @property
    def cluster_cut_rate(self) -> float | None:
        return self.boundaries_in_cluster / self.boundaries if self.boundaries else None

    @property
    def syllable_cut_rate(self) -> float | None:
        return self.boundaries_in_syllable / self.boundaries if self.boundaries else None

    @property
    def fallback_rate(self) -> float | None:
        return self.fallback_tokens / self.tokens if self.tokens else None  # (over no token: not measured)

    @property
    def lossless_rate(self) -> float:
        return self.lossless_lines / self.lines if self.lines else 0.0

    def to_json(self) -> dict:
        data = asdict(self)
        data.pop("ids_used")
        for name in ("fertility", "bytes_per_token", "chars_per_token", "cluster_cut_rate", "syllable_cut_rate",
                     "fallback_rate", "lossless_rate"):
            data[name] = getattr(self, name)
        return data


# -- loading ------------------------------------------------------------------------------

def load_spec(spec: str, *, pattern: str | None = None) -> Evaluated:
    """Load a tokenizer from a SPEC (see the module docstring); unknown specs are a clear error."""
    kind, _, rest = spec.partition(":")
    if kind == "tiktoken" and rest:
        return _tiktoken(rest)
    if kind == "hf" and rest:
        return _hf(rest, spec)
    if kind == "spm" and rest:
        return _spm(rest, spec)
    path = Path(spec)
    if not path.exists():
        raise VocabError(f"{printable(spec)}: not a file or directory, nor tiktoken:NAME, hf:PATH or spm:MODEL")
    from wwho.loading import detect_kind, load_tokenizer

    kind = detect_kind(path)
    if kind == "binary":  # its encode takes bytes: every line would fail
        json_file = path if path.is_file() else path / "tokenizer.json"
        raise VocabError(f"{printable(spec)}: is a binary tokenizer (bytes in, bytes out); wwho eval and wwho serve "
                         f"take text tokenizers: give hf:{printable(str(json_file))} to take it as a plain HF "
                         "tokenizer of text")
    evaluated = _native(load_tokenizer(path, kind=kind, pattern=pattern), spec)
    if evaluated.known_cuts is None:
        evaluated.known_cuts = _extension_cuts(path)
    return evaluated


def _extension_cuts(path: Path) -> Callable[[str, Sequence[int]], int] | None:
    """For a ``wwho extend`` directory: a count of the token boundaries inside a syllable it built
    (the known syllables of its ``wwho_extend.json``, in the script words the extension cuts out,
    as its own check counts them: :func:`wwho.extend.verify.cuts_at`). None for anything else, and
    for an extension of a script given as a schema file (its record names the script only)."""
    if not (path.is_dir() and (path / "wwho_extend.json").is_file()):
        return None
    from wwho.errors import SchemaError
    from wwho.extend.files import read_record
    from wwho.extend.scripts import ScriptSet
    from wwho.extend.verify import cuts_at

    record = read_record(path)
    names, known = record.get("scripts"), record.get("known_syllables")
    if not (_strings(names) and _strings(known)):
        raise VocabError(f"{printable(str(path / 'wwho_extend.json'))}: 'scripts' and 'known_syllables' "
                         "must be lists of strings")
    try:
        scripts = ScriptSet(names)
    except (SchemaError, VocabError):
        return None
    known = set(known)
    return lambda line, ends: sum(inside for *_, inside in cuts_at(line, set(ends), scripts, known))


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _ends(pieces: Iterable[bytes]) -> array:
    """The running total of the pieces' lengths: an array, not a list of int objects (a long line
    has millions of ends)."""
    return array("q", accumulate(map(len, pieces)))


def _char_starts(text: str) -> array:
    """The UTF-8 offset of each code point of ``text``, and the text's length last."""
    return array("q", accumulate((len(ch.encode("utf-8", "surrogatepass")) for ch in text), initial=0))


def _native(tok, name: str) -> Evaluated:
    if hasattr(tok, "token_bytes"):
        token_bytes = tok.token_bytes

        dummy = 1 if getattr(tok, "prefix_space", False) else 0  # SGPE's dummy space is not in the text

        # Special-token text in a corpus line is ordinary text, as for tiktoken:NAME (else one
        # "<|endoftext|>" in a corpus would end the evaluation of a byte-level or meta tokenizer).
        encode_text = getattr(tok, "encode_ordinary", tok.encode)

        def encode(text: str):
            ids = encode_text(text)
            ends = _ends(token_bytes(i) for i in ids)
            return ids, array("q", (max(e - dummy, 0) for e in ends)) if dummy and text else ends
    elif hasattr(tok, "tokenizer"):  # the HF adapter of wwho.loading
        return _hf_object(tok.tokenizer, name)
    else:
        def encode(text: str):
            return tok.encode(text), None
    fallback_ids = set()
    sgpe = getattr(tok, "sgpe", None)  # a meta tokenizer: its SGPE part's fallback tokens, shifted
    vocab, offset = (sgpe.vocab, tok.offset) if sgpe is not None else (getattr(tok, "vocab", None), 0)
    if isinstance(vocab, Mapping):  # (an SGPE vocabulary: a read-only view)
        fallback_ids = {offset + i for t, i in vocab.items() if t.startswith("<0x") and len(t) == 6 or t == "[UNK]"}
    return Evaluated(name, encode, tok.decode, fallback_ids.__contains__, int(tok.vocab_size),
                     getattr(tok, "token_bytes", None), _known_cuts(tok))


def _known_cuts(tok) -> Callable[[str, Sequence[int]], int] | None:
    """For an SGPE tokenizer (or a meta tokenizer's SGPE part): a count of the token boundaries
    strictly inside a syllable of a word that the vocabulary knows, as it is or with a leading space
    (of a syllable known only bare, the boundary right after its space is no cut). The syllables are
    the tokenizer's own splitter's, so they are the units its encoder never cuts. The count takes
    the line and its tokens' ends (UTF-8 offsets, increasing). None for other kinds."""
    sgpe = getattr(tok, "sgpe", tok)  # a meta tokenizer's Indic runs are its SGPE part's
    splitter, vocab = getattr(sgpe, "splitter", None), getattr(sgpe, "vocab", None)
    if splitter is None or not isinstance(vocab, Mapping):
        return None
    dummy = 1 if getattr(sgpe, "prefix_space", False) else 0
    import re

    from wwho.codepoints import char_class
    from wwho.words import word_char_sets

    # What may start a word of the splitter's (its scripts' characters and, for most schemas, other
    # Brahmic scripts' consonants): a line with none has no word, so nothing to cut, and a long
    # line of other text is not split into units one by one.
    may_start_word = re.compile(char_class(word_char_sets(tuple(splitter.scripts))[0])).search

    def count(line: str, ends: Sequence[int]) -> int:
        if may_start_word(line) is None:
            return 0
        text, pos = (" " + line, -1) if dummy and line else (line, 0)  # offsets in `line`
        cuts = 0
        for is_word, units in splitter.split(text):
            for unit in units:
                n = _utf8_len(unit)
                if is_word:
                    if unit in vocab or (unit[:1] != " " and " " + unit in vocab):
                        first = pos + 1
                    elif unit[:1] == " " and unit[1:] in vocab:
                        first = pos + 2
                    else:
                        first = pos + n  # unknown: no boundary counted
                    if first < pos + n:  # the ends (sorted) in [first, pos + n): no set of them all
                        cuts += bisect_left(ends, pos + n) - bisect_left(ends, first)
                pos += n
        return cuts
    return count


def _tiktoken(name: str) -> Evaluated:
    """A tiktoken encoding by name, read offline as ``ByteBPE.from_tiktoken`` reads it (the ranks
    file from ``WWHO_TIKTOKEN_FILE`` or tiktoken's cache) and encoded by the core: tiktoken's ids."""
    from wwho.bytelevel import ByteBPE

    enc = ByteBPE.from_tiktoken(name)
    token_bytes = enc.token_bytes

    def encode(text: str):
        ids = enc.encode_ordinary(text)
        return ids, _ends(token_bytes(i) for i in ids)
    # vocab_size: the tokens, as for every other kind (n_vocab counts the ids, gaps included)
    return Evaluated(f"tiktoken:{name}", encode, enc.decode, lambda i: False, enc.vocab_size, token_bytes)


def _hf(path: str, name: str) -> Evaluated:
    from tokenizers import Tokenizer

    # read here, not by the library: a FIFO or a device is refused, and a huge file is bounded
    raw = read_bytes(path, error=VocabError, what="tokenizer file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VocabError(f"{printable(path)}: not UTF-8 (byte offset {exc.start}), not a tokenizer.json") from None
    try:
        tok = Tokenizer.from_str(text)
    except BaseException as exc:  # noqa: BLE001 -- a plain Exception for bad files, a panic for some
        if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
            raise  # KeyboardInterrupt, SystemExit
        raise VocabError(f"{printable(path)}: HF tokenizers cannot load it: {printable(brief(str(exc), 200))}") from None
    return _hf_object(tok, name)


def _hf_object(tok, name: str) -> Evaluated:
    unk = {i for i in (tok.token_to_id("[UNK]"), tok.token_to_id("<unk>"), tok.token_to_id("<|unk|>")) if i is not None}
    byte_ids = {tok.token_to_id(f"<0x{b:02X}>") for b in range(256)} - {None}

    pieces: dict[int, bytes] = {}

    def piece(i: int) -> bytes:
        got = pieces.get(i)
        if got is None:
            got = pieces[i] = _hf_token_bytes(tok.id_to_token(i) or "")
        return got

    def encode(text: str):
        e = tok.encode(text, add_special_tokens=False)
        # Where the tokens' own bytes spell the text (byte-level BPE, byte fallback), a cut inside a
        # character is seen; HF's offsets are characters and would move it to the character's edge.
        target = text.encode("utf-8", "surrogatepass")
        parts = [piece(i) for i in e.ids]
        joined = b"".join(parts)
        if joined == target or (joined[:1] == b" " and joined[1:] == target):
            dummy = len(joined) - len(target)
            return e.ids, array("q", (max(end - dummy, 0) for end in _ends(parts)))
        # HF gives a lone leading "▁" (Metaspace's dummy prefix, no character of the text) the first
        # character's offsets too: it ends where it starts, or the line start's boundary would be
        # counted inside that character (found by a probe: a cut counted twice there).
        starts = _char_starts(text)
        return e.ids, array("q", (starts[a if piece(i) == b" " and not text[a:b].startswith(" ") else b]
                                  for i, (a, b) in zip(e.ids, e.offsets)))
    return Evaluated(name, encode, lambda ids: tok.decode(ids, skip_special_tokens=False),
                     (unk | byte_ids).__contains__, tok.get_vocab_size(with_added_tokens=True))


_BYTE_TOKEN = regex.compile(r"<0x([0-9A-Fa-f]{2})>")


def _hf_token_bytes(token: str) -> bytes:
    """The bytes an HF token string stands for, as far as its form tells: ``<0xAB>`` (byte fallback)
    one byte, a GPT-2 byte-level string its bytes, else its UTF-8 with ``▁`` as a space. The caller
    trusts them only where they add up to the text."""
    from wwho.bytelevel.pretokenize import unicode_to_bytes

    match = _BYTE_TOKEN.fullmatch(token)
    if match:
        return bytes([int(match.group(1), 16)])
    data = unicode_to_bytes(token)
    return data if data is not None else token.replace("\u2581", " ").encode("utf-8", "surrogatepass")


def _spm(model: str, name: str) -> Evaluated:
    try:
        import sentencepiece as spm
    except ImportError:
        raise VocabError("spm: SPECs need the optional package sentencepiece (pip install 'wwho[spm]')") from None
    # read here, not by the library: a FIFO or a device is refused, and a huge file is bounded
    raw = read_bytes(model, error=VocabError, what="SentencePiece model")
    try:
        sp = spm.SentencePieceProcessor(model_proto=raw)
    except Exception as exc:  # OSError or RuntimeError depending on the version
        raise VocabError(f"{printable(model)}: SentencePiece cannot load it: {printable(brief(str(exc), 200))}") from None

    def encode(text: str):
        ids = sp.encode(text)
        if sp.decode(ids) != text:
            return ids, None
        return ids, _spm_ends(sp, ids, text)
    return Evaluated(name, encode, sp.decode, lambda i: sp.is_byte(i) or sp.is_unknown(i), sp.get_piece_size())


#: Longest id list whose token ends may be found by decoding every prefix (quadratic), when the
#: pieces' own bytes do not add up to the text.
SPM_PREFIX_DECODES = 512


def _spm_ends(sp, ids: list[int], text: str) -> list[int] | None:
    """The UTF-8 end offset of each SentencePiece token of a lossless encoding of ``text``.

    Linear: each piece's bytes (``▁`` is a space, ``<0xAB>`` one byte), checked against the text;
    the dummy prefix space that ``decode`` drops is allowed for. When they do not add up (a model
    whose pieces are not the text's bytes), short lists decode every prefix, and longer ones say
    nothing (None) rather than cost time quadratic in a line's length."""
    ends, pos, parts = [], 0, []
    for i in ids:
        piece = sp.id_to_piece(i)
        data = bytes([int(piece[3:5], 16)]) if sp.is_byte(i) else piece.replace("\u2581", " ").encode()
        parts.append(data)
        pos += len(data)
        ends.append(pos)
    joined, target = b"".join(parts), text.encode()
    if joined == target:
        return ends
    if joined[:1] == b" " and joined[1:] == target:
        return [max(end - 1, 0) for end in ends]
    if len(ids) <= SPM_PREFIX_DECODES:
        return [len(sp.decode(ids[:k]).encode()) for k in range(1, len(ids) + 1)]
    return None


# -- measuring ------------------------------------------------------------------------------

class Offsets(AbcSet):
    """A set of UTF-8 byte offsets of one text, held as one flag byte per offset of the text (a set
    of Python ints costs many times the text it describes). Read-only; ``in`` is what
    :func:`evaluate` and ``wwho serve`` ask of it."""

    __slots__ = ("flags",)

    def __init__(self, flags: bytearray) -> None:
        self.flags = flags  # flags[o] is 1 where offset o is in the set

    def __contains__(self, offset: object) -> bool:
        return isinstance(offset, int) and 0 <= offset < len(self.flags) and self.flags[offset] == 1

    def __iter__(self) -> Iterator[int]:
        find, o = self.flags.find, -1
        while (o := find(1, o + 1)) >= 0:
            yield o

    def __len__(self) -> int:
        return self.flags.count(1)

    def __repr__(self) -> str:
        return f"Offsets({len(self):,} of {len(self.flags):,})"

    def count_in(self, offsets: Iterable[int]) -> int:
        """How many of ``offsets`` (repeats counted) are in the set."""
        flags, n = self.flags, len(self.flags)
        return sum(1 for o in offsets if 0 <= o < n and flags[o] == 1)


def _structure_size(line: str, value: tuple[Offsets, Offsets]) -> int:
    return sys.getsizeof(line) + sum(sys.getsizeof(o.flags) for o in value) + ENTRY_OVERHEAD


#: Line structures are the same for every tokenizer: kept for the next one, up to 64 MiB.
_STRUCTURES = PieceCache(64 * 2**20, max_key_length=4096, sizeof=_structure_size)


def _line_structure(text: str) -> tuple[Offsets, Offsets]:
    """Byte offsets strictly inside a grapheme cluster, and strictly inside an Indic syllable."""
    got = _STRUCTURES.get(text)
    if got is None:
        got = _STRUCTURES.put(text, inside_offsets(text))
    return got


def inside_offsets(text: str) -> tuple[Offsets, Offsets]:
    """UTF-8 byte offsets of ``text`` strictly inside a grapheme cluster, and strictly inside an Indic
    syllable: a token boundary at such an offset cuts the cluster (syllable). Not cached. Memory is
    a few times the text: one flag byte per offset, and no object per cluster or syllable."""
    size = _utf8_len(text)
    return _inside_clusters(text, size), _inside_syllables(text, size)


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _inside_clusters(text: str, size: int) -> Offsets:
    """Every offset but the clusters' edges: clusters tile the text."""
    flags = bytearray(b"\x01") * (size + 1)
    flags[0] = 0
    pos = start = 0
    for end in cluster_bounds(text):
        pos += _utf8_len(text[start:end])
        flags[pos] = 0
        start = end
    return Offsets(flags)


def _inside_syllables(text: str, size: int) -> Offsets:
    """The offsets inside each Indic run (the router's runs: ``run_pattern`` finds the same ones)
    but the edges of its syllables."""
    from wwho.router import run_pattern
    from wwho.schema import available_scripts

    flags = bytearray(size + 1)
    chars = pos = 0  # where the last run ended, in code points and in bytes
    for m in run_pattern(tuple(available_scripts())).finditer(text):
        start = pos + _utf8_len(text[chars:m.start()])
        run = m.group()
        pos, chars = start + _utf8_len(run), m.end()
        flags[start + 1:pos] = b"\x01" * max(pos - start - 1, 0)
        for end in _syllable_ends(Syllabifier.for_script(m.lastgroup), run):
            flags[start + end] = 0
    return Offsets(flags)


def _syllable_ends(syllabifier: Syllabifier, run: str) -> Iterator[int]:
    """The UTF-8 end of each syllable of ``run`` but the last, from the automaton's syllables joined
    by NUL bytes (UTF-8 has no other zero byte): no string per syllable."""
    if syllabifier.engine != "table" or "\x00" in run:
        ends = list(accumulate(map(_utf8_len, syllabifier.tokenize(run, leading_space=False))))
        yield from ends[:-1]
        return
    joined = syllabifier.automaton.joined(run, False, "\x00", False)
    k, found = 0, joined.find(0)
    while found >= 0:
        yield found - k
        k += 1
        found = joined.find(0, found + 1)


def evaluate(tok: Evaluated, lines: Iterable[str], *, corpus: str = "", progress: bool = False) -> Metrics:
    """Measure ``tok`` on ``lines``; see :class:`Metrics`."""
    from wwho.progress import progress_bar

    m = Metrics(tokenizer=tok.name, corpus=corpus, vocab_size=tok.vocab_size)
    where = Path(corpus)
    # The file and its folder (si/flores200-devtest.txt: the language), not "/name" for a bare name.
    shown_corpus = f"{where.parent.name}/{where.name}" if where.parent.name else where.name
    shown = printable(f"{Path(tok.name).name or tok.name} on {shown_corpus}")
    for line in progress_bar(lines, desc=shown, unit="line", disable=not progress, leave=False):
        try:
            ids, ends = tok.encode(line)
        except Exception as exc:  # a peer failing on a line is reported with the line
            raise TokenizerError(printable(f"{tok.name} failed on {corpus} line {m.lines + 1}: {exc}")) from None
        m.lines += 1
        m.words += len(line.split())
        m.chars += len(line)
        m.bytes += len(line.encode("utf-8", "surrogatepass"))
        m.tokens += len(ids)
        m.ids_used.update(ids)
        m.fallback_tokens += sum(1 for i in ids if tok.is_fallback(i))
        m.lossless_lines += tok.decode(list(ids)) == line
        if ends is None:
            m.unmeasured_lines += 1
            continue
        inside_cluster, inside_syllable = _line_structure(line)
        size = len(line.encode("utf-8", "surrogatepass"))
        # Boundaries are the places strictly inside the line where one token ends and the next
        # begins, each once: not the line's end, and not its start, where a token of no text of the
        # line ends (the dummy space a prefix-space SGPE or Metaspace adds).
        inner = [e for k, e in enumerate(ends) if 0 < e < size and (k == 0 or e != ends[k - 1])]
        if inner:
            m.boundaries += len(inner)
            m.boundaries_in_cluster += inside_cluster.count_in(inner)
            m.boundaries_in_syllable += inside_syllable.count_in(inner)
        if tok.known_cuts is not None:
            m.known_syllable_cuts = (m.known_syllable_cuts or 0) + tok.known_cuts(line, ends)
    m.vocab_used = len(m.ids_used)
    return m


def parity(metrics: Metrics, reference: Metrics) -> float | None:
    """How far from equal the tokenizer treats two line-aligned corpora (e.g. Sinhala FLORES and the
    same lines in English): the larger token count over the smaller, so 1.0 is parity and **lower is
    better**, whichever side is the costly one. (A bare ratio ``tokens / reference tokens`` rewarded
    a tokenizer for being bad at the reference language: a Sinhala-only model scored well because
    English cost it many tokens.)"""
    if metrics.lines != reference.lines:
        raise TokenizerError(f"parity needs line-aligned corpora: {printable(metrics.corpus)} has {metrics.lines} "
                             f"lines, {printable(reference.corpus)} has {reference.lines}")
    low, high = sorted((metrics.tokens, reference.tokens))
    return high / low if low else None


def read_lines(path: str | Path, *, max_line_bytes: int = MAX_LINE_BYTES) -> list[str]:
    """The corpus's lines, empty lines left out (as every corpus reader does); a corpus with none
    is a :class:`CorpusError`: rates over no text would read as measured zeros."""
    from wwho.corpus import iter_documents

    # every line counts (parity pairs corpora line by line): a bad one is fixed, not skipped
    lines = list(iter_documents(path, max_line_bytes=max_line_bytes,
                                bad_line_hint="every line is measured: fix or remove it"))
    if not lines:
        raise CorpusError(f"{printable(str(path))}: no text to measure (the corpus is empty or has only empty lines)")
    return lines


def check_unique(names: Sequence[str], what: str) -> None:
    """Refuse a corpus or tokenizer named twice: each is measured once, and two rows of one name could
    not be told apart. A path is compared resolved (``a.txt`` and ``./a.txt`` are one file)."""
    seen: dict[str, str] = {}
    for name in names:
        key = _identity(name)
        if key in seen:
            same = "" if seen[key] == name else f" (as {printable(seen[key])})"
            raise WwhoError(f"{what} {printable(name)} is given twice{same}: give each {what} once")
        seen[key] = name


def _identity(name: str) -> str:
    kind, colon, rest = name.partition(":")
    if colon and kind == "tiktoken":
        return name
    prefix, path = (f"{kind}:", rest) if colon and kind in ("hf", "spm") and rest else ("", name)
    try:
        return prefix + os.path.realpath(path)
    except (OSError, ValueError):  # a NUL in the name: no file; loading says so
        return name


def evaluate_all(specs: Sequence[str], corpora: Sequence[str], *, parity_with: str | None = None,
                 progress: bool = False, max_line_bytes: int = MAX_LINE_BYTES,
                 pattern: str | None = None) -> list[Metrics]:
    """Every tokenizer on every corpus (and its parity when ``parity_with`` is given).
    ``pattern``: the pre-tokenizer of ``.tiktoken`` files that are not a known encoding. A corpus or
    tokenizer given twice, and a corpus with no text, are errors."""
    check_max_line_bytes(max_line_bytes)
    check_unique(corpora, "corpus")
    check_unique(specs, "tokenizer")
    texts = {c: read_lines(c, max_line_bytes=max_line_bytes) for c in corpora}
    reference = read_lines(parity_with, max_line_bytes=max_line_bytes) if parity_with else None
    if reference is not None:
        for corpus, lines in texts.items():
            if len(lines) != len(reference):  # asked for, and not given: said, not left to a null
                warn(f"no parity for {printable(corpus)}: it has {len(lines):,} lines and "
                     f"{printable(parity_with)} has {len(reference):,}; parity needs line-aligned "
                     f"corpora (the same sentences, line by line)", WwhoWarning)
    tokenizers = [load_spec(s, pattern=pattern) for s in specs]
    results = []
    for tok in tokenizers:
        ref = evaluate(tok, reference, corpus=str(parity_with)) if reference is not None else None
        for corpus, lines in texts.items():
            m = evaluate(tok, lines, corpus=corpus, progress=progress)
            if ref is not None and m.lines == ref.lines:
                m.parity = parity(m, ref)
            results.append(m)
    return results
