"""Byte-pair encoding machinery shared by wwho's trainers.

:mod:`wwho.bpe.engine` learns merges (exported here, on the core's engine). Applying merges is the
core's (encoders; ``_core.GrowingMerges`` for ``wwho extend``), corpus counting :mod:`wwho.counting`.
"""

from wwho.bpe.engine import UNK, MergeEngine, MergeError

__all__ = ["UNK", "MergeEngine", "MergeError"]
