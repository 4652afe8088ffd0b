//! o200k's pieces over prose in the alphabets of one- and two-byte UTF-8 characters (ASCII,
//! Latin, Greek, Cyrillic, Armenian ...), found 64 bytes at a time.
//!
//! The scanners of [`super::named`] decide one piece at a time, with a few branches per piece
//! that the CPU cannot predict (which alternative, how long a run). On prose (cased letters,
//! numbers, single spaces, punctuation other than the apostrophe) o200k's regex reduces to a
//! few rules on the three characters before each position, so every piece start of a 64-byte
//! block follows from bitmaps of its character classes by whole-word operations. A character
//! starts a piece when:
//!
//! 1. it is a space (nothing before takes a following space; a single space is a word's prefix
//!    or the start of ` ?[^\s\p{L}\p{N}]+`);
//! 2. it is an upper-case letter after a lower-case one (`[\p{Lu}...]*[\p{Ll}...]+` ends there);
//! 3. it is punctuation after a letter or a number (their runs never take punctuation);
//! 4. it is a letter after punctuation that is not itself a lone piece start: a punctuation run
//!    of one character after a letter or number is the next word's prefix
//!    (`[^\r\n\p{L}\p{N}]?`), a longer run or one after a space is a piece of its own;
//! 5. it is a letter after a number, or a number after anything but a number (`\p{N}{1,3}` takes
//!    no prefix); a fourth number in a row ends the stretch instead (the groups of three).
//!
//! "Punctuation" is any character that is no letter, number or whitespace (controls and
//! symbols too). Everything else (the apostrophe of contractions, whitespace other than the
//! space, two spaces in a row, letters outside o200k's two case classes, marks, characters of
//! three or four bytes) ends the stretch: the pieces decided before it are handed out, and the
//! scalar scanner goes on from the last piece start. ASCII is classified with SSE2, 16 bytes at a
//! time; a block with characters of two bytes goes through a table of their classes instead,
//! and each such character's class is carried onto its second byte, so that "the character
//! before" is found one or two bytes back. Exactness against the scalar scanner (itself checked
//! against fancy-regex) is tested on random and real text.

use super::classes::classes;
use crate::fork::BuiltOnce;

/// Class bitmaps of a 64-byte block: bit `j` for byte `j`. A character of two bytes has its
/// class on both (and `cont` on the second), so that the byte before a character's start holds
/// the class of the character before it.
#[derive(Clone, Copy, Default)]
struct Block {
    lower: u64,
    upper: u64,
    digit: u64,
    space: u64,
    punct: u64,
    /// Bytes the rules do not cover.
    other: u64,
    /// The second byte of a two-byte character.
    cont: u64,
}

// The class of one character, as the wide table holds it (one bit each, as in `Block`).
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 4;
const SPACE: u8 = 8;
const PUNCT: u8 = 16;
const OTHER: u8 = 32;
const CONT: u8 = 64;

/// Where the wide table keeps the class of a continuation byte, and of a byte that starts no
/// character of one or two bytes (it leads three or four).
const CONT_SLOT: usize = 0x800;
const OTHER_SLOT: usize = 0x801;

/// The classes of the characters of one and two UTF-8 bytes (U+0000-U+07FF: ASCII, Latin-1 and
/// the Latin, Greek, Cyrillic, Armenian ... blocks), from the scanners' class table.
struct Wide {
    /// Per byte: the slot of its character in `class` (low 16 bits) and the mask of the next
    /// byte's bits that complete it (high bits: 0x3F for the first byte of two, else 0).
    lead: [u32; 256],
    class: [u8; 0x1000],
}

impl Wide {
    fn build() -> Wide {
        let t = classes();
        let mut class = [OTHER; 0x1000];
        for (cp, slot) in class.iter_mut().enumerate().take(0x800) {
            *slot = prose_class(cp as u32, t.of(cp as u32));
        }
        class[CONT_SLOT] = CONT;
        let mut lead = [OTHER_SLOT as u32; 256];
        for (b, slot) in lead.iter_mut().enumerate() {
            *slot = match b {
                0x00..=0x7F => b as u32,
                0x80..=0xBF => CONT_SLOT as u32,
                0xC2..=0xDF => (((b & 0x1F) as u32) << 6) | (0x3F << 16),
                _ => OTHER_SLOT as u32,
            };
        }
        Wide { lead, class }
    }
}

