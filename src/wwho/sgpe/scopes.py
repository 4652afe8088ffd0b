"""Merge scopes: which adjacent SGPE units a learned merge may join.

A piece of text (:mod:`wwho.sgpe.words`) is split into words of syllables and boundary
tokens (a character of no script, with a glued space or attached marks). The *scope*
groups them into *spans*; merges are learned and applied inside a span, never across:

* ``"words"`` (spec 000): a span is one word of syllables; every boundary token is a span
  of its own and never merges;
* ``"runs"``: as ``"words"``, and each run of consecutive boundary tokens (digits,
  Latin letters, punctuation: ``2019``, ``COVID``, ``").``) is a span too, so BPE merges
  inside it. A syllable never merges with a boundary token;
* ``"pieces"``: the whole piece (a whitespace-free chunk with the space before it) is one
  span: a word may also merge with the punctuation around it (``" ලංකාව."``), as
  SentencePiece-style tokenizers without script splitting do.

Whatever the scope, units are whole syllables: no merge ever falls inside a syllable.
Each scope is one regular expression for the Hugging Face export (:func:`scope_pattern_source`),
whose matches are exactly the spans, so a stock BPE model reproduces the native ids.

This module does not syllabify (it groups what :meth:`WordSplitter.split` returns) nor
know vocabularies.
"""

from __future__ import annotations

import re

from wwho.codepoints import char_class
from wwho.counting import PIECES
from wwho.errors import VocabError
from wwho.words import word_char_sets, word_pattern_source

MERGE_SCOPES = ("words", "runs", "pieces")

#: A span: (mergeable, units). A non-mergeable span is one boundary token (scope "words").
Span = tuple[bool, list[str]]

_WS = frozenset(" \t\n\r")


def check_scope(scope: str) -> str:
    if scope not in MERGE_SCOPES:
        raise VocabError(f"unknown merge scope {scope!r}; choose from {', '.join(MERGE_SCOPES)}")
    return scope


def group_spans(parts: list[tuple[bool, list[str]]], scope: str) -> list[Span]:
    """Group the ``(is_word, tokens)`` parts of one piece into the spans of ``scope``."""
    if scope == "words" or len(parts) == 1:
        return [(is_word, tokens) for is_word, tokens in parts]
    if scope == "pieces":
        units = [u for _, tokens in parts for u in tokens]
        return [(len(units) > 1 or parts[0][0], units)]
    spans: list[Span] = []
    run: list[str] = []
    for is_word, tokens in parts:
        if is_word or tokens[0] in _WS:
            if run:
                spans.append((len(run) > 1, run))
                run = []
            spans.append((is_word, tokens))
        else:
            run.append(tokens[0])
    if run:
        spans.append((len(run) > 1, run))
    return spans


def reserved_pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    """Matches the text of any of ``tokens`` (special tokens, byte tokens ``<0xNN>``).

    The trainer groups a piece holding such text as in scope ``"words"``: a merge can only
    produce a string that occurs inside a mergeable span, so no learned token ever equals a
    special or byte token (whose ids mean something else).
    """
    return re.compile("|".join(map(re.escape, sorted(set(tokens), key=len, reverse=True))) or "(?!)")


def scope_pattern_source(scripts: tuple[str, ...], scope: str, *, onig: bool = False,
                         split_punctuation: bool = False) -> str:
    """A regex whose matches are the spans of a text under ``scope`` (for HF's ``Split``);
    ``split_punctuation`` as :func:`wwho.words.word_char_sets` (no effect on ``"pieces"``)."""
    check_scope(scope)
    if scope == "words":
        return word_pattern_source(scripts, onig=onig, split_punctuation=split_punctuation)
    if scope == "pieces":
        return PIECES
    starts, attach = word_char_sets(scripts, split_punctuation=split_punctuation)
    ws = {ord(c) for c in " \t\n\r"}
    word_start = char_class(starts, onig=onig)
    word_char = char_class(starts | attach, onig=onig)
    other = char_class(starts | ws, negate=True, onig=onig)
    marks = f"{char_class(attach, onig=onig)}*" if attach else ""
    glued = "(?: (?=[^ \\t\\n\\r]))?"
    return f"({glued}{word_start}{word_char}*)|{glued}(?:{other}{marks})+|[ \\t\\n\\r]"
