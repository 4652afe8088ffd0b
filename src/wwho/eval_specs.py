"""Tokenizers under evaluation: a SPEC loaded as an :class:`Evaluated` tokenizer, whatever its
origin, with what ``wwho eval`` and ``wwho serve`` ask of it.

| SPEC | tokenizer |
|---|---|
| a wwho directory or file (``vocab.json``, meta directory, ``.gguf``, ``.tiktoken``, ``tokenizer.json``) | :func:`wwho.load_tokenizer` |
| ``tiktoken:NAME`` | tiktoken's encoding (offline via ``WWHO_TIKTOKEN_FILE``) |
| ``hf:PATH`` | HF ``tokenizers`` ``Tokenizer.from_file(PATH)`` as is |
| ``spm:MODEL`` | a SentencePiece model (optional extra ``sentencepiece``) |

Each encodes a line to ids and the UTF-8 end offset of each token: from each token's bytes (wwho,
tiktoken), HF's character offsets, or SentencePiece's pieces (lines that SentencePiece normalizes
have none). An SGPE or meta tokenizer also counts the boundaries inside a syllable its vocabulary
knows (``known_cuts``), and so does a ``wwho extend`` directory for the syllables it built.

A binary tokenizer (bytes in) is refused when loaded; ``hf:`` and ``spm:`` files are read here
(regular files only, bounded by :func:`wwho.fileio.max_file_bytes`). Names in messages go through
:func:`wwho.errors.printable`.

This module does not measure corpora (:mod:`wwho.evaluate` does) or find where a text's clusters
and syllables are (:mod:`wwho.cut_structure` does).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

import regex

from wwho.cut_structure import utf8_len
from wwho.errors import VocabError, brief, printable
from wwho.fileio import read_bytes

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
    #: id -> the tokenizer's own text of a token (a SentencePiece piece ``▁a``, an HF token string such
    #: as ``[UNK]``), shown where its tokens do not rebuild the text; None where ``token_bytes`` serves
    piece: Callable[[int], str] | None = None
    #: id -> whether it stands for text it does not hold (``[UNK]``): a line with one does not rebuild
    unknown: Callable[[int], bool] | None = None


def load_spec(spec: str, *, pattern: str | None = None) -> Evaluated:
    """Load a tokenizer from a SPEC (see the module docstring); unknown specs are a clear error."""
    from wwho.fileio import parsing_once

    with parsing_once():  # the kind told from a tokenizer.json, then the file loaded: one parse
        return _load_spec(spec, pattern)


def _load_spec(spec: str, pattern: str | None) -> Evaluated:
    kind, _, rest = spec.partition(":")
    if kind == "tiktoken" and rest:
        return _tiktoken(rest, pattern)
    if kind in ("hf", "spm") and rest and pattern is not None:  # it would be ignored, in silence
        raise VocabError(f"{printable(spec)}: --pattern (pattern=) is for a .tiktoken file of your own; an "
                         f"{'HF tokenizer.json' if kind == 'hf' else 'SentencePiece model'} names its own "
                         "pre-tokenizer")
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
                n = utf8_len(unit)
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


def _tiktoken(name: str, pattern: str | None = None) -> Evaluated:
    """A tiktoken encoding by name, read offline as ``ByteBPE.from_tiktoken`` reads it (the ranks
    file from ``WWHO_TIKTOKEN_FILE`` or tiktoken's cache) and encoded by the core: tiktoken's ids.
    ``pattern``: the regex of a ``.tiktoken`` file of one's own (a known name refuses one)."""
    from wwho.bytelevel import ByteBPE

    enc = ByteBPE.from_tiktoken(name, pattern=pattern)
    token_bytes = enc.token_bytes

    def encode(text: str):
        ids = enc.encode_ordinary(text)
        return ids, _ends(token_bytes(i) for i in ids)
    # vocab_size: the tokens, as for every other kind (n_vocab counts the ids, gaps included)
    return Evaluated(f"tiktoken:{name}", encode, enc.decode, lambda i: False, enc.vocab_size, token_bytes)


def _hf(path: str, name: str) -> Evaluated:
    import json

    from wwho.loading import hf_tokenizer

    # read here, not by the library: a FIFO or a device is refused, and a huge file is bounded
    raw = read_bytes(path, error=VocabError, what="tokenizer file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VocabError(f"{printable(path)}: not UTF-8 (byte offset {exc.start}), not a tokenizer.json") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None  # (HF's own error names it)
    model = data.get("model") if isinstance(data, dict) else None
    if data is not None and not isinstance(model, dict):  # JSON, but no tokenizer: said so, not HF's parse error
        raise VocabError(f"{printable(path)}: not a tokenizer.json (no 'model' object); hf:PATH takes the "
                         "tokenizer.json of HF tokenizers")
    return _hf_object(hf_tokenizer(text, model, printable(path)), name)


def _hf_object(tok, name: str) -> Evaluated:
    unk = {i for i in (tok.token_to_id("[UNK]"), tok.token_to_id("<unk>"), tok.token_to_id("<|unk|>")) if i is not None}
    byte_ids = {tok.token_to_id(f"<0x{b:02X}>") for b in range(256)} - {None}

    def reader(byte_level: bool):
        """A token's bytes (:func:`_hf_token_bytes`), each found once."""
        pieces: dict[int, bytes] = {}

        def read(i: int) -> bytes:
            got = pieces.get(i)
            if got is None:
                got = pieces[i] = _hf_token_bytes(tok.id_to_token(i) or "", byte_level=byte_level)
            return got
        return read

    piece, utf8_piece = reader(True), reader(False)

    def encode(text: str):
        e = tok.encode(text, add_special_tokens=False)
        # Where the tokens' own bytes spell the text (byte-level BPE, byte fallback), a cut inside a
        # character is seen; HF's offsets are characters and would move it to the character's edge.
        # A token's string is read as GPT-2 byte-level text first, then as UTF-8 (byte fallback's
        # 'é' is that character, not the byte E9 that GPT-2's map reads it as).
        target = text.encode("utf-8", "surrogatepass")
        for read in (piece, utf8_piece):
            parts = [read(i) for i in e.ids]
            joined = b"".join(parts)
            if joined == target or (joined[:1] == b" " and joined[1:] == target):
                dummy = len(joined) - len(target)
                return e.ids, array("q", (max(end - dummy, 0) for end in _ends(parts)))
        # HF gives a lone leading "▁" (Metaspace's dummy prefix, no character of the text) the first
        # character's offsets too: it ends where it starts, or the line start's boundary would be
        # counted inside that character (a cut counted twice there).
        starts = _char_starts(text)
        return e.ids, array("q", (starts[a if piece(i) == b" " and not text[a:b].startswith(" ") else b]
                                  for i, (a, b) in zip(e.ids, e.offsets)))
    return Evaluated(name, encode, lambda ids: tok.decode(ids, skip_special_tokens=False),
                     (unk | byte_ids).__contains__, tok.get_vocab_size(with_added_tokens=True),
                     piece=lambda i: tok.id_to_token(i) or "", unknown=unk.__contains__)


_BYTE_TOKEN = regex.compile(r"<0x([0-9A-Fa-f]{2})>")


def _hf_token_bytes(token: str, *, byte_level: bool = True) -> bytes:
    """The bytes an HF token string stands for, as far as its form tells: ``<0xAB>`` (byte fallback)
    one byte, a GPT-2 byte-level string its bytes (unless not ``byte_level``), else its UTF-8 with
    ``▁`` as a space. The caller trusts them only where they add up to the text."""
    from wwho.bytelevel.pretokenize import unicode_to_bytes

    match = _BYTE_TOKEN.fullmatch(token)
    if match:
        return bytes([int(match.group(1), 16)])
    data = unicode_to_bytes(token) if byte_level else None
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
    return Evaluated(name, encode, sp.decode, lambda i: sp.is_byte(i) or sp.is_unknown(i), sp.get_piece_size(),
                     piece=sp.id_to_piece, unknown=sp.is_unknown)


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
