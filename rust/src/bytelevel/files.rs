//! The core's part of the byte-level files (`wwho.bytelevel.files` reads and writes the rest):
//! `.tiktoken` ranks files, one `<base64 token bytes> <rank>` per line (OpenAI's format).
//!
//! Parsing o200k's file in Python (base64 per line) is most of the cost of building a
//! tokenizer; here it is one pass. The checks and messages are those of the Python reader
//! (`wwho.bytelevel.files.read_tiktoken_ranks`): line numbers are 1-based, blank lines skipped.

use super::vocab::bytes_repr;
use crate::memory::{self, NoMemory};
use rustc_hash::FxHashMap;

/// Python's `bytes.isspace()` for one byte.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C)
}

/// Why a ranks file was refused: the 1-based line and what is wrong with it (the caller adds
/// the file name). `shown` fields hold the line's start as Python shows bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TiktokenError {
    /// Not two fields.
    Fields { line: usize, shown: String },
    /// A token that is not strict base64, or a rank that is not a number.
    Syntax { line: usize, shown: String },
    /// A token of no bytes.
    EmptyToken { line: usize, shown: String },
    /// A rank above the largest id.
    RankTooLarge { line: usize, rank: u64 },
    /// A rank that an earlier line (`first`) has.
    RankTwice {
        line: usize,
        rank: u64,
        first: usize,
    },
    /// A token that an earlier line has (`shown`: the token's bytes).
    TokenTwice { line: usize, shown: String },
    /// No line holds a token.
    NoTokens,
    /// Memory for the tokens read so far could not be had (the file is large, or the
    /// process's memory limit low).
    NoMemory(NoMemory),
}

impl std::fmt::Display for TiktokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TiktokenError::Fields { line, shown } => {
                write!(f, "{line}: expected '<base64 token> <rank>', got {shown}")
            }
            TiktokenError::Syntax { line, shown } => {
                write!(f, "{line}: bad base64 token or rank in {shown}")
            }
            TiktokenError::EmptyToken { line, shown } => {
                write!(f, "{line}: empty token in {shown}")
            }
            TiktokenError::RankTooLarge { line, rank } => {
                write!(f, "{line}: rank {rank} is too large")
            }
            TiktokenError::RankTwice { line, rank, first } => {
                write!(f, "{line}: rank {rank} also used on line {first}")
            }
            TiktokenError::TokenTwice { line, shown } => {
                write!(f, "{line}: token {shown} appears twice")
            }
            TiktokenError::NoTokens => f.write_str("no tokens in ranks file"),
            TiktokenError::NoMemory(e) => write!(f, "out of memory: {e}"),
        }
    }
}

impl std::error::Error for TiktokenError {}

/// The most entries [`parse_tiktoken`] reserves room for before it reads them.
const RESERVED_LINES: usize = 1 << 20;

/// (token bytes, rank) in file order.
pub fn parse_tiktoken(data: &[u8]) -> Result<Vec<(Vec<u8>, u32)>, TiktokenError> {
    // Room for a line per 12 bytes (o200k_base's average is longer), but never more up front than
    // a large vocabulary needs: a file of a gigabyte of blank lines reserved gigabytes before it
    // read one, and the process aborted where the allocation failed.
    // Each growth is asked for, so that a low memory limit is an error, not an abort.
    let room = (data.len() / 12).min(RESERVED_LINES);
    let mut out = Vec::new();
    let mut lines = Vec::new();
    memory::reserve(&mut out, room).map_err(TiktokenError::NoMemory)?;
    memory::reserve(&mut lines, room).map_err(TiktokenError::NoMemory)?;
    let mut seen_ranks: FxHashMap<u64, usize> = FxHashMap::default();
    for (n, raw) in split_lines(data).enumerate() {
        let line = n + 1;
        if trim(raw).is_empty() {
            continue;
        }
        let shown = || bytes_repr(&raw[..raw.len().min(60)]);
        let mut fields = raw.split(|&b| is_space(b)).filter(|f| !f.is_empty());
        let (Some(token), Some(rank), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(TiktokenError::Fields {
                line,
                shown: shown(),
            });
        };
        let bad = || TiktokenError::Syntax {
            line,
            shown: shown(),
        };
        // (a token is as long as its line: its room is asked for, as the lines' is)
        let mut bytes = Vec::new();
        memory::reserve(&mut bytes, token.len() / 4 * 3).map_err(TiktokenError::NoMemory)?;
        let token = decode_base64(token, bytes).ok_or_else(bad)?;
        let rank = parse_rank(rank).ok_or_else(bad)?;
        if token.is_empty() {
            return Err(TiktokenError::EmptyToken {
                line,
                shown: shown(),
            });
        }
        if rank > u64::from(super::MAX_ID) {
            return Err(TiktokenError::RankTooLarge { line, rank });
        }
        // (a full map doubles: about as many entries again as it holds)
        let more = seen_ranks.len().max(1);
        seen_ranks
            .try_reserve(1)
            .map_err(|_| TiktokenError::NoMemory(NoMemory::of::<(u64, usize)>(more)))?;
        if let Some(first) = seen_ranks.insert(rank, line) {
            return Err(TiktokenError::RankTwice { line, rank, first });
        }
        memory::push(&mut out, (token, rank as u32)).map_err(TiktokenError::NoMemory)?;
        memory::push(&mut lines, line).map_err(TiktokenError::NoMemory)?;
    }
    let mut seen_tokens: FxHashMap<&[u8], ()> = FxHashMap::default();
    seen_tokens
        .try_reserve(out.len())
        .map_err(|_| TiktokenError::NoMemory(NoMemory::of::<&[u8]>(out.len())))?;
    for ((token, _), &line) in out.iter().zip(&lines) {
        if seen_tokens.insert(token.as_slice(), ()).is_some() {
            return Err(TiktokenError::TokenTwice {
                line,
                shown: bytes_repr(token),
            });
        }
    }
    if out.is_empty() {
        return Err(TiktokenError::NoTokens);
    }
    Ok(out)
}

