//! A bounded piece cache: piece bytes -> token ids, shared by every thread using a tokenizer.
//!
//! Bounded in bytes, not entries (a 2,000-character piece costs what it weighs): the budget is
//! split over 64 shards, each behind its own lock, and a shard that would exceed its share is
//! emptied before the insert. Pieces longer than [`MAX_PIECE`] or shorter than [`MIN_PIECE`] bytes
//! are never cached. The cache only saves work: a miss recomputes the same ids.
//!
//! Its locks are only ever tried: a shard another thread holds is a miss (or an insert skipped),
//! so no thread waits on one, and a child made by `fork` starts with empty shards of its own
//! (see [`crate::fork`]), never with a lock its parent's threads held.

use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, MutexGuard, TryLockError};

use crate::fork::PerProcess;

use rustc_hash::FxHashMap;

/// Longer pieces are not cached (they are rare, and would crowd out many short ones).
pub const MAX_PIECE: usize = 256;
/// Shorter pieces are not cached either: their BPE is a handful of lookups, cheaper than a
/// locked insert.
pub const MIN_PIECE: usize = 6;
const SHARDS: usize = 64;
/// What one entry costs beyond its key and ids: two boxes and the hash table slot.
const ENTRY_OVERHEAD: usize = 48;

#[derive(Default)]
struct Shard {
    map: FxHashMap<Box<[u8]>, Box<[u32]>>,
    bytes: usize,
}

/// A shard's lock on cache lines of its own: threads taking the locks of neighbouring shards
/// would otherwise pass one line back and forth on every lookup.
#[repr(align(128))]
#[derive(Default)]
struct Slot(Mutex<Shard>);

type Shards = [Slot; SHARDS];

pub struct PieceCache {
    shards: PerProcess<Shards>,
    shard_budget: usize,
}

impl PieceCache {
    /// A cache holding at most about `budget` bytes (0 disables it).
    pub fn new(budget: usize) -> PieceCache {
        PieceCache {
            shards: PerProcess::new(|| std::array::from_fn(|_| Slot::default())),
            shard_budget: budget / SHARDS,
        }
    }

    pub fn enabled(&self) -> bool {
        self.shard_budget > 0
    }

    /// Whether a piece of `len` bytes would be looked up and kept at all.
    #[inline]
    pub fn holds(&self, len: usize) -> bool {
        self.enabled() && (MIN_PIECE..=MAX_PIECE).contains(&len)
    }

    #[inline]
    fn shard(&self, key: &[u8]) -> Option<MutexGuard<'_, Shard>> {
        let mut h = FxHasher::default();
        key.hash(&mut h);
        try_lock(&self.shards.get()[(h.finish() >> 58) as usize % SHARDS].0)
    }

    /// Append the cached ids of `key` to `out`; false on a miss.
    #[inline]
    pub fn get_into(&self, key: &[u8], out: &mut Vec<u32>) -> bool {
        if !self.enabled() || key.len() > MAX_PIECE || key.len() < MIN_PIECE {
            return false;
        }
        let Some(shard) = self.shard(key) else {
            return false;
        };
        match shard.map.get(key) {
            Some(ids) => {
                out.extend_from_slice(ids);
                true
            }
            None => false,
        }
    }

    pub fn insert(&self, key: &[u8], ids: &[u32]) {
        if !self.enabled() || key.len() > MAX_PIECE || key.len() < MIN_PIECE {
            return;
        }
        let cost = key.len() + 4 * ids.len() + ENTRY_OVERHEAD;
        let Some(mut shard) = self.shard(key) else {
            return;
        };
        if shard.bytes + cost > self.shard_budget {
            shard.map = FxHashMap::default(); // frees the table too, not just its entries
            shard.bytes = 0;
        }
        if shard.map.insert(key.into(), ids.into()).is_none() {
            shard.bytes += cost;
        }
    }

    /// Bytes held (as counted against the budget).
    pub fn bytes(&self) -> usize {
        self.shards
            .get()
            .iter()
            .filter_map(|s| try_lock(&s.0).map(|s| s.bytes))
            .sum()
    }

    pub fn len(&self) -> usize {
        self.shards
            .get()
            .iter()
            .filter_map(|s| try_lock(&s.0).map(|s| s.map.len()))
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&self) {
        for shard in self.shards.get() {
            if let Some(mut s) = try_lock(&shard.0) {
                *s = Shard::default();
            }
        }
    }
}

/// Pieces per look at the cache's hit rate.
const WINDOW: u32 = 1024;
/// Fewer hits than this in a window: the text is not repeating itself (random bytes, a long
/// run of new words), and probing and filling the cache only costs, so it is left alone for
/// the next [`REST`] pieces, then tried again.
const FEW_HITS: u32 = WINDOW / 4;
const REST: u32 = 8 * WINDOW;

/// When to leave the cache alone during one text: it never changes a result, only what a
/// piece costs.
#[derive(Default)]
pub struct Bypass {
    probes: u32,
    hits: u32,
    rest: u32,
}

impl Bypass {
    /// Whether to skip the cache for this piece (counted as a probe otherwise).
    #[inline(always)]
    pub fn skip(&mut self) -> bool {
        if self.rest > 0 {
            self.rest -= 1;
            return true;
        }
        self.probes += 1;
        if self.probes == WINDOW {
            if self.hits < FEW_HITS {
                self.rest = REST;
            }
            (self.probes, self.hits) = (0, 0);
        }
        false
    }

    #[inline(always)]
    pub fn hit(&mut self) {
        self.hits += 1;
    }
}

/// The shard if no other thread holds it. A poisoned shard (a panic while it was held) is
/// emptied: its table may be half-changed.
fn try_lock(shard: &Mutex<Shard>) -> Option<MutexGuard<'_, Shard>> {
    match shard.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::WouldBlock) => None,
        Err(TryLockError::Poisoned(poisoned)) => {
            let mut guard = poisoned.into_inner();
            *guard = Shard::default();
            shard.clear_poison();
            Some(guard)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_in_bytes() {
        let cache = PieceCache::new(16 * 1024);
        for i in 0..10_000u32 {
            let key = format!("piece number {i}");
            cache.insert(key.as_bytes(), &[i, i + 1, i + 2]);
            assert!(cache.bytes() <= 16 * 1024);
        }
        assert!(!cache.is_empty());
        let mut out = Vec::new();
        assert!(cache.get_into(b"piece number 9999", &mut out));
        assert_eq!(out, vec![9999, 10000, 10001]);
        cache.clear();
        assert!(cache.is_empty() && cache.bytes() == 0);
    }

    #[test]
    fn long_pieces_and_zero_budget_are_not_cached() {
        let cache = PieceCache::new(1 << 20);
        cache.insert(&[b'a'; MAX_PIECE + 1], &[1]);
        assert!(cache.is_empty());
        cache.insert(b"short", &[1]);
        assert!(cache.is_empty());
        let off = PieceCache::new(0);
        off.insert(b"abcdefg", &[1]);
        assert!(off.is_empty() && !off.get_into(b"abcdefg", &mut Vec::new()));
    }

    #[test]
    fn the_bypass_rests_while_the_cache_misses() {
        // A window with few hits rests the cache for REST pieces, then probes again.
        let mut bypass = Bypass::default();
        assert!((0..WINDOW).all(|_| !bypass.skip()));
        assert!((0..REST).all(|_| bypass.skip()));
        for _ in 0..WINDOW {
            assert!(!bypass.skip());
            bypass.hit();
        }
        assert!((0..WINDOW).all(|_| !bypass.skip())); // after a window of hits: probing
        assert!(bypass.skip()); // and that window had none
    }
}
