//! Many texts on several threads, results in input order: [`ordered`] (a pipeline) and
//! [`parallel_map`] (all results at once), shared by every batch entry point.
//!
//! The items are cut into chunks of about [`CHUNK_WEIGHT`] (a text's length, plus a little for
//! each text; a long text is a chunk of its own) handed out from a shared counter, so a thread
//! that drew long texts does not hold the others up. The calling thread is one of the threads:
//! it takes chunks too, but first hands the finished ones, in input order, to a consumer. That
//! is where the Python layer turns ids into lists under the GIL, while the other threads go on
//! encoding: the conversion overlaps the work instead of following it. The other threads come
//! from a pool kept per calling thread and thread count: a call starts no threads, and the
//! threads' own buffers stay warm between calls.
//!
//! This module knows nothing of tokenizers or Python; it does not split one text over threads.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::Thread;

use crate::fork;
use crate::units::Text;

/// Work per chunk: about this many code units (a few hundred microseconds of encoding), so
/// the consumer gets results early and the last chunk leaves little for one thread alone.
pub const CHUNK_WEIGHT: usize = 32_768;
/// Work per chunk when one thread does it all: the consumer still gets results as they come
/// (and the work's results never pile up), with fewer switches between the two.
pub const CHUNK_WEIGHT_ONE: usize = 1 << 20;
/// Weight of each item on top of its own: the fixed costs of a text (a call, a list).
const ITEM_WEIGHT: usize = 64;
/// Below this total weight a second thread costs more than it saves.
const PARALLEL_FROM: usize = 65_536;
/// At most this many pools (thread counts) are kept.
const MAX_POOLS: usize = 4;

type Panic = Box<dyn Any + Send + 'static>;
type Slot<C> = Mutex<Option<Result<C, Panic>>>;
/// The fork generation that made the pools, and the pools by thread count.
type Pools = (u64, Vec<(usize, Arc<rayon::ThreadPool>)>);

/// `work` on every item on up to `threads` threads, the calling thread included; `consume` on
/// the calling thread receives the results in input order as they become ready, as
/// `consume(first, results)` for the items from `first` on (each item exactly once).
///
/// When `consume` fails, the threads stop taking new chunks and its error is returned. A panic
/// in `work` is raised again in the caller once the other threads have stopped.
pub fn ordered<T: Sync, R: Send, E>(
    items: &[T],
    threads: usize,
    weight: impl Fn(&T) -> usize,
    work: impl Fn(&T) -> R + Sync,
    consume: impl FnMut(usize, Vec<R>) -> Result<(), E>,
) -> Result<(), E> {
    ordered_chunks(
        items,
        threads,
        weight,
        |part| part.iter().map(&work).collect(),
        consume,
    )
}

/// The threads [`ordered_chunks`] shares `items` among when asked for `threads`: one for a batch
/// too small to share (it may still use fewer, where the items make fewer chunks).
pub fn threads_for<T>(items: &[T], threads: usize, weight: impl Fn(&T) -> usize) -> usize {
    let total: usize = items.iter().map(|t| weight(t) + ITEM_WEIGHT).sum();
    if total < PARALLEL_FROM {
        1
    } else {
        threads.max(1)
    }
}

