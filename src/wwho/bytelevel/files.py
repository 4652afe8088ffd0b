"""Files of byte-level BPE tokenizers: ``.tiktoken`` ranks, wwho's own directory format,
and Hugging Face ``tokenizer.json`` (import and export).

* ``.tiktoken``: one ``<base64 token bytes> <rank>`` per line (OpenAI's format). The
  built-in encodings (``o200k_base``, ``cl100k_base``) carry their regex, special tokens
  and the sha256 of the official ranks file; the file itself is found at an explicit
  path or in tiktoken's cache and is never downloaded.
* wwho directory (:func:`save` / :func:`load`): ``ranks.tiktoken`` (the number is the
  token id, which is the rank for tiktoken-style vocabularies), ``bytelevel.json``
  (format version, pre-tokenizer, special/added tokens, merge rule) and, for the
  merges rule, ``merges.txt`` (GPT-2 byte-level strings, one ``a b`` pair per line).
  No pickle anywhere: loading a file never runs code.
* ``tokenizer.json``: a BPE model with a ``Split`` for every regex, a ``ByteLevel``
  step without its own regex, and a ``ByteLevel`` decoder. For the ranks rule the merge
  list holds, for every token, every split into two tokens, ordered by the token's
  rank, which lets the Hugging Face merge rule reproduce tiktoken's.

Not here: BPE itself (:mod:`wwho.bytelevel`) and GGUF (:mod:`wwho.bytelevel.gguf`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from wwho import _core
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import (
    _HF_GPT2,
    _PUNCT_RUN,
    CL100K_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    Pretokenizer,
    bytes_to_unicode,
)
from wwho.bytelevel.tiktoken_names import END_OF_TEXT
from wwho.bytelevel.validate import MAX_ID, check_id, check_model, is_id, pretokenizer_option, table_option
from wwho.errors import VocabError, brief
from wwho.fileio import json_bytes, parse_json, read_bytes, write_bytes
from wwho.savedir import check_saved, member, save_files, sha256

FORMAT = "wwho-bytelevel"
FORMAT_VERSION = 1
RANKS_FILE, CONFIG_FILE, MERGES_FILE = "ranks.tiktoken", "bytelevel.json", "merges.txt"


@dataclass(frozen=True)
class KnownEncoding:
    """A tiktoken encoding whose regex and special tokens are built in (public facts)."""

    name: str
    url: str
    sha256: str
    lines: int
    pattern: str
    special_tokens: dict[str, int]


_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
TIKTOKEN_ENCODINGS: dict[str, KnownEncoding] = {
    e.name: e
    for e in (
        KnownEncoding(
            "o200k_base",
            _BLOB + "o200k_base.tiktoken",
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            199_998,
            O200K_PATTERN,
            {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        ),
        KnownEncoding(
            "cl100k_base",
            _BLOB + "cl100k_base.tiktoken",
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            100_256,
            CL100K_PATTERN,
            {
                "<|endoftext|>": 100257,
                "<|fim_prefix|>": 100258,
                "<|fim_middle|>": 100259,
                "<|fim_suffix|>": 100260,
                "<|endofprompt|>": 100276,
            },
        ),
    )
}


def known_encoding_name(spec: str | os.PathLike) -> str | None:
    """The known encoding ``spec`` names, spelled either way: ``o200k_base`` or ``tiktoken:o200k_base``
    (when no file or directory has that name); None for anything else. ``tiktoken:NAME`` of an
    encoding wwho does not build in is a :class:`VocabError` naming the known ones."""
    text = os.fspath(spec)
    if os.path.lexists(text):
        return None
    name = text.removeprefix("tiktoken:")
    if name in TIKTOKEN_ENCODINGS:
        return name
    if text.startswith("tiktoken:"):
        raise VocabError(f"{text}: not an encoding wwho knows offline ({', '.join(TIKTOKEN_ENCODINGS)})")
    return None


def known_by_content(data: bytes) -> KnownEncoding | None:
    """The known encoding whose official ranks file is ``data`` (by sha256), whatever the file is called."""
    digest = hashlib.sha256(data).hexdigest()
    return next((e for e in TIKTOKEN_ENCODINGS.values() if e.sha256 == digest), None)


# --- .tiktoken ranks files ----------------------------------------------------------------


def read_tiktoken_ranks(path: str | Path, data: bytes | None = None, *, contiguous: bool = False) -> dict[bytes, int]:
    """Parse a ``.tiktoken`` file (``<base64> <rank>`` lines) into token bytes -> rank.

    ``contiguous=True`` (a file on its own: ranks are ids 0..n-1) also requires every rank
    from 0 to the largest, so a line lost in the middle is an error naming the rank.
    """
    path = Path(path)
    if data is None:
        data = _read(path)
    # The core parses a valid file in one pass (Python's base64 per line was most of the cost of
    # loading o200k). It is at least as strict as the reader below, so anything it refuses, or a
    # rank check_id would refuse, is read again below for the exact error message.
    try:
        fast = _core.read_tiktoken(data)
    except _core.CoreVocabError:
        fast = None
    ranks = fast if fast and max(fast.values()) < MAX_ID else _read_tiktoken_python(path, data)
    return _contiguous(path, ranks) if contiguous else ranks


def _read_tiktoken_python(path: Path, data: bytes) -> dict[bytes, int]:
    """The reader the core's parser must agree with (tests compare them), and the error messages."""
    ranks: dict[bytes, int] = {}
    seen_ids: dict[int, int] = {}
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise VocabError(f"{path}:{lineno}: expected '<base64 token> <rank>', got {brief(line, 60)}")
        try:
            token = base64.b64decode(fields[0], validate=True)
            if not fields[1].isdigit():  # int() would also take "-1", "+1", "1_000"
                raise ValueError
            rank = int(fields[1])
        except (binascii.Error, ValueError):
            raise VocabError(f"{path}:{lineno}: bad base64 token or rank in {brief(line, 60)}") from None
        if not token:
            raise VocabError(f"{path}:{lineno}: empty token in {brief(line, 60)}")
        check_id(rank, f"{path}:{lineno}", "rank")
        if token in ranks:
            raise VocabError(f"{path}:{lineno}: token {brief(token, 60)} appears twice (also on line "
                             f"{seen_ids[ranks[token]]})")
        if rank in seen_ids:
            raise VocabError(f"{path}:{lineno}: rank {rank} also used on line {seen_ids[rank]}")
        ranks[token] = rank
        seen_ids[rank] = lineno
    if not ranks:
        raise VocabError(f"{path}: no tokens in ranks file")
    return ranks


