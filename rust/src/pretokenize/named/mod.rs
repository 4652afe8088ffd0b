//! Hand-written scanners for the named pre-tokenizer regexes (o200k, cl100k, Llama 3, Qwen2, GPT-2).
//!
//! Each scanner answers one question: where does the regex's match that starts at `pos` end? It
//! follows the regex's alternatives in order and reproduces what a backtracking engine would do
//! (the module comments on each alternative say how), so the pieces are exactly those of
//! `regex.findall` in Python and of tiktoken's Rust regex, lookahead `\s+(?!\S)` included, at
//! one pass over the characters instead of a backtracking search. Every named pattern matches
//! at every position, so the pieces cover the text.
//!
//! The regexes themselves are facts from tiktoken, llama.cpp and Hugging Face configs; they are
//! written out in `wwho/bytelevel/pretokenize.py`, and `Named::from_pattern` recognises them by
//! their exact text. Anything else goes to the general regex path.
//!
//! The scanners share one `Scan` of a text: its classes, runs, whitespace and
//! contractions in `scan`, the ASCII runs read eight and sixteen bytes at a time in `ascii`;
//! each regex's alternatives are in a module of its own (`o200k`, `cl100k` for cl100k, Llama 3
//! and Qwen2, `gpt2`). This module holds the regexes' texts and [`Named`].

mod ascii;
mod cl100k;
mod gpt2;
mod o200k;
mod scan;

use super::classes::Classes;
use scan::Scan;

pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);
pub const CL100K: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+",
    r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
);
pub const LLAMA3: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
);
pub const QWEN2: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
);
/// tiktoken's possessive form of GPT-2's regex (r50k).
pub const GPT2: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// GPT-2's regex as Hugging Face's `ByteLevel(use_regex=True)` writes it (splits like `GPT2`).
pub const GPT2_HF: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    O200k,
    Cl100k,
    Llama3,
    Qwen2,
    Gpt2,
}

impl Named {
    pub fn from_pattern(pattern: &str) -> Option<Named> {
        match pattern {
            O200K => Some(Named::O200k),
            CL100K => Some(Named::Cl100k),
            LLAMA3 => Some(Named::Llama3),
            QWEN2 => Some(Named::Qwen2),
            GPT2 | GPT2_HF => Some(Named::Gpt2),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Named::O200k => "o200k",
            Named::Cl100k => "cl100k",
            Named::Llama3 => "llama3",
            Named::Qwen2 => "qwen2",
            Named::Gpt2 => "gpt2",
        }
    }

    /// The end of the match starting at `pos` (< `s.len()`), or None if none starts there.
    #[inline]
    pub fn match_at(self, t: &Classes, s: &[u8], pos: usize) -> Option<usize> {
        let scan = Scan { t, s };
        match self {
            Named::O200k => scan.o200k(pos),
            Named::Cl100k => scan.cl100k(pos, 3, true),
            Named::Llama3 => scan.cl100k(pos, 3, false),
            Named::Qwen2 => scan.cl100k(pos, 1, false),
            Named::Gpt2 => scan.gpt2(pos),
        }
    }
}
