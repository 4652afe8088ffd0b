//! SGPE encoding and decoding (`wwho.sgpe.tokenizer.SGPETokenizer`'s hot path).
//!
//! Text -> pieces -> words and boundary tokens -> syllables ([`WordSplitter`]); each token is
//! one unit if the vocabulary has it, else its characters, and a character the vocabulary lacks
//! becomes its UTF-8 bytes as the byte tokens `<0x00>`..`<0xFF>` (or the whole token becomes
//! `[UNK]` in the "unk" fallback). The units of a span (a word by default; see [`Scope`]) are
//! merged by rank ([`crate::merge`]): the syllable-building merges first, then the learned ones.
//!
//! Two options of `wwho.sgpe` change the input of those steps, not the steps: `prefix_space`
//! encodes each text (each part between special tokens) as if a space came before it; with
//! superword merges, the text is cut into sentence spans ([`crate::spans`]), each span's pieces
//! are encoded as above, then every merge (superword merges ranked last) runs over the span's
//! units. Word-level merges never join two pieces, so this equals running all ranks over the
//! span from code points, which is what the Hugging Face export's BPE does.
//!
//! Two shortcuts give the same ids with less work. A piece that is a vocabulary token whose own
//! encoding is that token (found at construction by encoding every such token: most pieces of
//! ordinary text) is one lookup, without syllables, units or merges. And where each piece has
//! had every word-level merge (scope `Pieces`) and superword merges only join a token to one
//! starting with a space, only the pairs where two pieces meet can merge when a span's second
//! pass begins: those are looked up as the pieces are encoded, and a
//! span none of them can merge is left as it is ([`Encoder::seeds_suffice`]).
//!
//! The fallback keeps every syllable the vocabulary knows, with or without its leading space,
//! whole. A syllable the vocabulary lacks goes to its characters, and the building merges, which
//! rank first, rebuild what they can. They are ordered so that on ` X` they rebuild `X` before
//! any of them joins the space (`crate::training::building_merges`): where ` X` is not a token
//! but `X` is, the result is the space and `X`, never pieces of each. There is no second rule
//! here: the same merges run in the Hugging Face export's BPE, which gives the same tokens
//! (vocabularies trained before this order keep their merges, and with them their old result).
//!
//! An [`Encoder`] is immutable after construction, so one can serve many threads at once;
//! the Python layer's batches use several. There is no cache that fills as text is encoded.
//! Buffers as long as a text or a piece grow through [`crate::memory`], so that a text too
//! long for the memory left is [`crate::memory::NoMemory`], not an abort.
//! This module does not train and does not read files.
//!
//! A text's encoding (special tokens, the dummy space, superword spans, script runs) is in
//! `encode`, one piece's in `piece`, each thread's reusable buffers in `scratch`, the timing of
//! the stages for benchmarks in `stages`; this module holds the encoder's tables, their
//! construction and checks, and decoding.

use crate::errors::VocabError;
use crate::merge::{Merge, PairTable};
use crate::spans::Breaks;
use crate::units::{push_utf8, Unit};
use crate::vocab::Vocab;
pub use crate::words::Scope;
use crate::words::{piece_end, WordSplitter};

mod encode;
mod piece;
mod scratch;
mod stages;
#[cfg(test)]
mod tests;

use scratch::with_scratch;

/// What a token the vocabulary lacks becomes.
#[derive(Clone, Debug)]
pub enum Fallback {
    /// Its characters; a missing character its UTF-8 bytes (these 256 ids).
    Bytes(Box<[u32; 256]>),
    /// The `[UNK]` id, for the whole token.
    Unk(u32),
}

/// Why [`Encoder::decode`] made no bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// An id with no token.
    OutOfRange(i64),
    /// The output (this many bytes) could not be allocated.
    NoMemory(usize),
}

/// Everything an encoder needs, in ids (Python computes them from `vocab.json`).
pub struct EncoderSpec {
    /// The string of every id, as code points.
    pub tokens: Vec<Vec<u32>>,
    /// `(left, right, merged)` in rank order (building merges first, then learned ones).
    pub merges: Vec<(u32, u32, u32)>,
    pub fallback: Fallback,
    pub special_ids: Vec<u32>,
    pub scope: Scope,
    /// Encode each text as if a space came before it (the dummy prefix).
    pub prefix_space: bool,
    /// Superword merges `(left, right, merged)`, ranked after `merges`; with them, text is cut
    /// into spans that end after one of `span_breaks`.
    pub superword_merges: Vec<(u32, u32, u32)>,
    pub span_breaks: Vec<u32>,
}

