//! Time the byte-level core without Python: `cargo run --release --example bytelevel_bench --
//! <o200k_base.tiktoken> <corpus.txt> [lines, 0: the file as one text]`. Prints MB/s for a
//! physical floor (UTF-8 validation and a memchr pass over the same bytes), pre-tokenizing
//! alone, and encoding cold (a fresh tokenizer built in each timed run; the first pass of the
//! tokenizer built once) and warm (a second pass; and again after 48 MB of other memory was
//! written, so that the CPU's caches hold none of the tokenizer's tables). For profiling
//! (`perf record`, cachegrind with `only:` one part), not a test.

mod common;
use common::{cpu, o200k};
use wwho_core::bytelevel::specials::SpecialSet;
use wwho_core::bytelevel::{files, ByteLevel};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: bytelevel_bench <o200k_base.tiktoken> <corpus.txt> [lines] [reps]");
        std::process::exit(2);
    }
    let data = std::fs::read(&args[1]).expect("ranks file");
    let text = std::fs::read_to_string(&args[2]).expect("corpus");
    let n: usize = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(usize::MAX);
    let reps: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
    // "only:split" / "only:warm": just that part (for callgrind and perf); "only:new": the cost
    // of each distinct piece that is not a token, without the cache (see `new_pieces`).
    let only = args.get(5).map(String::as_str).unwrap_or("");
    // n = 0: the whole file as one text (as `bench_large_inputs.py --classes` encodes it).
    let lines: Vec<&str> = if n == 0 {
        vec![text.as_str()]
    } else {
        text.lines().take(n).collect()
    };
    let mb = lines.iter().map(|l| l.len()).sum::<usize>() as f64 / 1e6;

    let t = cpu();
    let ranks = files::parse_tiktoken(&data).expect("valid ranks");
    let parsed = cpu() - t;
    let build = || o200k(&ranks, 128 << 20);
    let t = cpu();
    let tok = build();
    println!(
        "{} lines, {mb:.2} MB; parse ranks {:.0} ms, build {:.0} ms",
        lines.len(),
        parsed * 1e3,
        (cpu() - t) * 1e3
    );
    // The best of `reps` runs, in CPU time.
    let wanted = |label: &str| only.is_empty() || label.contains(only.trim_start_matches("only:"));
    let rate = |label: &str, f: &mut dyn FnMut() -> f64| {
        if !wanted(label) {
            return;
        }
        let best = (0..reps).map(|_| f()).fold(f64::MAX, f64::min);
        println!("  {label:<28} {:8.1} MB/s", mb / best);
    };
    let timed = |f: &mut dyn FnMut()| {
        let t = cpu();
        f();
        cpu() - t
    };
    rate("utf-8 validation", &mut || {
        timed(&mut || {
            for l in &lines {
                std::hint::black_box(std::str::from_utf8(l.as_bytes()).is_ok());
            }
        })
    });
    rate("memchr(' ') count", &mut || {
        timed(&mut || {
            for l in &lines {
                std::hint::black_box(memchr::memchr_iter(b' ', l.as_bytes()).count());
            }
        })
    });
    rate("pre-tokenize (o200k)", &mut || {
        timed(&mut || {
            for l in &lines {
                std::hint::black_box(tok.pretokenizer().split(l).map(|v| v.len()).unwrap_or(0));
            }
        })
    });
    rate("encode, fresh tokenizer", &mut || {
        let fresh = build();
        timed(&mut || {
            for l in &lines {
                let _ = std::hint::black_box(
                    fresh
                        .encode(l, &SpecialSet::None, &SpecialSet::All)
                        .map(|v| v.len()),
                );
            }
        })
    });
    // The first pass of the tokenizer built above: cold, without a fresh build in the timing
    // (reported once: it is what warms the pass after it). Skipped when neither is asked for,
    // so that `only:` runs of other parts leave it out of an instruction count.
    if wanted("encode, first pass") || wanted("encode, warm") {
        let first = timed(&mut || {
            for l in &lines {
                let _ = std::hint::black_box(tok.encode(l, &SpecialSet::None, &SpecialSet::All));
            }
        });
        if wanted("encode, first pass") {
            println!("  {:<28} {:8.1} MB/s", "encode, first pass", mb / first);
        }
    }
    rate("encode, warm", &mut || {
        timed(&mut || {
            for l in &lines {
                let _ = std::hint::black_box(
                    tok.encode(l, &SpecialSet::None, &SpecialSet::All)
                        .map(|v| v.len()),
                );
            }
        })
    });
    // Warm for the tokenizer, not for the CPU: 48 MB of other memory written before each pass
    // (not timed), as when other work (a garbage collector's walk, another library) runs
    // between batches.
    let mut other = vec![0u8; 48 << 20];
    let mut round = 0u8;
    rate("encode, warm after other work", &mut || {
        round = round.wrapping_add(1);
        for i in (0..other.len()).step_by(64) {
            other[i] = other[i].wrapping_add(round);
        }
        std::hint::black_box(&other);
        timed(&mut || {
            for l in &lines {
                let _ = std::hint::black_box(
                    tok.encode(l, &SpecialSet::None, &SpecialSet::All)
                        .map(|v| v.len()),
                );
            }
        })
    });
    let build_nocache = || o200k(&ranks, 0);
    if only == "only:new" {
        new_pieces(&build_nocache, &lines);
        return;
    }
    if !wanted("encode, no shared cache") {
        return;
    }
    let nocache = build_nocache();
    rate("encode, no shared cache", &mut || {
        timed(&mut || {
            for l in &lines {
                let _ = std::hint::black_box(nocache.encode_ordinary(l).map(|v| v.len()));
            }
        })
    });
}

/// ns per distinct new (non-token) piece, on a fresh tokenizer without a shared cache: first
/// on a fresh thread, then again on another fresh thread (the second pass finds the tables in
/// the CPU caches).
pub fn new_pieces(build: &dyn Fn() -> ByteLevel, lines: &[&str]) {
    let probe = build();
    let mut seen = std::collections::HashSet::new();
    let mut pieces: Vec<String> = Vec::new();
    for l in lines {
        for p in probe.pretokenizer().split(l).unwrap() {
            let s = l[p.0..p.1].to_string();
            if seen.insert(s.clone()) && probe.encode_ordinary(&s).unwrap().len() > 1 {
                pieces.push(s);
            }
        }
    }
    let tok = build();
    let tok = &tok;
    let pieces = &pieces;
    for pass in ["first", "again"] {
        let ns = std::thread::scope(|s| {
            s.spawn(|| {
                let t = cpu();
                for p in pieces {
                    std::hint::black_box(tok.encode_ordinary(p).map(|v| v.len()).unwrap());
                }
                (cpu() - t) * 1e9 / pieces.len() as f64
            })
            .join()
            .unwrap()
        });
        println!(
            "  new pieces ({} distinct), {pass}: {ns:.0} ns each",
            pieces.len()
        );
    }
}
