//! Hand-written scanners for the named pre-tokenizer regexes (o200k, cl100k, Llama 3, Qwen2, GPT-2).
//!
//! Each scanner answers one question: where does the regex's match that starts at `pos` end? It
//! follows the regex's alternatives in order and reproduces what a backtracking engine would do
//! (the module comments on each alternative say how), so the pieces are exactly those of
//! `regex.findall` in Python and of tiktoken's Rust regex, lookahead `\s+(?!\S)` included, at
//! one pass over the characters instead of a backtracking search. Every named pattern matches
//! at every position, so the pieces cover the text.
//!
//! The regexes themselves are facts from tiktoken, llama.cpp and Hugging Face configs; they are
//! written out in `wwho/bytelevel/pretokenize.py`, and `Named::from_pattern` recognises them by
//! their exact text. Anything else goes to the general regex path.

use super::classes::{decode, Classes, LETTER, LOWER, MARK, NUMBER, OTHER_LETTER, SPACE, UPPER};

pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);
pub const CL100K: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+",
    r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
);
pub const LLAMA3: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
);
pub const QWEN2: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
);
/// tiktoken's possessive form of GPT-2's regex (r50k).
pub const GPT2: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// GPT-2's regex as Hugging Face's `ByteLevel(use_regex=True)` writes it (splits like `GPT2`).
pub const GPT2_HF: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// o200k's "upper-case-like" class `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` and "lower-case-like" one.
const UL: u8 = UPPER | OTHER_LETTER | MARK;
const LL: u8 = LOWER | OTHER_LETTER | MARK;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    O200k,
    Cl100k,
    Llama3,
    Qwen2,
    Gpt2,
}

impl Named {
    pub fn from_pattern(pattern: &str) -> Option<Named> {
        match pattern {
            O200K => Some(Named::O200k),
            CL100K => Some(Named::Cl100k),
            LLAMA3 => Some(Named::Llama3),
            QWEN2 => Some(Named::Qwen2),
            GPT2 | GPT2_HF => Some(Named::Gpt2),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Named::O200k => "o200k",
            Named::Cl100k => "cl100k",
            Named::Llama3 => "llama3",
            Named::Qwen2 => "qwen2",
            Named::Gpt2 => "gpt2",
        }
    }

    /// The end of the match starting at `pos` (< `s.len()`), or None if none starts there.
    #[inline]
    pub fn match_at(self, t: &Classes, s: &[u8], pos: usize) -> Option<usize> {
        let scan = Scan { t, s };
        match self {
            Named::O200k => scan.o200k(pos),
            Named::Cl100k => scan.cl100k(pos, 3, true),
            Named::Llama3 => scan.cl100k(pos, 3, false),
            Named::Qwen2 => scan.cl100k(pos, 1, false),
            Named::Gpt2 => scan.gpt2(pos),
        }
    }
}

