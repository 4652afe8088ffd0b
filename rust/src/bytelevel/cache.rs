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

use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, TryLockError};

use crate::fork::PerProcess;

use rustc_hash::FxHashMap;

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
/// Slots a piece may take in a table of lines, from its home slot on (four narrow lines: 256
/// bytes, which the CPU's prefetcher reads together).
const WAYS: usize = 4;
/// Lines a shard's first table has; each next one has twice as many, up to the budget's. Small:
/// a fresh tokenizer's first pass keeps a few pieces in every shard, and each table is zeroed
/// when it is made, in memory the CPU does not hold yet.
const FIRST_LINES: usize = 16;
/// Tables a shard may grow through (far more than any budget reaches).
const LEVELS: usize = 32;

/// One cached piece in `W` words that readers load without a lock: the key zero-padded (`K`
/// words), `len | ids << 8 | first id << 32` (0: empty), then two ids a word.
#[repr(C, align(64))]
struct Line<const K: usize, const W: usize>([AtomicU64; W]);

impl<const K: usize, const W: usize> Line<K, W> {
    /// Longest key and most ids a line holds.
    const KEY: usize = 8 * K;
    const IDS: usize = 1 + 2 * (W - K - 1);

    fn empty() -> Self {
        Line(std::array::from_fn(|_| AtomicU64::new(0)))
    }

    /// Every word (what a reader must then validate; exact for the shard's writer).
    #[inline(always)]
    fn load(&self) -> [u64; W] {
        std::array::from_fn(|k| self.0[k].load(Ordering::Relaxed))
    }

