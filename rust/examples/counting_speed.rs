//! Counting speed on real files, next to the physical limits on the same bytes.
//!
//!     cargo run --release --example counting_speed -- FILES...
//!
//! Prints MB/s for: one memchr pass over the bytes (count newlines), one UTF-8 validation
//! pass, and SGPE piece counting (1 thread and all threads). Not a test: numbers only.

use std::path::Path;
use std::time::Instant;
use wwho_core::counting::{absorb, count_files, Counts, FileOptions, Stats};

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let data: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).expect("readable file"))
        .collect();
    let mb = data.iter().map(Vec::len).sum::<usize>() as f64 / 1e6;
    let best = |f: &mut dyn FnMut()| {
        (0..3)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::MAX, f64::min)
    };
    let mut lines = 0;
    let s = best(&mut || {
        lines = data
            .iter()
            .map(|d| memchr::memchr_iter(b'\n', d).count())
            .sum()
    });
    println!(
        "memchr newline count     {:8.0} MB/s ({lines} lines)",
        mb / s
    );
    let s = best(&mut || {
        for d in &data {
            std::hint::black_box(std::str::from_utf8(d).is_ok());
        }
    });
    println!("UTF-8 validation (std)   {:8.0} MB/s", mb / s);
    let s = best(&mut || {
        for d in &data {
            std::hint::black_box(simdutf8::basic::from_utf8(d).is_ok());
        }
    });
    println!("UTF-8 validation (simd)  {:8.0} MB/s", mb / s);
    let files: Vec<&Path> = paths.iter().map(Path::new).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for t in [1, threads] {
        let mut distinct = 0;
        let s = best(&mut || {
            let options = FileOptions {
                threads: t,
                skip_bad_lines: false,
                router: None,
                cut: Default::default(),
                block_bytes: 8 << 20,
                max_line_bytes: u64::MAX,
                range: None,
            };
            let (mut tables, mut stats) = (Vec::new(), Stats::default());
            count_files(&files, &options, &mut tables, &mut stats, |_| Ok(())).expect("counted");
            let mut total = Counts::default();
            for table in tables {
                absorb(&mut total, table);
            }
            distinct = total.len();
        });
        println!(
            "SGPE pieces, {t} thread(s) {:8.0} MB/s ({distinct} distinct)",
            mb / s
        );
    }
}
