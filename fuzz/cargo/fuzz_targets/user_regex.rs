//! A user's pre-tokenizer regex (first line of the input) on text (the rest): compiled or
//! refused with a message; if compiled, the pieces cover the text; never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wwho_core::pretokenize::Pretokenizer;

mod common;

fuzz_target!(|data: &[u8]| {
    let input = common::text(data);
    let (pattern, text) = input.split_once('\n').unwrap_or((&input, "abc 123 ශ්‍රී"));
    if pattern.len() > 200 {
        return;
    }
    if let Ok(p) = Pretokenizer::new(&[pattern], &[]) {
        if let Ok(spans) = p.split(text) {
            let mut end = 0;
            for (x, y) in spans {
                assert_eq!(x, end);
                assert!(y > x);
                end = y;
            }
            assert_eq!(end, text.len());
        }
    }
});
