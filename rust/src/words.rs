//! From text to SGPE words: word grouping, then syllables (`wwho.words.word_pattern` and
//! `wwho.sgpe.words.WordSplitter` semantics).
//!
//! A *word* is an optional glued space (a space followed by a non-whitespace character), a
//! character of `starts` (the scripts' characters and word classes), then any characters of
//! `starts` or `attach`. Any other character, with the glued space before it and the `attach`
//! marks after it, is a *boundary token*; a whitespace character not glued to anything is a
//! boundary token alone. Python builds the sets from the schemas.
//!
//! Each word is cut into syllables by its script's automaton (leading-space mode). With several
//! scripts, the word is routed first ([`Router`]): each script run by its own automaton, and
//! everything else one token per character (a space glued to the character after it).
//!
//! SGPE *pieces* (`wwho.counting.PIECES`, ` ?[^ \t\n\r]+|[ \t\n\r]`) are cut here too: no word
//! or syllable crosses one. This module does not know vocabularies or merges.

use crate::charset::{check_range, is_ws, CharMap};
use crate::errors::{SchemaError, VocabError};

const START: u8 = 1;
const ATTACH: u8 = 2;
use crate::router::Router;
use crate::schema::Automaton;
use crate::syllables::Tokens;
use crate::units::Unit;

/// End of the SGPE piece starting at `pos` (`pos < text.len()`).
#[inline]
pub fn piece_end<U: Unit>(text: &[U], pos: usize) -> usize {
    let n = text.len();
    let c = text[pos].cp();
    let mut end = pos + 1;
    if is_ws(c) && !(c == 0x20 && end < n && !is_ws(text[end].cp())) {
        return end;
    }
    while end < n && !is_ws(text[end].cp()) {
        end += 1;
    }
    end
}

/// End of the piece starting at `pos` in UTF-8 `text` (`pos < text.len()`).
#[inline]
pub fn piece_end_utf8(text: &[u8], pos: usize) -> usize {
    let ws = |b: u8| is_ws(b.into());
    let n = text.len();
    let end = pos + 1;
    if ws(text[pos]) && !(text[pos] == b' ' && end < n && !ws(text[end])) {
        return end;
    }
    next_ws(text, end)
}

/// The first of `' '`, `'\t'`, `'\n'`, `'\r'` in `text` from `from` on (`text.len()` if none).
/// Eight bytes at a time: all four are below `0x21`, and a word with no byte below it (most
/// of any text, and all of Indic text's three-byte characters) is passed over whole.
#[inline]
pub fn next_ws(text: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while i + 8 <= text.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&text[i..i + 8]);
        let x = u64::from_le_bytes(word);
        // A byte below 0x21 sets its high bit here (a byte of 0x80 or more can set one too:
        // the bytes are then checked one by one, which only costs time).
        if x.wrapping_sub(ONES * 0x21) & !x & HIGHS != 0 {
            break;
        }
        i += 8;
    }
    while i < text.len() && !is_ws(text[i].into()) {
        i += 1;
    }
    i
}

/// Which adjacent units merges may join (`wwho.sgpe.scopes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One word of syllables; each boundary token alone.
    Words,
    /// As `Words`, and each run of non-whitespace boundary tokens together.
    Runs,
    /// The whole piece.
    Pieces,
}

impl Scope {
    pub fn parse(name: &str) -> Result<Self, VocabError> {
        match name {
            "words" => Ok(Scope::Words),
            "runs" => Ok(Scope::Runs),
            "pieces" => Ok(Scope::Pieces),
            _ => Err(VocabError::Scope(name.to_string())),
        }
    }
}

/// The words of a text: token end positions, and for each word or boundary token the index
/// one past its last token in `ends`, and whether it is a word.
#[derive(Clone, Debug, Default)]
pub struct Parts {
    pub ends: Vec<usize>,
    pub parts: Vec<(usize, bool)>,
}

impl Parts {
    pub fn clear(&mut self) {
        self.ends.clear();
        self.parts.clear();
    }
}

/// Words and syllables for one script mode.
#[derive(Clone, Debug)]
pub struct WordSplitter {
    /// Per code point: [`START`] and/or [`ATTACH`] (one lookup answers both questions).
    sets: CharMap,
    automata: Vec<Automaton>,
    router: Option<Router>,
}

impl WordSplitter {
    /// `automata` in the router's script order; `router` is `None` for a single script (then
    /// `automata` holds exactly one).
    pub fn new(
        starts: &[(u32, u32)],
        attach: &[(u32, u32)],
        automata: Vec<Automaton>,
        router: Option<Router>,
    ) -> Result<Self, SchemaError> {
        if automata.is_empty() || (router.is_none() && automata.len() != 1) {
            return Err(SchemaError::Automata);
        }
        let mut ranges: Vec<(u32, u32, u8)> = attach.iter().map(|&(a, b)| (a, b, ATTACH)).collect();
        let mut flat = vec![0u8; 0x110000];
        for &(first, last) in starts {
            check_range(first, last)?;
            flat[first as usize..=last as usize].fill(START);
        }
        for (first, last, flag) in ranges.drain(..) {
            check_range(first, last)?;
            flat[first as usize..=last as usize]
                .iter_mut()
                .for_each(|v| *v |= flag);
        }
        Ok(Self {
            sets: CharMap::from_flat(&flat),
            automata,
            router,
        })
    }

