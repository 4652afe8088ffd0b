//! [`Rest`]: when one text leaves the memo's short table alone, a stretch of bytes at a time,
//! because its short pieces keep being new. It never changes a result, and does not look at the
//! table itself (the memo sets it aside and gives it back).

/// Misses of the short table per look at how close together they come.
pub(super) const WINDOW: u32 = 256;
/// A window's misses within this many bytes each on average: nearly every short piece is new.
pub(super) const DENSE: usize = 8;
/// Bytes of text for which the short table is then left alone, before it is tried again.
pub(super) const REST: usize = 64 << 10;

/// When to leave the memo's short table alone during one text. On text whose short pieces keep
/// being new (random Latin-1: a piece every few bytes, more distinct ones than the table has
/// slots), each piece pays a slot's cache miss to ask and a write to keep, and what it kept is
/// pushed out before it is asked for again. Misses are counted by where in the text they fall:
/// prose repeats its short pieces, and its misses come tens of bytes apart. While it rests the
/// table is set aside ([`Memo::missed`](super::Memo::missed)), so the pieces it would answer take
/// no other path than before. Never changes a result, only what a piece costs.
#[derive(Default)]
pub(super) struct Rest {
    pub(super) misses: u32,
    pub(super) since: usize,
    pub(super) until: usize,
}

impl Rest {
    /// Whether the short table is left alone for the piece at byte `at` of the text.
    #[inline(always)]
    pub(super) fn resting(&self, at: usize) -> bool {
        at < self.until
    }

    /// The short table missed the piece at byte `at` (not while resting); true if a rest
    /// starts.
    #[inline]
    pub(super) fn missed(&mut self, at: usize) -> bool {
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
