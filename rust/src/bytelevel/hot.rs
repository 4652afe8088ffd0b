//! Small per-thread memos: recent pieces (piece -> ids) and recent pair lookups ((left, right)
//! -> merge), direct-mapped, fixed size.
//!
//! The token table and the shared piece cache are megabytes; looking a piece up in them costs a
//! cache miss or two, which is most of the time of encoding English. Text repeats a few
//! thousand pieces over and over, so each thread keeps the last piece seen at each of
//! [`SLOTS`] slots (one cache line each, 512 kB: an L2's worth), keyed by the piece's exact bytes
//! and by the tokenizer that filled it. It never changes a result: a hit returns what the slow
//! path returned for the same bytes; pieces longer than [`MAX_PIECE`] bytes or with more than
//! [`MAX_IDS`] ids are not kept. The pair memo ([`MemoPairs`], 64 kB) does the same for the
//! merge loop's lookups.

use crate::merge::{Merge, Pairs};
use std::cell::{Cell, RefCell};

/// Slots per thread: 8,192 cache lines, 512 kB.
pub const SLOTS: usize = 8192;
/// Longest piece kept, in bytes (a Sinhala word of a dozen letters).
pub const MAX_PIECE: usize = 40;
pub const MAX_IDS: usize = 5;
const WORDS: usize = MAX_PIECE / 8;

/// One slot, one cache line: the piece zero-padded, its length, and its ids.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Entry {
    key: [u64; WORDS],
    ids: [u32; MAX_IDS],
    len: u16,
    n: u16, // ids held; 0: empty
}

const EMPTY: Entry = Entry {
    key: [0; WORDS],
    ids: [0; MAX_IDS],
    len: 0,
    n: 0,
};

/// Pair slots per thread: (left, right) -> merge, 64 kB.
pub const PAIR_SLOTS: usize = 4096;

#[derive(Clone, Copy)]
struct PairSlot {
    key: u64, // EMPTY_PAIR: unused
    rank: u32,
    id: u32, // NO_MERGE: the pair does not merge
}

const EMPTY_PAIR: u64 = u64::MAX;
const NO_MERGE: u32 = u32::MAX;

pub struct Hot {
    owner: u64,
    entries: Box<[Entry]>,
    pairs: Box<[Cell<PairSlot>]>,
}

/// A [`Pairs`] that remembers the last answer for each slot of pairs: BPE of a script's words
/// asks about the same few thousand pairs over and over, and the vocabulary's own tables are
/// megabytes away in memory.
pub struct MemoPairs<'a, P: Pairs + ?Sized> {
    pub inner: &'a P,
    slots: &'a [Cell<PairSlot>],
}

impl<P: Pairs + ?Sized> Pairs for MemoPairs<'_, P> {
    #[inline(always)]
    fn get(&self, left: u32, right: u32) -> Option<Merge> {
        let key = (u64::from(left) << 32) | u64::from(right);
        if key == EMPTY_PAIR {
            return self.inner.get(left, right);
        }
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PAIR_SLOTS.trailing_zeros());
        let cell = &self.slots[h as usize];
        let slot = cell.get();
        if slot.key == key {
            return (slot.id != NO_MERGE).then_some(Merge {
                rank: slot.rank,
                id: slot.id,
            });
        }
        let found = self.inner.get(left, right);
        cell.set(PairSlot {
            key,
            rank: found.map_or(0, |m| m.rank),
            id: found.map_or(NO_MERGE, |m| m.id),
        });
        found
    }
}

/// `piece` zero-padded into words (at most [`MAX_PIECE`] bytes), with whole-word loads where
/// the piece has them: no `memcpy` call for a few bytes.
#[inline(always)]
fn words(piece: &[u8]) -> [u64; WORDS] {
    let mut key = [0u64; WORDS];
    let mut chunks = piece.chunks_exact(8);
    let mut k = 0;
    for chunk in chunks.by_ref() {
        key[k] = u64::from_le_bytes([
            chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
        ]);
        k += 1;
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        key[k] = super::table::load_le(tail);
    }
    key
}

#[inline(always)]
fn slot(key: &[u64; WORDS], len: usize) -> usize {
    // The first two words and the length tell nearly all pieces apart; the rest is compared.
    let h = (key[0] ^ key[1].rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - SLOTS.trailing_zeros())) as usize
}

impl Hot {
    fn new() -> Hot {
        Hot {
            owner: 0,
            entries: vec![EMPTY; SLOTS].into_boxed_slice(),
            pairs: (0..PAIR_SLOTS)
                .map(|_| {
                    Cell::new(PairSlot {
                        key: EMPTY_PAIR,
                        rank: 0,
                        id: NO_MERGE,
                    })
                })
                .collect(),
        }
    }

    /// Make the memo belong to tokenizer `owner` (emptying it if it held another's pieces).
    #[inline]
    pub fn claim(&mut self, owner: u64) {
        if self.owner != owner {
            self.entries.fill(EMPTY);
            for p in self.pairs.iter() {
                p.set(PairSlot {
                    key: EMPTY_PAIR,
                    rank: 0,
                    id: NO_MERGE,
                });
            }
            self.owner = owner;
        }
    }

