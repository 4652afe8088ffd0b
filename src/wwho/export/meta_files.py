"""The files of a meta tokenizer directory (spec 001 section 3.5), written and read.

A directory written by :meth:`wwho.MetaTokenizer.save` (or ``wwho train --meta``) holds:

* ``vocab.json``: the SGPE part, in SGPE's own ids (the ``wwho-sgpe/1`` format);
* ``meta_config.json``: what joins the two: the offset (= tiktoken's ``n_vocab``), the
  tiktoken encoding's name and the sha256 of its ranks, the SGPE vocabulary size and
  file, the total size, a format version; for an encoding its name does not tell (version 2,
  :func:`custom_part`), its special tokens and pre-tokenizer too. Loading checks every field, and checks the
  sha256 against the ranks tiktoken actually uses (from its cache or a given file);
* ``tokenizer_meta.json``: a serialization of the unified vocabulary for other tools:
  every SGPE token with its unified (offset) id, SGPE's merges, and the tiktoken part
  described by name, ``n_vocab``, sha256, specials and unassigned ids (the ranks
  themselves are tiktoken's file, not copied). It is **not** a Hugging Face
  ``tokenizers`` file: no HF class can run it (nothing in HF routes scripts to two
  models). wwho never reads it back; it is derived from the two files above.

The three files are one save (:func:`wwho.savedir.save_files`): a killed save leaves the old
directory or the new one, and loading checks them against ``wwho-manifest.json``. There are deliberately no ``tokenizer.json`` files for the
SGPE part here: ``AutoTokenizer`` would load them as a tokenizer of the SGPE ids alone,
silently giving different ids. This module does not tokenize, and does not import the
tokenizer (``tok`` is a :class:`wwho.MetaTokenizer`; :meth:`~wwho.MetaTokenizer.load` reads the
files back through :func:`read_meta_config`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from wwho.errors import VocabError, brief
from wwho.fileio import json_bytes, parse_json, read_bytes
from wwho.manifest import check_saved, check_saved_size, listed, member
from wwho.savedir import save_files

CONFIG_FILE = "meta_config.json"
META_FILE = "tokenizer_meta.json"
VOCAB_FILE = "vocab.json"
CONFIG_FORMAT = "wwho-meta-config/1"
META_FORMAT = "wwho-meta-vocab/1"
FORMAT_VERSION = 1
#: The version of a config that also holds the byte-level part's special tokens and pre-tokenizer
#: (:func:`custom_part`): a wwho that reads version 1 only refuses it rather than load other ids.
CUSTOM_FORMAT_VERSION = 2


def custom_part(tok: Any) -> dict[str, Any] | None:
    """The byte-level part's special tokens and pre-tokenizer, where the encoding's name does not
    tell them: any name but a known encoding's (``o200k_base``...), or one whose special tokens or
    pre-tokenizer differ from that encoding's (a ``tiktoken.Encoding`` with chat tokens added).
    None for a known encoding as tiktoken ships it, whose config stays version 1."""
    from wwho.bytelevel.files import TIKTOKEN_ENCODINGS
    from wwho.bytelevel.pretokenize import Pretokenizer

    known = TIKTOKEN_ENCODINGS.get(tok.tiktoken.name)
    pattern = tok._pattern
    if known is not None and tok.tiktoken_specials == known.special_tokens:
        named = Pretokenizer.named(known.name)
        if (pattern.patterns, pattern.byte_patterns) == (named.patterns, named.byte_patterns):
            return None
    return {"tiktoken_special_tokens": dict(sorted(tok.tiktoken_specials.items(), key=lambda kv: kv[1])),
            "tiktoken_pretokenizer": pattern.to_json()}


def meta_config(tok: Any) -> dict[str, Any]:
    part = tok.tiktoken
    custom = custom_part(tok)
    return {
        "format": CONFIG_FORMAT,
        "format_version": FORMAT_VERSION if custom is None else CUSTOM_FORMAT_VERSION,
        **(custom or {}),
        "offset": tok.offset,
        "tiktoken_encoding": part.name,
        "tiktoken_n_vocab": part.n_vocab,
        "tiktoken_sha256": part.sha256,
        "sgpe_vocab": VOCAB_FILE,
        "sgpe_vocab_size": tok.sgpe.vocab_size,
        "sgpe_script": tok.sgpe.script,
        "vocab_size": tok.vocab_size,
    }


def meta_vocab_json(tok: Any) -> dict[str, Any]:
    """The content of ``tokenizer_meta.json`` (see the module docstring)."""
    part = tok.tiktoken
    sgpe = tok.sgpe
    return {
        "format": META_FORMAT,
        "about": ("The unified id space of a WWHO meta tokenizer: ids [0, offset) are the tiktoken encoding's "
                  "own ids, ids [offset, vocab_size) are the SGPE tokens below. Not a Hugging Face tokenizers "
                  "file and not loadable by any HF class: use wwho.MetaTokenizer.load(directory) or "
                  "wwho.hf.WWHOTokenizer.from_pretrained(directory)."),
        "vocab_size": tok.vocab_size,
        "tiktoken": {
            "encoding": part.name,
            "n_vocab": part.n_vocab,
            "ranks_sha256": part.sha256,
            "ids": [0, part.n_vocab],
            "special_tokens": dict(sorted(part.special_tokens.items(), key=lambda kv: kv[1])),
            "unassigned_ids": part.unassigned,
        },
        "sgpe": {
            "offset": tok.offset,
            "ids": [tok.offset, tok.vocab_size],
            "script": sgpe.script,
            "fallback": sgpe.fallback,
            "special_tokens": {s: tok.offset + sgpe.vocab[s] for s in sgpe.special_tokens},
            "vocab": {t: tok.offset + i for t, i in sgpe.vocab.items()},
            "syllable_merges": [list(m) for m in sgpe.syllable_merges],
            "merges": [list(m) for m in sgpe.merges],
            # what else the encoder needs (wwho.sgpe.vocabfile's format 2): without them the merges
            # above would be applied in the wrong scope, and the superword tokens never made
            "merge_scope": sgpe.merge_scope,
            "prefix_space": sgpe.prefix_space,
            "superword_merges": [list(m) for m in sgpe.superword_merges],
        },
    }


#: The module :class:`wwho.hf.WWHOTokenizer`'s ``save_pretrained`` writes beside the files, which the
#: ``auto_map`` of transformers' ``tokenizer_config.json`` names for ``AutoTokenizer``.
AUTO_MODULE = "tokenization_wwho"
AUTO_MODULE_SOURCE = (
    '"""Lets transformers.AutoTokenizer load this directory (trust_remote_code=True): '
    'the class is wwho\'s own (pip install \'wwho[hf]\')."""\n\n'
    "from wwho.hf import WWHOTokenizer\n\n"
    '__all__ = ["WWHOTokenizer"]\n'
)


