//! The meta tokenizer's encoder (`wwho.meta`): a byte-level BPE (tiktoken's `o200k_base`) for
//! everything but the Indic runs, an SGPE vocabulary for those, one id space.
//!
//! Ids `[0, offset)` are the byte-level encoder's own; an SGPE id `i` is `offset + i`. The text is
//! cut into script runs by the router (a run takes the space right before it, as in
//! [`Router::segment`]); each run is encoded by SGPE, everything between runs by the byte-level
//! encoder. Special tokens follow tiktoken's model: the text of a *disallowed* one is an error (the
//! leftmost, the longest where several start there), that of an *allowed* one becomes its id (the
//! same leftmost-longest rule, matches never overlapping), any other is ordinary text. This module
//! does not know Python; `py::meta` wraps it.

use crate::bytelevel::specials::SpecialSet;
use crate::bytelevel::{ByteLevel, Error as ByteError};
use crate::errors::VocabError;
use crate::memory::{self, NoMemory};
use crate::router::Router;
use crate::sgpe::Encoder;
use crate::units::Unit;
use crate::utf8::with_utf8;
use std::sync::Arc;

/// A special token: its text (code points) and its unified id.
#[derive(Clone, Debug)]
pub struct Special {
    pub text: Vec<u32>,
    pub id: u32,
}

/// Why a text could not be encoded.
#[derive(Debug)]
pub enum Error {
    /// The special token `index` (of [`Meta::specials`]) is in the text at code point `offset`.
    Disallowed { index: usize, offset: usize },
    /// The byte-level encoder failed (a byte no token covers: not with tiktoken's files).
    Bytes(ByteError),
    /// Memory for the SGPE part's ids could not be had (see `crate::memory`).
    NoMemory(NoMemory),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Disallowed { index, offset } => {
                write!(f, "disallowed special token {index} at offset {offset}")
            }
            Error::Bytes(e) => e.fmt(f),
            Error::NoMemory(e) => write!(f, "out of memory: {e}"),
        }
    }
}

/// An id with no token, at `position` of the input.
#[derive(Debug, PartialEq, Eq)]
pub struct UnknownId {
    pub id: u32,
    pub position: usize,
}

/// Why [`Meta::decode`] made no bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum DecodeError {
    Unknown(UnknownId),
    /// The output could not be allocated.
    NoMemory(NoMemory),
}

pub struct Meta {
    sgpe: Arc<Encoder>,
    router: Router,
    bytes: Arc<ByteLevel>,
    offset: u32,
    specials: Vec<Special>,
    /// The specials disallowed when the caller names none (tiktoken's).
    defaults: Vec<usize>,
    /// No run starts at a code point below 256: a text in one-byte storage is never routed.
    latin1_free: bool,
}

impl Meta {
    /// `offset`: the byte-level part's size (its `n_vocab`); `defaults`: indices of `specials`.
    pub fn new(
        sgpe: Arc<Encoder>,
        router: Router,
        bytes: Arc<ByteLevel>,
        offset: u32,
        specials: Vec<Special>,
        defaults: Vec<usize>,
    ) -> Result<Meta, VocabError> {
        if u64::from(offset) < bytes.n_vocab() {
            return Err(VocabError::Offset {
                offset,
                n_vocab: bytes.n_vocab(),
            });
        }
        if u64::from(offset) + sgpe.vocab_size() as u64 > u64::from(u32::MAX) {
            return Err(VocabError::Unified);
        }
        let size = u64::from(offset) + sgpe.vocab_size() as u64;
        if let Some(s) = specials.iter().find(|s| s.text.is_empty()) {
            return Err(VocabError::EmptySpecial(s.id));
        }
        if let Some(s) = specials.iter().find(|s| u64::from(s.id) >= size) {
            return Err(VocabError::SpecialId { id: s.id, size });
        }
        if let Some(&i) = defaults.iter().find(|&&i| i >= specials.len()) {
            return Err(VocabError::DefaultSpecial(i));
        }
        let latin1_free = (0..=255u8).all(|c| router.next_run(&[c], 0).is_none());
        Ok(Meta {
            sgpe,
            router,
            bytes,
            offset,
            specials,
            defaults,
            latin1_free,
        })
    }

    /// One past the largest id.
    pub fn size(&self) -> u64 {
        u64::from(self.offset) + self.sgpe.vocab_size() as u64
    }

    pub fn offset(&self) -> u32 {
        self.offset
    }

    pub fn specials(&self) -> &[Special] {
        &self.specials
    }

    /// The specials (indices) that `encode` disallows.
    pub fn defaults(&self) -> &[usize] {
        &self.defaults
    }

