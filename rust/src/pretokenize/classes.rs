//! The character classes the hand-written scanners need, one byte of flags per code point.
//!
//! Built once from `regex-syntax`'s Unicode tables, the same data the general regex path (and
//! tiktoken's Rust regex) uses: Unicode 16.0 in regex-syntax 0.8.12, pinned in Cargo.lock and
//! checked by a test below. A two-level table (256-code-point blocks, identical blocks shared)
//! costs about 100 kB and two loads per lookup; code points below U+0800 (one or two UTF-8
//! bytes) have a 2 kB table of their own, one load. Identical blocks are found through FxHash
//! when it is built; a [`super::Pretokenizer`] with a named stage builds it when it is
//! constructed, so that the first encode costs what any later one does.
//!
//! This module classifies characters; it does not decode UTF-8 or know any regex.

use crate::fork::BuiltOnce;
use regex_syntax::hir::{Class, HirKind};
use rustc_hash::FxHashMap;

/// `\p{Lu}` or `\p{Lt}`: o200k's upper-case-like letters (not its lower-case class).
pub const UPPER: u8 = 1;
/// `\p{Ll}`: only in o200k's lower-case class.
pub const LOWER: u8 = 2;
/// `\p{Lm}` or `\p{Lo}`: letters in both of o200k's case classes.
pub const OTHER_LETTER: u8 = 4;
/// `\p{M}`: marks (in both o200k case classes, in no letter class).
pub const MARK: u8 = 8;
/// `\p{N}`.
pub const NUMBER: u8 = 16;
/// `\s`: Unicode White_Space.
pub const SPACE: u8 = 32;
/// `\p{L}`.
pub const LETTER: u8 = UPPER | LOWER | OTHER_LETTER;

const BLOCK: usize = 256;
/// Code points below this have a table of their own (see [`Classes::low`]).
const LOW: usize = 0x1000;
const N_BLOCKS: usize = 0x110000 / BLOCK;

pub struct Classes {
    /// Code points below U+1000 (one or two UTF-8 bytes: ASCII, Latin-1, Greek, Cyrillic, Hebrew,
    /// Arabic ...; and the three-byte ones led by 0xE0, where every Indic block is), in one load.
    low: Box<[u8; LOW]>,
    index: Vec<u16>,
    blocks: Vec<[u8; BLOCK]>,
}

impl Classes {
    /// The flags of the three-byte character `0xE0 b1 b2` (U+0800-U+0FFF: Samaritan to Tibetan,
    /// every Indic script's block among them), read without decoding it.
    #[inline(always)]
    pub fn of_e0(&self, b1: u8, b2: u8) -> u8 {
        self.low[(usize::from(b1 & 0x3F) << 6) | usize::from(b2 & 0x3F)]
    }

    #[inline(always)]
    pub fn of(&self, cp: u32) -> u8 {
        if cp < LOW as u32 {
            return self.low[cp as usize];
        }
        let block = self.index.get((cp as usize) / BLOCK).copied().unwrap_or(0);
        self.blocks[block as usize][(cp as usize) % BLOCK]
    }

    fn build() -> Classes {
        let mut flat = vec![0u8; 0x110000];
        let sets: [(&str, u8); 8] = [
            (r"\p{Lu}", UPPER),
            (r"\p{Lt}", UPPER),
            (r"\p{Ll}", LOWER),
            (r"\p{Lm}", OTHER_LETTER),
            (r"\p{Lo}", OTHER_LETTER),
            (r"\p{M}", MARK),
            (r"\p{N}", NUMBER),
            (r"\s", SPACE),
        ];
        for (class, flag) in sets {
            for (lo, hi) in ranges(class) {
                for slot in &mut flat[lo as usize..=hi as usize] {
                    *slot |= flag;
                }
            }
        }
        let mut blocks: Vec<[u8; BLOCK]> = Vec::new();
        let mut seen: FxHashMap<&[u8], u16> = FxHashMap::default();
        let mut index = Vec::with_capacity(N_BLOCKS);
        let mut last: Option<(&[u8], u16)> = None;
        for chunk in flat.chunks_exact(BLOCK) {
            // Most blocks repeat the one before (unassigned planes): no hashing for those.
            let id = match last {
                Some((prev, id)) if prev == chunk => id,
                _ => *seen.entry(chunk).or_insert_with(|| {
                    let mut block = [0u8; BLOCK];
                    block.copy_from_slice(chunk);
                    blocks.push(block);
                    (blocks.len() - 1) as u16
                }),
            };
            last = Some((chunk, id));
            index.push(id);
        }
        let mut low = Box::new([0u8; LOW]);
        low.copy_from_slice(&flat[..LOW]);
        Classes { low, index, blocks }
    }
}

