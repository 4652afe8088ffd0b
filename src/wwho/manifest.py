"""The manifest of a saved tokenizer directory, and the checks made when the directory is read back.

A save (:mod:`wwho.savedir`) writes ``wwho-manifest.json`` beside its files: the size and sha256 of
each. A loader reads the manifest back (:func:`read_manifest`, validated, bounded in bytes) and
compares what it read with it (:func:`check_saved`, :func:`check_saved_size` before a large read),
so that files of different saves are an error that names them. :func:`member` keeps a file name
read from a tokenizer file inside its directory. This module writes nothing and knows no
tokenizer format.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from wwho.errors import ChangedFileWarning, VocabError
from wwho.fileio import MANIFEST, open_regular, parse_json, read_bytes
from wwho.notices import warn

MANIFEST_FORMAT = "wwho-manifest/1"
#: The most bytes a manifest (or a save's marker) is read to.
MAX_MANIFEST_BYTES = 64 * 2**20
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
#: The Hugging Face files saved beside a wwho vocabulary, which ``save_pretrained`` rewrites in place.
HF_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: str | Path) -> str:
    """The sha256 of a regular file (anything else is a :class:`VocabError`: a FIFO would block)."""
    h = hashlib.sha256()
    with open_regular(path, error=VocabError) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def matches(path: Path, record: dict[str, Any]) -> bool:
    try:
        return path.stat().st_size == record["bytes"] and file_sha256(path) == record["sha256"]
    except (OSError, VocabError):
        return False


def check_saved_size(path: Path) -> None:
    """Before ``path`` is read: the :func:`check_saved` error if its manifest lists it with another
    size (a file of a gigabyte is not read and parsed to find that it is not the one saved)."""
    record = listed(path.parent).get(path.name)
    try:
        size = os.stat(path).st_size
    except OSError:
        return  # the reader names what is wrong
    if record is not None and size != record["bytes"]:
        raise VocabError(f"{path.parent}: {path.name} does not match {MANIFEST} (size or sha256): it is "
                         f"{size:,} bytes, the save wrote {record['bytes']:,}: files of different saves were "
                         "mixed, or changed after saving; save the tokenizer again")


def removed_by_save(directory: Path, names: Iterable[str]) -> list[str]:
    """The files of the save in ``directory`` that a save of ``names`` there removes: listed in its
    manifest, not among ``names``, and as that save wrote them (a file changed since is kept)."""
    names = set(names)
    return [name for name, record in listed(directory).items()
            if name not in names and (directory / name).exists() and matches(directory / name, record)]


def listed(directory: Path) -> dict[str, dict[str, Any]]:
    """The files a directory's manifest lists ({} without a readable manifest)."""
    try:
        data = read_manifest(directory / MANIFEST)
    except VocabError:
        return {}
    return data["files"] if data else {}


def read_manifest(path: Path) -> dict[str, Any] | None:
    """The validated manifest at ``path``; None if there is none."""
    if not os.path.lexists(path):
        return None
    raw = read_bytes(path, error=VocabError, limit=MAX_MANIFEST_BYTES)  # a regular file, bounded
    data = parse_json(raw, source=str(path), error=VocabError)
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise VocabError(f"{path}: not a wwho manifest (format is not {MANIFEST_FORMAT!r})")
    if not isinstance(data.get("kind", ""), str):
        raise VocabError(f"{path}: 'kind' must be a string")
    files = data.get("files")
    if not isinstance(files, dict):
        raise VocabError(f"{path}: 'files' must be an object of file name -> {{bytes, sha256}}")
    for name, record in files.items():
        if not plain_name(name):
            raise VocabError(f"{path}: 'files' entry {name[:80]!r} is not a plain file name")
        if not (isinstance(record, dict) and type(record.get("bytes")) is int and record["bytes"] >= 0
                and isinstance(record.get("sha256"), str) and _SHA256.match(record["sha256"])):
            raise VocabError(f"{path}: 'files' entry {name!r} must be {{\"bytes\": size, \"sha256\": hex digest}}")
    return data


