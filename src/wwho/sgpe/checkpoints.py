"""Checkpoints of SGPE training: the directory they live in, and the file, written and read back.

A checkpoint directory holds ``checkpoint.json`` (the merges so far, as string pairs, and a
fingerprint of the corpus and options) and a marker file, ``.wwho-checkpoints``, that says wwho
uses the directory and whether it created it. :func:`claim` refuses, before training, a
directory wwho may not use: a symbolic link (writes would land elsewhere, and removal would
follow it) or a directory holding anything but wwho's own checkpoint files. :func:`remove`
deletes only those files, and then the directory if wwho created it and it is empty: never a
tree, never a file it did not write.

:func:`load` validates every field of ``checkpoint.json`` and names the file and the field; the
merges themselves are checked against the training's words when they are replayed
(:meth:`wwho.bpe.MergeEngine.replay`). This module does not train.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from wwho.errors import VocabError, brief
from wwho.fileio import parse_json, read_bytes, temp_owner, write_json

FORMAT = "wwho-sgpe-checkpoint/1"
FILE = "checkpoint.json"
MARKER = ".wwho-checkpoints"


def _ours(name: str) -> bool:
    return name in (FILE, MARKER) or (temp_owner(name) is not None and name.startswith(f".wwho-tmp-{FILE}."))


def claim(directory: str | os.PathLike) -> Path:
    """Check that wwho may keep checkpoints in ``directory`` (it need not exist yet); returns it.

    Nothing is created here: the directory and its marker come with the first checkpoint, so a
    run that fails before then leaves nothing behind.
    """
    path = Path(directory)
    if path.is_symlink():
        raise VocabError(f"checkpoint directory {path}: is a symbolic link; wwho writes checkpoints only into a "
                         "real directory (give its target as --checkpoint-dir)")
    if path.exists():
        if not path.is_dir():
            raise VocabError(f"checkpoint directory {path}: exists and is not a directory")
        names = os.listdir(path)
        # A checkpoint.json is wwho's only beside the marker wwho writes before it: without one,
        # it is a file of that name that someone else put there, which a checkpoint would overwrite
        # and the end of training delete.
        foreign = sorted(name for name in names if not _ours(name) or (name == FILE and MARKER not in names))
        if foreign:
            raise VocabError(f"checkpoint directory {path}: holds files wwho did not write (e.g. {brief(foreign[0])}); "
                             "checkpoints need a directory of their own (give another --checkpoint-dir)")
    return path


def _prepare(path: Path) -> None:
    """Create the directory (if needed) and the marker that says whether wwho created it."""
    if (path / MARKER).exists():
        return
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    (path / MARKER).write_text("created\n" if created else "adopted\n", encoding="utf-8")


def remove(directory: str | os.PathLike) -> None:
    """Delete wwho's checkpoint files in ``directory``, then the directory if wwho created it and
    nothing else is left."""
    path = Path(directory)
    marker = path / MARKER
    if path.is_symlink() or not path.is_dir() or not marker.exists():
        return  # not a directory wwho claimed: touch nothing
    created = marker.read_text(encoding="utf-8", errors="replace").strip() == "created"
    for name in os.listdir(path):
        if _ours(name):
            with contextlib.suppress(FileNotFoundError):
                (path / name).unlink()
    if created:
        with contextlib.suppress(OSError):  # not empty: someone put a file there; it stays
            path.rmdir()


def save(directory: Path, *, merges: list[tuple[str, str]], fingerprint: str, elapsed: float) -> None:
    try:
        _prepare(directory)
    except OSError as exc:
        raise VocabError(f"checkpoint directory {directory}: cannot create it: {exc.strerror or exc}") from None
    try:
        write_json(directory / FILE, {
            "format": FORMAT,
            "fingerprint": fingerprint,
            "step": len(merges),
            "elapsed_seconds": round(elapsed, 1),
            "merges": merges,  # pairs, written as JSON lists
        }, indent=None)
    except BaseException:
        if not (directory / FILE).exists():  # the first one failed (a full disk): no folder of a marker alone
            remove(directory)
        raise


def load(directory: Path, fingerprint: str) -> list[tuple[str, str]]:
    """The merges of ``directory``'s checkpoint, if it was made by this training (same fingerprint)."""
    path = directory / FILE
    data = parse_json(read_bytes(path, error=VocabError, what="checkpoint"), source=str(path), error=VocabError)

    def fail(message: str) -> VocabError:
        return VocabError(f"{path}: {message}; delete it (or the checkpoint directory) to start over")

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise fail(f"not a wwho SGPE checkpoint (format is not {FORMAT!r})")
    if not isinstance(data.get("fingerprint"), str):
        raise fail("'fingerprint' must be a string")
    if data["fingerprint"] != fingerprint:
        raise VocabError(f"{path}: the checkpoint was made with another corpus or other options; "
                         "resume with the same ones, or delete it to start over")
    merges = data.get("merges")
    if not isinstance(merges, list):
        raise fail("'merges' must be a list of [left, right] pairs")
    for i, m in enumerate(merges):
        if not (isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) and x for x in m)):
            raise fail(f"'merges'[{i}] is {brief(m)}, not a pair of non-empty strings")
    step = data.get("step", len(merges))
    if type(step) is not int or step != len(merges):
        raise fail(f"'step' is {brief(step)} but 'merges' has {len(merges)}")
    elapsed = data.get("elapsed_seconds", 0)
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)):
        raise fail(f"'elapsed_seconds' is {brief(elapsed)}, not a number")
    return [(a, b) for a, b in merges]
