//! GPT-2's alternatives (tiktoken's r50k and Hugging Face's `ByteLevel` regex alike):
//! case-sensitive contractions, then a letter, number or punctuation run after an optional
//! space, then whitespace. It does not scan the other regexes.

use super::scan::Scan;
use crate::pretokenize::classes::{LETTER, NUMBER, SPACE};

impl Scan<'_> {
    pub(super) fn gpt2(&self, pos: usize) -> Option<usize> {
        let (c0, _, k0) = self.at(pos);
        if c0 == u32::from(b'\'') {
            if let Some(end) = self.contraction(pos, false) {
                return Some(end);
            }
        }
        // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: with a space, the class must follow it.
        let (start, k) = if c0 == u32::from(b' ') {
            (pos + 1, self.class(pos + 1))
        } else {
            (pos, k0)
        };
        if start < self.s.len() {
            if k & LETTER != 0 {
                return Some(self.letter_run(start));
            }
            if k & NUMBER != 0 {
                return Some(self.run(start, NUMBER));
            }
            if k & SPACE == 0 {
                return Some(self.other_run(start));
            }
        }
        if k0 & SPACE != 0 {
            let (end, last, _) = self.space_run(pos);
            return Some(self.space_lookahead(pos, end, last));
        }
        None
    }
}
