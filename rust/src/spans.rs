//! Superword spans (`wwho.sgpe.superwords`): runs of SGPE pieces joined by single spaces,
//! ending after sentence punctuation.
//!
//! A span is an optional glued space (a space before a non-whitespace character), a run of
//! non-whitespace characters, then more such runs each after one space, as long as the run
//! before that space does not end in one of the `breaks` characters; a whitespace character
//! not glued to anything is a span alone. Every span is a whole number of pieces
//! ([`crate::words::piece_end`]). This is the `SPANS` regular expression of
//! `wwho.sgpe.superwords`, which the Hugging Face export uses as its pre-tokenizer.
//!
//! Training keeps span counts in a [`SpanTable`] (each distinct piece once, spans as piece ids,
//! the piece counts kept while counting) and turns it into the superword engine's input
//! ([`PieceItems`], then [`superword_words`]).
//!
//! The break characters are data from Python (sentence punctuation); this module does not know
//! scripts, vocabularies or merges.

use crate::charset::{is_ws, CharSet};
use crate::count::{entries_to_bytes, next_ws, piece_end_utf8, Counts, Tally};
use crate::engine::{Engine, UNK};
use crate::sgpe::Scope;
use crate::training::{for_each_span, WordCounts};
use crate::units::{decode_wtf8_into, Unit};
use crate::words::{Parts, WordSplitter};
use aho_corasick::AhoCorasick;

/// The sentence punctuation after which a span ends: a set of code points (a table: asked
/// once per piece, so two loads rather than a search).
#[derive(Clone, Debug, Default)]
pub struct Breaks(Option<CharSet>);

impl Breaks {
    /// Code points above U+10FFFF are left out (no text holds them).
    pub fn new(chars: Vec<u32>) -> Self {
        let ranges: Vec<(u32, u32)> = chars
            .into_iter()
            .filter(|&c| c <= 0x10FFFF)
            .map(|c| (c, c))
            .collect();
        Self(CharSet::from_ranges(&ranges).ok())
    }

    #[inline]
    fn contains(&self, c: u32) -> bool {
        self.0.as_ref().is_some_and(|set| set.contains(c))
    }

    pub fn heap_bytes(&self) -> usize {
        self.0.as_ref().map_or(0, CharSet::heap_bytes)
    }
}

/// End of the span starting at `pos` (`pos < text.len()`).
#[inline]
pub fn span_end<U: Unit>(text: &[U], pos: usize, breaks: &Breaks) -> usize {
    let n = text.len();
    let c = text[pos].cp();
    let mut end = pos + 1;
    if is_ws(c) {
        if !(c == 0x20 && end < n && !is_ws(text[end].cp())) {
            return end;
        }
        end += 1; // the glued space and the character after it
    }
    loop {
        while end < n && !is_ws(text[end].cp()) {
            end += 1;
        }
        if !goes_on(text, end, breaks) {
            return end;
        }
        end += 2;
    }
}

/// Whether the span holding the SGPE piece that ends at `end` goes on with the next piece:
/// a space glued to a non-whitespace character follows, and the piece is not whitespace alone
/// and does not end in a break. (A caller walking pieces finds the spans with this.)
#[inline]
pub fn goes_on<U: Unit>(text: &[U], end: usize, breaks: &Breaks) -> bool {
    end > 0
        && end + 1 < text.len()
        && text[end].cp() == 0x20
        && !is_ws(text[end + 1].cp())
        && !is_ws(text[end - 1].cp())
        && !breaks.contains(text[end - 1].cp())
}

