"""An exact Hugging Face export of an SGPE vocabulary: ``tokenizer.json`` and friends.

The file needs no custom code: stock ``tokenizers`` and ``transformers`` run it and get
exactly :meth:`SGPETokenizer.encode`'s ids. How:

* **normalizer** (only for ``prefix_space`` vocabularies): ``Prepend(" ")``, the dummy space
  the native encoder puts before each non-empty text (each part between special tokens);
* **pre-tokenizer**: a ``Split`` (behaviour ``isolated``) with the vocabulary's merge scope
  pattern (:func:`wwho.sgpe.scopes.scope_pattern_source`) in Oniguruma syntax: the
  pre-tokens are exactly the spans SGPE merges in (words and boundary tokens, runs, or pieces;
  with superword merges, sentence spans: :data:`wwho.sgpe.superwords.SPANS`);
* **model**: ``BPE`` over code points, ``byte_fallback=True``. Its merges are the
  syllable-building merges first (:mod:`wwho.sgpe.building`; they rebuild every syllable
  of the vocabulary from its characters), the learned merges, then the superword merges, written in
  the pair form of current ``tokenizers`` (unambiguous for tokens that contain spaces).
  A character missing from the vocabulary becomes its UTF-8 byte tokens ``<0xNN>``,
  as in the native encoder;
* **decoder**: ``ByteFallback`` then ``Fuse``: tokens are joined as they are (spaces are
  part of the tokens), byte tokens fused back into UTF-8. Decoding is lossless. With
  ``prefix_space``, then ``Replace`` of ``\\A `` by nothing: one leading space of the decoded
  text (the dummy one) is dropped, exactly as the native decoder does. ``ByteFallback`` reads
  any 6-byte token ``<0x`` + two hex digits of either case (or ``+`` and one digit) + ``>`` as a
  byte, so an ordinary token such as ``<0xe0>`` (text a ``runs`` or ``pieces`` vocabulary learned)
  would decode to a byte: when the vocabulary has one, a ``Replace`` before ``ByteFallback`` hides
  it (:data:`BYTE_LOOKALIKE`) and one after it restores it;
* **post-processor**: spec 000's ``TemplateProcessing``: ``[CLS] $A [SEP]`` and
  ``[CLS] $A [SEP] $B [SEP]``, used when ``add_special_tokens=True``; only when ``[CLS]`` and
  ``[SEP]`` are special tokens of the vocabulary (ordinary tokens of that text are not wrapped around).

Limits (see ``docs/hf-export.md``): HF always recognizes special-token text such as
``[CLS]`` in the input (native: ``allowed_special="all"``); Rust strings cannot hold lone
surrogates; ``unk="token"`` vocabularies are not exported (HF cannot express it).

This module does not train nor encode, and does not import the tokenizer (``tok`` is a
:class:`wwho.SGPETokenizer`, which imports this module to save itself);
:mod:`wwho.export.verify` compares the two.
"""

from __future__ import annotations

import json
import re
from typing import Any

from wwho.errors import VocabError
from wwho.fileio import json_bytes
from wwho.sgpe.scopes import scope_pattern_source
from wwho.sgpe.superwords import spans_pattern_source
from wwho.sgpe.vocabfile import BYTE_TOKENS

MODEL_MAX_LENGTH = 1_000_000_000_000_000_019_884_624_838_656  # transformers' "no limit" value

#: What follows ``<0x`` in a token that HF's ``ByteFallback`` decoder reads as a byte although it is
#: not one of the byte tokens ``<0x00>``..``<0xFF>``: it takes any 6-byte ``<0x..>`` whose middle
#: Rust's ``u8::from_str_radix(_, 16)`` parses, lower-case digits and a ``+`` sign included.
BYTE_LOOKALIKE = r"(?:[a-f][0-9A-Fa-f]|[0-9A-F][a-f]|\+[0-9A-Fa-f])>"
#: Put after ``<0x`` in such a token while ``ByteFallback`` runs (its length is then no longer 6).
_HIDDEN = "\uffff"


