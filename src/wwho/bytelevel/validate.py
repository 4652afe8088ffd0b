"""Checks of a :class:`ByteLevelModel` read from a file, before anything is built from it.

Every loader (wwho's directory, Hugging Face ``tokenizer.json``, GGUF, ``.tiktoken``) calls
:func:`check_model`, which refuses what would load silently wrong:

* ids that are not integers (``true``, ``"5"``, ``2.0``), negative, used twice, or far beyond
  the vocabulary (``2**63``; at most :data:`MAX_ID_GAP` ids may be unused, o200k_base leaves 19);
* merges (merges rule) whose parts or result are not tokens;
* tokens of more than one byte that no merge produces (merges rule): a merge list cut short,
  from a truncated ``merges.txt`` or ``tokenizer.json``. Every byte-level BPE vocabulary in
  ``shared/data`` (ten GGUF models, 50k to 256k tokens) has none;
* ``bos_id``/``eos_id``/``pad_id`` that are not token ids.

Errors name the source file and the first offending entry. A ``.tiktoken`` file cut at a line
end is a smaller valid vocabulary and cannot be told from one, except by a recorded size or
sha256 (known encodings, wwho's ``bytelevel.json``); that check is the loaders'.

The options a model is built from by hand are checked here too, for the constructor, the
``.tiktoken`` loader and the trainer alike: :func:`pretokenizer_option` (a misspelt name such as
``gpt-4`` is an error, not a regex that matches nothing), :func:`table_option` (a dict, not
a list of names) and :func:`merges_option` (pairs of bytes, not of strings). This module reads
no files and does not encode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral

from wwho import _core
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import Pretokenizer
from wwho.errors import VocabError, brief

#: Ids are below 2**31 (HF tokenizers stores u32; embeddings are indexed by int32 or int64).
MAX_ID = 1 << 31
#: How many ids below the largest one may be unassigned (o200k_base: 19, GGUF/HF files: 0).
MAX_ID_GAP = 1 << 16


def pretokenizer_option(pattern: object, option: str = "pattern") -> Pretokenizer:
    """``pattern`` as a :class:`Pretokenizer`: a name (``gpt2``, ``gpt4``, ``o200k``, a GGUF name), one
    regex, a list of regexes or a ``Pretokenizer``. A :class:`VocabError` naming ``option`` for
    another type, and for a word that is no known name (``gpt-4``, ``o200k-base``)."""
    if not isinstance(pattern, (str, list, tuple, Pretokenizer)):
        raise VocabError(f"{option} must be a name, a regex or a list of regexes, not {brief(pattern)}")
    try:
        return Pretokenizer.coerce(pattern)  # a misspelt name is refused there
    except VocabError as exc:
        raise VocabError(f"{option}: {exc}") from None


def table_option(value: object, option: str, what: str, *, optional: bool = True) -> dict:
    """``value`` (a mapping, or None for none where ``optional``) as a new dict; a :class:`VocabError`
    naming ``option`` for anything else (``dict(["<|end|>"])`` fails with a message that names nothing)."""
    if value is None and optional:
        return {}
    if not isinstance(value, Mapping):
        raise VocabError(f"{option} must be a dict of {what}, not {brief(value)}")
    # Ids as Python ints: a numpy integer (an id read from an array) would fail the id checks.
    # The types are asked in bulk first: a table of 200,000 plain ints and bytes (every loader's)
    # is copied as it is, without two calls per entry.
    if (set(map(type, value)) | set(map(type, value.values()))) <= _PLAIN:
        return dict(value)
    return {_plain_int(k): _plain_int(v) for k, v in value.items()}


def merges_option(merges: Sequence[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``merges`` as a new list of ``(bytes, bytes)`` tuples. A list of them already (what every
    loader gives) is only copied, its items being immutable: rebuilding every tuple would be a
    visible part of loading a large GGUF file."""
    pairs = list(merges)
    if _core.are_byte_pairs(pairs):
        return pairs
    out = []
    for i, pair in enumerate(pairs):
        try:
            a, b = pair
            if isinstance(a, str) or isinstance(b, str):  # bytes("ab") is a TypeError without a word of why
                raise TypeError
            out.append((bytes(a), bytes(b)))
        except (TypeError, ValueError):
            raise VocabError(f"merges[{i}]: expected a pair of bytes, not {brief(pair)}") from None
    return out


#: Types :func:`_plain_int` returns as they are.
_PLAIN = frozenset({int, bool, bytes, str})


def cache_bytes_option(cache_bytes: object) -> int:
    """``cache_bytes`` (of a byte-level tokenizer, or the meta tokenizer's byte-level part): an int
    in [0, 2**63), never a bool."""
    if type(cache_bytes) is not int or not 0 <= cache_bytes < 1 << 63:
        raise VocabError(f"cache_bytes must be an int in [0, 2**63), not {brief(cache_bytes)}")
    return cache_bytes


def _plain_int(value: object) -> object:
    """A numpy (or other) integer as an ``int``; anything else, bools included, as it is."""
    if isinstance(value, Integral) and not isinstance(value, (int, bool)):
        return int(value)
    return value




def is_id(value: object) -> bool:
    """Whether :func:`check_id` accepts ``value`` (a loop over 128,000 ids asks this first and
    words a message only for the one that fails)."""
    return type(value) is int and 0 <= value < MAX_ID


