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

use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

/// A pair's frequency and the words holding it (an index may repeat or be stale): the range
/// `start..start + len` of [`Engine::holders`].
#[derive(Clone, Copy, Debug, Default)]
struct PairEntry {
    freq: u64,
    start: u32,
    len: u32,
}

/// Pair key -> [`PairEntry`], in [`SHARDS`] maps chosen by a hash of the key: the first count
/// fills the shards on all threads (each thread its own shards), and a shard that fills up
/// doubles alone (a single table of millions of pairs would hold its old and new copies at
/// once, tens of megabytes, in the middle of training).
#[derive(Debug)]
struct PairMap {
    shards: Vec<FxHashMap<u64, PairEntry>>,
}

const SHARDS: usize = 8;

/// Engines with fewer symbols than this in their words count their pairs on one thread.
const PARALLEL_FROM: usize = 1 << 18;

#[inline]
fn shard_of(k: u64) -> usize {
    (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) as usize
}

/// Sort `items` by their key's low `bits` bits, stably (least significant digit first, 11
/// bits a pass); `scratch` is working space.
fn radix_sort(items: &mut Vec<(u64, u32)>, scratch: &mut Vec<(u64, u32)>, bits: u32) {
    const DIGIT: u32 = 11;
    let mut shift = 0;
    while shift < bits {
        let mut at = vec![0usize; 1 << DIGIT];
        for &(k, _) in items.iter() {
            at[((k >> shift) & ((1 << DIGIT) - 1)) as usize] += 1;
        }
        let mut sum = 0;
        for slot in &mut at {
            (*slot, sum) = (sum, sum + *slot);
        }
        scratch.clear();
        scratch.resize(items.len(), (0, 0));
        for &item in items.iter() {
            let d = ((item.0 >> shift) & ((1 << DIGIT) - 1)) as usize;
            scratch[at[d]] = item;
            at[d] += 1;
        }
        std::mem::swap(items, scratch);
        shift += DIGIT;
    }
}

impl Default for PairMap {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| FxHashMap::default()).collect(),
        }
    }
}

impl PairMap {
    #[inline]
    fn get(&self, k: &u64) -> Option<&PairEntry> {
        self.shards[shard_of(*k)].get(k)
    }

    #[inline]
    fn get_mut(&mut self, k: &u64) -> Option<&mut PairEntry> {
        self.shards[shard_of(*k)].get_mut(k)
    }

    #[inline]
    fn remove(&mut self, k: &u64) -> Option<PairEntry> {
        self.shards[shard_of(*k)].remove(k)
    }

    #[inline]
    fn contains_key(&self, k: &u64) -> bool {
        self.shards[shard_of(*k)].contains_key(k)
    }

    #[inline]
    fn entry(&mut self, k: u64) -> std::collections::hash_map::Entry<'_, u64, PairEntry> {
        self.shards[shard_of(k)].entry(k)
    }

    fn iter(&self) -> impl Iterator<Item = (&u64, &PairEntry)> + '_ {
        self.shards.iter().flat_map(|m| m.iter())
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut PairEntry> + '_ {
        self.shards.iter_mut().flat_map(|m| m.values_mut())
    }

    fn capacity(&self) -> usize {
        self.shards.iter().map(|m| m.capacity()).sum()
    }
}

/// Pair keys by frequency, highest first, then by the tie-break (see the module docs).
#[derive(Debug, Default)]
struct Queue {
    buckets: FxHashMap<u64, Vec<u64>>,
    freqs: BinaryHeap<u64>,
    front: Vec<u64>,
    front_freq: u64,
    pos: usize,
}

