//! One merge carried out: every `a b` rewritten in place in the words holding the pair, the
//! pair counts updated around each occurrence, the pairs that grew filed in the queue, and the
//! holder buffer compacted when it would pass `u32` offsets. It does not choose the merge
//! (`queue`) or record it (the engine's steps do).

use super::{key, order, Engine, UNK};

impl Engine {
    /// Replace every `a b` by `c` (left to right, in place) in the words holding it; update the
    /// pair counts around each occurrence and file the pairs that grew.
    pub(super) fn merge(&mut self, a: u32, b: u32, c: u32) {
        let Some(entry) = self.pairs.remove(&key(a, b)) else {
            return;
        };
        let mut holders = std::mem::take(&mut self.visit);
        holders.clear();
        let first = entry.start as usize;
        holders.extend_from_slice(&self.holders[first..first + entry.len as usize]);
        // Each word once (the list may repeat a word or name one that has lost the pair): a
        // stamp per word marks the ones this merge has seen, with no sorting.
        let stamp = self.merges.len() as u32;
        // (neighbour symbol, word index), one per occurrence; buffers kept between merges.
        let mut lefts = std::mem::take(&mut self.lefts);
        let mut rights = std::mem::take(&mut self.rights);
        lefts.clear();
        rights.clear();
        for &wi in holders.iter() {
            if self.seen[wi as usize] == stamp {
                continue;
            }
            self.seen[wi as usize] = stamp;
            let (start, len) = self.spans[wi as usize];
            let w = &mut self.data[start as usize..(start + len) as usize];
            let len = len as usize;
            let (mut r, mut out) = (0, 0);
            let mut changed = false;
            while r < len {
                if w[r] == a && r + 1 < len && w[r + 1] == b {
                    if out > 0 && w[out - 1] != UNK {
                        lefts.push((w[out - 1], wi));
                    }
                    if r + 2 < len && w[r + 2] != UNK {
                        rights.push((w[r + 2], wi));
                    }
                    w[out] = c;
                    out += 1;
                    r += 2;
                    changed = true;
                } else {
                    w[out] = w[r];
                    out += 1;
                    r += 1;
                }
            }
            if changed {
                self.spans[wi as usize].1 = out as u32;
            }
        }
        // Settle each distinct neighbour: take the old pair down, bring the new pair up, file it.
        // Rights before lefts: in "a b a b" the first occurrence makes (c, a) (right neighbour a)
        // and the second takes it down again (left neighbour c, the first one's merge).
        let same = a == b;
        rights.sort_unstable_by_key(|&(neighbour, _)| neighbour);
        for group in rights.chunk_by(|x, y| x.0 == y.0) {
            let right = group[0].0;
            let n: u64 = group.iter().map(|&(_, wi)| self.counts[wi as usize]).sum();
            if !(same && right == a) {
                self.take_down(key(b, right), n);
            }
            self.bring_up(key(c, right), n, group);
        }
        lefts.sort_unstable_by_key(|&(neighbour, _)| neighbour);
        for group in lefts.chunk_by(|x, y| x.0 == y.0) {
            let left = group[0].0;
            let n: u64 = group.iter().map(|&(_, wi)| self.counts[wi as usize]).sum();
            self.take_down(key(left, a), n);
            self.bring_up(key(left, c), n, group);
        }
        self.lefts = lefts;
        self.rights = rights;
        self.visit = holders;
    }

    fn take_down(&mut self, k: u64, n: u64) {
        if let Some(e) = self.pairs.get_mut(&k) {
            e.freq = e.freq.saturating_sub(n);
            if e.freq == 0 {
                self.pairs.remove(&k);
            }
        }
    }

    fn bring_up(&mut self, k: u64, n: u64, occurrences: &[(u32, u32)]) {
        if self.holders.len() + occurrences.len() >= u32::MAX as usize {
            self.compact_holders();
        }
        let e = self.pairs.entry(k).or_default();
        e.freq += n;
        let freq = e.freq;
        let (start, len) = (e.start as usize, e.len as usize);
        if start + len != self.holders.len() {
            // Not the last range: move it to the end, where it can grow.
            e.start = self.holders.len() as u32;
            self.holders.extend_from_within(start..start + len);
        }
        self.holders.extend(occurrences.iter().map(|&(_, wi)| wi));
        e.len += occurrences.len() as u32;
        if let Some(floor) = self.floor {
            if freq >= floor {
                self.queue
                    .push(freq, k, &order(&self.symbols, self.greater));
            }
        }
    }

    /// Copy the live ranges of `holders` into a new buffer (ranges left behind by merged,
    /// vanished or moved pairs are dropped): done only when the buffer would pass `u32` offsets.
    pub(super) fn compact_holders(&mut self) {
        let live: usize = self.pairs.iter().map(|(_, e)| e.len as usize).sum();
        let mut holders = Vec::with_capacity(live + live / 4);
        for e in self.pairs.values_mut() {
            let start = e.start as usize;
            e.start = holders.len() as u32;
            holders.extend_from_slice(&self.holders[start..start + e.len as usize]);
        }
        self.holders = holders;
    }
}