/// A character's class for the rules, from its code point and its flags in the scanners' table:
/// one of the cased letters, `\p{N}`, the space, or any other character that is no letter,
/// number or whitespace (which o200k treats as punctuation: controls, symbols ...). Letters in
/// both of o200k's case classes (`\p{Lo}`, `\p{Lm}`), marks, whitespace other than the space
/// and the apostrophe of contractions are left to the scalar scanner.
fn prose_class(cp: u32, k: u8) -> u8 {
    use super::classes::{LOWER as LL, MARK, NUMBER, OTHER_LETTER, SPACE as WS, UPPER as LU};
    match (cp, k) {
        (0x20, _) => SPACE,
        (0x27, _) => OTHER,
        (_, LL) => LOWER,
        (_, LU) => UPPER,
        (_, NUMBER) => DIGIT,
        (_, 0) => PUNCT,
        (_, k) if k & (OTHER_LETTER | MARK | WS) != 0 => OTHER,
        _ => OTHER, // flags that combine classes: none in Unicode 16, left to the scanner
    }
}

/// The wide table, built once (see [`prepare`]).
fn wide() -> &'static Wide {
    static TABLE: BuiltOnce<Wide> = BuiltOnce::new();
    TABLE.get_or_build(Wide::build)
}

/// Builds the tables the rules read, so that the first text costs what any later one does.
pub fn prepare() {
    wide();
}

/// The classes of a block's bytes (`block[64]` is the byte after it), and how many bytes from
/// its start they are exact for: up to the first character of three or four bytes, which ends
/// the stretch (after it, characters of two bytes may be `other` for the rules' purposes). ASCII
/// is classified 16 bytes at a time; where characters of two bytes come before the first of
/// three or four, the block goes again through the wide table.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(block: &[u8; 65]) -> (Block, usize) {
    use std::arch::x86_64::*;
    // SAFETY (each block below): SSE2 is part of the x86_64 baseline; the loads read bytes
    // 16k..16k+16 of a 65-byte array (unaligned loads allowed).
    let load = |k: usize| unsafe { _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>()) };
    let bits = |x: __m128i| u64::from(unsafe { _mm_movemask_epi8(x) } as u16);
    let mut c = Block::default();
    let mut high = 0u64;
    for k in 0..4 {
        let v = load(k);
        // SAFETY: as above (register operations only).
        let (lower, upper, digit, space, punct, non_ascii) = unsafe {
            // Signed compares: bytes from 0x80 up are negative, in no range of ASCII below.
            let range = |lo: u8, hi: u8| {
                _mm_and_si128(
                    _mm_cmpgt_epi8(v, _mm_set1_epi8(lo as i8 - 1)),
                    _mm_cmplt_epi8(v, _mm_set1_epi8(hi as i8 + 1)),
                )
            };
            let byte = |b: u8| bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)));
            let lower = bits(range(b'a', b'z'));
            let upper = bits(range(b'A', b'Z'));
            let digit = bits(range(b'0', b'9'));
            let space = byte(b' ');
            // \t \n \x0B \x0C \r: whitespace, not the space
            let whitespace = bits(range(0x09, 0x0D));
            let non_ascii = bits(v);
            let punct = !(non_ascii | lower | upper | digit | byte(b'\'') | space | whitespace);
            (lower, upper, digit, space, punct & 0xFFFF, non_ascii)
        };
        c.lower |= lower << (16 * k);
        c.upper |= upper << (16 * k);
        c.digit |= digit << (16 * k);
        c.space |= space << (16 * k);
        c.punct |= punct << (16 * k);
        high |= non_ascii << (16 * k);
    }
    c.other = !(c.lower | c.upper | c.digit | c.space | c.punct);
    if high == 0 {
        return (c, 64);
    }
    // 0xE0 and up (the first byte of three or four): the bytes that an unsigned maximum
    // with 0xE0 leaves alone.
    let long = (0..4).fold(0u64, |acc, k| {
        let v = load(k);
        // SAFETY: as above (register operations only).
        let at_least = unsafe { _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0xE0u8 as i8)), v) };
        acc | (bits(at_least) << (16 * k))
    });
    let first_long = long.trailing_zeros();
    let before_long = !(!0u64).checked_shl(first_long).unwrap_or(0);
    if high & before_long != 0 {
        c = classify_wide(block, wide(), first_long as usize);
    }
    (c, first_long as usize)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify(block: &[u8; 65]) -> (Block, usize) {
    let long = block[..64].iter().position(|&b| b >= 0xE0).unwrap_or(64);
    (classify_wide(block, wide(), long), long)
}