def build_hf_tokenizer(tok: Any):
    """A ``tokenizers.Tokenizer`` that encodes exactly like ``tok`` (read from :func:`tokenizer_json`)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_str(json.dumps(tokenizer_json(tok), ensure_ascii=False))


def tokenizer_json(tok: Any) -> dict[str, Any]:
    """The content of ``tokenizer.json`` for ``tok``.

    ``tokenizers`` itself writes every part but the vocabulary and the merges: a tokenizer
    whose model holds only the special tokens, serialized; the two large tables are then put
    in as data (the ``{token: id}`` object and the ``[left, right]`` pairs that ``tokenizers``
    0.20+ writes). Building the whole model in ``tokenizers`` first cost about as much as the
    rest of the save.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    if tok.fallback != "bytes":
        raise VocabError("only byte-fallback vocabularies can be exported exactly (this one uses [UNK])")
    merges: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for pair in (*tok.syllable_merges, *tok.merges, *tok.superword_merges):
        if pair not in seen:
            seen.add(pair)
            merges.append(pair)
    specials = {s: tok.vocab[s] for s in tok.special_tokens}
    # Byte fallback leaves nothing unknown; the unknown token is named only where the vocabulary has it.
    unk = "[UNK]" if "[UNK]" in specials else None
    model = models.BPE(vocab=specials, merges=[], byte_fallback=True, unk_token=unk, fuse_unk=False)
    hf = Tokenizer(model)
    if tok.superword_merges:  # the pre-tokens are spans; pieces and scopes follow from the merges themselves
        pattern = spans_pattern_source(onig=True)
    else:
        pattern = scope_pattern_source(tok.splitter.scripts, tok.merge_scope, onig=True,
                                       split_punctuation=tok.split_punctuation)
    hf.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False)
    steps = [decoders.ByteFallback(), decoders.Fuse()]
    if any(re.fullmatch("<0x" + BYTE_LOOKALIKE, t) for t in tok.vocab if t not in BYTE_TOKENS):
        # An ordinary token such as "<0xe0>" (text learned by a runs or pieces vocabulary) is its
        # text natively, but ByteFallback would make it a byte: hide it from ByteFallback, then
        # restore it. What encode gives cannot spell the hidden form as one run of byte tokens:
        # "<" is an ordinary token then (a token of several characters is built from its characters).
        if any(re.fullmatch("<0x" + _HIDDEN + BYTE_LOOKALIKE, t) for t in tok.vocab):
            raise VocabError("a token of this vocabulary has the form wwho uses to keep tokens like '<0xe0>' "
                             "apart from byte tokens in the export: it cannot be exported exactly")
        steps = [decoders.Replace(Regex(r"\A<0x(?=" + BYTE_LOOKALIKE + r"\z)"), "<0x" + _HIDDEN),
                 decoders.ByteFallback(),
                 decoders.Replace(Regex(r"\A<0x" + _HIDDEN + "(?=" + BYTE_LOOKALIKE + r"\z)"), "<0x"),
                 decoders.Fuse()]
    if tok.prefix_space:  # the dummy space: added before each text, dropped from the decoded text
        hf.normalizer = normalizers.Prepend(" ")
        steps.append(decoders.Replace(Regex(r"\A "), ""))
    hf.decoder = decoders.Sequence(steps)
    hf.add_special_tokens(list(tok.special_tokens))
    if "[CLS]" in tok.special_tokens and "[SEP]" in tok.special_tokens:  # not ordinary tokens of that text
        cls, sep = ("[CLS]", tok.vocab["[CLS]"]), ("[SEP]", tok.vocab["[SEP]"])
        hf.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[cls, sep]
        )
    data = json.loads(hf.to_str())
    if data["model"].get("vocab") != specials or data["model"].get("merges") != []:
        raise VocabError("this version of tokenizers writes BPE models in a layout wwho does not know")
    data["model"]["vocab"] = dict(tok.vocab)
    data["model"]["merges"] = merges  # pairs, written as JSON lists
    return data


# transformers' roles and the usual spellings of their tokens, first match wins: wwho's defaults,
# then BERT's, SentencePiece's and GPT's forms, for vocabularies trained with special_tokens=.
ROLE_NAMES = {
    "bos_token": ("[BOS]", "<s>", "<bos>", "<|startoftext|>", "<|begin_of_text|>"),
    "eos_token": ("[EOS]", "</s>", "<eos>", "<|endoftext|>", "<|end_of_text|>"),
    "unk_token": ("[UNK]", "<unk>", "<|unk|>"),
    "sep_token": ("[SEP]", "<sep>"),
    "pad_token": ("[PAD]", "<pad>", "<|pad|>", "<|padding|>"),
    "cls_token": ("[CLS]", "<cls>"),
    "mask_token": ("[MASK]", "<mask>"),
}


def special_roles(special_tokens: tuple[str, ...] | list[str]) -> dict[str, str]:
    """transformers' role of each special token that has a usual name (:data:`ROLE_NAMES`)."""
    have = set(special_tokens)
    roles = {}
    for role, names in ROLE_NAMES.items():
        token = next((name for name in names if name in have), None)
        if token is not None:
            roles[role] = token
    return roles


def hf_files(tok: Any) -> dict[str, bytes]:
    """The contents of ``tokenizer.json``, ``tokenizer_config.json`` and ``special_tokens_map.json``
    (written beside ``vocab.json`` by :meth:`wwho.SGPETokenizer.save`, as one save)."""
    data = tokenizer_json(tok)
    specials = special_roles(tok.special_tokens)
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **specials,
        "model_max_length": MODEL_MAX_LENGTH,
        # Spaces are part of SGPE tokens: any clean-up would change the decoded text.
        "clean_up_tokenization_spaces": False,
        "padding_side": "right",
        "wwho": {"kind": "sgpe", "script": tok.script, "vocab_size": tok.vocab_size},
    }
    return {
        "tokenizer.json": json_bytes(data, indent=None),
        "tokenizer_config.json": json_bytes(config),
        "special_tokens_map.json": json_bytes(specials),
    }
