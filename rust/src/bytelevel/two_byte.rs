//! Two-byte characters (Latin-1 and Latin Extended, Greek, Cyrillic, Hebrew, Arabic) start
//! merged, under the ranks rule.
//!
//! A new piece of two-byte characters (a word of random Latin-1, of Cyrillic) spends most of its
//! merges joining each character's two bytes, and each such merge in the loops of
//! [`super::ranks`] and [`super::mid`] is a scan for the lowest pair and two lookups of the new
//! part with its neighbours. Most of those merges can be made before the loop, from two small
//! tables:
//!
//! A character's two bytes merge before anything else touches them when their token ranks below
//! every token that holds the byte pair of either of its boundaries (the byte before it and its
//! first byte; its second byte and the byte after it). Any merge that joins one of its bytes to
//! a neighbour makes a token holding such a pair, so none ranks below the character's own; the
//! rule (lowest pair first) therefore joins the character while its own pair is the lower, and
//! merges elsewhere in the piece do not interact with it. Starting from the character merged
//! gives the units of the merges from bytes. (The bound holds whatever the bytes are; the
//! tables are only keyed for a first byte of 0xC0-0xDF and a second of 0x80-0xBF.)
//!
//! Unlike [`super::characters`], the bound is the lowest token over one byte pair, not over a
//! character's prefixes and suffixes: a two-byte character has one byte on each side of it.
//!
//! This module does not merge: it says where a piece's parts start. The merges rule (pairs
//! ranked by a list, not tokens by id) does not use it.

use super::NO_TOKEN;

/// The lowest ranks of tokens across the boundaries of two-byte characters.
pub(super) struct TwoByte {
    /// The lowest rank of a token holding a byte `u` and then a first byte `a` of 0xC0-0xDF, at
    /// `u << 5 | a & 0x1F`.
    into: Vec<u32>,
    /// The lowest rank of a token holding a byte `c` of 0x80-0xBF and then a byte `v`, at
    /// `(c & 0x3F) << 8 | v`.
    out_of: Vec<u32>,
}

#[inline(always)]
fn into_slot(u: u8, a: u8) -> usize {
    (usize::from(u) << 5) | usize::from(a & 0x1F)
}

#[inline(always)]
fn out_of_slot(c: u8, v: u8) -> usize {
    (usize::from(c & 0x3F) << 8) | usize::from(v)
}

/// A first byte of a two-byte character (0xC0-0xDF: the two not in UTF-8 as well).
#[inline(always)]
fn is_first(b: u8) -> bool {
    b & 0xE0 == 0xC0
}

impl TwoByte {
    /// The tables of a ranks-rule vocabulary (a token's id is its rank).
    pub(super) fn build(ranks: &[(&[u8], u32)]) -> TwoByte {
        let mut into = vec![NO_TOKEN; 256 << 5];
        let mut out_of = vec![NO_TOKEN; 64 << 8];
        for &(bytes, id) in ranks {
            for w in bytes.windows(2) {
                let (x, y) = (w[0], w[1]);
                if is_first(y) {
                    let slot = &mut into[into_slot(x, y)];
                    *slot = (*slot).min(id);
                }
                if x & 0xC0 == 0x80 {
                    let slot = &mut out_of[out_of_slot(x, y)];
                    *slot = (*slot).min(id);
                }
            }
        }
        TwoByte { into, out_of }
    }

    /// Whether `words` (a piece and zeros after it, a whole number of words of eight bytes)
    /// hold the first byte of a two-byte character: bits 7 and 6 set and 5 clear, eight bytes
    /// at a time (most pieces that reach a merge are ASCII words, and a test per byte cost them).
    #[inline(always)]
    pub(super) fn holds_any(words: &[u8]) -> bool {
        debug_assert!(words.len() % 8 == 0);
        words.chunks_exact(8).any(|w| {
            let x = u64::from_le_bytes(w.try_into().expect("eight bytes"));
            x & (x << 1) & !(x << 2) & 0x8080_8080_8080_8080 != 0
        })
    }

