//! Text as UTF-8 for the byte-level encoders: a Python `str`'s own storage (PEP 393 units, see
//! [`crate::units`]) written as UTF-8 into a per-thread buffer, lone surrogates replaced as tiktoken
//! does. One implementation for every caller (the byte-level bindings, the meta encoder). This
//! module does not encode.

use crate::memory::{self, NoMemory};
use crate::units::{Text, Unit};

/// `f` of `t` as UTF-8, with each lone surrogate as U+FFFD and a high surrogate followed by a
/// low one as the character the pair stands for: what `wwho.bytelevel.pretokenize.
/// _replace_surrogates` (and tiktoken) do to text that cannot be UTF-8. ASCII is read in place;
/// other text is written into a buffer of this thread's (kept for the next text, up to
/// [`KEEP_UTF8`] bytes). Reads only the string's own storage, so any thread may call it while
/// the caller holds the string. A buffer that memory cannot hold is [`NoMemory`].
pub fn with_utf8<R>(t: Text<'_>, f: impl FnOnce(&str) -> R) -> Result<R, NoMemory> {
    if let Text::U8(b) = t {
        if b.is_ascii() {
            // SAFETY: ASCII is UTF-8.
            return Ok(f(unsafe { std::str::from_utf8_unchecked(b) }));
        }
    }
    UTF8.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            let out = utf8_into(t, &mut buf).map(f);
            if buf.capacity() > KEEP_UTF8 {
                *buf = Vec::new();
            }
            out
        }
        Err(_) => utf8_into(t, &mut Vec::new()).map(f),
    })
}

/// The per-thread buffer of [`with_utf8`] is released when a text needed more than this.
const KEEP_UTF8: usize = 1 << 20;

thread_local! {
    static UTF8: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `t` as UTF-8 in `buf` (its old contents dropped), surrogates as in [`with_utf8`].
fn utf8_into<'b>(t: Text<'_>, buf: &'b mut Vec<u8>) -> Result<&'b str, NoMemory> {
    buf.clear();
    // What the writers reserve, asked for first: so that it is an error, not an abort.
    let most = match t {
        Text::U8(u) => 2 * u.len(),
        Text::U16(u) => 3 * u.len() + 1,
        Text::U32(u) => 4 * u.len() + 1,
    };
    memory::reserve(buf, most)?;
    match t {
        Text::U8(u) => write_latin1(u, buf),
        Text::U16(u) => write_utf8(u, 3, buf),
        Text::U32(u) => write_utf8(u, 4, buf),
    }
    // Every code point written is a scalar value (surrogates were replaced or paired) and
    // Python's code points are at most U+10FFFF; checked anyway (SIMD: cheap), not assumed.
    Ok(simdutf8::basic::from_utf8(buf).expect("UTF-8 made from code points"))
}

/// Append the UTF-8 of Latin-1 text to `buf` without a branch per character: sixteen at a time
/// ([`sixteen_latin1`]), then the rest one at a time with both bytes of a two-byte form always
/// written and the length moved by one or two, since text that mixes ASCII with other Latin-1
/// letters at random would mispredict most branches on a character's length.
fn write_latin1(t: &[u8], buf: &mut Vec<u8>) {
    buf.reserve(2 * t.len());
    let start = buf.len();
    // SAFETY: 2 * t.len() bytes are reserved past `start`; character i is written from byte
    // n <= 2 * i on: sixteen from character i write at most 32 bytes (n + 32 <= 2 * (i + 16)),
    // one writes bytes n and n + 1; the length is set to the bytes that belong to the text
    // (a second byte written after an ASCII character is overwritten or left beyond it), all
    // initialized.
    unsafe {
        let p = buf.as_mut_ptr().add(start);
        let mut n = 0;
        let mut chunks = t.chunks_exact(16);
        for sixteen in &mut chunks {
            n += sixteen_latin1(sixteen.try_into().unwrap(), p.add(n));
        }
        for &b in chunks.remainder() {
            n += put_latin1(p.add(n), b);
        }
        buf.set_len(start + n);
    }
}

/// Write the UTF-8 of sixteen Latin-1 characters at `p`; returns how many bytes belong to them.
///
/// All ASCII: one copy. Otherwise each half is widened to 16-bit lanes, where each character's
/// form (itself, or a lead byte and a continuation byte) and length are worked out for eight at
/// once (SSE2, part of x86_64); only the two-byte stores at each character's place are scalar.
///
/// # Safety
/// `p` must be valid for writes of 32 bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn sixteen_latin1(t: &[u8; 16], p: *mut u8) -> usize {
    use std::arch::x86_64::*;
    let v = _mm_loadu_si128(t.as_ptr().cast());
    if _mm_movemask_epi8(v) == 0 {
        _mm_storeu_si128(p.cast(), v);
        return 16;
    }
    let set = |x: i16| _mm_set1_epi16(x);
    let zero = _mm_setzero_si128();
    let mut n = 0;
    for c in [_mm_unpacklo_epi8(v, zero), _mm_unpackhi_epi8(v, zero)] {
        let wide = _mm_cmpgt_epi16(c, set(0x7F)); // all ones at U+0080 and above
        let lead = _mm_or_si128(_mm_srli_epi16(c, 6), set(0xC0));
        let cont = _mm_slli_epi16(_mm_or_si128(_mm_and_si128(c, set(0x3F)), set(0x80)), 8);
        let two = _mm_or_si128(lead, cont);
        let form = _mm_or_si128(_mm_and_si128(wide, two), _mm_andnot_si128(wide, c));
        let mut forms = [0u16; 8];
        _mm_storeu_si128(forms.as_mut_ptr().cast(), form);
        // 1, plus one where the compare held (a mask of all ones is -1)
        let mut lens = [0u16; 8];
        _mm_storeu_si128(lens.as_mut_ptr().cast(), _mm_sub_epi16(set(1), wide));
        for (form, len) in forms.iter().zip(lens) {
            std::ptr::write_unaligned(p.add(n).cast::<[u8; 2]>(), form.to_le_bytes());
            n += usize::from(len);
        }
    }
    n
}

