"""The eight schemas added for India's other scripts (and the two before them), script by script.

For every bundled script:

* the grammar (fast path) equals the automaton on every string up to length 4 over one
  character of each class (``check_schema``), and on ``hypothesis`` strings over the script's
  own code points, joiners and a few foreign characters;
* no syllable boundary falls inside an extended grapheme cluster (``regex`` ``\\X``, which we
  did not write) on those strings, and the syllables join back to the input;
* the schema's classes agree with Unicode's Indic_Syllabic_Category (``regex`` ``\\p{InSC=...}``,
  from IndicSyllabicCategory.txt): consonants are consonants, viramas are viramas, and so on;
* the syllables a reader of the script expects, on examples taken from the sources named
  next to each (grammars, primers, Unicode documents), not from this code.

The shared corpora are tested in ``test_corpora_syllables.py``.
"""

from __future__ import annotations

import dataclasses

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.syllables import tokenize_table as reference_tokenize

from wwho import Syllabifier, syllabify
from wwho.schema import available_scripts, bundled_schema
from wwho.syllables import check_schema
from wwho.words import word_pattern

NEW = ["bengali", "gurmukhi", "gujarati", "odia", "tamil", "telugu", "kannada", "malayalam"]
# Sinhala stays exact to spec 000, which itself cuts clusters in malformed text (see test_syllables.py).
CLUSTER_SAFE = [s for s in available_scripts() if s != "sinhala"]


def test_every_issue_script_is_bundled():
    assert set(NEW + ["sinhala", "devanagari"]) == set(available_scripts())


@pytest.mark.parametrize("script", NEW)
def test_grammar_equals_automaton_exhaustively(script):
    assert check_schema(bundled_schema(script), max_length=4) == []


# --- hypothesis: each script's own code points, joiners, and a little of everything else -------------------

def script_alphabet(script: str) -> list[str]:
    schema = bundled_schema(script)
    own = [chr(cp) for b in schema.blocks for cp in range(b.first, b.last + 1) if regex.match(r"\P{Cn}", chr(cp))]
    # Joiners, dandas, whitespace, a Latin letter, a Devanagari conjunct's pieces, a combining
    # breve, an emoji, an astral combining mark: what real text puts next to the script.
    return own + ["\u200c", "\u200d", "\u0964", "\u0965", " ", " ", "\t", "\n", "a", "क", "\u094d", "\u0306",
                  "🙂", "\U0001d167"]


def cluster_ends(text: str) -> set[int]:
    ends, pos = set(), 0
    for c in regex.findall(r"\X", text):
        pos += len(c)
        ends.add(pos)
    return ends


def cuts(text: str, tokens: list[str]) -> list[int]:
    ends, pos, out = cluster_ends(text), 0, []
    for t in tokens:
        pos += len(t)
        if pos not in ends:
            out.append(pos)
    return out


def allowed_cut(text: str, pos: int) -> bool:
    """The one documented exception (leading-space mode only): whitespace never enters a syllable, so
    a cut falls right before whitespace that ``\\X`` joins to the character before it: after a
    prepended sign (Malayalam dot reph U+0D4E, Arabic U+0600 + space) or inside CR LF."""
    return text[pos] in " \t\n\r" and (regex.match(r"\p{Grapheme_Cluster_Break=Prepend}", text[pos - 1]) is not None
                                        or text[pos - 1: pos + 1] == "\r\n")


@pytest.mark.parametrize("script", CLUSTER_SAFE)
def test_hypothesis_no_cut_cluster_lossless_and_engines_agree(script):
    syl = Syllabifier.for_script(script)

    @given(text=st.text(alphabet=st.sampled_from(script_alphabet(script)), max_size=30), leading_space=st.booleans())
    @settings(max_examples=300, deadline=None)
    def check(text, leading_space):
        tokens = syl.tokenize(text, leading_space=leading_space)
        assert "".join(tokens) == text
        assert tokens == syl.tokenize_table(text, leading_space=leading_space)
        bad = [p for p in cuts(text, tokens) if not (leading_space and allowed_cut(text, p))]
        assert bad == [], f"{script}: cluster cut at {bad} in {text!r}: {tokens!r}"

    check()


