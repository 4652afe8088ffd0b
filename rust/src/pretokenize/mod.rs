//! Pre-tokenizers for byte-level BPE: text -> pieces that BPE never merges across.
//!
//! A [`Pretokenizer`] is a sequence of regexes, each applied to every piece the previous one
//! produced, keeping both the matches and the text between them (Hugging Face's `Split` with
//! behaviour `Isolated`; llama.cpp applies its regex lists the same way). A single regex that
//! matches everywhere (GPT-2, cl100k, o200k) therefore splits exactly like tiktoken's
//! `findall`. Byte stages (`byte_patterns`) run after the GPT-2 byte mapping, on the mapped
//! text, as some Hugging Face pipelines do; their pieces are bytes and may cut a character.
//!
//! Named patterns (recognised by their exact text) run on hand-written scanners ([`named`]);
//! any other regex on the general path ([`general`]). Character classes are Unicode 16.0
//! everywhere ([`classes`]). This module knows nothing of vocabularies, special tokens or BPE.

pub mod classes;
pub mod general;
pub mod named;
mod prose;

use general::{GeneralRegex, RegexError};
use named::Named;

#[derive(Debug)]
enum Stage {
    Named(Named),
    Regex(GeneralRegex),
}

impl Stage {
    fn new(pattern: &str, scanners: bool) -> Result<Stage, RegexError> {
        Ok(match Named::from_pattern(pattern).filter(|_| scanners) {
            Some(named) => Stage::Named(named),
            None if scanners => Stage::Regex(GeneralRegex::new(pattern)?),
            None => Stage::Regex(GeneralRegex::new(pattern)?.without_scanners()),
        })
    }

    fn kind(&self) -> String {
        match self {
            Stage::Named(named) => named.name().to_string(),
            Stage::Regex(rx) if rx.is_plain() => "regex".to_string(),
            Stage::Regex(_) => "fancy-regex".to_string(),
        }
    }

    /// The pieces of `text`: matches and the non-empty gaps between them, as byte spans.
    #[inline]
    fn split(&self, text: &str, f: &mut impl Spans) -> Result<(), RegexError> {
        match self {
            Stage::Named(named) => {
                let table = classes::classes();
                let s = text.as_bytes();
                let (mut pos, mut gap) = (0, usize::MAX);
                let prose = *named == Named::O200k;
                // The rules are tried again only past the byte where they last stopped.
                let mut resume = 0;
                let mut memo = prose::Memo::default();
                while pos < s.len() {
                    // Prose ahead (eight bytes of characters of one or two bytes, of the
                    // alphabets the rules cover: not a space before another script, nor text
                    // where other scripts come every few bytes, on which classifying a block
                    // would decide next to nothing): its pieces 64 bytes at a time, as far as
                    // they are decided; the piece they leave undecided is the scalar scanner's
                    // (the rules asked again there would stop at the same byte).
                    if prose && gap == usize::MAX && pos >= resume && narrow_ahead(s, pos) {
                        let stop;
                        (pos, stop) = prose::o200k_pieces(s, pos, &mut memo, f);
                        resume = stop + 1;
                    }
                    match named.match_at(table, s, pos) {
                        Some(end) => {
                            if gap != usize::MAX {
                                f.span(gap, pos);
                                gap = usize::MAX;
                            }
                            f.span(pos, end);
                            pos = end;
                        }
                        None => {
                            if gap == usize::MAX {
                                gap = pos;
                            }
                            pos += classes::decode(s, pos).1;
                        }
                    }
                }
                if gap != usize::MAX {
                    f.span(gap, pos);
                }
                Ok(())
            }
            Stage::Regex(rx) => {
                let mut done = 0;
                rx.for_each_match(text, |start, end| {
                    if start > done {
                        f.span(done, start);
                    }
                    f.span(start, end);
                    done = end;
                })?;
                if done < text.len() {
                    f.span(done, text.len());
                }
                Ok(())
            }
        }
    }
}

/// The eight bytes from `pos` (or all to the end, at least two) are characters of one or two
/// bytes below U+0580 (ASCII, Latin, IPA, Greek, Cyrillic, Armenian: where the prose rules
/// decide most pieces; the scripts after, Hebrew and Arabic onwards, have uncased letters the
/// rules leave to the scalar scanner).
#[inline(always)]
fn narrow_ahead(s: &[u8], pos: usize) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x80 * ONES;
    let w = match s.get(pos..pos + 8) {
        Some(b) => u64::from_le_bytes(b.try_into().unwrap_or([0xFF; 8])),
        None if s.len() - pos >= 2 => {
            let mut tail = [0u8; 8];
            tail[..s.len() - pos].copy_from_slice(&s[pos..]);
            u64::from_le_bytes(tail)
        }
        None => return false,
    };
    // Per byte: its low seven bits plus 0x2A reach the high bit iff they are at least 0x56
    // (no carry crosses bytes); with its own high bit, iff the byte is at least 0xD6.
    ((w & !HIGH).wrapping_add(0x2A * ONES) & w & HIGH) == 0
}

