"""Syllable-building merges in pure Python (a test reference for ``wwho.sgpe.building``, now in the core).

SGPE merges syllables, but a plain BPE (HF ``tokenizers``, or SGPE's own fallback for a
syllable it does not know) starts from code points. ``building_merges(tokens)`` returns a
merge list that, applied by rank to the code points of any one of ``tokens`` alone, gives
back exactly that token, plus the intermediate pieces those merges create (they must be
in the vocabulary too).

How: tokens are taken shortest first, those with a leading space after all the others (so
that on `` X`` the merges rebuild ``X`` before any joins the space: no cut inside a known ``X``
when `` X`` is not a token); each is run through the merges found so far; if
it does not come out whole, a merge joining its first two pieces is appended and the run
repeated. A merge appended later has a higher rank than every earlier one, so it can only
fire once no earlier merge applies: the tokens already built are unaffected (their runs
end as a single piece before any later merge could apply). The result is verified.

This module does not decide which tokens are syllables nor assign ids.
"""

from __future__ import annotations

from collections.abc import Iterable

from reference.merge_units import merge_units


def building_merges(tokens: Iterable[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """Merges that rebuild each token from its code points, and every piece they need.

    Returns ``(merges, pieces)``: ``pieces`` holds every single character of the tokens and
    every merge result, sorted by (length, string).
    """
    merges: list[tuple[str, str]] = []
    ranks: dict[tuple[str, str], int] = {}
    pieces: set[str] = set()
    todo = sorted(set(tokens), key=lambda t: (t[:1] == " ", len(t), t))
    for token in todo:
        pieces.update(token)
        parts = merge_units(list(token), ranks)
        while len(parts) > 1:
            pair = (parts[0], parts[1])
            ranks[pair] = len(merges)
            merges.append(pair)
            pieces.add(pair[0] + pair[1])
            parts = merge_units(list(token), ranks)
    for token in todo:  # the argument above, checked
        if merge_units(list(token), ranks) != [token]:
            raise AssertionError(f"building merges do not rebuild {token!r}")
    return merges, sorted(pieces, key=lambda t: (len(t), t))
