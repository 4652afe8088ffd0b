//! Where a long piece can be cut: byte positions no token can span (a byte pair that is no
//! token and no three-byte window of a token around it; further, inside long parts, no
//! four-byte window either), and the merge of a long piece part by part, under either rule,
//! after its runs of one byte and its whitespace. It does not merge a part itself.

use super::MAX_SHORT;
use crate::bytelevel::{ByteLevel, NO_TOKEN};
use crate::memory::{self, NoMemory};

/// Bits of the hashed set of four-byte token windows (`ByteLevel::windows4`).
pub const WINDOW4_BITS: u32 = 24;

/// The bit of four bytes in `ByteLevel::windows4`.
#[inline(always)]
pub fn window4_bit(w: &[u8]) -> usize {
    let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
    (v.wrapping_mul(0x9E37_79B1) >> (32 - WINDOW4_BITS)) as usize
}

impl ByteLevel {
    /// Whether a piece of more than [`MIN_CUT`](super::MIN_CUT) and up to [`MAX_SHORT`] bytes is to
    /// be cut where no token can span before it is merged ([`Self::merge_long`]), as longer ones
    /// are: where a script's characters are tokens that no longer token joins (Odia in o200k_base),
    /// each character is then merged alone, not every byte pair of the word in one scan or heap.
    /// Asked at one place only, the first character boundary from the middle on, so that a word of
    /// any other script pays a load or three.
    #[inline]
    pub(in crate::bytelevel) fn worth_cutting(&self, piece: &[u8]) -> bool {
        let mut p = piece.len() / 2;
        while p < piece.len() && piece[p] & 0xC0 == 0x80 {
            p += 1;
        }
        0 < p && p < piece.len() && self.can_cut(piece, p)
    }

    /// Whether no token can ever span byte `p` of `piece` (0 < p < len): under either rule a
    /// merge makes a token, and a token across `p` would hold bytes `p - 1` and `p`: as the
    /// whole two-byte token, or inside one of the three-byte windows around them.
    #[inline(always)]
    fn can_cut(&self, piece: &[u8], p: usize) -> bool {
        let pair = (usize::from(piece[p - 1]) << 8) | usize::from(piece[p]);
        if self.byte_pairs[pair] != NO_TOKEN {
            return false; // the common case inside runs that merge: decided in one load
        }
        let window = |i: usize| self.in_some_token3(&piece[i..i + 3]);
        (p < 2 || !window(p - 2)) && (p + 1 >= piece.len() || !window(p - 1))
    }