def _contiguous(path: Path, ranks: dict[bytes, int]) -> dict[bytes, int]:
    """``ranks`` if its ranks (distinct) are 0..n-1, else an error naming the first missing one."""
    top = max(ranks.values())
    if top != len(ranks) - 1:
        ids = set(ranks.values())
        missing = next(r for r in range(len(ids) + 1) if r not in ids)
        raise VocabError(f"{path}: ranks must be 0..{len(ids) - 1} (one per line), but rank {missing} is "
                         f"missing and the largest is {top}: a line was lost?")
    return ranks


def tiktoken_ranks_bytes(ranks: dict[bytes, int]) -> bytes:
    lines = [
        base64.b64encode(token) + b" " + str(rank).encode()
        for token, rank in sorted(ranks.items(), key=lambda item: item[1])
    ]
    return b"\n".join(lines) + b"\n"


def write_tiktoken_ranks(path: str | Path, ranks: dict[bytes, int]) -> None:
    write_bytes(path, tiktoken_ranks_bytes(ranks))


def tiktoken_cache_path(url: str) -> Path:
    """Where tiktoken caches ``url`` (``$TIKTOKEN_CACHE_DIR``/sha1(url), or its fallbacks)."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if not cache_dir:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(cache_dir) / hashlib.sha1(url.encode()).hexdigest()


def from_tiktoken(
    name_or_path: str | Path,
    *,
    tiktoken_file: str | Path | None = None,
    pattern: str | None = None,
    special_tokens: dict[str, int] | None = None,
    ranks_path: str | Path | None = None,
) -> ByteLevelModel:
    """A ranks-rule model from a known encoding name or a ``.tiktoken`` file.

    Known names find their file through :mod:`wwho.tiktoken_file` (``tiktoken_file=``, then
    ``WWHO_TIKTOKEN_FILE``), else in tiktoken's cache, and check its sha256; nothing is
    downloaded. ``tiktoken:o200k_base`` is the same as ``o200k_base``. A file named like a known
    encoding (``o200k_base.tiktoken``), or whose content is that encoding's official file (same
    sha256, any name), gets that encoding's regex and special tokens; any other file needs
    ``pattern=``. ``ranks_path=``
    is the deprecated name of ``tiktoken_file=``.
    """
    from wwho.tiktoken_file import FIX, missing, ranks_file_for, renamed

    tiktoken_file = renamed("ranks_path", ranks_path, tiktoken_file, stacklevel=4)
    # Checked before any file is read: a list of names or a misspelt pattern name is the caller's slip.
    if not isinstance(name_or_path, (str, os.PathLike)):  # b"o200k_base" failed inside str.removeprefix
        raise VocabError(f"expected an encoding name or a path to a .tiktoken file, not {brief(name_or_path)}")
    if special_tokens is not None:
        special_tokens = table_option(special_tokens, "special_tokens", "name -> id")
    if pattern is not None:
        pattern = pretokenizer_option(pattern)
    known = TIKTOKEN_ENCODINGS.get(known_encoding_name(name_or_path) or "")
    fix = "pass pattern= (and special_tokens=) to load it as a custom file"
    if known is not None and pattern is not None:  # it would be ignored: the encoding has its regex
        raise VocabError(f"pattern= is for a .tiktoken file of your own; {known.name} has its own pattern "
                         f"(to use another regex with its ranks, give the file: from_tiktoken(PATH, pattern=...))")
    if known is not None:
        fix = f"give the official {known.name}.tiktoken: {FIX}"
        given = ranks_file_for(known.name, tiktoken_file)
        if given is not None:
            path, source = given
            if not path.exists():  # a FIFO or device is refused by the reader, which says what it is
                raise VocabError(f"{path} (from {source}): no such file. To fix: point {source} at the "
                                 f"{known.name}.tiktoken ranks file")
        else:
            path = tiktoken_cache_path(known.url)
            if not path.is_file():
                raise VocabError(missing(known.name, f"tiktoken's cache, {path}"))
    else:
        path = Path(name_or_path)
        if not path.exists():
            names = ", ".join(TIKTOKEN_ENCODINGS)
            raise VocabError(f"{name_or_path}: no such ranks file, and not a known encoding ({names})")
        known = TIKTOKEN_ENCODINGS.get(path.name.removesuffix(".tiktoken")) if pattern is None else None
    data = _read(path)
    if known is None and pattern is None:  # a renamed official file is still that encoding
        known = known_by_content(data)
    if known is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != known.sha256:
            lines = data.count(b"\n")
            raise VocabError(
                f"{path}: sha256 {digest} is not that of the official {known.name} ranks file "
                f"({known.sha256}; {known.lines:,} lines, this one has {lines:,}): truncated or "
                f"changed? To fix: {fix}"
            )
        pattern = Pretokenizer.named(known.name)  # o200k_base / cl100k_base are named patterns
        special_tokens = known.special_tokens if special_tokens is None else special_tokens
    elif pattern is None:
        raise VocabError(f"{path}: not a known encoding, so its pre-tokenizer must be given: pattern= (or "
                         "--pattern on the command line): a regex, or gpt2, gpt4, o200k")
    ranks = read_tiktoken_ranks(path, data, contiguous=True)
    name = known.name if known else path.stem
    model = ByteLevelModel(ranks, Pretokenizer.coerce(pattern), special_tokens=dict(special_tokens or {}), name=name)
    return check_model(model, str(path))


def _read(path: Path) -> bytes:
    """Through :func:`wwho.fileio.read_bytes`: a regular file only (a FIFO would block, a device never
    end) and at most its bound."""
    if not os.path.lexists(path):
        raise VocabError(f"{path}: cannot read: No such file or directory")
    return read_bytes(path, error=VocabError)


# --- wwho's directory format --------------------------------------------------------------


def save(tok: ByteLevelModel, directory: str | Path, *, hf: bool = False) -> Path:
    """Write the directory as one save (:func:`wwho.savedir.save_files`); ``hf=True`` adds an
    exact ``tokenizer.json`` (:func:`export_hf`)."""
    ranks = tiktoken_ranks_bytes(tok.ranks)
    files = {RANKS_FILE: ranks}
    checks = {"ranks": {"entries": len(tok.ranks), "sha256": sha256(ranks)}}
    if tok.merges is not None:
        lines = ["#version: 0.2"] + [f"{bytes_to_unicode(a)} {bytes_to_unicode(b)}" for a, b in tok.merges]
        files[MERGES_FILE] = ("\n".join(lines) + "\n").encode("utf-8")
        checks["merges"] = {"entries": len(tok.merges), "sha256": sha256(files[MERGES_FILE])}
    config = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "name": tok.name,
        "pretokenizer": tok.pattern.to_json(),
        "merge_rule": "ranks" if tok.merges is None else "merges",
        "ignore_merges": tok.ignore_merges,
        "special_tokens": tok.special_tokens,
        "added_tokens": tok.added_tokens,
        "extra_tokens": {str(i): base64.b64encode(b).decode() for i, b in sorted(tok.extra_tokens.items())},
        "bos_id": tok.bos_id,
        "eos_id": tok.eos_id,
        "add_bos": tok.add_bos,
        "add_eos": tok.add_eos,
        "files": {"ranks": RANKS_FILE, "merges": MERGES_FILE if tok.merges is not None else None},
        # What the files hold, so that a file cut at a line end is caught even without the manifest.
        "checks": checks,
    }
    files[CONFIG_FILE] = json_bytes(config)
    if hf:
        files["tokenizer.json"] = json_bytes(hf_json(tok), indent=None)
    save_files(directory, files, kind="bytelevel")
    return Path(directory)


def load(path: str | Path) -> ByteLevelModel:
    path = Path(path)
    config_path = path / CONFIG_FILE if path.is_dir() else path
    raw = _read(config_path)
    check_saved(config_path.parent, {config_path.name: raw})  # and the other files, against the manifest
    config = parse_json(raw, source=str(config_path), error=VocabError)
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise VocabError(f"{config_path}: not a wwho byte-level tokenizer (format is not {FORMAT!r})")
    if config.get("version") != FORMAT_VERSION:
        raise VocabError(
            f"{config_path}: format version {brief(config.get('version'))}; this wwho reads {FORMAT_VERSION}"
        )
    base = config_path.parent
    where = str(config_path)
    get = _Getter(config, where)
    rule = get("merge_rule", str)
    if rule not in ("ranks", "merges"):
        raise VocabError(f"{where}: merge_rule must be 'ranks' or 'merges', not {brief(rule)}")
    files = get("files", dict)
    ranks_path = member(base, files.get("ranks"), source=where, key="files.ranks")
    ranks_raw = _read(ranks_path)
    merges_path = merges_raw = None
    if rule == "merges":
        merges_path = member(base, files.get("merges"), source=where, key="files.merges")
        merges_raw = _read(merges_path)
    ranks = read_tiktoken_ranks(ranks_path, ranks_raw)
    merges = _parse_merges_txt(merges_path, merges_raw) if merges_path is not None else None
    _check_recorded(get("checks", dict, {}), where, ("ranks", ranks_path, ranks_raw, len(ranks)),
                    ("merges", merges_path, merges_raw, None if merges is None else len(merges)))
    extra = {}
    for key, value in get("extra_tokens", dict, {}).items():
        # ASCII digits only, and few of them ("²" is a digit to str.isdigit; int() of thousands of
        # digits is refused by Python, and no id has more than ten)
        if not (key.isascii() and key.isdigit() and len(key) <= 10 and isinstance(value, str)):
            raise VocabError(f"{where}: extra_tokens entry {brief(key)}: expected \"<id>\": \"<base64>\"")
        try:
            extra[int(key)] = base64.b64decode(value, validate=True)
        except binascii.Error:
            raise VocabError(f"{where}: extra_tokens entry {brief(key)} is not base64") from None
    pretokenizer = get("pretokenizer", dict)
    try:
        pattern = Pretokenizer.from_json(pretokenizer)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, VocabError):
            raise VocabError(f"{where}: pretokenizer: {exc}") from None
        raise VocabError(f"{where}: pretokenizer is malformed ({type(exc).__name__}: {brief(str(exc))})") from None
    model = ByteLevelModel(
        ranks,
        pattern,
        special_tokens=_text_ids(get("special_tokens", dict), where, "special_tokens"),
        merges=merges,
        ignore_merges=get("ignore_merges", bool),
        added_tokens=_text_ids(get("added_tokens", dict, {}), where, "added_tokens"),
        extra_tokens=extra,
        bos_id=get("bos_id", int, None),
        eos_id=get("eos_id", int, None),
        add_bos=get("add_bos", bool, False),
        add_eos=get("add_eos", bool, False),
        name=get("name", str, ""),
    )
    return check_model(model, where)


class _Getter:
    """``config[key]`` checked for its type, with errors naming the file and the key."""

    _MISSING = object()

    def __init__(self, config: dict, where: str) -> None:
        self.config, self.where = config, where

    def __call__(self, key: str, kind: type, default: object = _MISSING):
        if key not in self.config:
            if default is self._MISSING:
                raise VocabError(f"{self.where}: missing key {key!r}")
            return default
        value = self.config[key]
        if value is None and default is None:
            return None
        if type(value) is not kind:
            raise VocabError(f"{self.where}: {key!r} must be a {kind.__name__}, not {brief(value)}")
        return value


def _text_ids(table: dict, where: str, key: str) -> dict[str, int]:
    for text, i in table.items():
        if not is_id(i):
            check_id(i, where, f"{key} entry {brief(text, 60)}")
    return dict(table)


def _check_recorded(checks: dict, where: str, *files) -> None:
    """Compare the entry counts and sha256 recorded in ``bytelevel.json`` with the files read."""
    for key, path, data, entries in files:
        record = checks.get(key)
        if path is None or record is None:
            continue
        if not isinstance(record, dict):
            raise VocabError(f"{where}: checks.{key} must be an object")
        if "entries" in record and record["entries"] != entries:
            raise VocabError(f"{path}: has {entries:,} entries but {where} records {brief(record['entries'])}: "
                             "truncated, or from another save?")
        if "sha256" in record and record["sha256"] != sha256(data):
            raise VocabError(f"{path}: its sha256 is not the one {where} records: changed, or from another save?")


def _parse_merges_txt(path: Path, data: bytes) -> list[tuple[bytes, bytes]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VocabError(f"{path}: not UTF-8 (byte offset {exc.start})") from None
    lines = text.splitlines()
    start = 1 if lines and lines[0].startswith("#version") else 0
    linenos = range(start + 1, len(lines) + 1)
    lines = lines[start:]
    if "" in lines:  # blank lines are skipped (rare: a separate pass)
        linenos = [n for n, line in zip(linenos, lines) if line]
        lines = [line for line in lines if line]
    pairs = _merge_pairs(lines, lambda k: f"{path}:{linenos[k]}")
    if None in pairs:
        k = pairs.index(None)
        raise VocabError(f"{path}:{linenos[k]}: {brief(lines[k], 60)} is not a pair of GPT-2 byte-level strings")
    return pairs


def _merge_pairs(merges: list, where) -> list[tuple[bytes, bytes] | None]:
    """``"a b"`` (the first space after the first character, as llama.cpp) or ``["a", "b"]`` in
    GPT-2 byte-level strings -> bytes pairs, None where a part is empty or unmappable (in the core:
    280,000 merges took 0.7 s here in Python). ``where(k)`` names merge ``k`` in errors."""
    try:
        return _core.merge_pairs(merges)
    except _core.CoreMergeError as exc:
        kind, k = exc.args
        if kind == "no_space":
            raise VocabError(f"{where(k)}: merge {merges[k]!r} has no space") from None
        raise VocabError(f"{where(k)}: merge {merges[k]!r} is neither 'a b' nor [a, b]") from None


# --- Hugging Face tokenizer.json ----------------------------------------------------------


def tiktoken_merges(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Every split of every token into two tokens, ordered by the token's rank (then split point).

    With these merges the Hugging Face rule (only listed pairs, lowest first) merges a
    pair exactly when tiktoken's rule would (its concatenation is a token) and in the
    same order, except between different pairs forming the same token, which tiktoken
    orders by position and this list by split point.
    """
    merges = []
    for token, _ in sorted(ranks.items(), key=lambda item: item[1]):
        for cut in range(1, len(token)):
            if token[:cut] in ranks and token[cut:] in ranks:
                merges.append((token[:cut], token[cut:]))
    return merges


