//! tiktoken's merge rule with a heap kept on the stack: pieces of medium length, and the parts
//! of long pieces up to [`MAX_HEAP`] bytes; and the same heap in memory for longer parts.
//!
//! The short merge ([`ByteLevel::merge_short`]) scans every pair's rank for the lowest one
//! before each merge: O(n²) in the piece's length, and the fastest way for words of one- and
//! two-byte characters. A word of three-byte characters (most Indic scripts) is 20 to 60
//! bytes of which every byte merges, and there the scan is most of the time. This merge
//! keeps the pairs' ranks in a binary heap instead, in fixed arrays on the stack (no
//! allocation), sized for the longest piece each caller gives it. The positions, links and
//! result are those of the short merge, so the two give the same units. It does not cut,
//! cache or look whole pieces up.

use super::ranks::{Padded, MAX_HEAP, MAX_SHORT};
use super::table::PACKED;
use super::{ByteLevel, NO_TOKEN};
use crate::memory::{self, NoMemory};

/// Pieces longer than this (up to [`MAX_SHORT`] bytes) are merged here; a scan costs less
/// below it (docs/benchmarks.md has the measurements).
pub const MIN_MID: usize = 16;

/// Words up to this many bytes are merged with arrays of this size: the arrays are filled
/// before every merge, and most words of the Indic scripts need half of [`MAX_SHORT`].
const HALF: usize = MAX_SHORT / 2;

/// A binary min-heap of `rank << 8 | position` keys in a fixed array of `CAP` on the stack (or of
/// `rank << 32 | position` keys in a `Vec`, for [`ByteLevel::merge_heap_long`]): the lowest
/// key is the lowest rank, leftmost among equals, which is the rule's next merge. Every slot at
/// or past `len` holds `u64::MAX`, so the top of an empty heap is `u64::MAX` and a node's second
/// child can be read without a bounds test. A pop moves the hole to the bottom choosing the
/// smaller child without a branch on the comparison (std's `BinaryHeap` branches on it, and on
/// merge keys that branch is a coin toss), then sifts the last key up from there: new keys of
/// a merge usually rank above most others, so that sift is a step or two.
struct KeyHeap<S> {
    keys: S,
    len: usize,
}

/// The heap of the merges on the stack.
type StackHeap<const CAP: usize> = KeyHeap<[u64; CAP]>;

impl<const CAP: usize> StackHeap<CAP> {
    fn new() -> Self {
        KeyHeap {
            keys: [u64::MAX; CAP],
            len: 0,
        }
    }
}

impl<S: AsRef<[u64]> + AsMut<[u64]>> KeyHeap<S> {
    /// The lowest key, or `u64::MAX` when empty.
    #[inline(always)]
    fn top(&self) -> u64 {
        self.keys.as_ref()[0]
    }

    #[inline(always)]
    fn push(&mut self, key: u64) {
        let h = self.keys.as_mut();
        let mut hole = self.len;
        self.len += 1;
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if h[parent] <= key {
                break;
            }
            h[hole] = h[parent];
            hole = parent;
        }
        h[hole] = key;
    }

    /// The lower of `run[*taken]` (a sorted run that ends in `u64::MAX`) and the heap's top, taken
    /// from where it is; None when both are spent.
    #[inline(always)]
    fn take_lowest(&mut self, run: &[u64], taken: &mut usize) -> Option<u64> {
        let (next_run, top) = (run[*taken], self.top());
        if next_run < top {
            *taken += 1;
            Some(next_run)
        } else if top != u64::MAX {
            self.pop();
            Some(top)
        } else {
            None
        }
    }

    /// Remove the top key (the heap is not empty).
    #[inline(always)]
    fn pop(&mut self) {
        let h = self.keys.as_mut();
        self.len -= 1;
        let n = self.len;
        let last = h[n];
        h[n] = u64::MAX;
        if n == 0 {
            h[0] = u64::MAX;
            return;
        }
        let (mut hole, mut child) = (0, 1);
        while child < n {
            child += usize::from(h[child + 1] < h[child]);
            h[hole] = h[child];
            hole = child;
            child = 2 * hole + 1;
        }
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if h[parent] <= last {
                break;
            }
            h[hole] = h[parent];
            hole = parent;
        }
        h[hole] = last;
    }
}

impl ByteLevel {
    /// [`Self::merge_stack`] for a piece of 2 to [`MAX_SHORT`] bytes (a word).
    pub(super) fn merge_mid(&self, piece: &[u8], units: &mut Vec<u32>) {
        if piece.len() <= HALF {
            self.merge_stack::<HALF, { 2 * HALF }, { HALF + PACKED }>(piece, units);
        } else {
            self.merge_stack::<MAX_SHORT, { 2 * MAX_SHORT }, { MAX_SHORT + PACKED }>(piece, units);
        }
    }

    /// [`Self::merge_stack`] for a part of 2 to [`MAX_HEAP`] bytes (of a long piece).
    #[inline(never)]
    pub(super) fn merge_heap(&self, piece: &[u8], units: &mut Vec<u32>) {
        self.merge_stack::<MAX_HEAP, { 2 * MAX_HEAP }, { MAX_HEAP + PACKED }>(piece, units);
    }

