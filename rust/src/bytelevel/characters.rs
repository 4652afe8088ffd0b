//! Words of three-byte characters (most Indic scripts, CJK) start from their characters' own
//! merges, under the ranks rule.
//!
//! A word of three-byte characters spends most of its merges inside characters: the first two
//! bytes, then the character. Each such merge in the loops of [`super::ranks`] and
//! [`super::mid`] is a heap entry and two lookups of the new part with its neighbours, and those
//! lookups, across characters, find nothing most of the time. Those merges can be made before
//! the loop, from a table of every three-byte string's own merges:
//!
//! Let `floor` be the lowest rank of any token that spans a boundary between two three-byte
//! characters of the word (a token's id is its rank). Then every merge of rank below `floor`
//! joins two parts of one character, one character's merges below `floor` do not depend on
//! its neighbours, and once no pair below `floor` is left, each character is merged alone as
//! far as `floor` goes. The rule passes through that state (it takes the lowest pair first,
//! and below `floor` those are pairs inside characters), so merging on from it gives the
//! word's units. `floor` is taken at construction, per block of 64 characters (those sharing
//! their first two bytes): the lowest rank of a token spanning a boundary before a character
//! of the block (a word holding such a token holds that character); a word's `floor` is the
//! lowest of its characters' blocks. A first byte below 0x80 (the space of ` word`) and the character after it stay
//! bytes, and the loop merges them: the tokens joining a space to the first byte of a
//! character (` \xe0`) are among the first merges of all.
//!
//! This module does not merge: it says where a word's parts start. The merges rule (pairs
//! ranked by a list, not tokens by id) does not use it.

use super::NO_TOKEN;

/// Flags a character's first merge as the pair of its first two bytes.
const LEFT: u32 = 1 << 31;

/// Every three-byte string's own merges, and each block's floor.
pub(super) struct Characters {
    /// The floor of each block, at `(lead & 0x0F) << 6 | (second & 0x3F)`.
    floors: Vec<u32>,
    /// Each three-byte string, at its 16 payload bits: the token of its first merge (with
    /// [`LEFT`] where that is the pair of its first two bytes) in the low half, or NO_TOKEN;
    /// the token of all three bytes in the high half, or NO_TOKEN.
    steps: Vec<u64>,
}

#[inline(always)]
fn block(lead: u8, second: u8) -> usize {
    (usize::from(lead & 0x0F) << 6) | usize::from(second & 0x3F)
}

fn lower(floors: &mut [u32], block: usize, id: u32) {
    floors[block] = floors[block].min(id);
}

#[inline(always)]
fn payload(b: &[u8]) -> usize {
    (usize::from(b[0] & 0x0F) << 12) | (usize::from(b[1] & 0x3F) << 6) | usize::from(b[2] & 0x3F)
}

impl Characters {
    /// The table of a ranks-rule vocabulary (`byte_pairs`: the token of every two bytes;
    /// `token`: a lookup of three bytes), or None where an id is too large to be flagged.
    pub(super) fn build(
        ranks: &[(&[u8], u32)],
        byte_pairs: &[u32],
        token: impl Fn(&[u8]) -> Option<u32>,
    ) -> Option<Characters> {
        if ranks.iter().any(|&(_, id)| id >= LEFT) {
            return None;
        }
        let mut floors = vec![NO_TOKEN; 1 << 10];
        for &(bytes, id) in ranks {
            Self::lower_floors(&mut floors, bytes, id);
        }
        let steps = (0..1usize << 16)
            .map(|p| {
                let b = [
                    0xE0 | (p >> 12) as u8,
                    0x80 | ((p >> 6) & 0x3F) as u8,
                    0x80 | (p & 0x3F) as u8,
                ];
                let pair = |x: u8, y: u8| byte_pairs[(usize::from(x) << 8) | usize::from(y)];
                let (left, right) = (pair(b[0], b[1]), pair(b[1], b[2]));
                let (first, whole) = if left == NO_TOKEN && right == NO_TOKEN {
                    (NO_TOKEN, NO_TOKEN)
                } else {
                    let first = if left <= right { left | LEFT } else { right };
                    (first, token(&b).unwrap_or(NO_TOKEN))
                };
                (u64::from(whole) << 32) | u64::from(first)
            })
            .collect();
        Some(Characters { floors, steps })
    }