/// What [`Pretokenizer::for_each_piece`] hands each piece to: a closure, or a type whose
/// `piece` is to be inlined into the scanner's loop (a closure called from the scanner's
/// several places is left a call).
pub trait Pieces<E> {
    fn piece(&mut self, piece: &[u8]) -> Result<(), E>;
}

impl<E, F: FnMut(&[u8]) -> Result<(), E>> Pieces<E> for F {
    #[inline(always)]
    fn piece(&mut self, piece: &[u8]) -> Result<(), E> {
        self(piece)
    }
}

/// What the scanners hand each piece's span (start, end) to: a closure, or a type whose `span`
/// is to be inlined into the scanner's loop (as `for_each_piece`'s own is).
pub trait Spans {
    fn span(&mut self, start: usize, end: usize);
}

impl<F: FnMut(usize, usize)> Spans for F {
    #[inline(always)]
    fn span(&mut self, start: usize, end: usize) {
        self(start, end)
    }
}

/// [`Pretokenizer::for_each_piece`]'s spans to pieces, until the first error.
struct EachPiece<'a, P, E> {
    bytes: &'a [u8],
    f: &'a mut P,
    result: Result<(), E>,
}

impl<P: Pieces<E>, E> Spans for EachPiece<'_, P, E> {
    #[inline(always)]
    fn span(&mut self, start: usize, end: usize) {
        if self.result.is_ok() {
            // Only an error is stored: assigning every piece's `Ok` would run the error
            // type's drop glue on the `Ok` it replaces, a call per piece.
            if let Err(e) = self.f.piece(&self.bytes[start..end]) {
                self.result = Err(e);
            }
        }
    }
}

#[derive(Debug)]
pub struct Pretokenizer {
    stages: Vec<Stage>,
    byte_stages: Vec<Stage>,
}

impl Pretokenizer {
    pub fn new<S: AsRef<str>>(patterns: &[S], byte_patterns: &[S]) -> Result<Self, RegexError> {
        Self::with_scanners(patterns, byte_patterns, true)
    }

    /// `scanners: false` runs even the named patterns on the general regex path (for tests and
    /// fuzzing: fancy-regex, tiktoken's engine, is then the oracle of the scanners).
    pub fn with_scanners<S: AsRef<str>>(
        patterns: &[S],
        byte_patterns: &[S],
        scanners: bool,
    ) -> Result<Self, RegexError> {
        if patterns.is_empty() && byte_patterns.is_empty() {
            return Err(RegexError(
                "a pre-tokenizer needs at least one regex".to_string(),
            ));
        }
        let compile = |ps: &[S]| -> Result<Vec<Stage>, RegexError> {
            ps.iter()
                .map(|p| Stage::new(p.as_ref(), scanners))
                .collect()
        };
        let pretokenizer = Pretokenizer {
            stages: compile(patterns)?,
            byte_stages: compile(byte_patterns)?,
        };
        // The scanners' class tables (and o200k's prose rules'), now rather than in the first
        // encode; each is built once.
        for stage in pretokenizer.stages.iter().chain(&pretokenizer.byte_stages) {
            if let Stage::Named(named) = stage {
                classes::classes();
                if *named == Named::O200k {
                    prose::prepare();
                }
            }
        }
        Ok(pretokenizer)
    }

    /// How each regex runs: a named scanner (`o200k`...), `regex` or `fancy-regex`.
    pub fn stage_kinds(&self) -> Vec<String> {
        self.stages
            .iter()
            .chain(&self.byte_stages)
            .map(Stage::kind)
            .collect()
    }

    pub fn has_byte_stage(&self) -> bool {
        !self.byte_stages.is_empty()
    }

    /// The pieces of `text` after the text regexes, as byte spans of `text`.
    pub fn split(&self, text: &str) -> Result<Vec<(usize, usize)>, RegexError> {
        let mut spans = Vec::new();
        self.split_text(text, &mut |a, b| spans.push((a, b)))?;
        Ok(spans)
    }

    fn split_text(&self, text: &str, f: &mut impl Spans) -> Result<(), RegexError> {
        match self.stages.as_slice() {
            [] => {
                if !text.is_empty() {
                    f.span(0, text.len());
                }
                Ok(())
            }
            [only] => only.split(text, f),
            [first, rest @ ..] => {
                let mut spans = Vec::new();
                first.split(text, &mut |a, b| spans.push((a, b)))?;
                for stage in rest {
                    let mut next = Vec::with_capacity(spans.len());
                    for &(a, b) in &spans {
                        stage.split(&text[a..b], &mut |x, y| next.push((a + x, a + y)))?;
                    }
                    spans = next;
                }
                for (a, b) in spans {
                    f.span(a, b);
                }
                Ok(())
            }
        }
    }

