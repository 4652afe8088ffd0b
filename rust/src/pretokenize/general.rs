//! The general path: any other pre-tokenizer regex, written in Python's `regex` dialect.
//!
//! A pattern is translated where the dialects differ (below) and compiled with the `regex`
//! crate (a DFA: linear time) when it can be, else with `fancy-regex` (backtracking, for
//! lookaround, possessive quantifiers and back-references: tiktoken's engine). Both use
//! regex-syntax's Unicode 16.0 tables, as the hand-written scanners do.
//!
//! Dialect differences handled: `$` outside a class means "at the end, or before a final
//! newline" in Python (`(?=\n?\z)` here); `\Z` is Rust's `\z`; inside a class, Python reads `[`,
//! `&&`, `~~` and `--` literally where Rust nests or combines classes. Not handled (documented
//! in docs/bytelevel.md): after an empty match Python may find a non-empty one at the same
//! position, Rust moves on; a pattern neither engine accepts is an error, not a fallback.

use super::classes;
use super::named::Named;

#[derive(Debug)]
pub enum Engine {
    Plain(regex::Regex),
    Fancy(fancy_regex::Regex),
}

#[derive(Debug)]
pub struct GeneralRegex {
    engine: Engine,
    /// For a backtracking pattern `A|B...` whose first branch `A` the `regex` crate compiles:
    /// `\A(?:A)`. A text that `A` matches whole from its start is then one match of the
    /// pattern (the first branch that matches at the leftmost start wins), found in linear time;
    /// `wwho extend`'s `(?:W)|(?:B)` meets its script words (`W`) so, where a word of a million
    /// characters would exceed the backtracking engine's stack.
    whole: Option<regex::Regex>,
    /// For such a pattern `A|(?:N)` whose rest is a named regex (`wwho extend`'s `(?:W)|(?:B)` over
    /// o200k, Llama 3, Qwen2 or GPT-2): `A` anywhere, and `N`'s scanner. In a text where `A` matches
    /// at no position, every match is `N`'s, so the scanner finds them in one pass; the backtracking
    /// engine's stack would not hold `N`'s `\s+(?!\S)` over a run of a million spaces.
    rest: Option<(regex::Regex, Named)>,
}

/// A regex that could not be compiled or run; the message names the pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexError(pub String);

impl GeneralRegex {
    pub fn new(pattern: &str) -> Result<GeneralRegex, RegexError> {
        let translated = translate(pattern);
        // The regex crate reads a possessive `x++` as a repeated repetition `(x+)+`, which can
        // match where the possessive form cannot: those patterns must go to fancy-regex.
        let plain = if has_possessive(&translated) {
            None
        } else {
            plain_regex(&translated)
        };
        let (mut whole, mut rest) = (None, None);
        let engine = match plain {
            Some(rx) => Engine::Plain(rx),
            None => match fancy_regex::RegexBuilder::new(&translated)
                .backtrack_limit(10_000_000)
                .build()
            {
                Ok(rx) => {
                    // (a possessive first branch stays with the backtracking engine, as above)
                    if let Some(branch) = first_branch(&translated).filter(|b| !has_possessive(b)) {
                        whole = plain_regex(&format!(r"\A(?:{branch})"));
                        rest = first_branch(pattern)
                            .and_then(|first| named_rest(pattern, first))
                            .and_then(|named| Some((plain_regex(branch)?, named)));
                    }
                    Engine::Fancy(rx)
                }
                Err(err) => {
                    return Err(RegexError(format!(
                        "invalid pre-tokenizer regex {pattern:?}: {err}"
                    )))
                }
            },
        };
        Ok(GeneralRegex {
            engine,
            whole,
            rest,
        })
    }

    /// Without the named scanner of a pattern's rest (the tests' reference: the engine alone).
    pub fn without_scanners(mut self) -> GeneralRegex {
        self.rest = None;
        self
    }

    pub fn is_plain(&self) -> bool {
        matches!(self.engine, Engine::Plain(_))
    }

