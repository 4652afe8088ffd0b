"""The cut structure of a text (``cut_structure.py``): the offsets inside grapheme clusters and
Indic syllables, against the set computation, and their memory."""

from __future__ import annotations

from wwho.cut_structure import inside_offsets


def reference_inside_offsets(text):
    """The computation inside_offsets replaced (sets of every offset), the oracle of the compact one."""
    from wwho.graphemes import cluster_lengths
    from wwho.router import segment
    from wwho.syllables import Syllabifier

    starts = [0]
    for ch in text:
        starts.append(starts[-1] + len(ch.encode("utf-8", "surrogatepass")))
    inside_cluster, pos = set(), 0
    for n in cluster_lengths(text):
        inside_cluster.update(range(starts[pos] + 1, starts[pos + n]))
        pos += n
    inside_syllable, pos = set(), 0
    for seg in segment(text):
        pos += seg.has_leading_space
        if seg.is_indic:
            for syl in Syllabifier.for_script(seg.script.value).tokenize(seg.text, leading_space=False):
                inside_syllable.update(range(starts[pos] + 1, starts[pos + len(syl)]))
                pos += len(syl)
        else:
            pos += len(seg.text)
    return inside_cluster, inside_syllable


def test_inside_offsets_equal_the_set_computation_on_random_text():
    import random

    from wwho.schema import available_scripts, bundled_schema

    pool = list("ab  .,1\t\r\x00\u200c\u200d\u0301\u0964é\U0001F1E6\U0001F1F1\U0001F469\ud800")
    for name in available_scripts():
        block = bundled_schema(name).blocks[0]
        pool += map(chr, range(block.first, min(block.last, block.first + 0x7F) + 1))
    rng = random.Random(7)
    for _ in range(1500):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 50)))
        cluster, syllable = inside_offsets(text)
        assert (set(cluster), set(syllable)) == reference_inside_offsets(text), repr(text)
        size = len(text.encode("utf-8", "surrogatepass"))
        assert all((o in cluster) == (o in set(cluster)) for o in range(-2, size + 3))


def test_inside_offsets_cost_a_small_multiple_of_the_line():
    """Not a Python set of every offset, many times the line itself."""
    import tracemalloc

    line = " ".join(["ශ්‍රී ලංකාව යනු දිවයිනකි", "ප්‍රජාතාන්ත්‍රික", "Hello, world"] * 4000)
    size = len(line.encode())
    inside_offsets(line[:200])  # what is built once per process: the router's pattern, the schemas
    tracemalloc.start()
    try:
        inside_offsets(line)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * size, (peak, size)
