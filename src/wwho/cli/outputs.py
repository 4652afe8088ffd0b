"""Output directories of the ``wwho`` verbs, checked before any work starts.

A training run that fails only when it saves, after an hour, because ``--out`` names a
regular file, is the kind of failure this module exists to move to the first second. It
does not write anything; saving is :mod:`wwho.savedir`.
"""

from __future__ import annotations

import os
from pathlib import Path

from wwho.errors import WwhoError


def output_directory(value: str | os.PathLike, *, option: str = "--out") -> Path:
    """``value`` as a directory to save a tokenizer in: absent (it will be created) or a directory."""
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise WwhoError(f"{option} {path}: exists and is not a directory; give a directory for the tokenizer's files")
    parent = next((p for p in (path.absolute(), *path.absolute().parents) if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise WwhoError(f"{option} {path}: {parent} is not a directory")
    return path
