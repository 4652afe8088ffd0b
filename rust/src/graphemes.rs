//! Extended grapheme cluster boundaries (Unicode UAX #29), for schemas that keep clusters whole.
//!
//! A schema describes its own script; the characters around it (emoji ZWJ sequences, flag pairs,
//! Hangul syllables, CR LF, prepended signs, marks of other scripts) follow Unicode's generic
//! rules, which live here. The property table comes from Python (`wwho.graphemes`, read from the
//! `regex` module), so the core and `regex`'s `\X` follow the same Unicode version.
//!
//! The rules are GB3-GB13 with GB9c (Indic conjuncts, as `regex` reads it), written as a boundary test between two
//! code points with the look-behind GB9c, GB11 and GB12/13 need. The look-behind never goes
//! before the start of the token being built, which is itself a boundary, so a long run costs
//! linear time. This module does not know syllables; `syllables` asks it where a token may end.

use crate::charset::{check_range, CharMap};
use crate::errors::SchemaError;
use crate::units::Unit;

// Grapheme_Cluster_Break values (low four bits of an entry); Extended_Pictographic is its own value.
pub const OTHER: u8 = 0;
pub const CR: u8 = 1;
pub const LF: u8 = 2;
pub const CONTROL: u8 = 3;
pub const EXTEND: u8 = 4;
pub const ZWJ: u8 = 5;
pub const REGIONAL_INDICATOR: u8 = 6;
pub const PREPEND: u8 = 7;
pub const SPACING_MARK: u8 = 8;
pub const L: u8 = 9;
pub const V: u8 = 10;
pub const T: u8 = 11;
pub const LV: u8 = 12;
pub const LVT: u8 = 13;
pub const PICTOGRAPHIC: u8 = 14;
const BREAK: u8 = 0x0F;
// Indic_Conjunct_Break (high bits, on top of the value above).
pub const INCB_CONSONANT: u8 = 0x10;
pub const INCB_LINKER: u8 = 0x20;
pub const INCB_EXTEND: u8 = 0x40;

/// The grapheme cluster properties of every code point.
#[derive(Clone, Debug)]
pub struct Graphemes {
    table: CharMap,
}

impl Graphemes {
    /// Build from `(first, last, value)` ranges: each value one break value ([`OTHER`] ..
    /// [`PICTOGRAPHIC`]) or-ed with `INCB_*` flags. Ranges with the same code point are or-ed
    /// together, so the break values and the InCB flags may come as separate ranges.
    pub fn new(ranges: &[(u32, u32, u8)]) -> Result<Self, SchemaError> {
        let mut flat = vec![0u8; 0x110000];
        for &(first, last, value) in ranges {
            check_range(first, last)?;
            if value & BREAK > PICTOGRAPHIC || value & 0x80 != 0 {
                return Err(SchemaError::GraphemeValue(value));
            }
            for slot in &mut flat[first as usize..=last as usize] {
                if *slot & BREAK != 0 && value & BREAK != 0 && *slot & BREAK != value & BREAK {
                    return Err(SchemaError::GraphemeBreaks { first, last });
                }
                *slot |= value;
            }
        }
        Ok(Self {
            table: CharMap::from_flat(&flat),
        })
    }

    #[inline(always)]
    fn get(&self, cp: u32) -> u8 {
        self.table.get(cp)
    }

    /// Whether `text[at-1]` and `text[at]` belong to different clusters (`start < at < len`),
    /// looking no further back than `start`, a cluster boundary.
    pub fn is_boundary<U: Unit>(&self, text: &[U], start: usize, at: usize) -> bool {
        let before = self.get(text[at - 1].cp());
        let after = self.get(text[at].cp());
        let (b, a) = (before & BREAK, after & BREAK);
        match (b, a) {
            (CR, LF) => false,                                                         // GB3
            (CR | LF | CONTROL, _) | (_, CR | LF | CONTROL) => true,                   // GB4, GB5
            (L, L | V | LV | LVT) | (LV | V, V | T) | (LVT | T, T) => false,           // GB6-GB8
            (_, EXTEND | ZWJ | SPACING_MARK) | (PREPEND, _) => false, // GB9, GB9a, GB9b
            (ZWJ, PICTOGRAPHIC) => !self.pictographic_before_zwj(text, start, at - 1), // GB11
            (REGIONAL_INDICATOR, REGIONAL_INDICATOR) => {
                // GB12, GB13: pairs from the start of the run.
                let run = text[start..at]
                    .iter()
                    .rev()
                    .take_while(|u| self.get(u.cp()) & BREAK == REGIONAL_INDICATOR)
                    .count();
                run % 2 == 0
            }
            _ if after & INCB_CONSONANT != 0 => !self.conjunct_before(text, start, at), // GB9c
            _ => true,                                                                  // GB999
        }
    }

    /// GB11: `\p{ExtPict} Extend* ZWJ` ends at `zwj` (the ZWJ's index).
    fn pictographic_before_zwj<U: Unit>(&self, text: &[U], start: usize, zwj: usize) -> bool {
        text[start..zwj]
            .iter()
            .rev()
            .map(|u| self.get(u.cp()) & BREAK)
            .find(|&b| b != EXTEND)
            == Some(PICTOGRAPHIC)
    }

