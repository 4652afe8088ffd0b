//! tiktoken's merge rule on one short piece, by byte positions.
//!
//! Under the ranks rule, two adjacent parts of a piece merge if their concatenated bytes are a
//! token, and the token's id is the merge's rank. The concatenation of two adjacent parts is a
//! slice of the piece itself, so it can be looked up directly, without first fetching each
//! part's bytes by id from a table of megabytes (what the general loop in [`crate::merge`],
//! driven by ids, has to do). Pieces longer than [`MAX_SHORT`] bytes are cut where no token
//! can span, and parts longer than that take the heap on the stack of [`super::mid`] (up to
//! [`MAX_HEAP`] bytes) or buckets
//! swept rank by rank, both by byte positions too; the short merge is O(n²) in the piece's
//! length, and fastest for words.

use super::mid::MIN_MID;
use super::table::{Packed, PACKED};
use super::two_byte::TwoByte;
use super::{ByteLevel, NO_TOKEN};
use crate::memory::{self, NoMemory};
use crate::merge::RankBuckets;

/// Longest piece merged here.
pub const MAX_SHORT: usize = 64;
/// Pieces up to this many bytes are merged whole, without asking whether to cut them
/// ([`ByteLevel::worth_cutting`]): two or three characters, where a cut saves little.
pub const MIN_CUT: usize = 8;
/// Longest part of a long piece merged with a heap ([`ByteLevel::merge_heap`]); longer ones
/// take rank buckets ([`ByteLevel::merge_sweep`]), whose setup (a hash map, a heap of ranks,
/// lists) costs more than the merging below about 200 bytes, while the heap's pops cost more
/// above (measured on random whitespace, whose parts are of all lengths).
pub const MAX_HEAP: usize = 192;
// The stack heap keeps byte positions in a u8.
const _: () = assert!(MAX_HEAP < 256);

/// Bits of the hashed set of four-byte token windows (`ByteLevel::windows4`).
pub const WINDOW4_BITS: u32 = 24;

/// The bit of four bytes in `ByteLevel::windows4`.
#[inline(always)]
pub fn window4_bit(w: &[u8]) -> usize {
    let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
    (v.wrapping_mul(0x9E37_79B1) >> (32 - WINDOW4_BITS)) as usize
}

/// A piece copied with [`PACKED`] bytes of slack after it (`M` is the longest piece plus
/// that), so that a part of up to [`PACKED`] bytes is read as one unaligned 16-byte load and a
/// mask. Packing a slice of the piece itself branches on its length, and in a merge the
/// lengths of the parts looked up change at random, so those branches are mispredicted often.
pub(super) struct Padded<const M: usize> {
    bytes: [u8; M],
}

