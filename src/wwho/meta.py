"""The WWHO meta tokenizer: tiktoken's o200k_base for everything else, SGPE for Indic runs, one id space.

Ids (spec 001 section 5)::

    [0, n)          tiktoken's ids, unchanged (n = n_vocab, 200,019 for o200k_base)
    [n, n + k)      SGPE's ids plus n (k = len(sgpe vocabulary))

:class:`MetaVocab` (:mod:`wwho.meta_vocab`) is only that arithmetic (it knows n and the SGPE
vocabulary, never tiktoken). :class:`MetaTokenizer` encodes in the compiled core
(``wwho._core.MetaEncoder``, ``rust/src/meta.rs``): the router (:func:`wwho.router.segment`'s
rule) cuts the text into script runs; a Latin/other run goes to the core's byte-level encoder with
o200k_base's ranks (the encoder of :class:`wwho.bytelevel.ByteBPE`), an Indic run (with its
leading space) to the SGPE encoder, whose ids are shifted by n. So text with no Indic character
gets exactly tiktoken's ids, and an Indic run exactly SGPE's ids plus n. The ranks are read offline as
``ByteBPE.from_tiktoken`` reads them (``tiktoken_file=``, ``WWHO_TIKTOKEN_FILE``, tiktoken's
cache; never downloaded; :mod:`wwho.meta_tiktoken`); the ``tiktoken`` package is not needed (a
``tiktoken.Encoding`` is still accepted, its ranks copied). tiktoken's special tokens
(``<|endoftext|>``) follow tiktoken's model: disallowed in the text by default (a
:class:`~wwho.errors.DisallowedSpecialError` names them), encoded as specials when listed in
``allowed_special``, ordinary text with ``disallowed_special=()``. SGPE's special tokens
(``[CLS]``...) are ordinary text by default, as in :class:`~wwho.sgpe.SGPETokenizer`; an explicit
``disallowed_special="all"`` refuses every special token the meta tokenizer lists, both kinds.

Decoding joins the bytes of all tokens and decodes UTF-8 once, so a character split across
tokens, even across the two halves, comes back whole. Lossless for any text whose Indic runs
SGPE encodes losslessly (byte fallback), except lone surrogates, which become U+FFFD in the
non-Indic text, as tiktoken does. Some o200k_base ids are unassigned (199,998 and
200,000..200,017): decoding them is an error, as in tiktoken.

``tokenize`` shows each token as text (see its docstring). Token strings (``convert_ids_to_tokens``,
``get_vocab``, the transformers class) map one-to-one to ids: GPT-2's byte-to-character mapping
(``"Ġthe"``) for tiktoken tokens, SGPE tokens as their text (see :mod:`wwho.meta_vocab`). The
files (``meta_config.json``, ``tokenizer_meta.json``) are :mod:`wwho.export.meta_files`, read
back into checked parts by :mod:`wwho.meta_loading`. This module does not train (see ``wwho
train --meta``). The Python encoder the core replaced is the tests' reference
(``tests/reference/meta_py.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wwho import _core
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.validate import cache_bytes_option
from wwho.cache import DEFAULT_CACHE_BYTES
from wwho.encoding_names import EncodingNames, first_ids_by_bytes
from wwho.errors import TokenizerError, UnknownTokenError, VocabError, WrongTypeError, check_count, check_flag
from wwho.frozen import FrozenDict
from wwho.ids import (
    DEFAULT_ERRORS,
    check_decode_options,
    each_decoded,
    id_batch,
    no_token_string,
    not_texts,
    token_ids,
    utf8_text,
)
from wwho.ids import batch as as_batch
from wwho.imports import arrays as arrays_module
from wwho.meta_loading import load_parts
from wwho.meta_tiktoken import TiktokenPart, byte_level_part, part_of
from wwho.meta_vocab import MetaVocab, token_strings
from wwho.pickling import class_arg, restored_as
from wwho.protocol import (
    NO_SPECIALS,
    all_names,
    disallowed_names,
    no_names,
    refuse_allowed_and_disallowed,
    special_names,
)
from wwho.threads import thread_count
from wwho.wholeload import loads_whole

if TYPE_CHECKING:  # numpy is imported by the first call that makes an array, not by `import wwho`
    import numpy as np
    from numpy.typing import NDArray

    from wwho.arrays import FlatIds


class _TiktokenSpecials(str):
    """The type of :data:`TIKTOKEN_SPECIALS` (a ``str``, so that it reads ``'all'`` in a signature)."""

    __slots__ = ()


#: The default ``disallowed_special`` of the encode methods: reads ``"all"``, and means tiktoken's
#: special tokens (as tiktoken disallows them), not SGPE's (ordinary text unless named, as in
#: ``SGPETokenizer``). A ``"all"`` passed by the caller is every special token listed, both kinds.
TIKTOKEN_SPECIALS = _TiktokenSpecials("all")


class MetaTokenizer(EncodingNames):
    """tiktoken + SGPE in one id space; see the module docstring. It answers to
    ``tiktoken.Encoding``'s names too (:mod:`wwho.encoding_names`): code written for o200k_base runs
    on it unchanged."""

    def __init__(self, sgpe_tokenizer: Any, tiktoken_encoding: Any = "o200k_base", *,
                 tiktoken_file: str | os.PathLike | None = None, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        """``tiktoken_encoding``: a name (``"o200k_base"``, loaded offline as ``ByteBPE.from_tiktoken``
        does), a :class:`~wwho.bytelevel.ByteBPE` or a ``tiktoken.Encoding`` (its ranks are copied).
        ``cache_bytes`` bounds the byte-level part's piece cache (the SGPE part keeps none)."""
        from wwho.sgpe import SGPETokenizer

        if not isinstance(sgpe_tokenizer, SGPETokenizer):
            raise VocabError(f"sgpe_tokenizer must be an SGPETokenizer, not {type(sgpe_tokenizer).__name__}")
        if sgpe_tokenizer.prefix_space:
            raise VocabError("an SGPE vocabulary trained with prefix_space cannot be a meta tokenizer's SGPE part: "
                             "its dummy space would be added to every Indic run")
        if sgpe_tokenizer.fallback != "bytes":
            # Lossy, and its files could not say so: a saved meta directory reloads with byte fallback.
            raise VocabError("a meta tokenizer's SGPE part must fall back to bytes (it is lossless); this one was "
                             "loaded with unk='token', which maps unknown text to [UNK]: load it without unk=")
        cache_bytes_option(cache_bytes)
        model, part = byte_level_part(tiktoken_encoding, tiktoken_file)
        self._setup(sgpe_tokenizer, model, part, cache_bytes)

    def _setup(self, sgpe_tokenizer: Any, model: ByteLevelModel, part: TiktokenPart, cache_bytes: int) -> None:
        self.sgpe = sgpe_tokenizer
        self.tiktoken = part
        self.vocab = MetaVocab(part.n_vocab, sgpe_tokenizer.vocab)
        self.offset = self.vocab.offset
        # Read-only views: the core was given these tables, which a change would leave behind.
        self.tiktoken_specials: dict[str, int] = FrozenDict(part.special_tokens)
        clash = set(self.tiktoken_specials) & set(sgpe_tokenizer.special_tokens)
        if clash:
            raise VocabError(f"special tokens in both tiktoken and SGPE: {sorted(clash)}")
        self.special_tokens: dict[str, int] = FrozenDict({
            **self.tiktoken_specials, **{s: self.offset + sgpe_tokenizer.vocab[s] for s in sgpe_tokenizer.special_tokens}})
        self._special_index = {s: k for k, s in enumerate(self.special_tokens)}
        self._scripts = covered_scripts(sgpe_tokenizer)
        self._pattern = model.pattern
        self._cache_bytes = cache_bytes
        self._core = _meta_core(sgpe_tokenizer, self._scripts, model, self.offset, self.special_tokens,
                                self.tiktoken_specials, cache_bytes)
        self._strings: list[str] | None = None
        self._string_ids: dict[str, int] | None = None
        self._bytes_ids: dict[bytes, int] | None = None

    # -- construction and files --------------------------------------------------------

    @classmethod
    @loads_whole
    def load(cls, directory: str | os.PathLike, *, tiktoken_file: str | os.PathLike | None = None,
             cache_bytes: int = DEFAULT_CACHE_BYTES) -> MetaTokenizer:
        """Load a directory written by :meth:`save` or ``wwho train --meta``; checks the tiktoken sha256.
        The ranks are found offline as ``ByteBPE.from_tiktoken`` finds them (``tiktoken_file=``,
        ``WWHO_TIKTOKEN_FILE``, tiktoken's cache). ``cache_bytes`` bounds the byte-level part's
        piece cache (the SGPE part, in the core, keeps none)."""
        cache_bytes_option(cache_bytes)  # before the files are read, not deep in the core after
        return _restore(*load_parts(directory, tiktoken_file), cache_bytes, cls=cls)

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``vocab.json`` (SGPE part), ``tokenizer_meta.json`` and ``meta_config.json``."""
        from wwho.export.meta_files import save_meta

        return save_meta(self, directory)

    def __reduce__(self):
        # Pickled as the SGPE part and the byte-level part's model (read back from the core).
        # A pickle names what it holds by module: _restore here, TiktokenPart in wwho.meta_tiktoken
        # (older pickles name wwho.meta.TiktokenPart, which this module's import keeps loadable).
        # A subclass's pickle names it (wwho.pickling).
        return (_unpickled, (self.sgpe, self._model(), self.tiktoken, self._cache_bytes, *class_arg(self, MetaTokenizer)))

    def _model(self) -> ByteLevelModel:
        """The byte-level part as a model (its ranks read from the core)."""
        specials = set(self.tiktoken_specials.values())
        ranks = {}
        token_bytes = self._core.token_bytes
        for i in range(self.offset):
            if i not in specials:
                data = token_bytes(i)
                if data is not None:
                    ranks[data] = i
        return ByteLevelModel(ranks, self._pattern, special_tokens=dict(self.tiktoken_specials),
                              name=self.tiktoken.name)

    @property
    def vocab_size(self) -> int:
        """Ids: the tiktoken part's (its unassigned ids included), then the SGPE part's."""
        return self.vocab.size

    @property
    def n_vocab(self) -> int:
        """tiktoken's name for the ids: one more than the largest, :attr:`vocab_size` here (the tiktoken
        part's unassigned ids are counted in both)."""
        return self.vocab.size

    def __len__(self) -> int:
        return self.vocab.size

    def __repr__(self) -> str:
        return (f"MetaTokenizer(tiktoken={self.tiktoken.name!r} [0, {self.offset}), "
                f"sgpe={self.sgpe.script!r} [{self.offset}, {self.vocab.size}))")

    # -- encoding ----------------------------------------------------------------------

    def encode(self, text: str, *, allowed_special: Iterable[str] | str = NO_SPECIALS,
               disallowed_special: Iterable[str] | str = TIKTOKEN_SPECIALS) -> list[int]:
        """Unified ids of ``text``. Special tokens follow tiktoken's model (module docstring);
        ``allowed_special`` may also name SGPE's specials (``[PAD]``...), and ``"all"`` allows all;
        ``disallowed_special`` refuses tiktoken's by default and every one with ``"all"``."""
        if self._defaults(allowed_special, disallowed_special):  # one call
            try:
                return self._core.encode(text)
            except TypeError:
                raise self._not_text(text) from None
        return self._with_specials(text, allowed_special, disallowed_special, self._core.encode_with)

    def _with_specials(self, text, allowed_special, disallowed_special, encode_with):
        """``encode_with(text, allowed, disallowed)`` (a core call) with the indices of the special
        tokens allowed and disallowed."""
        if not isinstance(text, str):
            raise self._not_text(text)
        allowed, disallowed = self._specials(allowed_special, disallowed_special, [text], batch=False)
        index = self._special_index
        return encode_with(text, [index[s] for s in allowed], [index[s] for s in disallowed])

    @staticmethod
    def _not_text(text: object) -> TokenizerError:
        return WrongTypeError(f"expected text as str, got {type(text).__name__}")

    def _specials(self, allowed_special: Iterable[str] | str, disallowed_special: Iterable[str] | str,
                  texts: Sequence[object], *, batch: bool) -> tuple[frozenset[str], frozenset[str]]:
        """The allowed and the disallowed special tokens, checked (names the vocabulary lacks are left
        out, and a text of ``texts`` holding a disallowed one is refused, as tiktoken does)."""
        allowed = self._allowed(allowed_special)
        if all_names(disallowed_special):
            every = self.tiktoken_specials if disallowed_special is TIKTOKEN_SPECIALS else self.special_tokens
            return allowed, frozenset(every) - allowed
        disallowed = disallowed_names(disallowed_special, self.special_tokens, texts, batch=batch)
        refuse_allowed_and_disallowed(texts, allowed, disallowed, batch=batch)
        return allowed, disallowed

    def _defaults(self, allowed_special: object, disallowed_special: object) -> bool:
        """Whether the options are the core's defaults: no special allowed, tiktoken's disallowed
        (``"all"`` is the same where the SGPE part has no special tokens)."""
        if allowed_special is NO_SPECIALS and disallowed_special is TIKTOKEN_SPECIALS:
            return True
        return no_names(allowed_special) and all_names(disallowed_special) and (
            disallowed_special is TIKTOKEN_SPECIALS or len(self.special_tokens) == len(self.tiktoken_specials))

    def _allowed(self, allowed_special: Iterable[str] | str) -> frozenset[str]:
        return special_names(allowed_special, self.special_tokens, "allowed_special")

    def clear_cache(self) -> None:
        """Forget the byte-level part's cached pieces (the SGPE part keeps none)."""
        self._core.clear_cache()
        self.sgpe.clear_cache()

    def encode_ordinary(self, text: str) -> list[int]:
        """Every special-token text encoded as ordinary text (``disallowed_special=()``)."""
        if not isinstance(text, str):
            raise WrongTypeError(f"expected text as str, got {type(text).__name__}")
        return self._core.encode_ordinary(text)

    def encode_batch(self, texts: Sequence[str], *, allowed_special: Iterable[str] | str = frozenset(),
                     disallowed_special: Iterable[str] | str = TIKTOKEN_SPECIALS,
                     num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode` for each text, on ``num_threads`` threads (default: all cores), in the
        core without the GIL. The first text (in order) that fails raises its error."""
        texts = as_batch(texts)
        try:
            return self._core.encode_batch(texts, *self._batch_args(allowed_special, disallowed_special, texts),
                                           thread_count(num_threads) or 0)
        except TypeError as exc:  # the core takes only str texts; which one was not, is said here
            raise not_texts(texts, exc) from None

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode_ordinary` of each text, in order, on ``num_threads`` threads (default: all
        cores) without the GIL."""
        texts = as_batch(texts, "encode_ordinary_batch")
        try:
            return self._core.encode_batch(texts, [], [], thread_count(num_threads) or 0)
        except TypeError as exc:
            raise not_texts(texts, exc) from None

    def encode_to_numpy(self, text: str, *, allowed_special: Iterable[str] | str = NO_SPECIALS,
                        disallowed_special: Iterable[str] | str = TIKTOKEN_SPECIALS) -> NDArray[np.uint32]:
        """:meth:`encode` as a ``numpy.uint32`` array, made without a Python int per id or a list
        (numpy is imported on the first call)."""
        if self._defaults(allowed_special, disallowed_special):  # one call
            try:
                return self._core.encode_array(text)
            except TypeError:
                raise self._not_text(text) from None
        return self._with_specials(text, allowed_special, disallowed_special, self._core.encode_array)

    def encode_batch_to_numpy(self, texts: Sequence[str], *, allowed_special: Iterable[str] | str = frozenset(),
                              disallowed_special: Iterable[str] | str = TIKTOKEN_SPECIALS,
                              num_threads: int | None = None) -> FlatIds:
        """:meth:`encode_batch` in the flat form (:mod:`wwho.arrays`): ``(ids, offsets)``, every
        text's ids in one ``uint32`` array and ``len(texts) + 1`` ``int64`` offsets."""
        arrays = arrays_module()
        texts = as_batch(texts, "encode_batch_to_numpy")
        try:
            flat = self._core.encode_batch_flat(texts, *self._batch_args(allowed_special, disallowed_special, texts),
                                                thread_count(num_threads) or 0)
        except TypeError as exc:
            raise not_texts(texts, exc) from None
        return arrays.from_core(flat)

    def _batch_args(self, allowed_special: Iterable[str] | str, disallowed_special: Iterable[str] | str,
                    texts: Sequence[object]) -> tuple[list[int] | None, list[int] | None]:
        """The core's (allowed, disallowed) special-token indices for a batch (None, None: the
        defaults)."""
        if self._defaults(allowed_special, disallowed_special):
            return None, None
        allowed, disallowed = self._specials(allowed_special, disallowed_special, texts, batch=True)
        index = self._special_index
        return [index[s] for s in allowed], [index[s] for s in disallowed]

    def tokenize(self, text: str, *, allowed_special: Iterable[str] | str = frozenset(),
                 disallowed_special: Iterable[str] | str = TIKTOKEN_SPECIALS) -> list[str]:
        """Each token of ``text`` as a person reads it, one convention for both parts: the token's
        own text (a space is a space, in the tiktoken part as in the SGPE part), and only the bytes
        that are not valid UTF-8 on their own (a character o200k_base cuts between tokens, SGPE's
        byte fallback) written as ``<0xE0>``, control characters too (:func:`wwho.readable.readable`,
        what ``wwho encode --tokens`` shows). Specials are their text.

        These are for reading, not ids: two tokens may read the same (o200k_base's ``"a"`` and an
        SGPE token ``"a"``). The one-to-one token strings of the vocabulary (GPT-2's byte mapping,
        ``"Ġthe"``, for the tiktoken part; see the module docstring) are
        ``convert_ids_to_tokens(encode(text))``, what ``token_to_id`` and the transformers class use."""
        from wwho.readable import readable

        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return [readable(self.token_bytes(i)) for i in ids]

    # -- token strings -----------------------------------------------------------------

    def _string_table(self) -> tuple[list[str], dict[str, int]]:
        if self._strings is None:
            self._strings, self._string_ids = token_strings(self.offset, self.tiktoken.special_tokens,
                                                            self._core.token_bytes, self.sgpe.tokens)
        return self._strings, self._string_ids  # type: ignore[return-value]

    def id_to_token(self, token_id: int) -> str:
        """The token string of an id (:meth:`get_vocab`'s spelling)."""
        return self._string_table()[0][self.vocab._check(token_id)]

    def token_to_id(self, token: str) -> int:
        """The id of a token string (:meth:`get_vocab`'s spelling); a ``TokenizerError`` if none."""
        try:
            return self._string_table()[1][token]
        except (KeyError, TypeError):
            raise no_token_string(token) from None

    def convert_ids_to_tokens(self, ids: Iterable[int]) -> list[str]:
        """:meth:`id_to_token` of each id."""
        strings = self._string_table()[0]
        # The sequences every decode takes: not a dict (its keys), a set (no order), one id alone.
        return [strings[i] for i in token_ids(ids, self.vocab.size)]

    def get_vocab(self) -> dict[str, int]:
        """Token string -> id for every id (unassigned tiktoken ids included, by their placeholder)."""
        return dict(self._string_table()[1])

    # -- tiktoken's names (wwho.encoding_names) -----------------------------------------

    def _special_ids(self) -> dict[str, int]:
        return self.special_tokens

    def _token_ids_by_bytes(self) -> dict[bytes, int]:
        """Bytes -> id of the ordinary tokens, made on first use: the tiktoken part's, then the SGPE
        part's whose bytes the tiktoken part has no token of (tiktoken's answer first)."""
        if self._bytes_ids is None:
            specials = set(self.tiktoken_specials.values())
            token_bytes = self._core.token_bytes
            table = first_ids_by_bytes((i, token_bytes(i)) for i in range(self.offset) if i not in specials)
            self._bytes_ids = first_ids_by_bytes(
                ((self.offset + i, data) for data, i in self.sgpe._token_ids_by_bytes().items()), table)
        return self._bytes_ids

    # -- decoding ----------------------------------------------------------------------

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token (what :class:`wwho.StreamingDecoder` needs)."""
        if type(token_id) is int and 0 <= token_id < 1 << 32:  # a stream's every token: no conversion
            data = self._core.token_bytes(token_id)
            if data is not None:
                return data
        uid = self.vocab._check(token_id)
        data = self._core.token_bytes(uid)
        if data is None:
            raise UnknownTokenError(f"token id {uid} is not assigned in tiktoken's {self.tiktoken.name}")
        return data

    def decode_bytes(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> bytes:
        """The bytes of ``ids``, joined (in the core). ``skip_special_tokens``: drop tiktoken's
        special tokens and the SGPE part's, as :meth:`decode` does."""
        if skip_special_tokens is not False:
            check_flag(skip_special_tokens, "skip_special_tokens", WrongTypeError)
            if skip_special_tokens:
                special = self._special_id_values()
                ids = [i for i in token_ids(ids, self.vocab.size) if i not in special]
        data = self._core.decode_plain(ids)  # a list of plain ints with tokens, the usual case
        if data is not None:
            return data
        ids = token_ids(ids, self.vocab.size)
        try:
            return self._core.decode_bytes(ids)
        except TokenizerError:
            at, bad = next((k, i) for k, i in enumerate(ids) if self._core.token_bytes(i) is None)
            raise UnknownTokenError(f"token id {bad} at position {at} is not assigned in tiktoken's "
                                    f"{self.tiktoken.name}") from None

    def decode(self, ids: Iterable[int], errors: str = DEFAULT_ERRORS, *, skip_special_tokens: bool = False) -> str:
        """Text of ``ids``; bytes that are not valid UTF-8 become U+FFFD (``errors="replace"``).
        ``skip_special_tokens``: drop tiktoken's special tokens and the SGPE part's."""
        if errors is DEFAULT_ERRORS and skip_special_tokens is False:  # the defaults: the per-call path
            data = self._core.decode_plain(ids)
            if data is not None:
                return data.decode("utf-8", "replace")
        check_decode_options(errors, skip_special_tokens)
        return utf8_text(self.decode_bytes(ids, skip_special_tokens=skip_special_tokens), errors)

    def decode_batch(self, batch: Iterable[Iterable[int]], errors: str = "replace", *,
                     skip_special_tokens: bool = False, num_threads: int | None = 8) -> list[str]:
        """:meth:`decode` of each list of ids, in order (``num_threads`` is checked and accepted, as
        tiktoken's signature has it; decoding is a copy per token, done on the calling thread)."""
        thread_count(num_threads)
        return each_decoded(id_batch(batch, errors=errors), lambda ids: self.decode(ids, errors=errors, skip_special_tokens=skip_special_tokens))

    def describe(self, *, top: int = 10) -> str:
        """A human-readable summary (``wwho inspect``); ``top``: how many of each kind of entry it shows."""
        from wwho.readable import readable_text

        top = check_count(top, "top")
        part = self.tiktoken
        name = readable_text(part.name)  # (a version-2 config names its encoding as it likes)
        left = [s for s in self.sgpe.splitter.scripts if s not in self._scripts]
        sgpe = "\n".join("    " + line for line in self.sgpe.describe(top=top).splitlines())
        return "\n".join([
            f"WWHO meta vocabulary: {self.vocab.size:,} ids = tiktoken {name} [0, {self.offset:,}) "
            f"+ SGPE [{self.offset:,}, {self.vocab.size:,})",
            f"  tiktoken {name}: n_vocab {part.n_vocab:,}, special tokens "
            + ", ".join(f"{readable_text(s)} = {i}" for s, i in sorted(part.special_tokens.items(),
                                                                      key=lambda kv: kv[1]))
            + f", {len(part.unassigned)} unassigned ids; ranks sha256 {part.sha256}",
            f"  routing: {', '.join(self._scripts) or 'no'} runs -> SGPE (ids + {self.offset:,}); everything else -> "
            f"{name} (the core's byte-level encoder)"
            + (f"; {', '.join(left)}: no token of the SGPE part, so {name}'s" if left else ""),
            f"  SGPE part ({self.sgpe.vocab_size:,} tokens; the ids below are the part's own, a meta id is "
            f"the id + {self.offset:,}):",
            sgpe,
        ])


def covered_scripts(sgpe: Any) -> tuple[str, ...]:
    """The SGPE part's scripts that it holds tokens for: the runs routed to it. A script of its mode
    none of whose characters is in a token (its training text had none: an ``indic`` part trained
    without Odia) goes to tiktoken with everything else, whose tokens cost less than the part's
    byte fallback."""
    from wwho.router import script_sets

    held = {ord(ch) for token in sgpe.tokens for ch in token}
    return tuple(name for name in sgpe.splitter.scripts if not held.isdisjoint(script_sets(name)[0]))


def _meta_core(sgpe: Any, scripts: tuple[str, ...], model: ByteLevelModel, offset: int, specials: Mapping[str, int],
               defaults: Mapping[str, int], cache_bytes: int) -> Any:
    """The core's meta encoder: the SGPE tokenizer's own encoder (shared) for the runs of
    ``scripts``, and the byte-level part's tables as ``ByteBPE`` hands them to its own."""
    from wwho.router import core_router

    names = list(specials)
    return _core.MetaEncoder(
        sgpe._core,  # the SGPE tokenizer's own encoder, shared (meta refuses a dummy space)
        router=core_router(scripts),
        ranks=model.ranks,
        patterns=list(model.pattern.patterns),
        byte_patterns=list(model.pattern.byte_patterns),
        byte_specials=list(model.special_tokens.items()),
        cache_bytes=cache_bytes,
        offset=offset,
        specials=list(specials.items()),
        defaults=[names.index(s) for s in defaults],
    )


def _restore(sgpe: Any, model: ByteLevelModel, part: TiktokenPart, cache_bytes: int, *,
             cls: type[MetaTokenizer] = MetaTokenizer) -> MetaTokenizer:
    """A tokenizer (an instance of ``cls``: :meth:`MetaTokenizer.load`'s class) of parts already
    checked (loading, unpickling)."""
    from wwho.sgpe import SGPETokenizer

    if not isinstance(sgpe, SGPETokenizer) or sgpe.prefix_space or not isinstance(model, ByteLevelModel):
        raise VocabError("not the parts of a meta tokenizer")
    tok = cls.__new__(cls)
    tok._setup(sgpe, model, part, cache_bytes)
    return tok


def _unpickled(sgpe: Any, model: ByteLevelModel, part: TiktokenPart, cache_bytes: int,
               cls: type | None = None) -> MetaTokenizer:
    """:func:`_restore` of a pickle's parts, once its tiktoken part is found to be the byte-level
    model's (an altered pickle whose special tokens had other ids would decode them as other tokens)."""
    if not isinstance(model, ByteLevelModel) or not isinstance(part, TiktokenPart) \
            or not isinstance(part.sha256, str) or part != part_of(model, part.sha256):
        raise VocabError("a pickled MetaTokenizer: its tiktoken part does not agree with its byte-level model")
    return restored_as(_restore(sgpe, model, part, cache_bytes), cls, "a pickled MetaTokenizer")