/// [`span_end`] on UTF-8 text (`text` valid UTF-8, `pos` at a character's start): the
/// counters cut lines read from files with it, without decoding them to code points first.
/// Whitespace is ASCII, so only the character before a space is decoded (for the breaks).
#[inline]
pub fn span_end_utf8(text: &[u8], pos: usize, breaks: &Breaks) -> usize {
    let ws = |b: u8| is_ws(b.into());
    let n = text.len();
    let mut end = pos + 1;
    if ws(text[pos]) {
        if !(text[pos] == b' ' && end < n && !ws(text[end])) {
            return end;
        }
        end += 1; // the glued space and the first byte after it
    }
    loop {
        end = next_ws(text, end.min(n));
        let goes_on = end + 1 < n
            && text[end] == b' '
            && !ws(text[end + 1])
            && !ws(text[end - 1])
            && !breaks.contains(char_before(text, end));
        if !goes_on {
            return end;
        }
        end += 2;
    }
}

/// The code point of the UTF-8 character that ends at byte `end` (`0 < end`).
#[inline]
fn char_before(text: &[u8], end: usize) -> u32 {
    let mut start = end - 1;
    while start > 0 && end - start < 4 && text[start] & 0xC0 == 0x80 {
        start -= 1;
    }
    let lead = u32::from(text[start]);
    let (mut cp, follow) = match end - start {
        1 => (lead, 0),
        2 => (lead & 0x1F, 1),
        3 => (lead & 0x0F, 2),
        _ => (lead & 0x07, 3),
    };
    for &b in &text[end - follow..end] {
        cp = (cp << 6) | u32::from(b & 0x3F);
    }
    cp
}

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

/// What each distinct piece of a span table becomes in the superword stage, worked out before
/// the word-level engine has run (so that it can run beside it): per group of the piece's
/// tokens, the index of its word type in [`WordCounts::words`] (that word's tokens after the
/// engine), or else each token's string id. Pieces holding `reserved` text are marked.
pub struct PieceItems {
    /// Per piece id: its range of `items`.
    at: Vec<(u32, u32)>,
    has_reserved: Vec<bool>,
    /// [`WORD`] | word index, a string id, or [`UNK`] for a token that is no string.
    items: Vec<u32>,
    /// Whether some reserved text holds whitespace (then it may cross pieces, and a span's
    /// whole text is searched).
    crosses: bool,
    guard: Option<AhoCorasick>,
}

/// Marks a word index among the string ids of [`PieceItems::items`].
const WORD: u32 = 1 << 31;

impl PieceItems {
    /// The items of every piece of `spans` (`scope` and `reserved` as
    /// [`crate::training::collect_words`] grouped them), on `threads` threads.
    pub fn new(
        spans: &SpanTable,
        splitter: &WordSplitter,
        scope: Scope,
        reserved: &[String],
        words: &WordCounts,
        threads: usize,
    ) -> Result<Self, String> {
        if words.words.len() >= (WORD - 1) as usize || words.strings.len() >= WORD as usize {
            return Err("too many word types for the superword stage".into());
        }
        let guard = if reserved.is_empty() {
            None
        } else {
            AhoCorasick::new(reserved).ok()
        };
        let crosses = reserved
            .iter()
            .any(|r| r.bytes().any(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')));
        let reserved_in = |text: &[u8]| guard.as_ref().is_some_and(|ac| ac.is_match(text));
        let pieces = PieceTokens {
            spans,
            splitter,
            scope,
            reserved_in: &reserved_in,
            words,
        };
        // Pieces are independent: ranges of them on `threads` threads, in the order of the
        // ids, so the result is the same.
        let n = spans.num_pieces() as u32;
        let threads = if n < 16_384 { 1 } else { threads.max(1) as u32 };
        let ranges: Vec<std::ops::Range<u32>> = (0..threads)
            .map(|t| n * t / threads..n * (t + 1) / threads)
            .collect();
        let done: Vec<RangeItems> = std::thread::scope(|s| {
            let handles: Vec<_> = ranges[1..]
                .iter()
                .map(|r| {
                    let (r, pieces) = (r.clone(), &pieces);
                    s.spawn(move || pieces.run(r))
                })
                .collect();
            let mut all = vec![pieces.run(ranges[0].clone())];
            all.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().expect("no panic in a piece range")),
            );
            all
        });
        let mut at: Vec<(u32, u32)> = Vec::with_capacity(n as usize);
        let mut has_reserved: Vec<bool> = Vec::with_capacity(n as usize);
        let mut items: Vec<u32> = Vec::with_capacity(done.iter().map(|d| d.2.len()).sum());
        for (part_at, part_reserved, part_items) in done {
            let base = items.len() as u32;
            at.extend(part_at.iter().map(|&(start, len)| (base + start, len)));
            has_reserved.extend(part_reserved);
            items.extend(part_items);
        }
        Ok(Self {
            at,
            has_reserved,
            items,
            crosses,
            guard,
        })
    }
}

