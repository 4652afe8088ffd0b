"""``vocab.json``: the SGPE vocabulary file (spec 000 section 3.7, extended), read and written.

Fields of spec 000: ``version``, ``vocab_size``, ``special_tokens``, ``num_merges``,
``prune_freq``, ``leading_space``, ``merges`` (string pairs, in rank order) and ``vocab``
(token -> id: specials first, then by final corpus frequency, then the rest). wwho adds
``format`` (``wwho-sgpe/1``), ``script`` (a script mode: a bundled script, ``mixed`` or ``indic``), ``scripts``
(the schemas the mode covers; checked on load),
``min_freq``, ``fallback`` (``"bytes"``: the 256 tokens ``<0x00>``..``<0xFF>`` are in the
vocabulary and unknown text falls back to them; ``"unk"``: spec 000's ``[UNK]``), and
``syllable_merges``, the merges that rebuild each syllable from code points
(:mod:`wwho.sgpe.building`), ranked before ``merges``.

Format 2 (``wwho-sgpe/2``, written only when one of these is not spec 000's choice) adds
``merge_scope`` (:mod:`wwho.sgpe.scopes`), ``prefix_space`` (the dummy space) and
``superword_merges`` (:mod:`wwho.sgpe.superwords`, ranked after ``merges``), and, only when true,
``split_punctuation`` (the scripts' own punctuation ends a word: :func:`wwho.words.word_char_sets`).
A format-1 file loads as scope ``"words"``, no prefix, no superwords, punctuation in words. A reader
of format 1 only refuses a format-2 file by its ``format`` field (wwho 0.1 did not check it and would
ignore the new fields); the exported ``tokenizer.json`` carries everything in standard fields.

Loading validates everything and names what is wrong and where: ids must be the integers
0..n-1, each once; every merge's parts and result must be tokens; and every token longer
than one character must be a special or byte token or the result of a merge, which catches
a truncated merge list; no special token may take part in a merge (it would be ordinary text
too), no token may hold a lone surrogate (``tokenizer.json`` could not hold it), and every
syllable-building merge must stay inside one syllable (one across two would fire in the Hugging
Face export only). When the directory holds a ``wwho-manifest.json`` (every save
writes one), the file must match it (:func:`wwho.manifest.check_saved`). Files of the
original SGPE (``"version": "sgpe_v1.0.0"``, no byte tokens) load with ``fallback="unk"``.
Writing is atomic. This module does not tokenize.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wwho.atomic_write import write_bytes
from wwho.errors import VocabError, brief
from wwho.fileio import json_rows_bytes, parse_json, read_bytes
from wwho.manifest import HF_FILES, check_saved, check_saved_size

FORMAT = "wwho-sgpe/1"
#: Format 2 adds ``merge_scope``, ``prefix_space`` and ``superword_merges``; a file is written in it
#: only when they are not spec 000's (``"words"``, false, none): such files stay format 1.
FORMAT_2 = "wwho-sgpe/2"
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
BYTE_TOKENS = tuple(f"<0x{b:02X}>" for b in range(256))


@dataclass
class VocabFile:
    """The content of a ``vocab.json``."""

    vocab: dict[str, int]
    merges: list[tuple[str, str]]
    syllable_merges: list[tuple[str, str]] = field(default_factory=list)
    superword_merges: list[tuple[str, str]] = field(default_factory=list)
    script: str = "sinhala"
    special_tokens: tuple[str, ...] = SPECIAL_TOKENS
    prune_freq: int = 1
    min_freq: int = 2
    fallback: str = "bytes"
    leading_space: bool = True
    merge_scope: str = "words"
    prefix_space: bool = False
    split_punctuation: bool = False
    version: str = FORMAT

    @property
    def format(self) -> str:
        """The format this vocabulary is written in: format 2 where an option is not spec 000's."""
        extended = (self.merge_scope != "words" or self.prefix_space or bool(self.superword_merges)
                    or self.split_punctuation)
        return FORMAT_2 if extended else FORMAT

    @property
    def written_version(self) -> str:
        """``version`` as saved: the format, or the original SGPE's version string it was read with."""
        return self.format if self.version in (FORMAT, FORMAT_2) else self.version

    def to_json(self) -> dict[str, Any]:
        from wwho.sgpe.words import WordSplitter

        data = {
            "version": self.written_version,
            "format": self.format,
            "script": self.script,
            "scripts": list(WordSplitter(self.script).scripts),
            "vocab_size": len(self.vocab),
            "special_tokens": list(self.special_tokens),
            "num_merges": len(self.merges),
            "prune_freq": self.prune_freq,
            "min_freq": self.min_freq,
            "leading_space": self.leading_space,
            "fallback": self.fallback,
            "merges": [list(m) for m in self.merges],
            "syllable_merges": [list(m) for m in self.syllable_merges],
            "vocab": self.vocab,
        }
        if self.format == FORMAT_2:  # only then: a default file stays byte-identical to format 1
            data["merge_scope"] = self.merge_scope
            data["prefix_space"] = self.prefix_space
            data["superword_merges"] = [list(m) for m in self.superword_merges]
        if self.split_punctuation:  # only then: files of earlier versions stay byte-identical
            data["split_punctuation"] = True
        return data

    def to_bytes(self) -> bytes:
        return json_rows_bytes(self.to_json())

    def save(self, path: str | Path) -> None:
        """Write this one file (atomically). A tokenizer directory: :meth:`wwho.SGPETokenizer.save`."""
        write_bytes(path, self.to_bytes())