impl<const M: usize> Padded<M> {
    /// `piece` (at most `M - PACKED` bytes), padded.
    #[inline(always)]
    pub(super) fn new(piece: &[u8]) -> Self {
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
    /// [`Self::rank_of`] for bytes `start..end` (three or more) of `piece`, held in `padded`.
    #[inline(always)]
    pub(super) fn rank_in<const M: usize>(
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
    pub(super) fn rank_of(&self, bytes: &[u8]) -> u32 {
        match bytes.len() {
            2 => self.byte_pairs[(usize::from(bytes[0]) << 8) | usize::from(bytes[1])],
            n if n <= PACKED => self
                .encoder
                .get_packed_rare(Packed::new(bytes))
                .unwrap_or(NO_TOKEN),
            _ => self.encoder.get(bytes).unwrap_or(NO_TOKEN),
        }
    }

    /// Whether a piece of more than [`MIN_CUT`] and up to [`MAX_SHORT`] bytes is to be cut where
    /// no token can span before it is merged ([`Self::merge_long`]), as longer ones are: where a
    /// script's characters are tokens that no longer token joins (Odia in o200k_base), each
    /// character is then merged alone, not every byte pair of the word in one scan or heap.
    /// Asked at one place only, the first character boundary from the middle on, so that a word
    /// of any other script pays a load or three.
    #[inline]
    pub(super) fn worth_cutting(&self, piece: &[u8]) -> bool {
        let mut p = piece.len() / 2;
        while p < piece.len() && piece[p] & 0xC0 == 0x80 {
            p += 1;
        }
        0 < p && p < piece.len() && self.can_cut(piece, p)
    }

    /// Whether no token can ever span byte `p` of `piece` (0 < p < len): under either rule a
    /// merge makes a token, and a token across `p` would hold bytes `p - 1` and `p`: as the
    /// whole two-byte token, or inside one of the three-byte windows around them.
    #[inline(always)]
    fn can_cut(&self, piece: &[u8], p: usize) -> bool {
        let pair = (usize::from(piece[p - 1]) << 8) | usize::from(piece[p]);
        if self.byte_pairs[pair] != NO_TOKEN {
            return false; // the common case inside runs that merge: decided in one load
        }
        let window = |i: usize| {
            let bit = (usize::from(piece[i]) << 16)
                | (usize::from(piece[i + 1]) << 8)
                | usize::from(piece[i + 2]);
            self.windows[bit / 64] & (1 << (bit % 64)) != 0
        };
        (p < 2 || !window(p - 2)) && (p + 1 >= piece.len() || !window(p - 1))
    }

    /// [`Self::can_cut`] looking further, where that said no: a token across `p` of three
    /// bytes is one of those two windows itself, and a longer one holds one of the (up to)
    /// three four-byte windows that contain bytes `p - 1` and `p`. Random whitespace, whose
    /// three-byte windows all occur in tokens, is cut here. Asked only inside parts longer
    /// than [`MAX_SHORT`]: elsewhere (CJK) the lookups cost more than they save.
    fn can_cut_fine(&self, piece: &[u8], p: usize) -> bool {
        let pair = (usize::from(piece[p - 1]) << 8) | usize::from(piece[p]);
        if self.byte_pairs[pair] != NO_TOKEN {
            return false;
        }
        let window4 = |a: usize| {
            let bit = window4_bit(&piece[a..a + 4]);
            self.windows4[bit / 64] & (1 << (bit % 64)) != 0
        };
        // The four-byte windows first: a bit each, where the tokens are lookups.
        if (p.saturating_sub(3)..p).any(|a| a + 4 <= piece.len() && window4(a)) {
            return false;
        }
        (p < 2 || self.rank_of(&piece[p - 2..=p]) == NO_TOKEN)
            && (p + 1 >= piece.len() || self.rank_of(&piece[p - 1..=p + 1]) == NO_TOKEN)
    }

    /// The units of a long `piece` after every merge, into `units`: see
    /// [`Self::merge_in_parts`]; each part takes [`ByteLevel::merge_plain`] (under the ranks rule
    /// a short scan up to [`MAX_SHORT`] bytes, a heap up to [`MAX_HEAP`], rank buckets above). A
    /// run of text no token spans (a piece of characters the vocabulary never joins) thus costs
    /// short merges only.
    #[cfg(test)]
    pub(super) fn merge_long(&self, piece: &[u8], units: &mut Vec<u32>) {
        self.try_merge_long(piece, units)
            .unwrap_or_else(|e| e.abort())
    }

    /// [`Self::merge_long`], where memory that cannot be had is an error.
    pub(super) fn try_merge_long(
        &self,
        piece: &[u8],
        units: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        self.merge_in_parts(piece, units, |bytes, out, part| match self.rule {
            // Each part's units straight onto the piece's: copying one or two ids a part would be
            // a call to memcpy each (a piece of random CJK is cut at nearly every character).
            // A part of up to four bytes (a character of random CJK, which such a piece is cut
            // at) from the byte and token tables, as a short piece is.
            super::Rule::Ranks => {
                if self.tiny_part(bytes, out) {
                    return Ok(());
                }
                self.try_merge_onto(bytes, out)
            }
            // The merges rule's loop merges a whole `Vec`: the first part (the whole piece, where
            // there is no cut) into `out` itself, the others beside it.
            super::Rule::Merges(_) if out.is_empty() => self.try_merge_plain(bytes, out),
            super::Rule::Merges(_) => {
                self.try_merge_plain(bytes, part)?;
                memory::extend(out, part)
            }
        })
    }

    /// The units of a long `piece` after every merge, into `units`, under either rule: a run of
    /// one repeated byte is merged run by run ([`super::runs`]); any other piece is cut where no
    /// token can span (see [`Self::can_cut`]), and `merge` merges each part alone and appends
    /// its units to the `Vec` it is given (the third argument, a scratch `Vec`, is its own).
    /// Merges never cross a cut, so the result is the whole piece's.
    pub(super) fn merge_in_parts(
        &self,
        piece: &[u8],
        units: &mut Vec<u32>,
        merge: impl Fn(&[u8], &mut Vec<u32>, &mut Vec<u32>) -> Result<(), NoMemory>,
    ) -> Result<(), NoMemory> {
        units.clear();
        if piece.len() >= super::runs::MIN_RUN
            && piece.iter().all(|&b| b == piece[0])
            && self.merge_run(piece[0], piece.len(), units)
        {
            return Ok(());
        }
        if let Some(ws) = &self.whitespace {
            if ws.covers(piece) && ws.encode(self, piece, units) {
                return Ok(());
            }
        }
        let mut coarse = (0, false);
        let mut end = self.next_cut(piece, 0, &mut coarse);
        let (mut start, mut part) = (0, Vec::new());
        loop {
            merge(&piece[start..end], units, &mut part)?;
            if end == piece.len() {
                return Ok(());
            }
            start = end;
            end = self.next_cut(piece, start, &mut coarse);
        }
    }

    /// The first place after `start` where `piece` can be cut (see [`Self::can_cut`]), or its
    /// length.
    ///
    /// `coarse.0` is the next cut [`Self::can_cut`] allows (kept between calls): inside a part
    /// longer than [`MAX_SHORT`] up to it, [`Self::can_cut_fine`] looks for one before it, so
    /// every byte is asked about once by each. `coarse.1` says whether some byte pair before `coarse.0` is no token: where every pair
    /// is one (random spaces and newlines), the finer test has nothing to find.
    #[inline(always)]
    fn next_cut(&self, piece: &[u8], start: usize, coarse: &mut (usize, bool)) -> usize {
        if coarse.0 <= start {
            let (mut end, mut open) = (start + 1, false);
            while end < piece.len() && !self.can_cut(piece, end) {
                let pair = (usize::from(piece[end - 1]) << 8) | usize::from(piece[end]);
                open |= self.byte_pairs[pair] == NO_TOKEN;
                end += 1;
            }
            *coarse = (end, open);
        }
        if coarse.1 && coarse.0 - start > MAX_SHORT {
            if let Some(p) = self.fine_cut(piece, start, coarse.0) {
                return p;
            }
        }
        coarse.0
    }

    /// The first cut [`Self::can_cut_fine`] allows between `start` and `end` (out of line: the
    /// loop of [`Self::next_cut`] stays as small as it was without it).
    #[inline(never)]
    fn fine_cut(&self, piece: &[u8], start: usize, end: usize) -> Option<usize> {
        (start + 1..end).find(|&p| self.can_cut_fine(piece, p))
    }

    /// The units of `piece` (ranks rule) after every merge, appended to `units`, by byte positions
    /// like [`Self::merge_heap`], for parts too long for a heap to stay in cache: the positions
    /// of the pairs that can merge are kept in one bucket per rank, and the lowest rank's
    /// bucket is swept left to right (a run of one kind of pair costs a linear pass, not a
    /// heap operation per merge). A merge's new pairs normally rank higher (a token is newer
    /// than its parts); where one ranks the same or lower, the sweep stops and the rest of
    /// the bucket goes back, so the order is the rule's. A position whose part has merged or
    /// whose pair has changed since it was filed is skipped (its current rank differs: a
    /// part only grows, so its pair never spans the same bytes twice).
    #[inline(never)]
    pub(super) fn merge_sweep(&self, piece: &[u8], units: &mut Vec<u32>) -> Result<(), NoMemory> {
        const NONE: u32 = u32::MAX;
        let n = piece.len();
        debug_assert!(n >= 2 && n < NONE as usize);
        // The part starting at byte i (if one does) ends at end[i], follows the part at
        // prev[i], and is unit id[i]; rank[i] is the token it and the part after it make
        // (NO_TOKEN: none, or no part starts at i).
        let mut end: Vec<u32> = memory::filled(0, n)?;
        let mut prev: Vec<u32> = memory::filled(0, n)?;
        let mut id: Vec<u32> = memory::filled(0, n)?;
        for (i, &b) in piece.iter().enumerate() {
            end[i] = i as u32 + 1;
            prev[i] = (i as u32).wrapping_sub(1);
            id[i] = self.byte_units[usize::from(b)];
        }
        let mut rank = memory::filled(NO_TOKEN, n)?;
        let mut queue = RankBuckets::default();
        for i in 0..n - 1 {
            let r = self.byte_pairs[(usize::from(piece[i]) << 8) | usize::from(piece[i + 1])];
            rank[i] = r;
            if r != NO_TOKEN {
                queue.push(r, i as u32)?;
            }
        }
        let mut round: Vec<u32> = Vec::new();
        while let Some(r) = queue.next_round(&mut round) {
            let mut k = 0;
            while k < round.len() {
                let i = round[k] as usize;
                k += 1;
                if rank[i] != r {
                    continue; // stale
                }
                // Parts i and j = its next become one, ending where the part after j starts.
                let j = end[i] as usize;
                let after = end[j] as usize;
                rank[j] = NO_TOKEN;
                end[i] = after as u32;
                id[i] = r;
                let mut lower = false;
                rank[i] = if after < n {
                    prev[after] = i as u32;
                    let r2 = self.rank_of(&piece[i..end[after] as usize]);
                    if r2 != NO_TOKEN {
                        queue.push(r2, i as u32)?;
                        lower |= r2 <= r;
                    }
                    r2
                } else {
                    NO_TOKEN
                };
                let p = prev[i];
                if p != NONE {
                    let r2 = self.rank_of(&piece[p as usize..after]);
                    rank[p as usize] = r2;
                    if r2 != NO_TOKEN {
                        queue.push(r2, p)?;
                        lower |= r2 <= r;
                    }
                }
                if lower {
                    for &rest in &round[k..] {
                        queue.push(r, rest)?;
                    }
                    break;
                }
            }
        }
        let mut i = 0;
        while i < n {
            memory::push(units, id[i])?;
            i = end[i] as usize;
        }
        Ok(())
    }

    /// The parts a merge by byte positions starts from, for `piece` (1 to 255 bytes) held in
    /// `padded`: the part starting at byte `i` (if one does) ends at `next[i]`, follows the part
    /// at `prev[i]`, is unit `id[i]`, and `rank[i]` is the token it and the next part make
    /// (`rank` comes filled with NO_TOKEN). Every byte is a part, but in a word of three-byte
    /// characters, whose characters start merged as far as they merge alone before any merge
    /// across them ([`super::characters`]), and for a two-byte character whose bytes merge
    /// before anything else touches them ([`super::two_byte`]).
    #[inline(always)]
    pub(super) fn start_parts<const M: usize>(
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

    /// The units of `piece` (at most [`MIN_MID`] bytes, ranks rule) after every merge, appended
    /// to `units`: token ids, or pseudo ids of bytes left without a token. (Its arrays are sized
    /// for the pieces it is given: a cold English word is a few bytes, and arrays for 64
    /// were most of its memory writes.)
    ///
    /// Parts are kept in place by the byte they start at, linked to their neighbours, and a
    /// merged part's slot is marked dead rather than removed: the scan for the lowest rank
    /// then reads a few dead slots, which costs less than shifting three arrays per merge.
    pub(super) fn merge_short(&self, piece: &[u8], units: &mut Vec<u32>) {
        let n = piece.len();
        debug_assert!((1..=MIN_MID).contains(&n));
        // The part starting at byte i (if one does) ends at next[i], follows the part at
        // prev[i], and is unit id[i]; rank[i] is the token it and the part after it make
        // (NO_TOKEN: none, or no part starts at i).
        let mut next = [0u8; MIN_MID];
        let mut prev = [0u8; MIN_MID];
        let mut id = [0u32; MIN_MID];
        let mut rank = [NO_TOKEN; MIN_MID];
        let padded = Padded::<{ MIN_MID + PACKED }>::new(piece);
        self.start_parts(&padded, piece, &mut next, &mut prev, &mut id, &mut rank);
        // Slots at or past `end` hold no pair (the last part's rank is NO_TOKEN).
        let mut end = n - 1;
        loop {
            // The lowest rank, leftmost among equals.
            let mut at = 0;
            let mut best = NO_TOKEN;
            for (i, &r) in rank[..end].iter().enumerate() {
                if r < best {
                    best = r;
                    at = i;
                }
            }
            if best == NO_TOKEN {
                break;
            }
            // The part at `at` and the next one, j, become one, ending where k starts.
            let j = usize::from(next[at]);
            let k = usize::from(next[j]);
            id[at] = best;
            next[at] = k as u8;
            rank[j] = NO_TOKEN;
            rank[at] = if k < n {
                prev[k] = at as u8;
                self.rank_in(&padded, piece, at, usize::from(next[k]))
            } else {
                end = at;
                NO_TOKEN
            };
            if at > 0 {
                let p = usize::from(prev[at]);
                rank[p] = self.rank_in(&padded, piece, p, k);
            }
        }
        let mut i = 0;
        while i < n {
            units.push(id[i]);
            i = usize::from(next[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytelevel::{testing, Model, RankPairs};
    use crate::merge::merge_with;
    use crate::pretokenize::named;

    /// Long pieces over an alphabet whose every byte pair but one is a token, and whose every
    /// three-byte window around that pair occurs in some token (as in random whitespace): only
    /// the four-byte windows and the three-byte tokens find the cuts, and tokens across the
    /// pair of each length test that they are not missed.
    #[test]
    fn fine_cuts_equal_the_general_loop() {
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        let tokens = [
            // every pair but "yw", and tokens across "yw" (three bytes on either side, four,
            // five), ranked so that each of them forms somewhere
            "wx", "xy", "ywx", "xyw", "yy", "xx", "yx", "xw", "ww", "wy", "xyy", "xyyw", "yywx",
            "ywxx", "yywxx",
            // the windows around "yw", from tokens that never form ('q' is in no piece)
            "qxywq", "qyywq", "qwywq", "qywxq", "qywyq", "qywwq",
        ];
        for (i, t) in tokens.iter().enumerate() {
            ranks.push((t.as_bytes().to_vec(), 300 + i as u32));
        }
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        let tok = ByteLevel::new(&model).unwrap();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..600 {
            let mut piece = Vec::new();
            while piece.len() < 65 + round % 400 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                piece.push(b"xyw"[(state % 3) as usize]);
            }
            let mut long = Vec::new();
            tok.merge_long(&piece, &mut long);
            let mut units: Vec<u32> = piece.iter().map(|&b| u32::from(b)).collect();
            merge_with(&mut units, &RankPairs { tok: &tok });
            assert_eq!(long, units, "{:?}", String::from_utf8_lossy(&piece));
        }
    }

    /// merge_short and merge_mid against the general loop driven by ids, on every string over a small
    /// alphabet up to length 6, and on long random ones: the same units.
    #[test]
    fn equals_the_general_loop() {
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8)
            .filter(|&b| b != b'z') // a byte without a token of its own
            .map(|b| (vec![b], u32::from(b)))
            .collect();
        for (i, t) in [
            "ab", "bc", "abc", "ca", "aa", "aaa", "cab", "zb", "bz", "abz", "zz", "bcab", "aab",
            // tokens across a byte pair that is no token: only the three-byte windows see them
            "abd", "eab", "dd",
            // across the pair "zd", which is no token, only longer windows see these: the
            // three-byte token "zda", and "dezzd" through the four bytes "ezzd"
            "ez", "dez", "dezz", "dezzd", "da", "zda",
        ]
        .iter()
        .enumerate()
        {
            ranks.push((t.as_bytes().to_vec(), 400 - i as u32 * 3));
        }
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        let tok = ByteLevel::new(&model).unwrap();
        let general = |piece: &[u8]| {
            let mut units: Vec<u32> = piece.iter().map(|&b| tok.byte_units[b as usize]).collect();
            merge_with(&mut units, &RankPairs { tok: &tok });
            units
        };
        // Long pieces: cut where no token can span, each part merged alone; 'd' and 'e' are in
        // no longer token, so pieces with them have cuts, and the rest have few.
        for piece in testing::long_pieces(0x9E37_79B9_7F4A_7C15, 600, 400, [b"abczde", b"abcz"]) {
            let mut long = Vec::new();
            tok.merge_long(&piece, &mut long);
            assert_eq!(
                long,
                general(&piece),
                "{:?}",
                String::from_utf8_lossy(&piece)
            );
        }
        // Words of 9 to 64 bytes, which `encode_piece` cuts like long ones where a cut is found
        // at the middle and merges whole otherwise: both ways give the general loop's units.
        let (mut cut, mut whole) = (0, 0);
        for (k, piece) in testing::long_pieces(0x5851_F42D_4C95_7F2D, 800, 1, [b"abczde", b"abcz"])
            .into_iter()
            .enumerate()
        {
            let piece = &piece[..MIN_CUT + 1 + k % (MAX_SHORT - MIN_CUT)];
            if tok.worth_cutting(piece) {
                cut += 1;
            } else {
                whole += 1;
            }
            let (mut cut_units, mut whole_units) = (Vec::new(), Vec::new());
            tok.merge_long(piece, &mut cut_units);
            tok.merge_plain(piece, &mut whole_units);
            let expected = general(piece);
            assert_eq!(cut_units, expected, "{:?}", String::from_utf8_lossy(piece));
            assert_eq!(
                whole_units,
                expected,
                "{:?}",
                String::from_utf8_lossy(piece)
            );
        }
        assert!(cut > 100 && whole > 100, "cut {cut}, whole {whole}");
        // Each merger of whole parts alone, uncut, from 2 bytes up: the heap, and the sweep,
        // which stops and refiles its bucket where a merge makes a pair of its rank or lower
        // (here tokens rank below their parts).
        let mut next = testing::generator(0x0DDB_1A5E_5BAD_5EED);
        for round in 0..1500 {
            let alphabet: &[u8] = [b"abcz".as_slice(), b"abczde", b"ab"][round % 3];
            let len = 2 + next(if round % 5 == 0 { 1500 } else { 200 }) as usize;
            let piece: Vec<u8> = (0..len)
                .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                .collect();
            let (mut heap, mut sweep) = (Vec::new(), Vec::new());
            tok.merge_sweep(&piece, &mut sweep).unwrap();
            let expected = general(&piece);
            if piece.len() <= MAX_HEAP {
                // (the heap's arrays are sized for the parts it is given)
                tok.merge_heap(&piece, &mut heap);
                assert_eq!(heap, expected, "heap {:?}", String::from_utf8_lossy(&piece));
            }
            assert_eq!(
                sweep,
                expected,
                "sweep {:?}",
                String::from_utf8_lossy(&piece)
            );
        }
        // The short scan, and the heap on the stack (`mid`) from two bytes up.
        let alphabet = b"abcz";
        let (mut short, mut mid) = (Vec::new(), Vec::new());
        let mut check = |piece: &[u8]| {
            let expected = general(piece);
            if piece.len() <= MIN_MID {
                short.clear();
                tok.merge_short(piece, &mut short);
                assert_eq!(short, expected, "{piece:?}");
            }
            if piece.len() >= 2 {
                mid.clear();
                tok.merge_mid(piece, &mut mid);
                assert_eq!(mid, expected, "mid {piece:?}");
            }
        };
        for len in 1..=6u32 {
            for code in 0..4usize.pow(len) {
                let piece: Vec<u8> = (0..len).map(|k| alphabet[(code >> (2 * k)) & 3]).collect();
                check(&piece);
            }
        }
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = 1 + (state % MAX_SHORT as u64) as usize;
            let piece: Vec<u8> = (0..len)
                .map(|k| alphabet[((state >> (k % 60)) & 3) as usize])
                .collect();
            check(&piece);
        }
    }
}
