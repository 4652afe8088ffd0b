//! A merge table over byte strings that grows one merge at a time and can be cut back to an
//! earlier length: what `wwho extend` needs while it builds an extension (each new merge is tried
//! on the tokens built so far, and some are rolled back).
//!
//! Pieces are merged by [`crate::merge`]'s rule (the adjacent pair of lowest rank, the leftmost
//! among equal ranks), the encoders' own; a merge's rank is its position in the table. This module
//! does not know vocabularies or ids outside itself: token ids here are its own interning.

use rustc_hash::FxHashMap;

use crate::merge::{merge_with, Merge, Pairs};

pub struct GrowingMerges {
    /// Byte strings by id (every single byte first, as ids 0-255).
    tokens: Vec<Box<[u8]>>,
    ids: FxHashMap<Box<[u8]>, u32>,
    pairs: FxHashMap<(u32, u32), Merge>,
    /// The merges in rank order.
    order: Vec<(u32, u32)>,
}

impl Pairs for GrowingMerges {
    #[inline]
    fn get(&self, left: u32, right: u32) -> Option<Merge> {
        self.pairs.get(&(left, right)).copied()
    }
}

impl Default for GrowingMerges {
    fn default() -> Self {
        Self::new()
    }
}

impl GrowingMerges {
    pub fn new() -> GrowingMerges {
        let mut out = GrowingMerges {
            tokens: Vec::new(),
            ids: FxHashMap::default(),
            pairs: FxHashMap::default(),
            order: Vec::new(),
        };
        for b in 0..=255u8 {
            out.intern(&[b]);
        }
        out
    }

    fn intern(&mut self, bytes: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(bytes) {
            return id;
        }
        let id = self.tokens.len() as u32;
        self.tokens.push(bytes.into());
        self.ids.insert(bytes.into(), id);
        id
    }

    /// How many merges the table holds.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Append the merge `(a, b)` with the next rank; false (nothing changed) if it is there.
    pub fn push(&mut self, a: &[u8], b: &[u8]) -> bool {
        let (left, right) = (self.intern(a), self.intern(b));
        if self.pairs.contains_key(&(left, right)) {
            return false;
        }
        let merged = self.intern(&[a, b].concat());
        let rank = self.order.len() as u32;
        self.pairs.insert((left, right), Merge { rank, id: merged });
        self.order.push((left, right));
        true
    }

    /// Forget every merge from rank `n` on.
    pub fn truncate(&mut self, n: usize) {
        for pair in self.order.drain(n.min(self.order.len())..) {
            self.pairs.remove(&pair);
        }
    }

    /// The pieces the merges make of `data`.
    pub fn apply(&self, data: &[u8]) -> Vec<&[u8]> {
        let mut ids: Vec<u32> = data.iter().map(|&b| u32::from(b)).collect();
        merge_with(&mut ids, self);
        ids.iter().map(|&i| &*self.tokens[i as usize]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_applies_and_cuts_back() {
        let mut table = GrowingMerges::new();
        assert_eq!(table.apply(b"abc"), vec![&b"a"[..], b"b", b"c"]);
        assert!(table.push(b"b", b"c"));
        assert!(table.push(b"a", b"b"));
        assert!(!table.push(b"b", b"c"));
        // (b, c) ranks first: "a" + "bc", although (a, b) is leftmost.
        assert_eq!(table.apply(b"abc"), vec![&b"a"[..], b"bc"]);
        assert!(table.push(b"a", b"bc"));
        assert_eq!(table.apply(b"abcab"), vec![&b"abc"[..], b"ab"]);
        table.truncate(1);
        assert_eq!(table.len(), 1);
        assert_eq!(table.apply(b"abcab"), vec![&b"a"[..], b"bc", b"a", b"b"]);
        assert!(table.push(b"a", b"b"));
        assert_eq!(table.apply(b"ab"), vec![&b"ab"[..]]);
    }
}
