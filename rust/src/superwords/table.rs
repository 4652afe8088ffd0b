//! Span counts as piece ids ([`SpanTable`]): each distinct piece's text once, each distinct
//! span as its pieces' ids, the piece counts kept as spans are added; the counting threads'
//! tables merged, and the piece counts of span counts. It does not work out what a piece
//! becomes after the word-level merges (`items`) or train.

use crate::counting::{absorb, entries_to_bytes, Counts, Tally};
use crate::words::piece_end_utf8;

/// The piece counts of a corpus from its span counts.
pub fn pieces_of(spans: &Counts) -> Counts {
    let mut out = Counts::default();
    for (span, n) in spans.iter() {
        let mut pos = 0;
        while pos < span.len() {
            let end = piece_end_utf8(span, pos);
            out.add(&span[pos..end], n);
            pos = end;
        }
    }
    out
}

/// Span counts held as sequences of piece ids: each distinct piece's text once, each distinct
/// span as its piece ids (4 bytes a piece instead of the span's text, which on a corpus of
/// mostly distinct sentences is the corpus itself), and every piece's count kept as spans are
/// added, so the piece counts need no second pass. Counting threads keep one table each;
/// [`SpanTable::absorb`] merges them (piece ids are renumbered). Counts are 64-bit.
#[derive(Debug, Default)]
pub struct SpanTable {
    /// Piece -> 1 + its id.
    ids: Counts,
    /// Piece texts one after the other: piece `i` is `text[ends[i - 1]..ends[i]]`.
    text: Vec<u8>,
    ends: Vec<usize>,
    /// Piece counts by id (span count times occurrences, summed).
    piece_counts: Vec<u64>,
    /// Span piece ids one after the other: span `j` is `seq[starts[j]..starts[j + 1]]`.
    seq: Vec<u32>,
    starts: Vec<usize>,
    counts: Vec<u64>,
    hashes: Vec<u32>,
    /// Open addressing over the spans: 1 + span index, 0 for an empty slot.
    slots: Vec<u32>,
    scratch: Vec<u32>,
}

#[inline]
fn hash_ids(ids: &[u32]) -> u32 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    for &id in ids {
        h.write_u32(id);
    }
    let h = h.finish();
    ((h >> 32) ^ h) as u32
}

impl Tally for SpanTable {
    /// Add `n` to the count of `span` (its text), and to each of its pieces' counts.
    fn add(&mut self, span: &[u8], n: u64) {
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        self.cut(span, &mut ids);
        for &id in &ids {
            self.piece_counts[id as usize] += n;
        }
        self.add_ids(&ids, n);
        self.scratch = ids;
    }

    fn try_add(&mut self, span: &[u8], n: u64) -> bool {
        SpanTable::try_add(self, span, n)
    }
}

impl SpanTable {
    /// How many distinct spans.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// How many distinct pieces.
    pub fn num_pieces(&self) -> usize {
        self.piece_counts.len()
    }