/// Classes of the first `n` bytes of a block through the wide table, a byte at a time: a table
/// read and no branch per byte, where the scalar scanner's branches on each character's class
/// are ones the CPU cannot predict on mixed text. The bytes from `n` on are `other`.
#[inline(always)]
fn classify_wide(block: &[u8; 65], w: &Wide, n: usize) -> Block {
    // (All 64 bytes, and a table the index cannot leave: a loop the compiler unrolls.)
    let mut classes = [OTHER; 64];
    for (j, slot) in classes.iter_mut().enumerate() {
        let lead = w.lead[usize::from(block[j])];
        let slot_of = (lead & 0xFFFF) + (u32::from(block[j + 1]) & (lead >> 16));
        *slot = w.class[slot_of as usize & 0xFFF];
    }
    let mut c = Block::default();
    for_each_bit(&classes, |bit, flag| match flag {
        LOWER => c.lower = bit,
        UPPER => c.upper = bit,
        DIGIT => c.digit = bit,
        SPACE => c.space = bit,
        PUNCT => c.punct = bit,
        OTHER => c.other = bit,
        _ => c.cont = bit,
    });
    c.other |= (!0u64).checked_shl(n as u32).unwrap_or(0);
    c
}

/// `f(bitmap, flag)` for each class flag: bit `j` of the bitmap set where `classes[j]` has it.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn for_each_bit(classes: &[u8; 64], mut f: impl FnMut(u64, u8)) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; the loads read 16 bytes at 0, 16, 32 and 48
    // of a 64-byte array.
    let v: [__m128i; 4] =
        std::array::from_fn(|k| unsafe { _mm_loadu_si128(classes.as_ptr().add(16 * k).cast()) });
    for flag in [LOWER, UPPER, DIGIT, SPACE, PUNCT, OTHER, CONT] {
        let mut bits = 0u64;
        for (k, &x) in v.iter().enumerate() {
            // SAFETY: as above (register operations only).
            let m = unsafe {
                let hit = _mm_cmpeq_epi8(
                    _mm_and_si128(x, _mm_set1_epi8(flag as i8)),
                    _mm_set1_epi8(flag as i8),
                );
                _mm_movemask_epi8(hit) as u16
            };
            bits |= u64::from(m) << (16 * k);
        }
        f(bits, flag);
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn for_each_bit(classes: &[u8; 64], mut f: impl FnMut(u64, u8)) {
    for flag in [LOWER, UPPER, DIGIT, SPACE, PUNCT, OTHER, CONT] {
        let bits = classes
            .iter()
            .enumerate()
            .fold(0u64, |acc, (j, &k)| acc | (u64::from(k & flag != 0) << j));
        f(bits, flag);
    }
}

/// The last block [`o200k_pieces`] classified in a text, kept for its next call on the same
/// text: the rules stop every few dozen bytes on some text (Latin-1's controls and marks), the
/// scalar scanner takes a piece or two, and the next call starts inside the same block.
#[derive(Clone, Copy)]
pub struct Memo {
    base: usize,
    /// The end of the bytes its classes are exact for (see [`classify`]).
    exact_to: usize,
    classes: Block,
}

impl Default for Memo {
    fn default() -> Memo {
        Memo {
            base: usize::MAX,
            exact_to: 0,
            classes: Block::default(),
        }
    }
}

/// Calls `f.span(start, end)` for each o200k piece of `s` from `pos` (a piece start) whose end the
/// prose rules decide. Returns the start of the first piece they leave undecided (`pos` itself
/// when they decide none), where the scalar scanner goes on, and the first byte the rules do
/// not cover (`s.len()` if none), past which the scalar scanner need not go before they are
/// tried again. `memo` is to be the same for every call on `s`, and for `s` alone.
#[inline]
pub fn o200k_pieces(
    s: &[u8],
    pos: usize,
    memo: &mut Memo,
    f: &mut impl super::Spans,
) -> (usize, usize) {
    let mut start = pos;
    // The first block is the one that holds `pos`: the last one classified where it does.
    let mut base = if memo.base <= pos && pos < memo.exact_to {
        memo.base
    } else {
        pos
    };
    // The classes of the bytes before `pos`, as if none were in the block: letters, so that
    // rule 4 never fires at the character after `pos` (punctuation at the piece start `pos` is
    // a lone start: the prefix of a following word), and nothing else (the other rules and
    // checks never look at a byte before `pos` otherwise: `pos` is a start already, and a
    // digit run from `pos` is counted from `pos`, where the scalar scanner began it; `pos`
    // starts a character). Bytes of the first block before `pos` are masked to the same.
    let mut before = Block::default();
    let mut word_in = !0u64;
    loop {
        let mut c = if base == memo.base {
            memo.classes
        } else {
            let mut padded = [0u8; 65];
            let block: &[u8; 65] = match s.get(base..base + 65) {
                Some(b) => b.try_into().unwrap_or(&padded),
                None => {
                    let rest = &s[base.min(s.len())..];
                    padded[..rest.len()].copy_from_slice(rest);
                    &padded
                }
            };
            let (mut c, exact) = classify(block);
            if base + 64 > s.len() {
                c.other |= !0u64 << (s.len() - base); // past the end: the stretch ends there
            }
            *memo = Memo {
                base,
                exact_to: base + exact,
                classes: c,
            };
            c
        };
        // In the first block, `pos` and the bytes before it (`pos - base < 64`: see `base`),
        // where no piece is decided; none in the blocks after.
        let to_pos = if base <= pos {
            !0u64 >> (63 - (pos - base))
        } else {
            0
        };
        // (Upper-case letters and punctuation before `pos` are looked at only from `pos`, a
        // start already; the lookbacks that second bytes steer land on bytes masked alike.
        // Neither needs masking.)
        let before_pos = to_pos >> 1;
        c.digit &= !before_pos;
        c.space &= !before_pos;
        c.other &= !before_pos;
        c.lower |= before_pos;
        // Blocks of ASCII alone (after one) take the rules without the arithmetic of
        // characters of two bytes, which English prose would otherwise pay on every block.
        let (starts, other, word) = if (c.cont | before.cont) == 0 {
            rules::<false>(&mut c, &before, word_in)
        } else {
            rules::<true>(&mut c, &before, word_in)
        };
        // Starts before the first byte outside the stretch (and after `pos`) are decided.
        let end = other.trailing_zeros();
        let mut decided = starts & !to_pos & if end == 64 { !0 } else { (1u64 << end) - 1 };
        while decided != 0 {
            let next = base + decided.trailing_zeros() as usize;
            f.span(start, next);
            start = next;
            decided &= decided - 1;
        }
        if end < 64 {
            return (start, base + end as usize);
        }
        if base + 64 >= s.len() {
            return (start, s.len());
        }
        before = c;
        word_in = word;
        base += 64;
    }
}

/// The piece starts of a block, the bytes that end the stretch, and the letters and digits
/// (the character classes in `c`, those of the block before in `before` and `word_in`).
/// `WIDE` is false where neither block holds a character of two bytes, so that each character
/// is one byte and the one before is one byte earlier.
#[inline(always)]
fn rules<const WIDE: bool>(c: &mut Block, before: &Block, word_in: u64) -> (u64, u64, u64) {
    let shl = |x: u64, carry: u64, k: u32| (x << k) | (carry >> (64 - k));
    if WIDE {
        // The second byte of a character takes its class (the first byte of this block may
        // be the second of a character that the block before ends with).
        for (x, x_in) in [
            (&mut c.lower, before.lower),
            (&mut c.upper, before.upper),
            (&mut c.digit, before.digit),
            (&mut c.punct, before.punct),
            (&mut c.other, before.other),
        ] {
            *x |= shl(*x, x_in, 1) & c.cont;
        }
    }
    let letter = c.lower | c.upper;
    let word = letter | c.digit;
    // The character before a character's start ends at the byte before it; the one before
    // that one or two bytes earlier, as that character has one or two (`two`); the one
    // before that one to three bytes earlier still (`two_more`: so has the second).
    let (two, two_more) = if WIDE {
        let two = shl(c.cont, before.cont, 1);
        (
            two,
            (two & shl(c.cont, before.cont, 3)) | (!two & shl(c.cont, before.cont, 2)),
        )
    } else {
        (0, 0)
    };
    let prev = |x: u64, x_in: u64| shl(x, x_in, 1);
    let prev2 = |x: u64, x_in: u64| (two & shl(x, x_in, 3)) | (!two & shl(x, x_in, 2));
    let prev3 = |x: u64, x_in: u64| {
        (!two & !two_more & shl(x, x_in, 3))
            | ((two ^ two_more) & shl(x, x_in, 4))
            | (two & two_more & shl(x, x_in, 5))
    };
    let after_digit = prev(c.digit, before.digit);
    // Two spaces in a row: o200k gives the last space of a run back to what follows, which
    // these rules do not follow; the second space ends the stretch. So does a fourth digit
    // in a row (where the groups of three fall is the scalar scanner's to count).
    let other = c.other
        | (c.space & prev(c.space, before.space))
        | (!c.cont
            & c.digit
            & after_digit
            & prev2(c.digit, before.digit)
            & prev3(c.digit, before.digit));
    // (No rule fires at the second byte of a character: each needs a change of class from the
    // byte before, and that byte is the same character's first.)
    let starts = c.space
        | (c.upper & prev(c.lower, before.lower))
        | (c.punct & prev(word, word_in))
        | (letter & prev(c.punct, before.punct) & !prev2(word, word_in))
        | (letter & after_digit)
        | (c.digit & !after_digit);
    (starts, other, word)
}

#[cfg(test)]
mod tests {
    use super::super::classes::classes;
    use super::super::named::Named;
    use super::*;

    /// The scalar scanner's pieces of `s` from 0.
    fn scalar(s: &[u8]) -> Vec<(usize, usize)> {
        let (t, mut pos, mut out) = (classes(), 0, Vec::new());
        while pos < s.len() {
            let end = Named::O200k.match_at(t, s, pos).unwrap();
            out.push((pos, end));
            pos = end;
        }
        out
    }

    /// The prose rules from every piece start the scalar scanner finds: each piece they decide
    /// is the scalar scanner's next piece, and they stop at a character they do not cover. Each
    /// start is tried with a fresh memo and with the one of the calls from the starts before it
    /// (a block classified before, from some byte before `pos`).
    fn check(s: &[u8]) {
        let want = scalar(s);
        let mut shared = Memo::default();
        for (k, &(pos, _)) in want.iter().enumerate() {
            for memo in [&mut Memo::default(), &mut shared] {
                let mut got = Vec::new();
                let (resume, stop) = o200k_pieces(s, pos, memo, &mut |a, b| got.push((a, b)));
                assert_eq!(
                    got,
                    want[k..k + got.len()],
                    "from {pos} in {:?}",
                    String::from_utf8_lossy(s)
                );
                assert_eq!(
                    resume,
                    want.get(k + got.len()).map_or(pos, |p| p.0).max(pos)
                );
                assert_eq!(
                    stop,
                    stretch_end(s, pos),
                    "{:?} from {pos}",
                    String::from_utf8_lossy(s)
                );
                assert!(resume <= stop, "{resume} {stop}");
            }
        }
    }

    /// Where the stretch from `pos` ends, a character at a time: at the first character the
    /// rules do not cover, the second of two spaces, or the fourth of four digits (counted from
    /// `pos`); `s.len()` if none.
    fn stretch_end(s: &[u8], pos: usize) -> usize {
        let text = std::str::from_utf8(&s[pos..]).unwrap();
        let (mut spaces, mut digits) = (0, 0);
        for (i, c) in text.char_indices() {
            let k = match c as u32 {
                cp @ 0..0x800 => prose_class(cp, classes().of(cp)),
                _ => OTHER,
            };
            spaces = if k == SPACE { spaces + 1 } else { 0 };
            digits = if k == DIGIT { digits + 1 } else { 0 };
            if k == OTHER || spaces == 2 || digits == 4 {
                return pos + i;
            }
        }
        s.len()
    }

    /// Random strings of `n` characters drawn from `alphabet`, lengths 0 to 299.
    fn random_texts(alphabet: &[char], n: usize, seed: u64) -> impl Iterator<Item = String> + '_ {
        let mut x = seed;
        (0..n).map(move |i| {
            (0..i % 300)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    alphabet[(x % alphabet.len() as u64) as usize]
                })
                .collect()
        })
    }

    #[test]
    fn prose_rules_equal_the_scanner() {
        for s in [
            "Hello world, this is a test. HTMLParser camelCase aB ABC def (x) a.b.c a..b .b",
            "a - b; a, b! a!! b \"quoted\" (paren)word x.Y x.(y) a  b a   b.  c",
            "it's 2024: don't\tstop\nnow  end ",
            "in 2024, 1.5 12345 a1b2 B52s 9a .5 5. x.1y 1234567 0.25%",
            "1a 12a 123a 1234a ab12 AB123cd",
            "",
            " ",
            "(b",
            "((b",
            "Ça coûte 12€, déjà «payé» ÉTÉ été. Größe ½ ²³¹x µm ×÷ ª º naïve\u{a0}x",
            "Привет, Мир! ΑΒΓ αβγ Ωmega ԱԲԳ աբգ ǅx ǈy \u{1}\u{7f}a\u{85}b\u{9f}c",
            "x\u{301}y e\u{301} \u{660}\u{661}\u{662}\u{663} ١٢ اب ת ʰa ɐB",
        ] {
            check(s.as_bytes());
        }
    }

    #[test]
    fn prose_rules_equal_the_scanner_on_random_text() {
        let alphabet: Vec<char> =
            "aaaaeeettnnsAAEBZ      .,;:!?()-/\"'1120937\t\nxX~é’ÉßÀ«»½²\u{a0}"
                .chars()
                .collect();
        for s in random_texts(&alphabet, 6000, 0x9E37_79B9_7F4A_7C15) {
            check(s.as_bytes());
        }
    }

    #[test]
    fn prose_rules_equal_the_scanner_on_every_narrow_character() {
        // Every character of one or two UTF-8 bytes, and a few of three and four, among
        // spaces and letters: every class the wide table holds, next to every other.
        let mut alphabet: Vec<char> = (0..0x800u32).filter_map(char::from_u32).collect();
        alphabet.extend("          aaaaeeeeAAAA'''' ශ්‍රී 中 😀".chars());
        for s in random_texts(&alphabet, 3000, 0x2545_F491_4F6C_DD1D) {
            check(s.as_bytes());
        }
        // Latin-1 alone, as random bytes decode to it.
        let latin1: Vec<char> = (0..0x100u32).filter_map(char::from_u32).collect();
        for s in random_texts(&latin1, 3000, 7) {
            check(s.as_bytes());
        }
    }

    #[test]
    fn ascii_blocks_classify_alike_both_ways() {
        // The SSE2 classification of ASCII against the wide table's, byte by byte.
        for first in (0..128u8).step_by(64) {
            let mut block = [0u8; 65];
            for (j, b) in block.iter_mut().enumerate().take(64) {
                *b = first + j as u8;
            }
            let (a, w) = (classify(&block).0, classify_wide(&block, wide(), 64));
            for (x, y) in [
                (a.lower, w.lower),
                (a.upper, w.upper),
                (a.digit, w.digit),
                (a.space, w.space),
                (a.punct, w.punct),
                (a.other, w.other),
                (a.cont, w.cont),
            ] {
                assert_eq!(x, y, "{first}");
            }
        }
    }
}
