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
    /// Pattern number -> index into `Specials::texts`.
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
        let patterns: Vec<&str> = index.iter().map(|&i| self.texts[i].as_str()).collect();
        // The automaton the crate picks for a few patterns is a DFA, whose construction takes
        // time quadratic in a long repetitive pattern and a kilobyte or so per byte of a long
        // random one. No real special token is long; where one is, the matcher is an NFA, built
        // in linear time and space.
        let long = patterns.iter().any(|p| p.len() > MAX_DFA_PATTERN);
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(long.then_some(AhoCorasickKind::ContiguousNFA))
            .build(&patterns)
            .map_err(|e| Error::Vocab(format!("cannot build the special-token matcher: {e}")))?;
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
}
