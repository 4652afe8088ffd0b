"""What ``-o``/``--out``/``--output``/``--plot`` may replace: nothing that exists, unless ``--force``.

Every verb that writes checks its output before doing any work, so a typo in a path never
costs an existing model (or a long training run that then cannot be saved). A file output
is refused if the path exists. A directory output is refused only if it already holds one
of the files the verb writes: an empty directory, or one with other files, is fine (the
new files are added beside them). With ``--force`` the files are replaced (each one
atomically, see :mod:`wwho.fileio`); nothing else in the directory is touched. An output that
could not be written (below a file, or in a folder without write permission) is refused first
too, whatever ``--force`` says.

This module only checks paths; the verbs write their own files.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from pathlib import Path

from wwho.errors import WwhoError

FORCE_HELP = "replace existing output files (without --force an existing output is an error)"

#: The files each kind of directory output holds (what ``--force`` would replace).
SGPE_FILES = ("vocab.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
META_FILES = ("vocab.json", "meta_config.json", "tokenizer_meta.json")
BYTELEVEL_FILES = ("ranks.tiktoken", "merges.txt", "bytelevel.json", "tokenizer.json")


def add_force(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument("--force", action="store_true", help=FORCE_HELP)


def check_output_file(path: str | os.PathLike, *, force: bool, flag: str = "-o/--output") -> Path:
    """Refuse an output file that exists (unless ``force``), is a directory, lies below a file, or
    whose nearest existing folder cannot be written: each would be found only after the work."""
    p = Path(path)
    _check_folder(p, p.absolute().parents, flag)
    if p.is_dir():
        raise WwhoError(f"{p}: {flag} is a directory; give a file name such as {p / 'out'}")
    if (p.exists() or p.is_symlink()) and not force:
        raise WwhoError(f"{p} exists; pass --force to replace it, or choose another {flag}")
    return p


def check_output_dir(path: str | os.PathLike, names: Iterable[str], *, force: bool, flag: str = "--out") -> Path:
    """Refuse an output directory that is a file, lies below a file, or cannot be written in (it,
    or the nearest folder above it that exists), or (unless ``force``) holds any of ``names``."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise WwhoError(f"{p}: {flag} must be a directory, but this is a file")
    _check_folder(p, (p.absolute(), *p.absolute().parents), flag)
    if not force and p.is_dir():
        found = [name for name in dict.fromkeys(names) if (p / name).exists() or (p / name).is_symlink()]
        if found:
            raise WwhoError(f"{p} already holds {', '.join(found)}; pass --force to replace "
                            f"{'it' if len(found) == 1 else 'them'}, or choose another {flag}")
    return p


def _check_folder(p: Path, folders: Iterable[Path], flag: str) -> None:
    """Refuse ``p`` if, of ``folders`` (nearest first), one that exists before the first folder is a
    file, or that first folder cannot be written in: found only when the finished output is written
    otherwise."""
    for folder in folders:
        if folder.exists() and not folder.is_dir():
            raise WwhoError(f"{p}: {flag} cannot be written: {folder} is a file, not a directory")
        if folder.is_dir():
            if not os.access(folder, os.W_OK | os.X_OK):
                raise WwhoError(f"{p}: {flag} cannot be written: no permission to write in {folder}")
            return
