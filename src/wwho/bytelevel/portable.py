"""Whether a pre-tokenizer regex splits text the same in wwho's core and in Hugging Face's engine.

wwho's core runs a pre-tokenizer regex with Rust's ``regex`` / ``fancy-regex`` (Python ``regex``
semantics); a ``tokenizer.json`` is run by Hugging Face ``tokenizers`` with Oniguruma in Ruby
syntax. The named pre-tokenizers (GPT-2, cl100k, o200k, the GGUF ones) are tested in both
engines. A custom regex may read differently, and then an exported ``tokenizer.json`` (or a
loaded one) gives other ids, silently:

* ``^`` and ``$`` are the text's start and end in wwho (``$`` also before a final newline), every
  line's in Oniguruma; ``(?m)`` is multi-line mode in wwho, "dot matches newline" in Oniguruma,
  and ``(?s)`` is an error there;
* ``\\w`` (hence ``\\W``, ``\\b``, ``\\B``) takes ZWJ and ZWNJ, which Indic words hold, in wwho
  and not in Oniguruma; POSIX classes (``[[:alpha:]]``) are ASCII in wwho, Unicode there;
* case-insensitive matching folds ``ß`` to ``ss`` in Oniguruma only (and every other fold of one
  character into several).

:func:`check_portable` refuses such a regex, naming the construct, and runs every other custom
regex in both engines over a probe text (lines of several scripts with joiners, newlines,
case folds, every character up to U+3000 and of a few more blocks, each in several contexts, and
the folds of one character into several spelt out in words):
the first piece that differs is an error that shows it. A probe cannot prove two regexes equal;
it catches the differences of the kinds above and of classes (a script's characters, digits,
spaces). This module does not export or load anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from wwho.bytelevel.pretokenize import _HF_GPT2, CL100K_PATTERN, GGUF_PRETOKENIZERS, GPT2_PATTERN, PATTERNS
from wwho.errors import VocabError, brief

# Oniguruma (Ruby syntax, as in Hugging Face tokenizers) reads "{1,3}+" as "({1,3})+", not as a
# possessive interval. GPT-2 is exported in its original form, which splits the same way; cl100k with
# its one possessive interval made greedy (the same here: nothing follows it in its alternative). Not
# as Llama 3's regex, which splits a final whitespace run holding a newline in two where cl100k's
# "\s++$" keeps it whole. tests/test_bytelevel.py checks both against Hugging Face's own splitting.
HF_FORMS = {GPT2_PATTERN: _HF_GPT2, CL100K_PATTERN: CL100K_PATTERN.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")}
_POSSESSIVE_INTERVAL = re.compile(r"(?<!\\)\{\d+(?:,\d*)?\}\+")

#: Characters of the probe: every one up to U+3000 but the surrogates and a few blocks beyond it
#: (CJK, Hangul, the compatibility forms and specials, emoji); each in several contexts.
_PROBE_RANGES = ((0x20, 0x3000), (0x3000, 0x3100), (0x4E00, 0x4E40), (0xAC00, 0xAC40), (0xA830, 0xA840),
                 (0xFB00, 0xFB50), (0xFE00, 0xFE10), (0xFF00, 0xFFFE), (0x1F300, 0x1F340), (0x1F9D0, 0x1F9E0),
                 (0x11100, 0x11140), (0xE0001, 0xE0002))
_PROBE_LINES = (
    "ශ්\u200dරී ලංකාව ශ්‍රී ලංකා ප්‍රජාතන්ත්‍රවාදී, සමාජවාදී ජනරජය।",
    "क्\u200cष क्‍ष हिन्दी में 123 १२३ ।॥ ক্\u200dষ தமிழ் ಕನ್ನಡ",
    "Hello World! It's 2024; DON'T stop. ß SS ss ſ K \u212a ﬀ ﬁ ǅ ǈ Ⅷ ⓐ ª º",
    "first line\nsecond line  \n\n  third\r\nfourth\rfifth\u2028sixth\u0085seventh\n",
    "def f(x):\n    return x**2  # comment\n\tif a != b: pass\n",
    "  leading and trailing spaces   \t\n\u00a0nbsp\u3000ideographic\u200bzwsp",
    "emoji 👍🏽 👨\u200d👩\u200d👧 🇱🇰 ❤\ufe0f; 中文字符 日本語 한국어 ١٢٣ ٤٥",
)


def _probe_texts() -> list[str]:
    return list(_PROBE_LINES) + ["\n".join(_PROBE_LINES) + "\n", _sweep(), _folds()]


@lru_cache(maxsize=1)
def _folds() -> str:
    """The case folds of more than one character (Unicode's full folding, as ``str.casefold``
    gives it: ``ß`` is ``ss``, ``ﬁ`` is ``fi``) spelt out in words, in each case: Oniguruma's
    ``(?i)ß`` matches the ``SS`` of ``SSH``, wwho's does not, and ``SS`` alone is one piece in both."""
    parts = []
    for c in _probe_characters():
        fold = c.casefold()
        if len(fold) > 1:
            for form in dict.fromkeys((fold, fold.upper(), fold.title())):
                parts.append(f"{form}a {form}A a{form}a {form}1 {form}\n")
    return "".join(parts)


