"""Byte-level BPE tokenizers from the metadata of GGUF files (llama.cpp's model format).

:func:`load_gguf` turns ``tokenizer.ggml.*`` (read by :mod:`wwho.bytelevel.gguf_metadata`) into a
:class:`~wwho.bytelevel.model.ByteLevelModel`:
tokens are GPT-2 byte-level strings, merges are ``"a b"`` strings whose order is their
rank, and ``tokenizer.ggml.pre`` names the pre-tokenizer (see
:data:`wwho.bytelevel.pretokenize.GGUF_PRETOKENIZERS`). Token types: NORMAL -> ordinary token,
CONTROL/UNKNOWN -> special token, USER_DEFINED -> added token (always split out of
the text, as llama.cpp and Hugging Face do), UNUSED or non-byte-level text ->
decode-only. That loop, over 128k tokens and 280k merges for Llama 3, runs in the core
(``_core.gguf_vocab``, which also checks the merge list); its Python form is the reference the
tests compare it with (``tests/reference/gguf_py.py``). SentencePiece (``llama``), WordPiece
(``bert``) and other models are refused with a clear error: they are not byte-level BPE.
:func:`describe` summarises a GGUF tokenizer.

Not here: reading the header (:mod:`wwho.bytelevel.gguf_metadata`), tensors, chat templates,
SPM/WPM/UGM tokenizers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wwho import _core
from wwho.bytelevel.gguf_metadata import (
    STRING_ARRAYS,
    GGUFError,
    RawStrings,
    Skipped,
    read_header,
    read_metadata,
)
from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import GGUF_PRETOKENIZERS, Pretokenizer, unicode_to_bytes
from wwho.bytelevel.validate import check_model, merge_problem, pretokenizer_option
from wwho.errors import VocabError, brief, without_surrogates
from wwho.imports import import_module
from wwho.notices import warn

# numpy and gguf (which imports numpy and yaml) under the lock a fork waits for: a child forked while
# another thread imported them waited for ever at its own first GGUF file (wwho.imports)
np = import_module("numpy")
gguf = import_module("gguf")

_MODEL_KINDS = {
    "gpt2": "byte-level BPE",
    "llama": "SentencePiece (SPM)",
    "bert": "WordPiece (WPM)",
    "t5": "Unigram (UGM)",
    "rwkv": "RWKV",
    "plamo2": "PLaMo-2",
    "no_vocab": "no vocabulary",
    "none": "no vocabulary",
}


#: llama.cpp's token types (``llama_token_type``; 0, UNDEFINED, is never written by its converters).
NORMAL, BYTE = 1, 6
TOKEN_TYPES = "1 NORMAL, 2 UNKNOWN, 3 CONTROL, 4 USER_DEFINED, 5 UNUSED, 6 BYTE"


def command_line_pretokenizer(path: str | Path, pattern: str | None) -> str | None:
    """``--pattern`` for a GGUF file: the pre-tokenizer of one that has no ``tokenizer.ggml.pre``
    (older conversions) or names one wwho does not know, refused for one that names a known one,
    which it would silently replace."""
    if pattern is None:
        return None
    pre = read_metadata(path).get("tokenizer.ggml.pre")
    if pre is not None and (not isinstance(pre, str) or pre in GGUF_PRETOKENIZERS):
        raise GGUFError(f"{path}: names its pre-tokenizer (tokenizer.ggml.pre = {brief(pre)}); --pattern "
                        "(pattern=) is for a GGUF file that has none, or a .tiktoken file")
    return pattern


#: At most this many NORMAL tokens of several bytes that no merge makes, and at most this share of the
#: tokens, are taken as they are: llama.cpp and HF load such a file (``ggml-vocab-aquila.gguf`` has one,
#: ``<|endoftext|>`` as NORMAL), and the encoder never produces such a token. More is a merge list cut
#: short, which would silently encode differently.
MAX_LOST, MAX_LOST_SHARE = 16, 0.001


def _few_lost(problem: tuple, tokens: int, path: Path) -> bool:
    """Whether the core's merges finding is a few tokens no merge makes (warned about), not a fault."""
    if problem[0] != "lost" or problem[1] > min(MAX_LOST, MAX_LOST_SHARE * tokens):
        return False

    from wwho.errors import WwhoWarning

    _, count, first, id_ = problem
    warn(f"{path}: {count} NORMAL token(s) of several bytes are the result of no merge, e.g. "
         f"{brief(first.decode('utf-8', 'backslashreplace'))} (id {id_}): they decode, and encoding never "
         "produces them (as in llama.cpp)", WwhoWarning)
    return True


