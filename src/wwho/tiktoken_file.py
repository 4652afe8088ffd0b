"""The one way wwho finds a tiktoken ranks file offline: ``tiktoken_file=``, ``--tiktoken-file``,
``WWHO_TIKTOKEN_FILE``.

Every entry point that needs OpenAI's ranks (``ByteBPE.from_tiktoken("o200k_base")``, the meta
vocabulary, ``wwho eval tiktoken:NAME``, ``wwho encode/decode/inspect``, ``make demo``) asks
:func:`ranks_file_for`, which looks, in this order, at:

1. the argument: ``tiktoken_file=PATH`` in Python, ``--tiktoken-file PATH`` on the command line;
2. ``WWHO_TIKTOKEN_FILE_<NAME>`` (e.g. ``WWHO_TIKTOKEN_FILE_CL100K_BASE``), for one encoding;
3. ``WWHO_TIKTOKEN_FILE``, for the encoding asked (usually ``o200k_base``); a file there that is
   another known encoding's official one is passed over (the caller checks the content).

Without any of them, every entry point looks in tiktoken's cache (``TIKTOKEN_CACHE_DIR``) and never
downloads (the meta vocabulary and ``tiktoken:NAME`` in ``wwho eval`` read the file as ``ByteBPE``
does, not through tiktoken). A file is always checked against the sha256 tiktoken expects for that
name. :func:`missing` builds the error that ends with what to pass.

The old spellings (``ranks_path=`` of ``ByteBPE.from_tiktoken``, ``ranks_file=`` of
``get_encoding``) still work and warn (:func:`renamed`).

This module only names files; it does not read or parse them.
"""

from __future__ import annotations

import os
from pathlib import Path

from wwho.notices import warn

ENV = "WWHO_TIKTOKEN_FILE"
FLAG = "--tiktoken-file"
KEYWORD = "tiktoken_file"
FIX = f"pass {KEYWORD}=PATH (command line: {FLAG} PATH) or set {ENV}=PATH"


def env_name(name: str) -> str:
    """The per-encoding variable, ``WWHO_TIKTOKEN_FILE_O200K_BASE`` for ``o200k_base``."""
    return f"{ENV}_{name.upper()}"


#: The value the command line's :data:`FLAG` put in :data:`ENV` (see :func:`use_flag`), so that a
#: message about the file names the flag the user typed, not a variable they never set.
_from_flag: str | None = None
#: Whether a ranks file was looked up through the flag's value (:func:`flag_unused`).
_flag_read = False


def use_flag(path: str) -> None:
    """``--tiktoken-file PATH``: the same as ``WWHO_TIKTOKEN_FILE=PATH`` for this command (so worker
    processes see it too), winning over ``WWHO_TIKTOKEN_FILE_<NAME>`` as ``tiktoken_file=`` does."""
    global _from_flag
    for var in [v for v in os.environ if v.startswith(ENV + "_")]:
        del os.environ[var]
    os.environ[ENV] = _from_flag = path


def ranks_file_for(name: str, tiktoken_file: str | os.PathLike | None = None) -> tuple[Path, str] | None:
    """``(path, where it came from)`` for encoding ``name``, or None when nothing names a file."""
    if tiktoken_file is not None and not (isinstance(tiktoken_file, str) and not tiktoken_file):
        from wwho.errors import VocabError
        from wwho.fileio import tokenizer_path

        return Path(tokenizer_path(tiktoken_file, "tiktoken_file=", error=VocabError)), KEYWORD
    global _flag_read
    for var in (env_name(name), ENV):
        value = os.environ.get(var)
        if value:
            from_flag = var == ENV and value == _from_flag
            _flag_read = _flag_read or from_flag
            return Path(value), FLAG if from_flag else var
    return None


def flag_unused() -> str | None:
    """The path ``--tiktoken-file`` gave, when no encoding was looked up through it (in this
    process): the command then ran as if it were not given, which the CLI says."""
    return _from_flag if _from_flag is not None and not _flag_read else None


def missing(name: str, looked: str | None = None) -> str:
    """The message for an encoding whose ranks file is not available, ending with the fix."""
    where = f"looked for {looked}; " if looked else ""
    return (f"the {name} ranks file is not available offline ({where}nothing given). To fix: {FIX} "
            f"(the file is {name}.tiktoken, tiktoken's download)")


def serves_another(name: str, other: str, cached: object) -> str:
    """The message for ``name`` when ``WWHO_TIKTOKEN_FILE`` holds ``other``'s official file (which
    serves ``other`` only) and tiktoken's cache (``cached``) has none, ending with the fix."""
    return (f"the {name} ranks file is not available offline: {ENV} names {other}'s, which serves {other} "
            f"only, and tiktoken's cache has none ({cached}). To fix: set {env_name(name)}=PATH or pass "
            f"{KEYWORD}=PATH (command line: {FLAG} PATH) (the file is {name}.tiktoken, tiktoken's download)")


def renamed(old: str, value: object, new: object) -> object:
    """Accept a deprecated keyword ``old`` as an alias of ``tiktoken_file`` (with a DeprecationWarning)."""
    if value is None:
        return new
    if new is not None:
        raise TypeError(f"give {KEYWORD}= only ({old}= is its old name)")
    warn(f"{old}= is deprecated; use {KEYWORD}= (same meaning)", DeprecationWarning)
    return value
