"""The exceptions wwho raises. Every error a user can cause is a :class:`WwhoError`.

Each message names what is wrong and where (file, line, key, offset), so that a
command-line user never has to read a traceback. Nothing here does any work.
"""

from __future__ import annotations

import re


class WwhoError(Exception):
    """Base class of every error wwho raises on purpose."""


class SchemaError(WwhoError, ValueError):
    """A script schema is malformed (names the file and the offending key or state)."""


class CorpusError(WwhoError, ValueError):
    """A corpus file cannot be read or has a malformed line (names ``file:line``)."""


class VocabError(WwhoError, ValueError):
    """A vocabulary or tokenizer file is invalid (names the file and the problem)."""


class TokenizerError(WwhoError, ValueError):
    """Invalid input to a tokenizer: wrong type, out-of-range id, disallowed special token.

    ``text_index``: in a batch, the place of the text at fault (its message starts ``texts[i]:``);
    None otherwise."""

    text_index: int | None = None


def in_batch(error: TokenizerError, text_index: int | None) -> TokenizerError:
    """``error``, naming ``texts[text_index]`` as the text at fault (in its ``text_index``)."""
    error.text_index = text_index
    return error


class NotUTF8Error(TokenizerError, UnicodeDecodeError):
    """Tokens' bytes that are not UTF-8, decoded with ``errors="strict"`` (by ``decode``,
    ``decode_with_offsets`` or a streaming decoder): a :class:`TokenizerError`, and a
    ``UnicodeDecodeError`` as Python's codec raises, so that code catching either catches it.
    ``text``: the whole characters before the bad bytes."""

    def __init__(self, message: str, cause: UnicodeDecodeError, text: str = "") -> None:
        UnicodeDecodeError.__init__(self, cause.encoding, cause.object, cause.start, cause.end, cause.reason)
        self.message, self.text = message, text

    @classmethod
    def of(cls, cause: UnicodeDecodeError, note: str = "", text: str | None = None) -> NotUTF8Error:
        """The error for ``cause``, a UTF-8 decode's (``note``: what follows the message). Its
        ``text`` (unless given) keeps a lone surrogate before the bad bytes: ``errors="surrogatepass"``
        let it pass."""
        bad = bytes(cause.object[cause.start:cause.end])
        if text is None:
            text = bytes(cause.object[:cause.start]).decode("utf-8", "surrogatepass")
        return cls(f"the tokens' bytes are not UTF-8 ({cause.reason}: {bad!r} at byte {cause.start:,}){note}", cause, text)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        cause = UnicodeDecodeError(self.encoding, self.object, self.start, self.end, self.reason)
        return (type(self), (self.message, cause, self.text))


class SurrogateError(TokenizerError, UnicodeEncodeError):
    """A str holding a lone surrogate where only a token's own text will do
    (``encode_single_token``): it has no UTF-8 bytes, so it is no token. A
    ``UnicodeEncodeError`` too, as tiktoken raises there, so that code catching either catches it."""

    def __init__(self, message: str, cause: UnicodeEncodeError) -> None:
        UnicodeEncodeError.__init__(self, cause.encoding, cause.object, cause.start, cause.end, cause.reason)
        self.message = message

    @classmethod
    def of(cls, cause: UnicodeEncodeError, what: str) -> SurrogateError:
        bad = cause.object[cause.start:cause.end]
        return cls(f"{what}: {bad!r} at character {cause.start:,} is a surrogate code point (no character: "
                   "even a pair of them in a str is two), which has no UTF-8 bytes and so is in no token", cause)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        cause = UnicodeEncodeError(self.encoding, self.object, self.start, self.end, self.reason)
        return (type(self), (self.message, cause))


class DisallowedSpecialError(TokenizerError):
    """The text contains a special token that the caller did not allow."""

    def __init__(self, token: str, offset: int, text_index: int | None = None, *, known: bool = True,
                 both: bool = False) -> None:
        self.token, self.offset, self.text_index = token, offset, text_index
        where = "" if text_index is None else f"texts[{text_index}]: "
        if both:  # allowed and disallowed at once: the advice to allow it would be what was done
            fix = (f"{token!r} is in both allowed_special and disallowed_special (tiktoken refuses such a text too): "
                   "take it out of disallowed_special to encode it as a special token")
        elif known:
            fix = (f"pass allowed_special={{{token!r}}} (or 'all') to encode it as a special token, or "
                   f"disallowed_special=() to encode it as plain text")
        else:  # a name disallowed_special gave that the vocabulary lacks: only leaving it out helps
            fix = (f"{token!r} is no special token of this vocabulary (tiktoken refuses such a text too): "
                   f"leave it out of disallowed_special")
        super().__init__(f"{where}text contains the special token {token!r} at offset {offset}; {fix}")


