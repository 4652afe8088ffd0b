"""Exports of wwho tokenizers to other ecosystems (Hugging Face ``tokenizers``/``transformers``)."""