def _probe_characters() -> Iterator[str]:
    """Each character of :data:`_PROBE_RANGES` but the surrogates."""
    for lo, hi in _PROBE_RANGES:
        for cp in range(lo, hi):
            if not 0xD800 <= cp < 0xE000:
                yield chr(cp)


@lru_cache(maxsize=1)
def _sweep() -> str:
    return "".join(f"{c}a{c}{c} {c}A\u200d{c}1{c}\n{c}" for c in _probe_characters())


#: Inline flags wwho and Oniguruma read alike: case-insensitive (the probe checks its folds) and
#: its negation.
_SAME_FLAGS = frozenset("i-")


def construct_that_differs(pattern: str) -> str | None:
    """What in ``pattern`` the two engines read differently (see the module docstring), or None.
    Escapes and character classes are followed; nothing is compiled."""
    i, n, depth = 0, len(pattern), 0  # depth: inside a character class (nested classes count)
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1:i + 2]
            if nxt in ("w", "W", "b", "B"):
                return (f"\\{nxt}, which holds ZWJ and ZWNJ (U+200D, U+200C) in wwho and not in Oniguruma, so an "
                        "Indic word with a joiner splits differently: name the classes, as "
                        "[\\p{L}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}] (joiners inside words) or without the two")
            i += 2
            continue
        if c == "[":
            if depth and pattern.startswith("[:", i) and ":]" in pattern[i + 2:i + 40]:
                return "a POSIX class like [[:alpha:]], ASCII in wwho and Unicode in Oniguruma: use \\p{...}"
            depth += 1  # a class, or one nested in a class (both engines nest them)
            i += 1
            if pattern[i:i + 1] == "^":
                i += 1
            if pattern[i:i + 1] == "]":  # a literal ] first in a class
                i += 1
            continue
        if depth:
            depth -= c == "]"
            i += 1
            continue
        if c in "^$":
            return (f"{c!r}, the text's {'start' if c == '^' else 'end'} in wwho but each line's in Oniguruma: "
                    + ("use \\A" if c == "^" else "use \\z (or (?=\\n?\\z) for wwho's end or a final newline)"))
        if c == "(" and pattern.startswith("(?", i) and i + 2 < n and pattern[i + 2].isalpha():
            j = i + 2
            while j < n and (pattern[j].isalpha() or pattern[j] == "-"):
                j += 1
            flags = pattern[i + 2:j]
            if pattern[j:j + 1] in (")", ":") and not set(flags) <= _SAME_FLAGS:
                return (f"the inline flags (?{flags}...): only i is read alike (Oniguruma reads m as 'dot matches "
                        "newline', knows no s, U or u, and reads x's comments otherwise)")
        i += 1
    return None


def hf_pattern(pattern: str, *, byte_level: bool = False) -> str:
    """The form of a pre-tokenizer regex that Hugging Face's engine (Oniguruma) reads as we do; a
    :class:`VocabError` if there is none (:func:`check_portable`). ``byte_level``: the regex runs
    after the ByteLevel step."""
    form = HF_FORMS.get(pattern, pattern)
    if _POSSESSIVE_INTERVAL.search(form):
        raise VocabError(
            f"cannot export {brief(form)}: Hugging Face's regex engine (Oniguruma) reads a possessive "
            "interval like '{1,3}+' as a repeated group"
        )
    try:
        check_portable(pattern, byte_level=byte_level)
    except VocabError as exc:
        raise VocabError(f"cannot export: {exc}") from None
    return form


