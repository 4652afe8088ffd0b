//! Applying ranked merges to one word of token ids.
//!
//! The rule shared by SGPE, Hugging Face BPE, GGUF and tiktoken: repeatedly merge the adjacent
//! pair with the lowest rank (the leftmost one among equal ranks) until no adjacent pair has a
//! rank. A [`PairTable`] says what each pair merges into. tiktoken's "ranks" rule fits too: the
//! pair `(a, b)` merges into the token `a + b`, with that token's id as its rank.
//!
//! Short words use a scan over the pair ranks; long ones a linked list swept rank by rank
//! (buckets of positions), so a 1 MB run costs a few linear passes and never O(n²). This
//! module does not decide what the units are: anything implementing [`Pairs`] drives the loops
//! (byte-level's ranks rule looks the concatenated bytes up instead of keeping a pair table).

use crate::huge::HugeSlice;
use crate::memory::{self, NoMemory};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What an adjacent pair of ids becomes: the merged id, and the merge's rank (lower first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merge {
    pub rank: u32,
    pub id: u32,
}

/// What an adjacent pair of ids merges into, if anything.
pub trait Pairs {
    fn get(&self, left: u32, right: u32) -> Option<Merge>;
}

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
        table.resize(n);
        table
    }

    fn is_wide(&self) -> bool {
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
    fn resize(&mut self, n: usize) {
        let size = (n * 4 / 3 + 1).next_power_of_two().max(16);
        if size <= self.size() {
            return;
        }
        self.rebuild(size, self.is_wide());
    }

    /// Every entry held in the table (not the pair kept in `last_pair`), as (key, merge).
    fn entries(&self) -> Vec<(u64, Merge)> {
        if self.is_wide() {
            self.wide
                .iter()
                .filter(|s| s.key != EMPTY)
                .map(|s| (s.key, s.merge))
                .collect()
        } else {
            self.compact
                .iter()
                .filter(|&&s| s != EMPTY)
                .map(|&s| {
                    let (l, r) = ((s >> 48) as u32, (s >> 32) as u32 & 0xFFFF);
                    (
                        key(l, r),
                        Merge {
                            rank: (s >> 16) as u32 & 0xFFFF,
                            id: s as u32 & 0xFFFF,
                        },
                    )
                })
                .collect()
        }
    }

    /// Every entry into a table of `size` slots, in the wide form if `wide`.
    fn rebuild(&mut self, size: usize, wide: bool) {
        let entries = self.entries();
        self.shift = 64 - size.trailing_zeros();
        if wide {
            self.compact = HugeSlice::default();
            self.wide = HugeSlice::new(
                size,
                Slot {
                    key: EMPTY,
                    merge: Merge { rank: 0, id: 0 },
                },
            );
            for (k, merge) in entries {
                let i = self.find_wide(k);
                self.wide[i] = Slot { key: k, merge };
            }
        } else {
            self.compact = HugeSlice::new(size, EMPTY);
            for (k, merge) in entries {
                let packed = compact_key(k);
                let i = self.find_compact(packed);
                self.compact[i] = packed | u64::from(merge.rank) << 16 | u64::from(merge.id);
            }
        }
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
        let k = key(left, right);
        if k == EMPTY {
            let new = self.last_pair.is_none();
            self.last_pair.get_or_insert(merge);
            return new;
        }
        if self.get(left, right).is_some() {
            return false;
        }
        if left < LEFT_BITS {
            let word = (left / 64) as usize;
            if word >= self.lefts.len() {
                self.lefts.resize(word + 1, 0);
            }
            self.lefts[word] |= 1 << (left % 64);
        }
        if !fits_compact(left, right, merge) {
            self.go_wide();
        }
        self.resize(self.len + 1);
        if self.is_wide() {
            let i = self.find_wide(k);
            self.wide[i] = Slot { key: k, merge };
        } else {
            let packed = compact_key(k);
            let i = self.find_compact(packed);
            self.compact[i] = packed | u64::from(merge.rank) << 16 | u64::from(merge.id);
        }
        self.len += 1;
        true
    }

    /// [`Self::insert`] of every `(left, right, merge)`, with the same result as one by one in
    /// this order (the first of equal pairs wins), but done in the order of the table's slots:
    /// a vocabulary's 280,000 merges then fill the table front to back instead of missing the
    /// CPU cache once each.
    pub fn extend(&mut self, merges: &[(u32, u32, Merge)]) {
        // The final form and size first: the slots below are those of the table filled.
        if !merges.iter().all(|&(l, r, m)| fits_compact(l, r, m)) {
            self.go_wide();
        }
        self.resize(self.len + merges.len());
        let wide = self.is_wide();
        // (slot, index): equal pairs (equal slots) stay in list order.
        let mut order: Vec<(usize, usize)> = merges
            .iter()
            .enumerate()
            .map(|(i, &(l, r, _))| {
                let k = key(l, r);
                (bucket(if wide { k } else { compact_key(k) }, self.shift), i)
            })
            .collect();
        order.sort_unstable();
        for (_, i) in order {
            let (l, r, m) = merges[i];
            self.insert(l, r, m);
        }
    }

    /// Switch to the 32-bit form (kept if already there).
    fn go_wide(&mut self) {
        if !self.is_wide() {
            let size = self.size().max(16);
            self.rebuild(size, true);
        }
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

/// Words longer than this use the rank buckets; the scan is faster below it.
pub const SCAN_LIMIT: usize = 48;

/// Merge `ids` in place by `table` (see the module docs). Memory for a long word that cannot be
/// had stops the process, as any failed allocation does: encoders use [`try_merge`].
pub fn merge(ids: &mut Vec<u32>, table: &PairTable) {
    try_merge(ids, table).unwrap_or_else(|e| e.abort())
}

/// [`merge`], where memory for a long word that cannot be had is an error (see `crate::memory`).
pub fn try_merge(ids: &mut Vec<u32>, table: &PairTable) -> Result<(), NoMemory> {
    if table.is_empty() {
        return Ok(());
    }
    try_merge_with(ids, table)
}

/// Merge `ids` in place by any [`Pairs`] (see the module docs).
pub fn merge_with<T: Pairs + ?Sized>(ids: &mut Vec<u32>, table: &T) {
    try_merge_with(ids, table).unwrap_or_else(|e| e.abort())
}

/// [`merge_with`], where memory for a long word that cannot be had is an error.
pub fn try_merge_with<T: Pairs + ?Sized>(ids: &mut Vec<u32>, table: &T) -> Result<(), NoMemory> {
    if ids.len() < 2 {
        return Ok(());
    }
    if ids.len() <= SCAN_LIMIT {
        merge_scan(ids, table, None);
        Ok(())
    } else {
        merge_long(ids, table, None)
    }
}

/// [`merge`] where the caller knows that, of the adjacent pairs of `ids`, only those at
/// `seeds` (ascending positions `i` of the pairs `(ids[i], ids[i + 1])`) can merge: the other
/// pairs are not looked up at first. Pairs that merging forms are looked up as usual, so the
/// result is [`merge`]'s whenever that holds (SGPE's superword pass: only the pairs that join
/// two pieces can merge at first). Memory that cannot be had is an error, as in [`try_merge`].
pub fn try_merge_seeded<T: Pairs + ?Sized>(
    ids: &mut Vec<u32>,
    table: &T,
    seeds: &[usize],
) -> Result<(), NoMemory> {
    if ids.len() < 2 || seeds.is_empty() {
        return Ok(());
    }
    if ids.len() <= SCAN_LIMIT {
        merge_scan(ids, table, Some(seeds));
        Ok(())
    } else {
        merge_long(ids, table, Some(seeds))
    }
}

const NONE: u32 = u32::MAX;
/// "No merge" in the scan; a merge's rank is its index in a merge list, so never this.
const NO_RANK: u32 = u32::MAX;

/// `seeds`: the only pairs to look up at first (all of them if `None`).
fn merge_scan<T: Pairs + ?Sized>(ids: &mut Vec<u32>, table: &T, seeds: Option<&[usize]>) {
    // ranks[i], merged[i]: the merge of (ids[i], ids[i + 1]), NO_RANK if none. On the stack:
    // most words are a few units long and an allocation would cost more than the merging.
    if ids.len() > SCAN_LIMIT {
        // Only the tests scan long words (to compare with the rank buckets).
        let (mut ranks, mut merged) = (vec![NO_RANK; ids.len()], vec![0; ids.len()]);
        return scan(ids, table, &mut ranks, &mut merged, seeds, |_, _, _| {});
    }
    scan(
        ids,
        table,
        &mut [NO_RANK; SCAN_LIMIT],
        &mut [0; SCAN_LIMIT],
        seeds,
        |_, _, _| {},
    );
}

/// [`merge_with`]'s result, with every merge told to `merged` in order as (its position among
/// the units then, their count then, the merge): the trace of a word's merges, for a caller that
/// needs more than the result (see `bytelevel::whitespace`). Not for long words (the scan costs
/// O(n²) on them); the result is [`merge_with`]'s on any word.
pub fn merge_traced<T: Pairs + ?Sized>(
    ids: &mut Vec<u32>,
    table: &T,
    merged: impl FnMut(usize, usize, Merge),
) {
    if ids.len() < 2 {
        return;
    }
    let (mut ranks, mut ids_of) = (vec![NO_RANK; ids.len()], vec![0; ids.len()]);
    scan(ids, table, &mut ranks, &mut ids_of, None, merged);
}

fn scan<T: Pairs + ?Sized>(
    ids: &mut Vec<u32>,
    table: &T,
    ranks: &mut [u32],
    merged: &mut [u32],
    seeds: Option<&[usize]>,
    mut told: impl FnMut(usize, usize, Merge),
) {
    let mut len = ids.len();
    let lookup = |a: u32, b: u32| table.get(a, b).map_or((NO_RANK, 0), |m| (m.rank, m.id));
    match seeds {
        None => {
            for i in 0..len - 1 {
                (ranks[i], merged[i]) = lookup(ids[i], ids[i + 1]);
            }
        }
        Some(seeds) => {
            ranks[..len - 1].fill(NO_RANK);
            for &i in seeds {
                (ranks[i], merged[i]) = lookup(ids[i], ids[i + 1]);
            }
        }
    }
    loop {
        let mut best = NO_RANK;
        let mut i = 0;
        for (k, &r) in ranks[..len - 1].iter().enumerate() {
            if r < best {
                best = r;
                i = k;
            }
        }
        if best == NO_RANK {
            break;
        }
        told(
            i,
            len,
            Merge {
                rank: best,
                id: merged[i],
            },
        );
        ids[i] = merged[i];
        ids.remove(i + 1);
        ranks.copy_within(i + 1..len - 1, i);
        merged.copy_within(i + 1..len - 1, i);
        len -= 1;
        if i + 1 < len {
            (ranks[i], merged[i]) = lookup(ids[i], ids[i + 1]);
        }
        if i > 0 {
            (ranks[i - 1], merged[i - 1]) = lookup(ids[i - 1], ids[i]);
        }
        if len == 1 {
            break;
        }
    }
}

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

fn merge_long<T: Pairs + ?Sized>(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule spelled out: rescan everything after every merge (quadratic, obviously right).
    fn reference(mut ids: Vec<u32>, table: &PairTable) -> Vec<u32> {
        loop {
            let best = (0..ids.len().saturating_sub(1))
                .filter_map(|i| table.get(ids[i], ids[i + 1]).map(|m| (m.rank, i, m.id)))
                .min();
            match best {
                None => return ids,
                Some((_, i, id)) => {
                    ids[i] = id;
                    ids.remove(i + 1);
                }
            }
        }
    }

    /// A small deterministic generator (no test dependency needed).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, bound: u32) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % u64::from(bound)) as u32
        }
    }

    fn random_table(rng: &mut Lcg, symbols: u32, merges: u32) -> PairTable {
        let mut table = PairTable::new();
        for rank in 0..merges {
            let (a, b) = (rng.next(symbols + rank), rng.next(symbols + rank));
            table.insert(
                a,
                b,
                Merge {
                    rank,
                    id: symbols + rank,
                },
            );
        }
        table
    }

    /// Any pairs, any ranks, ids reused, ranks shared: a merge may create a pair that ranks
    /// lower than itself (which BPE-trained tables never do), and equal ranks tie.
    fn scrambled_table(rng: &mut Lcg, symbols: u32, merges: u32) -> PairTable {
        let mut table = PairTable::new();
        for _ in 0..merges {
            let (a, b) = (rng.next(symbols + 3), rng.next(symbols + 3));
            let merge = Merge {
                rank: rng.next(merges),
                id: rng.next(symbols + 3),
            };
            table.insert(a, b, merge);
        }
        table
    }

    #[test]
    fn scan_and_buckets_equal_the_reference() {
        let mut rng = Lcg(7);
        for round in 0..3000 {
            let symbols = 2 + rng.next(6);
            let merges = 1 + rng.next(40);
            let table = if round % 3 == 2 {
                scrambled_table(&mut rng, symbols, merges)
            } else {
                random_table(&mut rng, symbols, merges)
            };
            let len = if round % 2 == 0 {
                rng.next(SCAN_LIMIT as u32)
            } else {
                49 + rng.next(300)
            };
            let word: Vec<u32> = (0..len).map(|_| rng.next(symbols)).collect();
            let expected = reference(word.clone(), &table);
            let mut got = word.clone();
            merge(&mut got, &table);
            assert_eq!(got, expected, "word {word:?}");
            let (mut scan, mut heap) = (word.clone(), word.clone());
            if word.len() >= 2 {
                merge_scan(&mut scan, &table, None);
                merge_long(&mut heap, &table, None).unwrap();
            }
            assert_eq!(scan, expected);
            assert_eq!(heap, expected);
        }
    }

    #[test]
    fn seeded_merges_equal_the_reference() {
        // Seeded with exactly the pairs that have a merge at first (the precondition), both the
        // scan and the rank buckets find what the rule finds.
        let mut rng = Lcg(11);
        for round in 0..3000 {
            let symbols = 2 + rng.next(8);
            let merges = 1 + rng.next(40);
            let table = if round % 3 == 2 {
                scrambled_table(&mut rng, symbols, merges)
            } else {
                random_table(&mut rng, symbols, merges)
            };
            let len = 2 + rng.next(if round % 2 == 0 { 40 } else { 300 });
            let word: Vec<u32> = (0..len).map(|_| rng.next(symbols)).collect();
            let seeds: Vec<usize> = (0..word.len() - 1)
                .filter(|&i| table.get(word[i], word[i + 1]).is_some())
                .collect();
            let expected = reference(word.clone(), &table);
            let mut got = word.clone();
            try_merge_seeded(&mut got, &table, &seeds).unwrap();
            assert_eq!(got, expected, "word {word:?}");
            let (mut scan, mut heap) = (word.clone(), word.clone());
            merge_scan(&mut scan, &table, Some(&seeds));
            merge_long(&mut heap, &table, Some(&seeds)).unwrap();
            assert_eq!(scan, expected);
            assert_eq!(heap, expected);
        }
    }

    #[test]
    fn ties_go_to_the_leftmost_pair() {
        let mut table = PairTable::new();
        table.insert(1, 1, Merge { rank: 0, id: 2 });
        let mut ids = vec![1, 1, 1];
        merge(&mut ids, &table);
        assert_eq!(ids, vec![2, 1]);
        let mut long = vec![1; 101];
        merge(&mut long, &table);
        assert_eq!(long.len(), 51);
        assert_eq!(long[50], 1);
    }

    #[test]
    fn the_compact_form_turns_wide_when_needed() {
        let mut table = PairTable::new();
        for i in 0..3000u32 {
            table.insert(i % 700, i / 700, Merge { rank: i, id: i + 1 });
        }
        assert!(!table.is_wide());
        assert_eq!(
            table.get(5, 2),
            Some(Merge {
                rank: 1405,
                id: 1406
            })
        );
        assert_eq!(table.get(70_000, 2), None);
        table.insert(
            70_000,
            2,
            Merge {
                rank: 3000,
                id: 3001,
            },
        );
        assert!(table.is_wide());
        assert_eq!(
            table.get(5, 2),
            Some(Merge {
                rank: 1405,
                id: 1406
            })
        );
        assert_eq!(
            table.get(70_000, 2),
            Some(Merge {
                rank: 3000,
                id: 3001
            })
        );
        assert_eq!(table.len(), 3001);
        let mut ranks = PairTable::new();
        ranks.insert(
            1,
            2,
            Merge {
                rank: 100_000,
                id: 3,
            },
        );
        assert!(ranks.is_wide());
        assert_eq!(
            ranks.get(1, 2),
            Some(Merge {
                rank: 100_000,
                id: 3
            })
        );
    }

    #[test]
    fn the_table_grows_and_keeps_every_pair() {
        let mut table = PairTable::new();
        for i in 0..10_000u32 {
            assert!(table.insert(i, i.wrapping_mul(7), Merge { rank: i, id: i + 1 }));
        }
        assert!(table.insert(u32::MAX, u32::MAX, Merge { rank: 5, id: 6 }));
        assert!(!table.insert(u32::MAX, u32::MAX, Merge { rank: 7, id: 8 }));
        assert_eq!(table.len(), 10_001);
        for i in 0..10_000u32 {
            assert_eq!(
                table.get(i, i.wrapping_mul(7)),
                Some(Merge { rank: i, id: i + 1 })
            );
            assert_eq!(table.get(i, i.wrapping_mul(7) + 1), None);
        }
        assert_eq!(
            table.get(u32::MAX, u32::MAX),
            Some(Merge { rank: 5, id: 6 })
        );
        assert_eq!(PairTable::new().get(1, 2), None);
        assert_eq!(PairTable::new().get(u32::MAX - 1, 2), None);
        let mut big = PairTable::new();
        big.insert(u32::MAX - 1, 3, Merge { rank: 0, id: 1 });
        assert_eq!(big.get(u32::MAX - 1, 3), Some(Merge { rank: 0, id: 1 }));
        assert_eq!(big.get(u32::MAX - 1, 4), None);
    }

    /// `extend` gives the table that inserting one by one gives: the first of repeated pairs
    /// wins, small and wide ids, the pair whose key marks empty slots, into empty and filled
    /// tables.
    #[test]
    fn extend_equals_inserting_in_order() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % u64::from(n)) as u32
        };
        for (count, top) in [(0, 10), (50, 8), (3000, 60), (3000, 1 << 20), (20_000, 400)] {
            let mut merges: Vec<(u32, u32, Merge)> = (0..count)
                .map(|rank| {
                    let id = 1000 + next(top);
                    (next(top), next(top), Merge { rank, id })
                })
                .collect();
            merges.push((u32::MAX, u32::MAX, Merge { rank: 1, id: 2 }));
            for before in [0usize, 5] {
                let (mut one, mut bulk) = (PairTable::new(), PairTable::new());
                for &(l, r, m) in &merges[..before.min(merges.len())] {
                    one.insert(l, r, m);
                    bulk.insert(l, r, m);
                }
                for &(l, r, m) in &merges[before.min(merges.len())..] {
                    one.insert(l, r, m);
                }
                bulk.extend(&merges[before.min(merges.len())..]);
                assert_eq!(one.len(), bulk.len());
                for &(l, r, _) in &merges {
                    assert_eq!(one.get(l, r), bulk.get(l, r), "({l}, {r})");
                    assert_eq!(
                        one.get(l, r.wrapping_add(1)),
                        bulk.get(l, r.wrapping_add(1))
                    );
                }
            }
        }
    }

    #[test]
    fn a_repeated_pair_keeps_its_first_rank() {
        let mut table = PairTable::new();
        assert!(table.insert(1, 2, Merge { rank: 3, id: 9 }));
        assert!(!table.insert(1, 2, Merge { rank: 1, id: 8 }));
        assert_eq!(table.get(1, 2), Some(Merge { rank: 3, id: 9 }));
    }

    #[test]
    fn a_long_run_is_not_quadratic() {
        // 256k copies of one unit that merge pairwise: finishes quickly only if O(n log n).
        let mut table = PairTable::new();
        for rank in 0..20 {
            table.insert(rank + 1, rank + 1, Merge { rank, id: rank + 2 });
        }
        let mut ids = vec![1u32; 1 << 18];
        merge(&mut ids, &table);
        assert_eq!(ids, vec![19]);
    }
}