    /// `inner` with this thread's pair memo in front of it.
    pub fn pairs<'a, P: Pairs + ?Sized>(&'a self, inner: &'a P) -> MemoPairs<'a, P> {
        MemoPairs {
            inner,
            slots: &self.pairs,
        }
    }

    /// Append the ids of `piece` to `out` if it is held.
    #[inline(always)]
    pub fn get_into(&self, piece: &[u8], out: &mut Vec<u32>) -> bool {
        if piece.len() > MAX_PIECE {
            return false;
        }
        let key = words(piece);
        let e = &self.entries[slot(&key, piece.len())];
        // An empty slot has n == 0 and len == 0, and no piece is empty: one test does both.
        if e.len as usize != piece.len() || e.n == 0 {
            return false;
        }
        let used = piece.len().div_ceil(8);
        if (0..used).any(|k| e.key[k] != key[k]) {
            return false;
        }
        for &id in &e.ids[..e.n as usize] {
            out.push(id);
        }
        true
    }

    #[inline(always)]
    pub fn put(&mut self, piece: &[u8], ids: &[u32]) {
        if piece.len() > MAX_PIECE || ids.is_empty() || ids.len() > MAX_IDS {
            return;
        }
        let key = words(piece);
        let mut e = Entry {
            key,
            ids: [0; MAX_IDS],
            len: piece.len() as u16,
            n: ids.len() as u16,
        };
        e.ids[..ids.len()].copy_from_slice(ids);
        self.entries[slot(&key, piece.len())] = e;
    }
}

/// Pieces per look at the memo's hit rate.
const WINDOW: u32 = 1024;
/// Fewer hits than this in a window: the text is not repeating itself (random bytes, a long
/// run of new words), and probing and filling the memo only costs, so it is left alone for
/// the next [`REST`] pieces, then tried again.
const FEW_HITS: u32 = WINDOW / 4;
const REST: u32 = 8 * WINDOW;

/// When to leave the memo alone during one text: it never changes a result, only what a
/// piece costs.
#[derive(Default)]
pub struct Bypass {
    probes: u32,
    hits: u32,
    rest: u32,
}

impl Bypass {
    /// Whether to skip the memo for this piece (counted as a probe otherwise).
    #[inline(always)]
    pub fn skip(&mut self) -> bool {
        if self.rest > 0 {
            self.rest -= 1;
            return true;
        }
        self.probes += 1;
        if self.probes == WINDOW {
            if self.hits < FEW_HITS {
                self.rest = REST;
            }
            (self.probes, self.hits) = (0, 0);
        }
        false
    }

    #[inline(always)]
    pub fn hit(&mut self) {
        self.hits += 1;
    }
}

thread_local! {
    static HOT: RefCell<Hot> = RefCell::new(Hot::new());
}

/// Run `f` with this thread's memo claimed for `owner`, or with None if it is in use (a
/// re-entrant call) or the thread is shutting down.
pub fn with<R>(owner: u64, f: impl FnOnce(Option<&mut Hot>) -> R) -> R {
    let mut f = Some(f);
    let result = HOT.try_with(|cell| match cell.try_borrow_mut() {
        Ok(mut hot) => {
            hot.claim(owner);
            (f.take().expect("called once"))(Some(&mut hot))
        }
        Err(_) => (f.take().expect("called once"))(None),
    });
    match result {
        Ok(r) => r,
        Err(_) => (f.take().expect("called once"))(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_keys_and_owners() {
        let mut hot = Hot::new();
        hot.claim(1);
        hot.put(b"abc", &[7, 8]);
        let mut out = Vec::new();
        assert!(hot.get_into(b"abc", &mut out) && out == vec![7, 8]);
        assert!(!hot.get_into(b"abc\0", &mut out)); // same words, another length
        hot.put(b"abc\0", &[9]);
        out.clear();
        assert!(hot.get_into(b"abc\0", &mut out) && out == vec![9]);
        out.clear(); // "abc" may share the slot (direct-mapped); if it is still there, it is exact
        assert!(!hot.get_into(b"abc", &mut out) || out == vec![7, 8]);
        assert!(!hot.get_into(b"abd", &mut Vec::new()));
        let long = [b'x'; MAX_PIECE + 1];
        hot.put(&long, &[1]);
        assert!(!hot.get_into(&long, &mut Vec::new()));
        hot.put(&long[..MAX_PIECE], &[1, 2, 3, 4, 5]);
        out.clear();
        assert!(hot.get_into(&long[..MAX_PIECE], &mut out) && out == vec![1, 2, 3, 4, 5]);
        assert_eq!(std::mem::size_of::<Entry>(), 64);
        hot.claim(2);
        assert!(!hot.get_into(b"abc", &mut Vec::new()));
        // The bypass: a window with few hits rests the memo for REST pieces, then probes again.
        let mut bypass = Bypass::default();
        assert!((0..WINDOW).all(|_| !bypass.skip()));
        assert!((0..REST).all(|_| bypass.skip()));
        for _ in 0..WINDOW {
            assert!(!bypass.skip());
            bypass.hit();
        }
        assert!((0..WINDOW).all(|_| !bypass.skip())); // after a window of hits: probing
        assert!(bypass.skip()); // and that window had none
        with(3, |h| {
            let h = h.unwrap();
            h.put(b"x", &[1]);
            // A nested call gets no memo rather than a second borrow.
            with(3, |inner| assert!(inner.is_none()));
        });
    }
}
