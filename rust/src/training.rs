//! SGPE training between counting and merging (`wwho.sgpe.train`'s phases 2 and 3).
//!
//! * [`collect_words`]: each distinct piece once -> words of syllables and boundary tokens
//!   ([`WordSplitter`]), grouped into the spans of the merge scope, counted by the piece's count;
//! * [`WordCounts::engine_input`]: the symbol table (boundary tokens sorted, then syllables by
//!   frequency, those rarer than `prune_freq` left out as [`UNK`]) and the word types (sorted
//!   once, as Python sorts tuples of strings, when they are collected), as the merge engine's
//!   input;
//! * [`building_merges`]: the merges that rebuild each symbol from its code points.
//!
//! Strings are interned as code point sequences; Python gets back only what it writes to
//! `vocab.json`. This module does not read corpora, merge, or assign final ids.

use crate::counting::Counts;
use crate::engine::UNK;
use crate::errors::VocabError;
use crate::merge::{merge, Merge, PairTable};
use crate::units::decode_wtf8_into;
use crate::words::{Parts, Scope, WordSplitter};
use aho_corasick::AhoCorasick;
use rayon::slice::ParallelSliceMut;
use rustc_hash::FxHashMap;
use std::cmp::Ordering;

/// Strings by id, and ids by string.
#[derive(Debug, Default)]
pub struct Interner {
    strings: Vec<Box<[u32]>>,
    index: FxHashMap<Box<[u32]>, u32>,
}

