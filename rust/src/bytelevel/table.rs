//! Token bytes -> id, built for the two lookups byte-level BPE makes all the time: "is this
//! piece a token?" and (for the ranks rule) "is this pair of tokens, concatenated, a token?".
//!
//! Tokens of at most 16 bytes (nearly all of them) are packed into two little-endian `u64`s and
//! kept in open-addressing tables, so a lookup hashes and compares integers instead of hashing a
//! slice and calling `memcmp`; the packed form of every id is kept too, so a pair's
//! concatenation is two shifts. Tokens of at most 8 bytes (most of a vocabulary) have a table of
//! 16-byte slots, the others one of 24-byte slots: the smaller the table, the more of it stays in
//! the CPU's caches. Longer tokens go to an ordinary hash map.

use super::memo::fetch;
use crate::huge::HugeSlice;
use crate::memory::NoMemory;
use rustc_hash::FxHashMap;

const EMPTY: u32 = u32::MAX;
/// Tokens up to this many bytes are packed.
pub const PACKED: usize = 16;
/// Tokens up to this many bytes (most of a vocabulary) go to the table of one-word keys.
pub const SHORT: usize = 8;

/// One token of a [`Slots`] table: its packed bytes (`u64` or two), length and id.
#[derive(Clone, Copy)]
struct Slot<K> {
    key: K,
    len: u32,
    id: u32,
}

/// A token packed: its bytes as a little-endian u128 (zero-padded), and its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed {
    pub key: u128,
    pub len: u32,
}

impl Packed {
    /// Pack `bytes` (at most [`PACKED`] long).
    #[inline(always)]
    pub fn new(bytes: &[u8]) -> Packed {
        let n = bytes.len();
        let key = if n <= 8 {
            u128::from(load_le(bytes))
        } else {
            let lo = u64::from_le_bytes([
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            ]);
            u128::from(lo) | (u128::from(load_le(&bytes[8..])) << 64)
        };
        Packed { key, len: n as u32 }
    }

    /// `bytes` packed, or None if longer than [`PACKED`].
    #[inline(always)]
    pub fn new_checked(bytes: &[u8]) -> Option<Packed> {
        (bytes.len() <= PACKED).then(|| Packed::new(bytes))
    }

    /// The first `len` (1 to [`PACKED`]) of `window`'s bytes packed: for a piece read as the
    /// 16 bytes where it starts, without a branch on its length.
    #[inline(always)]
    pub fn from_window(window: [u8; PACKED], len: usize) -> Packed {
        Packed {
            key: u128::from_le_bytes(window) & MASKS[len],
            len: len as u32,
        }
    }

    /// `self` followed by `other`, if the result still fits.
    #[inline(always)]
    pub fn concat(self, other: Packed) -> Option<Packed> {
        let len = self.len + other.len;
        if len as usize > PACKED {
            return None;
        }
        // len(self) < 16 here whenever other is non-empty, so the shift is in range.
        let key = if other.len == 0 {
            self.key
        } else {
            self.key | (other.key << (8 * self.len))
        };
        Some(Packed { key, len })
    }
}

/// The low `8 * len` bits set, by `len` (a u128 shift by a variable amount is a dozen
/// instructions).
const MASKS: [u128; PACKED + 1] = {
    let mut masks = [0u128; PACKED + 1];
    let mut len = 1;
    while len <= PACKED {
        masks[len] = u128::MAX >> (128 - 8 * len);
        len += 1;
    }
    masks
};

/// Up to 8 bytes as a little-endian u64, zero-padded, without a `memcpy` call.
#[inline(always)]
pub(crate) fn load_le(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        let first = u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let last = u64::from(u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]));
        first | (last << (8 * (n - 4)))
    } else if n > 0 {
        u64::from(b[0])
            | (u64::from(b[n / 2]) << (8 * (n / 2)))
            | (u64::from(b[n - 1]) << (8 * (n - 1)))
    } else {
        0
    }
}