def export_hf(tok: ByteLevelModel, path: str | Path) -> Path:
    """Write ``tok`` for Hugging Face. ``path`` ending in ``.json``: :func:`hf_json` as that one file
    (atomically). Any other ``path``: a directory as ``AutoTokenizer.from_pretrained`` reads it
    (:func:`hf_directory_files`), written as one save (:func:`wwho.savedir.save_files`)."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        write_bytes(path, json_bytes(hf_json(tok), indent=None))
        return path
    return save_files(path, hf_directory_files(tok), kind="bytelevel-hf")


def hf_directory_files(tok: ByteLevelModel) -> dict[str, bytes]:
    """``tokenizer.json`` (with a post-processor adding BOS/EOS where the model adds them: a GGUF's
    ``add_bos``), ``tokenizer_config.json`` (``PreTrainedTokenizerFast``, the BOS/EOS roles,
    ``add_bos_token``/``add_eos_token``) and ``special_tokens_map.json``."""
    data = hf_json(tok)
    data["post_processor"] = hf_post_processor(tok)
    roles = model_roles(tok)
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **roles,
        "add_bos_token": bool(tok.add_bos),
        "add_eos_token": bool(tok.add_eos),
        # Spaces are part of byte-level tokens: any clean-up would change the decoded text.
        "clean_up_tokenization_spaces": False,
        "wwho": {"kind": "bytelevel", "name": tok.name},
    }
    return {
        "tokenizer.json": json_bytes(data, indent=None),
        "tokenizer_config.json": json_bytes(config),
        "special_tokens_map.json": json_bytes(roles),
    }


def model_roles(model: ByteLevelModel) -> dict[str, str]:
    """transformers' BOS and EOS roles of ``model``: the tokens of its ``bos_id`` and ``eos_id`` (a
    GGUF's), and for a tiktoken encoding, which names neither, its ``<|endoftext|>`` as the end of a
    text, as GPT-2's files on the Hub name it."""
    roles = {}
    if model.bos_id is not None:
        roles["bos_token"] = token_text(model, model.bos_id)
    if model.eos_id is not None:
        roles["eos_token"] = token_text(model, model.eos_id)
    elif END_OF_TEXT in model.special_tokens:
        roles["eos_token"] = END_OF_TEXT
    return roles