def all_ids(ids: list) -> bool:
    """:func:`is_id` of every one of ``ids`` (none: True), in bulk: C-speed set and min/max work."""
    return not ids or (set(map(type, ids)) == {int} and 0 <= min(ids) and max(ids) < MAX_ID)


def check_id(value: object, source: str, what: str) -> int:
    """An id read from a file: a non-negative ``int`` below :data:`MAX_ID` (not a bool or float)."""
    if is_id(value):
        return value
    if type(value) is not int:
        raise VocabError(f"{source}: {what}: id {brief(value)} is not an integer")
    if not 0 <= value < MAX_ID:
        raise VocabError(f"{source}: {what}: id {brief(value)} is out of range [0, 2**31)")
    return value


def check_model(model: ByteLevelModel, source: str, *, merges_checked: bool = False,
                lost_hint: str = "") -> ByteLevelModel:
    """Raise :class:`VocabError` naming ``source`` and the entry if ``model`` is inconsistent
    (``merges_checked``: the loader already ran the merges check, see :func:`merge_problem`;
    ``lost_hint``: what else tokens no merge makes may be, in the file's terms, added to that error)."""
    if not _ids_look_right(model):
        _check_ids(model, source)  # finds the first offending entry and raises
    owner = set(model.ranks.values()) | set(model.special_tokens.values()) | set(model.added_tokens.values())
    owner |= set(model.extra_tokens)
    for label, value in (("bos_id", model.bos_id), ("eos_id", model.eos_id), ("pad_id", model.pad_id)):
        if value is not None and check_id(value, source, label) not in owner:
            raise VocabError(f"{source}: {label} {value} is not the id of any token")
    for label, asked, value in (("bos", model.add_bos, model.bos_id), ("eos", model.add_eos, model.eos_id)):
        if asked and value is None:  # nothing would be added, in silence
            raise VocabError(f"{source}: add_{label} is true but there is no {label}_id: no token to add")
    if model.merges is not None and not merges_checked:
        _check_merges(model, source, lost_hint)
    return model


def _ids_look_right(model: ByteLevelModel) -> bool:
    """All the id rules of :func:`_check_ids` at once, in bulk (C-speed set and min/max work): a
    vocabulary of 200,000 tokens is checked in milliseconds; only a failing one is walked."""
    ids = [*model.ranks.values(), *model.special_tokens.values(), *model.added_tokens.values(),
           *model.extra_tokens]
    return bool(ids) and all_ids(ids) and len(set(ids)) == len(ids) and max(ids) < len(ids) + MAX_ID_GAP


def _check_ids(model: ByteLevelModel, source: str) -> None:
    owner: dict[int, str] = {}
    groups = (
        ("token", ((i, t) for t, i in model.ranks.items())),
        ("special token", ((i, t) for t, i in model.special_tokens.items())),
        ("added token", ((i, t) for t, i in model.added_tokens.items())),
        ("decode-only token", model.extra_tokens.items()),
    )
    spelled = {i: t for t, i in model.ranks.items()}
    for label, pairs in groups:
        for i, token in pairs:
            what = f"{label} {brief(token, 60)}"
            check_id(i, source, what)
            if i in owner:
                if isinstance(token, str) and spelled.get(i) == token.encode("utf-8", "surrogatepass") \
                        and owner[i].startswith("token "):
                    continue  # an added or special token that is also the ordinary token of its bytes
                raise VocabError(f"{source}: id {i} belongs to both {owner[i]} and {what}")
            owner[i] = what
    if not owner:
        raise VocabError(f"{source}: no tokens")
    top = max(owner)
    if top >= len(owner) + MAX_ID_GAP:
        raise VocabError(f"{source}: {owner[top]} has id {top}, far beyond the {len(owner):,} tokens "
                         f"(at most {MAX_ID_GAP:,} ids may be unused)")


def _check_merges(model: ByteLevelModel, source: str, lost_hint: str = "") -> None:
    # In the core: a check of every merge (Llama 3 has 280,000) in Python sets was a cost of every load.
    try:
        found = _core.check_merges(model.ranks, list(model.merges))
    except TypeError:
        raise VocabError(f"{source}: tokens must be bytes and merges (bytes, bytes) tuples") from None
    if found is not None:
        error = merge_problem(model, source, found)
        raise VocabError(f"{error}{lost_hint}") if lost_hint and found[0] == "lost" else error


def merge_problem(model: ByteLevelModel, source: str, found: tuple) -> VocabError:
    """The error for what the core's merges check found: ``("part", k, part)`` or ``("lost",
    count, first, id)`` (a loader that ran the check itself words it the same way)."""
    if found[0] == "part":
        _, k, part = found
        a, b = model.merges[k]
        return VocabError(f"{source}: merge {k} ({_show(a)} + {_show(b)}): {_show(part)} is not a token")
    _, count, first, id_ = found
    return VocabError(
        f"{source}: {count:,} tokens of several bytes are the result of no merge, e.g. "
        f"{_show(first)} (id {id_}): the merge list ({len(model.merges):,} merges) looks truncated")


def _show(data: bytes) -> str:
    return brief(data.decode("utf-8", "backslashreplace"), 40)
