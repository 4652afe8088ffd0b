//! Byte-level BPE (tiktoken, GPT-2, Llama 3, Qwen2 ...): encode and decode.
//!
//! A [`ByteLevel`] is a vocabulary of byte strings (`ranks`: token bytes -> id), a
//! [`Pretokenizer`], special and added tokens, and one of two merge rules, both applied by
//! [`crate::merge`] (lowest rank first, leftmost on ties):
//!
//! * **ranks** (tiktoken): two adjacent parts merge if their concatenation is a token, the
//!   token's id being the rank; a piece that is itself a token is emitted whole.
//! * **merges** (Hugging Face `tokenizer.json`, GGUF): only the listed pairs merge, in list
//!   order; a whole-piece lookup comes first only with `ignore_merges` (Llama 3).
//!
//! A byte with no token of its own still takes part in merges (a pseudo id stands for it), and
//! is an error only if it is left over. Pieces needing merges are remembered in a byte-bounded
//! cache ([`cache`]). Everything here is `Sync`: one tokenizer serves many threads. This module
//! reads no files and knows no Python.

pub mod cache;
mod characters;
pub mod files;
pub mod gguf;
mod memo;
mod mid;
mod ranks;
mod runs;
mod short;
pub mod specials;
pub mod table;
#[cfg(test)]
pub(crate) mod testing;
mod two_byte;
pub mod vocab;
mod whitespace;

use crate::memory::{self, NoMemory};
use crate::merge::{try_merge_with, Merge, PairTable, Pairs};
use crate::pretokenize::general::RegexError;
use crate::pretokenize::{Pieces, Pretokenizer};
use cache::{Bypass, PieceCache};
use specials::{SpecialSet, Specials};
use std::fmt;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};
use table::{Packed, TokenTable, PACKED};
use vocab::{bytes_repr, str_repr, Vocab};

/// Ids at or above this are pseudo ids of bytes that have no token.
const PSEUDO: u32 = u32::MAX - 255;
/// Largest token id a vocabulary may use.
pub const MAX_ID: u32 = PSEUDO - 1;

/// Units of one piece from which they are handed over to the text's ids rather than copied.
const LONG_UNITS: usize = 1 << 16;

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

/// What a byte-level tokenizer is made of (borrowed: the caller keeps the data).
#[derive(Default)]
pub struct Model<'a> {
    pub ranks: Vec<(&'a [u8], u32)>,
    /// The merges rule's ordered pairs; None for the ranks rule.
    pub merges: Option<Vec<(&'a [u8], &'a [u8])>>,
    pub ignore_merges: bool,
    pub special_tokens: Vec<(&'a str, u32)>,
    pub added_tokens: Vec<(&'a str, u32)>,
    /// Tokens that decode but are never produced by encoding.
    pub extra_tokens: Vec<(u32, &'a [u8])>,
    pub patterns: Vec<&'a str>,
    pub byte_patterns: Vec<&'a str>,
    /// Piece-cache budget in bytes (0: no cache).
    pub cache_bytes: usize,
}

enum Rule {
    Ranks,
    Merges(PairTable),
}

pub struct ByteLevel {
    /// The token of every two-byte string, or NO_TOKEN (256 kB): the ranks rule's first merges
    /// of every piece ask about byte pairs, and both rules' long-piece cuts.
    byte_pairs: Vec<u32>,
    /// Merges rule: the token a two-byte piece becomes, or NO_TOKEN (256 kB; see `new`).
    two_bytes: Vec<u32>,
    /// Merges rule: the merge of every pair of ids below 256 (see [`SmallPairs`]).
    small_pairs: Vec<u64>,
    /// Bit `a << 16 | b << 8 | c` is set if the bytes `a b c` occur in some token (2 MB):
    /// where a long piece may be cut (see [`ranks`]).
    windows: crate::huge::HugeSlice<u64>,
    /// Bit [`ranks::window4_bit`] of every four bytes that occur in some token (2 MB, hashed:
    /// a collision only keeps a long piece from being cut somewhere it could have been).
    windows4: crate::huge::HugeSlice<u64>,
    /// Ranks rule: the merges of every three-byte character alone, so that a word of such
    /// characters starts merged (see [`characters`]).
    characters: Option<characters::Characters>,
    /// Ranks rule: the bounds below which a two-byte character's bytes merge first, so that a
    /// piece of such characters starts merged (see [`two_byte`]).
    two_byte: Option<two_byte::TwoByte>,
    /// `run_tokens[b][k]` is the token of byte `b` repeated `k` times (k >= 2), or NO_TOKEN
    /// (see [`runs`]); empty for bytes with no such token.
    run_tokens: Vec<Vec<u32>>,
    encoder: TokenTable,
    vocab: Vocab,
    /// Initial unit of each byte: its token's id, or a pseudo id.
    byte_units: [u32; 256],
    rule: Rule,
    whole_piece_first: bool,
    specials: Specials,
    pretokenizer: Pretokenizer,
    cache: PieceCache,
    /// Long pieces of whitespace in one pass (see [`whitespace`]), when the vocabulary
    /// allows it.
    whitespace: Option<whitespace::Whitespace>,
    /// This tokenizer's name to the per-thread memo (see [`memo`]); a new one empties every
    /// thread's memo of it (`clear_cache`).
    memo_owner: AtomicU64,
}

/// The ranks rule as [`Pairs`], driven by ids: a pair merges into the token of its concatenated
/// bytes. The tests' reference for the merges by byte positions of [`ranks`].
#[cfg(test)]
struct RankPairs<'a> {
    tok: &'a ByteLevel,
}

const NO_TOKEN: u32 = u32::MAX;

/// The merges rule's pairs with those of two ids below 256 answered from a dense table: in the
/// vocabularies of the GPT-2 family those are the byte tokens, whose pairs every piece asks
/// about first (and text of many new short pieces, such as random Latin-1, asks about little
/// else), here in one load instead of a probe of a table of megabytes.
struct SmallPairs<'a, P: Pairs + ?Sized> {
    small: &'a [u64],
    inner: &'a P,
}

const NO_SMALL_PAIR: u64 = u64::MAX;

impl<P: Pairs + ?Sized> Pairs for SmallPairs<'_, P> {
    #[inline(always)]
    fn get(&self, left: u32, right: u32) -> Option<Merge> {
        if (left | right) < 256 {
            let v = self.small[((left as usize) << 8) | right as usize];
            return (v != NO_SMALL_PAIR).then_some(Merge {
                rank: (v >> 32) as u32,
                id: v as u32,
            });
        }
        self.inner.get(left, right)
    }
}

#[cfg(test)]
impl Pairs for RankPairs<'_> {
    fn get(&self, left: u32, right: u32) -> Option<Merge> {
        let bytes = [self.tok.unit_bytes(left), self.tok.unit_bytes(right)].concat();
        let id = self.tok.encoder.get(&bytes)?;
        Some(Merge { rank: id, id })
    }
}

