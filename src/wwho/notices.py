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
                          stacklevel: int = 3, reason: str | None = None) -> str | None:
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
    warnings.warn(message, VocabSizeWarning, stacklevel=stacklevel)
    return message
