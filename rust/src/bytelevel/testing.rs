//! Tokenizers and random inputs shared by the byte-level tests (test builds only).

use super::ranks::MAX_SHORT;
use super::{ByteLevel, Model};
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