impl ByteLevel {
    pub fn new(model: &Model) -> Result<ByteLevel, Error> {
        let max_id = model
            .ranks
            .iter()
            .map(|&(_, i)| i)
            .chain(model.special_tokens.iter().map(|&(_, i)| i))
            .chain(model.added_tokens.iter().map(|&(_, i)| i))
            .chain(model.extra_tokens.iter().map(|&(i, _)| i))
            .max()
            .unwrap_or(0);
        if max_id > MAX_ID {
            return Err(Error::Vocab(format!(
                "token id {max_id} is too large (at most {MAX_ID})"
            )));
        }
        let count = model.ranks.len()
            + model.special_tokens.len()
            + model.added_tokens.len()
            + model.extra_tokens.len();
        let total: usize = model.ranks.iter().map(|(b, _)| b.len()).sum();
        let mut vocab = Vocab::with_capacity(count, max_id, total + 1024);
        let short = model
            .ranks
            .iter()
            .filter(|(b, _)| b.len() <= table::SHORT)
            .count();
        let mut encoder = TokenTable::with_capacity(model.ranks.len(), short)?;
        let mut add = |label: &str, id: u32, bytes: &[u8]| -> Result<(), Error> {
            vocab.insert(id, bytes).map_err(|old| {
                Error::Vocab(format!(
                    "{label}: token id {id} is used twice ({} and {})",
                    bytes_repr(&old),
                    bytes_repr(bytes)
                ))
            })
        };
        for &(bytes, id) in &model.ranks {
            add("ranks", id, bytes)?;
            if encoder.insert(bytes, id).is_err() {
                return Err(Error::Vocab(format!(
                    "ranks: token {} appears twice",
                    bytes_repr(bytes)
                )));
            }
        }
        // A special or added token may also be the ordinary token of its bytes (HF keeps an added
        // 'ab' that a merge makes too): one id, one spelling, cut out of the text all the same.
        let ordinary = |id: u32, bytes: &[u8]| encoder.get(bytes) == Some(id);
        for &(text, id) in &model.special_tokens {
            if !ordinary(id, text.as_bytes()) {
                add("special_tokens", id, text.as_bytes())?;
            }
        }
        for &(text, id) in &model.added_tokens {
            if !ordinary(id, text.as_bytes()) {
                add("added_tokens", id, text.as_bytes())?;
            }
        }
        for &(id, bytes) in &model.extra_tokens {
            add("extra_tokens", id, bytes)?;
        }
        for (label, texts) in [
            ("special_tokens", &model.special_tokens),
            ("added_tokens", &model.added_tokens),
        ] {
            if texts.iter().any(|(t, _)| t.is_empty()) {
                return Err(Error::Vocab(format!(
                    "{label}: a special or added token cannot be empty"
                )));
            }
        }
        let special_texts: std::collections::HashSet<&str> =
            model.special_tokens.iter().map(|&(t, _)| t).collect();
        if let Some(clash) = model
            .added_tokens
            .iter()
            .map(|&(t, _)| t)
            .filter(|t| special_texts.contains(t))
            .min()
        {
            return Err(Error::Vocab(format!(
                "{} is both a special and an added token",
                str_repr(clash)
            )));
        }
        let mut byte_units = [0u32; 256];
        for (b, unit) in byte_units.iter_mut().enumerate() {
            *unit = encoder.get(&[b as u8][..]).unwrap_or(PSEUDO + b as u32);
        }
        let unit_of = |bytes: &[u8]| -> Option<u32> {
            match encoder.get(bytes) {
                Some(id) => Some(id),
                None if bytes.len() == 1 => Some(PSEUDO + u32::from(bytes[0])),
                None => None,
            }
        };
        let rule = match &model.merges {
            None => Rule::Ranks,
            Some(merges) => {
                let mut table = PairTable::new();
                let mut entries = Vec::with_capacity(merges.len());
                for (rank, &(a, b)) in merges.iter().enumerate() {
                    // Packed when short (nearly always): no allocation per merge.
                    let found = Packed::new_checked(a)
                        .zip(Packed::new_checked(b))
                        .and_then(|(pa, pb)| pa.concat(pb))
                        .map_or_else(|| encoder.get(&[a, b].concat()), |p| encoder.get_packed(p));
                    let Some(id) = found else {
                        return Err(Error::Vocab(format!(
                            "merge {rank} ({}, {}): the merged token {} is not in the vocabulary",
                            bytes_repr(a),
                            bytes_repr(b),
                            bytes_repr(&[a, b].concat())
                        )));
                    };
                    // A part that is neither a token nor a single byte never exists: skip.
                    if let (Some(x), Some(y)) = (unit_of(a), unit_of(b)) {
                        let merge = Merge {
                            rank: rank as u32,
                            id,
                        };
                        entries.push((x, y, merge));
                    }
                }
                table.extend(&entries);
                Rule::Merges(table)
            }
        };
        let mut byte_pairs = vec![NO_TOKEN; 1 << 16];
        for (i, slot) in byte_pairs.iter_mut().enumerate() {
            if let Some(id) = encoder.get(&[(i >> 8) as u8, i as u8]) {
                *slot = id;
            }
        }
        // Merges rule: what a two-byte piece becomes when it becomes one token (the whole
        // piece with `ignore_merges`, else the merge of its two bytes), or NO_TOKEN.
        let mut two_bytes = Vec::new();
        if let Rule::Merges(table) = &rule {
            two_bytes = vec![NO_TOKEN; 1 << 16];
            let whole_first = model.ignore_merges;
            for (i, slot) in two_bytes.iter_mut().enumerate() {
                let (a, b) = ((i >> 8) as u8, i as u8);
                let whole = if whole_first {
                    encoder.get(&[a, b])
                } else {
                    None
                };
                let merged = || {
                    table
                        .get(byte_units[usize::from(a)], byte_units[usize::from(b)])
                        .map(|m| m.id)
                };
                if let Some(id) = whole.or_else(merged) {
                    *slot = id;
                }
            }
        }
        let mut windows = crate::huge::HugeSlice::try_filled(1 << 18, 0u64)?;
        for &(bytes, _) in &model.ranks {
            for w in bytes.windows(3) {
                let bit = (usize::from(w[0]) << 16) | (usize::from(w[1]) << 8) | usize::from(w[2]);
                windows[bit / 64] |= 1 << (bit % 64);
            }
        }
        let mut windows4 =
            crate::huge::HugeSlice::try_filled(1 << (ranks::WINDOW4_BITS - 6), 0u64)?;
        for &(bytes, _) in &model.ranks {
            for w in bytes.windows(4) {
                let bit = ranks::window4_bit(w);
                windows4[bit / 64] |= 1 << (bit % 64);
            }
        }
        let characters = match rule {
            Rule::Ranks => {
                characters::Characters::build(&model.ranks, &byte_pairs, |b| encoder.get(b))
            }
            Rule::Merges(_) => None,
        };
        let two_byte = match rule {
            Rule::Ranks => Some(two_byte::TwoByte::build(&model.ranks)),
            Rule::Merges(_) => None,
        };
        let mut run_tokens = vec![Vec::new(); 256];
        // In the same pass (each token's bytes are read once at construction): the
        // whitespace tokens, for the one-pass encoder of whitespace pieces.
        let mut whitespace_tokens = Vec::new();
        for &(bytes, id) in &model.ranks {
            if bytes.iter().all(|&b| whitespace::is_whitespace(b)) {
                whitespace_tokens.push((bytes, id));
            }
            if bytes.len() >= 2 && bytes.iter().all(|&b| b == bytes[0]) {
                let tokens: &mut Vec<u32> = &mut run_tokens[usize::from(bytes[0])];
                if tokens.len() <= bytes.len() {
                    tokens.resize(bytes.len() + 1, NO_TOKEN);
                }
                tokens[bytes.len()] = id;
            }
        }
        let pretokenizer = Pretokenizer::new(&model.patterns, &model.byte_patterns)?;
        let small_pairs = match &rule {
            Rule::Merges(table) => (0..1u32 << 16)
                .map(|i| {
                    table.get(i >> 8, i & 0xFF).map_or(NO_SMALL_PAIR, |m| {
                        (u64::from(m.rank) << 32) | u64::from(m.id)
                    })
                })
                .collect(),
            Rule::Ranks => Vec::new(),
        };
        let mut tok = ByteLevel {
            byte_pairs,
            two_bytes,
            small_pairs,
            windows,
            windows4,
            characters,
            two_byte,
            run_tokens,
            whole_piece_first: model.merges.is_none() || model.ignore_merges,
            encoder,
            vocab,
            byte_units,
            rule,
            specials: Specials::new(&model.special_tokens, &model.added_tokens)?,
            pretokenizer,
            cache: PieceCache::new(model.cache_bytes),
            whitespace: None,
            memo_owner: AtomicU64::new(memo::new_owner()),
        };
        tok.whitespace = whitespace::Whitespace::build(&tok, whitespace_tokens);
        // The constructing thread's memo is made now, not in the first encode.
        memo::prepare(tok.memo_owner.load(Ordering::Relaxed), tok.cache.enabled());
        Ok(tok)
    }