# Sequences Unicode keeps together that no script schema describes (UAX #29): emoji ZWJ sequences
# (GB11) and modifiers, flag pairs (GB12/13), Hangul (GB6-8), CR LF (GB3), prepended signs (GB9b),
# other scripts' spacing marks (GB9a), conjuncts of other scripts (GB9c).
FOREIGN = ["🙂", "👩", "👍", "\u200d", "\ufe0f", "\U0001f3fd", "🇱", "🇰", "🇮", "\r", "\n", "\u1100", "\u1161",
           "\u11a8", "\uac00", "\uac01", "\u0600", "\u0d4e", "\u0903", "\u0e33", "\u0301", "©", "\ud800", "ष"]


@pytest.mark.parametrize("script", CLUSTER_SAFE)
def test_hypothesis_foreign_clusters_are_kept_whole(script):
    """Every script's alphabet with emoji, ZWJ, regional indicators and the rest mixed in: no token ends
    inside a ``regex`` ``\\X`` cluster, the tokens join back to the text, and the core equals the
    pure-Python reference (which finds clusters with ``\\X`` itself)."""
    syl = Syllabifier.for_script(script)
    schema = bundled_schema(script)
    grammar = Syllabifier(schema, engine="regex")

    @given(text=st.text(alphabet=st.sampled_from(script_alphabet(script) + FOREIGN * 8), max_size=30),
           leading_space=st.booleans())
    @settings(max_examples=300, deadline=None)
    def check(text, leading_space):
        tokens = syl.tokenize(text, leading_space=leading_space)
        assert "".join(tokens) == text
        assert tokens == reference_tokenize(schema, text, leading_space)
        assert tokens == grammar.tokenize(text, leading_space=leading_space)
        bad = [p for p in cuts(text, tokens) if not (leading_space and allowed_cut(text, p))]
        assert bad == [], f"{script}: cluster cut at {bad} in {text!r}: {tokens!r}"

    check()


@pytest.mark.parametrize("script", CLUSTER_SAFE)
def test_keeping_clusters_changes_nothing_inside_words(script):
    """SGPE cuts text into words (``wwho.words.word_pattern``, the exported Split pre-tokenizer) before
    syllables: inside a word the automaton already ends every syllable at a cluster boundary, so the
    cluster rule changes no word's syllables, nor any trained vocabulary or exported tokenizer."""
    keep = Syllabifier.for_script(script)
    alone = Syllabifier(dataclasses.replace(bundled_schema(script), keep_clusters=False))
    pattern = word_pattern(script)

    @given(text=st.text(alphabet=st.sampled_from(script_alphabet(script) + FOREIGN * 4), max_size=30))
    @settings(max_examples=200, deadline=None)
    def check(text):
        for m in pattern.finditer(text):
            if m.group(1):
                assert keep.tokenize(m.group(), leading_space=True) == alone.tokenize(m.group(), leading_space=True)

    check()


# (text, leading_space, tokens): written from UAX #29's rules, and checked against \X below.
KEPT_WHOLE = [
    ("🙂\u200d🙂", False, ["🙂\u200d🙂"]),  # the hypothesis failure that found the bug (GB11)
    ("🙂\u200d🙂", True, ["🙂\u200d🙂"]),
    ("👩\u200d👩\u200d👧 🙂", True, ["👩\u200d👩\u200d👧", " 🙂"]),
    ("👍\U0001f3fd\u200d🙂", False, ["👍\U0001f3fd\u200d🙂"]),  # Extend* between the pictograph and ZWJ
    ("a\u200d🙂", False, ["a\u200d", "🙂"]),  # GB11 needs a pictograph before the ZWJ
    ("🇱🇰🇮🇳🇱", False, ["🇱🇰", "🇮🇳", "🇱"]),  # GB12/13: pairs from the start of the run
    ("\r\n", False, ["\r\n"]),  # GB3
    ("\r\n", True, ["\r", "\n"]),  # ... but in leading-space mode whitespace is a token per character
    ("\u1112\u1161\u11ab\uac01", False, ["\u1112\u1161\u11ab", "\uac01"]),  # Hangul jamo, GB6-8
    ("\u0600a", False, ["\u0600a"]),  # GB9b
    ("\u0600 a", True, ["\u0600", " a"]),  # the leading-space exception
    ("a\u0e33\u0903", False, ["a\u0e33\u0903"]),  # GB9a
    # GB4, GB5: no token spans a control, CR or LF, even where the schema's automaton would take a mark
    # after any character (so "\n" and the vowel sign after it are two syllables, not one)
    ("\n\u093f", False, ["\n", "\u093f"]),
    ("\r\n\u0301", False, ["\r\n", "\u0301"]),
    ("\x00\u0301", False, ["\x00", "\u0301"]),
    ("\u200b\u0301", True, ["\u200b", "\u0301"]),
]


