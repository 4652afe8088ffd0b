//! The BPE merge engine shared by SGPE (units = syllables) and byte-level BPE (units = bytes).
//!
//! Exactly `wwho.bpe.engine.MergeEngine` (kept as `tests/reference/engine.py`, and checked
//! against a naive trainer that recounts everything after each merge): word types as symbol-id
//! sequences with 64-bit counts; the most frequent adjacent pair merges first (`freq >= min_freq`),
//! ties to the pair whose `(symbols[left], symbols[right])` is lexicographically smallest
//! (`"smaller"`, SGPE) or greatest (`"greater"`, GPT-2); a merged string already in the table
//! reuses its id. Each merge touches only the words holding the pair:
//!
//! * `pairs`: pair -> frequency and the words that contain (or once contained) it, counted
//!   once, then updated incrementally around each merge. The words sit in one flat buffer
//!   (`holders`, a range per pair: no allocation per pair, which on sentence-long superword
//!   spans means millions of pairs); a pair that gains words has its range moved to the end
//!   of the buffer (unless it is there already) and extended;
//! * a lazy queue of the pairs with `freq >= floor`: one bucket per frequency, sorted by the
//!   tie-break only when it reaches the front, so the many rare pairs are never ordered. An entry
//!   is checked against the true count when it comes up; a pair that shrank is filed again.
//!
//! Symbols are sequences of units (code points for text, byte values for bytes), compared as
//! Python compares `str` and `bytes`. [`UNK`] marks a pruned unit: it never pairs. This module
//! does not read corpora, prune, or assign final ids.
//!
//! The pair index and its first count live in `pairs`, the queue in `queue`, one merge's
//! update of the words and the pair counts in `update`; this module holds the engine's state,
//! the checks of its input and the steps callers take (train, replay, apply).

use rustc_hash::FxHashMap;
use std::cmp::Ordering;

mod pairs;
mod queue;
#[cfg(test)]
mod tests;
mod update;

use pairs::PairMap;
use queue::Queue;

/// A pruned unit: kept in its word, never part of a pair.
pub const UNK: u32 = u32::MAX;

#[inline]
fn key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

#[inline]
fn unkey(k: u64) -> (u32, u32) {
    ((k >> 32) as u32, k as u32)
}

/// The tie-break order of two pair keys: `(symbols[left], symbols[right])`, ascending for
/// "smaller", descending for "greater" (the best pair sorts first either way).
fn order(symbols: &[Vec<u32>], greater: bool) -> impl Fn(u64, u64) -> Ordering + '_ {
    move |x: u64, y: u64| {
        let ((a1, b1), (a2, b2)) = (unkey(x), unkey(y));
        let o = symbols[a1 as usize]
            .cmp(&symbols[a2 as usize])
            .then_with(|| symbols[b1 as usize].cmp(&symbols[b2 as usize]));
        if greater {
            o.reverse()
        } else {
            o
        }
    }
}

/// Why [`Engine::new`] or [`Engine::replay`] refused its input.
#[derive(Debug, PartialEq, Eq)]
pub enum EngineError {
    /// Symbols `first` and `second` are equal.
    Duplicate(usize, usize),
    /// Symbol `i` is empty.
    Empty(usize),
    /// Word `i` holds id `id`, neither UNK nor a symbol.
    BadId(usize, u32),
    /// Word `i` has count 0.
    ZeroCount(usize),
    /// Some pair frequency could exceed 62 bits.
    Overflow,
    /// Merge number `step` (1-based) names an id out of range.
    ReplayId(usize),
    /// Merge number `step` (1-based) is a pair that does not occur at that point.
    ReplayAbsent(usize),
    /// More word types than the superword stage numbers (`crate::superwords`).
    TooManyWords,
}

