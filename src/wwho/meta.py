"""The WWHO meta tokenizer: tiktoken for everything else, SGPE for Indic runs, one id space.

Ids (spec 001 section 5)::

    [0, n)          tiktoken's ids, unchanged (n = encoding.n_vocab, 200,019 for o200k_base)
    [n, n + k)      SGPE's ids plus n (k = len(sgpe vocabulary))

:class:`MetaVocab` is only that arithmetic (it knows n and the SGPE vocabulary, never
tiktoken). :class:`MetaTokenizer` routes text (:func:`wwho.router.segment`): a Latin/other
run goes to tiktoken's ``encode_ordinary``, an Indic run (with its leading space) to SGPE,
whose ids are shifted by n. So text with no Indic character gets exactly tiktoken's ids,
and an Indic run exactly SGPE's ids plus n. tiktoken's special tokens (``<|endoftext|>``)
follow tiktoken's model: disallowed in the text by default (a :class:`TokenizerError`
names them), encoded as specials when listed in ``allowed_special``, ordinary text with
``disallowed_special=()``.

Decoding joins the bytes of all tokens (consecutive tiktoken ids go to tiktoken's
``decode_bytes`` together) and decodes UTF-8 once, so a character split across tokens,
even across the two halves, comes back whole. Lossless for any text whose Indic runs
SGPE encodes losslessly (byte fallback), except lone surrogates, which tiktoken
replaces by U+FFFD. Some o200k_base ids are unassigned (199,998 and 200,000..200,017):
decoding them is an error, as in tiktoken.

Token strings (``tokenize``, the transformers class) must map one-to-one to ids, and
tiktoken tokens are bytes, so: tiktoken tokens are written with the GPT-2 byte-to-
character mapping (``"Ġthe"``), tiktoken specials as their text, SGPE tokens as their
text when it has a character outside that mapping's alphabet (every Indic token), and
otherwise (``[PAD]``, ``<0x41>``) as ``⟦sgpe⟧`` + text; unassigned ids are
``⟦unassigned ID⟧``. The files (``meta_config.json``, ``tokenizer_meta.json``) are
:mod:`wwho.export.meta`. This module does not train (see ``wwho train --meta``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wwho.bytelevel.pretokenize import BYTE_TO_UNICODE
from wwho.bytelevel.safe_tiktoken import LONG_RUN, SafeEncoder
from wwho.cache import DEFAULT_CACHE_BYTES, PieceCache
from wwho.errors import TokenizerError, VocabError
from wwho.ids import batch as as_batch
from wwho.ids import token_id, token_ids
from wwho.router import run_pattern
from wwho.threads import cpus, thread_count

SGPE_PREFIX = "\u27e6sgpe\u27e7"  # ⟦sgpe⟧
NAMESPACE = SGPE_PREFIX[0]


# GPT-2's byte -> character mapping (shared with the byte-level pre-tokenizers).
BYTE_CHARS = [BYTE_TO_UNICODE[b] for b in range(256)]
ALPHABET = frozenset(BYTE_CHARS)
_LATIN1_TO_CHARS = {b: c for b, c in enumerate(BYTE_CHARS)}


def bytes_to_token_string(data: bytes) -> str:
    """A tiktoken token's string form (GPT-2 byte mapping)."""
    return data.decode("latin-1").translate(_LATIN1_TO_CHARS)


def sgpe_token_string(token: str) -> str:
    """An SGPE token's string form: itself, unless it could be read as a tiktoken token."""
    if token.startswith(NAMESPACE) or all(c in ALPHABET for c in token):
        return SGPE_PREFIX + token
    return token


