//! Token id -> bytes for every token of a byte-level vocabulary (ordinary, special, added and
//! extra tokens), and the error messages that name tokens the way Python prints them.
//!
//! Ids are stored densely (one slot per id up to the largest) unless the ids are sparse, in
//! which case the ones past the dense range go to a hash map, so an id like 2^31 in a file
//! costs one entry, not gigabytes. This module does not encode.

use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt::Write;

const MISSING: u32 = u32::MAX;

#[derive(Default, Debug)]
pub struct Vocab {
    data: Vec<u8>,
    dense: Vec<(u32, u32)>, // (start, len); len == MISSING: no token
    sparse: FxHashMap<u32, (u32, u32)>,
    count: usize,
    max_id: Option<u32>,
}

impl Vocab {
    /// Room for `count` tokens whose largest id is `max_id`.
    pub fn with_capacity(count: usize, max_id: u32, total_bytes: usize) -> Vocab {
        let dense_len = (max_id as usize + 1).min(2 * count + 1024);
        Vocab {
            data: Vec::with_capacity(total_bytes),
            dense: vec![(0, MISSING); dense_len],
            sparse: FxHashMap::default(),
            count: 0,
            max_id: None,
        }
    }

    /// Add a token; Err(existing bytes) if the id is taken.
    pub fn insert(&mut self, id: u32, bytes: &[u8]) -> Result<(), Vec<u8>> {
        if let Some(old) = self.get(id) {
            return Err(old.to_vec());
        }
        let span = (self.data.len() as u32, bytes.len() as u32);
        self.data.extend_from_slice(bytes);
        match self.dense.get_mut(id as usize) {
            Some(slot) => *slot = span,
            None => {
                self.sparse.insert(id, span);
            }
        }
        self.count += 1;
        self.max_id = Some(self.max_id.map_or(id, |m| m.max(id)));
        Ok(())
    }

    #[inline]
    pub fn get(&self, id: u32) -> Option<&[u8]> {
        let (start, len) = match self.dense.get(id as usize) {
            Some(&span) => span,
            None => *self.sparse.get(&id)?,
        };
        if len == MISSING {
            return None;
        }
        self.data.get(start as usize..start as usize + len as usize)
    }

    /// One more than the largest id (tiktoken's `n_vocab`).
    pub fn n_vocab(&self) -> u64 {
        self.max_id.map_or(0, |m| u64::from(m) + 1)
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Every (id, bytes), in id order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        let mut sparse: Vec<u32> = self.sparse.keys().copied().collect();
        sparse.sort_unstable();
        (0..self.dense.len() as u32)
            .chain(sparse)
            .filter_map(move |id| self.get(id).map(|b| (id, b)))
    }
}

/// What is wrong with a merges list against its vocabulary (see [`check_merges`]).
#[derive(Debug, PartialEq, Eq)]
pub enum MergeProblem {
    /// Merge `index`'s left part, right part or result (`part`, checked in that order) is no token.
    NotToken { index: usize, part: Vec<u8> },
    /// `count` tokens of two or more bytes are the result of no merge; `first` (id `id`) is the
    /// one with the lowest id.
    Lost {
        count: usize,
        first: Vec<u8>,
        id: u32,
    },
}

/// Whether `merges` fit `ranks` (token bytes, id): every merge's parts and result are tokens, and
/// every token of two or more bytes is some merge's result (else the list was cut short). The
/// rules of `wwho.bytelevel.validate`, which asks this of every loaded merges-rule model.
pub fn check_merges(ranks: &[(&[u8], u32)], merges: &[(&[u8], &[u8])]) -> Result<(), MergeProblem> {
    let tokens: FxHashMap<&[u8], usize> = ranks
        .iter()
        .enumerate()
        .map(|(i, &(b, _))| (b, i))
        .collect();
    let mut produced = vec![false; ranks.len()];
    let mut joined = Vec::new();
    for (index, &(a, b)) in merges.iter().enumerate() {
        joined.clear();
        joined.extend_from_slice(a);
        joined.extend_from_slice(b);
        let mut result = 0;
        for part in [a, b, joined.as_slice()] {
            match tokens.get(part) {
                Some(&i) => result = i,
                None => {
                    return Err(MergeProblem::NotToken {
                        index,
                        part: part.to_vec(),
                    })
                }
            }
        }
        produced[result] = true;
    }
    lost(ranks, &produced).map_or(Ok(()), Err)
}

/// Whether some pair of `merges` is listed twice, and for each of `tokens` whether some merge's
/// two parts joined make it: what a loader of Hugging Face files asks of an added token that the
/// vocabulary also lists (HF keeps it an ordinary token too where a merge makes it). Linear in the
/// merges whatever the tokens' lengths: no token is cut at every offset.
pub fn merge_facts(merges: &[(&[u8], &[u8])], tokens: &[&[u8]]) -> (bool, Vec<bool>) {
    let mut seen: FxHashSet<(&[u8], &[u8])> =
        FxHashSet::with_capacity_and_hasher(merges.len(), Default::default());
    let wanted: FxHashSet<&[u8]> = tokens.iter().copied().collect();
    let lengths: FxHashSet<usize> = tokens.iter().map(|t| t.len()).collect();
    let mut made: FxHashSet<&[u8]> = FxHashSet::default();
    let mut repeated = false;
    let mut joined = Vec::new();
    for &(a, b) in merges {
        repeated |= !seen.insert((a, b));
        if lengths.contains(&(a.len() + b.len())) {
            joined.clear();
            joined.extend_from_slice(a);
            joined.extend_from_slice(b);
            if let Some(&token) = wanted.get(joined.as_slice()) {
                made.insert(token);
            }
        }
    }
    (repeated, tokens.iter().map(|t| made.contains(t)).collect())
}

