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
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import (
    _HF_GPT2,
    _LLAMA3,
    _PUNCT_RUN,
    CL100K_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    Pretokenizer,
    bytes_to_unicode,
    unicode_to_bytes,
)
from wwho.errors import VocabError
from wwho.fileio import atomic_open, write_json

FORMAT = "wwho-bytelevel"
FORMAT_VERSION = 1
RANKS_FILE, CONFIG_FILE, MERGES_FILE = "ranks.tiktoken", "bytelevel.json", "merges.txt"


@dataclass(frozen=True)
class KnownEncoding:
    """A tiktoken encoding whose regex and special tokens are built in (public facts)."""

    name: str
    url: str
    sha256: str
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
            O200K_PATTERN,
            {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        ),
        KnownEncoding(
            "cl100k_base",
            _BLOB + "cl100k_base.tiktoken",
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
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


# --- .tiktoken ranks files ----------------------------------------------------------------


def read_tiktoken_ranks(path: str | Path, data: bytes | None = None) -> dict[bytes, int]:
    """Parse a ``.tiktoken`` file (``<base64> <rank>`` lines) into token bytes -> rank."""
    path = Path(path)
    if data is None:
        data = _read(path)
    ranks: dict[bytes, int] = {}
    seen_ids: dict[int, int] = {}
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise VocabError(f"{path}:{lineno}: expected '<base64 token> <rank>', got {line[:60]!r}")
        try:
            token = base64.b64decode(fields[0], validate=True)
            rank = int(fields[1])
        except (binascii.Error, ValueError):
            raise VocabError(f"{path}:{lineno}: bad base64 token or rank in {line[:60]!r}") from None
        if rank < 0 or not token:
            raise VocabError(f"{path}:{lineno}: empty token or negative rank in {line[:60]!r}")
        if token in ranks:
            raise VocabError(f"{path}:{lineno}: token {token!r} appears twice")
        if rank in seen_ids:
            raise VocabError(f"{path}:{lineno}: rank {rank} also used on line {seen_ids[rank]}")
        ranks[token] = rank
        seen_ids[rank] = lineno
    if not ranks:
        raise VocabError(f"{path}: no tokens in ranks file")
    return ranks


def write_tiktoken_ranks(path: str | Path, ranks: dict[bytes, int]) -> None:
    lines = [
        base64.b64encode(token) + b" " + str(rank).encode()
        for token, rank in sorted(ranks.items(), key=lambda item: item[1])
    ]
    with atomic_open(path, "wb") as f:
        f.write(b"\n".join(lines) + b"\n")


def tiktoken_cache_path(url: str) -> Path:
    """Where tiktoken caches ``url`` (``$TIKTOKEN_CACHE_DIR``/sha1(url), or its fallbacks)."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if not cache_dir:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(cache_dir) / hashlib.sha1(url.encode()).hexdigest()


def from_tiktoken(
    name_or_path: str | Path,
    *,
    ranks_path: str | Path | None = None,
    pattern: str | None = None,
    special_tokens: dict[str, int] | None = None,
) -> ByteLevelModel:
    """A ranks-rule model from a known encoding name or a ``.tiktoken`` file.

    Known names find their file at ``ranks_path`` or in tiktoken's cache and check its
    sha256. A file named like a known encoding (``o200k_base.tiktoken``) gets that
    encoding's regex and special tokens; any other file needs ``pattern=``.
    """
    known = TIKTOKEN_ENCODINGS.get(str(name_or_path))
    if known is not None:
        candidates = [Path(ranks_path)] if ranks_path is not None else [tiktoken_cache_path(known.url)]
        path = candidates[0]
        if not path.is_file():
            raise VocabError(
                f"the {known.name} ranks file is not available offline: looked for {path}. Pass "
                f"ranks_path=<{known.name}.tiktoken>, or put the file in tiktoken's cache as "
                f"$TIKTOKEN_CACHE_DIR/{tiktoken_cache_path(known.url).name}"
            )
    else:
        path = Path(name_or_path)
        if not path.is_file():
            names = ", ".join(TIKTOKEN_ENCODINGS)
            raise VocabError(f"{name_or_path}: no such ranks file, and not a known encoding ({names})")
        known = TIKTOKEN_ENCODINGS.get(path.name.removesuffix(".tiktoken")) if pattern is None else None
    data = _read(path)
    if known is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != known.sha256:
            raise VocabError(
                f"{path}: sha256 {digest} is not that of the official {known.name} ranks file "
                f"({known.sha256}); pass pattern= (and special_tokens=) to load it as a custom file"
            )
        pattern = Pretokenizer.named(known.name)  # o200k_base / cl100k_base are named patterns
        special_tokens = known.special_tokens if special_tokens is None else special_tokens
    elif pattern is None:
        raise VocabError(f"{path}: not a known encoding, so pass pattern= (a regex or gpt2/gpt4/o200k)")
    ranks = read_tiktoken_ranks(path, data)
    name = known.name if known else path.stem
    return ByteLevelModel(ranks, Pretokenizer.coerce(pattern), special_tokens=dict(special_tokens or {}), name=name)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise VocabError(f"{path}: cannot read: {exc.strerror or exc}") from None


# --- wwho's directory format --------------------------------------------------------------


def save(tok: ByteLevelModel, directory: str | Path) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_tiktoken_ranks(directory / RANKS_FILE, tok.ranks)
    if tok.merges is not None:
        lines = ["#version: 0.2"] + [f"{bytes_to_unicode(a)} {bytes_to_unicode(b)}" for a, b in tok.merges]
        with atomic_open(directory / MERGES_FILE, "w") as f:
            f.write("\n".join(lines) + "\n")
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
    }
    write_json(directory / CONFIG_FILE, config)  # written last: its presence marks a complete save
    return directory


def load(path: str | Path) -> ByteLevelModel:
    path = Path(path)
    config_path = path / CONFIG_FILE if path.is_dir() else path
    config = _read_json(config_path)
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise VocabError(f"{config_path}: not a wwho byte-level tokenizer (format is not {FORMAT!r})")
    if config.get("version") != FORMAT_VERSION:
        raise VocabError(
            f"{config_path}: format version {config.get('version')!r}; this wwho reads {FORMAT_VERSION}"
        )
    base = config_path.parent
    try:
        files = config["files"]
        ranks = read_tiktoken_ranks(base / files["ranks"])
        merges = None
        if config["merge_rule"] == "merges":
            merges = _read_merges_txt(base / files["merges"])
        elif config["merge_rule"] != "ranks":
            raise VocabError(f"{config_path}: merge_rule must be 'ranks' or 'merges'")
        extra_json = config.get("extra_tokens", {})
        extra = {int(i): base64.b64decode(b, validate=True) for i, b in extra_json.items()}
        return ByteLevelModel(
            ranks,
            Pretokenizer.from_json(config["pretokenizer"]),
            special_tokens=config["special_tokens"],
            merges=merges,
            ignore_merges=config["ignore_merges"],
            added_tokens=config.get("added_tokens", {}),
            extra_tokens=extra,
            bos_id=config.get("bos_id"),
            eos_id=config.get("eos_id"),
            add_bos=config.get("add_bos", False),
            add_eos=config.get("add_eos", False),
            name=config.get("name", ""),
        )
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        if isinstance(exc, VocabError):
            raise
        raise VocabError(f"{config_path}: missing or malformed entry: {exc!r}") from None


def _read_merges_txt(path: Path) -> list[tuple[bytes, bytes]]:
    merges = []
    for lineno, line in enumerate(_read(path).decode("utf-8", "strict").splitlines(), 1):
        if not line or (lineno == 1 and line.startswith("#version")):
            continue
        pair = _merge_pair(line, f"{path}:{lineno}")
        if pair is None:
            raise VocabError(f"{path}:{lineno}: {line!r} is not a pair of GPT-2 byte-level strings")
        merges.append(pair)
    return merges


def _read_json(path: Path):
    try:
        return json.loads(_read(path).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VocabError(f"{path}: not valid UTF-8 JSON: {exc}") from None


def _merge_pair(merge, where: str) -> tuple[bytes, bytes] | None:
    """``"a b"`` or ``["a", "b"]`` in GPT-2 byte-level strings -> bytes pair (None if unmappable)."""
    if isinstance(merge, str):
        cut = merge.find(" ", 1)  # as llama.cpp: the first space after the first char
        if cut < 0:
            raise VocabError(f"{where}: merge {merge!r} has no space")
        left, right = merge[:cut], merge[cut + 1 :]
    elif isinstance(merge, (list, tuple)) and len(merge) == 2 and all(isinstance(m, str) for m in merge):
        left, right = merge
    else:
        raise VocabError(f"{where}: merge {merge!r} is neither 'a b' nor [a, b]")
    a, b = unicode_to_bytes(left), unicode_to_bytes(right)
    return None if a is None or b is None or not a or not b else (a, b)


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
    path = Path(path)
    write_json(path, hf_tokenizer_json(tok), indent=None)
    return path


def hf_tokenizer_json(tok: ByteLevelModel) -> dict:
    """The Hugging Face ``tokenizer.json`` data of ``tok`` (what :func:`export_hf` writes)."""
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
    added = [
        {"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": special}
        for special, table in ((True, tok.special_tokens), (False, tok.added_tokens))
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


# Oniguruma (Ruby syntax, as in Hugging Face tokenizers) reads "{1,3}+" as "({1,3})+", not as a
# possessive interval, so tiktoken's possessive rewrites of the GPT-2 and cl100k regexes are exported
# in their original forms, which split the same way (tests/test_bytelevel.py checks both claims).
_HF_FORMS = {GPT2_PATTERN: _HF_GPT2, CL100K_PATTERN: _LLAMA3}
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


def from_hf(path: str | Path) -> ByteLevelModel:
    """A merges-rule model from a byte-level BPE ``tokenizer.json``."""
    path = Path(path)
    data = _read_json(path)
    try:
        model = data["model"]
        if model.get("type", "BPE") != "BPE":
            raise VocabError(f"{path}: model type {model.get('type')!r} is not BPE")
        for key in ("continuing_subword_prefix", "end_of_word_suffix", "dropout"):
            if model.get(key):
                raise VocabError(f"{path}: model.{key}={model[key]!r} is not supported")
        if data.get("normalizer") is not None:
            kind = data["normalizer"].get("type")
            raise VocabError(f"{path}: normalizer {kind!r} is not supported (only null)")
        patterns, byte_patterns = _hf_pretokenizer(data.get("pre_tokenizer"), path)
        special, added = {}, {}
        for entry in data.get("added_tokens") or []:
            (special if entry.get("special") else added)[entry["content"]] = int(entry["id"])
        ranks, extra = {}, {}
        for text, i in model["vocab"].items():
            if text in special or text in added:
                continue
            token = unicode_to_bytes(text)
            if token is None or not token:
                extra[int(i)] = text.encode("utf-8", "surrogateescape")
            else:
                ranks[token] = int(i)
        merges = []
        for n, merge in enumerate(model.get("merges") or []):
            pair = _merge_pair(merge, f"{path}: model.merges[{n}]")
            if pair is not None:  # a pair of non-byte-level strings can never apply
                merges.append(pair)
        bos_id, add_bos = _hf_bos(data.get("post_processor"), {**special, **added})
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        if isinstance(exc, VocabError):
            raise
        raise VocabError(f"{path}: missing or malformed entry: {exc!r}") from None
    return ByteLevelModel(
        ranks,
        Pretokenizer(tuple(patterns), tuple(byte_patterns), name=path.name),
        special_tokens=special,
        merges=merges,
        ignore_merges=bool(model.get("ignore_merges", False)),
        added_tokens=added,
        extra_tokens=extra,
        bos_id=bos_id,
        add_bos=add_bos,
        name=path.stem,
    )


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
                raise VocabError(f"{path}: ByteLevel add_prefix_space=true is not supported")
            if step.get("use_regex", True):
                target.append(_HF_GPT2)
            seen_byte_level = True
        elif kind == "Split":
            if step.get("behavior") != "Isolated" or step.get("invert"):
                raise VocabError(f"{path}: Split behaviour {step.get('behavior')!r}/invert is not supported")
            pattern = step["pattern"]
            target.append(pattern["Regex"] if "Regex" in pattern else _escape(pattern["String"]))
        elif kind == "Digits":
            target.append(r"\p{N}" if step.get("individual_digits") else r"\p{N}+")
        elif kind == "Punctuation":
            behavior = step.get("behavior", "Isolated")
            if behavior not in ("Isolated", "Contiguous"):
                raise VocabError(f"{path}: Punctuation behaviour {behavior!r} is not supported")
            target.append(_PUNCT_RUN if behavior == "Contiguous" else _PUNCT_RUN[:-1])
        else:
            raise VocabError(f"{path}: pre-tokenizer {kind!r} is not supported by ByteBPE")
    if not seen_byte_level:
        raise VocabError(f"{path}: no ByteLevel pre-tokenizer, so this is not a byte-level BPE")
    return patterns, byte_patterns


def _escape(text: str) -> str:
    import regex

    return regex.escape(text)


def _hf_bos(post: dict | None, texts: dict[str, int]) -> tuple[int | None, bool]:
    if not post or post.get("type") != "TemplateProcessing":
        return None, False
    first = (post.get("single") or [{}])[0]
    token = first.get("SpecialToken", {}).get("id")
    return (texts[token], True) if token in texts else (None, False)
