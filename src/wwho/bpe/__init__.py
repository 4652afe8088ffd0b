"""Byte-pair encoding machinery shared by wwho's trainers.

:mod:`wwho.bpe.engine` learns merges (exported here); beside it, :mod:`wwho.bpe.apply` applies
merges by rank in pure Python for ``wwho extend``'s growing merge table. Corpus counting is
:mod:`wwho.counting` (in the core).
"""

from wwho.bpe.engine import UNK, MergeEngine, MergeError

__all__ = ["UNK", "MergeEngine", "MergeError"]
