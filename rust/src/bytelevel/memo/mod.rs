//! A per-thread memo of pieces' ids, asked first for every piece of up to [`KEY`] bytes (up to
//! three ids) and, before the shared cache, for every piece of up to [`LONGEST_KEY`] (up to
//! sixteen).
//!
//! Warm text repeats its pieces, and the work per piece is then a handful of loads behind
//! branches that depend on the piece (its length, whether it is a token, which table holds it),
//! which the CPU cannot predict. Asked first for every short piece, tokens or not, the memo
//! makes the warm path one branch that is nearly always taken the same way. The words of most
//! Indic scripts are pieces of 17 to 56 bytes, which the shared cache answers with more work
//! (its lines are shared between threads and read under a sequence check); the memo's longer
//! tables answer them first. It holds what the exact path computed, so it only saves work.
//!
//! A memo has three tables: up to [`SLOTS`] slots of up to [`KEY`] bytes (32 bytes each, two to
//! a cache line: 4 MiB) and, each made on its first piece (or with the memo, by [`prepare`]), up
//! to [`LONG_SLOTS`] of up to [`LONG_KEY`] with up to [`LONG_IDS`] ids (64 bytes each: 2 MiB)
//! and up to [`LONGEST_SLOTS`] of up to [`LONGEST_KEY`] with up to [`LONGEST_IDS`] (128 bytes
//! each: 2 MiB). [`prepare`] makes them at that size; a memo made on a thread's first piece
//! starts each at a sixteenth of it and grows as it is written ([`FIRST_SHARE`]). A piece with more ids
//! than the table of its length holds (a word of a script that o200k_base spells a token per
//! character, Odia's) is kept in the next table that holds them, and the table of its length
//! keeps a slot that says so: the pieces each table holds are found with one look, and those
//! at the cost of a second (a short one's slot is a miss to the scanner's lookup, and the miss
//! path asks where it is, [`Memo::get_elsewhere_into`]).
//!
//! Each thread keeps up to [`MEMOS`] memos, one for each of the tokenizers it used last, made
//! on a tokenizer's first encode on the thread (or by [`prepare`]), so that tokenizers used in
//! turn on one thread (two vocabularies in one pipeline, or two objects of one) do not write
//! over each other's pieces; a thread that turns to a further tokenizer gives it the memo of a
//! tokenizer dropped or cleared ([`release`]), else an unmade one, else the memo used longest
//! ago. A slot also records the tokenizer that wrote it (its owner id), so a memo passed
//! on to another tokenizer needs no emptying, and a tokenizer's `clear_cache` takes a new owner
//! id, which finds none of the old one's slots. A slot keeps the low [`OWNER_BITS`] of a 64-bit
//! owner id; the bits above are an era, and a memo emptied when a new era begins never mistakes
//! one owner for another.
//!
//! The shared cache ([`super::cache`]) holds what the memos do not: a piece that a thread's memo
//! keeps goes there only when the memo lets it go (its slot taken by another piece), handed over
//! by the caller ([`Evicted`]). A cold pass over new text thus writes each new word once, to the
//! memo, not twice; a piece that came from the shared cache is not handed back. A batch on
//! several threads writes to both at once instead, so that its threads find each other's pieces.

