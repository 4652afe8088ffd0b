//! ASCII runs read a word at a time: the end of a run of ASCII letters eight bytes at a time,
//! and which of sixteen bytes are ASCII whitespace (SSE2 on x86_64). They know no regex and no
//! character classes beyond ASCII: the scanners (`super::scan`) go on from where they stop.

/// The end of the run of ASCII lower-case letters (`any_case`: of ASCII letters) from `i`, eight
/// bytes at a time: a word's end is then found by arithmetic on one or two loads, not by a byte
/// loop whose exit at each word end is a branch the CPU cannot predict.
#[inline(always)]
pub(super) fn ascii_letter_run(s: &[u8], mut i: usize, any_case: bool) -> usize {
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
pub(super) fn ascii_spaces(block: &[u8; 16]) -> (u16, u16) {
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
pub(super) fn ascii_spaces(block: &[u8; 16]) -> (u16, u16) {
    let (mut space, mut newline) = (0u16, 0u16);
    for (k, &b) in block.iter().enumerate() {
        space |= u16::from(b == b' ' || (0x09..=0x0D).contains(&b)) << k;
        newline |= u16::from(b == b'\n' || b == b'\r') << k;
    }
    (space, newline)
}
