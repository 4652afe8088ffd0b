//! Counting a corpus: documents -> SGPE piece frequencies (`wwho.counting.PIECES`).
//!
//! A piece is a whitespace-free chunk with the one space before it, or one whitespace
//! character (` ?[^ \t\n\r]+|[ \t\n\r]`). The whitespace is ASCII, so pieces are cut straight
//! from UTF-8 bytes, and a piece is counted by its UTF-8 bytes (lone surrogates from Python in
//! their 3-byte form). Counts are 64-bit.
//!
//! Plain-text files are read here, in blocks cut at line ends, each block's lines shared among
//! threads that keep one count table each (merged once at the end). A document is a line
//! without its line end (trailing `\r` and `\n` removed); empty lines are no documents; a line
//! that is not UTF-8 is an error naming `file:line` and the byte, or is skipped and counted.
//! Other formats (JSONL, compressed) are read by `wwho.corpus` and their documents handed over
//! as text. With a router, only each document's script runs are counted (with their leading
//! space): the meta tokenizer's SGPE part. Counting adds to a [`Tally`]: piece counts
//! ([`Counts`]) or, for superword spans, a [`crate::superwords::SpanTable`]. This module knows
//! nothing of syllables.
//!
//! The count table and its byte format are in `table`, the reading of plain-text files in
//! `files`; this module holds what counting adds to ([`Tally`]), how a document is cut into
//! pieces or spans, and why counting stops ([`CountError`]).

use crate::router::{Router, Run};
use crate::spans::{span_end, Breaks};
use crate::units::{push_utf8, Unit};
use crate::words::piece_end_utf8;

mod files;
mod table;

pub use files::{count_files, FileOptions, Stats};
pub use table::{absorb, entries_to_bytes, for_each_entry, Counts};

/// What counting adds to: piece counts ([`Counts`]) or span counts held as piece ids
/// ([`crate::superwords::SpanTable`]). `key` is a piece or span, UTF-8 (WTF-8 for lone surrogates).
pub trait Tally: Default + Send {
    fn add(&mut self, key: &[u8], n: u64);

    /// [`Tally::add`] unless a count would pass `u64::MAX` (then `false`).
    fn try_add(&mut self, key: &[u8], n: u64) -> bool;

    /// Add every count of a [`Counts::to_bytes`] buffer (piece or span texts). On an error
    /// nothing may be assumed about what was added.
    fn add_bytes(&mut self, data: &[u8]) -> Result<(), CountError> {
        for_each_entry(data, |key, n| {
            if self.try_add(key, n) {
                Ok(())
            } else {
                Err(CountError::Overflow(key.to_vec()))
            }
        })
    }
}

/// Count the pieces of UTF-8 `text` into `counts`.
pub fn count_utf8(text: &[u8], counts: &mut impl Tally) {
    let mut pos = 0;
    while pos < text.len() {
        let end = piece_end_utf8(text, pos);
        counts.add(&text[pos..end], 1);
        pos = end;
    }
}

/// Count the pieces of a text given as code points (`buf` is scratch space).
pub fn count_units<U: Unit>(text: &[U], counts: &mut impl Tally, buf: &mut Vec<u8>) {
    let mut pos = 0;
    while pos < text.len() {
        let end = crate::words::piece_end(text, pos);
        buf.clear();
        for &u in &text[pos..end] {
            push_utf8(u.cp(), buf);
        }
        counts.add(buf, 1);
        pos = end;
    }
}

/// How a document is cut for counting: SGPE pieces (the default) or superword spans
/// ([`crate::spans`]), each with or without the dummy space before the document.
#[derive(Clone, Debug, Default)]
pub struct Cut {
    pub prefix_space: bool,
    pub spans: Option<Breaks>,
}

impl Cut {
    fn is_plain(&self) -> bool {
        !self.prefix_space && self.spans.is_none()
    }
}