@pytest.mark.parametrize("script", CLUSTER_SAFE)
@pytest.mark.parametrize(("text", "leading_space", "want"), KEPT_WHOLE)
def test_foreign_clusters_kept_whole_examples(script, text, leading_space, want):
    assert syllabify(text, script, leading_space=leading_space) == want
    assert reference_tokenize(bundled_schema(script), text, leading_space) == want
    if not leading_space:
        assert want == regex.findall(r"\X", text)


@pytest.mark.parametrize("script", CLUSTER_SAFE)
def test_a_foreign_cluster_next_to_a_syllable(script):
    consonant = chr(min(bundled_schema(script).classes["C" if script != "tamil" else "KA"]))
    text = f"{consonant}🙂\u200d🙂{consonant}🇱🇰"
    assert syllabify(text, script) == [consonant, "🙂\u200d🙂", consonant, "🇱🇰"]


def test_sinhala_keeps_spec_000_and_cuts_what_the_spec_cuts():
    assert bundled_schema("sinhala").keep_clusters is False
    assert syllabify("🙂\u200d🙂", "sinhala") == ["🙂", "\u200d", "🙂"]  # O, then a stray ZWJ
    assert syllabify("🇱🇰", "sinhala") == ["🇱", "🇰"]


def test_the_dot_reph_exception_is_exactly_what_it_says():
    text = "\u0d4e ക"
    assert syllabify(text, "malayalam", leading_space=False) == ["\u0d4e ", "ക"]  # \X: U+0D4E + space is one cluster
    assert syllabify(text, "malayalam", leading_space=True) == ["\u0d4e", " ക"]  # whitespace never enters a syllable


# --- the classes against Unicode's Indic_Syllabic_Category -------------------------------------------------------

# class label -> the InSC values its members may have (IndicSyllabicCategory.txt, via the regex module)
INSC = {
    "C": {"Consonant"},
    "KA": {"Consonant"}, "SS": {"Consonant"}, "SA": {"Consonant"}, "RA": {"Consonant"},
    "V": {"Vowel_Independent", "Consonant_Placeholder"},
    "N": {"Nukta"},
    "H": {"Virama"},
    "P": {"Vowel_Dependent", "Pure_Killer"},
    "II": {"Vowel_Dependent"},
    "M": {"Bindu", "Visarga", "Syllable_Modifier", "Gemination_Mark", "Cantillation_Mark", "Consonant_Medial"},
    "G": {"Number"},
    "T": {"Consonant_Dead"},
    "K": {"Consonant_Dead"},
    "R": {"Consonant_Preceding_Repha"},
    "S": {"Consonant_With_Stacker"},
}
ALL_INSC = sorted({v for vs in INSC.values() for v in vs} | {"Other", "Avagraha", "Consonant_With_Stacker"})


def insc(ch: str) -> str:
    return next((v for v in ALL_INSC if regex.match(rf"\p{{InSC={v}}}", ch)), "Other")


@pytest.mark.parametrize("script", NEW)
def test_classes_agree_with_indic_syllabic_category(script):
    schema = bundled_schema(script)
    for label, allowed in INSC.items():
        for cp in schema.classes.get(label, ()):
            ch = chr(cp)
            if regex.match(r"\p{Cn}", ch):
                continue  # reserved for the script, not yet assigned in this regex's Unicode version
            assert insc(ch) in allowed, f"{script} class {label}: U+{cp:04X} is InSC={insc(ch)}"
    # and the other way round: every consonant, virama, nukta, vowel sign of the block is in its class
    block = [cp for b in schema.blocks for cp in range(b.first, b.last + 1)]
    where = {"Consonant": {"C", "KA", "SS", "SA", "RA"}, "Virama": {"H"}, "Nukta": {"N"},
             "Vowel_Dependent": {"P", "II"}, "Vowel_Independent": {"V"}, "Number": {"G"}}
    for cp in block:
        category = insc(chr(cp))
        if category in where:
            assert schema.class_of.get(cp) in where[category], f"{script}: U+{cp:04X} ({category}) is in class " \
                                                                f"{schema.class_of.get(cp)!r}"