def token_text(model: ByteLevelModel, token_id: int) -> str:
    for table in (model.special_tokens, model.added_tokens):
        for text, i in table.items():
            if i == token_id:
                return text
    token = next((t for t, i in model.ranks.items() if i == token_id), None)
    if token is None:
        raise VocabError(f"token id {token_id} (BOS/EOS) is not in the vocabulary")
    return bytes_to_unicode(token)


def hf_post_processor(model: ByteLevelModel) -> dict | None:
    """A ``TemplateProcessing`` post-processor putting BOS (and/or EOS) around each sequence where
    the model adds them (Llama 3's form); None where it adds neither."""
    bos = token_text(model, model.bos_id) if model.add_bos and model.bos_id is not None else None
    eos = token_text(model, model.eos_id) if model.add_eos and model.eos_id is not None else None
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


def hf_json(tok: ByteLevelModel) -> dict:
    """The content of a Hugging Face ``tokenizer.json`` that encodes exactly like ``tok``."""
    vocab = {bytes_to_unicode(token): i for token, i in tok.ranks.items()}
    for i, data in tok.extra_tokens.items():
        vocab[data.decode("utf-8", "surrogateescape")] = i  # not byte-level text: decodes as itself
    # Special and added tokens go into the model vocabulary too: Hugging Face renumbers an
    # added token that the model does not know, whatever "id" says.
    for text, i in {**tok.special_tokens, **tok.added_tokens}.items():
        if vocab.get(text, i) != i:
            raise VocabError(
                f"cannot export: special token {text!r} has the same text as token {vocab[text]}"
            )
        vocab[text] = i
    merges = tok.merges if tok.merges is not None else tiktoken_merges(tok.ranks)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    steps = [_hf_split(p) for p in tok.pattern.patterns] + [byte_level]
    steps += [_hf_split(p) for p in tok.pattern.byte_patterns]
    used = set(vocab.values())
    specials = {**tok.special_tokens,
                **reserved_tokens(used, max(used, default=-1) + 1, {*tok.special_tokens, *tok.added_tokens})}
    vocab.update(specials)
    added = [
        {"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": special}
        for special, table in ((True, specials), (False, tok.added_tokens))
        for text, i in table.items()
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": sorted(added, key=lambda t: t["id"]),
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": steps},
        "post_processor": None,
        "decoder": dict(byte_level),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": tok.ignore_merges,
            "vocab": vocab,
            "merges": [f"{bytes_to_unicode(a)} {bytes_to_unicode(b)}" for a, b in merges],
        },
    }
    return data