/// The code-point ranges of one of regex-syntax's Unicode classes (constant patterns only).
pub(crate) fn ranges(class: &str) -> Vec<(u32, u32)> {
    let hir = match regex_syntax::Parser::new().parse(class) {
        Ok(hir) => hir,
        Err(_) => return Vec::new(), // unreachable for the constants above; tested below
    };
    match hir.kind() {
        HirKind::Class(Class::Unicode(set)) => set
            .ranges()
            .iter()
            .map(|r| (u32::from(r.start()), u32::from(r.end())))
            .collect(),
        _ => Vec::new(),
    }
}

/// The shared table, built on first use (see the module docs for when that is).
pub fn classes() -> &'static Classes {
    // (built without holding a lock: see `BuiltOnce`)
    static TABLE: BuiltOnce<Classes> = BuiltOnce::new();
    TABLE.get_or_build(Classes::build)
}

/// Decode the UTF-8 character starting at `i` of valid UTF-8 `s`: (code point, byte length).
#[inline(always)]
pub fn decode(s: &[u8], i: usize) -> (u32, usize) {
    let b0 = s[i];
    if b0 < 0x80 {
        return (u32::from(b0), 1);
    }
    let c = |k: usize| u32::from(s[i + k] & 0x3F);
    if b0 < 0xE0 {
        ((u32::from(b0 & 0x1F) << 6) | c(1), 2)
    } else if b0 < 0xF0 {
        ((u32::from(b0 & 0x0F) << 12) | (c(1) << 6) | c(2), 3)
    } else {
        (
            (u32::from(b0 & 0x07) << 18) | (c(1) << 12) | (c(2) << 6) | c(3),
            4,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_pattern_parses() {
        for class in [
            r"\p{Lu}", r"\p{Lt}", r"\p{Ll}", r"\p{Lm}", r"\p{Lo}", r"\p{M}", r"\p{N}", r"\s",
        ] {
            assert!(!ranges(class).is_empty(), "{class}");
        }
    }

    #[test]
    fn the_tables_are_unicode_16() {
        let t = classes();
        // U+1C89 CYRILLIC CAPITAL LETTER TJE and U+105C0 TODHRI LETTER A were added in 16.0.
        assert_eq!(t.of(0x1C89), UPPER);
        assert_eq!(t.of(0x105C0), OTHER_LETTER);
        // U+0295 is Ll in 16.0 (Lo from 17.0); U+A7CE (added in 17.0) is unassigned in 16.0.
        assert_eq!(t.of(0x0295), LOWER);
        assert_eq!(t.of(0xA7CE), 0);
        assert_eq!(t.of(u32::from(' ')), SPACE);
        assert_eq!(t.of(0x1C), 0); // not White_Space, although str.isspace() says so
        assert_eq!(t.of(0x0DCA), MARK); // Sinhala virama
        assert_eq!(t.of(0x0DE6), NUMBER); // Sinhala Lith digit zero
        assert_eq!(t.of(0x10FFFF), 0);
    }

    #[test]
    fn decode_matches_std() {
        // Every length, each at every distance from the end, and the edges of each length's
        // range.
        let edges = [
            0u32, 0x41, 0x7F, 0x80, 0xE9, 0x7FF, 0x800, 0x0DC1, 0xFFFF, 0x10000, 0x1F999, 0x10FFFF,
        ];
        for &c in &edges {
            for pad in 0..5 {
                let ch = char::from_u32(c).unwrap();
                let s = format!("{ch}{}", "x".repeat(pad));
                assert_eq!(decode(s.as_bytes(), 0), (c, ch.len_utf8()), "{c:#x} {pad}");
            }
        }
        let s = "a\u{e9}\u{0dc1}\u{1F999}\u{7FF}\u{800}\u{FFFF}\u{10000}b";
        let mut i = 0;
        for ch in s.chars() {
            let (cp, len) = decode(s.as_bytes(), i);
            assert_eq!((cp, len), (u32::from(ch), ch.len_utf8()));
            i += len;
        }
        // every character below U+0800 and a sample above, where four bytes follow
        for c in (0..0x800).chain((0x800..0x110000).step_by(97)) {
            let Some(ch) = char::from_u32(c) else {
                continue;
            };
            let s = format!("{ch}abc");
            assert_eq!(decode(s.as_bytes(), 0), (c, ch.len_utf8()), "{c:#x}");
        }
    }
}
