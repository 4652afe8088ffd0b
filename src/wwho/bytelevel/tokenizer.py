"""Byte-level BPE (tiktoken, GPT-2, Llama 3, Qwen2 ...): encode, decode, load, save.

A :class:`ByteBPE` is a vocabulary of byte strings (``ranks``: token bytes -> id), a
pre-tokenizer (:mod:`wwho.bytelevel.pretokenize`), special tokens, and one of two merge rules:

* **ranks** (tiktoken): two adjacent parts merge if their concatenation is a token,
  lowest id first; a piece that is itself a token is emitted whole.
* **merges** (Hugging Face ``tokenizer.json``, GGUF): only the listed pairs merge, in
  list order; a whole-piece lookup happens first only with ``ignore_merges`` (Llama 3).

Both apply the lowest-ranked pair first and, on ties, the leftmost one. Short pieces
use a list scan (``min``/``index`` run in C); long ones (a 100 kB run of one
character) a heap over a linked list, so no piece costs quadratic time. Results are
kept in bounded caches, per piece and per space-separated word (see ``_encode_words``).

Special tokens follow tiktoken: by default their text in the input is an error;
``allowed_special`` turns it into the special id; ``disallowed_special=()`` encodes it
as plain text. ``added_tokens`` (GGUF ``USER_DEFINED`` / HF non-special added tokens)
are always split out of the text first, as Hugging Face and llama.cpp do.

Loading and saving live in :mod:`wwho.bytelevel.files` and :mod:`wwho.bytelevel.gguf`, training in
:mod:`wwho.bytelevel.train`; they produce and take a :class:`~wwho.bytelevel.model.ByteLevelModel`,
which the constructors here wrap. This module itself reads no files.
"""

from __future__ import annotations

import heapq
import operator
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, compress, islice, repeat
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import regex

from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import Pretokenizer
from wwho.errors import TokenizerError, VocabError

#: Pieces of at most this many bytes use the list-scan merge; longer ones the heap.
LONG_PIECE = 200
#: Default bound of each cache (pieces; words), in entries. When one is full its older half is
#: dropped. 2^18 holds every distinct o200k piece and word of the 87 MB of Sinhala text in
#: shared/data (185k pieces, 222k words: 75 MB of memory, measured).
CACHE_SIZE = 1 << 18

_INF = 1 << 62
_SINGLE = [bytes([b]) for b in range(256)]


class DisallowedSpecialError(TokenizerError):
    """The text contains a special token that the caller did not allow."""

    def __init__(self, token: str, offset: int) -> None:
        self.token, self.offset = token, offset
        super().__init__(
            f"text contains the special token {token!r} at offset {offset}; pass "
            f"allowed_special={{{token!r}}} (or 'all') to encode it as a special token, or "
            f"disallowed_special=() to encode it as plain text"
        )


