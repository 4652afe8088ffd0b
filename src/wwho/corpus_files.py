"""Which files a corpus is: paths, directories and glob patterns expanded into a sorted list of
regular files (:func:`resolve_paths`).

Directories give every regular file inside, recursively, sorted; hidden files and folders are left
out, and so are the files of a tokenizer wwho saved and of a training checkpoint folder (with a
warning, unless the corpus is being read again: :func:`read_again`). A file named more than once
(twice in the list, by name and inside a directory given too, through a symbolic or hard link, or
by a glob through a link to a parent folder) is kept once, where it is first named
(:func:`file_identity`): the same bytes counted twice would weigh them double without a word (to
weigh a corpus more, see :mod:`wwho.balance`). Symbolic links to folders are not followed, by
directories or by ``**`` (through a link to a parent folder, ``glob`` lists each file again at
every level, and two such links never finish). A folder inside a directory that cannot be listed
is an error naming it, not a part of the corpus left out.

This module does not open or read the files (:mod:`wwho.corpus` does).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path

from wwho.errors import CorpusError, WwhoWarning
from wwho.fileio import file_type
from wwho.notices import warn


def resolve_paths(paths: str | os.PathLike | Iterable[str | os.PathLike], *, texts_hint: str = "") -> list[Path]:
    """Expand directories and globs into a sorted list of files; missing inputs are an error.

    ``texts_hint``: the API that takes strings instead (``"SGPETokenizer.train_from_iterator"``),
    named in the error when an item is not a path but looks like text (a long string, a newline)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    elif isinstance(paths, (bytes, bytearray, memoryview)):  # iterating would give ints
        raise CorpusError(f"a corpus is file paths (str or os.PathLike), not a {type(paths).__name__} "
                          f"object: os.fsdecode() turns a path in bytes into one")
    elif not isinstance(paths, Iterable):
        raise CorpusError(f"a corpus is file paths: a path, or a list of paths, not {type(paths).__name__}")
    files: list[Path] = []
    named: list[str] = []
    for item in paths:
        if not isinstance(item, (str, os.PathLike)):
            hint = f"; to train on texts in memory use {texts_hint}" if texts_hint else ""
            raise CorpusError(f"a corpus is file paths, not {type(item).__name__} objects{hint}")
        text = str(item)
        named.append(text)
        path = Path(text)
        if not text:  # Path("") is the current directory: every file under it would be read
            raise CorpusError("an empty corpus path (an unset variable?): give files, directories or globs")
        if text == "-" and not path.exists():  # (a file named "-" is read as any other)
            raise CorpusError("-: standard input is not read as a corpus (it is read more than once, or "
                              "counted in parallel): save it to a file first")
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError) as exc:
            # A NUL, a name too long for the file system: text, not a path.
            if not isinstance(exc, OSError) or exc.errno == errno.ENAMETOOLONG:
                hint = f"; to train on texts in memory use {texts_hint}" if texts_hint else ""
                raise CorpusError(f"{shown_path(text)}: not a file name{hint}") from None
            # A folder on the way that may not be searched, a loop of links: the reason, not "no such file".
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                raise CorpusError(f"{shown_path(text)}: cannot read: {exc.strerror or exc}") from None
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            files.extend(_walk(path, text))
        elif mode is not None and stat.S_ISREG(mode):
            files.append(path)
        elif mode is not None:  # a FIFO, a device, a socket: it exists, but is no file to read twice
            raise CorpusError(f"{shown_path(text)}: is {file_type(mode)}, not a corpus file: give "
                              "regular files, directories or globs (a stream: save it to a file first)")
        elif any(ch in text for ch in "*?["):
            matches = _glob(text)
            if not matches:
                raise CorpusError(f"{text}: the pattern matches no file")
            files.extend(matches)
        else:
            looks_like_text = len(text) > 255 or "\n" in text or " " in text.strip()
            hint = f" (to train on texts in memory use {texts_hint})" if texts_hint and looks_like_text else ""
            raise CorpusError(f"{shown_path(text)}: no such file or directory{hint}")
    if not named:
        raise CorpusError("no corpus files given: the list of files, directories or globs is empty")
    if not files:
        which = f"{shown_path(named[0])} holds" if len(named) == 1 else "the folders given hold"
        raise CorpusError(f"no corpus files given: {which} none that is read (hidden files and "
                          "folders, and a saved tokenizer's or checkpoint's files, are skipped)")
    return _once(files)


def _walk(root: Path, shown: str) -> list[Path]:
    """The regular files under ``root``, sorted. Hidden files and everything inside hidden folders
    (.git, .cache) are not the corpus; links to folders are not followed. A folder that cannot be
    listed is an error: ``Path.rglob`` would skip it, and its files, without a word."""
    def fail(exc: OSError) -> None:
        where = shown_path(exc.filename) if isinstance(exc.filename, str) else shown_path(shown)
        raise CorpusError(f"{where}: cannot list this folder of the corpus: {exc.strerror or exc}")

    files = []
    for folder, dirs, names in os.walk(root, onerror=fail):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        names = _not_saved_by_wwho(Path(folder), names)
        files.extend(p for name in names if not name.startswith(".") and (p := Path(folder, name)).is_file())
    return sorted(files)


