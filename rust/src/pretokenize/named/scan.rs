//! [`Scan`]: one text under a named regex's scanner, and the parts of the regexes the scanners
//! share: a character's class, runs of a class (letters with ASCII ones eight at a time), the
//! optional prefix of a letter run, a whitespace run and its lookahead, `' ?` followed by
//! "other" characters, the contractions. It does not follow any regex's alternatives (each
//! regex's module does).

use super::ascii::{ascii_letter_run, ascii_spaces};
use crate::pretokenize::classes::{decode, Classes, LETTER, NUMBER, SPACE};

pub(super) struct Scan<'a> {
    pub(super) t: &'a Classes,
    pub(super) s: &'a [u8],
}

impl Scan<'_> {
    /// (code point, UTF-8 length, class flags) of the character at `i`.
    #[inline(always)]
    pub(super) fn at(&self, i: usize) -> (u32, usize, u8) {
        let (cp, len) = decode(self.s, i);
        (cp, len, self.t.of(cp))
    }

    /// Class flags at `i`, 0 past the end.
    #[inline(always)]
    pub(super) fn class(&self, i: usize) -> u8 {
        if i < self.s.len() {
            self.at(i).2
        } else {
            0
        }
    }

    /// End of the longest run from `i` of characters whose flags meet `want`.
    #[inline(always)]
    pub(super) fn run(&self, mut i: usize, want: u8) -> usize {
        while i < self.s.len() {
            let (_, len, k) = self.at(i);
            if k & want == 0 {
                break;
            }
            i += len;
        }
        i
    }

    /// End of the `\p{L}` run from `i`: ASCII letters eight at a time, then any others.
    #[inline(always)]
    pub(super) fn letter_run(&self, i: usize) -> usize {
        let end = ascii_letter_run(self.s, i, true);
        if end < self.s.len() && self.s[end] >= 0x80 {
            return self.run(end, LETTER);
        }
        end
    }

    /// End of a run of at most `max` characters of class `want`.
    pub(super) fn run_max(&self, mut i: usize, want: u8, max: usize) -> usize {
        for _ in 0..max {
            if i >= self.s.len() {
                break;
            }
            let (_, len, k) = self.at(i);
            if k & want == 0 {
                break;
            }
            i += len;
        }
        i
    }

    /// `[^\s\p{L}\p{N}]+` from `i`: the run of "other" characters (punctuation, symbols, marks...).
    pub(super) fn other_run(&self, mut i: usize) -> usize {
        while i < self.s.len() {
            let (_, len, k) = self.at(i);
            if k & (SPACE | LETTER | NUMBER) != 0 {
                break;
            }
            i += len;
        }
        i
    }

    /// `[^\s\p{L}\p{N}]` at `i`.
    #[inline(always)]
    pub(super) fn is_other(&self, i: usize) -> bool {
        i < self.s.len() && self.class(i) & (SPACE | LETTER | NUMBER) == 0
    }

    /// `[^\r\n\p{L}\p{N}]`: the optional one-character prefix of a letter run.
    #[inline(always)]
    pub(super) fn is_prefix(cp: u32, k: u8) -> bool {
        cp != 0x0D && cp != 0x0A && k & (LETTER | NUMBER) == 0
    }

    /// The whitespace run from `pos` (whose first character is whitespace): its end, the start
    /// of its last character, and the end of its last `\r` or `\n` (0 if none).
    pub(super) fn space_run(&self, pos: usize) -> (usize, usize, usize) {
        let (mut i, mut last, mut newline_end) = (pos, pos, 0);
        // A run still going after 16 bytes (most are shorter) goes on in blocks while they
        // are all ASCII whitespace, then as before.
        let mut blocks = true;
        while i < self.s.len() {
            if blocks && i - pos >= 16 {
                blocks = false;
                while let Some(block) = self.s.get(i..i + 16) {
                    let (space, newline) = ascii_spaces(block.try_into().expect("16 bytes"));
                    if space != u16::MAX {
                        break;
                    }
                    if newline != 0 {
                        newline_end = i + 16 - newline.leading_zeros() as usize;
                    }
                    last = i + 15;
                    i += 16;
                }
                if i >= self.s.len() {
                    break;
                }
            }
            let b = self.s[i];
            if b < 0x80 {
                // ASCII White_Space (\t \n \x0B \x0C \r and space) without decoding, and
                // without a branch on which one it is (random whitespace would mispredict it).
                const SPACES: u128 = 0x3E00 | 1 << 0x20;
                const NEWLINES: u128 = 1 << 0x0A | 1 << 0x0D;
                if (SPACES >> b) & 1 == 0 {
                    break;
                }
                let newline = ((NEWLINES >> b) & 1) as usize;
                newline_end = newline * (i + 1) + (1 - newline) * newline_end;
                last = i;
                i += 1;
                continue;
            }
            let (cp, len, k) = self.at(i);
            if k & SPACE == 0 {
                break;
            }
            if cp == 0x0A || cp == 0x0D {
                newline_end = i + len;
            }
            last = i;
            i += len;
        }
        (i, last, newline_end)
    }

    /// `'s|'t|'re|'ve|'m|'ll|'d` at `i` (which holds the apostrophe), case-insensitively
    /// (simple case folding: `s` also matches `S` and U+017F LONG S) or not.
    pub(super) fn contraction(&self, i: usize, ignore_case: bool) -> Option<usize> {
        let s = self.s;
        if s.get(i) != Some(&b'\'') {
            return None;
        }
        let letter = |j: usize| -> Option<(u8, usize)> {
            let b = *s.get(j)?;
            if b.is_ascii_alphabetic() {
                if ignore_case {
                    return Some((b.to_ascii_lowercase(), 1));
                }
                return b.is_ascii_lowercase().then_some((b, 1));
            }
            if ignore_case && b == 0xC5 && s.get(j + 1) == Some(&0xBF) {
                return Some((b's', 2)); // U+017F folds to s
            }
            None
        };
        let (first, len) = letter(i + 1)?;
        let j = i + 1 + len;
        let second = |want: u8| match letter(j) {
            Some((c, l)) if c == want => Some(j + l),
            _ => None,
        };
        match first {
            b's' | b't' | b'm' | b'd' => Some(j),
            b'r' | b'v' => second(b'e'),
            b'l' => second(b'l'),
            _ => None,
        }
    }

    /// ` ?[^\s\p{L}\p{N}]+` at `pos` (first character `c0`, of `l0` bytes and class flags
    /// `k0`): its end.
    #[inline(always)]
    pub(super) fn space_then_other(&self, pos: usize, c0: u32, l0: usize, k0: u8) -> Option<usize> {
        if c0 == u32::from(b' ') {
            // With the space, an "other" character must follow; without it, the space itself
            // would have to be one, and it is not.
            return self.is_other(pos + 1).then(|| self.other_run(pos + 1));
        }
        (k0 & (SPACE | LETTER | NUMBER) == 0).then(|| self.other_run(pos + l0))
    }

    /// `\s+(?!\S)` or, failing that, one whitespace character (`\s+` / `\s` after it).
    /// `\s+` takes the run; at the end of the text the lookahead holds, before a non-space
    /// the engine gives back one character, which works when the run has two or more.
    #[inline]
    pub(super) fn space_lookahead(&self, pos: usize, end: usize, last: usize) -> usize {
        if end == self.s.len() || last == pos {
            end
        } else {
            last
        }
    }
}
