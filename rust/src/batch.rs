//! Many texts on several threads: [`parallel_map`], shared by every batch entry point.
//!
//! Plain `std::thread::scope` workers pulling small chunks from a shared counter (no pool kept
//! between calls, so nothing to size or shut down). This module knows nothing of tokenizers.

use crate::units::Text;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` on every item of `items`, on up to `threads` threads, results in input order.
///
/// Work is handed out in small chunks from a shared counter, so a thread that drew long texts
/// does not hold the others up. Below ~64k characters in all a thread costs more than it saves.
/// A panic in a worker is raised again in the caller (which turns it into an error).
pub fn parallel_map<R: Send>(
    items: &[Text<'_>],
    threads: usize,
    f: impl Fn(&Text<'_>) -> R + Sync,
) -> Vec<R> {
    let total: usize = items.iter().map(Text::len).sum();
    let threads = threads.clamp(1, items.len().max(1)).min(total / 65_536 + 1);
    if threads == 1 {
        return items.iter().map(&f).collect();
    }
    const CHUNK: usize = 16;
    let next = AtomicUsize::new(0);
    let f = &f;
    let done: Vec<Vec<(usize, Vec<R>)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let first = next.fetch_add(CHUNK, Ordering::Relaxed);
                        if first >= items.len() {
                            return mine;
                        }
                        let chunk = &items[first..(first + CHUNK).min(items.len())];
                        mine.push((first, chunk.iter().map(f).collect()));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (first, results) in done.into_iter().flatten() {
        for (k, r) in results.into_iter().enumerate() {
            slots[first + k] = Some(r);
        }
    }
    slots.into_iter().flatten().collect()
}
