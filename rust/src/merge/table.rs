//! [`PairTable`]: `(left, right) -> Merge` in one open-addressing array, in a 16-bit form while
//! every id and rank fits and a 32-bit form after, with a bit per left id that turns most
//! unmergeable units away before a probe. It does not merge a word (`scan`, `buckets`).

use super::{Merge, Pairs};
use crate::huge::HugeSlice;
use crate::memory::{self, NoMemory};

impl Pairs for PairTable {
    #[inline]
    fn get(&self, left: u32, right: u32) -> Option<Merge> {
        PairTable::get(self, left, right)
    }
}

/// `(left, right) -> Merge`: open addressing with linear probing over one array, each slot
/// holding its key and its merge, so a lookup usually costs one cache line (a general hash map
/// keeps control bytes apart from the entries: two). While every id and rank fits in 16 bits
/// (an SGPE vocabulary of up to 65,534 tokens) a slot is 8 bytes instead of 16: half the
/// memory, so more of the table stays in cache.
#[derive(Clone, Debug, Default)]
pub struct PairTable {
    /// 16-bit form: `left << 48 | right << 32 | rank << 16 | id`, or [`EMPTY`].
    compact: HugeSlice<u64>,
    /// 32-bit form, once anything does not fit in 16 bits.
    wide: HugeSlice<Slot>,
    len: usize,
    shift: u32,
    /// The pair `(u32::MAX, u32::MAX)`, whose key marks empty slots.
    last_pair: Option<Merge>,
    /// Bit `i`: some pair has left id `i` (ids below [`LEFT_BITS`]). Most units that cannot
    /// merge (byte-fallback tokens, punctuation) are turned away here, in L1, without a probe.
    lefts: Vec<u64>,
}

/// Ids at or above this are not in [`PairTable::lefts`] (always probed).
const LEFT_BITS: u32 = 1 << 22;
/// Ids and ranks up to this fit the 16-bit form.
const SMALL: u32 = 0xFFFE;

#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    merge: Merge,
}

const EMPTY: u64 = u64::MAX;

#[inline]
fn key(left: u32, right: u32) -> u64 {
    (u64::from(left) << 32) | u64::from(right)
}

