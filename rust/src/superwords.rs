//! Superword training (`wwho.sgpe.superwords`): the span counts, what each span becomes after
//! the word-level merges, and the second engine that learns the superword merges.
//!
//! The counters cut sentence spans ([`crate::spans`]) into a [`SpanTable`] (each distinct piece
//! once, spans as piece ids, the piece counts kept while counting). The word-level training
//! takes the pieces' counts ([`pieces`]); beside it, a thread merges the counting threads'
//! tables and works out what each piece becomes ([`prepare`], [`PieceItems`]). Once the
//! word-level engine has run, every span becomes the sequence of its pieces' tokens
//! ([`superword_words`]) and [`engine`] builds the superword engine from them, freeing what
//! the stage no longer needs first. The bindings only convert types and release the GIL.
//!
//! This module does not read corpora, choose the budget or assign final ids.

use crate::counting::{absorb, entries_to_bytes, Counts, Tally};
use crate::engine::{Engine, EngineError, UNK};
use crate::training::{for_each_span, WordCounts};
use crate::units::decode_wtf8_into;
use crate::words::{piece_end_utf8, Parts, Scope, WordSplitter};
use aho_corasick::AhoCorasick;
use std::sync::Arc;

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
    ) -> Result<Self, EngineError> {
        if words.words.len() >= (WORD - 1) as usize || words.strings.len() >= WORD as usize {
            return Err(EngineError::TooManyWords);
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
/// With `letters`, a span is cut before each of its pieces that holds no letter, so no
/// superword merge joins such a piece to the one before it. Returns `(data, lengths, counts)`
/// for [`Engine::from_flat`], the spans in the table's order (the engine's result does not
/// depend on the order).
pub fn superword_words(
    spans: &SpanTable,
    pieces: &PieceItems,
    symbol_ids: &[u32],
    engine: &Engine,
    letters: bool,
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
    // Where a piece holds no letter, the span is cut before it (see `Grouping::letters`).
    let joins: Vec<bool> = if letters {
        (0..spans.num_pieces() as u32)
            .map(|id| holds_a_letter(spans.piece(id)))
            .collect()
    } else {
        Vec::new()
    };
    let mut cuts: Vec<usize> = Vec::new();
    for j in 0..spans.len() {
        let (ids, count) = spans.span(j);
        seq.clear();
        cuts.clear();
        for (k, &id) in ids.iter().enumerate() {
            if k > 0 && letters && !joins[id as usize] {
                cuts.push(seq.len());
            }
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
        } else {
            let mut from = 0;
            for &cut in cuts.iter().chain(std::iter::once(&seq.len())) {
                if cut > from {
                    data.extend_from_slice(&seq[from..cut]);
                    lengths.push(cut - from);
                    counts.push(count);
                }
                from = cut;
            }
        }
    }
    (data, lengths, counts)
}

/// Whether a piece holds a letter (Unicode's Alphabetic property): a word, in any script. The
/// text is WTF-8; a byte sequence that is no character is no letter.
fn holds_a_letter(piece: &[u8]) -> bool {
    piece
        .utf8_chunks()
        .any(|chunk| chunk.valid().chars().any(char::is_alphabetic))
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

/// The piece counts of a span counter's tables (one per counting thread), the tables left as
/// they are: merging their spans is left to the superword stage ([`prepare`]), which does it
/// beside the word-level training.
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

/// Where the superword stage's spans come from.
pub enum Spans {
    /// A span counter's tables, one per counting thread.
    Tables(Vec<SpanTable>),
    /// Span texts given as such (e.g. added from shards counted elsewhere).
    Texts(Counts),
}

impl Spans {
    fn into_table(self) -> SpanTable {
        match self {
            Spans::Tables(tables) => merged(tables),
            Spans::Texts(texts) => SpanTable::from_counts(&texts),
        }
    }
}

/// How the word-level training grouped each piece's tokens (`crate::training::collect_words`):
/// the superword stage groups them the same way.
pub struct Grouping<'a> {
    pub splitter: &'a WordSplitter,
    pub scope: Scope,
    /// The special and byte tokens' texts: a piece holding one is grouped as in scope `Words`,
    /// a span holding one is left unmerged.
    pub reserved: &'a [String],
    /// Superwords join only pieces that hold a letter: a piece of punctuation, digits or
    /// symbols after a space (a danda set apart in verse, a verse number) starts a new span.
    /// Such pieces repeat in a training text's formatting and rarely in other text.
    pub letters: bool,
}

/// Why the superword stage failed.
pub enum Failure {
    /// A panic on the thread of [`prepare`] (its payload, for the caller to report).
    Panicked(Box<dyn std::any::Any + Send>),
    /// Too many word types for the stage, or an input the engine refuses.
    Refused(EngineError),
}

/// The merged span table and its pieces' items, being worked out on a thread of its own.
pub struct Preparation(std::thread::JoinHandle<Result<(SpanTable, PieceItems), EngineError>>);

impl Preparation {
    fn join(self) -> Result<(SpanTable, PieceItems), Failure> {
        self.0
            .join()
            .map_err(Failure::Panicked)?
            .map_err(Failure::Refused)
    }
}

/// Start working out, on a thread of its own, what [`engine`] needs before the word-level
/// engine has run: the counting threads' `tables` merged, and what each of their pieces
/// becomes ([`PieceItems`], on that one thread: the word-level training runs beside it).
/// `words` are the word-level training's word types.
pub fn prepare(
    tables: Vec<SpanTable>,
    splitter: WordSplitter,
    scope: Scope,
    reserved: Vec<String>,
    words: Arc<WordCounts>,
) -> Preparation {
    Preparation(std::thread::spawn(move || {
        let table = merged(tables);
        let items = PieceItems::new(&table, &splitter, scope, &reserved, &words, 1)?;
        Ok((table, items))
    }))
}

/// The superword stage's input: prepared beside the word-level training ([`prepare`]), or
/// spans whose pieces' items are worked out by [`engine`] (on up to 8 threads).
pub enum Input {
    Prepared(Preparation),
    Spans(Spans),
}

/// What the word-level training leaves the superword stage; [`engine`] frees it.
pub struct WordLevel<'a> {
    /// The word types (left empty).
    pub words: &'a mut Arc<WordCounts>,
    /// String id -> symbol id of the word-level engine's input (left empty).
    pub symbol_ids: &'a mut Vec<u32>,
    /// The trained word-level engine: its words are released, its symbols and merges stay.
    pub engine: &'a mut Engine,
}

/// The superword stage's engine: every span of `input` as the tokens the word-level engine
/// left its pieces ([`superword_words`]), with the span's count; its symbols are the
/// word-level engine's. What the stage no longer needs (the span table, the pieces' items,
/// `level`'s word types and the first engine's words) is freed, and the allocator's free
/// pages handed back, before the new engine counts its pairs. `min_freq`: the least frequency
/// the new engine will be asked to merge; rarer pairs are left out of its index
/// ([`Engine::from_flat_forgetting`]; the results are the same).
pub fn engine(
    input: Input,
    grouping: &Grouping<'_>,
    level: WordLevel<'_>,
    min_freq: u64,
) -> Result<Engine, Failure> {
    let (table, items) = match input {
        Input::Prepared(preparation) => preparation.join()?,
        Input::Spans(spans) => {
            let table = spans.into_table();
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
            let items = PieceItems::new(
                &table,
                grouping.splitter,
                grouping.scope,
                grouping.reserved,
                level.words,
                threads,
            )
            .map_err(Failure::Refused)?;
            (table, items)
        }
    };
    let first = level.engine;
    let (data, lengths, counts) =
        superword_words(&table, &items, level.symbol_ids, first, grouping.letters);
    let symbols = first.symbols().to_vec();
    drop(table);
    drop(items);
    *level.words = Arc::new(WordCounts::default());
    *level.symbol_ids = Vec::new();
    first.release_words();
    #[cfg(target_os = "linux")]
    crate::alloc::trim();
    Engine::from_flat_forgetting(data, &lengths, counts, symbols, false, min_freq)
        .map_err(Failure::Refused)
}

#[cfg(test)]
mod tests {
    use super::*;

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