def describe(path: str | Path) -> dict[str, Any]:
    """A short summary of a GGUF tokenizer; ``skipped``: the keys it does not need, each as its type
    and size (:class:`Skipped`), never their values."""
    meta = read_metadata(path)
    types = meta.get("tokenizer.ggml.token_type")
    counts = {}
    if isinstance(types, np.ndarray) and types.dtype.kind in "iu":
        for t in gguf.TokenType:
            counts[t.name.lower()] = int((types == t.value).sum())
    elif types is not None:
        raise GGUFError(f"{path}: tokenizer.ggml.token_type must be an array of integers, not {brief(types)}")

    def strings(key: str) -> int:
        value = meta.get(f"tokenizer.ggml.{key}")
        return 0 if value is None else _strings(Path(path), key, value).count

    return {
        "model": meta.get("tokenizer.ggml.model"),
        "pre": meta.get("tokenizer.ggml.pre"),
        "tokens": strings("tokens"),
        "merges": strings("merges"),
        "token_types": counts,
        "bos_token_id": meta.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": meta.get("tokenizer.ggml.eos_token_id"),
        "padding_token_id": meta.get("tokenizer.ggml.padding_token_id"),
        "add_bos_token": meta.get("tokenizer.ggml.add_bos_token"),
        "skipped": {key: str(value) for key, value in meta.items() if isinstance(value, Skipped)},
    }


def _strings(path: Path, key: str, value: Any) -> RawStrings:
    """``tokenizer.ggml.<key>`` as a raw string array (the ``gguf`` engine gives a list: packed)."""
    if isinstance(value, RawStrings):
        return value
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        data = b"".join(len(b).to_bytes(8, "little") + b for b in (t.encode("utf-8") for t in value))
        return RawStrings(data, len(value), False)
    raise GGUFError(f"{path}: tokenizer.ggml.{key} must be an array of strings")


def _vocab_error(path: Path, args: tuple) -> GGUFError:
    """The core's finding about the tokenizer arrays, worded with the file and the entry."""
    kind, *rest = args
    if kind == "twice":
        text, first, second = rest
        return GGUFError(f"{path}: token {text!r} appears twice (ids {first} and {second})")
    if kind == "no_space":
        rank, line = rest
        return GGUFError(f"{path}: tokenizer.ggml.merges[{rank}] = {brief(line)} has no space")
    if kind == "not_token":
        rank, line, part = rest
        return GGUFError(f"{path}: tokenizer.ggml.merges[{rank}] = {brief(line)}: {brief(part)} is not a token")
    index, *_, array = rest
    what = "is not UTF-8" if kind == "utf8" else "runs past the end of the array"
    return GGUFError(f"{path}: tokenizer.ggml.{array}[{index}] {what}")


def _check_repeats(path: Path, types: list[int], ranks: dict[bytes, int], special: dict[str, int],
                   added: dict[str, int], extra: dict[int, bytes]) -> None:
    """Refuse two tokens with the same text that encoding could both produce.

    The core has refused two special or added tokens with one text, and kept a repeated ordinary
    token as decode-only. Here: an ordinary (NORMAL or BYTE) token that repeats an earlier one's
    byte-level text, and a special or added token whose text is also an ordinary token's, are
    errors naming both ids (llama.cpp stops on every repeated text; a Hugging Face vocabulary, a
    dict, cannot hold one). Repeats that encoding never produces stay allowed, decode-only: of an
    UNUSED token, of empty text, of text that is not byte-level. Costs one look-up per special,
    added and decode-only token.
    """
    def twice(text: str, ids: tuple[int, int]) -> GGUFError:
        first, second = sorted(ids)
        return GGUFError(f"{path}: token {text!r} appears twice (ids {first} and {second})")

    for i, raw in extra.items():
        if types[i] in (NORMAL, BYTE):
            text = raw.decode("utf-8")
            data = unicode_to_bytes(text)
            if data and data in ranks:
                raise twice(text, (ranks[data], i))
    for named in (special, added):
        for text, i in named.items():
            data = unicode_to_bytes(text)
            if data and data in ranks:
                raise twice(text, (ranks[data], i))


