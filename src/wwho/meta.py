"""The WWHO meta tokenizer: tiktoken's o200k_base for everything else, SGPE for Indic runs, one id space.

Ids (spec 001 section 5)::

    [0, n)          tiktoken's ids, unchanged (n = n_vocab, 200,019 for o200k_base)
    [n, n + k)      SGPE's ids plus n (k = len(sgpe vocabulary))

:class:`MetaVocab` is only that arithmetic (it knows n and the SGPE vocabulary, never
tiktoken). :class:`MetaTokenizer` encodes in the compiled core (``wwho._core.MetaEncoder``,
``rust/src/meta.rs``): the router (:func:`wwho.router.segment`'s rule) cuts the text into
script runs; a Latin/other run goes to the core's byte-level encoder with o200k_base's ranks
(the encoder of :class:`wwho.bytelevel.ByteBPE`), an Indic run (with its leading space) to the
SGPE encoder, whose ids are shifted by n. So text with no Indic character gets exactly
tiktoken's ids, and an Indic run exactly SGPE's ids plus n. The ranks are read offline as
``ByteBPE.from_tiktoken`` reads them (``tiktoken_file=``, ``WWHO_TIKTOKEN_FILE``, tiktoken's
cache; never downloaded); the ``tiktoken`` package is not needed (a ``tiktoken.Encoding`` is
still accepted, its ranks copied). tiktoken's special tokens (``<|endoftext|>``) follow
tiktoken's model: disallowed in the text by default (a
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
``get_vocab``, the transformers class) must map one-to-one to ids, and
tiktoken tokens are bytes, so: tiktoken tokens are written with the GPT-2 byte-to-
character mapping (``"Ġthe"``), tiktoken specials as their text, SGPE tokens as their
text when it has a character outside that mapping's alphabet (every Indic token), and
otherwise (``[PAD]``, ``<0x41>``) as ``⟦sgpe⟧`` + text; unassigned ids are
``⟦unassigned ID⟧``. The files (``meta_config.json``, ``tokenizer_meta.json``) are
:mod:`wwho.export.meta_files`. This module does not train (see ``wwho train --meta``). The Python
encoder the core replaced is the tests' reference (``tests/reference/meta_py.py``).
"""

from __future__ import annotations

import base64
import hashlib
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wwho import _core
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import BYTE_TO_UNICODE, Pretokenizer
from wwho.cache import DEFAULT_CACHE_BYTES
from wwho.encoding_names import EncodingNames, first_ids_by_bytes
from wwho.errors import TokenizerError, UnknownTokenError, VocabError, WrongTypeError, brief, check_flag
from wwho.frozen import FrozenDict
from wwho.ids import (
    DEFAULT_ERRORS,
    check_decode_options,
    each_decoded,
    id_batch,
    no_token_string,
    not_texts,
    token_id,
    token_ids,
    utf8_text,
)
from wwho.ids import batch as as_batch
from wwho.imports import arrays as arrays_module
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

SGPE_PREFIX = "\u27e6sgpe\u27e7"  # ⟦sgpe⟧


class _TiktokenSpecials(str):
    """The type of :data:`TIKTOKEN_SPECIALS` (a ``str``, so that it reads ``'all'`` in a signature)."""

    __slots__ = ()


#: The default ``disallowed_special`` of the encode methods: reads ``"all"``, and means tiktoken's
#: special tokens (as tiktoken disallows them), not SGPE's (ordinary text unless named, as in
#: ``SGPETokenizer``). A ``"all"`` passed by the caller is every special token listed, both kinds.
TIKTOKEN_SPECIALS = _TiktokenSpecials("all")
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

    def encode_sgpe_token(self, token: str, *, unk_id_raw: int | None = None) -> int:
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
    """What the meta tokenizer needs to know of its tiktoken encoding, computed once."""

    name: str
    n_vocab: int
    special_tokens: dict[str, int]
    sha256: str  # of the ranks in tiktoken's file format: for official files, the file's sha256
    unassigned_ids: tuple[int, ...] = ()

    @property
    def unassigned(self) -> list[int]:
        return list(self.unassigned_ids)


def ranks_sha256(ranks: Mapping[bytes, int]) -> str:
    """The sha256 of ``ranks`` in tiktoken's file format (``base64(token) rank`` lines, by rank)."""
    h = hashlib.sha256()
    for data, i in sorted(ranks.items(), key=lambda kv: kv[1]):
        h.update(base64.b64encode(data) + b" %d\n" % i)
    return h.hexdigest()


