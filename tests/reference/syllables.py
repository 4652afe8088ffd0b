"""The table engine of ``wwho.syllables`` in pure Python: walk the schema's automaton.

This was wwho's reference engine before the compiled core; the core must give the same tokens
on every input (maximal munch, last-accept rollback, the leading-space rule, the explicit
no-accept fallback: see docs/schemas.md).
"""

from __future__ import annotations

from wwho.schema import OTHER, Schema

WHITESPACE = frozenset(" \t\n\r")


def tokenize_table(schema: Schema, text: str, leading_space: bool = False) -> list[str]:
    tokens: list[str] = []
    n = len(text)
    pos = 0
    pending = ""
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
        tokens.append(pending + text[pos:end])
        pending = ""
        pos = end
    if pending:
        tokens.append(pending)
    return tokens


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
