//! The engine's lazy queue: the pairs with `freq >= floor`, one bucket per frequency, a bucket
//! sorted by the tie-break only when it reaches the front; and how the engine finds the best
//! pair in it (an entry is checked against the true count when it comes up). It does not count
//! pairs (`pairs`) or merge them (`update`).

use super::{order, Engine};
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Pair keys by frequency, highest first, then by the tie-break (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Queue {
    buckets: FxHashMap<u64, Vec<u64>>,
    freqs: BinaryHeap<u64>,
    front: Vec<u64>,
    front_freq: u64,
    pos: usize,
}

impl Queue {
    pub(super) fn push(&mut self, freq: u64, pair: u64, order: &impl Fn(u64, u64) -> Ordering) {
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

    pub(super) fn pop(&mut self) {
        self.pos += 1;
        if self.pos == self.front.len() {
            self.front.clear();
            self.front_freq = 0;
            self.pos = 0;
        }
    }
}

impl Engine {
    /// Make the queue hold every pair with `freq >= max(min_freq, 1)`; rebuilt if it holds fewer.
    pub(super) fn prepare_queue(&mut self, min_freq: i64) {
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
    pub(super) fn best(&mut self) -> Option<(u64, u64)> {
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
}
