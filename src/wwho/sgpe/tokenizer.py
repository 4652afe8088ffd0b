"""``SGPETokenizer``: encode and decode with a trained SGPE vocabulary.

Encoding (all of it per *distinct piece*, behind a cache; see :mod:`wwho.sgpe.words`):

1. text -> pieces (one regex) -> words of syllables (the script's schema, leading spaces);
2. each syllable in the vocabulary is one unit; a syllable that is not is split into its
   characters, and a character that is not in the vocabulary into its UTF-8 bytes, as the
   tokens ``<0x00>``..``<0xFF>`` (``fallback="bytes"``, the default: lossless);
3. the units of a word are merged by rank (:func:`wwho.bpe.apply.merge_units`) with the
   syllable-building merges first (they rebuild whatever syllable pieces they can from
   characters) and the learned merges after them, never across words;
4. units -> ids.

This is exactly what a BPE model with byte fallback computes from code points once the
syllables are built, which is what makes the Hugging Face export exact. With
``unk="token"`` (spec 000's behaviour) an unknown syllable or boundary token becomes
``[UNK]`` instead, and decoding cannot restore it.

Training lives in :mod:`wwho.sgpe.train`; the file format in :mod:`wwho.sgpe.vocabfile`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from wwho.bpe.apply import merge_ids, merge_units, pair_table
from wwho.errors import TokenizerError, VocabError
from wwho.savedir import save_files
from wwho.sgpe.vocabfile import BYTE_TOKENS, VocabFile, load_vocab_file
from wwho.sgpe.words import PIECES, WordSplitter

#: Entries kept in the piece cache before it is cleared (bounded memory).
CACHE_SIZE = 500_000


class SGPETokenizer:
    """A syllable-aware BPE tokenizer. Build it with :meth:`train` or :meth:`load`."""

    def __init__(self, vocab_file: VocabFile, *, unk: str | None = None) -> None:
        fallback = {None: vocab_file.fallback, "bytes": "bytes", "token": "unk", "unk": "unk"}.get(unk)
        if fallback is None:
            raise ValueError(f"unk must be 'bytes' or 'token', not {unk!r}")
        if fallback == "bytes" and vocab_file.fallback != "bytes":
            raise VocabError("this vocabulary has no byte tokens: it can only be used with unk='token'")
        self.file = vocab_file
        self.fallback = fallback
        self.vocab: dict[str, int] = vocab_file.vocab
        self.id_to_token: list[str] = [""] * len(self.vocab)
        for token, i in self.vocab.items():
            self.id_to_token[i] = token
        self.merges = vocab_file.merges
        self.syllable_merges = vocab_file.syllable_merges
        self.special_tokens = vocab_file.special_tokens
        self.script = vocab_file.script
        self.splitter = WordSplitter(vocab_file.script)
        self._learned_ranks = {pair: i for i, pair in reversed(list(enumerate(self.merges)))}
        # One rank table: building merges first, learned merges after them.
        self._pairs = pair_table((*self.syllable_merges, *self.merges), self.vocab)
        self._byte_ids = [self.vocab[t] for t in BYTE_TOKENS] if vocab_file.fallback == "bytes" else []
        self._token_bytes: list[bytes] = [t.encode("utf-8", "surrogatepass") for t in self.id_to_token]
        if self.fallback == "bytes":
            for b, token in enumerate(BYTE_TOKENS):
                self._token_bytes[self.vocab[token]] = bytes([b])
        self._special_ids = frozenset(self.vocab[s] for s in self.special_tokens)
        self._unk_id = self.vocab.get("[UNK]")
        self._cache: dict[str, list[int]] = {}

    # -- construction ------------------------------------------------------------------

    @classmethod
    def train(cls, corpus, *, vocab_size: int, script: str = "sinhala", **options) -> "SGPETokenizer":
        """Train on a corpus (files, directories, globs). See :func:`wwho.sgpe.train.train_sgpe`."""
        from wwho.sgpe.train import train_sgpe

        return cls(train_sgpe(corpus, vocab_size=vocab_size, script=script, **options))

    @classmethod
    def load(cls, path: str | os.PathLike, *, unk: str | None = None) -> "SGPETokenizer":
        """Load a ``vocab.json``, or a directory holding one."""
        path = Path(path)
        if path.is_dir():
            path = path / "vocab.json"
        return cls(load_vocab_file(path), unk=unk)

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``vocab.json`` and the Hugging Face files beside it into ``directory``, all or
        nothing (:func:`wwho.savedir.save_files`: a killed save leaves the old files or the new
        ones, and your other files in ``directory`` stay). Returns the ``vocab.json`` path."""
        files = {"vocab.json": self.file.to_bytes()}
        if self.fallback == "bytes":  # an [UNK] vocabulary cannot be exported exactly
            from wwho.export.hf import hf_files

            files.update(hf_files(self))
        save_files(directory, files, kind="sgpe")
        return Path(directory) / "vocab.json"

    # -- encoding ----------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def __repr__(self) -> str:
        return f"SGPETokenizer(script={self.script!r}, vocab_size={self.vocab_size}, fallback={self.fallback!r})"

    def encode(self, text: str, *, allowed_special: Iterable[str] | str = ()) -> list[int]:
        """Token ids of ``text``. Special-token text (``[CLS]``...) is ordinary text unless
        listed in ``allowed_special`` (or ``allowed_special="all"``)."""
        if not isinstance(text, str):
            raise TokenizerError(f"expected text as str, got {type(text).__name__}")
        if allowed_special:
            return self._encode_with_specials(text, allowed_special)
        return self._encode_ordinary(text)

    def _encode_ordinary(self, text: str) -> list[int]:
        ids: list[int] = []
        cache = self._cache
        for piece in PIECES.findall(text):
            got = cache.get(piece)
            if got is None:
                if len(cache) >= CACHE_SIZE:
                    cache.clear()
                got = cache[piece] = self._encode_piece(piece)
            ids.extend(got)
        return ids

    def _encode_with_specials(self, text: str, allowed: Iterable[str] | str) -> list[int]:
        import re

        allowed_set = set(self.special_tokens) if allowed == "all" else set(allowed)
        unknown = allowed_set - set(self.special_tokens)
        if unknown:
            raise TokenizerError(f"not special tokens of this vocabulary: {sorted(unknown)}")
        pattern = re.compile("|".join(map(re.escape, sorted(allowed_set, key=len, reverse=True))))
        ids: list[int] = []
        pos = 0
        for m in pattern.finditer(text):
            ids += self._encode_ordinary(text[pos:m.start()])
            ids.append(self.vocab[m.group()])
            pos = m.end()
        ids += self._encode_ordinary(text[pos:])
        return ids

    def encode_batch(self, texts: Sequence[str], *, allowed_special: Iterable[str] | str = ()) -> list[list[int]]:
        return [self.encode(t, allowed_special=allowed_special) for t in texts]

    def tokenize(self, text: str) -> list[str]:
        """The token strings of ``text`` (byte-fallback tokens appear as ``<0xNN>``)."""
        return [self.id_to_token[i] for i in self.encode(text)]

    def _encode_piece(self, piece: str) -> list[int]:
        vocab = self.vocab
        ids: list[int] = []
        for _, word in self.splitter.split(piece):
            if self.fallback == "unk":
                units = [s if s in vocab else "[UNK]" for s in word]
                ids.extend(vocab[u] for u in merge_units(units, self._learned_ranks))
                continue
            units: list[int] = []
            get = vocab.get
            for syllable in word:
                i = get(syllable)
                if i is not None:
                    units.append(i)
                    continue
                for ch in syllable:
                    i = get(ch)
                    if i is not None:
                        units.append(i)
                    else:
                        units.extend(self._byte_ids[b] for b in ch.encode("utf-8", "surrogatepass"))
            ids.extend(merge_ids(units, self._pairs))
        return ids

    def describe(self, *, top: int = 10) -> str:
        """A human-readable summary (``wwho inspect``)."""
        byte_tokens = sum(1 for t in BYTE_TOKENS if t in self.vocab)
        lines = [
            f"SGPE vocabulary: {self.vocab_size:,} tokens, script {self.script!r} "
            f"({', '.join(self.splitter.scripts)}), format {self.file.version}",
            f"  special tokens: {' '.join(self.special_tokens)}",
            f"  learned merges: {len(self.merges):,}; syllable-building merges: {len(self.syllable_merges):,}",
            f"  fallback: {self.fallback} ({byte_tokens} byte tokens); prune_freq {self.file.prune_freq}, "
            f"min_freq {self.file.min_freq}",
            f"  first {top} merges:",
            *(f"    {a!r} + {b!r} -> {a + b!r}" for a, b in self.merges[:top]),
            f"  longest {top} tokens:",
            *(f"    {t!r} ({len(t)} chars, id {self.vocab[t]})"
              for t in sorted(self.vocab, key=lambda t: (-len(t), t))[:top]),
        ]
        return "\n".join(lines)

    # -- decoding ----------------------------------------------------------------------

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token (a byte-fallback token is its single byte)."""
        if type(token_id) is not int or not 0 <= token_id < len(self._token_bytes):
            raise TokenizerError(f"token id {token_id!r} is out of range [0, {len(self._token_bytes)})")
        return self._token_bytes[token_id]

    def decode_bytes(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> bytes:
        table = self._token_bytes
        n = len(table)
        out = []
        for i in ids:
            if type(i) is not int or not 0 <= i < n:
                raise TokenizerError(f"token id {i!r} is out of range [0, {n})")
            if skip_special_tokens and i in self._special_ids:
                continue
            out.append(table[i])
        return b"".join(out)

    def decode(self, ids: Iterable[int], *, errors: str = "replace", skip_special_tokens: bool = False) -> str:
        """Text of ``ids``. Lossless for any text encoded with byte fallback (lone surrogates
        included); bytes that are not valid UTF-8 become U+FFFD (``errors="replace"``)."""
        data = self.decode_bytes(ids, skip_special_tokens=skip_special_tokens)
        try:
            return data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return data.decode("utf-8", errors)
