"""Syllable-building merges: how a code-point BPE rebuilds every syllable of the vocabulary.

SGPE merges syllables, but a plain BPE (HF ``tokenizers``, or SGPE's own fallback for a
syllable it does not know) starts from code points. ``building_merges(tokens)`` returns a
merge list that, applied by rank to the code points of any one of ``tokens`` alone, gives
back exactly that token, plus the intermediate pieces those merges create (they must be
in the vocabulary too).

How: tokens are taken shortest first, those with a leading space after all the others; each
is run through the merges found so far; if it does not come out whole, a merge joining its
first two pieces is appended and the run repeated. A merge appended later has a higher rank
than every earlier one, so it can only fire once no earlier merge applies: the tokens already
built are unaffected (their runs end as a single piece before any later merge could apply).
The result is verified.

The leading space goes last for integrity: the first group's merges never touch a space, and
the second group's only join the piece that starts with the space to the next one. On `` X``
they rebuild ``X`` first, exactly as alone, then join the space to it. So a syllable `` X``
that is not a token, where ``X`` is, becomes the space and ``X``, never a piece of each (with the space's
merges allowed first, `` ශ්‍රී`` gave ``' ශ්‍'``, ``'රී'``).

A syllable the vocabulary holds only with its leading space would still be cut where it
stands inside a word (no space before it): ``bare_forms`` names the bare form of each such
syllable symbol, which training builds too (``bare_syllables``, the default), so that the
vocabulary knows every syllable it has in both forms. Built first, the bare form also makes
the spaced one the space and that token.

The work runs in the compiled core (``rust/src/training.rs``); the pure-Python version is the
tests' reference (``tests/reference/building.py``). This module does not decide which tokens
are syllables nor assign ids.
"""

from __future__ import annotations

from collections.abc import Iterable

from wwho import _core


def bare_forms(symbols: Iterable[str], boundary: Iterable[str] = ()) -> list[str]:
    """The bare form of every unit among ``symbols`` with a leading space whose bare form is not
    among them, sorted: of every syllable, and of every boundary symbol (``boundary``: the symbols
    that are no syllable) that is one grapheme cluster of several characters after its space, such
    as a quote and a ZWNJ, which the splitter keeps whole. (Not a word of another script that the
    ``words`` scope makes one symbol: its characters spell it, and a bare form each would cost ids.)"""
    import regex  # (here: `import wwho` stays light)

    have, skip = set(symbols), set(boundary)
    return sorted({s[1:] for s in have if s[:1] == " " and len(s) > 1
                   and (s not in skip or (len(s) > 2 and regex.fullmatch(r"\X", s[1:])))} - have)


def building_merges(tokens: Iterable[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """Merges that rebuild each token from its code points, and every piece they need.

    Returns ``(merges, pieces)``: ``pieces`` holds every single character of the tokens and
    every merge result, sorted by (length, string).
    """
    return _core.building_merges(list(tokens))