# --- what a reader expects, from sources we did not write -----------------------------------------------------

SRC = {
    "iana-bn": "IANA Root Zone LGR, 5th edition, Bengali repertoire: অ্যা <U+0985 U+09CD U+09AF U+09BE> is one "
               "sequence (ya-phalaa) (iana.org/domains/lgrs/root-zone/5/beng)",
    "penguin": "'5 minute guide to encoding bangla in unicode', banglapenguin list: conjuncts joined with hasanta, "
               "'for conjuncts with kar just assume the conjunct is a single consonant' (ka-y-ta-y-hoshhoi); "
               "ka-chandrabindu; raphola; khondo-ta as ta + hasanta + ZWNJ",
    "bn-wiki-khanda": "Bengali Wikipedia, 'ৎ': khanda ta is the form of ত্ (dead ta), used at the end of a word, "
                      "e.g. মহৎ (মহত্)",
    "xobdo": "Xobdo (Assamese dictionary) lesson L0113: ৎ = hasanta ta, হঠাৎ, অৰ্থাৎ, মহৎ; ং anusor: খং",
    "bn-conj": "Bengali conjunct list (bappy-sharkar.blogspot.com, 2008): পরীক্ষা has ক্ষ, বিজ্ঞান has জ্ঞ, "
               "গণতান্ত্রিক has ন্ত্র (three consonants)",
    "tdbangla": "tdbangla.com on typing র্য vs র‍্য: র + ্ + য gives reph+ya; with ZWJ after ra it is ra + ya-phala "
                "(one letter either way)",
    "scsa-pa": "SCSA (Western Australia) Punjabi curriculum, year 3: bindi, tippi and adhak; adhak doubles the "
               "sound: ਪਕਾ (cook) and ਪੱਕਾ (firm/ripe)",
    "learnmylang": "learnmylanguage.com, 'Tippi, Bindi and Addak': ਸੰਤ, ਚੰਦ (tippi), ਹਾਂ, ਸਾਂਝ (bindi), "
                   "ਪੱਤਰ, ਚੱਕਰ (addak)",
    "gu-wiki": "Wikipedia, 'Gujarati script', Conjuncts: ત્વ, શ્ર, ર્વા, ર્સ્પા, ક્ર, ટ્ટ are single clusters",
    "gu-talkpal": "talkpal.ai, Gujarati conjunct consonants: ક્ષ, જ્ઞ, ત્ર, ન્ય, શ્ર",
    "or-wiki": "Wikipedia, 'Odia script': ଓଡ଼ିଆ ଅକ୍ଷର, romanized Oḍiā akṣara (ଡ଼ = ḍ with nukta; କ୍ଷ = kṣa)",
    "or-fluentli": "speakfluentli.com, 'Odia Conjunct Letters (Juktakkhara)': ସ୍ୱାସ୍ଥ୍ୟ (swāsthya) hides four "
                   "consonants in two written units",
    "ta-unicode-ml": "Unicode mailing list, 'Tamil Sri / Shri' (Nov 2007): shrii = <U+0BB6 or U+0BB8, U+0BCD, "
                     "U+0BB0, U+0BC0>; kssa = <U+0B95, U+0BCD, U+0BB7>",
    "ta-extended": "S. Sharma, 'Proposal to encode characters for Extended Tamil': except for the single ligature "
                   "K.SSA, consonants are written with visible virama (so a pulli ends its written unit)",
    "te-brown": "C. P. Brown, A Grammar of the Telugu Language (1857), Wikisource p. 21: 'If two consonants meet, "
                "one is written without a vowel under the other': నక్క, కుక్క, బల్లెం, గుర్రం; క్ర",
    "te-vattu": "peddabaalasiksha.com, ఒత్తులు (Telugu vattulu): క్క ... ; క with ష vattu is క్ష, e.g. క్షత్రియుడు",
    "kn-kalike": "Kannada Kalike, 'Consonant Clusters': ಕ್ಕ, ಕ್ಷ, ತ್ತ್ವ, ತ್ರ್ಯ, ಸ್ಕೃ; ಅಣ್ಣ, ಅಮ್ಮ, ಜನ್ಮ; ಕೃಷ್ಣ; "
                 "ಅಂಗ (aṅga with anusvāra)",
    "ml-wiki": "Wikipedia, 'Malayalam script', Chillus in Unicode: avan അവൻ = a അ + va വ + chillu-n ൻ; "
               "avanŭ അവന് ends in na + virama",
    "explicit-virama": "The Unicode Standard, Version 16.0, Core Specification, section 12.1 Devanagari, 'Explicit "
                       "Virama (Halant)': ZWNJ after a virama asks for the visible virama instead of a conjunct "
                       "(the same model for the Indic scripts of chapter 12); UAX #29 rule GB9c joins a conjunct "
                       "only across InCB Extend or Linker characters, and ZWNJ is neither",
    "kn-stacker": "The Unicode Standard, Version 16.0, Core Specification, section 12.8 Kannada: jihvamuliya U+0CF1 "
                  "and upadhmaniya U+0CF2 are written with the following ka/kha or pa/pha stacked; "
                  "IndicSyllabicCategory.txt: Consonant_With_Stacker, like the Vedic U+1CF5/U+1CF6",
    "ml-ganesan": "N. Ganesan, 'Joiners (ZWJ/ZWNJ) with semantic content' (Unicode L2 document): CHILLU N "
                  "U+0D7B = <na, virama, zwj>",
}

