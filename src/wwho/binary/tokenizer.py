"""``BinaryTokenizer``: a binary BPE tokenizer with the interface every wwho kind shares.

The model is a stock HF ``tokenizers.Tokenizer`` (``.hf``), as :func:`wwho.binary.train` and
:func:`wwho.binary.load` return it; this class puts :class:`wwho.protocol.Tokenizer`'s names on it,
with bytes in and out: ``encode(bytes) -> ids``, ``decode(ids) -> bytes``, ``token_to_id``,
``id_to_token`` (token strings are HF's Latin-1 characters, one per byte), ``get_vocab``,
``vocab_size``, ``len()``, batches, ``skip_special_tokens``. ``wwho.load_tokenizer`` returns one
for a binary ``tokenizer.json``.

What this class deliberately does not do: train or read files itself (``train``, ``io``), or offer
HF's ``Encoding`` objects (use ``.hf`` or :func:`wwho.binary.encode_bytes` for offsets).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: `import wwho` and `wwho --version` do without them
    import numpy as np
    from numpy.typing import NDArray
    from tokenizers import Tokenizer

    from wwho.arrays import FlatIds

from wwho.binary.mapping import decode_to_bytes, encode_bytes_batch_ids, encode_bytes_ids, text_to_bytes
from wwho.errors import UnknownTokenError, VocabError, WrongTypeError, brief, check_flag
from wwho.ids import batch as as_batch
from wwho.ids import each_decoded, id_batch, no_token_string, prepare_arrays
from wwho.ids import token_id as checked_id
from wwho.imports import arrays as arrays_module
from wwho.imports import import_module
from wwho.pickling import class_arg, restored_as
from wwho.threads import thread_count
from wwho.wholeload import loads_whole


class BinaryTokenizer:
    """Binary BPE over bytes (see the module docstring); ``hf`` is the HF tokenizer it runs."""

    def __init__(self, hf: Tokenizer) -> None:
        self.hf = hf
        # HF's BPE cache keys whole inputs here (there is no pre-tokenizer): windows, which do not
        # repeat. It would hold up to 10,000 of them per tokenizer, and tokenizers (0.23) does not
        # give that memory back when the tokenizer is dropped. Off, encoding is as fast.
        resize = getattr(hf.model, "_resize_cache", None)
        if resize is not None:
            resize(0)
        self._specials = frozenset(i for i, t in hf.get_added_tokens_decoder().items() if t.special)
        prepare_arrays()

    def __reduce__(self):
        # Pickled as its tokenizer.json and loaded back through the checks a file gets: HF's own
        # pickle gives a bare Exception for altered bytes and drops encode_special_tokens (HF does
        # not save it), which loads() sets.
        return (_restore, (self.hf.to_str(), *class_arg(self, BinaryTokenizer)))  # a subclass's: wwho.pickling

    @classmethod
    def train(cls, paths: str | os.PathLike | Iterable[str | os.PathLike], **options: Any) -> BinaryTokenizer:
        """:func:`wwho.binary.train` (same options), wrapped."""
        from wwho.binary.train import train

        return cls(train(paths, **options))

    @classmethod
    @loads_whole
    def load(cls, path: str | os.PathLike) -> BinaryTokenizer:
        """The tokenizer saved at ``path`` (its ``tokenizer.json``), checked before HF reads it."""
        from wwho.binary.io import load
        from wwho.fileio import tokenizer_path

        return cls(load(tokenizer_path(path, "BinaryTokenizer.load")))

    def save(self, path: str | os.PathLike, *, pretty: bool = False) -> Path:
        """Write the ``tokenizer.json`` at ``path`` (atomically; ``pretty``: indented); returns it."""
        from wwho.binary.io import save

        save(self.hf, path, pretty=check_flag(pretty, "pretty"))
        return Path(path)

    @property
    def vocab_size(self) -> int:
        """Ids, special tokens included."""
        return self.hf.get_vocab_size(with_added_tokens=True)

    def __len__(self) -> int:
        return self.vocab_size

    def __repr__(self) -> str:
        return f"BinaryTokenizer(vocab_size={self.vocab_size})"

    def get_vocab(self) -> dict[str, int]:
        """Token string (one Latin-1 character per byte; special tokens by name) -> id."""
        return self.hf.get_vocab(with_added_tokens=True)

    def token_to_id(self, token: str) -> int:
        """The id of a token string (:meth:`get_vocab`'s spelling); a ``TokenizerError`` if none."""
        i = self.hf.token_to_id(token) if isinstance(token, str) else None
        if i is None:
            raise no_token_string(token)
        return i

    def id_to_token(self, token_id: int) -> str:
        """The token string of an id (:meth:`get_vocab`'s spelling)."""
        i = checked_id(token_id, self.vocab_size)
        token = self.hf.id_to_token(i)
        if token is None:
            raise UnknownTokenError(f"token id {brief(i)} is not in this vocabulary")
        return token

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token (a special token's are its name in UTF-8)."""
        i = checked_id(token_id, self.vocab_size)
        token = self.id_to_token(i)
        return token.encode("utf-8") if i in self._specials else text_to_bytes(token)

    def encode(self, data: bytes, *, add_special_tokens: bool = False) -> list[int]:
        """Ids of ``data`` (bytes); ``add_special_tokens``: the template's tokens around them."""
        return encode_bytes_ids(self.hf, data, add_special_tokens=check_flag(add_special_tokens, "add_special_tokens"))

    def encode_batch(self, items: Sequence[bytes], *, add_special_tokens: bool = False,
                     num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode` of each item, in order, on HF ``tokenizers``' threads."""
        flag = check_flag(add_special_tokens, "add_special_tokens")
        return encode_bytes_batch_ids(self.hf, items, add_special_tokens=flag, num_threads=num_threads)

    def encode_to_numpy(self, data: bytes, *, add_special_tokens: bool = False) -> NDArray[np.uint32]:
        """:meth:`encode` as a ``numpy.uint32`` array."""
        np = import_module("numpy")  # (under the lock a fork waits for: wwho.imports)

        return np.asarray(self.encode(data, add_special_tokens=add_special_tokens), dtype=np.uint32)

    def encode_batch_to_numpy(self, items: Sequence[bytes], *, add_special_tokens: bool = False,
                              num_threads: int | None = None) -> FlatIds:
        """:meth:`encode_batch` in the flat form (:mod:`wwho.arrays`): ``(ids, offsets)``. Binary
        tokenizers run on Hugging Face ``tokenizers``, whose lists are converted here."""
        arrays = arrays_module()
        items = as_batch(items, "encode_batch_to_numpy", of="byte strings", one="data")
        return arrays.from_lists(self.encode_batch(items, add_special_tokens=add_special_tokens,
                                                   num_threads=num_threads))

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> bytes:
        """The bytes of ``ids``; special tokens as their names unless ``skip_special_tokens``."""
        # WrongTypeError (a TypeError too), as the other kinds' decode raises for a flag that is no bool
        skip = check_flag(skip_special_tokens, "skip_special_tokens", WrongTypeError)
        return decode_to_bytes(self.hf, ids, skip_special=skip)

    def decode_batch(self, batch: Iterable[Iterable[int]], *, skip_special_tokens: bool = False,
                     num_threads: int | None = 8) -> list[bytes]:
        """:meth:`decode` of each list of ids (or of :meth:`encode_batch_to_numpy`'s flat form), in
        order (``num_threads`` is checked and accepted, as on every kind; decoding is done on the
        calling thread)."""
        thread_count(num_threads)
        return each_decoded(id_batch(batch), lambda ids: self.decode(ids, skip_special_tokens=skip_special_tokens))




__all__ = ["BinaryTokenizer"]


def _restore(text: str, cls: type | None = None) -> BinaryTokenizer:
    from wwho.binary.io import loads

    if not isinstance(text, str):
        raise VocabError("a pickled BinaryTokenizer: not a tokenizer.json")
    tok = BinaryTokenizer(loads(text.encode("utf-8", "surrogatepass"), source="a pickled BinaryTokenizer"))
    return restored_as(tok, cls, "a pickled BinaryTokenizer")
