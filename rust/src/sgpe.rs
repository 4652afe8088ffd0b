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
//! long for the memory left is [`NoMemory`], not an abort.
//! This module does not train and does not read files.

use crate::charset::is_ws;
use crate::errors::VocabError;
use crate::memory::{self, NoMemory};
use crate::merge::{try_merge, try_merge_seeded, Merge, PairTable};
use crate::router::Router;
use crate::spans::{goes_on, span_end, Breaks};
use crate::units::{push_utf8, utf8_len, Unit};
use crate::vocab::Vocab;
pub use crate::words::Scope;
use crate::words::{piece_end, Parts, WordSplitter};

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

/// Reusable buffers of one encoding thread.
#[derive(Default)]
struct Scratch {
    parts: Parts,
    spans: Vec<usize>,
    units: Vec<u32>,
    utf8: Vec<u8>,
    /// The units of one superword span.
    span: Vec<u32>,
    /// The positions in a span where two pieces meet and a merge applies.
    seeds: Vec<usize>,
    /// The text with its dummy space (`prefix_space`).
    prefixed: Vec<u32>,
}

impl Scratch {
    /// Buffers kept between calls stay below this many entries each (a huge piece once
    /// must not pin its buffers for the thread's life).
    const KEEP: usize = 1 << 16;

    fn trim(&mut self) {
        if self.parts.ends.capacity() > Self::KEEP || self.parts.parts.capacity() > Self::KEEP {
            self.parts = Parts::default();
        }
        if self.spans.capacity() > Self::KEEP || self.units.capacity() > Self::KEEP {
            self.spans = Vec::new();
            self.units = Vec::new();
        }
        if self.span.capacity() > Self::KEEP || self.prefixed.capacity() > Self::KEEP {
            self.span = Vec::new();
            self.prefixed = Vec::new();
        }
        if self.seeds.capacity() > Self::KEEP {
            self.seeds = Vec::new();
        }
    }
}

