//! Orthographic syllables: running a schema's automaton over text.
//!
//! Exactly the table engine of `wwho.syllables` (docs/schemas.md): at each position the
//! automaton reads characters by class as far as it can (maximal munch), and the syllable is
//! the longest prefix that ended in an accept state (last-accept rollback); entering an emit
//! state ends it at once. Where nothing is accepted, the first character is a token alone.
//!
//! With `leading_space`, a run of `' '`, `'\t'`, `'\n'`, `'\r'` never enters a syllable and is
//! one token per character, except that a final `' '` is glued to the next token (a space left
//! at the end of the text is a token of its own). Without it, whitespace is an ordinary
//! character of class `O`.
//!
//! An automaton built [`Automaton::with_graphemes`] (a schema's `keep_clusters`) never ends a
//! token inside an extended grapheme cluster: a syllable that would goes on to the cluster's end
//! (whitespace still ends it with `leading_space`), and the next token starts there. Nor does a
//! token span a break Unicode always makes (around a control, CR or LF): a syllable ends there.
//!
//! Tokens are contiguous and cover the text, so they are returned as their end positions
//! (code point indices). This module does not group words nor route scripts.

use crate::charset::is_ws;
use crate::memory::{self, NoMemory};
use crate::schema::{Automaton, NONE};
use crate::units::{push_utf8, utf8_len, Unit};

impl Automaton {
    /// End of the longest accepted syllable starting at `pos` (`pos < text.len()`);
    /// `pos + 1` if the automaton accepts nothing there.
    #[inline]
    pub fn longest_match<U: Unit>(&self, text: &[U], pos: usize, leading_space: bool) -> usize {
        let mut state = self.step(self.start(), self.class(text[pos].cp()));
        if state == NONE {
            return pos + 1;
        }
        let mut last = pos + 1; // rolled back to when nothing accepts (the no-accept fallback)
        let mut accepted = self.accepts(state);
        let mut p = pos + 1;
        while !self.emits(state) && p < text.len() {
            let cp = text[p].cp();
            if leading_space && is_ws(cp) {
                break;
            }
            let next = self.step(state, self.class(cp));
            if next == NONE {
                break;
            }
            state = next;
            p += 1;
            if self.accepts(state) {
                last = p;
                accepted = true;
            }
        }
        if accepted {
            last
        } else {
            pos + 1
        }
    }

    /// Append the end position of every token of `text` to `ends` (see the module docs).
    pub fn syllabify<U: Unit>(&self, text: &[U], leading_space: bool, ends: &mut Vec<usize>) {
        self.syllabify_from(text, 0, leading_space, ends)
    }

    /// [`Automaton::syllabify`] on `text[start..]`, positions still relative to `text`.
    pub fn syllabify_from<U: Unit>(
        &self,
        text: &[U],
        start: usize,
        leading_space: bool,
        ends: &mut Vec<usize>,
    ) {
        let n = text.len();
        let mut pos = start;
        let mut pending = false;
        while pos < n {
            if leading_space && is_ws(text[pos].cp()) {
                let mut end = pos + 1;
                while end < n && is_ws(text[end].cp()) {
                    end += 1;
                }
                // Each whitespace character alone, except a final space, held for the next token.
                pending = text[end - 1].cp() == 0x20;
                let last = if pending { end - 1 } else { end };
                ends.extend(pos + 1..=last);
                pos = end;
                continue;
            }
            let end = self.longest_match(text, pos, leading_space);
            pos = match self.graphemes() {
                Some(g) => {
                    g.next_boundary(text, pos, g.first_hard_break(text, pos, end), leading_space)
                }
                None => end,
            };
            ends.push(pos);
            pending = false;
        }
        if pending {
            ends.push(n);
        }
    }
}

/// What cuts a text into tokens, given as their ends (contiguous, covering the text): a
/// script's automaton, or a script mode's word splitter (`crate::words`).
pub trait Tokens {
    fn token_ends<U: Unit>(&self, text: &[U], leading_space: bool, ends: &mut Vec<usize>);
}

impl Tokens for Automaton {
    fn token_ends<U: Unit>(&self, text: &[U], leading_space: bool, ends: &mut Vec<usize>) {
        self.syllabify(text, leading_space, ends)
    }
}

