//! Token id -> bytes for every token of a byte-level vocabulary (ordinary, special, added and
//! extra tokens), and the error messages that name tokens the way Python prints them.
//!
//! Ids are stored densely (one slot per id up to the largest) unless the ids are sparse, in
//! which case the ones past the dense range go to a hash map, so an id like 2^31 in a file
//! costs one entry, not gigabytes. This module does not encode.

use rustc_hash::FxHashMap;
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
    fn reprs_are_pythons() {
        assert_eq!(bytes_repr(b"a\n\xe0'"), r#"b"a\n\xe0'""#);
        assert_eq!(bytes_repr(b"it's \"x\""), r#"b'it\'s "x"'"#);
        assert_eq!(str_repr("a'b"), r#""a'b""#);
        assert_eq!(str_repr("<|x|>"), "'<|x|>'");
    }
}
