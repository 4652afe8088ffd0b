//! What byte-level encoding, decoding and construction can fail with.

use super::vocab::{bytes_repr, str_repr};
use crate::memory::NoMemory;
use crate::pretokenize::general::RegexError;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The vocabulary is inconsistent (construction only).
    Vocab(String),
    /// A pre-tokenizer regex failed to compile or to run.
    Regex(String),
    /// The text holds a disallowed special token (`offset` in characters).
    Disallowed { token: String, offset: usize },
    /// A byte that no token covers is left after merging, at `offset` (characters) of the
    /// text (None until [`ByteLevel::locate`] has found it).
    NoToken { byte: u8, offset: Option<usize> },
    /// Not special tokens of this vocabulary.
    UnknownSpecial(Vec<String>),
    /// A token id that is not in the vocabulary, at `position` of the input.
    UnknownId { id: u32, position: usize },
    /// Memory for a piece of the text could not be had (see `crate::memory`).
    NoMemory(NoMemory),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Vocab(msg) | Error::Regex(msg) => f.write_str(msg),
            Error::Disallowed { token, offset } => write!(
                f,
                "text contains the special token {} at offset {offset}",
                str_repr(token)
            ),
            Error::NoToken { byte, offset } => {
                write!(f, "byte {}", bytes_repr(&[*byte]))?;
                if let Some(offset) = offset {
                    write!(f, " at offset {offset}")?;
                }
                f.write_str(" has no token in this vocabulary")
            }
            Error::UnknownSpecial(names) => {
                let names: Vec<String> = names.iter().map(|n| str_repr(n)).collect();
                write!(
                    f,
                    "not special tokens of this vocabulary: [{}]",
                    names.join(", ")
                )
            }
            Error::UnknownId { id, position } => {
                write!(
                    f,
                    "token id {id} at position {position} is not in this vocabulary"
                )
            }
            Error::NoMemory(e) => write!(f, "out of memory: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<NoMemory> for Error {
    fn from(e: NoMemory) -> Self {
        Error::NoMemory(e)
    }
}

impl From<RegexError> for Error {
    fn from(e: RegexError) -> Self {
        Error::Regex(e.0)
    }
}