impl Queue {
    fn push(&mut self, freq: u64, pair: u64, order: &impl Fn(u64, u64) -> Ordering) {
        if freq == self.front_freq {
            let at = self.pos
                + self.front[self.pos..].partition_point(|&e| order(e, pair) == Ordering::Less);
            self.front.insert(at, pair);
            return;
        }
        if freq > self.front_freq && self.front_freq != 0 {
            // Only a reused id can push above the front: put the front back among the buckets.
            let rest = self.front.split_off(self.pos);
            self.buckets.insert(self.front_freq, rest);
            self.freqs.push(self.front_freq);
            self.front.clear();
            self.front_freq = 0;
            self.pos = 0;
        }
        match self.buckets.get_mut(&freq) {
            Some(bucket) => bucket.push(pair),
            None => {
                self.buckets.insert(freq, vec![pair]);
                self.freqs.push(freq);
            }
        }
    }

    fn peek(&mut self, order: &impl Fn(u64, u64) -> Ordering) -> Option<(u64, u64)> {
        if self.front_freq == 0 {
            let freq = self.freqs.pop()?;
            let mut front = self.buckets.remove(&freq).unwrap_or_default();
            front.sort_unstable_by(|&x, &y| order(x, y));
            self.front = front;
            self.front_freq = freq;
            self.pos = 0;
            if self.front.is_empty() {
                self.front_freq = 0;
                return self.peek(order);
            }
        }
        Some((self.front_freq, self.front[self.pos]))
    }

