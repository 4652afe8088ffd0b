//! Tokenizers, random vocabularies and inputs, and checks shared by the byte-level tests (test
//! builds only).

use super::ranks::MAX_SHORT;
use super::{ByteLevel, Model, RankPairs};
use crate::merge::merge_with;
use crate::pretokenize::named;

/// A GPT-2-pattern tokenizer of `ranks` (and `merges`: the merges rule), with one special token
/// (`<|end|>`, 1000) and one added token (`@@`, 1001), and a 1 MiB piece cache.
pub fn build(ranks: &[(Vec<u8>, u32)], merges: Option<Vec<(&[u8], &[u8])>>) -> ByteLevel {
    let model = Model {
        ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
        merges,
        special_tokens: vec![("<|end|>", 1000)],
        added_tokens: vec![("@@", 1001)],
        patterns: vec![named::GPT2],
        cache_bytes: 1 << 20,
        ..Model::default()
    };
    ByteLevel::new(&model).unwrap()
}

/// A GPT-2-pattern tokenizer of `tokens` under the ranks rule, each ranked by its place.
pub fn ranked(tokens: &[Vec<u8>]) -> ByteLevel {
    let model = Model {
        ranks: tokens
            .iter()
            .zip(0..)
            .map(|(t, i)| (t.as_slice(), i))
            .collect(),
        patterns: vec![named::GPT2],
        ..Model::default()
    };
    ByteLevel::new(&model).unwrap()
}

/// The tokens of a random vocabulary, in rank order: every byte, then `low` and a quarter of
/// some random slices (two to nine bytes) of random words (`word(next, characters)`) in random
/// order, then the other slices in random order.
pub fn random_tokens(
    next: &mut dyn FnMut(u64) -> u64,
    mut low: Vec<Vec<u8>>,
    word: impl Fn(&mut dyn FnMut(u64) -> u64, usize) -> Vec<u8>,
) -> Vec<Vec<u8>> {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut random: Vec<Vec<u8>> = Vec::new();
    for _ in 0..(20 + next(200)) {
        let n = 2 + next(4) as usize;
        let w = word(next, n);
        let start = next(w.len() as u64 - 1) as usize;
        let len = 2 + next((w.len() - start - 1).min(8) as u64) as usize;
        random.push(w[start..(start + len).min(w.len())].to_vec());
    }
    low.extend(random.drain(..random.len() / 4));
    for list in [&mut low, &mut random] {
        for i in (1..list.len()).rev() {
            list.swap(i, next(i as u64 + 1) as usize);
        }
    }
    for t in low.into_iter().chain(random) {
        if t.len() >= 2 && !tokens.contains(&t) {
            tokens.push(t);
        }
    }
    tokens
}

/// Asserts that the merges of `piece` (the scan or the stack heap, from the parts they start
/// from) give the units of the general loop from bytes, under the ranks rule.
pub fn assert_merges_as_from_bytes(tok: &ByteLevel, piece: &[u8], context: &str) {
    let mut units = Vec::new();
    tok.merge_plain(piece, &mut units);
    let mut want: Vec<u32> = piece.iter().map(|&b| u32::from(b)).collect();
    merge_with(&mut want, &RankPairs { tok });
    assert_eq!(
        units,
        want,
        "{context}, {:?}",
        String::from_utf8_lossy(piece)
    );
}

/// A small deterministic generator (xorshift): `next(bound)` is in `0..bound`.
pub fn generator(mut state: u64) -> impl FnMut(u64) -> u64 {
    move |bound| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    }
}

/// `rounds` random pieces longer than [`MAX_SHORT`] (by up to `spread` bytes), over
/// `alphabets[0]` and `alphabets[1]` in turn.
pub fn long_pieces(seed: u64, rounds: usize, spread: u64, alphabets: [&[u8]; 2]) -> Vec<Vec<u8>> {
    let mut state = seed;
    (0..rounds)
        .map(|round| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = MAX_SHORT + 1 + (state % spread) as usize;
            let letters = alphabets[round % 2];
            let mut x = state;
            (0..len)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    letters[((x >> 33) % letters.len() as u64) as usize]
                })
                .collect()
        })
        .collect()
}
