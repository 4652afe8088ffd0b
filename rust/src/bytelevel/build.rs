//! A [`ByteLevel`] built from a [`Model`]: the vocabulary checked, and the tables every
//! encode reads made once, at construction, so that no first call pays for them.

use super::cache::PieceCache;
use super::specials::Specials;
use super::table::{self, Packed, TokenTable};
use super::vocab::{bytes_repr, str_repr, Vocab};
use super::{
    characters, memo, ranks, two_byte, whitespace, ByteLevel, Error, Model, Rule, MAX_ID,
    NO_SMALL_PAIR, NO_TOKEN, PSEUDO,
};
use crate::memory;
use crate::merge::{Merge, PairTable};
use crate::pretokenize::Pretokenizer;
use std::sync::atomic::{AtomicU64, Ordering};

impl ByteLevel {
    pub fn new(model: &Model) -> Result<ByteLevel, Error> {
        let max_id = model
            .ranks
            .iter()
            .map(|&(_, i)| i)
            .chain(model.special_tokens.iter().map(|&(_, i)| i))
            .chain(model.added_tokens.iter().map(|&(_, i)| i))
            .chain(model.extra_tokens.iter().map(|&(i, _)| i))
            .max()
            .unwrap_or(0);
        if max_id > MAX_ID {
            return Err(Error::Vocab(format!(
                "token id {max_id} is too large (at most {MAX_ID})"
            )));
        }
        let count = model.ranks.len()
            + model.special_tokens.len()
            + model.added_tokens.len()
            + model.extra_tokens.len();
        let total: usize = model.ranks.iter().map(|(b, _)| b.len()).sum();
        let mut vocab = Vocab::with_capacity(count, max_id, total + 1024);
        let short = model
            .ranks
            .iter()
            .filter(|(b, _)| b.len() <= table::SHORT)
            .count();
        let mut encoder = TokenTable::with_capacity(model.ranks.len(), short)?;
        let mut add = |label: &str, id: u32, bytes: &[u8]| -> Result<(), Error> {
            vocab.insert(id, bytes).map_err(|old| {
                Error::Vocab(format!(
                    "{label}: token id {id} is used twice ({} and {})",
                    bytes_repr(&old),
                    bytes_repr(bytes)
                ))
            })
        };
        for &(bytes, id) in &model.ranks {
            add("ranks", id, bytes)?;
            if encoder.insert(bytes, id).is_err() {
                return Err(Error::Vocab(format!(
                    "ranks: token {} appears twice",
                    bytes_repr(bytes)
                )));
            }
        }
        // A special or added token may also be the ordinary token of its bytes (HF keeps an added
        // 'ab' that a merge makes too): one id, one spelling, cut out of the text all the same.
        let ordinary = |id: u32, bytes: &[u8]| encoder.get(bytes) == Some(id);
        for &(text, id) in &model.special_tokens {
            if !ordinary(id, text.as_bytes()) {
                add("special_tokens", id, text.as_bytes())?;
            }
        }
        for &(text, id) in &model.added_tokens {
            if !ordinary(id, text.as_bytes()) {
                add("added_tokens", id, text.as_bytes())?;
            }
        }
        for &(id, bytes) in &model.extra_tokens {
            add("extra_tokens", id, bytes)?;
        }
        for (label, texts) in [
            ("special_tokens", &model.special_tokens),
            ("added_tokens", &model.added_tokens),
        ] {
            if texts.iter().any(|(t, _)| t.is_empty()) {
                return Err(Error::Vocab(format!(
                    "{label}: a special or added token cannot be empty"
                )));
            }
        }
        let special_texts: std::collections::HashSet<&str> =
            model.special_tokens.iter().map(|&(t, _)| t).collect();
        if let Some(clash) = model
            .added_tokens
            .iter()
            .map(|&(t, _)| t)
            .filter(|t| special_texts.contains(t))
            .min()
        {
            return Err(Error::Vocab(format!(
                "{} is both a special and an added token",
                str_repr(clash)
            )));
        }
        let mut byte_units = [0u32; 256];
        for (b, unit) in byte_units.iter_mut().enumerate() {
            *unit = encoder.get(&[b as u8][..]).unwrap_or(PSEUDO + b as u32);
        }
        let unit_of = |bytes: &[u8]| -> Option<u32> {
            match encoder.get(bytes) {
                Some(id) => Some(id),
                None if bytes.len() == 1 => Some(PSEUDO + u32::from(bytes[0])),
                None => None,
            }
        };
        let rule = match &model.merges {
            None => Rule::Ranks,
            Some(merges) => {
                let mut table = PairTable::new();
                let mut entries = Vec::with_capacity(merges.len());
                for (rank, &(a, b)) in merges.iter().enumerate() {
                    // Packed when short (nearly always): no allocation per merge.
                    let found = Packed::new_checked(a)
                        .zip(Packed::new_checked(b))
                        .and_then(|(pa, pb)| pa.concat(pb))
                        .map_or_else(|| encoder.get(&[a, b].concat()), |p| encoder.get_packed(p));
                    let Some(id) = found else {
                        return Err(Error::Vocab(format!(
                            "merge {rank} ({}, {}): the merged token {} is not in the vocabulary",
                            bytes_repr(a),
                            bytes_repr(b),
                            bytes_repr(&[a, b].concat())
                        )));
                    };
                    // A part that is neither a token nor a single byte never exists: skip.
                    if let (Some(x), Some(y)) = (unit_of(a), unit_of(b)) {
                        let merge = Merge {
                            rank: rank as u32,
                            id,
                        };
                        entries.push((x, y, merge));
                    }
                }
                table.try_extend(&entries)?;
                Rule::Merges(table)
            }
        };
        let mut byte_pairs = memory::filled(NO_TOKEN, 1 << 16)?;
        for (i, slot) in byte_pairs.iter_mut().enumerate() {
            if let Some(id) = encoder.get(&[(i >> 8) as u8, i as u8]) {
                *slot = id;
            }
        }
        // Merges rule: what a two-byte piece becomes when it becomes one token (the whole
        // piece with `ignore_merges`, else the merge of its two bytes), or NO_TOKEN.
        let mut two_bytes = Vec::new();
        if let Rule::Merges(table) = &rule {
            two_bytes = memory::filled(NO_TOKEN, 1 << 16)?;
            let whole_first = model.ignore_merges;
            for (i, slot) in two_bytes.iter_mut().enumerate() {
                let (a, b) = ((i >> 8) as u8, i as u8);
                let whole = if whole_first {
                    encoder.get(&[a, b])
                } else {
                    None
                };
                let merged = || {
                    table
                        .get(byte_units[usize::from(a)], byte_units[usize::from(b)])
                        .map(|m| m.id)
                };
                if let Some(id) = whole.or_else(merged) {
                    *slot = id;
                }
            }
        }
        let mut windows = crate::huge::HugeSlice::try_filled(1 << 18, 0u64)?;
        for &(bytes, _) in &model.ranks {
            for w in bytes.windows(3) {
                let bit = (usize::from(w[0]) << 16) | (usize::from(w[1]) << 8) | usize::from(w[2]);
                windows[bit / 64] |= 1 << (bit % 64);
            }
        }
        let mut windows4 =
            crate::huge::HugeSlice::try_filled(1 << (ranks::WINDOW4_BITS - 6), 0u64)?;
        for &(bytes, _) in &model.ranks {
            for w in bytes.windows(4) {
                let bit = ranks::window4_bit(w);
                windows4[bit / 64] |= 1 << (bit % 64);
            }
        }
        let characters = match rule {
            Rule::Ranks => {
                characters::Characters::build(&model.ranks, &byte_pairs, |b| encoder.get(b))
            }
            Rule::Merges(_) => None,
        };
        let two_byte = match rule {
            Rule::Ranks => Some(two_byte::TwoByte::build(&model.ranks)),
            Rule::Merges(_) => None,
        };
        let mut run_tokens = vec![Vec::new(); 256];
        // In the same pass (each token's bytes are read once at construction): the
        // whitespace tokens, for the one-pass encoder of whitespace pieces.
        let mut whitespace_tokens = Vec::new();
        for &(bytes, id) in &model.ranks {
            if bytes.iter().all(|&b| whitespace::is_whitespace(b)) {
                whitespace_tokens.push((bytes, id));
            }
            if bytes.len() >= 2 && bytes.iter().all(|&b| b == bytes[0]) {
                let tokens: &mut Vec<u32> = &mut run_tokens[usize::from(bytes[0])];
                if tokens.len() <= bytes.len() {
                    tokens.resize(bytes.len() + 1, NO_TOKEN);
                }
                tokens[bytes.len()] = id;
            }
        }
        let pretokenizer = Pretokenizer::new(&model.patterns, &model.byte_patterns)?;
        let small_pairs = match &rule {
            Rule::Merges(table) => (0..1u32 << 16)
                .map(|i| {
                    table.get(i >> 8, i & 0xFF).map_or(NO_SMALL_PAIR, |m| {
                        (u64::from(m.rank) << 32) | u64::from(m.id)
                    })
                })
                .collect(),
            Rule::Ranks => Vec::new(),
        };
        let mut tok = ByteLevel {
            byte_pairs,
            two_bytes,
            small_pairs,
            windows,
            windows4,
            characters,
            two_byte,
            run_tokens,
            longest: model.ranks.iter().map(|(b, _)| b.len()).max().unwrap_or(0),
            whole_piece_first: model.merges.is_none() || model.ignore_merges,
            encoder,
            vocab,
            byte_units,
            rule,
            specials: Specials::new(&model.special_tokens, &model.added_tokens)?,
            pretokenizer,
            cache: PieceCache::new(model.cache_bytes),
            whitespace: None,
            memo_owner: AtomicU64::new(memo::new_owner()),
        };
        tok.whitespace = whitespace::Whitespace::build(&tok, whitespace_tokens)?;
        // The constructing thread's memo is made now, not in the first encode.
        memo::prepare(tok.memo_owner.load(Ordering::Relaxed), tok.cache.enabled());
        Ok(tok)
    }
}