    /// The units of `bytes` after every merge of the rule, into `units`, with no cut and no
    /// shortcut: a short piece, a part of a long one, and what [`whitespace`] builds its answers
    /// from.
    /// Memory for a long piece that cannot be had stops the process: for short pieces and
    /// tables (encoding uses [`Self::try_merge_plain`]).
    #[inline]
    fn merge_plain(&self, bytes: &[u8], units: &mut Vec<u32>) {
        self.try_merge_plain(bytes, units)
            .unwrap_or_else(|e| e.abort())
    }

    /// [`Self::merge_plain`], where memory that cannot be had is an error.
    #[inline]
    fn try_merge_plain(&self, bytes: &[u8], units: &mut Vec<u32>) -> Result<(), NoMemory> {
        units.clear();
        self.try_merge_onto(bytes, units)
    }

    /// [`Self::try_merge_plain`]'s units appended to `units`, which under the merges rule must
    /// be empty (its loop merges the whole `Vec`).
    #[inline]
    fn try_merge_onto(&self, bytes: &[u8], units: &mut Vec<u32>) -> Result<(), NoMemory> {
        match &self.rule {
            Rule::Ranks if bytes.len() <= mid::MIN_MID => self.merge_short(bytes, units),
            Rule::Ranks if bytes.len() <= ranks::MAX_SHORT => self.merge_mid(bytes, units),
            Rule::Ranks if bytes.len() <= ranks::MAX_HEAP => self.merge_heap(bytes, units),
            Rule::Ranks => return self.merge_sweep(bytes, units),
            Rule::Merges(table) => {
                memory::reserve(units, bytes.len())?;
                units.extend(bytes.iter().map(|&b| self.byte_units[usize::from(b)]));
                return self.merge_units(units, table);
            }
        }
        Ok(())
    }

    /// The bytes of a unit (a token id or a pseudo id).
    #[cfg(test)]
    fn unit_bytes(&self, unit: u32) -> &[u8] {
        if unit >= PSEUDO {
            let b = (unit - PSEUDO) as usize;
            return &BYTES[b..b + 1];
        }
        self.vocab.get(unit).unwrap_or(&[])
    }

    // --- vocabulary --------------------------------------------------------------------------

    pub fn n_vocab(&self) -> u64 {
        self.vocab.n_vocab()
    }

