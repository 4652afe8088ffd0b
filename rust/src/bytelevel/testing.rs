//! Random inputs shared by the byte-level tests (test builds only).

use super::ranks::MAX_SHORT;

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
