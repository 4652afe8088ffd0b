"""``wwho encode --npy``: every line's ids in one NumPy ``.npy`` file, written block by block.

Pretraining pipelines store a corpus's ids as one flat array (nanoGPT's ``train.bin`` is a
memory-mapped ``uint16`` stream with ``<|endoftext|>`` after each document). This writes that
array as a ``.npy`` file, whose header says its dtype and length, so that
``numpy.load(path, mmap_mode="r")`` opens it without being told either: ``uint16`` where every id
of the vocabulary fits (ids below 65,536), else ``uint32``, little-endian; after each line, the id
of the special token ``--eot`` names, or nothing (``--eot none``: the lines' ids run together).

The header is written first with a length of 0 and again, in place, at the end (numpy's header
keeps room for any length), so the ids are written once, in order, block by block, into the
temporary file that is renamed over the output at the end: memory stays at a block's ids, and a
failed or interrupted run leaves no half-written output. Hence a regular file only: a pipe cannot
be gone back over. ``wwho decode --npy FILE --eot TOKEN`` reads such an array back
(:func:`read_npy`), a line at each end token. Deliberately not here: other layouts (Megatron's
``.bin``/``.idx``, Hugging Face ``datasets``), and a second file of each line's place (``--eot``
marks the lines).
"""

from __future__ import annotations

import io
from typing import IO, Any

from wwho.errors import CorpusError, TokenizerError


def npy_dtype(tok: Any) -> str:
    """``"<u2"`` where every id of ``tok`` fits in 16 bits, else ``"<u4"``."""
    n_vocab = getattr(tok, "n_vocab", None)
    if n_vocab is None:
        n_vocab = tok.vocab_size  # (an HF tokenizer: its ids, added tokens included)
    return "<u2" if n_vocab <= 1 << 16 else "<u4"


def eot_id(tok: Any, name: str | None) -> int | None:
    """The id ``--eot NAME`` names: a special token of ``tok``; None for ``none``."""
    if name is None:
        raise CorpusError("--npy needs --eot: the special token written after each line's ids (as nanoGPT's "
                          "train.bin has <|endoftext|>), or --eot none to run the lines together"
                          + _specials_said(tok))
    if name == "none":
        return None
    if name not in _special_names(tok):
        raise CorpusError(f"--eot {name}: not a special token of this tokenizer{_specials_said(tok)}")
    if hasattr(tok, "special_tokens_set"):
        return tok.encode_single_token(name)
    return tok.tokenizer.token_to_id(name)


def _special_names(tok: Any) -> set[str]:
    """The special tokens' names: wwho's kinds say them; an HF tokenizer's are its special added tokens."""
    names = getattr(tok, "special_tokens_set", None)
    if names is not None:
        return names
    return {t.content for t in tok.tokenizer.get_added_tokens_decoder().values() if t.special}


def _specials_said(tok: Any) -> str:
    names = sorted(_special_names(tok))
    if not names:
        return "; this tokenizer has no special tokens: give --eot none"
    return "; its special tokens: " + ", ".join(names[:12]) + (f" (and {len(names) - 12} more)" if len(names) > 12 else "")


def read_npy(path: str) -> NpyIds:
    """The flat array of ids in the ``.npy`` file ``path`` (one dimension, integers), read a slice at
    a time (``wwho decode --npy``); a :class:`CorpusError` naming the file for anything else."""
    import os
    import stat

    try:
        mode = os.stat(path).st_mode  # (first: a FIFO would block the open until it has a writer)
        if not stat.S_ISREG(mode):
            raise CorpusError(f"{path}: not a regular file (a .npy array of ids is one)")
        f = open(path, "rb")  # (held open: every slice is read from this file, whatever replaces the name)
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        shape, dtype, offset = _array_header(f, path)
        if len(shape) != 1 or dtype.kind not in "ui":
            raise CorpusError(f"{path}: a {len(shape)}-dimensional array of {dtype}, not a flat array of integer ids")
        ids = NpyIds(path, f, dtype, offset, shape[0])
        size = os.fstat(f.fileno()).st_size
        if size != offset + ids.nbytes:  # bytes past what the header says are no ids of it
            raise CorpusError(f"{path}: its header says {len(ids):,} ids ({ids.nbytes:,} bytes after a header of "
                              f"{offset:,}), but the file holds {size - offset:,} bytes there: it was cut or changed")
    except BaseException:
        f.close()
        raise
    return ids


