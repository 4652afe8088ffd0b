//! A thread's memos and their owners: the owner ids tokenizers take ([`new_owner`]), the few
//! memos each thread keeps and which one an owner gets ([`with`], made at full size by
//! [`prepare`]), and the owners released on any thread ([`release`], [`GONE`]), whose memos are
//! taken before one is made. It does not look into a memo's tables: which pieces a memo keeps
//! is the memo's (`super`) and its tables' ([`super::slots`]).

use super::{Memo, LONGEST_SLOTS, LONG_SLOTS, MEMOS, OWNER_MASK, SLOTS, UNMADE};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

/// A new owner id (a tokenizer's, or its own after `clear_cache`); never 0 in its low
/// [`OWNER_BITS`](super::OWNER_BITS).
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
