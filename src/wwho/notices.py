"""Small things said to the user: plurals, and the warning for a vocabulary smaller than asked.

A trainer stops merging when no pair is frequent enough; the vocabulary is then smaller than
``vocab_size``. That is legal, never silent: :func:`warn_short_vocabulary` warns
(:class:`wwho.errors.VocabSizeWarning`, printed as ``wwho: warning: ...`` by the CLI) with both
sizes and what to change. This module does not train.
"""

from __future__ import annotations

import warnings

from wwho.errors import VocabSizeWarning


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 file"``, ``"2 files"``: ``n`` and ``word``, or ``many`` (``word + "s"``) unless ``n == 1``."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def warn_short_vocabulary(got: int, asked: int, *, min_freq: int, option: str = "--min-freq",
                          stacklevel: int = 3) -> str | None:
    """Warn when training gave ``got`` < ``asked`` tokens; return the message (None: no warning)."""
    if got >= asked:
        return None
    message = (f"the vocabulary has {got:,} tokens, not the {asked:,} asked: no pair of tokens occurs "
               f"{min_freq:,} {'time' if min_freq == 1 else 'times'} or more after that. To reach {asked:,}, "
               f"train on more text or lower {option} (now {min_freq:,})")
    warnings.warn(message, VocabSizeWarning, stacklevel=stacklevel)
    return message
