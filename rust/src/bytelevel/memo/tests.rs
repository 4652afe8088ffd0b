//! The memo's tables against the rules of what they keep: resting short tables, longer tables
//! and the slots that send a piece to them, growth, owners and their release, eviction to the
//! shared cache (test builds only).

use super::rest::{DENSE, REST, WINDOW};
use super::slots::FIRST_SHARE;
use super::*;

#[test]
fn a_resting_short_table_holds_nothing_and_keeps_its_pieces() {
    let mut memo = UNMADE;
    memo.claim(new_owner());
    memo.begin_text();
    let kept = Packed::new(b" the");
    memo.missed(0, kept, &[1, 2], false);
    // Pieces a byte apart, all new: the table rests after a window of them.
    for at in 1..=WINDOW as usize {
        memo.missed(at, Packed::new(&(at as u32).to_le_bytes()), &[7], false);
    }
    let mut out = Vec::new();
    assert!(!memo.get_into(kept, &mut out));
    let new = Packed::new(b" new");
    // Not kept while it rests; past the rest, the next miss gives the table back, with what
    // it held before.
    memo.missed(WINDOW as usize + 1, new, &[3], false);
    memo.missed(WINDOW as usize + 1 + REST, Packed::new(b"x"), &[4], false);
    assert!(memo.get_into(kept, &mut out) && !memo.get_into(new, &mut out));
    assert_eq!(out, [1, 2]);
    // A text's end gives it back too.
    memo.begin_text();
    for at in 0..=WINDOW as usize {
        memo.missed(
            at,
            Packed::new(&(at as u32 + 1000).to_le_bytes()),
            &[7],
            false,
        );
    }
    assert!(!memo.get_into(kept, &mut out));
    memo.wake_short();
    assert!(memo.get_into(kept, &mut out));
}

#[test]
fn token_lines_are_fetched_only_for_pieces_soon_after_a_miss() {
    let mut memo = UNMADE;
    memo.claim(new_owner());
    // A memo that answers (warm text) fetches nothing beyond its own slots.
    assert!(!memo.heats());
    memo.heat_up();
    let after_one: usize = (0..10 * HEAT_PER_MISS).filter(|_| memo.heats()).count();
    assert_eq!(after_one, HEAT_PER_MISS as usize);
    // A long run of misses (a cold pass) fetches for a bounded stretch after the last one.
    for _ in 0..1000 {
        memo.heat_up();
    }
    let after_many: usize = (0..10 * MAX_HEAT).filter(|_| memo.heats()).count();
    assert_eq!(after_many, MAX_HEAT as usize);
    assert!(!memo.heats());
}

#[test]
fn the_short_table_rests_only_where_misses_come_close_together() {
    // Misses a few bytes apart: a rest of REST bytes starts at the window's last miss.
    let mut rest = Rest::default();
    let gap = DENSE - 1;
    let mut at = 0;
    for i in 1..=WINDOW {
        assert!(!rest.resting(at));
        assert_eq!(rest.missed(at), i == WINDOW);
        at += gap;
    }
    let last = at - gap;
    assert!(rest.resting(last) && rest.resting(last + REST - 1));
    assert!(!rest.resting(last + REST));
    // Then tried again: misses as far apart as prose's never rest it.
    let mut at = last + REST;
    for _ in 0..4 * WINDOW {
        assert!(!rest.resting(at) && !rest.missed(at));
        at += 4 * DENSE;
    }
    assert!(!rest.resting(at));
}

/// `n` bytes of every kind, none repeating nearby.
fn sample_text(n: u8) -> Vec<u8> {
    (0..n).map(|i| i.wrapping_mul(37).wrapping_add(1)).collect()
}

#[test]
fn packing_by_window_equals_packing_the_piece() {
    let text = sample_text(64);
    for at in 0..text.len() {
        for len in 1..=KEY.min(text.len() - at) {
            let piece = &text[at..at + len];
            assert_eq!(
                pack(&text, at, piece),
                Packed::new(piece),
                "at {at}, len {len}"
            );
        }
    }
    // a piece not in the text, and an empty one
    assert_eq!(pack(&text, usize::MAX - 3, b"ab"), Packed::new(b"ab"));
    assert_eq!(pack(&text, 0, b""), Packed::new(b""));
}

