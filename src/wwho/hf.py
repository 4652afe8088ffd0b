"""``WWHOTokenizer``: the meta tokenizer as a ``transformers`` tokenizer, for ``Trainer`` and friends.

A ``PreTrainedTokenizer`` (transformers' Python backend) that delegates every encode and
decode to :class:`wwho.meta.MetaTokenizer`, so its ids are exactly the meta tokenizer's::

    tok = WWHOTokenizer.from_pretrained("meta_dir")          # a directory of `wwho train --meta`
    tok = WWHOTokenizer(meta_tokenizer=MetaTokenizer(...))   # or wrap one
    batch = tok(texts, padding=True, return_tensors="np")    # input_ids + attention_mask
    tok.save_pretrained("out")                               # meta files + tokenizer_config.json

Special tokens, chosen for causal-LM training:

* ``eos_token`` = tiktoken's ``<|endoftext|>`` (id 199,999 in o200k_base): the document
  separator GPT-style models use, already in the tiktoken range;
* ``pad_token`` = SGPE's ``[PAD]`` (``⟦sgpe⟧[PAD]``, id ``offset + 0``): a token that never
  occurs in encoded text. It is deliberately *not* the eos token: transformers' language-
  modelling collator turns every ``pad_token_id`` label into -100, which would also stop
  the model from learning to emit ``<|endoftext|>``;
* no ``bos``/``unk`` (decoding is byte-exact, nothing is unknown). ``append_eos=True``
  appends ``<|endoftext|>`` to every sequence when ``add_special_tokens=True`` (built here,
  not by transformers 5's ``special_tokens_pattern``, which transformers 4 ignores);
* the other specials (tiktoken's ``<|endofprompt|>``, SGPE's ``[MASK]``...) are not registered:
  their text in an input is ordinary text, and their ids decode as ``MetaTokenizer.decode`` gives
  them (``[MASK]``); ``skip_special_tokens=True`` and ``get_special_tokens_mask`` count them as
  special, as ``MetaTokenizer.decode(skip_special_tokens=True)`` does.

Like every transformers tokenizer it recognizes the text of its special tokens
(``<|endoftext|>``) in the input (``split_special_tokens=True`` turns that off); other text
goes through :meth:`MetaTokenizer.encode` as ordinary text. Token strings are those of
:mod:`wwho.meta_vocab` (GPT-2 byte mapping for tiktoken tokens, SGPE tokens as text), and
decoding works on the tokens' bytes, so ``decode(encode(text)) == text``.

``save_pretrained`` writes the meta tokenizer's files (``vocab.json``, ``meta_config.json``,
``tokenizer_meta.json``), transformers' ``tokenizer_config.json`` and ``tokenization_wwho.py``,
a two-line module that imports this class from wwho; ``from_pretrained`` reads them back (the
tiktoken ranks come from tiktoken: pass ``tiktoken_file=PATH`` or set ``WWHO_TIKTOKEN_FILE``
offline). ``AutoTokenizer`` knows no class of this name, so the config's ``auto_map`` names that
module: ``AutoTokenizer.from_pretrained(directory, trust_remote_code=True)`` gives this class
(without ``trust_remote_code`` transformers refuses, saying so). There is no fast (Rust) version.

Pickling (``DataLoader`` workers, ``datasets.map(num_proc=...)``, ``spawn`` pools) sends the meta
tokenizer (its own ``__reduce__``) and transformers' state, not the vocabulary dict, which is
rebuilt from the meta tokenizer on arrival.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Any

try:
    from transformers import PreTrainedTokenizer
except ImportError as exc:
    if exc.name == "transformers":  # the optional extra is not installed
        raise ImportError(f"wwho.hf needs transformers, which is not installed ({exc}). To fix: "
                          "pip install 'wwho[hf]' (or pip install 'transformers>=4.45')") from exc
    # installed, and failing for a reason of its own (a dependency): that reason, not "install it"
    raise ImportError(f"wwho.hf cannot import transformers: {exc}") from exc

from wwho.errors import TokenizerError, UnknownTokenError, brief, check_flag
from wwho.export.meta_files import AUTO_MODULE, AUTO_MODULE_SOURCE
from wwho.ids import no_token
from wwho.ids import token_ids as checked_ids
from wwho.meta import MetaTokenizer
from wwho.meta_vocab import SGPE_PREFIX

DEFAULT_EOS = "<|endoftext|>"


#: The folder whose meta tokenizer files this context's ``save_pretrained`` has saved already.
_SAVED_META: ContextVar[str | None] = ContextVar("saved_meta", default=None)


class WWHOTokenizer(PreTrainedTokenizer):
    """transformers tokenizer over a :class:`MetaTokenizer` (see the module docstring)."""

    vocab_files_names = {"vocab_file": "vocab.json", "meta_config_file": "meta_config.json"}
    model_input_names = ["input_ids", "attention_mask"]
    # Written into tokenizer_config.json by save_pretrained: how AutoTokenizer finds this class.
    _auto_map = {"AutoTokenizer": [f"{AUTO_MODULE}.WWHOTokenizer", None]}

    def __init__(self, vocab_file: str | None = None, meta_config_file: str | None = None, *,
                 meta_tokenizer: MetaTokenizer | None = None, tiktoken_file: str | os.PathLike | None = None,
                 eos_token: str | None = DEFAULT_EOS, pad_token: str | None = SGPE_PREFIX + "[PAD]",
                 bos_token: str | None = None, unk_token: str | None = None, append_eos: bool = False,
                 **kwargs: Any) -> None:
        if meta_tokenizer is None:
            if meta_config_file is None and vocab_file is not None:  # from_pretrained of another directory
                raise TokenizerError(f"{Path(vocab_file).parent}: has no meta_config.json, so it is no meta "
                                     "tokenizer's directory (of `wwho train --meta` or save_pretrained); an SGPE "
                                     "directory loads with AutoTokenizer or wwho.SGPETokenizer.load")
            if meta_config_file is None:
                raise TokenizerError("WWHOTokenizer needs meta_tokenizer=MetaTokenizer(...) or a saved directory "
                                     "(WWHOTokenizer.from_pretrained(directory))")
            meta_tokenizer = MetaTokenizer.load(Path(meta_config_file).parent, tiktoken_file=tiktoken_file)
        if not isinstance(meta_tokenizer, MetaTokenizer):
            raise TokenizerError(f"meta_tokenizer must be a MetaTokenizer, not {type(meta_tokenizer).__name__}")
        self.meta = meta_tokenizer
        self._base_vocab = meta_tokenizer.get_vocab()
        if pad_token == SGPE_PREFIX + "[PAD]" and pad_token not in self._base_vocab:
            pad_token = None  # an SGPE vocabulary without [PAD]: set one with add_special_tokens
        self.append_eos = check_flag(append_eos, "append_eos", TokenizerError)  # ("false" is no False)
        kwargs.setdefault("clean_up_tokenization_spaces", False)  # spaces are part of the tokens
        kwargs["special_tokens_pattern"] = "eos" if self.append_eos else "none"
        super().__init__(eos_token=eos_token, pad_token=pad_token, bos_token=bos_token, unk_token=unk_token,
                         append_eos=self.append_eos, **kwargs)
        self._check_added_ids()

    def _check_added_ids(self) -> None:
        """The added tokens a ``tokenizer_config.json`` names (``added_tokens_decoder``) must be the meta
        tokenizer's own at their ids, or follow its ids without a gap: at another token's id, an added
        token would make one id two tokens (``decode(encode(s)) != s``); past the end, ids no embedding
        of ``len(tokenizer)`` rows holds and ``decode`` refuses."""
        n = self.meta.vocab_size
        beyond = sorted(i for i in self._added_tokens_decoder if i >= n)
        for i, token in sorted(self._added_tokens_decoder.items()):
            if i < n and self._base_vocab.get(token.content) != i:
                raise TokenizerError(f"added token {token.content!r} has id {i}, which is another token of the meta "
                                     f"tokenizer: give it no id (add_tokens gives the next free one)")
        if beyond != list(range(n, n + len(beyond))):
            gap = next(i for k, i in enumerate(beyond) if i != n + k)
            raise TokenizerError(f"added token {self._added_tokens_decoder[gap].content!r} has id {gap}, past the "
                                 f"next free id {n + beyond.index(gap)}: added ids follow the vocabulary's without a gap")

    @classmethod
    def register_for_auto_class(cls, auto_class: str = "AutoTokenizer") -> None:
        """Nothing to do: ``save_pretrained`` always names :data:`AUTO_MODULE` in ``auto_map``.
        transformers calls this on a class it loaded through ``auto_map``; its own version would
        make every later save copy wwho's ``hf.py`` into the directory and name that copy instead."""

    # -- pickling ------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        # The vocabulary dict (every token string of the meta tokenizer) is rebuilt from the meta
        # tokenizer on arrival; sent too, it would be much of the pickle's size and dumping time.
        state = self.__dict__.copy()
        del state["_base_vocab"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._base_vocab = self.meta.get_vocab()

    # -- vocabulary --------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("return_offsets_mapping"):  # transformers' Python backend drops the option, in silence
            raise TokenizerError("WWHOTokenizer gives no offset_mapping (a transformers Python tokenizer has "
                                 "none): MetaTokenizer.decode_with_offsets(ids) gives each token's first character")
        return super().__call__(*args, **kwargs)

    @property
    def vocab_size(self) -> int:
        return self.meta.vocab_size

    def get_vocab(self) -> dict[str, int]:
        vocab = dict(self._base_vocab)
        vocab.update(self._added_tokens_encoder)
        return vocab

    def _tokenize(self, text: str, **kwargs: Any) -> list[str]:
        # Special-token text was split off by transformers before this; the rest is ordinary.
        return self.meta.convert_ids_to_tokens(self.meta.encode(text, disallowed_special=()))

    def _convert_token_to_id(self, token: str) -> int | None:
        # An unknown token is the unknown token's id, or None without one (as transformers' own
        # tokenizers answer: ``convert_tokens_to_ids("<|im_start|>") is None`` is how code asks).
        i = self._base_vocab.get(token)
        return self.unk_token_id if i is None else i

    def _convert_id_to_token(self, index: int) -> str:
        return self.meta.id_to_token(index)

    # -- decoding ----------------------------------------------------------------------

    def _bytes_of_ids(self, ids: list[int]) -> bytes:
        # A token transformers registered (the eos and pad tokens, added ones) decodes to its
        # content, which is what that text in an input encodes to (the pad token's is prefixed:
        # ⟦sgpe⟧[PAD]); every other id, the SGPE part's other specials included, as
        # MetaTokenizer.decode gives it. ``ids`` are checked against ``len(self)`` already.
        out: list[bytes] = []
        start = 0
        added = self._added_tokens_decoder
        for end, i in enumerate(ids):
            token = added.get(i)
            if token is not None:
                out.append(self._meta_bytes(ids, start, end))
                out.append(token.content.encode("utf-8"))
                start = end + 1
        out.append(self._meta_bytes(ids, start, len(ids)))
        return b"".join(out)

    def _meta_bytes(self, ids: list[int], start: int, end: int) -> bytes:
        """The meta tokenizer's bytes of ``ids[start:end]``; an error names the position in ``ids``."""
        run = ids[start:end]
        if run and max(run) >= self.meta.vocab_size:  # an id transformers knows, not the meta tokenizer
            k, i = next((k, i) for k, i in enumerate(run) if i >= self.meta.vocab_size)
            raise no_token(i, f"token id {brief(i)} at position {start + k} is not a token of this tokenizer")
        try:
            return self.meta.decode_bytes(run)
        except UnknownTokenError:
            for k, i in enumerate(run):
                try:
                    self.meta.token_bytes(i)
                except UnknownTokenError:
                    raise UnknownTokenError(f"token id {brief(i)} at position {start + k} is not assigned in tiktoken's "
                                            f"{self.meta.tiktoken.name}") from None
            raise

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        data = []
        for token in tokens:
            i = self._base_vocab.get(token)
            data.append(self.meta.token_bytes(i) if i is not None else token.encode("utf-8"))
        return b"".join(data).decode("utf-8", "replace")

    def _decode(self, token_ids: int | list[int], skip_special_tokens: bool = False,
                clean_up_tokenization_spaces: bool | None = None, **kwargs: Any) -> str:
        # transformers passes one id as an int; each id is checked as every wwho decode checks it
        # (a float, a bool or a string is no id, never turned into one by int()).
        ids = checked_ids([token_ids] if isinstance(token_ids, int) else token_ids, len(self))
        if skip_special_tokens:
            skip = self._special_ids()
            ids = [i for i in ids if i not in skip]
        text = self._bytes_of_ids(ids).decode("utf-8", "replace")
        clean = self.clean_up_tokenization_spaces if clean_up_tokenization_spaces is None else clean_up_tokenization_spaces
        return self.clean_up_tokenization(text) if clean else text

    # -- special tokens of a sequence -----------------------------------------------------
    # transformers 5 builds these from ``special_tokens_pattern``, which transformers 4 does not
    # know: written out here, ``append_eos`` works in both.

    def build_inputs_with_special_tokens(self, token_ids_0: list[int],
                                         token_ids_1: list[int] | None = None) -> list[int]:
        eos = self._appended()
        if token_ids_1 is None:
            return token_ids_0 + eos
        return token_ids_0 + eos + token_ids_1 + eos

    def get_special_tokens_mask(self, token_ids_0: list[int], token_ids_1: list[int] | None = None,
                                already_has_special_tokens: bool = False) -> list[int]:
        if already_has_special_tokens:
            special = self._special_ids()
            return [int(i in special) for i in token_ids_0 + (token_ids_1 or [])]
        end = [1] * len(self._appended())
        if token_ids_1 is None:
            return [0] * len(token_ids_0) + end
        return [0] * len(token_ids_0) + end + [0] * len(token_ids_1) + end

    def _special_ids(self) -> set[int]:
        # transformers' registered tokens (eos, pad, added ones) and every special of the meta
        # tokenizer, registered or not (tiktoken's <|endofprompt|>, SGPE's [MASK]): what
        # MetaTokenizer.decode(skip_special_tokens=True) drops.
        return set(self.all_special_ids) | self.meta._special_id_values()

    def _appended(self) -> list[int]:
        if not self.append_eos:
            return []
        if self.eos_token_id is None:
            raise TokenizerError("append_eos=True needs an eos_token (WWHOTokenizer(..., eos_token='<|endoftext|>'))")
        return [self.eos_token_id]

    # -- files -------------------------------------------------------------------------

    def save_pretrained(self, save_directory: str | os.PathLike, legacy_format: bool | None = None,
                        filename_prefix: str | None = None, push_to_hub: bool = False,
                        **kwargs: Any) -> tuple[str, ...]:
        """transformers' ``save_pretrained``, with the meta tokenizer's files (one all-or-nothing save)
        written first: transformers writes its ``tokenizer_config.json`` before it asks for them, so a
        save that failed there (a ``vocab.json`` that is a folder) would leave the new config beside
        the old files, and the folder would load with the new options over the old vocabulary."""
        def save() -> tuple[str, ...]:
            return super(WWHOTokenizer, self).save_pretrained(
                save_directory, legacy_format=legacy_format, filename_prefix=filename_prefix,
                push_to_hub=push_to_hub, **kwargs)

        if filename_prefix:  # (before transformers writes a file of that prefix)
            raise TokenizerError("WWHOTokenizer files have fixed names: filename_prefix is not supported")
        if os.path.isfile(save_directory):  # (transformers logs it and returns None)
            return save()
        directory = os.path.abspath(save_directory)
        self._save_meta(directory)
        saved = _SAVED_META.set(directory)
        try:
            return save()
        finally:
            _SAVED_META.reset(saved)

    def save_vocabulary(self, save_directory: str, filename_prefix: str | None = None) -> tuple[str, ...]:
        if filename_prefix:
            raise TokenizerError("WWHOTokenizer files have fixed names: filename_prefix is not supported")
        if _SAVED_META.get() != os.path.abspath(save_directory):  # (save_pretrained saved them already)
            self._save_meta(save_directory)
        from wwho.export.meta_files import CONFIG_FILE, META_FILE, VOCAB_FILE

        names = (VOCAB_FILE, META_FILE, CONFIG_FILE, f"{AUTO_MODULE}.py")
        return tuple(str(Path(save_directory) / name) for name in names)

    def _save_meta(self, directory: str | os.PathLike) -> None:
        from wwho.export.meta_files import save_meta

        save_meta(self.meta, directory, extra={f"{AUTO_MODULE}.py": AUTO_MODULE_SOURCE.encode("utf-8")})
