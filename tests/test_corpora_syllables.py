"""Real corpora: lossless, exact to spec 000 for Sinhala, no cut grapheme cluster for every other script.

Big files are read as slices (first 1.5 MB) unless WWHO_FULL_CORPORA=1. The counts of
cuts and of multi-cluster syllables are printed (run pytest with -s to see them).
"""

from __future__ import annotations

import numpy as np
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


def ends(pieces) -> np.ndarray:
    """Where each of ``pieces`` ends in their concatenation (character offsets)."""
    return np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)))


def cluster_ends(text: str) -> np.ndarray:
    """Where Unicode's extended grapheme clusters (``regex`` ``\\X``) of ``text`` end, ascending."""
    return ends(regex.findall(r"\X", text))


def cluster_report(clusters: np.ndarray, tokens):
    """The token ends that fall inside a cluster, and how many tokens span more than one cluster."""
    token_ends = ends(tokens)
    cuts = token_ends[~np.isin(token_ends, clusters)].tolist()
    starts = np.concatenate(([0], token_ends))[:-1]
    after = np.append(clusters, np.iinfo(np.int64).max)  # (no cluster end after the last token's start)
    spanning = int(np.count_nonzero(after[np.searchsorted(clusters, starts, side="right")] < token_ends))
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
    cuts, spanning = cluster_report(cluster_ends(text), tokens)
    print(f"\n{path.name}: {len(text):,} chars, {len(tokens):,} syllables, "
          f"{len(cuts)} grapheme-cluster cuts (all made by spec 000's loop), {spanning:,} syllables span >1 cluster")


@pytest.mark.skipif(not DEVANAGARI_FILES + OTHER_FILES, reason="../shared/data/corpora is absent")
@pytest.mark.parametrize("path", DEVANAGARI_FILES + OTHER_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_never_cuts_a_grapheme_cluster(path):
    script = LANG_SCRIPT.get(path.parent.name, "devanagari")
    text = read_slice(path)
    clusters = cluster_ends(text)
    for leading_space in (True, False):
        tokens = syllabify(text, script, leading_space=leading_space)
        assert "".join(tokens) == text
        cuts, spanning = cluster_report(clusters, tokens)
        context = [text[max(0, c - 4):c + 4] for c in cuts[:5]]
        assert cuts == [], f"cut clusters at {cuts[:5]}: {context}"
    print(f"\n{path.name}: {len(tokens):,} syllables, 0 cuts, {spanning:,} syllables span >1 cluster")
