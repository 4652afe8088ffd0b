"""The tokenizers ``wwho serve`` offers: each SPEC loaded once, before the server starts, as
``wwho eval`` loads it (:func:`load_tokenizers`), and the name the API and the page call it: the
SPEC without its local path, with as many folders as tell two files of one name apart.

This module does not encode or lay out tokens (:mod:`wwho.serve.view` does) and imports no web
framework.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from wwho.errors import VocabError
from wwho.eval_specs import Evaluated, load_spec


@dataclass
class Loaded:
    """A tokenizer the server offers: ``spec`` as given on the command line (never sent), ``name`` what the
    API and the page call it: a SPEC without its path, a path's last part (see :func:`load_tokenizers`)."""

    spec: str
    kind: str
    tokenizer: Evaluated
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            self.name = _public_name(self.spec)


def _public_name(spec: str, parts: int = 1) -> str:
    """``spec`` without its local path: ``tiktoken:NAME`` as it is, a path as its last ``parts`` parts
    (one more for generic file names such as ``tokenizer.json``), ``hf:``/``spm:`` kept before it."""
    kind, sep, rest = spec.partition(":")
    if sep and kind == "tiktoken":
        return spec
    prefix, path = (f"{kind}:", rest) if sep and kind in ("hf", "spm") else ("", spec)
    names = Path(os.path.abspath(path)).parts[1:]  # not resolved: a link keeps its own name
    if names and names[-1] in ("tokenizer.json", "vocab.json"):
        parts += 1
    return prefix + ("/".join(names[-parts:]) or "tokenizer")


def load_tokenizers(specs: Sequence[str], *, pattern: str | None = None) -> list[Loaded]:
    """Load every SPEC (as ``wwho eval`` does, ``pattern`` the pre-tokenizer of a file that names
    none); a duplicate or unloadable SPEC is a :class:`VocabError`.

    Names are SPECs without paths: two files of one name are told apart by their folders."""
    if len(set(specs)) != len(specs):
        raise VocabError(f"a tokenizer is given twice: {', '.join(s for s in specs if specs.count(s) > 1)}")
    out = []
    for spec in specs:
        kind, sep, _ = spec.partition(":")
        if not (sep and kind in ("tiktoken", "hf", "spm")):
            from wwho.loading import detect_kind

            kind = detect_kind(spec)
        out.append(Loaded(spec, kind, load_spec(spec, pattern=pattern)))
    for parts in range(2, 64):  # two files of one name: their folders, as many as tell them apart
        groups: dict[str, list[Loaded]] = {}
        for t in out:
            groups.setdefault(t.name, []).append(t)
        apart = [g for g in groups.values() if len({_public_name(t.spec, 64) for t in g}) > 1]
        if not apart:
            break
        for t in itertools.chain(*apart):
            t.name = _public_name(t.spec, parts)
    names = Counter(t.name for t in out)
    seen: Counter[str] = Counter()
    for t in out:  # the same file under two spellings: numbered
        if names[t.name] > 1:
            seen[t.name] += 1
            t.name = f"{t.name} ({seen[t.name]})"
    return out
