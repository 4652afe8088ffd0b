"""Load tiktoken encodings through tiktoken itself, offline.

``get_encoding("p50k_base")`` returns ``tiktoken.get_encoding``'s own object, for the encodings
whose ranks wwho does not read natively (``wwho.bytelevel.files`` reads o200k_base and
cl100k_base). The ranks file is never downloaded; it is

* ``get_encoding(name, tiktoken_file=PATH)`` (the CLI's ``--tiktoken-file PATH``), or
* the environment variable ``WWHO_TIKTOKEN_FILE=PATH`` (or ``WWHO_TIKTOKEN_FILE_<NAME>``), or
* tiktoken's own cache, ``TIKTOKEN_CACHE_DIR``.

The first two are resolved by :mod:`wwho.tiktoken_file`, as for every other entry point; a file in
``WWHO_TIKTOKEN_FILE`` that is another encoding's official one serves that encoding only.
The file's sha256 is checked against the hash tiktoken expects for that encoding before
it is used; it is then handed to tiktoken through a private cache directory (the
mechanism tiktoken documents), so the pattern, special tokens and ranks are tiktoken's.
A name wwho does not know (a tiktoken plugin's) goes to tiktoken as it is.
This module does not tokenize.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
import threading
from pathlib import Path

from wwho.errors import VocabError
from wwho.tiktoken_file import FIX

#: name -> (URL tiktoken downloads, sha256 tiktoken expects): facts from tiktoken_ext/openai_public.py
KNOWN = {
    "o200k_base": ("https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "cl100k_base": ("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "p50k_base": ("https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken",
                  "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
    "r50k_base": ("https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
                  "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
}
_lock = threading.Lock()


def _fresh_lock() -> None:
    """A child made by ``fork`` gets its own lock: one held by another thread of the parent at the
    fork would be copied held, and nobody in the child would ever release it. So does tiktoken's
    registry, whose lock its first ``get_encoding`` holds while it builds the encoding (seconds): a
    fork meanwhile left the child's ``get_encoding`` waiting for ever."""
    global _lock
    _lock = threading.Lock()
    registry = sys.modules.get("tiktoken.registry")
    held = getattr(registry, "_lock", None)
    if held is not None and hasattr(held, "acquire"):
        registry._lock = type(held)()  # type: ignore[union-attr]


os.register_at_fork(after_in_child=_fresh_lock)


def _in_cache(name: str) -> bool:
    """Whether tiktoken's cache holds the official ranks file of ``name`` (one of :data:`KNOWN`);
    a :class:`VocabError` for a cached file of another sha256, which tiktoken would download again."""
    from wwho.bytelevel.files import tiktoken_cache_path

    url, expected = KNOWN[name]
    path = tiktoken_cache_path(url)
    if not path.is_file():
        return False
    stat = path.stat()
    actual = _sha256_cached(str(path.resolve()), stat.st_mtime, stat.st_size)
    if actual != expected:
        raise VocabError(f"{path} (tiktoken's cache of {name}): sha256 {actual} is not that of the official "
                         f"{name} ranks file ({expected}), and wwho does not download it again. To fix: remove "
                         f"it, or {FIX}")
    return True


def ranks_file_for(name: str, tiktoken_file: str | os.PathLike | None = None) -> Path | None:
    """The local ranks file to use for ``name``, from the argument or the environment."""
    from wwho.tiktoken_file import ranks_file_for as find

    found = find(name, tiktoken_file)
    return found[0] if found else None


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@functools.lru_cache(maxsize=32)  # a few ranks files per process; the key changes with each edit of one
def _sha256_cached(path: str, mtime: float, size: int) -> str:
    return file_sha256(Path(path))


def get_encoding(name: str = "o200k_base", *, tiktoken_file: str | os.PathLike | None = None,
                 ranks_file: str | os.PathLike | None = None):
    """``tiktoken.get_encoding(name)``, fed from a local ranks file when one is given
    (``ranks_file=`` is the deprecated name of ``tiktoken_file=``)."""
    import tiktoken
    import tiktoken.registry

    from wwho.bytelevel.files import tiktoken_cache_path
    from wwho.tiktoken_file import ENV, missing, ranks_file_for, renamed, serves_another

    tiktoken_file = renamed("ranks_file", ranks_file, tiktoken_file)
    if name in getattr(tiktoken.registry, "ENCODINGS", {}):
        return tiktoken.get_encoding(name)
    found = ranks_file_for(name, tiktoken_file)
    if found is not None and name not in KNOWN and found[1] == ENV:
        found = None  # the file for every encoding wwho knows; a plugin's encoding is tiktoken's to find
    local = None
    if found is not None:
        local, source = found
        if name not in KNOWN:
            raise VocabError(f"no known download hash for tiktoken encoding {name!r}; known: {', '.join(KNOWN)}")
        if not local.is_file():
            raise VocabError(f"{local} (from {source}): tiktoken ranks file not found. To fix: point {source} at "
                             f"the {name}.tiktoken file")
        url, expected = KNOWN[name]
        stat = local.stat()
        actual = _sha256_cached(str(local.resolve()), stat.st_mtime, stat.st_size)
        if actual != expected:
            other = next((known for known, (_, sha) in KNOWN.items() if sha == actual), None)
            if other is None or source != ENV:
                raise VocabError(f"{local} (from {source}): sha256 {actual} is not the {name} file tiktoken "
                                 f"expects ({expected}). To fix: point {source} at the official {name}.tiktoken")
            # WWHO_TIKTOKEN_FILE holds another encoding's file, which serves that one only
            if not _in_cache(name):
                raise VocabError(serves_another(name, other, tiktoken_cache_path(url)))
            local = None
    if local is not None:
        with _lock, tempfile.TemporaryDirectory(prefix="wwho-tiktoken-") as cache:
            os.symlink(local.resolve(), os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()))
            old = os.environ.get("TIKTOKEN_CACHE_DIR")
            os.environ["TIKTOKEN_CACHE_DIR"] = cache
            try:
                return tiktoken.get_encoding(name)
            finally:
                if old is None:
                    del os.environ["TIKTOKEN_CACHE_DIR"]
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = old
    if name in KNOWN and not _in_cache(name):
        # tiktoken would download it: wwho reads ranks files offline only, from a file it is given
        # or tiktoken's cache (a plugin's encoding, of a name wwho does not know, is tiktoken's affair)
        raise VocabError(missing(name, f"tiktoken's cache, {tiktoken_cache_path(KNOWN[name][0])}"))
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # a plugin's own errors, ValueError for unknown names
        raise VocabError(f"cannot load tiktoken encoding {name!r} ({type(exc).__name__}: {str(exc)[:200]}); "
                         + missing(name)) from None