/// The [`MergeProblem::Lost`] finding for the tokens of two or more bytes that no merge produces
/// (`produced[i]` for `ranks[i]`), naming the one with the lowest id; None if there are none.
pub(super) fn lost<B: AsRef<[u8]>>(ranks: &[(B, u32)], produced: &[bool]) -> Option<MergeProblem> {
    let lost = ranks
        .iter()
        .zip(produced)
        .filter(|&((b, _), &made)| b.as_ref().len() > 1 && !made)
        .map(|(r, _)| r);
    let (first, id) = lost.clone().min_by_key(|&&(_, id)| id)?;
    Some(MergeProblem::Lost {
        count: lost.count(),
        first: first.as_ref().to_vec(),
        id: *id,
    })
}

/// Python's `repr()` of a `bytes` object (`b'a\n\xe0'`), for error messages.
pub fn bytes_repr(data: &[u8]) -> String {
    let quote = if data.contains(&b'\'') && !data.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    let mut out = String::with_capacity(data.len() + 3);
    out.push('b');
    out.push(quote as char);
    for &b in data {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            _ if b == quote => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7E => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push(quote as char);
    out
}

/// Python's `repr()` of a `str` (close enough for messages: quotes and escapes of controls).
pub fn str_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ if c == quote => {
                out.push('\\');
                out.push(c);
            }
            _ if (c as u32) < 0x20 || c as u32 == 0x7F => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            _ => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse() {
        let mut v = Vocab::with_capacity(3, 1 << 30, 8);
        v.insert(0, b"a").unwrap();
        v.insert(1 << 30, b"big").unwrap();
        v.insert(5, b"").unwrap();
        assert_eq!(v.insert(0, b"x"), Err(b"a".to_vec()));
        assert_eq!(v.get(1 << 30), Some(&b"big"[..]));
        assert_eq!(v.get(5), Some(&b""[..]));
        assert_eq!(v.get(4), None);
        assert_eq!(v.n_vocab(), (1 << 30) + 1);
        assert_eq!(v.len(), 3);
        let ids: Vec<u32> = v.iter().map(|(i, _)| i).collect();
        assert_eq!(ids, vec![0, 5, 1 << 30]);
    }

    #[test]
    fn merge_facts_find_repeats_and_the_tokens_a_merge_makes() {
        let merges: Vec<(&[u8], &[u8])> = vec![(b"a", b"b"), (b"ab", b"b"), (b"a", b"bb")];
        let tokens: Vec<&[u8]> = vec![b"abb", b"ab", b"ba", b"abb", b"a", b""];
        let facts = merge_facts(&merges, &tokens);
        assert_eq!(facts, (false, vec![true, true, false, true, false, false]));
        let again: Vec<(&[u8], &[u8])> = vec![(b"a", b"b"), (b"b", b"a"), (b"a", b"b")];
        assert_eq!(merge_facts(&again, &[b"ba"]), (true, vec![true]));
        assert_eq!(merge_facts(&[], &[b"ab"]), (false, vec![false]));
    }

    #[test]
    fn merges_are_checked_against_the_tokens() {
        let ranks: Vec<(&[u8], u32)> = vec![(b"a", 0), (b"b", 1), (b"ab", 2), (b"abb", 3)];
        let ok: Vec<(&[u8], &[u8])> = vec![(b"a", b"b"), (b"ab", b"b")];
        assert_eq!(check_merges(&ranks, &ok), Ok(()));
        assert_eq!(
            check_merges(&ranks, &ok[..1]),
            Err(MergeProblem::Lost {
                count: 1,
                first: b"abb".to_vec(),
                id: 3
            })
        );
        let bad: Vec<(&[u8], &[u8])> = vec![(b"a", b"b"), (b"b", b"b")];
        assert_eq!(
            check_merges(&ranks, &bad),
            Err(MergeProblem::NotToken {
                index: 1,
                part: b"bb".to_vec()
            })
        );
        let bad: Vec<(&[u8], &[u8])> = vec![(b"c", b"a")];
        assert_eq!(
            check_merges(&ranks, &bad),
            Err(MergeProblem::NotToken {
                index: 0,
                part: b"c".to_vec()
            })
        );
    }

    #[test]
    fn reprs_are_pythons() {
        assert_eq!(bytes_repr(b"a\n\xe0'"), r#"b"a\n\xe0'""#);
        assert_eq!(bytes_repr(b"it's \"x\""), r#"b'it\'s "x"'"#);
        assert_eq!(str_repr("a'b"), r#""a'b""#);
        assert_eq!(str_repr("<|x|>"), "'<|x|>'");
    }
}