/// The superword engine's input: every span of `spans` as the tokens its pieces have after
/// the word-level `engine` (each piece grouped as [`crate::training::collect_words`] grouped
/// it), with the span's count; `pieces` are the pieces' [`PieceItems`] and `symbol_ids` the
/// engine's symbol of each string. The tokens of a span holding reserved text become words of
/// one token each: counted, never merged, so no superword merge can produce such a string.
/// Returns `(data, lengths, counts)` for [`Engine::from_flat`], the spans in the table's order
/// (the engine's result does not depend on the order).
pub fn superword_words(
    spans: &SpanTable,
    pieces: &PieceItems,
    symbol_ids: &[u32],
    engine: &Engine,
) -> (Vec<u32>, Vec<usize>, Vec<u64>) {
    // Each distinct piece's tokens: `tokens[at[id]]`.
    let mut at: Vec<(u32, u32)> = Vec::with_capacity(pieces.at.len());
    let mut tokens: Vec<u32> = Vec::with_capacity(pieces.items.len() + pieces.items.len() / 2);
    for &(start, len) in &pieces.at {
        let first = tokens.len();
        for &item in &pieces.items[start as usize..(start + len) as usize] {
            if item == UNK {
                tokens.push(UNK);
            } else if item & WORD != 0 {
                tokens.extend_from_slice(engine.word((item & !WORD) as usize));
            } else {
                tokens.push(symbol_ids.get(item as usize).copied().unwrap_or(UNK));
            }
        }
        at.push((first as u32, (tokens.len() - first) as u32));
    }
    let reserved_in = |text: &[u8]| pieces.guard.as_ref().is_some_and(|ac| ac.is_match(text));
    let total: usize = (0..spans.len()).map(|j| spans.span(j).0.len()).sum();
    let mut data = Vec::with_capacity(total + total / 8);
    let (mut lengths, mut counts) = (
        Vec::with_capacity(spans.len()),
        Vec::with_capacity(spans.len()),
    );
    let mut seq: Vec<u32> = Vec::new();
    let mut text = Vec::new();
    for j in 0..spans.len() {
        let (ids, count) = spans.span(j);
        seq.clear();
        for &id in ids {
            let (start, len) = at[id as usize];
            seq.extend_from_slice(&tokens[start as usize..(start + len) as usize]);
        }
        let held = if pieces.crosses {
            spans.span_text(j, &mut text);
            reserved_in(&text)
        } else {
            ids.iter().any(|&id| pieces.has_reserved[id as usize])
        };
        if held {
            for &t in &seq {
                data.push(t);
                lengths.push(1);
                counts.push(count);
            }
        } else if !seq.is_empty() {
            data.extend_from_slice(&seq);
            lengths.push(seq.len());
            counts.push(count);
        }
    }
    (data, lengths, counts)
}

/// Of a range of pieces: each one's (start, length) in the items, whether it holds reserved
/// text, and the items.
type RangeItems = (Vec<(u32, u32)>, Vec<bool>, Vec<u32>);

/// What [`PieceItems::new`] needs to find the items of one distinct piece.
struct PieceTokens<'a, R: Fn(&[u8]) -> bool + Sync> {
    spans: &'a SpanTable,
    splitter: &'a WordSplitter,
    scope: Scope,
    reserved_in: &'a R,
    words: &'a WordCounts,
}

