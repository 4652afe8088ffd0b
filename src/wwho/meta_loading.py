"""A saved meta tokenizer directory read back into its parts, each checked against ``meta_config.json``.

:meth:`wwho.MetaTokenizer.load` calls :func:`load_parts`: the byte-level part is found as for its
name (:mod:`wwho.meta_tiktoken`; offline: ``tiktoken_file=``, ``WWHO_TIKTOKEN_FILE``, tiktoken's
cache), or from the special tokens and pre-tokenizer a version-2 config holds, and its ranks'
sha256 and ``n_vocab`` must be the config's; the SGPE part is the vocabulary file the config
names, of the size and script it says. This module does not build the tokenizer (the caller
does, from the parts), does not parse or write the files (:mod:`wwho.export.meta_files` does) and
does not encode.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from wwho.bytelevel.model import ByteLevelModel
from wwho.errors import VocabError, brief
from wwho.meta_tiktoken import TiktokenPart, byte_level_part, saved_byte_level_part


def load_parts(directory: str | os.PathLike,
               tiktoken_file: str | os.PathLike | None) -> tuple[Any, ByteLevelModel, TiktokenPart]:
    """The SGPE tokenizer, the byte-level model and the tiktoken part's facts of a directory written
    by :meth:`wwho.MetaTokenizer.save` or ``wwho train --meta``, each checked against its config."""
    from wwho.export.meta_files import CONFIG_FILE, read_meta_config
    from wwho.fileio import tokenizer_path
    from wwho.manifest import member
    from wwho.sgpe import SGPETokenizer

    directory = Path(tokenizer_path(directory, "MetaTokenizer.load"))
    path = directory / CONFIG_FILE
    config = read_meta_config(path)
    name = config["tiktoken_encoding"]
    if "tiktoken_pretokenizer" in config:  # version 2: an encoding its name does not tell
        model, part = saved_byte_level_part(name, config, tiktoken_file, path)
    else:
        try:
            model, part = byte_level_part(name, tiktoken_file)
        except VocabError as exc:
            raise VocabError(f"{path}: needs the tiktoken encoding {brief(name)}: {exc}") from None
    if part.sha256 != config["tiktoken_sha256"]:
        from wwho.tiktoken_file import ranks_file_for

        named = ranks_file_for(name, tiktoken_file)  # the file read, as the loaders choose it
        where = f"{named[0]}, from {named[1]}" if named else "tiktoken's cache"
        raise VocabError(f"{path}: was made with {name[:80]} ranks of sha256 {config['tiktoken_sha256'][:80]}, but the "
                         f"ranks in use ({where}) have sha256 {part.sha256}; ids would not match")
    if part.n_vocab != config["offset"]:
        raise VocabError(f"{path}: 'offset' {config['offset']} is not {name[:80]}'s n_vocab {part.n_vocab}")
    vocab_path = member(directory, config["sgpe_vocab"], source=str(path), key="'sgpe_vocab'")
    sgpe = SGPETokenizer.load(vocab_path)
    if sgpe.vocab_size != config["sgpe_vocab_size"]:
        raise VocabError(f"{path}: 'sgpe_vocab_size' is {config['sgpe_vocab_size']} but "
                         f"{vocab_path} has {sgpe.vocab_size} tokens")
    if config.get("sgpe_script", sgpe.script) != sgpe.script:  # the router would send other text to SGPE
        raise VocabError(f"{path}: 'sgpe_script' is {brief(config['sgpe_script'])} but {vocab_path} is a "
                         f"{sgpe.script!r} vocabulary")
    if sgpe.prefix_space:
        raise VocabError(f"{vocab_path}: trained with prefix_space, which a meta tokenizer's SGPE part "
                         "cannot be (see MetaTokenizer)")
    return sgpe, model, part