#[test]
fn a_piece_is_found_only_as_written_and_only_by_its_owner() {
    with(new_owner(), true, |memo| {
        let memo = memo.unwrap();
        let (a, b) = (Packed::new(b"abc"), Packed::new(b"abd"));
        let mut out = Vec::new();
        assert!(!memo.get_into(a, &mut out));
        memo.insert(a, &[7, 8], false);
        memo.insert(b, &[9], false);
        memo.insert(Packed::new(b"three"), &[1, 2, 3], false);
        memo.insert(Packed::new(b"four"), &[1, 2, 3, 4], false); // too many ids: not kept
        assert!(memo.get_into(a, &mut out) && memo.get_into(b, &mut out));
        assert!(memo.get_into(Packed::new(b"three"), &mut out));
        assert!(!memo.get_into(Packed::new(b"four"), &mut out));
        assert!(!memo.get_into(Packed::new(b"ab"), &mut out));
        assert_eq!(out, [7, 8, 9, 1, 2, 3]);
    });
    let (one, two) = (new_owner(), new_owner());
    with(one, true, |memo| {
        memo.unwrap().insert(Packed::new(b"abc"), &[5], false);
    });
    with(two, true, |memo| {
        // another tokenizer: nothing of the first one's is found, and its own is kept
        let memo = memo.unwrap();
        assert!(!memo.get_into(Packed::new(b"abc"), &mut Vec::new()));
        memo.insert(Packed::new(b"abc"), &[6], false);
    });
    let mut out = Vec::new();
    with(one, true, |memo| {
        assert!(memo.unwrap().get_into(Packed::new(b"abc"), &mut out))
    });
    with(two, true, |memo| {
        assert!(memo.unwrap().get_into(Packed::new(b"abc"), &mut out))
    });
    assert_eq!(out, [5, 6]);
    // an owner of another era empties the memo
    with(one + (1 << OWNER_BITS), true, |memo| {
        assert!(memo
            .unwrap()
            .short
            .pairs
            .iter()
            .all(|pair| pair.0.iter().all(|slot| slot.owner() == 0)));
    });
    with(new_owner(), false, |memo| assert!(memo.is_none()));
}