def check_portable(pattern: str, *, byte_level: bool = False, what: str = "the pre-tokenizer regex") -> None:
    """A :class:`VocabError` if ``pattern`` splits some text otherwise in Hugging Face ``tokenizers``
    (Oniguruma) than in wwho's core, or does not compile there. ``byte_level``: the regex runs after
    the ByteLevel step, on byte-mapped text (the probe is mapped so too).

    A named pre-tokenizer's regex passes as it is, and so does ``(?:W)|(?:B)`` with ``B`` one of
    them, as :mod:`wwho.extend.pretokenizer` wraps a base's regexes, once ``W`` passes alone: both
    engines try the alternatives in order, so two regexes read alike make an alternation read alike;
    and ``B`` keeps its place in the base's sequence of steps, where a ``$`` in it holds as in the
    base (deepseek-llm's ``\\s+$`` comes after a step that isolates the newlines)."""
    why = _why_not(pattern, byte_level)
    if why is not None:
        shown, reason = why
        raise VocabError(f"{what} {brief(shown)} {reason}")


def _wrapped(pattern: str) -> str | None:
    """``W`` of a ``pattern`` that is ``(?:W)|(?:B)`` with ``B`` a named pre-tokenizer's regex.
    A ``W`` that compiles alone has balanced groups and classes, so the string is no other
    alternation."""
    if pattern.startswith("(?:") and pattern.endswith(")"):
        from wwho.bytelevel.pretokenize import Pretokenizer

        for known in _known():
            tail = f")|(?:{known})"
            if pattern.endswith(tail) and len(pattern) > len(tail) + 3:
                try:
                    Pretokenizer((pattern[3:-len(tail)],))
                except VocabError:
                    return None  # not W then: the whole regex is checked
                return pattern[3:-len(tail)]
    return None


@lru_cache(maxsize=64)
def _why_not(pattern: str, byte_level: bool) -> tuple[str, str] | None:
    """(the regex at fault, why) if ``pattern`` is not portable (:func:`check_portable`); cached, as
    a probe takes a noticeable fraction of a second and an extension's regexes share their ``W``."""
    if pattern in _known():
        return None
    inner = _wrapped(pattern)
    if inner is not None:
        return _why_not(inner, byte_level)
    why = construct_that_differs(pattern)
    if why:
        return pattern, f"reads differently in Hugging Face's regex engine (Oniguruma) than in wwho's: {why}"
    from tokenizers import Regex, pre_tokenizers

    from wwho.bytelevel.pretokenize import Pretokenizer, bytes_to_unicode

    ours = Pretokenizer((pattern,))  # wwho's own error first, for a regex it cannot run
    try:
        hf = pre_tokenizers.Split(Regex(pattern), "isolated")
    except Exception as exc:  # noqa: BLE001 (tokenizers raises a plain Exception)
        return pattern, f"does not compile in Hugging Face's regex engine (Oniguruma): {str(exc)[:200]}"
    for text in _probe_texts():
        if byte_level:
            text = bytes_to_unicode(text.encode("utf-8"))
        theirs = [piece for piece, _ in hf.pre_tokenize_str(text)]
        mine = ours.split(text)
        if theirs != mine:
            k = next((k for k, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
            return pattern, (
                "splits text differently in Hugging Face's regex engine (Oniguruma) than in wwho's, so a "
                f"tokenizer.json would give other ids: at piece {k:,}, wwho {brief(mine[k:k + 3])}, Hugging Face "
                f"{brief(theirs[k:k + 3])}")
    return None


@lru_cache(maxsize=1)
def _known() -> frozenset[str]:
    """The named pre-tokenizers' regexes, in wwho's form and in the form exported for Hugging Face:
    tested in both engines (``tests/test_bytelevel.py``, ``tests/test_gguf.py``)."""
    known = {*PATTERNS.values(), *HF_FORMS.values(), _HF_GPT2}
    for spec in GGUF_PRETOKENIZERS.values():
        known.update(spec.patterns)
        known.update(spec.byte_patterns)
    return frozenset(known)
