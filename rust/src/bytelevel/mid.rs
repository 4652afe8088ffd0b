//! tiktoken's merge rule on a piece of medium length, with a heap kept on the stack.
//!
//! The short merge ([`ByteLevel::merge_short`]) scans every pair's rank for the lowest one
//! before each merge: O(n²) in the piece's length, and the fastest way for words of one- and
//! two-byte characters. A word of three-byte characters (most Indic scripts) is 20 to 60
//! bytes of which every byte merges, and there the scan is most of the time. This merge
//! keeps the pairs' ranks in a binary heap instead, in fixed arrays on the stack (no
//! allocation, unlike [`ByteLevel::merge_heap`] for longer parts). The positions, links and
//! result are those of the short merge, so the two give the same units. It does not cut,
//! cache or look whole pieces up.

use super::ranks::{heap, MAX_SHORT};
use super::{ByteLevel, NO_TOKEN};

/// Pieces longer than this (up to [`MAX_SHORT`] bytes) are merged here; a scan costs less
/// below it (docs/benchmarks.md has the measurements).
pub const MIN_MID: usize = 16;

/// At most one key per pair at the start and two more per merge.
const CAP: usize = 3 * MAX_SHORT;

/// A [`heap`] of `rank << 8 | position` keys in a fixed array: the lowest key is the lowest rank,
/// leftmost among equals, which is the rule's next merge.
struct StackHeap {
    keys: [u64; CAP],
    len: usize,
}

impl StackHeap {
    #[inline(always)]
    fn push(&mut self, key: u64) {
        heap::push(&mut self.keys, self.len, key);
        self.len += 1;
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let top = heap::pop(&mut self.keys, self.len);
        self.len -= 1;
        Some(top)
    }
}

impl ByteLevel {
    /// The units of `piece` (2 to [`MAX_SHORT`] bytes, ranks rule) after every merge, into
    /// `units`, as [`Self::merge_short`] gives them.
    ///
    /// A key whose part has merged since, or whose pair has changed, is skipped when it comes
    /// up: the slot's current rank differs (a part only grows, so its pair is then a longer
    /// token, never the same id).
    pub(super) fn merge_mid(&self, piece: &[u8], units: &mut Vec<u32>) {
        let n = piece.len();
        debug_assert!((2..=MAX_SHORT).contains(&n));
        // As in merge_short: the part starting at byte i ends at next[i], follows the part at
        // prev[i] and is unit id[i]; rank[i] is the token it and the next part make.
        let mut next = [0u8; MAX_SHORT];
        let mut prev = [0u8; MAX_SHORT];
        let mut id = [0u32; MAX_SHORT];
        let mut rank = [NO_TOKEN; MAX_SHORT];
        let mut heap = StackHeap {
            keys: [0; CAP],
            len: 0,
        };
        let key = |r: u32, i: usize| (u64::from(r) << 8) | i as u64;
        for (i, &b) in piece.iter().enumerate() {
            next[i] = i as u8 + 1;
            prev[i] = (i as u8).wrapping_sub(1);
            id[i] = self.byte_units[usize::from(b)];
        }
        for i in 0..n - 1 {
            let r = self.byte_pairs[(usize::from(piece[i]) << 8) | usize::from(piece[i + 1])];
            rank[i] = r;
            if r != NO_TOKEN {
                heap.keys[heap.len] = key(r, i);
                heap.len += 1;
            }
        }
        heap.keys[..heap.len].sort_unstable(); // a sorted array is a heap
        while let Some(k) = heap.pop() {
            let (r, at) = ((k >> 8) as u32, (k & 0xff) as usize);
            if rank[at] != r {
                continue; // stale
            }
            // The part at `at` and the next one, j, become one, ending where k starts.
            let j = usize::from(next[at]);
            let k = usize::from(next[j]);
            id[at] = r;
            next[at] = k as u8;
            rank[j] = NO_TOKEN;
            rank[at] = if k < n {
                prev[k] = at as u8;
                let r2 = self.rank_of(&piece[at..usize::from(next[k])]);
                if r2 != NO_TOKEN {
                    heap.push(key(r2, at));
                }
                r2
            } else {
                NO_TOKEN
            };
            if at > 0 {
                let p = usize::from(prev[at]);
                let r2 = self.rank_of(&piece[p..k]);
                rank[p] = r2;
                if r2 != NO_TOKEN {
                    heap.push(key(r2, p));
                }
            }
        }
        units.clear();
        let mut i = 0;
        while i < n {
            units.push(id[i]);
            i = usize::from(next[i]);
        }
    }
}
