//! Text as a slice of code points, whatever its storage.
//!
//! Python keeps a `str` as one code point per element in 1, 2 or 4 bytes (PEP 393); the core
//! reads that storage directly (no UTF-8 conversion, which costs more than syllabifying) and is
//! generic over the element type through [`Unit`]. Positions are therefore code point indices,
//! exactly as Python's. Rust callers with UTF-8 text use [`decode_wtf8`] first.
//!
//! A lone surrogate (U+D800..U+DFFF) is an ordinary code point here, as in Python; its UTF-8
//! form is the 3-byte "surrogatepass" encoding. This module does not tokenize.

/// One element of a text: a code point stored in 1, 2 or 4 bytes.
pub trait Unit: Copy + Send + Sync + 'static {
    fn cp(self) -> u32;
    /// A slice of these units as a [`Text`].
    fn text(t: &[Self]) -> Text<'_>;

    /// The 8 units of `t` as one vector of eight `u16` lanes, if none is above U+FFFF.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn bmp8(t: &[Self; 8]) -> Option<std::arch::x86_64::__m128i> {
        use std::arch::x86_64::_mm_set_epi16;
        if t.iter().any(|u| u.cp() > 0xFFFF) {
            return None;
        }
        let c = t.map(|u| u.cp() as u16 as i16);
        // SAFETY: SSE2 is part of x86_64.
        Some(unsafe { _mm_set_epi16(c[7], c[6], c[5], c[4], c[3], c[2], c[1], c[0]) })
    }

    /// The 16 units of `t` as bytes, if all of them are ASCII.
    #[inline(always)]
    fn ascii16(t: &[Self; 16]) -> Option<[u8; 16]> {
        if t.iter().fold(0, |any, u| any | u.cp()) >= 0x80 {
            return None;
        }
        Some(std::array::from_fn(|k| t[k].cp() as u8))
    }
}

impl Unit for u8 {
    #[inline(always)]
    fn text(t: &[Self]) -> Text<'_> {
        Text::U8(t)
    }

    #[inline(always)]
    fn cp(self) -> u32 {
        u32::from(self)
    }
}

impl Unit for u16 {
    #[inline(always)]
    fn text(t: &[Self]) -> Text<'_> {
        Text::U16(t)
    }

    #[inline(always)]
    fn cp(self) -> u32 {
        u32::from(self)
    }

    /// Two vector loads, one test and one pack (what a Latin-script `str` with a few quotes or
    /// dashes is made of, stored two bytes a character).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn ascii16(t: &[Self; 16]) -> Option<[u8; 16]> {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the loads read the 32 bytes of `t` (unaligned loads),
        // the store writes the 16 of `out`.
        unsafe {
            let lo = _mm_loadu_si128(t.as_ptr().cast());
            let hi = _mm_loadu_si128(t.as_ptr().add(8).cast());
            let high_bits = _mm_and_si128(_mm_or_si128(lo, hi), _mm_set1_epi16(-0x80));
            if _mm_movemask_epi8(_mm_cmpeq_epi8(high_bits, _mm_setzero_si128())) != 0xFFFF {
                return None;
            }
            let mut out = [0u8; 16];
            _mm_storeu_si128(out.as_mut_ptr().cast(), _mm_packus_epi16(lo, hi));
            Some(out)
        }
    }

    /// One load.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn bmp8(t: &[Self; 8]) -> Option<std::arch::x86_64::__m128i> {
        // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of `t`.
        Some(unsafe { std::arch::x86_64::_mm_loadu_si128(t.as_ptr().cast()) })
    }
}

impl Unit for u32 {
    #[inline(always)]
    fn text(t: &[Self]) -> Text<'_> {
        Text::U32(t)
    }

    #[inline(always)]
    fn cp(self) -> u32 {
        self
    }

    /// Two loads, a test and a pack.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn bmp8(t: &[Self; 8]) -> Option<std::arch::x86_64::__m128i> {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the loads read the 32 bytes of `t`.
        unsafe {
            let lo = _mm_loadu_si128(t.as_ptr().cast());
            let hi = _mm_loadu_si128(t.as_ptr().add(4).cast());
            let wide = _mm_or_si128(lo, hi);
            if _mm_movemask_epi8(_mm_cmpeq_epi32(
                _mm_srli_epi32(wide, 16),
                _mm_setzero_si128(),
            )) != 0xFFFF
            {
                return None;
            }
            // Each lane's low 16 bits sign-extended, so that the signed saturating pack keeps them.
            let low16 = |v: __m128i| _mm_srai_epi32(_mm_slli_epi32(v, 16), 16);
            Some(_mm_packs_epi32(low16(lo), low16(hi)))
        }
    }
}

/// A text borrowed in one of the three storages (what a Python `str` holds).
#[derive(Clone, Copy, Debug)]
pub enum Text<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
}