use super::table::Packed;
use crate::huge::HugeSlice;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Longest piece kept in the short table.
pub const KEY: usize = 16;
/// Longest piece kept in the long table, and in the longest.
pub const LONG_KEY: usize = 32;
pub const LONGEST_KEY: usize = 56;
/// Words of a longest piece's key.
const LONGEST_WORDS: usize = LONGEST_KEY / 8;
/// In the short table, a mark on a slot's length field that says the piece's ids are in a
/// longer table: a length no short piece has, so that the lookup on the scanner's path takes
/// such a slot for a miss, and the miss path asks ([`Memo::get_elsewhere_into`]). In the long
/// table such a slot is one with no ids.
const SHORT_MARK: u32 = 32;
const _: () = assert!(KEY < SHORT_MARK as usize && SHORT_MARK < 1 << COUNT_SHIFT);
/// Bits of an owner id kept in a slot; the bits above are its era.
const OWNER_BITS: u32 = 20;
const OWNER_MASK: u64 = (1 << OWNER_BITS) - 1;
/// A slot's tag: the piece's length in bits 0-5 (in the short table, with [`SHORT_MARK`] on a
/// slot that says where a piece is), its ids' count in bits 6-10 (0: a slot that says where),
/// the owner in bits 11-30, and [`PENDING`].
const COUNT_SHIFT: u32 = 6;
const COUNT_MASK: u32 = 0b1_1111 << COUNT_SHIFT;
const OWNER_SHIFT: u32 = 11;
/// The tag's bit for a piece that goes to the shared cache when the memo lets it go.
const PENDING: u32 = 1 << 31;
const _: () = assert!(OWNER_SHIFT + OWNER_BITS == 31);
/// Most ids of a piece in the short table, the long one and the longest.
pub const IDS: usize = 3;
pub const LONG_IDS: usize = 7;
pub const LONGEST_IDS: usize = 16;
const _: () =
    assert!(LONGEST_KEY < 1 << COUNT_SHIFT && LONGEST_IDS < 1 << (OWNER_SHIFT - COUNT_SHIFT));
/// Slots of each table: pieces of up to [`KEY`] bytes with up to three ids, 32-byte slots,
/// two to a cache line; up to [`LONG_KEY`] with up to seven ids, 64-byte slots; up to
/// [`LONGEST_KEY`] (and those of the long table's length with more than seven ids), 128-byte
/// slots, a key and its tag in the slot's first cache line. The short table is 4 MiB: a couple
/// of megabytes of English news hold so many distinct short pieces that in a table of half
/// this size those that fell three to a pair missed on every warm pass; the long tables are 2
/// MiB each, since in tables of half that size words of an Odia page went to collisions in
/// their pairs, asked again of the shared cache on every pass (the long table also holds the
/// slots that say a piece is elsewhere).
pub const SLOTS: usize = 1 << 17;
const LONG_SLOTS: usize = 1 << 15;
const LONGEST_SLOTS: usize = 1 << 14;
/// Memos a thread keeps: one per tokenizer among those it used last.
pub const MEMOS: usize = 4;

/// A piece and its ids: the piece as `W` little-endian words, zero past its end.
#[derive(Clone, Copy)]
#[repr(C)]
struct Slot<const W: usize, const I: usize> {
    key: [u64; W],
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
struct Pair<const W: usize, const I: usize>([Slot<W, I>; 2]);

const _: () = assert!(std::mem::size_of::<Pair<2, 3>>() == 64);
const _: () = assert!(std::mem::size_of::<Pair<4, 7>>() == 128);
const _: () = assert!(std::mem::size_of::<Pair<LONGEST_WORDS, LONGEST_IDS>>() == 256);

impl<const W: usize, const I: usize> Slot<W, I> {
    const EMPTY: Slot<W, I> = Slot {
        key: [0; W],
        tag: 0,
        ids: [0; I],
    };