/// [`ordered`] a chunk at a time: `work` takes a whole chunk of consecutive items (so that it
/// can put all their results in one place, such as one vector of ids), and `consume(first,
/// result)` receives each chunk's result in input order, `first` being its first item.
pub fn ordered_chunks<T: Sync, C: Send, E>(
    items: &[T],
    threads: usize,
    weight: impl Fn(&T) -> usize,
    work: impl Fn(&[T]) -> C + Sync,
    mut consume: impl FnMut(usize, C) -> Result<(), E>,
) -> Result<(), E> {
    let threads = threads_for(items, threads, &weight);
    let bounds = chunk_bounds(items, &weight, threads);
    let chunks = bounds.len() - 1;
    let threads = threads.min(chunks);
    // Threads the system refuses (memory, a process limit): the calling thread does the work.
    let pool = if threads > 1 { pool(threads - 1) } else { None };
    let Some(pool) = pool else {
        for c in 0..chunks {
            consume(bounds[c], work(&items[bounds[c]..bounds[c + 1]]))?;
        }
        return Ok(());
    };
    let shared = Shared {
        items,
        bounds: &bounds,
        work: &work,
        next: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        slots: (0..chunks).map(|_| Mutex::new(None)).collect(),
        caller: std::thread::current(),
    };
    let outcome = pool.in_place_scope(|scope| {
        for _ in 1..threads {
            scope.spawn(|_| while shared.take_one() {});
        }
        let outcome = shared.lead(&mut consume);
        // On an error or a panic the other threads finish their chunk and stop; on success
        // there is nothing left to take.
        shared.stop.store(true, Ordering::Relaxed);
        outcome
    });
    match outcome {
        Ok(result) => result,
        Err(panic) => resume_unwind(panic),
    }
}