def load_vocab_file(path: str | Path) -> VocabFile:
    """Read and validate a ``vocab.json``; raises :class:`VocabError` naming the problem."""
    path = Path(path)
    check_saved_size(path)
    data = read_bytes(path, error=VocabError)
    check_saved(path.parent, {path.name: data}, unread=HF_FILES)
    return parse_vocab(parse_json(data, source=str(path), error=VocabError), source=str(path))


def parse_vocab(data: Any, *, source: str = "<vocab>") -> VocabFile:
    def fail(msg: str) -> VocabError:
        return VocabError(f"{source}: {msg}")

    if not isinstance(data, dict):
        raise fail("a vocab.json is a JSON object")
    for key in ("vocab", "merges", "special_tokens"):
        if key not in data:
            raise fail(f"missing key {key!r}")
    vocab = data["vocab"]
    if not isinstance(vocab, dict) or not vocab:
        raise fail("'vocab' must be a non-empty object of token -> id")
    by_id: dict[int, str] = {}
    for token, i in vocab.items():
        if not token:
            raise fail(f"'vocab' entry {brief(token)}: an empty token; tokens are non-empty strings")
        if type(i) is not int:
            raise fail(f"'vocab' entry {brief(token)}: {brief(i)} is not an id; ids are integers")
        if _SURROGATE.search(token):
            # JSON can write one ("\\ud800"), but it is no Unicode: tokenizer.json could not hold it.
            raise fail(f"'vocab' entry {brief(token)} holds a lone surrogate: a token is valid Unicode")
        if not 0 <= i < len(vocab):
            raise fail(f"'vocab' entry {brief(token)}: id {brief(i)} is out of range "
                       f"(ids are 0..{len(vocab) - 1})")
        if i in by_id:
            raise fail(f"'vocab' entries {brief(by_id[i])} and {brief(token)} have the same id {i}")
        by_id[i] = token
    if "vocab_size" in data and (type(data["vocab_size"]) is not int or data["vocab_size"] != len(vocab)):
        raise fail(f"'vocab_size' is {brief(data['vocab_size'])} but 'vocab' has {len(vocab)} entries")
    specials = data["special_tokens"]
    if not isinstance(specials, list) or not all(isinstance(s, str) for s in specials):
        raise fail("'special_tokens' must be a list of strings")
    for s in specials:
        if s not in vocab:
            raise fail(f"special token {brief(s)} is not in 'vocab'")
    if len(set(specials)) != len(specials):
        raise fail("'special_tokens' lists a token twice")

    def merge_list(key: str) -> list[tuple[str, str]]:
        value = data.get(key, [])
        if not isinstance(value, list):
            raise fail(f"'{key}' must be a list of [left, right] pairs")
        out = []
        for i, m in enumerate(value):
            if not (isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) and x for x in m)):
                raise fail(f"'{key}'[{i}]: a merge is a pair of non-empty strings, got {brief(m)}")
            a, b = m
            for part in (a, b, a + b):
                if part not in vocab:
                    raise fail(f"'{key}'[{i}] ({brief(a, 40)}, {brief(b, 40)}): {brief(part)} is not in 'vocab'")
            out.append((a, b))
        return out

    merges = merge_list("merges")
    syllable_merges = merge_list("syllable_merges")
    superword_merges = merge_list("superword_merges")
    if "num_merges" in data and (type(data["num_merges"]) is not int or data["num_merges"] != len(merges)):
        raise fail(f"'num_merges' is {brief(data['num_merges'])} but 'merges' has {len(merges)}")
    version = data.get("version", FORMAT)
    if not isinstance(version, str):
        raise fail(f"'version' must be a string, not {brief(version)}")
    if version not in (FORMAT, FORMAT_2) and not _ORIGINAL_VERSION.fullmatch(version):
        # Another version would skip the checks of wwho's own files (a cut-short merge list).
        raise fail(f"'version' is {brief(version)}; this wwho reads {FORMAT!r}, {FORMAT_2!r} and the original "
                   "SGPE's 'sgpe_v1.0.0'")
    if data.get("format", FORMAT) not in (FORMAT, FORMAT_2):
        raise fail(f"'format' is {brief(data['format'])}; this wwho reads {FORMAT!r} and {FORMAT_2!r}")
    fallback = data.get("fallback", "bytes" if version in (FORMAT, FORMAT_2) else "unk")
    if fallback not in ("bytes", "unk"):
        raise fail(f"'fallback' must be 'bytes' or 'unk', not {brief(fallback)}")
    counts = {}
    for key, default in (("prune_freq", 1), ("min_freq", 2)):
        value = data.get(key, default)
        if type(value) is not int or value < 1:
            raise fail(f"{key!r} must be a positive integer, not {brief(value)}")
        counts[key] = value
    if fallback == "bytes":
        missing = [t for t in BYTE_TOKENS if t not in vocab]
        if missing:
            raise fail(f"fallback 'bytes' needs the 256 byte tokens; missing {missing[:3]}...")
    if fallback == "unk" and "[UNK]" not in vocab:
        raise fail("fallback 'unk' needs the token '[UNK]' in 'vocab'")
    script = data.get("script", data.get("script_mode", "sinhala"))
    from wwho.sgpe.words import SCRIPT_MODES, mode_scripts

    if script not in SCRIPT_MODES:
        # A vocabulary names its script; the schema is wwho's (a schema file of one's own is not saved
        # with it: docs/schemas.md, "Adding a script").
        raise fail(f"'script' must be one of {', '.join(SCRIPT_MODES)}, not {brief(script)}: the vocabulary was "
                   "trained with a schema this wwho does not bundle (a vocabulary names its script's schema, "
                   "and does not hold it)")
    if "scripts" in data and data["scripts"] != list(mode_scripts(script)):
        raise fail(f"'scripts' is {brief(data['scripts'])} but script mode {script!r} covers "
                   f"{list(mode_scripts(script))!r}")
    if data.get("leading_space", True) is False:
        raise fail("'leading_space' false is not supported (SGPE vocabularies are trained with leading spaces)")
    if data.get("leading_space", True) is not True:
        raise fail(f"'leading_space' must be true, not {brief(data['leading_space'])}")
    from wwho.sgpe.scopes import MERGE_SCOPES

    scope = data.get("merge_scope", "words")
    if scope not in MERGE_SCOPES:
        raise fail(f"'merge_scope' must be one of {', '.join(MERGE_SCOPES)}, not {brief(scope)}")
    prefix_space = data.get("prefix_space", False)
    if type(prefix_space) is not bool:
        raise fail(f"'prefix_space' must be true or false, not {brief(prefix_space)}")
    split_punctuation = data.get("split_punctuation", False)
    if type(split_punctuation) is not bool:
        raise fail(f"'split_punctuation' must be true or false, not {brief(split_punctuation)}")
    _check_specials(specials, {"merges": merges, "syllable_merges": syllable_merges,
                               "superword_merges": superword_merges}, fail)
    if version in (FORMAT, FORMAT_2):
        _check_reachable(vocab, [*merges, *syllable_merges, *superword_merges], specials, fail)
    _check_building(syllable_merges, script, split_punctuation, fail)
    return VocabFile(
        vocab=dict(vocab),
        merges=merges,
        syllable_merges=syllable_merges,
        superword_merges=superword_merges,
        script=script,
        special_tokens=tuple(specials),
        prune_freq=counts["prune_freq"],
        min_freq=counts["min_freq"],
        fallback=fallback,
        merge_scope=scope,
        prefix_space=prefix_space,
        split_punctuation=split_punctuation,
        version=version,
    )


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_specials(specials, lists, fail) -> None:
    """No special token is a part or the result of a merge (the trainer refuses such a vocabulary).

    Such a token is ordinary text too: encoding would give its special id for plain text (whatever
    ``allowed_special`` says), and ``decode(..., skip_special_tokens=True)`` would drop that text.
    """
    special = set(specials)
    for key, merges in lists.items():
        for i, (a, b) in enumerate(merges):
            for part in (a, b, a + b):
                if part in special:
                    raise fail(f"special token {brief(part)} is also an ordinary token ('{key}'[{i}]: "
                               f"{brief(a, 40)} + {brief(b, 40)}): plain text would encode to its id")