def load_gguf(
    path: str | Path, *, pretokenizer: str | Pretokenizer | None = None, engine: str = "fast"
) -> ByteLevelModel:
    """A merges-rule model from a GGUF file's tokenizer metadata.

    ``pretokenizer`` overrides ``tokenizer.ggml.pre`` (needed when the file has none).
    """
    path = Path(path)
    meta = read_header(path, engine, STRING_ARRAYS)  # (handed to the core undecoded)

    def need(key: str) -> Any:
        if key not in meta:
            raise GGUFError(f"{path}: missing key {key!r}")
        return meta[key]

    def typed(key: str, kind: type, default: Any = None) -> Any:
        value = meta.get(key, default)
        if value is not None and type(value) is not kind:
            raise GGUFError(f"{path}: {key} must be a {kind.__name__}, not {brief(value)}")
        return value

    model = need("tokenizer.ggml.model")
    if not isinstance(model, str):
        raise GGUFError(f"{path}: tokenizer.ggml.model must be a string, not {brief(model)}")
    if model != "gpt2":
        kind = _MODEL_KINDS.get(model, "unknown")
        raise GGUFError(
            f"{path}: tokenizer.ggml.model is {model!r} ({kind}); ByteBPE supports only byte-level BPE "
            f"models ('gpt2')"
        )
    pre = typed("tokenizer.ggml.pre", str)
    if pretokenizer is None:
        if pre is None:
            raise GGUFError(f"{path}: no 'tokenizer.ggml.pre' key, so its pre-tokenizer must be given: pass "
                            f"pretokenizer= (known: {', '.join(sorted(GGUF_PRETOKENIZERS))}; or a regex), or --pattern "
                            "on the command line")
        if pre not in GGUF_PRETOKENIZERS:
            raise GGUFError(
                f"{path}: unknown pre-tokenizer tokenizer.ggml.pre={brief(pre)}; "
                f"known: {', '.join(sorted(GGUF_PRETOKENIZERS))}. To load it with one of them (or a regex), "
                "pass pretokenizer= (command line: --pattern)"
            )
        spec = GGUF_PRETOKENIZERS[pre]
        pretok, ignore_merges = Pretokenizer.named(pre), spec.ignore_merges
    else:
        pretok = pretokenizer_option(pretokenizer, "pretokenizer")
        ignore_merges = pretok.name in GGUF_PRETOKENIZERS and GGUF_PRETOKENIZERS[pretok.name].ignore_merges
    tokens = _strings(path, "tokens", need("tokenizer.ggml.tokens"))
    merges_raw = _strings(path, "merges", need("tokenizer.ggml.merges"))
    types = meta.get("tokenizer.ggml.token_type")
    if types is None:
        types = np.full(tokens.count, gguf.TokenType.NORMAL, dtype=np.int32)
    if not isinstance(types, np.ndarray) or types.dtype.kind not in "iu":
        raise GGUFError(f"{path}: tokenizer.ggml.token_type must be an array of integers")
    if len(types) != tokens.count:  # (longer: types of no token, which llama.cpp's writers never make)
        raise GGUFError(
            f"{path}: tokenizer.ggml.token_type has {len(types)} entries for {tokens.count} tokens"
        )
    types = types.astype(np.int64)
    unknown = np.flatnonzero((types < 1) | (types > 6))
    if unknown.size:
        first = int(unknown[0])
        raise GGUFError(
            f"{path}: tokenizer.ggml.token_type[{first}] = {int(types[first])} is not a token type "
            f"({TOKEN_TYPES}); {unknown.size:,} such {'entry' if unknown.size == 1 else 'entries'}"
        )
    types = types.tolist()
    try:
        ranks, special, added, extra, merges, problem = _core.gguf_vocab(
            tokens.data, tokens.count, types, merges_raw.data, merges_raw.count, tokens.big_endian)
    except _core.CoreGGUFError as exc:
        raise _vocab_error(path, exc.args) from None
    _check_repeats(path, types, ranks, special, added, extra)
    n_tokens = tokens.count
    if not ranks:
        raise GGUFError(f"{path}: none of its {n_tokens:,} tokens is NORMAL or BYTE by "
                        f"tokenizer.ggml.token_type ({TOKEN_TYPES}), so byte-level BPE has nothing to merge")

    def token_id(key: str) -> int | None:
        value = meta.get(key)
        if value is None:
            return None
        if type(value) is not int or not 0 <= value < n_tokens:
            raise GGUFError(f"{path}: {key} is {brief(value)}, not a token id (0..{n_tokens - 1})")
        return value

    add_bos = typed("tokenizer.ggml.add_bos_token", bool)
    bos_id = token_id("tokenizer.ggml.bos_token_id")
    model_data = ByteLevelModel(
        ranks,
        pretok,
        special_tokens=special,
        merges=merges,
        ignore_merges=ignore_merges,
        added_tokens=added,
        extra_tokens=extra,
        bos_id=bos_id,
        eos_id=token_id("tokenizer.ggml.eos_token_id"),
        pad_id=token_id("tokenizer.ggml.padding_token_id"),
        add_bos=bool(add_bos) if add_bos is not None else ignore_merges and pre is not None and bos_id is not None,
        add_eos=typed("tokenizer.ggml.add_eos_token", bool, False),
        name=typed("general.name", str) or pre or without_surrogates(path.stem),
        # (not the tokenizer's to check: a template of another type is left out, as llama.cpp skips it)
        chat_template=template if isinstance(template := meta.get("tokenizer.chat_template"), str) else None,
    )
    try:
        check_model(model_data, str(path), merges_checked=True)
        if problem is not None and not _few_lost(problem, len(ranks), path):
            raise merge_problem(model_data, str(path), problem)
    except GGUFError:
        raise
    except VocabError as exc:
        hint = ""
        if "tokenizer.ggml.token_type" not in meta:  # every token was taken for NORMAL: say so
            hint = ("; this file has no tokenizer.ggml.token_type, so every token counts as NORMAL, special "
                    "ones too (llama.cpp's converters write it, with special tokens CONTROL)")
        raise GGUFError(f"{exc}{hint}") from None
    return model_data