EXAMPLES = [
    # Bengali-Assamese
    ("bengali", "অ্যা", ["অ্যা"], "iana-bn"),
    ("bengali", "ক্তি", ["ক্তি"], "penguin"),
    ("bengali", "কঁ", ["কঁ"], "penguin"),
    ("bengali", "ক্র", ["ক্র"], "penguin"),
    ("bengali", "ত্\u200c", ["ত্\u200c"], "penguin"),
    ("bengali", "মহৎ", ["ম", "হ", "ৎ"], "bn-wiki-khanda"),
    ("bengali", "হঠাৎ", ["হ", "ঠা", "ৎ"], "xobdo"),
    ("bengali", "অৰ্থাৎ", ["অ", "ৰ্থা", "ৎ"], "xobdo"),
    ("bengali", "খং", ["খং"], "xobdo"),
    ("bengali", "পরীক্ষা", ["প", "রী", "ক্ষা"], "bn-conj"),
    ("bengali", "বিজ্ঞান", ["বি", "জ্ঞা", "ন"], "bn-conj"),
    ("bengali", "গণতান্ত্রিক", ["গ", "ণ", "তা", "ন্ত্রি", "ক"], "bn-conj"),
    ("bengali", "র\u200d্যাব", ["র\u200d্যা", "ব"], "tdbangla"),
    ("bengali", "র্যাব", ["র্যা", "ব"], "tdbangla"),
    ("bengali", "উত্\u200cসব", ["উ", "ত্\u200c", "স", "ব"], "penguin"),  # khondo-ta spelt out
    ("bengali", "উৎসব", ["উ", "ৎ", "স", "ব"], "bn-wiki-khanda"),
    # Gurmukhi
    ("gurmukhi", "ਪਕਾ", ["ਪ", "ਕਾ"], "scsa-pa"),
    ("gurmukhi", "ਪੱਕਾ", ["ਪੱ", "ਕਾ"], "scsa-pa"),
    ("gurmukhi", "ਸੰਤ", ["ਸੰ", "ਤ"], "learnmylang"),
    ("gurmukhi", "ਚੰਦ", ["ਚੰ", "ਦ"], "learnmylang"),
    ("gurmukhi", "ਹਾਂ", ["ਹਾਂ"], "learnmylang"),
    ("gurmukhi", "ਸਾਂਝ", ["ਸਾਂ", "ਝ"], "learnmylang"),
    ("gurmukhi", "ਪੱਤਰ", ["ਪੱ", "ਤ", "ਰ"], "learnmylang"),
    ("gurmukhi", "ਚੱਕਰ", ["ਚੱ", "ਕ", "ਰ"], "learnmylang"),
    # Gujarati
    ("gujarati", "ત્વ", ["ત્વ"], "gu-wiki"),
    ("gujarati", "ર્વા", ["ર્વા"], "gu-wiki"),
    ("gujarati", "ર્સ્પા", ["ર્સ્પા"], "gu-wiki"),
    ("gujarati", "ટ્ટ", ["ટ્ટ"], "gu-wiki"),
    ("gujarati", "ક્ષ", ["ક્ષ"], "gu-talkpal"),
    ("gujarati", "જ્ઞ", ["જ્ઞ"], "gu-talkpal"),
    ("gujarati", "શ્ર", ["શ્ર"], "gu-talkpal"),
    # Odia
    ("odia", "ଓଡ଼ିଆ ଅକ୍ଷର", ["ଓ", "ଡ଼ି", "ଆ", " ", "ଅ", "କ୍ଷ", "ର"], "or-wiki"),
    ("odia", "ସ୍ୱାସ୍ଥ୍ୟ", ["ସ୍ୱା", "ସ୍ଥ୍ୟ"], "or-fluentli"),
    # Tamil
    ("tamil", "க்ஷ", ["க்ஷ"], "ta-unicode-ml"),
    ("tamil", "ஸ்ரீ", ["ஸ்ரீ"], "ta-unicode-ml"),
    ("tamil", "ஶ்ரீ", ["ஶ்ரீ"], "ta-unicode-ml"),
    ("tamil", "க்க", ["க்", "க"], "ta-extended"),
    ("tamil", "தமிழ்", ["த", "மி", "ழ்"], "ta-extended"),
    ("tamil", "இஸ்ரேல்", ["இ", "ஸ்", "ரே", "ல்"], "ta-extended"),  # <sa, pulli, ra> without ii is not shrii
    # Telugu
    ("telugu", "నక్క", ["న", "క్క"], "te-brown"),
    ("telugu", "కుక్క", ["కు", "క్క"], "te-brown"),
    ("telugu", "బల్లెం", ["బ", "ల్లెం"], "te-brown"),
    ("telugu", "గుర్రం", ["గు", "ర్రం"], "te-brown"),
    ("telugu", "క్ర", ["క్ర"], "te-brown"),
    ("telugu", "క్షత్రియుడు", ["క్ష", "త్రి", "యు", "డు"], "te-vattu"),
    # Kannada
    ("kannada", "ಅಣ್ಣ", ["ಅ", "ಣ್ಣ"], "kn-kalike"),
    ("kannada", "ಅಮ್ಮ", ["ಅ", "ಮ್ಮ"], "kn-kalike"),
    ("kannada", "ಜನ್ಮ", ["ಜ", "ನ್ಮ"], "kn-kalike"),
    ("kannada", "ಕೃಷ್ಣ", ["ಕೃ", "ಷ್ಣ"], "kn-kalike"),
    ("kannada", "ತ್ರ್ಯ", ["ತ್ರ್ಯ"], "kn-kalike"),
    ("kannada", "ಸ್ಕೃ", ["ಸ್ಕೃ"], "kn-kalike"),
    ("kannada", "ಅಂಗ", ["ಅಂ", "ಗ"], "kn-kalike"),
    ("kannada", "\u0cf1\u0c95", ["\u0cf1\u0c95"], "kn-stacker"),
    ("kannada", "\u0cf2\u0cab", ["\u0cf2\u0cab"], "kn-stacker"),
    # Malayalam
    ("malayalam", "അവൻ", ["അ", "വ", "ൻ"], "ml-wiki"),
    ("malayalam", "അവന്", ["അ", "വ", "ന്"], "ml-wiki"),
    ("malayalam", "അവന്\u200d", ["അ", "വ", "ന്\u200d"], "ml-ganesan"),  # the same chillu, old encoding
]


