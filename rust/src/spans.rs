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
//! The counters cut spans with [`span_end`] and [`span_end_utf8`], the encoder with
//! [`goes_on`]; what training does with the span counts is `crate::superwords`'.
//!
//! The break characters are data from Python (sentence punctuation); this module does not know
//! scripts, vocabularies, merges or counts.

use crate::charset::{is_ws, CharSet};
use crate::units::Unit;
use crate::words::next_ws;

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
}
