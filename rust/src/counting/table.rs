//! The count table: piece (UTF-8 bytes) -> 64-bit count, open addressing with short pieces
//! held in their slots and longer ones in an arena; its byte format for shipping counts between
//! processes ([`Counts::to_bytes`], [`entries_to_bytes`], [`for_each_entry`]); one table added
//! into another ([`absorb`]). It does not cut text into pieces or read files.

use super::{CountError, Tally};

/// Piece (UTF-8 bytes) -> count: an open-addressing table whose slots hold short pieces
/// themselves (one cache line probed per lookup; a general map keeps each key in its own
/// allocation, a second and third miss). Longer pieces live in an arena.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    slots: Vec<Slot>,
    len: usize,
    arena: Vec<u8>,
}

const INLINE: usize = 32;

impl Tally for Counts {
    #[inline]
    fn add(&mut self, key: &[u8], n: u64) {
        Counts::add(self, key, n);
    }

    fn try_add(&mut self, key: &[u8], n: u64) -> bool {
        Counts::try_add(self, key, n)
    }
}

/// The header of [`Counts::to_bytes`].
const MAGIC: &[u8] = b"WWHOCNT1";

#[derive(Clone, Copy, Debug)]
struct Slot {
    hash: u32,
    /// Piece length; the slot is empty when `count == 0`.
    len: u32,
    count: u64,
    /// The piece, or (longer than [`INLINE`]) its offset in the arena as 8 bytes.
    key: [u8; INLINE],
}

const EMPTY: Slot = Slot {
    hash: 0,
    len: 0,
    count: 0,
    key: [0; INLINE],
};

#[inline]
fn hash_bytes(piece: &[u8]) -> u32 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(piece);
    let h = h.finish();
    ((h >> 32) ^ h) as u32
}

impl Counts {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn key_of<'a>(&'a self, slot: &'a Slot) -> &'a [u8] {
        let len = slot.len as usize;
        if len <= INLINE {
            &slot.key[..len]
        } else {
            let mut offset = [0u8; 8];
            offset.copy_from_slice(&slot.key[..8]);
            let start = u64::from_le_bytes(offset) as usize;
            &self.arena[start..start + len]
        }
    }

    /// Add `n` to the count of `piece`.
    #[inline]
    pub fn add(&mut self, piece: &[u8], n: u64) {
        self.add_hashed(piece, hash_bytes(piece), n);
    }

    fn add_hashed(&mut self, piece: &[u8], hash: u32, n: u64) {
        if (self.len + 1) * 10 > self.slots.len() * 7 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        let short = piece.len() <= INLINE;
        // A short piece compares as one zero-padded array (a few vector instructions).
        let mut key = [0u8; INLINE];
        if short {
            key[..piece.len()].copy_from_slice(piece);
        }
        loop {
            let slot = &self.slots[i];
            if slot.count == 0 {
                break;
            }
            if slot.hash == hash
                && slot.len as usize == piece.len()
                && if short {
                    slot.key == key
                } else {
                    self.key_of(slot) == piece
                }
            {
                self.slots[i].count += n;
                return;
            }
            i = (i + 1) & mask;
        }
        if !short {
            key[..8].copy_from_slice(&(self.arena.len() as u64).to_le_bytes());
            self.arena.extend_from_slice(piece);
        }
        self.slots[i] = Slot {
            hash,
            len: piece.len() as u32,
            count: n,
            key,
        };
        self.len += 1;
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1024);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; size]);
        let mask = size - 1;
        for slot in old.into_iter().filter(|s| s.count != 0) {
            let mut i = slot.hash as usize & mask;
            while self.slots[i].count != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }

    /// Add `n` to the count of `piece` unless the sum would pass `u64::MAX` (then `false`,
    /// nothing changed). A zero `n` adds nothing (a zero count marks an empty slot).
    pub fn try_add(&mut self, piece: &[u8], n: u64) -> bool {
        if self.get(piece).checked_add(n).is_none() {
            return false;
        }
        if n != 0 {
            self.add(piece, n);
        }
        true
    }

    /// The table as bytes: `MAGIC`, then per piece its length (u32 LE), its bytes and its count
    /// (u64 LE), in no particular order. For shipping partial counts between processes.
    pub fn to_bytes(&self) -> Vec<u8> {
        entries_to_bytes(self.iter(), self.len * 16 + self.arena.len())
    }

    /// The count of `piece` (0 if absent).
    pub fn get(&self, piece: &[u8]) -> u64 {
        if self.slots.is_empty() {
            return 0;
        }
        let hash = hash_bytes(piece);
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = &self.slots[i];
            if slot.count == 0 {
                return 0;
            }
            if slot.hash == hash && slot.len as usize == piece.len() && self.key_of(slot) == piece {
                return slot.count;
            }
            i = (i + 1) & mask;
        }
    }

    /// Every `(piece, count)`, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.slots
            .iter()
            .filter(|s| s.count != 0)
            .map(|s| (self.key_of(s), s.count))
    }

    /// The sum of all counts (at most `u64::MAX`: counts given by a caller may add up past it).
    pub fn total(&self) -> u64 {
        self.iter().fold(0, |sum, (_, n)| sum.saturating_add(n))
    }

    /// Bytes held by the table.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>() + self.arena.capacity()
    }
}

