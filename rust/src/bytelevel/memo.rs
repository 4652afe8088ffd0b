//! A per-thread memo of short pieces' ids (up to three), asked first for every piece of up to
//! [`KEY`] bytes.
//!
//! Warm text repeats its pieces, and the work per piece is then a handful of loads behind
//! branches that depend on the piece (its length, whether it is a token, which table holds it),
//! which the CPU cannot predict. Asked first for every short piece, tokens or not, the memo
//! makes the warm path one branch that is nearly always taken the same way. It holds what the
//! exact path computed, so it only saves work.
//!
//! A memo has [`SLOTS`] slots (32 bytes each, two to a cache line: 1 MiB). Each thread keeps up
//! to [`MEMOS`] of them, one for each of the tokenizers it used last, made on a tokenizer's
//! first encode on the thread (or by [`prepare`]), so that tokenizers used in turn on one
//! thread (two vocabularies in one pipeline, or two objects of one) do not write over each
//! other's pieces; a thread that turns to a further tokenizer gives it the memo used longest
//! ago. A slot also records the tokenizer that wrote it (its owner id), so a memo passed on to
//! another tokenizer needs no emptying, and a tokenizer's `clear_cache` takes a new owner id,
//! which finds none of the old one's slots. A slot keeps the low [`OWNER_BITS`] of a 64-bit
//! owner id; the bits above are an era, and a memo emptied when a new era begins never mistakes
//! one owner for another.

use super::table::Packed;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Longest piece kept.
pub const KEY: usize = 16;
/// Most ids a piece kept may have.
const IDS: usize = 3;
/// Bits of an owner id kept in a slot; the bits above are its era.
const OWNER_BITS: u32 = 24;
const OWNER_MASK: u64 = (1 << OWNER_BITS) - 1;
/// A slot's tag: the piece's length in bits 0-4, its ids' count in bits 5-6, the owner above.
const COUNT_SHIFT: u32 = 5;
const COUNT_MASK: u32 = 0b11 << COUNT_SHIFT;
const OWNER_SHIFT: u32 = 8;
const SLOTS: usize = 1 << 15;
/// Memos a thread keeps (each of [`SLOTS`] slots): one per tokenizer among those it used last.
pub const MEMOS: usize = 4;

#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    key: [u64; 2],
    /// The piece's length, its ids' count and the tokenizer that wrote it (0: none), as
    /// [`COUNT_SHIFT`] and [`OWNER_SHIFT`] say: one word, so that one comparison asks both
    /// whose slot it is and which piece.
    tag: u32,
    ids: [u32; IDS],
}

// Two slots to a cache line.
const _: () = assert!(std::mem::size_of::<Slot>() == 32);

impl Slot {
    fn owner(&self) -> u32 {
        self.tag >> OWNER_SHIFT
    }
}