/// [`sixteen_latin1`] one character at a time, where there is no SSE2.
///
/// # Safety
/// As [`sixteen_latin1`]'s.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn sixteen_latin1(t: &[u8; 16], p: *mut u8) -> usize {
    let mut n = 0;
    for &b in t {
        n += put_latin1(p.add(n), b);
    }
    n
}

/// Write the UTF-8 of Latin-1 character `b` at `p`, both bytes of a two-byte form always (the
/// second is written over next or left past the text); returns how many belong to it.
///
/// # Safety
/// `p` must be valid for writes of two bytes.
#[inline(always)]
unsafe fn put_latin1(p: *mut u8, b: u8) -> usize {
    let wide = usize::from(b >> 7);
    *p = if wide == 1 { 0xC0 | (b >> 6) } else { b };
    *p.add(1) = 0x80 | (b & 0x3F);
    1 + wide
}

/// Append the UTF-8 of `t` to `buf`, at most `per_unit` bytes for each of its units.
///
/// Writes through a pointer into room reserved first: the per-byte checks of `Vec::push` cost
/// more than the rest of the loop, which runs once per character of every text of a batch.
/// Units are taken sixteen at a time where all are ASCII, else eight at a time where none is a
/// surrogate or above U+FFFF ([`eight_plain`]: each character one four-byte store whose length
/// is worked out without a branch, since text of an Indic script mixes three-byte letters with
/// ASCII spaces and punctuation, and a branch on each character's length would be mispredicted
/// at most word ends); one unit at a time otherwise (the last few, surrogates, characters above
/// U+FFFF).
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
            if let Some(eight) = t[i..].first_chunk::<8>() {
                if let Some(sixteen) = t[i..].first_chunk::<16>() {
                    if let Some(bytes) = U::ascii16(sixteen) {
                        std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(n), 16);
                        n += 16;
                        i += 16;
                        continue;
                    }
                }
                if let Some(written) = eight_plain(eight, p.add(n)) {
                    n += written;
                    i += 8;
                    continue;
                }
            }
            let mut c = t[i].cp();
            i += 1;
            if plain(c) {
                n += put_plain(p.add(n), c);
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
                n += put_plain(p.add(n), c); // the replacement character
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

/// Write the UTF-8 of eight units at `p` if every one is [`plain`], and say how many bytes
/// belong to them (each is written as a four-byte store, as by [`put_plain`]); None, with
/// nothing written, otherwise.
///
/// The bytes of all eight are worked out at once in lanes of 16 bits (SSE2, part of x86_64):
/// the first, second and third byte of each character's form (one, two or three bytes, chosen
/// by two compares), interleaved into one four-byte form per character; only the stores at
/// each character's place are scalar.
///
/// # Safety
/// `p` must be valid for writes of 24 bytes and one more.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn eight_plain<U: Unit>(t: &[U; 8], p: *mut u8) -> Option<usize> {
    use std::arch::x86_64::*;
    let c = U::bmp8(t)?;
    let set = |v: i16| _mm_set1_epi16(v);
    let none_of = |bits: i16| _mm_cmpeq_epi16(_mm_and_si128(c, set(bits)), _mm_setzero_si128());
    let surrogate = _mm_cmpeq_epi16(
        _mm_and_si128(c, set(0xF800u16 as i16)),
        set(0xD800u16 as i16),
    );
    if _mm_movemask_epi8(surrogate) != 0 {
        return None;
    }
    let one = none_of(0xFF80u16 as i16); // below U+0080: one byte
    let below_three = none_of(0xF800u16 as i16); // below U+0800: one or two bytes
    let pick = |mask: __m128i, yes: __m128i, no: __m128i| {
        _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no))
    };
    let low6 = _mm_or_si128(_mm_and_si128(c, set(0x3F)), set(0x80));
    let high = _mm_srli_epi16(c, 6);
    let mid6 = _mm_or_si128(_mm_and_si128(high, set(0x3F)), set(0x80));
    let first = pick(
        one,
        c,
        pick(
            below_three,
            _mm_or_si128(high, set(0xC0)),
            _mm_or_si128(_mm_srli_epi16(c, 12), set(0xE0)),
        ),
    );
    let second = pick(below_three, low6, mid6);
    // (a one-byte form's other bytes, and a two-byte form's third, are written over by the
    // next character or left past the text, as by `put_plain`)
    let first_two = _mm_or_si128(first, _mm_slli_epi16(second, 8));
    let mut forms = [0u32; 8];
    _mm_storeu_si128(
        forms.as_mut_ptr().cast(),
        _mm_unpacklo_epi16(first_two, low6),
    );
    _mm_storeu_si128(
        forms.as_mut_ptr().add(4).cast(),
        _mm_unpackhi_epi16(first_two, low6),
    );
    // 3, less one for each compare that held (a mask of all ones is -1)
    let mut lens = [0u16; 8];
    _mm_storeu_si128(
        lens.as_mut_ptr().cast(),
        _mm_add_epi16(set(3), _mm_add_epi16(one, below_three)),
    );
    let mut n = 0;
    for (form, len) in forms.iter().zip(lens) {
        std::ptr::write_unaligned(p.add(n).cast::<[u8; 4]>(), form.to_le_bytes());
        n += usize::from(len);
    }
    Some(n)
}