    /// How many ids have a token.
    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.vocab.get(id)
    }

    pub fn pretokenizer(&self) -> &Pretokenizer {
        &self.pretokenizer
    }

    pub fn specials(&self) -> &Specials {
        &self.specials
    }

    /// Forget every piece: the shared cache's and every thread's memo of them.
    pub fn clear_cache(&self) {
        self.cache.clear();
        let old = self.memo_owner.swap(memo::new_owner(), Ordering::Relaxed);
        memo::release(old);
    }

    pub fn cache(&self) -> &PieceCache {
        &self.cache
    }

    // --- decoding ----------------------------------------------------------------------------

    /// The bytes of `ids` joined; an output memory cannot hold is [`Error::NoMemory`].
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        let _ = out.try_reserve(ids.len().saturating_mul(4)); // (a guess; the rest grows as needed)
        for (position, &id) in ids.iter().enumerate() {
            match self.vocab.get(id) {
                Some(bytes) => memory::extend(&mut out, bytes)?,
                None => return Err(Error::UnknownId { id, position }),
            }
        }
        Ok(out)
    }

    // --- encoding ----------------------------------------------------------------------------

    /// The ids of `bytes` after every merge of the rule, as one piece and with no lookup of the
    /// whole (tiktoken's `byte_pair_encode`, with which its `encode_with_unstable` encodes the
    /// byte strings that are not text); an error for a byte that no token covers.
    pub fn merge_bytes(&self, bytes: &[u8]) -> Result<Vec<u32>, Error> {
        let mut units = Vec::new();
        if bytes.is_empty() {
            return Ok(units);
        }
        if bytes.len() <= ranks::MAX_SHORT {
            self.try_merge_plain(bytes, &mut units)?;
        } else {
            self.try_merge_long(bytes, &mut units)?;
        }
        no_pseudo(&units)?;
        Ok(units)
    }

    /// Ids of `text`: special tokens in `disallowed` are an error, those in `allowed` become
    /// their ids, added tokens are always split out, the rest is BPE.
    pub fn encode(
        &self,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
    ) -> Result<Vec<u32>, Error> {
        let mut out = Vec::new();
        self.encode_into(text, allowed, disallowed, &mut out)?;
        Ok(out)
    }

    /// [`Self::encode`], the ids appended to `out` (a flat batch fills one vector for many
    /// texts). On an error `out` may hold some of the text's ids after its old contents.
    pub fn encode_into(
        &self,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        self.encode_into_batch(text, allowed, disallowed, out, 1)
    }

    /// [`Self::encode_into`] for a text of a batch encoded on `threads` threads at once: on
    /// more than one, every new piece goes to the shared cache straight away, where the other
    /// threads find it (a thread's memo is its own; see [`memo`]).
    pub fn encode_into_batch(
        &self,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
        out: &mut Vec<u32>,
        threads: usize,
    ) -> Result<(), Error> {
        if let Some(m) = self.specials.matcher(disallowed, false)? {
            if let Some((index, start, _)) = m.find_iter(text).next() {
                return Err(Error::Disallowed {
                    token: self.specials.text(index).to_string(),
                    offset: text[..start].chars().count(),
                });
            }
        }
        // Room for the most ids the text can have, one a byte, asked for once: the pieces' ids are
        // then appended without a check each (the memo's answers, the tiny pieces), and memory
        // that a long text cannot have is an error here, not an abort there. (Room only: pages
        // never written cost nothing, and a long text's vector is handed over as it is.)
        memory::reserve(out, text.len())?;
        let together = threads > 1;
        let mut scratch = Vec::new();
        let mut chunk = |start: usize, end: usize, out: &mut Vec<u32>| {
            self.encode_chunk(&text[start..end], out, &mut scratch, together)
                .map_err(|err| self.locate(err, text, start, end))
        };
        match self.specials.matcher(allowed, true)? {
            None => chunk(0, text.len(), out)?,
            Some(m) => {
                let mut done = 0;
                for (index, start, end) in m.find_iter(text) {
                    chunk(done, start, out)?;
                    out.push(self.specials.id(index));
                    done = end;
                }
                chunk(done, text.len(), out)?;
            }
        }
        Ok(())
    }

    /// `err`, where it is a byte without a token from `text[start..end]`, with the byte's offset
    /// in `text`: the chunk's pieces are merged again in order, without caches, until one keeps
    /// a byte no token covers (only ever on the way to an error, so the fast paths need not
    /// carry positions).
    #[cold]
    fn locate(&self, err: Error, text: &str, start: usize, end: usize) -> Error {
        if !matches!(err, Error::NoToken { offset: None, .. }) {
            return err;
        }
        let chunk = &text[start..end];
        let base = chunk.as_ptr() as usize;
        let mut units = Vec::new();
        // The scan stops at the first piece that keeps a byte without a token, with that byte and
        // its byte offset in `text`.
        let scan = self
            .pretokenizer
            .for_each_piece(chunk, &mut |piece: &[u8]| {
                if self.whole_piece_first && self.encoder.get(piece).is_some() {
                    return Ok(()); // a token whole, as encode_piece takes it
                }
                // (the scanner hands out slices of the chunk, so a piece's place is its address)
                let Some(mut at) = (piece.as_ptr() as usize).checked_sub(base) else {
                    return Ok(());
                };
                at += start;
                units.clear();
                self.try_merge_onto(piece, &mut units)?;
                for &unit in &units {
                    if unit >= PSEUDO {
                        let byte = (unit - PSEUDO) as u8;
                        return Err(Error::NoToken {
                            byte,
                            offset: Some(at),
                        });
                    }
                    at += self.vocab.get(unit).map_or(1, <[u8]>::len);
                }
                Ok(())
            });
        match scan {
            Err(Error::NoToken {
                byte,
                offset: Some(mut at),
            }) if at < text.len() => {
                while !text.is_char_boundary(at) {
                    at -= 1; // the character the byte is part of
                }
                Error::NoToken {
                    byte,
                    offset: Some(text[..at].chars().count()),
                }
            }
            _ => err,
        }
    }

    /// Ids of `text` with special-token text as plain text (added tokens still split out).
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>, Error> {
        self.encode(text, &SpecialSet::None, &SpecialSet::None)
    }

    /// Ids of text holding no special or added token: pre-tokenize, then BPE every piece.
    fn encode_chunk(
        &self,
        text: &str,
        out: &mut Vec<u32>,
        scratch: &mut Vec<u32>,
        together: bool,
    ) -> Result<(), Error> {
        if text.is_empty() {
            return Ok(());
        }
        // The shared cache is left alone while it misses (text that does not repeat itself).
        let mut bypass = Bypass::default();
        let owner = self.memo_owner.load(Ordering::Relaxed);
        memo::with(owner, self.cache.enabled(), |memo| {
            let Some(memo) = memo else {
                return self.pretokenizer.for_each_piece(text, &mut |piece: &[u8]| {
                    if self.tiny_piece(piece, out) {
                        return Ok(());
                    }
                    self.encode_piece(piece, None, out, scratch, &mut bypass, 0)
                        .map(|_| ())
                });
            };
            let mut short = ShortPieces {
                tok: self,
                bytes: text.as_bytes(),
                memo,
                out,
                scratch,
                bypass: &mut bypass,
                together,
                waiting: [MaybeUninit::uninit(); AHEAD],
                next: 0,
                held: 0,
            };
            short.memo.begin_text();
            let done = self
                .pretokenizer
                .for_each_piece(text, &mut short)
                .and_then(|()| short.finish());
            short.memo.wake_short();
            done
        })
    }

    /// The merges rule's loop on `units`, with pairs of small ids from [`SmallPairs`]' table
    /// and the others from `pairs`.
    #[inline(always)]
    fn merge_units<P: Pairs + ?Sized>(
        &self,
        units: &mut Vec<u32>,
        pairs: &P,
    ) -> Result<(), NoMemory> {
        let small = SmallPairs {
            small: &self.small_pairs,
            inner: pairs,
        };
        try_merge_with(units, &small)
    }

    /// BPE of one piece, appended to `out`; `packed` is the piece packed, where the caller has
    /// it (a short piece the memo missed). `memo_ids`: the caller's memo keeps the piece if it
    /// has at most that many ids (0: it will not), and the shared cache then leaves it to the
    /// memo; the result says whether it is pending, to be handed to the shared cache when the
    /// memo lets it go (see [`memo`]).
    #[inline]
    fn encode_piece(
        &self,
        piece: &[u8],
        packed: Option<Packed>,
        out: &mut Vec<u32>,
        scratch: &mut Vec<u32>,
        bypass: &mut Bypass,
        memo_ids: usize,
    ) -> Result<bool, Error> {
        // The shared cache only while it hits (`bypass`, which counts the pieces it is asked
        // about). A piece that is one token is answered by the token table, and never cached;
        // most ASCII words are such tokens, most words of other scripts are not, so for those
        // the cache is asked first (a hit then skips the table's Bloom filter, a load of its
        // own), and for the others only once the table has said no: a one-token word is no
        // miss of the cache's, and counting it as one would rest the cache on English text.
        let holds = self.cache.holds(piece.len());
        let cache_first = holds && piece.last().is_some_and(|&b| b >= 0x80);
        let mut cached = cache_first && !bypass.skip();
        if cached && self.cache.get_into(piece, out) {
            bypass.hit();
            return Ok(false);
        }
        if self.whole_piece_first {
            // Often asked about a piece that is no token (a new word): the Bloom filter answers
            // most of those without the big table.
            let whole = if piece.len() <= PACKED {
                self.encoder
                    .get_packed_rare(packed.unwrap_or_else(|| Packed::new(piece)))
            } else {
                self.encoder.get(piece)
            };
            if let Some(id) = whole {
                out.push(id);
                return Ok(false);
            }
        }
        if holds && !cache_first {
            cached = !bypass.skip();
            if cached && self.cache.get_into(piece, out) {
                bypass.hit();
                return Ok(false);
            }
        }
        // A long piece is cut into parts, under either rule, and so is a word of more than two
        // or three characters whose middle can be cut (`worth_cutting`: a word of Odia, whose
        // characters o200k_base rarely joins, becomes parts of one character); with
        // `ignore_merges` the whole piece was looked up above, its parts are not.
        let short = piece.len() <= ranks::MAX_SHORT;
        if short && (piece.len() <= ranks::MIN_CUT || !self.worth_cutting(piece)) {
            self.merge_plain(piece, scratch);
        } else {
            // (a piece has at most a unit a byte: room for them all, asked for once)
            memory::reserve(scratch, piece.len())?;
            self.try_merge_long(piece, scratch)?;
        }
        no_pseudo(scratch)?;
        let pending = cached && scratch.len() <= memo_ids;
        if cached && !pending {
            self.cache.insert(piece, scratch);
        }
        if out.is_empty() && scratch.len() > LONG_UNITS {
            // (a text of one long piece: its units become the text's ids, not copied)
            std::mem::swap(out, scratch);
        } else {
            memory::extend(out, scratch)?;
        }
        Ok(pending)
    }
}

impl Drop for ByteLevel {
    /// Its memos go to the next tokenizers that need one, on each thread (see `memo::release`).
    fn drop(&mut self) {
        memo::release(*self.memo_owner.get_mut());
    }
}

/// One text's pieces into ids through a memo (see `encode_chunk`). Only the memo's answer for a
/// short piece is inlined into the scanner's loop (a closure, called from the scanner's several
/// places, was left a call per piece); everything else is a call.
struct ShortPieces<'a> {
    tok: &'a ByteLevel,
    bytes: &'a [u8],
    memo: &'a mut memo::Memo,
    out: &'a mut Vec<u32>,
    scratch: &'a mut Vec<u32>,
    bypass: &'a mut Bypass,
    /// One of a batch's calls on several threads (see [`ByteLevel::encode_into_batch`]).
    together: bool,
    /// The pieces found but not yet answered, in a ring: the `held` slots before `next`, the
    /// oldest first, and only those written. (Counted rather than marked empty, so that a short
    /// text neither clears the ring nor visits the slots it never filled.)
    waiting: [MaybeUninit<Waiting>; AHEAD],
    next: usize,
    held: usize,
}