/// The end of the run of ASCII lower-case letters (`any_case`: of ASCII letters) from `i`, eight
/// bytes at a time: a word's end is then found by arithmetic on one or two loads, not by a byte
/// loop whose exit at each word end is a branch the CPU cannot predict.
#[inline(always)]
fn ascii_letter_run(s: &[u8], mut i: usize, any_case: bool) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Setting bit 5 turns A-Z into a-z and no other byte into a-z (@ [ ` { stay outside).
    let fold = if any_case { 0x20 * ONES } else { 0 };
    loop {
        let rest = &s[i..];
        // Past the end the load is zero-padded, and a zero byte is no letter.
        let w = match rest.first_chunk::<8>() {
            Some(chunk) => u64::from_le_bytes(*chunk),
            None => {
                let mut tail = [0u8; 8];
                tail[..rest.len()].copy_from_slice(rest);
                u64::from_le_bytes(tail)
            }
        };
        // Per byte, on its low seven bits (no carry can cross bytes): high bit set iff >= b'a',
        // and iff > b'z'; a byte with its own high bit set is no ASCII letter.
        let low = (w & !HIGH) | fold;
        let from_a = low.wrapping_add((0x80 - u64::from(b'a')) * ONES);
        let past_z = low.wrapping_add((0x80 - u64::from(b'z') - 1) * ONES);
        let other = (!from_a | past_z | w) & HIGH;
        if other != 0 {
            return i + (other.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
}

/// Which of 16 bytes are ASCII whitespace (`\t \n \x0B \x0C \r` and space), and which of those
/// are `\n` or `\r`, as bit masks (bit k: byte k).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ascii_spaces(block: &[u8; 16]) -> (u16, u16) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; the load reads the 16 bytes of `block`. Bytes
    // of 0x80 and above are negative as i8, so the range test leaves them out.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
        let eq = |b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
        let controls = _mm_and_si128(
            _mm_cmpgt_epi8(v, _mm_set1_epi8(0x08)),
            _mm_cmplt_epi8(v, _mm_set1_epi8(0x0E)),
        );
        let space = _mm_or_si128(controls, eq(b' '));
        let newline = _mm_or_si128(eq(b'\n'), eq(b'\r'));
        (
            _mm_movemask_epi8(space) as u16,
            _mm_movemask_epi8(newline) as u16,
        )
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn ascii_spaces(block: &[u8; 16]) -> (u16, u16) {
    let (mut space, mut newline) = (0u16, 0u16);
    for (k, &b) in block.iter().enumerate() {
        space |= u16::from(b == b' ' || (0x09..=0x0D).contains(&b)) << k;
        newline |= u16::from(b == b'\n' || b == b'\r') << k;
    }
    (space, newline)
}

struct Scan<'a> {
    t: &'a Classes,
    s: &'a [u8],
}

impl Scan<'_> {
    /// (code point, UTF-8 length, class flags) of the character at `i`.
    #[inline(always)]
    fn at(&self, i: usize) -> (u32, usize, u8) {
        let (cp, len) = decode(self.s, i);
        (cp, len, self.t.of(cp))
    }

    /// Class flags at `i`, 0 past the end.
    #[inline(always)]
    fn class(&self, i: usize) -> u8 {
        if i < self.s.len() {
            self.at(i).2
        } else {
            0
        }
    }

    /// End of the longest run from `i` of characters whose flags meet `want`.
    #[inline(always)]
    fn run(&self, mut i: usize, want: u8) -> usize {
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
    fn letter_run(&self, i: usize) -> usize {
        let end = ascii_letter_run(self.s, i, true);
        if end < self.s.len() && self.s[end] >= 0x80 {
            return self.run(end, LETTER);
        }
        end
    }

    /// End of a run of at most `max` characters of class `want`.
    fn run_max(&self, mut i: usize, want: u8, max: usize) -> usize {
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
    fn other_run(&self, mut i: usize) -> usize {
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
    fn is_other(&self, i: usize) -> bool {
        i < self.s.len() && self.class(i) & (SPACE | LETTER | NUMBER) == 0
    }

    /// `[^\r\n\p{L}\p{N}]`: the optional one-character prefix of a letter run.
    #[inline(always)]
    fn is_prefix(cp: u32, k: u8) -> bool {
        cp != 0x0D && cp != 0x0A && k & (LETTER | NUMBER) == 0
    }

    /// The whitespace run from `pos` (whose first character is whitespace): its end, the start
    /// of its last character, and the end of its last `\r` or `\n` (0 if none).
    fn space_run(&self, pos: usize) -> (usize, usize, usize) {
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
    fn contraction(&self, i: usize, ignore_case: bool) -> Option<usize> {
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

    // --- o200k -------------------------------------------------------------------------------

    fn o200k(&self, pos: usize) -> Option<usize> {
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

    /// ` ?[^\s\p{L}\p{N}]+` at `pos` (first character `c0`, of `l0` bytes and class flags
    /// `k0`): its end.
    #[inline(always)]
    fn space_then_other(&self, pos: usize, c0: u32, l0: usize, k0: u8) -> Option<usize> {
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
    fn space_lookahead(&self, pos: usize, end: usize, last: usize) -> usize {
        if end == self.s.len() || last == pos {
            end
        } else {
            last
        }
    }

    // --- cl100k, Llama 3, Qwen2 --------------------------------------------------------------

    /// cl100k (`whole_final_run`: its `\s++$`), Llama 3 and Qwen2 (`max_digits` 1): the same
    /// alternatives but for the digit count and that one.
    fn cl100k(&self, pos: usize, max_digits: usize, whole_final_run: bool) -> Option<usize> {
        let n = self.s.len();
        let (c0, l0, k0) = self.at(pos);
        if c0 == u32::from(b'\'') {
            if let Some(end) = self.contraction(pos, true) {
                return Some(end);
            }
        }
        // [^\r\n\p{L}\p{N}]?+\p{L}++ (possessive or not: the same, since a prefix is no letter).
        if Self::is_prefix(c0, k0) {
            if self.class(pos + l0) & LETTER != 0 {
                return Some(self.letter_run(pos + l0));
            }
        } else if k0 & LETTER != 0 {
            return Some(self.letter_run(pos));
        }
        if k0 & NUMBER != 0 {
            return Some(self.run_max(pos, NUMBER, max_digits));
        }
        if let Some(end) = self.space_then_other(pos, c0, l0, k0) {
            let mut e = end; // [\r\n]*
            while e < n && matches!(self.s[e], b'\r' | b'\n') {
                e += 1;
            }
            return Some(e);
        }
        if k0 & SPACE != 0 {
            let (end, last, newline_end) = self.space_run(pos);
            if whole_final_run && end == n {
                return Some(end); // \s++$
            }
            if newline_end > 0 {
                return Some(newline_end); // \s*[\r\n] / \s*[\r\n]+
            }
            return Some(self.space_lookahead(pos, end, last));
        }
        None
    }

    // --- GPT-2 -------------------------------------------------------------------------------

    fn gpt2(&self, pos: usize) -> Option<usize> {
        let (c0, _, k0) = self.at(pos);
        if c0 == u32::from(b'\'') {
            if let Some(end) = self.contraction(pos, false) {
                return Some(end);
            }
        }
        // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: with a space, the class must follow it.
        let (start, k) = if c0 == u32::from(b' ') {
            (pos + 1, self.class(pos + 1))
        } else {
            (pos, k0)
        };
        if start < self.s.len() {
            if k & LETTER != 0 {
                return Some(self.letter_run(start));
            }
            if k & NUMBER != 0 {
                return Some(self.run(start, NUMBER));
            }
            if k & SPACE == 0 {
                return Some(self.other_run(start));
            }
        }
        if k0 & SPACE != 0 {
            let (end, last, _) = self.space_run(pos);
            return Some(self.space_lookahead(pos, end, last));
        }
        None
    }
}
