//! The ranks rule on parts too long for the stack heap: the positions of pairs that can merge
//! kept in one bucket per rank ([`RankBuckets`]), the lowest rank's bucket swept left to right.
//! It does not cut pieces or start from merged characters.

use crate::bytelevel::{ByteLevel, NO_TOKEN};
use crate::memory::{self, NoMemory};
use crate::merge::RankBuckets;

impl ByteLevel {
    /// The units of `piece` (ranks rule) after every merge, appended to `units`, by byte positions
    /// like [`Self::merge_heap`], for parts too long for a heap to stay in cache: the positions
    /// of the pairs that can merge are kept in one bucket per rank, and the lowest rank's
    /// bucket is swept left to right (a run of one kind of pair costs a linear pass, not a
    /// heap operation per merge). A merge's new pairs normally rank higher (a token is newer
    /// than its parts); where one ranks the same or lower, the sweep stops and the rest of
    /// the bucket goes back, so the order is the rule's. A position whose part has merged or
    /// whose pair has changed since it was filed is skipped (its current rank differs: a
    /// part only grows, so its pair never spans the same bytes twice).
    #[inline(never)]
    pub(in crate::bytelevel) fn merge_sweep(
        &self,
        piece: &[u8],
        units: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        const NONE: u32 = u32::MAX;
        let n = piece.len();
        debug_assert!(n >= 2 && n < NONE as usize);
        // The part starting at byte i (if one does) ends at end[i], follows the part at
        // prev[i], and is unit id[i]; rank[i] is the token it and the part after it make
        // (NO_TOKEN: none, or no part starts at i).
        let mut end: Vec<u32> = memory::filled(0, n)?;
        let mut prev: Vec<u32> = memory::filled(0, n)?;
        let mut id: Vec<u32> = memory::filled(0, n)?;
        for (i, &b) in piece.iter().enumerate() {
            end[i] = i as u32 + 1;
            prev[i] = (i as u32).wrapping_sub(1);
            id[i] = self.byte_units[usize::from(b)];
        }
        let mut rank = memory::filled(NO_TOKEN, n)?;
        let mut queue = RankBuckets::default();
        for i in 0..n - 1 {
            let r = self.byte_pairs[(usize::from(piece[i]) << 8) | usize::from(piece[i + 1])];
            rank[i] = r;
            if r != NO_TOKEN {
                queue.push(r, i as u32)?;
            }
        }
        let mut round: Vec<u32> = Vec::new();
        while let Some(r) = queue.next_round(&mut round) {
            let mut k = 0;
            while k < round.len() {
                let i = round[k] as usize;
                k += 1;
                if rank[i] != r {
                    continue; // stale
                }
                // Parts i and j = its next become one, ending where the part after j starts.
                let j = end[i] as usize;
                let after = end[j] as usize;
                rank[j] = NO_TOKEN;
                end[i] = after as u32;
                id[i] = r;
                let mut lower = false;
                rank[i] = if after < n {
                    prev[after] = i as u32;
                    let r2 = self.rank_of(&piece[i..end[after] as usize]);
                    if r2 != NO_TOKEN {
                        queue.push(r2, i as u32)?;
                        lower |= r2 <= r;
                    }
                    r2
                } else {
                    NO_TOKEN
                };
                let p = prev[i];
                if p != NONE {
                    let r2 = self.rank_of(&piece[p as usize..after]);
                    rank[p as usize] = r2;
                    if r2 != NO_TOKEN {
                        queue.push(r2, p)?;
                        lower |= r2 <= r;
                    }
                }
                if lower {
                    for &rest in &round[k..] {
                        queue.push(r, rest)?;
                    }
                    break;
                }
            }
        }
        let mut i = 0;
        while i < n {
            memory::push(units, id[i])?;
            i = end[i] as usize;
        }
        Ok(())
    }
}