    pub fn heap_bytes(&self) -> usize {
        self.sets.heap_bytes()
            + self
                .automata
                .iter()
                .map(Automaton::heap_bytes)
                .sum::<usize>()
    }

    /// The word or boundary token starting at `pos`: `(end, is_word)`.
    #[inline]
    pub fn next_word<U: Unit>(&self, text: &[U], pos: usize) -> (usize, bool) {
        let n = text.len();
        let c0 = text[pos].cp();
        let glued = c0 == 0x20 && pos + 1 < n && !is_ws(text[pos + 1].cp());
        let tries: &[usize] = if glued { &[1, 0] } else { &[0] };
        // The regex's alternatives in order, each with and then without the glued space.
        for &skip in tries {
            let q = pos + skip;
            if self.sets.get(text[q].cp()) & START != 0 {
                let mut end = q + 1;
                while end < n && self.sets.get(text[end].cp()) != 0 {
                    end += 1;
                }
                return (end, true);
            }
        }
        for &skip in tries {
            let q = pos + skip;
            let c = text[q].cp();
            if self.sets.get(c) & START == 0 && !is_ws(c) {
                let mut end = q + 1;
                while end < n && self.sets.get(text[end].cp()) & ATTACH != 0 {
                    end += 1;
                }
                return (end, false);
            }
        }
        (pos + 1, false) // whitespace alone
    }

    /// Append the syllable-level tokens of `text[start..end]` (one word) to `ends`.
    pub fn syllables<U: Unit>(&self, text: &[U], start: usize, end: usize, ends: &mut Vec<usize>) {
        let Some(router) = &self.router else {
            return self.automata[0].syllabify_from(&text[..end], start, true, ends);
        };
        let word = &text[..end];
        let mut pos = start;
        while let Some((run_start, run_end, script)) = router.next_run(word, pos) {
            let leading = run_start > pos && word[run_start - 1].cp() == 0x20;
            let latin_end = if leading { run_start - 1 } else { run_start };
            passthrough(word, pos, latin_end, ends);
            // The run alone, as the router hands it over: its syllables cannot see past it.
            let before = ends.len();
            self.automata[script].syllabify(&word[latin_end..run_end], true, ends);
            for e in &mut ends[before..] {
                *e += latin_end;
            }
            pos = run_end;
        }
        passthrough(word, pos, end, ends);
    }

    /// The words and boundary tokens of `text`, each word cut into syllables.
    pub fn split<U: Unit>(&self, text: &[U], out: &mut Parts) {
        let mut pos = 0;
        while pos < text.len() {
            let (end, is_word) = self.next_word(text, pos);
            if is_word {
                self.syllables(text, pos, end, &mut out.ends);
            } else {
                out.ends.push(end);
            }
            out.parts.push((out.ends.len(), is_word));
            pos = end;
        }
    }

    /// Append the end of every token of `text` to `ends`: the words' syllables and the boundary
    /// tokens in order, as [`Self::split`] finds them. Without `leading_space`, a space glued to
    /// the token after it is a token of its own (what `wwho syllabify --script indic` prints).
    pub fn tokens<U: Unit>(&self, text: &[U], leading_space: bool, ends: &mut Vec<usize>) {
        let first = ends.len();
        let mut pos = 0;
        while pos < text.len() {
            let (end, is_word) = self.next_word(text, pos);
            if is_word {
                self.syllables(text, pos, end, ends);
            } else {
                ends.push(end);
            }
            pos = end;
        }
        if leading_space {
            return;
        }
        // A glued space is the first character of its token, never inside one: a piece ends
        // at whitespace and takes only the one space before it.
        let glued = ends.split_off(first);
        let mut start = 0;
        for end in glued {
            if end - start > 1 && text[start].cp() == 0x20 {
                ends.push(start + 1);
            }
            ends.push(end);
            start = end;
        }
    }
}

impl Tokens for WordSplitter {
    fn token_ends<U: Unit>(&self, text: &[U], leading_space: bool, ends: &mut Vec<usize>) {
        self.tokens(text, leading_space, ends)
    }
}