    /// The parts `piece` starts from, in order: `part(start, end, unit)`, each two-byte
    /// character whose own token (`pair`: the token of two bytes, or NO_TOKEN) ranks below the
    /// bounds of both its boundaries as one part, every other byte alone (`unit_of`).
    #[inline(always)]
    pub(super) fn parts(
        &self,
        piece: &[u8],
        pair: impl Fn(u8, u8) -> u32,
        unit_of: impl Fn(u8) -> u32,
        mut part: impl FnMut(usize, usize, u32),
    ) {
        let n = piece.len();
        let mut i = 0;
        while i < n {
            let a = piece[i];
            if is_first(a) && i + 1 < n && piece[i + 1] & 0xC0 == 0x80 {
                let c = piece[i + 1];
                let left = match i {
                    0 => NO_TOKEN,
                    _ => self.into[into_slot(piece[i - 1], a)],
                };
                let right = match piece.get(i + 2) {
                    Some(&v) => self.out_of[out_of_slot(c, v)],
                    None => NO_TOKEN,
                };
                let own = pair(a, c);
                if own < left.min(right) {
                    part(i, i + 2, own);
                    i += 2;
                    continue;
                }
            }
            part(i, i + 1, unit_of(a));
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytelevel::testing::{
        assert_merges_as_from_bytes, generator, random_tokens, ranked,
    };

    /// Random vocabularies over a few two-byte characters, ASCII letters, a space and a
    /// three-byte character: every byte, some characters and some pairs across their
    /// boundaries ranked low (a space and a first byte, a letter and a first byte, a second byte
    /// and a first byte), then random slices of random words at random ranks. Pieces of every
    /// length merged from the parts given here, against the general loop from bytes: the same
    /// units.
    #[test]
    fn pieces_started_merged_give_the_units_of_the_merges_from_bytes() {
        let alphabet: Vec<Vec<u8>> = ["é", "ñ", "Ã", "©", "ж", "д", "a", "b", " ", "ക"]
            .iter()
            .map(|c| c.as_bytes().to_vec())
            .collect();
        let (mut started, mut pieces_seen) = (0, 0);
        for seed in 1..=60u64 {
            let mut next = generator(seed * 0x9E37_79B9);
            let word = |next: &mut dyn FnMut(u64) -> u64, n: usize| -> Vec<u8> {
                let mut w = Vec::new();
                for _ in 0..n {
                    w.extend_from_slice(&alphabet[next(alphabet.len() as u64) as usize]);
                }
                w
            };
            let mut low: Vec<Vec<u8>> = [
                &b" \xc3"[..],
                b"a\xc3",
                b"\xa9\xc3",
                b"\xb1\xd0",
                b"\xb6 ",
                b"\xa9a",
            ]
            .iter()
            .filter(|_| next(2) == 0)
            .map(|t| t.to_vec())
            .collect();
            low.extend(alphabet.iter().filter(|_| next(3) != 0).cloned());
            let tok = ranked(&random_tokens(&mut next, low, word));
            let two = tok.two_byte.as_ref().unwrap();
            let pair = |x: u8, y: u8| tok.byte_pairs[(usize::from(x) << 8) | usize::from(y)];
            for _ in 0..300 {
                let n = 1 + next(30) as usize;
                let piece = word(&mut next, n);
                assert_merges_as_from_bytes(&tok, &piece, &format!("seed {seed}"));
                pieces_seen += 1;
                let mut merged = false;
                two.parts(&piece, pair, u32::from, |s, e, _| merged |= e - s > 1);
                started += usize::from(merged);
            }
        }
        // not a test of nothing: many pieces start with characters merged
        assert!(started * 4 > pieces_seen, "{started} of {pieces_seen}");
    }

    #[test]
    fn each_character_merges_alone_below_the_bounds_of_its_boundaries() {
        let e = "é".as_bytes(); // C3 A9
        let n = "ñ".as_bytes(); // C3 B1
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        tokens.push(b" \xc3".to_vec()); // 256: a space into any character of C3
        tokens.push(e.to_vec()); // 257
        tokens.push(b"\xa9\xc3".to_vec()); // 258: from é's end into C3
        tokens.push(n.to_vec()); // 259
        tokens.push(b"\xb1a".to_vec()); // 260: from ñ's end into an `a`
        tokens.push(b"\xbc!".to_vec()); // 261: from ü's end into a `!`
        tokens.push("ü".as_bytes().to_vec()); // 262 (C3 BC)
        let tok = ranked(&tokens);
        let two = tok.two_byte.as_ref().unwrap();
        assert_eq!(two.into[into_slot(b' ', 0xC3)], 256);
        assert_eq!(two.into[into_slot(0xA9, 0xC3)], 258);
        assert_eq!(two.out_of[out_of_slot(0xA9, 0xC3)], 258);
        assert_eq!(two.out_of[out_of_slot(0xB1, b'a')], 260);
        assert_eq!(two.into[into_slot(b'a', 0xC3)], NO_TOKEN);
        let pair = |x: u8, y: u8| tok.byte_pairs[(usize::from(x) << 8) | usize::from(y)];
        let parts = |piece: &[u8]| {
            let mut parts = Vec::new();
            two.parts(piece, pair, u32::from, |s, e, u| parts.push((s, e, u)));
            parts
        };
        // é after a space: 256 ranks below é's own token, so it starts as bytes
        assert_eq!(
            parts(&[b" ", e].concat()),
            [(0, 1, 32), (1, 2, 0xC3), (2, 3, 0xA9)]
        );
        // é é: 258 across their boundary ranks above é (257)
        assert_eq!(parts(&[e, e].concat()), [(0, 2, 257), (2, 4, 257)]);
        // ñ a ñ: 260, from ñ into `a`, ranks above ñ (259), and no token goes from `a` into a
        // first byte, so both start merged
        assert_eq!(
            parts(&[n, b"a", n].concat()),
            [(0, 2, 259), (2, 3, 97), (3, 5, 259)]
        );
        // é ñ: é's own 257 is below 258 across the boundary, ñ's own 259 is not
        assert_eq!(
            parts(&[e, n].concat()),
            [(0, 2, 257), (2, 3, 0xC3), (3, 4, 0xB1)]
        );
        // ü then `!`: 261 out of ü ranks below ü (262), so ü starts as bytes; alone it merges
        assert_eq!(
            parts("ü!".as_bytes()),
            [(0, 1, 0xC3), (1, 2, 0xBC), (2, 3, 33)]
        );
        assert_eq!(parts("ü".as_bytes()), [(0, 2, 262)]);
        for piece in [
            [e, n].concat(),
            "aü!".as_bytes().to_vec(),
            [b" ", e, e, n, b"a"].concat(),
        ] {
            assert_merges_as_from_bytes(&tok, &piece, "hand-built");
        }
        // eight bytes at a time, each byte's own bits: a first byte anywhere in a word, and no
        // false alarm from continuation bytes, three-byte first bytes or ASCII beside them
        let words = |piece: &[u8]| {
            let mut w = piece.to_vec();
            w.resize(piece.len().div_ceil(8) * 8, 0);
            TwoByte::holds_any(&w)
        };
        assert!(!words(b"plain ascii, sixteen"));
        assert!(!words("\u{0D15}\u{0D15}\u{0D15}\u{4E00}".as_bytes()));
        assert!(!words(&[
            0x7F, 0xBF, 0xE0, 0x80, 0xFF, 0x3F, 0xA0, 0x60, 0xEF
        ]));
        for at in 0..17 {
            let mut piece = vec![b'a'; 17];
            piece[at] = 0xC3;
            assert!(words(&piece), "{at}");
            piece[at] = 0xDF;
            assert!(words(&piece), "{at}");
        }
    }
}