    fn pop(&mut self) {
        self.pos += 1;
        if self.pos == self.front.len() {
            self.front.clear();
            self.front_freq = 0;
            self.pos = 0;
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

    fn count_pairs(&mut self) {
        // Shard by shard (each thread takes every `threads`-th), with no hash lookup per
        // occurrence: the shard's occurrences (pair, word) are listed in word order, sorted by
        // pair with a stable radix sort (so each pair's words stay in word order), and each
        // run of one pair becomes its entry and its range of holders. A hash map per
        // occurrence was a cache miss each: millions of them on the superword engine.
        let keep = self.forgotten_below.max(1);
        let threads = if self.data.len() < PARALLEL_FROM {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(SHARDS))
        };
        // Pairs sort as `left << bits | right`, `bits` enough for any symbol id.
        let bits = (u64::BITS - (self.symbols.len() as u64).leading_zeros()).min(32);
        let (data, spans, counts) = (&self.data[..], &self.spans[..], &self.counts[..]);
        let shard = |s: usize, occurrences: &mut Vec<(u64, u32)>, scratch: &mut Vec<(u64, u32)>| {
            occurrences.clear();
            for (wi, &(start, len)) in spans.iter().enumerate() {
                for p in data[start as usize..(start + len) as usize].windows(2) {
                    if p[0] != UNK && p[1] != UNK && shard_of(key(p[0], p[1])) == s {
                        occurrences.push(((u64::from(p[0]) << bits) | u64::from(p[1]), wi as u32));
                    }
                }
            }
            radix_sort(occurrences, scratch, 2 * bits);
            let mut map: FxHashMap<u64, PairEntry> = FxHashMap::default();
            let mut holders: Vec<u32> = Vec::new();
            for run in occurrences.chunk_by(|x, y| x.0 == y.0) {
                let freq: u64 = run.iter().map(|&(_, wi)| counts[wi as usize]).sum();
                if freq < keep {
                    continue;
                }
                let (left, right) = (run[0].0 >> bits, run[0].0 & ((1 << bits) - 1));
                let entry = PairEntry {
                    freq,
                    start: holders.len() as u32,
                    len: run.len() as u32,
                };
                map.insert(key(left as u32, right as u32), entry);
                holders.extend(run.iter().map(|&(_, wi)| wi));
            }
            (map, holders)
        };
        let shard = &shard;
        let mut done: Vec<(usize, FxHashMap<u64, PairEntry>, Vec<u32>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let (mut occurrences, mut scratch) = (Vec::new(), Vec::new());
                        (t..SHARDS)
                            .step_by(threads)
                            .map(|i| {
                                let (map, holders) = shard(i, &mut occurrences, &mut scratch);
                                (i, map, holders)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("no panic counting pairs"))
                .collect()
        });
        // Shard after shard, so each shard's ranges are one slice of the buffer.
        done.sort_unstable_by_key(|&(i, _, _)| i);
        let mut holders = Vec::with_capacity(done.iter().map(|(_, _, h)| h.len()).sum());
        let mut pairs = PairMap::default();
        for (i, mut map, part) in done {
            let base = holders.len() as u32;
            for e in map.values_mut() {
                e.start += base;
            }
            holders.extend_from_slice(&part);
            pairs.shards[i] = map;
        }
        self.pairs = pairs;
        self.holders = holders;
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

    /// Count every pair again from the words (after [`Engine::from_flat_forgetting`]): the
    /// state is then that of an engine that never forgot any.
    fn recount_pairs(&mut self) {
        if self.forgotten_below == 0 {
            return;
        }
        self.forgotten_below = 0;
        self.count_pairs();
        self.floor = None;
        self.queue = Queue::default();
    }

    /// Make the queue hold every pair with `freq >= max(min_freq, 1)`; rebuilt if it holds fewer.
    fn prepare_queue(&mut self, min_freq: i64) {
        let floor = min_freq.max(1) as u64;
        if self.floor.is_none_or(|f| floor < f) {
            let mut buckets: FxHashMap<u64, Vec<u64>> = FxHashMap::default();
            for (&k, e) in self.pairs.iter() {
                if e.freq >= floor {
                    buckets.entry(e.freq).or_default().push(k);
                }
            }
            let freqs = buckets.keys().copied().collect();
            self.queue = Queue {
                buckets,
                freqs,
                ..Queue::default()
            };
        }
        self.floor = Some(floor);
    }

    /// The front valid entry `(pair key, freq)`, left at the front of the queue.
    fn best(&mut self) -> Option<(u64, u64)> {
        let floor = self.floor.unwrap_or(u64::MAX);
        let order = order(&self.symbols, self.greater);
        loop {
            let (stored, k) = self.queue.peek(&order)?;
            let actual = self.pairs.get(&k).map_or(0, |e| e.freq);
            if actual == stored {
                return Some((k, actual));
            }
            self.queue.pop();
            if floor <= actual && actual < stored {
                // Shrunk since it was filed (decreases are not filed eagerly): file it again.
                self.queue.push(actual, k, &order);
            }
            // Else it vanished, fell below the floor, or grew (every increase was filed, so a
            // current entry is further back): drop this one.
        }
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

    /// Replace every `a b` by `c` (left to right, in place) in the words holding it; update the
    /// pair counts around each occurrence and file the pairs that grew.
    fn merge(&mut self, a: u32, b: u32, c: u32) {
        let Some(entry) = self.pairs.remove(&key(a, b)) else {
            return;
        };
        let mut holders = std::mem::take(&mut self.visit);
        holders.clear();
        let first = entry.start as usize;
        holders.extend_from_slice(&self.holders[first..first + entry.len as usize]);
        // Each word once (the list may repeat a word or name one that has lost the pair): a
        // stamp per word marks the ones this merge has seen, with no sorting.
        let stamp = self.merges.len() as u32;
        // (neighbour symbol, word index), one per occurrence; buffers kept between merges.
        let mut lefts = std::mem::take(&mut self.lefts);
        let mut rights = std::mem::take(&mut self.rights);
        lefts.clear();
        rights.clear();
        for &wi in holders.iter() {
            if self.seen[wi as usize] == stamp {
                continue;
            }
            self.seen[wi as usize] = stamp;
            let (start, len) = self.spans[wi as usize];
            let w = &mut self.data[start as usize..(start + len) as usize];
            let len = len as usize;
            let (mut r, mut out) = (0, 0);
            let mut changed = false;
            while r < len {
                if w[r] == a && r + 1 < len && w[r + 1] == b {
                    if out > 0 && w[out - 1] != UNK {
                        lefts.push((w[out - 1], wi));
                    }
                    if r + 2 < len && w[r + 2] != UNK {
                        rights.push((w[r + 2], wi));
                    }
                    w[out] = c;
                    out += 1;
                    r += 2;
                    changed = true;
                } else {
                    w[out] = w[r];
                    out += 1;
                    r += 1;
                }
            }
            if changed {
                self.spans[wi as usize].1 = out as u32;
            }
        }
        // Settle each distinct neighbour: take the old pair down, bring the new pair up, file it.
        // Rights before lefts: in "a b a b" the first occurrence makes (c, a) (right neighbour a)
        // and the second takes it down again (left neighbour c, the first one's merge).
        let same = a == b;
        rights.sort_unstable_by_key(|&(neighbour, _)| neighbour);
        for group in rights.chunk_by(|x, y| x.0 == y.0) {
            let right = group[0].0;
            let n: u64 = group.iter().map(|&(_, wi)| self.counts[wi as usize]).sum();
            if !(same && right == a) {
                self.take_down(key(b, right), n);
            }
            self.bring_up(key(c, right), n, group);
        }
        lefts.sort_unstable_by_key(|&(neighbour, _)| neighbour);
        for group in lefts.chunk_by(|x, y| x.0 == y.0) {
            let left = group[0].0;
            let n: u64 = group.iter().map(|&(_, wi)| self.counts[wi as usize]).sum();
            self.take_down(key(left, a), n);
            self.bring_up(key(left, c), n, group);
        }
        self.lefts = lefts;
        self.rights = rights;
        self.visit = holders;
    }

    fn take_down(&mut self, k: u64, n: u64) {
        if let Some(e) = self.pairs.get_mut(&k) {
            e.freq = e.freq.saturating_sub(n);
            if e.freq == 0 {
                self.pairs.remove(&k);
            }
        }
    }

    fn bring_up(&mut self, k: u64, n: u64, occurrences: &[(u32, u32)]) {
        if self.holders.len() + occurrences.len() >= u32::MAX as usize {
            self.compact_holders();
        }
        let e = self.pairs.entry(k).or_default();
        e.freq += n;
        let freq = e.freq;
        let (start, len) = (e.start as usize, e.len as usize);
        if start + len != self.holders.len() {
            // Not the last range: move it to the end, where it can grow.
            e.start = self.holders.len() as u32;
            self.holders.extend_from_within(start..start + len);
        }
        self.holders.extend(occurrences.iter().map(|&(_, wi)| wi));
        e.len += occurrences.len() as u32;
        if let Some(floor) = self.floor {
            if freq >= floor {
                self.queue
                    .push(freq, k, &order(&self.symbols, self.greater));
            }
        }
    }

    /// Copy the live ranges of `holders` into a new buffer (ranges left behind by merged,
    /// vanished or moved pairs are dropped): done only when the buffer would pass `u32` offsets.
    fn compact_holders(&mut self) {
        let live: usize = self.pairs.iter().map(|(_, e)| e.len as usize).sum();
        let mut holders = Vec::with_capacity(live + live / 4);
        for e in self.pairs.values_mut() {
            let start = e.start as usize;
            e.start = holders.len() as u32;
            holders.extend_from_slice(&self.holders[start..start + e.len as usize]);
        }
        self.holders = holders;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Vec<u32> {
        text.chars().map(u32::from).collect()
    }

    /// Recount everything each step (the rule spelled out).
    fn naive(
        mut words: Vec<Vec<u32>>,
        counts: &[u64],
        mut symbols: Vec<Vec<u32>>,
        greater: bool,
        max: usize,
    ) -> Vec<(u32, u32)> {
        let mut merges = Vec::new();
        while symbols.len() < max {
            let mut freq: FxHashMap<(u32, u32), u64> = FxHashMap::default();
            for (w, &c) in words.iter().zip(counts) {
                for p in w.windows(2) {
                    if p[0] != UNK && p[1] != UNK {
                        *freq.entry((p[0], p[1])).or_default() += c;
                    }
                }
            }
            let Some(&top) = freq.values().max() else {
                break;
            };
            if top < 2 {
                break;
            }
            let tied = freq.iter().filter(|(_, &f)| f == top).map(|(&p, _)| p);
            let key =
                |p: &(u32, u32)| (symbols[p.0 as usize].clone(), symbols[p.1 as usize].clone());
            let (a, b) = if greater {
                tied.max_by_key(key)
            } else {
                tied.min_by_key(key)
            }
            .unwrap();
            let mut joined = symbols[a as usize].clone();
            joined.extend_from_slice(&symbols[b as usize]);
            let c = match symbols.iter().position(|x| *x == joined) {
                Some(i) => i as u32,
                None => {
                    symbols.push(joined);
                    symbols.len() as u32 - 1
                }
            };
            merges.push((a, b));
            for w in &mut words {
                let mut out = Vec::new();
                let mut i = 0;
                while i < w.len() {
                    if i + 1 < w.len() && w[i] == a && w[i + 1] == b {
                        out.push(c);
                        i += 2;
                    } else {
                        out.push(w[i]);
                        i += 1;
                    }
                }
                *w = out;
            }
        }
        merges
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, bound: u32) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % u64::from(bound)) as u32
        }
    }

    #[test]
    fn equals_the_naive_trainer() {
        let mut rng = Lcg(3);
        for round in 0..300 {
            let alphabet = ["a", "b", "c", "ab", "ba", "\u{10ffff}"];
            let k = 1 + rng.next(alphabet.len() as u32) as usize;
            let symbols: Vec<Vec<u32>> = alphabet[..k].iter().map(|x| s(x)).collect();
            let words: Vec<Vec<u32>> = (0..rng.next(8))
                .map(|_| {
                    (0..rng.next(9))
                        .map(|_| {
                            if rng.next(10) == 0 {
                                UNK
                            } else {
                                rng.next(k as u32)
                            }
                        })
                        .collect()
                })
                .collect();
            let counts: Vec<u64> = words.iter().map(|_| 1 + u64::from(rng.next(4))).collect();
            let greater = round % 2 == 1;
            let max = k + rng.next(12) as usize;
            let want = naive(words.clone(), &counts, symbols.clone(), greater, max);
            let mut engine =
                Engine::new(words.clone(), counts.clone(), symbols.clone(), greater).unwrap();
            engine.train(max, 2, |_, _| true);
            assert_eq!(engine.merges(), &want[..], "round {round}");
            // Compacting the holder buffer between merges changes nothing.
            let mut compacted = Engine::new(words, counts, symbols, greater).unwrap();
            while compacted.symbols().len() < max && compacted.step(2).is_some() {
                compacted.compact_holders();
            }
            assert_eq!(compacted.merges(), &want[..], "round {round}, compacted");
        }
    }

    #[test]
    fn radix_sort_is_a_stable_sort() {
        let mut rng = Lcg(5);
        for bits in [1, 7, 11, 12, 23, 34, 64] {
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
            // Few distinct keys (up to 50, spread over the bits), so that many are equal.
            let step = (mask / 50).max(1);
            let mut items: Vec<(u64, u32)> = (0..3000)
                .map(|i| ((u64::from(rng.next(50)) * step) & mask, i))
                .collect();
            let mut want = items.clone();
            want.sort_by_key(|&(k, _)| k); // stable: equal keys keep their order
            radix_sort(&mut items, &mut Vec::new(), bits);
            assert_eq!(items, want, "{bits} bits");
        }
    }

    #[test]
    fn forgetting_rare_pairs_changes_no_merge() {
        // The alphabet makes merges reuse ids ("a" + "b" = "ab"), which must recount; a step
        // below the floor must recount too.
        let mut rng = Lcg(7);
        let mut recounted = 0;
        for round in 0..400 {
            let alphabet = ["a", "b", "c", "ab", "ba", "abc"];
            let k = 2 + rng.next(alphabet.len() as u32 - 1) as usize;
            let symbols: Vec<Vec<u32>> = alphabet[..k].iter().map(|x| s(x)).collect();
            let words: Vec<Vec<u32>> = (0..1 + rng.next(10))
                .map(|_| (0..rng.next(12)).map(|_| rng.next(k as u32)).collect())
                .collect();
            let counts: Vec<u64> = words.iter().map(|_| 1 + u64::from(rng.next(3))).collect();
            let (greater, floor) = (round % 2 == 1, 2 + u64::from(rng.next(3)));
            let max = k + rng.next(10) as usize;
            let min_freq = floor as i64 - i64::from(rng.next(3) == 0); // sometimes below
            let mut want =
                Engine::new(words.clone(), counts.clone(), symbols.clone(), greater).unwrap();
            want.train(max, min_freq, |_, _| true);
            let lengths: Vec<usize> = words.iter().map(Vec::len).collect();
            let data = words.into_iter().flatten().collect();
            let mut got =
                Engine::from_flat_forgetting(data, &lengths, counts, symbols, greater, floor)
                    .unwrap();
            got.train(max, min_freq, |_, _| true);
            assert_eq!(got.merges(), want.merges(), "round {round}");
            assert_eq!(
                got.symbol_frequencies(),
                want.symbol_frequencies(),
                "round {round}"
            );
            recounted += usize::from(got.forgotten_below == 0);
            assert_eq!(got.pair_counts(), want.pair_counts(), "round {round}");
        }
        assert!(recounted > 50, "the recount paths ran {recounted} times");
    }

    #[test]
    fn large_engines_count_pairs_on_threads_as_the_naive_trainer() {
        // Enough symbols for the threaded count (PARALLEL_FROM), few enough merges for the
        // naive trainer.
        let mut rng = Lcg(11);
        let symbols: Vec<Vec<u32>> = (0..40).map(|i| vec![0x61 + i]).collect();
        let mut words = Vec::new();
        let mut size = 0;
        while size <= PARALLEL_FROM {
            let w: Vec<u32> = (0..1 + rng.next(30))
                .map(|_| if rng.next(50) == 0 { UNK } else { rng.next(40) })
                .collect();
            size += w.len();
            words.push(w);
        }
        let counts: Vec<u64> = words.iter().map(|_| 1 + u64::from(rng.next(3))).collect();
        let want = naive(words.clone(), &counts, symbols.clone(), false, 70);
        let mut engine =
            Engine::new(words.clone(), counts.clone(), symbols.clone(), false).unwrap();
        assert!(engine.data.len() >= PARALLEL_FROM);
        engine.train(70, 2, |_, _| true);
        assert_eq!(engine.merges(), &want[..]);
        // Forgetting the pairs rarer than a floor (about half of these, at 330) changes no merge.
        let mut plain = Engine::new(words.clone(), counts.clone(), symbols.clone(), false).unwrap();
        let lengths: Vec<usize> = words.iter().map(Vec::len).collect();
        let data = words.into_iter().flatten().collect();
        let mut forgetting =
            Engine::from_flat_forgetting(data, &lengths, counts, symbols, false, 330).unwrap();
        let (all, kept) = (plain.pairs.iter().count(), forgetting.pairs.iter().count());
        assert!(0 < kept && kept < all, "{kept} of {all} pairs kept");
        plain.train(80, 330, |_, _| true);
        forgetting.train(80, 330, |_, _| true);
        assert!(plain.merges().len() > 10);
        assert_eq!(forgetting.merges(), plain.merges());
        assert_eq!(forgetting.pair_counts(), plain.pair_counts());
    }

    #[test]
    fn spec_000_lankava_and_id_reuse() {
        // " ලං" "කා" "ව" twice and "ශ්‍රී" once: (" ලං", "කා") then (" ලංකා", "ව").
        let symbols = vec![s(" ලං"), s("කා"), s("ව"), s("ශ්‍රී")];
        let mut e = Engine::new(vec![vec![0, 1, 2], vec![3]], vec![2, 1], symbols, false).unwrap();
        assert_eq!(e.step(2), Some((0, 1, 4, 2)));
        assert_eq!(e.step(2), Some((4, 2, 5, 2)));
        assert_eq!(e.step(2), None);
        assert_eq!(e.symbols()[5], s(" ලංකාව"));
        let mut r = Engine::new(
            vec![vec![0, 1], vec![2, 3]],
            vec![2, 2],
            vec![s("a"), s("bc"), s("ab"), s("c")],
            false,
        )
        .unwrap();
        assert_eq!(r.step(1), Some((0, 1, 4, 2)));
        assert_eq!(r.step(1), Some((2, 3, 4, 2))); // "ab" + "c" = "abc": the same id
    }

    #[test]
    fn apply_cuts_words_as_encoding_would_then_training_goes_on() {
        // Merges learned elsewhere: ("a", "b") and ("ab", "c"), then ("x", "y"), absent here.
        let symbols = vec![
            s("a"),
            s("b"),
            s("c"),
            s("d"),
            s("x"),
            s("y"),
            s("ab"),
            s("abc"),
        ];
        let mut e = Engine::new(
            vec![vec![0, 1, 2, 3], vec![0, 1, 3], vec![3, 2]],
            vec![1, 2, 5],
            symbols,
            false,
        )
        .unwrap();
        let made = e.apply(&[(0, 1), (4, 5), (6, 2)]).unwrap();
        assert_eq!(made, vec![Some(6), None, Some(7)]); // known strings keep their ids
        assert_eq!(e.merges(), &[(0, 1), (6, 2)]);
        let words: Vec<&[u32]> = (0..e.num_words()).map(|i| e.word(i)).collect();
        assert_eq!(words, vec![&[7, 3][..], &[6, 3], &[3, 2]]);
        // Training goes on from there: "d c" (5) before "ab d" (2) and "abc d" (1).
        assert_eq!(e.step(1), Some((3, 2, 8, 5)));
        assert_eq!(e.step(1), Some((6, 3, 9, 2)));
        assert_eq!(e.apply(&[(0, 99)]), Err(EngineError::ReplayId(1)));
    }

    #[test]
    fn bad_input() {
        assert_eq!(
            Engine::new(vec![], vec![], vec![s("a"), s("a")], false).err(),
            Some(EngineError::Duplicate(0, 1))
        );
        assert_eq!(
            Engine::new(vec![], vec![], vec![vec![]], false).err(),
            Some(EngineError::Empty(0))
        );
        assert_eq!(
            Engine::new(vec![vec![5]], vec![1], vec![s("a")], false).err(),
            Some(EngineError::BadId(0, 5))
        );
        assert_eq!(
            Engine::new(vec![vec![0]], vec![0], vec![s("a")], false).err(),
            Some(EngineError::ZeroCount(0))
        );
        assert_eq!(
            Engine::new(vec![vec![0, 0]], vec![1 << 62], vec![s("a")], false).err(),
            Some(EngineError::Overflow)
        );
        let mut e = Engine::new(
            vec![vec![0, 1, 2]],
            vec![3],
            vec![s("a"), s("b"), s("c")],
            false,
        )
        .unwrap();
        assert_eq!(e.replay(&[(0, 7)]), Err(EngineError::ReplayId(1)));
        assert_eq!(e.replay(&[(0, 2)]), Err(EngineError::ReplayAbsent(1)));
        assert_eq!(e.replay(&[(0, 1)]), Ok(()));
        assert_eq!(e.replay(&[(0, 1)]), Err(EngineError::ReplayAbsent(2)));
    }

    #[test]
    fn released_engine_keeps_symbols_and_merges_and_learns_nothing() {
        let mut e =
            Engine::new(vec![vec![0, 1, 0, 1]], vec![3], vec![s("a"), s("b")], false).unwrap();
        assert_eq!(e.step(2), Some((0, 1, 2, 6)));
        e.release_words();
        assert_eq!(e.symbols()[2], s("ab"));
        assert_eq!(e.merges(), &[(0, 1)]);
        assert_eq!(e.step(1), None);
        assert_eq!(e.symbol_frequencies(), vec![0, 0, 0]);
        assert_eq!(e.replay(&[(2, 2)]), Err(EngineError::ReplayAbsent(2)));
    }
}