    /// Lowers to `id` the floors that token `bytes` bounds: it may span a boundary between two
    /// three-byte characters of a word that is such characters after at most one byte below
    /// 0x80. (A token holding a byte below 0x80 after its first byte of 0x80 or above is in no
    /// such word.)
    fn lower_floors(floors: &mut [u32], bytes: &[u8], id: u32) {
        // (most tokens: no character starts after the first byte)
        if !bytes.iter().skip(1).any(|&b| b & 0xF0 == 0xE0) {
            return;
        }
        let Some(skip) = bytes.iter().position(|&b| b >= 0x80) else {
            return;
        };
        let rest = &bytes[skip..];
        if rest.iter().any(|&b| b < 0x80) {
            return;
        }
        // `offset`: the place in its character of the token's first byte of 0x80 or above (0:
        // a first byte); after a byte below 0x80 it starts a character.
        let offsets = if skip > 0 { 0..1 } else { 0..3 };
        for offset in offsets {
            let place = |k: usize| (offset + k) % 3;
            let fits = rest.iter().enumerate().all(|(k, &b)| match place(k) {
                0 => b & 0xF0 == 0xE0,
                _ => b & 0xC0 == 0x80,
            });
            if !fits {
                continue;
            }
            // A word holding the token across a boundary holds the character starting there,
            // whose block is named by its first two bytes (by its first, any block of it, where
            // the token ends there): lowering those blocks lowers every such word's floor.
            for k in (1..rest.len()).filter(|&k| place(k) == 0) {
                match rest.get(k + 1) {
                    Some(&second) => lower(floors, block(rest[k], second), id),
                    None => {
                        (0x80..=0xBF).for_each(|second| lower(floors, block(rest[k], second), id))
                    }
                }
            }
        }
    }

    /// Where `piece`'s characters may start merged: the byte at which they start and the
    /// piece's floor, when the piece is three-byte characters, after at most one byte below
    /// 0x80 (that byte and the first character then stay bytes, and merging ahead starts
    /// after them).
    #[inline]
    pub(super) fn start(&self, piece: &[u8]) -> Option<(usize, u32)> {
        let (skip, ahead) = match piece.first() {
            Some(&b) if b < 0x80 => (1, 4),
            _ => (0, 0),
        };
        let chars = &piece[skip..];
        if chars.len() < 6 || chars.len() % 3 != 0 {
            return None;
        }
        let mut floor = NO_TOKEN;
        for c in chars.chunks_exact(3) {
            if c[0] & 0xF0 != 0xE0 || c[1] & 0xC0 != 0x80 || c[2] & 0xC0 != 0x80 {
                return None;
            }
            floor = floor.min(self.floors[block(c[0], c[1])]);
        }
        Some((ahead, floor))
    }

    /// The token of the three bytes `c`, or NO_TOKEN, where a pair of them is one.
    #[inline(always)]
    pub(super) fn whole(&self, c: &[u8]) -> u32 {
        (self.steps[payload(c)] >> 32) as u32
    }

