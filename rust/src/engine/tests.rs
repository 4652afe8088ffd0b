//! The engine's tests: every merge sequence against a naive trainer that recounts everything
//! after each merge, forgetting rare pairs, threads, id reuse, replay and apply, bad input.

use super::pairs::{radix_sort, PARALLEL_FROM};
use super::*;

fn s(text: &str) -> Vec<u32> {
    text.chars().map(u32::from).collect()
}

/// Recount everything each step (the rule spelled out).
fn naive(
    mut words: Vec<Vec<u32>>,
    counts: &[u64],
    mut symbols: Vec<Vec<u32>>,
    greater: bool,
    max: usize,
) -> Vec<(u32, u32)> {
    let mut merges = Vec::new();
    while symbols.len() < max {
        let mut freq: FxHashMap<(u32, u32), u64> = FxHashMap::default();
        for (w, &c) in words.iter().zip(counts) {
            for p in w.windows(2) {
                if p[0] != UNK && p[1] != UNK {
                    *freq.entry((p[0], p[1])).or_default() += c;
                }
            }
        }
        let Some(&top) = freq.values().max() else {
            break;
        };
        if top < 2 {
            break;
        }
        let tied = freq.iter().filter(|(_, &f)| f == top).map(|(&p, _)| p);
        let key = |p: &(u32, u32)| (symbols[p.0 as usize].clone(), symbols[p.1 as usize].clone());
        let (a, b) = if greater {
            tied.max_by_key(key)
        } else {
            tied.min_by_key(key)
        }
        .unwrap();
        let mut joined = symbols[a as usize].clone();
        joined.extend_from_slice(&symbols[b as usize]);
        let c = match symbols.iter().position(|x| *x == joined) {
            Some(i) => i as u32,
            None => {
                symbols.push(joined);
                symbols.len() as u32 - 1
            }
        };
        merges.push((a, b));
        for w in &mut words {
            let mut out = Vec::new();
            let mut i = 0;
            while i < w.len() {
                if i + 1 < w.len() && w[i] == a && w[i + 1] == b {
                    out.push(c);
                    i += 2;
                } else {
                    out.push(w[i]);
                    i += 1;
                }
            }
            *w = out;
        }
    }
    merges
}

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

#[test]
fn equals_the_naive_trainer() {
    let mut rng = Lcg(3);
    for round in 0..300 {
        let alphabet = ["a", "b", "c", "ab", "ba", "\u{10ffff}"];
        let k = 1 + rng.next(alphabet.len() as u32) as usize;
        let symbols: Vec<Vec<u32>> = alphabet[..k].iter().map(|x| s(x)).collect();
        let words: Vec<Vec<u32>> = (0..rng.next(8))
            .map(|_| {
                (0..rng.next(9))
                    .map(|_| {
                        if rng.next(10) == 0 {
                            UNK
                        } else {
                            rng.next(k as u32)
                        }
                    })
                    .collect()
            })
            .collect();
        let counts: Vec<u64> = words.iter().map(|_| 1 + u64::from(rng.next(4))).collect();
        let greater = round % 2 == 1;
        let max = k + rng.next(12) as usize;
        let want = naive(words.clone(), &counts, symbols.clone(), greater, max);
        let mut engine =
            Engine::new(words.clone(), counts.clone(), symbols.clone(), greater).unwrap();
        engine.train(max, 2, |_, _| true);
        assert_eq!(engine.merges(), &want[..], "round {round}");
        // Compacting the holder buffer between merges changes nothing.
        let mut compacted = Engine::new(words, counts, symbols, greater).unwrap();
        while compacted.symbols().len() < max && compacted.step(2).is_some() {
            compacted.compact_holders();
        }
        assert_eq!(compacted.merges(), &want[..], "round {round}, compacted");
    }
}

#[test]
fn radix_sort_is_a_stable_sort() {
    let mut rng = Lcg(5);
    for bits in [1, 7, 11, 12, 23, 34, 64] {
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1 << bits) - 1
        };
        // Few distinct keys (up to 50, spread over the bits), so that many are equal.
        let step = (mask / 50).max(1);
        let mut items: Vec<(u64, u32)> = (0..3000)
            .map(|i| ((u64::from(rng.next(50)) * step) & mask, i))
            .collect();
        let mut want = items.clone();
        want.sort_by_key(|&(k, _)| k); // stable: equal keys keep their order
        radix_sort(&mut items, &mut Vec::new(), bits);
        assert_eq!(items, want, "{bits} bits");
    }
}