/// `f` on every text of `items`, on up to `threads` threads, results in input order.
///
/// A panic in a worker is raised again in the caller (which turns it into an error).
pub fn parallel_map<R: Send>(
    items: &[Text<'_>],
    threads: usize,
    f: impl Fn(&Text<'_>) -> R + Sync,
) -> Vec<R> {
    let mut out = Vec::with_capacity(items.len());
    let done = ordered(items, threads, Text::len, f, |_, results| {
        out.extend(results);
        Ok::<(), std::convert::Infallible>(())
    });
    match done {
        Ok(()) => out,
        Err(never) => match never {},
    }
}

/// `parts` one after another into `dest` (exactly as long as all of them together), on up to
/// `threads` threads of the same pools as [`ordered_chunks`], each copying a run of whole parts
/// of about equal size. Large outputs only: the copy and the first touch of `dest`'s pages
/// are then shared instead of falling on one thread after all the encoding is done.
pub fn gather<X, S>(parts: &[S], dest: &mut [X], threads: usize)
where
    X: Copy + Send + Sync,
    S: AsRef<[X]> + Sync,
{
    let len = |part: &S| part.as_ref().len();
    assert_eq!(
        dest.len(),
        parts.iter().map(len).sum::<usize>(),
        "gather: wrong size"
    );
    let size = std::mem::size_of_val(dest);
    let wanted = threads
        .min(parts.len())
        .min(size / GATHER_PER_THREAD)
        .max(1);
    // Runs of whole parts, each about `dest.len() / wanted` long, and where each run starts.
    let mut runs: Vec<(&[S], &mut [X])> = Vec::with_capacity(wanted);
    let (mut rest, mut from, mut held) = (dest, 0, 0);
    let share = rest.len().div_ceil(wanted);
    for (i, part) in parts.iter().enumerate() {
        held += len(part);
        if held >= share || i + 1 == parts.len() {
            let (run, tail) = std::mem::take(&mut rest).split_at_mut(held);
            runs.push((&parts[from..=i], run));
            (rest, from, held) = (tail, i + 1, 0);
        }
    }
    let copy = |(parts, run): (&[S], &mut [X])| {
        let mut at = 0;
        for part in parts {
            let part = part.as_ref();
            run[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
    };
    let mut runs = runs.into_iter();
    let first = runs.next();
    // The batch's own pool (`threads - 1` besides the caller; `runs` holds fewer than `threads`
    // runs now), so the copy makes no pool of another size; none (threads refused): the caller.
    let pool = if runs.len() == 0 {
        None
    } else {
        pool(threads - 1)
    };
    let Some(pool) = pool else {
        first.into_iter().chain(runs).for_each(copy);
        return;
    };
    pool.in_place_scope(|scope| {
        for run in runs {
            scope.spawn(move |_| copy(run));
        }
        first.into_iter().for_each(copy);
    });
}

/// Bytes of output below which one more thread does not pay for itself in [`gather`].
const GATHER_PER_THREAD: usize = 1 << 20;

/// Starts of consecutive chunks of about [`CHUNK_WEIGHT`] (or [`CHUNK_WEIGHT_ONE`] on one
/// thread), then `items.len()`.
fn chunk_bounds<T>(items: &[T], weight: &impl Fn(&T) -> usize, threads: usize) -> Vec<usize> {
    // One thread needs no balance: bigger chunks interleave encoding and handing over less.
    let chunk = if threads == 1 {
        CHUNK_WEIGHT_ONE
    } else {
        CHUNK_WEIGHT
    };
    let mut bounds = vec![0];
    let mut held = 0;
    for (i, item) in items.iter().enumerate() {
        held += weight(item) + ITEM_WEIGHT;
        if held >= chunk && i + 1 < items.len() {
            bounds.push(i + 1);
            held = 0;
        }
    }
    if !items.is_empty() {
        bounds.push(items.len());
    }
    bounds
}

/// What the threads of one [`ordered_chunks`] call share.
struct Shared<'a, T, C, W> {
    items: &'a [T],
    bounds: &'a [usize],
    work: &'a W,
    /// The next chunk nobody has taken yet.
    next: AtomicUsize,
    /// Set when the caller gives up (an error, a panic): take no more chunks.
    stop: AtomicBool,
    /// Each chunk's result (or its panic), from the thread that did it until the caller takes it.
    slots: Vec<Slot<C>>,
    caller: Thread,
}

impl<T: Sync, C: Send, W: Fn(&[T]) -> C + Sync> Shared<'_, T, C, W> {
    /// Do the next chunk nobody has taken; false when there is none (or the caller stopped).
    fn take_one(&self) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            return false;
        }
        let c = self.next.fetch_add(1, Ordering::Relaxed);
        if c >= self.slots.len() {
            return false;
        }
        let part = &self.items[self.bounds[c]..self.bounds[c + 1]];
        let result = catch_unwind(AssertUnwindSafe(|| (self.work)(part)));
        *lock(&self.slots[c]) = Some(result);
        self.caller.unpark();
        true
    }

    /// The calling thread's part: hand finished chunks to `consume` in order, and while none is
    /// ready, do chunks itself. Ok(consume's outcome) or the first panic of any thread.
    fn lead<E>(
        &self,
        consume: &mut impl FnMut(usize, C) -> Result<(), E>,
    ) -> Result<Result<(), E>, Panic> {
        let mut done = 0;
        while done < self.slots.len() {
            let ready = lock(&self.slots[done]).take();
            match ready {
                Some(Ok(result)) => {
                    if let Err(e) = consume(self.bounds[done], result) {
                        return Ok(Err(e));
                    }
                    done += 1;
                }
                Some(Err(panic)) => return Err(panic),
                None => {
                    if !self.take_one() {
                        // Everything is taken; wait for the chunk due next (its thread unparks
                        // us).
                        std::thread::park();
                    }
                }
            }
        }
        Ok(Ok(()))
    }
}