    /// The parts of the character at `piece[at..at + 3]` once merged alone up to `floor`, in
    /// order: `part(start, end, unit)`; `unit_of` gives a byte's unit.
    #[inline(always)]
    pub(super) fn parts(
        &self,
        piece: &[u8],
        at: usize,
        floor: u32,
        unit_of: impl Fn(u8) -> u32,
        mut part: impl FnMut(usize, usize, u32),
    ) {
        let step = self.steps[payload(&piece[at..at + 3])];
        let (first, whole) = (step as u32, (step >> 32) as u32);
        if first == NO_TOKEN || first & !LEFT >= floor {
            (at..at + 3).for_each(|i| part(i, i + 1, unit_of(piece[i])));
        } else if whole < floor {
            part(at, at + 3, whole);
        } else if first & LEFT != 0 {
            part(at, at + 2, first & !LEFT);
            part(at + 2, at + 3, unit_of(piece[at + 2]));
        } else {
            part(at, at + 1, unit_of(piece[at]));
            part(at + 1, at + 3, first);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytelevel::testing::generator;
    use crate::bytelevel::{ByteLevel, Model, RankPairs};
    use crate::merge::merge_with;
    use crate::pretokenize::named;

    /// A GPT-2-pattern tokenizer of `tokens` under the ranks rule, each ranked by its place.
    fn ranked(tokens: &[Vec<u8>]) -> ByteLevel {
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

    /// Random vocabularies over the bytes of a few three-byte characters of two blocks and a
    /// space: every byte, the characters' first two bytes and some characters ranked low, and
    /// random slices of random words (inside characters, across them, from a space, from a
    /// character's last byte) at random ranks, so that each word's floor falls anywhere among
    /// its characters' merges. Words of every length, after a space or not, merged from the
    /// parts given here, against the general loop from bytes: the same units.
    #[test]
    fn words_started_merged_give_the_units_of_the_merges_from_bytes() {
        let alphabet: Vec<Vec<u8>> = [
            '\u{0D15}', '\u{0D3E}', '\u{0D4D}', '\u{0D2E}', '\u{0D7A}', '\u{4E00}', '\u{4E8C}',
        ]
        .iter()
        .map(|c| c.to_string().into_bytes())
        .collect();
        let (mut started, mut words_seen) = (0, 0);
        for seed in 1..=40u64 {
            let mut next = generator(seed * 0x9E37_79B9);
            let word = |next: &mut dyn FnMut(u64) -> u64, n: usize| -> Vec<u8> {
                let space = next(2) == 0;
                let mut w = if space { vec![b' '] } else { Vec::new() };
                for _ in 0..n {
                    w.extend_from_slice(&alphabet[next(alphabet.len() as u64) as usize]);
                }
                w
            };
            let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            let mut low: Vec<Vec<u8>> = vec![vec![0xE0, 0xB4], vec![0xE0, 0xB5], vec![0xE4, 0xB8]];
            low.extend(alphabet.iter().filter(|_| next(2) == 0).cloned());
            // a space joined to a first byte, as in o200k_base, where it is among the first merges
            low.extend(
                [b" \xe0".to_vec(), b" \xe4".to_vec()]
                    .into_iter()
                    .filter(|_| next(2) == 0),
            );
            let mut random: Vec<Vec<u8>> = Vec::new();
            for _ in 0..(20 + next(200)) {
                let n = 2 + next(4) as usize;
                let w = word(&mut next, n);
                let start = next(w.len() as u64 - 1) as usize;
                let len = 2 + next((w.len() - start - 1).min(8) as u64) as usize;
                random.push(w[start..(start + len).min(w.len())].to_vec());
            }
            // shuffled: the low ones and a quarter of the random ones first, in random order,
            // then the other random ones
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
            let tok = ranked(&tokens);
            let characters = tok.characters.as_ref().unwrap();
            for _ in 0..300 {
                let n = 1 + next(40) as usize;
                let piece = word(&mut next, n);
                let mut units = Vec::new();
                tok.merge_plain(&piece, &mut units);
                let mut want: Vec<u32> = piece.iter().map(|&b| u32::from(b)).collect();
                merge_with(&mut want, &RankPairs { tok: &tok });
                assert_eq!(
                    units,
                    want,
                    "seed {seed}, {:?}",
                    String::from_utf8_lossy(&piece)
                );
                words_seen += 1;
                if let Some((at, floor)) = characters.start(&piece) {
                    let mut merged = false;
                    for c in (at..piece.len()).step_by(3) {
                        characters
                            .parts(&piece, c, floor, u32::from, |s, e, _| merged |= e - s > 1);
                    }
                    started += usize::from(merged);
                }
            }
        }
        // not a test of nothing: many words start with characters merged
        assert!(started * 4 > words_seen, "{started} of {words_seen}");
    }

    #[test]
    fn the_floor_is_the_lowest_token_across_characters_of_the_word() {
        let ka = "\u{0D15}".as_bytes(); // E0 B4 95
        let virama = "\u{0D4D}".as_bytes(); // E0 B5 8D
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut add = |t: Vec<u8>| tokens.push(t);
        add(vec![0xE0, 0xB4]); // 256
        add(vec![0xE0, 0xB5]); // 257
        add(ka.to_vec()); // 258
        add(b" \xe0".to_vec()); // 259: a space and a lead byte, in no floor
        add(virama.to_vec()); // 260
        add([virama, &[0xE0, 0xB4]].concat()); // 261: across a boundary, to a character of block B4
        add([&ka[1..], &[0xE0]].concat()); // 262: from a second byte to a first, every block of E0
        let tok = ranked(&tokens);
        let c = tok.characters.as_ref().unwrap();
        assert_eq!(c.floors[block(0xE0, 0xB4)], 261);
        assert_eq!(c.floors[block(0xE5, 0xB4)], NO_TOKEN); // (a word holding 262 holds a lead E0)
        assert_eq!(c.floors[block(0xE0, 0xB5)], 262); // 261 starts with it: no boundary before
        assert_eq!(c.floors[block(0xE4, 0xB8)], NO_TOKEN);
        let word = [ka, ka, virama].concat();
        assert_eq!(c.start(&word), Some((0, 261)));
        assert_eq!(c.start(&[b" ", ka, ka].concat()), Some((4, 261)));
        assert_eq!(c.start(&[b"  ", ka, ka].concat()), None);
        assert_eq!(c.start(&[ka, b"a"].concat()), None);
        assert_eq!(c.start(ka), None); // one character: nothing to start merged
        let mut parts = Vec::new();
        c.parts(&word, 0, 261, u32::from, |s, e, u| parts.push((s, e, u)));
        c.parts(&word, 6, 261, u32::from, |s, e, u| parts.push((s, e, u)));
        c.parts(&word, 6, 258, u32::from, |s, e, u| parts.push((s, e, u)));
        c.parts(&word, 6, 257, u32::from, |s, e, u| parts.push((s, e, u)));
        let bytes = |at: usize| (at..at + 3).map(|i| (i, i + 1, u32::from(word[i])));
        let want: Vec<_> = [(0, 3, 258), (6, 9, 260), (6, 8, 257), (8, 9, 0x8D)]
            .into_iter()
            .chain(bytes(6))
            .collect();
        assert_eq!(parts, want);
    }
}