#[inline(always)]
fn hash(p: Packed) -> u64 {
    let lo = p.key as u64;
    let hi = (p.key >> 64) as u64;
    let mut h = (lo ^ hi.rotate_left(23) ^ u64::from(p.len).rotate_left(47))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 31;
    h.wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

/// An open-addressing table of packed tokens with keys of type `K`, linear probing.
struct Slots<K: Copy> {
    /// On huge pages: lookups land anywhere in it (see [`crate::huge`]).
    slots: HugeSlice<Slot<K>>,
    mask: usize,
    count: usize,
}

impl<K: Copy + Default + PartialEq + Into<Keys>> Slots<K> {
    fn empty() -> Slot<K> {
        Slot {
            key: K::default(),
            len: 0,
            id: EMPTY,
        }
    }

    fn new(n: usize) -> Result<Slots<K>, NoMemory> {
        // Load at most 2/3 after `n` inserts: a probe seldom leaves its cache line, and the
        // table stays small enough that a cold lookup finds it in the CPU's caches more often.
        let size = (n + n / 2).next_power_of_two().max(16);
        Ok(Slots {
            slots: HugeSlice::try_filled(size, Self::empty())?,
            mask: size - 1,
            count: 0,
        })
    }

    fn insert(&mut self, key: K, len: u32, id: u32, h: u64) -> Result<(), u32> {
        if 3 * (self.count + 1) > 2 * self.slots.len() {
            self.grow();
        }
        let mut i = h as usize & self.mask;
        loop {
            let slot = &mut self.slots[i];
            if slot.id == EMPTY {
                *slot = Slot { key, len, id };
                self.count += 1;
                return Ok(());
            }
            if slot.key == key && slot.len == len {
                return Err(slot.id);
            }
            i = (i + 1) & self.mask;
        }
    }

    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, HugeSlice::new(size, Self::empty()));
        self.mask = size - 1;
        for &s in old.iter().filter(|s| s.id != EMPTY) {
            let mut i = slot_hash(&s) as usize & self.mask;
            while self.slots[i].id != EMPTY {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = s;
        }
    }

    #[inline(always)]
    fn probe(&self, key: K, len: u32, h: u64) -> Option<u32> {
        let mut i = h as usize & self.mask;
        loop {
            let slot = &self.slots[i];
            if slot.key == key && slot.len == len && slot.id != EMPTY {
                return Some(slot.id);
            }
            if slot.id == EMPTY {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    fn heap_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot<K>>()
    }
}

/// The hash of a stored slot's token (to re-insert it when its table grows).
fn slot_hash<K: Copy + Into<Keys>>(s: &Slot<K>) -> u64 {
    let Keys(lo, hi) = s.key.into();
    hash(Packed {
        key: u128::from(lo) | (u128::from(hi) << 64),
        len: s.len,
    })
}

/// A slot's key as two words.
struct Keys(u64, u64);

impl From<u64> for Keys {
    fn from(k: u64) -> Keys {
        Keys(k, 0)
    }
}

impl From<[u64; 2]> for Keys {
    fn from(k: [u64; 2]) -> Keys {
        Keys(k[0], k[1])
    }
}

pub struct TokenTable {
    /// Tokens of up to [`SHORT`] bytes, 16 bytes a slot.
    short: Slots<u64>,
    /// Tokens of up to [`PACKED`] bytes, 24 bytes a slot.
    mid: Slots<[u64; 2]>,
    long: FxHashMap<Box<[u8]>, u32>,
    /// A Bloom filter over the tokens (two bits each, 256 kB; a long one by [`long_key`]): most
    /// pairs BPE asks about are not tokens, and this says so without touching the megabytes of
    /// the tables.
    bloom: Vec<u64>,
}

const BLOOM_BITS: u32 = 21;

/// What the Bloom filter holds of a token longer than [`PACKED`] bytes: its first [`PACKED`]
/// bytes and its length (which no packed token has).
#[inline(always)]
fn long_key(bytes: &[u8]) -> Packed {
    Packed {
        key: Packed::new(&bytes[..PACKED]).key,
        len: bytes.len() as u32,
    }
}

/// The word of the Bloom filter a hash sets bits in, and the two bits: both in one word, so a
/// lookup loads one cache line.
#[inline(always)]
fn bloom_bits(h: u64) -> (usize, u64) {
    let word = (h >> (64 - BLOOM_BITS + 6)) as usize;
    let bits = (1u64 << ((h >> 20) & 63)) | (1u64 << ((h >> 26) & 63));
    (word, bits)
}

impl TokenTable {
    /// A table sized for `n` tokens, `short` of them of at most 8 bytes (it grows past either),
    /// or [`NoMemory`] where its slots cannot be had (a construction's error, not an abort).
    pub fn with_capacity(n: usize, short: usize) -> Result<TokenTable, NoMemory> {
        Ok(TokenTable {
            short: Slots::new(short)?,
            mid: Slots::new(n.saturating_sub(short))?,
            long: FxHashMap::default(),
            bloom: crate::memory::filled(0, (1 << BLOOM_BITS) / 64)?,
        })
    }

    /// Insert a token; Err(the id it already has) if present.
    pub fn insert(&mut self, bytes: &[u8], id: u32) -> Result<(), u32> {
        if bytes.len() > PACKED {
            let (word, bits) = bloom_bits(hash(long_key(bytes)));
            self.bloom[word] |= bits;
            return match self.long.insert(bytes.into(), id) {
                Some(old) => {
                    self.long.insert(bytes.into(), old);
                    Err(old)
                }
                None => Ok(()),
            };
        }
        let p = Packed::new(bytes);
        let h = hash(p);
        let (word, bits) = bloom_bits(h);
        self.bloom[word] |= bits;
        if bytes.len() <= SHORT {
            self.short.insert(p.key as u64, p.len, id, h)
        } else {
            self.mid
                .insert([p.key as u64, (p.key >> 64) as u64], p.len, id, h)
        }
    }

    /// Like [`get_packed`](Self::get_packed), asking the Bloom filter first: for lookups that
    /// usually fail.
    #[inline(always)]
    pub fn get_packed_rare(&self, p: Packed) -> Option<u32> {
        let h = hash(p);
        let (word, bits) = bloom_bits(h);
        if self.bloom[word] & bits != bits {
            return None;
        }
        self.probe(p, h)
    }

    /// A request that the CPU fetch the lines a lookup of `p` reads first (the Bloom
    /// filter's word and the slot its probe starts at): a hint, which never faults and
    /// changes no result.
    #[inline(always)]
    pub fn fetch(&self, p: Packed) {
        let h = hash(p);
        let (word, _) = bloom_bits(h);
        if let Some(word) = self.bloom.get(word) {
            fetch(word, 1);
        }
        if p.len as usize <= SHORT {
            if let Some(slot) = self.short.slots.get(h as usize & self.short.mask) {
                fetch(slot, 1);
            }
        } else if let Some(slot) = self.mid.slots.get(h as usize & self.mid.mask) {
            fetch(slot, 1);
        }
    }

    #[inline(always)]
    pub fn get_packed(&self, p: Packed) -> Option<u32> {
        self.probe(p, hash(p))
    }

    #[inline(always)]
    fn probe(&self, p: Packed, h: u64) -> Option<u32> {
        if p.len as usize <= SHORT {
            self.short.probe(p.key as u64, p.len, h)
        } else {
            self.mid
                .probe([p.key as u64, (p.key >> 64) as u64], p.len, h)
        }
    }

    #[inline(always)]
    pub fn get(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() <= PACKED {
            self.get_packed(Packed::new(bytes))
        } else {
            // Most pieces and pairs this long are no token: the filter says so without hashing
            // every byte of them into the map.
            let (word, bits) = bloom_bits(hash(long_key(bytes)));
            if self.bloom[word] & bits != bits {
                return None;
            }
            self.long.get(bytes).copied()
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.short.heap_bytes()
            + self.mid.heap_bytes()
            + self.bloom.len() * 8
            + self.long.keys().map(|k| k.len() + 32).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_is_exact_for_every_length() {
        let data: Vec<u8> = (1..=40).collect();
        for n in 0..=PACKED {
            let mut buf = [0u8; 16];
            buf[..n].copy_from_slice(&data[..n]);
            assert_eq!(
                Packed::new(&data[..n]).key,
                u128::from_le_bytes(buf),
                "length {n}"
            );
            if n > 0 {
                // a 16-byte window whose bytes past the piece are not zero, masked
                let window: [u8; PACKED] = data[..PACKED].try_into().unwrap();
                assert_eq!(Packed::from_window(window, n), Packed::new(&data[..n]));
            }
        }
        for a in 0..=PACKED {
            for b in 0..=PACKED - a {
                let joined = [&data[..a], &data[20..20 + b]].concat();
                let p = Packed::new(&data[..a]).concat(Packed::new(&data[20..20 + b]));
                assert_eq!(p, Some(Packed::new(&joined)));
            }
        }
        assert_eq!(
            Packed::new(&data[..9]).concat(Packed::new(&data[..8])),
            None
        );
    }

    #[test]
    fn lookups_and_trailing_zero_bytes() {
        let mut t = TokenTable::with_capacity(4, 2).unwrap();
        let tokens: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"a".to_vec(),
            b"a\0".to_vec(),
            b"a\0\0".to_vec(),
            vec![0],
            b"01234567".to_vec(),  // the longest of the short table
            b"012345678".to_vec(), // the shortest of the other
            b"0123456\0".to_vec(),
            b"0123456789abcdef".to_vec(),
            b"0123456789abcdefg".to_vec(),
        ];
        for (i, tok) in tokens.iter().enumerate() {
            t.insert(tok, i as u32).unwrap();
        }
        for (i, tok) in tokens.iter().enumerate() {
            assert_eq!(t.get(tok), Some(i as u32));
            assert_eq!(t.insert(tok, 99), Err(i as u32));
        }
        assert_eq!(t.get(b"b"), None);
        assert_eq!(t.get(b"0123456789abcdeg"), None);
        for i in 0..1000u32 {
            t.insert(format!("tok{i}").as_bytes(), 100 + i).unwrap();
        }
        assert_eq!(t.get(b"tok999"), Some(1099));
        assert_eq!(t.get(b"a\0"), Some(2));
        for i in 0..1000u32 {
            let present = format!("tok{i}");
            let absent = format!("kot{i}");
            assert_eq!(
                t.get_packed_rare(Packed::new(present.as_bytes())),
                Some(100 + i)
            );
            assert_eq!(t.get_packed_rare(Packed::new(absent.as_bytes())), None);
        }
    }

    #[test]
    fn long_tokens_pass_the_filter_and_others_mostly_not() {
        // Tokens longer than PACKED, some sharing their first PACKED bytes with each other
        // (same length or not): each is found, whatever the filter holds of the others; pieces
        // that are no token are found by no one, and most are answered by the filter.
        let mut t = TokenTable::with_capacity(16, 8).unwrap();
        let mut tokens = Vec::new();
        for i in 0..300u32 {
            let head = format!("{:016}", i / 3);
            tokens.push(format!("{head}{}", "x".repeat(1 + (i % 3) as usize)));
            tokens.push(format!("{head}y{i:04}"));
        }
        for (id, tok) in tokens.iter().enumerate() {
            t.insert(tok.as_bytes(), id as u32).unwrap();
        }
        for (id, tok) in tokens.iter().enumerate() {
            assert_eq!(t.get(tok.as_bytes()), Some(id as u32), "{tok}");
        }
        // A piece with a token's first bytes and length passes the filter: the map says no.
        for i in 0..100u32 {
            assert_eq!(t.get(format!("{i:016}zz").as_bytes()), None);
        }
        let mut filtered = 0;
        for i in 1000..2000u32 {
            let absent = format!("{i:016}z{i}");
            assert_eq!(t.get(absent.as_bytes()), None);
            let (word, bits) = bloom_bits(hash(long_key(absent.as_bytes())));
            filtered += usize::from(t.bloom[word] & bits != bits);
        }
        assert!(filtered > 990, "{filtered} of 1,000 answered by the filter");
    }
}