/// The messages without the symbols' text, which only the caller can show (`py::engine` names
/// them as Python shows them).
impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            EngineError::Duplicate(a, b) => {
                write!(f, "symbols {a} and {b} are equal: symbols must be distinct")
            }
            EngineError::Empty(i) => write!(f, "symbol {i} is empty"),
            EngineError::BadId(i, id) => {
                write!(f, "word {i}: symbol id {id} is neither UNK nor a symbol")
            }
            EngineError::ZeroCount(i) => write!(f, "word {i}: count must be positive, not 0"),
            EngineError::Overflow => {
                f.write_str("counts too large: pair frequencies must fit in 62 bits")
            }
            EngineError::ReplayId(step) => write!(f, "merge {step} names an id out of range"),
            EngineError::ReplayAbsent(step) => {
                write!(
                    f,
                    "merge {step} is a pair that does not occur at that point"
                )
            }
            EngineError::TooManyWords => f.write_str("too many word types for the superword stage"),
        }
    }
}

impl std::error::Error for EngineError {}

pub struct Engine {
    symbols: Vec<Vec<u32>>,
    ids: FxHashMap<Vec<u32>, u32>,
    greater: bool,
    merges: Vec<(u32, u32)>,
    /// Every word's symbols, one after the other (a merge shortens a word in place);
    /// `spans[i]` is word `i`'s `(start, len)` in `data`. Flat, so that the words of a merge,
    /// visited in index order, are near one another in memory.
    data: Vec<u32>,
    spans: Vec<(u32, u32)>,
    counts: Vec<u64>,
    pairs: PairMap,
    /// The words of every pair, pair after pair (see [`PairEntry`]); ranges of pairs that
    /// were merged, vanished or moved are left behind until [`Engine::compact_holders`].
    holders: Vec<u32>,
    queue: Queue,
    /// The queue holds every pair with `freq >= floor`; `None`: no queue is kept (replay).
    floor: Option<u64>,
    /// Pairs rarer than this were left out of `pairs` ([`Engine::from_flat_forgetting`]); 0: none.
    forgotten_below: u64,
    /// Scratch of [`Engine::merge`]: (neighbour, word) per occurrence.
    lefts: Vec<(u32, u32)>,
    rights: Vec<(u32, u32)>,
    /// Scratch of [`Engine::merge`]: the words holding the pair being merged.
    visit: Vec<u32>,
    /// Per word: the number of the last merge that visited it.
    seen: Vec<u32>,
}

/// What one merge did: `(left, right, merged id, frequency)`.
pub type Step = (u32, u32, u32, u64);

impl Engine {
    /// `words[i]` (symbol ids or [`UNK`]) occurs `counts[i]` times; `symbols[i]` are the units
    /// of symbol `i`; `greater` selects the tie-break.
    pub fn new(
        words: Vec<Vec<u32>>,
        counts: Vec<u64>,
        symbols: Vec<Vec<u32>>,
        greater: bool,
    ) -> Result<Self, EngineError> {
        let lengths: Vec<usize> = words.iter().map(Vec::len).collect();
        let data: Vec<u32> = words.into_iter().flatten().collect();
        Self::from_flat(data, &lengths, counts, symbols, greater)
    }

    /// [`Engine::new`] with the words one after the other in `data`, word `i` of length
    /// `lengths[i]` (no allocation per word).
    pub fn from_flat(
        data: Vec<u32>,
        lengths: &[usize],
        counts: Vec<u64>,
        symbols: Vec<Vec<u32>>,
        greater: bool,
    ) -> Result<Self, EngineError> {
        Self::from_flat_forgetting(data, lengths, counts, symbols, greater, 0)
    }

