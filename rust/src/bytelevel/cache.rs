//! A bounded piece cache: piece bytes -> token ids, shared by every thread using a tokenizer.
//!
//! Bounded in bytes, not entries (a 2,000-character piece costs what it weighs): the budget is
//! split over 64 shards. Within a shard, a piece of up to [`LINE_KEY`] bytes with up to
//! [`LINE_IDS`] ids (most words of most scripts) is kept whole in one 64-byte [`Line`] of a
//! small open-addressing table: a hit reads one cache line, where a map of boxed keys and ids
//! reads four or five, and warm encoding waits on those loads, most of all when other work has
//! evicted the cache between calls. At its size limit the table overwrites within a piece's few
//! slots. Other pieces go to a map that is emptied when it would exceed its share of the
//! shard's budget. Pieces longer than [`MAX_PIECE`] or shorter than [`MIN_PIECE`] bytes are
//! never cached. The cache only saves work: a miss recomputes the same ids.
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
const SHARDS: usize = 64;
/// What one map entry costs beyond its key and ids: two boxes and the hash table slot.
const ENTRY_OVERHEAD: usize = 48;
/// Longest key, and most ids, of a piece kept in a [`Line`].
pub const LINE_KEY: usize = 24;
pub const LINE_IDS: usize = 9;
/// Slots a piece may take in the table of lines, from its home slot on (four lines: 256
/// bytes, which the CPU's prefetcher reads together).
const WAYS: usize = 4;
/// Lines a shard's first table has; each next one has twice as many, up to the budget's.
const FIRST_LINES: usize = 64;
/// Tables a shard may grow through (far more than any budget reaches).
const LEVELS: usize = 32;

/// One cached piece in one cache line, as eight words that readers load without a lock: the key
/// zero-padded (three words), `len | ids << 8 | first id << 32` (0: empty), then two ids a word.
#[repr(C, align(64))]
struct Line([AtomicU64; 8]);

impl Line {
    fn empty() -> Line {
        Line(std::array::from_fn(|_| AtomicU64::new(0)))
    }

    /// Every word (what a reader must then validate; exact for the shard's writer).
    #[inline(always)]
    fn load(&self) -> [u64; 8] {
        std::array::from_fn(|k| self.0[k].load(Ordering::Relaxed))
    }