#[test]
fn a_pending_piece_is_handed_over_when_written_over_and_only_then() {
    let one = new_owner();
    let ids_of = |i: usize| [i as u32, 7, 9];
    let first: Vec<Packed> = (0..2 * SLOTS)
        .map(|i| Packed::new(format!("one {i}").as_bytes()))
        .collect();
    let second: Vec<Vec<u8>> = (0..2 * SLOTS)
        .map(|i| format!("two {i}").into_bytes())
        .collect();
    with(one, true, |memo| {
        let memo = memo.unwrap();
        // Pieces that are not pending are never handed over.
        for (i, p) in first.iter().enumerate() {
            assert!(memo.insert(*p, &ids_of(i), false).is_none());
        }
        // Pending ones are, with their bytes and ids, once another piece takes their slot.
        let mut handed = 0;
        for (i, bytes) in second.iter().enumerate() {
            if let Some(gone) = memo.insert(Packed::new(bytes), &ids_of(i), true) {
                let k: usize = std::str::from_utf8(&gone.piece()[4..])
                    .unwrap()
                    .parse()
                    .unwrap();
                assert_eq!(gone.piece(), second[k], "bytes");
                assert_eq!(gone.ids(), ids_of(k), "ids");
                handed += 1;
            }
        }
        assert!(handed > SLOTS / 4, "{handed}");
    });
    // Only the writer's own pending pieces: a slot another tokenizer wrote (a memo passed
    // on) is never handed over, nor a piece written again.
    let mut table = Table::<2, IDS>::UNMADE;
    table.make(4); // two pairs of slots
    let key = |b: &[u8]| {
        let p = Packed::new(b);
        (short_key(p), p.len)
    };
    // pieces that share the first pair
    let names: Vec<Vec<u8>> = (0..64)
        .map(|i| format!("piece {i}").into_bytes())
        .filter(|b| {
            let (k, len) = key(b);
            table.pair(&k, len) == 0
        })
        .take(5)
        .collect();
    let put = |table: &mut Table<2, IDS>, owner: u32, b: &[u8]| {
        let (k, len) = key(b);
        table
            .insert(owner, &k, len, &[len], true)
            .map(|gone| gone.piece().to_vec())
    };
    assert_eq!(put(&mut table, 1, &names[0]), None);
    assert_eq!(put(&mut table, 1, &names[1]), None);
    assert_eq!(put(&mut table, 2, &names[2]), None); // over names[0], owner 1's
    assert_eq!(put(&mut table, 1, &names[3]), None); // over owner 2's
    assert_eq!(put(&mut table, 1, &names[4]), Some(names[1].clone()));
    assert_eq!(put(&mut table, 1, &names[4]), None); // the same piece again

    // Long pieces the same way, in either long table: by length, or by their ids' count
    // (then the long table's slot that says where they are is no piece to hand over).
    let kinds: [(&str, usize, usize); 3] = [
        ("a long piece, number", 3, LONG_SLOTS),
        ("a piece for the longest table, number", 3, LONGEST_SLOTS),
        ("a long piece, number", 10, LONGEST_SLOTS),
    ];
    for (name, count, slots) in kinds {
        let long = |i: usize| long_key_of(format!("{name} {i:>9}").as_bytes());
        let ids = |i: usize| -> Vec<u32> { (0..count as u32).map(|k| i as u32 + k).collect() };
        with(new_owner(), true, |memo| {
            let memo = memo.unwrap();
            let handed = (0..2 * slots)
                .flat_map(|i| memo.insert_long(&long(i), &ids(i), true))
                .flatten()
                .map(|gone| {
                    let k: usize = std::str::from_utf8(&gone.piece()[name.len()..])
                        .unwrap()
                        .trim()
                        .parse()
                        .unwrap();
                    assert_eq!(long_key_of(gone.piece()), long(k));
                    assert_eq!(gone.ids(), ids(k));
                })
                .count();
            assert!(handed > slots / 4, "{name}, {count} ids: {handed}");
        });
    }
}

/// The key of `piece` as words read from its own bytes, zero past its end.
fn long_key_of(piece: &[u8]) -> LongKey {
    let mut bytes = [0u8; LONGEST_KEY];
    bytes[..piece.len()].copy_from_slice(piece);
    let word = |k: usize| u64::from_le_bytes(bytes[8 * k..8 * k + 8].try_into().unwrap());
    LongKey {
        words: std::array::from_fn(word),
        len: piece.len() as u32,
    }
}

#[test]
fn long_pieces_pack_by_window_as_by_their_bytes() {
    let text = sample_text(96);
    for at in 0..text.len() {
        for len in 1..=(LONGEST_KEY + 1).min(text.len() - at) {
            let piece = &text[at..at + len];
            let want = (KEY < len && len <= LONGEST_KEY).then(|| long_key_of(piece));
            assert_eq!(pack_long(&text, at, piece), want, "at {at}, len {len}");
        }
    }
    // a piece not in the text, or near its end
    for len in [20, 40, LONGEST_KEY] {
        let piece = &text[..len];
        assert_eq!(
            pack_long(&text, usize::MAX - 3, piece),
            Some(long_key_of(piece))
        );
        let end = &text[text.len() - len..];
        assert_eq!(
            pack_long(&text, text.len() - len, end),
            Some(long_key_of(end))
        );
    }
}

