"""What kind of tokenizer a path holds: :func:`detect_kind` (one of :data:`wwho.loading.KINDS`),
:func:`check_kind` (a loader given another kind says what it is) and :data:`KIND_NAMES` for
messages.

Every kind, read from the path alone: a folder by the file that makes it a kind (a saved folder's
manifest must still find that file), a file by its suffix, else by its first bytes or JSON keys.
It sits below every loader, so that ``SGPETokenizer.load`` and ``ByteBPE.load`` can name a wrong
kind without an import cycle through :mod:`wwho.loading`, which does the loading.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from wwho.bytelevel.files import TIKTOKEN_ENCODINGS, known_encoding_name
from wwho.errors import VocabError
from wwho.fileio import parse_json, read_bytes
from wwho.savedir import LOAD_ORDER

#: The kind each file of :data:`~wwho.savedir.LOAD_ORDER` makes a directory (``tokenizer.json``: its own).
_KIND_OF = {"meta_config.json": "meta", "vocab.json": "sgpe", "bytelevel.json": "bytelevel", "tokenizer.json": None}


def detect_kind(path: str | os.PathLike) -> str:
    """The kind of tokenizer stored at ``path``, one of :data:`wwho.loading.KINDS` (see
    :mod:`wwho.loading`, which loads it)."""
    from wwho.fileio import tokenizer_path

    tokenizer_path(path, "detect_kind")
    try:
        return _detect_kind(path)
    except OSError as exc:  # a folder on the way without search permission, an I/O error
        raise VocabError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _detect_kind(path: str | os.PathLike) -> str:
    p = Path(path)
    try:
        os.stat(p)  # (Path.exists says False for a link loop or a folder it may not search, too)
    except FileNotFoundError:
        if known_encoding_name(path):
            return "bytelevel"
        raise VocabError(f"{p}: no such file or directory, nor a known encoding ({', '.join(TIKTOKEN_ENCODINGS)}, "
                         "also spelled tiktoken:NAME)") from None
    except OSError as exc:  # a link loop, a folder on the way that may not be searched, a name too long
        if known_encoding_name(path) and not os.path.lexists(p):
            return "bytelevel"
        raise VocabError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except ValueError:  # a NUL in the name
        raise VocabError(f"{p}: not a path (it holds a NUL character)") from None
    if p.is_dir():
        _check_kind_files(p)
        for name in LOAD_ORDER:
            kind = _KIND_OF[name]
            if os.path.lexists(p / name):  # what is not a regular file (a dangling link) is refused by its loader
                if kind == "sgpe" and _hub_folder(p):
                    return _detect_kind(p / "tokenizer.json")
                return kind or _detect_kind(p / name)
        if not os.access(p, os.R_OK | os.X_OK):  # (lexists says False for every name in such a folder)
            raise VocabError(f"{p}: cannot read: Permission denied")
        raise VocabError(f"{p}: no tokenizer here (expected vocab.json, meta_config.json, bytelevel.json "
                         "or tokenizer.json)")
    suffix = p.suffix.lower()
    head = b"" if suffix in (".gguf", ".tiktoken", ".json") else _head(p)  # a file named otherwise: by its content
    if suffix == ".gguf" or head.startswith(b"GGUF"):
        return "gguf"
    if suffix == ".tiktoken":
        return "bytelevel"
    if suffix == ".json" or head.lstrip().startswith(b"{"):
        data = _read_json(p, keep=True)  # (kept for its loader inside fileio.parsing_once)
        if isinstance(data, dict) and "model" in data:
            from wwho.binary.io import looks_binary

            return "binary" if looks_binary(data) else "hf"
        if isinstance(data, dict) and "vocab" in data and "merges" in data:
            return "sgpe"
        if isinstance(data, dict) and "offset" in data and "tiktoken_encoding" in data:
            return "meta"
    raise VocabError(f"{p}: cannot tell what kind of tokenizer this is")


#: The file that makes a saved directory a kind of its own; deleted, another kind's files would be loaded.
KIND_FILES = {"meta_config.json": "a meta tokenizer", "bytelevel.json": "a byte-level tokenizer",
              "vocab.json": "an SGPE vocabulary or a meta tokenizer"}


def _check_kind_files(directory: Path) -> None:
    """A saved directory whose manifest lists its kind's own file, now missing, is refused: the files
    left would load as another kind and give other ids (a meta directory without meta_config.json is an
    SGPE vocabulary)."""
    from wwho.manifest import MANIFEST, read_manifest

    manifest = read_manifest(directory / MANIFEST)
    if manifest is None:  # nothing says which kind was saved here
        _check_one_kind(directory)
        return
    listed = manifest["files"]
    for name, kind in KIND_FILES.items():
        if name in listed and not os.path.lexists(directory / name):
            raise VocabError(f"{directory}: {name} is missing: the directory was saved as {kind} "
                             f"({MANIFEST} lists it); put it back or save the tokenizer again")


def _check_one_kind(directory: Path) -> None:
    """A directory holding the files of two kinds (a byte-level save and an SGPE or meta one), or a
    meta tokenizer's ``tokenizer_meta.json`` without its ``meta_config.json``, is refused: which one
    it is would otherwise be told by the order of the checks, and the other's ids silently given.
    For a directory without a manifest (with one, the loader names the file it does not list)."""
    other = next((name for name in ("meta_config.json", "vocab.json") if os.path.lexists(directory / name)), None)
    if other and os.path.lexists(directory / "bytelevel.json"):
        raise VocabError(f"{directory}: it holds the files of two kinds of tokenizer (bytelevel.json and {other}): "
                         "save each in a folder of its own, or give the file to load")
    if os.path.lexists(directory / "tokenizer_meta.json") and not os.path.lexists(directory / "meta_config.json"):
        raise VocabError(f"{directory}: meta_config.json is missing beside tokenizer_meta.json: this was saved as "
                         "a meta tokenizer; put it back or save the tokenizer again")


def _hub_folder(directory: Path) -> bool:
    """Whether ``directory`` is a Hugging Face tokenizer folder (gpt2, roberta and Qwen2 ship
    ``tokenizer.json`` beside a ``vocab.json`` of token -> id and ``merges.txt``), not a wwho save:
    no manifest of wwho's, a ``tokenizer.json``, and a ``vocab.json`` of token -> id."""
    from wwho.manifest import MANIFEST

    if os.path.lexists(directory / MANIFEST) or not os.path.isfile(directory / "tokenizer.json"):
        return False
    data = _read_json(directory / "vocab.json")
    # (a hub's vocab.json maps tokens to ids, "vocab" among them in Qwen2's and Llama 3's; an SGPE
    # vocab.json holds objects and lists, and one emptied is broken: its loader says so, rather than
    # the tokenizer.json beside it loading)
    return (isinstance(data, dict) and bool(data)
            and all(type(i) is int for i in itertools.islice(data.values(), 1000)))


