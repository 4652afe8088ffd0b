"""Checks of an extension's promises, used when it is made, by the tests and by the benchmark.

* :func:`unreachable`: new tokens whose own text does not encode to that one token. Tokens that
  are not whole UTF-8 text (the lead bytes of a character, a joiner half built onto the sign
  before it) have no text: :func:`partial_tokens` lists them apart.
* :func:`syllable_cuts`: token boundaries inside a syllable the extension knows (:func:`cuts_at`:
  the same for token ends found elsewhere, as ``wwho eval`` has them).
* :func:`first_difference`: the first line two encoders disagree on (the extension against the
  base on text without script characters, wwho against stock Hugging Face ``tokenizers``).
* :func:`check_extension`: all of the above on sample lines; raises :class:`ExtensionCheckError`.

Nothing here changes an extension.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbcSet
from typing import TYPE_CHECKING

from wwho.errors import VocabError

if TYPE_CHECKING:
    from wwho.bytelevel import ByteBPE
    from wwho.extend.model import Extension
    from wwho.extend.scripts import ScriptSet


class ExtensionCheckError(VocabError):
    """An extension broke one of its promises (a bug: please report it with the message)."""


def partial_tokens(tokens: Iterable[bytes]) -> list[bytes]:
    """The tokens that are not whole UTF-8 text."""
    out = []
    for token in tokens:
        try:
            token.decode("utf-8")
        except UnicodeDecodeError:
            out.append(token)
    return out


def unreachable(tok: ByteBPE, tokens: Iterable[bytes]) -> list[tuple[bytes, list[int]]]:
    """Whole-text tokens ``t`` for which ``tok.encode(t.decode())`` is not ``[id of t]``."""
    bad = []
    ranks = tok.ranks
    for token in tokens:
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            continue
        ids = tok.encode_ordinary(text)
        if ids != [ranks[token]]:
            bad.append((token, ids))
    return bad


def syllable_cuts(tok: ByteBPE, text: str, scripts: ScriptSet, known: set[str]) -> list[tuple[str, int]]:
    """``(syllable, character offset)`` of every known syllable of ``text`` that a token boundary cuts."""
    ids = tok.encode_ordinary(text)
    ends = set(itertools.accumulate(len(tok.token_bytes(i)) for i in ids))
    return [(syllable, at) for syllable, at, _ in cuts_at(text, ends, scripts, known)]


def cuts_at(text: str, ends: AbcSet[int], scripts: ScriptSet, known: set[str]) -> list[tuple[str, int, int]]:
    """``(syllable, character offset, boundaries inside it)`` of every known syllable of ``text`` that
    one of the token ends ``ends`` (UTF-8 byte offsets in ``text``) cuts."""
    cuts = []
    # The byte offset of ``pos`` is carried forward piece by piece: encoding the whole prefix
    # again at every syllable would make one long line cost time quadratic in its length.
    pos = start = 0
    for match in scripts.word_regex.finditer(text):
        word_start = match.start() + (match.group()[0] == " ")
        start += len(text[pos:word_start].encode("utf-8", "surrogatepass"))
        pos = word_start
        for syl in scripts.syllables(match.group()):
            size = len(syl.encode("utf-8"))
            if syl in known:
                inside = sum(1 for b in range(start + 1, start + size) if b in ends)
                if inside:
                    cuts.append((syl, pos, inside))
            pos += len(syl)
            start += size
    return cuts


def first_difference(
    a: Callable[[str], list[int]], b: Callable[[str], list[int]], lines: Iterable[str]
) -> tuple[str, list[int], list[int]] | None:
    """The first line that ``a`` and ``b`` encode differently, with both results, or None."""
    for line in lines:
        x, y = a(line), b(line)
        if x != y:
            return line, x, y
    return None


def hf_encoder(tokenizer) -> Callable[[str], list[int]]:
    """``text -> ids`` of a ``tokenizers.Tokenizer`` (no special tokens added)."""
    return lambda text: tokenizer.encode(text, add_special_tokens=False).ids


def without_scripts(lines: Iterable[str], scripts: ScriptSet) -> list[str]:
    """The lines with every code point of the scripts' blocks removed (text the promise is about)."""
    return [scripts.without_block_chars(line) for line in lines]


def check_extension(ext: Extension, lines: Sequence[str]) -> None:
    """Check every promise on ``lines`` (and every new token); raise :class:`ExtensionCheckError`."""
    import json

    from tokenizers import Tokenizer

    from wwho.background import Background
    from wwho.extend.files import tokenizer_json

    tok = ext.tokenizer
    bad = unreachable(tok, ext.new_tokens)
    if bad:
        token, ids = bad[0]
        raise ExtensionCheckError(
            f"{len(bad)} new token(s) are unreachable, e.g. {token.decode()!r} encodes to {ids}"
        )
    known = set(ext.known_syllables)
    for line in lines:
        cuts = syllable_cuts(tok, line, ext.scripts, known)
        if cuts:
            syllable, at = cuts[0]
            # The text around the cut: the syllable may lie past any fixed prefix of a long line.
            around = line[max(0, at - 30): at + len(syllable) + 30]
            raise ExtensionCheckError(
                f"a token boundary cuts the known syllable {syllable!r} at character {at:,} of a line: "
                f"...{around!r}..."
            )
    other = without_scripts(lines, ext.scripts)
    diff = first_difference(ext.base.encode_ordinary, tok.encode_ordinary, other)
    if diff:
        raise ExtensionCheckError(f"text without {ext.scripts.label} differs from the base: {diff[0][:80]!r}")
    # Built on a helper thread: Hugging Face's load of a large vocabulary runs long without a look
    # at Ctrl-C, which the main thread, waiting, takes at once.
    with Background(1, name="wwho-extend-check") as helper:
        hf = helper.submit(lambda: Tokenizer.from_str(json.dumps(tokenizer_json(ext.model)))).result()
    diff = first_difference(lambda t: tok.encode(t, allowed_special="all"), hf_encoder(hf), [*lines, *other])
    if diff:
        raise ExtensionCheckError(
            f"stock tokenizers differs from wwho on {diff[0][:80]!r}: {diff[2][:12]} vs {diff[1][:12]}"
        )