/// Pieces a piece's memo slots are asked for ahead of its lookup: when the memo's lines are not
/// in the CPU's caches (a warm tokenizer after other work), the lookups of several pieces then
/// wait for memory at once rather than one after another. A long piece asks for up to six
/// lines, so many are in flight at once, and a lead of sixteen pieces leaves them time.
const AHEAD: usize = 16;

/// A piece found by the scanner and not yet answered: where it is, and for a short one its key
/// and its pair in the memo's short table.
#[derive(Clone, Copy)]
struct Waiting {
    at: usize,
    len: usize,
    p: Packed,
    pair: usize,
}

impl Waiting {
    const NONE: Waiting = Waiting {
        at: 0,
        len: 0,
        p: Packed { key: 0, len: 0 },
        pair: 0,
    };
}

impl Pieces<Error> for ShortPieces<'_> {
    #[inline(always)]
    fn piece(&mut self, piece: &[u8]) -> Result<(), Error> {
        debug_assert!(!piece.is_empty(), "the scanners hand out no empty piece");
        let at = (piece.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        if !self.memo.keeps_short(at) {
            return self.resting(at, piece);
        }
        let mut new = Waiting {
            at,
            len: piece.len(),
            ..Waiting::NONE
        };
        if piece.len() <= memo::KEY {
            new.p = memo::pack(self.bytes, at, piece);
            new.pair = self.memo.fetch_short(new.p);
            if self.memo.heats() {
                // Soon after a miss (a cold pass over new text) the piece may well miss too,
                // and then its lookup in the token table waits on memory: ask for those lines
                // now, with the memo's.
                self.tok.encoder.fetch(new.p);
            }
            // A short word of a script that o200k_base spells a token a letter (Odia's: four
            // letters of three bytes and more) is kept in the long table. Other short pieces
            // that end outside ASCII seldom are, and the fetch costs them little; a lower length
            // would put the test itself on many English words.
            if piece.len() > 12 && piece[piece.len() - 1] >= 0x80 {
                self.memo.fetch_elsewhere(new.p);
            }
        } else {
            self.memo.fetch_long(self.bytes, at, piece);
        }
        let slot = &mut self.waiting[self.next];
        self.next = (self.next + 1) % AHEAD;
        if self.held < AHEAD {
            slot.write(new); // a free slot
            self.held += 1;
            return Ok(());
        }
        // SAFETY: with every slot held, each was written since `held` was last 0.
        let old = unsafe { slot.assume_init_read() };
        slot.write(new);
        self.answer(old)
    }
}

impl ShortPieces<'_> {
    /// The pieces still waiting, in order.
    fn finish(&mut self) -> Result<(), Error> {
        let held = std::mem::take(&mut self.held);
        for k in 0..held {
            // SAFETY: the `held` slots before `next` were written (see `waiting`).
            let old =
                unsafe { self.waiting[(self.next + AHEAD - held + k) % AHEAD].assume_init_read() };
            self.answer(old)?;
        }
        Ok(())
    }

    /// A piece found while the memo's short table rests (text whose short pieces keep being
    /// new): nothing is fetched ahead, so the pieces waiting are answered first and this one
    /// now, a piece of up to four bytes straight from the byte tables.
    #[inline(never)]
    fn resting(&mut self, at: usize, piece: &[u8]) -> Result<(), Error> {
        // (a test of the count: a scan of the ring cost more than a tiny piece's answer, on
        // every piece of a resting text)
        if self.held > 0 {
            self.finish()?;
        }
        if self.tok.tiny_piece(piece, self.out) {
            return Ok(());
        }
        if piece.len() > memo::KEY {
            return self.long(at, piece);
        }
        // Neither asked nor kept by the resting table (see `memo::Memo::missed`).
        self.tok
            .encode_piece(piece, None, self.out, self.scratch, self.bypass, 0)
            .map(|_| ())
    }

    /// A piece's ids, appended to `out`.
    #[inline(always)]
    fn answer(&mut self, w: Waiting) -> Result<(), Error> {
        // (the scanner hands out slices of the text it splits, so a piece is found again there)
        let bytes = self.bytes;
        let piece = &bytes[w.at..w.at + w.len];
        if w.len > memo::KEY {
            return self.long(w.at, piece);
        }
        // Every short piece asks the memo first, tokens and one-byte pieces too: the branch on
        // its answer is what the CPU predicts on warm text (see [`memo`]).
        if self.memo.get_into_at(w.pair, w.p, self.out) {
            return Ok(());
        }
        self.miss(piece, w.p)
    }
    /// A short piece the memo does not hold: its ids, then kept in the memo (unless its short
    /// table rests: see `memo::Rest`).
    #[inline(never)]
    fn miss(&mut self, piece: &[u8], p: Packed) -> Result<(), Error> {
        // Where it is, worked out here from the piece rather than passed down: kept live across
        // the memo's lookup, it would take a register in the scanner's loop.
        let at = (piece.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        let start = self.out.len();
        let mut pending = false;
        self.memo.heat_up();
        let tiny = self.tok.tiny_piece(piece, self.out);
        if !tiny {
            // a piece with more ids than the short table's slots hold, kept in a longer table
            if self.memo.get_elsewhere_into(p, self.out) {
                return Ok(());
            }
            let keeps = !self.together && self.memo.keeps_short(at);
            let memo_ids = if keeps { memo::LONGEST_IDS } else { 0 };
            pending = self.tok.encode_piece(
                piece,
                Some(p),
                self.out,
                self.scratch,
                self.bypass,
                memo_ids,
            )?;
        }
        let ids = &self.out[start..];
        if tiny || ids.len() <= memo::IDS {
            if let Some(gone) = self.memo.missed(at, p, ids, pending) {
                self.tok.cache.insert(gone.piece(), gone.ids());
            }
        } else {
            for gone in self.memo.missed_many(at, p, ids, pending).iter().flatten() {
                self.tok.cache.insert(gone.piece(), gone.ids());
            }
        }
        Ok(())
    }

    /// A piece longer than the memo's short keys (a word of most Indic scripts): the memo's
    /// long tables, then the shared cache (inside `encode_piece`).
    #[inline(never)]
    fn long(&mut self, at: usize, piece: &[u8]) -> Result<(), Error> {
        let Some(p) = memo::pack_long(self.bytes, at, piece) else {
            return self
                .tok
                .encode_piece(piece, None, self.out, self.scratch, self.bypass, 0)
                .map(|_| ());
        };
        if self.memo.get_long_into(&p, self.out) {
            return Ok(());
        }
        let start = self.out.len();
        let memo_ids = if self.together { 0 } else { memo::LONGEST_IDS };
        let pending =
            self.tok
                .encode_piece(piece, None, self.out, self.scratch, self.bypass, memo_ids)?;
        for gone in self
            .memo
            .insert_long(&p, &self.out[start..], pending)
            .iter()
            .flatten()
        {
            self.tok.cache.insert(gone.piece(), gone.ids());
        }
        Ok(())
    }
}

#[cfg(test)]
static BYTES: [u8; 256] = {
    let mut all = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        all[i] = i as u8;
        i += 1;
    }
    all
};