pub struct Memo {
    /// The owner of the call under way (the low [`OWNER_BITS`] of its id).
    owner: u32,
    /// The era of the owners whose slots it holds (the bits of their ids above those).
    era: u64,
    slots: Vec<Slot>,
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
    /// The memo for `owner`: the one it used last, else an unmade one, else the one claimed
    /// longest ago.
    fn claim(&mut self, owner: u64) -> &mut Memo {
        let held = |m: &Memo| {
            !m.slots.is_empty()
                && m.owner == (owner & OWNER_MASK) as u32
                && m.era == owner >> OWNER_BITS
        };
        let i = match self.memos.iter().position(held) {
            Some(i) => i,
            None => (0..MEMOS)
                .min_by_key(|&i| (!self.memos[i].slots.is_empty(), self.used[i]))
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
    slots: Vec::new(),
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

/// Make this thread's memo for `owner` now (its memory written, so that its pages are the
/// process's), so that its first encode does not.
pub fn prepare(owner: u64, enabled: bool) {
    if !enabled {
        return;
    }
    MEMOS_OF_THREAD.with(|m| {
        if let Ok(mut memos) = m.try_borrow_mut() {
            memos.claim(owner);
        }
    });
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
            let len = piece.len() as u32;
            Packed {
                key: u128::from_le_bytes(word) & (u128::MAX >> (128 - 8 * len)),
                len,
            }
        }
        _ => Packed::new(piece),
    }
}

/// One multiply, not the token table's two: the memo needs no Bloom bits, only a line.
#[inline(always)]
fn hash(p: Packed) -> u64 {
    let lo = p.key as u64;
    let hi = (p.key >> 64) as u64;
    (lo ^ hi.rotate_left(29) ^ u64::from(p.len).rotate_left(53)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Memo {
    fn make(&mut self) {
        if self.slots.is_empty() {
            // Written by `resize`, not only reserved (as `vec!` of zeros would be).
            let mut slots = Vec::with_capacity(SLOTS);
            slots.resize(SLOTS, Slot::default());
            self.slots = slots;
        }
    }

    fn claim(&mut self, owner: u64) {
        self.make();
        let era = owner >> OWNER_BITS;
        if era != self.era {
            self.slots.fill(Slot::default());
            self.era = era;
        }
        self.owner = (owner & OWNER_MASK) as u32;
    }

    #[inline(always)]
    fn pair(&self, h: u64) -> usize {
        ((h >> 48) as usize) & (SLOTS - 2)
    }

    /// Append the ids of `p` to `out`; false if it is not kept. Both slots are compared and the
    /// ids written without a branch on which slot or how many ids: those would be guesses the
    /// CPU gets wrong on warm text.
    #[inline(always)]
    pub fn get_into(&self, p: Packed, out: &mut Vec<u32>) -> bool {
        let i = self.pair(hash(p));
        let key = [p.key as u64, (p.key >> 64) as u64];
        let (first, second) = (&self.slots[i], &self.slots[i + 1]);
        let tag = (self.owner << OWNER_SHIFT) | p.len;
        let holds = |slot: &Slot| (slot.key == key) & (slot.tag & !COUNT_MASK == tag);
        let (in_first, in_second) = (holds(first), holds(second));
        if !(in_first | in_second) {
            return false;
        }
        let slot = if in_first { first } else { second };
        let n = ((slot.tag & COUNT_MASK) >> COUNT_SHIFT) as usize;
        out.reserve(IDS);
        let len = out.len();
        // SAFETY: `reserve` made room for IDS more ids after `len`; all IDS are written, and
        // only the piece's n <= IDS of them become part of the vector.
        unsafe {
            std::ptr::copy_nonoverlapping(slot.ids.as_ptr(), out.as_mut_ptr().add(len), IDS);
            out.set_len(len + n);
        }
        true
    }

    /// Keep the ids of `p` (if there are few enough).
    #[inline]
    pub fn insert(&mut self, p: Packed, ids: &[u32]) {
        if ids.is_empty() || ids.len() > IDS {
            return;
        }
        let i = self.pair(hash(p));
        // An empty slot of the pair, else one of another owner's (left by a tokenizer that held
        // this memo before), else the second.
        let (first, second) = (self.slots[i].owner(), self.slots[i + 1].owner());
        let at = if first == 0 || (second != 0 && first != self.owner) {
            i
        } else {
            i + 1
        };
        let mut slot = Slot {
            key: [p.key as u64, (p.key >> 64) as u64],
            tag: (self.owner << OWNER_SHIFT) | ((ids.len() as u32) << COUNT_SHIFT) | p.len,
            ids: [0; IDS],
        };
        slot.ids[..ids.len()].copy_from_slice(ids);
        self.slots[at] = slot;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_by_window_equals_packing_the_piece() {
        let text: Vec<u8> = (0..64u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(1))
            .collect();
        for at in 0..text.len() {
            for len in 1..=KEY.min(text.len() - at) {
                let piece = &text[at..at + len];
                assert_eq!(
                    pack(&text, at, piece),
                    Packed::new(piece),
                    "at {at}, len {len}"
                );
            }
        }
        // a piece not in the text, and an empty one
        assert_eq!(pack(&text, usize::MAX - 3, b"ab"), Packed::new(b"ab"));
        assert_eq!(pack(&text, 0, b""), Packed::new(b""));
    }

    #[test]
    fn a_piece_is_found_only_as_written_and_only_by_its_owner() {
        with(new_owner(), true, |memo| {
            let memo = memo.unwrap();
            let (a, b) = (Packed::new(b"abc"), Packed::new(b"abd"));
            let mut out = Vec::new();
            assert!(!memo.get_into(a, &mut out));
            memo.insert(a, &[7, 8]);
            memo.insert(b, &[9]);
            memo.insert(Packed::new(b"three"), &[1, 2, 3]);
            memo.insert(Packed::new(b"four"), &[1, 2, 3, 4]); // too many ids: not kept
            assert!(memo.get_into(a, &mut out) && memo.get_into(b, &mut out));
            assert!(memo.get_into(Packed::new(b"three"), &mut out));
            assert!(!memo.get_into(Packed::new(b"four"), &mut out));
            assert!(!memo.get_into(Packed::new(b"ab"), &mut out));
            assert_eq!(out, [7, 8, 9, 1, 2, 3]);
        });
        let (one, two) = (new_owner(), new_owner());
        with(one, true, |memo| {
            memo.unwrap().insert(Packed::new(b"abc"), &[5])
        });
        with(two, true, |memo| {
            // another tokenizer: nothing of the first one's is found, and its own is kept
            let memo = memo.unwrap();
            assert!(!memo.get_into(Packed::new(b"abc"), &mut Vec::new()));
            memo.insert(Packed::new(b"abc"), &[6]);
        });
        let mut out = Vec::new();
        with(one, true, |memo| {
            assert!(memo.unwrap().get_into(Packed::new(b"abc"), &mut out))
        });
        with(two, true, |memo| {
            assert!(memo.unwrap().get_into(Packed::new(b"abc"), &mut out))
        });
        assert_eq!(out, [5, 6]);
        // an owner of another era empties the memo
        with(one + (1 << OWNER_BITS), true, |memo| {
            assert!(memo.unwrap().slots.iter().all(|slot| slot.owner() == 0));
        });
        with(new_owner(), false, |memo| assert!(memo.is_none()));
    }

    /// `n` distinct pieces of up to 16 bytes.
    fn pieces(n: usize) -> Vec<Packed> {
        (0..n)
            .map(|i| Packed::new(format!("piece {i}").as_bytes()))
            .collect()
    }

    #[test]
    fn tokenizers_used_in_turn_keep_their_pieces() {
        const { assert!(MEMOS >= 2) };
        // As many pieces as slots each, for as many tokenizers as a thread keeps memos.
        let many = pieces(SLOTS);
        let owners: Vec<u64> = (0..MEMOS).map(|_| new_owner()).collect();
        for (k, &owner) in owners.iter().enumerate() {
            with(owner, true, |memo| {
                let memo = memo.unwrap();
                for p in &many {
                    memo.insert(*p, &[k as u32]);
                }
            });
        }
        let found = |owner: u64, k: u32| {
            with(owner, true, |memo| {
                let memo = memo.unwrap();
                many.iter()
                    .filter(|p| {
                        let mut out = Vec::new();
                        memo.get_into(**p, &mut out) && out == [k]
                    })
                    .count()
            })
        };
        for (k, &owner) in owners.iter().enumerate() {
            // a piece is lost only where two of one owner's pieces share a pair of slots (in
            // one memo for all, the first owner's would be lost to the second's)
            assert!(found(owner, k as u32) > SLOTS / 2, "owner {k}");
        }
        // One tokenizer more takes the memo used longest ago (the first owner's, as all were
        // just asked in order) and finds none of its pieces; the others keep theirs.
        let late = new_owner();
        assert_eq!(found(late, 0), 0);
        with(late, true, |memo| memo.unwrap().insert(many[0], &[99]));
        assert_eq!(found(late, 99), 1);
        for (k, &owner) in owners.iter().enumerate().skip(1) {
            assert!(found(owner, k as u32) > SLOTS / 2, "owner {k}");
        }
        // The first owner comes back to the memo used longest ago and finds its pieces only
        // where the memo it gets still holds them (none were written there by it): never
        // another owner's ids.
        assert!(with(owners[0], true, |memo| {
            let memo = memo.unwrap();
            many.iter().all(|p| {
                let mut out = Vec::new();
                !memo.get_into(*p, &mut out) || out == [0]
            })
        }));
    }
}