    /// GB9c as `regex`'s `\X` applies it: `[\p{InCB=Extend}\p{InCB=Linker}]* \p{InCB=Linker}
    /// [\p{InCB=Extend}\p{InCB=Linker}]*` ends just before `at`, whatever precedes it. UAX #29
    /// also wants an `\p{InCB=Consonant}` first; `regex` (the tests' oracle) and the bundled
    /// schemas do not, so they keep `a` + virama + consonant whole, and never cutting these
    /// clusters never cuts UAX #29's either.
    fn conjunct_before<U: Unit>(&self, text: &[U], start: usize, at: usize) -> bool {
        text[start..at]
            .iter()
            .rev()
            .map(|u| self.get(u.cp()))
            .take_while(|p| p & (INCB_LINKER | INCB_EXTEND) != 0)
            .any(|p| p & INCB_LINKER != 0)
    }

    /// The first cluster boundary at or after `at` (`start <= at`), where a token that began at
    /// `start` may end; with `stop_at_ws`, the position of a whitespace character (`' '`,
    /// `'\t'`, `'\n'`, `'\r'`) counts as one too (the leading-space rule owns whitespace).
    #[inline]
    pub fn next_boundary<U: Unit>(
        &self,
        text: &[U],
        start: usize,
        mut at: usize,
        stop_at_ws: bool,
    ) -> usize {
        while at > start
            && at < text.len()
            && !(stop_at_ws && crate::charset::is_ws(text[at].cp()))
            && !self.is_boundary(text, start, at)
        {
            at += 1;
        }
        at
    }

    /// The first position in `start + 1..end` where Unicode always breaks (GB4, GB5: after or
    /// before a control, CR or LF, but not inside CR LF), else `end`: no token spans one, as no
    /// cluster does (`"\n"` and a mark after it are two).
    #[inline]
    pub fn first_hard_break<U: Unit>(&self, text: &[U], start: usize, end: usize) -> usize {
        (start + 1..end)
            .find(|&at| {
                let b = self.get(text[at - 1].cp()) & BREAK;
                let a = self.get(text[at].cp()) & BREAK;
                matches!((b, a), (CR | LF | CONTROL, _) | (_, CR | LF | CONTROL))
                    && (b, a) != (CR, LF)
            })
            .unwrap_or(end)
    }

    pub fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The few properties the tests below use (the real table comes from `wwho.graphemes`).
    pub fn sample() -> Graphemes {
        Graphemes::new(&[
            (0x0D, 0x0D, CR),
            (0x0A, 0x0A, LF),
            (0x0300, 0x036F, EXTEND | INCB_EXTEND),
            (0x200D, 0x200D, ZWJ | INCB_EXTEND),
            (0x1F1E6, 0x1F1FF, REGIONAL_INDICATOR),
            (0x0600, 0x0605, PREPEND),
            (0x0903, 0x0903, SPACING_MARK),
            (0x1100, 0x115F, L),
            (0x1160, 0x11A7, V),
            (0x11A8, 0x11FF, T),
            (0xAC00, 0xAC00, LV),
            (0xAC01, 0xAC1B, LVT),
            (0x1F600, 0x1F64F, PICTOGRAPHIC),
            (0x0915, 0x0939, INCB_CONSONANT),
            (0x094D, 0x094D, EXTEND | INCB_LINKER),
        ])
        .unwrap()
    }

    fn clusters(text: &str) -> Vec<String> {
        let g = sample();
        let cps: Vec<u32> = text.chars().map(u32::from).collect();
        let mut out = Vec::new();
        let mut start = 0;
        while start < cps.len() {
            let end = g.next_boundary(&cps, start, start + 1, false);
            out.push(text.chars().skip(start).take(end - start).collect());
            start = end;
        }
        out
    }

    #[test]
    fn rules() {
        assert_eq!(clusters("🙂\u{200d}🙂"), ["🙂\u{200d}🙂"]); // GB11
        assert_eq!(clusters("🙂\u{301}\u{200d}🙂"), ["🙂\u{301}\u{200d}🙂"]);
        assert_eq!(clusters("a\u{200d}🙂"), ["a\u{200d}", "🙂"]);
        assert_eq!(clusters("🇱🇰🇮🇳🇳"), ["🇱🇰", "🇮🇳", "🇳"]); // GB12, GB13
        assert_eq!(clusters("\r\n\n"), ["\r\n", "\n"]); // GB3, GB4
        assert_eq!(clusters("\u{600}a\u{600}\n"), ["\u{600}a", "\u{600}", "\n"]); // GB9b, GB5
        assert_eq!(
            clusters("\u{1100}\u{1161}\u{11a8}\u{ac00}"),
            ["\u{1100}\u{1161}\u{11a8}", "\u{ac00}"]
        );
        assert_eq!(clusters("a\u{903}\u{301}b"), ["a\u{903}\u{301}", "b"]); // GB9, GB9a
        assert_eq!(clusters("क\u{94d}\u{301}ष"), ["क\u{94d}\u{301}ष"]); // GB9c
        assert_eq!(clusters("a\u{94d}ष"), ["a\u{94d}ष"]); // as `regex` does (see conjunct_before)
        assert_eq!(clusters("a\u{301}ष"), ["a\u{301}", "ष"]);
    }

    #[test]
    fn invalid_tables_are_errors() {
        assert!(Graphemes::new(&[(5, 4, CR)]).is_err());
        assert!(Graphemes::new(&[(0, 1, 15)]).is_err());
        assert!(Graphemes::new(&[(0, 1, CR), (1, 1, LF)]).is_err());
        assert!(Graphemes::new(&[(0, 1, CR), (1, 1, INCB_LINKER)]).is_ok());
    }

    #[test]
    fn a_long_flag_run_is_linear() {
        let g = sample();
        let text: Vec<u32> = std::iter::repeat_n(0x1F1E6, 1 << 20).collect();
        let (mut start, mut count) = (0, 0);
        while start < text.len() {
            start = g.next_boundary(&text, start, start + 1, false);
            count += 1;
        }
        assert_eq!(count, 1 << 19);
    }
}
