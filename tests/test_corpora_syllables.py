"""Real corpora: lossless, exact to spec 000 for Sinhala, no cut grapheme cluster for every other script.

Big files are read as slices (first 1.5 MB) unless WWHO_FULL_CORPORA=1. The counts of
cuts and of multi-cluster syllables are printed (run pytest with -s to see them).
"""

from __future__ import annotations

import pytest
import regex
import spec000_reference as spec
from conftest import corpus_files, read_slice

from wwho import syllabify

SINHALA_FILES = corpus_files("si", "si-en")
DEVANAGARI_FILES = corpus_files("hi", "mr", "ne", "sa", "hi-en")
#: language folder -> script, for the scripts added after Sinhala and Devanagari
LANG_SCRIPT = {"bn": "bengali", "pa": "gurmukhi", "gu": "gujarati", "or": "odia", "ta": "tamil", "te": "telugu",
               "kn": "kannada", "ml": "malayalam"}
OTHER_FILES = corpus_files(*LANG_SCRIPT)


def ends(tokens):
    out, pos = [], 0
    for t in tokens:
        pos += len(t)
        out.append(pos)
    return out


def cluster_report(text, tokens):
    clusters = set(ends(regex.findall(r"\X", text)))
    token_ends = ends(tokens)
    cuts = [e for e in token_ends if e not in clusters]
    spanning = 0
    start = 0
    for e in token_ends:
        if any(b in clusters for b in range(start + 1, e)):
            spanning += 1
        start = e
    return cuts, spanning


@pytest.mark.skipif(not SINHALA_FILES, reason="../shared/data/corpora is absent")
@pytest.mark.parametrize("path", SINHALA_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sinhala_corpus_exact_to_spec_and_lossless(path):
    text = read_slice(path)
    for leading_space in (True, False):
        tokens = syllabify(text, "sinhala", leading_space=leading_space)
        assert "".join(tokens) == text
        want = spec.tokenize(text, leading_space)
        assert tokens == want  # so every cluster cut is one the spec loop itself makes
    cuts, spanning = cluster_report(text, tokens)
    print(f"\n{path.name}: {len(text):,} chars, {len(tokens):,} syllables, "
          f"{len(cuts)} grapheme-cluster cuts (all made by spec 000's loop), {spanning:,} syllables span >1 cluster")


@pytest.mark.skipif(not DEVANAGARI_FILES + OTHER_FILES, reason="../shared/data/corpora is absent")
@pytest.mark.parametrize("path", DEVANAGARI_FILES + OTHER_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_never_cuts_a_grapheme_cluster(path):
    script = LANG_SCRIPT.get(path.parent.name, "devanagari")
    text = read_slice(path)
    for leading_space in (True, False):
        tokens = syllabify(text, script, leading_space=leading_space)
        assert "".join(tokens) == text
        cuts, spanning = cluster_report(text, tokens)
        context = [text[max(0, c - 4):c + 4] for c in cuts[:5]]
        assert cuts == [], f"cut clusters at {cuts[:5]}: {context}"
    print(f"\n{path.name}: {len(tokens):,} syllables, 0 cuts, {spanning:,} syllables span >1 cluster")