#[derive(Debug)]
pub struct Encoder {
    splitter: WordSplitter,
    vocab: Vocab,
    pairs: PairTable,
    fallback: Fallback,
    scope: Scope,
    prefix_space: bool,
    /// Every merge, superword merges last (`None` without superword merges).
    span_pairs: Option<PairTable>,
    /// Whether, after each piece's own merges, only the pairs that join two pieces of a span can
    /// merge at first (see [`Encoder::seeds_suffice`]); the span pass then looks up only those.
    seeded_spans: bool,
    /// Bit `id`: token `id` is a whole piece that encodes as itself (found at construction by
    /// encoding it). A piece that is such a token needs no syllables, units or merges.
    whole: Vec<u64>,
    /// The length of the longest such token (a longer piece is not looked up).
    whole_max: usize,
    breaks: Breaks,
    token_bytes: Vec<u8>,
    token_starts: Vec<usize>,
    specials: Vec<u32>,
    is_special: Vec<bool>,
}

/// One item of [`Encoder::encode_routed`]: a script run's ids, or a span left to the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Routed {
    Run(Vec<u32>),
    Other(usize, usize),
}

impl Encoder {
    pub fn new(splitter: WordSplitter, spec: EncoderSpec) -> Result<Self, VocabError> {
        let n = spec.tokens.len();
        let check = |id: u32, what: &'static str| {
            if (id as usize) < n {
                Ok(id)
            } else {
                Err(VocabError::Id { what, id, size: n })
            }
        };
        // A special token's text in a text is ordinary text unless allowed (matched apart, by
        // `Encoder::encode`): no syllable or piece is ever looked up as one.
        let vocab = Vocab::with_hidden(&spec.tokens, &spec.special_ids)?;
        let mut pairs = PairTable::with_capacity(spec.merges.len());
        let mut span_pairs = if spec.superword_merges.is_empty() {
            None
        } else {
            Some(PairTable::with_capacity(
                spec.merges.len() + spec.superword_merges.len(),
            ))
        };
        let ranked = spec.merges.iter().map(|m| (m, true));
        let superword = spec.superword_merges.iter().map(|m| (m, false));
        for (rank, (&(a, b, c), word_level)) in ranked.chain(superword).enumerate() {
            check(a, "merge")?;
            check(b, "merge")?;
            check(c, "merge")?;
            let (ta, tb, tc) = (
                &spec.tokens[a as usize],
                &spec.tokens[b as usize],
                &spec.tokens[c as usize],
            );
            if tc.len() != ta.len() + tb.len()
                || tc[..ta.len()] != ta[..]
                || tc[ta.len()..] != tb[..]
            {
                return Err(VocabError::NotJoined {
                    rank,
                    left: a,
                    right: b,
                    joined: c,
                });
            }
            let merge = Merge {
                rank: rank as u32,
                id: c,
            };
            if word_level {
                pairs.insert(a, b, merge);
            }
            if let Some(table) = &mut span_pairs {
                table.insert(a, b, merge);
            }
        }
        let mut token_bytes = Vec::new();
        let mut token_starts = Vec::with_capacity(n + 1);
        let mut byte_of = vec![None; n];
        match &spec.fallback {
            Fallback::Bytes(ids) => {
                for (b, &id) in ids.iter().enumerate() {
                    byte_of[check(id, "byte token")? as usize] = Some(b as u8);
                }
            }
            Fallback::Unk(id) => {
                check(*id, "[UNK]")?;
            }
        }
        for (t, byte) in spec.tokens.iter().zip(&byte_of) {
            token_starts.push(token_bytes.len());
            match byte {
                Some(b) => token_bytes.push(*b),
                None => t.iter().for_each(|&cp| push_utf8(cp, &mut token_bytes)),
            }
        }
        token_starts.push(token_bytes.len());
        let mut is_special = vec![false; n];
        for &id in &spec.special_ids {
            is_special[check(id, "special token")? as usize] = true;
        }
        let seeded_spans = Self::seeds_suffice(&spec, &byte_of);
        let mut encoder = Self {
            splitter,
            vocab,
            pairs,
            fallback: spec.fallback,
            scope: spec.scope,
            prefix_space: spec.prefix_space,
            span_pairs,
            seeded_spans,
            whole: Vec::new(),
            whole_max: 0,
            breaks: Breaks::new(spec.span_breaks),
            token_bytes,
            token_starts,
            specials: spec.special_ids,
            is_special,
        };
        (encoder.whole, encoder.whole_max) = encoder.whole_pieces(&spec.tokens);
        Ok(encoder)
    }

    /// Whether the superword pass may look up only the pairs that join two pieces at first.
    ///
    /// With scope `Pieces` each piece's units have been merged by every word-level merge, so
    /// a pair inside a piece can only have a superword merge. If each superword merge's right
    /// token starts with a space, and no byte-fallback token or `[UNK]` (units that can stand
    /// anywhere in a piece) starts with one, no element inside a piece can be such a right
    /// token: a piece holds a space only as its first character, and an element's string
    /// begins with the string of its first unit. So at first only the pairs across pieces can
    /// merge; pairs formed later are looked up as usual ([`crate::merge::try_merge_seeded`]).
    fn seeds_suffice(spec: &EncoderSpec, byte_of: &[Option<u8>]) -> bool {
        let starts_with_space = |id: u32| spec.tokens[id as usize].first() == Some(&0x20);
        let unk_ok = match &spec.fallback {
            Fallback::Unk(id) => !starts_with_space(*id),
            Fallback::Bytes(_) => true,
        };
        let bytes_ok = byte_of
            .iter()
            .enumerate()
            .all(|(id, b)| b.is_none() || !starts_with_space(id as u32));
        spec.scope == Scope::Pieces
            && unk_ok
            && bytes_ok
            && spec
                .superword_merges
                .iter()
                .all(|&(_, right, _)| starts_with_space(right))
    }

    /// The bitset of [`Encoder::whole`]: every token that is one whole piece, encoded as a
    /// piece by the full path; those whose encoding is the token alone. (Exact by construction:
    /// a piece's ids depend on its code points only.)
    fn whole_pieces(&self, tokens: &[Vec<u32>]) -> (Vec<u64>, usize) {
        let mut whole = vec![0u64; tokens.len().div_ceil(64)];
        let mut longest = 0;
        let mut out = Vec::new();
        with_scratch(|scratch| {
            for (id, t) in tokens.iter().enumerate() {
                if t.is_empty() || piece_end(&t[..], 0) != t.len() {
                    continue;
                }
                out.clear();
                // (a token whose encoding cannot be had is not taken whole: the slow path stays)
                let encoded = self.encode_piece(&t[..], scratch, &mut out);
                if encoded.is_ok() && out[..] == [id as u32] {
                    whole[id / 64] |= 1 << (id % 64);
                    longest = longest.max(t.len());
                }
            }
        });
        (whole, longest)
    }

    /// The id of `piece` if it is a token that encodes as itself.
    #[inline]
    fn whole_piece<U: Unit>(&self, piece: &[U]) -> Option<u32> {
        if piece.len() > self.whole_max {
            return None;
        }
        let id = self.vocab.get(piece)?;
        let word = *self.whole.get(id as usize / 64)?;
        (word & (1 << (id % 64)) != 0).then_some(id)
    }

    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    pub fn splitter(&self) -> &WordSplitter {
        &self.splitter
    }

    /// Bytes held by the encoder's tables (an estimate).
    pub fn heap_bytes(&self) -> usize {
        self.splitter.heap_bytes()
            + self.vocab.heap_bytes()
            + self.pairs.heap_bytes()
            + self.span_pairs.as_ref().map_or(0, PairTable::heap_bytes)
            + self.token_bytes.capacity()
            + self.token_starts.capacity() * 8
            + self.is_special.capacity()
            + self.whole.capacity() * 8
            + self.breaks.heap_bytes()
    }

    /// The bytes of `ids` joined; an id out of range is an error naming it. Their size comes from the input: it is measured first and asked for
    /// with `try_reserve`, so that an output memory cannot hold is [`DecodeError::NoMemory`], not
    /// an abort of the process.
    pub fn decode(&self, ids: &[i64], skip_special: bool) -> Result<Vec<u8>, DecodeError> {
        let n = self.vocab.len() as i64;
        let mut size = 0usize;
        for &id in ids {
            if !(0..n).contains(&id) {
                return Err(DecodeError::OutOfRange(id));
            }
            let id = id as usize;
            if !(skip_special && self.is_special[id]) {
                size += self.token_starts[id + 1] - self.token_starts[id];
            }
        }
        let mut out = Vec::new();
        out.try_reserve_exact(size)
            .map_err(|_| DecodeError::NoMemory(size))?;
        for &id in ids {
            let id = id as usize;
            if skip_special && self.is_special[id] {
                continue;
            }
            out.extend_from_slice(
                &self.token_bytes[self.token_starts[id]..self.token_starts[id + 1]],
            );
        }
        Ok(out)
    }

    /// The bytes of one token (a byte-fallback token is its byte).
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        let id = id as usize;
        (id < self.vocab.len())
            .then(|| &self.token_bytes[self.token_starts[id]..self.token_starts[id + 1]])
    }

    pub fn special_ids(&self) -> &[u32] {
        &self.specials
    }
}