def _part_of(model: ByteLevelModel, sha256: str | None = None) -> TiktokenPart:
    ids = set(model.ranks.values())
    ids.update(model.special_tokens.values())
    n_vocab = max(ids) + 1 if ids else 0
    return TiktokenPart(model.name, n_vocab, dict(model.special_tokens), sha256 or ranks_sha256(model.ranks),
                        tuple(i for i in range(n_vocab) if i not in ids))


def _model_of_encoding(encoding: Any) -> ByteLevelModel:
    """A ``tiktoken.Encoding`` as a ranks-rule model (through its public API; the regex of an
    encoding wwho does not know is read from ``_pat_str``)."""
    from wwho.bytelevel.files import TIKTOKEN_ENCODINGS

    specials = {s: encoding.encode_single_token(s) for s in encoding.special_tokens_set}
    special_ids = set(specials.values())
    known = getattr(encoding, "_mergeable_ranks", None)  # tiktoken's own dict: copied, not rebuilt
    if isinstance(known, dict) and all(type(k) is bytes for k in list(known)[:16]):
        ranks = dict(known)
    else:
        ranks = {}
        for i in range(encoding.n_vocab):
            if i in special_ids:
                continue
            try:
                ranks[encoding.decode_single_token_bytes(i)] = i
            except KeyError:
                continue
    if encoding.name in TIKTOKEN_ENCODINGS:
        pattern = Pretokenizer.named(encoding.name)
    else:
        pattern = Pretokenizer.coerce(getattr(encoding, "_pat_str", None) or "o200k")
    return ByteLevelModel(ranks, pattern, special_tokens=specials, name=encoding.name)


def resolve_encoding(encoding: Any = "o200k_base", *, tiktoken_file: str | os.PathLike | None = None) -> Any:
    """The byte-level part of a meta tokenizer, as :class:`MetaTokenizer` takes it: for a name, a
    :class:`~wwho.bytelevel.ByteLevelModel` read offline like ``ByteBPE.from_tiktoken`` does
    (``tiktoken_file=``, ``WWHO_TIKTOKEN_FILE``, tiktoken's cache; never downloaded); a name wwho
    does not know goes to tiktoken (optional), which may download it. Anything else is returned as
    given (a ``ByteBPE``, a ``ByteLevelModel``, a ``tiktoken.Encoding``)."""
    if not isinstance(encoding, str):
        return encoding
    from wwho.bytelevel.files import TIKTOKEN_ENCODINGS, from_tiktoken
    from wwho.tiktoken_file import ranks_file_for

    found = ranks_file_for(encoding, tiktoken_file)
    if found is not None and not found[0].is_file():
        raise VocabError(f"{found[0]} (from {found[1]}): tiktoken ranks file not found. To fix: point "
                         f"{'--tiktoken-file / tiktoken_file=' if found[1] == 'tiktoken_file' else found[1]} at "
                         f"the {encoding}.tiktoken file")
    if encoding in TIKTOKEN_ENCODINGS:
        try:
            return from_tiktoken(encoding, tiktoken_file=tiktoken_file)
        except VocabError:
            # Not in tiktoken's cache: an encoding tiktoken already holds in memory (this process
            # loaded it) serves too; nothing is downloaded.
            loaded = getattr(sys.modules.get("tiktoken.registry"), "ENCODINGS", {}).get(encoding)
            if found is not None or loaded is None:
                raise
            return loaded
    from wwho.bytelevel.tiktoken_loader import get_encoding

    try:
        return get_encoding(encoding, tiktoken_file=tiktoken_file)
    except ImportError:
        raise VocabError(f"unknown tiktoken encoding {encoding!r}: wwho knows {', '.join(TIKTOKEN_ENCODINGS)}; "
                         "others need the tiktoken package") from None


def _byte_level(encoding: Any, tiktoken_file: str | os.PathLike | None) -> tuple[ByteLevelModel, TiktokenPart]:
    """The model and the facts of the byte-level part named or given by ``encoding``."""
    from wwho.bytelevel import ByteBPE
    from wwho.bytelevel.files import TIKTOKEN_ENCODINGS

    given = encoding
    encoding = resolve_encoding(encoding, tiktoken_file=tiktoken_file)
    if isinstance(encoding, ByteBPE):
        model = encoding.model
    elif isinstance(encoding, ByteLevelModel):
        model = encoding
    elif all(hasattr(encoding, a) for a in ("encode_single_token", "decode_single_token_bytes", "n_vocab", "name",
                                            "special_tokens_set")):
        model = _model_of_encoding(encoding)
    else:
        raise VocabError("tiktoken_encoding must be a name, a ByteBPE or a tiktoken.Encoding, not "
                         f"{type(encoding).__name__}")
    if model.merges is not None or model.added_tokens or model.extra_tokens:
        raise VocabError("the byte-level part of a meta tokenizer must be a tiktoken-style vocabulary (ranks, "
                         "special tokens), without merges, added or extra tokens")
    known = TIKTOKEN_ENCODINGS.get(model.name)
    # A known name read from its file was checked against the official file's sha256 already.
    read = isinstance(given, str) and isinstance(encoding, ByteLevelModel)
    sha256 = known.sha256 if read and known is not None else None
    return model, _part_of(model, sha256)


