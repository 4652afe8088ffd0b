//! Applying ranked merges to one word of token ids.
//!
//! The rule shared by SGPE, Hugging Face BPE, GGUF and tiktoken: repeatedly merge the adjacent
//! pair with the lowest rank (the leftmost one among equal ranks) until no adjacent pair has a
//! rank. A [`PairTable`] says what each pair merges into. tiktoken's "ranks" rule fits too: the
//! pair `(a, b)` merges into the token `a + b`, with that token's id as its rank.
//!
//! Short words use a scan over the pair ranks; long ones a heap over a linked list, so a
//! 100 kB run costs O(n log n), never O(n²). This module does not decide what the units are.

use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What an adjacent pair of ids becomes: the merged id, and the merge's rank (lower first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merge {
    pub rank: u32,
    pub id: u32,
}

/// `(left, right) -> Merge`, keyed by one `u64` so a lookup hashes a single integer.
#[derive(Clone, Debug, Default)]
pub struct PairTable {
    map: FxHashMap<u64, Merge>,
}

#[inline]
fn key(left: u32, right: u32) -> u64 {
    (u64::from(left) << 32) | u64::from(right)
}

impl PairTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        let mut map = FxHashMap::default();
        map.reserve(n);
        Self { map }
    }

    /// Add a merge; a pair already present keeps its first (lowest-ranked) merge. Returns
    /// whether the pair was new.
    pub fn insert(&mut self, left: u32, right: u32, merge: Merge) -> bool {
        match self.map.entry(key(left, right)) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(merge);
                true
            }
        }
    }

    #[inline]
    pub fn get(&self, left: u32, right: u32) -> Option<Merge> {
        self.map.get(&key(left, right)).copied()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Bytes held by the table (an estimate: entries times their size, plus hash control bytes).
    pub fn heap_bytes(&self) -> usize {
        self.map.capacity() * (std::mem::size_of::<(u64, Merge)>() + 1)
    }
}

/// Words longer than this use the heap; the scan is faster below it.
pub const SCAN_LIMIT: usize = 48;

/// Merge `ids` in place by `table` (see the module docs).
pub fn merge(ids: &mut Vec<u32>, table: &PairTable) {
    if ids.len() < 2 || table.is_empty() {
        return;
    }
    if ids.len() <= SCAN_LIMIT {
        merge_scan(ids, table);
    } else {
        merge_heap(ids, table);
    }
}

const NONE: u32 = u32::MAX;

fn merge_scan(ids: &mut Vec<u32>, table: &PairTable) {
    // ranks[i]: the merge of (ids[i], ids[i + 1]), if any.
    let mut merges: Vec<Option<Merge>> = ids.windows(2).map(|w| table.get(w[0], w[1])).collect();
    loop {
        let mut best: Option<(usize, Merge)> = None;
        for (i, m) in merges.iter().enumerate() {
            if let Some(m) = m {
                match best {
                    Some((_, b)) if b.rank <= m.rank => {}
                    _ => best = Some((i, *m)),
                }
            }
        }
        let Some((i, m)) = best else { break };
        ids[i] = m.id;
        ids.remove(i + 1);
        merges.remove(i);
        if i < merges.len() {
            merges[i] = table.get(ids[i], ids[i + 1]);
        }
        if i > 0 {
            merges[i - 1] = table.get(ids[i - 1], ids[i]);
        }
    }
}

fn merge_heap(ids: &mut Vec<u32>, table: &PairTable) {
    // A doubly linked list over the original positions; a heap entry (rank, left position,
    // left id, right id) is stale once either unit has changed. Ids at a position only ever
    // grow into longer tokens, never back, so comparing the ids detects every change.
    let n = ids.len();
    let mut next: Vec<u32> = (1..=n as u32).collect();
    next[n - 1] = NONE;
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    prev[0] = NONE;
    let mut heap: BinaryHeap<Reverse<(u32, u32, u32, u32)>> = BinaryHeap::with_capacity(n);
    for i in 0..n - 1 {
        if let Some(m) = table.get(ids[i], ids[i + 1]) {
            heap.push(Reverse((m.rank, i as u32, ids[i], ids[i + 1])));
        }
    }
    let mut alive = vec![true; n];
    while let Some(Reverse((_, i, left, right))) = heap.pop() {
        let i = i as usize;
        let j = next[i];
        if !alive[i] || j == NONE || ids[i] != left || ids[j as usize] != right {
            continue;
        }
        let Some(m) = table.get(left, right) else {
            continue;
        };
        let j = j as usize;
        ids[i] = m.id;
        alive[j] = false;
        let k = next[j];
        next[i] = k;
        if k != NONE {
            prev[k as usize] = i as u32;
            if let Some(m2) = table.get(ids[i], ids[k as usize]) {
                heap.push(Reverse((m2.rank, i as u32, ids[i], ids[k as usize])));
            }
        }
        let p = prev[i];
        if p != NONE {
            if let Some(m2) = table.get(ids[p as usize], ids[i]) {
                heap.push(Reverse((m2.rank, p, ids[p as usize], ids[i])));
            }
        }
    }
    let mut out = Vec::with_capacity(n);
    let mut i = 0u32;
    while i != NONE {
        out.push(ids[i as usize]);
        i = next[i as usize];
    }
    *ids = out;
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

    #[test]
    fn scan_and_heap_equal_the_reference() {
        let mut rng = Lcg(7);
        for round in 0..400 {
            let symbols = 2 + rng.next(6);
            let merges = 1 + rng.next(40);
            let table = random_table(&mut rng, symbols, merges);
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
                merge_scan(&mut scan, &table);
                merge_heap(&mut heap, &table);
            }
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
