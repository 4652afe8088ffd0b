"""SentencePiece Unigram over syllables: an experiment of docs/language-model.md, not a wwho tokenizer.

Does a Unigram language model over whole syllables give text that is easier to predict than SGPE's
BPE over syllables, or than SentencePiece Unigram over characters? To find out without writing a
Unigram trainer, each of the ``TOP`` most frequent syllables of the training text (wwho's
syllabifier; only syllables of two or more code points) is mapped to one private-use code point
of plane 15, and SentencePiece Unigram is trained on the mapped text: its pieces then never cut a
mapped syllable. Rarer syllables stay as their characters, as SGPE's pruned syllables do.
SentencePiece is told to change nothing else (identity normalization, spaces kept, no split at a
change of script), so decoding and mapping back gives every line exactly.

``bench_lm.py --kinds syl-uni`` uses it (cached in .cache/bench_lm/); this module does not score.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

#: How many syllables get a code point of their own (docs/language-model.md: 400-1,500 measured).
TOP = 800
PLANE_15 = 0xF0000


def _syllables(line: str, script: str) -> list[str]:
    import warnings

    import wwho

    with warnings.catch_warnings():  # the training text has Latin lines on purpose
        warnings.simplefilter("ignore")
        return wwho.syllabify(line, script=script)


class SyllableUnigram:
    """A trained model: ``encode(lines)`` gives id lists, ``piece_text(id)`` a piece's original text."""

    def __init__(self, prefix: Path) -> None:
        import sentencepiece as spm

        self.sp = spm.SentencePieceProcessor(model_file=str(prefix.with_suffix(".model")))
        meta = json.loads(prefix.with_suffix(".json").read_text(encoding="utf-8"))
        self.script = meta["script"]
        self.code = {syl: chr(PLANE_15 + i) for i, syl in enumerate(meta["syllables"])}
        self.back = str.maketrans({c: s for s, c in self.code.items()})

    def mapped(self, line: str) -> str:
        return "".join(self.code.get(s, s) for s in _syllables(line, self.script))

    def encode(self, lines: list[str]) -> list[list[int]]:
        return self.sp.encode([self.mapped(line) for line in lines])

    def decode(self, ids: list[int]) -> str:
        return self.sp.decode(ids).translate(self.back)

    def piece_text(self, i: int) -> str:
        return self.sp.id_to_piece(i).replace("\u2581", " ").translate(self.back)


def train(lines: list[str], script: str, size: int, prefix: Path, top: int = TOP) -> SyllableUnigram:
    """Train on ``lines`` (one document each) and write ``prefix``.model and ``prefix``.json."""
    import sentencepiece as spm

    counts = Counter(s for line in lines for s in _syllables(line, script) if len(s) > 1 and not s.isspace())
    syllables = [s for s, _ in counts.most_common(top)]
    code = {syl: chr(PLANE_15 + i) for i, syl in enumerate(syllables)}
    prefix.parent.mkdir(parents=True, exist_ok=True)
    text = prefix.with_suffix(".txt")
    text.write_text("".join("".join(code.get(s, s) for s in _syllables(line, script)) + "\n" for line in lines),
                    encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(text), model_prefix=str(prefix), vocab_size=size, model_type="unigram",
        character_coverage=1.0, byte_fallback=True, input_sentence_size=0, num_threads=2, minloglevel=2,
        hard_vocab_limit=False, max_sentence_length=100000, normalization_rule_name="identity",
        remove_extra_whitespaces=False, split_by_unicode_script=False)
    text.unlink()
    prefix.with_suffix(".json").write_text(json.dumps({"script": script, "syllables": syllables},
                                                      ensure_ascii=False), encoding="utf-8")
    return SyllableUnigram(prefix)