/// `(key, count)` entries in the format of [`Counts::to_bytes`].
pub fn entries_to_bytes<'a>(
    entries: impl Iterator<Item = (&'a [u8], u64)>,
    hint: usize,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + hint);
    out.extend_from_slice(MAGIC);
    for (piece, n) in entries {
        out.extend_from_slice(&(piece.len() as u32).to_le_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(&n.to_le_bytes());
    }
    out
}

/// `f(key, count)` for every entry of a [`Counts::to_bytes`] buffer, stopping at the first error.
pub fn for_each_entry(
    mut data: &[u8],
    mut f: impl FnMut(&[u8], u64) -> Result<(), CountError>,
) -> Result<(), CountError> {
    data = data.strip_prefix(MAGIC).ok_or(CountError::NoHeader)?;
    while !data.is_empty() {
        let bad = CountError::Truncated;
        let len = u32::from_le_bytes(data.get(..4).ok_or(bad)?.try_into().unwrap()) as usize;
        let piece = data.get(4..4 + len).ok_or(CountError::Truncated)?;
        // Counts are of text: a piece that is not UTF-8 (nor WTF-8, for lone surrogates) would be
        // read back as something else, or merged with another such piece.
        if simdutf8::basic::from_utf8(piece).is_err() && crate::units::decode_wtf8(piece).is_err() {
            return Err(CountError::NotText);
        }
        let n = u64::from_le_bytes(
            data.get(4 + len..12 + len)
                .ok_or(CountError::Truncated)?
                .try_into()
                .unwrap(),
        );
        f(piece, n)?;
        data = &data[12 + len..];
    }
    Ok(())
}

/// Add `other` into `into`.
pub fn absorb(into: &mut Counts, other: Counts) {
    if into.is_empty() {
        *into = other;
        return;
    }
    for slot in other.slots.iter().filter(|s| s.count != 0) {
        into.add_hashed(other.key_of(slot), slot.hash, slot.count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_pieces_and_growth() {
        let mut c = Counts::default();
        let long = "x".repeat(100);
        for i in 0..5000u64 {
            c.add(format!("{long}{i}").as_bytes(), i + 1);
            c.add(format!("{i}").as_bytes(), 1);
        }
        c.add(format!("{long}7").as_bytes(), 10);
        assert_eq!(c.len(), 10_000);
        assert_eq!(c.get(format!("{long}7").as_bytes()), 18);
        assert_eq!(c.get(b"4999"), 1);
        let mut d = Counts::default();
        d.add(b"4999", 2);
        absorb(&mut d, c.clone());
        assert_eq!(d.get(b"4999"), 3);
        assert_eq!(d.total(), c.total() + 2);
    }

    #[test]
    fn bytes_round_trip_and_overflow() {
        let mut c = Counts::default();
        let long = "ක".repeat(40);
        for (p, n) in [("a", 3u64), (" b", 1), (long.as_str(), 7)] {
            c.add(p.as_bytes(), n);
        }
        let mut d = Counts::default();
        d.add(b"a", 1);
        d.add_bytes(&c.to_bytes()).unwrap();
        assert_eq!(d.get(b"a"), 4);
        assert_eq!(d.get(long.as_bytes()), 7);
        assert_eq!(d.len(), 3);
        assert!(d.add_bytes(b"nonsense").is_err());
        assert!(d.add_bytes(&c.to_bytes()[..12]).is_err());
        let mut big = Counts::default();
        big.add(b"a", u64::MAX - 3);
        assert!(big.add_bytes(&c.to_bytes()).is_ok()); // exactly u64::MAX
        assert!(!big.try_add(b"a", 1));
        assert_eq!(big.get(b"a"), u64::MAX);
        assert!(big.try_add(b"z", 0) && big.get(b"z") == 0 && big.len() == 3);
    }
}
