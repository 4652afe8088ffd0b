#![allow(dead_code)] // each target uses part of it
// Shared by the fuzz targets: the o200k tokenizer (from $WWHO_O200K, else a small synthetic
// vocabulary) and turning fuzz bytes into text.
use std::sync::OnceLock;
use wwho_core::bytelevel::{files, ByteLevel, Model};
use wwho_core::pretokenize::named;

pub fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// (token bytes, id) of o200k when available, else 256 bytes and some merged tokens.
pub fn ranks() -> &'static Vec<(Vec<u8>, u32)> {
    static RANKS: OnceLock<Vec<(Vec<u8>, u32)>> = OnceLock::new();
    RANKS.get_or_init(|| {
        if let Some(data) = std::env::var_os("WWHO_O200K").and_then(|p| std::fs::read(p).ok()) {
            if let Ok(r) = files::parse_tiktoken(&data) {
                return r;
            }
        }
        let mut r: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        for word in ["th", "the", " the", "in", "ing", "er", " a", "aa", "aaaa", "  ", "    ", "\u{0dc1}", "\u{0dca}\u{200d}"] {
            let id = r.len() as u32;
            r.push((word.as_bytes().to_vec(), id));
        }
        r
    })
}

pub fn tokenizer(merges_rule: bool) -> &'static ByteLevel {
    static RANKS_RULE: OnceLock<ByteLevel> = OnceLock::new();
    static MERGES_RULE: OnceLock<ByteLevel> = OnceLock::new();
    let build = |merges: bool| {
        let ranks = ranks();
        let index: std::collections::HashMap<&[u8], u32> = ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect();
        // The merges rule: every split of every token into two tokens, by the token's id.
        let mut pairs: Vec<(u32, &[u8], &[u8])> = Vec::new();
        if merges {
            for (token, id) in ranks {
                for cut in 1..token.len() {
                    if index.contains_key(&token[..cut]) && index.contains_key(&token[cut..]) {
                        pairs.push((*id, &token[..cut], &token[cut..]));
                    }
                }
            }
            pairs.sort();
        }
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            merges: merges.then(|| pairs.iter().map(|&(_, a, b)| (a, b)).collect()),
            special_tokens: vec![("<|endoftext|>", 300_000)],
            added_tokens: vec![("ශ්‍රී", 300_001)],
            patterns: vec![named::O200K],
            cache_bytes: 1 << 20,
            ..Model::default()
        };
        ByteLevel::new(&model).expect("a valid model")
    };
    if merges_rule {
        MERGES_RULE.get_or_init(|| build(true))
    } else {
        RANKS_RULE.get_or_init(|| build(false))
    }
}
