//! A vocabulary of strings looked up by code point sequence, whatever the text's storage.
//!
//! Token strings are kept as code points in one flat array; an open-addressing table maps
//! a hash of the code points to the id. A lookup hashes the slice it is given (UCS-1, UCS-2
//! or UCS-4) without converting it. This module does not tokenize.

use crate::units::Unit;

const EMPTY: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct Vocab {
    cps: Vec<u32>,
    starts: Vec<usize>, // token i is cps[starts[i]..starts[i + 1]]
    slots: Vec<u32>,
    mask: usize,
}

#[inline(always)]
fn hash<U: Unit>(s: &[U]) -> usize {
    // FxHash's step over code points, and a final mix so the low bits depend on all of them.
    let mut h: u64 = s.len() as u64;
    for &u in s {
        h = (h.rotate_left(5) ^ u64::from(u.cp())).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    (h ^ (h >> 29)) as usize
}

impl Vocab {
    /// `tokens[i]` is the string of id `i` as code points; strings must be distinct.
    pub fn new(tokens: &[Vec<u32>]) -> Result<Self, String> {
        let total = tokens.iter().map(Vec::len).sum();
        let mut cps = Vec::with_capacity(total);
        let mut starts = Vec::with_capacity(tokens.len() + 1);
        for t in tokens {
            starts.push(cps.len());
            cps.extend_from_slice(t);
        }
        starts.push(cps.len());
        let size = (tokens.len() * 2).next_power_of_two().max(16);
        let mut vocab = Self {
            cps,
            starts,
            slots: vec![EMPTY; size],
            mask: size - 1,
        };
        for (id, t) in tokens.iter().enumerate() {
            if id as u32 == EMPTY {
                return Err("too many tokens".into());
            }
            if let Some(other) = vocab.get(t) {
                return Err(format!("ids {other} and {id} have the same string"));
            }
            let mut slot = hash(t) & vocab.mask;
            while vocab.slots[slot] != EMPTY {
                slot = (slot + 1) & vocab.mask;
            }
            vocab.slots[slot] = id as u32;
        }
        Ok(vocab)
    }

    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The code points of token `id`.
    pub fn token(&self, id: u32) -> &[u32] {
        let id = id as usize;
        &self.cps[self.starts[id]..self.starts[id + 1]]
    }

    #[inline]
    pub fn get<U: Unit>(&self, s: &[U]) -> Option<u32> {
        let mut slot = hash(s) & self.mask;
        loop {
            let id = self.slots[slot];
            if id == EMPTY {
                return None;
            }
            let t = self.token(id);
            if t.len() == s.len() && t.iter().zip(s).all(|(&a, &b)| a == b.cp()) {
                return Some(id);
            }
            slot = (slot + 1) & self.mask;
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.cps.capacity() * 4 + self.starts.capacity() * 8 + self.slots.capacity() * 4
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
