//! Surviving `fork`: state that each process must have its own of.
//!
//! `os.fork()` (and `multiprocessing`'s fork start method, PyTorch's `DataLoader` workers) copies
//! the memory of every thread but runs only the forking one in the child. A lock that another
//! thread held at that moment is copied held, and nobody in the child will ever release it; a
//! thread pool is copied without its threads. The rules of the core, which every shared
//! structure follows:
//!
//! - a lock on a shared cache is only ever *tried* (`try_lock`): a busy lock is a cache miss, so
//!   no thread, in the parent or in a child, ever waits on one;
//! - state that a child must not inherit lives in a [`PerProcess`], which a child replaces by a
//!   fresh value on first use (the inherited one is leaked: a thread of the parent may have left
//!   it half-changed, and its memory is the parent's copy-on-write pages anyway);
//! - thread pools are kept per calling thread and per [`generation`] (see `crate::batch`).
//!
//! The child learns that it is one from a `pthread_atfork` handler, which counts forks; a
//! structure compares that count with the one it was made in. Reading it is one relaxed atomic
//! load. This module knows nothing of tokenizers.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Once;

/// Forks this process descends from, counted in each child as it starts.
static FORKS: AtomicU64 = AtomicU64::new(0);
static INSTALL: Once = Once::new();

extern "C" fn in_child() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// How many `fork`s separate this process from the one that loaded the core: 0 in that
/// process, 1 in its children, and so on. Changes only in a child, before it runs anything.
#[inline]
pub fn generation() -> u64 {
    INSTALL.call_once(|| {
        #[cfg(unix)]
        // SAFETY: registers a plain function taking no arguments, which touches one atomic
        // (async-signal-safe, as a child handler must be); the library is never unloaded.
        unsafe {
            libc::pthread_atfork(None, None, Some(in_child));
        }
    });
    FORKS.load(Ordering::Relaxed)
}

/// A value of which each process has its own: a child made by `fork` gets a fresh one (from
/// `make`) on its first [`get`](PerProcess::get), and never touches its parent's.
///
/// Values are never freed while the `PerProcess` lives (only the current one, when it is dropped):
/// a reference handed out before a replacement stays valid.
pub struct PerProcess<T> {
    current: AtomicPtr<T>,
    generation: AtomicU64,
    make: fn() -> T,
}

impl<T> PerProcess<T> {
    pub fn new(make: fn() -> T) -> PerProcess<T> {
        PerProcess {
            current: AtomicPtr::new(Box::into_raw(Box::new(make()))),
            generation: AtomicU64::new(generation()),
            make,
        }
    }

    /// This process's value.
    #[inline]
    pub fn get(&self) -> &T {
        let now = generation();
        if self.generation.load(Ordering::Acquire) != now {
            self.renew(now);
        }
        // SAFETY: `current` always holds a pointer from `Box::into_raw`, freed only by `drop`
        // (which has `&mut self`); a replaced one is leaked, so the reference stays valid for
        // as long as `self` is borrowed.
        unsafe { &*self.current.load(Ordering::Acquire) }
    }

    #[cold]
    fn renew(&self, now: u64) {
        let fresh = Box::into_raw(Box::new((self.make)()));
        // The pointer is swapped before the generation is published, so a thread that sees the
        // new generation also sees a fresh value. What is swapped out (the inherited value, or a
        // fresh one another thread of this child installed a moment before) is leaked on purpose
        // (see the type's docs): a reference to it may still be in use.
        self.current.swap(fresh, Ordering::AcqRel);
        self.generation.store(now, Ordering::Release);
    }
}

impl<T> Drop for PerProcess<T> {
    fn drop(&mut self) {
        // SAFETY: the current pointer came from `Box::into_raw` and nothing else frees it.
        unsafe { drop(Box::from_raw(*self.current.get_mut())) };
    }
}

// SAFETY: a `PerProcess<T>` hands out `&T` to any thread, as a `T` shared by reference would.
unsafe impl<T: Send + Sync> Sync for PerProcess<T> {}
// SAFETY: it owns its values, as a `Box<T>` would.
unsafe impl<T: Send> Send for PerProcess<T> {}