    /// The units of `piece` (2 to `N` bytes, `N` < 256, ranks rule) after every merge, appended
    /// to `units`, as [`Self::merge_short`] gives them; `CAP` is `2 * N`: the heap holds
    /// at most two keys per merge (fewer than `n`), and one slot past them; `M` is
    /// `N + PACKED` (see [`Padded`]).
    ///
    /// A key whose part has merged since, or whose pair has changed, is skipped when it comes
    /// up: the slot's current rank differs (a part only grows, so its pair is then a longer
    /// token, never the same id).
    #[inline(always)]
    fn merge_stack<const N: usize, const CAP: usize, const M: usize>(
        &self,
        piece: &[u8],
        units: &mut Vec<u32>,
    ) {
        let n = piece.len();
        debug_assert!((2..=N).contains(&n) && N < 256 && CAP >= 2 * N && M == N + PACKED);
        // As in merge_short: the part starting at byte i ends at next[i], follows the part at
        // prev[i] and is unit id[i]; rank[i] is the token it and the next part make.
        let mut next = [0u8; N];
        let mut prev = [0u8; N];
        let mut id = [0u32; N];
        let mut rank = [NO_TOKEN; N];
        // The keys of the byte pairs, sorted once and taken in order, and a heap for the keys
        // merges make: a third of the merges are byte pairs, and taking one from a sorted
        // run costs no sifting.
        let mut run = [u64::MAX; N];
        let (mut run_len, mut taken) = (0, 0);
        let mut heap = StackHeap::<CAP>::new();
        let key = |r: u32, i: usize| (u64::from(r) << 8) | i as u64;
        let padded = Padded::<M>::new(piece);
        self.start_parts(&padded, piece, &mut next, &mut prev, &mut id, &mut rank);
        for (i, &r) in rank[..n - 1].iter().enumerate() {
            if r != NO_TOKEN {
                run[run_len] = key(r, i);
                run_len += 1;
            }
        }
        run[..run_len].sort_unstable(); // (run[run_len] stays u64::MAX: run_len < n <= N)
        while let Some(k) = heap.take_lowest(&run, &mut taken) {
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
                let r2 = self.rank_in(&padded, piece, at, usize::from(next[k]));
                if r2 != NO_TOKEN {
                    heap.push(key(r2, at));
                }
                r2
            } else {
                NO_TOKEN
            };
            if at > 0 {
                let p = usize::from(prev[at]);
                let r2 = self.rank_in(&padded, piece, p, k);
                rank[p] = r2;
                if r2 != NO_TOKEN {
                    heap.push(key(r2, p));
                }
            }
        }
        let mut i = 0;
        while i < n {
            units.push(id[i]);
            i = usize::from(next[i]);
        }
    }

    /// The units of `piece` (2 bytes or more, ranks rule) after every merge, appended to
    /// `units`, by [`Self::merge_stack`]'s heap with its arrays in memory and positions of 32
    /// bits: for the parts of long pieces too long for the stack and short enough for the heap
    /// to beat [`Self::merge_sweep`] (see [`Self::suits_heap`]). Every byte starts as a part, as
    /// in the sweep. Memory that cannot be had is an error.
    #[inline(never)]
    pub(super) fn merge_heap_long(
        &self,
        piece: &[u8],
        units: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        let n = piece.len();
        debug_assert!(n >= 2 && n < u32::MAX as usize);
        // As in merge_stack, with the parts in memory and 32-bit positions.
        let mut run: Vec<u64> = memory::filled(u64::MAX, n)?;
        let mut heap = KeyHeap {
            keys: memory::filled(u64::MAX, 2 * n)?,
            len: 0,
        };
        let key = |r: u32, i: usize| (u64::from(r) << 32) | i as u64;
        let mut run_len = 0;
        let mut parts = self.long_parts(piece, |i, r| {
            run[run_len] = key(r, i);
            run_len += 1;
            Ok(())
        })?;
        run[..run_len].sort_unstable(); // (run[run_len] stays u64::MAX: run_len < n)
        let mut taken = 0;
        while let Some(k) = heap.take_lowest(&run, &mut taken) {
            let (r, at) = ((k >> 32) as u32, (k & 0xffff_ffff) as usize);
            if parts.rank[at] != r {
                continue; // stale
            }
            let (right, left) = parts.join(self, piece, at, r);
            if right != NO_TOKEN {
                heap.push(key(right, at));
            }
            if let Some((p, r2)) = left.filter(|&(_, r2)| r2 != NO_TOKEN) {
                heap.push(key(r2, p));
            }
        }
        parts.units_into(units)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::StackHeap;
    use crate::bytelevel::testing::generator;

    /// Keys pushed and popped at random, the heap emptied and refilled many times: the top is
    /// always the lowest key held, and `u64::MAX` when none is.
    #[test]
    fn the_top_is_the_lowest_key_held_through_pushes_pops_and_empty_heaps() {
        let mut next = generator(0x5EED);
        let mut heap = StackHeap::<64>::new();
        let mut held: Vec<u64> = Vec::new();
        let mut emptied = 0;
        for _ in 0..20_000 {
            if held.is_empty() || (held.len() < 63 && next(2) == 0) {
                let key = next(50);
                heap.push(key);
                held.push(key);
            } else {
                heap.pop();
                let lowest = held.iter().enumerate().min_by_key(|&(_, k)| *k).unwrap().0;
                held.swap_remove(lowest);
                emptied += usize::from(held.is_empty());
            }
            assert_eq!(heap.top(), held.iter().copied().min().unwrap_or(u64::MAX));
            assert_eq!(heap.len, held.len());
        }
        assert!(emptied > 100, "{emptied}");
    }
}