    /// Call `f` on the bytes of every piece of `text`, byte stages included, in order.
    pub fn for_each_piece<E: From<RegexError>>(
        &self,
        text: &str,
        f: &mut impl Pieces<E>,
    ) -> Result<(), E> {
        let bytes = text.as_bytes();
        if self.byte_stages.is_empty() {
            let mut each = EachPiece {
                bytes,
                f,
                result: Ok(()),
            };
            self.split_text(text, &mut each)?;
            return each.result;
        }
        let mut pieces = Vec::new();
        self.split_text(text, &mut |a, b| pieces.push((a, b)))?;
        for (a, b) in pieces {
            let piece = &bytes[a..b];
            let (mapped, starts) = map_bytes(piece);
            let mut spans = vec![(0, mapped.len())];
            for stage in &self.byte_stages {
                let mut next = Vec::with_capacity(spans.len());
                for &(x, y) in &spans {
                    stage.split(&mapped[x..y], &mut |p, q| next.push((x + p, x + q)))?;
                }
                spans = next;
            }
            for (x, y) in spans {
                // Mapped-text offsets back to byte offsets: every byte is one mapped character.
                let (i, j) = (
                    starts.partition_point(|&s| s < x),
                    starts.partition_point(|&s| s < y),
                );
                f.piece(&piece[i..j])?;
            }
        }
        Ok(())
    }
}

// --- the GPT-2 byte <-> unicode mapping ----------------------------------------------------

/// GPT-2's byte -> character map: printable Latin-1 bytes stand for themselves, the other 68
/// (controls, space, DEL, NBSP, soft hyphen) are moved to U+0100.. in byte order.
pub fn byte_to_char() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut extra = 0u32;
    for (b, slot) in table.iter_mut().enumerate() {
        let keep = (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || b >= 0xAE;
        let cp = if keep {
            b as u32
        } else {
            extra += 1;
            0x100 + extra - 1
        };
        *slot = char::from_u32(cp).unwrap_or('\0');
    }
    table
}

/// The bytes of a GPT-2 byte-level string (`"Ġhi"` -> `b" hi"`), or None if a character is
/// outside the mapping (Python's `unicode_to_bytes`; the empty string gives empty bytes).
pub fn gpt2_to_bytes(text: &str) -> Option<Vec<u8>> {
    static TABLE: crate::fork::BuiltOnce<[Option<u8>; 0x144]> = crate::fork::BuiltOnce::new();
    let table = TABLE.get_or_build(|| {
        let mut table = [None; 0x144];
        for (b, &c) in byte_to_char().iter().enumerate() {
            table[c as usize] = Some(b as u8);
        }
        table
    });
    text.chars().map(|c| *table.get(c as usize)?).collect()
}