def reserved_token(token_id: int) -> str:
    """The special token that holds an id with no token of its own (o200k_harmony's naming)."""
    return f"<|reserved_{token_id}|>"


def reserved_tokens(used: set[int], size: int, taken: set[str]) -> dict[str, int]:
    """A :func:`reserved_token` for each id below ``size`` that ``used`` lacks (o200k_base: 199,998
    and 200,000..200,017), so that ``len()`` of a Hugging Face tokenizer is the model's row count.
    A name already ``taken`` by a special or added token is an error."""
    holes = {}
    for i in range(size):
        if i not in used:
            name = reserved_token(i)
            if name in taken:
                raise VocabError(f"cannot fill id {i}: the vocabulary already has a token {name!r} at another id")
            holes[name] = i
    return holes


# Oniguruma (Ruby syntax, as in Hugging Face tokenizers) reads "{1,3}+" as "({1,3})+", not as a
# possessive interval. GPT-2 is exported in its original form, which splits the same way; cl100k with
# its one possessive interval made greedy (the same here: nothing follows it in its alternative). Not
# as Llama 3's regex, which splits a final whitespace run holding a newline in two where cl100k's
# "\s++$" keeps it whole. tests/test_bytelevel.py checks both against Hugging Face's own splitting.
_HF_FORMS = {GPT2_PATTERN: _HF_GPT2, CL100K_PATTERN: CL100K_PATTERN.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")}
_POSSESSIVE_INTERVAL = re.compile(r"(?<!\\)\{\d+(?:,\d*)?\}\+")


def hf_pattern(pattern: str) -> str:
    """The form of a pre-tokenizer regex that Hugging Face's engine (Oniguruma) reads as we do."""
    pattern = _HF_FORMS.get(pattern, pattern)
    if _POSSESSIVE_INTERVAL.search(pattern):
        raise VocabError(
            f"cannot export {pattern!r}: Hugging Face's regex engine (Oniguruma) reads a possessive "
            "interval like '{1,3}+' as a repeated group"
        )
    return pattern


def _hf_split(pattern: str) -> dict:
    return {"type": "Split", "pattern": {"Regex": hf_pattern(pattern)}, "behavior": "Isolated", "invert": False}


class NotByteLevel(VocabError):
    """A valid ``tokenizer.json`` that ``ByteBPE`` does not run (another model, a normalizer, an
    unsupported pre-tokenizer): :func:`wwho.load_tokenizer` hands it to HF ``tokenizers``."""


def from_hf(path: str | Path) -> ByteLevelModel:
    """A merges-rule model from a byte-level BPE ``tokenizer.json``; :class:`NotByteLevel` if it is
    a tokenizer of another kind, :class:`VocabError` if it is broken."""
    path = Path(path)
    raw = _read(path)
    check_saved(path.parent, {path.name: raw}, only_listed=True)
    data = parse_json(raw, source=str(path), error=VocabError)
    where = str(path)
    try:
        model = data["model"]
        if model.get("type", "BPE") != "BPE":
            raise NotByteLevel(f"{path}: model type {brief(model.get('type'))} is not BPE")
        for key, kind in (("continuing_subword_prefix", str), ("end_of_word_suffix", str), ("dropout", float)):
            value = model.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (kind, int) if kind is float
                                                                               else kind)):
                raise VocabError(f"{path}: model.{key} must be {'a string' if kind is str else 'a number'} or "
                                 f"null, not {brief(value)}")  # as HF tokenizers refuses it
            if value:
                raise NotByteLevel(f"{path}: model.{key}={brief(value)} is not supported")
        for key in ("byte_fallback", "fuse_unk"):
            if not isinstance(model.get(key, False), bool):
                raise VocabError(f"{path}: model.{key} must be true or false, not {brief(model[key])}")
        if data.get("normalizer") is not None:
            kind = data["normalizer"].get("type")
            raise NotByteLevel(f"{path}: normalizer {brief(kind)} is not supported (only null)")
        patterns, byte_patterns = _hf_pretokenizer(data.get("pre_tokenizer"), path)
        special, added = {}, {}
        _hf_decoder(data.get("decoder"), path)
        for n, entry in enumerate(data.get("added_tokens") or []):
            text, i = entry["content"], check_id(entry["id"], where, f"added_tokens[{n}]")
            flags = [flag for flag in ("lstrip", "rstrip", "single_word") if entry.get(flag)]
            if flags:  # HF moves spaces into such a token, or matches it only as a whole word
                raise NotByteLevel(f"{path}: added_tokens[{n}] has {'/'.join(flags)}=true, which ByteBPE "
                                   "does not run")
            if not isinstance(text, str) or not text:
                raise VocabError(f"{path}: added_tokens[{n}]: content must be a non-empty string")
            table = special if entry.get("special") else added
            if text in special or text in added:
                raise VocabError(f"{path}: added_tokens[{n}]: {brief(text)} is listed twice")
            table[text] = i
        vocab = model["vocab"]
        if not isinstance(vocab, dict):
            raise VocabError(f"{path}: model.vocab must be an object of token -> id")
        ranks, extra = {}, {}
        named = {**special, **added}
        texts = list(vocab)
        for text, i, token in zip(texts, vocab.values(), _core.gpt2_bytes(texts)):
            if not is_id(i):
                check_id(i, where, f"model.vocab entry {brief(text, 60)}")
            if text in named:
                if named[text] != i:
                    raise VocabError(f"{path}: {brief(text)} has id {i} in model.vocab but another in added_tokens")
                continue
            if token is None or not token:
                extra[i] = text.encode("utf-8", "surrogateescape")
            else:
                ranks[token] = i
        raw_merges = model.get("merges") or []
        if not isinstance(raw_merges, list):
            raise VocabError(f"{path}: model.merges must be a list")
        pairs = _merge_pairs(raw_merges, lambda k: f"{path}: model.merges[{k}]")
        # A pair listed twice has its last place, as in HF tokenizers (each one replaces the one before).
        last = {pair: n for n, pair in enumerate(pairs) if pair is not None}
        merges = [pair for n, pair in enumerate(pairs) if pair is not None and last[pair] == n]
        for n in (n for n, pair in enumerate(pairs) if pair is None):
            # A pair of non-byte-level strings never applies to bytes, but must name tokens (as HF requires).
            merge = raw_merges[n]
            cut = merge.find(" ", 1) if isinstance(merge, str) else -1
            left, right = (merge[:cut], merge[cut + 1:]) if cut > 0 else merge
            for part in (left, right, left + right):
                if part not in vocab:
                    raise VocabError(f"{path}: model.merges[{n}]: {brief(part)} is not a token")
        (bos_id, add_bos), (eos_id, add_eos) = _hf_template(data.get("post_processor"), {**special, **added},
                                                             vocab, path)
        roles = _folder_roles(path.parent, {**vocab, **named})  # where no post-processor says (not added)
        bos_id = roles.get("bos_token") if bos_id is None else bos_id
        eos_id = roles.get("eos_token") if eos_id is None else eos_id
        try:
            pretokenizer = Pretokenizer(tuple(patterns), tuple(byte_patterns), name=path.name)
        except VocabError as exc:  # a bad or empty regex: say which file holds it
            if str(path) in str(exc):
                raise
            raise VocabError(f"{path}: {exc}") from None
        ignore_merges = model.get("ignore_merges", False)
        if not isinstance(ignore_merges, bool):
            raise VocabError(f"{path}: model.ignore_merges must be true or false, not {brief(ignore_merges)}")
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        if isinstance(exc, VocabError):
            raise
        if isinstance(exc, KeyError):
            raise VocabError(f"{path}: the entry {brief(exc.args[0])} is missing (not a tokenizer.json of "
                             "HF tokenizers?)") from None
        raise VocabError(f"{path}: an entry is malformed ({brief(str(exc))})") from None
    return check_model(ByteLevelModel(
        ranks,
        pretokenizer,
        special_tokens=special,
        merges=merges,
        ignore_merges=ignore_merges,
        added_tokens=added,
        extra_tokens=extra,
        bos_id=bos_id,
        add_bos=add_bos,
        eos_id=eos_id,
        add_eos=add_eos,
        name=path.stem,
    ), where)