    /// Non-empty matches of the regex in `text` as byte spans, in order.
    pub fn for_each_match(
        &self,
        text: &str,
        mut f: impl FnMut(usize, usize),
    ) -> Result<(), RegexError> {
        match &self.engine {
            Engine::Plain(rx) => {
                for m in rx.find_iter(text) {
                    if m.start() < m.end() {
                        f(m.start(), m.end());
                    }
                }
            }
            Engine::Fancy(rx) => {
                if let Some(whole) = &self.whole {
                    if !text.is_empty() && whole.find(text).is_some_and(|m| m.end() == text.len()) {
                        f(0, text.len());
                        return Ok(());
                    }
                }
                if let Some((anywhere, named)) = &self.rest {
                    if !anywhere.is_match(text) {
                        let (table, s) = (classes::classes(), text.as_bytes());
                        let mut pos = 0;
                        while pos < s.len() {
                            match named.match_at(table, s, pos) {
                                Some(end) => {
                                    f(pos, end);
                                    pos = end;
                                }
                                None => pos += classes::decode(s, pos).1,
                            }
                        }
                        return Ok(());
                    }
                }
                for m in rx.find_iter(text) {
                    let m = m.map_err(|err| {
                        RegexError(format!(
                            "pre-tokenizer regex {:?} failed on a piece of {} bytes: {err}",
                            rx.as_str(),
                            text.len()
                        ))
                    })?;
                    if m.start() < m.end() {
                        f(m.start(), m.end());
                    }
                }
            }
        }
        Ok(())
    }
}

/// The first branch of a (translated) pattern whose top level is an alternation (`A` of
/// `A|B|C`), or None; also None for a verbose pattern (`(?x)`), whose comments may hold any
/// character. Inside a translated class a `[` only opens a POSIX class (`[:alpha:]`).
fn first_branch(pattern: &str) -> Option<&str> {
    if pattern.contains("(?x") || pattern.contains("(?-x") {
        return None;
    }
    let bytes = pattern.as_bytes();
    let (mut depth, mut in_class, mut class_start) = (0usize, false, false);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        i += 1;
        match c {
            b'\\' => {
                i += 1; // the escaped character (any multi-byte rest is no syntax byte)
                class_start = false;
                continue;
            }
            b'[' if in_class && bytes.get(i) == Some(&b':') => {
                // (No ":]": not a POSIX class; then no answer rather than a guess.)
                i += 1 + pattern[i + 1..].find(":]")? + 2;
            }
            b']' if in_class && !class_start => in_class = false,
            _ if in_class => {}
            b'[' => {
                in_class = true;
                class_start = true;
                continue;
            }
            b'(' => depth += 1,
            b')' => depth = depth.checked_sub(1)?,
            b'|' if depth == 0 => return Some(&pattern[..i - 1]),
            _ => {}
        }
        class_start = class_start && c == b'^';
    }
    None
}

/// `pattern` compiled by the `regex` crate, with a generous size limit (user patterns with big
/// Unicode classes are fine), or None where it cannot take it.
fn plain_regex(pattern: &str) -> Option<regex::Regex> {
    regex::RegexBuilder::new(pattern)
        .size_limit(64 << 20)
        .build()
        .ok()
}

/// The named regex `N` of a pattern `A|(?:N)` (its `first_branch` `A` given), or None: the rest must
/// be one group holding exactly a named regex's text, as `wwho extend` writes it.
fn named_rest(pattern: &str, branch: &str) -> Option<Named> {
    let rest = pattern.get(branch.len() + 1..)?;
    Named::from_pattern(rest.strip_prefix("(?:")?.strip_suffix(')')?)
}