#[inline(always)]
fn bucket(key: u64, shift: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl PairTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        let mut table = Self::default();
        table.resize(n).unwrap_or_else(|e| e.abort());
        table
    }

    pub(super) fn is_wide(&self) -> bool {
        !self.wide.is_empty()
    }

    fn size(&self) -> usize {
        if self.is_wide() {
            self.wide.len()
        } else {
            self.compact.len()
        }
    }

    /// Room for `n` entries at a load of at most 3/4.
    fn resize(&mut self, n: usize) -> Result<(), NoMemory> {
        let size = (n * 4 / 3 + 1).next_power_of_two().max(16);
        if size <= self.size() {
            return Ok(());
        }
        self.rebuild(size, self.is_wide())
    }

    /// Every entry held in the table (not the pair kept in `last_pair`), as (key, merge).
    fn entries(&self) -> Result<Vec<(u64, Merge)>, NoMemory> {
        let mut entries = Vec::new();
        memory::reserve(&mut entries, self.len)?;
        if self.is_wide() {
            entries.extend(
                self.wide
                    .iter()
                    .filter(|s| s.key != EMPTY)
                    .map(|s| (s.key, s.merge)),
            );
        } else {
            entries.extend(self.compact.iter().filter(|&&s| s != EMPTY).map(|&s| {
                let (l, r) = ((s >> 48) as u32, (s >> 32) as u32 & 0xFFFF);
                (
                    key(l, r),
                    Merge {
                        rank: (s >> 16) as u32 & 0xFFFF,
                        id: s as u32 & 0xFFFF,
                    },
                )
            }));
        }
        Ok(entries)
    }

    /// Every entry into a table of `size` slots, in the wide form if `wide` (the table as it
    /// was where the memory for that cannot be had).
    fn rebuild(&mut self, size: usize, wide: bool) -> Result<(), NoMemory> {
        let entries = self.entries()?;
        if wide {
            let empty = Slot {
                key: EMPTY,
                merge: Merge { rank: 0, id: 0 },
            };
            self.wide = HugeSlice::try_filled(size, empty)?;
            self.compact = HugeSlice::default();
            self.shift = 64 - size.trailing_zeros();
            for (k, merge) in entries {
                let i = self.find_wide(k);
                self.wide[i] = Slot { key: k, merge };
            }
        } else {
            self.compact = HugeSlice::try_filled(size, EMPTY)?;
            self.shift = 64 - size.trailing_zeros();
            for (k, merge) in entries {
                let packed = compact_key(k);
                let i = self.find_compact(packed);
                self.compact[i] = packed | u64::from(merge.rank) << 16 | u64::from(merge.id);
            }
        }
        Ok(())
    }

    /// The slot of `key`, or the empty slot where it would go (wide form).
    #[inline(always)]
    fn find_wide(&self, key: u64) -> usize {
        let mask = self.wide.len() - 1;
        let mut i = bucket(key, self.shift);
        loop {
            let k = self.wide[i].key;
            if k == key || k == EMPTY {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The slot of `packed` (a 16-bit form key: the high 32 bits), or the empty slot.
    #[inline(always)]
    fn find_compact(&self, packed: u64) -> usize {
        let mask = self.compact.len() - 1;
        let mut i = bucket(packed, self.shift);
        loop {
            let s = self.compact[i];
            if s == EMPTY || s & 0xFFFF_FFFF_0000_0000 == packed {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Add a merge; a pair already present keeps its first (lowest-ranked) merge. Returns
    /// whether the pair was new.
    pub fn insert(&mut self, left: u32, right: u32, merge: Merge) -> bool {
        self.try_insert(left, right, merge)
            .unwrap_or_else(|e| e.abort())
    }

    /// [`Self::insert`], or [`NoMemory`] where the table must grow and cannot (it is then as it
    /// was).
    pub fn try_insert(&mut self, left: u32, right: u32, merge: Merge) -> Result<bool, NoMemory> {
        let k = key(left, right);
        if k == EMPTY {
            let new = self.last_pair.is_none();
            self.last_pair.get_or_insert(merge);
            return Ok(new);
        }
        if self.get(left, right).is_some() {
            return Ok(false);
        }
        if !fits_compact(left, right, merge) {
            self.go_wide()?;
        }
        self.resize(self.len + 1)?;
        if left < LEFT_BITS {
            let word = (left / 64) as usize;
            if word >= self.lefts.len() {
                self.lefts.resize(word + 1, 0);
            }
            self.lefts[word] |= 1 << (left % 64);
        }
        if self.is_wide() {
            let i = self.find_wide(k);
            self.wide[i] = Slot { key: k, merge };
        } else {
            let packed = compact_key(k);
            let i = self.find_compact(packed);
            self.compact[i] = packed | u64::from(merge.rank) << 16 | u64::from(merge.id);
        }
        self.len += 1;
        Ok(true)
    }

    /// [`Self::insert`] of every `(left, right, merge)`, with the same result as one by one in
    /// this order (the first of equal pairs wins), but done in the order of the table's slots:
    /// a vocabulary's 280,000 merges then fill the table front to back instead of missing the
    /// CPU cache once each.
    pub fn extend(&mut self, merges: &[(u32, u32, Merge)]) {
        self.try_extend(merges).unwrap_or_else(|e| e.abort());
    }

    /// [`Self::extend`], or [`NoMemory`] where the table cannot have the room.
    pub fn try_extend(&mut self, merges: &[(u32, u32, Merge)]) -> Result<(), NoMemory> {
        // The final form and size first: the slots below are those of the table filled.
        if !merges.iter().all(|&(l, r, m)| fits_compact(l, r, m)) {
            self.go_wide()?;
        }
        self.resize(self.len + merges.len())?;
        let wide = self.is_wide();
        // (slot, index): equal pairs (equal slots) stay in list order.
        let mut order: Vec<(usize, usize)> = Vec::new();
        memory::reserve(&mut order, merges.len())?;
        order.extend(merges.iter().enumerate().map(|(i, &(l, r, _))| {
            let k = key(l, r);
            (bucket(if wide { k } else { compact_key(k) }, self.shift), i)
        }));
        order.sort_unstable();
        for (_, i) in order {
            let (l, r, m) = merges[i];
            self.try_insert(l, r, m)?;
        }
        Ok(())
    }

    /// Switch to the 32-bit form (kept if already there).
    fn go_wide(&mut self) -> Result<(), NoMemory> {
        if !self.is_wide() {
            let size = self.size().max(16);
            self.rebuild(size, true)?;
        }
        Ok(())
    }

    #[inline]
    pub fn get(&self, left: u32, right: u32) -> Option<Merge> {
        let k = key(left, right);
        if k == EMPTY {
            return self.last_pair;
        }
        if left < LEFT_BITS {
            match self.lefts.get((left / 64) as usize) {
                Some(word) if word & (1 << (left % 64)) != 0 => {}
                _ => return None,
            }
        }
        if self.is_wide() {
            let slot = self.wide[self.find_wide(k)];
            return (slot.key == k).then_some(slot.merge);
        }
        if self.compact.is_empty() || left > SMALL || right > SMALL {
            return None;
        }
        let packed = compact_key(k);
        let s = self.compact[self.find_compact(packed)];
        (s != EMPTY).then_some(Merge {
            rank: (s >> 16) as u32 & 0xFFFF,
            id: s as u32 & 0xFFFF,
        })
    }

    pub fn len(&self) -> usize {
        self.len + usize::from(self.last_pair.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held by the table.
    pub fn heap_bytes(&self) -> usize {
        self.compact.len() * 8
            + self.wide.len() * std::mem::size_of::<Slot>()
            + self.lefts.capacity() * 8
    }
}

/// Whether a merge fits the 16-bit form.
fn fits_compact(left: u32, right: u32, merge: Merge) -> bool {
    left <= SMALL && right <= SMALL && merge.rank <= SMALL && merge.id <= SMALL
}

/// The high 32 bits of a 16-bit form slot for the pair key `k` (both ids at most [`SMALL`]).
#[inline(always)]
fn compact_key(k: u64) -> u64 {
    ((k >> 32) << 48) | ((k & 0xFFFF) << 32)
}
