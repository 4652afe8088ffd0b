//! o200k's pieces over plain ASCII prose, found 64 bytes at a time.
//!
//! The scanners of [`super::named`] decide one piece at a time, with a few branches per piece
//! that the CPU cannot predict (which alternative, how long a run). On plain prose (ASCII
//! letters and digits, single spaces, punctuation other than the apostrophe) o200k's regex
//! reduces to a few rules on the three characters before each position, so every piece start
//! of a 64-byte block follows from bitmaps of its character classes by whole-word operations.
//! A byte is a piece start when:
//!
//! 1. it is a space (nothing before takes a following space; a single space is a word's prefix
//!    or the start of ` ?[^\s\p{L}\p{N}]+`);
//! 2. it is an upper-case letter after a lower-case one (`[\p{Lu}...]*[\p{Ll}...]+` ends there);
//! 3. it is punctuation after a letter or a digit (their runs never take punctuation);
//! 4. it is a letter after punctuation that is not itself a lone piece start: a punctuation run
//!    of one character after a letter or digit is the next word's prefix
//!    (`[^\r\n\p{L}\p{N}]?`), a longer run or one after a space is a piece of its own;
//! 5. it is a letter after a digit, or a digit after anything but a digit (`\p{N}{1,3}` takes
//!    no prefix); a fourth digit in a row ends the stretch instead (the groups of three).
//!
//! Everything else (the apostrophe of contractions, other whitespace, two spaces in a row,
//! control characters, non-ASCII) ends the stretch: the pieces decided before it are
//! handed out, and the scalar scanner goes on from the last piece start. Exactness against the
//! scalar scanner (itself checked against fancy-regex) is tested on random and real text.

/// Class bitmaps of a 64-byte block: bit `j` for byte `j`.
#[derive(Clone, Copy, Default)]
struct Block {
    lower: u64,
    upper: u64,
    digit: u64,
    space: u64,
    punct: u64,
    /// Bytes the four rules do not cover.
    other: u64,
}

/// Punctuation here: printable ASCII that is no letter, digit, space or apostrophe.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn is_punct(b: u8) -> bool {
    (0x21..=0x7E).contains(&b) && !b.is_ascii_alphanumeric() && b != b'\''
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(block: &[u8; 64]) -> Block {
    use std::arch::x86_64::*;
    let mut c = Block::default();
    for k in 0..4 {
        // SAFETY: SSE2 is part of the x86_64 baseline; the load reads bytes 16k..16k+16 of a
        // 64-byte array (unaligned loads allowed).
        let (lower, upper, digit, space, punct) = unsafe {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            // Signed compares: bytes from 0x80 up are negative, in no range below.
            let range = |lo: u8, hi: u8| {
                _mm_and_si128(
                    _mm_cmpgt_epi8(v, _mm_set1_epi8((lo - 1) as i8)),
                    _mm_cmplt_epi8(v, _mm_set1_epi8((hi + 1) as i8)),
                )
            };
            let bits = |x: __m128i| u64::from(_mm_movemask_epi8(x) as u16);
            let (lower, upper) = (bits(range(b'a', b'z')), bits(range(b'A', b'Z')));
            let digit = bits(range(b'0', b'9'));
            let apostrophe = bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\'' as i8)));
            let printable = bits(range(0x21, 0x7E));
            let space = bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b' ' as i8)));
            let punct = printable & !(lower | upper | digit | apostrophe);
            (lower, upper, digit, space, punct)
        };
        c.lower |= lower << (16 * k);
        c.upper |= upper << (16 * k);
        c.digit |= digit << (16 * k);
        c.space |= space << (16 * k);
        c.punct |= punct << (16 * k);
    }
    c.other = !(c.lower | c.upper | c.digit | c.space | c.punct);
    c
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify(block: &[u8; 64]) -> Block {
    let mut c = Block::default();
    for (j, &b) in block.iter().enumerate() {
        let bit = 1u64 << j;
        match b {
            b'a'..=b'z' => c.lower |= bit,
            b'A'..=b'Z' => c.upper |= bit,
            b'0'..=b'9' => c.digit |= bit,
            b' ' => c.space |= bit,
            _ if is_punct(b) => c.punct |= bit,
            _ => c.other |= bit,
        }
    }
    c
}

