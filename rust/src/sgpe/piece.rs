//! One piece to ids: a whole-piece token at once; else its words and boundary tokens, their
//! syllables, each token's units (itself, its characters, or byte tokens or `[UNK]` for what
//! the vocabulary lacks), merged by rank over each span of the merge scope. It does not cut
//! text into pieces or spans (`encode` does).

use super::scratch::{hand_over, Scratch};
use super::{Encoder, Fallback, Scope};
use crate::charset::is_ws;
use crate::memory::{self, NoMemory};
use crate::merge::try_merge;
use crate::units::{push_utf8, utf8_len, Unit};
use crate::words::piece_end;

impl Encoder {
    pub(super) fn encode_pieces<U: Unit>(
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

    pub(super) fn encode_piece<U: Unit>(
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
    pub(super) fn push_units<U: Unit>(
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
}
