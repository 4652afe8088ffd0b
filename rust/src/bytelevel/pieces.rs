//! One text's pieces into ids: the scanner's pieces through the calling thread's memo, each
//! piece's memo slots asked for a few pieces ahead of its lookup; what the memo misses goes to
//! [`ByteLevel::encode_piece`].

use super::cache::Bypass;
use super::table::Packed;
use super::{memo, ByteLevel, Error};
use crate::pretokenize::Pieces;
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;

impl ByteLevel {
    /// Ids of text holding no special or added token: pre-tokenize, then BPE every piece.
    pub(super) fn encode_chunk(
        &self,
        text: &str,
        out: &mut Vec<u32>,
        scratch: &mut Vec<u32>,
        together: bool,
    ) -> Result<(), Error> {
        if text.is_empty() {
            return Ok(());
        }
        // The shared cache is left alone while it misses (text that does not repeat itself).
        let mut bypass = Bypass::default();
        let owner = self.memo_owner.load(Ordering::Relaxed);
        memo::with(owner, self.cache.enabled(), |memo| {
            let Some(memo) = memo else {
                return self.pretokenizer.for_each_piece(text, &mut |piece: &[u8]| {
                    if self.tiny_piece(piece, out) {
                        return Ok(());
                    }
                    self.encode_piece(piece, None, out, scratch, &mut bypass, 0)
                        .map(|_| ())
                });
            };
            let mut short = ShortPieces {
                tok: self,
                bytes: text.as_bytes(),
                memo,
                out,
                scratch,
                bypass: &mut bypass,
                together,
                waiting: [MaybeUninit::uninit(); AHEAD],
                next: 0,
                held: 0,
            };
            short.memo.begin_text();
            let done = self
                .pretokenizer
                .for_each_piece(text, &mut short)
                .and_then(|()| short.finish());
            short.memo.wake_short();
            done
        })
    }
}

/// One text's pieces into ids through a memo (see `encode_chunk`). Only the memo's answer for a
/// short piece is inlined into the scanner's loop (a closure, called from the scanner's several
/// places, was left a call per piece); everything else is a call.
struct ShortPieces<'a> {
    tok: &'a ByteLevel,
    bytes: &'a [u8],
    memo: &'a mut memo::Memo,
    out: &'a mut Vec<u32>,
    scratch: &'a mut Vec<u32>,
    bypass: &'a mut Bypass,
    /// One of a batch's calls on several threads (see [`ByteLevel::encode_into_batch`]).
    together: bool,
    /// The pieces found but not yet answered, in a ring: the `held` slots before `next`, the
    /// oldest first, and only those written. (Counted rather than marked empty, so that a short
    /// text neither clears the ring nor visits the slots it never filled.)
    waiting: [MaybeUninit<Waiting>; AHEAD],
    next: usize,
    held: usize,
}

/// Pieces a piece's memo slots are asked for ahead of its lookup: when the memo's lines are not
/// in the CPU's caches (a warm tokenizer after other work), the lookups of several pieces then
/// wait for memory at once rather than one after another. A long piece asks for up to six
/// lines, so many are in flight at once, and a lead of sixteen pieces leaves them time.
const AHEAD: usize = 16;

/// A piece found by the scanner and not yet answered: where it is, and for a short one its key
/// and its pair in the memo's short table.
#[derive(Clone, Copy)]
struct Waiting {
    at: usize,
    len: usize,
    p: Packed,
    pair: usize,
}

impl Waiting {
    const NONE: Waiting = Waiting {
        at: 0,
        len: 0,
        p: Packed { key: 0, len: 0 },
        pair: 0,
    };
}

impl Pieces<Error> for ShortPieces<'_> {
    #[inline(always)]
    fn piece(&mut self, piece: &[u8]) -> Result<(), Error> {
        debug_assert!(!piece.is_empty(), "the scanners hand out no empty piece");
        let at = (piece.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        if !self.memo.keeps_short(at) {
            return self.resting(at, piece);
        }
        let mut new = Waiting {
            at,
            len: piece.len(),
            ..Waiting::NONE
        };
        if piece.len() <= memo::KEY {
            new.p = memo::pack(self.bytes, at, piece);
            new.pair = self.memo.fetch_short(new.p);
            if self.memo.heats() {
                // Soon after a miss (a cold pass over new text) the piece may well miss too,
                // and then its lookup in the token table waits on memory: ask for those lines
                // now, with the memo's.
                self.tok.encoder.fetch(new.p);
            }
            // A short word of a script that o200k_base spells a token a letter (Odia's: four
            // letters of three bytes and more) is kept in the long table. Other short pieces
            // that end outside ASCII seldom are, and the fetch costs them little; a lower length
            // would put the test itself on many English words.
            if piece.len() > 12 && piece[piece.len() - 1] >= 0x80 {
                self.memo.fetch_elsewhere(new.p);
            }
        } else {
            self.memo.fetch_long(self.bytes, at, piece);
        }
        let slot = &mut self.waiting[self.next];
        self.next = (self.next + 1) % AHEAD;
        if self.held < AHEAD {
            slot.write(new); // a free slot
            self.held += 1;
            return Ok(());
        }
        // SAFETY: with every slot held, each was written since `held` was last 0.
        let old = unsafe { slot.assume_init_read() };
        slot.write(new);
        self.answer(old)
    }
}

