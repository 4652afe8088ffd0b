//! The byte-level core's cold pass, one call per line, without Python: `cargo run --release
//! --example bytelevel_cold -- <o200k_base.tiktoken> <corpus.txt>[,<corpus.txt>...] [passes]
//! [warm-caches]`. Each pass builds a fresh tokenizer (not timed) and encodes every line of one
//! corpus once; before the pass and after every 128 kB of its lines, 48 MB of other memory is
//! written (not timed), so the CPU caches hold none of the tokenizer's tables, as when other work
//! runs between calls (`benchmarks/bench_peers.py` alternates the peers chunk by chunk for the
//! same reason); `warm-caches` leaves them. Corpora are taken in turn pass by pass; the median
//! MB/s of each (CPU time of this thread) is printed, with the range. For A/B runs of two builds
//! (run them in turn) and profiling; not a test.

use wwho_core::bytelevel::files;
use wwho_core::bytelevel::specials::SpecialSet;

mod common;
use common::{cpu, o200k};

/// Memory written between chunks: more than the last-level cache of the machines we use.
const OTHER_WORK: usize = 48 << 20;
const CHUNK: usize = 128 << 10;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!(
            "usage: bytelevel_cold <o200k_base.tiktoken> <corpus.txt>[,...] [passes] [warm-caches]"
        );
        std::process::exit(2);
    }
    let ranks =
        files::parse_tiktoken(&std::fs::read(&args[1]).expect("ranks file")).expect("valid ranks");
    let corpora: Vec<(String, Vec<String>)> = args[2]
        .split(',')
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("a UTF-8 corpus");
            (path.to_string(), text.lines().map(str::to_string).collect())
        })
        .collect();
    let passes: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(7);
    let evict = args.get(4).is_none_or(|s| s != "warm-caches");
    let mut other = vec![0u8; OTHER_WORK];
    let mut other_work = |round: usize| {
        for i in (0..other.len()).step_by(64) {
            other[i] = other[i].wrapping_add(round as u8 | 1);
        }
    };
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); corpora.len()];
    for pass in 0..passes {
        for (k, (_, lines)) in corpora.iter().enumerate() {
            let tok = o200k(&ranks, 64 << 20);
            if evict {
                other_work(pass);
            }
            let (mut seconds, mut since) = (0.0, 0);
            let mut start = cpu();
            for line in lines {
                let ids = tok.encode(line, &SpecialSet::None, &SpecialSet::All);
                std::hint::black_box(ids.map(|v| v.len()).ok());
                since += line.len();
                if evict && since > CHUNK {
                    seconds += cpu() - start;
                    other_work(pass);
                    since = 0;
                    start = cpu();
                }
            }
            seconds += cpu() - start;
            let bytes: usize = lines.iter().map(String::len).sum();
            rates[k].push(bytes as f64 / 1e6 / seconds);
        }
    }
    for ((path, _), mut r) in corpora.iter().zip(rates) {
        r.sort_by(f64::total_cmp);
        println!(
            "{path}: cold, one call per line, median {:.1} MB/s ({:.1}-{:.1}, {} passes)",
            r[r.len() / 2],
            r[0],
            r[r.len() - 1],
            r.len()
        );
    }
}
