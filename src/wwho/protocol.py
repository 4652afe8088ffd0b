"""The interface every wwho tokenizer kind shares, written down as a ``typing.Protocol``.

SGPE (:class:`wwho.SGPETokenizer`), the meta vocabulary (:class:`wwho.MetaTokenizer`), byte-level
BPE (:class:`wwho.ByteBPE`) and binary BPE (:class:`wwho.binary.BinaryTokenizer`) all satisfy
:class:`Tokenizer`; ``tests/test_protocol.py`` checks each against it with one parametrized test.
The text kinds take and return ``str``; the binary kind takes and returns ``bytes`` (hence the
type parameter). Names follow Hugging Face ``tokenizers`` where it has one:

* ``vocab_size`` and ``len(tok)``: how many ids have a token;
* ``get_vocab()``: token string -> id, the strings of the kind's own files (SGPE's syllables,
  GPT-2's byte characters for byte-level tokens as in HF ``tokenizer.json``, Latin-1 characters
  for binary tokens, prefixed strings for the meta vocabulary's SGPE part);
* ``token_to_id(token)`` / ``id_to_token(id)``: one entry of that table; an unknown token or id
  is a :class:`wwho.errors.TokenizerError` (HF returns ``None`` for the first; wwho says why);
* ``encode``/``encode_batch``/``decode``/``decode_batch``, with ``decode(ids,
  skip_special_tokens=True)`` dropping special tokens.

The first argument of each method is positional in the protocol: the kinds name it for what
it is (``text`` and ``texts``, the binary kind's ``data`` and ``items``, ``ids``, ``token_id``).

How a token is shown to a person (``wwho encode --tokens``) is :func:`wwho.readable.readable`.
This module holds no implementation.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

from wwho.errors import DisallowedSpecialError, VocabError, WrongTypeError, brief

Data = TypeVar("Data", str, bytes)

__all__ = ["Tokenizer"]


@runtime_checkable
class Tokenizer(Protocol[Data]):
    """What every tokenizer kind offers (see the module docstring)."""

    @property
    def vocab_size(self) -> int: ...

    def __len__(self) -> int: ...

    def get_vocab(self) -> dict[str, int]: ...

    def token_to_id(self, token: str, /) -> int: ...

    def id_to_token(self, token_id: int, /) -> str: ...

    def token_bytes(self, token_id: int, /) -> bytes: ...

    def encode(self, text: Data, /) -> list[int]: ...

    def encode_batch(self, texts: Sequence[Data], /) -> list[list[int]]: ...

    def decode(self, ids: Iterable[int], /, *, skip_special_tokens: bool = False) -> Data: ...

    def decode_batch(self, batch: Iterable[Iterable[int]], /, *,
                     skip_special_tokens: bool = False) -> list[Data]: ...


#: The defaults of every encode's ``allowed_special`` and ``disallowed_special``, one object each: a
#: per-call path tests for them by identity before the general checks (which cost more than a short
#: text's encoding), then asks :func:`default_specials` about any other values.
NO_SPECIALS: frozenset[str] = frozenset()
ALL_SPECIALS = "all"


def default_specials(allowed_special: object, disallowed_special: object) -> bool:
    """Whether the options ask for the defaults: no special token allowed, every one disallowed."""
    return no_names(allowed_special) and all_names(disallowed_special)


def all_names(value: object) -> bool:
    """Whether an ``allowed_special`` / ``disallowed_special`` value is ``"all"`` (never asking a
    numpy array of names for its truth or comparing it elementwise)."""
    return isinstance(value, str) and value == "all"


def no_names(value: object) -> bool:
    """Whether such a value names no special token: ``None`` or an empty collection."""
    if value is None:
        return True
    if isinstance(value, (str, bytes)):
        return False
    try:
        return len(value) == 0  # type: ignore[arg-type]
    except TypeError:
        return False  # an iterator: special_names reads it


def special_names(value: object, known: Collection[str], option: str) -> frozenset[str]:
    """``allowed_special`` / ``disallowed_special`` as every kind reads them: ``"all"`` (each of
    ``known``), ``None``, ``False`` or an empty collection (none), or a collection of names, of which those
    in ``known`` are the answer. A name the vocabulary lacks is left out, as tiktoken leaves it: one
    set written for several encodings works with each (a disallowed one is still looked for in the
    text: :func:`special_name_sets`). Anything else (one name as a string, which would be taken as
    its characters, a number) is a :class:`wwho.errors.TokenizerError` naming ``option``."""
    return special_name_sets(value, known, option)[0]


def special_name_sets(value: object, known: Collection[str], option: str) -> tuple[frozenset[str], frozenset[str]]:
    """:func:`special_names`, and the names of ``value`` that are not in ``known``: as
    ``disallowed_special``, tiktoken refuses a text holding one (:func:`refuse_named_text`)."""
    if all_names(value):
        return frozenset(known), frozenset()
    if value is None or value is False:  # (tiktoken reads disallowed_special=False as none)
        return frozenset(), frozenset()
    if isinstance(value, (str, bytes)):
        raise WrongTypeError(f"{option} must be 'all' or a collection of special-token names, not {value!r}")
    try:
        names = frozenset(value)  # type: ignore[arg-type]
    except TypeError:
        raise WrongTypeError(f"{option} must be 'all' or a collection of special-token names, "
                             f"not {type(value).__name__}") from None
    for name in names:
        if not isinstance(name, str):
            raise WrongTypeError(f"{option} must hold special-token names (str), not {name!r}")
    known = frozenset(known)
    return names & known, names - known


def disallowed_names(value: object, known: Collection[str], texts: Sequence[object], *,
                     batch: bool) -> frozenset[str]:
    """``disallowed_special`` given as names (not ``"all"``): those of ``known``, for the encoder to
    refuse; a text of ``texts`` holding one of the others (names the vocabulary lacks) is refused
    here, as tiktoken refuses it."""
    names, others = special_name_sets(value, known, "disallowed_special")
    if others:
        refuse_named_text(texts, others, batch=batch)
    return names


def special_text_pattern(names: Iterable[str]) -> re.Pattern | None:
    """A regex that finds any of the special tokens ``names`` in a text (the longest where several
    start at one place), or None without any."""
    names = sorted({name for name in names if name}, key=lambda name: (-len(name), name))
    return re.compile("|".join(map(re.escape, names))) if names else None


def refuse_allowed_and_disallowed(texts: Sequence[object], allowed: object, disallowed: object, *,
                                  batch: bool) -> None:
    """A special token both allowed and disallowed (sets of names, or ``"all"`` allowed): a text
    holding it is refused, as tiktoken refuses it, with an error that says it is in both."""
    if not allowed or not disallowed or isinstance(disallowed, str):
        return
    both = frozenset(disallowed) if allowed == "all" else frozenset(disallowed) & frozenset(allowed)
    if both:
        refuse_named_text(texts, both, batch=batch, known=both, both=True)


def refuse_named_text(texts: Sequence[object], names: Collection[str], *, batch: bool,
                      known: Collection[str] = frozenset(), both: bool = False) -> None:
    """Raises :class:`wwho.errors.DisallowedSpecialError` for the first text (of ``texts``) that
    holds one of ``names`` (disallowed names: tiktoken refuses such a text), at the leftmost place,
    the longest name there. The error's advice depends on whether the name is one of ``known``, the
    vocabulary's special tokens (allow it, or disallow nothing), or not (leave it out)."""
    for i, text in enumerate(texts):  # (an empty name is in every text, as tiktoken finds it)
        if not isinstance(text, str):
            continue  # the encode says what is wrong with it
        found = [(at, -len(n), n) for n in names if (at := text.find(n)) >= 0]
        if found:
            at, _, name = min(found)
            raise DisallowedSpecialError(name, at, text_index=i if batch else None, known=name in known, both=both)


def special_token_list(special_tokens: object) -> list[str]:
    """The ``special_tokens`` a trainer is given, as a list: non-empty strings, given as a list or
    another collection (one string would be taken as its characters); a :class:`VocabError` if not."""
    if isinstance(special_tokens, (str, bytes)):
        raise VocabError(f"special_tokens must be a list of strings, not the string {special_tokens!r} "
                         f"(which would make each of its characters special): write [{special_tokens!r}]")
    if isinstance(special_tokens, dict) or not hasattr(special_tokens, "__iter__"):
        raise VocabError(f"special_tokens must be a list of strings, not {brief(special_tokens)}")
    tokens = list(special_tokens)  # type: ignore[call-overload]
    for token in tokens:
        if not isinstance(token, str) or not token:
            raise VocabError(f"special tokens must be non-empty strings, not {token!r}")
    return tokens
