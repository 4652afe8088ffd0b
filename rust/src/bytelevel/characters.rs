//! Words of three-byte characters (most Indic scripts, CJK) start from their characters' own
//! merges, under the ranks rule.
//!
//! A word of three-byte characters spends most of its merges inside characters: the first two
//! bytes, then the character. Each such merge in the loops of [`super::ranks`] and
//! [`super::mid`] is a heap entry and two lookups of the new part with its neighbours, and those
//! lookups, across characters, find nothing most of the time. Those merges can be made before
//! the loop, from a table of every three-byte string's own merges:
//!
//! A character can start merged as far as it merges alone below its *limit*: the lowest rank of
//! any token that may span one of its two boundaries with its neighbours (a token's id is its
//! rank). Every merge across a boundary makes such a token, so none ranks below the limit of
//! either character it touches, and the rule (lowest pair first) makes each character's own
//! merges below its limit before any merge across its boundaries. Pairs elsewhere in the word
//! do not interact with them: the rule passes through the state where each character is merged
//! alone to its own limit, and merging on from there gives the word's units. (The lowest floor
//! over all the word's boundaries would do too, and stops most characters earlier.)
//!
//! A boundary's floor is bounded from each side, from tables taken at construction: a token
//! across it ends with a suffix of the character before (its last byte, its last two bytes or
//! all three) and starts the character after with a prefix of it (its first byte, its first
//! two, or all three). For each three-byte character, `after` is the lowest rank of a token that
//! holds a suffix of it and goes on into another character, `before` the lowest of a token that
//! comes from another character into a prefix of it; a boundary's floor is at least the larger
//! of the two, and a character's limit is the smaller of its two boundaries' floors.
//!
//! A first byte below 0x80 (the space of ` word`) stays a byte, and the boundary after it is
//! bounded by the lowest token from such a byte into a prefix of the character after it
//! (`spaced`): the tokens joining a space to the first byte of a character (` \xe0`) are among the
//! first merges of all, so that character rarely starts merged.
//!
//! This module does not merge: it says where a word's parts start. The merges rule (pairs
//! ranked by a list, not tokens by id) does not use it.

use super::NO_TOKEN;

/// Flags a character's first merge as the pair of its first two bytes.
const LEFT: u32 = 1 << 31;

/// What a word needs of one three-byte string: its own merges and the lowest ranks of tokens
/// across its boundaries. One cache line holds four.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Step {
    /// The token of its first merge, with [`LEFT`] where that is the pair of its first two
    /// bytes, or NO_TOKEN.
    first: u32,
    /// The token of all three bytes, or NO_TOKEN.
    whole: u32,
    /// The lowest rank of a token from another character into a prefix of this one.
    before: u32,
    /// The lowest rank of a token from a suffix of this character into another one.
    after: u32,
}

/// Every three-byte string's own merges and boundary ranks.
pub(super) struct Characters {
    /// At each three-byte string's 16 payload bits.
    steps: Vec<Step>,
    /// The lowest rank of a token from a byte below 0x80 into a character of each block of 64
    /// (by its first two bytes' payload bits): where a word starts after such a byte, the floor of
    /// its first character's boundary with it.
    spaced: Vec<u32>,
}

#[inline(always)]
fn payload(b: &[u8]) -> usize {
    (usize::from(b[0] & 0x0F) << 12) | (usize::from(b[1] & 0x3F) << 6) | usize::from(b[2] & 0x3F)
}

/// The lowest ranks of tokens across a boundary, by what they hold of the character on one side
/// of it: one byte, two or all three (keyed by those bytes' payload bits).
struct Sides {
    one: Vec<u32>,
    two: Vec<u32>,
    three: Vec<u32>,
}

impl Sides {
    fn new() -> Sides {
        Sides {
            one: vec![NO_TOKEN; 1 << 6],
            two: vec![NO_TOKEN; 1 << 12],
            three: vec![NO_TOKEN; 1 << 16],
        }
    }

