//! The cache's byte bound, its kept bits, lines and map, concurrent readers and writers (no
//! torn line), the pieces it never keeps, the bypass (test builds only).

use super::bypass::{REST, WINDOW};
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
