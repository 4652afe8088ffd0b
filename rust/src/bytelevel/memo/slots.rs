//! A memo's tables: [`Slot`]s of a piece and its ids, two to a [`Pair`] (the places a piece may
//! be kept), and a [`Table`] of pairs, made small and grown fourfold as it is written, up to its
//! full size; and [`Evicted`], the pending piece a slot held when written over, copied out for
//! the shared cache. It knows nothing of threads, owners' eras or rests: the memo (`super`)
//! decides which table a piece goes to and when the short one is set aside.

use super::{
    extend_first, COUNT_MASK, COUNT_SHIFT, LONGEST_IDS, LONGEST_KEY, LONGEST_WORDS, OWNER_MASK,
    OWNER_SHIFT, PENDING, SHORT_MARK,
};
use crate::huge::HugeSlice;

/// A piece and its ids: the piece as `W` little-endian words, zero past its end.
#[derive(Clone, Copy)]
#[repr(C)]
pub(super) struct Slot<const W: usize, const I: usize> {
    pub(super) key: [u64; W],
    /// The piece's length, its ids' count and the tokenizer that wrote it (0: none), as
    /// [`COUNT_SHIFT`] and [`OWNER_SHIFT`] say: one word, so that one comparison asks both
    /// whose slot it is and which piece.
    tag: u32,
    ids: [u32; I],
}

/// Two slots, the places a piece may be kept: one cache line for short pieces, two adjacent
/// ones for long.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Pair<const W: usize, const I: usize>(pub(super) [Slot<W, I>; 2]);

const _: () = assert!(std::mem::size_of::<Pair<2, 3>>() == 64);
const _: () = assert!(std::mem::size_of::<Pair<4, 7>>() == 128);
const _: () = assert!(std::mem::size_of::<Pair<LONGEST_WORDS, LONGEST_IDS>>() == 256);

impl<const W: usize, const I: usize> Slot<W, I> {
    const EMPTY: Slot<W, I> = Slot {
        key: [0; W],
        tag: 0,
        ids: [0; I],
    };

    pub(super) fn owner(&self) -> u32 {
        (self.tag >> OWNER_SHIFT) & OWNER_MASK as u32
    }
}