/// The tokens of `text` joined by `sep`, appended to `out` as UTF-8 (a lone surrogate in its
/// 3-byte form, as Python's "surrogatepass"); with `lines`, each line (ending at `\n`, which is
/// kept) is cut alone, as when it is given alone: what `wwho syllabify` prints.
pub fn joined<U: Unit>(
    tokens: &impl Tokens,
    text: &[U],
    leading_space: bool,
    lines: bool,
    sep: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), NoMemory> {
    let mut ends = Vec::new();
    let parts: Box<dyn Iterator<Item = &[U]>> = if lines {
        Box::new(text.split_inclusive(|u| u.cp() == 0x0A))
    } else {
        Box::new(std::iter::once(text))
    };
    for part in parts {
        let ended = lines && part.last().is_some_and(|u| u.cp() == 0x0A);
        let body = if ended { &part[..part.len() - 1] } else { part };
        ends.clear();
        memory::reserve(&mut ends, body.len() + 1)?; // (a token is a character at least)
        tokens.token_ends(body, leading_space, &mut ends);
        let text_bytes: usize = body.iter().map(|u| utf8_len(u.cp())).sum();
        memory::reserve(out, text_bytes + ends.len() * sep.len() + 1)?;
        let mut next = ends.iter().peekable();
        for (i, u) in body.iter().enumerate() {
            if i > 0 && next.next_if(|&&end| end == i).is_some() {
                out.extend_from_slice(sep);
            }
            push_utf8(u.cp(), out);
        }
        if ended {
            out.push(b'\n');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::schema::tests::sinhala;

    fn tokens(text: &str, leading_space: bool) -> Vec<String> {
        let cps: Vec<u32> = text.chars().map(u32::from).collect();
        let mut ends = Vec::new();
        sinhala().syllabify(&cps, leading_space, &mut ends);
        let mut out = Vec::new();
        let mut start = 0;
        for end in ends {
            out.push(
                cps[start..end]
                    .iter()
                    .map(|&c| char::from_u32(c).unwrap())
                    .collect(),
            );
            start = end;
        }
        assert_eq!(start, cps.len());
        out
    }

    #[test]
    fn spec_000_examples() {
        assert_eq!(tokens("ශ්‍රී ලංකාව", true), ["ශ්‍රී", " ලං", "කා", "ව"]);
        assert_eq!(tokens("ක්‍ය", false), ["ක්‍ය"]);
        assert_eq!(tokens("ක්‍ a", false), ["ක්‍", " ", "a"]);
        assert_eq!(tokens("ක්‍ා", false), ["ක්‍ා"]);
        assert_eq!(tokens("ත්ං", false), ["ත්ං"]);
        assert_eq!(tokens("\u{200d}ක", false), ["\u{200d}", "ක"]);
    }

    #[test]
    fn whitespace_rule() {
        assert_eq!(tokens("  ක", true), [" ", " ක"]);
        assert_eq!(tokens("ක \t ක", true), ["ක", " ", "\t", " ක"]);
        assert_eq!(tokens("ක\n", true), ["ක", "\n"]);
        assert_eq!(tokens("ක ", true), ["ක", " "]);
        assert_eq!(tokens("ක  ", true), ["ක", " ", " "]);
        assert_eq!(tokens(" ", true), [" "]);
        assert_eq!(tokens("ක ක", false), ["ක", " ", "ක"]);
        assert_eq!(tokens("", true), Vec::<String>::new());
    }

    #[test]
    fn no_accept_falls_back_to_one_character() {
        // A -> B -> C accepts only after C; "AB" never reaches an accept state.
        let classes = vec![vec![(0x41, 0x41)], vec![(0x42, 0x42)], vec![(0x43, 0x43)]];
        let t = vec![vec![(1, 1)], vec![(2, 2)], vec![(3, 3)], vec![]];
        let a = crate::schema::Automaton::new(&classes, &t, 0, &[3], &[]).unwrap();
        let text: Vec<u32> = "ABABCx".chars().map(u32::from).collect();
        let mut ends = Vec::new();
        a.syllabify(&text, false, &mut ends);
        assert_eq!(ends, [1, 2, 5, 6]);
    }

    #[test]
    fn kept_clusters_are_never_cut() {
        let keep = sinhala().with_graphemes(crate::graphemes::tests::sample());
        let tokens = |text: &str, leading_space: bool| {
            let cps: Vec<u32> = text.chars().map(u32::from).collect();
            let mut ends = Vec::new();
            keep.syllabify(&cps, leading_space, &mut ends);
            let mut out: Vec<String> = Vec::new();
            let mut start = 0;
            for end in ends {
                out.push(text.chars().skip(start).take(end - start).collect());
                start = end;
            }
            out
        };
        // Without the table, spec 000 cuts each of these.
        assert_eq!(tokens("🙂\u{200d}🙂ක", false), ["🙂\u{200d}🙂", "ක"]);
        assert_eq!(tokens("🇱🇰🇱🇰🇱", true), ["🇱🇰", "🇱🇰", "🇱"]);
        assert_eq!(tokens("\r\n", false), ["\r\n"]);
        assert_eq!(tokens("\r\n", true), ["\r", "\n"]); // whitespace stays the leading-space rule's
        assert_eq!(tokens("\u{600}ක", false), ["\u{600}ක"]);
        assert_eq!(tokens("\u{600} ක", true), ["\u{600}", " ක"]);
        assert_eq!(tokens("කා\u{903}", false), ["කා\u{903}"]);
        // and change nothing where the automaton ends at a boundary
        assert_eq!(
            tokens("ශ්\u{200d}රී ලංකාව", true),
            ["ශ්\u{200d}රී", " ලං", "කා", "ව"]
        );
    }

    #[test]
    fn a_long_run_is_linear() {
        let text: Vec<u16> = std::iter::repeat_n(0x0D9A_u16, 1 << 20).collect();
        let mut ends = Vec::new();
        sinhala().syllabify(&text, true, &mut ends);
        assert_eq!(ends.len(), 1 << 20);
    }
}