#: True while a corpus is read again (the export check after training, :func:`read_again`).
_again: ContextVar[bool] = ContextVar("wwho_corpus_read_again", default=False)


@contextlib.contextmanager
def read_again() -> Iterator[None]:
    """While a corpus is read a second time (the export check after training), what the first
    reading said about wwho's own files in it is not said again: the checkpoints training wrote into
    its output folder since then, when that folder is inside the corpus, are passed over quietly."""
    token = _again.set(True)
    try:
        yield
    finally:
        _again.reset(token)


def _not_saved_by_wwho(folder: Path, names: list[str]) -> list[str]:
    """``names`` less the files of a tokenizer wwho saved in ``folder`` (its manifest and the files
    the manifest lists) and of a training checkpoint folder (its marker, checkpoint and temporary
    files), with a warning: ``wwho train -o corpus corpus`` run twice would otherwise read the first
    run's ``vocab.json`` and ``tokenizer.json`` as training text, and a run resumed with its
    checkpoints inside the corpus its own checkpoint (another corpus, so the resume was refused)."""
    from wwho.binary.io import is_saved_binary_tokenizer
    from wwho.manifest import MANIFEST, listed
    from wwho.sgpe.checkpoints import MARKER, is_checkpoint_file

    if MARKER in names:
        kept = [name for name in names if not is_checkpoint_file(name)]
        if len(kept) < len(names) - 1 and not _again.get():
            warn(f"{shown_path(str(folder))}: the files of a wwho training checkpoint there are not read as "
                 "corpus", WwhoWarning)
        names = kept
    # A binary training's -o (one tokenizer.json, no manifest), as binary training skips it; a save's
    # own files are its manifest's, below.
    saved = {MANIFEST, *listed(folder)} if MANIFEST in names else set()
    tokenizers = [name for name in names if name.lower().endswith(".json") and name not in saved
                  and is_saved_binary_tokenizer(folder / name)]
    if tokenizers:
        names = [name for name in names if name not in tokenizers]
        if not _again.get():
            warn(f"{shown_path(str(folder / tokenizers[0]))}: a binary tokenizer wwho saved"
                 f"{f' (and {len(tokenizers) - 1:,} more)' if len(tokenizers) > 1 else ''}, not read as corpus",
                 WwhoWarning)
    if MANIFEST not in names:
        return names
    kept = [name for name in names if name not in saved]
    if len(kept) < len(names) and not _again.get():
        warn(f"{shown_path(str(folder))}: the files of a tokenizer wwho saved there ({MANIFEST} and the "
             f"{len(names) - len(kept) - 1:,} it lists) are not read as corpus", WwhoWarning)
    return kept


def _glob(pattern: str) -> list[Path]:
    """The regular files matching ``pattern`` (``**``: any folders deep), sorted; hidden names match
    only a pattern part that starts with a dot, as for ``glob.glob``. ``Path.glob`` and not
    ``glob.glob``: the latter follows links to folders under ``**``, so through a link to a parent
    folder it lists (and the corpus would count) each file again at every level, and two such links
    never finish."""
    parts = Path(pattern).parts
    first = next(i for i, part in enumerate(parts) if any(ch in part for ch in "*?["))
    root = Path(*parts[:first]) if first else Path(".")
    rest = list(parts[first:])
    if rest[-1] == "**":  # glob.glob's "**" matches files too; Path.glob's only folders
        rest.append("*")
    dotted = any(part.startswith(".") for part in rest)
    try:
        found = [p for p in root.glob("/".join(rest)) if p.is_file()
                 and (dotted or not any(part.startswith(".") for part in p.relative_to(root).parts))]
    except (OSError, ValueError):  # a root that is no folder; a pattern pathlib cannot take
        return []
    return sorted(found)


def file_identity(path: str | os.PathLike) -> object:
    """What tells one file from another: its device and inode (a hard or symbolic link is the file
    it names), or, for one gone meanwhile (the reader names it), its real path."""
    try:
        st = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    return st.st_dev, st.st_ino


def _once(files: list[Path]) -> list[Path]:
    """``files`` with each file kept where it is first named (:func:`file_identity`)."""
    seen: set[object] = set()
    unique = []
    for path in files:
        key = file_identity(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def shown_path(text: str) -> str:
    """A path for a one-line message: as is, or quoted and cut when it holds a line end or is long."""
    return text if len(text) <= 255 and "\n" not in text and "\r" not in text else repr(text[:60]) + "..."
