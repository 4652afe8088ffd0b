"""The meta tokenizer's encoder in Python, a test oracle for the core's (``_core.MetaEncoder``):
the router's run pattern looped over in Python, Latin parts to tiktoken's ``encode_ordinary`` (long whitespace runs through tests/reference/safe_tiktoken.py), each
Indic run with its leading space to SGPE, shifted by tiktoken's ``n_vocab``; special tokens
split out by regexes. The tests compare ``MetaTokenizer`` with it. No cache: the ids are what
the cached encoder gave.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from reference.safe_tiktoken import LONG_RUN, SafeEncoder
from wwho.errors import DisallowedSpecialError
from wwho.router import run_pattern


class MetaPy:
    def __init__(self, sgpe: Any, encoding: Any) -> None:
        self.sgpe = sgpe
        self.encoding = encoding
        self.offset = encoding.n_vocab
        self.tiktoken_specials = {s: encoding.encode_single_token(s) for s in encoding.special_tokens_set}
        self.special_tokens = {**self.tiktoken_specials,
                               **{s: self.offset + sgpe.vocab[s] for s in sgpe.special_tokens}}
        self._runs = run_pattern(sgpe.splitter.scripts).finditer
        self._safe = SafeEncoder(encoding)

    def encode(self, text: str, *, allowed_special: Iterable[str] | str = frozenset(),
               disallowed_special: Iterable[str] | str | None = None) -> list[int]:
        """``disallowed_special=None``: the meta tokenizer's default, tiktoken's specials; ``"all"``:
        every special token, SGPE's too."""
        allowed = (frozenset(self.special_tokens) if allowed_special == "all" else frozenset(allowed_special))
        if disallowed_special is None:
            disallowed = frozenset(self.tiktoken_specials) - allowed
        elif disallowed_special == "all":
            disallowed = frozenset(self.special_tokens) - allowed
        else:
            disallowed = frozenset(disallowed_special)
        if disallowed:
            m = _pattern(disallowed).search(text)
            if m:
                raise DisallowedSpecialError(m.group(), m.start())
        if not allowed:
            return self.encode_ordinary(text)
        ids: list[int] = []
        pos = 0
        for m in _pattern(allowed).finditer(text):
            ids += self.encode_ordinary(text[pos:m.start()])
            ids.append(self.special_tokens[m.group()])
            pos = m.end()
        return ids + self.encode_ordinary(text[pos:])

    def encode_ordinary(self, text: str) -> list[int]:
        ids: list[int] = []
        pos = 0
        for m in self._runs(text):
            start = m.start()
            run = m.group()
            if start > pos:
                latin = text[pos:start]
                if latin[-1] == " ":  # the space before an Indic run is that run's leading space
                    latin = latin[:-1]
                    run = " " + run
                if latin:
                    ids += self._latin(latin)
            pos = m.end()
            ids += [self.offset + i for i in self.sgpe.encode(run)]
        if pos < len(text):
            ids += self._latin(text[pos:])
        return ids

    def _latin(self, text: str) -> list[int]:
        if len(text) < LONG_RUN:
            return self.encoding.encode_ordinary(text)
        return self._safe.encode_ordinary(text)


def _pattern(tokens: frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, sorted(tokens, key=lambda t: (-len(t), t)))))
