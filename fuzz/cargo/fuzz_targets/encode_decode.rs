//! Encode then decode gives the text back, for both merge rules, with special-token text
//! allowed or as plain text, and so do any bytes merged as one piece; a disallowed special token
//! is an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wwho_core::bytelevel::specials::SpecialSet;
use wwho_core::bytelevel::Error;

mod common;

fuzz_target!(|data: &[u8]| {
    let text = common::text(data);
    for merges in [false, true] {
        let tok = common::tokenizer(merges);
        let ids = tok.encode_ordinary(&text).expect("every byte has a token");
        assert_eq!(tok.decode_bytes(&ids).expect("own ids"), text.as_bytes());
        // any bytes merged as one piece (encode_with_unstable's byte strings) spell them again
        let merged = tok.merge_bytes(data).expect("every byte has a token");
        assert_eq!(tok.decode_bytes(&merged).expect("own ids"), data);
        let ids = tok.encode(&text, &SpecialSet::All, &SpecialSet::None).expect("allowed");
        assert_eq!(tok.decode_bytes(&ids).expect("own ids"), text.as_bytes());
        match tok.encode(&text, &SpecialSet::None, &SpecialSet::All) {
            Ok(again) => assert!(!text.contains("<|endoftext|>") && again == tok.encode_ordinary(&text).unwrap()),
            Err(Error::Disallowed { token, offset }) => {
                assert_eq!(token, "<|endoftext|>");
                assert!(text.chars().skip(offset).collect::<String>().starts_with("<|endoftext|>"));
            }
            Err(other) => panic!("unexpected error {other}"),
        }
    }
});
