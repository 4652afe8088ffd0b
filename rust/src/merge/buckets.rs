//! Long words: [`RankBuckets`], positions filed by rank and swept lowest rank first (also the
//! byte-level ranks rule's queue), and the merge of a long word over a doubly linked list of
//! its positions, a few linear sweeps instead of a heap operation per merge. It does not scan
//! short words.

use super::Pairs;
use crate::memory::{self, NoMemory};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const NONE: u32 = u32::MAX;

/// Positions filed by rank, swept lowest rank first: the queue of the long-word merges, here over
/// ids and in [`crate::bytelevel`] over byte positions. A bucket per rank, and a heap of the
/// ranks whose buckets are not empty.
#[derive(Default)]
pub(crate) struct RankBuckets {
    buckets: FxHashMap<u32, Vec<u32>>,
    ranks: BinaryHeap<Reverse<u32>>,
}

impl RankBuckets {
    /// File position `pos` under `rank` (a rank whose round is under way gets a new round).
    #[inline]
    pub(crate) fn push(&mut self, rank: u32, pos: u32) -> Result<(), NoMemory> {
        self.buckets
            .try_reserve(1)
            .map_err(|_| NoMemory::of::<(u32, Vec<u32>)>(self.buckets.len() + 1))?;
        let bucket = self.buckets.entry(rank).or_default();
        if bucket.is_empty() {
            self.ranks
                .try_reserve(1)
                .map_err(|_| NoMemory::of::<u32>(self.ranks.len() + 1))?;
            self.ranks.push(Reverse(rank));
        }
        memory::push(bucket, pos)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    /// The lowest rank with positions filed, its positions into `round` in increasing order
    /// (each once; `round`'s old contents are dropped), or None when nothing is left.
    pub(crate) fn next_round(&mut self, round: &mut Vec<u32>) -> Option<u32> {
        round.clear();
        while let Some(Reverse(rank)) = self.ranks.pop() {
            match self.buckets.get_mut(&rank) {
                Some(bucket) if !bucket.is_empty() => std::mem::swap(round, bucket),
                _ => continue,
            }
            round.sort_unstable();
            round.dedup();
            return Some(rank);
        }
        None
    }
}

pub(super) fn merge_long<T: Pairs + ?Sized>(
    ids: &mut Vec<u32>,
    table: &T,
    seeds: Option<&[usize]>,
) -> Result<(), NoMemory> {
    // A doubly linked list over the original positions, and the positions of the pairs that
    // can merge in one bucket per rank; a heap holds the ranks whose buckets are not empty.
    // The lowest rank's bucket is swept left to right, merging each position that still holds
    // a pair of that rank. A merge's new pairs normally rank higher (a merged token is newer
    // than its parts) and go to their buckets; if one ranks lower or the same, the sweep stops
    // and the rest of the bucket goes back, so the order is the rule's in every case. Stale
    // positions are checked against the table when they come up. A long run of one syllable
    // thus costs a few linear sweeps instead of a heap operation per merge.
    let n = ids.len();
    let mut queue = RankBuckets::default();
    let mut file = |i: usize| match table.get(ids[i], ids[i + 1]) {
        Some(m) => queue.push(m.rank, i as u32),
        None => Ok(()),
    };
    match seeds {
        None => (0..n - 1).try_for_each(&mut file)?,
        Some(seeds) => seeds.iter().try_for_each(|&i| file(i))?,
    }
    // A long run where nothing merges (the bytes of unknown characters) costs one pass: no lists.
    if queue.is_empty() {
        return Ok(());
    }
    // A position that merged into the one before it is dead: its `next` is NONE, like the
    // last position's, so that entries still filed for it come to nothing.
    let mut next: Vec<u32> = memory::filled(0, n)?;
    let mut prev: Vec<u32> = memory::filled(0, n)?;
    for i in 0..n {
        next[i] = i as u32 + 1;
        prev[i] = (i as u32).wrapping_sub(1);
    }
    next[n - 1] = NONE;
    prev[0] = NONE;
    let mut round: Vec<u32> = Vec::new();
    while let Some(rank) = queue.next_round(&mut round) {
        let mut k = 0;
        while k < round.len() {
            let i = round[k] as usize;
            k += 1;
            let j = next[i];
            if j == NONE {
                continue; // dead, or the last position
            }
            let j = j as usize;
            let m = match table.get(ids[i], ids[j]) {
                Some(m) if m.rank == rank => m,
                _ => continue, // stale: the pair here has changed since it was filed
            };
            ids[i] = m.id;
            let after = next[j];
            next[j] = NONE;
            next[i] = after;
            let mut lower = false;
            if after != NONE {
                prev[after as usize] = i as u32;
                if let Some(m2) = table.get(ids[i], ids[after as usize]) {
                    queue.push(m2.rank, i as u32)?;
                    lower |= m2.rank <= rank;
                }
            }
            let before = prev[i];
            if before != NONE {
                if let Some(m2) = table.get(ids[before as usize], ids[i]) {
                    queue.push(m2.rank, before)?;
                    lower |= m2.rank <= rank;
                }
            }
            if lower {
                for &rest in &round[k..] {
                    queue.push(rank, rest)?;
                }
                break;
            }
        }
    }
    // In place: the live positions, in order, never run ahead of the ones they are copied to.
    let (mut i, mut k) = (0u32, 0);
    while i != NONE {
        ids[k] = ids[i as usize];
        k += 1;
        i = next[i as usize];
    }
    ids.truncate(k);
    Ok(())
}
