"""``SGPETokenizer``: encode and decode with a trained SGPE vocabulary.

Encoding (per piece; see :mod:`wwho.sgpe.words`):

1. text -> pieces (one regex) -> words of syllables (the script's schema, leading spaces);
2. each syllable in the vocabulary is one unit; a syllable that is not is split into its
   characters, and a character that is not in the vocabulary into its UTF-8 bytes, as the
   tokens ``<0x00>``..``<0xFF>`` (``fallback="bytes"``, the default: lossless);
3. the units of a span are merged by rank (lowest first, leftmost on ties) with the
   syllable-building merges first (they rebuild whatever syllable pieces they can from
   characters) and the learned merges after them, never across spans (a span is a word, a run
   or the whole piece: the vocabulary's ``merge_scope``, :mod:`wwho.sgpe.scopes`). The building
   merges rebuild a syllable before they join a leading space to it (:mod:`wwho.sgpe.building`),
   so a syllable after a space that is not a token, where the bare syllable is, becomes the space
   and that token: no boundary falls inside a syllable the vocabulary knows with or without its
   leading space (vocabularies trained before this order keep their own merges);
4. with superword merges (:mod:`wwho.sgpe.superwords`), every rank, superword merges last,
   then runs over the units of each sentence span (runs of pieces joined by single spaces);
5. units -> ids.

A ``prefix_space`` vocabulary encodes each text (each part between special tokens) as if a
space came before it, SentencePiece's dummy prefix; decoding drops that one leading space.

All of it runs in the compiled core (``wwho._core.SGPEEncoder``), which this class builds
from the vocabulary once; :meth:`SGPETokenizer.encode_batch` spreads texts over threads
without the GIL, and one tokenizer may serve many threads at once (the core holds no
mutable state, hence no cache either). The pure-Python encoder it replaced is the tests'
reference (``tests/reference/sgpe.py``).

This is exactly what a BPE model with byte fallback computes from code points once the
syllables are built, which is what makes the Hugging Face export exact. With
``unk="token"`` (spec 000's behaviour) an unknown syllable or boundary token becomes
``[UNK]`` instead, and decoding cannot restore it.

Training lives in :mod:`wwho.sgpe.train`; the file format in :mod:`wwho.sgpe.vocabfile`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wwho import _core
from wwho.encoding_names import EncodingNames, first_ids_by_bytes
from wwho.errors import (
    TokenizerError,
    VocabError,
    WrongTypeError,
    WwhoError,
    WwhoWarning,
    brief,
    check_count,
    check_flag,
)
from wwho.frozen import FrozenDict
from wwho.ids import (
    DEFAULT_ERRORS,
    char_offsets,
    check_decode_options,
    each_decoded,
    each_token_bytes,
    id_batch,
    no_token_string,
    not_texts,
    prepare_arrays,
    token_ids,
    utf8_keeping_surrogates,
    utf8_text,
)
from wwho.ids import batch as as_batch
from wwho.ids import token_id as checked_id
from wwho.imports import arrays as arrays_module
from wwho.manifest import listed
from wwho.notices import warn
from wwho.pickling import class_arg, restored_as
from wwho.protocol import (
    NO_SPECIALS,
    all_names,
    no_names,
    refuse_allowed_and_disallowed,
    refuse_named_text,
    special_name_sets,
    special_names,
)
from wwho.savedir import save_files
from wwho.sgpe.superwords import SPAN_BREAKS
from wwho.sgpe.vocabfile import BYTE_TOKENS, VocabFile, load_vocab_file
from wwho.sgpe.words import WordSplitter
from wwho.threads import thread_count
from wwho.wholeload import loads_whole

if TYPE_CHECKING:  # numpy is imported by the first call that makes an array, not by `import wwho`
    import numpy as np
    from numpy.typing import NDArray

    from wwho.arrays import FlatIds
    from wwho.scale.counts import CountSource
    from wwho.scale.texts import TextSource


class SGPETokenizer(EncodingNames):
    """A syllable-aware BPE tokenizer. Build it with :meth:`train` or :meth:`load`. It answers to
    ``tiktoken.Encoding``'s names too (:mod:`wwho.encoding_names`)."""

    def __init__(self, vocab_file: VocabFile, *, unk: str | None = None) -> None:
        fallback = _fallback(unk, vocab_file.fallback)
        if fallback == "bytes" and vocab_file.fallback != "bytes":
            raise VocabError("this vocabulary has no byte tokens: it can only be used with unk='token'")
        self.file = vocab_file
        self.fallback = fallback
        #: token string -> id, read-only (a copy of the file's table, which the core has read)
        self.vocab: dict[str, int] = FrozenDict(vocab_file.vocab)
        #: token strings by id (``id_to_token`` was this list before it became a method)
        self.tokens: list[str] = [""] * len(self.vocab)
        for token, i in self.vocab.items():
            self.tokens[i] = token
        self.merges = vocab_file.merges
        self.syllable_merges = vocab_file.syllable_merges
        self.special_tokens = vocab_file.special_tokens
        self._special_table = {s: self.vocab[s] for s in self.special_tokens}
        self._bytes_ids: dict[bytes, int] | None = None
        self.script = vocab_file.script
        self.splitter = WordSplitter(vocab_file.script, split_punctuation=vocab_file.split_punctuation)
        self.split_punctuation = vocab_file.split_punctuation
        self.merge_scope = vocab_file.merge_scope
        self.prefix_space = vocab_file.prefix_space
        self.superword_merges = vocab_file.superword_merges
        vocab = self.vocab
        # One rank table: building merges first, learned merges after them ("unk": learned only,
        # as spec 000's encoder, which knows no building merges).
        ranked = self.merges if fallback == "unk" else (*self.syllable_merges, *self.merges)
        self._core = _core.SGPEEncoder(
            self.splitter.core,
            self.tokens,
            [(vocab[a], vocab[b], vocab[a + b]) for a, b in ranked],
            byte_ids=[vocab[t] for t in BYTE_TOKENS] if fallback == "bytes" else None,
            unk_id=vocab.get("[UNK]"),
            special_ids=[vocab[s] for s in self.special_tokens],
            scope=self.merge_scope,
            prefix_space=self.prefix_space,
            superword_merges=[(vocab[a], vocab[b], vocab[a + b]) for a, b in self.superword_merges],
            span_breaks=SPAN_BREAKS,
        )
        prepare_arrays()

    def __reduce__(self):
        # Pickled as its vocabulary (for worker processes); the core tables are rebuilt. A
        # subclass's pickle names it (wwho.pickling).
        return (_restore, (self.file, "bytes" if self.fallback == "bytes" else "token", *class_arg(self, SGPETokenizer)))

    # -- construction ------------------------------------------------------------------

    @classmethod
    def train(cls, corpus: str | os.PathLike | Iterable[str | os.PathLike], *, vocab_size: int, script: str = "sinhala",
              **options: Any) -> SGPETokenizer:
        """Train on a corpus (files, directories, globs). See :func:`wwho.sgpe.train.train_sgpe` (the
        options)."""
        from wwho.sgpe.train import train_sgpe

        return cls(train_sgpe(corpus, vocab_size=vocab_size, script=script, **options))

    @classmethod
    def train_from_iterator(cls, iterator: TextSource, *, vocab_size: int, script: str = "sinhala",
                            length: int | None = None, **options: Any) -> SGPETokenizer:
        """Train on an iterable of strings or of batches of strings, or a ``datasets.Dataset``
        (its ``text_column=``, default ``"text"``); each string is one document. See
        :func:`wwho.sgpe.train.train_sgpe_from_iterator` (the options)."""
        from wwho.sgpe.train import train_sgpe_from_iterator

        return cls(train_sgpe_from_iterator(iterator, vocab_size=vocab_size, script=script, length=length,
                                            **options))

    @classmethod
    def train_from_counts(cls, counts: CountSource, *, vocab_size: int, script: str = "sinhala",
                          **options: Any) -> SGPETokenizer:
        """Train on piece counts: a dict or ``piece<TAB>count`` files (:mod:`wwho.scale.counts`).
        See :func:`wwho.sgpe.train.train_sgpe_from_counts` (the options)."""
        from wwho.sgpe.train import train_sgpe_from_counts

        return cls(train_sgpe_from_counts(counts, vocab_size=vocab_size, script=script, **options))

    @classmethod
    @loads_whole
    def load(cls, path: str | os.PathLike, *, unk: str | None = None) -> SGPETokenizer:
        """Load a ``vocab.json``, or a directory holding one. Another kind of tokenizer is an error
        that names it (:func:`wwho.load_tokenizer` loads any kind)."""
        from wwho.fileio import tokenizer_path
        from wwho.kinds import check_kind

        _fallback(unk, "bytes")  # (a misspelt unk= before the file is looked for)
        path = given = Path(tokenizer_path(path, "SGPETokenizer.load"))
        if path.is_dir():
            if not (path / "vocab.json").exists():
                check_kind(path, "sgpe", "SGPETokenizer.load")
            if (path / "meta_config.json").exists():  # (its vocab.json named itself is taken as asked)
                warn(f"{path} is a meta tokenizer (meta_config.json): SGPETokenizer.load reads its SGPE "
                     "part alone, whose ids start at 0, not after the byte-level ids as the meta "
                     "tokenizer's do (and its save or export is that part alone); MetaTokenizer.load "
                     "or wwho.load_tokenizer reads the whole", WwhoWarning)
            path = path / "vocab.json"
        try:
            return cls(load_vocab_file(path), unk=unk)
        except VocabError as exc:
            if path.name in listed(path.parent):  # an SGPE save's file, by its manifest: no other kind
                raise
            # (without the frames that hold the file's bytes: check_kind may read it again)
            exc.with_traceback(None)
            check_kind(given, "sgpe", "SGPETokenizer.load")  # (a folder: what the folder is, as a whole)
            raise exc from None

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``vocab.json`` and the Hugging Face files beside it into ``directory``, all or
        nothing (:func:`wwho.savedir.save_files`: a killed save leaves the old files or the new
        ones, and your other files in ``directory`` stay). Returns the ``vocab.json`` path. A
        tokenizer loaded with ``unk="token"`` writes ``vocab.json`` alone, with a warning: HF's
        unknown token is per character, so no ``tokenizer.json`` encodes as it does."""
        if self.fallback != "bytes":
            warn(f"{directory}: writing vocab.json without the Hugging Face files: with unk='token' no "
                 "tokenizer.json encodes as this tokenizer does (HF's unknown token is per character); the "
                 "same vocab.json loaded with the default unk='bytes' exports exactly", WwhoWarning)
        save_files(directory, dict(self.files()), kind="sgpe")
        return Path(directory) / "vocab.json"

    def files(self) -> Iterator[tuple[str, bytes]]:
        """The name and bytes of each file :meth:`save` writes, the Hugging Face files first (so
        that a check of ``tokenizer.json`` can start while ``vocab.json`` is built)."""
        if self.fallback == "bytes":  # an [UNK] vocabulary cannot be exported exactly
            from wwho.export.sgpe_hf import hf_files

            yield from hf_files(self).items()
        yield "vocab.json", self.file.to_bytes()

    # -- encoding ----------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Ids, special and byte tokens included."""
        return len(self.vocab)

    @property
    def n_vocab(self) -> int:
        """tiktoken's name for the ids: one more than the largest, here :attr:`vocab_size` (SGPE's ids
        have no holes)."""
        return len(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def get_vocab(self) -> dict[str, int]:
        """Token string -> id (a copy of ``vocab``)."""
        return dict(self.vocab)

    def token_to_id(self, token: str) -> int:
        """The id of a token string; :class:`TokenizerError` if it is not one."""
        try:
            return self.vocab[token]
        except (KeyError, TypeError):
            raise no_token_string(token) from None

    def id_to_token(self, token_id: int) -> str:
        """The token string of an id; :class:`TokenizerError` if it is not one."""
        return self.tokens[checked_id(token_id, len(self.vocab))]  # (one id: no position named)

    def __repr__(self) -> str:
        return f"SGPETokenizer(script={self.script!r}, vocab_size={self.vocab_size}, fallback={self.fallback!r})"

    def encode(self, text: str, *, allowed_special: Iterable[str] | str = NO_SPECIALS,
               disallowed_special: Iterable[str] | str = NO_SPECIALS) -> list[int]:
        """Token ids of ``text``. Special-token text (``[CLS]``...) is ordinary text unless
        listed in ``allowed_special`` (or ``allowed_special="all"``); a text holding one listed in
        ``disallowed_special`` (``"all"``: every one not allowed) is refused with
        :class:`wwho.errors.DisallowedSpecialError`, as tiktoken refuses it. Unlike tiktoken's, the
        default disallows none: SGPE's special tokens are words a text may hold (``[CLS]``)."""
        if not isinstance(text, str):
            raise WrongTypeError(f"expected text as str, got {type(text).__name__}")
        if disallowed_special is not NO_SPECIALS:
            allowed_special = self._refuse([text], allowed_special, disallowed_special, batch=False)
        if allowed_special is NO_SPECIALS or no_names(allowed_special):
            return self._core.encode(text)
        return self._core.encode(text, self._allowed_ids(allowed_special))

    def encode_ordinary(self, text: str) -> list[int]:
        """tiktoken's name for :meth:`encode` with every special token's text as ordinary text (the
        default here)."""
        if not isinstance(text, str):
            raise WrongTypeError(f"expected text as str, got {type(text).__name__}")
        return self._core.encode(text)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode_ordinary` of each text, in order, on ``num_threads`` threads (default: all
        cores) without the GIL."""
        texts = as_batch(texts, "encode_ordinary_batch")
        threads = thread_count(num_threads)
        try:
            return self._core.encode_batch(texts, [], threads or 0)
        except TypeError as exc:
            raise not_texts(texts, exc) from None

    def _allowed_ids(self, allowed: Iterable[str] | str) -> list[int]:
        return [self.vocab[s] for s in special_names(allowed, self.special_tokens, "allowed_special")]

    def _refuse(self, texts: Sequence[object], allowed_special: Iterable[str] | str,
                disallowed_special: Iterable[str] | str, *, batch: bool) -> frozenset[str]:
        """Raises :class:`wwho.errors.DisallowedSpecialError` for the first of ``texts`` holding the
        text of a disallowed special token (or of a disallowed name the vocabulary lacks), as tiktoken
        reads the two options: ``"all"`` disallows every token not allowed, while a token named in
        both sets is refused, as the byte-level and meta kinds refuse it. Returns the allowed names,
        for the encode to use: ``allowed_special`` may be an iterator, which can be read only once."""
        allowed = special_names(allowed_special, self.special_tokens, "allowed_special")
        if no_names(disallowed_special):
            return allowed
        if all_names(disallowed_special):
            names = frozenset(self.special_tokens) - allowed
        else:
            known, others = special_name_sets(disallowed_special, self.special_tokens, "disallowed_special")
            names = known | others
            refuse_allowed_and_disallowed(texts, allowed, known, batch=batch)  # (advice of its own)
        if names:
            refuse_named_text(texts, names, batch=batch, known=self.special_tokens)
        return allowed

    def encode_batch(self, texts: Sequence[str], *, allowed_special: Iterable[str] | str = (),
                     disallowed_special: Iterable[str] | str = NO_SPECIALS,
                     num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode` for each text, on ``num_threads`` threads (default: all cores) without the GIL."""
        texts = as_batch(texts)
        threads = thread_count(num_threads)
        if disallowed_special is not NO_SPECIALS:
            allowed_special = self._refuse(texts, allowed_special, disallowed_special, batch=True)
        allowed = self._allowed_ids(allowed_special) if not no_names(allowed_special) else []
        try:
            return self._core.encode_batch(texts, allowed, threads or 0)
        except TypeError as exc:  # the core takes only str texts; which one was not, is said here
            raise not_texts(texts, exc) from None

    def encode_to_numpy(self, text: str, *, allowed_special: Iterable[str] | str = NO_SPECIALS,
                        disallowed_special: Iterable[str] | str = NO_SPECIALS) -> NDArray[np.uint32]:
        """:meth:`encode` as a ``numpy.uint32`` array, made without a Python int per id or a list
        (numpy is imported on the first call)."""
        if not isinstance(text, str):
            raise WrongTypeError(f"expected text as str, got {type(text).__name__}")
        if disallowed_special is not NO_SPECIALS:
            allowed_special = self._refuse([text], allowed_special, disallowed_special, batch=False)
        if allowed_special is NO_SPECIALS or no_names(allowed_special):
            return self._core.encode_array(text)
        return self._core.encode_array(text, self._allowed_ids(allowed_special))

    def encode_batch_to_numpy(self, texts: Sequence[str], *, allowed_special: Iterable[str] | str = (),
                              disallowed_special: Iterable[str] | str = NO_SPECIALS,
                              num_threads: int | None = None) -> FlatIds:
        """:meth:`encode_batch` in the flat form (:mod:`wwho.arrays`): ``(ids, offsets)``, every
        text's ids in one ``uint32`` array and ``len(texts) + 1`` ``int64`` offsets."""
        arrays = arrays_module()
        texts = as_batch(texts, "encode_batch_to_numpy")
        if disallowed_special is not NO_SPECIALS:
            allowed_special = self._refuse(texts, allowed_special, disallowed_special, batch=True)
        allowed = self._allowed_ids(allowed_special) if not no_names(allowed_special) else []
        try:
            flat = self._core.encode_batch_flat(texts, allowed, thread_count(num_threads) or 0)
        except TypeError as exc:
            raise not_texts(texts, exc) from None
        return arrays.from_core(flat)

    def clear_cache(self) -> None:
        """Nothing to forget: the compiled encoder keeps no cache (kept for callers that clear
        every tokenizer's caches alike)."""

    def encode_routed_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list]:
        """For each text, its runs of this vocabulary's scripts (:func:`wwho.router.segment`, a run
        taking the space before it) encoded, and ``(start, end)`` spans of everything else, in
        order: what the meta tokenizer hands to tiktoken. On ``num_threads`` threads (default:
        all cores) without the GIL."""
        from wwho.router import core_router

        texts = as_batch(texts, "encode_routed_batch")
        for t in texts:
            if not isinstance(t, str):
                raise WrongTypeError(f"expected text as str, got {type(t).__name__}")
        threads = thread_count(num_threads)
        return self._core.encode_routed_batch(texts, core_router(self.splitter.scripts), threads or 0)

    def tokenize(self, text: str) -> list[str]:
        """The token strings of ``text`` (byte-fallback tokens appear as ``<0xNN>``)."""
        return [self.tokens[i] for i in self.encode(text)]

    def describe(self, *, top: int = 10) -> str:
        """A human-readable summary (``wwho inspect``); ``top``: how many of each kind of entry it shows."""
        from wwho.readable import readable_text

        top = check_count(top, "top")
        byte_tokens = sum(1 for t in BYTE_TOKENS if t in self.vocab)
        lines = [
            (f"SGPE vocabulary: {self.vocab_size:,} tokens, script {self.script!r} "
             f"({', '.join(self.splitter.scripts)}), format {self.file.written_version}"),
            f"  special tokens: {' '.join(readable_text(t) for t in self.special_tokens)}",
            f"  learned merges: {len(self.merges):,}; syllable-building merges: {len(self.syllable_merges):,}",
            (f"  superword merges: {len(self.superword_merges):,}; merge scope: {self.merge_scope}; "
             f"prefix space: {'yes' if self.prefix_space else 'no'}"
             f"{'; script punctuation splits words' if self.split_punctuation else ''}"),
            (f"  fallback: {self.fallback} ({byte_tokens} byte tokens); prune_freq {self.file.prune_freq}, "
             f"min_freq {self.file.min_freq}"),
            f"  first {min(top, len(self.merges))} merges:",  # (no more than there are)
            *(f"    {a!r} + {b!r} -> {a + b!r}" for a, b in self.merges[:top]),
            f"  longest {min(top, len(self.vocab))} tokens:",
            *(f"    {t!r} ({len(t)} chars, id {self.vocab[t]})"
              for t in sorted(self.vocab, key=lambda t: (-len(t), t))[:top]),
        ]
        return "\n".join(lines)

    # -- tiktoken's names (wwho.encoding_names) -----------------------------------------

    def _special_ids(self) -> dict[str, int]:
        return self._special_table

    def _token_ids_by_bytes(self) -> dict[bytes, int]:
        """Bytes -> id of the ordinary tokens, made on first use: a character's (or syllable's)
        token keeps its bytes before a byte-fallback token of the same bytes."""
        if self._bytes_ids is None:
            named = {*self._special_table.values(), *(self.vocab[t] for t in BYTE_TOKENS if t in self.vocab)}
            token_bytes = self._core.token_bytes
            table = first_ids_by_bytes((i, token_bytes(i)) for i in range(len(self.tokens)) if i not in named)
            self._bytes_ids = first_ids_by_bytes(
                ((self.vocab[t], token_bytes(self.vocab[t])) for t in BYTE_TOKENS if t in self.vocab), table)
        return self._bytes_ids

    # -- decoding ----------------------------------------------------------------------

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token (a byte-fallback token is its single byte)."""
        if type(token_id) is int:  # a stream's every token: the core checks its range itself
            try:
                return self._core.token_bytes(token_id)
            except (OverflowError, TokenizerError):
                pass  # checked again below, for the error every decoder gives
        return self._core.token_bytes(checked_id(token_id, len(self.vocab)))

    def decode_bytes(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> bytes:
        """The bytes of ``ids`` joined (ids: ints, numpy integers or ``__index__`` objects; not bools).
        With ``prefix_space``, one leading space is dropped (the encoder's dummy space; HF's decoder
        does the same)."""
        if skip_special_tokens is not False:
            check_flag(skip_special_tokens, "skip_special_tokens", WrongTypeError)
        data = None
        # The usual cases: a list, or a numpy array, memory-mapped too (read by the core as one
        # block of integers): the core checks the ids itself. (Never an iterator, which a failed
        # try would use up.)
        if type(ids) is list or (type(ids).__module__ == "numpy" and type(ids).__name__ in ("ndarray", "memmap")):
            try:
                data = self._core.decode_bytes(ids, bool(skip_special_tokens))
            except TokenizerError:
                pass  # checked again below, for an error that names the id's position
        if data is None:
            data = self._core.decode_bytes(token_ids(ids, len(self.vocab)), bool(skip_special_tokens))
        if self.prefix_space and data[:1] == b" ":
            data = data[1:]
        return data

    def decode(self, ids: Iterable[int], errors: str = DEFAULT_ERRORS, *, skip_special_tokens: bool = False) -> str:
        """Text of ``ids``. Lossless for any text encoded with byte fallback (lone surrogates
        included: their bytes are the surrogate, whatever ids are around them); other bytes that are
        not valid UTF-8 become U+FFFD (``errors="replace"``, or as another handler says;
        ``"surrogateescape"`` escapes every such byte, a surrogate's too, so that its text encodes
        back to the same bytes).
        ``errors="strict"`` raises :class:`wwho.errors.NotUTF8Error` (a ``UnicodeDecodeError``) on
        them, a lone surrogate's bytes included (they are no UTF-8), as Python's codec does."""
        if errors is not DEFAULT_ERRORS or skip_special_tokens is not False:  # the defaults need no check
            check_decode_options(errors, skip_special_tokens)
        data = self.decode_bytes(ids, skip_special_tokens=skip_special_tokens)
        if errors == "strict":
            return utf8_text(data)
        return utf8_keeping_surrogates(data, errors)

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        """Each token's bytes, as tiktoken's method of that name (``decode_bytes`` joins them; with
        ``prefix_space``, the first keeps the encoder's leading space)."""
        return each_token_bytes(ids, self.token_bytes)

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        """The text of ``ids`` and where in it each token starts, in characters (tiktoken's method of
        that name: a token that starts inside a character starts at that character). Bytes that are
        not UTF-8 raise ``UnicodeDecodeError``; a lone surrogate's bytes are its character, as in
        :meth:`decode`. With ``prefix_space`` the encoder's leading space is dropped, as there."""
        parts = self.decode_tokens_bytes(ids)
        if self.prefix_space and parts and parts[0][:1] == b" ":
            parts[0] = parts[0][1:]
        return utf8_text(b"".join(parts), "surrogatepass"), char_offsets(parts)

    def decode_batch(self, batch: Iterable[Iterable[int]], errors: str = "replace", *,
                     skip_special_tokens: bool = False, num_threads: int | None = 8) -> list[str]:
        """:meth:`decode` of each list of ids, in order (``num_threads`` is checked and accepted, as
        tiktoken's signature has it; decoding is a copy per token, done on the calling thread)."""
        thread_count(num_threads)
        return each_decoded(id_batch(batch, errors=errors), lambda ids: self.decode(ids, errors=errors, skip_special_tokens=skip_special_tokens))


def _fallback(unk: object, default: str) -> str:
    """The fallback ``unk=`` asks for (None: ``default``, the file's own)."""
    fallback = {None: default, "bytes": "bytes", "token": "unk", "unk": "unk"}.get(unk) if (
        unk is None or isinstance(unk, str)) else None
    if fallback is None:
        raise VocabError(f"unk must be 'bytes' or 'token', not {brief(unk)}")
    return fallback


def _restore(vocab_file: VocabFile, unk: str, cls: type | None = None) -> SGPETokenizer:
    """An unpickled tokenizer. Pickle bytes altered on the way, which would give a bare ``KeyError``
    or ``IndexError``, or two tokens of one id, are a :class:`VocabError`, from checks far cheaper
    than a loaded ``vocab.json``'s (a pickle of a tokenizer may be sent with each task of a pool)."""
    where = "a pickled SGPETokenizer"
    vocab = getattr(vocab_file, "vocab", None)
    if not isinstance(vocab_file, VocabFile) or not isinstance(vocab, dict) or unk not in ("bytes", "token"):
        raise VocabError(f"{where}: not an SGPE vocabulary")
    ids = set(vocab.values())
    if len(ids) != len(vocab) or ids != set(range(len(vocab))):
        raise VocabError(f"{where}: its ids are not 0..{len(vocab) - 1}, one a token")
    missing = [s for s in getattr(vocab_file, "special_tokens", ()) if s not in vocab]
    if missing:
        raise VocabError(f"{where}: special token {brief(missing[0])} is not in its vocabulary")
    try:
        tok = SGPETokenizer(vocab_file, unk=unk)
    except WwhoError:
        raise
    except Exception as exc:  # noqa: BLE001 - what altered fields make the tables' building raise
        raise VocabError(f"{where}: not a vocabulary ({type(exc).__name__}: {exc})") from None
    return restored_as(tok, cls, where)
