//! A bounded piece cache: piece bytes -> token ids, shared by every thread using a tokenizer.
//!
//! Bounded in bytes, not entries (a 2,000-character piece costs what it weighs): the budget is
//! split over 64 shards. Within a shard, a piece of up to [`LINE_KEY`] bytes with up to
//! [`LINE_IDS`] ids (most words of Latin scripts) is kept whole in one 64-byte [`Line`] of a
//! small open-addressing table: a hit reads one cache line, where a map of boxed keys and ids
//! reads four or five, and warm encoding waits on those loads, most of all when other work has
//! evicted the cache between calls. A piece of up to 56 bytes and 17 ids (most words of the
//! Indic scripts, three bytes a letter) is kept the same way in a table of 128-byte lines. At
//! its size limit a table overwrites within a piece's few slots. Other pieces go to a map that
//! is emptied when it would exceed its share of the shard's budget; its lock is a write to a
//! cache line that every thread reading the shard then fetches from another core. Pieces
//! longer than [`MAX_PIECE`] or shorter than [`MIN_PIECE`] bytes are never cached. The cache
//! only saves work: a miss recomputes the same ids.
//!
//! Lines are read without a lock. A shard's writers (inserts, growth, clearing) hold its lock;
//! readers check the shard's sequence number around what they read and take a line only if no
//! writer changed anything in between (a seqlock), so a hit costs loads and no atomic write, and
//! threads reading the same shard do not pass its lock's cache line back and forth. A table the
//! shard has grown out of is kept, unchanged, until the cache is dropped: a reader may still be
//! in it, and what it holds is still right (a piece's ids never change). The map's lock, and
//! every writer's, is only ever tried: a shard another thread holds is a miss (or an insert
//! skipped), so no thread waits on one, and a child made by `fork` starts with empty shards of
//! its own (see [`crate::fork`]), never with a lock its parent's threads held.
//!
//! The tables of lines live in `lines`, the bypass a text takes while it misses in `bypass`;
//! this module holds the shards, their locks and budgets, and the cache's entry points.

use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use crate::fork::PerProcess;

use rustc_hash::FxHashMap;

mod bypass;
mod lines;
#[cfg(test)]
mod tests;

pub use bypass::Bypass;
use lines::{line_key, Line, Lines};

/// Longer pieces are not cached (they are rare, and would crowd out many short ones).
pub const MAX_PIECE: usize = 256;
/// Shorter pieces are not cached either: their BPE is a handful of lookups, cheaper than a
/// locked insert.
pub const MIN_PIECE: usize = 6;
const SHARD_BITS: u32 = 6;
const SHARDS: usize = 1 << SHARD_BITS;
/// What one map entry costs beyond its key and ids: two boxes and the hash table slot.
const ENTRY_OVERHEAD: usize = 48;
/// The two kinds of [`Line`]: one cache line, and two.
type Narrow = Line<3, 8>;
type Wide = Line<WIDE_KEY_WORDS, 16>;
/// The key words of the widest line.
const WIDE_KEY_WORDS: usize = 7;
/// Room for the ids of any line.
const MOST_IDS: usize = Wide::IDS;
/// Longest key, and most ids, of a piece kept in a [`Narrow`] line.
pub const LINE_KEY: usize = Narrow::KEY;
pub const LINE_IDS: usize = Narrow::IDS;

/// What a shard's writers change under its lock besides the lines.
#[derive(Default)]
struct Shard {
    /// Lines in use in the current narrow and wide tables.
    used: usize,
    wide_used: usize,
    /// The other pieces, and the bytes they are counted at.
    map: FxHashMap<Box<[u8]>, Box<[u32]>>,
    bytes: usize,
}

/// A shard on cache lines of its own: threads using neighbouring shards would otherwise pass
/// one line back and forth on every lookup.
#[repr(align(128))]
#[derive(Default)]
struct Slot {
    lines: Lines<3, 8>,
    wide: Lines<7, 16>,
    /// Whether the map holds a piece short enough for a line (one of more ids than a line
    /// holds): only then does such a piece that no line holds take the lock to ask the map.
    short_in_map: AtomicBool,
    /// A bit for each piece ever kept here since the last clear (a few pieces a bit): a piece
    /// whose bit is clear was never kept, and is not looked for. Most pieces a fresh
    /// tokenizer's first pass asks about are new (its memo keeps them first), and each such
    /// lookup would load a table line the CPU seldom holds, where the bit is in the shard's own
    /// lines.
    kept: [AtomicU64; KEPT_WORDS],
    shard: Mutex<Shard>,
}

/// Words of a shard's [`Slot::kept`] bits: 1,024 bits a shard, 8 kB for the cache.
const KEPT_WORDS: usize = 16;

/// The word and bit of `kept` for a piece of hash `h` (bits the shard's choice and a line's
/// home use little of).
#[inline(always)]
fn kept_bit(h: u64) -> (usize, u64) {
    let bit = (h >> 24) as usize % (64 * KEPT_WORDS);
    (bit / 64, 1 << (bit % 64))
}

