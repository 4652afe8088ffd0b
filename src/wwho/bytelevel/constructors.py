"""The work behind :class:`~wwho.bytelevel.ByteBPE`'s constructors and file methods, as functions of a model.

Each constructor of ``ByteBPE`` (``from_tiktoken``, ``from_gguf``, ``from_hf``, ``load``) finds a
:class:`~wwho.bytelevel.model.ByteLevelModel` here and wraps it (``ByteBPE.from_model``, with the
keyword arguments :func:`model_options` gives); ``save`` hands its model to :func:`save_model`.
The paths are checked first (:func:`checked_path`), errors naming the ``ByteBPE`` method; the
formats themselves are :mod:`wwho.bytelevel.files`, :mod:`wwho.bytelevel.hf_files` and
:mod:`wwho.bytelevel.gguf`, imported on first use. :func:`describe` writes ``ByteBPE.describe``'s
summary of a model. Training is :mod:`wwho.bytelevel.train`, which the ``train*`` methods call
directly. This module does not import ``ByteBPE`` (the file modules below it do not either), reads
no format itself and does not encode.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from wwho.bytelevel.model import ByteLevelModel
from wwho.errors import VocabError


def model_options(model: ByteLevelModel) -> dict[str, Any]:
    """The keyword arguments of ``ByteBPE(model.ranks, ...)`` that build ``model``'s tokenizer."""
    return dict(
        pattern=model.pattern,
        special_tokens=model.special_tokens,
        merges=model.merges,
        ignore_merges=model.ignore_merges,
        added_tokens=model.added_tokens,
        extra_tokens=model.extra_tokens,
        bos_id=model.bos_id,
        eos_id=model.eos_id,
        pad_id=model.pad_id,
        add_bos=model.add_bos,
        add_eos=model.add_eos,
        name=model.name,
        chat_template=model.chat_template,
    )


def checked_path(path: object, method: str) -> str | os.PathLike:
    """``path`` checked (:func:`wwho.fileio.tokenizer_path`), errors naming ``ByteBPE.method``."""
    from wwho.fileio import tokenizer_path

    return tokenizer_path(path, f"ByteBPE.{method}")


def tiktoken_model(name_or_path: str | Path, tiktoken_file: str | Path | None,
                   options: dict[str, Any]) -> ByteLevelModel:
    """``ByteBPE.from_tiktoken``'s model: :func:`wwho.bytelevel.files.from_tiktoken` with ``options``
    (``ranks_path``, the former name of ``tiktoken_file``, taken out of them)."""
    from wwho.bytelevel.files import from_tiktoken
    from wwho.tiktoken_file import renamed

    tiktoken_file = renamed("ranks_path", options.pop("ranks_path", None), tiktoken_file)
    return from_tiktoken(name_or_path, tiktoken_file=tiktoken_file, **options)


def gguf_model(path: str | Path, options: dict[str, Any]) -> ByteLevelModel:
    """``ByteBPE.from_gguf``'s model: :func:`wwho.bytelevel.gguf.load_gguf` with ``options``."""
    from wwho.bytelevel.gguf import load_gguf

    return load_gguf(checked_path(path, "from_gguf"), **options)


def hf_model(path: str | Path) -> ByteLevelModel:
    """``ByteBPE.from_hf``'s model: a byte-level BPE Hugging Face ``tokenizer.json``."""
    from wwho.bytelevel.hf_files import from_hf

    return from_hf(checked_path(path, "from_hf"))


def saved_model(path: str | Path) -> ByteLevelModel:
    """``ByteBPE.load``'s model: a directory written by ``ByteBPE.save``; another kind of tokenizer
    is an error that names it."""
    from wwho.bytelevel.files import load
    from wwho.kinds import check_kind

    path = checked_path(path, "load")
    try:
        return load(path)
    except VocabError:
        check_kind(path, "bytelevel", "ByteBPE.load")
        raise


def save_model(model: ByteLevelModel, directory: str | Path, *, hf: bool) -> Path:
    """``ByteBPE.save``: wwho's directory files of ``model`` (and with ``hf``, the files that let
    ``AutoTokenizer`` read it), all or nothing."""
    from wwho.bytelevel.files import save
    from wwho.bytelevel.hf_files import hf_directory_files

    return save(model, directory, beside=hf_directory_files(model) if hf else None)


#: A regex longer than this is shown cut to its first ``SHOWN_REGEX // 5`` characters: an
#: extension's script-word regex runs to thousands, which would bury the rest of ``describe``,
#: while the named ones (o200k's is the longest) are shown whole.
SHOWN_REGEX = 1000


def describe(model: ByteLevelModel, *, n_vocab: int, vocab_size: int, top: int) -> str:
    """``ByteBPE.describe``'s summary of ``model`` (``n_vocab`` and ``vocab_size`` as the tokenizer
    counts them): model, pre-tokenizer, sizes, merges, specials."""
    pre = model.pattern
    from wwho.readable import readable as show  # bytes of no character as <0xNN>, as the CLI shows them
    from wwho.readable import readable_text as text  # (names and tokens from a file: no control characters)

    lines = [
        f"byte-level BPE {text(model.name or '(unnamed)')}: n_vocab {n_vocab:,}, {vocab_size:,} tokens",
        f"  pre-tokenizer: {text(pre.name or 'custom')} ({len(pre.patterns) + len(pre.byte_patterns)} regex(es))",
        *(f"    {text(_shortened(p))}" for p in (*pre.patterns, *pre.byte_patterns)),
        f"  merge rule: {'ranks (tiktoken)' if model.merges is None else f'{len(model.merges):,} merges (in order)'}",
        f"  special tokens ({len(model.special_tokens)}): "
        + ", ".join(f"{text(t)}={i}" for t, i in sorted(model.special_tokens.items(), key=lambda x: x[1])[:top])
        + (" ..." if len(model.special_tokens) > top else ""),
        f"  added tokens: {len(model.added_tokens)}; bos {model.bos_id} (add: {model.add_bos}), "
        f"eos {model.eos_id} (add: {model.add_eos}); pad {model.pad_id}",
    ]
    if model.merges:
        lines += [f"  first {min(top, len(model.merges))} merges:",  # (no more than there are)
                  *(f"    [{show(a)}] + [{show(b)}]" for a, b in model.merges[:top])]
    everything = [(i, t) for t, i in model.ranks.items()] + list(model.extra_tokens.items())
    everything += [(i, s.encode()) for s, i in {**model.special_tokens, **model.added_tokens}.items()]
    longest = sorted(everything, key=lambda kv: (-len(kv[1]), kv[0]))[:top]
    lines += [f"  longest {len(longest)} tokens:", *(f"    {i}: [{show(b)}] ({len(b)} bytes)" for i, b in longest)]
    return "\n".join(lines)


def _shortened(pattern: str) -> str:
    if len(pattern) <= SHOWN_REGEX:
        return pattern
    return f"{pattern[:SHOWN_REGEX // 5]}... ({len(pattern):,} characters; the tokenizer's file holds it whole)"
