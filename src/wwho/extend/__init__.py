"""Extend an existing byte-level BPE tokenizer (Llama 3, Qwen2, o200k_base ...) with the syllables
of Indic scripts, into one standard Hugging Face ``tokenizer.json`` that keeps every base id.

```python
from wwho.extend import extend_tokenizer, init_embeddings

ext = extend_tokenizer("ggml-vocab-llama-bpe.gguf", ["si/news.txt"], add=16_000, scripts=["sinhala"])
ext.save("llama3-si")            # tokenizer.json + tokenizer_config.json + special_tokens_map.json
new_matrix = init_embeddings(ext.base, ext.tokenizer, old_matrix)
```

Modules: :mod:`~wwho.extend.scripts` (script characters, words, exclusive byte sequences),
:mod:`~wwho.extend.pretokenizer` (the extended pre-tokenizer), :mod:`~wwho.extend.building` (new
merges), :mod:`~wwho.extend.learn` (what is learned from the corpus), :mod:`~wwho.extend.extension`
(putting it together), :mod:`~wwho.extend.model` (the result), :mod:`~wwho.extend.files`,
:mod:`~wwho.extend.verify`, :mod:`~wwho.extend.embeddings`.
The guarantees and their reasons: ``docs/extend.md``.
"""

from wwho.extend.embeddings import init_embeddings
from wwho.extend.extension import count_words, extend_tokenizer, load_base
from wwho.extend.model import Extension
from wwho.extend.pretokenizer import NotExtendable
from wwho.extend.verify import ExtensionCheckError

__all__ = [
    "Extension",
    "ExtensionCheckError",
    "NotExtendable",
    "count_words",
    "extend_tokenizer",
    "init_embeddings",
    "load_base",
]
