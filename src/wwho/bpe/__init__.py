"""Byte-pair encoding machinery shared by wwho's trainers: the merge engine (and, beside it, corpus counting)."""

from wwho.bpe.engine import UNK, MergeEngine, MergeError

__all__ = ["UNK", "MergeEngine", "MergeError"]
