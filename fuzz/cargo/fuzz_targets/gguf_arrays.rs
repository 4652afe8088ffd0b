//! Arbitrary bytes as a GGUF file's tokenizer arrays: the string arrays are read or refused
//! (truncated, not UTF-8), never a panic; what reads becomes a vocabulary or is refused, and then
//! its merge-list finding equals `vocab::check_merges` on the same ranks and merges, and a model
//! without one builds a tokenizer (or is refused) that encodes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wwho_core::bytelevel::gguf;
use wwho_core::bytelevel::vocab::check_merges;
use wwho_core::bytelevel::{ByteLevel, Model};
use wwho_core::pretokenize::named;

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    // The first byte: how many strings, which byte order, and where tokens end and merges begin.
    let count = u64::from(head & 0x3F);
    let big = head & 0x40 != 0;
    let Ok((spans, end)) = gguf::strings(rest, 0, count, big) else {
        return;
    };
    assert!(end <= rest.len());
    let mut texts = Vec::new();
    for (i, &span) in spans.iter().enumerate() {
        match gguf::text(rest, span, i) {
            Ok(t) => texts.push(t),
            Err(_) => return,
        }
    }
    let split = texts.len() / 2 + usize::from(head & 0x80 != 0);
    let (tokens, merges) = texts.split_at(split.min(texts.len()));
    // Token types from the bytes after the arrays, cycling through the GGUF kinds.
    let types: Vec<i64> = (0..tokens.len())
        .map(|i| i64::from(rest.get(end + i).copied().unwrap_or(1) % 7))
        .collect();
    let Ok(vocab) = gguf::vocab(tokens, &types, merges) else {
        return;
    };
    let ranks: Vec<(&[u8], u32)> = vocab.ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect();
    let pairs: Vec<(&[u8], &[u8])> = vocab
        .merges
        .iter()
        .map(|&(a, b)| (ranks[a as usize].0, ranks[b as usize].0))
        .collect();
    assert_eq!(check_merges(&ranks, &pairs).err(), vocab.problem);
    if vocab.problem.is_none() {
        let model = Model {
            ranks: ranks.clone(),
            merges: Some(pairs),
            special_tokens: vocab.special.iter().map(|(t, i)| (t.as_str(), *i)).collect(),
            added_tokens: vocab.added.iter().map(|(t, i)| (t.as_str(), *i)).collect(),
            extra_tokens: vocab.extra.iter().map(|(i, b)| (*i, b.as_slice())).collect(),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        if let Ok(tok) = ByteLevel::new(&model) {
            let _ = tok.encode_ordinary("hello world ab");
        }
    }
});
