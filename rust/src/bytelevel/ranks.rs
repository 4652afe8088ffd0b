//! tiktoken's merge rule on one short piece, by byte positions.
//!
//! Under the ranks rule, two adjacent parts of a piece merge if their concatenated bytes are a
//! token, and the token's id is the merge's rank. The concatenation of two adjacent parts is a
//! slice of the piece itself, so it can be looked up directly, without first fetching each
//! part's bytes by id from a table of megabytes (what the general loop in [`crate::merge`],
//! driven by ids, has to do). Pieces longer than [`MAX_SHORT`] bytes take the general loop,
//! which is O(n log n); this one is O(n²) in the piece's length, and fastest for words.

use super::table::{Packed, PACKED};
use super::{ByteLevel, NO_TOKEN};

/// Longest piece merged here.
pub const MAX_SHORT: usize = 64;

impl ByteLevel {
    /// The id of the token `bytes` (two or more bytes), or [`NO_TOKEN`].
    #[inline(always)]
    fn rank_of(&self, bytes: &[u8]) -> u32 {
        match bytes.len() {
            2 => self.byte_pairs[(usize::from(bytes[0]) << 8) | usize::from(bytes[1])],
            n if n <= PACKED => self
                .encoder
                .get_packed_rare(Packed::new(bytes))
                .unwrap_or(NO_TOKEN),
            _ => self.encoder.get(bytes).unwrap_or(NO_TOKEN),
        }
    }

    /// The units of `piece` (at most [`MAX_SHORT`] bytes, ranks rule) after every merge, into
    /// `units`: token ids, or pseudo ids of bytes left without a token.
    pub(super) fn merge_short(&self, piece: &[u8], units: &mut Vec<u32>) {
        let n = piece.len();
        debug_assert!((1..=MAX_SHORT).contains(&n));
        // Part i is piece[start[i]..start[i + 1]], its unit id[i]; rank[i] is the token that
        // parts i and i + 1 make together (NO_TOKEN: none).
        let mut start = [0u8; MAX_SHORT + 1];
        let mut id = [0u32; MAX_SHORT];
        let mut rank = [NO_TOKEN; MAX_SHORT];
        for (i, &b) in piece.iter().enumerate() {
            start[i] = i as u8;
            id[i] = self.byte_units[usize::from(b)];
        }
        start[n] = n as u8;
        for i in 0..n - 1 {
            rank[i] = self.rank_of(&piece[i..i + 2]);
        }
        let mut len = n;
        loop {
            // The lowest rank, leftmost among equals.
            let mut at = 0;
            let mut best = NO_TOKEN;
            for (i, &r) in rank[..len - 1].iter().enumerate() {
                if r < best {
                    best = r;
                    at = i;
                }
            }
            if best == NO_TOKEN {
                break;
            }
            // Parts at and at + 1 become one: drop part at + 1.
            id[at] = best;
            start.copy_within(at + 2..=len, at + 1);
            id.copy_within(at + 2..len, at + 1);
            if at + 2 < len - 1 {
                rank.copy_within(at + 2..len - 1, at + 1);
            }
            len -= 1;
            let span = |i: usize| usize::from(start[i])..usize::from(start[i + 2]);
            rank[at] = if at + 1 < len {
                self.rank_of(&piece[span(at)])
            } else {
                NO_TOKEN
            };
            if at > 0 {
                rank[at - 1] = self.rank_of(&piece[span(at - 1)]);
            }
        }
        units.clear();
        units.extend_from_slice(&id[..len]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytelevel::{Model, RankPairs};
    use crate::merge::merge_with;
    use crate::pretokenize::named;

    /// merge_short against the general loop driven by ids, on every string over a small
    /// alphabet up to length 6, and on long random ones: the same units.
    #[test]
    fn equals_the_general_loop() {
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8)
            .filter(|&b| b != b'z') // a byte without a token of its own
            .map(|b| (vec![b], u32::from(b)))
            .collect();
        for (i, t) in [
            "ab", "bc", "abc", "ca", "aa", "aaa", "cab", "zb", "bz", "abz", "zz", "bcab", "aab",
        ]
        .iter()
        .enumerate()
        {
            ranks.push((t.as_bytes().to_vec(), 300 - i as u32 * 3));
        }
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        let tok = ByteLevel::new(&model).unwrap();
        let general = |piece: &[u8]| {
            let mut units: Vec<u32> = piece.iter().map(|&b| tok.byte_units[b as usize]).collect();
            merge_with(&mut units, &RankPairs { tok: &tok });
            units
        };
        let alphabet = b"abcz";
        let mut short = Vec::new();
        let mut check = |piece: &[u8]| {
            tok.merge_short(piece, &mut short);
            assert_eq!(short, general(piece), "{piece:?}");
        };
        for len in 1..=6u32 {
            for code in 0..4usize.pow(len) {
                let piece: Vec<u8> = (0..len).map(|k| alphabet[(code >> (2 * k)) & 3]).collect();
                check(&piece);
            }
        }
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = 1 + (state % MAX_SHORT as u64) as usize;
            let piece: Vec<u8> = (0..len)
                .map(|k| alphabet[((state >> (k % 60)) & 3) as usize])
                .collect();
            check(&piece);
        }
    }
}
