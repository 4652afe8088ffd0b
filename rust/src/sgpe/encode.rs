//! A text to ids: the special tokens allowed in it matched apart, the dummy space, the text cut
//! into superword spans and each span merged again (only where two of its pieces can merge,
//! when that suffices), and the meta tokenizer's script runs. It does not encode a piece
//! (`piece` does).

use super::scratch::{with_scratch, Scratch};
use super::{Encoder, Routed};
use crate::memory::{self, NoMemory};
use crate::merge::{try_merge, try_merge_seeded, PairTable};
use crate::router::Router;
use crate::spans::{goes_on, span_end};
use crate::units::Unit;
use crate::words::piece_end;

impl Encoder {
    /// The ids of `text`, where the text of the tokens in `allowed` (ids; the special tokens)
    /// becomes those tokens (the longest one where several start at the same place); with none
    /// allowed, special-token text is ordinary text.
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
    pub(super) fn encode_into<U: Unit>(
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

    pub(super) fn encode_text<U: Unit>(
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
}