    #[inline(always)]
    fn meta(&self) -> u64 {
        self.0[K].load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn holds(&self, key: &[u64; K], len: usize) -> bool {
        self.meta() as u8 as usize == len
            && (0..K).all(|k| self.0[k].load(Ordering::Relaxed) == key[k])
    }

    /// The words of a line holding `key` (as [`line_key`] gives it, `len` bytes) and `ids`
    /// (at most [`Self::IDS`]).
    fn pack(key: &[u64; K], len: usize, ids: &[u32]) -> [u64; W] {
        let mut words = [0u64; W];
        words[..K].copy_from_slice(key);
        let first = ids.first().map_or(0, |&id| u64::from(id));
        words[K] = len as u64 | ((ids.len() as u64) << 8) | (first << 32);
        for (k, &id) in ids.iter().skip(1).enumerate() {
            words[K + 1 + k / 2] |= u64::from(id) << (32 * (k % 2));
        }
        words
    }

    /// Append the ids of a line's words to `out`.
    #[inline(always)]
    fn extend_ids(words: &[u64; W], out: &mut Vec<u32>) {
        let mut ids = [0u32; MOST_IDS];
        ids[0] = (words[K] >> 32) as u32;
        for k in 0..W - K - 1 {
            ids[1 + 2 * k] = words[K + 1 + k] as u32;
            ids[2 + 2 * k] = (words[K + 1 + k] >> 32) as u32;
        }
        let n = ((words[K] >> 8) as u8 as usize).min(Self::IDS);
        super::memo::extend_first(out, &ids, n);
    }

    /// The key's bytes, zero-padded to the longest key any line holds.
    fn key_bytes(words: &[u64; W]) -> [u8; Wide::KEY] {
        let mut bytes = [0u8; Wide::KEY];
        for (k, w) in words[..K].iter().enumerate() {
            bytes[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
        }
        bytes
    }
}

/// A key of at most `8 * K` bytes as `K` little-endian words, zero-padded.
#[inline(always)]
fn line_key<const K: usize>(key: &[u8]) -> [u64; K] {
    let mut words = [0u64; K];
    for (w, chunk) in words.iter_mut().zip(key.chunks(8)) {
        *w = super::table::load_le(chunk);
    }
    words
}

/// A shard's tables of lines (open addressing), read under a seqlock.
struct Lines<const K: usize, const W: usize> {
    /// Odd while the shard's writer changes a line of the current table.
    seq: AtomicU64,
    /// Table `k` has `FIRST_LINES << k` lines; each is made once, when the shard grows into it.
    levels: [OnceLock<Box<[Line<K, W>]>>; LEVELS],
    /// 1 + the index of the table in use (0: none yet).
    current: AtomicUsize,
}

impl<const K: usize, const W: usize> Default for Lines<K, W> {
    fn default() -> Self {
        Lines {
            seq: AtomicU64::new(0),
            levels: std::array::from_fn(|_| OnceLock::new()),
            current: AtomicUsize::new(0),
        }
    }
}

impl<const K: usize, const W: usize> Lines<K, W> {
    #[inline(always)]
    fn table(&self) -> &[Line<K, W>] {
        match self.current.load(Ordering::Acquire) {
            0 => &[],
            k => self.levels[k - 1].get().map_or(&[], |t| &t[..]),
        }
    }

    /// A piece's first slot in a table of `len` lines: the hash's bits below the ones that
    /// chose the shard (those are the same for every piece of the shard), scaled to the table.
    #[inline(always)]
    fn home(h: u64, len: usize) -> usize {
        ((u128::from(h << SHARD_BITS) * len as u128) >> 64) as usize
    }

    #[inline(always)]
    fn slots(table: &[Line<K, W>], h: u64) -> impl Iterator<Item = usize> {
        let len = table.len();
        let home = Self::home(h, len);
        (0..WAYS.min(len)).map(move |k| {
            if home + k >= len {
                home + k - len
            } else {
                home + k
            }
        })
    }

    /// Append the ids of the piece (`key`, `len` bytes, hash `h`) to `out` if a line holds it
    /// and no writer changed the shard meanwhile; false otherwise (a miss).
    #[inline]
    fn get_into(&self, h: u64, key: &[u64; K], len: usize, out: &mut Vec<u32>) -> bool {
        let seq = self.seq.load(Ordering::Acquire);
        if seq & 1 != 0 {
            return false;
        }
        let table = self.table();
        for i in Self::slots(table, h) {
            let words = table[i].load();
            if words[K] as u8 as usize != len || words[..K] != key[..] {
                continue;
            }
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) != seq {
                return false; // torn: a writer was here
            }
            Line::<K, W>::extend_ids(&words, out);
            return true;
        }
        false
    }

    /// Store `ids` for the piece `key` (hash `h`) in the current table, first doubling it
    /// when it is half full and the doubling takes at most `room` more bytes; `used` counts
    /// its lines in use. Only the shard's writer. A piece whose few slots are all taken takes
    /// its home slot (the newer is kept). False if there is no table at all.
    fn put(&self, used: &mut usize, room: usize, h: u64, key: &[u8], ids: &[u32]) -> bool {
        let size = self.table().len();
        let more = size.max(FIRST_LINES) * std::mem::size_of::<Line<K, W>>();
        if 2 * (*used + 1) > size && more <= room {
            *used = self.grow();
        }
        let table = self.table();
        if table.is_empty() {
            return false;
        }
        let words = line_key::<K>(key);
        let free = Self::slots(table, h)
            .find(|&i| table[i].meta() == 0 || table[i].holds(&words, key.len()));
        let i = free.unwrap_or_else(|| Self::home(h, table.len()));
        *used += usize::from(table[i].meta() == 0);
        let line = Line::<K, W>::pack(&words, key.len(), ids);
        self.changing(|table| {
            for (w, &v) in table[i].0.iter().zip(&line) {
                w.store(v, Ordering::Relaxed);
            }
        });
        true
    }

    /// Run `change` on the current table's lines with the sequence number odd, so that no
    /// reader takes a line meanwhile. Only the shard's writer, holding its lock; also after a
    /// writer panicked midway (the odd number it left is made even again).
    fn changing(&self, change: impl FnOnce(&[Line<K, W>])) {
        let seq = self.seq.load(Ordering::Relaxed) | 1;
        self.seq.store(seq, Ordering::Relaxed);
        fence(Ordering::Release);
        change(self.table());
        self.seq.store(seq + 1, Ordering::Release);
    }

    /// Move to a table twice as large, putting every line back; returns the lines now in
    /// use. Only the shard's writer. Readers see the new table once it is whole; the old one
    /// is never written again.
    fn grow(&self) -> usize {
        let old = self.table();
        let size = (old.len() * 2).max(FIRST_LINES);
        let level = self.current.load(Ordering::Relaxed); // the next table's
        if level >= LEVELS {
            return old.iter().filter(|l| l.meta() != 0).count();
        }
        let mut fresh = Vec::new();
        if fresh.try_reserve_exact(size).is_err() {
            // (memory is short: the shard stays this size, as at its last level)
            return old.iter().filter(|l| l.meta() != 0).count();
        }
        fresh.extend((0..size).map(|_| Line::empty()));
        let fresh: Box<[Line<K, W>]> = fresh.into_boxed_slice();
        let mut used = 0;
        for line in old.iter().filter(|l| l.meta() != 0) {
            let words = line.load();
            let len = words[K] as u8 as usize;
            let h = hash(&Line::<K, W>::key_bytes(&words)[..len]);
            if let Some(i) = Self::slots(&fresh, h).find(|&i| fresh[i].meta() == 0) {
                for (w, &v) in fresh[i].0.iter().zip(&words) {
                    w.store(v, Ordering::Relaxed);
                }
                used += 1;
            }
        }
        if self.levels[level].set(fresh).is_err() {
            return old.iter().filter(|l| l.meta() != 0).count(); // (never: sizes only grow)
        }
        self.current.store(level + 1, Ordering::Release);
        used
    }

    /// Empty every line of the current table (it keeps its size).
    fn clear(&self) {
        self.changing(|table| {
            for line in table {
                line.0[K].store(0, Ordering::Relaxed);
            }
        });
    }

    /// Bytes of every table made (the ones grown out of included).
    fn bytes(&self) -> usize {
        let lines: usize = self
            .levels
            .iter()
            .filter_map(|l| l.get())
            .map(|t| t.len())
            .sum();
        lines * std::mem::size_of::<Line<K, W>>()
    }

    /// Bytes of the table in use.
    fn table_bytes(&self) -> usize {
        std::mem::size_of_val(self.table())
    }
}

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
    fn a_piece_is_looked_for_only_once_kept() {
        // Every piece kept sets its bit, and every piece the cache still holds is found (a few
        // are written over in a shard's first, small tables: the cache is bounded); after a
        // clear every bit is clear and nothing is found, and pieces kept again are found again.
        let cache = PieceCache::new(64 << 20);
        let key = |i: u32| format!("piece {i:06}");
        let bits = |cache: &PieceCache| -> u32 {
            cache
                .shards
                .get()
                .iter()
                .flat_map(|s| s.kept.iter())
                .map(|w| w.load(Ordering::Relaxed).count_ones())
                .sum()
        };
        assert_eq!(bits(&cache), 0);
        let mut out = Vec::new();
        for round in 1..3 {
            for i in 0..1_000u32 {
                cache.insert(key(i).as_bytes(), &[i, round]);
            }
            let mut found = 0;
            for i in 0..1_000u32 {
                let h = hash(key(i).as_bytes());
                let (word, bit) = kept_bit(h);
                assert_ne!(cache.slot(h).kept[word].load(Ordering::Relaxed) & bit, 0);
                out.clear();
                if cache.get_into(key(i).as_bytes(), &mut out) {
                    assert_eq!(out, [i, round]);
                    found += 1;
                }
            }
            assert!(
                found >= 950 && found == cache.len(),
                "{found} of {}",
                cache.len()
            );
            assert!(bits(&cache) <= 1_000); // of 65,536
            cache.clear();
            assert_eq!(bits(&cache), 0);
            assert!(!cache.get_into(key(7).as_bytes(), &mut out));
        }
    }

