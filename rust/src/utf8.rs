//! Text as UTF-8 for the byte-level encoders: a Python `str`'s own storage (PEP 393 units, see
//! [`crate::units`]) written as UTF-8 into a per-thread buffer, lone surrogates replaced as tiktoken
//! does. One implementation for every caller (the byte-level bindings, the meta encoder). This
//! module does not encode.

use crate::units::{Text, Unit};

/// `f` of `t` as UTF-8, with each lone surrogate as U+FFFD and a high surrogate followed by a
/// low one as the character the pair stands for: what `wwho.bytelevel.pretokenize.
/// _replace_surrogates` (and tiktoken) do to text that cannot be UTF-8. ASCII is read in place;
/// other text is written into a buffer of this thread's (kept for the next text, up to
/// [`KEEP_UTF8`] bytes). Reads only the string's own storage, so any thread may call it while
/// the caller holds the string.
pub fn with_utf8<R>(t: Text<'_>, f: impl FnOnce(&str) -> R) -> R {
    if let Text::U8(b) = t {
        if b.is_ascii() {
            // SAFETY: ASCII is UTF-8.
            return f(unsafe { std::str::from_utf8_unchecked(b) });
        }
    }
    UTF8.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            let out = f(utf8_into(t, &mut buf));
            if buf.capacity() > KEEP_UTF8 {
                *buf = Vec::new();
            }
            out
        }
        Err(_) => f(utf8_into(t, &mut Vec::new())),
    })
}

/// The per-thread buffer of [`with_utf8`] is released when a text needed more than this.
const KEEP_UTF8: usize = 1 << 20;

