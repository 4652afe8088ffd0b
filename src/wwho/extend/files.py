"""The files of an extension: a standard Hugging Face tokenizer directory, written all or nothing.

* ``tokenizer.json``: a byte-level BPE for stock ``tokenizers``: the extended pre-tokenizer as
  ``Split`` steps, the vocabulary, the merges, the base's special and added tokens, and a
  ``TemplateProcessing`` post-processor when the base adds BOS/EOS (Llama 3);
* ``tokenizer_config.json``: ``PreTrainedTokenizerFast`` (``AutoTokenizer`` needs no custom code),
  the BOS/EOS roles, settings carried over from the base (chat template ...), ``wwho`` provenance;
* ``special_tokens_map.json``: the BOS/EOS roles;
* ``wwho_extend.json``: what the extension knows: base, scripts, first new id, known syllables,
  options, statistics.

The directory is written into a temporary directory beside it and renamed into place: a killed run
leaves no partial output. An existing directory is replaced only with ``force`` and only if it
holds nothing but these files (wwho never deletes what it did not write).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from wwho.bytelevel.files import hf_tokenizer_json
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import bytes_to_unicode
from wwho.errors import VocabError
from wwho.fileio import write_json

FORMAT = "wwho-extend/1"
FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "wwho_extend.json")


def tokenizer_json(model: ByteLevelModel) -> dict:
    """The ``tokenizer.json`` data of an extended model."""
    data = hf_tokenizer_json(model)
    data["post_processor"] = _template(model)
    return data


def dumps_tokenizer(model: ByteLevelModel) -> str:
    """``tokenizer.json`` as a string (for ``tokenizers.Tokenizer.from_str``)."""
    return json.dumps(tokenizer_json(model), ensure_ascii=False)


def _token_text(model: ByteLevelModel, token_id: int) -> str:
    for table in (model.special_tokens, model.added_tokens):
        for text, i in table.items():
            if i == token_id:
                return text
    token = next((t for t, i in model.ranks.items() if i == token_id), None)
    if token is None:
        raise VocabError(f"token id {token_id} (BOS/EOS) is not in the vocabulary")
    return bytes_to_unicode(token)


def _template(model: ByteLevelModel) -> dict | None:
    """Llama 3's post-processor form: BOS (and/or EOS) around each sequence, as the base asks."""
    bos = _token_text(model, model.bos_id) if model.add_bos and model.bos_id is not None else None
    eos = _token_text(model, model.eos_id) if model.add_eos and model.eos_id is not None else None
    if bos is None and eos is None:
        return None

    def seq(name: str, type_id: int) -> list[dict]:
        out = [{"SpecialToken": {"id": bos, "type_id": type_id}}] if bos else []
        out.append({"Sequence": {"id": name, "type_id": type_id}})
        return out + ([{"SpecialToken": {"id": eos, "type_id": type_id}}] if eos else [])

    ids = {bos: model.bos_id, eos: model.eos_id}
    return {
        "type": "TemplateProcessing",
        "single": seq("A", 0),
        "pair": seq("A", 0) + seq("B", 1),
        "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in (bos, eos) if t},
    }


def transformers_config(model: ByteLevelModel, *, carried: dict, provenance: dict) -> tuple[dict, dict]:
    """``(tokenizer_config.json, special_tokens_map.json)`` data: roles, ``carried`` settings of the
    base (chat template ...), and a ``wwho`` block holding ``provenance``."""
    roles = {}
    if model.bos_id is not None:
        roles["bos_token"] = _token_text(model, model.bos_id)
    if model.eos_id is not None:
        roles["eos_token"] = _token_text(model, model.eos_id)
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **roles,
        **carried,
        # Spaces are part of byte-level tokens: any clean-up would change the decoded text.
        "clean_up_tokenization_spaces": False,
        "wwho": {"kind": "extend", **provenance},
    }
    return config, roles


def read_record(directory: str | Path) -> dict:
    """Read ``wwho_extend.json`` of an extension directory."""
    from wwho.fileio import read_json

    path = Path(directory) / "wwho_extend.json"
    data = read_json(path, error=VocabError, what="extension record")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise VocabError(f"{path}: not a wwho extension record (format is not {FORMAT!r})")
    return data


def save_extension(model: ByteLevelModel, record: dict, directory: str | Path, *, carried: dict,
                   force: bool = False) -> Path:
    """Write an extension's files into ``directory`` (see the module docstring); ``record`` is the
    ``wwho_extend.json`` data (its ``format`` is set here)."""
    directory = Path(directory)
    check_target(directory, force)
    provenance = {k: record[k] for k in ("base", "scripts", "base_n_vocab", "new_tokens") if k in record}
    config, roles = transformers_config(model, carried=carried, provenance=provenance)
    contents = {
        "tokenizer.json": (tokenizer_json(model), None),
        "tokenizer_config.json": (config, 2),
        "special_tokens_map.json": (roles, 2),
        "wwho_extend.json": ({"format": FORMAT, **record}, 2),
    }
    with directory_transaction(directory) as tmp:
        for name, (data, indent) in contents.items():
            write_json(tmp / name, data, indent=indent)
    return directory


def check_target(directory: Path, force: bool) -> None:
    """Raise unless ``directory`` may be written: absent, or (with ``force``) holding only our files."""
    if not directory.exists():
        return
    if not force:
        raise VocabError(f"{directory} already exists; pass --force (force=True) to replace it")
    if not directory.is_dir():
        raise VocabError(f"{directory} exists and is not a directory")
    foreign = sorted(p.name for p in directory.iterdir() if p.name not in FILES)
    if foreign:
        raise VocabError(
            f"{directory} holds files wwho extend did not write ({', '.join(foreign[:5])}); "
            "it is replaced only if it holds nothing else: choose another directory"
        )


@contextlib.contextmanager
def directory_transaction(directory: Path):
    """Yield a temporary directory beside ``directory``; on success it replaces ``directory``.

    On an exception the temporary directory is removed and ``directory`` is left as it was.
    """
    parent = directory.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".tmp", dir=parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes it private
        if directory.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".old", dir=parent))
            os.replace(directory, old)  # onto the empty directory just made
            try:
                os.replace(tmp, directory)
            except BaseException:
                os.replace(old, directory)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask

