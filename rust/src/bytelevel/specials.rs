//! Special and added tokens: finding their text in the input.
//!
//! tiktoken's semantics for special tokens: text matching a *disallowed* special token is an
//! error, an *allowed* one becomes its id, the rest is plain text. Added tokens (GGUF
//! `USER_DEFINED`, Hugging Face non-special added tokens) are always split out. Matching is
//! leftmost-longest (Aho-Corasick), as Hugging Face's added-token matcher and a regex
//! alternation sorted longest first. Matchers for a given set are built on first use and kept
//! (at most [`MAX_MATCHERS`] sets; the map is emptied when full).

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex};

use super::Error;
use crate::fork::PerProcess;

const MAX_MATCHERS: usize = 64;

/// A set of special tokens, by index into [`Specials`]' special tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecialSet {
    None,
    All,
    Some(Vec<usize>),
}

pub struct Matcher {
    ac: AhoCorasick,
    /// Pattern number -> index into `Specials::texts` (`usize::MAX` for a spacer, never
    /// found; see [`Specials::build`]).
    index: Vec<usize>,
}

impl Matcher {
    /// Leftmost-longest matches: (token index, start, end).
    pub fn find_iter<'a>(
        &'a self,
        text: &'a str,
    ) -> impl Iterator<Item = (usize, usize, usize)> + 'a {
        self.ac
            .find_iter(text)
            .map(|m| (self.index[m.pattern().as_usize()], m.start(), m.end()))
    }
}

/// A matcher built with the tokenizer (borrowed) or on demand (shared with the cache).
pub enum MatcherRef<'a> {
    Fixed(&'a Matcher),
    Built(Arc<Matcher>),
}

impl std::ops::Deref for MatcherRef<'_> {
    type Target = Matcher;
    fn deref(&self) -> &Matcher {
        match self {
            MatcherRef::Fixed(m) => m,
            MatcherRef::Built(m) => m,
        }
    }
}

/// Special or added token texts longer than this (in bytes) are matched by an NFA (see
/// [`Specials::build`]).
const MAX_DFA_PATTERN: usize = 256;

/// Sets of more tokens than this get spacers (see [`Specials::build`]). The swaps of smaller
/// sets cost next to nothing, and their automaton stays as the crate builds it: a DFA below 100
/// patterns, with a packed-search prefilter below 128.
const SPACED_FROM: usize = 128;

/// The crate's rare-byte prefilter takes no pattern of this many bytes or more.
const RARE_BYTES_MAX_LEN: usize = 256;

/// Patterns that never match, for a set of `tokens` tokens of which `first` is one (the
/// shortest), that make the automaton's construction linear (see [`Specials::build`]):
/// together they have more non-match states than the set and they have match states.
///
/// Each is `first`, a distinct code of 0xC0 and 0xC1 bytes (never in UTF-8, so never in a
/// `&str` haystack) and a run of NULs. Starting with `first`, they add no start byte and no
/// rare byte to the crate's prefilters and put no byte of `first` at a new offset: the
/// prefilter is that of the tokens alone (unless a token holds a NUL, whose offset the runs
/// raise). Under 256 bytes unless `first` is long, they keep the rare-byte prefilter. Their
/// states past `first`, a match state, fail to the dead state, whose transitions the crate
/// scans in byte order for each of them: low bytes keep that short.
fn spacers(first: &[u8], tokens: usize) -> Vec<Vec<u8>> {
    let mut width = 1;
    loop {
        let run = (RARE_BYTES_MAX_LEN - 1)
            .saturating_sub(first.len() + width)
            .max(16);
        // `run` non-match states in each, for the tokens, the spacers and the first token.
        let count = (tokens + 1).div_ceil(run - 2);
        if count <= 1 << width {
            return (0..count)
                .map(|j| {
                    let mut s = first.to_vec();
                    s.extend((0..width).map(|bit| 0xC0 | ((j >> bit) & 1) as u8));
                    s.resize(s.len() + run, 0);
                    s
                })
                .collect();
        }
        width += 1;
    }
}

/// The spacers of a set of tokens (none for a small set), made of its shortest token: a long one
/// would be copied into every spacer, and the shortest is one of the patterns, so its bytes at
/// its offsets are in the prefilters already.
fn spacers_for(tokens: &[&[u8]]) -> Vec<Vec<u8>> {
    if tokens.len() <= SPACED_FROM {
        return Vec::new();
    }
    let shortest = tokens
        .iter()
        .copied()
        .min_by_key(|t| t.len())
        .unwrap_or_default();
    spacers(shortest, tokens.len())
}

/// (indices of the tokens, whether added tokens are in) -> matcher.
type MatcherMap = FxHashMap<(Vec<usize>, bool), Arc<Matcher>>;

pub struct Specials {
    /// Special tokens first (`n_special` of them), then added tokens.
    texts: Vec<String>,
    ids: Vec<u32>,
    n_special: usize,
    by_name: FxHashMap<String, usize>,
    /// The matchers of the common calls, built once: every special token (the default
    /// disallowed set), every added token (the default split), and both.
    all_specials: Option<Arc<Matcher>>,
    added_only: Option<Arc<Matcher>>,
    everything: Option<Arc<Matcher>>,
    /// Matchers built for other sets, kept (a lock only tried: busy means build one more).
    matchers: PerProcess<Mutex<MatcherMap>>,
}

impl Specials {
    pub fn new(special: &[(&str, u32)], added: &[(&str, u32)]) -> Result<Specials, Error> {
        let texts = special
            .iter()
            .chain(added)
            .map(|(t, _)| t.to_string())
            .collect();
        let ids = special.iter().chain(added).map(|&(_, i)| i).collect();
        let by_name = special
            .iter()
            .enumerate()
            .map(|(n, (t, _))| (t.to_string(), n))
            .collect();
        let mut out = Specials {
            texts,
            ids,
            n_special: special.len(),
            by_name,
            all_specials: None,
            added_only: None,
            everything: None,
            matchers: PerProcess::new(Mutex::default),
        };
        out.all_specials = out.build((0..out.n_special).collect())?;
        out.added_only = out.build((out.n_special..out.texts.len()).collect())?;
        out.everything = out.build((0..out.texts.len()).collect())?;
        Ok(out)
    }

    fn build(&self, index: Vec<usize>) -> Result<Option<Arc<Matcher>>, Error> {
        if index.is_empty() {
            return Ok(None);
        }
        // The automaton the crate picks for a few patterns is a DFA, whose construction takes
        // time quadratic in a long repetitive pattern and a kilobyte or so per byte of a long
        // random one. No real special token is long; where one is, the matcher is an NFA, built
        // in linear time and space.
        let long = index.iter().any(|&i| self.texts[i].len() > MAX_DFA_PATTERN);
        // The crate's construction moves every match state ahead of the non-match states by
        // swaps and then resolves the swaps cycle by cycle, in time quadratic in a cycle's
        // length. A non-match state that comes before many match states (the "1" of tokens
        // "10", "11", ..., "1999", each a prefix of the next ones) is swapped once per match
        // state after it, all in one cycle. Spacers, added right after the first token, bring
        // more non-match states than there are match states: each match state is swapped with
        // one of them, none more than a few times, and every cycle is short.
        let tokens: Vec<&[u8]> = index.iter().map(|&i| self.texts[i].as_bytes()).collect();
        let spacers = spacers_for(&tokens);
        let patterns = tokens[..1]
            .iter()
            .copied()
            .chain(spacers.iter().map(Vec::as_slice))
            .chain(tokens[1..].iter().copied());
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(long.then_some(AhoCorasickKind::ContiguousNFA))
            .build(patterns)
            .map_err(|e| Error::Vocab(format!("cannot build the special-token matcher: {e}")))?;
        // Spacers never match: their pattern numbers map to no token.
        let index = index[..1]
            .iter()
            .copied()
            .chain(std::iter::repeat_n(usize::MAX, spacers.len()))
            .chain(index[1..].iter().copied())
            .collect();
        Ok(Some(Arc::new(Matcher { ac, index })))
    }

    pub fn text(&self, index: usize) -> &str {
        &self.texts[index]
    }

    pub fn id(&self, index: usize) -> u32 {
        self.ids[index]
    }

    pub fn n_special(&self) -> usize {
        self.n_special
    }

    pub fn n_added(&self) -> usize {
        self.texts.len() - self.n_special
    }

    /// Indices of the named special tokens; [`Error::UnknownSpecial`] names the unknown ones.
    pub fn resolve<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<usize>, Error> {
        let mut found = Vec::with_capacity(names.len());
        let mut unknown = Vec::new();
        for name in names {
            match self.by_name.get(name.as_ref()) {
                Some(&i) => found.push(i),
                None => unknown.push(name.as_ref().to_string()),
            }
        }
        if unknown.is_empty() {
            found.sort_unstable();
            found.dedup();
            Ok(found)
        } else {
            unknown.sort();
            Err(Error::UnknownSpecial(unknown))
        }
    }

