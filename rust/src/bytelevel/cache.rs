//! A bounded piece cache: piece bytes -> token ids, shared by every thread using a tokenizer.
//!
//! Bounded in bytes, not entries (a 2,000-character piece costs what it weighs): the budget is
//! split over 64 shards, each behind its own lock. Within a shard, a piece of up to
//! [`LINE_KEY`] bytes with up to [`LINE_IDS`] ids (most words of most scripts) is kept whole in
//! one 64-byte [`Line`] of a small open-addressing table: a hit reads one cache line, where a
//! map of boxed keys and ids reads four or five, and warm encoding waits on those loads, most of
//! all when other work has evicted the cache between calls. At its size limit the table
//! overwrites within a piece's few slots. Other pieces go to a map that is emptied when it
//! would exceed its half of the shard's budget. Pieces longer than [`MAX_PIECE`] or shorter than
//! [`MIN_PIECE`] bytes are never cached. The cache only saves work: a miss recomputes the same
//! ids.
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
/// What one map entry costs beyond its key and ids: two boxes and the hash table slot.
const ENTRY_OVERHEAD: usize = 48;
/// Longest key, and most ids, of a piece kept in a [`Line`].
pub const LINE_KEY: usize = 24;
pub const LINE_IDS: usize = 9;
/// Slots a piece may take in the table of lines, from its home slot on (four lines: 256
/// bytes, which the CPU's prefetcher reads together).
const WAYS: usize = 4;
/// Lines a shard's table starts with; it doubles while under half full, up to its budget.
const FIRST_LINES: usize = 64;

/// One cached piece in one cache line: its key zero-padded, `len | ids << 8` (0: empty), ids.
#[repr(C, align(64))]
#[derive(Clone, Copy, Default)]
struct Line {
    key: [u64; 3],
    meta: u32,
    ids: [u32; LINE_IDS],
}

impl Line {
    #[inline(always)]
    fn holds(&self, key: &[u64; 3], len: usize) -> bool {
        self.meta as u8 as usize == len && self.key == *key
    }
}

/// A key of at most [`LINE_KEY`] bytes as three little-endian words, zero-padded.
#[inline(always)]
fn line_key(key: &[u8]) -> [u64; 3] {
    let mut words = [0u64; 3];
    for (w, chunk) in words.iter_mut().zip(key.chunks(8)) {
        *w = super::table::load_le(chunk);
    }
    words
}

#[derive(Default)]
struct Shard {
    /// Open addressing over [`Line`]s (a power of two long, or empty before the first insert).
    lines: Vec<Line>,
    /// Lines in use.
    used: usize,
    /// The other pieces, and the bytes they are counted at.
    map: FxHashMap<Box<[u8]>, Box<[u32]>>,
    bytes: usize,
}

impl Shard {
    #[inline(always)]
    fn slots(&self, h: u64) -> impl Iterator<Item = usize> {
        let mask = self.lines.len().wrapping_sub(1);
        let home = h as usize & mask;
        (0..WAYS.min(self.lines.len())).map(move |k| (home + k) & mask)
    }