thread_local! {
    static UTF8: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `t` as UTF-8 in `buf` (its old contents dropped), surrogates as in [`with_utf8`].
fn utf8_into<'b>(t: Text<'_>, buf: &'b mut Vec<u8>) -> &'b str {
    buf.clear();
    match t {
        Text::U8(u) => write_latin1(u, buf),
        Text::U16(u) => write_utf8(u, 3, buf),
        Text::U32(u) => write_utf8(u, 4, buf),
    }
    // Every code point written is a scalar value (surrogates were replaced or paired) and
    // Python's code points are at most U+10FFFF; checked anyway (SIMD: cheap), not assumed.
    simdutf8::basic::from_utf8(buf).expect("UTF-8 made from code points")
}

/// Append the UTF-8 of Latin-1 text to `buf` without a branch per character: both bytes of a
/// two-byte form are always written and the length moves by one or two, since text that
/// mixes ASCII with other Latin-1 letters at random would mispredict most such branches.
fn write_latin1(t: &[u8], buf: &mut Vec<u8>) {
    buf.reserve(2 * t.len());
    let start = buf.len();
    // SAFETY: 2 * t.len() bytes are reserved past `start`; character i writes bytes n and
    // n + 1 with n <= 2 * i, so within the room; the length is set to the bytes that belong to
    // the text (a second byte written after an ASCII character is overwritten or left beyond
    // it), all initialized.
    unsafe {
        let p = buf.as_mut_ptr().add(start);
        let mut n = 0;
        for &b in t {
            let wide = usize::from(b >> 7);
            *p.add(n) = if wide == 1 { 0xC0 | (b >> 6) } else { b };
            *p.add(n + 1) = 0x80 | (b & 0x3F);
            n += 1 + wide;
        }
        buf.set_len(start + n);
    }
}

/// Append the UTF-8 of `t` to `buf`, at most `per_unit` bytes for each of its units.
///
/// Writes through a pointer into room reserved first: the per-byte checks of `Vec::push` cost
/// more than the rest of the loop, which runs once per character of every text of a batch. A
/// character of one to three bytes is one four-byte store, its length chosen without a
/// branch: text of an Indic script mixes three-byte letters with ASCII spaces and
/// punctuation, and a branch on each character's length would be mispredicted at most word
/// ends.
#[inline(always)]
fn write_utf8<U: Unit>(t: &[U], per_unit: usize, buf: &mut Vec<u8>) {
    // (one byte more: the store of a character's bytes is four wide)
    buf.reserve(per_unit * t.len() + 1);
    let start = buf.len();
    // SAFETY: `per_unit * t.len() + 1` bytes are reserved past `start`. Unit i starts writing
    // at n <= per_unit * i (a unit writes at most three bytes, but a UCS-4 unit above U+FFFF,
    // four where `per_unit` is 4, and a surrogate pair, four for two units), and its writes,
    // the four-byte store included, end within per_unit * i + 4 <= per_unit * t.len() + 1; the
    // length is set to the bytes that belong to the text, all written.
    unsafe {
        let p = buf.as_mut_ptr().add(start);
        let mut n = 0;
        let mut i = 0;
        while i < t.len() {
            let mut c = t[i].cp();
            // (one branch on both, not one on each: a space before a letter of an Indic script
            // would mispredict the first)
            let next = t.get(i + 1).map_or(0x80, |u| u.cp());
            if (c | next) < 0x80 {
                // Text stored in 2 or 4 bytes a character is mostly ASCII when it is a Latin
                // script with a few quotes or dashes: sixteen ASCII units at a time then, or
                // eight.
                if let Some(sixteen) = t[i..].first_chunk::<16>() {
                    if let Some(bytes) = U::ascii16(sixteen) {
                        std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(n), 16);
                        n += 16;
                        i += 16;
                        continue;
                    }
                }
                if let Some(eight) = t.get(i..i + 8) {
                    if eight.iter().fold(0, |any, u| any | u.cp()) < 0x80 {
                        for (k, u) in eight.iter().enumerate() {
                            *p.add(n + k) = u.cp() as u8;
                        }
                        n += 8;
                        i += 8;
                        continue;
                    }
                }
            }
            i += 1;
            if c < 0xD800 || (0xE000..0x10000).contains(&c) {
                let one = c;
                let two = 0x80C0 | (c >> 6) | ((c & 0x3F) << 8);
                let three = 0x80_80E0 | (c >> 12) | (((c >> 6) & 0x3F) << 8) | ((c & 0x3F) << 16);
                let bytes = if c < 0x80 {
                    one
                } else if c < 0x800 {
                    two
                } else {
                    three
                };
                std::ptr::write_unaligned(p.add(n).cast::<[u8; 4]>(), bytes.to_le_bytes());
                n += 1 + usize::from(c >= 0x80) + usize::from(c >= 0x800);
                continue;
            }
            if (0xD800..0xE000).contains(&c) {
                let low = t.get(i).map_or(0, |u| u.cp());
                if c < 0xDC00 && (0xDC00..0xE000).contains(&low) {
                    i += 1;
                    c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
                } else {
                    c = 0xFFFD;
                }
            }
            if c < 0x10000 {
                // the replacement character
                *p.add(n) = 0xE0 | (c >> 12) as u8;
                *p.add(n + 1) = 0x80 | ((c >> 6) & 0x3F) as u8;
                *p.add(n + 2) = 0x80 | (c & 0x3F) as u8;
                n += 3;
            } else {
                *p.add(n) = 0xF0 | (c >> 18) as u8;
                *p.add(n + 1) = 0x80 | ((c >> 12) & 0x3F) as u8;
                *p.add(n + 2) = 0x80 | ((c >> 6) & 0x3F) as u8;
                *p.add(n + 3) = 0x80 | (c & 0x3F) as u8;
                n += 4;
            }
        }
        buf.set_len(start + n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_and_replaces_surrogates() {
        let t: Vec<u16> = vec![0x61, 0xD83D, 0xDE00, 0xD800, 0x62, 0xDC00];
        assert_eq!(
            with_utf8(Text::U16(&t), |s| s.to_string()),
            "a\u{1F600}\u{FFFD}b\u{FFFD}"
        );
        let t: Vec<u8> = vec![0x63, 0xE9];
        assert_eq!(with_utf8(Text::U8(&t), |s| s.to_string()), "c\u{E9}");
        assert_eq!(with_utf8(Text::U8(b"plain"), |s| s.to_string()), "plain");
        // Runs of ASCII of every length around other characters (the eight-unit path).
        let mut t: Vec<u16> = Vec::new();
        for n in 0..40u16 {
            t.extend((0..n).map(|k| 0x61 + k % 26));
            t.push(if n % 3 == 0 { 0x2019 } else { 0xE9 });
        }
        let want = String::from_utf16(&t).unwrap();
        assert_eq!(with_utf8(Text::U16(&t), |s| s.to_string()), want);
        let wide: Vec<u32> = t.iter().map(|&u| u32::from(u)).collect();
        assert_eq!(with_utf8(Text::U32(&wide), |s| s.to_string()), want);
        // Every code point below U+10000 but the surrogates, between ASCII and two-byte ones
        // (each length after each other), and at the very end (the last four-byte store).
        let every: Vec<u16> = (0..=0xFFFFu16)
            .filter(|c| !(0xD800..0xE000).contains(c))
            .flat_map(|c| [c, 0x20, c, 0xE9])
            .collect();
        for t in [&every[..], &every[every.len() - 5..], &[0x0DC1u16][..]] {
            let want = String::from_utf16(t).unwrap();
            assert_eq!(with_utf8(Text::U16(t), |s| s.to_string()), want);
            let wide: Vec<u32> = t.iter().map(|&u| u32::from(u)).collect();
            assert_eq!(with_utf8(Text::U32(&wide), |s| s.to_string()), want);
        }
        let t: Vec<u32> = vec![0x1F600, 0xDC00, 0x41];
        assert_eq!(
            with_utf8(Text::U32(&t), |s| s.to_string()),
            "\u{1F600}\u{FFFD}A"
        );
    }
}