/// A value built on first use without a lock, where a `OnceLock` holds one while it builds:
/// threads that ask at once each build one, and the first stored is kept (the others are
/// dropped). So a `fork` from another thread while one is being built copies no lock held into
/// the child, which then builds its own on first use. For shared tables that take a while to
/// build (from Unicode's data) and are the same in every process.
pub struct BuiltOnce<T> {
    value: AtomicPtr<T>,
}

impl<T> BuiltOnce<T> {
    pub const fn new() -> BuiltOnce<T> {
        BuiltOnce {
            value: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The value, built by `build` if none is yet.
    #[inline]
    pub fn get_or_build(&self, build: impl FnOnce() -> T) -> &T {
        let p = self.value.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: a stored pointer came from `Box::into_raw` in `install` and is freed only
            // by `drop`, which has `&mut self`.
            return unsafe { &*p };
        }
        self.install(build())
    }

    #[cold]
    fn install(&self, made: T) -> &T {
        let fresh = Box::into_raw(Box::new(made));
        match self.value.compare_exchange(
            std::ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // SAFETY: `fresh` is now the stored value (see `get_or_build`).
            Ok(_) => unsafe { &*fresh },
            Err(first) => {
                // SAFETY: `fresh` was never shared; `first` is the stored value.
                unsafe {
                    drop(Box::from_raw(fresh));
                    &*first
                }
            }
        }
    }
}

impl<T> Default for BuiltOnce<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for BuiltOnce<T> {
    fn drop(&mut self) {
        let p = *self.value.get_mut();
        if !p.is_null() {
            // SAFETY: the stored pointer came from `Box::into_raw` and nothing else frees it.
            unsafe { drop(Box::from_raw(p)) };
        }
    }
}

// SAFETY: it hands out `&T` to any thread and owns its value, as a `OnceLock<T>` does.
unsafe impl<T: Send + Sync> Sync for BuiltOnce<T> {}
// SAFETY: it owns its value, as a `Box<T>` would.
unsafe impl<T: Send> Send for BuiltOnce<T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn built_once_holds_no_lock_across_a_fork() {
        static TABLE: BuiltOnce<Vec<u32>> = BuiltOnce::new();
        // Another thread is in the middle of building the value when this one forks.
        let (started, finish) = (
            std::sync::Arc::new(std::sync::Barrier::new(2)),
            std::sync::Arc::new(std::sync::Barrier::new(2)),
        );
        let (s, f) = (started.clone(), finish.clone());
        let builder = std::thread::spawn(move || {
            TABLE
                .get_or_build(|| {
                    s.wait();
                    f.wait();
                    vec![1, 2, 3]
                })
                .len()
        });
        started.wait();
        // SAFETY: fork in a test process; the child only asks for the value and then _exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // The child: the builder thread does not exist here. A OnceLock would wait for it
            // forever (the alarm ends the child then, and the test fails); this builds anew.
            // SAFETY: alarm and _exit in the child of a fork.
            unsafe { libc::alarm(10) };
            let ok = TABLE.get_or_build(|| vec![4]) == &vec![4];
            // SAFETY: ends the child at once, without running the parent's test harness again.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child made above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        finish.wait();
        assert_eq!(builder.join().unwrap(), 3);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        // Here the first value stored stays; a later build is not asked for.
        assert_eq!(TABLE.get_or_build(|| unreachable!()), &vec![1, 2, 3]);
    }

    #[test]
    fn a_value_per_process() {
        let shared: PerProcess<Mutex<Vec<u32>>> = PerProcess::new(|| Mutex::new(vec![7]));
        shared.get().lock().unwrap().push(8);
        assert_eq!(*shared.get().lock().unwrap(), vec![7, 8]);
        // A lock held by a thread that will not exist in the child.
        let held = shared.get().lock().unwrap();
        // SAFETY: fork in a test process; the child only touches `shared` and then _exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // The child: the inherited lock is held; its own value is fresh and free.
            let ok = generation() >= 1 && matches!(shared.get().try_lock(), Ok(v) if *v == vec![7]);
            // SAFETY: ends the child at once, without running the parent's test harness again.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        drop(held);
        let mut status = 0;
        // SAFETY: waits for the child made above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        assert_eq!(generation(), 0);
        assert_eq!(*shared.get().lock().unwrap(), vec![7, 8]);
    }
}
