"""SGPE training's options, checked before any text is read: flags, sizes, special tokens, the
merge scope, the checkpoint folder, and option names no training takes.

Every training entry (:mod:`wwho.sgpe.train`) calls these first, so that a wrong option is an
error naming it, not a failure after the whole corpus was counted. ``smallest_vocab_size`` is also
the CLI's (``--vocab-size`` is checked against it before the API is called).

This module does not train, read corpora, or write checkpoints (:mod:`wwho.sgpe.checkpoints`
claims the folder).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from wwho.errors import VocabError, check_flag, holds_surrogate
from wwho.protocol import special_token_list
from wwho.sgpe import checkpoints
from wwho.sgpe.phases import train_phases
from wwho.sgpe.scopes import check_scope
from wwho.sgpe.vocabfile import BYTE_TOKENS, SPECIAL_TOKENS
from wwho.sizes import MAX_COUNT, check_range, check_vocab_size, check_workers

#: The options that are True or False.
FLAGS = ("prefix_space", "superword_letters", "script_characters", "bare_syllables", "complete_syllables",
         "complete_words", "complete_endings", "complete_superwords", "split_punctuation", "resume",
         "overwrite_checkpoint", "skip_bad_lines", "segments_only")


def check_option_names(options: dict, method: str) -> None:
    """A ``TypeError`` naming ``method`` for an option no training takes, before any text is read
    (passed on, a misspelt option would fail after the whole corpus was counted, naming a private
    function)."""
    import difflib
    import inspect

    known = {*inspect.signature(train_phases).parameters, "split_punctuation", "checkpoint_dir",
             "overwrite_checkpoint"}
    known -= {"pieces", "splitter", "vocab_size", "progress", "stats", "started", "spans"}
    for name in options:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(f"{method}() got an unexpected keyword argument {name!r}{hint}")


def check_flags(options: dict) -> None:
    """Each of :data:`FLAGS` among ``options`` must be True or False ("no" would be true): a
    :class:`VocabError` naming it, before any text is counted. Every training entry calls it."""
    for name in FLAGS:
        if name in options:
            check_flag(options[name], name, VocabError)


def split_punctuation_option(options: dict) -> bool:
    """The ``split_punctuation`` option (checked by :func:`check_flags`), taken out of ``options``:
    the word splitter carries it."""
    return options.pop("split_punctuation", False)


def check_special_tokens(special_tokens: Iterable[str]) -> None:
    """Special tokens must be distinct non-empty strings, given as a list (a single string would be
    taken as its characters), none of them the text of a byte token (``<0x41>`` decodes to ``A``) or
    holding a lone surrogate."""
    tokens = special_token_list(special_tokens)
    for token in tokens:
        if holds_surrogate(token):
            # (a vocab.json and a tokenizer.json hold valid Unicode: found before any text is counted)
            raise VocabError(f"special token {token!r} holds a lone surrogate, which is not valid Unicode "
                             "(bytes that are no UTF-8, from the command line?)")
        if token in BYTE_TOKENS:
            raise VocabError(f"special token {token!r} is the text of a byte token, which decodes to its byte")
    twice = sorted({t for t in tokens if tokens.count(t) > 1})
    if twice:
        raise VocabError(f"special_tokens lists {', '.join(map(repr, twice))} twice")


def smallest_vocab_size(special_tokens: Sequence[str] = SPECIAL_TOKENS) -> int:
    """The least ``vocab_size`` a vocabulary of these special tokens can have: they, the byte
    tokens and one more."""
    return len(special_tokens) + len(BYTE_TOKENS) + 1


def check_options(vocab_size, min_freq, prune_freq, checkpoint_every, workers, special_tokens, resume,
                  checkpoint_dir, merge_scope="pieces", prefix_space=False, superword_share=0.15,
                  segments_only=False, *, overwrite_checkpoint=False) -> None:
    """Every option that is not a flag, in the order the trainers take them: a
    :class:`VocabError` naming the first wrong one, before any text is counted."""
    check_special_tokens(special_tokens)
    smallest = smallest_vocab_size(special_tokens)
    if type(vocab_size) is int and vocab_size < smallest:
        raise VocabError(
            f"vocab_size {vocab_size!r} is too small: it must hold the {len(special_tokens)} special tokens, "
            f"the {len(BYTE_TOKENS)} byte tokens and at least one more"
        )
    check_vocab_size(vocab_size, low=smallest)
    check_range(min_freq, "min_freq", 1, MAX_COUNT)
    if prune_freq != "auto":
        if isinstance(prune_freq, str):
            raise VocabError(f"prune_freq must be 'auto' or an integer >= 1, not {prune_freq!r}")
        check_range(prune_freq, "prune_freq", 1, MAX_COUNT)
    if type(superword_share) not in (int, float) or not 0 <= superword_share < 1:
        raise VocabError(f"superword_share must be a number in [0, 1), not {superword_share!r}")
    if prefix_space and segments_only:
        raise VocabError("prefix_space cannot be used with segments_only (the meta tokenizer): the dummy "
                         "space would be added to every Indic run")
    check_scope(merge_scope)
    check_range(checkpoint_every, "checkpoint_every", 0, MAX_COUNT)
    check_workers(workers)
    if resume and checkpoint_dir is None:
        raise VocabError("resume=True needs checkpoint_dir")
    if checkpoint_dir is not None:
        checkpoints.claim(checkpoint_dir)  # before any work: refuse a link or a foreign folder
        found = Path(checkpoint_dir) / checkpoints.FILE
        if not resume and not overwrite_checkpoint and os.path.lexists(found):
            # An earlier training's work: `wwho train` without --resume or --force refuses it too.
            raise VocabError(f"{found}: an earlier training's checkpoint is there: pass resume=True to continue "
                             "from it, or overwrite_checkpoint=True to start over (it is replaced)")
