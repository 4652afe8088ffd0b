//! What each distinct piece of a span table becomes after the word-level merges
//! ([`PieceItems`], worked out before that engine has run, on threads), and every span as the
//! tokens of its pieces, the superword engine's input ([`superword_words`]). It does not count
//! spans or run an engine.

use super::SpanTable;
use crate::engine::{Engine, EngineError, UNK};
use crate::training::{for_each_span, WordCounts};
use crate::units::decode_wtf8_into;
use crate::words::{Parts, Scope, WordSplitter};
use aho_corasick::AhoCorasick;

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
