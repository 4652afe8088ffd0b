//! A shard's tables of [`Line`]s: pieces kept whole in one or two cache lines, in an
//! open-addressing table read without a lock under the shard's seqlock, doubled as it fills
//! (the tables grown out of kept until the cache is dropped). It does not decide which pieces
//! are kept, take the shard's lock, or hold the budget (the cache does).

use super::{hash, Wide, MOST_IDS, SHARD_BITS};
use std::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

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
pub(super) struct Line<const K: usize, const W: usize>([AtomicU64; W]);

impl<const K: usize, const W: usize> Line<K, W> {
    /// Longest key and most ids a line holds.
    pub(super) const KEY: usize = 8 * K;
    pub(super) const IDS: usize = 1 + 2 * (W - K - 1);

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
        crate::bytelevel::memo::extend_first(out, &ids, n);
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
pub(super) fn line_key<const K: usize>(key: &[u8]) -> [u64; K] {
    let mut words = [0u64; K];
    for (w, chunk) in words.iter_mut().zip(key.chunks(8)) {
        *w = crate::bytelevel::table::load_le(chunk);
    }
    words
}

/// A shard's tables of lines (open addressing), read under a seqlock.
pub(super) struct Lines<const K: usize, const W: usize> {
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
    pub(super) fn get_into(&self, h: u64, key: &[u64; K], len: usize, out: &mut Vec<u32>) -> bool {
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
    pub(super) fn put(
        &self,
        used: &mut usize,
        room: usize,
        h: u64,
        key: &[u8],
        ids: &[u32],
    ) -> bool {
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
    pub(super) fn clear(&self) {
        self.changing(|table| {
            for line in table {
                line.0[K].store(0, Ordering::Relaxed);
            }
        });
    }

    /// Bytes of every table made (the ones grown out of included).
    pub(super) fn bytes(&self) -> usize {
        let lines: usize = self
            .levels
            .iter()
            .filter_map(|l| l.get())
            .map(|t| t.len())
            .sum();
        lines * std::mem::size_of::<Line<K, W>>()
    }

    /// Bytes of the table in use.
    pub(super) fn table_bytes(&self) -> usize {
        std::mem::size_of_val(self.table())
    }
}
