"""Hugging Face ``tokenizer.json`` of a byte-level BPE, both ways: :func:`export_hf` (one file, or a
directory ``AutoTokenizer.from_pretrained`` reads) and :func:`from_hf` (a byte-level BPE
``tokenizer.json`` read back as a merges-rule model).

For the ranks rule the merge list holds, for every token, every split into two tokens, ordered by
the token's rank, which lets the Hugging Face merge rule reproduce tiktoken's. Ids the vocabulary
leaves without a token get special ``<|reserved_ID|>`` tokens, so that ``len()`` of the
Hugging Face tokenizer is the model's row count.

Not here: ``.tiktoken`` files and wwho's own directory format (:mod:`wwho.bytelevel.files`),
SGPE's export (:mod:`wwho.export.sgpe_hf`), and tokenizer.json files of other models, which
:func:`wwho.load_tokenizer` hands to HF ``tokenizers`` (:class:`NotByteLevel` says which).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wwho import _core
from wwho.atomic_write import write_bytes
from wwho.bytelevel.files import merge_pairs, read_file
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.portable import check_portable, hf_pattern
from wwho.bytelevel.pretokenize import (
    _HF_GPT2,
    Pretokenizer,
    bytes_to_unicode,
    hf_punctuation_class,
)
from wwho.bytelevel.tiktoken_names import END_OF_TEXT
from wwho.bytelevel.validate import all_ids, check_id, check_model, is_id
from wwho.errors import VocabError, WwhoWarning, brief, holds_surrogate, without_surrogates
from wwho.fileio import json_bytes, parse_json, read_bytes
from wwho.manifest import check_saved
from wwho.notices import warn
from wwho.savedir import save_files


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
    ``add_bos``), ``tokenizer_config.json`` (``PreTrainedTokenizerFast``, the BOS/EOS/padding roles,
    ``add_bos_token``/``add_eos_token``) and ``special_tokens_map.json``."""
    data = hf_json(tok)
    roles = model_roles(tok)
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **roles,
        "add_bos_token": bool(tok.add_bos),
        "add_eos_token": bool(tok.add_eos),
        # Spaces are part of byte-level tokens: any clean-up would change the decoded text.
        "clean_up_tokenization_spaces": False,
        **({"chat_template": tok.chat_template} if tok.chat_template is not None else {}),
        "wwho": {"kind": "bytelevel", "name": tok.name},
    }
    return {
        "tokenizer.json": json_bytes(data, indent=None),
        "tokenizer_config.json": json_bytes(config),
        "special_tokens_map.json": json_bytes(roles),
    }


def model_roles(model: ByteLevelModel) -> dict[str, str]:
    """transformers' BOS, EOS and padding roles of ``model``: the tokens of its ``bos_id``,
    ``eos_id`` and ``pad_id`` (a GGUF's), and for a tiktoken encoding, which names none, its
    ``<|endoftext|>`` as the end of a text, as GPT-2's files on the Hub name it (no padding role:
    GPT-2's files name none either)."""
    roles = {}
    named = {*model.special_tokens.values(), *model.added_tokens.values()}
    plain = []
    for role, token_id in (("bos_token", model.bos_id), ("eos_token", model.eos_id), ("pad_token", model.pad_id)):
        if token_id is None:
            continue
        if token_id in named:
            roles[role] = token_text(model, token_id)
        else:
            plain.append(f"{role} {token_id} ({brief(token_text(model, token_id))})")
    if model.eos_id is None and END_OF_TEXT in model.special_tokens:
        roles["eos_token"] = END_OF_TEXT
    if plain:
        # transformers makes a role's token special, split out of any text that holds it, where this
        # vocabulary reads that text as ordinary bytes (a GGUF's NORMAL token named as BOS): the
        # export would give other ids than the tokenizer.
        warn(f"{' and '.join(plain)}: an ordinary token of this vocabulary, not a special one, left out of the "
             "Hugging Face files' roles, where transformers would make it special and split its text out "
             "(the ids added around encodings stay)", WwhoWarning)
    return roles


#: The bytes that no UTF-8 text holds (C0, C1 would start overlong forms; F5-FF no code point).
NEVER_UTF8 = frozenset((0xC0, 0xC1, *range(0xF5, 0x100)))


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
    for p in (*tok.pattern.patterns, *tok.pattern.byte_patterns):
        if _matches_empty(p):  # HF's Split cuts the text into characters around empty matches
            raise VocabError(f"cannot export: the pre-tokenizer regex {brief(p)} matches the empty string, which HF "
                             "tokenizers' Split cuts otherwise than wwho: the ids would differ. Make every "
                             "alternative take at least one character (\\w+, not \\w*)")
    # A merge given twice applies at its first place (llama.cpp's rule, and the core's); HF takes the
    # last: written once, it means the same to both.
    merges = list(dict.fromkeys(tok.merges)) if tok.merges is not None else tiktoken_merges(tok.ranks)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    steps = [_hf_split(p) for p in tok.pattern.patterns] + [byte_level]
    steps += [_hf_split(p, byte_level=True) for p in tok.pattern.byte_patterns]
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
        # BOS/EOS where the model adds them: the one file and a directory encode alike
        "post_processor": hf_post_processor(tok),
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