def _head(path: Path) -> bytes:
    """The first bytes of a regular file; what is not one (a FIFO, /dev/zero) is refused here, by name."""
    from wwho.fileio import open_regular

    with open_regular(path, error=VocabError, what="tokenizer file") as f:
        return f.read(64)


#: What each kind is, for messages.
KIND_NAMES = {
    "sgpe": "an SGPE vocabulary (vocab.json)",
    "meta": "a meta tokenizer (tiktoken + SGPE, meta_config.json)",
    "bytelevel": "a byte-level BPE tokenizer (bytelevel.json or .tiktoken)",
    "gguf": "a GGUF vocabulary",
    "binary": "a binary (bytes) tokenizer",
    "hf": "a Hugging Face tokenizer.json",
}


def check_kind(path: str | os.PathLike, expected: str, loader: str) -> None:
    """Raise :class:`VocabError` when ``path`` holds a tokenizer of another kind than ``expected``,
    saying what it is and which function loads any kind (``loader`` is the one that was called).
    Does nothing when ``path`` is that kind or no kind at all (the loader's own error says why)."""
    try:
        kind = detect_kind(path)
    except (VocabError, OSError):
        return
    if kind == expected:
        return
    p = Path(path)
    what = KIND_NAMES[kind]
    if (p if p.is_dir() else p.parent).joinpath("wwho_extend.json").is_file() and kind == "hf":
        what = "a `wwho extend` directory (a Hugging Face tokenizer.json)"
    raise VocabError(f"{p}: this is {what}, not {KIND_NAMES[expected]}, so {loader} cannot read it. "
                     "To fix: wwho.load_tokenizer(path) loads any kind (and wwho commands take it as is)")


def _read_json(path: Path, *, keep: bool = False) -> object:
    return parse_json(read_bytes(path, error=VocabError), source=str(path), error=VocabError, keep=keep)
