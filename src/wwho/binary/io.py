"""Load, save and recognise binary tokenizers stored as standard HF ``tokenizer.json``.

A binary tokenizer is a plain BPE model whose vocabulary holds all 256 bytes as
Latin-1 characters (and only Latin-1 characters), with no normalizer, no
pre-tokenizer, and either no decoder or ``Fuse`` (which only concatenates). Nothing
else marks it: the file is exactly what stock HF ``tokenizers`` writes and reads.

What this module deliberately does not do: train (``train``), or convert other
tokenizer formats.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: `import wwho` and `wwho --version` do without HF tokenizers
    from tokenizers import Tokenizer

from wwho.atomic_write import atomic_open
from wwho.errors import VocabError, brief
from wwho.fileio import parse_json, read_bytes
from wwho.manifest import check_saved


def looks_binary(data: Any) -> bool:
    """True if parsed ``tokenizer.json`` content is a binary (Latin-1 byte) BPE tokenizer."""
    if not isinstance(data, dict):
        return False
    model = data.get("model")
    if not isinstance(model, dict) or model.get("type") != "BPE" or not isinstance(model.get("vocab"), dict):
        return False
    if data.get("normalizer") is not None or data.get("pre_tokenizer") is not None:
        return False
    decoder = data.get("decoder")
    if decoder is not None and decoder != {"type": "Fuse"}:
        return False
    vocab = model["vocab"]
    if any(chr(b) not in vocab for b in range(256)):
        return False
    return all(isinstance(tok, str) and tok and max(tok) <= "\xff" for tok in vocab)


#: How HF ``tokenizers`` begins a ``tokenizer.json`` (compact or pretty, maybe after a BOM).
_TOKENIZER_JSON = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"version"\s*:\s*"[^"]{0,16}"\s*,\s*"truncation"\s*:')


def is_saved_binary_tokenizer(path: str | Path) -> bool:
    """Whether ``path`` is a binary tokenizer's ``tokenizer.json`` (a training's ``-o``), cheaply: only
    a file that begins as a ``tokenizer.json`` does is parsed. For the walks of corpus folders, which
    do not read one as training data."""
    from wwho.errors import WwhoError
    from wwho.fileio import open_regular

    try:
        with open_regular(path) as f:
            head = f.read(64)
    except (OSError, WwhoError):
        return False  # reading it says why
    return bool(_TOKENIZER_JSON.match(head)) and is_binary_tokenizer(path)


def is_binary_tokenizer(path: str | Path) -> bool:
    """True if ``path`` is a ``tokenizer.json`` of a binary tokenizer (judged by content).

    Any file that is not such JSON (missing, unreadable, GGUF, a text tokenizer) gives False.
    """
    from wwho.errors import WwhoError
    from wwho.fileio import open_regular, parse_json

    try:
        with open_regular(path) as f:  # a regular file only: a FIFO would block, a device never end
            head = f.read(1)
        if head not in (b"{", b" ", b"\n", b"\r", b"\t", b"\xef"):  # JSON object, maybe after a BOM
            return False
        # parse_json: JSON nested too deeply is an error like any other, not a RecursionError
        data = parse_json(read_bytes(path).decode("utf-8-sig"), source=str(path))
    except (OSError, ValueError, WwhoError):
        return False
    return looks_binary(data)


def tokenizer_file(path: str | Path) -> Path:
    """``path``, or the ``tokenizer.json`` in it where it is a folder (as every loader takes one)."""
    path = Path(path)
    return path / "tokenizer.json" if path.is_dir() else path


def load(path: str | Path) -> Tokenizer:
    """Load a binary ``tokenizer.json`` (or the one in a folder ``path``); :class:`VocabError` if it
    cannot be read or is not binary.

    The ids are checked before HF ``tokenizers`` sees them (it keeps the last of two tokens
    with one id and stores ids as u32): integers, not booleans, each once, in [0, 2**31).
    The returned tokenizer has ``encode_special_tokens = True``: special-token text inside
    the data is encoded as bytes, never as a special token (HF does not save this flag).
    """
    path = tokenizer_file(path)
    raw = read_bytes(path, error=VocabError, what="tokenizer")
    check_saved(path.parent, {path.name: raw}, only_listed=True)
    return loads(raw, source=str(path))


def loads(raw: bytes, *, source: str) -> Tokenizer:
    """:func:`load` of a ``tokenizer.json``'s bytes (an unpickled tokenizer's too), ``source`` naming them."""
    data = parse_json(raw, source=source, error=VocabError)
    if not looks_binary(data):
        raise VocabError(f"{source}: not a binary tokenizer (need a BPE model over all 256 Latin-1 bytes, "
                         "no normalizer or pre-tokenizer, decoder null or Fuse)")
    check_ids(data, source)
    check_special_tokens(data, source)
    check_dense_ids(data, source)
    check_merges(data, source)
    check_bytes_kept(data, source)
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_str(raw.decode("utf-8"))
    except BaseException as exc:  # noqa: BLE001 -- a plain Exception for bad files, a panic for some
        if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
            raise  # KeyboardInterrupt, SystemExit
        raise VocabError(f"{source}: HF tokenizers cannot load it: {brief(str(exc), 200)}") from None
    tokenizer.encode_special_tokens = True
    check_template(tokenizer, source)
    return tokenizer


def check_ids(data: dict, source: str) -> None:
    """The ids of an HF ``tokenizer.json`` (model vocabulary and added tokens): integers in
    [0, 2**31), one token per id (an added token may repeat its model entry)."""
    owner: dict[int, str] = {}
    vocab = data["model"]["vocab"]
    for token, i in vocab.items():
        _check_id(i, source, f"model.vocab entry {brief(token, 60)}")
        if i in owner:
            raise VocabError(f"{source}: model.vocab entries {brief(owner[i], 60)} and {brief(token, 60)} have the "
                             f"same id {i}")
        owner[i] = token
    added = data.get("added_tokens") or []
    if not isinstance(added, list):
        raise VocabError(f"{source}: added_tokens must be a list")
    for n, entry in enumerate(added):
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise VocabError(f"{source}: added_tokens[{n}] must be an object with a string 'content'")
        i = _check_id(entry.get("id"), source, f"added_tokens[{n}]")
        if owner.get(i, entry["content"]) != entry["content"]:
            raise VocabError(f"{source}: added_tokens[{n}] {brief(entry['content'], 60)} has id {i}, which is "
                             f"{brief(owner[i], 60)}")
        owner[i] = entry["content"]


def check_special_tokens(data: dict, source: str) -> None:
    """No special token is spelt as a model token (its bytes), and a template adds special tokens by
    their own ids: decode drops special tokens, so in either case the bytes encoded would not come
    back (a special token "a" dropped every byte 0x61; a template's special token given byte 0x61's
    id added an "a" to the data)."""
    vocab = data["model"]["vocab"]
    specials: dict[str, int] = {}
    for n, entry in enumerate(data.get("added_tokens") or []):
        if entry.get("special") is True:
            if entry["content"] in vocab:
                raise VocabError(f"{source}: added_tokens[{n}] {brief(entry['content'], 60)} is a special token spelt as "
                                 f"the model token of id {vocab[entry['content']]}, whose bytes decode would then drop")
            specials[entry["content"]] = entry["id"]
    processor = data.get("post_processor")
    processors = processor.get("processors") if isinstance(processor, dict) else None
    for each in processors if isinstance(processors, list) else [processor]:
        table = each.get("special_tokens") if isinstance(each, dict) else None
        for name, spec in (table.items() if isinstance(table, dict) else ()):
            tokens = spec.get("tokens") if isinstance(spec, dict) else None
            ids = spec.get("ids") if isinstance(spec, dict) else None
            if not (isinstance(tokens, list) and isinstance(ids, list) and len(tokens) == len(ids)
                    and all(isinstance(t, str) and specials.get(t) == i for t, i in zip(tokens, ids))):
                raise VocabError(f"{source}: post_processor adds {brief(name, 60)} as ids {brief(ids, 60)}, not as "
                                 "the special tokens of those names (decode would give their ids' bytes as data)")


def check_dense_ids(data: dict, source: str) -> None:
    """The ids of a binary tokenizer are 0..N-1 with none missing. HF counts its vocabulary rather
    than taking the largest id, so past a gap ``encode`` would give ids that ``decode`` refuses as
    out of range."""
    ids = set(data["model"]["vocab"].values())
    ids.update(entry["id"] for entry in data.get("added_tokens") or [])
    if max(ids) >= len(ids):
        missing = next(i for i in range(len(ids)) if i not in ids)
        raise VocabError(f"{source}: no token has id {missing}, but id {max(ids)} exists: the ids of a "
                         f"binary tokenizer must be 0..{len(ids) - 1} without gaps")


#: Settings a binary tokenizer must leave off, with the value that leaves them off: each one changes
#: what ``encode`` gives so that ``decode`` no longer returns the bytes (a cut, a pad, a suffix on
#: every word, random merges). HF ``tokenizers`` never writes them for a trained binary tokenizer.
_OFF = (("model", "dropout", (None, 0, 0.0)), ("model", "continuing_subword_prefix", (None, "")),
        ("model", "end_of_word_suffix", (None, "")), (None, "truncation", (None,)),
        (None, "padding", (None,)))


def check_bytes_kept(data: dict, source: str) -> None:
    """No setting that loses or adds bytes between ``encode`` and ``decode`` (see ``_OFF``). Checked
    before HF reads the file: HF panics on some (a ``continuing_subword_prefix`` longer than a merge)."""
    for part, key, off in _OFF:
        value = (data["model"] if part else data).get(key)
        if not any(value == ok and type(value) is type(ok) for ok in off):
            name = f"{part}.{key}" if part else key
            allowed = "null" if off == (None,) else f"null or {off[1]!r}"
            raise VocabError(f"{source}: {name} is {brief(value)}; a binary tokenizer needs it {allowed}, "
                             "or decode would not give back the bytes encoded")


def check_template(tokenizer: Tokenizer, source: str) -> None:
    """The post-processor (a template) keeps the data, once and in order, with or without its special
    tokens: ``"single": []`` would drop every byte, ``"$A $A"`` double them."""
    probe = "\x00\x01\xff"
    for specials in (False, True):
        enc = tokenizer.encode(probe, add_special_tokens=specials)
        kept = [tok for tok, special in zip(enc.tokens, enc.special_tokens_mask) if not special]
        if "".join(kept) != probe:
            got = "".join(kept).encode("latin-1", "replace").hex(" ") or "nothing"
            how = "with" if specials else "without"
            raise VocabError(f"{source}: post_processor does not keep the data once ({how} special tokens, "
                             f"the bytes 00 01 ff become {got[:60]})")


def check_merges(data: dict, source: str) -> None:
    """Every model token longer than one byte is the result of a merge: a merge list cut short
    (a truncated file) leaves tokens that can never be produced, and HF would load it silently."""
    model = data["model"]
    results = set()
    merges = model.get("merges")
    if merges is not None and not isinstance(merges, list):
        raise VocabError(f"{source}: model.merges must be a list of merges, not {brief(merges)}")
    for n, merge in enumerate(merges or []):
        if isinstance(merge, str):
            cut = merge.find(" ", 1)
            merge = [merge[:cut], merge[cut + 1:]] if cut > 0 else [merge]
        if not (isinstance(merge, list) and len(merge) == 2 and all(isinstance(m, str) for m in merge)):
            raise VocabError(f"{source}: model.merges[{n}] is {brief(merge)}, not a pair of tokens")
        results.add(merge[0] + merge[1])
    lost = [t for t in model["vocab"] if len(t) > 1 and t not in results]
    if lost:
        first = min(lost, key=model["vocab"].__getitem__)
        raise VocabError(f"{source}: {len(lost):,} tokens of several bytes are the result of no merge, e.g. "
                         f"{brief(first, 40)} (id {model['vocab'][first]}): the merge list "
                         f"({len(results):,} merges) looks truncated")


def _check_id(value: object, source: str, what: str) -> int:
    if type(value) is not int or not 0 <= value < 1 << 31:
        raise VocabError(f"{source}: {what}: id {brief(value)} is not an integer in [0, 2**31)")
    return value


def save(tokenizer: Tokenizer, path: str | Path, *, pretty: bool = False, replace: bool = True) -> None:
    """Write ``tokenizer.json`` atomically (temp file + rename): never a torn file. ``replace=False``:
    a file that appeared at ``path`` meanwhile is kept (:func:`wwho.atomic_write.atomic_open`)."""
    text = tokenizer.to_str(pretty=pretty)
    with atomic_open(path, "w", replace=replace) as f:
        f.write(text)