@pytest.mark.parametrize("script, text, expected, source", EXAMPLES,
                         ids=[f"{s}-{t}" for s, t, _, _ in EXAMPLES])
def test_syllables_a_reader_expects(script, text, expected, source):
    assert source in SRC
    assert syllabify(text, script) == expected
    assert Syllabifier(bundled_schema(script), engine="table").tokenize(text) == expected


def test_every_script_has_examples():
    assert {s for s, *_ in EXAMPLES} == set(NEW)


# --- what is not in any source above, but follows from the encoding model, said as such --------------------------

@pytest.mark.parametrize("script, text, expected", [
    ("malayalam", "എൻ്റെ", ["എ", "ൻ്റെ"]),     # nta, new encoding <chillu n, virama, rra>: one written unit
    ("malayalam", "എന്റെ", ["എ", "ന്റെ"]),     # nta, old encoding <na, virama, rra>
    ("malayalam", "\u0d4eക്ക", ["\u0d4eക്ക"]),  # dot reph is a prepended sign (GCB=Prepend)
    ("tamil", "ஸ்ர", ["ஸ்", "ர"]),             # not shrii: roll back
    ("tamil", "க்‍ஷ", ["க்‍", "ஷ"]),            # a joiner between pulli and ssa: not the ligature
    ("malayalam", "ഡെയ്ൻ", ["ഡെ", "യ്", "ൻ"]),   # a chillu after a virama: a dead consonant, not a conjunct's
    ("malayalam", "നെയ്ൽസൻ", ["നെ", "യ്", "ൽ", "സ", "ൻ"]),
])
def test_encoding_model_cases(script, text, expected):
    assert syllabify(text, script) == expected