def save_meta(tok: Any, directory: str | os.PathLike, *, extra: dict[str, bytes] | None = None) -> Path:
    """Write the three files as one save (:func:`wwho.savedir.save_files`: all or nothing);
    ``extra``: more files of the same save (:class:`wwho.hf.WWHOTokenizer`'s module for ``AutoTokenizer``).
    A directory whose last save had that module keeps it: transformers' ``tokenizer_config.json``,
    which is not wwho's and stays, names it, and without it ``AutoTokenizer`` could not load the
    directory any more."""
    extra = dict(extra or {})
    module = f"{AUTO_MODULE}.py"
    if module not in extra and module in listed(Path(directory)):
        extra[module] = AUTO_MODULE_SOURCE.encode("utf-8")
    files = {
        VOCAB_FILE: tok.sgpe.file.to_bytes(),
        META_FILE: json_bytes(meta_vocab_json(tok), indent=None),
        CONFIG_FILE: json_bytes(meta_config(tok)),
    }
    clash = set(files) & set(extra)
    if clash:
        raise VocabError(f"save_meta: extra files may not replace {sorted(clash)}")
    save_files(directory, {**files, **extra}, kind="meta")
    return Path(directory) / CONFIG_FILE


def read_meta_config(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate ``meta_config.json`` (and the directory's manifest); raises
    :class:`VocabError` naming the key."""
    path = Path(path)
    check_saved_size(path)
    raw = read_bytes(path, error=VocabError, what=f"file (a meta tokenizer directory has {CONFIG_FILE})")
    check_saved(path.parent, {path.name: raw})
    data = parse_json(raw, source=str(path), error=VocabError, surrogates=False)
    if not isinstance(data, dict):
        raise VocabError(f"{path}: a {CONFIG_FILE} is a JSON object")
    if data.get("format", CONFIG_FORMAT) != CONFIG_FORMAT:
        raise VocabError(f"{path}: 'format' is {brief(data['format'])}, not {CONFIG_FORMAT!r}")
    if type(data.get("format_version")) is not int or data["format_version"] not in (FORMAT_VERSION,
                                                                                     CUSTOM_FORMAT_VERSION):
        raise VocabError(f"{path}: 'format_version' is {brief(data.get('format_version'))}; this wwho reads versions "
                         f"{FORMAT_VERSION} and {CUSTOM_FORMAT_VERSION}")
    if data["format_version"] == CUSTOM_FORMAT_VERSION:
        specials = data.get("tiktoken_special_tokens")
        if not isinstance(specials, dict) or not all(
                type(i) is int and 0 <= i < 1 << 31 for i in specials.values()):
            raise VocabError(f"{path}: 'tiktoken_special_tokens' must be an object of token -> id, not "
                             f"{brief(specials)}")
        if not isinstance(data.get("tiktoken_pretokenizer"), dict):
            raise VocabError(f"{path}: 'tiktoken_pretokenizer' must be an object (a pre-tokenizer), not "
                             f"{brief(data.get('tiktoken_pretokenizer'))}")
    kinds = {"offset": int, "tiktoken_encoding": str, "tiktoken_n_vocab": int, "tiktoken_sha256": str,
             "sgpe_vocab": str, "sgpe_vocab_size": int, "vocab_size": int}
    for key, kind in kinds.items():
        if key not in data:
            raise VocabError(f"{path}: missing key {key!r}")
        if type(data[key]) is not kind:
            raise VocabError(f"{path}: {key!r} must be a {kind.__name__}, not {brief(data[key])}")
        if kind is int and not 0 <= data[key] < 1 << 31:
            raise VocabError(f"{path}: {key!r} is {brief(data[key])}, out of range for a vocabulary")
    if data["offset"] != data["tiktoken_n_vocab"]:
        raise VocabError(f"{path}: 'offset' {data['offset']} is not 'tiktoken_n_vocab' {data['tiktoken_n_vocab']}")
    if data["vocab_size"] != data["offset"] + data["sgpe_vocab_size"]:
        raise VocabError(f"{path}: 'vocab_size' {data['vocab_size']} is not offset + sgpe_vocab_size "
                         f"({data['offset']} + {data['sgpe_vocab_size']})")
    if "sgpe_script" in data and type(data["sgpe_script"]) is not str:
        raise VocabError(f"{path}: 'sgpe_script' must be a str, not {brief(data['sgpe_script'])}")
    member(path.parent, data["sgpe_vocab"], source=str(path), key="'sgpe_vocab'")
    return data
