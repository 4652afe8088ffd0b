//! o200k's alternatives: letter runs by o200k's two case classes with an optional prefix and
//! contractions (ASCII words and Indic words, led by 0xE0, on quicker paths), numbers of up to
//! three digits, punctuation runs with the newlines and slashes after them, whitespace. It does
//! not scan the other regexes.

use super::ascii::ascii_letter_run;
use super::scan::Scan;
use crate::pretokenize::classes::{LETTER, LOWER, MARK, NUMBER, OTHER_LETTER, SPACE, UPPER};

/// o200k's "upper-case-like" class `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` and "lower-case-like" one.
const UL: u8 = UPPER | OTHER_LETTER | MARK;
const LL: u8 = LOWER | OTHER_LETTER | MARK;

impl Scan<'_> {
    pub(super) fn o200k(&self, pos: usize) -> Option<usize> {
        if let Some(end) = self.o200k_ascii_word(pos) {
            return Some(end);
        }
        let n = self.s.len();
        let (c0, l0, k0) = self.at(pos);
        let prefix = Self::is_prefix(c0, k0) && pos + l0 < n;
        // Alternatives 1 and 2: P?[UL]*[LL]+C? then P?[UL]+[LL]*C? (P = the optional prefix, C =
        // the contractions). A backtracking engine tries, in order: 1 with the prefix, 1 without,
        // 2 with, 2 without. "Without" can only start a letter run if the first character is a
        // letter or a mark (a mark is both a possible prefix and a member of both case classes).
        let letterish = k0 & (LETTER | MARK) != 0;
        if prefix || letterish {
            // Each start's two alternatives come from one pass over its letters; the regex tries
            // the first with and without the prefix, then the second.
            let with = if prefix {
                self.letter_alternatives(pos + l0)
            } else {
                (None, None)
            };
            let found = with.0.or_else(|| {
                let without = if letterish {
                    self.letter_alternatives(pos)
                } else {
                    (None, None)
                };
                without.0.or(with.1).or(without.1)
            });
            if let Some(end) = found {
                if self.s.get(end) == Some(&b'\'') {
                    return Some(self.contraction(end, true).unwrap_or(end));
                }
                return Some(end);
            }
        }
        if k0 & NUMBER != 0 {
            return Some(self.run_max(pos, NUMBER, 3)); // \p{N}{1,3}
        }
        if let Some(end) = self.space_then_other(pos, c0, l0, k0) {
            // [\r\n/]*
            let mut e = end;
            while e < n && matches!(self.s[e], b'\r' | b'\n' | b'/') {
                e += 1;
            }
            return Some(e);
        }
        if k0 & SPACE != 0 {
            let (end, last, newline_end) = self.space_run(pos);
            if newline_end > 0 {
                return Some(newline_end); // \s*[\r\n]+: up to the run's last newline
            }
            return Some(self.space_lookahead(pos, end, last));
        }
        None
    }

    /// The common case of o200k's first alternative, on ASCII: an optional prefix character,
    /// `[A-Z]*[a-z]+`, then whatever the general scanner would take after it. None when the
    /// text at `pos` is not of that shape; the general path then decides, as it would have.
    ///
    /// Why it is the same match: ASCII has no letters of the classes both case runs accept, so
    /// `[UL]*` over ASCII is `[A-Z]*`, and once a lower-case letter follows it, the first
    /// alternative (with its prefix, tried first) matches through the `[LL]` run after it.
    #[inline(always)]
    fn o200k_ascii_word(&self, pos: usize) -> Option<usize> {
        let s = self.s;
        let n = s.len();
        let b0 = s[pos];
        if b0 >= 0x80 {
            return None;
        }
        let mut i = pos;
        if !b0.is_ascii_alphanumeric() && b0 != b'\r' && b0 != b'\n' {
            i += 1; // the prefix [^\r\n\p{L}\p{N}]
        }
        while i < n && s[i].is_ascii_uppercase() {
            i += 1;
        }
        if i >= n || !s[i].is_ascii_lowercase() {
            return None;
        }
        i = ascii_letter_run(s, i + 1, false);
        if i < n && s[i] >= 0x80 {
            i = self.run(i, LL); // the [LL] run goes on beyond ASCII
        }
        if s.get(i) == Some(&b'\'') {
            return Some(self.contraction(i, true).unwrap_or(i));
        }
        Some(i)
    }

    /// The ends of `[UL]*[LL]+` and of `[UL]+[LL]*` from `i` (None where one does not match),
    /// from one pass over the `[UL]` run. `[UL]*` takes the longest run; if a lower-case letter
    /// follows, `[LL]+` extends through the `[LL]` run after it; otherwise the engine gives
    /// characters back until one of them is in `[LL]`, so the first ends after the run's last
    /// `[LL]` one. In the second both are greedy: the `[UL]` run, then the `[LL]` run after it.
    #[inline(always)]
    fn letter_alternatives(&self, mut i: usize) -> (Option<usize>, Option<usize>) {
        let (start, n) = (i, self.s.len());
        let mut last_lower_end = None;
        while i < n {
            // A word of an Indic script: letters and marks, in both case classes, skipped
            // without decoding (what the loop below does with each of them, in bulk).
            let j = self.both_cases_e0(i);
            if j > i {
                (i, last_lower_end) = (j, Some(j));
                continue;
            }
            let (_, len, k) = self.at(i);
            if k & UL == 0 {
                if k & LL != 0 {
                    let end = self.run(i, LL);
                    return (Some(end), (i > start).then_some(end));
                }
                break;
            }
            i += len;
            if k & LL != 0 {
                last_lower_end = Some(i);
            }
        }
        (last_lower_end, (i > start).then_some(i))
    }

    /// The end of the run from `i` of characters led by 0xE0 (U+0800-U+0FFF) that are in both
    /// case classes (letters other than cased ones, and marks): `i` itself if there is none.
    #[inline(always)]
    fn both_cases_e0(&self, mut i: usize) -> usize {
        while let Some(&[0xE0, b1, b2]) = self.s.get(i..i + 3) {
            if self.t.of_e0(b1, b2) & (OTHER_LETTER | MARK) == 0 {
                break;
            }
            i += 3;
        }
        i
    }
}
