"""Executable reference: the pure-Python reading of byte-level merges that wwho ran before the core.

:func:`merge_pair` is ``wwho.bytelevel.files``' former per-merge function; the tests compare it,
merge by merge, with ``wwho._core.merge_pairs`` (and ``unicode_to_bytes`` with
``wwho._core.gpt2_bytes``). Refusals come back as ``("no_space" | "shape", index)``, the core's
``CoreMergeError`` args. Not used at run time.
"""

from __future__ import annotations

from wwho.bytelevel.pretokenize import unicode_to_bytes


def merge_pair(merge, index: int) -> tuple[bytes, bytes] | None:
    """``"a b"`` or ``["a", "b"]`` in GPT-2 byte-level strings -> bytes pair (None if unmappable)."""
    if isinstance(merge, str):
        cut = merge.find(" ", 1)  # as llama.cpp: the first space after the first char
        if cut < 0:
            raise ValueError("no_space", index)
        left, right = merge[:cut], merge[cut + 1 :]
    elif isinstance(merge, (list, tuple)) and len(merge) == 2 and all(isinstance(m, str) for m in merge):
        left, right = merge
    else:
        raise ValueError("shape", index)
    a, b = unicode_to_bytes(left), unicode_to_bytes(right)
    return None if a is None or b is None or not a or not b else (a, b)


def merge_pairs(merges: list):
    """Every merge's pair, or the first refusal's args."""
    try:
        return [merge_pair(m, k) for k, m in enumerate(merges)]
    except ValueError as exc:
        return exc.args
