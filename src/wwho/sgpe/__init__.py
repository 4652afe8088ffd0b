"""SGPE: syllable-aware BPE for Indic scripts (training, encoding, the vocab.json format)."""

from wwho.sgpe.tokenizer import SGPETokenizer
from wwho.sgpe.train import train_sgpe
from wwho.sgpe.vocabfile import VocabFile, load_vocab_file

__all__ = ["SGPETokenizer", "VocabFile", "load_vocab_file", "train_sgpe"]