impl Slot {
    /// The shard's lock if no other thread holds it. A poisoned one (a panic while it was held)
    /// is emptied, lines and map: either may be half-changed.
    fn lock(&self) -> Option<MutexGuard<'_, Shard>> {
        match self.shard.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::WouldBlock) => None,
            Err(TryLockError::Poisoned(poisoned)) => {
                let mut guard = poisoned.into_inner();
                *guard = Shard::default();
                self.short_in_map.store(false, Ordering::Relaxed);
                self.lines.clear();
                self.wide.clear();
                self.shard.clear_poison();
                Some(guard)
            }
        }
    }
}

type Shards = [Slot; SHARDS];

pub struct PieceCache {
    shards: PerProcess<Shards>,
    shard_budget: usize,
    /// Bytes a shard's two tables in use may take together, three eighths of its budget,
    /// shared as the text needs (Latin words take narrow lines, Indic ones wide lines): every
    /// table grown through is kept, and a table's sizes double, so all of them stay under
    /// twice this; the map has the last quarter.
    lines_budget: usize,
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
        PieceCache {
            shards: PerProcess::new(|| std::array::from_fn(|_| Slot::default())),
            shard_budget,
            lines_budget: shard_budget / 8 * 3,
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

    #[inline(always)]
    fn slot(&self, h: u64) -> &Slot {
        &self.shards.get()[(h >> (64 - SHARD_BITS)) as usize]
    }

    /// Append the cached ids of `key` to `out`; false on a miss.
    #[inline]
    pub fn get_into(&self, key: &[u8], out: &mut Vec<u32>) -> bool {
        if !self.enabled() || key.len() > MAX_PIECE || key.len() < MIN_PIECE {
            return false;
        }
        let h = hash(key);
        let slot = self.slot(h);
        let (word, bit) = kept_bit(h);
        if slot.kept[word].load(Ordering::Relaxed) & bit == 0 {
            return false; // never kept
        }
        if key.len() <= Wide::KEY {
            let hit = if key.len() <= Narrow::KEY {
                slot.lines.get_into(h, &line_key(key), key.len(), out)
            } else {
                slot.wide.get_into(h, &line_key(key), key.len(), out)
            };
            if hit {
                return true; // without a lock
            }
            if !slot.short_in_map.load(Ordering::Relaxed) {
                return false;
            }
        }
        let Some(shard) = slot.lock() else {
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
        let h = hash(key);
        let slot = self.slot(h);
        let Some(mut shard) = slot.lock() else {
            return;
        };
        // (a reader may see the piece before the bit, and then miss: a cache may always miss)
        let (word, bit) = kept_bit(h);
        slot.kept[word].fetch_or(bit, Ordering::Relaxed);
        let in_use = slot.lines.table_bytes() + slot.wide.table_bytes();
        let room = self.lines_budget.saturating_sub(in_use);
        let shard = &mut *shard;
        if key.len() <= Narrow::KEY && ids.len() <= Narrow::IDS {
            if slot.lines.put(&mut shard.used, room, h, key, ids) {
                return;
            }
        } else if key.len() > Narrow::KEY
            && key.len() <= Wide::KEY
            && ids.len() <= Wide::IDS
            && slot.wide.put(&mut shard.wide_used, room, h, key, ids)
        {
            // (A piece short enough for a narrow line is only ever looked for there, and in
            // the map: one of too many ids goes to the map, not to a wide line.)
            return;
        }
        let cost = key.len() + 4 * ids.len() + ENTRY_OVERHEAD;
        if shard.bytes + cost > self.shard_budget / 4 {
            shard.map = FxHashMap::default(); // frees the table too, not just its entries
            shard.bytes = 0;
            slot.short_in_map.store(false, Ordering::Relaxed);
        }
        if key.len() <= Wide::KEY {
            slot.short_in_map.store(true, Ordering::Relaxed);
        }
        if shard.map.insert(key.into(), ids.into()).is_none() {
            shard.bytes += cost;
        }
    }

    /// Bytes held (as counted against the budget): the map's entries and every table of lines
    /// made, whether in use or not.
    pub fn bytes(&self) -> usize {
        self.shards
            .get()
            .iter()
            .filter_map(|s| {
                s.lock()
                    .map(|shard| shard.bytes + s.lines.bytes() + s.wide.bytes())
            })
            .sum()
    }

    /// Pieces held.
    pub fn len(&self) -> usize {
        self.shards
            .get()
            .iter()
            .filter_map(|s| {
                s.lock()
                    .map(|shard| shard.map.len() + shard.used + shard.wide_used)
            })
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forget every piece. The maps' memory is freed; the tables of lines keep theirs (within
    /// the budget), since a reader may be in one at this moment.
    pub fn clear(&self) {
        for slot in self.shards.get() {
            if let Some(mut shard) = slot.lock() {
                slot.lines.clear();
                slot.wide.clear();
                *shard = Shard::default();
                slot.short_in_map.store(false, Ordering::Relaxed);
                for word in &slot.kept {
                    word.store(0, Ordering::Relaxed);
                }
            }
        }
    }
}