#[test]
fn forgetting_rare_pairs_changes_no_merge() {
    // The alphabet makes merges reuse ids ("a" + "b" = "ab"), which must recount; a step
    // below the floor must recount too.
    let mut rng = Lcg(7);
    let mut recounted = 0;
    for round in 0..400 {
        let alphabet = ["a", "b", "c", "ab", "ba", "abc"];
        let k = 2 + rng.next(alphabet.len() as u32 - 1) as usize;
        let symbols: Vec<Vec<u32>> = alphabet[..k].iter().map(|x| s(x)).collect();
        let words: Vec<Vec<u32>> = (0..1 + rng.next(10))
            .map(|_| (0..rng.next(12)).map(|_| rng.next(k as u32)).collect())
            .collect();
        let counts: Vec<u64> = words.iter().map(|_| 1 + u64::from(rng.next(3))).collect();
        let (greater, floor) = (round % 2 == 1, 2 + u64::from(rng.next(3)));
        let max = k + rng.next(10) as usize;
        let min_freq = floor as i64 - i64::from(rng.next(3) == 0); // sometimes below
        let mut want =
            Engine::new(words.clone(), counts.clone(), symbols.clone(), greater).unwrap();
        want.train(max, min_freq, |_, _| true);
        let lengths: Vec<usize> = words.iter().map(Vec::len).collect();
        let data = words.into_iter().flatten().collect();
        let mut got =
            Engine::from_flat_forgetting(data, &lengths, counts, symbols, greater, floor).unwrap();
        got.train(max, min_freq, |_, _| true);
        assert_eq!(got.merges(), want.merges(), "round {round}");
        assert_eq!(
            got.symbol_frequencies(),
            want.symbol_frequencies(),
            "round {round}"
        );
        recounted += usize::from(got.forgotten_below == 0);
        assert_eq!(got.pair_counts(), want.pair_counts(), "round {round}");
    }
    assert!(recounted > 50, "the recount paths ran {recounted} times");
}

#[test]
fn large_engines_count_pairs_on_threads_as_the_naive_trainer() {
    // Enough symbols for the threaded count (PARALLEL_FROM), few enough merges for the
    // naive trainer.
    let mut rng = Lcg(11);
    let symbols: Vec<Vec<u32>> = (0..40).map(|i| vec![0x61 + i]).collect();
    let mut words = Vec::new();
    let mut size = 0;
    while size <= PARALLEL_FROM {
        let w: Vec<u32> = (0..1 + rng.next(30))
            .map(|_| if rng.next(50) == 0 { UNK } else { rng.next(40) })
            .collect();
        size += w.len();
        words.push(w);
    }
    let counts: Vec<u64> = words.iter().map(|_| 1 + u64::from(rng.next(3))).collect();
    let want = naive(words.clone(), &counts, symbols.clone(), false, 70);
    let mut engine = Engine::new(words.clone(), counts.clone(), symbols.clone(), false).unwrap();
    assert!(engine.data.len() >= PARALLEL_FROM);
    engine.train(70, 2, |_, _| true);
    assert_eq!(engine.merges(), &want[..]);
    // Forgetting the pairs rarer than a floor (about half of these, at 330) changes no merge.
    let mut plain = Engine::new(words.clone(), counts.clone(), symbols.clone(), false).unwrap();
    let lengths: Vec<usize> = words.iter().map(Vec::len).collect();
    let data = words.into_iter().flatten().collect();
    let mut forgetting =
        Engine::from_flat_forgetting(data, &lengths, counts, symbols, false, 330).unwrap();
    let (all, kept) = (plain.pairs.iter().count(), forgetting.pairs.iter().count());
    assert!(0 < kept && kept < all, "{kept} of {all} pairs kept");
    plain.train(80, 330, |_, _| true);
    forgetting.train(80, 330, |_, _| true);
    assert!(plain.merges().len() > 10);
    assert_eq!(forgetting.merges(), plain.merges());
    assert_eq!(forgetting.pair_counts(), plain.pair_counts());
}

