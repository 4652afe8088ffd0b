//! The encoder's tests: the shortcuts (whole pieces, seeded superword spans) give the plain
//! path's ids, and the fallback keeps the syllables the vocabulary knows.

use super::*;
use crate::schema::tests::sinhala;

fn cps(s: &str) -> Vec<u32> {
    s.chars().map(u32::from).collect()
}

/// An encoder over the byte tokens and `tokens`; merges and superword merges by strings.
fn encoder(tokens: &[&str], merges: &[(&str, &str)], superword: &[(&str, &str)]) -> Encoder {
    let splitter = WordSplitter::new(
        &[(0x0D80, 0x0DFF), (0x200D, 0x200D)],
        &[],
        vec![sinhala()],
        None,
    )
    .unwrap();
    let mut all: Vec<Vec<u32>> = (0..256).map(|b| cps(&format!("<0x{b:02X}>"))).collect();
    all.extend(tokens.iter().map(|t| cps(t)));
    let id = |s: &str| all.iter().position(|t| *t == cps(s)).unwrap() as u32;
    let ids = |list: &[(&str, &str)]| {
        list.iter()
            .map(|&(a, b)| (id(a), id(b), id(&format!("{a}{b}"))))
            .collect()
    };
    let spec = EncoderSpec {
        tokens: all.clone(),
        merges: ids(merges),
        fallback: Fallback::Bytes(Box::new(std::array::from_fn(|b| b as u32))),
        special_ids: vec![],
        scope: Scope::Pieces,
        prefix_space: false,
        superword_merges: ids(superword),
        span_breaks: vec![u32::from('.')],
    };
    Encoder::new(splitter, spec).unwrap()
}

/// The same encoder without the shortcuts: every piece through syllables, units and
/// merges, every span merged from all its pairs.
fn plain(tokens: &[&str], merges: &[(&str, &str)], superword: &[(&str, &str)]) -> Encoder {
    let mut e = encoder(tokens, merges, superword);
    (e.whole, e.whole_max) = (Vec::new(), 0);
    e.seeded_spans = false;
    e
}

/// Texts of `alphabet`'s characters, up to 12 long, from a fixed generator.
fn texts(alphabet: &str, n: usize) -> Vec<Vec<u32>> {
    let alphabet = cps(alphabet);
    let mut seed = 3u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    (0..n)
        .map(|_| {
            (0..next() % 13)
                .map(|_| alphabet[next() % alphabet.len()])
                .collect()
        })
        .collect()
}

const TOKENS: &[&str] = &[
    "a", "b", " ", ".", " a", " b", "ab", " ab", "a a", "a a b", " a a", "a.",
];

#[test]
fn a_whole_piece_token_bpe_does_not_reach_is_not_taken() {
    // "ab" is a token, but no merge makes it: the piece "ab" stays two tokens.
    let e = encoder(TOKENS, &[(" ", "a"), (" ", "b")], &[]);
    assert_eq!(e.encode(&cps("ab"), &[]).unwrap(), [256, 257]);
    assert_eq!(e.encode(&cps(" a"), &[]).unwrap(), [260]);
    // " ab" is the boundary tokens " a" and "b" (no script characters), merged.
    let e = encoder(TOKENS, &[("a", "b"), (" a", "b")], &[]);
    assert_eq!(e.encode(&cps("ab"), &[]).unwrap(), [262]);
    assert_eq!(e.encode(&cps(" ab"), &[]).unwrap(), [263]);
}

#[test]
fn shortcuts_give_the_plain_ids() {
    let merges = [(" ", "a"), (" ", "b"), ("a", "b"), (" ", "ab"), ("a", ".")];
    let superword = [("a", " a"), ("a a", " b"), (" a", " a")];
    let (fast, slow) = (
        encoder(TOKENS, &merges, &superword),
        plain(TOKENS, &merges, &superword),
    );
    assert!(fast.seeded_spans);
    assert_eq!(fast.encode(&cps("a a b"), &[]).unwrap(), [265]);
    assert_eq!(fast.encode(&cps("a. a b"), &[]).unwrap(), [267, 260, 261]);
    for text in texts("ab .\n\u{0D9A}", 20_000) {
        assert_eq!(
            fast.encode(&text, &[]).unwrap(),
            slow.encode(&text, &[]).unwrap(),
            "{text:?}"
        );
    }
}

#[test]
fn a_space_prefixed_syllable_the_vocabulary_lacks_keeps_its_bare_syllable() {
    // Issue 29's case: "ශ්‍රී" and " ශ්‍" are tokens, " ශ්‍රී" is not. With the building
    // merges of training (bare syllables built first), " ශ්‍රී" is the space and "ශ්‍රී";
    // with the space's merges first it was " ශ්‍" and "රී".
    let symbols = ["ශ්\u{200D}රී", " ශ්\u{200D}", "රී", " "];
    let (merges, pieces) =
        crate::training::building_merges(&symbols.map(cps)).expect("building merges");
    let text = |t: &[u32]| t.iter().map(|&c| char::from_u32(c).unwrap()).collect();
    let pieces: Vec<String> = pieces.iter().map(|p| text(p)).collect();
    let merges: Vec<(String, String)> = merges.iter().map(|(a, b)| (text(a), text(b))).collect();
    let tokens: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let pairs: Vec<(&str, &str)> = merges
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let e = encoder(&tokens, &pairs, &[]);
    let shown =
        |ids: Vec<u32>| -> Vec<String> { ids.iter().map(|&id| text(e.vocab.token(id))).collect() };
    assert_eq!(
        shown(e.encode(&cps(" ශ්\u{200D}රී"), &[]).unwrap()),
        [" ", "ශ්\u{200D}රී"]
    );
    assert_eq!(
        shown(e.encode(&cps(" ශ්\u{200D}"), &[]).unwrap()),
        [" ශ්\u{200D}"]
    );
    assert_eq!(
        shown(e.encode(&cps("ශ්\u{200D}රී"), &[]).unwrap()),
        ["ශ්\u{200D}රී"]
    );
    // The space's merges first (the order before): the syllable is cut.
    let mut spaced_first = pairs.clone();
    spaced_first.sort_by_key(|&(a, _)| !a.starts_with(' '));
    let old = encoder(&tokens, &spaced_first, &[]);
    let ids = old.encode(&cps(" ශ්\u{200D}රී"), &[]).unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(text(old.vocab.token(ids[0])), " ශ්\u{200D}");
}

#[test]
fn a_superword_merge_inside_a_piece_turns_the_shortcut_off() {
    // ("a", "b") as a superword merge can join units inside the piece "ab": every pair of
    // the span must be looked up.
    let superword = [("a", " a"), ("a", "b")];
    let (fast, slow) = (
        encoder(TOKENS, &[(" ", "a")], &superword),
        plain(TOKENS, &[(" ", "a")], &superword),
    );
    assert!(!fast.seeded_spans);
    assert_eq!(fast.encode(&cps("ab"), &[]).unwrap(), [262]);
    for text in texts("ab .", 5_000) {
        assert_eq!(
            fast.encode(&text, &[]).unwrap(),
            slow.encode(&text, &[]).unwrap(),
            "{text:?}"
        );
    }
}