def _saved_byte_level(name: str, config: Mapping[str, Any], tiktoken_file: str | os.PathLike | None,
                      source: Path) -> tuple[ByteLevelModel, TiktokenPart]:
    """The byte-level part a version-2 ``meta_config.json`` describes: the ranks found as for a
    name (one wwho does not know, only through ``tiktoken_file=`` or ``WWHO_TIKTOKEN_FILE``), with
    the special tokens and pre-tokenizer the config holds. The caller checks the ranks' sha256."""
    from wwho.bytelevel.files import TIKTOKEN_ENCODINGS, from_tiktoken
    from wwho.bytelevel.validate import check_model
    from wwho.tiktoken_file import FIX, ranks_file_for

    saved = config["tiktoken_pretokenizer"]
    if "patterns" not in saved:
        raise VocabError(f"{source}: 'tiktoken_pretokenizer' has no 'patterns'")
    try:
        pattern = Pretokenizer.from_json(saved)
    except VocabError as exc:
        raise VocabError(f"{source}: 'tiktoken_pretokenizer': {exc}") from None
    try:
        if name in TIKTOKEN_ENCODINGS:
            ranks = from_tiktoken(name, tiktoken_file=tiktoken_file).ranks
        else:
            found = ranks_file_for(name, tiktoken_file)
            if found is None:
                raise VocabError(f"{brief(name)} is no encoding wwho finds by name; its special tokens and pre-tokenizer "
                                 f"are in the config, its ranks are not. To fix: {FIX} (the ranks file it was made "
                                 "with)")
            ranks = from_tiktoken(found[0], pattern=pattern).ranks
    except VocabError as exc:
        raise VocabError(f"{source}: needs the ranks of the tiktoken encoding {brief(name)}: {exc}") from None
    model = ByteLevelModel(ranks, pattern, special_tokens=dict(config["tiktoken_special_tokens"]), name=name)
    return check_model(model, f"{source}: 'tiktoken_special_tokens'"), _part_of(model)


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
        _check_cache_bytes(cache_bytes)
        model, part = _byte_level(tiktoken_encoding, tiktoken_file)
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
        self._scripts = sgpe_tokenizer.splitter.scripts
        self._pattern = model.pattern
        self._cache_bytes = cache_bytes
        self._core = _meta_core(sgpe_tokenizer, model, self.offset, self.special_tokens, self.tiktoken_specials,
                                cache_bytes)
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
        from wwho.export.meta_files import CONFIG_FILE, read_meta_config
        from wwho.fileio import tokenizer_path
        from wwho.manifest import member
        from wwho.sgpe import SGPETokenizer

        _check_cache_bytes(cache_bytes)  # before the files are read, not deep in the core after
        directory = Path(tokenizer_path(directory, "MetaTokenizer.load"))
        path = directory / CONFIG_FILE
        config = read_meta_config(path)
        name = config["tiktoken_encoding"]
        if "tiktoken_pretokenizer" in config:  # version 2: an encoding its name does not tell
            model, part = _saved_byte_level(name, config, tiktoken_file, path)
        else:
            try:
                model, part = _byte_level(name, tiktoken_file)
            except VocabError as exc:
                raise VocabError(f"{path}: needs the tiktoken encoding {brief(name)}: {exc}") from None
        if part.sha256 != config["tiktoken_sha256"]:
            where = tiktoken_file or "tiktoken's cache"
            raise VocabError(f"{path}: was made with {name[:80]} ranks of sha256 {config['tiktoken_sha256'][:80]}, but the "
                             f"ranks in use ({where}) have sha256 {part.sha256}; ids would not match")
        if part.n_vocab != config["offset"]:
            raise VocabError(f"{path}: 'offset' {config['offset']} is not {name[:80]}'s n_vocab {part.n_vocab}")
        vocab_path = member(directory, config["sgpe_vocab"], source=str(path), key="'sgpe_vocab'")
        sgpe = SGPETokenizer.load(vocab_path)
        if sgpe.vocab_size != config["sgpe_vocab_size"]:
            raise VocabError(f"{path}: 'sgpe_vocab_size' is {config['sgpe_vocab_size']} but "
                             f"{vocab_path} has {sgpe.vocab_size} tokens")
        if config.get("sgpe_script", sgpe.script) != sgpe.script:  # the router would send other text to SGPE
            raise VocabError(f"{path}: 'sgpe_script' is {brief(config['sgpe_script'])} but {vocab_path} is a "
                             f"{sgpe.script!r} vocabulary")
        if sgpe.prefix_space:
            raise VocabError(f"{vocab_path}: trained with prefix_space, which a meta tokenizer's SGPE part "
                             "cannot be (see MetaTokenizer)")
        return _restore(sgpe, model, part, cache_bytes)

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``vocab.json`` (SGPE part), ``tokenizer_meta.json`` and ``meta_config.json``."""
        from wwho.export.meta_files import save_meta

        return save_meta(self, directory)

    def __reduce__(self):
        # Pickled as the SGPE part and the byte-level part's model (read back from the core).
        return (_restore, (self.sgpe, self._model(), self.tiktoken, self._cache_bytes))

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
            names = {i: s for s, i in self.tiktoken.special_tokens.items()}
            token_bytes = self._core.token_bytes
            strings = [names[i] if i in names else f"\u27e6unassigned {i}\u27e7" if b is None
                       else bytes_to_token_string(b) for i, b in ((i, token_bytes(i)) for i in range(self.offset))]
            strings += [sgpe_token_string(t) for t in self.sgpe.tokens]
            ids = {s: i for i, s in enumerate(strings)}
            if len(ids) != len(strings):  # only a special written like an ordinary token could do this
                seen: set[str] = set()
                dup = next(s for s in strings if s in seen or seen.add(s))
                raise VocabError(f"two ids have the token string {dup!r}")
            self._strings, self._string_ids = strings, ids
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
        """A human-readable summary (``wwho inspect``)."""
        part = self.tiktoken
        sgpe = "\n".join("    " + line for line in self.sgpe.describe(top=top).splitlines())
        return "\n".join([
            f"WWHO meta vocabulary: {self.vocab.size:,} ids = tiktoken {part.name} [0, {self.offset:,}) "
            f"+ SGPE [{self.offset:,}, {self.vocab.size:,})",
            f"  tiktoken {part.name}: n_vocab {part.n_vocab:,}, special tokens "
            + ", ".join(f"{s} = {i}" for s, i in sorted(part.special_tokens.items(), key=lambda kv: kv[1]))
            + f", {len(part.unassigned)} unassigned ids; ranks sha256 {part.sha256}",
            f"  routing: {', '.join(self._scripts)} runs -> SGPE (ids + {self.offset:,}); everything else -> "
            f"{part.name} (the core's byte-level encoder)",
            f"  SGPE part ({self.sgpe.vocab_size:,} tokens, ids offset by {self.offset:,}):",
            sgpe,
        ])


def _check_cache_bytes(cache_bytes: object) -> None:
    """``cache_bytes`` as ``ByteBPE`` takes it: an int in [0, 2**63), never a bool."""
    if type(cache_bytes) is not int or not 0 <= cache_bytes < 1 << 63:
        raise VocabError(f"cache_bytes must be an int in [0, 2**63), not {brief(cache_bytes)}")


def _meta_core(sgpe: Any, model: ByteLevelModel, offset: int, specials: Mapping[str, int],
               defaults: Mapping[str, int], cache_bytes: int) -> Any:
    """The core's meta encoder: the SGPE tokenizer's own encoder (shared) and the byte-level part's
    tables as ``ByteBPE`` hands them to its own."""
    from wwho.router import core_router

    names = list(specials)
    return _core.MetaEncoder(
        sgpe._core,  # the SGPE tokenizer's own encoder, shared (meta refuses a dummy space)
        router=core_router(sgpe.splitter.scripts),
        ranks=model.ranks,
        patterns=list(model.pattern.patterns),
        byte_patterns=list(model.pattern.byte_patterns),
        byte_specials=list(model.special_tokens.items()),
        cache_bytes=cache_bytes,
        offset=offset,
        specials=list(specials.items()),
        defaults=[names.index(s) for s in defaults],
    )


def _restore(sgpe: Any, model: ByteLevelModel, part: TiktokenPart, cache_bytes: int) -> MetaTokenizer:
    """A tokenizer of parts already checked (loading, unpickling)."""
    from wwho.sgpe import SGPETokenizer

    if not isinstance(sgpe, SGPETokenizer) or sgpe.prefix_space or not isinstance(model, ByteLevelModel):
        raise VocabError("not the parts of a meta tokenizer")
    tok = MetaTokenizer.__new__(MetaTokenizer)
    tok._setup(sgpe, model, part, cache_bytes)
    return tok
