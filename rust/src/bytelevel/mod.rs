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

mod build;
pub mod cache;
mod characters;
mod error;
pub mod files;
pub mod gguf;
mod memo;
mod mid;
mod pieces;
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
use crate::pretokenize::Pretokenizer;
use cache::{Bypass, PieceCache};
use specials::{SpecialSet, Specials};
use std::sync::atomic::{AtomicU64, Ordering};
use table::{Packed, TokenTable, PACKED};
use vocab::Vocab;

/// Ids at or above this are pseudo ids of bytes that have no token.
const PSEUDO: u32 = u32::MAX - 255;
/// Largest token id a vocabulary may use.
pub const MAX_ID: u32 = PSEUDO - 1;

/// Units of one piece from which they are handed over to the text's ids rather than copied.
const LONG_UNITS: usize = 1 << 16;

pub use error::Error;

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
    /// The length in bytes of the longest token.
    longest: usize,
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
            Rule::Ranks if Self::suits_heap(bytes) => return self.merge_heap_long(bytes, units),
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
mod tests;