/// [`eight_plain`] one unit at a time, where there is no SSE2.
///
/// # Safety
/// As [`eight_plain`]'s.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn eight_plain<U: Unit>(t: &[U; 8], p: *mut u8) -> Option<usize> {
    let c = t.map(Unit::cp);
    if !c.iter().all(|&c| plain(c)) {
        return None;
    }
    let mut n = 0;
    for c in c {
        n += put_plain(p.add(n), c);
    }
    Some(n)
}

/// Whether code point `c` is written in one to three bytes: below U+10000 and no surrogate.
#[inline(always)]
fn plain(c: u32) -> bool {
    c < 0x10000 && c & 0xF800 != 0xD800
}

/// Write the one to three bytes of `c` (a [`plain`] code point) at `p` as one four-byte store
/// (the fourth byte is written over next or left past the text); returns how many belong to it.
///
/// # Safety
/// `p` must be valid for writes of four bytes.
#[inline(always)]
unsafe fn put_plain(p: *mut u8, c: u32) -> usize {
    let two = 0x80C0 | (c >> 6) | ((c & 0x3F) << 8);
    let three = 0x80_80E0 | (c >> 12) | (((c >> 6) & 0x3F) << 8) | ((c & 0x3F) << 16);
    let bytes = if c < 0x80 {
        c
    } else if c < 0x800 {
        two
    } else {
        three
    };
    std::ptr::write_unaligned(p.cast::<[u8; 4]>(), bytes.to_le_bytes());
    1 + usize::from(c >= 0x80) + usize::from(c >= 0x800)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytelevel::testing::generator;

    #[test]
    fn random_units_equal_std_at_every_alignment() {
        // Units of every class (ASCII, two and three bytes, high and low surrogates, and in
        // UCS-4 a character above U+FFFF) in random order, from every start and of every length
        // up to 48, so that each class falls at each place of a four-unit block and in the tail.
        // std's lossy conversion of the same text in UTF-16 replaces a lone surrogate and pairs
        // the others as `with_utf8` does.
        let lossy = |units: &[u32]| {
            let mut utf16 = Vec::new();
            for &u in units {
                match char::from_u32(u) {
                    Some(c) if u > 0xFFFF => utf16.extend_from_slice(c.encode_utf16(&mut [0; 2])),
                    _ => utf16.push(u as u16),
                }
            }
            String::from_utf16_lossy(&utf16)
        };
        let mut next = generator(0x2545_F491_4F6C_DD1D);
        let pool: [u32; 9] = [
            0x41, 0x20, 0xE9, 0x5D0, 0xBA4, 0x0DCA, 0xD83D, 0xDE00, 0xFFFF,
        ];
        for _ in 0..200 {
            let units: Vec<u32> = (0..64).map(|_| pool[next(9) as usize]).collect();
            let narrow: Vec<u16> = units.iter().map(|&u| u as u16).collect();
            let wide: Vec<u32> = units
                .iter()
                .map(|&u| if u == 0xFFFF { 0x1F600 } else { u })
                .collect();
            for from in 0..8 {
                for len in 0..48 {
                    let t = &narrow[from..from + len];
                    let want = String::from_utf16_lossy(t);
                    assert_eq!(with_utf8(Text::U16(t), |s| s.to_string()).unwrap(), want);
                    let t = &wide[from..from + len];
                    assert_eq!(
                        with_utf8(Text::U32(t), |s| s.to_string()).unwrap(),
                        lossy(t)
                    );
                }
            }
        }
    }

    #[test]
    fn latin1_equals_std_at_every_alignment() {
        // Bytes of every kind (ASCII, the edges 0x7F/0x80 and 0xFF, others) in random order and
        // in runs of ASCII, from every start and of every length up to 80: every place in and
        // after a block of sixteen.
        let mut next = generator(0x9E37_79B9_7F4A_7C15);
        let pool: [u8; 8] = [0x41, 0x20, 0x00, 0x7F, 0x80, 0xBF, 0xE9, 0xFF];
        for round in 0..300 {
            let bytes: Vec<u8> = (0..96)
                .map(|k| {
                    if round % 3 == 0 && k % 20 != 7 {
                        b'a' // mostly ASCII, as most Latin-1 text
                    } else {
                        pool[next(8) as usize]
                    }
                })
                .collect();
            for from in 0..16 {
                for len in 0..80 {
                    let t = &bytes[from..from + len];
                    let want: String = t.iter().map(|&b| char::from(b)).collect();
                    assert_eq!(with_utf8(Text::U8(t), |s| s.to_string()).unwrap(), want);
                }
            }
        }
    }

    #[test]
    fn pairs_and_replaces_surrogates() {
        let t: Vec<u16> = vec![0x61, 0xD83D, 0xDE00, 0xD800, 0x62, 0xDC00];
        assert_eq!(
            with_utf8(Text::U16(&t), |s| s.to_string()).unwrap(),
            "a\u{1F600}\u{FFFD}b\u{FFFD}"
        );
        let t: Vec<u8> = vec![0x63, 0xE9];
        assert_eq!(
            with_utf8(Text::U8(&t), |s| s.to_string()).unwrap(),
            "c\u{E9}"
        );
        assert_eq!(
            with_utf8(Text::U8(b"plain"), |s| s.to_string()).unwrap(),
            "plain"
        );
        // Runs of ASCII of every length around other characters (the eight-unit path).
        let mut t: Vec<u16> = Vec::new();
        for n in 0..40u16 {
            t.extend((0..n).map(|k| 0x61 + k % 26));
            t.push(if n % 3 == 0 { 0x2019 } else { 0xE9 });
        }
        let want = String::from_utf16(&t).unwrap();
        assert_eq!(with_utf8(Text::U16(&t), |s| s.to_string()).unwrap(), want);
        let wide: Vec<u32> = t.iter().map(|&u| u32::from(u)).collect();
        assert_eq!(
            with_utf8(Text::U32(&wide), |s| s.to_string()).unwrap(),
            want
        );
        // Every code point below U+10000 but the surrogates, between ASCII and two-byte ones
        // (each length after each other), and at the very end (the last four-byte store).
        let every: Vec<u16> = (0..=0xFFFFu16)
            .filter(|c| !(0xD800..0xE000).contains(c))
            .flat_map(|c| [c, 0x20, c, 0xE9])
            .collect();
        for t in [&every[..], &every[every.len() - 5..], &[0x0DC1u16][..]] {
            let want = String::from_utf16(t).unwrap();
            assert_eq!(with_utf8(Text::U16(t), |s| s.to_string()).unwrap(), want);
            let wide: Vec<u32> = t.iter().map(|&u| u32::from(u)).collect();
            assert_eq!(
                with_utf8(Text::U32(&wide), |s| s.to_string()).unwrap(),
                want
            );
        }
        let t: Vec<u32> = vec![0x1F600, 0xDC00, 0x41];
        assert_eq!(
            with_utf8(Text::U32(&t), |s| s.to_string()).unwrap(),
            "\u{1F600}\u{FFFD}A"
        );
    }
}
