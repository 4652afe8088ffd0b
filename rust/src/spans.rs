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
//! The break characters are data from Python (sentence punctuation); this module does not know
//! scripts, vocabularies or merges.

use crate::charset::{is_ws, CharSet};
use crate::count::{piece_end_utf8, Counts};
use crate::engine::{Engine, UNK};
use crate::sgpe::Scope;
use crate::training::{for_each_span, Positions, WordCounts};
use crate::units::{decode_wtf8_into, Unit};
use crate::words::{Parts, WordSplitter};
use aho_corasick::AhoCorasick;
use rustc_hash::FxHashMap;

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

/// The superword engine's input: every span of the corpus as the tokens its pieces have after
/// the word-level `engine` (each piece grouped as [`crate::training::collect_words`] grouped
/// it: `scope`, and scope `Words` for a piece holding `reserved` text), with the span's count.
/// The tokens of a span holding `reserved` text become words of one token each: counted, never
/// merged, so no superword merge can produce such a string. Returns `(data, lengths, counts)`
/// for [`Engine::from_flat`].
pub fn superword_words(
    spans: &Counts,
    splitter: &WordSplitter,
    scope: Scope,
    reserved: &[String],
    words: &WordCounts,
    positions: &Positions,
    engine: &Engine,
) -> (Vec<u32>, Vec<usize>, Vec<u64>) {
    let guard = if reserved.is_empty() {
        None
    } else {
        AhoCorasick::new(reserved).ok()
    };
    let reserved_in = |text: &[u8]| guard.as_ref().is_some_and(|ac| ac.is_match(text));
    let symbol = |s: u32| positions.symbols.get(&s).copied().unwrap_or(UNK);
    let (mut data, mut lengths, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    let (mut units, mut ids, mut seq) = (Vec::new(), Vec::new(), Vec::new());
    let mut parts = Parts::default();
    // Each distinct piece's tokens once (a corpus has far fewer distinct pieces than spans).
    let mut known: FxHashMap<&[u8], (u32, u32)> = FxHashMap::default();
    let mut tokens: Vec<u32> = Vec::new();
    for (span, count) in spans.iter() {
        seq.clear();
        let mut pos = 0;
        while pos < span.len() {
            let end = piece_end_utf8(span, pos);
            let piece = &span[pos..end];
            pos = end;
            if let Some(&(start, len)) = known.get(piece) {
                seq.extend_from_slice(&tokens[start as usize..(start + len) as usize]);
                continue;
            }
            units.clear();
            if decode_wtf8_into(piece, &mut units).is_err() {
                continue; // not produced by the counters (they write valid WTF-8)
            }
            parts.clear();
            splitter.split(&units, &mut parts);
            ids.clear();
            let mut start = 0;
            for &e in &parts.ends {
                // Every token was interned when the pieces of these spans were collected.
                ids.push(words.strings.lookup(&units[start..e]).unwrap_or(UNK));
                start = e;
            }
            let grouping = if scope != Scope::Words && reserved_in(piece) {
                Scope::Words
            } else {
                scope
            };
            let first = tokens.len();
            for_each_span(
                &parts,
                &units,
                &ids,
                grouping,
                |group, mergeable| match positions.words.get(group).filter(|_| mergeable) {
                    Some(&w) => tokens.extend_from_slice(engine.word(w as usize)),
                    None => tokens.extend(group.iter().map(|&s| symbol(s))),
                },
            );
            known.insert(piece, (first as u32, (tokens.len() - first) as u32));
            seq.extend_from_slice(&tokens[first..]);
        }
        if reserved_in(span) {
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
    fn spans_stop_at_breaks_and_runs_of_whitespace() {
        // " ab c. d  e\n" -> " ab c." " d" " " " e" "\n"
        assert_eq!(ends(" ab c. d  e\n", "."), [6, 8, 9, 11, 12]);
        assert_eq!(ends("a b c", ""), [5]);
        assert_eq!(ends("a b c", "b"), [3, 5]);
        assert_eq!(ends("  ", ""), [1, 2]);
        assert_eq!(ends("a \tb", ""), [1, 2, 3, 4]);
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
