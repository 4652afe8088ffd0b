//! Pieces of up to four bytes, answered from the byte tables without the merge loop.
//!
//! Text of many short new pieces (random Latin-1, symbols, digits between letters) spends most
//! of its time on pieces of one to four bytes. For those the merge rule's outcome follows from
//! a handful of table reads: a one- or two-byte piece from the byte and byte-pair tables, and,
//! under the ranks rule, a three- or four-byte piece from the token table and the byte-pair
//! table (see [`ByteLevel::ranks_short`] for why a piece that is no token takes at most two
//! merges). The parts of up to four bytes that a long piece is cut into (random CJK is cut at
//! nearly every character) are read the same way, as merges alone ([`ByteLevel::tiny_part`]).
//! Each answer is the rule's own; the test below compares every short string over an alphabet
//! with the merge loop. This module does not cache, cut or merge longer pieces.

use super::memo::extend_first;
use super::table::Packed;
use super::{ByteLevel, Rule, NO_TOKEN, PSEUDO};

impl ByteLevel {
    /// A piece of one or two bytes appended to `out` straight from the byte tables (true),
    /// without the cache or a merge (text of many short new pieces, such as random Latin-1, is
    /// mostly these), and under the ranks rule one of three or four bytes too
    /// ([`Self::ranks_short`]). False: not such a piece, or a byte without a token (the slow
    /// path reports it).
    #[inline(always)]
    pub(super) fn tiny_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> bool {
        match *piece {
            [b] => {
                let unit = self.byte_units[usize::from(b)];
                if unit >= PSEUDO {
                    return false;
                }
                out.push(unit);
                true
            }
            [a, b] => {
                // Under the ranks rule a two-byte piece is one token if it is a token; under
                // the merges rule, see `two_bytes`.
                let table = match self.rule {
                    Rule::Ranks => &self.byte_pairs,
                    Rule::Merges(_) => &self.two_bytes,
                };
                let pair = table[(usize::from(a) << 8) | usize::from(b)];
                let (x, y) = (
                    self.byte_units[usize::from(a)],
                    self.byte_units[usize::from(b)],
                );
                if pair != NO_TOKEN {
                    out.push(pair);
                } else if x < PSEUDO && y < PSEUDO {
                    out.extend_from_slice(&[x, y]);
                } else {
                    return false;
                }
                true
            }
            [_, _, _] | [_, _, _, _] if matches!(self.rule, Rule::Ranks) => {
                self.ranks_short(piece, out)
            }
            _ => false,
        }
    }

    /// A piece of three or four bytes under the ranks rule, appended to `out` (true) from the
    /// token table and the byte-pair table: the merge loop's result without the loop. False:
    /// a byte without a token (the slow path reports it).
    ///
    /// A piece that is a token is that token. Otherwise its lowest-ranked byte pair (the left
    /// one of equals) merges first. Three bytes then stop: the one merge left would make the
    /// whole piece. Four bytes take at most one more merge, the lower of the two the first one
    /// made possible (a three-byte token or the other pair), and stop there for the same
    /// reason. The merge loop would look the whole piece up again at the end.
    #[inline(always)]
    fn ranks_short(&self, piece: &[u8], out: &mut Vec<u32>) -> bool {
        if let Some(id) = self.encoder.get_packed_rare(Packed::new(piece)) {
            out.push(id);
            return true;
        }
        self.ranks_merged(piece, out, false)
    }

    /// A part of up to four bytes of a long piece cut where no token spans, under the ranks
    /// rule, appended to `out` (true): the merge loop's result on the part, which is not looked
    /// up whole first (only a piece is). A part that is a token is that token only where the
    /// merges reach two units (a random CJK piece is cut at nearly every character, and most
    /// characters are tokens that way). False as for [`Self::tiny_piece`].
    #[inline(always)]
    pub(super) fn tiny_part(&self, part: &[u8], out: &mut Vec<u32>) -> bool {
        match part.len() {
            1 | 2 => self.tiny_piece(part, out),
            3 | 4 => self.ranks_merged(part, out, true),
            _ => false,
        }
    }

