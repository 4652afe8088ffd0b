"""Byte-level BPE (tiktoken, GPT-2, Llama 3, Qwen2 ...): encode, decode, load, save.

A :class:`ByteBPE` is a vocabulary of byte strings (``ranks``: token bytes -> id), a
pre-tokenizer (:mod:`wwho.bytelevel.pretokenize`), special tokens, and one of two merge rules:

* **ranks** (tiktoken): two adjacent parts merge if their concatenation is a token,
  lowest id first; a piece that is itself a token is emitted whole.
* **merges** (Hugging Face ``tokenizer.json``, GGUF): only the listed pairs merge, in
  list order; a whole-piece lookup happens first only with ``ignore_merges`` (Llama 3).

Both apply the lowest-ranked pair first and, on ties, the leftmost one. Encoding and decoding
run in the compiled core (``wwho._core.ByteLevel``, ``rust/src/bytelevel``): this class checks
arguments, maps the core's errors to typed ``wwho`` errors and keeps the Python-side view of the
vocabulary (``ranks``, ``merges``, ``model``). Pieces that need merging are remembered in a cache
bounded in bytes (``cache_bytes``). ``encode_batch`` runs on all cores without the GIL, and one
tokenizer may be shared by any number of threads.

Special tokens follow tiktoken: by default their text in the input is an error;
``allowed_special`` turns it into the special id; ``disallowed_special=()`` encodes it
as plain text. ``added_tokens`` (GGUF ``USER_DEFINED`` / HF non-special added tokens)
are always split out of the text first, as Hugging Face and llama.cpp do.

Loading and saving live in :mod:`wwho.bytelevel.files`, :mod:`wwho.bytelevel.hf_files` and
:mod:`wwho.bytelevel.gguf`, reached through :mod:`wwho.bytelevel.constructors` (which also writes
``describe``'s summary), training in :mod:`wwho.bytelevel.train`; they produce and take a
:class:`~wwho.bytelevel.model.ByteLevelModel`, which the constructors here wrap. This module itself
reads no files. The pure-Python encoder that
ran before the core is the tests' reference (``tests/reference/bytelevel_py.py``).
"""

from __future__ import annotations

import operator
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from wwho import _core
from wwho.bytelevel.constructors import (
    describe,
    gguf_model,
    hf_model,
    model_options,
    save_model,
    saved_model,
    tiktoken_model,
)
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import BYTE_TO_UNICODE, Pretokenizer
from wwho.bytelevel.tiktoken_names import TiktokenNames
from wwho.bytelevel.validate import cache_bytes_option, merges_option, pretokenizer_option, table_option
from wwho.errors import (
    DisallowedSpecialError,
    TokenizerError,
    VocabError,
    WrongTypeError,
    brief,
    check_count,
    check_flag,
    in_batch,
)
from wwho.frozen import FrozenDict
from wwho.ids import (
    DEFAULT_ERRORS,
    check_decode_options,
    each_decoded,
    id_batch,
    no_token,
    no_token_string,
    prepare_arrays,
    token_ids,
    utf8_text,
)
from wwho.ids import batch as as_batch
from wwho.ids import token_id as token_id_of
from wwho.imports import arrays as arrays_module
from wwho.pickling import class_arg, restored_as
from wwho.protocol import (
    ALL_SPECIALS,
    NO_SPECIALS,
    all_names,
    default_specials,
    disallowed_names,
    refuse_allowed_and_disallowed,
    special_names,
)
from wwho.threads import thread_count
from wwho.wholeload import loads_whole

if TYPE_CHECKING:  # numpy is imported by the first call that makes an array, not by `import wwho`
    import numpy as np
    from numpy.typing import NDArray

    from wwho.arrays import FlatIds
    from wwho.scale.counts import CountSource
    from wwho.scale.texts import TextSource

