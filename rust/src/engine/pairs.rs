//! The engine's pair index: pair key -> frequency and the range of the words holding the pair,
//! in shards, and its count from the words (on threads for large engines, with a radix sort
//! instead of a hash lookup per occurrence). It does not choose the pair to merge (`queue`) or
//! update itself around a merge (`update`).

use super::queue::Queue;
use super::{key, Engine, UNK};
use rustc_hash::FxHashMap;

/// A pair's frequency and the words holding it (an index may repeat or be stale): the range
/// `start..start + len` of [`Engine::holders`].
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PairEntry {
    pub(super) freq: u64,
    pub(super) start: u32,
    pub(super) len: u32,
}

/// Pair key -> [`PairEntry`], in [`SHARDS`] maps chosen by a hash of the key: the first count
/// fills the shards on all threads (each thread its own shards), and a shard that fills up
/// doubles alone (a single table of millions of pairs would hold its old and new copies at
/// once, tens of megabytes, in the middle of training).
#[derive(Debug)]
pub(super) struct PairMap {
    shards: Vec<FxHashMap<u64, PairEntry>>,
}

const SHARDS: usize = 8;

/// Engines with fewer symbols than this in their words count their pairs on one thread.
pub(super) const PARALLEL_FROM: usize = 1 << 18;

#[inline]
fn shard_of(k: u64) -> usize {
    (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) as usize
}

/// Sort `items` by their key's low `bits` bits, stably (least significant digit first, 11
/// bits a pass); `scratch` is working space.
pub(super) fn radix_sort(items: &mut Vec<(u64, u32)>, scratch: &mut Vec<(u64, u32)>, bits: u32) {
    const DIGIT: u32 = 11;
    let mut shift = 0;
    while shift < bits {
        let mut at = vec![0usize; 1 << DIGIT];
        for &(k, _) in items.iter() {
            at[((k >> shift) & ((1 << DIGIT) - 1)) as usize] += 1;
        }
        let mut sum = 0;
        for slot in &mut at {
            (*slot, sum) = (sum, sum + *slot);
        }
        scratch.clear();
        scratch.resize(items.len(), (0, 0));
        for &item in items.iter() {
            let d = ((item.0 >> shift) & ((1 << DIGIT) - 1)) as usize;
            scratch[at[d]] = item;
            at[d] += 1;
        }
        std::mem::swap(items, scratch);
        shift += DIGIT;
    }
}

impl Default for PairMap {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| FxHashMap::default()).collect(),
        }
    }
}

impl PairMap {
    #[inline]
    pub(super) fn get(&self, k: &u64) -> Option<&PairEntry> {
        self.shards[shard_of(*k)].get(k)
    }

    #[inline]
    pub(super) fn get_mut(&mut self, k: &u64) -> Option<&mut PairEntry> {
        self.shards[shard_of(*k)].get_mut(k)
    }

    #[inline]
    pub(super) fn remove(&mut self, k: &u64) -> Option<PairEntry> {
        self.shards[shard_of(*k)].remove(k)
    }

    #[inline]
    pub(super) fn contains_key(&self, k: &u64) -> bool {
        self.shards[shard_of(*k)].contains_key(k)
    }

    #[inline]
    pub(super) fn entry(
        &mut self,
        k: u64,
    ) -> std::collections::hash_map::Entry<'_, u64, PairEntry> {
        self.shards[shard_of(k)].entry(k)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&u64, &PairEntry)> + '_ {
        self.shards.iter().flat_map(|m| m.iter())
    }

    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut PairEntry> + '_ {
        self.shards.iter_mut().flat_map(|m| m.values_mut())
    }

    pub(super) fn capacity(&self) -> usize {
        self.shards.iter().map(|m| m.capacity()).sum()
    }
}

impl Engine {
    pub(super) fn count_pairs(&mut self) {
        // Shard by shard (each thread takes every `threads`-th), with no hash lookup per
        // occurrence: the shard's occurrences (pair, word) are listed in word order, sorted by
        // pair with a stable radix sort (so each pair's words stay in word order), and each
        // run of one pair becomes its entry and its range of holders. A hash map per
        // occurrence was a cache miss each: millions of them on the superword engine.
        let keep = self.forgotten_below.max(1);
        let threads = if self.data.len() < PARALLEL_FROM {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(SHARDS))
        };
        // Pairs sort as `left << bits | right`, `bits` enough for any symbol id.
        let bits = (u64::BITS - (self.symbols.len() as u64).leading_zeros()).min(32);
        let (data, spans, counts) = (&self.data[..], &self.spans[..], &self.counts[..]);
        let shard = |s: usize, occurrences: &mut Vec<(u64, u32)>, scratch: &mut Vec<(u64, u32)>| {
            occurrences.clear();
            for (wi, &(start, len)) in spans.iter().enumerate() {
                for p in data[start as usize..(start + len) as usize].windows(2) {
                    if p[0] != UNK && p[1] != UNK && shard_of(key(p[0], p[1])) == s {
                        occurrences.push(((u64::from(p[0]) << bits) | u64::from(p[1]), wi as u32));
                    }
                }
            }
            radix_sort(occurrences, scratch, 2 * bits);
            let mut map: FxHashMap<u64, PairEntry> = FxHashMap::default();
            let mut holders: Vec<u32> = Vec::new();
            for run in occurrences.chunk_by(|x, y| x.0 == y.0) {
                let freq: u64 = run.iter().map(|&(_, wi)| counts[wi as usize]).sum();
                if freq < keep {
                    continue;
                }
                let (left, right) = (run[0].0 >> bits, run[0].0 & ((1 << bits) - 1));
                let entry = PairEntry {
                    freq,
                    start: holders.len() as u32,
                    len: run.len() as u32,
                };
                map.insert(key(left as u32, right as u32), entry);
                holders.extend(run.iter().map(|&(_, wi)| wi));
            }
            (map, holders)
        };
        let shard = &shard;
        let mut done: Vec<(usize, FxHashMap<u64, PairEntry>, Vec<u32>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let (mut occurrences, mut scratch) = (Vec::new(), Vec::new());
                        (t..SHARDS)
                            .step_by(threads)
                            .map(|i| {
                                let (map, holders) = shard(i, &mut occurrences, &mut scratch);
                                (i, map, holders)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("no panic counting pairs"))
                .collect()
        });
        // Shard after shard, so each shard's ranges are one slice of the buffer.
        done.sort_unstable_by_key(|&(i, _, _)| i);
        let mut holders = Vec::with_capacity(done.iter().map(|(_, _, h)| h.len()).sum());
        let mut pairs = PairMap::default();
        for (i, mut map, part) in done {
            let base = holders.len() as u32;
            for e in map.values_mut() {
                e.start += base;
            }
            holders.extend_from_slice(&part);
            pairs.shards[i] = map;
        }
        self.pairs = pairs;
        self.holders = holders;
    }

    /// Count every pair again from the words (after [`Engine::from_flat_forgetting`]): the
    /// state is then that of an engine that never forgot any.
    pub(super) fn recount_pairs(&mut self) {
        if self.forgotten_below == 0 {
            return;
        }
        self.forgotten_below = 0;
        self.count_pairs();
        self.floor = None;
        self.queue = Queue::default();
    }
}