/// Calls `f.span(start, end)` for each o200k piece of `s` from `pos` (a piece start) whose end the
/// prose rules decide, and returns the start of the first piece they leave undecided (`pos`
/// itself when they decide none): the scalar scanner goes on from there.
#[inline]
pub fn o200k_pieces(s: &[u8], pos: usize, f: &mut impl super::Spans) -> usize {
    let mut start = pos;
    let mut base = pos;
    // The classes of the bytes before the block, as its top bits would hold them. Before
    // `pos`: letters, so that rule 4 never fires at `pos + 1` (punctuation at the piece start
    // `pos` is a lone start: the prefix of a following word), and nothing else (the other
    // rules and checks never look at a byte before `pos` otherwise: `pos` is a start already,
    // and a digit run from `pos` is counted from `pos`, where the scalar scanner began it).
    let (mut lower_in, mut word_in, mut punct_in, mut space_in, mut digit_in) =
        (0u64, 3u64 << 62, 0, 0, 0);
    loop {
        let mut padded = [0u8; 64];
        let block: &[u8; 64] = match s.get(base..base + 64) {
            Some(b) => b.try_into().unwrap_or(&padded),
            None => {
                let rest = &s[base.min(s.len())..];
                padded[..rest.len()].copy_from_slice(rest);
                &padded // zero bytes: "other", the stretch ends there
            }
        };
        let c = classify(block);
        let letter = c.lower | c.upper;
        let word = letter | c.digit;
        let prev = |x: u64, carry: u64| (x << 1) | (carry >> 63);
        let prev2 = |x: u64, carry: u64| (x << 2) | (carry >> 62);
        let prev3 = |x: u64, carry: u64| (x << 3) | (carry >> 61);
        let after_digit = prev(c.digit, digit_in);
        // Two spaces in a row: o200k gives the last space of a run back to what follows, which
        // these rules do not follow; the second space ends the stretch. So does a fourth digit
        // in a row (where the groups of three fall is the scalar scanner's to count).
        let other = c.other
            | (c.space & prev(c.space, space_in))
            | (c.digit & after_digit & prev2(c.digit, digit_in) & prev3(c.digit, digit_in));
        let starts = c.space
            | (c.upper & prev(c.lower, lower_in))
            | (c.punct & prev(word, word_in))
            | (letter & prev(c.punct, punct_in) & !prev2(word, word_in))
            | (letter & after_digit)
            | (c.digit & !after_digit);
        // Starts before the first byte outside the stretch (and after `pos`) are decided.
        let end = other.trailing_zeros();
        let mut decided = starts & if end == 64 { !0 } else { (1u64 << end) - 1 };
        if base == pos {
            decided &= !1;
        }
        while decided != 0 {
            let next = base + decided.trailing_zeros() as usize;
            f.span(start, next);
            start = next;
            decided &= decided - 1;
        }
        if end < 64 || base + 64 >= s.len() {
            return start;
        }
        (lower_in, word_in, punct_in, space_in, digit_in) =
            (c.lower, word, c.punct, c.space, c.digit);
        base += 64;
    }
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
    /// is the scalar scanner's next piece.
    fn check(s: &[u8]) {
        let want = scalar(s);
        for (k, &(pos, _)) in want.iter().enumerate() {
            let mut got = Vec::new();
            let resume = o200k_pieces(s, pos, &mut |a, b| got.push((a, b)));
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
        }
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
        ] {
            check(s.as_bytes());
        }
    }

    #[test]
    fn prose_rules_equal_the_scanner_on_random_text() {
        let alphabet: Vec<u8> = b"aaaaeeettnnsAAEBZ      .,;:!?()-/\"'1120937\t\nxX~"
            .iter()
            .copied()
            .chain("é’".bytes())
            .collect();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for n in 0..6000 {
            let len = n % 300;
            let mut s = Vec::with_capacity(len);
            while s.len() < len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            // Keep the text UTF-8: drop a character cut at the end.
            while std::str::from_utf8(&s).is_err() {
                s.pop();
            }
            check(&s);
        }
    }

    #[test]
    fn punctuation_is_what_the_classes_say() {
        let t = classes();
        for b in 0..0x80u8 {
            let k = t.of(u32::from(b));
            let regex_other = k
                & (super::super::classes::LETTER
                    | super::super::classes::NUMBER
                    | super::super::classes::SPACE)
                == 0;
            if is_punct(b) {
                assert!(regex_other, "{b:#x}");
            }
        }
    }
}
