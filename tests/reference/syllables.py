"""The table engine of ``wwho.syllables`` in pure Python: walk the schema's automaton.

This was wwho's reference engine before the compiled core; the core must give the same tokens
on every input (maximal munch, last-accept rollback, the leading-space rule, the explicit
no-accept fallback: see docs/schemas.md). A schema with ``keep_clusters`` extends a syllable that
would end inside an extended grapheme cluster to the cluster's end, found here with ``regex`` ``\\X``
(the core applies UAX #29's rules itself), and ends one at a break Unicode always makes (around a
control, CR or LF); in leading-space mode whitespace still ends it.
"""

from __future__ import annotations

import regex

from wwho.schema_types import OTHER, Schema

WHITESPACE = frozenset(" \t\n\r")


def tokenize_table(schema: Schema, text: str, leading_space: bool = False) -> list[str]:
    tokens: list[str] = []
    n = len(text)
    pos = 0
    pending = ""
    cluster_ends = _cluster_ends(text) if schema.keep_clusters else None
    while pos < n:
        if leading_space and text[pos] in WHITESPACE:
            end = pos
            while end < n and text[end] in WHITESPACE:
                end += 1
            run = text[pos:end]
            if run[-1] == " ":
                tokens.extend(run[:-1])
                pending = " "
            else:
                tokens.extend(run)
            pos = end
            continue
        end = longest_match(schema, text, pos, leading_space)
        if cluster_ends is not None:
            # never across a break Unicode always makes (GB4, GB5: around a control, CR or LF)
            end = next((at for at in range(pos + 1, end) if _hard_break(text[at - 1], text[at])), end)
            while end < n and end not in cluster_ends and not (leading_space and text[end] in WHITESPACE):
                end += 1
        tokens.append(pending + text[pos:end])
        pending = ""
        pos = end
    if pending:
        tokens.append(pending)
    return tokens


_CONTROL = regex.compile(r"[\p{Grapheme_Cluster_Break=Control}\p{Grapheme_Cluster_Break=CR}"
                         r"\p{Grapheme_Cluster_Break=LF}]")


def _hard_break(before: str, after: str) -> bool:
    return (before + after != "\r\n") and bool(_CONTROL.match(before) or _CONTROL.match(after))


def longest_match(schema: Schema, text: str, pos: int, leading_space: bool) -> int:
    """End of the longest accepted syllable at ``pos``; ``pos + 1`` if there is none."""
    trans = schema.transitions
    class_of = schema.class_of
    state = trans[schema.start].get(class_of.get(ord(text[pos]), OTHER))
    if state is None:
        return pos + 1
    last = pos + 1 if state in schema.accept_states else None
    p = pos + 1
    n = len(text)
    while state not in schema.emit_states and p < n:
        ch = text[p]
        if leading_space and ch in WHITESPACE:
            break
        nxt = trans[state].get(class_of.get(ord(ch), OTHER))
        if nxt is None:
            break
        state = nxt
        p += 1
        if state in schema.accept_states:
            last = p
    return last if last is not None else pos + 1


def _cluster_ends(text: str) -> set[int]:
    ends, pos = set(), 0
    for cluster in regex.findall(r"\X", text):
        pos += len(cluster)
        ends.add(pos)
    return ends
