//! cl100k's alternatives, which Llama 3's and Qwen2's share but for the digit count and
//! cl100k's whole final whitespace run. It does not scan o200k or GPT-2.

use super::scan::Scan;
use crate::pretokenize::classes::{LETTER, NUMBER, SPACE};

impl Scan<'_> {
    /// cl100k (`whole_final_run`: its `\s++$`), Llama 3 and Qwen2 (`max_digits` 1): the same
    /// alternatives but for the digit count and that one.
    pub(super) fn cl100k(
        &self,
        pos: usize,
        max_digits: usize,
        whole_final_run: bool,
    ) -> Option<usize> {
        let n = self.s.len();
        let (c0, l0, k0) = self.at(pos);
        if c0 == u32::from(b'\'') {
            if let Some(end) = self.contraction(pos, true) {
                return Some(end);
            }
        }
        // [^\r\n\p{L}\p{N}]?+\p{L}++ (possessive or not: the same, since a prefix is no letter).
        if Self::is_prefix(c0, k0) {
            if self.class(pos + l0) & LETTER != 0 {
                return Some(self.letter_run(pos + l0));
            }
        } else if k0 & LETTER != 0 {
            return Some(self.letter_run(pos));
        }
        if k0 & NUMBER != 0 {
            return Some(self.run_max(pos, NUMBER, max_digits));
        }
        if let Some(end) = self.space_then_other(pos, c0, l0, k0) {
            let mut e = end; // [\r\n]*
            while e < n && matches!(self.s[e], b'\r' | b'\n') {
                e += 1;
            }
            return Some(e);
        }
        if k0 & SPACE != 0 {
            let (end, last, newline_end) = self.space_run(pos);
            if whole_final_run && end == n {
                return Some(end); // \s++$
            }
            if newline_end > 0 {
                return Some(newline_end); // \s*[\r\n] / \s*[\r\n]+
            }
            return Some(self.space_lookahead(pos, end, last));
        }
        None
    }
}