    /// Lowers to `id` the side of `held`, 1 to 3 bytes of a character (its first byte, of
    /// 0xE0-0xEF, only in a prefix or all three), which a token across a boundary holds; `masks`
    /// keep the bits of `payload` that 1, 2 and 3 such bytes have.
    #[inline(always)]
    fn lower(&mut self, held: &[u8], id: u32, masks: [usize; 3]) {
        let bits = held
            .iter()
            .fold(0usize, |bits, &b| (bits << 6) | usize::from(b & 0x3F));
        let (table, mask) = match held.len() {
            1 => (&mut self.one, masks[0]),
            2 => (&mut self.two, masks[1]),
            _ => (&mut self.three, masks[2]),
        };
        let slot = &mut table[bits & mask];
        *slot = (*slot).min(id);
    }

    /// The lowest over the prefixes of the character of payload `p`.
    fn of_prefix(&self, p: usize) -> u32 {
        self.one[p >> 12].min(self.two[p >> 6]).min(self.three[p])
    }

    /// The lowest over its suffixes.
    fn of_suffix(&self, p: usize) -> u32 {
        self.one[p & 0x3F]
            .min(self.two[p & 0xFFF])
            .min(self.three[p])
    }
}

/// A prefix's bits: a first byte keeps four, as in `payload`.
const PREFIX: [usize; 3] = [0x0F, 0x3FF, 0xFFFF];
/// A suffix's: only the whole character holds a first byte.
const SUFFIX: [usize; 3] = [0x3F, 0xFFF, 0xFFFF];

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
        // `into`: tokens by the prefix of the character after a boundary they hold (keyed by
        // its first bytes: a lead byte's low four bits, then six of each continuation byte);
        // `from`: by the suffix of the character before it.
        let (mut into, mut from) = (Sides::new(), Sides::new());
        let mut spaced = vec![NO_TOKEN; 1 << 10];
        for &(bytes, id) in ranks {
            Self::lower_sides(&mut into, &mut from, &mut spaced, bytes, id);
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
                Step {
                    first,
                    whole,
                    before: into.of_prefix(p),
                    after: from.of_suffix(p),
                }
            })
            .collect();
        Some(Characters { steps, spaced })
    }

    /// Lowers to `id` the sides of every boundary that token `bytes` may span between two
    /// three-byte characters of a word that is such characters after at most one byte below
    /// 0x80. (A token holding a byte below 0x80 after its first byte of 0x80 or above is in no
    /// such word.)
    fn lower_sides(into: &mut Sides, from: &mut Sides, spaced: &mut [u32], bytes: &[u8], id: u32) {
        // A first byte of a character after the token's first byte (most tokens have none).
        let Some(lead) = bytes.iter().skip(1).position(|&b| b & 0xF0 == 0xE0) else {
            return;
        };
        let lead = lead + 1;
        let Some(skip) = bytes.iter().position(|&b| b >= 0x80) else {
            return;
        };
        // `rest`: from the first byte of 0x80 or above, which after a byte below 0x80 must
        // start a character; the place in its character of each byte follows from `lead`.
        let (rest, lead) = (&bytes[skip..], lead - skip);
        if skip > 0 && lead > 0 {
            return;
        }
        let mut place = (3 - lead % 3) % 3;
        for &b in rest {
            let fits = match place {
                0 => b & 0xF0 == 0xE0,
                _ => b & 0xC0 == 0x80,
            };
            if !fits {
                return;
            }
            place = if place == 2 { 0 } else { place + 1 };
        }
        if skip > 0 {
            // From a byte below 0x80 into the block its next two bytes name, or into every block
            // of a first byte it ends with.
            let blocks = usize::from(rest[0] & 0x0F) << 6;
            let into_blocks = match rest.get(1) {
                Some(&second) => &mut spaced[blocks | usize::from(second & 0x3F)..][..1],
                None => &mut spaced[blocks..blocks + 64],
            };
            for floor in into_blocks {
                *floor = (*floor).min(id);
            }
        }
        // Each boundary the token spans: it holds the bytes of the character before it from
        // `k - 3` (or its own start) and of the one after it up to `k + 3` (or its end).
        let first = if lead > 0 { lead } else { 3 };
        for k in (first..rest.len()).step_by(3) {
            from.lower(&rest[k.saturating_sub(3)..k], id, SUFFIX);
            into.lower(&rest[k..(k + 3).min(rest.len())], id, PREFIX);
        }
    }

    /// Where `piece`'s characters may start merged: the byte at which its characters start
    /// (0, or 1 after a byte below 0x80), when the piece is at least two three-byte characters
    /// after at most one byte below 0x80.
    #[inline]
    pub(super) fn start(&self, piece: &[u8]) -> Option<usize> {
        let skip = usize::from(*piece.first()? < 0x80);
        let chars = &piece[skip..];
        if chars.len() < 6 || chars.len() % 3 != 0 {
            return None;
        }
        let three = |c: &[u8]| c[0] & 0xF0 == 0xE0 && c[1] & 0xC0 == 0x80 && c[2] & 0xC0 == 0x80;
        chars.chunks_exact(3).all(three).then_some(skip)
    }

    /// The token of the three bytes `c`, or NO_TOKEN, where a pair of them is one.
    #[inline(always)]
    pub(super) fn whole(&self, c: &[u8]) -> u32 {
        self.steps[payload(c)].whole
    }

    /// The parts of the characters of `piece[skip..]` (`skip` from [`Self::start`]), each
    /// merged alone below its limit, in order: `part(start, end, unit)`; `unit_of` gives a
    /// byte's unit.
    #[inline(always)]
    pub(super) fn parts(
        &self,
        piece: &[u8],
        skip: usize,
        unit_of: impl Fn(u8) -> u32,
        mut part: impl FnMut(usize, usize, u32),
    ) {
        let n = piece.len();
        let step = |at: usize| self.steps[payload(&piece[at..at + 3])];
        let mut this = step(skip);
        // the floor of the boundary before the character at `at`: after a byte below 0x80, the
        // lowest token from such a byte into a character of its block
        let mut left = match skip {
            1 => self.spaced[payload(&piece[1..4]) >> 6],
            _ => NO_TOKEN,
        };
        for at in (skip..n).step_by(3) {
            let (next, right) = if at + 3 < n {
                let next = step(at + 3);
                (next, this.after.max(next.before))
            } else {
                (this, NO_TOKEN)
            };
            let limit = left.min(right);
            let Step { first, whole, .. } = this;
            if first == NO_TOKEN || first & !LEFT >= limit {
                (at..at + 3).for_each(|i| part(i, i + 1, unit_of(piece[i])));
            } else if whole < limit {
                part(at, at + 3, whole);
            } else if first & LEFT != 0 {
                part(at, at + 2, first & !LEFT);
                part(at + 2, at + 3, unit_of(piece[at + 2]));
            } else {
                part(at, at + 1, unit_of(piece[at]));
                part(at + 1, at + 3, first);
            }
            (this, left) = (next, right);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytelevel::testing::{
        assert_merges_as_from_bytes, generator, random_tokens, ranked,
    };

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
            let mut low: Vec<Vec<u8>> = vec![vec![0xE0, 0xB4], vec![0xE0, 0xB5], vec![0xE4, 0xB8]];
            low.extend(alphabet.iter().filter(|_| next(2) == 0).cloned());
            // a space joined to a first byte, as in o200k_base, where it is among the first merges
            low.extend(
                [b" \xe0".to_vec(), b" \xe4".to_vec()]
                    .into_iter()
                    .filter(|_| next(2) == 0),
            );
            let tok = ranked(&random_tokens(&mut next, low, word));
            let characters = tok.characters.as_ref().unwrap();
            for _ in 0..300 {
                let n = 1 + next(40) as usize;
                let piece = word(&mut next, n);
                assert_merges_as_from_bytes(&tok, &piece, &format!("seed {seed}"));
                words_seen += 1;
                if let Some(skip) = characters.start(&piece) {
                    let mut merged = false;
                    characters.parts(&piece, skip, u32::from, |s, e, _| merged |= e - s > 1);
                    started += usize::from(merged);
                }
            }
        }
        // not a test of nothing: many words start with characters merged
        assert!(started * 4 > words_seen, "{started} of {words_seen}");
    }

    #[test]
    fn each_character_merges_alone_below_the_floors_of_its_own_boundaries() {
        let ka = "\u{0D15}".as_bytes(); // E0 B4 95
        let virama = "\u{0D4D}".as_bytes(); // E0 B5 8D
        let ma = "\u{0D2E}".as_bytes(); // E0 B4 AE
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut add = |t: Vec<u8>| tokens.push(t);
        add(vec![0xE0, 0xB4]); // 256
        add(vec![0xE0, 0xB5]); // 257
        add(b"\xb5\x8d\xe0\xb4".to_vec()); // 258: from the end of virama into block B4
        add(ka.to_vec()); // 259
        add(virama.to_vec()); // 260
        add(ma.to_vec()); // 261
        add(b" \xe0".to_vec()); // 262: a space and a first byte, across no boundary
        add([&ma[1..], &[0xE0]].concat()); // 263: from ma's last two bytes into any character of E0
        let tok = ranked(&tokens);
        let c = tok.characters.as_ref().unwrap();
        let step = |ch: &[u8]| c.steps[payload(ch)];
        // ka and ma start block B4, into which 258 comes, and any character of E0 (263)
        assert_eq!(
            (step(ka).before, step(ma).before, step(virama).before),
            (258, 258, 263)
        );
        // 258 leaves virama's end, 263 ma's; no token leaves ka
        assert_eq!(
            (step(ka).after, step(ma).after, step(virama).after),
            (NO_TOKEN, 263, 258)
        );
        assert_eq!((step(ka).first, step(ka).whole), (256 | LEFT, 259));
        assert_eq!(step("\u{4E00}".as_bytes()).before, NO_TOKEN);

        let parts = |piece: &[u8]| {
            let mut parts = Vec::new();
            let skip = c.start(piece).unwrap();
            c.parts(piece, skip, u32::from, |s, e, u| parts.push((s, e, u)));
            parts
        };
        // ka ka: no token crosses their boundary, both merge whole
        assert_eq!(parts(&[ka, ka].concat()), [(0, 3, 259), (3, 6, 259)]);
        // ka ka virama ma: the first two whole; virama and ma stop below 258, at their first
        // merge (a limit per word would have stopped the kas there too)
        let word = [ka, ka, virama, ma].concat();
        let want = [
            (0, 3, 259),
            (3, 6, 259),
            (6, 8, 257),
            (8, 9, 0x8D),
            (9, 11, 256),
            (11, 12, 0xAE),
        ];
        assert_eq!(parts(&word), want);
        // after a space the first character goes as far as the lowest token from a byte below
        // 0x80 into it (262, ` \xe0`, above ka's tokens)
        assert_eq!(c.spaced[payload(ka) >> 6], 262);
        assert_eq!(parts(&[b" ", ka, ka].concat()), [(1, 4, 259), (4, 7, 259)]);
        for piece in [word.clone(), [b" ", ka, ka, virama, ma, ma].concat()] {
            assert_merges_as_from_bytes(&tok, &piece, "hand-built");
        }
        assert_eq!(c.start(&[b"  ", ka, ka].concat()), None);
        assert_eq!(c.start(&[ka, b"a"].concat()), None);
        assert_eq!(c.start(ka), None); // one character: nothing to start merged
        assert_eq!(c.start(&[ka, "\u{00E9}".as_bytes()].concat()), None);
    }
}