/// A slot's lock; a panic never happens while one is held, so a poisoned lock is still sound.
fn lock<X>(m: &Mutex<X>) -> std::sync::MutexGuard<'_, X> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A pool of `n` threads, kept for this thread's next call with the same count (at most
/// [`MAX_POOLS`] counts are kept; the oldest is dropped, its threads ending when its last call
/// does). `None` where the system refuses a thread (no memory for its stack, a process limit):
/// the caller then does the work alone, with the same results, and the next call tries again.
///
/// Kept per calling thread, so no lock guards them: a lock held by another thread when the
/// process forks would be copied held into the child. A child made by `fork` has none of its
/// parent's threads: its first batch finds pools of an earlier [`fork::generation`], forgets
/// them (their threads are not there to stop) and makes its own, where waiting on the parent's
/// would never end.
pub(crate) fn pool(n: usize) -> Option<Arc<rayon::ThreadPool>> {
    thread_local! {
        static POOLS: RefCell<Pools> = const { RefCell::new((0, Vec::new())) };
    }
    POOLS.with_borrow_mut(|(made_in, pools)| {
        let now = fork::generation();
        if *made_in != now {
            std::mem::forget(std::mem::take(pools));
            *made_in = now;
        }
        if let Some((_, p)) = pools.iter().find(|(k, _)| *k == n) {
            return Some(p.clone());
        }
        let p = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(|i| format!("wwho-batch-{i}"))
                .build()
                .ok()?,
        );
        if pools.len() >= MAX_POOLS {
            pools.remove(0);
        }
        pools.push((n, p.clone()));
        Some(p)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lens: &[usize]) -> Vec<Vec<u8>> {
        lens.iter()
            .enumerate()
            .map(|(i, &n)| vec![b'a' + (i % 26) as u8; n])
            .collect()
    }

    #[test]
    fn in_order_on_any_thread_count() {
        for lens in [
            vec![],
            vec![0],
            vec![5; 100_000],
            vec![300_000, 1, 2, 3],
            (0..5000).map(|i| (i * 7919) % 4000).collect(),
        ] {
            let owned = texts(&lens);
            let items: Vec<Text<'_>> = owned.iter().map(|t| Text::U8(t)).collect();
            let want: Vec<usize> = lens.clone();
            for threads in [1, 2, 3, 8] {
                assert_eq!(parallel_map(&items, threads, |t| t.len()), want);
                let mut next = 0;
                ordered(&items, threads, Text::len, Text::len, |first, got| {
                    assert_eq!(first, next);
                    assert_eq!(got, want[first..first + got.len()]);
                    next += got.len();
                    Ok::<(), ()>(())
                })
                .unwrap();
                assert_eq!(next, want.len());
            }
        }
    }

    #[test]
    fn gather_puts_every_part_in_place() {
        for sizes in [
            vec![],
            vec![0],
            vec![3, 0, 5],
            vec![1 << 19; 9],
            vec![1, 1 << 21, 7, 1 << 20, 0, 3],
        ] {
            let parts: Vec<Vec<u32>> = sizes
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    (0..n as u32)
                        .map(|j| j.wrapping_mul(31) ^ i as u32)
                        .collect()
                })
                .collect();
            let want: Vec<u32> = parts.concat();
            for threads in [1, 2, 3, 8] {
                let mut got = vec![u32::MAX; want.len()];
                gather(&parts, &mut got, threads);
                assert!(got == want, "sizes {sizes:?}, {threads} threads");
            }
        }
    }

    #[test]
    fn a_consumer_error_stops_the_work() {
        let owned = texts(&vec![1000; 10_000]);
        let items: Vec<Text<'_>> = owned.iter().map(|t| Text::U8(t)).collect();
        let done = AtomicUsize::new(0);
        let result = ordered(
            &items,
            2,
            Text::len,
            |t| {
                done.fetch_add(1, Ordering::Relaxed);
                t.len()
            },
            |first, _| if first > 0 { Err(first) } else { Ok(()) },
        );
        assert!(matches!(result, Err(first) if first > 0));
        assert!(done.load(Ordering::Relaxed) < items.len());
    }

    #[test]
    fn a_panic_reaches_the_caller() {
        let owned = texts(&vec![1000; 1000]);
        let items: Vec<Text<'_>> = owned.iter().map(|t| Text::U8(t)).collect();
        for threads in [1, 2] {
            let caught = catch_unwind(AssertUnwindSafe(|| {
                parallel_map(&items, threads, |t| {
                    assert!(t.len() != 1000 || threads == 0, "boom");
                })
            }));
            assert!(caught.is_err());
        }
    }
}
