"""``make demo``: the main job on the bundled sample.

Syllabifies a few lines of the bundled Sinhala Wikipedia sample and shows how
o200k_base (GPT-4o) cuts the same words. Later stages extend it.
"""

from __future__ import annotations

from importlib import resources

from wwho.syllables import syllabify
from wwho.words import segment_into_words

SAMPLE = "sinhala-wikipedia-sample.txt"


def sample_lines(n: int = 3) -> list[str]:
    text = resources.files("wwho.data").joinpath(SAMPLE).read_text(encoding="utf-8")
    return text.splitlines()[:n]


def main() -> None:
    print("wwho demo: Sinhala syllables (bundled sample: Wikipedia sentences, CC BY-SA 4.0)\n")
    for line in ["ශ්‍රී ලංකාව", *sample_lines(3)]:
        syllables = syllabify(line, "sinhala", leading_space=True)
        words = segment_into_words(syllables)
        print(line)
        print("  syllables:", " | ".join(syllables))
        print(f"  {len(syllables)} syllables, {sum(1 for w in words if len(w) > 1 or w[0].strip())} words\n")


if __name__ == "__main__":
    main()