/// The pair of `pairs` (a power of two) that keeps the piece `key` of `len` bytes: the top bits
/// of one product, which every bit of the key reaches.
#[inline(always)]
pub(super) fn pair_among<const W: usize>(pairs: usize, key: &[u64; W], len: u32) -> usize {
    let mut h = u64::from(len).rotate_left(53);
    for (k, word) in key.iter().enumerate() {
        h ^= word.rotate_left(29 * k as u32);
    }
    let bits = pairs.trailing_zeros();
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// One table of a memo: pieces packed in `W` words, with up to `I` ids.
pub(super) struct Table<const W: usize, const I: usize> {
    /// On huge pages once it is megabytes: asked at random.
    pub(super) pairs: HugeSlice<Pair<W, I>>,
    /// Its pairs (0: not made): kept while the short table rests, when `pairs` is set aside.
    pub(super) size: usize,
    /// The pairs it may grow to.
    most: usize,
    /// Pieces written since it was made or last grew.
    written: usize,
}

/// A table is made at a sixteenth of its full size (no fewer than [`FIRST_PAIRS`] pairs, or all of
/// a smaller table) and grows fourfold, up to that size, each time it has been written as many
/// times as it has slots, a quarter (about where pieces start to fall three to a pair). Memory a
/// thread has not used before is slow to come (the kernel zeroes each page, in a virtual machine
/// more slowly still, and huge pages may first have to be gathered): a thread that encodes little
/// for a tokenizer (a short request, a worker's share of a small batch) should not first pay for
/// the megabytes of tables that a large text needs. [`prepare`](super::prepare) makes a memo at its
/// full size at once.
pub(super) const FIRST_SHARE: usize = 16;
const FIRST_PAIRS: usize = 1024;
const GROWTH: usize = 4;

impl<const W: usize, const I: usize> Table<W, I> {
    pub(super) const UNMADE: Table<W, I> = Table {
        pairs: HugeSlice::empty(),
        size: 0,
        most: 0,
        written: 0,
    };

    /// Make the table, for up to `slots` slots, now: its first pairs written (not only
    /// reserved, as `vec!` of zeros would be), so that their pages are the process's.
    pub(super) fn make(&mut self, slots: usize) {
        if self.size == 0 {
            let most = slots / 2;
            self.start(most, (most / FIRST_SHARE).max(most.min(FIRST_PAIRS)));
        }
    }

    /// [`Self::make`] at the full size (a smaller table made before grows to it).
    pub(super) fn make_full(&mut self, slots: usize) {
        if self.size == 0 {
            self.start(slots / 2, slots / 2);
        } else if self.size < self.most {
            self.grow(self.most);
        }
    }

    /// An empty table of `size` pairs, which may grow to `most`. Where memory is short, the
    /// least table that a memo works with, which does not grow (a memo only saves work), and
    /// where even that cannot be had, none: the table stays unmade (every reader takes an
    /// empty table for a miss) and the next call asks again.
    fn start(&mut self, most: usize, size: usize) {
        let empty = Pair([Slot::EMPTY; 2]);
        let least = size.min(FIRST_PAIRS);
        let (pairs, size, most) = match HugeSlice::try_new(size, empty) {
            Ok(pairs) => (pairs, size, most),
            Err(_) => match HugeSlice::try_new(least, empty) {
                Ok(pairs) => (pairs, least, least),
                Err(_) => return,
            },
        };
        self.pairs = pairs;
        (self.size, self.most, self.written) = (size, most, 0);
    }

    /// Grow the table if it has been written as many times as it has slots, a quarter, since
    /// it was made or last grew, and is smaller than it may be. The pieces it holds are kept:
    /// in a table four times larger a piece seldom finds its new pair full, and is then
    /// dropped (a memo only saves work; a pending one is then not handed to the shared cache,
    /// which computes it again if asked).
    #[inline]
    fn grow_if_full(&mut self) {
        self.written += 1;
        if self.written <= self.size / 2 || self.size >= self.most || self.pairs.is_empty() {
            return;
        }
        self.grow((self.size * GROWTH).min(self.most));
    }

    /// The table at `size` pairs, with the pieces it holds (see [`Self::grow_if_full`]).
    #[inline(never)]
    fn grow(&mut self, size: usize) {
        let Ok(new) = HugeSlice::try_new(size, Pair([Slot::EMPTY; 2])) else {
            // (memory is short: the memo stays this size, and saves less work)
            self.most = self.size;
            return;
        };
        let old = std::mem::replace(&mut self.pairs, new);
        (self.size, self.written) = (size, 0);
        for slot in old.iter().flat_map(|pair| pair.0.iter()) {
            if slot.owner() == 0 {
                continue;
            }
            // the length the pair was chosen by: in the short table without the mark of a
            // slot that says where the piece is (see `SHORT_MARK`)
            let mut len = slot.tag & ((1 << COUNT_SHIFT) - 1);
            if len as usize > 8 * W {
                len &= !SHORT_MARK;
            }
            let pair = &mut self.pairs[pair_among(size, &slot.key, len)].0;
            if let Some(free) = pair.iter_mut().find(|s| s.owner() == 0) {
                *free = *slot;
            }
        }
    }

    pub(super) fn empty(&mut self) {
        self.pairs.fill(Pair([Slot::EMPTY; 2]));
    }

    /// One multiply, not the token table's two: the memo needs no Bloom bits, only a pair.
    #[inline(always)]
    pub(super) fn pair(&self, key: &[u64; W], len: u32) -> usize {
        pair_among(self.pairs.len(), key, len)
    }

    /// Append the ids of the piece `key` (`len` bytes) kept by `owner` to `out`; false if it is
    /// not kept (true and no ids: a slot that says the piece is in the longest table). Both
    /// slots are compared and the ids written without a branch on which slot or how many ids:
    /// those would be guesses the CPU gets wrong on warm text.
    #[inline(always)]
    pub(super) fn get_into(
        &self,
        owner: u32,
        key: &[u64; W],
        len: u32,
        out: &mut Vec<u32>,
    ) -> bool {
        if self.pairs.is_empty() {
            return false;
        }
        self.get_into_at(self.pair(key, len), owner, key, len, out)
    }

    /// [`Self::get_into`] where the piece's pair `i` is known (the table is made).
    #[inline(always)]
    pub(super) fn get_into_at(
        &self,
        i: usize,
        owner: u32,
        key: &[u64; W],
        len: u32,
        out: &mut Vec<u32>,
    ) -> bool {
        let pair = &self.pairs[i].0;
        let tag = (owner << OWNER_SHIFT) | len;
        let holds =
            |slot: &Slot<W, I>| (slot.key == *key) & (slot.tag & !(COUNT_MASK | PENDING) == tag);
        let (in_first, in_second) = (holds(&pair[0]), holds(&pair[1]));
        if !(in_first | in_second) {
            return false;
        }
        // By index: an `if` here was compiled to a branch on which slot holds the piece, which
        // the CPU cannot predict.
        let slot = &pair[usize::from(!in_first)];
        let n = ((slot.tag & COUNT_MASK) >> COUNT_SHIFT) as usize;
        extend_first(out, &slot.ids, n);
        true
    }

    /// Whether a slot says that `owner`'s piece `key` (`len` bytes) is in a longer table (its
    /// tag's length field `len | mark`: see [`SHORT_MARK`]).
    pub(super) fn says_elsewhere(&self, owner: u32, key: &[u64; W], len: u32, mark: u32) -> bool {
        let tag = (owner << OWNER_SHIFT) | len | mark;
        !self.pairs.is_empty()
            && self.pairs[self.pair(key, len)]
                .0
                .iter()
                .any(|slot| slot.key == *key && slot.tag & !PENDING == tag)
    }

    /// Keep the ids of the piece `key` (`len` bytes) for `owner`, if there are few enough
    /// (`pending`: see [`PENDING`]). Returns the piece of `owner`'s it writes over, if that one
    /// was pending.
    #[inline]
    pub(super) fn insert(
        &mut self,
        owner: u32,
        key: &[u64; W],
        len: u32,
        ids: &[u32],
        pending: bool,
    ) -> Option<Evicted> {
        if ids.len() > I || self.pairs.is_empty() {
            return None;
        }
        let mut slot = Slot {
            key: *key,
            tag: (owner << OWNER_SHIFT)
                | ((ids.len() as u32) << COUNT_SHIFT)
                | len
                | if pending { PENDING } else { 0 },
            ids: [0; I],
        };
        slot.ids[..ids.len()].copy_from_slice(ids);
        self.grow_if_full();
        self.put(owner, self.pair(key, len), slot)
    }

    /// Keep a slot that says `owner`'s piece `key` (`len` bytes) is in a longer table (see
    /// [`Self::says_elsewhere`]), unless one says so already (the longer table lost the piece
    /// since): the same piece twice in a pair would take another's slot. Returns the pending
    /// piece it writes over, as [`Self::insert`].
    pub(super) fn say_elsewhere(
        &mut self,
        owner: u32,
        key: &[u64; W],
        len: u32,
        mark: u32,
    ) -> Option<Evicted> {
        if self.pairs.is_empty() || self.says_elsewhere(owner, key, len, mark) {
            return None;
        }
        let slot = Slot {
            key: *key,
            tag: (owner << OWNER_SHIFT) | len | mark,
            ids: [0; I],
        };
        self.grow_if_full();
        self.put(owner, self.pair(key, len), slot)
    }

    /// `slot` into the pair `i`: an empty slot of the pair, else one of another owner's (left
    /// by a tokenizer that held this memo before), else the second. Returns the piece of
    /// `owner`'s it writes over, if that one was pending.
    fn put(&mut self, owner: u32, i: usize, slot: Slot<W, I>) -> Option<Evicted> {
        let pair = &mut self.pairs[i].0;
        let (first, second) = (pair[0].owner(), pair[1].owner());
        let at = usize::from(!(first == 0 || (second != 0 && first != owner)));
        let key = slot.key;
        let old = std::mem::replace(&mut pair[at], slot);
        (old.tag & PENDING != 0 && old.owner() == owner && old.key != key)
            .then(|| Evicted::of(&old))
    }
}

/// A piece the memo let go that the shared cache should keep (see [`PENDING`]): its bytes and
/// ids, copied out of its slot.
pub struct Evicted {
    bytes: [u8; LONGEST_KEY],
    len: usize,
    ids: [u32; LONGEST_IDS],
    count: usize,
}

impl Evicted {
    fn of<const W: usize, const I: usize>(slot: &Slot<W, I>) -> Evicted {
        const { assert!(8 * W <= LONGEST_KEY && I <= LONGEST_IDS) };
        let mut bytes = [0u8; LONGEST_KEY];
        for (k, word) in slot.key.iter().enumerate() {
            bytes[8 * k..8 * k + 8].copy_from_slice(&word.to_le_bytes());
        }
        let mut ids = [0u32; LONGEST_IDS];
        ids[..I].copy_from_slice(&slot.ids);
        Evicted {
            bytes,
            len: (slot.tag & ((1 << COUNT_SHIFT) - 1)) as usize,
            ids,
            count: ((slot.tag & COUNT_MASK) >> COUNT_SHIFT) as usize,
        }
    }

    pub fn piece(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    pub fn ids(&self) -> &[u32] {
        &self.ids[..self.count]
    }
}
