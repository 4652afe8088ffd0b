"""Small things said to the user: plurals, and the warning for a vocabulary smaller than asked.

A trainer stops merging when no pair is frequent enough; the vocabulary is then smaller than
``vocab_size``. That is legal, never silent: :func:`warn_short_vocabulary` warns
(:class:`wwho.errors.VocabSizeWarning`, printed as ``wwho: warning: ...`` by the CLI) with both
sizes and what to change. This module does not train.

Every warning of the package goes through :func:`warn`, which names the caller's line (the first
frame outside wwho), as a library's warning should: that is where a user can act on it, and where
Python's default filters look (a ``DeprecationWarning`` is shown when ``__main__`` triggers it).
"""

from __future__ import annotations

import os
import sys
import warnings

from wwho.errors import VocabSizeWarning, WwhoWarning

#: The package's folder: frames whose code lives under it are wwho's own.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_level() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in the function calling this one name the
    first frame outside the package (the outermost frame where all are wwho's, as under ``wwho``)."""
    frame = sys._getframe(1)  # the frame that will call warnings.warn: stacklevel 1
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


def warn(message: str, category: type[Warning] = WwhoWarning) -> None:
    """``warnings.warn(message, category)`` at the caller's line (see the module's docstring)."""
    warnings.warn(message, category, stacklevel=caller_level())


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 file"``, ``"2 files"``: ``n`` and ``word``, or ``many`` (``word + "s"``) unless ``n == 1``."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def warn_short_vocabulary(got: int, asked: int, *, min_freq: int, option: str = "--min-freq",
                          reason: str | None = None) -> str | None:
    """Warn when training gave ``got`` < ``asked`` tokens; return the message (None: no warning).
    ``reason``: why, where the trainer knows better than the merges running out of pairs."""
    if got >= asked:
        return None
    if reason is not None:
        message = f"the vocabulary has {got:,} tokens, not the {asked:,} asked: {reason}"
    elif min_freq <= 1:  # nothing left to merge: lowering the threshold cannot help
        message = (f"the vocabulary has {got:,} tokens, not the {asked:,} asked: the training text has no "
                   f"pair of tokens left to merge. To reach {asked:,}, train on more text")
    else:
        message = (f"the vocabulary has {got:,} tokens, not the {asked:,} asked: no pair of tokens occurs "
                   f"{min_freq:,} times or more after that. To reach {asked:,}, "
                   f"train on more text or lower {option} (now {min_freq:,})")
    warn(message, VocabSizeWarning)
    return message