class MetaVocab:
    """The unified id space: tiktoken's ``[0, offset)`` then SGPE's ids plus ``offset``."""

    def __init__(self, tiktoken_size: int, sgpe_vocab: Mapping[str, int]) -> None:
        if type(tiktoken_size) is not int or tiktoken_size < 0:
            raise VocabError(f"tiktoken_size must be a non-negative int, not {tiktoken_size!r}")
        self.offset = tiktoken_size
        self.sgpe_vocab = dict(sgpe_vocab)
        self._tokens: list[str | None] = [None] * len(self.sgpe_vocab)
        for token, i in self.sgpe_vocab.items():
            if type(i) is not int or not 0 <= i < len(self._tokens) or self._tokens[i] is not None:
                raise VocabError(f"SGPE ids must be 0..{len(self._tokens) - 1} without duplicates; {token!r} has {i!r}")
            self._tokens[i] = token

    @property
    def sgpe_size(self) -> int:
        return len(self._tokens)

    @property
    def size(self) -> int:
        """``tiktoken n_vocab + len(sgpe)``: every id is below this."""
        return self.offset + len(self._tokens)

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"MetaVocab(offset={self.offset}, sgpe_size={self.sgpe_size}, size={self.size})"

    def encode_sgpe_token(self, token: str, unk_id_raw: int | None = None) -> int:
        """The unified id of an SGPE token; an unknown token gets ``unk_id_raw`` (shifted) if given."""
        raw = self.sgpe_vocab.get(token)
        if raw is None:
            if unk_id_raw is None:
                raise VocabError(f"{token!r} is not a token of the SGPE vocabulary")
            if type(unk_id_raw) is not int or not 0 <= unk_id_raw < self.sgpe_size:
                raise VocabError(f"unk_id_raw {unk_id_raw!r} is not an SGPE id (0..{self.sgpe_size - 1})")
            raw = unk_id_raw
        return raw + self.offset

    def is_tiktoken_id(self, uid: int) -> bool:
        return 0 <= self._check(uid) < self.offset

    def is_sgpe_id(self, uid: int) -> bool:
        return self._check(uid) >= self.offset

    def sgpe_id(self, uid: int) -> int:
        """The SGPE vocabulary's own id of a unified SGPE id."""
        if not self.is_sgpe_id(uid):
            raise TokenizerError(f"id {uid} is a tiktoken id, not an SGPE one (those start at {self.offset})")
        return uid - self.offset

    def decode_id(self, uid: int) -> str | None:
        """The SGPE token string of ``uid``; ``None`` for the tiktoken range (spec 001 section 3.4)."""
        uid = self._check(uid)
        return None if uid < self.offset else self._tokens[uid - self.offset]

    def _check(self, uid: int) -> int:
        return token_id(uid, self.size)  # ints, numpy integers, __index__ objects; never bools


@dataclass(frozen=True)
class TiktokenPart:
    """What the meta tokenizer needs to know of a tiktoken encoding, computed once."""

    name: str
    n_vocab: int
    token_bytes: tuple[bytes | None, ...]  # None: an unassigned id
    special_tokens: dict[str, int]
    sha256: str  # of the ranks in tiktoken's file format: for official files, the file's sha256

    @property
    def unassigned(self) -> list[int]:
        return [i for i, b in enumerate(self.token_bytes) if b is None]


@functools.lru_cache(maxsize=8)
def tiktoken_part(encoding: Any) -> TiktokenPart:
    """Token bytes, specials and ranks sha256 of a ``tiktoken.Encoding`` (through its public API)."""
    specials = {s: encoding.encode_single_token(s) for s in encoding.special_tokens_set}
    special_ids = set(specials.values())
    table: list[bytes | None] = []
    h = hashlib.sha256()
    for i in range(encoding.n_vocab):
        try:
            data = encoding.decode_single_token_bytes(i)
        except KeyError:
            table.append(None)
            continue
        table.append(data)
        if i not in special_ids:  # a .tiktoken file is "base64(token) rank" lines, by rank
            h.update(base64.b64encode(data) + b" %d\n" % i)
    return TiktokenPart(encoding.name, encoding.n_vocab, tuple(table), specials, h.hexdigest())


@functools.lru_cache(maxsize=64)
def _special_pattern(tokens: frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, sorted(tokens, key=lambda t: (-len(t), t)))))


def resolve_encoding(encoding: Any = "o200k_base", *, tiktoken_file: str | os.PathLike | None = None) -> Any:
    """A ``tiktoken.Encoding`` from a name (offline with ``tiktoken_file``) or as given."""
    if not isinstance(encoding, str):
        for attr in ("encode_ordinary", "decode_bytes", "decode_single_token_bytes", "n_vocab", "name"):
            if not hasattr(encoding, attr):
                raise VocabError(f"tiktoken_encoding must be a name or a tiktoken.Encoding, not {type(encoding).__name__}")
        return encoding
    from wwho.bytelevel.tiktoken_loader import file_sha256, get_encoding
    from wwho.tiktoken_file import ranks_file_for

    found = ranks_file_for(encoding, tiktoken_file)
    if found is not None and not found[0].is_file():
        raise VocabError(f"{found[0]} (from {found[1]}): tiktoken ranks file not found. To fix: point "
                         f"{'--tiktoken-file / tiktoken_file=' if found[1] == 'tiktoken_file' else found[1]} at "
                         f"the {encoding}.tiktoken file")
    enc = get_encoding(encoding, tiktoken_file=tiktoken_file)
    if found is not None and found[0].is_file():
        # tiktoken keeps encodings in memory by name, so a file given after the first load
        # would be ignored silently: check that it holds the ranks actually in use.
        path, source = found
        actual = file_sha256(path)
        if actual != tiktoken_part(enc).sha256:
            raise VocabError(f"{path} (from {source}): sha256 {actual} is not that of the {encoding} ranks in use "
                             f"({tiktoken_part(enc).sha256}). To fix: point {source} at the official "
                             f"{encoding}.tiktoken")
    return enc