    /// The text of piece `id`.
    pub fn piece(&self, id: u32) -> &[u8] {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// The id of `piece`, made if new (with count 0).
    fn piece_id(&mut self, piece: &[u8]) -> u32 {
        let known = self.ids.get(piece);
        if known != 0 {
            return (known - 1) as u32;
        }
        let id = self.ends.len() as u32;
        self.text.extend_from_slice(piece);
        self.ends.push(self.text.len());
        self.piece_counts.push(0);
        self.ids.add(piece, u64::from(id) + 1);
        id
    }

    /// The ids of the pieces of `span`, appended to `ids`.
    fn cut(&mut self, span: &[u8], ids: &mut Vec<u32>) {
        let mut pos = 0;
        while pos < span.len() {
            let end = piece_end_utf8(span, pos);
            ids.push(self.piece_id(&span[pos..end]));
            pos = end;
        }
    }

    /// Span `j`: its piece ids and count.
    pub fn span(&self, j: usize) -> (&[u32], u64) {
        let start = self.starts[j];
        let end = self.starts.get(j + 1).copied().unwrap_or(self.seq.len());
        (&self.seq[start..end], self.counts[j])
    }

    /// Index of the span `ids` (hash `h`) in `slots`: `Ok(span)` or `Err(free slot)`.
    fn find(&self, ids: &[u32], h: u32) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return Err(i);
            }
            let j = slot as usize - 1;
            if self.hashes[j] == h && self.span(j).0 == ids {
                return Ok(j);
            }
            i = (i + 1) & mask;
        }
    }

    /// Add `n` to the count of the span made of pieces `ids` (its pieces' counts are the
    /// caller's).
    fn add_ids(&mut self, ids: &[u32], n: u64) {
        if (self.len() + 1) * 10 > self.slots.len() * 7 {
            self.grow();
        }
        let h = hash_ids(ids);
        match self.find(ids, h) {
            Ok(j) => self.counts[j] += n,
            Err(slot) => {
                self.starts.push(self.seq.len());
                self.seq.extend_from_slice(ids);
                self.counts.push(n);
                self.hashes.push(h);
                self.slots[slot] = self.counts.len() as u32;
            }
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1024);
        self.slots = vec![0; size];
        let mask = size - 1;
        for (j, &h) in self.hashes.iter().enumerate() {
            let mut i = h as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = j as u32 + 1;
        }
    }

    /// [`Tally::add`] unless a count would pass `u64::MAX` (then `false`, no count changed; new
    /// pieces may have been given ids with count 0).
    pub fn try_add(&mut self, span: &[u8], n: u64) -> bool {
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        self.cut(span, &mut ids);
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        let pieces_fit = sorted.chunk_by(|a, b| a == b).all(|run| {
            n.checked_mul(run.len() as u64)
                .and_then(|add| self.piece_counts[run[0] as usize].checked_add(add))
                .is_some()
        });
        let h = hash_ids(&ids);
        let span_fits = match (self.slots.is_empty(), self.find_or_none(&ids, h)) {
            (false, Some(j)) => self.counts[j].checked_add(n).is_some(),
            _ => true,
        };
        let ok = pieces_fit && span_fits;
        if ok && n != 0 {
            for &id in &ids {
                self.piece_counts[id as usize] += n;
            }
            self.add_ids(&ids, n);
        }
        self.scratch = ids;
        ok
    }

    fn find_or_none(&self, ids: &[u32], h: u32) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        self.find(ids, h).ok()
    }

    /// Add every count of `other` into this table.
    pub fn absorb(&mut self, other: SpanTable) {
        if self.ends.is_empty() && self.counts.is_empty() {
            *self = other;
            return;
        }
        let mut remap = Vec::with_capacity(other.num_pieces());
        for (i, &n) in other.piece_counts.iter().enumerate() {
            let id = self.piece_id(other.piece(i as u32));
            self.piece_counts[id as usize] += n;
            remap.push(id);
        }
        let mut ids = Vec::new();
        for j in 0..other.len() {
            let (seq, n) = other.span(j);
            ids.clear();
            ids.extend(seq.iter().map(|&id| remap[id as usize]));
            self.add_ids(&ids, n);
        }
    }

    /// Span counts given as text (e.g. shipped between processes as [`Counts`]).
    pub fn from_counts(spans: &Counts) -> Self {
        let mut out = Self::default();
        for (span, n) in spans.iter() {
            Tally::add(&mut out, span, n);
        }
        out
    }

    /// The text of span `j`, written to `buf`.
    pub fn span_text(&self, j: usize, buf: &mut Vec<u8>) {
        buf.clear();
        for &id in self.span(j).0 {
            buf.extend_from_slice(self.piece(id));
        }
    }

    /// Every `(span text, count)`.
    pub fn for_each_span(&self, mut f: impl FnMut(&[u8], u64)) {
        let mut buf = Vec::new();
        for j in 0..self.len() {
            self.span_text(j, &mut buf);
            f(&buf, self.counts[j]);
        }
    }

    /// The sum of all span counts (saturating).
    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0, |sum, &n| sum.saturating_add(n))
    }

    /// The piece counts.
    pub fn pieces(&self) -> Counts {
        let mut out = Counts::default();
        for (i, &n) in self.piece_counts.iter().enumerate() {
            if n != 0 {
                out.add(self.piece(i as u32), n);
            }
        }
        out
    }

    /// The spans as [`Counts::to_bytes`] writes span texts.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut texts = Counts::default();
        self.for_each_span(|span, n| texts.add(span, n));
        entries_to_bytes(texts.iter(), self.text.len() + self.seq.len() * 8)
    }

    /// Bytes held by the table.
    pub fn heap_bytes(&self) -> usize {
        self.ids.heap_bytes()
            + self.text.capacity()
            + (self.ends.capacity() + self.starts.capacity()) * 8
            + (self.piece_counts.capacity() + self.counts.capacity()) * 8
            + (self.seq.capacity() + self.hashes.capacity() + self.slots.capacity()) * 4
    }
}

/// The piece counts of a span counter's tables (one per counting thread), the tables left as
/// they are: merging their spans is left to the superword stage
/// ([`prepare`](super::prepare)), which does it beside the word-level training.
pub fn pieces(tables: &[SpanTable]) -> Counts {
    let mut tables = tables.iter();
    let mut total = tables.next().map(SpanTable::pieces).unwrap_or_default();
    for table in tables {
        absorb(&mut total, table.pieces());
    }
    total
}

/// A span counter's tables (one per counting thread) merged into one.
pub fn merged(tables: impl IntoIterator<Item = SpanTable>) -> SpanTable {
    let mut total = SpanTable::default();
    for table in tables {
        total.absorb(table);
    }
    total
}