def check_saved(directory: str | os.PathLike, read: Mapping[str, bytes], *, only_listed: bool = False,
                unread: Collection[str] = ()) -> None:
    """Check files just read from ``directory`` (name -> content), and the other files its
    manifest lists, against the manifest; no manifest, no check. A file that does not match,
    or that a loader read but the manifest does not list (and that is no byte-identical copy of a
    listed one), raises :class:`VocabError` naming it. A listed file that is absent is not an error
    (you may delete ``tokenizer.json``).

    ``unread``: listed files this loader never reads (the Hugging Face files beside an SGPE
    ``vocab.json``, which ``save_pretrained`` rewrites in place): a change there is a
    :class:`wwho.errors.ChangedFileWarning`, not an error.

    ``only_listed=True`` (files wwho also reads from elsewhere, e.g. a ``tokenizer.json``):
    a file the manifest does not list is not checked, nor are the others; and a change is a
    warning, not an error: such a file is a format of its own that its loader checks whole, and
    Hugging Face's ``save_pretrained`` rewrites it in place (a ``Trainer`` saving into the folder).
    """
    directory = Path(directory)
    path = directory / MANIFEST
    manifest = read_manifest(path)
    if manifest is None:
        return
    files = manifest["files"]
    if only_listed and not any(name in files for name in read):
        return
    listed = {record["sha256"] for record in files.values()}
    foreign = sorted(name for name, data in read.items() if name not in files and sha256(data) not in listed)
    if foreign:
        raise VocabError(f"{directory}: {', '.join(foreign)} not listed in {MANIFEST}: it is not part of the save "
                         f"that wrote {', '.join(sorted(files)) or 'nothing'}; save the tokenizer again")
    wrong, changed = [], []
    for name, record in sorted(files.items()):
        data = read.get(name)
        if data is not None:
            if len(data) != record["bytes"] or sha256(data) != record["sha256"]:
                wrong.append(name)
        elif (directory / name).is_file() and not matches(directory / name, record):
            if not os.access(directory / name, os.R_OK):  # not another save's file: one we may not read
                raise VocabError(f"{directory / name}: cannot read: Permission denied")
            (changed if name in unread else wrong).append(name)
    if only_listed:
        changed, wrong = wrong + changed, []
    if wrong:
        raise VocabError(
            f"{directory}: {', '.join(wrong)} {'does' if len(wrong) == 1 else 'do'} not match {MANIFEST} "
            f"(size or sha256): files of different saves were mixed, or changed after saving; "
            f"save the tokenizer again")
    if changed:
        from wwho.wholeload import Overtaken, overtaken

        if overtaken(directory):  # a save replaced the directory while this load read it: read it again
            raise Overtaken(directory)
        warn(
            f"{directory}: {', '.join(sorted(changed))} changed since wwho saved this tokenizer (Hugging Face's "
            f"save_pretrained rewrites {'it' if len(changed) == 1 else 'them'}, and so does a save into this "
            f"directory killed while it replaced its files: if you did not, save the tokenizer again); "
            + ("wwho loads the files as they are now, checked whole" if only_listed else
               f"wwho loads {', '.join(sorted(read))}, which {'is' if len(read) == 1 else 'are'} as saved"),
            ChangedFileWarning)


def member(directory: str | os.PathLike, name: Any, *, source: str, key: str) -> Path:
    """``directory / name`` for a file name read from a tokenizer file (``key`` in ``source``).

    The name must be a plain file name (no directory part, not absolute, not ``..``), and the
    file, symlinks followed, must stay inside ``directory``; otherwise :class:`VocabError`,
    which does not show the content of the file named.
    """
    if not isinstance(name, str) or not plain_name(name):
        raise VocabError(f"{source}: {key} must be a file name in the same directory, not {str(name)[:80]!r}")
    directory = Path(directory)
    path = directory / name
    real_dir = os.path.realpath(directory)
    if os.path.lexists(path) and os.path.dirname(os.path.realpath(path)) != real_dir:
        raise VocabError(f"{source}: {key} {name!r} is a link to a file outside {directory}; tokenizer files "
                         "must be inside the tokenizer's directory")
    if os.path.isdir(path):  # a folder would be loaded whole, its links unchecked
        raise VocabError(f"{source}: {key} {name!r} is a directory; it must name a file")
    return path


def plain_name(name: Any) -> bool:
    return (isinstance(name, str) and 0 < len(name) <= 255 and name not in (".", "..")
            and not any(c in name for c in "/\\\0") and name.strip() == name and _fs_name(name))


def _fs_name(name: str) -> bool:
    """Whether ``name`` can be a file name here (a lone surrogate other than an escaped byte cannot)."""
    try:
        os.fsencode(name)
    except UnicodeEncodeError:
        return False
    return True
