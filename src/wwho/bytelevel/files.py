"""Files of byte-level BPE tokenizers: ``.tiktoken`` ranks and wwho's own directory format.

* ``.tiktoken``: one ``<base64 token bytes> <rank>`` per line (OpenAI's format). The
  built-in encodings (``o200k_base``, ``cl100k_base``) carry their regex, special tokens
  and the sha256 of the official ranks file; the file itself is found at an explicit
  path or in tiktoken's cache and is never downloaded.
* wwho directory (:func:`save` / :func:`load`): ``ranks.tiktoken`` (the number is the
  token id, which is the rank for tiktoken-style vocabularies), ``bytelevel.json``
  (format version, pre-tokenizer, special/added tokens, merge rule) and, for the
  merges rule, ``merges.txt`` (GPT-2 byte-level strings, one ``a b`` pair per line).
  No pickle anywhere: loading a file never runs code.

Not here: BPE itself (:mod:`wwho.bytelevel`), Hugging Face ``tokenizer.json``
(:mod:`wwho.bytelevel.hf_files`), GGUF (:mod:`wwho.bytelevel.gguf`) and telling a path's kind
(:mod:`wwho.kinds`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from wwho import _core
from wwho.atomic_write import write_bytes
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import (
    CL100K_PATTERN,
    O200K_PATTERN,
    Pretokenizer,
    bytes_to_unicode,
)
from wwho.bytelevel.validate import MAX_ID, check_id, check_model, is_id, pretokenizer_option, table_option
from wwho.errors import VocabError, brief, holds_surrogate, without_surrogates
from wwho.fileio import json_bytes, parse_json, read_bytes
from wwho.manifest import check_saved, check_saved_size, member, sha256
from wwho.savedir import save_files

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
        data = read_file(path)
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
    from wwho.tiktoken_file import FIX, env_name, renamed

    tiktoken_file = renamed("ranks_path", ranks_path, tiktoken_file)
    # Checked before any file is read: a list of names or a misspelt pattern name is the caller's slip.
    if not isinstance(name_or_path, (str, os.PathLike)):  # b"o200k_base" failed inside str.removeprefix
        raise VocabError(f"expected an encoding name or a path to a .tiktoken file, not {brief(name_or_path)}")
    if special_tokens is not None:
        special_tokens = table_option(special_tokens, "special_tokens", "name -> id")
    if pattern is not None:
        pattern = pretokenizer_option(pattern)
    known = TIKTOKEN_ENCODINGS.get(known_encoding_name(name_or_path) or "")
    fix = ("load it as a ranks file of your own: pass pattern= (command line: --pattern), and in Python "
           "special_tokens= for its special tokens")
    if known is not None and pattern is not None:  # it would be ignored: the encoding has its regex
        raise VocabError(f"pattern= is for a .tiktoken file of your own; {known.name} has its own pattern "
                         f"(to use another regex with its ranks, give the file: from_tiktoken(PATH, pattern=...))")
    data = None
    if known is not None:
        path, shown, data = _known_file(known, tiktoken_file)
        fix = (f"give the official {known.name}.tiktoken: {FIX} (or {env_name(known.name)}=PATH, for "
               f"{known.name} alone)")
    else:
        path = shown = Path(name_or_path)
        if not path.exists():
            names = ", ".join(TIKTOKEN_ENCODINGS)
            raise VocabError(f"{name_or_path}: no such ranks file, and not a known encoding ({names})")
        known = TIKTOKEN_ENCODINGS.get(path.name.removesuffix(".tiktoken")) if pattern is None else None
    if data is None:
        data = read_file(path)
    if known is None and pattern is None:  # a renamed official file is still that encoding
        known = known_by_content(data)
    if known is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != known.sha256:
            lines = data.count(b"\n")
            raise VocabError(
                f"{shown}: sha256 {digest} is not that of the official {known.name} ranks file "
                f"({known.sha256}; {known.lines:,} lines, this one has {lines:,}): truncated or "
                f"changed? To fix: {fix}"
            )
        pattern = Pretokenizer.named(known.name)  # o200k_base / cl100k_base are named patterns
        special_tokens = known.special_tokens if special_tokens is None else special_tokens
    elif pattern is None:
        raise VocabError(f"{path}: not a known encoding, so its pre-tokenizer must be given: pattern= (or "
                         "--pattern on the command line): a regex, or gpt2, gpt4, o200k")
    ranks = read_tiktoken_ranks(path, data, contiguous=True)
    name = known.name if known else without_surrogates(path.stem)  # (a label a saved file can hold)
    model = ByteLevelModel(ranks, Pretokenizer.coerce(pattern), special_tokens=dict(special_tokens or {}), name=name)
    return check_model(model, str(path))


def _known_file(known: KnownEncoding, tiktoken_file: str | Path | None) -> tuple[Path, str, bytes | None]:
    """The ranks file for the known encoding ``known``: ``(path, path as said in errors, its bytes if
    read here)``. ``WWHO_TIKTOKEN_FILE`` serves whichever encoding is asked, so a file there that is
    another known encoding's official one is not taken for this one: tiktoken's cache is looked at
    instead (a file given for this encoding alone, or as an argument, is refused by name)."""
    from wwho.tiktoken_file import ENV, missing, ranks_file_for, serves_another

    other = None
    given = ranks_file_for(known.name, tiktoken_file)
    if given is not None:
        path, source = given
        shown = f"{path} (from {source})"
        if not path.exists():  # a FIFO or device is refused by the reader, which says what it is
            raise VocabError(f"{shown}: no such file. To fix: point {source} at the {known.name}.tiktoken "
                             "ranks file")
        data = read_file(path)
        other = known_by_content(data)
        if other is None or other.name == known.name:
            return path, shown, data
        if source != ENV:
            raise VocabError(f"{shown}: this is the official {other.name} ranks file, not {known.name}'s. To fix: "
                             f"give the official {known.name}.tiktoken there")
    path = tiktoken_cache_path(known.url)
    if not path.is_file() and other is not None:
        raise VocabError(serves_another(known.name, other.name, path))
    if not path.is_file():
        raise VocabError(missing(known.name, f"tiktoken's cache, {path}"))
    return path, str(path), None


def read_file(path: Path) -> bytes:
    """Through :func:`wwho.fileio.read_bytes`: a regular file only (a FIFO would block, a device never
    end) and at most its bound."""
    if not os.path.lexists(path):
        raise VocabError(f"{path}: cannot read: No such file or directory")
    return read_bytes(path, error=VocabError)


# --- wwho's directory format --------------------------------------------------------------


def save(tok: ByteLevelModel, directory: str | Path, *, beside: dict[str, bytes] | None = None) -> Path:
    """Write the directory as one save (:func:`wwho.savedir.save_files`), with the files of ``beside``
    (name -> content; ``ByteBPE.save(hf=True)``: an exact ``tokenizer.json``) in the same save."""
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
        "pad_id": tok.pad_id,
        "add_bos": tok.add_bos,
        "add_eos": tok.add_eos,
        **({"chat_template": tok.chat_template} if tok.chat_template is not None else {}),
        "files": {"ranks": RANKS_FILE, "merges": MERGES_FILE if tok.merges is not None else None},
        # What the files hold, so that a file cut at a line end is caught even without the manifest.
        "checks": checks,
    }
    files[CONFIG_FILE] = json_bytes(config)
    files = {**(beside or {}), **files}  # (a name of the directory's own is its own file)
    save_files(directory, files, kind="bytelevel")
    return Path(directory)


def load(path: str | Path) -> ByteLevelModel:
    path = Path(path)
    config_path = path / CONFIG_FILE if path.is_dir() else path
    check_saved_size(config_path)
    raw = read_file(config_path)
    check_saved(config_path.parent, {config_path.name: raw})  # and the other files, against the manifest
    config = parse_json(raw, source=str(config_path), error=VocabError)
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise VocabError(f"{config_path}: not a wwho byte-level tokenizer (format is not {FORMAT!r})")
    if type(config.get("version")) is not int or config["version"] != FORMAT_VERSION:  # (true == 1.0 == 1)
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
    ranks_raw = read_file(ranks_path)
    merges_path = merges_raw = None
    if rule == "merges":
        merges_path = member(base, files.get("merges"), source=where, key="files.merges")
        merges_raw = read_file(merges_path)
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
        pad_id=get("pad_id", int, None),
        add_bos=get("add_bos", bool, False),
        add_eos=get("add_eos", bool, False),
        name=get("name", str, ""),
        chat_template=get("chat_template", str, None),
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
        if not text:  # (the core refuses it too, without knowing the file)
            raise VocabError(f"{where}: {key}: a special or added token cannot be empty (id {i})")
        if holds_surrogate(text):  # (and this one too)
            raise VocabError(f"{where}: {key} entry {brief(text, 60)} holds a lone surrogate, which is no character")
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
        lines = text.splitlines()
    except UnicodeDecodeError as exc:
        raise VocabError(f"{path}: not UTF-8 (byte offset {exc.start})") from None
    except MemoryError:
        raise VocabError(f"{path}: not enough memory to read its {len(data):,} bytes as lines of merges") from None
    start = 1 if lines and lines[0].startswith("#version") else 0
    linenos = range(start + 1, len(lines) + 1)
    lines = lines[start:]
    if "" in lines:  # blank lines are skipped (rare: a separate pass)
        linenos = [n for n, line in zip(linenos, lines) if line]
        lines = [line for line in lines if line]
    pairs = merge_pairs(lines, lambda k: f"{path}:{linenos[k]}")
    if None in pairs:
        k = pairs.index(None)
        raise VocabError(f"{path}:{linenos[k]}: {brief(lines[k], 60)} is not a pair of GPT-2 byte-level strings")
    return pairs


def merge_pairs(merges: list, where) -> list[tuple[bytes, bytes] | None]:
    """``"a b"`` (the first space after the first character, as llama.cpp) or ``["a", "b"]`` in
    GPT-2 byte-level strings -> bytes pairs, None where a part is empty or unmappable (in the core: a
    loop in Python was most of a load's time). ``where(k)`` names merge ``k`` in errors."""
    try:
        return _core.merge_pairs(merges)
    except _core.CoreMergeError as exc:
        kind, k = exc.args
        if kind == "no_space":
            raise VocabError(f"{where(k)}: merge {brief(merges[k])} has no space") from None
        raise VocabError(f"{where(k)}: merge {brief(merges[k])} is neither 'a b' nor [a, b]") from None