/// `piece` in GPT-2 characters, and the byte offset in the result where each input byte starts.
fn map_bytes(piece: &[u8]) -> (String, Vec<usize>) {
    let table = byte_to_char();
    let mut mapped = String::with_capacity(piece.len() * 2);
    let mut starts = Vec::with_capacity(piece.len());
    for &b in piece {
        starts.push(mapped.len());
        mapped.push(table[b as usize]);
    }
    (mapped, starts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(p: &Pretokenizer, text: &str) -> Vec<String> {
        p.split(text)
            .unwrap()
            .into_iter()
            .map(|(a, b)| text[a..b].to_string())
            .collect()
    }

    #[test]
    fn o200k_known_splits() {
        let p = Pretokenizer::new(&[named::O200K], &[]).unwrap();
        assert_eq!(p.stage_kinds(), vec!["o200k"]);
        assert_eq!(
            pieces(&p, "Hello world's  end\n\n x"),
            vec!["Hello", " world's", " ", " end", "\n\n", " x"]
        );
        assert_eq!(
            pieces(&p, "HTMLParser 12345"),
            vec!["HTMLParser", " ", "123", "45"]
        );
        assert_eq!(pieces(&p, "  "), vec!["  "]);
        assert_eq!(pieces(&p, "a  "), vec!["a", "  "]);
        assert_eq!(pieces(&p, "!!/\n"), vec!["!!/\n"]);
    }

    #[test]
    fn cl100k_and_llama3_differ_on_a_final_run() {
        let cl = Pretokenizer::new(&[named::CL100K], &[]).unwrap();
        let llama = Pretokenizer::new(&[named::LLAMA3], &[]).unwrap();
        assert_eq!(pieces(&cl, "x  \n  "), vec!["x", "  \n  "]);
        assert_eq!(pieces(&llama, "x  \n  "), vec!["x", "  \n", "  "]);
    }

    #[test]
    fn gaps_are_kept_and_stages_chain() {
        let p = Pretokenizer::new(&["a+"], &[]).unwrap();
        assert_eq!(pieces(&p, "xaay"), vec!["x", "aa", "y"]);
        let p = Pretokenizer::new(&["a+", "y"], &[]).unwrap();
        assert_eq!(pieces(&p, "xaayz"), vec!["x", "aa", "y", "z"]);
        let p = Pretokenizer::new(&["(?=b)"], &[]).unwrap();
        assert_eq!(pieces(&p, "abab"), vec!["abab"]);
    }

    #[test]
    fn byte_stage_cuts_mapped_text() {
        // A byte-stage regex sees "Ġ" for the space byte; splitting on it keeps bytes exact.
        let p = Pretokenizer::new(&[named::GPT2], &["\u{120}"]).unwrap();
        let mut out: Vec<Vec<u8>> = Vec::new();
        p.for_each_piece::<RegexError>("a b\u{e9}", &mut |piece: &[u8]| {
            out.push(piece.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(
            out,
            vec![b"a".to_vec(), b" ".to_vec(), "b\u{e9}".as_bytes().to_vec()]
        );
    }

    #[test]
    fn scanners_equal_fancy_regex() {
        let texts = [
            "Hello world's  end\n\n x",
            "  \t\n\r\n  ab'S 'll ' \u{17f}s 123456 a1b2",
            "HTMLParser\u{1c5}x\u{2b0}y \u{0dc1}\u{0dca}\u{200d}\u{0dbb}\u{0dd3} \u{300}a",
            "!!/\n\r/  ?? \u{3000}\u{a0}x\u{2028}",
            "x  \n  ",
            "'\u{17f}'LL 'Ve",
        ];
        for pattern in [
            named::O200K,
            named::CL100K,
            named::LLAMA3,
            named::QWEN2,
            named::GPT2,
            named::GPT2_HF,
        ] {
            let fast = Pretokenizer::new(&[pattern], &[]).unwrap();
            let slow = Pretokenizer::with_scanners(&[pattern], &[], false).unwrap();
            assert!(slow.stage_kinds()[0].contains("regex"));
            for text in texts {
                assert_eq!(
                    fast.split(text).unwrap(),
                    slow.split(text).unwrap(),
                    "{pattern} on {text:?}"
                );
            }
        }
    }

    /// Long runs of random whitespace, which the scanners read sixteen bytes at a time once a
    /// run passes sixteen (see `named::ascii::ascii_spaces`), between words and ending anywhere
    /// in a block: the pieces are the regex engine's.
    #[test]
    fn long_whitespace_runs_equal_fancy_regex() {
        // A small generator of its own (xorshift; the byte-level tests' lives above this module).
        let mut state: u64 = 0x5EED_0F5B_ACE5;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let ascii = [" ", " ", " ", "\t", "\n", "\r", "\x0b", "\x0c"];
        // (with the controls either side of `\t`..`\r`, which are no whitespace)
        let other = [
            "\u{a0}", "\u{85}", "\u{3000}", "\u{2028}", "x", "é", "1", "!", "\u{0dc1}", "\x08",
            "\x0e", "\x1f",
        ];
        let patterns = [named::O200K, named::CL100K, named::LLAMA3, named::GPT2];
        let scanners: Vec<_> = patterns
            .iter()
            .map(|p| {
                (
                    Pretokenizer::new(&[p], &[]).unwrap(),
                    Pretokenizer::with_scanners(&[p], &[], false).unwrap(),
                )
            })
            .collect();
        for round in 0..400 {
            let mut text = String::new();
            for _ in 0..1 + next(4) {
                for _ in 0..next(if round % 4 == 0 { 200 } else { 40 }) {
                    text.push_str(ascii[next(ascii.len() as u64) as usize]);
                }
                for _ in 0..next(3) {
                    text.push_str(other[next(other.len() as u64) as usize]);
                }
            }
            for (pattern, (fast, slow)) in patterns.iter().zip(&scanners) {
                assert_eq!(
                    fast.split(&text).unwrap(),
                    slow.split(&text).unwrap(),
                    "{pattern} on {text:?}"
                );
            }
        }
    }

    #[test]
    fn byte_map_is_gpt2s() {
        let t = byte_to_char();
        assert_eq!(t[b' ' as usize], '\u{120}');
        assert_eq!(t[b'\n' as usize], '\u{10a}');
        assert_eq!(t[b'a' as usize], 'a');
        assert_eq!(t[0xAD], '\u{143}');
        let mut all: Vec<char> = t.to_vec();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 256);
    }
}
