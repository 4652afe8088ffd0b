//! The scan and the rank buckets against the rule spelled out (a rescan after every merge),
//! seeded merges, ties, the pair table's two forms, its growth and bulk insertion, a long run
//! that is not quadratic (test builds only).

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
