"""Small file helpers shared by every reader and writer: atomic writes, JSON in and out.

Every file wwho writes goes to a temporary file in the same directory and is renamed
into place, so a killed run never leaves a torn file. Nothing here knows any format.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from wwho.errors import WwhoError


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success fsync and rename it to ``path``.

    On any exception the temporary file is removed and ``path`` is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    binary = "b" in mode
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as f:
            yield f
            f.flush()
            # mkstemp creates the file private (0600); give it the mode open() would have.
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return mask


def write_json(path: str | Path, data: Any, *, indent: int | None = 2) -> None:
    """Write ``data`` as UTF-8 JSON (non-ASCII kept readable), atomically."""
    with atomic_open(path, "w") as f:
        json.dump(data, f, ensure_ascii=False, indent=indent)
        f.write("\n")


def write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_open(path, "wb") as f:
        f.write(data)


def read_json(path: str | Path, *, error: type[WwhoError] = WwhoError, what: str = "file") -> Any:
    """Parse a UTF-8 JSON file; any problem raises ``error`` naming the file (and line, column)."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