def _hf_split(pattern: str, *, byte_level: bool = False) -> dict:
    return {"type": "Split", "pattern": {"Regex": hf_pattern(pattern, byte_level=byte_level)}, "behavior": "Isolated",
            "invert": False}


class NotByteLevel(VocabError):
    """A valid ``tokenizer.json`` that ``ByteBPE`` does not run (another model, a normalizer, an
    unsupported pre-tokenizer): :func:`wwho.load_tokenizer` hands it to HF ``tokenizers``.
    ``raw`` and ``data`` are the file's bytes and their parse, where :func:`from_hf` raised it, so
    that the loader that takes the file on reads and parses it no more (a large vocabulary's JSON
    is slow to parse) and hands HF the very bytes checked here."""

    raw: bytes | None = None
    data: Any = None

    def __reduce__(self):  # (pickled, as for another process, it is its message alone: not the file)
        return type(self), self.args


def from_hf(path: str | Path) -> ByteLevelModel:
    """A merges-rule model from a byte-level BPE ``tokenizer.json``; :class:`NotByteLevel` if it is
    a tokenizer of another kind, :class:`VocabError` if it is broken."""
    path = Path(path)
    raw = read_file(path)
    check_saved(path.parent, {path.name: raw}, only_listed=True)
    data = parse_json(raw, source=str(path), error=VocabError)
    try:
        return _from_parsed(data, path)
    except NotByteLevel as exc:
        exc.raw, exc.data = raw, data
        raise