    #[test]
    fn lines_hold_short_pieces_within_the_budget() {
        // 64 shards of 64 kB: narrow and wide tables that share 24 kB, the rest to the maps.
        // Keys of 6-65 bytes and 1-20 ids: every kind of line, and the map, is used.
        let cache = PieceCache::new(4 << 20);
        let key = |i: u32| format!("p{i:05}{}", "x".repeat((i % 60) as usize));
        let ids = |i: u32| (0..1 + i % 20).map(|k| i * 32 + k).collect::<Vec<u32>>();
        for i in 0..20_000u32 {
            cache.insert(key(i).as_bytes(), &ids(i));
            assert!(cache.bytes() <= 4 << 20);
        }
        // Whatever is still held is exact: the same ids, and no piece mistaken for another
        // (keys differ in length only, or only past the first word).
        let mut held = [0; 3];
        for i in 0..20_000u32 {
            let mut out = vec![7];
            if cache.get_into(key(i).as_bytes(), &mut out) {
                assert_eq!(out[1..], ids(i)[..], "{}", key(i));
                let (len, n) = (key(i).len(), ids(i).len());
                held[if len <= LINE_KEY && n <= LINE_IDS {
                    0
                } else if len > LINE_KEY && len <= Wide::KEY && n <= Wide::IDS {
                    1
                } else {
                    2
                }] += 1;
            } else {
                assert_eq!(out, vec![7]);
            }
        }
        assert!(held.iter().all(|&n| n > 500), "{held:?}");
        let mut out = Vec::new();
        assert!(!cache.get_into(b"p00001x\0", &mut out) && out.is_empty());
        let wide = key(40);
        assert!(!cache.get_into(&wide.as_bytes()[..wide.len() - 1], &mut out));
        // Cleared, nothing is found any more; the tables keep their memory, within the budget.
        cache.clear();
        assert!(cache.is_empty() && cache.bytes() <= 4 << 20);
        assert!((0..20_000u32).all(|i| !cache.get_into(key(i).as_bytes(), &mut out)));
    }

