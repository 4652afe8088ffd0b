"""Executable reference: the pure-Python GGUF vocabulary reading that wwho ran before the core.

:func:`vocab` is ``load_gguf``'s former loop over ``tokenizer.ggml.{tokens, token_type, merges}``
and :func:`check_merges` the former ``validate._check_merges``; the tests compare them with
``wwho._core.gguf_vocab`` and ``wwho._core.check_merges`` on every GGUF vocabulary in shared/data
and on random ones (hypothesis). Results and findings come back as data, not as worded errors,
so the comparison is exact. Not used at run time.
"""

from __future__ import annotations

from wwho.bytelevel.pretokenize import unicode_to_bytes

UNKNOWN, CONTROL, USER_DEFINED, UNUSED = 2, 3, 4, 5


class Found(Exception):
    """What the reference refused: ``args`` as the core's ``CoreGGUFError`` has them."""


def vocab(tokens: list[str], types: list[int], merges_raw: list[str]):
    """(ranks, special, added, extra, merges, problem) as ``_core.gguf_vocab`` returns them."""
    ranks: dict[bytes, int] = {}
    special: dict[str, int] = {}
    added: dict[str, int] = {}
    extra: dict[int, bytes] = {}
    for i, (text, kind) in enumerate(zip(tokens, types)):
        if kind in (CONTROL, UNKNOWN) and text:
            table: dict = special
        elif kind == USER_DEFINED and text:
            table = added
        else:
            data = unicode_to_bytes(text) if kind != UNUSED else None
            if data and data not in ranks:
                ranks[data] = i
            else:  # decodes as its own text, never produced by encoding
                extra[i] = text.encode("utf-8")
            continue
        if text in special or text in added:
            raise Found("twice", text, special.get(text, added.get(text)), i)
        table[text] = i
    merges, seen = [], set()
    known = {text: data for data, text in zip(ranks, (tokens[i] for i in ranks.values()))}
    texts = set(tokens)
    for rank, line in enumerate(merges_raw):
        cut = line.find(" ", 1)
        if cut < 0:
            raise Found("no_space", rank, line)
        left, right = line[:cut], line[cut + 1 :]
        for part in (left, right, left + right):
            if part not in texts:
                raise Found("not_token", rank, line, part)
        if left in known and right in known and (known[left], known[right]) not in seen:  # first place only
            seen.add((known[left], known[right]))
            merges.append((known[left], known[right]))
    return ranks, special, added, extra, merges, check_merges(ranks, merges)


def check_merges(ranks: dict[bytes, int], merges: list[tuple[bytes, bytes]]):
    """None, ``("part", k, part)`` or ``("lost", count, first, id)``, as ``_core.check_merges``."""
    results = {a + b for a, b in merges}
    parts = {a for a, _ in merges} | {b for _, b in merges} | results
    if not parts <= ranks.keys():
        for k, (a, b) in enumerate(merges):
            for part in (a, b, a + b):
                if part not in ranks:
                    return ("part", k, part)
    lost = [t for t in ranks if len(t) > 1 and t not in results]
    if lost:
        first = min(lost, key=ranks.__getitem__)
        return ("lost", len(lost), first, ranks[first])
    return None
