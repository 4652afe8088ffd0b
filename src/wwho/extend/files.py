"""The files of an extension: a standard Hugging Face tokenizer directory, written all or nothing.

* ``tokenizer.json``: a byte-level BPE for stock ``tokenizers``: the extended pre-tokenizer as
  ``Split`` steps, the vocabulary, the merges, the base's special and added tokens, and a
  ``TemplateProcessing`` post-processor when the base adds BOS/EOS (Llama 3);
* ``tokenizer_config.json``: ``PreTrainedTokenizerFast`` (``AutoTokenizer`` needs no custom code),
  the BOS/EOS roles, settings carried over from the base (chat template ...), ``wwho`` provenance;
* ``special_tokens_map.json``: the BOS/EOS roles;
* ``wwho_extend.json``: what the extension knows: base, scripts, first new id, known syllables,
  options, statistics.

The directory is written as one unit by :func:`wwho.savedir.save_files` (with its
``wwho-manifest.json``): a killed save leaves the old files or the new ones, and other files in the
directory stay. A directory that already holds an output is refused unless ``force``.
"""

from __future__ import annotations

import json
from pathlib import Path

from wwho import savedir
from wwho.bytelevel.hf_files import hf_json, hf_post_processor, model_roles
from wwho.bytelevel.model import ByteLevelModel
from wwho.errors import VocabError, brief
from wwho.fileio import json_bytes
from wwho.manifest import MANIFEST

FORMAT = "wwho-extend/1"
FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "wwho_extend.json")


def tokenizer_json(model: ByteLevelModel) -> dict:
    """The ``tokenizer.json`` data of an extended model."""
    data = hf_json(model)
    data["post_processor"] = hf_post_processor(model)
    return data


def dumps_tokenizer(model: ByteLevelModel) -> str:
    """``tokenizer.json`` as a string (for ``tokenizers.Tokenizer.from_str``)."""
    return json.dumps(tokenizer_json(model), ensure_ascii=False)


#: The special-token roles of a base folder (special_tokens_map.json, else tokenizer_config.json): a
#: tokenizer.json holds the tokens but not which is the end of a text or the padding.
ROLES = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")
#: The role of a list of tokens (a chat model's turn markers), carried over as the single roles are.
EXTRA_ROLE = "additional_special_tokens"
#: Tokens of a role of their own each (``{"image_token": "<image>"}``), transformers' dict form.
NAMED_EXTRA_ROLE = "extra_special_tokens"


def transformers_config(model: ByteLevelModel, *, carried: dict, provenance: dict) -> tuple[dict, dict]:
    """``(tokenizer_config.json, special_tokens_map.json)`` data: roles, ``carried`` settings of the
    base (chat template ...), and a ``wwho`` block holding ``provenance``."""
    roles = {k: carried[k] for k in (*ROLES, EXTRA_ROLE) if k in carried}  # the base folder's, where it had them
    for role, text in model_roles(model).items():  # else the model's own, as export_hf names them
        roles.setdefault(role, text)
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
    # Checked here, so that every reader (eval, inspect) refuses a bad field alike.
    for key in ("scripts", "known_syllables"):
        value = data.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise VocabError(f"{path}: {key!r} must be a list of strings, not {brief(value)}")
    for key in ("first_new_id", "new_tokens", "base_n_vocab"):
        value = data.get(key)
        if value is not None and not (type(value) is int and value >= 0):
            raise VocabError(f"{path}: {key!r} must be a count from 0, not {brief(value)}")
    return data


def describe_record(record: dict) -> str:
    """The first lines ``wwho inspect`` shows for an extension directory: what was added to which base."""
    first, added = record.get("first_new_id"), record.get("new_tokens")
    scripts = record.get("scripts")
    base_ids = record.get("base_n_vocab")
    lines = [f"wwho extension of {record.get('base')!s}"
             + (f" ({base_ids:,} ids)" if isinstance(base_ids, int) else "")]
    if isinstance(first, int) and isinstance(added, int) and added > 0:
        lines[0] += f": {added:,} new tokens, ids {first:,}..{first + added - 1:,}"
    if isinstance(scripts, list):
        lines[0] += f", for {', '.join(map(str, scripts))}"
    known = record.get("known_syllables")
    stats = record.get("stats") if isinstance(record.get("stats"), dict) else {}
    if isinstance(known, list):
        line = f"  syllables built whole: {len(known):,}"
        if isinstance(stats.get("learned_merges"), int):
            line += f"; merges learned over them: {stats['learned_merges']:,}"
        lines.append(line + " (wwho eval counts cuts inside them)")
    return "\n".join(lines)


def save_extension(model: ByteLevelModel, record: dict, directory: str | Path, *, carried: dict,
                   force: bool = False) -> Path:
    """Write an extension's files into ``directory`` (see the module docstring); ``record`` is the
    ``wwho_extend.json`` data (its ``format`` is set here)."""
    directory = check_target(directory, force)
    provenance = {k: record[k] for k in ("base", "scripts", "base_n_vocab", "new_tokens") if k in record}
    config, roles = transformers_config(model, carried=carried, provenance=provenance)
    files = {
        "tokenizer.json": json_bytes(tokenizer_json(model), indent=None),
        "tokenizer_config.json": json_bytes(config),
        "special_tokens_map.json": json_bytes(roles),
        "wwho_extend.json": json_bytes({"format": FORMAT, **record}),
    }
    return savedir.save_files(directory, files, kind="extend")


def check_target(directory: str | Path, force: bool) -> Path:
    """Refuse, before any work, a target that is not a directory, or that already holds an output
    (one of :data:`FILES` or a save manifest) unless ``force``."""
    directory = savedir.check_target(directory)
    present = [name for name in (*FILES, MANIFEST) if (directory / name).exists()]
    if present and not force:
        raise VocabError(
            f"{directory} already holds a tokenizer ({', '.join(present)}); pass --force (force=True) "
            "to replace it"
        )
    return directory