    /// Double the table of lines (to `max` at most), putting every line back.
    fn grow(&mut self, max: usize) {
        let size = (self.lines.len() * 2).max(FIRST_LINES).min(max);
        let old = std::mem::replace(&mut self.lines, vec![Line::default(); size]);
        self.used = 0;
        for line in old.iter().filter(|l| l.meta != 0) {
            let len = line.meta as u8 as usize;
            let mut bytes = [0u8; LINE_KEY];
            for (k, w) in line.key.iter().enumerate() {
                bytes[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
            }
            let h = hash(&bytes[..len]);
            if let Some(i) = self.slots(h).find(|&i| self.lines[i].meta == 0) {
                self.lines[i] = *line;
                self.used += 1;
            }
        }
    }
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
    /// Most lines a shard's table grows to: half its budget (a power of two; 0: no table).
    max_lines: usize,
}

#[inline(always)]
fn hash(key: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    key.hash(&mut h);
    h.finish()
}

impl PieceCache {
    /// A cache holding at most about `budget` bytes (0 disables it).
    pub fn new(budget: usize) -> PieceCache {
        let shard_budget = budget / SHARDS;
        let lines = shard_budget / 2 / std::mem::size_of::<Line>();
        let max_lines = if lines >= WAYS { 1 << lines.ilog2() } else { 0 };
        PieceCache {
            shards: PerProcess::new(|| std::array::from_fn(|_| Slot::default())),
            shard_budget,
            max_lines,
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

    /// The shard of a key's hash, if no other thread holds it.
    #[inline]
    fn shard(&self, h: u64) -> Option<MutexGuard<'_, Shard>> {
        try_lock(&self.shards.get()[(h >> 58) as usize % SHARDS].0)
    }

    /// Append the cached ids of `key` to `out`; false on a miss.
    #[inline]
    pub fn get_into(&self, key: &[u8], out: &mut Vec<u32>) -> bool {
        if !self.enabled() || key.len() > MAX_PIECE || key.len() < MIN_PIECE {
            return false;
        }
        let h = hash(key);
        let Some(shard) = self.shard(h) else {
            return false;
        };
        if key.len() <= LINE_KEY && !shard.lines.is_empty() {
            let words = line_key(key);
            for i in shard.slots(h) {
                let line = &shard.lines[i];
                if line.holds(&words, key.len()) {
                    out.extend_from_slice(&line.ids[..(line.meta >> 8) as usize]);
                    return true;
                }
            }
        }
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
        let h = hash(key);
        let Some(mut shard) = self.shard(h) else {
            return;
        };
        if key.len() <= LINE_KEY && ids.len() <= LINE_IDS && self.max_lines > 0 {
            if 2 * (shard.used + 1) > shard.lines.len() && shard.lines.len() < self.max_lines {
                shard.grow(self.max_lines);
            }
            let words = line_key(key);
            let free = shard
                .slots(h)
                .find(|&i| shard.lines[i].meta == 0 || shard.lines[i].holds(&words, key.len()));
            // Full around its home: the piece takes the home slot (the newer piece is kept).
            let i = free.unwrap_or(h as usize & (shard.lines.len() - 1));
            let line = &mut shard.lines[i];
            let new = line.meta == 0;
            line.key = words;
            line.meta = key.len() as u32 | ((ids.len() as u32) << 8);
            line.ids[..ids.len()].copy_from_slice(ids);
            shard.used += usize::from(new);
            return;
        }
        let cost = key.len() + 4 * ids.len() + ENTRY_OVERHEAD;
        if shard.bytes + cost > self.shard_budget / 2 {
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
            .filter_map(|s| {
                try_lock(&s.0).map(|s| s.bytes + s.lines.len() * std::mem::size_of::<Line>())
            })
            .sum()
    }

    pub fn len(&self) -> usize {
        self.shards
            .get()
            .iter()
            .filter_map(|s| try_lock(&s.0).map(|s| s.map.len() + s.used))
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
    fn lines_hold_short_pieces_within_the_budget() {
        // 64 shards of 16 kB: tables of up to 128 lines each, the rest to the maps.
        let cache = PieceCache::new(1 << 20);
        let key = |i: u32| format!("p{i:05}{}", "x".repeat((i % 19) as usize));
        let ids = |i: u32| (0..1 + i % 12).map(|k| i * 16 + k).collect::<Vec<u32>>();
        for i in 0..20_000u32 {
            cache.insert(key(i).as_bytes(), &ids(i));
            assert!(cache.bytes() <= 1 << 20);
        }
        // Whatever is still held is exact: the same ids, and no piece mistaken for another
        // (keys differ in length only, or only past the first word).
        let mut held = 0;
        for i in 0..20_000u32 {
            let mut out = vec![7];
            if cache.get_into(key(i).as_bytes(), &mut out) {
                assert_eq!(out[1..], ids(i)[..], "{}", key(i));
                held += 1;
            } else {
                assert_eq!(out, vec![7]);
            }
        }
        assert!(held > 5_000, "{held}");
        let mut out = Vec::new();
        assert!(!cache.get_into(b"p00001x\0", &mut out) && out.is_empty());
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
