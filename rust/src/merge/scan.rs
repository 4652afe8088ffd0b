//! The scan for short words (up to [`SCAN_LIMIT`] ids, its arrays on the stack): the pair ranks
//! kept beside the ids, the lowest one found by a pass and merged, its neighbours looked up
//! again; also the scan with a trace of each merge. It does not handle long words (O(n²) on
//! them: `buckets` does).

use super::{Merge, Pairs, SCAN_LIMIT};

/// "No merge" in the scan; a merge's rank is its index in a merge list, so never this.
pub(super) const NO_RANK: u32 = u32::MAX;

/// `seeds`: the only pairs to look up at first (all of them if `None`).
pub(super) fn merge_scan<T: Pairs + ?Sized>(
    ids: &mut Vec<u32>,
    table: &T,
    seeds: Option<&[usize]>,
) {
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

pub(super) fn scan<T: Pairs + ?Sized>(
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