class ByteBPE:
    """A byte-level BPE tokenizer (see the module docstring for the two merge rules)."""

    def __init__(
        self,
        ranks: Mapping[bytes, int],
        *,
        pattern: str | Sequence[str] | Pretokenizer = "o200k",
        special_tokens: Mapping[str, int] | None = None,
        merges: Sequence[tuple[bytes, bytes]] | None = None,
        ignore_merges: bool | None = None,
        added_tokens: Mapping[str, int] | None = None,
        extra_tokens: Mapping[int, bytes] | None = None,
        bos_id: int | None = None,
        eos_id: int | None = None,
        add_bos: bool = False,
        add_eos: bool = False,
        name: str = "",
        cache_size: int = CACHE_SIZE,
    ) -> None:
        """``ranks``: token bytes -> id (the rank, for the ranks rule). ``merges``: ordered pairs
        (switches to the merges rule). ``extra_tokens``: id -> bytes of tokens that decode but
        are never produced by encoding (e.g. a GGUF token that is not byte-level text)."""
        self.pretokenizer = Pretokenizer.coerce(pattern)
        self.name = name
        self._encoder: dict[bytes, int] = dict(ranks)
        self.special_tokens: dict[str, int] = dict(special_tokens or {})
        self.added_tokens: dict[str, int] = dict(added_tokens or {})
        self._extra: dict[int, bytes] = dict(extra_tokens or {})
        self._decoder = self._build_decoder()
        self._n_vocab = max(self._decoder) + 1 if self._decoder else 0
        self.merges: list[tuple[bytes, bytes]] | None = None
        self._merge_ranks: dict[tuple[bytes, bytes], int] | None = None
        if merges is not None:
            self.merges = [(bytes(a), bytes(b)) for a, b in merges]
            self._merge_ranks = self._index_merges(self.merges)
        self.ignore_merges = True if merges is None else bool(ignore_merges)
        for label, value in (("bos_id", bos_id), ("eos_id", eos_id)):
            if value is not None and value not in self._decoder:
                raise VocabError(f"{label}={value} is not a token id of this vocabulary")
        self.bos_id, self.eos_id = bos_id, eos_id
        self.add_bos, self.add_eos = bool(add_bos), bool(add_eos)
        self._text_ids = {**self.added_tokens, **self.special_tokens}
        self._special_set = frozenset(self.special_tokens)
        # What every special token starts with ("<|" for most): a text without it holds none.
        self._special_prefix = os.path.commonprefix(sorted(self._special_set))
        self._splitters: dict[tuple[frozenset[str], bool], regex.Pattern | None] = {}
        self._cache: dict[str | bytes, tuple[int, ...]] = {}  # piece -> ids
        self._words: dict[str, tuple[int, ...]] = {}  # clean word -> ids of " " + word
        self._heads: dict[str, tuple[int, ...]] = {}  # first word of a text (no space before it)
        self._space_split = self.pretokenizer.space_split and not self.pretokenizer.has_byte_stage
        self._cache_size = int(cache_size)

    def _build_decoder(self) -> dict[int, bytes]:
        decoder: dict[int, bytes] = {}
        groups = (
            ("ranks", ((i, t) for t, i in self._encoder.items())),
            ("special_tokens", ((i, s.encode("utf-8")) for s, i in self.special_tokens.items())),
            ("added_tokens", ((i, s.encode("utf-8")) for s, i in self.added_tokens.items())),
            ("extra_tokens", self._extra.items()),
        )
        for label, pairs in groups:
            for i, data in pairs:
                if not isinstance(i, int) or isinstance(i, bool) or i < 0:
                    raise VocabError(f"{label}: token id {i!r} for {data!r} is not a non-negative int")
                if i in decoder:
                    raise VocabError(f"{label}: token id {i} is used twice ({decoder[i]!r} and {data!r})")
                decoder[i] = data
        for label, texts in (("special_tokens", self.special_tokens), ("added_tokens", self.added_tokens)):
            if "" in texts:
                raise VocabError(f"{label}: a special or added token cannot be empty")
        clash = set(self.special_tokens) & set(self.added_tokens)
        if clash:
            raise VocabError(f"{min(clash)!r} is both a special and an added token")
        return decoder

    def _index_merges(self, merges: list[tuple[bytes, bytes]]) -> dict[tuple[bytes, bytes], int]:
        index: dict[tuple[bytes, bytes], int] = {}
        for rank, (a, b) in enumerate(merges):
            if a + b not in self._encoder:
                raise VocabError(
                    f"merge {rank} ({a!r}, {b!r}): the merged token {a + b!r} is not in the vocabulary"
                )
            index.setdefault((a, b), rank)  # a repeated pair keeps its first (lowest) rank
        return index

    # --- vocabulary -----------------------------------------------------------------------

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """Token bytes -> id of the ordinary (mergeable) tokens, read-only."""
        return MappingProxyType(self._encoder)

    @property
    def n_vocab(self) -> int:
        """One more than the largest token id (tiktoken's ``n_vocab``)."""
        return self._n_vocab

    @property
    def vocab_size(self) -> int:
        """How many ids have a token (ordinary, special, added, extra); <= ``n_vocab``."""
        return len(self._decoder)

    @property
    def special_tokens_set(self) -> frozenset[str]:
        return self._special_set

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token (a special token's are its UTF-8 text)."""
        try:
            return self._decoder[token_id]
        except (KeyError, TypeError):
            raise self._bad_id(token_id, None) from None

    def _bad_id(self, token_id: object, position: int | None) -> TokenizerError:
        where = "" if position is None else f" at position {position}"
        return TokenizerError(
            f"token id {token_id!r}{where} is not in this vocabulary (n_vocab={self.n_vocab})"
        )

    # --- decoding -------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        try:
            return b"".join(map(self._decoder.__getitem__, ids))
        except (KeyError, TypeError):
            for position, i in enumerate(ids):
                try:
                    known = operator.index(i) in self._decoder  # numpy integers are fine
                except TypeError:
                    known = False
                if not known:
                    raise self._bad_id(i, position) from None
            raise

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Text of ``ids``; bytes that are not valid UTF-8 become U+FFFD (``errors="replace"``)."""
        return self.decode_bytes(ids).decode("utf-8", errors)

    # --- encoding -------------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with special-token text treated as plain text."""
        return self._encode(_check_text(text), frozenset())

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Iterable[str] = frozenset(),
        disallowed_special: Literal["all"] | Iterable[str] = "all",
        add_special: bool = False,
    ) -> list[int]:
        """Ids of ``text`` (tiktoken semantics for special tokens; see the module docstring).

        ``add_special`` prepends BOS / appends EOS when the vocabulary asks for it
        (``add_bos`` / ``add_eos``, read from GGUF files).
        """
        _check_text(text)
        if not allowed_special and disallowed_special == "all":  # the default, made cheap
            allowed = frozenset()
            if self._special_set and self._special_prefix in text:  # a C substring scan
                self._check_disallowed(text, self._special_set)
        else:
            allowed = self._special_set if allowed_special == "all" else self._known_specials(allowed_special)
            if disallowed_special == "all":
                disallowed = self._special_set - allowed
            else:
                disallowed = self._known_specials(disallowed_special)
            if disallowed:
                self._check_disallowed(text, disallowed)
        ids = self._encode(text, allowed)
        if add_special:
            if self.add_bos and self.bos_id is not None:
                ids.insert(0, self.bos_id)
            if self.add_eos and self.eos_id is not None:
                ids.append(self.eos_id)
        return ids

    def _check_disallowed(self, text: str, disallowed: frozenset[str]) -> None:
        match = self._splitter(disallowed, added=False).search(text)
        if match:
            raise DisallowedSpecialError(match.group(), match.start())

    def encode_batch(self, texts: Iterable[str], **options) -> list[list[int]]:
        """``[encode(t, **options) for t in texts]``; the piece cache is shared."""
        return [self.encode(t, **options) for t in texts]

    def encode_ordinary_batch(self, texts: Iterable[str]) -> list[list[int]]:
        return [self.encode_ordinary(t) for t in texts]

    def _known_specials(self, names: Iterable[str]) -> frozenset[str]:
        if isinstance(names, str):
            raise TokenizerError(
                f"special-token sets must be 'all' or a collection of strings, not {names!r}"
            )
        names = frozenset(names)
        unknown = names - self._special_set
        if unknown:
            raise TokenizerError(f"not special tokens of this vocabulary: {sorted(unknown)}")
        return names

    def _splitter(self, specials: frozenset[str], *, added: bool = True) -> regex.Pattern | None:
        """Regex matching ``specials`` (plus the added tokens if ``added``), longest first."""
        key = (specials, added)
        if key not in self._splitters:
            texts = set(specials) | (set(self.added_tokens) if added else set())
            # Longest first makes the alternation leftmost-longest, as HF's added-token matcher.
            alternatives = sorted(texts, key=lambda s: (-len(s), s))
            self._splitters[key] = regex.compile("|".join(map(regex.escape, alternatives))) if texts else None
        return self._splitters[key]

    def _encode(self, text: str, allowed: frozenset[str]) -> list[int]:
        try:
            return self._encode_split(text, allowed)
        except UnicodeEncodeError:
            # Lone surrogates cannot be UTF-8: replace them as tiktoken does.
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return self._encode_split(text, allowed)

    def _encode_split(self, text: str, allowed: frozenset[str]) -> list[int]:
        splitter = self._splitter(allowed) if allowed or self.added_tokens else None
        if splitter is None:
            return self._encode_chunk(text)
        ids: list[int] = []
        pos = 0
        for match in splitter.finditer(text):
            if match.start() > pos:
                ids += self._encode_chunk(text[pos : match.start()])
            ids.append(self._text_ids[match.group()])
            pos = match.end()
        if pos < len(text):
            ids += self._encode_chunk(text[pos:])
        return ids

    def _encode_chunk(self, text: str) -> list[int]:
        """Ids of text that holds no special or added token: the hot path."""
        if self._space_split:
            return self._encode_words(text)
        return self._encode_pieces(text)

    def _encode_pieces(self, text: str) -> list[int]:
        """Pre-tokenize ``text`` and look every piece up in the piece cache."""
        pretok = self.pretokenizer
        pieces: list = pretok.split_bytes(text) if pretok.has_byte_stage else pretok.split(text)
        found = list(map(self._cache.get, pieces))
        try:
            return list(chain.from_iterable(found))
        except TypeError:  # a None: some pieces are not cached yet
            for i, ids in enumerate(found):
                if ids is None:
                    found[i] = self._encode_piece(pieces[i])
            return list(chain.from_iterable(found))

    # Word-level fast path. For the built-in pre-tokenizers no piece ever spans a single space
    # that has a non-space on both sides (only whitespace runs hold a space anywhere but at
    # their start), so text can be cut before such spaces and the parts encoded alone. A
    # "word" (text between spaces) is cached with the ids of " " + word when it is clean:
    # non-empty, with no whitespace at either end. If every word is a cached (so clean) word,
    # every cut is safe and encoding is split + dict lookups, all in C. tests/test_bytelevel.py
    # checks this path against the plain one for every named pre-tokenizer.

    def _encode_words(self, text: str) -> list[int]:
        words = text.split(" ")
        if len(words) < 3:
            return self._encode_pieces(text)
        found = list(map(self._words.get, words))
        head = words[0]
        if head:
            ids = self._heads.get(head)
            if ids is None:
                ids = tuple(self._encode_pieces(head))
                if head[-1].isspace():  # the cut after it is not safe
                    found[0] = ids
                    return self._encode_words_slow(words, found, [0])
                self._remember(self._heads, head, ids)
            found[0] = ids
        else:
            found[0] = ()
        try:
            return list(chain.from_iterable(found))
        except TypeError:
            return self._encode_words_slow(words, found, [])

    def _encode_words_slow(self, words: list[str], found: list, bad: list[int]) -> list[int]:
        missing = compress(range(len(words)), map(operator.is_, found, repeat(None)))  # C-level scan
        for i in missing:
            word = words[i]
            if word and not word[0].isspace() and not word[-1].isspace():
                found[i] = self._encode_word(word)
            else:
                bad.append(i)
        if not bad:
            return list(chain.from_iterable(found))
        # A word with whitespace at an end (or an empty one: two spaces in a row) makes the
        # cuts on its sides unsafe: encode it together with its neighbours.
        last = len(words) - 1
        ranges: list[list[int]] = []
        for i in sorted(bad):
            a, b = max(i - 1, 0), min(i + 1, last)
            if ranges and a <= ranges[-1][1]:
                ranges[-1][1] = b
            else:
                ranges.append([a, b])
        ids: list[int] = []
        done = 0
        for a, b in ranges:
            ids += chain.from_iterable(found[done:a])
            ids += self._encode_pieces(("" if a == 0 else " ") + " ".join(words[a : b + 1]))
            done = b + 1
        ids += chain.from_iterable(found[done:])
        return ids

    def _encode_word(self, word: str) -> tuple[int, ...]:
        pieces = self.pretokenizer.split(" " + word)
        if len(pieces) == 1:  # the usual case
            ids = self._cache.get(pieces[0]) or self._encode_piece(pieces[0])
        else:
            ids = tuple(chain.from_iterable(self._cache.get(p) or self._encode_piece(p) for p in pieces))
        self._remember(self._words, word, ids)
        return ids

    def _encode_piece(self, piece: str | bytes) -> tuple[int, ...]:
        ids = self._piece_ids(piece)
        self._remember(self._cache, piece, ids)
        return ids

    def _piece_ids(self, piece: str | bytes) -> tuple[int, ...]:
        """BPE of one piece (no cache)."""
        data = piece.encode("utf-8") if isinstance(piece, str) else piece
        encoder = self._encoder
        token = encoder.get(data) if self.ignore_merges else None
        if token is not None:
            return (token,)
        if self._merge_ranks is None:
            parts = _merge_by_ranks(data, encoder)
        else:
            parts = _merge_by_pairs(data, self._merge_ranks)
        try:
            return tuple(map(encoder.__getitem__, parts))
        except KeyError:
            missing = next(p for p in parts if p not in encoder)
            raise TokenizerError(f"byte {missing!r} has no token in this vocabulary") from None

    def _remember(self, cache: dict, key: str | bytes, ids: tuple[int, ...]) -> None:
        if len(cache) >= self._cache_size:
            # Full: forget the older half (dicts keep insertion order), keep the recent half.
            for old in list(islice(cache, len(cache) // 2)):
                del cache[old]
        cache[key] = ids

    def clear_cache(self) -> None:
        self._cache.clear()
        self._words.clear()
        self._heads.clear()

    # --- training, constructors and files (wwho.bytelevel.train, .files, .gguf) ------------

    @classmethod
    def from_model(cls, model: ByteLevelModel, **options) -> ByteBPE:
        """The tokenizer of a :class:`ByteLevelModel` (``options``: ``cache_size``)."""
        return cls(
            model.ranks,
            pattern=model.pattern,
            special_tokens=model.special_tokens,
            merges=model.merges,
            ignore_merges=model.ignore_merges,
            added_tokens=model.added_tokens,
            extra_tokens=model.extra_tokens,
            bos_id=model.bos_id,
            eos_id=model.eos_id,
            add_bos=model.add_bos,
            add_eos=model.add_eos,
            name=model.name,
            **options,
        )

    @property
    def model(self) -> ByteLevelModel:
        """The data of this tokenizer (copies), as the file writers take it."""
        return ByteLevelModel(
            dict(self._encoder),
            self.pretokenizer,
            special_tokens=dict(self.special_tokens),
            merges=None if self.merges is None else list(self.merges),
            ignore_merges=self.ignore_merges,
            added_tokens=dict(self.added_tokens),
            extra_tokens=dict(self._extra),
            bos_id=self.bos_id,
            eos_id=self.eos_id,
            add_bos=self.add_bos,
            add_eos=self.add_eos,
            name=self.name,
        )

    @classmethod
    def train(
        cls,
        corpus,
        *,
        vocab_size: int,
        pattern: str = "gpt4",
        special_tokens: Iterable[str] = (),
        min_freq: int = 2,
        workers: int | None = None,
        progress: bool = True,
        **options,
    ) -> ByteBPE:
        """Train on text/JSONL files; ``vocab_size`` counts bytes, merges and specials.

        See :func:`wwho.bytelevel.train.train_bytelevel` (also for ``text_field``,
        ``skip_bad_lines`` and ``stats``).
        """
        from wwho.bytelevel.train import train_bytelevel

        return cls.from_model(train_bytelevel(
            corpus, vocab_size=vocab_size, pattern=pattern, special_tokens=special_tokens,
            min_freq=min_freq, workers=workers, progress=progress, **options))

    @classmethod
    def from_tiktoken(cls, name_or_path: str | Path, **options) -> ByteBPE:
        """From a ``.tiktoken`` ranks file or a known name (``o200k_base``, ``cl100k_base``)."""
        from wwho.bytelevel.files import from_tiktoken

        return cls.from_model(from_tiktoken(name_or_path, **options))

    @classmethod
    def from_gguf(cls, path: str | Path, **options) -> ByteBPE:
        """From the tokenizer metadata of a GGUF file (byte-level BPE models only)."""
        from wwho.bytelevel.gguf import load_gguf

        return cls.from_model(load_gguf(path, **options))

    @classmethod
    def from_hf(cls, path: str | Path) -> ByteBPE:
        """From a byte-level BPE Hugging Face ``tokenizer.json``."""
        from wwho.bytelevel.files import from_hf

        return cls.from_model(from_hf(path))

    @classmethod
    def load(cls, path: str | Path) -> ByteBPE:
        """From a directory written by :meth:`save`."""
        from wwho.bytelevel.files import load

        return cls.from_model(load(path))

    def save(self, directory: str | Path, *, hf: bool = False) -> Path:
        """Write ``ranks.tiktoken`` + ``bytelevel.json`` (+ ``merges.txt``; + ``tokenizer.json``
        with ``hf=True``) into ``directory``, all or nothing (:func:`wwho.savedir.save_files`)."""
        from wwho.bytelevel.files import save

        return save(self.model, directory, hf=hf)

    def export_hf(self, path: str | Path) -> Path:
        """Write a Hugging Face ``tokenizer.json`` that encodes exactly like this tokenizer."""
        from wwho.bytelevel.files import export_hf

        return export_hf(self.model, path)

    def describe(self, *, top: int = 10) -> str:
        """A human-readable summary (``wwho inspect``): model, pre-tokenizer, sizes, merges, specials."""
        pre = self.pretokenizer
        show = lambda b: b.decode("utf-8", "backslashreplace")  # noqa: E731
        lines = [
            f"byte-level BPE {self.name or '(unnamed)'}: n_vocab {self.n_vocab:,}, {self.vocab_size:,} tokens",
            f"  pre-tokenizer: {pre.name or 'custom'} ({len(pre.patterns) + len(pre.byte_patterns)} regex(es))",
            *(f"    {p}" for p in (*pre.patterns, *pre.byte_patterns)),
            f"  merge rule: {'ranks (tiktoken)' if self.merges is None else f'{len(self.merges):,} merges (in order)'}",
            f"  special tokens ({len(self.special_tokens)}): "
            + ", ".join(f"{t}={i}" for t, i in sorted(self.special_tokens.items(), key=lambda x: x[1])[:top])
            + (" ..." if len(self.special_tokens) > top else ""),
            f"  added tokens: {len(self.added_tokens)}; bos {self.bos_id} (add: {self.add_bos}), "
            f"eos {self.eos_id} (add: {self.add_eos})",
        ]
        if self.merges:
            lines += [f"  first {top} merges:", *(f"    {show(a)!r} + {show(b)!r}" for a, b in self.merges[:top])]
        longest = sorted(self._decoder.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]
        lines += [f"  longest {top} tokens:", *(f"    {i}: {show(b)!r} ({len(b)} bytes)" for i, b in longest)]
        return "\n".join(lines)

    def __repr__(self) -> str:
        rule = "ranks" if self.merges is None else f"{len(self.merges)} merges"
        label = f" {self.name!r}" if self.name else ""
        return f"<ByteBPE{label} n_vocab={self.n_vocab} {rule} specials={len(self.special_tokens)}>"


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise TokenizerError(f"expected text (str), got {type(text).__name__}")
    return text


# --- the merge loops ----------------------------------------------------------------------


def _merge_by_ranks(data: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """tiktoken's rule: merge the adjacent pair whose concatenation has the lowest rank."""
    if len(data) > LONG_PIECE:
        return _merge_heap(data, lambda a, b: ranks.get(a + b))
    parts = [_SINGLE[b] for b in data]
    get = ranks.get
    pair_ranks = [get(parts[i] + parts[i + 1], _INF) for i in range(len(parts) - 1)]
    while pair_ranks:
        best = min(pair_ranks)
        if best == _INF:
            break
        i = pair_ranks.index(best)  # leftmost of the lowest
        parts[i] += parts[i + 1]
        del parts[i + 1], pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get(parts[i] + parts[i + 1], _INF)
        if i:
            pair_ranks[i - 1] = get(parts[i - 1] + parts[i], _INF)
    return parts


def _merge_by_pairs(data: bytes, merges: Mapping[tuple[bytes, bytes], int]) -> list[bytes]:
    """Hugging Face / GGUF rule: merge the listed pair with the lowest rank."""
    if len(data) > LONG_PIECE:
        return _merge_heap(data, lambda a, b: merges.get((a, b)))
    parts = [_SINGLE[b] for b in data]
    get = merges.get
    pair_ranks = [get((parts[i], parts[i + 1]), _INF) for i in range(len(parts) - 1)]
    while pair_ranks:
        best = min(pair_ranks)
        if best == _INF:
            break
        i = pair_ranks.index(best)
        parts[i] += parts[i + 1]
        del parts[i + 1], pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get((parts[i], parts[i + 1]), _INF)
        if i:
            pair_ranks[i - 1] = get((parts[i - 1], parts[i]), _INF)
    return parts


def _merge_heap(data: bytes, rank_of: Callable[[bytes, bytes], int | None]) -> list[bytes]:
    """The same rule in O(n log n): a heap of candidate pairs over a doubly linked list.

    A heap entry ``(rank, left, len_left, len_right)`` is stale once either part has
    grown (parts only grow, so equal lengths mean equal parts); stale entries are skipped.
    ``left`` is the part's original index, so ties go to the leftmost pair.
    """
    parts: list[bytes | None] = [_SINGLE[b] for b in data]
    n = len(parts)
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    heap = []
    for i in range(n - 1):
        r = rank_of(parts[i], parts[i + 1])
        if r is not None:
            heap.append((r, i, 1, 1))
    heapq.heapify(heap)
    while heap:
        _, i, len_left, len_right = heapq.heappop(heap)
        left = parts[i]
        j = nxt[i]
        if left is None or j < 0 or len(left) != len_left or len(parts[j]) != len_right:
            continue
        merged = left + parts[j]
        parts[i], parts[j] = merged, None
        k = nxt[j]
        nxt[i] = k
        if k >= 0:
            prv[k] = i
            r = rank_of(merged, parts[k])
            if r is not None:
                heapq.heappush(heap, (r, i, len(merged), len(parts[k])))
        p = prv[i]
        if p >= 0:
            r = rank_of(parts[p], merged)
            if r is not None:
                heapq.heappush(heap, (r, p, len(parts[p]), len(merged)))
    return [part for part in parts if part is not None]