def _folder_roles(folder: Path, ids: dict[str, int]) -> dict[str, int]:
    """The ids of the BOS and EOS roles that transformers' files beside a ``tokenizer.json`` name
    (``special_tokens_map.json`` first, then ``tokenizer_config.json``, as transformers reads them),
    where the token is in ``ids``: a tokenizer.json alone names no role, and without these a saved
    extension or HF export read back would have no EOS. Files that cannot be read name none (they
    are transformers', and the tokenizer is whole without them)."""
    found: dict[str, int] = {}
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        path = folder / name
        try:
            data = parse_json(read_bytes(path, error=VocabError), source=str(path), error=VocabError) \
                if path.is_file() else {}
        except VocabError:
            continue
        if not isinstance(data, dict):
            continue
        for role in ("bos_token", "eos_token"):
            value = data.get(role)
            text = value.get("content") if isinstance(value, dict) else value
            if role not in found and isinstance(text, str) and is_id(ids.get(text)):
                found[role] = ids[text]
    return found


def _hf_pretokenizer(spec: dict | None, path: Path) -> tuple[list[str], list[str]]:
    """(text regexes, byte-stage regexes) of a Hugging Face pre-tokenizer."""
    steps = [spec] if spec is None or spec.get("type") != "Sequence" else spec["pretokenizers"]
    patterns: list[str] = []
    byte_patterns: list[str] = []
    seen_byte_level = False
    for step in steps:
        kind = step.get("type") if step else None
        target = byte_patterns if seen_byte_level else patterns
        if kind == "ByteLevel":
            if step.get("add_prefix_space"):
                raise NotByteLevel(f"{path}: ByteLevel add_prefix_space=true is not supported")
            if step.get("use_regex", True):
                target.append(_HF_GPT2)
            seen_byte_level = True
        elif kind == "Split":
            if step.get("behavior") != "Isolated" or step.get("invert"):
                raise NotByteLevel(f"{path}: Split behaviour {brief(step.get('behavior'))}/invert is not supported")
            pattern = step["pattern"]
            regex = pattern["Regex"] if "Regex" in pattern else _escape(pattern["String"])
            if _matches_empty(regex):  # HF then cuts the text into characters
                raise NotByteLevel(f"{path}: Split pattern {brief(regex)} matches the empty string")
            target.append(regex)
        elif kind == "Digits":
            target.append(r"\p{N}" if step.get("individual_digits") else r"\p{N}+")
        elif kind == "Punctuation":
            behavior = step.get("behavior", "Isolated")
            if behavior not in ("Isolated", "Contiguous"):
                raise NotByteLevel(f"{path}: Punctuation behaviour {brief(behavior)} is not supported")
            target.append(_PUNCT_RUN if behavior == "Contiguous" else _PUNCT_RUN[:-1])
        else:
            raise NotByteLevel(f"{path}: pre-tokenizer {brief(kind)} is not supported by ByteBPE")
    if not seen_byte_level:
        raise NotByteLevel(f"{path}: no ByteLevel pre-tokenizer, so this is not a byte-level BPE")
    return patterns, byte_patterns