    fn indices(&self, set: &SpecialSet) -> Vec<usize> {
        match set {
            SpecialSet::None => Vec::new(),
            SpecialSet::All => (0..self.n_special).collect(),
            SpecialSet::Some(v) => v.clone(),
        }
    }

    /// The matcher for the special tokens in `set` (plus every added token if `with_added`),
    /// or None if that is no token at all.
    pub fn matcher(
        &self,
        set: &SpecialSet,
        with_added: bool,
    ) -> Result<Option<MatcherRef<'_>>, Error> {
        // The common calls take no lock and touch no shared count: `encode` asks twice per
        // text, from every thread of a batch.
        let fixed = match (set, with_added) {
            (SpecialSet::None, false) => return Ok(None),
            (SpecialSet::All, false) => Some(&self.all_specials),
            (SpecialSet::None, true) => Some(&self.added_only),
            (SpecialSet::All, true) => Some(&self.everything),
            (SpecialSet::Some(_), _) => None,
        };
        if let Some(m) = fixed {
            return Ok(m.as_deref().map(MatcherRef::Fixed));
        }
        let mut index = self.indices(set);
        if with_added {
            index.extend(self.n_special..self.texts.len());
        }
        if index.is_empty() {
            return Ok(None);
        }
        let key = (index, with_added);
        if let Ok(map) = self.matchers.get().try_lock() {
            if let Some(m) = map.get(&key) {
                return Ok(Some(MatcherRef::Built(m.clone())));
            }
        }
        let Some(matcher) = self.build(key.0.clone())? else {
            return Ok(None);
        };
        if let Ok(mut map) = self.matchers.get().try_lock() {
            if map.len() >= MAX_MATCHERS {
                map.clear();
            }
            map.insert(key, matcher.clone());
        }
        Ok(Some(MatcherRef::Built(matcher)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftmost_longest_and_sets() {
        let s = Specials::new(&[("<|a|>", 10), ("<|a|><|b|>", 11)], &[("ab", 12)]).unwrap();
        let all = s.matcher(&SpecialSet::All, true).unwrap().unwrap();
        let found: Vec<_> = all.find_iter("x<|a|><|b|>ab<|a|>").collect();
        assert_eq!(found, vec![(1, 1, 11), (2, 11, 13), (0, 13, 18)]);
        let one = s
            .matcher(&SpecialSet::Some(vec![0]), false)
            .unwrap()
            .unwrap();
        let found: Vec<_> = one.find_iter("<|a|><|b|>").collect();
        assert_eq!(found, vec![(0, 0, 5)]);
        assert!(s.matcher(&SpecialSet::None, false).unwrap().is_none());
        assert_eq!(s.resolve(&["<|a|>", "<|a|>"]), Ok(vec![0]));
        assert_eq!(
            s.resolve(&["nope"]),
            Err(Error::UnknownSpecial(vec!["nope".to_string()]))
        );
    }

    /// Past [`MAX_DFA_PATTERN`] bytes the matcher is an NFA, with the same leftmost-longest
    /// matches; a token of 200,000 repeated bytes is built at once (the DFA took minutes).
    #[test]
    fn long_tokens_match_as_short_ones_do() {
        let long = "a".repeat(MAX_DFA_PATTERN + 1);
        let longer = format!("{long}b");
        let s = Specials::new(&[(long.as_str(), 10), (longer.as_str(), 11)], &[("a", 12)]).unwrap();
        let all = s.matcher(&SpecialSet::All, true).unwrap().unwrap();
        let text = format!("x{longer}{long}aa");
        let found: Vec<_> = all.find_iter(&text).collect();
        let (a, b) = (1 + longer.len(), 1 + longer.len() + long.len());
        assert_eq!(
            found,
            vec![(1, 1, a), (0, a, b), (2, b, b + 1), (2, b + 1, b + 2)]
        );
        let huge = "a".repeat(200_000);
        let s = Specials::new(&[(huge.as_str(), 1)], &[]).unwrap();
        let all = s.matcher(&SpecialSet::All, false).unwrap().unwrap();
        assert_eq!(
            all.find_iter(&huge).collect::<Vec<_>>(),
            vec![(0, 0, 200_000)]
        );
    }

    /// Tokens "10" to "199999", each a prefix of ten others: leftmost-longest matches, in
    /// every set, and a build linear in the number of tokens (it was quadratic).
    #[test]
    fn prefix_chained_tokens_build_at_once() {
        let texts: Vec<String> = (0..100_000).map(|i| format!("1{i}")).collect();
        let special: Vec<(&str, u32)> = texts[..50_000]
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_str(), i as u32))
            .collect();
        let added: Vec<(&str, u32)> = texts[50_000..]
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_str(), 50_000 + i as u32))
            .collect();
        let start = std::time::Instant::now();
        let s = Specials::new(&special, &added).unwrap();
        let elapsed = start.elapsed();
        // Specials are "10" to "149999", added tokens "150000" to "199999".
        let text = "156789 1234567 16";
        let found = |set: &SpecialSet, with_added: bool| -> Vec<(usize, usize, usize)> {
            let m = s.matcher(set, with_added).unwrap().unwrap();
            m.find_iter(text).collect()
        };
        assert_eq!(
            found(&SpecialSet::All, false),
            vec![(5678, 0, 5), (23456, 7, 13), (6, 15, 17)]
        );
        assert_eq!(
            found(&SpecialSet::All, true),
            vec![(56789, 0, 6), (23456, 7, 13), (6, 15, 17)]
        );
        assert_eq!(found(&SpecialSet::None, true), vec![(56789, 0, 6)]);
        assert_eq!(
            found(&SpecialSet::Some(vec![6, 23, 234]), false),
            vec![(234, 7, 11), (6, 15, 17)]
        );
        // Three builds (of 50,000, 50,000 and 100,000 tokens): a bound far above a linear
        // construction's time and below a quadratic one's.
        assert!(elapsed.as_secs_f64() < 5.0, "{elapsed:?}");
    }

    /// A long first token is not copied into the spacers (every spacer would hold a copy of it,
    /// so memory would grow as its length times the number of spacers).
    #[test]
    fn a_long_first_token_makes_no_long_spacers() {
        let mut texts = vec!["x".repeat(100_000)];
        texts.extend((0..2_000).map(|i| format!("1{i}")));
        let bytes: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
        let spacers = spacers_for(&bytes);
        assert!(!spacers.is_empty() && spacers.iter().all(|s| s.len() < RARE_BYTES_MAX_LEN));
        let tokens: Vec<(&str, u32)> = texts.iter().map(|t| (t.as_str(), 0)).collect();
        let s = Specials::new(&tokens, &[]).unwrap();
        let m = s.matcher(&SpecialSet::All, false).unwrap().unwrap();
        assert_eq!(m.index.len(), texts.len() + spacers.len());
        let text = format!("a{}b 1999", "x".repeat(100_000));
        assert_eq!(
            m.find_iter(&text).collect::<Vec<_>>(),
            vec![(0, 1, 100_001), (1000, 100_003, 100_007)]
        );
    }

    /// Spacers change no match: the same leftmost-longest matches as an automaton of the
    /// tokens alone, whatever the first and the shortest token.
    #[test]
    fn spacers_change_no_match() {
        for first in ["<|a|>", "", "é", &"x".repeat(250), &"x".repeat(300)] {
            let mut texts = vec![first.to_string()];
            texts.extend((0..150).map(|i| format!("1{i}")));
            texts.extend((0..50).map(|i| format!("<|{i}|>")));
            texts.extend(["<|1|><|2|>", "x", "xx", "é\0", "\0"].map(String::from));
            texts.retain(|t| !t.is_empty());
            let tokens: Vec<(&str, u32)> = texts.iter().map(|t| (t.as_str(), 0)).collect();
            let s = Specials::new(&tokens, &[]).unwrap();
            let m = s.matcher(&SpecialSet::All, false).unwrap().unwrap();
            assert!(m.index.len() > texts.len(), "no spacer for {first:?}");
            let alone = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&texts)
                .unwrap();
            let x300 = "x".repeat(301);
            for text in [
                "1234 <|1|><|2|>1499 <|3|>",
                "é\0\0 x\u{80}\0 <|a|>\0\0\0",
                &x300,
                &format!("{first}{}{first}", "\0".repeat(300)),
            ] {
                let expected: Vec<_> = alone
                    .find_iter(text)
                    .map(|f| (f.pattern().as_usize(), f.start(), f.end()))
                    .collect();
                assert_eq!(m.find_iter(text).collect::<Vec<_>>(), expected, "{text:?}");
            }
        }
    }
}