#[test]
fn long_pieces_keep_up_to_sixteen_ids_and_only_for_their_owner() {
    let (one, two) = (new_owner(), new_owner());
    let seven: Vec<u32> = (1..=7).collect();
    let sixteen: Vec<u32> = (11..=26).collect();
    let (a, b, c, d, e) = (
        long_key_of(b"a piece of twenty bytes"),
        long_key_of(b"a piece of twenty bytez"),
        long_key_of(b"thirty-two bytes, every one kept"),
        long_key_of(b"a piece of forty bytes, in the longest table"),
        long_key_of(b"a piece of twenty-four"),
    );
    with(one, true, |memo| {
        let memo = memo.unwrap();
        let mut out = vec![100];
        assert!(!memo.get_long_into(&a, &mut out)); // before the tables are made
        assert!(!memo.get_long_into(&d, &mut out));
        memo.insert_long(&a, &seven, false);
        memo.insert_long(&b, &sixteen, false); // in the longest table
        memo.insert_long(&c, &[9, 10], false);
        memo.insert_long(&d, &[8; 3], false);
        memo.insert_long(&e, &[1; 17], false); // too many ids: not kept
        assert!(memo.get_long_into(&a, &mut out) && memo.get_long_into(&b, &mut out));
        assert!(memo.get_long_into(&c, &mut out) && memo.get_long_into(&d, &mut out));
        assert!(!memo.get_long_into(&e, &mut out));
        let want: Vec<u32> = [vec![100], seven, sixteen, vec![9, 10, 8, 8, 8]].concat();
        assert_eq!(out, want);
    });
    with(two, true, |memo| {
        let memo = memo.unwrap();
        assert!(!memo.get_long_into(&a, &mut Vec::new()));
        assert!(!memo.get_long_into(&b, &mut Vec::new()));
        assert!(!memo.get_long_into(&d, &mut Vec::new()));
    });
}

#[test]
fn a_pair_fetched_ahead_is_the_pair_looked_up() {
    with(new_owner(), true, |memo| {
        let memo = memo.unwrap();
        memo.begin_text();
        let pieces: Vec<Packed> = (0..1000)
            .map(|i| Packed::new(format!(" p{i}").as_bytes()))
            .collect();
        for (i, p) in pieces.iter().enumerate() {
            memo.missed(64 * i, *p, &[i as u32], false);
        }
        let mut out = Vec::new();
        for p in &pieces {
            let key = short_key(*p);
            let pair = memo.fetch_short(*p);
            assert_eq!(pair, memo.short.pair(&key, p.len));
            let want = memo.get_into(*p, &mut Vec::new());
            assert_eq!(memo.get_into_at(pair, *p, &mut out), want);
        }
        assert!(out.len() > 900, "{}", out.len());
        // While the short table rests the pair is the same, and nothing is found.
        memo.resting = std::mem::take(&mut memo.short.pairs);
        let pair = memo.fetch_short(pieces[0]);
        assert!(!memo.get_into_at(pair, pieces[0], &mut out));
        memo.wake_short();
        assert_eq!(memo.fetch_short(pieces[0]), pair);
    });
}

#[test]
fn short_pieces_with_more_ids_are_kept_in_a_longer_table() {
    with(new_owner(), true, |memo| {
        let memo = memo.unwrap();
        memo.begin_text();
        let five: Vec<u32> = (1..=5).collect();
        let ten: Vec<u32> = (11..=20).collect();
        let (a, b, c) = (
            Packed::new(b" five ids"),
            Packed::new(b" ten ids"),
            Packed::new(b" too many"),
        );
        assert!(memo
            .missed_many(0, a, &five, false)
            .iter()
            .all(Option::is_none));
        memo.missed_many(10, b, &ten, false);
        memo.missed_many(20, c, &[1; 17], false);
        let mut out = vec![100];
        // The scanner's lookup misses them; the miss path finds them.
        assert!(!memo.get_into(a, &mut out) && !memo.get_into(b, &mut out));
        assert!(memo.get_elsewhere_into(a, &mut out) && memo.get_elsewhere_into(b, &mut out));
        assert!(!memo.get_elsewhere_into(c, &mut out));
        assert_eq!(out, [vec![100], five.clone(), ten].concat());
        // Kept again after the longer table lost it, the short table says so in one slot.
        memo.long.empty();
        assert!(!memo.get_elsewhere_into(a, &mut out));
        memo.missed_many(30, a, &five, false);
        let key = [a.key as u64, (a.key >> 64) as u64];
        let pair = &memo.short.pairs[memo.short.pair(&key, a.len)].0;
        assert_eq!(pair.iter().filter(|slot| slot.key == key).count(), 1);
        // A pending piece of the short table that such a slot writes over is handed over.
        let sharing: Vec<Packed> = (0..)
            .map(|i| Packed::new(format!("piece {i}").as_bytes()))
            .filter(|p| {
                let k = short_key(*p);
                memo.short.pair(&k, p.len) == memo.short.pair(&key, a.len)
            })
            .take(3)
            .collect();
        memo.missed(40, sharing[0], &[1], true);
        memo.missed(50, sharing[1], &[2], true);
        let [_, _, said] = memo.missed_many(60, sharing[2], &five, true);
        let said = said.expect("the pending piece it wrote over");
        assert_eq!(Packed::new(said.piece()), sharing[1]);
        assert_eq!(said.ids(), [2]);
    });
}