    #[test]
    fn a_line_keeps_every_id_it_can_hold() {
        // The most ids of each kind of line, and one more (which goes to the map), exact; with
        // room for both kinds of table (a short piece of many ids is no wide line's).
        let cache = PieceCache::new(4 << 20);
        for (len, most) in [(LINE_KEY, LINE_IDS), (Wide::KEY, Wide::IDS)] {
            for n in [1, most - 1, most, most + 1] {
                let key = format!("{n:02}{}", "y".repeat(len - 2));
                let ids: Vec<u32> = (0..n as u32).map(|k| u32::MAX - k).collect();
                cache.insert(key.as_bytes(), &ids);
                let mut out = Vec::new();
                assert!(cache.get_into(key.as_bytes(), &mut out), "{len} {n}");
                assert_eq!(out, ids);
            }
        }
    }

    #[test]
    fn readers_never_see_a_torn_line() {
        // Two threads overwrite the narrow and wide lines of a small cache with pieces that
        // evict each other (and now and then clear it) while two others read the same pieces;
        // every hit must give the piece's own ids, never a line half-written.
        let cache = PieceCache::new(4 << 20);
        let key = |i: u32| format!("k{i:07}{}", "z".repeat((i % 50) as usize));
        let ids = |i: u32| -> Vec<u32> {
            (0..1 + i % 17)
                .map(|k| i.wrapping_mul(0x9E37_79B1) ^ k)
                .collect()
        };
        let hits = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let (cache, hits) = (&cache, &hits);
                scope.spawn(move || {
                    let mut state = 0x2545_F491_4F6C_DD1D ^ (t << 32 | 1);
                    let mut out = Vec::new();
                    for n in 0..1_000_000 {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        let i = (state % 20_000) as u32;
                        if t < 2 {
                            cache.insert(key(i).as_bytes(), &ids(i));
                            if t == 0 && n % 250_000 == 249_999 {
                                cache.clear();
                            }
                        } else {
                            out.clear();
                            if cache.get_into(key(i).as_bytes(), &mut out) {
                                assert_eq!(out, ids(i), "{}", key(i));
                                hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        assert!(hits.into_inner() > 10_000);
        assert!(cache.bytes() <= 4 << 20);
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
