"""Byte-pair encoding machinery shared by wwho's trainers.

:mod:`wwho.bpe.engine` learns merges (exported here); beside it live corpus counting and merge
application.
"""

from wwho.bpe.engine import UNK, MergeEngine, MergeError

__all__ = ["UNK", "MergeEngine", "MergeError"]