class MetaTokenizer:
    """tiktoken + SGPE in one id space; see the module docstring."""

    def __init__(self, sgpe_tokenizer: Any, tiktoken_encoding: Any = "o200k_base", *,
                 tiktoken_file: str | os.PathLike | None = None, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        """``cache_bytes`` bounds this tokenizer's run cache (:mod:`wwho.cache`); the SGPE part
        (the compiled core) keeps no cache."""
        from wwho.sgpe import SGPETokenizer

        if not isinstance(sgpe_tokenizer, SGPETokenizer):
            raise VocabError(f"sgpe_tokenizer must be an SGPETokenizer, not {type(sgpe_tokenizer).__name__}")
        if sgpe_tokenizer.prefix_space:
            raise VocabError("an SGPE vocabulary trained with prefix_space cannot be a meta tokenizer's SGPE part: "
                             "its dummy space would be added to every Indic run")
        self.sgpe = sgpe_tokenizer
        self.encoding = resolve_encoding(tiktoken_encoding, tiktoken_file=tiktoken_file)
        self.vocab = MetaVocab(self.encoding.n_vocab, sgpe_tokenizer.vocab)
        self.offset = self.vocab.offset
        self.tiktoken_specials: dict[str, int] = {
            s: self.encoding.encode_single_token(s) for s in self.encoding.special_tokens_set}
        clash = set(self.tiktoken_specials) & set(sgpe_tokenizer.special_tokens)
        if clash:
            raise VocabError(f"special tokens in both tiktoken and SGPE: {sorted(clash)}")
        self.special_tokens: dict[str, int] = {
            **self.tiktoken_specials, **{s: self.offset + sgpe_tokenizer.vocab[s] for s in sgpe_tokenizer.special_tokens}}
        self._scripts = sgpe_tokenizer.splitter.scripts
        self._runs = run_pattern(self._scripts).finditer
        self._sgpe_bytes = [sgpe_tokenizer.token_bytes(i) for i in range(sgpe_tokenizer.vocab_size)]
        # Shifted SGPE ids, made once: cached runs then share these int objects (8 bytes per id).
        self._shifted = list(range(self.offset, self.vocab.size))
        self._cache = PieceCache(cache_bytes)
        self._safe_tiktoken = SafeEncoder(self.encoding, token_bytes=self._tiktoken_token_bytes)
        self._strings: list[str] | None = None
        self._string_ids: dict[str, int] | None = None

    # -- construction and files --------------------------------------------------------

    @classmethod
    def load(cls, directory: str | os.PathLike, *, tiktoken_file: str | os.PathLike | None = None,
             cache_bytes: int = DEFAULT_CACHE_BYTES) -> MetaTokenizer:
        """Load a directory written by :meth:`save` or ``wwho train --meta``; checks the tiktoken sha256.
        ``cache_bytes`` bounds the run cache (the SGPE part, in the core, keeps none)."""
        from wwho.export.meta import CONFIG_FILE, read_meta_config
        from wwho.savedir import member
        from wwho.sgpe import SGPETokenizer

        directory = Path(directory)
        path = directory / CONFIG_FILE
        config = read_meta_config(path)
        name = config["tiktoken_encoding"]
        try:
            encoding = resolve_encoding(name, tiktoken_file=tiktoken_file)
        except VocabError as exc:
            raise VocabError(f"{path}: needs the tiktoken encoding {name!r}: {exc}") from None
        part = tiktoken_part(encoding)
        if part.sha256 != config["tiktoken_sha256"]:
            where = tiktoken_file or "tiktoken's cache"
            raise VocabError(f"{path}: was made with {name} ranks of sha256 {config['tiktoken_sha256']}, but the "
                             f"ranks in use ({where}) have sha256 {part.sha256}; ids would not match")
        if part.n_vocab != config["offset"]:
            raise VocabError(f"{path}: 'offset' {config['offset']} is not {name}'s n_vocab {part.n_vocab}")
        sgpe = SGPETokenizer.load(member(directory, config["sgpe_vocab"], source=str(path), key="'sgpe_vocab'"))
        if sgpe.vocab_size != config["sgpe_vocab_size"]:
            raise VocabError(f"{path}: 'sgpe_vocab_size' is {config['sgpe_vocab_size']} but "
                             f"{directory / config['sgpe_vocab']} has {sgpe.vocab_size} tokens")
        return cls(sgpe, encoding, cache_bytes=cache_bytes)

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``vocab.json`` (SGPE part), ``tokenizer_meta.json`` and ``meta_config.json``."""
        from wwho.export.meta import save_meta

        return save_meta(self, directory)

    @property
    def tiktoken(self) -> TiktokenPart:
        return tiktoken_part(self.encoding)

    @property
    def vocab_size(self) -> int:
        return self.vocab.size

    def __len__(self) -> int:
        return self.vocab.size

    def __repr__(self) -> str:
        return (f"MetaTokenizer(tiktoken={self.encoding.name!r} [0, {self.offset}), "
                f"sgpe={self.sgpe.script!r} [{self.offset}, {self.vocab.size}))")

    # -- encoding ----------------------------------------------------------------------

    def encode(self, text: str, *, allowed_special: Iterable[str] | str = frozenset(),
               disallowed_special: Iterable[str] | str = "all") -> list[int]:
        """Unified ids of ``text``. Special tokens follow tiktoken's model (module docstring);
        ``allowed_special`` may also name SGPE's specials (``[PAD]``...), and ``"all"`` allows all."""
        if not isinstance(text, str):
            raise TokenizerError(f"expected text as str, got {type(text).__name__}")
        allowed, disallowed = self._specials(allowed_special, disallowed_special)
        if not allowed and not disallowed:
            return self._encode_ordinary(text)
        ids: list[int] = []
        for part in self._split_specials(text, allowed, disallowed):
            if isinstance(part, int):
                ids.append(part)
            else:
                ids += self._encode_ordinary(part)
        return ids

    def _specials(self, allowed_special: Iterable[str] | str,
                  disallowed_special: Iterable[str] | str) -> tuple[frozenset[str], frozenset[str]]:
        """The allowed and the disallowed special tokens, checked."""
        allowed = self._allowed(allowed_special)
        disallowed = (frozenset(self.tiktoken_specials) - allowed if disallowed_special == "all"
                      else frozenset(disallowed_special))
        unknown = disallowed - set(self.special_tokens)
        if unknown:
            raise TokenizerError(f"disallowed_special names unknown special tokens: {sorted(unknown)}")
        return allowed, disallowed

    def _split_specials(self, text: str, allowed: frozenset[str], disallowed: frozenset[str]) -> list[str | int]:
        """``text`` as ordinary parts (str) and allowed special tokens (their ids), in order; the
        text of a disallowed special token is an error naming its offset."""
        if disallowed:
            m = _special_pattern(disallowed).search(text)
            if m:
                raise TokenizerError(
                    f"the text contains the special token {m.group()!r} at offset {m.start()}: pass "
                    f"allowed_special={{{m.group()!r}}} to encode it as that token, or disallowed_special=() "
                    "to encode it as ordinary text")
        if not allowed:
            return [text]
        parts: list[str | int] = []
        pos = 0
        for m in _special_pattern(allowed).finditer(text):
            parts.append(text[pos:m.start()])
            parts.append(self.special_tokens[m.group()])
            pos = m.end()
        parts.append(text[pos:])
        return parts

    def _allowed(self, allowed_special: Iterable[str] | str) -> frozenset[str]:
        if allowed_special == "all":
            return frozenset(self.special_tokens)
        if isinstance(allowed_special, str):
            raise TokenizerError(f"allowed_special must be 'all' or a set of strings, not {allowed_special!r}")
        allowed = frozenset(allowed_special)
        unknown = allowed - set(self.special_tokens)
        if unknown:
            raise TokenizerError(f"not special tokens of this vocabulary: {sorted(unknown)}; "
                                 f"known: {sorted(self.special_tokens)}")
        return allowed

    def _encode_ordinary(self, text: str) -> list[int]:
        # The router's rules (wwho.router.segment) over the router's own run pattern, without
        # building a TextSegment per run: this loop is the encoder's hot path.
        ids: list[int] = []
        tiktoken_encode = self.encoding.encode_ordinary
        get, put = self._cache.get, self._cache.put
        pos = 0
        for m in self._runs(text):
            start = m.start()
            run = m.group()
            if start > pos:
                latin = text[pos:start]
                if latin[-1] == " ":  # the space before an Indic run is that run's leading space
                    latin = latin[:-1]
                    run = " " + run
                if latin:
                    # Short Latin parts repeat ("(", ", ", names) and a dict lookup costs less than a
                    # call into tiktoken; a Latin part never equals an Indic run, so one cache serves both.
                    if len(latin) <= 24:
                        got = get(latin)
                        if got is None:
                            got = put(latin, tiktoken_encode(latin))
                        ids += got
                    else:
                        ids += self._encode_latin(latin)
            pos = m.end()
            got = get(run)
            if got is None:
                shifted = self._shifted
                got = put(run, [shifted[i] for i in self.sgpe.encode(run)])
            ids += got
        if pos < len(text):
            ids += self._encode_latin(text[pos:])
        return ids

    def _encode_latin(self, text: str) -> list[int]:
        """tiktoken's ids; a text long enough to hold a run that overflows tiktoken is cut first
        (:mod:`wwho.bytelevel.safe_tiktoken`: the same ids, no crash)."""
        if len(text) < LONG_RUN:
            return self.encoding.encode_ordinary(text)
        return self._safe_tiktoken.encode_ordinary(text)

    def _tiktoken_token_bytes(self) -> tuple[bytes | None, ...]:
        return self.tiktoken.token_bytes  # a method, not a lambda: the tokenizer must pickle

    def clear_cache(self) -> None:
        """Forget the cached runs, and the SGPE part's cached pieces."""
        self._cache.clear()
        self.sgpe.clear_cache()

    def encode_ordinary(self, text: str) -> list[int]:
        """Every special-token text encoded as ordinary text (``disallowed_special=()``)."""
        if not isinstance(text, str):
            raise TokenizerError(f"expected text as str, got {type(text).__name__}")
        return self._encode_ordinary(text)

    def encode_batch(self, texts: Sequence[str], *, allowed_special: Iterable[str] | str = frozenset(),
                     disallowed_special: Iterable[str] | str = "all", num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode` for each text, on ``num_threads`` threads (default: all cores): the Indic
        runs by the SGPE core without the GIL, the rest by tiktoken's own batch encoder."""
        texts = as_batch(texts)
        for t in texts:
            if not isinstance(t, str):
                raise TokenizerError(f"expected text as str, got {type(t).__name__}")
        threads = thread_count(num_threads) or cpus()
        allowed, disallowed = self._specials(allowed_special, disallowed_special)
        plans = [self._split_specials(t, allowed, disallowed) for t in texts]
        ordinary = [part for plan in plans for part in plan if isinstance(part, str)]
        routed = self.sgpe.encode_routed_batch(ordinary, num_threads=threads)
        latin = [part[item[0]:item[1]] for part, items in zip(ordinary, routed) for item in items
                 if type(item) is tuple]
        latin_ids = iter(self.encoding.encode_ordinary_batch(latin, num_threads=threads) if latin else ())
        runs = iter(routed)
        offset = self.offset
        out: list[list[int]] = []
        for plan in plans:
            ids: list[int] = []
            for part in plan:
                if isinstance(part, int):
                    ids.append(part)
                    continue
                for item in next(runs):
                    ids += next(latin_ids) if type(item) is tuple else [offset + i for i in item]
            out.append(ids)
        return out

    def tokenize(self, text: str, *, allowed_special: Iterable[str] | str = frozenset(),
                 disallowed_special: Iterable[str] | str = "all") -> list[str]:
        """The token strings of ``text`` (see the module docstring for their form)."""
        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return self.convert_ids_to_tokens(ids)

    # -- token strings -----------------------------------------------------------------

    def _string_table(self) -> tuple[list[str], dict[str, int]]:
        if self._strings is None:
            part = self.tiktoken
            names = {i: s for s, i in part.special_tokens.items()}
            strings = [names[i] if i in names else f"\u27e6unassigned {i}\u27e7" if b is None
                       else bytes_to_token_string(b) for i, b in enumerate(part.token_bytes)]
            strings += [sgpe_token_string(t) for t in self.sgpe.tokens]
            ids = {s: i for i, s in enumerate(strings)}
            if len(ids) != len(strings):  # only a special written like an ordinary token could do this
                seen: set[str] = set()
                dup = next(s for s in strings if s in seen or seen.add(s))
                raise VocabError(f"two ids have the token string {dup!r}")
            self._strings, self._string_ids = strings, ids
        return self._strings, self._string_ids  # type: ignore[return-value]

    def id_to_token(self, uid: int) -> str:
        return self._string_table()[0][self.vocab._check(uid)]

    def token_to_id(self, token: str) -> int:
        try:
            return self._string_table()[1][token]
        except (KeyError, TypeError):
            raise TokenizerError(f"{token!r} is not a token string of this vocabulary") from None

    def convert_ids_to_tokens(self, ids: Iterable[int]) -> list[str]:
        strings = self._string_table()[0]
        return [strings[self.vocab._check(i)] for i in ids]

    def get_vocab(self) -> dict[str, int]:
        """Token string -> id for every id (unassigned tiktoken ids included, by their placeholder)."""
        return dict(self._string_table()[1])

    # -- decoding ----------------------------------------------------------------------

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token (what :class:`wwho.StreamingDecoder` needs)."""
        uid = self.vocab._check(token_id)
        if uid >= self.offset:
            return self._sgpe_bytes[uid - self.offset]
        data = self.tiktoken.token_bytes[uid]
        if data is None:
            raise TokenizerError(f"token id {uid} is not assigned in tiktoken's {self.encoding.name}")
        return data

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids``, joined; consecutive tiktoken ids are decoded together by tiktoken."""
        offset, size, sgpe = self.offset, self.vocab.size, self._sgpe_bytes
        out: list[bytes] = []
        run: list[int] = []
        for i in token_ids(ids, size):
            if i < offset:
                run.append(i)
            else:
                if run:
                    out.append(self._tiktoken_bytes(run))
                    run = []
                out.append(sgpe[i - offset])
        if run:
            out.append(self._tiktoken_bytes(run))
        return b"".join(out)

    def _tiktoken_bytes(self, run: list[int]) -> bytes:
        try:
            return self.encoding.decode_bytes(run)
        except KeyError:
            bad = next(i for i in run if self.tiktoken.token_bytes[i] is None)
            raise TokenizerError(f"token id {bad} is not assigned in tiktoken's {self.encoding.name}") from None

    def decode(self, ids: Iterable[int], *, errors: str = "replace", skip_special_tokens: bool = False) -> str:
        """Text of ``ids``; bytes that are not valid UTF-8 become U+FFFD (``errors="replace"``).
        ``skip_special_tokens``: drop tiktoken's special tokens and the SGPE part's."""
        if skip_special_tokens:
            special = self._special_ids()
            ids = [i for i in token_ids(ids, self.vocab.size) if i not in special]
        return self.decode_bytes(ids).decode("utf-8", errors)

    def decode_batch(self, batch: Iterable[Iterable[int]], *, errors: str = "replace",
                     skip_special_tokens: bool = False) -> list[str]:
        """:meth:`decode` of each list of ids, in order."""
        return [self.decode(ids, errors=errors, skip_special_tokens=skip_special_tokens)
                for ids in as_batch(batch, "decode_batch", of="lists of token ids", one="ids")]

    def _special_ids(self) -> frozenset[int]:
        sgpe = (self.offset + self.sgpe.vocab[s] for s in self.sgpe.special_tokens)
        return frozenset([*self.tiktoken.special_tokens.values(), *sgpe])

    def describe(self, *, top: int = 10) -> str:
        """A human-readable summary (``wwho inspect``)."""
        part = self.tiktoken
        sgpe = "\n".join("    " + line for line in self.sgpe.describe(top=top).splitlines())
        return "\n".join([
            f"WWHO meta vocabulary: {self.vocab.size:,} ids = tiktoken {part.name} [0, {self.offset:,}) "
            f"+ SGPE [{self.offset:,}, {self.vocab.size:,})",
            f"  tiktoken {part.name}: n_vocab {part.n_vocab:,}, special tokens "
            + ", ".join(f"{s} = {i}" for s, i in sorted(part.special_tokens.items(), key=lambda kv: kv[1]))
            + f", {len(part.unassigned)} unassigned ids; ranks sha256 {part.sha256}",
            f"  routing: {', '.join(self._scripts)} runs -> SGPE (ids + {self.offset:,}); everything else -> tiktoken",
            f"  SGPE part ({self.sgpe.vocab_size:,} tokens, ids offset by {self.offset:,}):",
            sgpe,
        ])
