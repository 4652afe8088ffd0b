"""The extended pre-tokenizer: script words cut out whole, the base's own regexes everywhere else.

Given the base's pre-tokenizer (regexes ``B1 .. Bk``, applied in turn as Hugging Face ``Split``
steps) and the script-word regex ``W`` (:mod:`wwho.extend.scripts`), the extension runs

    W,   (?:W)|(?:B1),   ...,   (?:W)|(?:Bk)

The first step cuts every script word out whole and leaves the text between words as it is.
In every later step a script word is matched by ``W`` from its first character to its last, so it
stays whole; the other pieces hold no script character, ``W`` never matches in them, and ``Bi``
splits them exactly as in the base. Hence:

* on text with no character of the scripts, every step equals the base's, piece for piece;
* on any text, a piece between script words is split as the base splits that text alone.

The base's regexes keep their Hugging Face form (:func:`wwho.bytelevel.portable.hf_pattern`), so the
same strings run in wwho's core (``wwho._core.Pretokenizer``) and in Oniguruma.

Refused, with the reason (:class:`NotExtendable`): a pre-tokenizer that also splits after its
byte-level step (the byte-mapped text has no script characters to recognise, so a script word
could be cut), and regexes that cannot be wrapped (a global inline flag, a syntax that wwho's core
or Hugging Face's Oniguruma rejects, or reads otherwise: :func:`wwho.bytelevel.portable.check_portable`).
"""

from __future__ import annotations

from wwho.bytelevel.portable import check_portable, hf_pattern
from wwho.bytelevel.pretokenize import Pretokenizer
from wwho.errors import VocabError
from wwho.extend.scripts import ScriptSet


class NotExtendable(VocabError):
    """The base tokenizer cannot be extended exactly; the message says why."""


def extend_pretokenizer(base: Pretokenizer, scripts: ScriptSet) -> Pretokenizer:
    """The extension's pre-tokenizer (see the module docstring), checked in both regex engines."""
    if base.byte_patterns:
        raise NotExtendable(
            f"the base pre-tokenizer ({base.name or 'custom'}) splits again after its ByteLevel step "
            f"({len(base.byte_patterns)} regex(es) on byte-mapped text), where script characters are "
            "bytes that no regex can recognise: a script word could be cut, so no exact extension exists"
        )
    word = scripts.word_source()
    patterns = [word]
    for pattern in base.patterns:
        try:
            own = hf_pattern(pattern)
        except VocabError as exc:
            raise NotExtendable(f"the base pre-tokenizer cannot be written for Hugging Face: {exc}") from None
        patterns.append(f"(?:{word})|(?:{own})")
    for pattern in patterns:
        _check_hf(pattern)
        try:  # here, not when the result is saved: the corpus is not read for an extension that cannot be
            check_portable(pattern, what="the wrapped base regex")
        except VocabError as exc:
            raise NotExtendable(f"the base pre-tokenizer ({base.name or 'custom'}) cannot be extended so that "
                                f"Hugging Face splits text as wwho does: {exc}") from None
    name = f"{base.name or 'custom'}+{scripts.label}"
    try:
        return Pretokenizer(tuple(patterns), name=name, unicode=base.unicode, space_split=base.space_split)
    except VocabError as exc:  # the core's regex engines reject a wrapped regex
        raise NotExtendable(f"the wrapped base regex does not compile in wwho's core: {exc}") from None


def _check_hf(pattern: str) -> None:
    from tokenizers import Regex

    try:
        Regex(pattern)
    except Exception as exc:  # noqa: BLE001 (tokenizers raises a plain Exception)
        raise NotExtendable(
            f"Hugging Face's regex engine rejects the wrapped base regex ({exc}): {pattern[:200]!r}"
        ) from None
