//! A piece's key in the memo's tables: a short piece [`pack`]ed into two words (read from the
//! text where 16 bytes are left), a longer one as a [`LongKey`] of up to seven words
//! ([`pack_long`]), both masked past the piece's end. It does not choose a pair or look a key up
//! (the tables do, in [`super::slots`]).

use super::{KEY, LONGEST_KEY, LONGEST_WORDS, LONG_KEY};
use crate::bytelevel::table::{load_le, Packed};

/// `piece` packed, read as the 16 bytes at `at` in `text` (where the piece starts) and masked,
/// without a branch on its length where 16 bytes are left; [`Packed::new`] near the end.
#[inline(always)]
pub fn pack(text: &[u8], at: usize, piece: &[u8]) -> Packed {
    // (`at` is any number for a piece outside `text`: `get` then finds no window.)
    let window = text.get(at..).and_then(|rest| rest.get(..KEY));
    match window {
        Some(window) if (1..=KEY).contains(&piece.len()) => {
            let mut word = [0u8; KEY];
            word.copy_from_slice(window);
            Packed::from_window(word, piece.len())
        }
        _ => Packed::new(piece),
    }
}

/// A piece of up to [`LONGEST_KEY`] bytes as little-endian words, zero past its end (the first
/// four of them the long table's key): one longer than [`KEY`], or a short one whose ids a
/// longer table keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongKey {
    pub(super) words: [u64; LONGEST_WORDS],
    pub(super) len: u32,
}

impl LongKey {
    /// A short piece's key in the longer tables.
    #[inline(always)]
    pub fn of_short(p: Packed) -> LongKey {
        let mut words = [0u64; LONGEST_WORDS];
        words[..2].copy_from_slice(&short_key(p));
        LongKey { words, len: p.len }
    }

    /// The long table's key: the piece's first four words.
    #[inline(always)]
    pub(super) fn long(&self) -> &[u64; 4] {
        self.words.first_chunk().unwrap()
    }
}

/// `piece` (at `at` in `text`, as for [`pack`]) as a [`LongKey`], or None when it is too long
/// or short for the long tables.
#[inline(always)]
pub fn pack_long(text: &[u8], at: usize, piece: &[u8]) -> Option<LongKey> {
    let len = piece.len();
    let words = if KEY < len && len <= LONG_KEY {
        // The long table's pieces (most words of most Indic scripts) read only what they need.
        let four: [u64; 4] = words_of(text, at, piece);
        let mut words = [0u64; LONGEST_WORDS];
        words[..4].copy_from_slice(&four);
        words
    } else if LONG_KEY < len && len <= LONGEST_KEY {
        words_of(text, at, piece)
    } else {
        return None;
    };
    Some(LongKey {
        words,
        len: len as u32,
    })
}

/// `piece` (at `at` in `text`) as `N` words, read as the `8 * N` bytes at `at` where there are
/// as many, and masked past its end.
#[inline(always)]
pub(super) fn words_of<const N: usize>(text: &[u8], at: usize, piece: &[u8]) -> [u64; N] {
    let len = piece.len();
    let mut words = [0u64; N];
    let window = text.get(at..).and_then(|rest| rest.get(..8 * N));
    for (k, word) in words.iter_mut().enumerate() {
        let w = match window {
            Some(window) => u64::from_le_bytes(window[8 * k..8 * k + 8].try_into().unwrap()),
            None => load_le(piece.get(8 * k..).map_or(&[], |b| &b[..b.len().min(8)])),
        };
        // bits of this word inside the piece: 64, 64, then what is left
        let bits = (8 * len).saturating_sub(64 * k).min(64);
        *word = if bits == 64 {
            w
        } else {
            w & ((1u64 << bits) - 1)
        };
    }
    words
}

/// A short piece's key in the short table's two words.
#[inline(always)]
pub(super) fn short_key(p: Packed) -> [u64; 2] {
    [p.key as u64, (p.key >> 64) as u64]
}