    /// Whether some token holds the three bytes `w` (exact).
    #[inline(always)]
    pub(in crate::bytelevel) fn in_some_token3(&self, w: &[u8]) -> bool {
        let bit = (usize::from(w[0]) << 16) | (usize::from(w[1]) << 8) | usize::from(w[2]);
        self.windows[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// Whether some token may hold the four bytes `w` (hashed: false only where none does).
    #[inline(always)]
    pub(in crate::bytelevel) fn in_some_token4(&self, w: &[u8]) -> bool {
        let bit = window4_bit(w);
        self.windows4[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// [`Self::can_cut`] looking further, where that said no: a token across `p` of three
    /// bytes is one of those two windows itself, and a longer one holds one of the (up to)
    /// three four-byte windows that contain bytes `p - 1` and `p`. Random whitespace, whose
    /// three-byte windows all occur in tokens, is cut here. Asked only inside parts longer
    /// than [`MAX_SHORT`]: elsewhere (CJK) the lookups cost more than they save.
    fn can_cut_fine(&self, piece: &[u8], p: usize) -> bool {
        let pair = (usize::from(piece[p - 1]) << 8) | usize::from(piece[p]);
        if self.byte_pairs[pair] != NO_TOKEN {
            return false;
        }
        let window4 = |a: usize| self.in_some_token4(&piece[a..a + 4]);
        // The four-byte windows first: a bit each, where the tokens are lookups.
        if (p.saturating_sub(3)..p).any(|a| a + 4 <= piece.len() && window4(a)) {
            return false;
        }
        (p < 2 || self.rank_of(&piece[p - 2..=p]) == NO_TOKEN)
            && (p + 1 >= piece.len() || self.rank_of(&piece[p - 1..=p + 1]) == NO_TOKEN)
    }

    /// The units of a long `piece` after every merge, into `units`: see [`Self::merge_in_parts`];
    /// each part takes [`ByteLevel::merge_plain`] (under the ranks rule a short scan up to
    /// [`MAX_SHORT`] bytes, a heap up to [`MAX_LONG_HEAP`](super::MAX_LONG_HEAP) where the part
    /// holds many distinct byte pairs ([`ByteLevel::suits_heap`]), rank buckets otherwise). A run
    /// of text no token spans (a piece of characters the vocabulary never joins) thus costs short
    /// merges only.
    #[cfg(test)]
    pub(in crate::bytelevel) fn merge_long(&self, piece: &[u8], units: &mut Vec<u32>) {
        self.try_merge_long(piece, units)
            .unwrap_or_else(|e| e.abort())
    }

    /// [`Self::merge_long`], where memory that cannot be had is an error.
    pub(in crate::bytelevel) fn try_merge_long(
        &self,
        piece: &[u8],
        units: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        self.merge_in_parts(piece, units, |bytes, out, part| match self.rule {
            // Each part's units straight onto the piece's: copying one or two ids a part would be
            // a call to memcpy each (a piece of random CJK is cut at nearly every character).
            // A part of up to four bytes (a character of random CJK, which such a piece is cut
            // at) from the byte and token tables, as a short piece is.
            crate::bytelevel::Rule::Ranks => {
                if self.tiny_part(bytes, out) {
                    return Ok(());
                }
                self.try_merge_onto(bytes, out)
            }
            // The merges rule's loop merges a whole `Vec`: the first part (the whole piece, where
            // there is no cut) into `out` itself, the others beside it.
            crate::bytelevel::Rule::Merges(_) if out.is_empty() => self.try_merge_plain(bytes, out),
            crate::bytelevel::Rule::Merges(_) => {
                self.try_merge_plain(bytes, part)?;
                memory::extend(out, part)
            }
        })
    }

    /// The units of a long `piece` after every merge, into `units`, under either rule: a run of one
    /// repeated byte or short string is merged run by run ([`crate::bytelevel::runs`]); any other
    /// piece is cut where no token can span (see [`Self::can_cut`], and [`Self::uncrossed_run`]
    /// for a long run of one short string repeated inside it), and `merge` merges each part alone
    /// and appends its units to the `Vec` it is given (the third argument, a scratch `Vec`, is its
    /// own). Merges never cross a cut, so the result is the whole piece's.
    pub(in crate::bytelevel) fn merge_in_parts(
        &self,
        piece: &[u8],
        units: &mut Vec<u32>,
        merge: impl Fn(&[u8], &mut Vec<u32>, &mut Vec<u32>) -> Result<(), NoMemory>,
    ) -> Result<(), NoMemory> {
        units.clear();
        if piece.len() >= crate::bytelevel::runs::MIN_RUN {
            let done = if piece.iter().all(|&b| b == piece[0]) {
                self.merge_run(piece[0], piece.len(), units)
            } else {
                self.merge_repeated(piece, units)?
            };
            if done {
                return Ok(());
            }
        }
        if let Some(ws) = &self.whitespace {
            if ws.covers(piece) && ws.encode(self, piece, units) {
                return Ok(());
            }
        }
        let mut part = Vec::new();
        let Some((first, last, k)) = self.uncrossed_run(piece) else {
            return self.merge_cut(piece, units, &mut part, &merge);
        };
        // Each copy of the run between the cuts merges alone, to the same units.
        self.merge_cut(&piece[..first], units, &mut part, &merge)?;
        let at = units.len();
        merge(&piece[first..first + k], units, &mut part)?;
        let (copies, one) = ((last - first) / k, units.len() - at);
        memory::reserve(units, (copies - 1) * one)?;
        let mut have = 1;
        while have < copies {
            let more = have.min(copies - have); // doubling: a few copies of memory, not one per copy
            units.extend_from_within(at..at + more * one);
            have += more;
        }
        self.merge_cut(&piece[last..], units, &mut part, &merge)
    }

    /// `piece` cut where no token can span, each part merged by `merge` onto `units` (see
    /// [`Self::merge_in_parts`]).
    fn merge_cut(
        &self,
        piece: &[u8],
        units: &mut Vec<u32>,
        part: &mut Vec<u32>,
        merge: &impl Fn(&[u8], &mut Vec<u32>, &mut Vec<u32>) -> Result<(), NoMemory>,
    ) -> Result<(), NoMemory> {
        if piece.is_empty() {
            return Ok(());
        }
        let mut coarse = (0, false);
        let mut end = self.next_cut(piece, 0, &mut coarse);
        let mut start = 0;
        loop {
            merge(&piece[start..end], units, part)?;
            if end == piece.len() {
                return Ok(());
            }
            start = end;
            end = self.next_cut(piece, start, &mut coarse);
        }
    }

    /// Where a long run of one short string repeated inside `piece` (found from its middle: a
    /// character, a syllable) can be cut at the same place in every copy: `(first, last, p)`, the
    /// first and last such cut and the string's length (each `p` bytes between them a copy that
    /// merges alone), or None. Where no token that is a substring of the run spans some place of
    /// the copies ([`Self::uncut_phase`]; in o200k_base, the copies' ends for most characters and
    /// most Indic syllables of two characters), a token across such a place would have to reach
    /// outside the run; every one at least the longest token from both of its ends is therefore a
    /// cut no token spans. (The window tests of [`Self::can_cut`] find no such cut where
    /// the string's bytes occur in tokens with other characters around them, as a Sinhala
    /// letter's do.)
    pub(in crate::bytelevel) fn uncrossed_run(
        &self,
        piece: &[u8],
    ) -> Option<(usize, usize, usize)> {
        use crate::bytelevel::runs::{MAX_LONGEST, MAX_PERIOD, MIN_RUN};
        let room = 2 * self.longest;
        if piece.len() < MIN_RUN.max(room + 8) || self.longest > MAX_LONGEST {
            return None;
        }
        // The shortest string of which three copies start at the middle.
        let middle = piece.len() / 2;
        let p = (1..=MAX_PERIOD).find(|&p| {
            middle + 3 * p <= piece.len()
                && piece[middle..middle + 2 * p] == piece[middle + p..middle + 3 * p]
        })?;
        let u = &piece[middle..middle + p];
        let mut start = middle;
        while start >= p && &piece[start - p..start] == u {
            start -= p;
        }
        let mut end = middle + p;
        while end + p <= piece.len() && &piece[end..end + p] == u {
            end += p;
        }
        if end - start < room + 3 * p {
            return None;
        }
        let r = self.uncut_phase(&piece[start..end], p)?;
        // The cuts: the places `r` into each copy at least the longest token from the run's ends.
        let first = start + r + (self.longest.saturating_sub(r)).div_ceil(p) * p;
        let last = first + (end - self.longest - first) / p * p;
        (last >= first + 2 * p).then_some((first, last, p))
    }

    /// The first place after `start` where `piece` can be cut (see [`Self::can_cut`]), or its
    /// length.
    ///
    /// `coarse.0` is the next cut [`Self::can_cut`] allows (kept between calls): inside a part
    /// longer than [`MAX_SHORT`] up to it, [`Self::can_cut_fine`] looks for one before it, so
    /// every byte is asked about once by each. `coarse.1` says whether some byte pair before `coarse.0` is no token: where every pair
    /// is one (random spaces and newlines), the finer test has nothing to find.
    #[inline(always)]
    fn next_cut(&self, piece: &[u8], start: usize, coarse: &mut (usize, bool)) -> usize {
        if coarse.0 <= start {
            let (mut end, mut open) = (start + 1, false);
            while end < piece.len() && !self.can_cut(piece, end) {
                let pair = (usize::from(piece[end - 1]) << 8) | usize::from(piece[end]);
                open |= self.byte_pairs[pair] == NO_TOKEN;
                end += 1;
            }
            *coarse = (end, open);
        }
        if coarse.1 && coarse.0 - start > MAX_SHORT {
            if let Some(p) = self.fine_cut(piece, start, coarse.0) {
                return p;
            }
        }
        coarse.0
    }

    /// The first cut [`Self::can_cut_fine`] allows between `start` and `end` (out of line: the
    /// loop of [`Self::next_cut`] stays as small as it was without it).
    #[inline(never)]
    fn fine_cut(&self, piece: &[u8], start: usize, end: usize) -> Option<usize> {
        (start + 1..end).find(|&p| self.can_cut_fine(piece, p))
    }
}