    #[inline(always)]
    fn meta(&self) -> u64 {
        self.0[3].load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn holds(&self, key: &[u64; 3], len: usize) -> bool {
        self.meta() as u8 as usize == len
            && (0..3).all(|k| self.0[k].load(Ordering::Relaxed) == key[k])
    }
}

/// The words of a line holding `key` (as [`line_key`] gives it, `len` bytes) and `ids`.
fn pack(key: &[u64; 3], len: usize, ids: &[u32]) -> [u64; 8] {
    let mut all = [0u32; LINE_IDS];
    all[..ids.len()].copy_from_slice(ids);
    let pair = |k: usize| u64::from(all[k]) | (u64::from(all[k + 1]) << 32);
    [
        key[0],
        key[1],
        key[2],
        len as u64 | ((ids.len() as u64) << 8) | (u64::from(all[0]) << 32),
        pair(1),
        pair(3),
        pair(5),
        pair(7),
    ]
}

/// The ids of a line's words, and how many there are.
#[inline(always)]
fn unpack(words: &[u64; 8]) -> ([u32; LINE_IDS], usize) {
    let mut ids = [0u32; LINE_IDS];
    ids[0] = (words[3] >> 32) as u32;
    for k in 0..4 {
        ids[1 + 2 * k] = words[4 + k] as u32;
        ids[2 + 2 * k] = (words[4 + k] >> 32) as u32;
    }
    (ids, ((words[3] >> 8) as u8 as usize).min(LINE_IDS))
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

/// A shard's tables of lines (open addressing, a power of two long), read under a seqlock.
struct Lines {
    /// Odd while the shard's writer changes a line of the current table.
    seq: AtomicU64,
    /// Table `k` has `FIRST_LINES << k` lines; each is made once, when the shard grows into it.
    levels: [OnceLock<Box<[Line]>>; LEVELS],
    /// 1 + the index of the table in use (0: none yet).
    current: AtomicUsize,
}

impl Default for Lines {
    fn default() -> Lines {
        Lines {
            seq: AtomicU64::new(0),
            levels: std::array::from_fn(|_| OnceLock::new()),
            current: AtomicUsize::new(0),
        }
    }
}

impl Lines {
    #[inline(always)]
    fn table(&self) -> &[Line] {
        match self.current.load(Ordering::Acquire) {
            0 => &[],
            k => self.levels[k - 1].get().map_or(&[], |t| &t[..]),
        }
    }

    #[inline(always)]
    fn slots(table: &[Line], h: u64) -> impl Iterator<Item = usize> {
        let mask = table.len().wrapping_sub(1);
        let home = h as usize & mask;
        (0..WAYS.min(table.len())).map(move |k| (home + k) & mask)
    }

    /// Append the ids of the piece (`key`, `len` bytes, hash `h`) to `out` if a line holds it
    /// and no writer changed the shard meanwhile; false otherwise (a miss).
    #[inline]
    fn get_into(&self, h: u64, key: &[u64; 3], len: usize, out: &mut Vec<u32>) -> bool {
        let seq = self.seq.load(Ordering::Acquire);
        if seq & 1 != 0 {
            return false;
        }
        let table = self.table();
        for i in Self::slots(table, h) {
            let words = table[i].load();
            if words[3] as u8 as usize != len || words[..3] != key[..] {
                continue;
            }
            let (ids, n) = unpack(&words);
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) != seq {
                return false; // torn: a writer was here
            }
            out.extend_from_slice(&ids[..n]);
            return true;
        }
        false
    }

    /// Run `change` on the current table's lines with the sequence number odd, so that no
    /// reader takes a line meanwhile. Only the shard's writer, holding its lock; also after a
    /// writer panicked midway (the odd number it left is made even again).
    fn changing(&self, change: impl FnOnce(&[Line])) {
        let seq = self.seq.load(Ordering::Relaxed) | 1;
        self.seq.store(seq, Ordering::Relaxed);
        fence(Ordering::Release);
        change(self.table());
        self.seq.store(seq + 1, Ordering::Release);
    }

    /// Store `words` in line `i` of the current table.
    fn write(&self, i: usize, words: &[u64; 8]) {
        self.changing(|table| {
            for (w, &v) in table[i].0.iter().zip(words) {
                w.store(v, Ordering::Relaxed);
            }
        });
    }

    /// Move to a table twice as large (up to `max` lines), putting every line back; returns
    /// the lines now in use. Only the shard's writer. Readers see the new table once it is
    /// whole; the old one is never written again.
    fn grow(&self, max: usize) -> usize {
        let old = self.table();
        let size = (old.len() * 2).max(FIRST_LINES).min(max);
        let level = (size / FIRST_LINES).trailing_zeros() as usize;
        if size <= old.len() || level >= LEVELS {
            return old.iter().filter(|l| l.meta() != 0).count();
        }
        let fresh: Box<[Line]> = (0..size).map(|_| Line::empty()).collect();
        let mut used = 0;
        for line in old.iter().filter(|l| l.meta() != 0) {
            let words = line.load();
            let len = words[3] as u8 as usize;
            let mut bytes = [0u8; LINE_KEY];
            for (k, w) in words[..3].iter().enumerate() {
                bytes[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
            }
            let h = hash(&bytes[..len]);
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
                line.0[3].store(0, Ordering::Relaxed);
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
        lines * std::mem::size_of::<Line>()
    }
}

/// What a shard's writers change under its lock besides the lines.
#[derive(Default)]
struct Shard {
    /// Lines in use in the current table.
    used: usize,
    /// The other pieces, and the bytes they are counted at.
    map: FxHashMap<Box<[u8]>, Box<[u32]>>,
    bytes: usize,
}

/// A shard on cache lines of its own: threads using neighbouring shards would otherwise pass
/// one line back and forth on every lookup.
#[repr(align(128))]
#[derive(Default)]
struct Slot {
    lines: Lines,
    /// Whether the map holds a piece short enough for a line (one of more than [`LINE_IDS`]
    /// ids): only then does a short piece that no line holds take the lock to ask the map.
    short_in_map: AtomicBool,
    shard: Mutex<Shard>,
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
    /// Most lines a shard's table grows to (a power of two; 0: no table): every table it grows
    /// through is kept, so together they stay under twice this, half the shard's budget.
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
        let lines = shard_budget / 4 / std::mem::size_of::<Line>();
        let max_lines = if lines >= FIRST_LINES {
            1 << lines.ilog2()
        } else {
            0
        };
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

    #[inline(always)]
    fn slot(&self, h: u64) -> &Slot {
        &self.shards.get()[(h >> 58) as usize % SHARDS]
    }

    /// Append the cached ids of `key` to `out`; false on a miss.
    #[inline]
    pub fn get_into(&self, key: &[u8], out: &mut Vec<u32>) -> bool {
        if !self.enabled() || key.len() > MAX_PIECE || key.len() < MIN_PIECE {
            return false;
        }
        let h = hash(key);
        let slot = self.slot(h);
        if key.len() <= LINE_KEY {
            if self.max_lines > 0 && slot.lines.get_into(h, &line_key(key), key.len(), out) {
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
        if key.len() <= LINE_KEY && ids.len() <= LINE_IDS && self.max_lines > 0 {
            let size = slot.lines.table().len();
            if 2 * (shard.used + 1) > size && size < self.max_lines {
                shard.used = slot.lines.grow(self.max_lines);
            }
            let table = slot.lines.table();
            let words = line_key(key);
            let free = Lines::slots(table, h)
                .find(|&i| table[i].meta() == 0 || table[i].holds(&words, key.len()));
            // Full around its home: the piece takes the home slot (the newer piece is kept).
            let i = free.unwrap_or(h as usize & (table.len() - 1));
            shard.used += usize::from(table[i].meta() == 0);
            slot.lines.write(i, &pack(&words, key.len(), ids));
            return;
        }
        let cost = key.len() + 4 * ids.len() + ENTRY_OVERHEAD;
        if shard.bytes + cost > self.shard_budget / 2 {
            shard.map = FxHashMap::default(); // frees the table too, not just its entries
            shard.bytes = 0;
            slot.short_in_map.store(false, Ordering::Relaxed);
        }
        if key.len() <= LINE_KEY {
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
            .filter_map(|s| s.lock().map(|shard| shard.bytes + s.lines.bytes()))
            .sum()
    }

    /// Pieces held.
    pub fn len(&self) -> usize {
        self.shards
            .get()
            .iter()
            .filter_map(|s| s.lock().map(|shard| shard.map.len() + shard.used))
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
                *shard = Shard::default();
                slot.short_in_map.store(false, Ordering::Relaxed);
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
    fn lines_hold_short_pieces_within_the_budget() {
        // 64 shards of 16 kB: tables of up to 64 lines each, the rest to the maps.
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
        // Cleared, nothing is found any more; the tables keep their memory, within the budget.
        cache.clear();
        assert!(cache.is_empty() && cache.bytes() <= 1 << 20);
        assert!((0..20_000u32).all(|i| !cache.get_into(key(i).as_bytes(), &mut out)));
    }

    #[test]
    fn readers_never_see_a_torn_line() {
        // Two threads overwrite the lines of a small cache with pieces that evict each other
        // (and now and then clear it) while two others read the same pieces; every hit must
        // give the piece's own ids, never a line half-written.
        let cache = PieceCache::new(1 << 20);
        let key = |i: u32| format!("k{i:07}");
        let ids = |i: u32| -> Vec<u32> {
            (0..1 + i % 9)
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
        assert!(cache.bytes() <= 1 << 20);
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