impl Interner {
    pub fn id(&mut self, s: &[u32]) -> u32 {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.into());
        self.index.insert(s.into(), id);
        id
    }

    pub fn get(&self, id: u32) -> &[u32] {
        &self.strings[id as usize]
    }

    /// The id of `s`, if it was interned.
    pub fn lookup(&self, s: &[u32]) -> Option<u32> {
        self.index.get(s).copied()
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

/// Longest word ending, in units, that [`WordCounts::endings`] gives.
pub const MAX_ENDING: usize = 32;

/// Longest unit (a syllable or a boundary token), in code points, that may be a symbol. No
/// syllable or grapheme cluster of real text comes near it, while one made up (a letter and
/// thousands of combining marks, a run of joiners) would otherwise take an id for each of its
/// prefixes (its building pieces) and time and memory in the square of its length. A longer
/// unit is no symbol: it is spelt by its characters, as a syllable pruned for its rarity is.
pub const MAX_SYMBOL_UNITS: usize = 32;

/// Whether the unit `units` may be a symbol: not too long, and no lone surrogate in it (no
/// UTF-8 file, vocab.json or tokenizer.json, can hold one; words keep such a unit as an
/// unknown one, and encoders give it to byte fallback).
pub fn may_be_symbol(units: &[u32]) -> bool {
    units.len() <= MAX_SYMBOL_UNITS && !units.iter().any(|c| (0xD800..0xE000).contains(c))
}

/// What the pieces of a corpus hold ([`collect_words`], which `wwho.sgpe.phases` asks for).
#[derive(Debug, Default)]
pub struct WordCounts {
    pub strings: Interner,
    /// Mergeable spans (string ids) and their counts, in Python's order of tuples of strings:
    /// word `i` is word `i` of every engine input.
    pub words: Vec<(Box<[u32]>, u64)>,
    /// Open addressing over `words` (index + 1, 0 for empty), for [`WordCounts::position`].
    slots: Vec<u32>,
    /// Lone boundary tokens (never merged) and their counts.
    pub boundary: FxHashMap<u32, u64>,
    /// Every syllable's count (the pruning candidates).
    pub syllable_freq: FxHashMap<u32, u64>,
    /// Every boundary token seen, lone or inside a span, and how often (the script check's
    /// letters: inside spans is where the default scope puts a whole other script).
    pub boundary_symbols: FxHashMap<u32, u64>,
    /// Scope `Pieces` only: the words of pieces that hold more than a word (`" ලංකාව."`'s
    /// `" ලංකාව"`), as string ids, and how often: what such a word is with its punctuation
    /// taken away (the trainer's `complete_words`).
    pub cores: FxHashMap<Box<[u32]>, u64>,
}

/// Distinct pieces -> [`WordCounts`]. A piece holding the text of a `reserved` token (a special
/// or byte token) is grouped as in scope `Words`, so that no merge ever produces that text.
/// Ranges of the pieces are done on all cores, then merged (string ids renumbered).
pub fn collect_words(
    pieces: &Counts,
    splitter: &WordSplitter,
    scope: Scope,
    reserved: &[String],
) -> WordCounts {
    let guard = if scope == Scope::Words || reserved.is_empty() {
        None
    } else {
        AhoCorasick::new(reserved).ok()
    };
    // (The order of the pieces does not matter: every output is sorted by strings later.)
    let entries: Vec<(&[u8], u64)> = pieces.iter().collect();
    let threads = if entries.len() < PARALLEL_PIECES {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    };
    let per = entries.len().div_ceil(threads).max(1);
    let mut parts: Vec<Part> = std::thread::scope(|s| {
        let handles: Vec<_> = entries
            .chunks(per)
            .map(|chunk| {
                let guard = guard.as_ref();
                s.spawn(move || collect_part(chunk, splitter, scope, guard))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic collecting words"))
            .collect()
    });
    let (mut out, mut words) = if parts.is_empty() {
        Part::default()
    } else {
        parts.remove(0)
    };
    for (part, part_words) in parts {
        let remap: Vec<u32> = part
            .strings
            .strings
            .iter()
            .map(|s| out.strings.id(s))
            .collect();
        for (s, n) in part.syllable_freq {
            *out.syllable_freq.entry(remap[s as usize]).or_default() += n;
        }
        for (s, n) in part.boundary {
            *out.boundary.entry(remap[s as usize]).or_default() += n;
        }
        for (s, n) in part.boundary_symbols {
            *out.boundary_symbols.entry(remap[s as usize]).or_default() += n;
        }
        for (w, n) in part.cores {
            let w: Box<[u32]> = w.iter().map(|&s| remap[s as usize]).collect();
            *out.cores.entry(w).or_default() += n;
        }
        for (w, n) in part_words {
            let w: Box<[u32]> = w.iter().map(|&s| remap[s as usize]).collect();
            *words.entry(w).or_default() += n;
        }
    }
    out.set_words(words);
    out
}

/// Fewer distinct pieces than this are collected on one thread. (Low enough that the tests'
/// corpora of a few thousand pieces take the threaded path.)
const PARALLEL_PIECES: usize = 2_048;

/// What one range of pieces holds: everything but the sorted word types, and the word types.
type Part = (WordCounts, FxHashMap<Box<[u32]>, u64>);

fn collect_part(
    pieces: &[(&[u8], u64)],
    splitter: &WordSplitter,
    scope: Scope,
    guard: Option<&AhoCorasick>,
) -> Part {
    let mut out = WordCounts::default();
    let mut words: FxHashMap<Box<[u32]>, u64> = FxHashMap::default();
    let mut units: Vec<u32> = Vec::new();
    let mut parts = Parts::default();
    let mut ids: Vec<u32> = Vec::new();
    for &(piece, count) in pieces {
        units.clear();
        if decode_wtf8_into(piece, &mut units).is_err() {
            continue; // not produced by the counters (they write valid WTF-8)
        }
        parts.clear();
        splitter.split(&units, &mut parts);
        let token = |t: usize| {
            let start = if t == 0 { 0 } else { parts.ends[t - 1] };
            &units[start..parts.ends[t]]
        };
        // Every token's string id, and the per-token facts.
        ids.clear();
        let mut first = 0;
        for &(last, is_word) in &parts.parts {
            for t in first..last {
                let id = out.strings.id(token(t));
                ids.push(id);
                if is_word {
                    *out.syllable_freq.entry(id).or_default() += count;
                } else {
                    *out.boundary_symbols.entry(id).or_default() += count;
                }
            }
            first = last;
        }
        let grouping = match guard {
            Some(ac) if ac.is_match(piece) => Scope::Words,
            _ => scope,
        };
        if grouping == Scope::Pieces && parts.parts.len() > 1 {
            let mut first = 0;
            for &(last, is_word) in &parts.parts {
                if is_word {
                    *out.cores.entry(ids[first..last].into()).or_default() += count;
                }
                first = last;
            }
        }
        for_each_span(&parts, &units, &ids, grouping, |span, mergeable| {
            if mergeable {
                *words.entry(span.into()).or_default() += count;
            } else {
                *out.boundary.entry(span[0]).or_default() += count;
            }
        });
    }
    (out, words)
}

/// The spans of one piece under `scope` (`wwho.sgpe.scopes.group_spans`): `f(span, mergeable)`
/// for each, `span` a range of `ids` (one id per token of `parts`; `units` the piece's text).
pub fn for_each_span(
    parts: &Parts,
    units: &[u32],
    ids: &[u32],
    scope: Scope,
    mut f: impl FnMut(&[u32], bool),
) {
    match scope {
        Scope::Words => {
            let mut first = 0;
            for &(last, is_word) in &parts.parts {
                f(&ids[first..last], is_word);
                first = last;
            }
        }
        Scope::Pieces => {
            if !ids.is_empty() {
                f(ids, ids.len() > 1 || parts.parts[0].1);
            }
        }
        Scope::Runs => {
            // A boundary token is one token, so a run of them is a range of `ids`.
            let mut run: Option<usize> = None;
            let mut first = 0;
            for &(last, is_word) in &parts.parts {
                let ws = !is_word && {
                    let start = if first == 0 { 0 } else { parts.ends[first - 1] };
                    parts.ends[first] == start + 1 && crate::charset::is_ws(units[start])
                };
                if is_word || ws {
                    if let Some(r) = run.take() {
                        f(&ids[r..first], first - r > 1);
                    }
                    f(&ids[first..last], is_word);
                } else if run.is_none() {
                    run = Some(first);
                }
                first = last;
            }
            if let Some(r) = run {
                f(&ids[r..first], first - r > 1);
            }
        }
    }
}

/// The merge engine's input for one pruning threshold.
#[derive(Debug)]
pub struct EngineInput {
    /// Symbol strings (string ids): boundary tokens sorted, then syllables by frequency.
    pub symbols: Vec<u32>,
    /// Word types as symbol ids ([`UNK`] for a pruned syllable), in Python's tuple order, one
    /// after the other: word `i` has `lengths[i]` symbols.
    pub data: Vec<u32>,
    pub lengths: Vec<usize>,
    pub counts: Vec<u64>,
    /// How many syllables were kept.
    pub syllables: usize,
    /// String id -> symbol id, [`UNK`] for none (for the superword stage).
    pub symbol_ids: Vec<u32>,
}

fn hash_word(word: &[u32]) -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    word.hash(&mut h);
    h.finish() as usize
}

impl WordCounts {
    /// Keep `words` in Python's order of tuples of strings (element by element, each string
    /// by code point): the engine inputs of every pruning threshold then share one sort.
    fn set_words(&mut self, words: FxHashMap<Box<[u32]>, u64>) {
        // Rank the strings once, then compare words as sequences of ranks.
        let mut by_string: Vec<u32> = (0..self.strings.len() as u32).collect();
        by_string.sort_unstable_by(|&a, &b| self.cmp_strings(a, b));
        let mut rank = vec![0u32; by_string.len()];
        for (r, &s) in by_string.iter().enumerate() {
            rank[s as usize] = r as u32;
        }
        let mut sorted: Vec<(Box<[u32]>, u64)> = words.into_iter().collect();
        // On all cores: most of this stage's time on a large corpus (a quarter of a million
        // word types) is this sort. In a pool of this process's own (`batch::pool`), never
        // rayon's global one, whose threads a child made by `fork` does not have.
        // Where the system refuses the threads, this thread sorts alone.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let by_rank = |(a, _): &(Box<[u32]>, u64), (b, _): &(Box<[u32]>, u64)| {
            a.iter()
                .map(|&s| rank[s as usize])
                .cmp(b.iter().map(|&s| rank[s as usize]))
        };
        match crate::batch::pool(cores) {
            Some(pool) => pool.install(|| sorted.par_sort_unstable_by(by_rank)),
            None => sorted.sort_unstable_by(by_rank),
        }
        self.words = sorted;
        let size = (self.words.len() * 2).next_power_of_two().max(16);
        let mut slots = vec![0u32; size];
        for (i, (w, _)) in self.words.iter().enumerate() {
            let mut at = hash_word(w) & (size - 1);
            while slots[at] != 0 {
                at = (at + 1) & (size - 1);
            }
            slots[at] = i as u32 + 1;
        }
        self.slots = slots;
    }

    /// The index of word type `word` (string ids) in [`Self::words`] and every engine input.
    pub fn position(&self, word: &[u32]) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut at = hash_word(word) & mask;
        loop {
            match self.slots[at] {
                0 => return None,
                i if *self.words[i as usize - 1].0 == *word => return Some(i - 1),
                _ => at = (at + 1) & mask,
            }
        }
    }

    /// The word endings: every span of three or more units contributes each of its suffixes that
    /// starts after its first unit and holds two to [`MAX_ENDING`] units (`a b c d`: `b c d`,
    /// `c d`), with the span's count. The cap keeps this linear in the text: all the suffixes of a
    /// long run of letters with no space would be quadratic in its length, and no word of any
    /// language has endings that long.
    pub fn endings(&self) -> FxHashMap<Box<[u32]>, u64> {
        let mut counts: FxHashMap<Box<[u32]>, u64> = FxHashMap::default();
        for (word, n) in &self.words {
            let first = word.len().saturating_sub(MAX_ENDING).max(1);
            for start in first..word.len().saturating_sub(1) {
                *counts.entry(word[start..].into()).or_default() += n;
            }
        }
        counts
    }

    /// Order two strings by id as Python orders `str`.
    fn cmp_strings(&self, a: u32, b: u32) -> Ordering {
        self.strings.get(a).cmp(self.strings.get(b))
    }

    pub fn engine_input(&self, prune_freq: u64) -> EngineInput {
        let storable = |s: u32| may_be_symbol(self.strings.get(s));
        let mut boundary: Vec<u32> = self
            .boundary_symbols
            .keys()
            .copied()
            .filter(|&s| storable(s))
            .collect();
        boundary.sort_unstable_by(|&a, &b| self.cmp_strings(a, b));
        let mut syllables: Vec<(u32, u64)> = self
            .syllable_freq
            .iter()
            // A string that is a boundary token in one place and a syllable in another (a stray
            // combining mark, after a space and after a letter of a script) is one symbol.
            .filter(|(&s, &f)| {
                f >= prune_freq && storable(s) && !self.boundary_symbols.contains_key(&s)
            })
            .map(|(&s, &f)| (s, f))
            .collect();
        syllables.sort_unstable_by(|&(a, fa), &(b, fb)| {
            fb.cmp(&fa).then_with(|| self.cmp_strings(a, b))
        });
        let kept = syllables.len();
        let symbols: Vec<u32> = boundary
            .into_iter()
            .chain(syllables.into_iter().map(|(s, _)| s))
            .collect();
        // By string id (dense): a load per symbol of the words, not a hash lookup.
        let mut index = vec![UNK; self.strings.len()];
        for (i, &s) in symbols.iter().enumerate() {
            if index[s as usize] == UNK {
                index[s as usize] = i as u32;
            }
        }
        let mut data = Vec::with_capacity(self.words.iter().map(|(w, _)| w.len()).sum());
        let mut lengths = Vec::with_capacity(self.words.len());
        let mut counts = Vec::with_capacity(self.words.len());
        for (w, c) in &self.words {
            data.extend(
                w.iter()
                    .map(|&s| index.get(s as usize).copied().unwrap_or(UNK)),
            );
            lengths.push(w.len());
            counts.push(*c);
        }
        EngineInput {
            symbols,
            data,
            lengths,
            counts,
            syllables: kept,
            symbol_ids: index,
        }
    }
}