impl ShortPieces<'_> {
    /// The pieces still waiting, in order.
    fn finish(&mut self) -> Result<(), Error> {
        let held = std::mem::take(&mut self.held);
        for k in 0..held {
            // SAFETY: the `held` slots before `next` were written (see `waiting`).
            let old =
                unsafe { self.waiting[(self.next + AHEAD - held + k) % AHEAD].assume_init_read() };
            self.answer(old)?;
        }
        Ok(())
    }

    /// A piece found while the memo's short table rests (text whose short pieces keep being
    /// new): nothing is fetched ahead, so the pieces waiting are answered first and this one
    /// now, a piece of up to four bytes straight from the byte tables.
    #[inline(never)]
    fn resting(&mut self, at: usize, piece: &[u8]) -> Result<(), Error> {
        // (a test of the count: a scan of the ring cost more than a tiny piece's answer, on
        // every piece of a resting text)
        if self.held > 0 {
            self.finish()?;
        }
        if self.tok.tiny_piece(piece, self.out) {
            return Ok(());
        }
        if piece.len() > memo::KEY {
            return self.long(at, piece);
        }
        // Neither asked nor kept by the resting table (see `memo::Memo::missed`).
        self.tok
            .encode_piece(piece, None, self.out, self.scratch, self.bypass, 0)
            .map(|_| ())
    }

    /// A piece's ids, appended to `out`.
    #[inline(always)]
    fn answer(&mut self, w: Waiting) -> Result<(), Error> {
        // (the scanner hands out slices of the text it splits, so a piece is found again there)
        let bytes = self.bytes;
        let piece = &bytes[w.at..w.at + w.len];
        if w.len > memo::KEY {
            return self.long(w.at, piece);
        }
        // Every short piece asks the memo first, tokens and one-byte pieces too: the branch on
        // its answer is what the CPU predicts on warm text (see [`memo`]).
        if self.memo.get_into_at(w.pair, w.p, self.out) {
            return Ok(());
        }
        self.miss(piece, w.p)
    }
    /// A short piece the memo does not hold: its ids, then kept in the memo (unless its short
    /// table rests: see `memo::Rest`).
    #[inline(never)]
    fn miss(&mut self, piece: &[u8], p: Packed) -> Result<(), Error> {
        // Where it is, worked out here from the piece rather than passed down: kept live across
        // the memo's lookup, it would take a register in the scanner's loop.
        let at = (piece.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        let start = self.out.len();
        let mut pending = false;
        self.memo.heat_up();
        let tiny = self.tok.tiny_piece(piece, self.out);
        if !tiny {
            // a piece with more ids than the short table's slots hold, kept in a longer table
            if self.memo.get_elsewhere_into(p, self.out) {
                return Ok(());
            }
            let keeps = !self.together && self.memo.keeps_short(at);
            let memo_ids = if keeps { memo::LONGEST_IDS } else { 0 };
            pending = self.tok.encode_piece(
                piece,
                Some(p),
                self.out,
                self.scratch,
                self.bypass,
                memo_ids,
            )?;
        }
        let ids = &self.out[start..];
        if tiny || ids.len() <= memo::IDS {
            if let Some(gone) = self.memo.missed(at, p, ids, pending) {
                self.tok.cache.insert(gone.piece(), gone.ids());
            }
        } else {
            for gone in self.memo.missed_many(at, p, ids, pending).iter().flatten() {
                self.tok.cache.insert(gone.piece(), gone.ids());
            }
        }
        Ok(())
    }

    /// A piece longer than the memo's short keys (a word of most Indic scripts): the memo's
    /// long tables, then the shared cache (inside `encode_piece`).
    #[inline(never)]
    fn long(&mut self, at: usize, piece: &[u8]) -> Result<(), Error> {
        let Some(p) = memo::pack_long(self.bytes, at, piece) else {
            return self
                .tok
                .encode_piece(piece, None, self.out, self.scratch, self.bypass, 0)
                .map(|_| ());
        };
        if self.memo.get_long_into(&p, self.out) {
            return Ok(());
        }
        let start = self.out.len();
        let memo_ids = if self.together { 0 } else { memo::LONGEST_IDS };
        let pending =
            self.tok
                .encode_piece(piece, None, self.out, self.scratch, self.bypass, memo_ids)?;
        for gone in self
            .memo
            .insert_long(&p, &self.out[start..], pending)
            .iter()
            .flatten()
        {
            self.tok.cache.insert(gone.piece(), gone.ids());
        }
        Ok(())
    }
}