    /// The ids of `text` with the default special tokens disallowed and none allowed.
    pub fn encode<U: Unit>(&self, text: &[U]) -> Result<Vec<u32>, Error> {
        self.encode_with(text, &[], &self.defaults)
    }

    /// [`Self::encode`], the ids appended to `out`.
    pub fn encode_into<U: Unit>(&self, text: &[U], out: &mut Vec<u32>) -> Result<(), Error> {
        self.encode_onto(text, &[], &self.defaults, out)
    }

    /// The ids of `text`: the specials `allowed` (indices) become their ids, the text of one of
    /// `disallowed` is an error, every other text is ordinary.
    pub fn encode_with<U: Unit>(
        &self,
        text: &[U],
        allowed: &[usize],
        disallowed: &[usize],
    ) -> Result<Vec<u32>, Error> {
        // Not allocated here: the first span's ids are usually all of them, and become `out`.
        let mut out = Vec::new();
        self.encode_onto(text, allowed, disallowed, &mut out)?;
        Ok(out)
    }

    /// [`encode_with`](Self::encode_with), the ids appended to `out` (a batch's chunk). On an
    /// error, `out` may hold some of the text's ids.
    pub fn encode_onto<U: Unit>(
        &self,
        text: &[U],
        allowed: &[usize],
        disallowed: &[usize],
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        if let Some((offset, index)) = NextSpecials::new(disallowed).find(self, text, 0) {
            return Err(Error::Disallowed { index, offset });
        }
        let mut pos = 0;
        let mut next = NextSpecials::new(allowed);
        while let Some((start, index)) = next.find(self, text, pos) {
            self.encode_ordinary_into(&text[pos..start], out)?;
            let special = &self.specials[index];
            memory::push(out, special.id).map_err(Error::NoMemory)?;
            pos = start + special.text.len();
        }
        self.encode_ordinary_into(&text[pos..], out)
    }

    /// The ids of `text`, the text of every special token ordinary.
    pub fn encode_ordinary<U: Unit>(&self, text: &[U]) -> Result<Vec<u32>, Error> {
        let mut out = Vec::new();
        self.encode_ordinary_into(text, &mut out)?;
        Ok(out)
    }

    /// [`Self::encode_ordinary`], the ids appended to `out`.
    pub fn encode_ordinary_into<U: Unit>(
        &self,
        text: &[U],
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        if std::mem::size_of::<U>() == 1 && self.latin1_free {
            return self.encode_other(text, out); // Latin-1 text: no run to look for
        }
        let mut pos = 0;
        while let Some((start, end, _)) = self.router.next_run(text, pos) {
            // The space right before a run is the run's (Router::segment's rule).
            let run_start = if start > pos && text[start - 1].cp() == 0x20 {
                start - 1
            } else {
                start
            };
            self.encode_other(&text[pos..run_start], out)?;
            // Straight onto `out`, then moved into the unified id space: no vector of its own per
            // run (a line of many short runs would allocate one each).
            let at = out.len();
            self.sgpe
                .encode_onto(&text[run_start..end], &[], out)
                .map_err(Error::NoMemory)?;
            for id in &mut out[at..] {
                *id += self.offset;
            }
            pos = end;
        }
        self.encode_other(&text[pos..], out)
    }

    /// Text between script runs: the byte-level encoder's ids.
    fn encode_other<U: Unit>(&self, text: &[U], out: &mut Vec<u32>) -> Result<(), Error> {
        if text.is_empty() {
            return Ok(());
        }
        with_utf8(U::text(text), |s| {
            self.bytes
                .encode_into(s, &SpecialSet::None, &SpecialSet::None, out)
        })
        .map_err(Error::NoMemory)?
        .map_err(Error::Bytes)
    }

    /// The bytes of `ids` joined.
    pub fn decode(&self, ids: &[u32]) -> Result<Vec<u8>, DecodeError> {
        let mut out = Vec::new();
        let _ = out.try_reserve(ids.len().saturating_mul(4)); // (a guess; the rest grows as needed)
        for (position, &id) in ids.iter().enumerate() {
            match self.token_bytes(id) {
                Some(b) => memory::extend(&mut out, b).map_err(DecodeError::NoMemory)?,
                None => return Err(DecodeError::Unknown(UnknownId { id, position })),
            }
        }
        Ok(out)
    }

    /// The bytes of one token; `None` for an id with no token.
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        if id < self.offset {
            self.bytes.token_bytes(id)
        } else {
            self.sgpe.token_bytes(id - self.offset)
        }
    }

    /// The byte-level part (its piece cache, its tables).
    pub fn bytes(&self) -> &ByteLevel {
        &self.bytes
    }

    /// Bytes held by the SGPE part's tables (an estimate; the byte-level part may be shared).
    pub fn sgpe_heap_bytes(&self) -> usize {
        self.sgpe.heap_bytes()
    }
}