class UnknownTokenError(TokenizerError, KeyError):
    """A string that is no token, or an id without one (in any decode or lookup of any kind, and
    tiktoken's ``encode_single_token``, ``eot_token``): a ``KeyError`` too, as tiktoken raises, so
    that code written for tiktoken catches it."""

    __str__ = BaseException.__str__  # the message as written (KeyError's would be its repr)


class WrongTypeError(TokenizerError, TypeError):
    """An argument of the wrong type: a text that is not a ``str``, an id that is not an integer.
    A ``TypeError`` too, as tiktoken raises there, so that code written for tiktoken catches it."""


class UnknownHandlerError(TokenizerError, LookupError):
    """``errors=`` names no registered error handler. A ``LookupError`` too, as ``codecs`` (and so
    tiktoken, on the first bad byte) raises."""


class IdRangeError(UnknownTokenError, OverflowError):
    """A token id below 0 or at 2**32 and above, which no vocabulary holds: an ``OverflowError``
    too, as tiktoken raises there (and a ``KeyError``, as for any id without a token)."""


class MergeError(WwhoError, ValueError):
    """Invalid input to the merge engine (names the word, symbol or merge that is wrong)."""


class WriteError(WwhoError, OSError):
    """A file or directory cannot be written (disk full, no permission); names the path. What was
    there before is unchanged."""


def brief(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages about untrusted data."""
    if isinstance(value, (str, bytes, bytearray)) and len(value) > limit:
        value = value[:limit]  # not the repr of a whole untrusted line, then cut
        text = repr(value)
        return text[: limit - 3] + "..."
    try:
        text = repr(value)
    except ValueError:  # an integer past Python's limit on digits converted (sys.set_int_max_str_digits)
        if not isinstance(value, int):
            raise
        return f"<an integer of {value.bit_length():,} bits>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_flag(value: object, name: str, error: type[WwhoError] = TokenizerError) -> bool:
    """``value`` if it is True or False; else ``error`` naming ``name`` (taken for its truth, ``"no"``
    would be true, and a library's own TypeError names no option)."""
    if value is True or value is False:
        return value
    if error is TokenizerError:  # a TypeError too, as the other wrong types of an argument
        error = WrongTypeError
    raise error(f"{name} must be True or False, not {brief(value)}")


def check_count(value: object, name: str, error: type[WwhoError] = TokenizerError) -> int:
    """``value`` if it is a whole number of 0 or more (not a bool); else ``error`` naming ``name``."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return int(value)
    if error is TokenizerError and not (isinstance(value, int) and not isinstance(value, bool)):
        error = WrongTypeError  # a TypeError too, as the other wrong types of an argument
    raise error(f"{name} must be a whole number of 0 or more, not {brief(value)}")


def holds_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (bytes of no UTF-8, as Python keeps them from a
    command line or a file name), which no UTF-8 file, regex or token can hold."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD: for a name taken from a file name whose
    bytes are no UTF-8 (a label, which a saved file must be able to hold and read back)."""
    return _SURROGATE.sub("\ufffd", text) if holds_surrogate(text) else text


_SURROGATE = re.compile("[\ud800-\udfff]")
#: Characters that would break a one-line message or a table row, or cannot be written as UTF-8:
#: control characters, line and paragraph separators, lone surrogates.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` (a name, a path, a message) on one printable line: a byte of a file name that is not
    UTF-8 (which Python keeps as a surrogate, U+DC80-U+DCFF) as ``\\xNN``, any other unprintable
    character (see ``_UNPRINTABLE``) as its Python escape (``\\n``, ``\\x1b``, ``\\ud800``)."""
    return _UNPRINTABLE.sub(_escape, text)


def _escape(m: re.Match) -> str:
    cp = ord(m.group())
    if 0xDC80 <= cp <= 0xDCFF:
        return f"\\x{cp - 0xDC00:02x}"
    return m.group().encode("unicode_escape").decode("ascii")


class WwhoWarning(UserWarning):
    """Base class of the warnings wwho gives (the CLI prints them as ``wwho: warning: ...``)."""


class ScriptWarning(WwhoWarning):
    """Most of the input is not in the script chosen (``script=``, ``--script``)."""


class VocabSizeWarning(WwhoWarning):
    """Training stopped before ``vocab_size``: the vocabulary is smaller than asked."""


class ChangedFileWarning(WwhoWarning):
    """A file of a saved tokenizer that wwho does not read was changed after saving (e.g. by Hugging
    Face's ``save_pretrained``)."""