/// Whether a (translated) pattern has a possessive quantifier: `*+`, `++`, `?+` or `}+`
/// outside a character class.
fn has_possessive(pattern: &str) -> bool {
    let mut chars = pattern.chars().peekable();
    let (mut in_class, mut class_start, mut prev_quantifier) = (false, false, false);
    while let Some(c) = chars.next() {
        if c == '\\' {
            // An escape, with its braces if any (`\p{N}`, `\x{41}`): never a quantifier.
            let escaped = chars.next();
            if matches!(escaped, Some('p' | 'P' | 'x' | 'u' | 'U' | 'N' | 'g'))
                && chars.peek() == Some(&'{')
            {
                for d in chars.by_ref() {
                    if d == '}' {
                        break;
                    }
                }
            }
            prev_quantifier = false;
            class_start = false;
            continue;
        }
        if in_class {
            if c == ']' && !class_start {
                in_class = false;
            }
            class_start = class_start && c == '^';
            prev_quantifier = false;
            continue;
        }
        if c == '+' && prev_quantifier {
            return true;
        }
        prev_quantifier = matches!(c, '*' | '+' | '?' | '}');
        if c == '[' {
            in_class = true;
            class_start = true;
        }
    }
    false
}

/// Python `regex` syntax -> Rust `regex`/`fancy-regex` syntax (see the module docs).
pub fn translate(pattern: &str) -> String {
    // A run of whitespace at the end (DeepSeek LLM's rule): `\n` is whitespace, so the greedy run
    // that reaches a final newline reaches the end, and `$` may be `\z`. The lookahead would send
    // the pattern to the backtracking engine, whose stack a run of a million spaces overflows.
    if pattern == r"\s+$" {
        return r"\s+\z".to_string();
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    let mut class_depth = 0usize; // Python classes do not nest: 0 or 1
    let mut class_start = false; // just after `[` or `[^`: a `]` here is a literal
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('Z') if class_depth == 0 => out.push_str(r"\z"),
                Some(e) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            }
            class_start = false;
            continue;
        }
        if class_depth == 0 {
            match c {
                '[' => {
                    class_depth = 1;
                    class_start = true;
                    out.push('[');
                    if chars.peek() == Some(&'^') {
                        chars.next();
                        out.push('^');
                    }
                    continue;
                }
                '$' => out.push_str(r"(?=\n?\z)"),
                _ => out.push(c),
            }
            continue;
        }
        // Inside a class.
        match c {
            ']' if !class_start => {
                class_depth = 0;
                out.push(']');
            }
            '[' => {
                if chars.peek() == Some(&':') {
                    out.push('['); // a POSIX class [:alpha:], the same in both dialects
                } else {
                    out.push_str(r"\[");
                }
            }
            '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '-' if chars.peek() == Some(&'-') => {
                chars.next();
                out.push_str(r"-\-");
            }
            _ => out.push(c),
        }
        class_start = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(rx: &GeneralRegex, text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        rx.for_each_match(text, |a, b| out.push((a, b))).unwrap();
        out
    }

    #[test]
    fn translation() {
        assert_eq!(translate(r"\s+$"), r"\s+\z");
        assert_eq!(translate(r"a\s+$"), r"a\s+(?=\n?\z)");
        assert_eq!(translate(r"[$]\Z"), r"[$]\z");
        assert_eq!(translate(r"[[a]"), r"[\[a]");
        assert_eq!(translate(r"[]a]"), r"[]a]");
        assert_eq!(translate(r"[^]a]"), r"[^]a]");
        assert_eq!(translate(r"[a&&b~~c]"), r"[a\&\&b\~\~c]");
        assert_eq!(translate(r"[+--]"), r"[+-\-]");
        assert_eq!(translate(r"[\]]x"), r"[\]]x");
    }

    #[test]
    fn a_whitespace_run_at_the_end_is_the_lookahead_form_without_backtracking() {
        let plain = GeneralRegex::new(r"\s+$").unwrap();
        assert!(plain.is_plain());
        let looking = fancy_regex::Regex::new(r"\s+(?=\n?\z)").unwrap();
        let alphabet = [" ", "\n", "\t", "a", "\u{a0}", "\r"];
        // Every string of up to five characters of the alphabet.
        let mut texts = vec![String::new()];
        let mut longest = vec![String::new()];
        for _ in 0..5 {
            longest = longest
                .iter()
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(longest.iter().cloned());
        }
        for text in &texts {
            let want: Vec<(usize, usize)> = looking
                .find_iter(text)
                .map(|m| m.unwrap())
                .filter(|m| m.start() < m.end())
                .map(|m| (m.start(), m.end()))
                .collect();
            assert_eq!(spans(&plain, text), want, "{text:?}");
        }
        let run = format!("x{}\n", " ".repeat(2_000_000));
        assert_eq!(spans(&plain, &run), vec![(1, run.len())]);
    }

    #[test]
    fn python_semantics() {
        let dollar = GeneralRegex::new("a$").unwrap();
        assert_eq!(spans(&dollar, "a\n"), vec![(0, 1)]);
        assert_eq!(spans(&dollar, "a\nb"), vec![]);
        let class = GeneralRegex::new(r"[+--]").unwrap();
        assert_eq!(spans(&class, "+,-a"), vec![(0, 1), (1, 2), (2, 3)]);
        let nested = GeneralRegex::new(r"[[a]").unwrap();
        assert_eq!(spans(&nested, "a[b"), vec![(0, 1), (1, 2)]);
    }

    #[test]
    fn first_branches() {
        assert_eq!(first_branch(r"(?:a|b)|c"), Some(r"(?:a|b)"));
        assert_eq!(first_branch(r"[|]x|y"), Some(r"[|]x"));
        assert_eq!(first_branch(r"[]|]x|y"), Some(r"[]|]x"));
        assert_eq!(first_branch(r"[^]|]x|y"), Some(r"[^]|]x"));
        assert_eq!(first_branch(r"\|x|y"), Some(r"\|x"));
        assert_eq!(first_branch(r"(a|b)"), None);
        assert_eq!(first_branch(r"abc"), None);
        // a POSIX class holding what would otherwise close the class, a group or split
        assert_eq!(
            first_branch(r"(?:[[:alpha:])]|c)|d"),
            Some(r"(?:[[:alpha:])]|c)")
        );
        assert_eq!(first_branch(r"[[:alpha:]|]x|y"), Some(r"[[:alpha:]|]x"));
        assert_eq!(
            first_branch(
                r"(?x)a # one | two
|b"
            ),
            None
        );
        assert_eq!(first_branch(r"a)|b"), None);
        assert_eq!(first_branch("ශ්‍රී|b"), Some("ශ්‍රී"));
    }

    /// Every text of 1 to `longest` characters of `alphabet`.
    fn every_text(alphabet: &[char], longest: u32) -> impl Iterator<Item = String> + '_ {
        (1..=longest).flat_map(move |len| {
            (0..alphabet.len().pow(len)).map(move |code| {
                let mut rest = code;
                (0..len)
                    .map(|_| {
                        let c = alphabet[rest % alphabet.len()];
                        rest /= alphabet.len();
                        c
                    })
                    .collect()
            })
        })
    }

    /// The whole-text shortcut of a backtracking alternation gives the spans the backtracking
    /// engine gives, on every short text over an alphabet that makes the branches compete.
    #[test]
    fn whole_text_shortcut_equals_the_backtracking_engine() {
        let patterns = [
            r"(?:a+)|(?:\s+(?!\S)|\S)",
            r"(?:a|ab)|(?:b(?=a)|\S)",
            r"(?: ?[ab][ab\x{200D}]*)|(?:\p{L}+|\s+(?!\S)|\s+)",
            r"(?:[^ ]c*)|(?:c(?!a)|.)",
            r"(?:[[:alpha:]]b*)|(?:\s+(?!\S)|\S)",
        ];
        let alphabet = ['a', 'b', 'c', ' ', '\u{200D}'];
        for pattern in patterns {
            let rx = GeneralRegex::new(pattern).unwrap();
            assert!(rx.whole.is_some(), "{pattern}");
            let plain = GeneralRegex {
                engine: Engine::Fancy(fancy_regex::Regex::new(&translate(pattern)).unwrap()),
                whole: None,
                rest: None,
            };
            for text in every_text(&alphabet, 6) {
                assert_eq!(
                    spans(&rx, &text),
                    spans(&plain, &text),
                    "{pattern} on {text:?}"
                );
            }
        }
    }

    #[test]
    fn a_word_longer_than_the_backtracking_stack_is_one_match() {
        let rx = GeneralRegex::new(r"(?: ?[ක-ෆ][ක-ෆ\x{0DCF}-\x{0DDF}]*)|(?:\p{L}+|\s+(?!\S)|\s+)")
            .unwrap();
        let word = "කතා".repeat(1_000_000);
        assert_eq!(spans(&rx, &word), vec![(0, word.len())]);
        let plain = GeneralRegex {
            engine: Engine::Fancy(
                fancy_regex::Regex::new(&translate(
                    r"(?: ?[ක-ෆ][ක-ෆ\x{0DCF}-\x{0DDF}]*)|(?:\p{L}+|\s+(?!\S)|\s+)",
                ))
                .unwrap(),
            ),
            whole: None,
            rest: None,
        };
        assert!(plain.for_each_match(&word, |_, _| {}).is_err()); // what it replaces
    }

    /// `(?:W)|(?:B)` over a named `B`: where `W` matches nowhere, `B`'s scanner gives the engine's
    /// spans, and a run of a million spaces, which overflows the engine's stack, is split as `B`
    /// alone splits it.
    #[test]
    fn a_named_rest_gives_the_engines_spans_and_takes_a_million_spaces() {
        use super::super::named::{LLAMA3, O200K, QWEN2};
        let alphabet = [
            'a', 'B', '1', ' ', '\n', '\t', '!', '\'', 's', 'ක', '\u{0DCA}', 'é', '\u{00A0}',
        ];
        for named in [O200K, LLAMA3, QWEN2] {
            let pattern = format!(r"(?: ?[ක-ෆ][ක-ෆ\x{{0DCA}}-\x{{0DDF}}]*)|(?:{named})");
            let rx = GeneralRegex::new(&pattern).unwrap();
            assert!(rx.rest.is_some(), "{pattern}");
            let engine = GeneralRegex::new(&pattern).unwrap().without_scanners();
            for text in every_text(&alphabet, 5) {
                assert_eq!(
                    spans(&rx, &text),
                    spans(&engine, &text),
                    "{named} on {text:?}"
                );
            }
            let base = super::super::Pretokenizer::new(&[named], &[]).unwrap();
            for run in [" ", "\n", " \n", "\t "] {
                let text = format!("{}x", run.repeat(100_000));
                assert_eq!(spans(&rx, &text), spans(&engine, &text), "{run:?}");
                let text = format!("{}x", run.repeat(1_000_000));
                assert!(engine.for_each_match(&text, |_, _| {}).is_err()); // what it replaces
                assert_eq!(spans(&rx, &text), base.split(&text).unwrap(), "{run:?}");
            }
        }
        // Not a group holding exactly a named regex: the engine alone.
        let other = GeneralRegex::new(&format!(r"(?:a)|(?:{O200K}|b)")).unwrap();
        assert!(other.rest.is_none());
    }

    #[test]
    fn engines() {
        assert!(GeneralRegex::new(r"\p{N}+").unwrap().is_plain());
        assert!(!GeneralRegex::new(r"\s+(?!\S)").unwrap().is_plain());
        assert!(!GeneralRegex::new(r"\p{L}++").unwrap().is_plain());
        assert!(!GeneralRegex::new(r"\p{N}{1,3}+").unwrap().is_plain());
        assert!(GeneralRegex::new(r"[+]+\++").unwrap().is_plain());
        assert!(!GeneralRegex::new(r"\d{3}+").unwrap().is_plain());
        assert!(GeneralRegex::new("(").is_err());
    }
}
