"""Byte-level BPE (tiktoken, GPT-2, Llama 3, Qwen2 ...): the tokenizer, its files, training, streaming.

| module | what |
|---|---|
| :mod:`~wwho.bytelevel.tokenizer` | :class:`ByteBPE`: encode, decode (both merge rules, special and added tokens) |
| :mod:`~wwho.bytelevel.constructors` | what :class:`ByteBPE`'s constructors and file methods do, as functions of a model |
| :mod:`~wwho.bytelevel.tiktoken_names` | the rest of ``tiktoken.Encoding``'s methods, mixed into :class:`ByteBPE` |
| :mod:`~wwho.bytelevel.model` | :class:`ByteLevelModel`: the data every loader returns and every writer takes |
| :mod:`~wwho.bytelevel.pretokenize` | the pre-tokenizer regexes (GPT-2, cl100k, o200k, GGUF models') |
| :mod:`~wwho.bytelevel.files` | ``.tiktoken`` ranks, wwho's directory format |
| :mod:`~wwho.bytelevel.hf_files` | HF ``tokenizer.json`` in and out |
| :mod:`~wwho.bytelevel.gguf` | the tokenizer of a llama.cpp GGUF file |
| :mod:`~wwho.bytelevel.train` | training on a corpus |
| :mod:`~wwho.bytelevel.tiktoken_loader` | ``tiktoken.Encoding`` objects, offline from a sha256-checked file |
| :mod:`~wwho.bytelevel.streaming` | :class:`StreamingDecoder` for generation (any tokenizer kind) |

Imports flow one way: ``tokenizer`` -> ``constructors`` -> ``hf_files`` -> ``files``/``gguf``/``train`` -> ``model``
-> ``pretokenize``.
"""

from wwho.bytelevel.model import ByteLevelModel
from wwho.bytelevel.pretokenize import Pretokenizer
from wwho.bytelevel.streaming import StreamingDecoder
from wwho.bytelevel.tokenizer import ByteBPE, DisallowedSpecialError

__all__ = ["ByteBPE", "ByteLevelModel", "DisallowedSpecialError", "Pretokenizer", "StreamingDecoder"]