/// Where each special of a set next starts in a text, each looked for again only once the text
/// has been passed beyond that place: a special that the text lacks is searched for once, not at
/// every occurrence of another (which made a text of many allowed specials quadratic). The places
/// of the first few specials are kept inline: every encode makes one of these.
struct NextSpecials<'s> {
    set: &'s [usize],
    /// Per special of `set`: [`UNSEARCHED`], its start at or after the place it was looked for
    /// from, or [`ABSENT`].
    inline: [usize; INLINE],
    more: Vec<usize>,
}

const INLINE: usize = 8;
const UNSEARCHED: usize = usize::MAX;
const ABSENT: usize = usize::MAX - 1;

impl<'s> NextSpecials<'s> {
    fn new(set: &'s [usize]) -> Self {
        NextSpecials {
            set,
            inline: [UNSEARCHED; INLINE],
            more: vec![UNSEARCHED; set.len().saturating_sub(INLINE)],
        }
    }

    /// The leftmost special in `text` at or after `from`, the longest of those starting there:
    /// `(start, index)`.
    fn find<U: Unit>(&mut self, meta: &Meta, text: &[U], from: usize) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (k, &index) in self.set.iter().enumerate() {
            let pattern = &meta.specials[index].text;
            let slot = if k < INLINE {
                &mut self.inline[k]
            } else {
                &mut self.more[k - INLINE]
            };
            if *slot == UNSEARCHED || *slot < from {
                *slot = find(text, from, pattern).unwrap_or(ABSENT);
            }
            let at = *slot;
            if at == ABSENT {
                continue;
            }
            let better = match best {
                None => true,
                Some((q, i)) => at < q || (at == q && meta.specials[i].text.len() < pattern.len()),
            };
            if better {
                best = Some((at, index));
            }
        }
        best
    }
}