def _escape(text: str) -> str:
    import regex

    return regex.escape(text)


def _matches_empty(pattern: str) -> bool:
    import regex

    try:
        return regex.fullmatch(pattern, "") is not None
    except (regex.error, RecursionError):  # (nested thousands deep)
        return False  # the pre-tokenizer names the bad pattern


def _hf_decoder(decoder: dict | None, path: Path) -> None:
    """A ByteLevel decoder (alone or in a Sequence) is what ``ByteBPE.decode`` does; any other
    decodes differently in HF (``null`` joins the byte-level strings as they are)."""
    steps = decoder.get("decoders") if isinstance(decoder, dict) and decoder.get("type") == "Sequence" else [decoder]
    if not steps or any(not isinstance(step, dict) or step.get("type") != "ByteLevel" for step in steps):
        kind = decoder.get("type") if isinstance(decoder, dict) else decoder
        raise NotByteLevel(f"{path}: decoder {brief(kind)} is not ByteLevel, which ByteBPE does not run")


def _hf_template(post: dict | None, texts: dict[str, int], vocab: dict, path: Path
                 ) -> tuple[tuple[int | None, bool], tuple[int | None, bool]]:
    """((BOS id, add BOS), (EOS id, add EOS)) of a post-processor: none, ByteLevel (offsets only),
    or a TemplateProcessing putting at most one special token before and one after the text (alone
    or in a Sequence with ByteLevel); any other is :class:`NotByteLevel`."""
    none = ((None, False), (None, False))
    steps = post.get("processors") if isinstance(post, dict) and post.get("type") == "Sequence" else [post]
    templates = [step for step in steps or [] if not (isinstance(step, dict) and step.get("type") == "ByteLevel")]
    if not templates or templates == [None]:
        return none
    template = templates[0]
    if len(templates) > 1 or not isinstance(template, dict) or template.get("type") != "TemplateProcessing":
        kind = template.get("type") if isinstance(template, dict) else template
        raise NotByteLevel(f"{path}: post-processor {brief(kind)} is not supported by ByteBPE")
    single = template.get("single") or []
    at = next((n for n, piece in enumerate(single) if "Sequence" in piece), None)
    if at is None or at > 1 or len(single) - at > 2 or any("SpecialToken" not in p for n, p in enumerate(single) if n != at):
        raise NotByteLevel(f"{path}: post-processor template {brief(single, 120)} is not one special token "
                           "before and/or after the text")

    def token(piece: dict) -> int:
        name = piece["SpecialToken"]["id"]
        ids = (template.get("special_tokens") or {}).get(name, {}).get("ids")
        own = texts.get(name, vocab.get(name))
        if own is None or ids != [own]:  # HF adds the template's ids, whatever the vocabulary says
            raise NotByteLevel(f"{path}: post-processor special token {brief(name)} has ids {brief(ids)}, "
                               f"not its token's id {own}")
        return own

    bos = (token(single[0]), True) if at == 1 else (None, False)
    eos = (token(single[at + 1]), True) if len(single) > at + 1 else (None, False)
    return bos, eos