/// One token per character of `text[start..end]`, a space glued to a non-whitespace
/// character after it (within the range).
fn passthrough<U: Unit>(text: &[U], start: usize, end: usize, ends: &mut Vec<usize>) {
    let mut p = start;
    while p < end {
        p += if text[p].cp() == 0x20 && p + 1 < end && !is_ws(text[p + 1].cp()) {
            2
        } else {
            1
        };
        ends.push(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::tests::sinhala;

    #[test]
    fn next_ws_finds_the_first_whitespace_byte() {
        // Bytes near the threshold (0x1F-0x22), whitespace, and high bytes, at every offset.
        let alphabet = [
            b' ', b'\t', b'\n', b'\r', 0x1F, 0x21, 0x22, 0x00, 0x7F, 0x80, 0xA0, 0xE0, 0xFF, b'a',
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..3000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 40) as usize;
            let text: Vec<u8> = (0..len)
                .map(|i| {
                    let r = state.rotate_left(i as u32 * 5) ^ (i as u64).wrapping_mul(0x2545_F491);
                    // mostly non-whitespace, so that long stretches are skipped word by word
                    if r % 7 == 0 {
                        alphabet[(r / 7 % 4) as usize]
                    } else {
                        alphabet[4 + (r / 7 % 10) as usize]
                    }
                })
                .collect();
            for from in 0..=len {
                let want = (from..len)
                    .find(|&i| matches!(text[i], b' ' | b'\t' | b'\n' | b'\r'))
                    .unwrap_or(len);
                assert_eq!(next_ws(&text, from), want, "{text:?} from {from}");
            }
        }
    }

    fn cps(s: &str) -> Vec<u32> {
        s.chars().map(u32::from).collect()
    }

    fn show(text: &[u32], parts: &Parts) -> Vec<(bool, Vec<String>)> {
        let mut out = Vec::new();
        let (mut t, mut start) = (0, 0);
        for &(last, is_word) in &parts.parts {
            let mut tokens = Vec::new();
            while t < last {
                let end = parts.ends[t];
                tokens.push(
                    text[start..end]
                        .iter()
                        .map(|&c| char::from_u32(c).unwrap())
                        .collect(),
                );
                start = end;
                t += 1;
            }
            out.push((is_word, tokens));
        }
        out
    }

    fn sinhala_splitter() -> WordSplitter {
        WordSplitter::new(
            &[(0x0D80, 0x0DFF), (0x200D, 0x200D)],
            &[],
            vec![sinhala()],
            None,
        )
        .unwrap()
    }

    #[test]
    fn pieces() {
        let text = cps(" ab  c\t\n d ");
        let mut pos = 0;
        let mut ends = Vec::new();
        while pos < text.len() {
            pos = piece_end(&text, pos);
            ends.push(pos);
        }
        assert_eq!(ends, [3, 4, 6, 7, 8, 10, 11]);
    }

    #[test]
    fn words_and_boundary_tokens() {
        let s = sinhala_splitter();
        let text = cps(" ශ්‍රී.ලංකාව,x");
        let mut parts = Parts::default();
        s.split(&text, &mut parts);
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            show(&text, &parts),
            [
                (true, w(&[" ශ්‍රී"])),
                (false, w(&["."])),
                (true, w(&["ලං", "කා", "ව"])),
                (false, w(&[","])),
                (false, w(&["x"]))
            ]
        );
        parts.clear();
        let text = cps(" .");
        s.split(&text, &mut parts);
        assert_eq!(show(&text, &parts), [(false, w(&[" ."]))]);
        parts.clear();
        let text = cps(" ");
        s.split(&text, &mut parts);
        assert_eq!(show(&text, &parts), [(false, w(&[" "]))]);
    }

    #[test]
    fn tokens_glue_a_space_only_in_leading_space_mode() {
        let s = sinhala_splitter();
        let text = cps("  ශ්‍රී.ලංකාව x\n ,");
        let strings = |ends: &[usize]| {
            let mut start = 0;
            ends.iter()
                .map(|&end| {
                    let t: String = text[start..end]
                        .iter()
                        .map(|&c| char::from_u32(c).unwrap())
                        .collect();
                    start = end;
                    t
                })
                .collect::<Vec<_>>()
        };
        let mut ends = Vec::new();
        s.tokens(&text, true, &mut ends);
        let mut parts = Parts::default();
        s.split(&text, &mut parts);
        assert_eq!(ends, parts.ends, "the words' tokens in order");
        assert_eq!(
            strings(&ends),
            [" ", " ශ්‍රී", ".", "ලං", "කා", "ව", " x", "\n", " ,"]
        );
        ends.clear();
        s.tokens(&text, false, &mut ends);
        assert_eq!(
            strings(&ends),
            [
                " ",
                " ",
                "ශ්‍රී",
                ".",
                "ලං",
                "කා",
                "ව",
                " ",
                "x",
                "\n",
                " ",
                ","
            ]
        );
        let mut out = Vec::new();
        crate::syllables::joined(&s, &text, false, true, b"|", &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), " | |ශ්‍රී|.|ලං|කා|ව| |x\n |,");
    }
}
