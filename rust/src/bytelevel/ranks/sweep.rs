//! The ranks rule on parts too long for the stack heap: the positions of pairs that can merge
//! kept in one bucket per rank ([`RankBuckets`]), the lowest rank's bucket swept left to right.
//! It does not cut pieces or start from merged characters.

use crate::bytelevel::{ByteLevel, NO_TOKEN};
use crate::memory::NoMemory;
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
        let mut queue = RankBuckets::default();
        let mut parts = self.long_parts(piece, |i, r| queue.push(r, i as u32))?;
        let mut round: Vec<u32> = Vec::new();
        while let Some(r) = queue.next_round(&mut round) {
            let mut k = 0;
            while k < round.len() {
                let i = round[k] as usize;
                k += 1;
                if parts.rank[i] != r {
                    continue; // stale
                }
                let (right, left) = parts.join(self, piece, i, r);
                let mut lower = false;
                if right != NO_TOKEN {
                    queue.push(right, i as u32)?;
                    lower |= right <= r;
                }
                if let Some((p, r2)) = left.filter(|&(_, r2)| r2 != NO_TOKEN) {
                    queue.push(r2, p as u32)?;
                    lower |= r2 <= r;
                }
                if lower {
                    for &rest in &round[k..] {
                        queue.push(r, rest)?;
                    }
                    break;
                }
            }
        }
        parts.units_into(units)?;
        Ok(())
    }
}