/// Count the pieces or spans of `text` as `cut` says, the dummy space left to the caller.
fn count_cut_units<U: Unit>(
    text: &[U],
    spans: Option<&Breaks>,
    counts: &mut impl Tally,
    buf: &mut Vec<u8>,
) {
    let Some(breaks) = spans else {
        return count_units(text, counts, buf);
    };
    let mut pos = 0;
    while pos < text.len() {
        let end = span_end(text, pos, breaks);
        buf.clear();
        for &u in &text[pos..end] {
            push_utf8(u.cp(), buf);
        }
        counts.add(buf, 1);
        pos = end;
    }
}

/// Count one text as `cut` says.
fn count_cut<U: Unit>(text: &[U], cut: &Cut, counts: &mut impl Tally, buf: &mut Vec<u8>) {
    if cut.prefix_space && !text.is_empty() {
        let prefixed: Vec<u32> = std::iter::once(0x20)
            .chain(text.iter().map(|u| u.cp()))
            .collect();
        return count_cut_units(&prefixed, cut.spans.as_ref(), counts, buf);
    }
    count_cut_units(text, cut.spans.as_ref(), counts, buf)
}

/// Count `text`, or with a router only its script runs (each with its leading space), cut
/// as `cut` says.
pub fn count_document<U: Unit>(
    text: &[U],
    router: Option<&Router>,
    cut: &Cut,
    counts: &mut impl Tally,
    buf: &mut Vec<u8>,
) {
    let Some(router) = router else {
        return count_cut(text, cut, counts, buf);
    };
    let mut runs: Vec<Run> = Vec::new();
    router.segment(text, &mut runs);
    for run in runs.iter().filter(|r| r.script.is_some()) {
        count_cut(&text[run.start..run.end], cut, counts, buf);
    }
}

/// Why counting stopped: a file that cannot be read or counted, or a count buffer that cannot
/// be added (`wwho.errors.CorpusError`, except `Memory`: a `MemoryError`).
#[derive(Debug, PartialEq, Eq)]
pub enum CountError {
    /// `file:line: what` (a line that is not UTF-8, without `skip_bad_lines`).
    BadLine(String),
    /// `file: what` (cannot open or read).
    Io(String),
    /// `file:line: what` (the memory for a block or a long line could not be had).
    Memory(String),
    /// The progress callback stopped the work, with this message.
    Stopped(String),
    /// A buffer that does not start as [`Counts::to_bytes`] makes it.
    NoHeader,
    /// A buffer that ends inside an entry.
    Truncated,
    /// A buffer holding a piece that is not text (UTF-8, WTF-8 for lone surrogates).
    NotText,
    /// The count of this key (UTF-8, WTF-8 for lone surrogates) would pass `u64::MAX`.
    Overflow(Vec<u8>),
}

impl std::fmt::Display for CountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CountError::BadLine(m)
            | CountError::Io(m)
            | CountError::Memory(m)
            | CountError::Stopped(m) => f.write_str(m),
            CountError::NoHeader => f.write_str("not a piece-count buffer (no header)"),
            CountError::Truncated => f.write_str("a truncated piece-count buffer"),
            CountError::NotText => {
                f.write_str("a piece-count buffer holding a piece that is not UTF-8 text")
            }
            CountError::Overflow(key) => write!(
                f,
                "the count of {:?} passes 2**64 - 1",
                String::from_utf8_lossy(key)
            ),
        }
    }
}

impl std::error::Error for CountError {}
#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn sorted(c: &Counts) -> Vec<(String, u64)> {
        let mut v: Vec<_> = c
            .iter()
            .map(|(k, n)| (String::from_utf8_lossy(k).into_owned(), n))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn pieces_from_bytes_and_from_code_points_agree() {
        let text = " ශ්‍රී ලංකාව  a\tb\r\n x ";
        let mut a = Counts::default();
        count_utf8(text.as_bytes(), &mut a);
        let mut b = Counts::default();
        let cps: Vec<u32> = text.chars().map(u32::from).collect();
        count_units(&cps, &mut b, &mut Vec::new());
        assert_eq!(sorted(&a), sorted(&b));
        assert_eq!(a.get(" ලංකාව".as_bytes()), 1);
        assert_eq!(a.get(b" "), 2);
        assert_eq!(a.get(b" x"), 1);
        assert_eq!(a.get(b"absent"), 0);
    }
}