@pytest.mark.parametrize("script", available_scripts())
def test_punctuation_is_the_blocks_other_punctuation(script):
    # The schema's "punctuation" (split off words by split_punctuation) is exactly the code points of
    # its blocks whose General_Category is Po in the Unicode Character Database (via the regex module).
    schema = bundled_schema(script)
    block = {cp for b in schema.blocks for cp in range(b.first, b.last + 1)}
    assert schema.punctuation == {cp for cp in block if regex.match(r"\p{Po}", chr(cp))}


# --- a zero width non-joiner after a virama ends the syllable ------------------------------------------------------

# Real words with <consonant, virama, ZWNJ, consonant>, from the shared corpora (FLORES-200, NTREX-128).
ZWNJ_WORDS = [
    ("devanagari", "क्\u200cष", ["क्\u200c", "ष"]),
    ("bengali", "সেট্\u200cসের", ["সে", "ট্\u200c", "সে", "র"]),
    ("gujarati", "ક્\u200cષ", ["ક્\u200c", "ષ"]),
    ("gurmukhi", "ਕ੍\u200cਸ", ["ਕ੍\u200c", "ਸ"]),
    ("odia", "ଏଶନ୍\u200cର", ["ଏ", "ଶ", "ନ୍\u200c", "ର"]),
    ("telugu", "పెట్\u200cల", ["పె", "ట్\u200c", "ల"]),
    ("kannada", "ರ್ಕ್\u200cಶೈರ್", ["ರ್ಕ್\u200c", "ಶೈ", "ರ್"]),
    ("malayalam", "ലെയ്\u200cഡ്", ["ലെ", "യ്\u200c", "ഡ്"]),
]


@pytest.mark.parametrize("script, text, expected", ZWNJ_WORDS, ids=[s for s, *_ in ZWNJ_WORDS])
def test_a_non_joiner_after_a_virama_ends_the_syllable(script, text, expected):
    # SRC["explicit-virama"]: the writer asked for no conjunct, and \X ends a cluster after the ZWNJ.
    assert syllabify(text, script) == expected
    assert Syllabifier(bundled_schema(script), engine="table").tokenize(text) == expected
    assert text.index("\u200c") + 1 in {m.end() for m in regex.finditer(r"\X", text)}


@pytest.mark.parametrize("script", [s for s, *_ in ZWNJ_WORDS])
def test_no_syllable_continues_after_a_virama_and_a_non_joiner(script):
    # Every class of the schema, in every order of four: after <virama, ZWNJ> a syllable holds marks only.
    schema = bundled_schema(script)
    table = Syllabifier(schema, engine="table")
    virama = min(schema.classes["H"])
    letters = [min(cps) for label, cps in schema.classes.items() if cps and label not in ("H", "ZN")]
    for a in letters:
        for b in letters:
            text = chr(a) + chr(virama) + "\u200c" + chr(b)
            for syllable in table.tokenize(text):
                if chr(virama) + "\u200c" in syllable:
                    rest = syllable.split(chr(virama) + "\u200c", 1)[1]
                    assert all(schema.class_of.get(ord(c)) in schema.attach_classes or
                               regex.match(r"\p{M}", c) for c in rest), (script, text, syllable)