# --- what kind of tokenizer a path holds -------------------------------------------------------
# Every kind, not only byte-level: here, below every loader, so that SGPETokenizer.load and
# ByteBPE.load can name a wrong kind (check_kind) without an import cycle through wwho.loading.


def detect_kind(path: str | os.PathLike) -> str:
    """The kind of tokenizer stored at ``path``, one of :data:`wwho.loading.KINDS` (see
    :mod:`wwho.loading`, which loads it)."""
    try:
        return _detect_kind(path)
    except OSError as exc:  # a folder on the way without search permission, an I/O error
        raise VocabError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _detect_kind(path: str | os.PathLike) -> str:
    p = Path(path)
    if not p.exists():
        if known_encoding_name(path):
            return "bytelevel"
        raise VocabError(f"{p}: no such file or directory, nor a known encoding ({', '.join(TIKTOKEN_ENCODINGS)}, "
                         "also spelled tiktoken:NAME)")
    if p.is_dir():
        _check_kind_files(p)
        for name, kind in (("meta_config.json", "meta"), ("vocab.json", "sgpe"), ("bytelevel.json", "bytelevel"),
                           ("tokenizer.json", None)):
            if os.path.lexists(p / name):  # what is not a regular file (a dangling link) is refused by its loader
                return kind or _detect_kind(p / name)
        raise VocabError(f"{p}: no tokenizer here (expected vocab.json, meta_config.json, bytelevel.json "
                         "or tokenizer.json)")
    suffix = p.suffix.lower()
    head = b"" if suffix in (".gguf", ".tiktoken", ".json") else _head(p)  # a file named otherwise: by its content
    if suffix == ".gguf" or head.startswith(b"GGUF"):
        return "gguf"
    if suffix == ".tiktoken":
        return "bytelevel"
    if suffix == ".json" or head.lstrip().startswith(b"{"):
        data = _read_json(p)
        if isinstance(data, dict) and "model" in data:
            from wwho.binary.io import looks_binary

            return "binary" if looks_binary(data) else "hf"
        if isinstance(data, dict) and "vocab" in data and "merges" in data:
            return "sgpe"
        if isinstance(data, dict) and "offset" in data and "tiktoken_encoding" in data:
            return "meta"
    raise VocabError(f"{p}: cannot tell what kind of tokenizer this is")


#: The file that makes a saved directory a kind of its own; deleted, another kind's files would be loaded.
KIND_FILES = {"meta_config.json": "a meta tokenizer", "bytelevel.json": "a byte-level tokenizer",
              "vocab.json": "an SGPE vocabulary or a meta tokenizer"}


def _check_kind_files(directory: Path) -> None:
    """A saved directory whose manifest lists its kind's own file, now missing, is refused: the files
    left would load as another kind and give other ids (a meta directory without meta_config.json is an
    SGPE vocabulary)."""
    from wwho.savedir import MANIFEST, read_manifest

    manifest = read_manifest(directory / MANIFEST)
    listed = manifest["files"] if manifest else {}
    for name, kind in KIND_FILES.items():
        if name in listed and not os.path.lexists(directory / name):
            raise VocabError(f"{directory}: {name} is missing: the directory was saved as {kind} "
                             f"({MANIFEST} lists it); put it back or save the tokenizer again")


def _head(path: Path) -> bytes:
    """The first bytes of a regular file; what is not one (a FIFO, /dev/zero) is refused here, by name."""
    from wwho.fileio import open_regular

    with open_regular(path, error=VocabError, what="tokenizer file") as f:
        return f.read(64)


#: What each kind is, for messages.
KIND_NAMES = {
    "sgpe": "an SGPE vocabulary (vocab.json)",
    "meta": "a meta tokenizer (tiktoken + SGPE, meta_config.json)",
    "bytelevel": "a byte-level BPE tokenizer (bytelevel.json or .tiktoken)",
    "gguf": "a GGUF vocabulary",
    "binary": "a binary (bytes) tokenizer",
    "hf": "a Hugging Face tokenizer.json",
}


def check_kind(path: str | os.PathLike, expected: str, loader: str) -> None:
    """Raise :class:`VocabError` when ``path`` holds a tokenizer of another kind than ``expected``,
    saying what it is and which function loads any kind (``loader`` is the one that was called).
    Does nothing when ``path`` is that kind or no kind at all (the loader's own error says why)."""
    try:
        kind = detect_kind(path)
    except (VocabError, OSError):
        return
    if kind == expected:
        return
    p = Path(path)
    what = KIND_NAMES[kind]
    if (p if p.is_dir() else p.parent).joinpath("wwho_extend.json").is_file() and kind == "hf":
        what = "a `wwho extend` directory (a Hugging Face tokenizer.json)"
    raise VocabError(f"{p}: this is {what}, not {KIND_NAMES[expected]}, so {loader} cannot read it. "
                     "To fix: wwho.load_tokenizer(path) loads any kind (and wwho commands take it as is)")


def _read_json(path: Path) -> object:
    return parse_json(read_bytes(path, error=VocabError), source=str(path), error=VocabError)
