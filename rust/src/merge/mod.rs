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
//!
//! The pair table lives in `table`, the scan in `scan`, the rank buckets and the long-word merge
//! in `buckets`; this module holds the entry points, which choose between them.

use crate::memory::NoMemory;

mod buckets;
mod scan;
mod table;
#[cfg(test)]
mod tests;

use buckets::merge_long;
pub(crate) use buckets::RankBuckets;
use scan::{merge_scan, scan, NO_RANK};
pub use table::PairTable;

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