fn split_lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    // Python's bytes.splitlines(): \n, \r\n and \r end lines.
    let mut rest = data;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.iter().position(|&b| b == b'\n' || b == b'\r');
        let (line, next) = match end {
            None => (rest, &rest[rest.len()..]),
            Some(i) => {
                let skip = if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                (&rest[..i], &rest[i + skip..])
            }
        };
        rest = next;
        Some(line)
    })
}

fn trim(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|&b| !is_space(b))
        .unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|&b| !is_space(b))
        .map_or(start, |i| i + 1);
    &line[start..end]
}

/// A rank: ASCII digits only (what `str.isdigit()` accepts of ASCII; no sign, no `_`).
fn parse_rank(field: &[u8]) -> Option<u64> {
    if field.is_empty() || !field.iter().all(u8::is_ascii_digit) {
        return None;
    }
    field.iter().try_fold(0u64, |acc, &d| {
        acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// Strict standard base64 (as Python's `b64decode(validate=True)`): padding required.
/// Written to `out` (empty, its room reserved by the caller).
fn decode_base64(s: &[u8], mut out: Vec<u8>) -> Option<Vec<u8>> {
    if s.len() % 4 != 0 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let chunks = s.len() / 4;
    for (k, chunk) in s.chunks_exact(4).enumerate() {
        let last = k + 1 == chunks;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut acc = 0u32;
        for &c in &chunk[..4 - pad] {
            acc = (acc << 6) | value(c)?;
        }
        acc <<= 6 * pad as u32;
        let bytes = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_like_python() {
        let ok = parse_tiktoken(b"YQ== 0\r\nYWI= 1\n\n  Yg== 2  \n").unwrap();
        assert_eq!(
            ok,
            vec![(b"a".to_vec(), 0), (b"ab".to_vec(), 1), (b"b".to_vec(), 2)]
        );
        let cases: [(&[u8], &str); 9] = [
            (b"YQ== 0\n!!!! 1\n", "2: bad base64"),
            (b"YQ== 0\nYg==\n", "2: expected"),
            (b"YQ== 0\nYg== one\n", "2: bad base64 token or rank"),
            (b"YQ== 0\nYQ== 1\n", "2: token b'a' appears twice"),
            (b"YQ== 0\nYg== 0\n", "2: rank 0 also used on line 1"),
            (b"YQ== -3\n", "1: bad base64 token or rank"),
            (b"YQ== 1_0\n", "1: bad base64 token or rank"),
            (b"= 3\n", "1: bad base64 token or rank"),
            (b"\n\n", "no tokens"),
        ];
        for (data, want) in cases {
            let err = parse_tiktoken(data).unwrap_err().to_string();
            assert!(err.starts_with(want), "{err} vs {want}");
        }
        assert_eq!(decode_base64(b"/w==", Vec::new()), Some(vec![255]));
        assert_eq!(decode_base64(b"YQ", Vec::new()), None);
        assert_eq!(decode_base64(b"YQ==YQ==", Vec::new()), None);
    }
}