def _check_building(syllable_merges, script, split_punctuation, fail) -> None:
    """Every syllable-building merge stays inside one syllable or boundary token.

    The native encoder builds only the syllables it does not know, from their characters, while
    the exported BPE runs these merges over whole words: one that joins the end of a syllable to
    the start of the next would fire in the export only, and its ids would differ. A merge's result
    is one unit, or the start of a unit another building merge completes: a schema may have
    syllables whose first characters are no syllable alone (Tamil's ஸ்ரீ, built through ஸ்ர).
    """
    from wwho.sgpe.words import WordSplitter

    split = WordSplitter(script, split_punctuation=split_punctuation).split

    def units(text: str) -> list[str]:
        return [u for _, us in split(text) for u in us]

    starts: set[str] | None = None  # the starts of the units the merges build, made if needed
    for i, (a, b) in enumerate(syllable_merges):
        found = units(a + b)
        if len(found) == 1:
            continue
        if starts is None:
            built = {x + y for x, y in syllable_merges}
            starts = {t[:k] for t in built if len(units(t)) == 1 for k in range(2, len(t))}
        if a + b not in starts:
            raise fail(f"'syllable_merges'[{i}] ({brief(a, 40)}, {brief(b, 40)}) joins {len(found)} syllables "
                       f"or boundary tokens {brief(found, 80)}: a building merge stays inside one (if an earlier "
                       f"wwho trained it, whose {script!r} schema did not split them, train it again)")


#: The original SGPE's ``version`` (spec 000: ``"sgpe_v1.0.0"``), whose syllable tokens come from no merge.
_ORIGINAL_VERSION = re.compile(r"sgpe_v1(\.\d+){0,2}")


def _check_reachable(vocab, merges, specials, fail) -> None:
    """Every token of more than one character is a special or byte token or a merge result.

    Training builds every base symbol with the syllable-building merges and every longer token
    with a learned merge, so a token that no merge produces means a truncated merge list (the
    encoder could never produce it, and the HF export would differ).
    """
    results = {a + b for a, b in merges}
    fixed = set(specials) | set(BYTE_TOKENS)
    lost = [t for t in vocab if len(t) > 1 and t not in results and t not in fixed]
    if lost:
        first = min(lost, key=vocab.__getitem__)
        raise fail(f"{len(lost)} tokens are the result of no merge, e.g. {brief(first)} (id {vocab[first]}): the "
                   "merge lists ('merges', 'syllable_merges', 'superword_merges') look truncated")
