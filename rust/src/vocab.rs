//! A vocabulary of strings looked up by code point sequence, whatever the text's storage.
//!
//! Each token is a record in one flat array: its length, its id, then its code points. An
//! open-addressing table maps a hash of the code points to (a tag of the hash, the record's
//! offset), so a lookup that finds its token touches two cache lines: the slot and the record.
//! A lookup hashes the slice it is given (UCS-1, UCS-2 or UCS-4) without converting it. This
//! module does not tokenize.

use crate::errors::VocabError;
use crate::units::Unit;
use rustc_hash::FxHashMap;

const EMPTY: u64 = u64::MAX;
const TAG: u64 = 0xFFFF_FFFF_0000_0000;

#[derive(Clone, Debug, Default)]
pub struct Vocab {
    /// Records `[len, id, code points...]`, one per token.
    records: Vec<u32>,
    /// Token id -> offset of its record.
    offsets: Vec<u32>,
    /// (high 32 bits of the hash) << 32 | record offset: most probes that miss stop at the tag.
    slots: Vec<u64>,
    mask: usize,
    /// Tokens of one code point: few, looked up often (single-character syllables, the
    /// characters of an unknown syllable), so a small table of their own stays in cache.
    singles: FxHashMap<u32, u32>,
}

#[inline(always)]
fn hash<U: Unit>(s: &[U]) -> u64 {
    // FxHash's step over pairs of code points (one multiply per two: the chain of multiplies
    // is most of a lookup's arithmetic), and a final mix so the low bits depend on all of them.
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h: u64 = s.len() as u64;
    let mut pairs = s.chunks_exact(2);
    for pair in &mut pairs {
        let v = u64::from(pair[0].cp()) | (u64::from(pair[1].cp()) << 32);
        h = (h.rotate_left(5) ^ v).wrapping_mul(K);
    }
    if let [u] = pairs.remainder() {
        h = (h.rotate_left(5) ^ u64::from(u.cp())).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

impl Vocab {
    /// `tokens[i]` is the string of id `i` as code points; strings must be distinct.
    pub fn new(tokens: &[Vec<u32>]) -> Result<Self, VocabError> {
        Self::with_hidden(tokens, &[])
    }

    /// As [`Vocab::new`], but [`Vocab::get`] never finds the ids of `hidden` (their strings are
    /// still checked distinct, and [`Vocab::token`] still gives them): the special tokens, whose
    /// text in a text is ordinary text unless the caller matches it itself.
    pub fn with_hidden(tokens: &[Vec<u32>], hidden: &[u32]) -> Result<Self, VocabError> {
        let total: usize = tokens.iter().map(|t| t.len() + 2).sum();
        if total >= u32::MAX as usize || tokens.len() >= u32::MAX as usize {
            return Err(VocabError::TooLarge);
        }
        let mut records = Vec::with_capacity(total);
        let mut offsets = Vec::with_capacity(tokens.len());
        for (id, t) in tokens.iter().enumerate() {
            offsets.push(records.len() as u32);
            records.push(t.len() as u32);
            records.push(id as u32);
            records.extend_from_slice(t);
        }
        let size = (tokens.len() * 2).next_power_of_two().max(16);
        let mut vocab = Self {
            records,
            offsets,
            slots: vec![EMPTY; size],
            mask: size - 1,
            singles: FxHashMap::default(),
        };
        let mut is_hidden = vec![false; tokens.len()];
        for &id in hidden {
            if let Some(flag) = is_hidden.get_mut(id as usize) {
                *flag = true;
            }
        }
        // The hidden ones last, so that each is checked against every other string.
        let order = (0..tokens.len())
            .filter(|&id| !is_hidden[id])
            .chain((0..tokens.len()).filter(|&id| is_hidden[id]));
        let mut hidden_slots = Vec::new();
        for id in order {
            let t = &tokens[id];
            if let Some(other) = vocab.get(t) {
                return Err(VocabError::SameString {
                    first: other,
                    second: id,
                });
            }
            let h = hash(t);
            let mut slot = h as usize & vocab.mask;
            while vocab.slots[slot] != EMPTY {
                slot = (slot + 1) & vocab.mask;
            }
            vocab.slots[slot] = (h & TAG) | u64::from(vocab.offsets[id]);
            if let [cp] = t[..] {
                vocab.singles.insert(cp, id as u32);
            }
            if is_hidden[id] {
                hidden_slots.push((slot, t.len() == 1));
            }
        }
        // Inserted to check them, then taken out: nothing was inserted after them, so no probe
        // of another string passes through their slots.
        for (slot, single) in hidden_slots {
            let at = vocab.slots[slot] as u32 as usize;
            if single {
                vocab.singles.remove(&vocab.records[at + 2]);
            }
            vocab.slots[slot] = EMPTY;
        }
        Ok(vocab)
    }

    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// The code points of token `id`.
    pub fn token(&self, id: u32) -> &[u32] {
        let at = self.offsets[id as usize] as usize;
        let len = self.records[at] as usize;
        &self.records[at + 2..at + 2 + len]
    }

    #[inline]
    pub fn get<U: Unit>(&self, s: &[U]) -> Option<u32> {
        if let [c] = s {
            return self.singles.get(&c.cp()).copied();
        }
        let h = hash(s);
        let tag = h & TAG;
        let mut slot = h as usize & self.mask;
        loop {
            let entry = self.slots[slot];
            if entry == EMPTY {
                return None;
            }
            if entry & TAG == tag {
                let at = entry as u32 as usize;
                let len = self.records[at] as usize;
                if len == s.len()
                    && self.records[at + 2..at + 2 + len]
                        .iter()
                        .zip(s)
                        .all(|(&a, &b)| a == b.cp())
                {
                    return Some(self.records[at + 1]);
                }
            }
            slot = (slot + 1) & self.mask;
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.records.capacity() * 4
            + self.offsets.capacity() * 4
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
        assert_eq!(v.token(2), &tokens[2][..]);
        assert!(Vocab::new(&[vec![1], vec![1]]).is_err());
        let many: Vec<Vec<u32>> = (0..5000u32).map(|i| vec![i % 97, i / 97, 7]).collect();
        let v = Vocab::new(&many).unwrap();
        assert!((0..5000u32).all(|i| v.get(&many[i as usize]) == Some(i)));
    }

    #[test]
    fn hidden_ids_are_not_found_but_kept_distinct() {
        let many: Vec<Vec<u32>> = (0..5000u32).map(|i| vec![i % 97, i / 97, 7]).collect();
        let mut with_singles = many.clone();
        with_singles.extend((0..50u32).map(|c| vec![0x0D80 + c]));
        let hidden: Vec<u32> = (0..with_singles.len() as u32)
            .filter(|i| i % 3 == 0)
            .collect();
        let v = Vocab::with_hidden(&with_singles, &hidden).unwrap();
        for (i, t) in with_singles.iter().enumerate() {
            let expected = (i % 3 != 0).then_some(i as u32);
            assert_eq!(v.get(t), expected, "id {i}");
            assert_eq!(v.token(i as u32), &t[..]);
        }
        // a hidden string equal to another (hidden or not) is refused, whichever id comes first
        for pair in [[vec![1, 2], vec![1, 2]], [vec![5], vec![5]]] {
            for hide in [&[0u32][..], &[1], &[0, 1]] {
                assert!(
                    Vocab::with_hidden(&pair, hide).is_err(),
                    "{pair:?} hidden {hide:?}"
                );
            }
        }
    }
}