def _array_header(f: IO[bytes], path: str) -> tuple[tuple[int, ...], Any, int]:
    """(shape, dtype, offset of the data) of the ``.npy`` file open as ``f``, at its start."""
    import numpy as np

    try:
        magic = f.read(6)
        if magic != b"\x93NUMPY":  # (numpy would try it as a pickle, and say so)
            what = "an .npz archive" if magic[:2] == b"PK" else "not a .npy file (no NumPy header)"
            raise CorpusError(f"{path}: {what}; give the .npy array of ids that wwho encode --npy writes")
        f.seek(0)
        version = np.lib.format.read_magic(f)
        # (a version 3 header is version 2's in UTF-8: the same for an array of integers)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(f)
        return shape, dtype, f.tell()
    except (CorpusError, MemoryError):
        raise
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except Exception as exc:  # noqa: BLE001 - numpy's header parser raises ValueError, SyntaxError,
        # tokenize.TokenError... for a mutated header: each is this file's fault, not wwho's
        raise CorpusError(f"{path}: not a .npy array of ids ({type(exc).__name__}: {exc})") from None


class NpyIds:
    """The ids of a ``.npy`` file, ``ids[start:stop]`` read from it when asked (``os.pread``), as an
    array: memory for one slice, as a memory map would take, but a file cut while it is read (a copy
    written over it) is an error naming it, where a map's pages past the new end kill the process
    (SIGBUS, no message, the output's temporary file left behind)."""

    def __init__(self, path: str, file: IO[bytes], dtype: Any, offset: int, length: int) -> None:
        self.path, self.file, self.dtype, self.offset, self.length = path, file, dtype, offset, length
        self.nbytes = length * dtype.itemsize

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, key: slice) -> Any:
        import os

        import numpy as np

        start, stop, step = key.indices(self.length)
        if step != 1:
            raise TypeError("only slices of consecutive ids are read")
        wanted = max(stop - start, 0) * self.dtype.itemsize
        at, parts = self.offset + start * self.dtype.itemsize, []
        while wanted:
            try:
                part = os.pread(self.file.fileno(), min(wanted, 1 << 30), at)
            except OSError as exc:
                raise CorpusError(f"{self.path}: cannot read: {exc.strerror or exc}") from None
            if not part:
                raise CorpusError(f"{self.path}: cut while it was read: it ends before byte {at:,} now, where its "
                                  f"header says {self.offset + self.nbytes:,} bytes")
            parts.append(part)
            wanted -= len(part)
            at += len(part)
        return np.frombuffer(b"".join(parts) if len(parts) != 1 else parts[0], dtype=self.dtype)

    def close(self) -> None:
        self.file.close()


def _header(dtype: str, length: int) -> bytes:
    import numpy as np

    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": dtype, "fortran_order": False, "shape": (length,)})
    return out.getvalue()


class NpyWriter:
    """Writes a flat ``.npy`` array of ids to ``out`` (a seekable binary file), a block at a time."""

    def __init__(self, out: IO[bytes], dtype: str, eot: int | None) -> None:
        self.out, self.dtype, self.eot = out, dtype, eot
        self.length = 0
        self.start = out.tell()
        self.header_bytes = len(_header(dtype, 0))
        out.write(_header(dtype, 0))

    def write(self, flat: Any) -> None:
        """A block's ids: a flat form (``ids``, ``offsets``) of ``encode_batch_to_numpy``."""
        import numpy as np

        ids, offsets = flat
        if self.eot is not None:
            ids = np.insert(ids, offsets[1:], self.eot)  # after each line's ids, an empty line's too
        if self.dtype == "<u2" and len(ids) and int(ids.max()) >= 1 << 16:
            raise TokenizerError(f"id {int(ids.max())} does not fit the uint16 array this vocabulary's size chose")
        data = np.ascontiguousarray(ids, dtype=self.dtype)
        self.out.write(memoryview(data).cast("B"))
        self.length += len(data)

    def finish(self) -> int:
        """Writes the header again with the array's length; returns that length."""
        header = _header(self.dtype, self.length)
        if len(header) != self.header_bytes:  # numpy keeps room for 21 digits: never expected
            raise TokenizerError(f"the .npy header for {self.length:,} ids is longer than the one written first")
        end = self.out.tell()
        self.out.seek(self.start)
        self.out.write(header)
        self.out.seek(end)
        return self.length