    /// The merges of a three- or four-byte string that is no token, or (`whole`) may be one:
    /// its units once two are left are then the string's token, if it is one.
    #[inline(always)]
    fn ranks_merged(&self, piece: &[u8], out: &mut Vec<u32>, whole: bool) -> bool {
        let pair = |x: u8, y: u8| self.byte_pairs[(usize::from(x) << 8) | usize::from(y)];
        let unit = |x: u8| self.byte_units[usize::from(x)];
        let three = |x: &[u8]| {
            self.encoder
                .get_packed_rare(Packed::new(x))
                .unwrap_or(NO_TOKEN)
        };
        let (units, n): ([u32; 4], usize) = match *piece {
            [a, b, c] => {
                let (ab, bc) = (pair(a, b), pair(b, c));
                if ab == NO_TOKEN && bc == NO_TOKEN {
                    ([unit(a), unit(b), unit(c), 0], 3)
                } else if ab <= bc {
                    ([ab, unit(c), 0, 0], 2)
                } else {
                    ([unit(a), bc, 0, 0], 2)
                }
            }
            [a, b, c, d] => {
                let (ab, bc, cd) = (pair(a, b), pair(b, c), pair(c, d));
                if ab == NO_TOKEN && bc == NO_TOKEN && cd == NO_TOKEN {
                    ([unit(a), unit(b), unit(c), unit(d)], 4)
                } else if ab <= bc && ab <= cd {
                    // ab, c, d: then abc or cd.
                    let abc = three(&piece[..3]);
                    if abc == NO_TOKEN && cd == NO_TOKEN {
                        ([ab, unit(c), unit(d), 0], 3)
                    } else if abc < cd {
                        ([abc, unit(d), 0, 0], 2)
                    } else {
                        ([ab, cd, 0, 0], 2)
                    }
                } else if bc <= cd {
                    // a, bc, d: then abc or bcd.
                    let (abc, bcd) = (three(&piece[..3]), three(&piece[1..]));
                    if abc == NO_TOKEN && bcd == NO_TOKEN {
                        ([unit(a), bc, unit(d), 0], 3)
                    } else if abc <= bcd {
                        ([abc, unit(d), 0, 0], 2)
                    } else {
                        ([unit(a), bcd, 0, 0], 2)
                    }
                } else {
                    // a, b, cd: then ab or bcd.
                    let bcd = three(&piece[1..]);
                    if ab == NO_TOKEN && bcd == NO_TOKEN {
                        ([unit(a), unit(b), cd, 0], 3)
                    } else if ab <= bcd {
                        ([ab, cd, 0, 0], 2)
                    } else {
                        ([unit(a), bcd, 0, 0], 2)
                    }
                }
            }
            _ => return false,
        };
        if units[..n].iter().any(|&u| u >= PSEUDO) {
            return false;
        }
        if whole && n == 2 {
            if let Some(id) = self.encoder.get_packed_rare(Packed::new(piece)) {
                out.push(id);
                return true;
            }
        }
        extend_first(out, &units, n);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytelevel::testing::build;

    #[test]
    fn short_pieces_equal_the_merge_loop() {
        // Every string of three and four bytes over an alphabet with pairs ranked both ways
        // round, equal pairs ("aaa", "aaaa"), three- and four-byte tokens (some that merges
        // reach, some only looked up whole), and a byte without a token of its own ('z', which
        // the fast path leaves to the slow one). The reference is the slow path: the whole
        // piece if it is a token, else the merge loop.
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8)
            .filter(|&b| b != b'z')
            .map(|b| (vec![b], u32::from(b)))
            .collect();
        let tokens = [
            "bc", "ab", "aa", "cd", "abc", "ca", "bcd", "cab", "dab", "zb", "bz", "zz", "da",
            "aab", "abcd", "aaa", "ad", "bca", "zzz", "dd", "ddd", "cdab",
            // tokens no merge reaches: no pair of their bytes is a token, or none is left
            "dbd", "dbdb", "adbd",
        ];
        for (i, t) in tokens.iter().enumerate() {
            ranks.push((t.as_bytes().to_vec(), 256 + i as u32));
        }
        let tok = build(&ranks, None);
        let alphabet = b"abcdz";
        let mut pieces: Vec<Vec<u8>> = vec![Vec::new()];
        let (mut checked, mut unreached) = (0, 0);
        for _ in 0..4 {
            pieces = pieces
                .iter()
                .flat_map(|p| alphabet.iter().map(move |&b| [p.as_slice(), &[b]].concat()))
                .collect();
            for piece in pieces.iter().filter(|p| p.len() >= 3) {
                let mut slow = Vec::new();
                match tok.encoder.get(piece) {
                    Some(id) => slow.push(id),
                    None => tok.merge_plain(piece, &mut slow),
                }
                let mut fast = Vec::new();
                if tok.tiny_piece(piece, &mut fast) {
                    assert_eq!(fast, slow, "{:?}", String::from_utf8_lossy(piece));
                    checked += 1;
                } else {
                    assert!(slow.iter().any(|&u| u >= PSEUDO), "{piece:?}");
                }
                // As a part of a long piece: the merge loop alone, no whole-piece lookup.
                let mut merged = Vec::new();
                tok.merge_plain(piece, &mut merged);
                let mut part = Vec::new();
                if tok.tiny_part(piece, &mut part) {
                    assert_eq!(part, merged, "{:?}", String::from_utf8_lossy(piece));
                    unreached += usize::from(merged != slow);
                } else {
                    // declined only for a byte without a token (the merge loop then decides)
                    assert!(piece.contains(&b'z'), "{piece:?}");
                }
            }
        }
        assert!(checked > 400, "{checked}");
        // the parts whose merges do not reach the token they are (`dbd`, `dbdb`, `adbd`)
        assert_eq!(unreached, 3);
        // Under the merges rule short pieces take the merge loop, which may not reach a token.
        let tok = build(&ranks, Some(vec![(b"b", b"c")]));
        assert!(!tok.tiny_piece(b"abc", &mut Vec::new()));
        assert_eq!(tok.encode_ordinary("abc").unwrap(), vec![97, 256]);
    }
}