    /// [`Engine::from_flat`] for an engine that will only ever merge pairs of `freq >= floor`
    /// (the superword stage's, whose many pairs seen once can never merge): the rarer pairs are
    /// left out of the pair index, which shrinks to the pairs that can be merged, so that each
    /// merge's lookups stay in cache. Exact: a pair of existing symbols only loses occurrences
    /// as merges go on, so one that was rarer than `floor` stays so, unless a merge reuses an
    /// existing id (its pairs may then gain occurrences) or a merge below `floor` is asked for.
    /// Then every pair is counted again from the words first ([`Engine::recount_pairs`]), once.
    /// A `floor` below 2 forgets nothing.
    pub fn from_flat_forgetting(
        data: Vec<u32>,
        lengths: &[usize],
        counts: Vec<u64>,
        symbols: Vec<Vec<u32>>,
        greater: bool,
        floor: u64,
    ) -> Result<Self, EngineError> {
        let mut ids = FxHashMap::default();
        for (i, s) in symbols.iter().enumerate() {
            if s.is_empty() {
                return Err(EngineError::Empty(i));
            }
            if let Some(&first) = ids.get(s) {
                return Err(EngineError::Duplicate(first as usize, i));
            }
            ids.insert(s.clone(), i as u32);
        }
        if data.len() >= u32::MAX as usize || lengths.iter().sum::<usize>() != data.len() {
            return Err(EngineError::Overflow);
        }
        let n = symbols.len() as u32;
        let mut spans = Vec::with_capacity(lengths.len());
        let mut longest = 0;
        let mut total: u128 = 0;
        let mut start = 0usize;
        for (i, (&len, &c)) in lengths.iter().zip(&counts).enumerate() {
            let w = &data[start..start + len];
            if let Some(&bad) = w.iter().find(|&&x| x != UNK && x >= n) {
                return Err(EngineError::BadId(i, bad));
            }
            if c == 0 {
                return Err(EngineError::ZeroCount(i));
            }
            longest = longest.max(len);
            total += u128::from(c);
            spans.push((start as u32, len as u32));
            start += len;
        }
        if total * longest as u128 >= 1 << 62 {
            return Err(EngineError::Overflow);
        }
        let mut engine = Self {
            symbols,
            ids,
            greater,
            merges: Vec::new(),
            data,
            spans,
            counts,
            pairs: PairMap::default(),
            holders: Vec::new(),
            queue: Queue::default(),
            floor: None,
            forgotten_below: 0,
            lefts: Vec::new(),
            rights: Vec::new(),
            visit: Vec::new(),
            seen: Vec::new(),
        };
        engine.seen = vec![u32::MAX; engine.spans.len()];
        engine.forgotten_below = if floor < 2 { 0 } else { floor };
        engine.count_pairs();
        Ok(engine)
    }

    pub fn symbols(&self) -> &[Vec<u32>] {
        &self.symbols
    }

    pub fn merges(&self) -> &[(u32, u32)] {
        &self.merges
    }

    /// Word `i`'s current symbols.
    #[inline]
    pub fn word(&self, i: usize) -> &[u32] {
        let (start, len) = self.spans[i];
        &self.data[start as usize..(start + len) as usize]
    }

    /// How many word types.
    pub fn num_words(&self) -> usize {
        self.spans.len()
    }

    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The current frequency of every pair present.
    pub fn pair_counts(&mut self) -> Vec<(u32, u32, u64)> {
        self.recount_pairs();
        let mut out: Vec<_> = self
            .pairs
            .iter()
            .map(|(&k, e)| (unkey(k).0, unkey(k).1, e.freq))
            .collect();
        out.sort_unstable();
        out
    }

    /// Drop the words, their counts and the pair index (the symbols and merges stay): the
    /// engine then holds no words, so it learns nothing more.
    pub fn release_words(&mut self) {
        self.data = Vec::new();
        self.spans = Vec::new();
        self.counts = Vec::new();
        self.pairs = PairMap::default();
        self.holders = Vec::new();
        self.queue = Queue::default();
        self.floor = None;
        self.lefts = Vec::new();
        self.rights = Vec::new();
        self.visit = Vec::new();
        self.seen = Vec::new();
    }

    /// Corpus frequency of every symbol (sum over words of count times occurrences).
    pub fn symbol_frequencies(&self) -> Vec<u64> {
        let mut freqs = vec![0u64; self.symbols.len()];
        for (wi, &c) in self.counts.iter().enumerate() {
            for &s in self.word(wi) {
                if s != UNK {
                    freqs[s as usize] += c;
                }
            }
        }
        freqs
    }

    /// Bytes held by the engine (an estimate of its heap).
    pub fn heap_bytes(&self) -> usize {
        let words = self.data.capacity() * 4 + self.spans.capacity() * 8;
        let pairs = self.pairs.capacity() * 25 + self.holders.capacity() * 4;
        let symbols: usize = self.symbols.iter().map(|s| s.capacity() * 8 + 56).sum();
        words + pairs + symbols + self.counts.capacity() * 8
    }