/// The first position at or after `from` where `pattern` (not empty) starts in `text`.
fn find<U: Unit>(text: &[U], from: usize, pattern: &[u32]) -> Option<usize> {
    let (&first, rest) = pattern.split_first()?;
    let last = text.len().checked_sub(pattern.len())?;
    let mut p = from;
    if std::mem::size_of::<U>() == 1 {
        // SAFETY: a one-byte unit is a u8 (the three units are u8, u16 and u32).
        let bytes = unsafe { std::slice::from_raw_parts(text.as_ptr().cast::<u8>(), text.len()) };
        let first = u8::try_from(first).ok()?;
        while p <= last {
            p += memchr::memchr(first, &bytes[p..=last])?;
            if rest.iter().zip(&text[p + 1..]).all(|(&c, u)| u.cp() == c) {
                return Some(p);
            }
            p += 1;
        }
        return None;
    }
    while p <= last {
        if text[p].cp() == first && rest.iter().zip(&text[p + 1..]).all(|(&c, u)| u.cp() == c) {
            return Some(p);
        }
        p += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytelevel::Model;
    use crate::schema::tests::sinhala;
    use crate::sgpe::{EncoderSpec, Fallback, Scope};
    use crate::words::WordSplitter;

    fn cps(s: &str) -> Vec<u32> {
        s.chars().map(u32::from).collect()
    }

    /// Byte-level ids: the 256 bytes, then "ab" (256); "<|e|>" (299) and "[P]" (SGPE 258) special.
    /// SGPE: byte fallback (ids 0..255), " ශ" (256), "ශ" (257), "[P]" (258). Offset 300.
    fn meta() -> Meta {
        let blocks = vec![(0x0D80, 0x0DFF)];
        let splitter = WordSplitter::new(
            &[(0x0D80, 0x0DFF), (0x200D, 0x200D)],
            &[],
            vec![sinhala()],
            None,
        )
        .unwrap();
        let mut tokens: Vec<Vec<u32>> = (0..256).map(|b| cps(&format!("<0x{b:02X}>"))).collect();
        tokens.extend([cps(" ශ"), cps("ශ"), cps("[P]")]);
        let spec = EncoderSpec {
            tokens,
            merges: vec![],
            fallback: Fallback::Bytes(Box::new(std::array::from_fn(|b| b as u32))),
            special_ids: vec![258],
            scope: Scope::Pieces,
            prefix_space: false,
            superword_merges: vec![],
            span_breaks: vec![],
        };
        let sgpe = Encoder::new(splitter, spec).unwrap();
        let router = Router::new(&[(blocks, vec![(0x200D, 0x200D)])]).unwrap();
        let singles: Vec<[u8; 1]> = (0..=255u8).map(|b| [b]).collect();
        let mut ranks: Vec<(&[u8], u32)> = singles
            .iter()
            .enumerate()
            .map(|(i, b)| (&b[..], i as u32))
            .collect();
        ranks.push((b"ab", 256));
        let model = Model {
            ranks,
            ignore_merges: true,
            special_tokens: vec![("<|e|>", 299)],
            patterns: vec![r"\S+|\s+"],
            ..Model::default()
        };
        let bytes = Arc::new(ByteLevel::new(&model).unwrap());
        let specials = vec![
            Special {
                text: cps("<|e|>"),
                id: 299,
            },
            Special {
                text: cps("[P]"),
                id: 558,
            },
        ];
        Meta::new(Arc::new(sgpe), router, bytes, 300, specials, vec![0]).unwrap()
    }

    #[test]
    fn routes_runs_to_sgpe_and_the_rest_to_bytes() {
        let m = meta();
        let text = cps("ab ශx ශ");
        let ids = m.encode(&text).unwrap();
        assert_eq!(ids, vec![256, 300 + 256, u32::from(b'x'), 300 + 256]);
        assert_eq!(m.decode(&ids).unwrap(), "ab ශx ශ".as_bytes());
        // The space before a run is the run's; a run at the start has none.
        assert_eq!(m.encode(&cps("ශ a")).unwrap(), vec![557, 32, 97]);
        // Latin-1 storage skips the router and gives the same ids.
        let latin: Vec<u8> = b"ab [P] \xe9".to_vec();
        let wide: Vec<u32> = latin.iter().map(|&b| u32::from(b)).collect();
        assert_eq!(m.encode(&latin).unwrap(), m.encode(&wide).unwrap());
        assert_eq!(
            m.decode(&[299, 1000]),
            Err(DecodeError::Unknown(UnknownId {
                id: 1000,
                position: 1
            }))
        );
        assert_eq!(
            m.decode(&[257]),
            Err(DecodeError::Unknown(UnknownId {
                id: 257,
                position: 0
            }))
        );
    }

    #[test]
    fn special_tokens_follow_tiktoken() {
        let m = meta();
        let text = cps("ශ<|e|>x[P]");
        match m.encode(&text) {
            Err(Error::Disallowed {
                index: 0,
                offset: 1,
            }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(
            m.encode_with(&text, &[0, 1], &[]).unwrap(),
            vec![557, 299, u32::from(b'x'), 558]
        );
        let ordinary = m.encode_ordinary(&text).unwrap();
        assert_eq!(m.decode(&ordinary).unwrap(), "ශ<|e|>x[P]".as_bytes());
        match m.encode_with(&text, &[0], &[1]) {
            Err(Error::Disallowed {
                index: 1,
                offset: 7,
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn specials_past_the_inline_places_are_found_too() {
        let m = meta();
        let text = cps("a[P]<|e|>ශ[P]b<|e|>");
        let want = m.encode_with(&text, &[0, 1], &[]).unwrap();
        assert_eq!(want, vec![97, 558, 299, 557, 558, 98, 299]);
        // a set longer than INLINE, the specials present only past it
        let long: Vec<usize> = std::iter::repeat_n(1, INLINE).chain([0, 1]).collect();
        assert_eq!(m.encode_with(&text, &long, &[]).unwrap(), want);
        let only_past = [vec![1; INLINE], vec![0]].concat(); // [P] inline, <|e|> past
        let got = m
            .encode_with(&cps("x<|e|>y<|e|>"), &only_past, &[])
            .unwrap();
        assert_eq!(got, vec![u32::from(b'x'), 299, u32::from(b'y'), 299]);
    }

    #[test]
    fn find_is_the_first_match() {
        let t: Vec<u32> = "ab<|x|><|x|>".chars().map(u32::from).collect();
        let p: Vec<u32> = "<|x|>".chars().map(u32::from).collect();
        assert_eq!(find(&t, 0, &p), Some(2));
        assert_eq!(find(&t, 3, &p), Some(7));
        assert_eq!(find(&t, 8, &p), None);
        assert_eq!(find(&t[..6], 0, &p), None);
        let b: Vec<u8> = b"ab<|x|><|x|><|".to_vec();
        assert_eq!(find(&b, 0, &p), Some(2));
        assert_eq!(find(&b, 3, &p), Some(7));
        assert_eq!(find(&b, 8, &p), None);
        assert_eq!(find(&b, 0, &[0x100]), None);
    }
}
