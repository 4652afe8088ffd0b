//! Arbitrary ids: decoding returns the tokens' bytes or names the first unknown id's position.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wwho_core::bytelevel::Error;

mod common;

fuzz_target!(|data: &[u8]| {
    let ids: Vec<u32> = data
        .chunks(3)
        .map(|c| c.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)) % 320_000)
        .collect();
    let tok = common::tokenizer(false);
    match tok.decode_bytes(&ids) {
        Ok(bytes) => {
            let expected: Vec<u8> = ids.iter().flat_map(|&i| tok.token_bytes(i).unwrap().to_vec()).collect();
            assert_eq!(bytes, expected);
        }
        Err(Error::UnknownId { id, position }) => {
            assert_eq!(ids[position], id);
            assert!(tok.token_bytes(id).is_none());
            assert!(ids[..position].iter().all(|&i| tok.token_bytes(i).is_some()));
        }
        Err(other) => panic!("unexpected error {other}"),
    }
});
