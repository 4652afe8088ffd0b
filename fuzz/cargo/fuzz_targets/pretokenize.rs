//! Every named scanner against fancy-regex (tiktoken's engine) on the same pattern text: the
//! same pieces, and the pieces cover the text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use wwho_core::pretokenize::{named, Pretokenizer};

mod common;

const PATTERNS: [&str; 6] = [named::O200K, named::CL100K, named::LLAMA3, named::QWEN2, named::GPT2, named::GPT2_HF];

fn pairs() -> &'static Vec<(Pretokenizer, Pretokenizer)> {
    static P: OnceLock<Vec<(Pretokenizer, Pretokenizer)>> = OnceLock::new();
    P.get_or_init(|| {
        PATTERNS
            .iter()
            .map(|p| {
                (
                    Pretokenizer::new(&[*p], &[]).expect("named"),
                    Pretokenizer::with_scanners(&[*p], &[], false).expect("general"),
                )
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let text = common::text(data);
    for (fast, slow) in pairs() {
        let a = fast.split(&text).expect("scanners never fail");
        let b = slow.split(&text).expect("fancy-regex within its backtracking limit");
        assert_eq!(a, b, "{:?}", fast.stage_kinds());
        let mut end = 0;
        for &(x, y) in &a {
            assert_eq!(x, end);
            assert!(y > x);
            end = y;
        }
        assert_eq!(end, text.len());
    }
});