#[test]
fn spec_000_lankava_and_id_reuse() {
    // " ලං" "කා" "ව" twice and "ශ්‍රී" once: (" ලං", "කා") then (" ලංකා", "ව").
    let symbols = vec![s(" ලං"), s("කා"), s("ව"), s("ශ්‍රී")];
    let mut e = Engine::new(vec![vec![0, 1, 2], vec![3]], vec![2, 1], symbols, false).unwrap();
    assert_eq!(e.step(2), Some((0, 1, 4, 2)));
    assert_eq!(e.step(2), Some((4, 2, 5, 2)));
    assert_eq!(e.step(2), None);
    assert_eq!(e.symbols()[5], s(" ලංකාව"));
    let mut r = Engine::new(
        vec![vec![0, 1], vec![2, 3]],
        vec![2, 2],
        vec![s("a"), s("bc"), s("ab"), s("c")],
        false,
    )
    .unwrap();
    assert_eq!(r.step(1), Some((0, 1, 4, 2)));
    assert_eq!(r.step(1), Some((2, 3, 4, 2))); // "ab" + "c" = "abc": the same id
}

#[test]
fn apply_cuts_words_as_encoding_would_then_training_goes_on() {
    // Merges learned elsewhere: ("a", "b") and ("ab", "c"), then ("x", "y"), absent here.
    let symbols = vec![
        s("a"),
        s("b"),
        s("c"),
        s("d"),
        s("x"),
        s("y"),
        s("ab"),
        s("abc"),
    ];
    let mut e = Engine::new(
        vec![vec![0, 1, 2, 3], vec![0, 1, 3], vec![3, 2]],
        vec![1, 2, 5],
        symbols,
        false,
    )
    .unwrap();
    let made = e.apply(&[(0, 1), (4, 5), (6, 2)]).unwrap();
    assert_eq!(made, vec![Some(6), None, Some(7)]); // known strings keep their ids
    assert_eq!(e.merges(), &[(0, 1), (6, 2)]);
    let words: Vec<&[u32]> = (0..e.num_words()).map(|i| e.word(i)).collect();
    assert_eq!(words, vec![&[7, 3][..], &[6, 3], &[3, 2]]);
    // Training goes on from there: "d c" (5) before "ab d" (2) and "abc d" (1).
    assert_eq!(e.step(1), Some((3, 2, 8, 5)));
    assert_eq!(e.step(1), Some((6, 3, 9, 2)));
    assert_eq!(e.apply(&[(0, 99)]), Err(EngineError::ReplayId(1)));
}

#[test]
fn bad_input() {
    assert_eq!(
        Engine::new(vec![], vec![], vec![s("a"), s("a")], false).err(),
        Some(EngineError::Duplicate(0, 1))
    );
    assert_eq!(
        Engine::new(vec![], vec![], vec![vec![]], false).err(),
        Some(EngineError::Empty(0))
    );
    assert_eq!(
        Engine::new(vec![vec![5]], vec![1], vec![s("a")], false).err(),
        Some(EngineError::BadId(0, 5))
    );
    assert_eq!(
        Engine::new(vec![vec![0]], vec![0], vec![s("a")], false).err(),
        Some(EngineError::ZeroCount(0))
    );
    assert_eq!(
        Engine::new(vec![vec![0, 0]], vec![1 << 62], vec![s("a")], false).err(),
        Some(EngineError::Overflow)
    );
    let mut e = Engine::new(
        vec![vec![0, 1, 2]],
        vec![3],
        vec![s("a"), s("b"), s("c")],
        false,
    )
    .unwrap();
    assert_eq!(e.replay(&[(0, 7)]), Err(EngineError::ReplayId(1)));
    assert_eq!(e.replay(&[(0, 2)]), Err(EngineError::ReplayAbsent(1)));
    assert_eq!(e.replay(&[(0, 1)]), Ok(()));
    assert_eq!(e.replay(&[(0, 1)]), Err(EngineError::ReplayAbsent(2)));
}

#[test]
fn released_engine_keeps_symbols_and_merges_and_learns_nothing() {
    let mut e = Engine::new(vec![vec![0, 1, 0, 1]], vec![3], vec![s("a"), s("b")], false).unwrap();
    assert_eq!(e.step(2), Some((0, 1, 2, 6)));
    e.release_words();
    assert_eq!(e.symbols()[2], s("ab"));
    assert_eq!(e.merges(), &[(0, 1)]);
    assert_eq!(e.step(1), None);
    assert_eq!(e.symbol_frequencies(), vec![0, 0, 0]);
    assert_eq!(e.replay(&[(2, 2)]), Err(EngineError::ReplayAbsent(2)));
}