#[test]
fn a_piece_the_longest_table_lost_is_found_again_and_said_once() {
    let owner = new_owner();
    with(owner, true, |memo| {
        let memo = memo.unwrap();
        let piece = long_key_of(b"twenty bytes, ten ids");
        let ids: Vec<u32> = (1..=10).collect();
        // Two pieces that share its pair of slots in the longest table: with the first one
        // there, it takes the second slot, which the other then takes from it; the long
        // table still says where it was.
        memo.insert_long(&long_key_of(b"a piece to make the tables"), &[1], false);
        memo.insert_long(&long_key_of(&[b'x'; 40]), &[1], false);
        let pair = memo.longest.pair(&piece.words, piece.len);
        let others: Vec<LongKey> = (0..)
            .map(|i| long_key_of(format!("a piece of thirty-three, {i:>8}").as_bytes()))
            .filter(|k| memo.longest.pair(&k.words, k.len) == pair)
            .take(2)
            .collect();
        memo.insert_long(&others[0], &[5], false);
        memo.insert_long(&piece, &ids, false);
        assert!(memo.get_long_into(&piece, &mut Vec::new()));
        memo.insert_long(&others[1], &[5], false);
        let mut out = Vec::new();
        assert!(!memo.get_long_into(&piece, &mut out) && out.is_empty());
        assert!(memo
            .long
            .says_elsewhere(memo.owner, piece.long(), piece.len, 0));
        // Kept again, it is found, and the long table says so in one slot only.
        memo.insert_long(&piece, &ids, false);
        assert!(memo.get_long_into(&piece, &mut out));
        assert_eq!(out, ids);
        let pair = &memo.long.pairs[memo.long.pair(piece.long(), piece.len)].0;
        let saying = pair.iter().filter(|slot| slot.key == *piece.long()).count();
        assert_eq!(saying, 1);
        // A slot that says so, written over a pending piece of the long table, hands that
        // piece over.
        let pair = memo.long.pair(piece.long(), piece.len);
        let sharing: Vec<LongKey> = (0..)
            .map(|i| long_key_of(format!("a long piece, number {i:>5}").as_bytes()))
            .filter(|k| memo.long.pair(k.long(), k.len) == pair)
            .take(3)
            .collect();
        memo.insert_long(&sharing[0], &[1], true);
        memo.insert_long(&sharing[1], &[2], true);
        let [gone, said] = memo.insert_long(&sharing[2], &ids, true);
        assert!(gone.is_none());
        let said = said.expect("the pending piece it wrote over");
        assert_eq!(long_key_of(said.piece()), sharing[1]);
        assert_eq!(said.ids(), [2]);
    });
}

