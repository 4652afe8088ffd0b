//! The merge engine alone on an input dumped by Python (word lengths, ids, counts as int64;
//! symbols as UTF-8): `cargo run --release --example engine_speed -- FILE MERGES`.

use std::time::Instant;
use wwho_core::engine::{Engine, UNK};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data = std::fs::read(&args[1]).expect("input file");
    let merges: usize = args.get(2).map_or(30_000, |m| m.parse().expect("a number"));
    let u64_at = |at: usize| u64::from_le_bytes(data[at..at + 8].try_into().unwrap());
    let (n_words, n_flat, n_symbols) =
        (u64_at(0) as usize, u64_at(8) as usize, u64_at(16) as usize);
    let mut at = 24;
    let lengths: Vec<usize> = (0..n_words).map(|i| u64_at(at + 8 * i) as usize).collect();
    at += 8 * n_words;
    let flat: Vec<u32> = (0..n_flat)
        .map(|i| u64_at(at + 8 * i) as i64)
        .map(|x| if x < 0 { UNK } else { x as u32 })
        .collect();
    at += 8 * n_flat;
    let counts: Vec<u64> = (0..n_words).map(|i| u64_at(at + 8 * i)).collect();
    at += 8 * n_words;
    let mut symbols = Vec::new();
    for _ in 0..n_symbols {
        let len = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        at += 4;
        symbols.push(
            std::str::from_utf8(&data[at..at + len])
                .unwrap()
                .chars()
                .map(u32::from)
                .collect::<Vec<u32>>(),
        );
        at += len;
    }
    let runs: usize = std::env::var("RUNS").map_or(3, |r| r.parse().unwrap_or(3));
    for _ in 0..runs {
        let t = Instant::now();
        let mut engine = Engine::from_flat(
            flat.clone(),
            &lengths,
            counts.clone(),
            symbols.clone(),
            false,
        )
        .unwrap();
        let init = t.elapsed().as_secs_f64();
        let max = engine.symbols().len() + merges;
        engine.train(max, 2, |_, _| true);
        let total = t.elapsed().as_secs_f64();
        println!(
            "init {init:.3} s, merges {} in {:.3} s",
            engine.merges().len(),
            total - init
        );
    }
}
