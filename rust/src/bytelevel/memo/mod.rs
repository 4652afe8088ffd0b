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
//! A memo has three tables: up to [`SLOTS`] slots of up to [`KEY`] bytes (32 bytes each, two to a
//! cache line: 4 MiB) and, each made on its first piece (or with the memo, by [`prepare`]), up to
//! [`LONG_SLOTS`] of up to [`LONG_KEY`] with up to [`LONG_IDS`] ids (64 bytes each: 2 MiB) and up
//! to [`LONGEST_SLOTS`] of up to [`LONGEST_KEY`] with up to [`LONGEST_IDS`] (128 bytes each: 2
//! MiB). [`prepare`] makes them at that size; a memo made on a thread's first piece starts each at
//! a sixteenth of it and grows as it is written ([`slots::FIRST_SHARE`]). A piece with more ids
//! than the table of its length holds (a word of a script that o200k_base spells a token per
//! character, Odia's) is kept in the next table that holds them, and the table of its length keeps
//! a slot that says so: the pieces each table holds are found with one look, and those at the cost
//! of a second (a short one's slot is a miss to the scanner's lookup, and the miss path asks where
//! it is, [`Memo::get_elsewhere_into`]).
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
//!
//! The tables and their slots live in `slots`, the keys pieces are packed into in `keys`, each
//! thread's memos and their owners in `owners`, and the short table's rests in `rest`; this
//! module holds [`Memo`] itself, the tables' sizes and the layout of a slot's tag.

mod keys;
mod owners;
mod rest;
mod slots;
#[cfg(test)]
mod tests;

pub use keys::{pack, pack_long, LongKey};
#[cfg(test)]
pub use owners::made_on_thread;
pub use owners::{new_owner, prepare, release, with};
pub use slots::Evicted;

use super::table::Packed;
use crate::huge::HugeSlice;
use keys::{short_key, words_of};
use rest::Rest;
use slots::{pair_among, Pair, Table};

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
/// slots, a key and its tag in the slot's first cache line. The short table is 4 MiB: news
/// text holds so many distinct short pieces that in a table of half this size those that fell
/// three to a pair miss on every warm pass; the long tables are 2 MiB each, since in tables of
/// half that size the words of a page of an Indic script collide in their pairs and are asked
/// again of the shared cache on every pass (the long table also holds the slots that say a
/// piece is elsewhere; docs/benchmarks.md has the measurements).
pub const SLOTS: usize = 1 << 17;
const LONG_SLOTS: usize = 1 << 15;
const LONGEST_SLOTS: usize = 1 << 14;
/// Memos a thread keeps: one per tokenizer among those it used last.
pub const MEMOS: usize = 4;

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