#: Default bound of the piece cache, in bytes (keys, ids and bookkeeping counted, the tables a
#: shard grew out of included). Sized so that every distinct o200k piece of the Sinhala news in
#: shared/data fits in the lock-free tables at their load limit: a piece that misses costs its
#: merges again, and one kept in the map costs every thread reading it a shared lock.
#: Pieces over 256 or under 6 bytes are never cached.
CACHE_BYTES = 128 << 20


def _template_flag(add_special_tokens: object, add_special: object) -> bool:
    """The BOS / EOS option of an encode call: ``add_special_tokens``, or its former name
    ``add_special`` (a DeprecationWarning; both given and different is an error)."""
    if add_special is not None:
        warnings.warn("ByteBPE's add_special is now add_special_tokens (HF tokenizers' name, and the binary "
                      "tokenizer's)", DeprecationWarning, stacklevel=3)
        check_flag(add_special, "add_special")
        if add_special_tokens is not False and add_special_tokens is not add_special:
            raise TokenizerError("add_special is the former name of add_special_tokens: give one of them")
        return add_special
    return check_flag(add_special_tokens, "add_special_tokens")


class ByteBPE(TiktokenNames):
    """A byte-level BPE tokenizer (see the module docstring for the two merge rules); tiktoken's
    ``Encoding`` methods too (:mod:`wwho.bytelevel.tiktoken_names`)."""

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
        pad_id: int | None = None,
        add_bos: bool = False,
        add_eos: bool = False,
        name: str = "",
        chat_template: str | None = None,
        cache_bytes: int = CACHE_BYTES,
    ) -> None:
        """``ranks``: token bytes -> id (the rank, for the ranks rule). ``merges``: ordered pairs
        (switches to the merges rule). ``extra_tokens``: id -> bytes of tokens that decode but
        are never produced by encoding (e.g. a GGUF token that is not byte-level text).
        ``bos_id``, ``eos_id``, ``pad_id``: the ids of those roles (``add_bos``/``add_eos``: put
        around each encoding with ``add_special_tokens=True``; the padding id is for the
        Hugging Face export and batches padded by the caller). ``chat_template``: a Jinja chat
        template (a GGUF file's), written by the Hugging Face export. ``cache_bytes``: the piece
        cache's bound in bytes (0: no cache)."""
        self.pretokenizer = pretokenizer_option(pattern)
        self.name = name
        if chat_template is not None and not isinstance(chat_template, str):
            raise WrongTypeError(f"chat_template must be a str (a Jinja template) or None, not {type(chat_template).__name__}")
        self.chat_template = chat_template
        # (None is no table for the optional ones; the ranks are not optional)
        self._encoder: dict[bytes, int] = table_option(ranks, "ranks", "token bytes -> id", optional=False)
        if not self._encoder:  # as every loader refuses a file of no tokens
            raise VocabError("ranks is empty: a byte-level vocabulary needs its tokens (bytes -> id)")
        # Read-only views: the core holds its own copies, which a changed dict would no longer match.
        self.special_tokens: dict[str, int] = FrozenDict(table_option(special_tokens, "special_tokens", "name -> id"))
        self.added_tokens: dict[str, int] = FrozenDict(table_option(added_tokens, "added_tokens", "text -> id"))
        self._extra: dict[int, bytes] = table_option(extra_tokens, "extra_tokens", "id -> bytes")
        self.merges: list[tuple[bytes, bytes]] | None = None
        if merges is not None:
            self.merges = merges_option(merges)
        self.ignore_merges = True if merges is None else bool(ignore_merges)
        self._cache_bytes = cache_bytes_option(cache_bytes)
        try:
            self._core = _core.ByteLevel(
                self._encoder,
                merges=self.merges,
                ignore_merges=self.ignore_merges,
                special_tokens=dict(self.special_tokens),
                added_tokens=dict(self.added_tokens),
                extra_tokens=self._extra,
                patterns=list(self.pretokenizer.patterns),
                byte_patterns=list(self.pretokenizer.byte_patterns),
                cache_bytes=cache_bytes,
            )
        except _core.CoreVocabError as exc:
            raise VocabError(str(exc)) from None
        ids = []
        for label, value in (("bos_id", bos_id), ("eos_id", eos_id), ("pad_id", pad_id)):
            # (True is no id, though operator.index takes it; a numpy integer is kept as an int, the
            # type of every other id the encoder gives and what save() writes)
            if value is not None and (isinstance(value, bool) or not self._has_id(value)):
                raise VocabError(f"{label}={value!r} is not a token id of this vocabulary")
            ids.append(None if value is None else operator.index(value))
        self.bos_id, self.eos_id, self.pad_id = ids
        self.add_bos = check_flag(add_bos, "add_bos", VocabError)
        self.add_eos = check_flag(add_eos, "add_eos", VocabError)
        for label, asked, value in (("bos", self.add_bos, bos_id), ("eos", self.add_eos, eos_id)):
            if asked and value is None:  # it was taken and nothing added, in silence
                raise VocabError(f"add_{label}=True needs a {label}_id: there is no token to add")
        self._special_set = frozenset(self.special_tokens)
        self._strings: dict[str, int] | None = None  # get_vocab(), built on first use
        self._named_ids = frozenset([*self.special_tokens.values(), *self.added_tokens.values()])
        prepare_arrays()

    def _has_id(self, value: object) -> bool:
        try:
            return self._core.token_bytes(operator.index(value)) is not None
        except (TypeError, OverflowError):
            return False

    # --- vocabulary -----------------------------------------------------------------------

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """Token bytes -> id of the ordinary (mergeable) tokens, read-only."""
        return MappingProxyType(self._encoder)

    @property
    def n_vocab(self) -> int:
        """One more than the largest token id (tiktoken's ``n_vocab``): the rows an embedding matrix
        needs. Not the number of tokens where some ids have none: ``o200k_base`` has ``n_vocab``
        200,019 and :attr:`vocab_size` 200,000 (no token at 199,998 and 200,000..200,017)."""
        return self._core.n_vocab

    @property
    def vocab_size(self) -> int:
        """How many ids have a token (ordinary, special, added, extra); <= :attr:`n_vocab`, smaller
        where the ids have holes (``o200k_base``: 200,000 tokens, ids up to 200,018). ``len(tok)``
        is this; size an embedding matrix by :attr:`n_vocab`."""
        return self._core.vocab_size

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' names, a new ``set`` on each call, as tiktoken's ``special_tokens_set``."""
        return set(self._special_set)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token (a special token's are its UTF-8 text)."""
        try:
            # A plain int (the usual case, a stream's every token) needs no conversion; the core
            # refuses what is out of its range (OverflowError).
            data = self._core.token_bytes(token_id if type(token_id) is int else token_id_of(token_id))
        except OverflowError:
            data = None
        if data is None:
            raise self._bad_id(token_id, None)
        return data

    def _bad_id(self, token_id: object, position: int | None) -> TokenizerError:
        where = "" if position is None else f" at position {position}"
        message = f"token id {brief(token_id)}{where} is not in this vocabulary (n_vocab={self.n_vocab})"
        if _below(token_id, self.n_vocab):
            # o200k_base leaves ids between its ordinary and special tokens without a token: an id
            # below n_vocab would otherwise read as a contradiction.
            message += ": no token has this id, though it is below n_vocab (the vocabulary leaves it unassigned)"
        return no_token(token_id, message)

    def __len__(self) -> int:
        return self.vocab_size

    # --- token strings (the interface of wwho.protocol) -------------------------------------

    def get_vocab(self) -> dict[str, int]:
        """Token string -> id, as HF's ``tokenizer.json`` writes them: ordinary tokens in GPT-2's
        byte characters (``Ġ`` for a space), special, added and decode-only tokens as their text."""
        if self._strings is None:
            table = {_byte_string(b): i for b, i in self._encoder.items()}
            table.update((_extra_string(b), i) for i, b in self._extra.items())
            table.update(self.added_tokens)
            table.update(self.special_tokens)
            self._strings = table
        return dict(self._strings)

    def token_to_id(self, token: str) -> int:
        """The id of a token string (see :meth:`get_vocab`); :class:`TokenizerError` if it is not one."""
        if self._strings is None:
            self.get_vocab()
        try:
            return self._strings[token]  # type: ignore[index]
        except (KeyError, TypeError):
            raise no_token_string(token) from None

    def id_to_token(self, token_id: int) -> str:
        """The token string of an id (see :meth:`get_vocab`)."""
        data = self.token_bytes(token_id)
        i = token_id_of(token_id)
        if i in self._named_ids:
            return data.decode("utf-8")
        if i in self._extra:
            return _extra_string(data)
        return _byte_string(data)

    # --- decoding -------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> bytes:
        """The bytes of ``ids`` joined (ids: ints, numpy integers or ``__index__`` objects; not bools).
        ``skip_special_tokens``: drop the special tokens, as :meth:`decode` does."""
        if skip_special_tokens is not False:
            check_flag(skip_special_tokens, "skip_special_tokens", WrongTypeError)
            if skip_special_tokens:
                return self._bytes_without_specials(ids)
        data = self._core.decode_plain(ids)  # a list of plain ints with tokens, the usual case
        if data is not None:
            return data
        if _id_array(ids):  # an id without a token in an array: named by the core, no list made of it
            try:
                return self._core.decode_bytes(ids)
            except _core.UnknownId as exc:
                raise self._bad_id(*exc.args) from None
            except (TypeError, OverflowError):
                pass  # an id outside 32 bits: named below
        ids = token_ids(ids)
        try:
            return self._core.decode_bytes(ids)
        except _core.UnknownId as exc:  # (the core names the first: no loop over millions of ids)
            raise self._bad_id(*exc.args) from None
        except (TypeError, OverflowError):  # an id of 2**32 or more
            for position, i in enumerate(ids):
                if not self._has_id(i):
                    raise self._bad_id(i, position) from None
            raise

    def decode(self, ids: Iterable[int], errors: str = DEFAULT_ERRORS, *, skip_special_tokens: bool = False) -> str:
        """Text of ``ids``; bytes that are not valid UTF-8 become U+FFFD (``errors="replace"``).
        ``skip_special_tokens``: drop the special tokens (``special_tokens``; added tokens stay)."""
        if errors is DEFAULT_ERRORS and skip_special_tokens is False:  # the defaults: the per-call path
            data = self._core.decode_plain(ids)
            if data is not None:
                return data.decode("utf-8", "replace")
        check_decode_options(errors, skip_special_tokens)
        return utf8_text(self.decode_bytes(ids, skip_special_tokens=skip_special_tokens), errors)

    def _bytes_without_specials(self, ids: Iterable[int]) -> bytes:
        ids = token_ids(ids)
        special = set(self.special_tokens.values())
        try:
            return self.decode_bytes([i for i in ids if i not in special])
        except TokenizerError:
            # Raised again on the ids as given, so that the position it names is the caller's
            # (the dropped special tokens shifted it).
            self.decode_bytes(ids)
            raise

    def decode_batch(self, batch: Iterable[Iterable[int]], errors: str = "replace", *,
                     skip_special_tokens: bool = False, num_threads: int | None = 8) -> list[str]:
        """:meth:`decode` of each list of ids, in order (``num_threads`` is checked and accepted, as
        tiktoken's signature has it; decoding is a copy per token, done on the calling thread)."""
        thread_count(num_threads)
        return each_decoded(id_batch(batch, errors=errors), lambda ids: self.decode(ids, errors, skip_special_tokens=skip_special_tokens))

    # --- encoding -------------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with special-token text treated as plain text."""
        try:
            return self._core.encode_ordinary(text)
        except Exception as exc:  # noqa: BLE001 - every case is mapped or re-raised
            raise self._encode_error(exc, text) from None

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Iterable[str] = NO_SPECIALS,
        disallowed_special: Literal["all"] | Iterable[str] = ALL_SPECIALS,
        add_special_tokens: bool = False,
        add_special: bool | None = None,
    ) -> list[int]:
        """Ids of ``text`` (tiktoken semantics for special tokens; see the module docstring).

        ``add_special_tokens`` prepends BOS / appends EOS when the vocabulary asks for it
        (``add_bos`` / ``add_eos``, read from GGUF files), as HF ``tokenizers`` names it.
        ``add_special`` is its former name (deprecated).
        """
        if add_special_tokens is not False or add_special is not None:  # identity tests: the per-call path
            add_special_tokens = _template_flag(add_special_tokens, add_special)
        if (allowed_special is NO_SPECIALS and disallowed_special is ALL_SPECIALS) or default_specials(
            allowed_special, disallowed_special
        ):  # one call
            try:
                ids = self._core.encode(text)
            except Exception as exc:  # noqa: BLE001
                raise self._encode_error(exc, text) from None
        else:
            allowed, disallowed = self._special_sets(allowed_special, disallowed_special, [text], batch=False)
            try:
                ids = self._core.encode_with(text, allowed, disallowed)
            except Exception as exc:  # noqa: BLE001
                raise self._encode_error(exc, text) from None
        if add_special_tokens:
            if self.add_bos and self.bos_id is not None:
                ids.insert(0, self.bos_id)
            if self.add_eos and self.eos_id is not None:
                ids.append(self.eos_id)
        return ids

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        num_threads: int | None = None,
        allowed_special: Literal["all"] | Iterable[str] = frozenset(),
        disallowed_special: Literal["all"] | Iterable[str] = "all",
        add_special_tokens: bool = False,
        add_special: bool | None = None,
    ) -> list[list[int]]:
        """``[encode(t, ...) for t in texts]`` on ``num_threads`` threads (default: all cores),
        in order, without holding the GIL. The first text that fails raises its error."""
        texts = as_batch(texts)
        add_special_tokens = _template_flag(add_special_tokens, add_special)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special, texts, batch=True)
        out = self._batch(texts, allowed, disallowed, num_threads)
        if add_special_tokens and ((self.add_bos and self.bos_id is not None) or (self.add_eos and self.eos_id is not None)):
            for ids in out:
                if self.add_bos and self.bos_id is not None:
                    ids.insert(0, self.bos_id)
                if self.add_eos and self.eos_id is not None:
                    ids.append(self.eos_id)
        return out

    def encode_ordinary_batch(self, texts: Iterable[str], *, num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode_ordinary` of each text, in order, on ``num_threads`` threads (default: all cores)."""
        texts = as_batch(texts, "encode_ordinary_batch")
        return self._batch(texts, None, None, num_threads)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Iterable[str] = NO_SPECIALS,
        disallowed_special: Literal["all"] | Iterable[str] = ALL_SPECIALS,
        add_special_tokens: bool = False,
        add_special: bool | None = None,
    ) -> NDArray[np.uint32]:
        """:meth:`encode` as a ``numpy.uint32`` array (tiktoken's ``encode_to_numpy``), made without
        a Python int per id or a list: the core makes the array through numpy's C API (numpy is
        imported on the first call)."""
        if add_special_tokens is not False or add_special is not None:
            add_special_tokens = _template_flag(add_special_tokens, add_special)
        if (allowed_special is NO_SPECIALS and disallowed_special is ALL_SPECIALS) or default_specials(
            allowed_special, disallowed_special
        ):
            allowed, disallowed = None, "all"
        else:
            allowed, disallowed = self._special_sets(allowed_special, disallowed_special, [text], batch=False)
        try:
            ids = self._core.encode_array(text, allowed, disallowed)
        except Exception as exc:  # noqa: BLE001
            raise self._encode_error(exc, text) from None
        if add_special_tokens:
            arrays = arrays_module()
            ids, _ = arrays.add_bos_eos(ids, arrays.one_text(ids), self.bos_id if self.add_bos else None,
                                        self.eos_id if self.add_eos else None)
        return ids

    def encode_batch_to_numpy(
        self,
        texts: Iterable[str],
        *,
        num_threads: int | None = None,
        allowed_special: Literal["all"] | Iterable[str] = frozenset(),
        disallowed_special: Literal["all"] | Iterable[str] = "all",
        add_special_tokens: bool = False,
        add_special: bool | None = None,
    ) -> FlatIds:
        """:meth:`encode_batch` in the flat form (:mod:`wwho.arrays`): ``(ids, offsets)``, every
        text's ids in one ``uint32`` array and ``len(texts) + 1`` ``int64`` offsets, text ``i``'s ids
        being ``ids[offsets[i]:offsets[i + 1]]`` (a :class:`wwho.arrays.FlatIds`, which
        :meth:`decode_batch` takes back whole). No Python object is made per text or per id."""
        arrays = arrays_module()
        texts = as_batch(texts, "encode_batch_to_numpy")
        add_special_tokens = _template_flag(add_special_tokens, add_special)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special, texts, batch=True)
        flat = arrays.from_core(self._in_core(
            texts, lambda: self._core.encode_batch_flat(texts, allowed, disallowed, thread_count(num_threads))))
        if add_special_tokens:
            flat = arrays.add_bos_eos(*flat, self.bos_id if self.add_bos else None,
                                      self.eos_id if self.add_eos else None)
        return flat

    def _in_core(self, texts: list, call):
        """``call()``, its errors as the batch methods raise them."""
        try:
            return call()
        except Exception as exc:  # noqa: BLE001
            for n, text in enumerate(texts):
                if not isinstance(text, str):
                    raise in_batch(WrongTypeError(f"texts[{n}]: expected text (str), got {type(text).__name__}"),
                                   n) from None
            raise self._error(exc) from None

    def _batch(self, texts: list, allowed, disallowed, num_threads: int | None) -> list[list[int]]:
        num_threads = thread_count(num_threads)
        # The core's threads make each text's UTF-8 themselves, lone surrogates replaced as
        # _replace_surrogates does (as encode() does too).
        return self._in_core(texts, lambda: self._core.encode_batch(texts, allowed, disallowed, num_threads))

    def _special_sets(self, allowed_special, disallowed_special, texts: list, *, batch: bool):
        """(allowed, disallowed) for the core: "all", None (no token) or a frozenset of names. A
        disallowed "all" is tiktoken's (every special token not allowed), which the core makes
        from indices: a set of the other tokens' names would be read name by name on every call.
        Names the vocabulary lacks are left out of both, as tiktoken leaves them, and a text
        holding a disallowed one is refused, as tiktoken refuses it."""
        allowed = ("all" if all_names(allowed_special)
                   else special_names(allowed_special, self._special_set, "allowed_special") or None)
        if all_names(disallowed_special):
            return allowed, (None if allowed == "all" else "all")
        disallowed = disallowed_names(disallowed_special, self._special_set, texts, batch=batch) or None
        refuse_allowed_and_disallowed(texts, allowed, disallowed, batch=batch)
        return allowed, disallowed

    def _encode_error(self, exc: Exception, text: object) -> Exception:
        """The error an encode raises: not a str, or the core's error mapped (the core itself turns
        lone surrogates into U+FFFD, as tiktoken does)."""
        if not isinstance(text, str):
            return WrongTypeError(f"expected text (str), got {type(text).__name__}")
        return self._error(exc)

    @staticmethod
    def _error(exc: Exception) -> Exception:
        # A batch's core error carries the failing text's place in the batch.
        at = getattr(exc, "text_index", None)
        if isinstance(exc, _core.DisallowedSpecial):
            return DisallowedSpecialError(*exc.args, text_index=at)
        if isinstance(exc, _core.CoreError):
            return in_batch(TokenizerError(str(exc) if at is None else f"texts[{at}]: {exc}"), at)
        return exc

    def cache_info(self) -> tuple[int, int]:
        """(pieces, bytes) held by the piece cache."""
        return self._core.cache_info()

    def clear_cache(self) -> None:
        """Forget every cached piece. The cache's tables of short pieces keep their memory (within
        ``cache_bytes``): another thread may be reading one at that moment."""
        self._core.clear_cache()

    def __reduce__(self):
        # Worker processes get the data and rebuild the core (the cache is not sent); a subclass's
        # pickle names it (wwho.pickling).
        return (_rebuild, (self.model, self._cache_bytes, *class_arg(self, ByteBPE)))

    # --- training, constructors and files (wwho.bytelevel.train, .files, .gguf) ------------

    @classmethod
    def from_model(cls, model: ByteLevelModel, **options: Any) -> ByteBPE:
        """The tokenizer of a :class:`ByteLevelModel` (``options``: ``cache_bytes``)."""
        return cls(model.ranks, **model_options(model), **options)

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
            pad_id=self.pad_id,
            add_bos=self.add_bos,
            add_eos=self.add_eos,
            name=self.name,
            chat_template=self.chat_template,
        )

    @classmethod
    def train(
        cls,
        corpus: str | os.PathLike | Iterable[str | os.PathLike],
        *,
        vocab_size: int,
        pattern: str = "gpt4",
        special_tokens: Iterable[str] = (),
        min_freq: int = 2,
        workers: int | None = None,
        progress: bool = True,
        **options: Any,
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
    def train_from_iterator(cls, iterator: TextSource, *, vocab_size: int, length: int | None = None,
                            **options: Any) -> ByteBPE:
        """Train on an iterable of strings or of batches of strings (a ``datasets`` column); each
        string is one document. See :func:`wwho.bytelevel.train.train_bytelevel_from_iterator` (the
        options)."""
        from wwho.bytelevel.train import train_bytelevel_from_iterator

        return cls.from_model(train_bytelevel_from_iterator(iterator, vocab_size=vocab_size, length=length,
                                                            **options))

    @classmethod
    def train_from_counts(cls, counts: CountSource, *, vocab_size: int, **options: Any) -> ByteBPE:
        """Train on piece counts: a dict or ``piece<TAB>count`` files (:mod:`wwho.scale.counts`).
        See :func:`wwho.bytelevel.train.train_bytelevel_from_counts` (the options)."""
        from wwho.bytelevel.train import train_bytelevel_from_counts

        return cls.from_model(train_bytelevel_from_counts(counts, vocab_size=vocab_size, **options))

    @classmethod
    def from_tiktoken(cls, name_or_path: str | Path, *, tiktoken_file: str | Path | None = None,
                      cache_bytes: int = CACHE_BYTES, **options: Any) -> ByteBPE:
        """From a ``.tiktoken`` ranks file or a known name (``o200k_base``, ``cl100k_base``).

        A known name finds its file at ``tiktoken_file=``, else ``WWHO_TIKTOKEN_FILE``, else
        tiktoken's cache (never downloaded; see :mod:`wwho.tiktoken_file`). ``options``
        (``pattern``, ``special_tokens``) go to :func:`wwho.bytelevel.files.from_tiktoken`.
        """
        return cls.from_model(tiktoken_model(name_or_path, tiktoken_file, options), cache_bytes=cache_bytes)

    @classmethod
    def from_gguf(cls, path: str | Path, *, cache_bytes: int = CACHE_BYTES, **options: Any) -> ByteBPE:
        """From the tokenizer metadata of a GGUF file (byte-level BPE models only). ``options``
        (``pretokenizer``, ``engine``) go to :func:`wwho.bytelevel.gguf.load_gguf`."""
        return cls.from_model(gguf_model(path, options), cache_bytes=cache_bytes)

    @classmethod
    @loads_whole
    def from_hf(cls, path: str | Path, *, cache_bytes: int = CACHE_BYTES) -> ByteBPE:
        """From a byte-level BPE Hugging Face ``tokenizer.json``."""
        return cls.from_model(hf_model(path), cache_bytes=cache_bytes)

    @classmethod
    @loads_whole
    def load(cls, path: str | Path, *, cache_bytes: int = CACHE_BYTES) -> ByteBPE:
        """From a directory written by :meth:`save`. Another kind of tokenizer is an error that
        names it (:func:`wwho.load_tokenizer` loads any kind)."""
        return cls.from_model(saved_model(path), cache_bytes=cache_bytes)

    def save(self, directory: str | Path, *, hf: bool = False) -> Path:
        """Write ``ranks.tiktoken`` + ``bytelevel.json`` (+ ``merges.txt``; with ``hf=True`` also
        :meth:`export_hf`'s directory files, so that ``AutoTokenizer`` reads it) into ``directory``,
        all or nothing (:func:`wwho.savedir.save_files`)."""
        return save_model(self.model, directory, hf=hf)

    def export_hf(self, path: str | Path) -> Path:
        """Write this tokenizer for Hugging Face, encoding exactly like it. ``path`` ending in
        ``.json``: that one ``tokenizer.json``. Any other ``path``: a directory for
        ``AutoTokenizer.from_pretrained``, as saves write one: ``tokenizer.json``,
        ``tokenizer_config.json`` (BOS/EOS roles; BOS added where the model adds it, as a GGUF's
        ``add_bos`` says) and ``special_tokens_map.json``. Returns the path written."""
        from wwho.bytelevel.hf_files import export_hf

        return export_hf(self.model, path)

    def describe(self, *, top: int = 10) -> str:
        """A human-readable summary (``wwho inspect``): model, pre-tokenizer, sizes, merges, specials
        (``top``: how many of each kind of entry it shows)."""
        top = check_count(top, "top")
        return describe(self.model, n_vocab=self.n_vocab, vocab_size=self.vocab_size, top=top)

    def __repr__(self) -> str:
        rule = "ranks" if self.merges is None else f"{len(self.merges)} merges"
        label = f" {self.name!r}" if self.name else ""
        return f"<ByteBPE{label} n_vocab={self.n_vocab} {rule} specials={len(self.special_tokens)}>"


def _byte_string(data: bytes) -> str:
    return "".join(BYTE_TO_UNICODE[b] for b in data)


def _extra_string(data: bytes) -> str:
    """A decode-only token's string: its text, as the Hugging Face export writes it (such tokens are
    GGUF control and unused tokens, not byte-level text)."""
    return data.decode("utf-8", "surrogateescape")


def _rebuild(model: ByteLevelModel, cache_bytes: int, cls: type | None = None) -> ByteBPE:
    return restored_as(ByteBPE.from_model(model, cache_bytes=cache_bytes), cls, "a pickled ByteBPE")


def _id_array(ids: object) -> bool:
    """Whether ``ids`` is a one-dimensional numpy array of integers (memory-mapped too), which the
    core reads as one block."""
    kind = type(ids)
    return (kind.__module__ == "numpy" and kind.__name__ in ("ndarray", "memmap") and ids.ndim == 1  # type: ignore[attr-defined]
            and ids.dtype.kind in "iu" and ids.dtype.isnative)  # type: ignore[attr-defined]


def _below(token_id: object, n_vocab: int) -> bool:
    """Whether ``token_id`` is an integer (a numpy one too) in ``[0, n_vocab)``."""
    try:
        return 0 <= operator.index(token_id) < n_vocab
    except TypeError:
        return False
