//! tiktoken's merge rule on one short piece, by byte positions.
//!
//! Under the ranks rule, two adjacent parts of a piece merge if their concatenated bytes are a
//! token, and the token's id is the merge's rank. The concatenation of two adjacent parts is a
//! slice of the piece itself, so it can be looked up directly, without first fetching each
//! part's bytes by id from a table of megabytes (what the general loop in [`crate::merge`],
//! driven by ids, has to do). Pieces longer than [`MAX_SHORT`] bytes are cut where no token
//! can span, and parts longer than that take the heap of [`super::mid`] (on the stack up to
//! [`MAX_HEAP`] bytes, in memory up to [`MAX_LONG_HEAP`]) or buckets swept rank by rank, all
//! by byte positions too; the short merge is O(n²) in the piece's
//! length, and fastest for words.
//!
//! The cuts of long pieces are in `cuts`, the parts a merge by byte positions starts from (and
//! the lookups of their ranks) in `parts`, the rank buckets' sweep in `sweep`; this module holds
//! the short merge and the lengths that choose between them.

mod cuts;
mod parts;
mod sweep;
#[cfg(test)]
mod tests;

pub use cuts::{window4_bit, WINDOW4_BITS};
pub(super) use parts::Padded;

use super::mid::MIN_MID;
use super::table::PACKED;
use super::{ByteLevel, NO_TOKEN};

/// Longest piece merged here.
pub const MAX_SHORT: usize = 64;
/// Pieces up to this many bytes are merged whole, without asking whether to cut them
/// ([`ByteLevel::worth_cutting`]): two or three characters, where a cut saves little.
pub const MIN_CUT: usize = 8;
/// Longest part of a long piece merged with a heap ([`ByteLevel::merge_heap`]); longer ones
/// take rank buckets ([`ByteLevel::merge_sweep`]), whose setup (a hash map, a heap of ranks,
/// lists) costs more than the merging of shorter parts, while the heap's pops cost more on
/// longer ones (docs/benchmarks.md: random whitespace, whose parts are of all lengths).
pub const MAX_HEAP: usize = 192;
// The stack heap keeps byte positions in a u8.
const _: () = assert!(MAX_HEAP < 256);
/// Longest part merged with a heap in memory ([`ByteLevel::merge_heap_long`]); longer ones take
/// rank buckets ([`ByteLevel::merge_sweep`]), whose linear passes cost less than the heap's pops
/// once the heap outgrows the caches, and so do parts of few distinct byte pairs, where ranks
/// repeat and each bucket is a long run taken in one pass (see [`ByteLevel::suits_heap`];
/// docs/benchmarks.md: words of random letters, DNA, a short string repeated).
pub const MAX_LONG_HEAP: usize = 1 << 14;
/// Longest part of fewer than [`MANY_PAIRS`] distinct byte pairs (and at least [`FEW_PAIRS`])
/// merged with the heap in memory.
const MAX_FEW_HEAP: usize = 1 << 12;
/// Distinct byte pairs a part needs for the heap in memory up to [`MAX_LONG_HEAP`] bytes.
const MANY_PAIRS: u32 = 32;
/// Distinct byte pairs a part needs for the heap in memory at all.
const FEW_PAIRS: u32 = 12;

impl ByteLevel {
    /// Whether a part of more than [`MAX_HEAP`] bytes is merged by the heap in memory rather
    /// than the rank buckets: by its length and about how many distinct byte pairs it holds (a
    /// cheap measure of how many ranks its merges have: the buckets win where few ranks repeat,
    /// as in a short string repeated; pairs are counted in 1,024 slots, so two may share one).
    pub(super) fn suits_heap(part: &[u8]) -> bool {
        if part.len() > MAX_LONG_HEAP {
            return false;
        }
        let mut seen = [0u64; 16];
        for w in part.windows(2) {
            let slot = (usize::from(w[0]) * 31 + usize::from(w[1])) & 1023;
            seen[slot >> 6] |= 1 << (slot & 63);
        }
        let distinct: u32 = seen.iter().map(|w| w.count_ones()).sum();
        distinct >= MANY_PAIRS || (distinct >= FEW_PAIRS && part.len() <= MAX_FEW_HEAP)
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