#[test]
fn a_memo_starts_small_and_grows_keeping_its_pieces() {
    // On a thread of its own: memos are per thread.
    std::thread::spawn(|| {
        let first = pieces(100);
        let more: Vec<Packed> = (0..SLOTS / 8)
            .map(|i| Packed::new(format!("more {i}").as_bytes()))
            .collect();
        let long = |i: usize| long_key_of(format!("a long piece, number {i:>9}").as_bytes());
        with(new_owner(), true, |memo| {
            let memo = memo.unwrap();
            assert_eq!(memo.short.size, SLOTS / 2 / FIRST_SHARE);
            for (i, p) in first.iter().enumerate() {
                memo.insert(*p, &[i as u32], false);
            }
            for p in &more {
                memo.insert(*p, &[7], false);
            }
            for i in 0..LONG_SLOTS / 8 {
                memo.insert_long(&long(i), &[i as u32, 1], false);
            }
            // Written more than a quarter of their slots at each size: grown to full.
            assert_eq!(memo.short.size, SLOTS / 2);
            assert_eq!(memo.long.size, LONG_SLOTS / 2);
            // What was kept before the growth is kept after it (a piece whose new pair
            // is full is dropped: seldom).
            let found = first
                .iter()
                .enumerate()
                .filter(|(i, p)| {
                    let mut out = Vec::new();
                    memo.get_into(**p, &mut out) && out == [*i as u32]
                })
                .count();
            assert!(found >= 95, "{found} of 100");
            let found_long = (0..100)
                .filter(|&i| {
                    let mut out = Vec::new();
                    memo.get_long_into(&long(i), &mut out) && out == [i as u32, 1]
                })
                .count();
            assert!(found_long >= 95, "{found_long} of 100");
        });
        // A memo made by `prepare` (a tokenizer's constructing thread) is full at once.
        let owner = new_owner();
        prepare(owner, true);
        with(owner, true, |memo| {
            let memo = memo.unwrap();
            assert_eq!(memo.short.size, SLOTS / 2);
            assert_eq!(memo.long.size, LONG_SLOTS / 2);
            assert_eq!(memo.longest.size, LONGEST_SLOTS / 2);
        });
    })
    .join()
    .unwrap();
}

/// `n` distinct pieces of up to 16 bytes.
fn pieces(n: usize) -> Vec<Packed> {
    (0..n)
        .map(|i| Packed::new(format!("piece {i}").as_bytes()))
        .collect()
}

#[test]
fn tokenizers_used_in_turn_keep_their_pieces() {
    const { assert!(MEMOS >= 2) };
    // As many pieces as slots each, for as many tokenizers as a thread keeps memos.
    let many = pieces(SLOTS);
    let owners: Vec<u64> = (0..MEMOS).map(|_| new_owner()).collect();
    for (k, &owner) in owners.iter().enumerate() {
        with(owner, true, |memo| {
            let memo = memo.unwrap();
            for p in &many {
                memo.insert(*p, &[k as u32], false);
            }
        });
    }
    let found = |owner: u64, k: u32| {
        with(owner, true, |memo| {
            let memo = memo.unwrap();
            many.iter()
                .filter(|p| {
                    let mut out = Vec::new();
                    memo.get_into(**p, &mut out) && out == [k]
                })
                .count()
        })
    };
    for (k, &owner) in owners.iter().enumerate() {
        // a piece is lost only where two of one owner's pieces share a pair of slots (in
        // one memo for all, the first owner's would be lost to the second's)
        let got = found(owner, k as u32);
        assert!(got > SLOTS / 2, "owner {k}: {got}");
    }
    // One tokenizer more takes the memo used longest ago (the first owner's, as all were
    // just asked in order) and finds none of its pieces; the others keep theirs.
    let late = new_owner();
    assert_eq!(found(late, 0), 0);
    with(late, true, |memo| {
        memo.unwrap().insert(many[0], &[99], false)
    });
    assert_eq!(found(late, 99), 1);
    for (k, &owner) in owners.iter().enumerate().skip(1) {
        assert!(found(owner, k as u32) > SLOTS / 2, "owner {k}");
    }
    // The first owner comes back to the memo used longest ago and finds its pieces only
    // where the memo it gets still holds them (none were written there by it): never
    // another owner's ids.
    assert!(with(owners[0], true, |memo| {
        let memo = memo.unwrap();
        many.iter().all(|p| {
            let mut out = Vec::new();
            !memo.get_into(*p, &mut out) || out == [0]
        })
    }));
}
