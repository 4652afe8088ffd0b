//! The parts a merge by byte positions starts from: a piece held in [`Padded`] with slack
//! after it, so that a part is packed by one load; the rank of two parts, by bytes or in a
//! padded piece; every byte a part, or a word's characters and a piece's two-byte characters
//! already merged as `characters.rs` and `two_byte.rs` say; and the parts of a long part in
//! memory ([`LongParts`]), which the heap in memory and the rank buckets join. It chooses no
//! merge.

use crate::bytelevel::table::{Packed, PACKED};
use crate::bytelevel::two_byte::TwoByte;
use crate::bytelevel::{ByteLevel, NO_TOKEN};
use crate::memory::{self, NoMemory};

/// No part before (the first part's `prev`).
const NONE: u32 = u32::MAX;

/// The parts of a long part of a piece (up to `u32::MAX` bytes), linked by byte positions in
/// memory, every byte a part at first: the part starting at byte `i` (if one does) ends at
/// `end[i]`, follows the part at `prev[i]` ([`NONE`] for the first), and is unit `id[i]`;
/// `rank[i]` is the token it and the part after it make (NO_TOKEN: none, or no part starts at
/// `i`). The merges that use it choose which pair to join; this joins it.
pub(in crate::bytelevel) struct LongParts {
    end: Vec<u32>,
    prev: Vec<u32>,
    id: Vec<u32>,
    pub rank: Vec<u32>,
}

impl LongParts {
    /// Join the part at `at` (its pair's token `r`) and the next one, and rank the joined part
    /// with the part after it and the part before it with the joined part: `(the part after's
    /// rank, the part before and its rank)`, each NO_TOKEN where no token is.
    #[inline(always)]
    pub fn join(
        &mut self,
        tok: &ByteLevel,
        piece: &[u8],
        at: usize,
        r: u32,
    ) -> (u32, Option<(usize, u32)>) {
        let n = piece.len();
        let j = self.end[at] as usize;
        let after = self.end[j] as usize;
        self.rank[j] = NO_TOKEN;
        self.end[at] = after as u32;
        self.id[at] = r;
        let right = if after < n {
            self.prev[after] = at as u32;
            tok.rank_of(&piece[at..self.end[after] as usize])
        } else {
            NO_TOKEN
        };
        self.rank[at] = right;
        let p = self.prev[at];
        let left = (p != NONE).then(|| {
            let r2 = tok.rank_of(&piece[p as usize..after]);
            self.rank[p as usize] = r2;
            (p as usize, r2)
        });
        (right, left)
    }

    /// The units, in order, appended to `units`.
    pub fn units_into(&self, units: &mut Vec<u32>) -> Result<(), NoMemory> {
        memory::reserve(units, self.id.len())?;
        let mut i = 0;
        while i < self.id.len() {
            units.push(self.id[i]);
            i = self.end[i] as usize;
        }
        Ok(())
    }
}

/// A piece copied with [`PACKED`] bytes of slack after it (`M` is the longest piece plus
/// that), so that a part of up to [`PACKED`] bytes is read as one unaligned 16-byte load and a
/// mask. Packing a slice of the piece itself branches on its length, and in a merge the
/// lengths of the parts looked up change at random, so those branches are mispredicted often.
pub(in crate::bytelevel) struct Padded<const M: usize> {
    bytes: [u8; M],
}

impl<const M: usize> Padded<M> {
    /// `piece` (at most `M - PACKED` bytes), padded.
    #[inline(always)]
    pub(in crate::bytelevel) fn new(piece: &[u8]) -> Self {
        debug_assert!(piece.len() + PACKED <= M);
        let mut bytes = [0u8; M];
        bytes[..piece.len()].copy_from_slice(piece);
        Padded { bytes }
    }

    /// Bytes `start..start + len` (1 <= len <= [`PACKED`]) packed.
    #[inline(always)]
    fn packed(&self, start: usize, len: usize) -> Packed {
        let window: [u8; PACKED] = self.bytes[start..start + PACKED]
            .try_into()
            .expect("PACKED bytes");
        Packed::from_window(window, len)
    }

    /// The first `n` bytes (the piece) and the zeros after them, in whole words of eight: what
    /// [`TwoByte::holds_any`] reads.
    #[inline(always)]
    fn words(&self, n: usize) -> &[u8] {
        &self.bytes[..n.div_ceil(8) * 8]
    }
}

/// A `part(start, end, unit)` that links the parts given to it, in order, into `next` (where
/// each ends), `prev` (the part before it) and `id` (its unit), each kept at the part's start.
#[inline(always)]
fn linker<'a>(
    next: &'a mut [u8],
    prev: &'a mut [u8],
    id: &'a mut [u32],
) -> impl FnMut(usize, usize, u32) + 'a {
    let mut last = u8::MAX;
    move |start, end, unit| {
        next[start] = end as u8;
        prev[start] = last;
        id[start] = unit;
        last = start as u8;
    }
}

impl ByteLevel {
    /// The [`LongParts`] of `piece` (2 bytes or more): every byte a part, each byte pair's rank
    /// set, and `pair(i, rank)` told of each pair that is a token, in order. Memory that cannot
    /// be had is an error.
    pub(in crate::bytelevel) fn long_parts(
        &self,
        piece: &[u8],
        mut pair: impl FnMut(usize, u32) -> Result<(), NoMemory>,
    ) -> Result<LongParts, NoMemory> {
        let n = piece.len();
        debug_assert!(n >= 2 && n < NONE as usize);
        let mut parts = LongParts {
            end: memory::filled(0, n)?,
            prev: memory::filled(0, n)?,
            id: memory::filled(0, n)?,
            rank: memory::filled(NO_TOKEN, n)?,
        };
        for (i, &b) in piece.iter().enumerate() {
            parts.end[i] = i as u32 + 1;
            parts.prev[i] = (i as u32).wrapping_sub(1); // (NONE for the first)
            parts.id[i] = self.byte_units[usize::from(b)];
        }
        for i in 0..n - 1 {
            let r = self.byte_pairs[(usize::from(piece[i]) << 8) | usize::from(piece[i + 1])];
            parts.rank[i] = r;
            if r != NO_TOKEN {
                pair(i, r)?;
            }
        }
        Ok(parts)
    }