/// `NoToken` for the first byte left as a pseudo id among merged `units` (a byte the vocabulary has
/// no token for, which merges could not absorb).
#[inline]
fn no_pseudo(units: &[u32]) -> Result<(), Error> {
    match units.iter().find(|&&u| u >= PSEUDO) {
        Some(&unit) => Err(Error::NoToken {
            byte: (unit - PSEUDO) as u8,
            offset: None,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::testing::build;
    use super::*;
    use crate::merge::merge_with;
    use crate::pretokenize::named;

    /// GPT-2-pattern tokenizers of `ranks`: one with a cache of `cache_bytes` (and so a memo),
    /// and one with neither, whose ids the first must give.
    fn cached_and_plain(ranks: &[(Vec<u8>, u32)], cache_bytes: usize) -> (ByteLevel, ByteLevel) {
        let model = |cache_bytes| Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            cache_bytes,
            ..Model::default()
        };
        (
            ByteLevel::new(&model(cache_bytes)).unwrap(),
            ByteLevel::new(&model(0)).unwrap(),
        )
    }

    /// Bytes, and a token for each consonant and vowel (`bcdfghjk`, `aeiouywx`) from id `first`
    /// on: a vowel and a consonant are no token, so a word of three such pairs is three tokens.
    fn syllable_ranks(first: u32) -> Vec<(Vec<u8>, u32)> {
        let pairs = b"bcdfghjk"
            .iter()
            .flat_map(|&c| b"aeiouywx".iter().map(move |&v| vec![c, v]));
        bytes_model(&[])
            .into_iter()
            .chain(pairs.zip(first..))
            .collect()
    }

    /// Words `from..from + n` of three consonant-vowel pairs, each after a phrase that repeats
    /// (new words close together would rest the memo's short table).
    fn syllable_words(from: usize, n: usize) -> String {
        (from..from + n)
            .map(|i| {
                let word: String = (0..3)
                    .flat_map(|k| {
                        let c = b"bcdfghjk"[(i >> (6 * k)) & 7];
                        [c, b"aeiouywx"[(i >> (6 * k + 3)) & 7]]
                    })
                    .map(char::from)
                    .collect();
                word + ". ba ba ba."
            })
            .collect()
    }

    #[test]
    fn a_memo_taken_over_hands_nothing_to_another_vocabulary() {
        // Six tokenizers whose vocabularies give the same words other ids, used in turn on one
        // thread, more than it keeps memos: each memo is taken over by a later tokenizer while
        // it holds pending words of an earlier one, which must never reach the later one's
        // shared cache. Every text is encoded by all six: a word handed to the wrong cache
        // would come back with the wrong ids.
        let pairs: Vec<(ByteLevel, ByteLevel)> = (0..6)
            .map(|k| cached_and_plain(&syllable_ranks(256 + 1000 * k), 64 << 20))
            .collect();
        const { assert!(memo::MEMOS < 6) };
        // (texts long enough for a memo to let go of some of its own words whichever memo
        // each tokenizer is given: as many words as its short table has pairs)
        let words = memo::SLOTS / 2;
        for round in 0..2 {
            for from in (0..2 * words).step_by(words) {
                let text = syllable_words(round * 2 * words + from, words);
                for (tok, plain) in &pairs {
                    assert_eq!(
                        tok.encode_ordinary(&text).unwrap(),
                        plain.encode_ordinary(&text).unwrap()
                    );
                }
            }
        }
        assert!(pairs.iter().all(|(tok, _)| !tok.cache().is_empty()));
    }

    fn bytes_model(extra: &[(&'static [u8], u32)]) -> Vec<(Vec<u8>, u32)> {
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        ranks.extend(extra.iter().map(|&(b, i)| (b.to_vec(), i)));
        ranks
    }

    #[test]
    fn merge_bytes_merges_without_looking_the_whole_up() {
        // "xyz" is a token the merges never reach (neither "xy" nor "yz" is one): encode finds
        // it whole, merge_bytes merges as tiktoken's byte_pair_encode does and leaves bytes.
        let ranks = bytes_model(&[(b"ab", 256), (b"xyz", 257)]);
        let (tok, _) = cached_and_plain(&ranks, 0);
        assert_eq!(tok.encode_ordinary("xyz").unwrap(), vec![257]);
        assert_eq!(
            tok.merge_bytes(b"xyz").unwrap(),
            b"xyz".map(u32::from).to_vec()
        );
        assert_eq!(tok.merge_bytes(b"").unwrap(), Vec::<u32>::new());
        assert_eq!(tok.merge_bytes(&[0xE0, 0xB6]).unwrap(), vec![0xE0, 0xB6]);
        let long = b"ab".repeat(400); // past the short and heap merges
        assert_eq!(tok.merge_bytes(&long).unwrap(), vec![256; 400]);
    }

    #[test]
    fn the_memo_gives_the_ids_of_the_merges() {
        // Texts of short pieces encoded again and again, by two tokenizers in turn and after
        // clear_cache, give the ids of a tokenizer with no cache (and so no memo).
        let ranks = bytes_model(&[
            (b"ab", 256),
            (b" ab", 257),
            (b"abc", 258),
            (b" x", 259),
            (b"cab", 260),
        ]);
        let (one, two) = (build(&ranks, None), build(&ranks, None));
        let model = Model {
            ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
            patterns: vec![named::GPT2],
            cache_bytes: 0,
            ..Model::default()
        };
        let plain = ByteLevel::new(&model).unwrap();
        let mut next = testing::generator(7);
        let words: [&str; 8] = ["ab", " ab", "abc", " x", "cab", " abcab", "bca", "!!"];
        for round in 0..200 {
            let text: String = (0..1 + next(40)).map(|_| words[next(8) as usize]).collect();
            let want = plain.encode_ordinary(&text).unwrap();
            for tok in [&one, &two, &one] {
                assert_eq!(tok.encode_ordinary(&text).unwrap(), want, "{text:?}");
            }
            if round % 50 == 0 {
                one.clear_cache();
            }
        }
        // Another vocabulary on the same thread, in turn: each keeps its own ids (the memo's
        // slots are its owner's).
        let other = build(&bytes_model(&[(b"ab", 256), (b"bc", 257)]), None);
        for _ in 0..3 {
            assert_eq!(one.encode_ordinary("abc ab").unwrap(), [258, 257]);
            assert_eq!(other.encode_ordinary("abc ab").unwrap(), [256, 99, 32, 256]);
        }
    }

    #[test]
    fn a_resting_memo_gives_the_ids_of_the_merges() {
        // Random short pieces, nearly all new, rest the memo's short table (with now and then
        // a word too long for it, answered while it rests); then prose that repeats itself,
        // then random pieces again, in one text and line by line: the ids of a tokenizer with
        // no memo.
        let ranks = bytes_model(&[(b"ab", 256), (b" ab", 257), (b"abc", 258), (b"ca", 259)]);
        let (tok, plain) = cached_and_plain(&ranks, 1 << 20);
        let mut next = testing::generator(11);
        let mut random = |n: usize| -> String {
            let mut text = String::new();
            for _ in 0..n {
                if next(200) == 0 {
                    let len = 17 + next(40) as usize;
                    text.extend((0..len).map(|_| ['a', 'b', 'c'][next(3) as usize]));
                    continue;
                }
                let c = char::from_u32(0x20 + next(0xE0) as u32).unwrap_or('?');
                text.push(if next(3) == 0 { ' ' } else { c });
            }
            text
        };
        let prose = " abc ab cab, ca!".repeat(8000);
        let text = format!("{}{prose}{}", random(300_000), random(100_000));
        assert_eq!(
            tok.encode_ordinary(&text).unwrap(),
            plain.encode_ordinary(&text).unwrap()
        );
        assert_eq!(
            tok.encode_ordinary(&text).unwrap(),
            plain.encode_ordinary(&text).unwrap()
        );
        for line in text.as_bytes().chunks(4096) {
            let line = String::from_utf8_lossy(line);
            assert_eq!(
                tok.encode_ordinary(&line).unwrap(),
                plain.encode_ordinary(&line).unwrap()
            );
        }
    }

    #[test]
    fn words_of_every_length_give_the_ids_of_the_merges_warm() {
        // Words of 1 to 30 consonant-vowel pairs over tokens of pairs and of two pairs: pieces
        // of up to 61 bytes with up to 16 ids and more, so that every table of the memo keeps
        // some (the longest one by length and, with a slot of the long one saying so, by their
        // ids' count) and some are kept by none. Encoded again and again, in changing order,
        // they give the ids of a tokenizer with no cache.
        let pairs: Vec<Vec<u8>> = b"bcdfghjk"
            .iter()
            .flat_map(|&c| b"aeiouywx".iter().map(move |&v| vec![c, v]))
            .collect();
        let quads = pairs
            .iter()
            .flat_map(|a| pairs.iter().map(move |b| [a.as_slice(), b].concat()));
        let ranks: Vec<(Vec<u8>, u32)> = bytes_model(&[])
            .into_iter()
            .chain(pairs.iter().cloned().chain(quads).zip(256..))
            .collect();
        let (tok, plain) = cached_and_plain(&ranks, 64 << 20);
        let mut next = testing::generator(5);
        // (a third of them after one 32-byte beginning: pieces told apart only by their ends)
        let words: Vec<String> = (0..3000)
            .map(|i| {
                let (first, n) = if i % 3 == 0 {
                    (pairs[..16].concat(), 1 + next(12) as usize)
                } else {
                    (Vec::new(), 1 + next(30) as usize)
                };
                let rest = (0..n).flat_map(|_| pairs[next(64) as usize].clone());
                String::from_utf8(first.into_iter().chain(rest).collect()).unwrap()
            })
            .collect();
        let lengths: std::collections::BTreeSet<usize> =
            words.iter().map(|w| w.len() + 1).collect();
        assert!(lengths.contains(&(memo::LONGEST_KEY - 1)) && lengths.contains(&61));
        for round in 0..4 {
            let text: String = (0..words.len())
                .map(|i| format!(" {}", words[(i * (2 * round + 1) + round) % words.len()]))
                .collect();
            let want = plain.encode_ordinary(&text).unwrap();
            assert_eq!(tok.encode_ordinary(&text).unwrap(), want, "round {round}");
            for line in text.as_bytes().chunks(600).take(20) {
                let line = std::str::from_utf8(line).unwrap();
                let want = plain.encode_ordinary(line).unwrap();
                assert_eq!(tok.encode_ordinary(line).unwrap(), want, "round {round}");
            }
        }
    }

    #[test]
    fn clear_cache_hands_its_memo_to_its_next_owner() {
        // `clear_cache` takes a new owner id: on the thread that clears, the memo of the old id
        // goes to the new one rather than another memo being made beside it, and nothing the
        // old id kept is found by the new one.
        let (tok, plain) = cached_and_plain(&syllable_ranks(256), 64 << 20);
        std::thread::scope(|s| {
            s.spawn(|| {
                for round in 0..3 {
                    let text = syllable_words(round * 500, 500);
                    for _ in 0..2 {
                        assert_eq!(
                            tok.encode_ordinary(&text).unwrap(),
                            plain.encode_ordinary(&text).unwrap()
                        );
                    }
                    tok.clear_cache();
                }
                assert_eq!(memo::made_on_thread(), 1);
            });
        });
    }

    #[test]
    fn a_dropped_or_cleared_tokenizers_memos_go_to_the_next_on_every_thread() {
        // A worker thread encodes with one tokenizer after another, each dropped (or cleared)
        // on the main thread: the worker takes the memo of the one gone rather than making a
        // memo for each (new memory is slow to come), and finds none of its pieces.
        let (plain, text) = (
            cached_and_plain(&syllable_ranks(256), 0).1,
            syllable_words(0, 500),
        );
        let expected = plain.encode_ordinary(&text).unwrap();
        let (to_worker, jobs) = std::sync::mpsc::channel::<std::sync::Arc<ByteLevel>>();
        let (to_main, done) = std::sync::mpsc::channel::<usize>();
        let worker = std::thread::spawn(move || {
            for tok in jobs {
                assert_eq!(tok.encode_ordinary(&text).unwrap(), expected);
                drop(tok);
                to_main.send(memo::made_on_thread()).unwrap();
            }
        });
        for round in 0..3 {
            let tok = std::sync::Arc::new(cached_and_plain(&syllable_ranks(256), 64 << 20).0);
            to_worker.send(tok.clone()).unwrap();
            assert_eq!(done.recv().unwrap(), 1, "round {round}");
            if round == 1 {
                tok.clear_cache(); // its old id is released too
                to_worker.send(tok.clone()).unwrap();
                assert_eq!(done.recv().unwrap(), 1, "round {round}, cleared");
            }
            drop(tok); // the last reference: released here, not on the worker
        }
        drop(to_worker);
        worker.join().unwrap();
    }

    #[test]
    fn the_shared_cache_holds_what_the_memo_lets_go() {
        // Words of six letters, three tokens each, each after a phrase the memo knows (new
        // words close together would rest its short table): a thread's memo keeps them, so
        // encoding them alone writes few to the shared cache (those that fall three to a
        // pair of the memo's first, small table, about one in a hundred), a batch's call on several
        // threads writes each at once, and the words the memo lets go reach it. Every id is
        // that of a tokenizer with no cache, on this thread and on another.
        let (tok, plain) = cached_and_plain(&syllable_ranks(256), 64 << 20);
        let same = |text: &str, tok: &ByteLevel| {
            assert_eq!(
                tok.encode_ordinary(text).unwrap(),
                plain.encode_ordinary(text).unwrap()
            );
        };
        assert_eq!(plain.encode_ordinary("bakoje").unwrap().len(), 3);
        let alone = syllable_words(0, 1_000);
        same(&alone, &tok);
        assert!(tok.cache().len() < 50, "{} pieces", tok.cache().len());
        // (fewer new words than the shared cache's window: it does not rest either)
        let together = syllable_words(1_000, 1_000);
        let mut ids = Vec::new();
        tok.encode_into_batch(&together, &SpecialSet::None, &SpecialSet::None, &mut ids, 2)
            .unwrap();
        assert_eq!(ids, plain.encode_ordinary(&together).unwrap());
        let shared = tok.cache().len();
        assert!(shared > 950, "{shared}");
        // More new words than the memo has slots, in texts of fewer than a window each: those
        // it lets go are handed to the shared cache.
        for from in (2_000..4_000 + memo::SLOTS).step_by(1_000) {
            same(&syllable_words(from, 1_000), &tok);
        }
        assert!(tok.cache().len() > shared + 10_000, "{}", tok.cache().len());
        same(&alone, &tok);
        std::thread::scope(|s| {
            s.spawn(|| {
                same(&alone, &tok);
                same(&together, &tok);
            });
        });
    }

    #[test]
    fn one_token_words_do_not_rest_the_cache() {
        // 3,000 words that are tokens, then 500 new words of more tokens each than the thread's
        // memo keeps (so that each is written to the cache at once): the cache rests only while
        // the pieces it is asked about miss, and it is not asked about a word the token table
        // answers, so all 500 are cached (counted as misses, they rested it).
        let ranks = bytes_model(&[(b" abcdef", 256)]);
        let tok = build(&ranks, None);
        let mut text = " abcdef".repeat(3000);
        for i in 0..500u32 {
            let letters: String = (0..5)
                .map(|k| char::from(b'q' + ((i >> (2 * k)) & 3) as u8))
                .collect();
            text.push_str(&format!(" x{letters}{}", "q".repeat(memo::LONGEST_IDS)));
        }
        tok.encode_ordinary(&text).unwrap();
        assert_eq!(tok.cache().len(), 500);
    }

    #[test]
    fn ranks_rule_merges_lowest_first() {
        let ranks = bytes_model(&[(b"ab", 256), (b"bc", 257), (b"abc", 258)]);
        let tok = build(&ranks, None);
        // "abc" is a token: emitted whole. "abcb": ab(256) first, then abc(258), then b.
        assert_eq!(tok.encode_ordinary("abc").unwrap(), vec![258]);
        assert_eq!(
            tok.encode_ordinary("abcb").unwrap(),
            vec![258, u32::from(b'b')]
        );
        assert_eq!(
            tok.encode_ordinary("abcb").unwrap(),
            vec![258, u32::from(b'b')]
        ); // cached
        assert_eq!(tok.decode_bytes(&[258, 98]).unwrap(), b"abcb");
    }

    #[test]
    fn merges_rule_and_ignore_merges() {
        let ranks = bytes_model(&[(b"ab", 256), (b"bc", 257), (b"abc", 258)]);
        // Only "b"+"c" then "a"+"bc" are listed: "abc" goes a|bc -> abc.
        let tok = build(&ranks, Some(vec![(b"b", b"c"), (b"a", b"bc")]));
        assert_eq!(tok.encode_ordinary("abcb").unwrap(), vec![258, 98]);
        assert_eq!(tok.encode_ordinary("ab").unwrap(), vec![97, 98]); // "ab" is not a listed merge
    }

    /// Long pieces under the merges rule are cut where no token can span: the same units as
    /// merging the whole piece, on random pieces over letters some of whose pairs are in no
    /// token (cuts) and some only inside three-byte tokens.
    #[test]
    fn merges_rule_cuts_long_pieces_as_the_whole_would_merge() {
        let extra: Vec<(&'static [u8], u32)> = vec![
            (b"ab", 256),
            (b"bc", 257),
            (b"abc", 258),
            (b"ca", 259),
            (b"cab", 260),
            (b"abd", 261),
            (b"eab", 262),
            (b"aa", 263),
            (b"aaa", 264),
        ];
        let ranks = bytes_model(&extra);
        let merges: Vec<(&[u8], &[u8])> = vec![
            (b"a", b"a"),
            (b"c", b"a"),
            (b"b", b"c"),
            (b"ab", b"d"),
            (b"a", b"b"),
            (b"aa", b"a"),
            (b"e", b"ab"),
            (b"a", b"bc"),
            (b"ca", b"b"),
        ];
        let tok = build(&ranks, Some(merges));
        let Rule::Merges(table) = &tok.rule else {
            panic!("a merges list gives the merges rule")
        };
        // Pieces where a three-byte token forms across a pair that is no token, on either side.
        let mut pieces: Vec<Vec<u8>> = vec![b"eabe".repeat(20), b"xabd".repeat(20)];
        pieces.extend(testing::long_pieces(
            0x9E37_79B9_7F4A_7C15,
            400,
            300,
            [b"abcde", b"abc"],
        ));
        for piece in pieces {
            let (mut out, mut scratch) = (Vec::new(), Vec::new());
            tok.encode_piece(
                &piece,
                None,
                &mut out,
                &mut scratch,
                &mut Bypass::default(),
                0,
            )
            .unwrap();
            let mut whole: Vec<u32> = piece.iter().map(|&b| tok.byte_units[b as usize]).collect();
            merge_with(&mut whole, table);
            assert_eq!(out, whole, "{:?}", String::from_utf8_lossy(&piece));
        }
    }

    #[test]
    fn specials_and_added_tokens() {
        let tok = build(&bytes_model(&[]), None);
        let err = tok
            .encode("hé <|end|>", &SpecialSet::None, &SpecialSet::All)
            .unwrap_err();
        assert_eq!(
            err,
            Error::Disallowed {
                token: "<|end|>".into(),
                offset: 3
            }
        );
        let ids = tok
            .encode("a<|end|>@@", &SpecialSet::All, &SpecialSet::None)
            .unwrap();
        assert_eq!(ids, vec![97, 1000, 1001]);
        let ids = tok.encode_ordinary("a<|end|>@@").unwrap();
        assert_eq!(ids.last(), Some(&1001));
        assert!(ids.len() > 3);
    }

    #[test]
    fn missing_bytes_merge_or_fail() {
        // No token for "a" alone, but "ab" exists: "ab" encodes, "a" alone cannot.
        let ranks = vec![(b"ab".to_vec(), 0), (b"b".to_vec(), 1)];
        let tok = build(&ranks, None);
        assert_eq!(tok.encode_ordinary("abb").unwrap(), vec![0, 1]);
        assert_eq!(
            tok.encode_ordinary("ba"),
            Err(Error::NoToken {
                byte: b'a',
                offset: Some(1)
            })
        );
        // The place of the first byte left without a token, not of the byte's first occurrence.
        assert_eq!(
            tok.encode_ordinary("abbba"),
            Err(Error::NoToken {
                byte: b'a',
                offset: Some(4)
            })
        );
        assert_eq!(
            tok.decode_bytes(&[0, 7]),
            Err(Error::UnknownId { id: 7, position: 1 })
        );
    }

    #[test]
    fn bad_vocabularies_are_errors() {
        let model = Model {
            ranks: vec![(b"a", 0), (b"b", 0)],
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        let Err(Error::Vocab(msg)) = ByteLevel::new(&model) else {
            panic!("accepted a duplicate id")
        };
        assert_eq!(msg, "ranks: token id 0 is used twice (b'a' and b'b')");
        let model = Model {
            ranks: vec![(b"a", 0), (b"b", 1)],
            merges: Some(vec![(b"a", b"b")]),
            patterns: vec![named::GPT2],
            ..Model::default()
        };
        let Err(Error::Vocab(msg)) = ByteLevel::new(&model) else {
            panic!("accepted a merge without a token")
        };
        assert!(msg.contains("the merged token b'ab' is not in the vocabulary"));
    }

    #[test]
    fn a_special_or_added_token_may_be_the_ordinary_token_of_its_bytes() {
        // HF keeps an added "ab" that a merge makes too: one id, the same bytes.
        for (special, added) in [(vec![("ab", 2)], vec![]), (vec![], vec![("ab", 2)])] {
            let model = Model {
                ranks: vec![(b"a", 0), (b"b", 1), (b"ab", 2)],
                merges: Some(vec![(b"a", b"b")]),
                special_tokens: special,
                added_tokens: added,
                patterns: vec![named::GPT2],
                ..Model::default()
            };
            let tok = ByteLevel::new(&model).expect("one id, one spelling");
            assert_eq!(tok.decode_bytes(&[2]).unwrap(), b"ab");
        }
        // Another id, or other bytes, under one id stay errors.
        for special in [vec![("ab", 1)], vec![("ba", 2)]] {
            let model = Model {
                ranks: vec![(b"a", 0), (b"b", 1), (b"ab", 2)],
                merges: Some(vec![(b"a", b"b")]),
                special_tokens: special,
                patterns: vec![named::GPT2],
                ..Model::default()
            };
            let Err(Error::Vocab(msg)) = ByteLevel::new(&model) else {
                panic!("accepted two spellings of one id")
            };
            assert!(msg.contains("is used twice"), "{msg}");
        }
    }
}