/// Merges that rebuild each token from its code points, and every piece they need (each
/// character of the tokens and each merge result, sorted by length then string).
///
/// Tokens go shortest first, those without a leading space before those with one; each is
/// merged with the merges found so far, and while it does not come out whole a merge of its
/// first two pieces is appended (a later merge ranks after every earlier one, so tokens
/// already built are unaffected). The result is checked.
///
/// Why the leading space goes last: no token of the first group holds a space (a space only
/// starts a token), so its merges never touch one, and every merge of the second group joins
/// the piece that starts with the space to the piece after it. Run on ` X`, the merges first
/// rebuild `X` exactly as they rebuild it alone, and only then join the space to it, piece by
/// piece. So where ` X` is not a token but `X` is, a BPE from code points (the encoder's
/// fallback for an unknown syllable, and the Hugging Face export) gives the space and `X`,
/// never a cut inside `X` (issue 29: ` ශ්‍රී` had become ` ශ්‍` and `රී`, a mixed order having
/// joined the space to the first characters before `ශ්‍රී` was built).
pub type BuildingMerges = (Vec<(Vec<u32>, Vec<u32>)>, Vec<Vec<u32>>);

pub fn building_merges(tokens: &[Vec<u32>]) -> Result<BuildingMerges, VocabError> {
    let mut todo: Vec<&[u32]> = tokens
        .iter()
        .map(|t| &t[..])
        .filter(|t| !t.is_empty())
        .collect();
    let spaced = |t: &[u32]| t[0] == 0x20;
    todo.sort_unstable_by(|a, b| {
        (spaced(a), a.len())
            .cmp(&(spaced(b), b.len()))
            .then_with(|| a.cmp(b))
    });
    todo.dedup();
    let mut pieces = Interner::default();
    let mut table = PairTable::new();
    let mut merges: Vec<(u32, u32)> = Vec::new();
    let mut parts: Vec<u32> = Vec::new();
    let run = |token: &[u32], pieces: &mut Interner, table: &PairTable, parts: &mut Vec<u32>| {
        parts.clear();
        parts.extend(token.iter().map(|&c| pieces.id(&[c])));
        merge(parts, table);
    };
    for &token in &todo {
        run(token, &mut pieces, &table, &mut parts);
        while parts.len() > 1 {
            let (a, b) = (parts[0], parts[1]);
            let mut joined = pieces.get(a).to_vec();
            joined.extend_from_slice(pieces.get(b));
            let c = pieces.id(&joined);
            table.insert(
                a,
                b,
                Merge {
                    rank: merges.len() as u32,
                    id: c,
                },
            );
            merges.push((a, b));
            run(token, &mut pieces, &table, &mut parts);
        }
    }
    for &token in &todo {
        run(token, &mut pieces, &table, &mut parts);
        if parts.len() != 1 || pieces.get(parts[0]) != token {
            return Err(VocabError::NotRebuilt(token.to_vec()));
        }
    }
    let mut all: Vec<Vec<u32>> = pieces.strings.iter().map(|s| s.to_vec()).collect();
    all.sort_unstable_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    let merges = merges
        .into_iter()
        .map(|(a, b)| (pieces.get(a).to_vec(), pieces.get(b).to_vec()))
        .collect();
    Ok((merges, all))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Vec<u32> {
        text.chars().map(u32::from).collect()
    }

    #[test]
    fn endings_are_every_suffix_after_the_first_unit_up_to_the_cap() {
        let mut counts = WordCounts::default();
        let short: Box<[u32]> = vec![1, 2, 3, 4].into();
        let long: Box<[u32]> = (0..10_000).collect();
        counts.words = vec![(short, 5), (long.clone(), 2), (vec![7, 8].into(), 9)];
        let endings = counts.endings();
        assert_eq!(endings[&[2u32, 3, 4][..]], 5);
        assert_eq!(endings[&[3u32, 4][..]], 5);
        assert!(!endings.contains_key(&[1u32, 2, 3, 4][..]) && !endings.contains_key(&[4u32][..]));
        // a run of ten thousand units: its last MAX_ENDING - 1 endings only, of 2 to MAX_ENDING units
        let of_long: Vec<_> = endings.keys().filter(|e| e.first() >= Some(&100)).collect();
        assert_eq!(of_long.len(), MAX_ENDING - 1);
        assert!(of_long
            .iter()
            .all(|e| (2..=MAX_ENDING).contains(&e.len()) && e.ends_with(&long[9_998..])));
        assert_eq!(endings.len(), 2 + MAX_ENDING - 1); // nothing of the two-unit word
    }

    #[test]
    fn building_merges_rebuild_every_token() {
        let tokens = vec![s("abc"), s("ab"), s("bcd"), s("x"), s("abc")];
        let (merges, pieces) = building_merges(&tokens).unwrap();
        assert_eq!(
            merges,
            vec![
                (s("a"), s("b")),
                (s("ab"), s("c")),
                (s("b"), s("c")),
                (s("bc"), s("d"))
            ]
        );
        let shown: Vec<String> = pieces
            .iter()
            .map(|p| p.iter().map(|&c| char::from_u32(c).unwrap()).collect())
            .collect();
        assert_eq!(shown, ["a", "b", "c", "d", "x", "ab", "bc", "abc", "bcd"]);
    }

    #[test]
    fn a_leading_space_is_joined_after_the_rest_is_built() {
        // " a" sorts before "ab" by length and string; built first, its merge (" ", "a") would
        // fire first on " ab" too and cut "ab" (issue 29). Bare tokens go first.
        let tokens = vec![s(" a"), s("ab"), s(" bcd"), s("bc")];
        let (merges, _) = building_merges(&tokens).unwrap();
        assert_eq!(
            merges,
            vec![
                (s("a"), s("b")),
                (s("b"), s("c")),
                (s(" "), s("a")),
                (s(" "), s("bc")),
                (s(" bc"), s("d")),
            ]
        );
        // " ab" (not a token) from code points: the space, then "ab" whole.
        let mut interner = Interner::default();
        let mut table = PairTable::new();
        for (rank, (a, b)) in merges.iter().enumerate() {
            let joined: Vec<u32> = a.iter().chain(b).copied().collect();
            let (a, b, c) = (interner.id(a), interner.id(b), interner.id(&joined));
            let merge = Merge {
                rank: rank as u32,
                id: c,
            };
            table.insert(a, b, merge);
        }
        let mut parts: Vec<u32> = s(" ab").iter().map(|&c| interner.id(&[c])).collect();
        merge(&mut parts, &table);
        let got: Vec<&[u32]> = parts.iter().map(|&p| interner.get(p)).collect();
        assert_eq!(got, [&s(" ")[..], &s("ab")[..]]);
    }
}