impl Text<'_> {
    pub fn len(&self) -> usize {
        match self {
            Text::U8(t) => t.len(),
            Text::U16(t) => t.len(),
            Text::U32(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Run a generic expression on a [`Text`]: `with_text!(text, t => f(t))`, `t` a `&[U]`.
#[macro_export]
macro_rules! with_text {
    ($text:expr, $t:ident => $body:expr) => {
        match $text {
            $crate::units::Text::U8($t) => $body,
            $crate::units::Text::U16($t) => $body,
            $crate::units::Text::U32($t) => $body,
        }
    };
}

/// How many bytes [`push_utf8`] appends for `cp`.
#[inline]
pub fn utf8_len(cp: u32) -> usize {
    match cp {
        0..=0x7F => 1,
        0x80..=0x7FF => 2,
        0x800..=0xFFFF => 3,
        _ => 4,
    }
}

/// Append the UTF-8 bytes of `cp` (surrogates as their 3-byte form, like Python's
/// "surrogatepass") to `out`. Code points above U+10FFFF do not occur in Python strings.
#[inline]
pub fn push_utf8(cp: u32, out: &mut Vec<u8>) {
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]);
    } else if cp < 0x10000 {
        out.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    }
}

/// The UTF-8 bytes of a code point sequence (surrogatepass).
pub fn to_utf8<U: Unit>(text: &[U]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3);
    for &u in text {
        push_utf8(u.cp(), &mut out);
    }
    out
}

/// Decode UTF-8 that may hold surrogates in their 3-byte form (WTF-8, Python's
/// "surrogatepass") into code points. Returns the byte offset of the first invalid sequence
/// on error.
pub fn decode_wtf8(bytes: &[u8]) -> Result<Vec<u32>, usize> {
    let mut out = Vec::with_capacity(bytes.len());
    decode_wtf8_into(bytes, &mut out)?;
    Ok(out)
}

/// [`decode_wtf8`] appending to `out` (reused buffers in hot loops).
pub fn decode_wtf8_into(bytes: &[u8], out: &mut Vec<u32>) -> Result<(), usize> {
    // simdutf8: several times std's speed on text that is not ASCII (Indic text is 3 bytes a
    // character), and training decodes every distinct piece, the encoders every text.
    if let Ok(s) = simdutf8::basic::from_utf8(bytes) {
        out.extend(s.chars().map(u32::from));
        return Ok(());
    }
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        let b = bytes[i];
        let (len, min) = match b {
            0x00..=0x7F => {
                out.push(u32::from(b));
                i += 1;
                continue;
            }
            0xC2..=0xDF => (2, 0x80),
            0xE0..=0xEF => (3, 0x800),
            0xF0..=0xF4 => (4, 0x10000),
            _ => return Err(i),
        };
        if i + len > n {
            return Err(i);
        }
        let mut cp = u32::from(b) & (0x7F >> len);
        for k in 1..len {
            let c = bytes[i + k];
            if c & 0xC0 != 0x80 {
                return Err(i);
            }
            cp = (cp << 6) | u32::from(c & 0x3F);
        }
        if cp < min || cp > 0x10FFFF {
            return Err(i);
        }
        out.push(cp);
        i += len;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_round_trip_with_surrogates() {
        let cps: Vec<u32> = vec![0x41, 0xE9, 0x0D9A, 0xD800, 0xDFFF, 0x1F642, 0x10FFFF, 0];
        let bytes = to_utf8(&cps);
        assert_eq!(decode_wtf8(&bytes), Ok(cps));
        let s = "ශ්‍රී a 🙂";
        let cps: Vec<u32> = s.chars().map(u32::from).collect();
        assert_eq!(to_utf8(&cps), s.as_bytes());
    }

    #[test]
    fn sixteen_ascii_units_or_none() {
        // One unit of each kind at each place among ASCII: only all-ASCII blocks are taken,
        // and their bytes are the units (the vector pack saturates, so a unit of 0x80 and up
        // must be caught before it).
        for other in [
            0x7Fu16, 0x80, 0xE9, 0xFF, 0x100, 0x17F, 0x2019, 0x7F00, 0x8000, 0xFFFF,
        ] {
            for at in 0..16 {
                let mut t: [u16; 16] = std::array::from_fn(|k| 0x41 + k as u16);
                t[at] = other;
                let want = (other < 0x80).then(|| std::array::from_fn(|k| t[k] as u8));
                assert_eq!(u16::ascii16(&t), want, "{other:#x} at {at}");
                let wide: [u32; 16] = std::array::from_fn(|k| u32::from(t[k]));
                assert_eq!(u32::ascii16(&wide), want, "{other:#x} at {at}");
            }
        }
    }

    #[test]
    fn invalid_utf8_names_the_offset() {
        assert_eq!(decode_wtf8(b"ab\xffc"), Err(2));
        assert_eq!(decode_wtf8(b"ab\xe0\x80\x80"), Err(2)); // overlong
        assert_eq!(decode_wtf8(b"\xe0\xb6"), Err(0)); // truncated
        assert_eq!(decode_wtf8(b"\xf4\x90\x80\x80"), Err(0)); // beyond U+10FFFF
    }
}