    /// [`Self::rank_of`] for bytes `start..end` (three or more) of `piece`, held in `padded`.
    #[inline(always)]
    pub(in crate::bytelevel) fn rank_in<const M: usize>(
        &self,
        padded: &Padded<M>,
        piece: &[u8],
        start: usize,
        end: usize,
    ) -> u32 {
        let len = end - start;
        if len > PACKED {
            return self.encoder.get(&piece[start..end]).unwrap_or(NO_TOKEN);
        }
        self.encoder
            .get_packed_rare(padded.packed(start, len))
            .unwrap_or(NO_TOKEN)
    }

    /// The id of the token `bytes` (two or more bytes), or [`NO_TOKEN`].
    #[inline(always)]
    pub(in crate::bytelevel) fn rank_of(&self, bytes: &[u8]) -> u32 {
        match bytes.len() {
            2 => self.byte_pairs[(usize::from(bytes[0]) << 8) | usize::from(bytes[1])],
            n if n <= PACKED => self
                .encoder
                .get_packed_rare(Packed::new(bytes))
                .unwrap_or(NO_TOKEN),
            _ => self.encoder.get(bytes).unwrap_or(NO_TOKEN),
        }
    }

    /// The parts a merge by byte positions starts from, for `piece` (1 to 255 bytes) held in
    /// `padded`: the part starting at byte `i` (if one does) ends at `next[i]`, follows the part at
    /// `prev[i]`, is unit `id[i]`, and `rank[i]` is the token it and the next part make (`rank`
    /// comes filled with NO_TOKEN). Every byte is a part, but in a word of three-byte characters,
    /// whose characters start merged as far as they merge alone before any merge across them
    /// ([`crate::bytelevel::characters`]), and for a two-byte character whose bytes merge before
    /// anything else touches them ([`crate::bytelevel::two_byte`]).
    #[inline(always)]
    pub(in crate::bytelevel) fn start_parts<const M: usize>(
        &self,
        padded: &Padded<M>,
        piece: &[u8],
        next: &mut [u8],
        prev: &mut [u8],
        id: &mut [u32],
        rank: &mut [u32],
    ) {
        let n = piece.len();
        let ahead = self
            .characters
            .as_ref()
            .and_then(|c| Some((c, c.start(piece)?)));
        let Some((characters, skip)) = ahead else {
            if let Some(two) = &self.two_byte {
                if TwoByte::holds_any(padded.words(n)) {
                    self.start_two_byte(two, padded, piece, next, prev, id, rank);
                    return;
                }
            }
            for (i, &b) in piece.iter().enumerate() {
                next[i] = i as u8 + 1;
                prev[i] = (i as u8).wrapping_sub(1);
                id[i] = self.byte_units[usize::from(b)];
            }
            for i in 0..n - 1 {
                rank[i] = self.byte_pairs[(usize::from(piece[i]) << 8) | usize::from(piece[i + 1])];
            }
            return;
        };
        {
            let mut part = linker(next, prev, id);
            let unit_of = |b: u8| self.byte_units[usize::from(b)];
            if skip == 1 {
                part(0, 1, unit_of(piece[0]));
            }
            characters.parts(piece, skip, unit_of, &mut part);
        }
        // a character started as two parts: its two parts make the character
        self.rank_parts(padded, piece, next, rank, |i, end| {
            (end - i == 3 && i >= skip && (i - skip) % 3 == 0)
                .then(|| characters.whole(&piece[i..end]))
        });
    }

    /// The rank of each part of `piece` with the part after it, linked in `next`, into `rank`:
    /// a byte pair's from the table, `whole(start, end)`'s where it knows the token, else a
    /// lookup.
    #[inline(always)]
    fn rank_parts<const M: usize>(
        &self,
        padded: &Padded<M>,
        piece: &[u8],
        next: &[u8],
        rank: &mut [u32],
        whole: impl Fn(usize, usize) -> Option<u32>,
    ) {
        let n = piece.len();
        let mut i = 0;
        while usize::from(next[i]) < n {
            let j = usize::from(next[i]);
            let end = usize::from(next[j]);
            rank[i] = if end - i == 2 {
                self.byte_pairs[(usize::from(piece[i]) << 8) | usize::from(piece[j])]
            } else if let Some(token) = whole(i, end) {
                token
            } else {
                self.rank_in(padded, piece, i, end)
            };
            i = j;
        }
    }

    /// [`Self::start_parts`] for a piece holding a two-byte character: such characters start
    /// merged where [`TwoByte`] says they may. Out of line, so that the merges of ASCII words
    /// (most cold English pieces) keep their code as it was.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn start_two_byte<const M: usize>(
        &self,
        two: &TwoByte,
        padded: &Padded<M>,
        piece: &[u8],
        next: &mut [u8],
        prev: &mut [u8],
        id: &mut [u32],
        rank: &mut [u32],
    ) {
        two.parts(
            piece,
            |x, y| self.byte_pairs[(usize::from(x) << 8) | usize::from(y)],
            |b| self.byte_units[usize::from(b)],
            linker(next, prev, id),
        );
        self.rank_parts(padded, piece, next, rank, |_, _| None);
    }
}