impl<R: Fn(&[u8]) -> bool + Sync> PieceTokens<'_, R> {
    /// The [`RangeItems`] of the pieces with ids in `range`.
    fn run(&self, range: std::ops::Range<u32>) -> RangeItems {
        let mut at = Vec::with_capacity(range.len());
        let mut has_reserved = Vec::with_capacity(range.len());
        let mut items: Vec<u32> = Vec::new();
        let (mut units, mut ids) = (Vec::new(), Vec::new());
        let mut parts = Parts::default();
        for id in range {
            let piece = self.spans.piece(id);
            let first = items.len();
            let held = (self.reserved_in)(piece);
            has_reserved.push(held);
            units.clear();
            if decode_wtf8_into(piece, &mut units).is_err() {
                at.push((first as u32, 0)); // not produced by the counters (they write valid WTF-8)
                continue;
            }
            parts.clear();
            self.splitter.split(&units, &mut parts);
            ids.clear();
            let mut start = 0;
            for &e in &parts.ends {
                // Every token was interned when the pieces of these spans were collected.
                ids.push(self.words.strings.lookup(&units[start..e]).unwrap_or(UNK));
                start = e;
            }
            let grouping = if self.scope != Scope::Words && held {
                Scope::Words
            } else {
                self.scope
            };
            for_each_span(
                &parts,
                &units,
                &ids,
                grouping,
                |group, mergeable| match self.words.position(group).filter(|_| mergeable) {
                    Some(w) => items.push(WORD | w),
                    None => items.extend_from_slice(group),
                },
            );
            at.push((first as u32, (items.len() - first) as u32));
        }
        (at, has_reserved, items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends(text: &str, breaks: &str) -> Vec<usize> {
        let text: Vec<u32> = text.chars().map(u32::from).collect();
        let breaks = Breaks::new(breaks.chars().map(u32::from).collect());
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            pos = span_end(&text, pos, &breaks);
            out.push(pos);
        }
        out
    }

    #[test]
    fn spans_of_utf8_end_where_spans_of_code_points_end() {
        // Random texts over whitespace, breaks (ASCII and not) and letters of 1 to 4 bytes.
        let alphabet = [
            " ",
            " ",
            " ",
            "\t",
            "\n",
            "\r",
            ".",
            "।",
            "෴",
            "a",
            "ක",
            "€",
            "😀",
            "ශ්‍රී",
        ];
        let breaks_text = ".।෴";
        let breaks = Breaks::new(breaks_text.chars().map(u32::from).collect());
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..2000 {
            let mut text = String::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            for _ in 0..(state % 40) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            // The same spans, as byte offsets.
            let offsets: Vec<usize> = text
                .char_indices()
                .map(|(i, _)| i)
                .chain([text.len()])
                .collect();
            let want: Vec<usize> = ends(&text, breaks_text)
                .iter()
                .map(|&e| offsets[e])
                .collect();
            let mut got = Vec::new();
            let mut pos = 0;
            while pos < text.len() {
                pos = span_end_utf8(text.as_bytes(), pos, &breaks);
                got.push(pos);
            }
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn spans_stop_at_breaks_and_runs_of_whitespace() {
        // " ab c. d  e\n" -> " ab c." " d" " " " e" "\n"
        assert_eq!(ends(" ab c. d  e\n", "."), [6, 8, 9, 11, 12]);
        assert_eq!(ends("a b c", ""), [5]);
        assert_eq!(ends("a b c", "b"), [3, 5]);
        assert_eq!(ends("  ", ""), [1, 2]);
        assert_eq!(ends("a \tb", ""), [1, 2, 3, 4]);
    }

    fn sorted(c: &Counts) -> Vec<(Vec<u8>, u64)> {
        let mut v: Vec<_> = c.iter().map(|(k, n)| (k.to_vec(), n)).collect();
        v.sort();
        v
    }

    fn span_texts(t: &SpanTable) -> Counts {
        let mut out = Counts::default();
        t.for_each_span(|span, n| out.add(span, n));
        out
    }

    #[test]
    fn span_tables_count_as_text_tables_do() {
        let spans = [
            " ab c.",
            " c",
            " ",
            " ab c.",
            "x y  z",
            " c",
            "\n",
            " ශ්‍රී ලංකාව.",
        ];
        // One table, then the same spans over two tables merged, then the text table.
        let mut one = SpanTable::default();
        let (mut left, mut right) = (SpanTable::default(), SpanTable::default());
        let mut text = Counts::default();
        for (i, span) in spans.iter().enumerate() {
            let n = i as u64 + 1;
            Tally::add(&mut one, span.as_bytes(), n);
            Tally::add(
                if i % 2 == 0 { &mut left } else { &mut right },
                span.as_bytes(),
                n,
            );
            text.add(span.as_bytes(), n);
        }
        left.absorb(right);
        for table in [&one, &left] {
            assert_eq!(table.len(), text.len());
            assert_eq!(table.total(), text.total());
            assert_eq!(sorted(&span_texts(table)), sorted(&text));
            assert_eq!(sorted(&table.pieces()), sorted(&pieces_of(&text)));
        }
        let shipped = SpanTable::from_counts(&text);
        assert_eq!(sorted(&shipped.pieces()), sorted(&pieces_of(&text)));
        let mut again = SpanTable::default();
        again.add_bytes(&one.to_bytes()).unwrap();
        assert_eq!(sorted(&span_texts(&again)), sorted(&text));
    }

    #[test]
    fn span_tables_refuse_counts_past_64_bits() {
        let mut t = SpanTable::default();
        assert!(t.try_add(b" a a", u64::MAX / 2));
        // the span fits (u64::MAX / 2 + 1) but its piece " a" (twice per span) would not
        assert!(!t.try_add(b" a", 2));
        assert!(!t.try_add(b" a a", 1));
        assert!(t.try_add(b" b", u64::MAX));
        assert!(!t.try_add(b" b", 1));
        assert!(t.try_add(b" b", 0));
        assert_eq!(t.pieces().get(b" a"), u64::MAX - 1);
        assert_eq!(t.pieces().get(b" b"), u64::MAX);
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn walking_pieces_finds_the_spans() {
        let alphabet: Vec<u32> = " \t\n.ab".chars().map(u32::from).collect();
        let breaks = Breaks::new(vec![u32::from('.')]);
        let mut seed = 5u64;
        for _ in 0..5000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (seed >> 59) as usize;
            let text: Vec<u32> = (0..len)
                .map(|i| alphabet[((seed >> (i * 2 % 50)) % alphabet.len() as u64) as usize])
                .collect();
            let (mut expected, mut got) = (Vec::new(), Vec::new());
            let mut pos = 0;
            while pos < text.len() {
                pos = span_end(&text, pos, &breaks);
                expected.push(pos);
            }
            let mut pos = 0;
            while pos < text.len() {
                pos = crate::words::piece_end(&text, pos);
                if !goes_on(&text, pos, &breaks) {
                    got.push(pos);
                }
            }
            assert_eq!(got, expected, "{text:?}");
        }
    }

    #[test]
    fn piece_counts_follow_from_span_counts() {
        let mut spans = Counts::default();
        spans.add(" ab c.".as_bytes(), 2);
        spans.add(" c".as_bytes(), 1);
        spans.add(b" ", 4);
        let pieces = pieces_of(&spans);
        assert_eq!(pieces.get(b" ab"), 2);
        assert_eq!(pieces.get(b" c."), 2);
        assert_eq!(pieces.get(b" c"), 1);
        assert_eq!(pieces.get(b" "), 4);
        assert_eq!(pieces.total(), 9);
    }
}
