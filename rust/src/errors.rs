//! The SGPE side's errors: what is wrong with a schema's tables or with a vocabulary.
//!
//! Each enum names one `wwho.errors` class, which `py::errors` raises it as, with the message
//! its `Display` gives. They live here, in a module that uses no other, because the modules
//! that report them sit at every layer (`charset` under `schema`, `vocab` under `sgpe`):
//! defined in one of those, they would make a module cycle. Errors of one module stay in it
//! (`counting::CountError`, `engine::EngineError`, `bytelevel::Error`, `meta::Error`).

use std::fmt;

/// The most states a syllable automaton holds (its table keeps a state's index in 14 bits).
pub const MAX_STATES: usize = 0x3FFF;

/// A script schema's tables are malformed (`wwho.errors.SchemaError`): ranges, classes and
/// states as Python compiled them (`wwho.schema`), grapheme properties, scripts to route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemaError {
    /// `first..=last` is empty or passes U+10FFFF.
    Range { first: u32, last: u32 },
    /// More character classes than an automaton holds.
    Classes(usize),
    /// No states, or more than an automaton holds.
    States(usize),
    /// Code point `cp` is in two classes.
    Overlap { cp: u32, first: u8, second: u8 },
    /// The start state is not a state.
    Start(usize),
    /// An accept state is not a state.
    Accept(usize),
    /// An emit state is not a state.
    Emit(usize),
    /// An emit state that does not accept.
    EmitNotAccepting(usize),
    /// The start state accepts.
    StartAccepts,
    /// An edge of `state` names a class or target that does not exist.
    Edge {
        state: usize,
        class: usize,
        target: usize,
    },
    /// A grapheme property value that is no break value.
    GraphemeValue(u8),
    /// Two break values for the code points of `first..=last`.
    GraphemeBreaks { first: u32, last: u32 },
    /// More scripts than the router tells apart.
    Scripts(usize),
    /// A single-script splitter without exactly one automaton, or a routed one without any.
    Automata,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SchemaError::Range { first, last } => {
                write!(f, "invalid code point range U+{first:04X}..U+{last:04X}")
            }
            SchemaError::Classes(n) => write!(f, "{n} classes: at most 254 are supported"),
            SchemaError::States(n) => {
                write!(f, "{n} states: between 1 and {} are supported", MAX_STATES)
            }
            SchemaError::Overlap { cp, first, second } => {
                write!(f, "U+{cp:04X} is in class {first} and class {second}")
            }
            SchemaError::Start(s) => write!(f, "start state {s} is out of range"),
            SchemaError::Accept(s) => write!(f, "accept state {s} is out of range"),
            SchemaError::Emit(s) => write!(f, "emit state {s} is out of range"),
            SchemaError::EmitNotAccepting(s) => write!(f, "emit state {s} does not accept"),
            SchemaError::StartAccepts => f.write_str("the start state must not accept"),
            SchemaError::Edge {
                state,
                class,
                target,
            } => write!(f, "state {state}: edge ({class}, {target}) is out of range"),
            SchemaError::GraphemeValue(v) => write!(f, "invalid grapheme property value {v:#04x}"),
            SchemaError::GraphemeBreaks { first, last } => write!(
                f,
                "U+{first:04X}..U+{last:04X}: two grapheme break values for one code point"
            ),
            SchemaError::Scripts(_) => f.write_str("at most 254 scripts can be routed"),
            SchemaError::Automata => f.write_str(
                "a single-script splitter takes one automaton, a routed one at least one",
            ),
        }
    }
}

impl std::error::Error for SchemaError {}

/// A vocabulary is inconsistent (`wwho.errors.VocabError`): an SGPE vocabulary and its merges,
/// its merge scope, or the meta tokenizer's unified vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VocabError {
    /// More tokens or code points than 32-bit offsets address.
    TooLarge,
    /// Two ids with one string.
    SameString { first: u32, second: usize },
    /// A `what` id (merge, byte token, `[UNK]`, special token) outside the vocabulary.
    Id {
        what: &'static str,
        id: u32,
        size: usize,
    },
    /// Merge `rank`'s token `joined` is not tokens `left` and `right` joined.
    NotJoined {
        rank: usize,
        left: u32,
        right: u32,
        joined: u32,
    },
    /// A merge scope that does not exist.
    Scope(String),
    /// The building merges do not rebuild this token (code points).
    NotRebuilt(Vec<u32>),
    /// The meta tokenizer's SGPE ids start below the byte-level part's vocabulary size.
    Offset { offset: u32, n_vocab: u64 },
    /// The meta tokenizer's ids pass 32 bits.
    Unified,
    /// A special token of the meta tokenizer with no text.
    EmptySpecial(u32),
    /// A special token id of the meta tokenizer at or past `size`.
    SpecialId { id: u32, size: u64 },
    /// A default special of the meta tokenizer that is no special token.
    DefaultSpecial(usize),
}

impl fmt::Display for VocabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VocabError::TooLarge => f.write_str("the vocabulary is too large"),
            VocabError::SameString { first, second } => {
                write!(f, "ids {first} and {second} have the same string")
            }
            VocabError::Id { what, id, size } => {
                write!(f, "{what} id {id} is not below the vocabulary size {size}")
            }
            VocabError::NotJoined {
                rank,
                left,
                right,
                joined,
            } => write!(
                f,
                "merge {rank}: token {joined} is not tokens {left} and {right} joined"
            ),
            VocabError::Scope(name) => write!(f, "unknown merge scope {name:?}"),
            VocabError::NotRebuilt(token) => {
                write!(f, "building merges do not rebuild the token {token:?}")
            }
            VocabError::Offset { offset, n_vocab } => write!(
                f,
                "offset {offset} is below the byte-level part's n_vocab {n_vocab}"
            ),
            VocabError::Unified => f.write_str("the unified vocabulary does not fit 32-bit ids"),
            VocabError::EmptySpecial(id) => write!(f, "special token {id} has no text"),
            VocabError::SpecialId { id, size } => {
                write!(f, "special token id {id} is not below {size}")
            }
            VocabError::DefaultSpecial(i) => {
                write!(f, "default special {i} is not a special token")
            }
        }
    }
}

impl std::error::Error for VocabError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_place() {
        let range = SchemaError::Range {
            first: 0x0D9A,
            last: 0x110000,
        };
        assert_eq!(
            range.to_string(),
            "invalid code point range U+0D9A..U+110000"
        );
        assert_eq!(
            SchemaError::States(0).to_string(),
            "0 states: between 1 and 16383 are supported"
        );
        assert_eq!(
            SchemaError::GraphemeValue(0x0F).to_string(),
            "invalid grapheme property value 0x0f"
        );
        let id = VocabError::Id {
            what: "merge",
            id: 7,
            size: 5,
        };
        assert_eq!(
            id.to_string(),
            "merge id 7 is not below the vocabulary size 5"
        );
        assert_eq!(
            VocabError::Scope("word".into()).to_string(),
            "unknown merge scope \"word\""
        );
    }
}