    fn new_symbol(&mut self, a: u32, b: u32) -> u32 {
        let mut s = self.symbols[a as usize].clone();
        s.extend_from_slice(&self.symbols[b as usize]);
        if let Some(&c) = self.ids.get(&s) {
            return c;
        }
        let c = self.symbols.len() as u32;
        self.ids.insert(s.clone(), c);
        self.symbols.push(s);
        c
    }

    /// Merge the best pair: `Some((left, right, new id, freq))`, or `None` (nothing changes) when
    /// no pair is left or the best one has `freq < min_freq`.
    pub fn step(&mut self, min_freq: i64) -> Option<Step> {
        if i128::from(min_freq) < i128::from(self.forgotten_below) {
            self.recount_pairs(); // forgotten pairs may be merged now
        }
        self.prepare_queue(min_freq);
        let (k, freq) = self.best()?;
        if (freq as i128) < i128::from(min_freq) {
            return None; // an entry filed under a lower floor may be below it
        }
        self.queue.pop();
        let (a, b) = unkey(k);
        let known = self.symbols.len();
        let c = self.new_symbol(a, b);
        if (c as usize) < known {
            self.recount_pairs(); // a reused id: its forgotten pairs may come back
        }
        self.merges.push((a, b));
        self.merge(a, b, c);
        Some((a, b, c, freq))
    }

    /// Merge until the table holds `max_symbols` symbols or no pair reaches `min_freq`; a merge
    /// that reuses a symbol costs no budget. `after(step)` runs after each merge and may stop
    /// the run by returning `false`.
    pub fn train(
        &mut self,
        max_symbols: usize,
        min_freq: i64,
        mut after: impl FnMut(&Self, Step) -> bool,
    ) {
        while self.symbols.len() < max_symbols {
            let Some(step) = self.step(min_freq) else {
                break;
            };
            if !after(self, step) {
                break;
            }
        }
    }

    /// Apply known merges in order (resume); the state then equals that after training them.
    pub fn replay(&mut self, merges: &[(u32, u32)]) -> Result<(), EngineError> {
        for &(a, b) in merges {
            self.replay_one(a, b)?;
        }
        Ok(())
    }

    /// Apply merges learned elsewhere, in order, wherever their pair occurs: these words then
    /// read as encoding them with those merges would cut them. A merge whose pair does not occur
    /// at its turn is left out; the ones applied are recorded as merges. Returns, per merge, the
    /// id it made (or reused), `None` where it was left out.
    pub fn apply(&mut self, merges: &[(u32, u32)]) -> Result<Vec<Option<u32>>, EngineError> {
        self.stop_queue();
        merges
            .iter()
            .enumerate()
            .map(|(k, &(a, b))| self.merge_known(a, b, k + 1))
            .collect()
    }

    /// Apply one known merge; returns the id it made (or reused).
    pub fn replay_one(&mut self, a: u32, b: u32) -> Result<u32, EngineError> {
        self.stop_queue();
        let step = self.merges.len() + 1;
        self.merge_known(a, b, step)?
            .ok_or(EngineError::ReplayAbsent(step))
    }

    /// Merges from outside the queue (replay, apply): every pair counted, no queue kept; the
    /// next step rebuilds it.
    fn stop_queue(&mut self) {
        self.recount_pairs();
        self.floor = None;
        self.queue = Queue::default();
    }

    /// Merge `a b` where it occurs and record it: the id made (or reused), or `None` where the
    /// pair does not occur. `step` names the merge in an error.
    fn merge_known(&mut self, a: u32, b: u32, step: usize) -> Result<Option<u32>, EngineError> {
        let n = self.symbols.len() as u32;
        if a >= n || b >= n {
            return Err(EngineError::ReplayId(step));
        }
        if !self.pairs.contains_key(&key(a, b)) {
            return Ok(None);
        }
        let c = self.new_symbol(a, b);
        self.merges.push((a, b));
        self.merge(a, b, c);
        Ok(Some(c))
    }
}
