//! A vocabulary of strings looked up by code point sequence, whatever the text's storage.
//!
//! Token strings are kept as code points in one flat array; an open-addressing table maps
//! a hash of the code points to the id. A lookup hashes the slice it is given (UCS-1, UCS-2
//! or UCS-4) without converting it. This module does not tokenize.

use crate::units::Unit;
use rustc_hash::FxHashMap;

const EMPTY: u64 = u64::MAX;

#[derive(Clone, Debug, Default)]
pub struct Vocab {
    cps: Vec<u32>,
    spans: Vec<(u32, u32)>, // token i is cps[start..start + len]
    // (high 32 bits of the hash) << 32 | id: most probes that miss stop at the tag, without
    // touching the token's code points.
    slots: Vec<u64>,
    mask: usize,
    /// Tokens of one code point: few, looked up often (single-character syllables, the
    /// characters of an unknown syllable), so a small table of their own stays in cache.
    singles: FxHashMap<u32, u32>,
}

#[inline(always)]
fn hash<U: Unit>(s: &[U]) -> u64 {
    // FxHash's step over code points, and a final mix so the low bits depend on all of them.
    let mut h: u64 = s.len() as u64;
    for &u in s {
        h = (h.rotate_left(5) ^ u64::from(u.cp())).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    h ^ (h >> 29)
}

impl Vocab {
    /// `tokens[i]` is the string of id `i` as code points; strings must be distinct.
    pub fn new(tokens: &[Vec<u32>]) -> Result<Self, String> {
        let total: usize = tokens.iter().map(Vec::len).sum();
        if total >= u32::MAX as usize || tokens.len() >= u32::MAX as usize {
            return Err("the vocabulary is too large".into());
        }
        let mut cps = Vec::with_capacity(total);
        let mut spans = Vec::with_capacity(tokens.len());
        for t in tokens {
            spans.push((cps.len() as u32, t.len() as u32));
            cps.extend_from_slice(t);
        }
        let size = (tokens.len() * 2).next_power_of_two().max(16);
        let mut vocab = Self {
            cps,
            spans,
            slots: vec![EMPTY; size],
            mask: size - 1,
            singles: FxHashMap::default(),
        };
        for (id, t) in tokens.iter().enumerate() {
            if let Some(other) = vocab.get(t) {
                return Err(format!("ids {other} and {id} have the same string"));
            }
            let h = hash(t);
            let mut slot = h as usize & vocab.mask;
            while vocab.slots[slot] != EMPTY {
                slot = (slot + 1) & vocab.mask;
            }
            vocab.slots[slot] = (h & 0xFFFF_FFFF_0000_0000) | id as u64;
            if let [cp] = t[..] {
                vocab.singles.insert(cp, id as u32);
            }
        }
        Ok(vocab)
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The code points of token `id`.
    pub fn token(&self, id: u32) -> &[u32] {
        let (start, len) = self.spans[id as usize];
        &self.cps[start as usize..(start + len) as usize]
    }

    #[inline]
    pub fn get<U: Unit>(&self, s: &[U]) -> Option<u32> {
        if let [c] = s {
            return self.singles.get(&c.cp()).copied();
        }
        let h = hash(s);
        let tag = h & 0xFFFF_FFFF_0000_0000;
        let mut slot = h as usize & self.mask;
        loop {
            let entry = self.slots[slot];
            if entry == EMPTY {
                return None;
            }
            if entry & 0xFFFF_FFFF_0000_0000 == tag {
                let id = entry as u32;
                let t = self.token(id);
                if t.len() == s.len() && t.iter().zip(s).all(|(&a, &b)| a == b.cp()) {
                    return Some(id);
                }
            }
            slot = (slot + 1) & self.mask;
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.cps.capacity() * 4
            + self.spans.capacity() * 8
            + self.slots.capacity() * 8
            + self.singles.capacity() * 9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_any_storage() {
        let words = ["a", "ab", "ශ්‍රී", "🙂", "b"];
        let tokens: Vec<Vec<u32>> = words
            .iter()
            .map(|w| w.chars().map(u32::from).collect())
            .collect();
        let v = Vocab::new(&tokens).unwrap();
        assert_eq!(v.get(&[0x61u8, 0x62]), Some(1));
        assert_eq!(v.get(&[0x61u16, 0x62]), Some(1));
        assert_eq!(v.get(&tokens[2]), Some(2));
        let ucs2: Vec<u16> = tokens[2].iter().map(|&c| c as u16).collect();
        assert_eq!(v.get(&ucs2), Some(2));
        assert_eq!(v.get(&[0x1F642u32]), Some(3));
        assert_eq!(v.get(&[0x63u8]), None);
        assert_eq!(v.get::<u8>(&[]), None);
        assert!(Vocab::new(&[vec![1], vec![1]]).is_err());
    }
}