/// `units` appended to `out`; the vectors swapped instead where `out` is empty (a text of one
/// long piece then holds its ids once, not twice).
fn hand_over(units: &mut Vec<u32>, out: &mut Vec<u32>) -> Result<(), NoMemory> {
    if out.is_empty() && units.len() > Scratch::KEEP {
        std::mem::swap(units, out);
        return Ok(());
    }
    memory::extend(out, units)
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Run `f` with this thread's scratch buffers (fresh ones if they are in use).
fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => {
            let out = f(&mut scratch);
            scratch.trim();
            out
        }
        Err(_) => f(&mut Scratch::default()),
    })
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
    /// merge; pairs formed later are looked up as usual ([`merge_seeded`]).
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

    /// The ids of `text`, special-token text included as ordinary text.
    pub fn encode_ordinary<U: Unit>(&self, text: &[U]) -> Result<Vec<u32>, NoMemory> {
        let mut out = Vec::new();
        memory::reserve(&mut out, text.len() / 3 + 4)?;
        with_scratch(|scratch| self.encode_into(text, scratch, &mut out))?;
        Ok(out)
    }

    /// The ids of `text`, where the text of the tokens in `allowed` (ids; the special tokens)
    /// becomes those tokens (the longest one where several start at the same place).
    pub fn encode<U: Unit>(&self, text: &[U], allowed: &[u32]) -> Result<Vec<u32>, NoMemory> {
        let mut out = Vec::new();
        memory::reserve(&mut out, text.len() / 3 + 4)?;
        with_scratch(|scratch| self.encode_with(text, allowed, scratch, &mut out))?;
        Ok(out)
    }

    /// [`Self::encode`], the ids appended to `out` (a batch's chunk fills one vector this way).
    pub fn encode_onto<U: Unit>(
        &self,
        text: &[U],
        allowed: &[u32],
        out: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        with_scratch(|scratch| self.encode_with(text, allowed, scratch, out))
    }

    fn encode_with<U: Unit>(
        &self,
        text: &[U],
        allowed: &[u32],
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        if allowed.is_empty() {
            return self.encode_into(text, scratch, out);
        }
        // (An id out of range names no token: it is left out.)
        let mut specials: Vec<(&[u32], u32)> = allowed
            .iter()
            .filter(|&&id| (id as usize) < self.vocab.len())
            .map(|&id| (self.vocab.token(id), id))
            .collect();
        specials.retain(|(s, _)| !s.is_empty());
        specials.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        let (mut pos, mut done) = (0, 0);
        while pos < text.len() {
            let hit = specials.iter().find(|(s, _)| {
                s.len() <= text.len() - pos
                    && s.iter().zip(&text[pos..]).all(|(&a, &b)| a == b.cp())
            });
            match hit {
                Some(&(s, id)) => {
                    self.encode_into(&text[done..pos], scratch, out)?;
                    memory::push(out, id)?;
                    pos += s.len();
                    done = pos;
                }
                None => pos += 1,
            }
        }
        self.encode_into(&text[done..], scratch, out)
    }

    /// Encode one text (no special tokens in it), with the dummy space if the vocabulary has one.
    fn encode_into<U: Unit>(
        &self,
        text: &[U],
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        if !self.prefix_space || text.is_empty() {
            return self.encode_text(text, scratch, out);
        }
        let mut prefixed = std::mem::take(&mut scratch.prefixed);
        prefixed.clear();
        let done = memory::reserve(&mut prefixed, text.len() + 1).and_then(|()| {
            prefixed.push(0x20);
            prefixed.extend(text.iter().map(|u| u.cp()));
            self.encode_text(&prefixed[..], scratch, out)
        });
        scratch.prefixed = prefixed;
        done
    }

    fn encode_text<U: Unit>(
        &self,
        text: &[U],
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        let Some(span_pairs) = &self.span_pairs else {
            return self.encode_pieces(text, scratch, out);
        };
        let mut span = std::mem::take(&mut scratch.span);
        let mut seeds = std::mem::take(&mut scratch.seeds);
        let done = if self.seeded_spans {
            self.encode_spans_seeded(text, span_pairs, scratch, &mut span, &mut seeds, out)
        } else {
            self.encode_spans(text, span_pairs, scratch, &mut span, out)
        };
        scratch.seeds = seeds;
        scratch.span = span;
        done
    }

    /// Each span's pieces, then the span merged by the superword pairs.
    fn encode_spans<U: Unit>(
        &self,
        text: &[U],
        span_pairs: &PairTable,
        scratch: &mut Scratch,
        span: &mut Vec<u32>,
        out: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        let mut pos = 0;
        while pos < text.len() {
            let end = span_end(text, pos, &self.breaks);
            span.clear();
            self.encode_pieces(&text[pos..end], scratch, span)?;
            if span.len() > 1 {
                try_merge(span, span_pairs)?;
            }
            memory::extend(out, span)?;
            pos = end;
        }
        Ok(())
    }

    /// Each span's pieces straight into `out` (the span ends where a piece does not go on);
    /// the pairs that join two pieces looked up as they are made, and the span merged only
    /// if one of them can merge.
    fn encode_spans_seeded<U: Unit>(
        &self,
        text: &[U],
        span_pairs: &PairTable,
        scratch: &mut Scratch,
        span: &mut Vec<u32>,
        seeds: &mut Vec<usize>,
        out: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        let mut pos = 0;
        while pos < text.len() {
            let start = out.len();
            seeds.clear();
            let mut p = pos;
            loop {
                let e = piece_end(text, p);
                let first = out.len();
                self.encode_piece(&text[p..e], scratch, out)?;
                if first > start && span_pairs.get(out[first - 1], out[first]).is_some() {
                    memory::push(seeds, first - 1 - start)?;
                }
                p = e;
                if !goes_on(text, e, &self.breaks) {
                    break;
                }
            }
            if !seeds.is_empty() {
                span.clear();
                memory::extend(span, &out[start..])?;
                try_merge_seeded(span, span_pairs, seeds)?;
                out.truncate(start);
                out.extend_from_slice(span); // (no longer than what was truncated)
            }
            pos = p;
        }
        Ok(())
    }

    fn encode_pieces<U: Unit>(
        &self,
        text: &[U],
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        let mut pos = 0;
        while pos < text.len() {
            let end = piece_end(text, pos);
            self.encode_piece(&text[pos..end], scratch, out)?;
            pos = end;
        }
        Ok(())
    }

    fn encode_piece<U: Unit>(
        &self,
        piece: &[U],
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<(), NoMemory> {
        let Scratch {
            parts,
            spans,
            units,
            utf8,
            ..
        } = scratch;
        if let Some(id) = self.whole_piece(piece) {
            return memory::push(out, id);
        }
        if piece.len() == 1 {
            // One character is one token whatever the words and syllables: its units alone.
            units.clear();
            self.push_units(piece, units, utf8)?;
            try_merge(units, &self.pairs)?;
            return memory::extend(out, units);
        }
        if self.scope == Scope::Pieces {
            // One span, the whole piece: its units word by word, no list of words kept.
            units.clear();
            let ends = &mut parts.ends;
            let mut pos = 0;
            while pos < piece.len() {
                let (end, is_word) = self.splitter.next_word(piece, pos);
                if is_word {
                    ends.clear();
                    memory::reserve(ends, end - pos)?; // (a syllable is a character at least)
                    self.splitter.syllables(piece, pos, end, ends);
                    let mut start = pos;
                    for &e in ends.iter() {
                        self.push_units(&piece[start..e], units, utf8)?;
                        start = e;
                    }
                } else {
                    self.push_units(&piece[pos..end], units, utf8)?;
                }
                pos = end;
            }
            try_merge(units, &self.pairs)?;
            return hand_over(units, out);
        }
        parts.clear();
        memory::reserve(&mut parts.ends, piece.len())?;
        memory::reserve(&mut parts.parts, piece.len())?;
        self.splitter.split(piece, parts);
        spans.clear();
        memory::reserve(spans, parts.parts.len() + 1)?;
        match self.scope {
            Scope::Words => spans.extend(parts.parts.iter().map(|&(last, _)| last)),
            Scope::Pieces => spans.push(parts.ends.len()), // (not reached: above)
            Scope::Runs => {
                // Words and whitespace tokens alone; consecutive other boundary tokens together.
                let (mut first, mut in_run) = (0, false);
                for &(last, is_word) in &parts.parts {
                    let start = if first == 0 { 0 } else { parts.ends[first - 1] };
                    let ws = !is_word && parts.ends[first] == start + 1 && is_ws(piece[start].cp());
                    if is_word || ws {
                        if in_run {
                            spans.push(first);
                            in_run = false;
                        }
                        spans.push(last);
                    } else {
                        in_run = true;
                    }
                    first = last;
                }
                if in_run {
                    spans.push(parts.ends.len());
                }
            }
        }
        let (mut start, mut t) = (0, 0);
        for &last in spans.iter() {
            units.clear();
            while t < last {
                let end = parts.ends[t];
                self.push_units(&piece[start..end], units, utf8)?;
                start = end;
                t += 1;
            }
            try_merge(units, &self.pairs)?;
            memory::extend(out, units)?;
        }
        Ok(())
    }

    /// The units of one token (see the module docs).
    #[inline]
    fn push_units<U: Unit>(
        &self,
        token: &[U],
        units: &mut Vec<u32>,
        utf8: &mut Vec<u8>,
    ) -> Result<(), NoMemory> {
        if let Some(id) = self.vocab.get(token) {
            return memory::push(units, id);
        }
        match &self.fallback {
            Fallback::Unk(unk) => memory::push(units, *unk),
            Fallback::Bytes(bytes) => {
                // (at most a unit a UTF-8 byte)
                memory::reserve(units, token.iter().map(|u| utf8_len(u.cp())).sum())?;
                for ch in token.chunks(1) {
                    // (a one-character token was looked up above)
                    let found = if token.len() == 1 {
                        None
                    } else {
                        self.vocab.get(ch)
                    };
                    match found {
                        Some(id) => units.push(id),
                        None => {
                            utf8.clear();
                            push_utf8(ch[0].cp(), utf8);
                            units.extend(utf8.iter().map(|&b| bytes[usize::from(b)]));
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// The meta tokenizer's split: `text` cut into script runs by `router` (a run taking the
    /// space before it), each run encoded here, everything between runs left to the caller
    /// (tiktoken) as a span. Appends [`Routed`] items in text order.
    pub fn encode_routed<U: Unit>(
        &self,
        text: &[U],
        router: &Router,
        out: &mut Vec<Routed>,
    ) -> Result<(), NoMemory> {
        with_scratch(|scratch| {
            let mut runs = Vec::new();
            router.segment(text, &mut runs);
            for run in runs {
                if run.script.is_none() {
                    out.push(Routed::Other(run.start, run.end));
                    continue;
                }
                let mut ids = Vec::new();
                memory::reserve(&mut ids, (run.end - run.start) / 3 + 2)?;
                self.encode_text(&text[run.start..run.end], scratch, &mut ids)?;
                out.push(Routed::Run(ids));
            }
            Ok(())
        })
    }

    /// Where encoding `text` spends its time: seconds for the pieces and spans alone; then
    /// also the whole-piece lookups; then also the words, syllables and units (vocabulary
    /// lookups) of the pieces that are not one token; then the whole encoding (the merges and
    /// the superword pass too). Each stage includes the ones before it. For benchmarks.
    pub fn stage_seconds<U: Unit>(&self, text: &[U]) -> [f64; 4] {
        let time = |f: &mut dyn FnMut()| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        };
        let mut scratch = Scratch::default();
        let mut sink = 0usize;
        // Every piece of `text`, and whether a span goes on after it.
        let mut walk = |f: &mut dyn FnMut(&[U])| {
            let mut pos = 0;
            while pos < text.len() {
                let end = piece_end(text, pos);
                f(&text[pos..end]);
                sink += usize::from(goes_on(text, end, &self.breaks));
                pos = end;
            }
        };
        let pieces = time(&mut || walk(&mut |_| {}));
        let wholes = time(&mut || {
            walk(&mut |piece| {
                std::hint::black_box(self.whole_piece(piece));
            })
        });
        let units = time(&mut || {
            walk(&mut |piece| {
                if self.whole_piece(piece).is_some() {
                    return;
                }
                scratch.parts.clear();
                self.splitter.split(piece, &mut scratch.parts);
                let mut start = 0;
                for &e in &scratch.parts.ends {
                    scratch.units.clear();
                    let pushed =
                        self.push_units(&piece[start..e], &mut scratch.units, &mut scratch.utf8);
                    std::hint::black_box(pushed.is_ok());
                    std::hint::black_box(&scratch.units);
                    start = e;
                }
            })
        });
        let mut out = Vec::new();
        let all = time(&mut || {
            out.clear();
            let encoded = self.encode_into(text, &mut scratch, &mut out);
            std::hint::black_box(encoded.is_ok());
        });
        std::hint::black_box(sink);
        [pieces, wholes, units, all]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::tests::sinhala;

    fn cps(s: &str) -> Vec<u32> {
        s.chars().map(u32::from).collect()
    }

    /// An encoder over the byte tokens and `tokens`; merges and superword merges by strings.
    fn encoder(tokens: &[&str], merges: &[(&str, &str)], superword: &[(&str, &str)]) -> Encoder {
        let splitter = WordSplitter::new(
            &[(0x0D80, 0x0DFF), (0x200D, 0x200D)],
            &[],
            vec![sinhala()],
            None,
        )
        .unwrap();
        let mut all: Vec<Vec<u32>> = (0..256).map(|b| cps(&format!("<0x{b:02X}>"))).collect();
        all.extend(tokens.iter().map(|t| cps(t)));
        let id = |s: &str| all.iter().position(|t| *t == cps(s)).unwrap() as u32;
        let ids = |list: &[(&str, &str)]| {
            list.iter()
                .map(|&(a, b)| (id(a), id(b), id(&format!("{a}{b}"))))
                .collect()
        };
        let spec = EncoderSpec {
            tokens: all.clone(),
            merges: ids(merges),
            fallback: Fallback::Bytes(Box::new(std::array::from_fn(|b| b as u32))),
            special_ids: vec![],
            scope: Scope::Pieces,
            prefix_space: false,
            superword_merges: ids(superword),
            span_breaks: vec![u32::from('.')],
        };
        Encoder::new(splitter, spec).unwrap()
    }

    /// The same encoder without the shortcuts: every piece through syllables, units and
    /// merges, every span merged from all its pairs.
    fn plain(tokens: &[&str], merges: &[(&str, &str)], superword: &[(&str, &str)]) -> Encoder {
        let mut e = encoder(tokens, merges, superword);
        (e.whole, e.whole_max) = (Vec::new(), 0);
        e.seeded_spans = false;
        e
    }

    /// Texts of `alphabet`'s characters, up to 12 long, from a fixed generator.
    fn texts(alphabet: &str, n: usize) -> Vec<Vec<u32>> {
        let alphabet = cps(alphabet);
        let mut seed = 3u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        (0..n)
            .map(|_| {
                (0..next() % 13)
                    .map(|_| alphabet[next() % alphabet.len()])
                    .collect()
            })
            .collect()
    }

    const TOKENS: &[&str] = &[
        "a", "b", " ", ".", " a", " b", "ab", " ab", "a a", "a a b", " a a", "a.",
    ];

    #[test]
    fn a_whole_piece_token_bpe_does_not_reach_is_not_taken() {
        // "ab" is a token, but no merge makes it: the piece "ab" stays two tokens.
        let e = encoder(TOKENS, &[(" ", "a"), (" ", "b")], &[]);
        assert_eq!(e.encode_ordinary(&cps("ab")).unwrap(), [256, 257]);
        assert_eq!(e.encode_ordinary(&cps(" a")).unwrap(), [260]);
        // " ab" is the boundary tokens " a" and "b" (no script characters), merged.
        let e = encoder(TOKENS, &[("a", "b"), (" a", "b")], &[]);
        assert_eq!(e.encode_ordinary(&cps("ab")).unwrap(), [262]);
        assert_eq!(e.encode_ordinary(&cps(" ab")).unwrap(), [263]);
    }

    #[test]
    fn shortcuts_give_the_plain_ids() {
        let merges = [(" ", "a"), (" ", "b"), ("a", "b"), (" ", "ab"), ("a", ".")];
        let superword = [("a", " a"), ("a a", " b"), (" a", " a")];
        let (fast, slow) = (
            encoder(TOKENS, &merges, &superword),
            plain(TOKENS, &merges, &superword),
        );
        assert!(fast.seeded_spans);
        assert_eq!(fast.encode_ordinary(&cps("a a b")).unwrap(), [265]);
        assert_eq!(
            fast.encode_ordinary(&cps("a. a b")).unwrap(),
            [267, 260, 261]
        );
        for text in texts("ab .\n\u{0D9A}", 20_000) {
            assert_eq!(
                fast.encode_ordinary(&text).unwrap(),
                slow.encode_ordinary(&text).unwrap(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_space_prefixed_syllable_the_vocabulary_lacks_keeps_its_bare_syllable() {
        // Issue 29's case: "ශ්‍රී" and " ශ්‍" are tokens, " ශ්‍රී" is not. With the building
        // merges of training (bare syllables built first), " ශ්‍රී" is the space and "ශ්‍රී";
        // with the space's merges first it was " ශ්‍" and "රී".
        let symbols = ["ශ්\u{200D}රී", " ශ්\u{200D}", "රී", " "];
        let (merges, pieces) =
            crate::training::building_merges(&symbols.map(cps)).expect("building merges");
        let text = |t: &[u32]| t.iter().map(|&c| char::from_u32(c).unwrap()).collect();
        let pieces: Vec<String> = pieces.iter().map(|p| text(p)).collect();
        let merges: Vec<(String, String)> =
            merges.iter().map(|(a, b)| (text(a), text(b))).collect();
        let tokens: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let pairs: Vec<(&str, &str)> = merges
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let e = encoder(&tokens, &pairs, &[]);
        let shown = |ids: Vec<u32>| -> Vec<String> {
            ids.iter().map(|&id| text(e.vocab.token(id))).collect()
        };
        assert_eq!(
            shown(e.encode_ordinary(&cps(" ශ්\u{200D}රී")).unwrap()),
            [" ", "ශ්\u{200D}රී"]
        );
        assert_eq!(
            shown(e.encode_ordinary(&cps(" ශ්\u{200D}")).unwrap()),
            [" ශ්\u{200D}"]
        );
        assert_eq!(
            shown(e.encode_ordinary(&cps("ශ්\u{200D}රී")).unwrap()),
            ["ශ්\u{200D}රී"]
        );
        // The space's merges first (the order before): the syllable is cut.
        let mut spaced_first = pairs.clone();
        spaced_first.sort_by_key(|&(a, _)| !a.starts_with(' '));
        let old = encoder(&tokens, &spaced_first, &[]);
        let ids = old.encode_ordinary(&cps(" ශ්\u{200D}රී")).unwrap();
        assert_eq!(ids.len(), 2);
        assert_eq!(text(old.vocab.token(ids[0])), " ශ්\u{200D}");
    }

    #[test]
    fn a_superword_merge_inside_a_piece_turns_the_shortcut_off() {
        // ("a", "b") as a superword merge can join units inside the piece "ab": every pair of
        // the span must be looked up.
        let superword = [("a", " a"), ("a", "b")];
        let (fast, slow) = (
            encoder(TOKENS, &[(" ", "a")], &superword),
            plain(TOKENS, &[(" ", "a")], &superword),
        );
        assert!(!fast.seeded_spans);
        assert_eq!(fast.encode_ordinary(&cps("ab")).unwrap(), [262]);
        for text in texts("ab .", 5_000) {
            assert_eq!(
                fast.encode_ordinary(&text).unwrap(),
                slow.encode_ordinary(&text).unwrap(),
                "{text:?}"
            );
        }
    }
}