    fn owner(&self) -> u32 {
        (self.tag >> OWNER_SHIFT) & OWNER_MASK as u32
    }
}

/// The pair of `pairs` (a power of two) that keeps the piece `key` of `len` bytes: the top bits
/// of one product, which every bit of the key reaches.
#[inline(always)]
fn pair_among<const W: usize>(pairs: usize, key: &[u64; W], len: u32) -> usize {
    let mut h = u64::from(len).rotate_left(53);
    for (k, word) in key.iter().enumerate() {
        h ^= word.rotate_left(29 * k as u32);
    }
    let bits = pairs.trailing_zeros();
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// One table of a memo: pieces packed in `W` words, with up to `I` ids.
struct Table<const W: usize, const I: usize> {
    /// On huge pages once it is megabytes: asked at random.
    pairs: HugeSlice<Pair<W, I>>,
    /// Its pairs (0: not made): kept while the short table rests, when `pairs` is set aside.
    size: usize,
    /// The pairs it may grow to.
    most: usize,
    /// Pieces written since it was made or last grew.
    written: usize,
}

/// A table is made at a sixteenth of its full size (no fewer than [`FIRST_PAIRS`] pairs, or all
/// of a smaller table) and grows fourfold, up to that size, each time it has been written as
/// many times as it has slots, a quarter (about where pieces start to fall three to a pair).
/// Memory a thread has not used before is slow to come (the kernel zeroes each page, in a
/// virtual machine more slowly still, and huge pages may first have to be gathered): a thread
/// that encodes little for a tokenizer (a short request, a worker's share of a small batch)
/// should not first pay for the megabytes of tables that a large text needs. [`prepare`]
/// makes a memo at its full size at once.
const FIRST_SHARE: usize = 16;
const FIRST_PAIRS: usize = 1024;
const GROWTH: usize = 4;

impl<const W: usize, const I: usize> Table<W, I> {
    const UNMADE: Table<W, I> = Table {
        pairs: HugeSlice::empty(),
        size: 0,
        most: 0,
        written: 0,
    };

    /// Make the table, for up to `slots` slots, now: its first pairs written (not only
    /// reserved, as `vec!` of zeros would be), so that their pages are the process's.
    fn make(&mut self, slots: usize) {
        if self.size == 0 {
            let most = slots / 2;
            self.start(most, (most / FIRST_SHARE).max(most.min(FIRST_PAIRS)));
        }
    }

    /// [`Self::make`] at the full size (a smaller table made before grows to it).
    fn make_full(&mut self, slots: usize) {
        if self.size == 0 {
            self.start(slots / 2, slots / 2);
        } else if self.size < self.most {
            self.grow(self.most);
        }
    }

    /// An empty table of `size` pairs, which may grow to `most`. Where memory is short, the
    /// least table that a memo works with, which does not grow (a memo only saves work).
    fn start(&mut self, most: usize, size: usize) {
        let empty = Pair([Slot::EMPTY; 2]);
        let (size, most) = match HugeSlice::try_new(size, empty) {
            Ok(pairs) => {
                self.pairs = pairs;
                (size, most)
            }
            Err(_) => {
                let least = size.min(FIRST_PAIRS);
                self.pairs = HugeSlice::new(least, empty);
                (least, least)
            }
        };
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

    fn empty(&mut self) {
        self.pairs.fill(Pair([Slot::EMPTY; 2]));
    }

    /// One multiply, not the token table's two: the memo needs no Bloom bits, only a pair.
    #[inline(always)]
    fn pair(&self, key: &[u64; W], len: u32) -> usize {
        pair_among(self.pairs.len(), key, len)
    }

    /// Append the ids of the piece `key` (`len` bytes) kept by `owner` to `out`; false if it is
    /// not kept (true and no ids: a slot that says the piece is in the longest table). Both
    /// slots are compared and the ids written without a branch on which slot or how many ids:
    /// those would be guesses the CPU gets wrong on warm text.
    #[inline(always)]
    fn get_into(&self, owner: u32, key: &[u64; W], len: u32, out: &mut Vec<u32>) -> bool {
        if self.pairs.is_empty() {
            return false;
        }
        self.get_into_at(self.pair(key, len), owner, key, len, out)
    }

    /// [`Self::get_into`] where the piece's pair `i` is known (the table is made).
    #[inline(always)]
    fn get_into_at(
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
    fn says_elsewhere(&self, owner: u32, key: &[u64; W], len: u32, mark: u32) -> bool {
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
    fn insert(
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
    fn say_elsewhere(
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

pub struct Memo {
    /// The owner of the call under way (the low [`OWNER_BITS`] of its id).
    owner: u32,
    /// The era of the owners whose slots it holds (the bits of their ids above those).
    era: u64,
    short: Table<2, IDS>,
    /// Made on its first piece of more than [`KEY`] bytes or [`IDS`] ids (text of Latin scripts
    /// seldom needs it), or by [`prepare`] with the memo.
    long: Table<4, LONG_IDS>,
    /// Made on its first piece of more than [`LONG_KEY`] bytes or [`LONG_IDS`] ids, or by
    /// [`prepare`].
    longest: Table<LONGEST_WORDS, LONGEST_IDS>,
    /// The short table's slots while it rests; empty otherwise.
    resting: HugeSlice<Pair<2, IDS>>,
    /// When it rests, in the text under way.
    rest: Rest,
    /// Pieces still to have their token-table lines fetched ahead (see [`Self::heats`]).
    heat: u32,
}

static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

/// A new owner id (a tokenizer's, or its own after `clear_cache`); never 0 in its low
/// [`OWNER_BITS`].
pub fn new_owner() -> u64 {
    loop {
        let id = NEXT_OWNER.fetch_add(1, Ordering::Relaxed);
        if id & OWNER_MASK != 0 {
            return id;
        }
    }
}

/// A thread's memos, and when each was last claimed.
struct Memos {
    memos: [Memo; MEMOS],
    used: [u64; MEMOS],
    clock: u64,
}

impl Memos {
    /// The memo for `owner`: the one it used last, else one handed back or of an owner released
    /// on another thread ([`release`]), else an unmade one, else the one claimed longest ago.
    fn claim(&mut self, owner: u64) -> &mut Memo {
        let made = |m: &Memo| m.short.size != 0;
        let i = match self.memos.iter().position(|m| made(m) && m.holds(owner)) {
            Some(i) => i,
            None => (0..MEMOS)
                .min_by_key(|&i| {
                    let m = &self.memos[i];
                    let free = m.owner == 0 || gone(m.whole_owner());
                    let rank = match (made(m), free) {
                        (true, true) => 0,
                        (false, _) => 1,
                        (true, false) => 2,
                    };
                    (rank, self.used[i])
                })
                .unwrap_or(0),
        };
        self.clock += 1;
        self.used[i] = self.clock;
        let memo = &mut self.memos[i];
        memo.claim(owner);
        memo
    }
}

const UNMADE: Memo = Memo {
    owner: 0,
    era: 0,
    short: Table::UNMADE,
    long: Table::UNMADE,
    longest: Table::UNMADE,
    resting: HugeSlice::empty(),
    rest: Rest {
        misses: 0,
        since: 0,
        until: 0,
    },
    heat: 0,
};

thread_local! {
    static MEMOS_OF_THREAD: RefCell<Memos> = const {
        RefCell::new(Memos { memos: [UNMADE; MEMOS], used: [0; MEMOS], clock: 0 })
    };
}

/// Run `f` with this thread's memo for `owner`; `None` when `enabled` is false (a tokenizer
/// without a cache) or the thread's memos are in use already (a call inside a call).
pub fn with<R>(owner: u64, enabled: bool, f: impl FnOnce(Option<&mut Memo>) -> R) -> R {
    if !enabled {
        return f(None);
    }
    MEMOS_OF_THREAD.with(|m| match m.try_borrow_mut() {
        Ok(mut memos) => f(Some(memos.claim(owner))),
        Err(_) => f(None),
    })
}

/// Hand back every memo of `owner`, whose pieces nobody will ask for again (a tokenizer's
/// `clear_cache` takes a new owner id, a tokenizer dropped has none): the next owner without a
/// memo on a thread takes one of them, made, before making another (memory a process has not
/// touched yet can be slow to come, in a virtual machine most of all). This thread's are
/// handed back at once; other threads find `owner` among the [`GONE`] owners when they next
/// look for a memo to take.
pub fn release(owner: u64) {
    let slot = GONE_NEXT.fetch_add(1, Ordering::Relaxed) % GONE.len();
    GONE[slot].store(owner, Ordering::Relaxed);
    // (`try_with`: a tokenizer may be dropped while this thread's locals are being destroyed)
    let _ = MEMOS_OF_THREAD.try_with(|m| {
        if let Ok(mut memos) = m.try_borrow_mut() {
            for memo in memos.memos.iter_mut() {
                if memo.holds(owner) {
                    memo.owner = 0;
                }
            }
        }
    });
}

/// The owners released last, any thread's: a memo of one of them is as good as handed back. A
/// ring of atomics, so that no lock is held across a `fork` (a child copies it as it is, and
/// what it says stays true there); an owner pushed out of it is found in time, as the memo used
/// longest ago.
static GONE: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];
static GONE_NEXT: AtomicUsize = AtomicUsize::new(0);

/// Whether `owner` (a whole id, era bits included) was released.
fn gone(owner: u64) -> bool {
    owner != 0 && GONE.iter().any(|g| g.load(Ordering::Relaxed) == owner)
}

/// Memos made on this thread.
#[cfg(test)]
pub fn made_on_thread() -> usize {
    MEMOS_OF_THREAD.with(|m| {
        m.borrow()
            .memos
            .iter()
            .filter(|memo| memo.short.size != 0)
            .count()
    })
}

/// Make this thread's memo for `owner` now, every table at its full size (their memory
/// written, so that their pages are the process's), so that its first encode does not: a
/// table made or grown during a call makes that call slower than a later one. A tokenizer's
/// constructing thread does this (it is usually the one that encodes); other threads make
/// small tables on their first piece and grow them as they write them.
pub fn prepare(owner: u64, enabled: bool) {
    if !enabled {
        return;
    }
    MEMOS_OF_THREAD.with(|m| {
        if let Ok(mut memos) = m.try_borrow_mut() {
            let memo = memos.claim(owner);
            memo.short.make_full(SLOTS);
            memo.long.make_full(LONG_SLOTS);
            memo.longest.make_full(LONGEST_SLOTS);
        }
    });
}

/// Misses of the short table per look at how close together they come.
const WINDOW: u32 = 256;
/// A window's misses within this many bytes each on average: nearly every short piece is new.
const DENSE: usize = 8;
/// Bytes of text for which the short table is then left alone, before it is tried again.
const REST: usize = 64 << 10;

/// When to leave the memo's short table alone during one text. On text whose short pieces keep
/// being new (random Latin-1: a piece every few bytes, more distinct ones than the table has
/// slots), each piece pays a slot's cache miss to ask and a write to keep, and what it kept is
/// pushed out before it is asked for again. Misses are counted by where in the text they fall:
/// prose repeats its short pieces, and its misses come tens of bytes apart. While it rests the
/// table is set aside ([`Memo::missed`]), so the pieces it would answer take no other path
/// than before. Never changes a result, only what a piece costs.
#[derive(Default)]
struct Rest {
    misses: u32,
    since: usize,
    until: usize,
}

impl Rest {
    /// Whether the short table is left alone for the piece at byte `at` of the text.
    #[inline(always)]
    fn resting(&self, at: usize) -> bool {
        at < self.until
    }

    /// The short table missed the piece at byte `at` (not while resting); true if a rest
    /// starts.
    #[inline]
    fn missed(&mut self, at: usize) -> bool {
        self.misses += 1;
        if self.misses < WINDOW {
            return false;
        }
        self.misses = 0;
        let dense = at.saturating_sub(self.since) < WINDOW as usize * DENSE;
        if dense {
            self.until = at.saturating_add(REST);
            self.since = self.until;
        } else {
            self.since = at;
        }
        dense
    }
}

/// Append the first `n` (at most `N`) of `ids` to `out`. All `N` are copied and the rest cut
/// off again: a copy of a length fixed at compile time is a few stores, where `extend_from_slice`
/// of a length known only at run time calls `memcpy`, a call per piece on text of new pieces.
#[inline(always)]
pub(super) fn extend_first<const N: usize>(out: &mut Vec<u32>, ids: &[u32; N], n: usize) {
    debug_assert!(n <= N);
    let len = out.len();
    out.extend_from_slice(ids);
    out.truncate(len + n);
}

/// `piece` packed, read as the 16 bytes at `at` in `text` (where the piece starts) and masked,
/// without a branch on its length where 16 bytes are left; [`Packed::new`] near the end.
#[inline(always)]
pub fn pack(text: &[u8], at: usize, piece: &[u8]) -> Packed {
    // (`at` is any number for a piece outside `text`: `get` then finds no window.)
    let window = text.get(at..).and_then(|rest| rest.get(..KEY));
    match window {
        Some(window) if (1..=KEY).contains(&piece.len()) => {
            let mut word = [0u8; KEY];
            word.copy_from_slice(window);
            Packed::from_window(word, piece.len())
        }
        _ => Packed::new(piece),
    }
}

/// A piece of up to [`LONGEST_KEY`] bytes as little-endian words, zero past its end (the first
/// four of them the long table's key): one longer than [`KEY`], or a short one whose ids a
/// longer table keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongKey {
    words: [u64; LONGEST_WORDS],
    len: u32,
}

impl LongKey {
    /// A short piece's key in the longer tables.
    #[inline(always)]
    pub fn of_short(p: Packed) -> LongKey {
        let mut words = [0u64; LONGEST_WORDS];
        words[..2].copy_from_slice(&short_key(p));
        LongKey { words, len: p.len }
    }

    /// The long table's key: the piece's first four words.
    #[inline(always)]
    fn long(&self) -> &[u64; 4] {
        self.words.first_chunk().unwrap()
    }
}

/// `piece` (at `at` in `text`, as for [`pack`]) as a [`LongKey`], or None when it is too long
/// or short for the long tables.
#[inline(always)]
pub fn pack_long(text: &[u8], at: usize, piece: &[u8]) -> Option<LongKey> {
    let len = piece.len();
    let words = if KEY < len && len <= LONG_KEY {
        // The long table's pieces (most words of most Indic scripts) read only what they need.
        let four: [u64; 4] = words_of(text, at, piece);
        let mut words = [0u64; LONGEST_WORDS];
        words[..4].copy_from_slice(&four);
        words
    } else if LONG_KEY < len && len <= LONGEST_KEY {
        words_of(text, at, piece)
    } else {
        return None;
    };
    Some(LongKey {
        words,
        len: len as u32,
    })
}

/// `piece` (at `at` in `text`) as `N` words, read as the `8 * N` bytes at `at` where there are
/// as many, and masked past its end.
#[inline(always)]
fn words_of<const N: usize>(text: &[u8], at: usize, piece: &[u8]) -> [u64; N] {
    let len = piece.len();
    let mut words = [0u64; N];
    let window = text.get(at..).and_then(|rest| rest.get(..8 * N));
    for (k, word) in words.iter_mut().enumerate() {
        let w = match window {
            Some(window) => u64::from_le_bytes(window[8 * k..8 * k + 8].try_into().unwrap()),
            None => super::table::load_le(piece.get(8 * k..).map_or(&[], |b| &b[..b.len().min(8)])),
        };
        // bits of this word inside the piece: 64, 64, then what is left
        let bits = (8 * len).saturating_sub(64 * k).min(64);
        *word = if bits == 64 {
            w
        } else {
            w & ((1u64 << bits) - 1)
        };
    }
    words
}

/// A request that the CPU fetch the `lines` cache lines from `at` (a hint: it never faults and
/// changes no result).
#[inline(always)]
pub(super) fn fetch<T>(at: &T, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    for line in 0..lines {
        // SAFETY: `_mm_prefetch` only hints; the address is never dereferenced.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch(
                (at as *const T).cast::<i8>().wrapping_add(64 * line),
                _MM_HINT_T0,
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (at, lines);
}

/// A short piece's key in the short table's two words.
#[inline(always)]
fn short_key(p: Packed) -> [u64; 2] {
    [p.key as u64, (p.key >> 64) as u64]
}

/// Pieces found after a miss of the short table whose token-table lines are fetched ahead.
const HEAT_PER_MISS: u32 = 4;
/// At most this many pieces ahead of the last miss.
const MAX_HEAT: u32 = 64;

impl Memo {
    /// Whether the piece the scanner has just found should have its token-table lines fetched
    /// ahead too: only while the short table has been missing (a cold pass over new text),
    /// where the lookup behind a miss would otherwise wait on memory; on text the memo
    /// answers, those lines would only take the places of lines it needs.
    #[inline(always)]
    pub fn heats(&mut self) -> bool {
        if self.heat == 0 {
            return false;
        }
        self.heat -= 1;
        true
    }

    /// The short table has missed a piece.
    #[inline(always)]
    pub fn heat_up(&mut self) {
        self.heat = (self.heat + HEAT_PER_MISS).min(MAX_HEAT);
    }

    /// Whether its slots are `owner`'s (a whole id, era bits included).
    fn holds(&self, owner: u64) -> bool {
        self.owner == (owner & OWNER_MASK) as u32 && self.era == owner >> OWNER_BITS
    }

    /// The whole id of its owner (0: none).
    fn whole_owner(&self) -> u64 {
        if self.owner == 0 {
            0
        } else {
            (self.era << OWNER_BITS) | u64::from(self.owner)
        }
    }

    fn claim(&mut self, owner: u64) {
        self.short.make(SLOTS);
        let era = owner >> OWNER_BITS;
        if era != self.era {
            self.short.empty();
            self.long.empty();
            self.longest.empty();
            self.era = era;
        }
        self.owner = (owner & OWNER_MASK) as u32;
    }

    /// The pair of the short table that would keep `p` (its size is kept while the table rests,
    /// so the answer holds then too; if the table grows before the piece is looked up, the
    /// lookup misses and the miss path keeps the piece again), and a request that the CPU fetch
    /// its cache line now, so that [`Self::get_into_at`] a few pieces later finds it there.
    #[inline(always)]
    pub fn fetch_short(&self, p: Packed) -> usize {
        let key = short_key(p);
        let i = pair_among(self.short.size, &key, p.len);
        if let Some(pair) = self.short.pairs.get(i) {
            fetch(pair, 1);
        }
        i
    }

    /// A request that the CPU fetch the lines of the long table's pair where the short piece
    /// `p` would be kept, had it more ids than the short table's slots hold.
    #[inline(always)]
    pub fn fetch_elsewhere(&self, p: Packed) {
        if !self.long.pairs.is_empty() {
            let key = LongKey::of_short(p);
            fetch(&self.long.pairs[self.long.pair(key.long(), p.len)], 2);
        }
    }

    /// A request that the CPU fetch the cache lines where the longer tables would keep the
    /// piece at `at` in `text` (longer than [`KEY`]), so that [`Self::get_long_into`] a few
    /// pieces later finds them there: its pair in the long table, for a piece of that table's
    /// length, and its pair in the longest table (where a piece of the long table's length
    /// with more ids than those slots hold is kept: which pieces those are is known only once
    /// the long table has been read). Not inlined: in the scanner's loop it would take
    /// registers from the pieces of every length.
    #[inline(never)]
    pub fn fetch_long(&self, text: &[u8], at: usize, piece: &[u8]) {
        let len = piece.len();
        let words: [u64; LONGEST_WORDS] = if len <= LONG_KEY {
            if self.long.pairs.is_empty() {
                return;
            }
            let four: [u64; 4] = words_of(text, at, piece);
            fetch(&self.long.pairs[self.long.pair(&four, len as u32)], 2);
            let mut words = [0u64; LONGEST_WORDS];
            words[..4].copy_from_slice(&four);
            words
        } else if len <= LONGEST_KEY {
            words_of(text, at, piece)
        } else {
            return;
        };
        if !self.longest.pairs.is_empty() {
            fetch(
                &self.longest.pairs[self.longest.pair(&words, len as u32)],
                4,
            );
        }
    }

    /// [`Self::get_into`] for the pair `i` that [`Self::fetch_short`] gave for `p`.
    #[inline(always)]
    pub fn get_into_at(&self, i: usize, p: Packed, out: &mut Vec<u32>) -> bool {
        if self.short.pairs.is_empty() {
            return false;
        }
        let key = short_key(p);
        self.short.get_into_at(i, self.owner, &key, p.len, out)
    }

    /// Append the ids of `p` to `out`; false if it is not kept.
    #[cfg(test)]
    pub fn get_into(&self, p: Packed, out: &mut Vec<u32>) -> bool {
        let key = short_key(p);
        self.short.get_into(self.owner, &key, p.len, out)
    }

    /// Keep the ids of `p` (if there are few enough; `pending`: see [`PENDING`]); the pending
    /// piece it writes over, for the shared cache.
    #[inline]
    pub fn insert(&mut self, p: Packed, ids: &[u32], pending: bool) -> Option<Evicted> {
        let key = short_key(p);
        self.short.insert(self.owner, &key, p.len, ids, pending)
    }

    /// Whether the short table keeps a piece at byte `at` of the text (not while it rests).
    #[inline]
    pub fn keeps_short(&self, at: usize) -> bool {
        !self.rest.resting(at)
    }

    /// A text starts: its pieces' places count from 0.
    #[inline]
    pub fn begin_text(&mut self) {
        self.wake_short();
        self.rest = Rest::default();
    }

    /// The short table did not hold `p`, at byte `at` of the text, whose ids are `ids`: keep
    /// them (`pending`: see [`PENDING`]), unless the table rests; set it aside when a rest
    /// starts (see [`Rest`]). While it rests it holds no piece, so every short piece comes
    /// here, where the rest ends in time. Returns the pending piece it wrote over.
    #[inline]
    pub fn missed(&mut self, at: usize, p: Packed, ids: &[u32], pending: bool) -> Option<Evicted> {
        if self.rest.resting(at) {
            return None;
        }
        self.wake_short();
        let evicted = self.insert(p, ids, pending);
        if self.rest.missed(at) {
            self.resting = std::mem::take(&mut self.short.pairs);
        }
        evicted
    }

    /// Append the ids of the short piece `p` to `out` from a longer table, where a slot of the
    /// short table says they are (a piece with more ids than its slots hold); false if not.
    #[inline]
    pub fn get_elsewhere_into(&self, p: Packed, out: &mut Vec<u32>) -> bool {
        let key = short_key(p);
        self.short
            .says_elsewhere(self.owner, &key, p.len, SHORT_MARK)
            && self.get_long_into(&LongKey::of_short(p), out)
    }

    /// [`Self::missed`] for a short piece with more ids than the short table's slots hold: kept
    /// in a longer table, and a slot of the short table says so. Returns the pending pieces
    /// it wrote over.
    #[inline(never)]
    pub fn missed_many(
        &mut self,
        at: usize,
        p: Packed,
        ids: &[u32],
        pending: bool,
    ) -> [Option<Evicted>; 3] {
        if self.rest.resting(at) || ids.len() > LONGEST_IDS {
            return [None, None, None];
        }
        self.wake_short();
        let [gone, said] = self.insert_long(&LongKey::of_short(p), ids, pending);
        let short = self
            .short
            .say_elsewhere(self.owner, &short_key(p), p.len, SHORT_MARK);
        if self.rest.missed(at) {
            self.resting = std::mem::take(&mut self.short.pairs);
        }
        [gone, said, short]
    }

    /// The short table back from a rest (nothing if it is not resting).
    #[inline]
    pub fn wake_short(&mut self) {
        if !self.resting.is_empty() {
            self.short.pairs = std::mem::take(&mut self.resting);
        }
    }

    /// Append the ids of the long piece `p` to `out`; false if it is not kept.
    #[inline(always)]
    pub fn get_long_into(&self, p: &LongKey, out: &mut Vec<u32>) -> bool {
        if p.len as usize <= LONG_KEY {
            let before = out.len();
            if !self.long.get_into(self.owner, p.long(), p.len, out) {
                return false;
            }
            if out.len() > before {
                return true;
            }
            // a slot that says where the piece is
        }
        self.longest.get_into(self.owner, &p.words, p.len, out)
    }

    /// Keep the ids of the long piece `p` (if there are few enough; `pending`: see
    /// [`PENDING`]); each table is made on its first piece. A piece of the long table's
    /// length with more ids than its slots hold goes to the longest table, and the long one
    /// keeps a slot that says so. Returns the pending pieces it wrote over.
    #[inline]
    pub fn insert_long(&mut self, p: &LongKey, ids: &[u32], pending: bool) -> [Option<Evicted>; 2] {
        let in_long = p.len as usize <= LONG_KEY;
        if in_long && ids.len() <= LONG_IDS {
            self.long.make(LONG_SLOTS);
            let gone = self.long.insert(self.owner, p.long(), p.len, ids, pending);
            return [gone, None];
        }
        self.longest.make(LONGEST_SLOTS);
        let gone = self
            .longest
            .insert(self.owner, &p.words, p.len, ids, pending);
        // The long table says where.
        let elsewhere = if in_long && ids.len() <= LONGEST_IDS {
            self.long.make(LONG_SLOTS);
            self.long.say_elsewhere(self.owner, p.long(), p.len, 0)
        } else {
            None
        };
        [gone, elsewhere]
    }
}

#[cfg(test)]
mod tests;
