//! Arbitrary bytes as a `.tiktoken` file: parsed or refused with a message, never a panic; what
//! parses builds a tokenizer or is refused, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wwho_core::bytelevel::{files, ByteLevel, Model};
use wwho_core::pretokenize::named;

fuzz_target!(|data: &[u8]| {
    if let Ok(ranks) = files::parse_tiktoken(data) {
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        if let Ok(tok) = ByteLevel::new(&model) {
            let _ = tok.encode_ordinary("hello world");
        }
    }
});