def _check_hf_types(data: Any, path: Path) -> None:
    """Refuse a ``tokenizer.json`` whose fields outside the model HF ``tokenizers`` would refuse by
    their type (or absence), though ByteBPE itself does not read them: loaded here, the file would
    encode while HF, and the transformers that reads it, cannot load it."""
    if not isinstance(data, dict):
        return  # (the model's checks say what is wrong)

    def refuse(key: str, should: str, value: Any) -> None:
        raise VocabError(f"{path}: {key} must be {should}, not {brief(value)} (HF tokenizers refuses it too)")

    if "version" in data and data["version"] != "1.0":
        refuse("version", "'1.0'", data["version"])
    if "added_tokens" in data and not isinstance(data["added_tokens"], list):
        refuse("added_tokens", "a list", data["added_tokens"])
    for key in ("truncation", "padding"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            refuse(key, "an object or null", data[key])
    model = data.get("model")
    if isinstance(model, dict) and model.get("unk_token") is not None and not isinstance(model["unk_token"], str):
        refuse("model.unk_token", "a string or null", model["unk_token"])
    flags = {"ByteLevel": (("add_prefix_space", True), ("trim_offsets", True), ("use_regex", False)),
             "Split": (("invert", True),)}
    inner = {"pre_tokenizer": "pretokenizers", "decoder": "decoders", "post_processor": "processors"}
    for part, sequence in inner.items():
        spec = data.get(part)
        steps = [spec]
        if isinstance(spec, dict) and spec.get("type") == "Sequence":
            steps = spec.get(sequence) or []
        for step in steps if isinstance(steps, list) else []:
            if not isinstance(step, dict):
                continue
            kind = step.get("type")
            for key, needed in flags.get(kind, ()) if isinstance(kind, str) else ():
                if key not in step and needed:
                    raise VocabError(f"{path}: {part} {kind}: {key} is missing, which HF tokenizers needs")
                if key in step and not isinstance(step[key], bool):
                    refuse(f"{part} {kind}: {key}", "true or false", step[key])


def _from_parsed(data: Any, path: Path) -> ByteLevelModel:
    """:func:`from_hf` of the file's parsed JSON."""
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
        _check_hf_types(data, path)  # (after what hands a file of another kind to HF)
        for n, entry in enumerate(data.get("added_tokens") or []):
            text, i = entry["content"], check_id(entry["id"], where, f"added_tokens[{n}]")
            flags = [flag for flag in ("lstrip", "rstrip", "single_word") if entry.get(flag)]
            if flags:  # HF moves spaces into such a token, or matches it only as a whole word
                raise NotByteLevel(f"{path}: added_tokens[{n}] has {'/'.join(flags)}=true, which ByteBPE "
                                   "does not run")
            if not isinstance(text, str) or not text:
                raise VocabError(f"{path}: added_tokens[{n}]: content must be a non-empty string")
            if holds_surrogate(text):
                raise VocabError(f"{path}: added_tokens[{n}]: content {brief(text)} holds a lone surrogate, "
                                 "which is no character")
            table = special if entry.get("special") else added
            if text in special or text in added:
                raise VocabError(f"{path}: added_tokens[{n}]: {brief(text)} is listed twice")
            table[text] = i
        vocab = model["vocab"]
        if not isinstance(vocab, dict):
            raise VocabError(f"{path}: model.vocab must be an object of token -> id")
        renumbered = _renumber_added(data.get("added_tokens") or [], vocab, special, added)
        raw_merges = model.get("merges") or []
        if not isinstance(raw_merges, list):
            raise VocabError(f"{path}: model.merges must be a list")
        forms = set(map(type, raw_merges))
        if str in forms and len(forms) > 1:
            raise VocabError(f"{path}: model.merges mixes 'a b' strings and [a, b] pairs, which HF tokenizers "
                             "refuses: write them all in one form")
        pairs = merge_pairs(raw_merges, lambda k: f"{path}: model.merges[{k}]")
        ranks, extra = {}, {}
        named = {**special, **added}
        texts = list(vocab)
        tokens = _core.gpt2_bytes(texts)
        # An added token that model.vocab lists is an ordinary token too where a merge makes it (the
        # core joins every merge's parts once: no token is cut at every offset).
        both = [text for text in texts if text in named] if named else []  # (in the file's order)
        both_tokens = _core.gpt2_bytes(both)
        spelled = [token for token in both_tokens if token]
        repeated, found = _core.merge_facts(pairs, spelled)
        made = {token for token, yes in zip(spelled, found) if yes}
        ids = list(vocab.values())
        entries = zip(texts, ids, tokens)
        if None not in tokens and b"" not in tokens and all_ids(ids):
            # The usual file at C speed: every entry an ordinary token but the named ones, which the
            # loop below then takes out where its rule says so.
            ranks = dict(zip(tokens, ids))
            entries = zip(both, [vocab[t] for t in both], both_tokens)
        for text, i, token in entries:
            if not is_id(i):
                check_id(i, where, f"model.vocab entry {brief(text, 60)}")
            if text in named:  # (with model.vocab's id: _renumber_added)
                if not token or (token not in made and (len(token) > 1 or token[0] in NEVER_UTF8)):
                    if ranks.get(token) == i:  # (put there by the bulk step above)
                        del ranks[token]
                    continue
                # Also an ordinary token: one byte (a base token, which every text is spelt with) or made
                # by a merge ('ab' from 'a' + 'b'), as HF keeps it. A byte no UTF-8 text holds is no such
                # base token: deepseek's added 'õ' and 'ø' are listed as the bytes F5 and F8, which only
                # the added token reaches (as in llama.cpp, which reads them as that text).
            if token is None or not token:
                extra[i] = text.encode("utf-8", "surrogateescape")
            else:
                ranks[token] = i
        unmapped = None in pairs  # (None: a pair of strings that are not byte-level)
        if repeated or unmapped:
            # A pair listed twice has its last place, as in HF tokenizers (each one replaces the one before).
            last = {pair: n for n, pair in enumerate(pairs)}
            merges = [pair for n, pair in enumerate(pairs) if pair is not None and last[pair] == n]
        else:
            merges = pairs
        for n in (n for n, pair in enumerate(pairs) if pair is None) if unmapped else ():
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
        pad_id = roles.get("pad_token")
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
    model_data = check_model(ByteLevelModel(
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
        pad_id=pad_id,
        name=without_surrogates(path.parent.name if path.name == "tokenizer.json" and path.parent.name
                                else path.stem),
    ), where, lost_hint=", or they are special tokens that added_tokens does not list (add them there, with "
                         "\"special\": true)")
    if renumbered is not None:  # (said once wwho runs the file: a file HF runs instead keeps HF's word)
        _warn_renumbered(renumbered, len(vocab), path)
    return model_data


def _folder_roles(folder: Path, ids: dict[str, int]) -> dict[str, int]:
    """The ids of the BOS, EOS and padding roles that transformers' files beside a ``tokenizer.json`` name
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
        for role in ("bos_token", "eos_token", "pad_token"):
            value = data.get(role)
            text = value.get("content") if isinstance(value, dict) else value
            if role not in found and isinstance(text, str) and is_id(ids.get(text)):
                found[role] = ids[text]
    return found


def _renumber_added(entries: list, vocab: dict, special: dict[str, int], added: dict[str, int]) -> tuple | None:
    """Give ``special`` and ``added`` the ids HF ``tokenizers`` gives them, whatever the file's
    ``"id"`` says: a token ``model.vocab`` lists takes that id; any other, in the file's order, the
    model vocabulary's size, then one past the id the one before took. A file HF wrote agrees; the
    first token of one edited by hand that does not is returned, ``(index, text, given, id,
    listed)``, for :func:`_warn_renumbered`."""
    size, top, first = len(vocab), None, None
    for n, entry in enumerate(entries):
        text = entry["content"]
        table = special if text in special else added
        i = vocab.get(text)
        listed = is_id(i)
        if not listed:
            i = size if top is None else top + 1
            top = i
        if table[text] != i:
            first = first or (n, text, table[text], i, listed)
            table[text] = i
    return first


def _warn_renumbered(first: tuple, size: int, path: Path) -> None:
    n, text, given, i, listed = first
    why = (f"model.vocab lists it with id {i}" if listed else
           f"a token model.vocab lacks takes the next id after the model's {size:,} tokens, in the file's order")
    warn(f"{path}: added_tokens[{n}] {brief(text)} has id {given}, but HF tokenizers gives it {i} ({why}): "
         "wwho takes HF's ids", WwhoWarning)


def _hf_pretokenizer(spec: dict | None, path: Path) -> tuple[list[str], list[str]]:
    """(text regexes, byte-stage regexes) of a Hugging Face pre-tokenizer."""
    steps = [spec] if spec is None or spec.get("type") != "Sequence" else spec["pretokenizers"]
    patterns: list[str] = []
    byte_patterns: list[str] = []
    seen_byte_level = False
    def flag(step: dict, key: str, default: bool) -> bool:
        # HF refuses a flag that is no JSON boolean; read loosely, "false" would mean true here.
        value = step.get(key, default)
        if value is not True and value is not False:
            raise VocabError(f"{path}: pre_tokenizer {step.get('type')}: {key} must be true or false, not "
                             f"{brief(value)}")
        return value

    for step in steps:
        kind = step.get("type") if step else None
        target = byte_patterns if seen_byte_level else patterns
        if kind == "ByteLevel":
            if seen_byte_level:  # HF maps the bytes twice: 'Ġ' becomes two characters' bytes
                raise NotByteLevel(f"{path}: a second ByteLevel pre-tokenizer is not supported")
            if flag(step, "add_prefix_space", False):
                raise NotByteLevel(f"{path}: ByteLevel add_prefix_space=true is not supported")
            if flag(step, "use_regex", True):
                target.append(_HF_GPT2)
            seen_byte_level = True
        elif kind == "Split":
            if step.get("behavior") != "Isolated" or flag(step, "invert", False):
                raise NotByteLevel(f"{path}: Split behaviour {brief(step.get('behavior'))}/invert is not supported")
            pattern = step["pattern"]
            regex = pattern["Regex"] if "Regex" in pattern else _escape(pattern["String"])
            if _matches_empty(regex):  # HF then cuts the text into characters
                raise NotByteLevel(f"{path}: Split pattern {brief(regex)} matches the empty string")
            if "Regex" in pattern:  # (a string is matched as itself by both)
                _check_portable(regex, seen_byte_level, path)
            target.append(regex)
        elif kind == "Digits":
            target.append(r"\p{N}" if flag(step, "individual_digits", False) else r"\p{N}+")
        elif kind == "Punctuation":
            behavior = step.get("behavior", "Isolated")
            if behavior not in ("Isolated", "Contiguous"):
                raise NotByteLevel(f"{path}: Punctuation behaviour {brief(behavior)} is not supported")
            punctuation = hf_punctuation_class()  # HF's own tables, not Unicode 16's \p{P}
            target.append(punctuation + "+" if behavior == "Contiguous" else punctuation)
        else:
            raise NotByteLevel(f"{path}: pre-tokenizer {brief(kind)} is not supported by ByteBPE")
    if not seen_byte_level:
        raise NotByteLevel(f"{path}: no ByteLevel pre-tokenizer, so this is not a byte-level BPE")
    if not patterns and not byte_patterns:  # (HF then merges the whole text as one piece)
        raise NotByteLevel(f"{path}: ByteLevel use_regex=false with no Split before it is not supported")
    return patterns, byte_patterns


def _check_portable(regex: str, byte_level: bool, path: Path) -> None:
    """A regex that wwho's core reads otherwise than Hugging Face is no regex ByteBPE can run for this
    file: :class:`NotByteLevel` (``load_tokenizer`` then runs the file in Hugging Face ``tokenizers``)."""
    try:
        check_portable(regex, byte_level=byte_level, what="Split pattern")
    except VocabError as exc:
        raise NotByteLevel(f"{path}: {exc}") from None


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
