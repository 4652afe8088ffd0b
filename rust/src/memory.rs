//! Memory whose size the input decides, asked for so that a failure is an error, not an abort.
//!
//! Rust stops the process when an ordinary allocation fails (`handle_alloc_error`): for a
//! buffer as long as one text, a line of tens of megabytes under a memory limit would end the
//! Python process with no error to catch. The encoders grow such buffers through these helpers
//! instead, which use `try_reserve` and return [`NoMemory`]; the Python layer raises it as a
//! `MemoryError`. Growth stays amortized (`try_reserve` doubles as `push` does), and a buffer
//! with room left costs one comparison.
//!
//! A byte-level tokenizer's construction asks for its large tables the same way (a ranks
//! file's lines, the token table, `HugeSlice::try_filled`; the whitespace pairs, [`made_by`];
//! the bindings' int slot per id), so that a low memory limit is a `MemoryError` there too.
//!
//! This module does not bound anything or decide what is too long (the callers' limits do), and
//! the small allocations of a fixed or table-bounded size (a scratch word's, a vocabulary's
//! entries) still abort where they fail.

use std::fmt;

/// An allocation of `bytes` bytes (or of a buffer grown by that much) could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoMemory {
    pub bytes: usize,
}

impl NoMemory {
    /// The failure of an allocation of `n` items of `T`.
    pub fn of<T>(n: usize) -> Self {
        NoMemory {
            bytes: n.saturating_mul(std::mem::size_of::<T>()),
        }
    }

    /// What [`std::alloc::handle_alloc_error`] takes: for callers that cannot report the error
    /// and stop the process as a failed ordinary allocation would.
    pub fn abort(self) -> ! {
        let size = self.bytes.min(isize::MAX as usize & !7);
        let layout = std::alloc::Layout::from_size_align(size, 8)
            .unwrap_or_else(|_| std::alloc::Layout::new::<u64>());
        std::alloc::handle_alloc_error(layout)
    }
}

impl fmt::Display for NoMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot allocate {} more bytes", self.bytes)
    }
}

impl std::error::Error for NoMemory {}

/// Room for `more` items after the ones `v` holds.
#[inline]
pub fn reserve<T>(v: &mut Vec<T>, more: usize) -> Result<(), NoMemory> {
    if v.capacity() - v.len() >= more {
        return Ok(());
    }
    grow(v, more)
}

// Kept out of line: the check above is what the hot paths pay.
#[cold]
#[inline(never)]
fn grow<T>(v: &mut Vec<T>, more: usize) -> Result<(), NoMemory> {
    v.try_reserve(more).map_err(|_| NoMemory::of::<T>(more))
}

/// `v.push(item)`, the room asked for first.
#[inline]
pub fn push<T>(v: &mut Vec<T>, item: T) -> Result<(), NoMemory> {
    reserve(v, 1)?;
    v.push(item);
    Ok(())
}

/// `v.extend_from_slice(items)`, the room asked for first.
#[inline]
pub fn extend<T: Copy>(v: &mut Vec<T>, items: &[T]) -> Result<(), NoMemory> {
    reserve(v, items.len())?;
    v.extend_from_slice(items);
    Ok(())
}

/// `n` copies of `item`.
pub fn filled<T: Clone>(item: T, n: usize) -> Result<Vec<T>, NoMemory> {
    let mut v = Vec::new();
    reserve(&mut v, n)?;
    v.resize(n, item);
    Ok(v)
}

/// `n` items, each made by `f` (for items that are not `Clone`: atomics).
pub fn made_by<T>(n: usize, f: impl FnMut() -> T) -> Result<Box<[T]>, NoMemory> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| NoMemory::of::<T>(n))?;
    v.extend(std::iter::repeat_with(f).take(n));
    Ok(v.into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_than_an_address_space_is_an_error_not_an_abort() {
        let mut v: Vec<u64> = vec![1, 2];
        let e = reserve(&mut v, usize::MAX / 4).unwrap_err();
        assert_eq!(e.bytes, usize::MAX);
        assert_eq!(v, [1, 2]);
        assert!(filled(0u32, usize::MAX / 2).is_err());
        assert!(e.to_string().starts_with("cannot allocate"));
    }

    #[test]
    fn the_helpers_do_what_vec_does() {
        let mut v = Vec::new();
        for i in 0..1000u32 {
            push(&mut v, i).unwrap();
        }
        extend(&mut v, &[7, 8]).unwrap();
        assert_eq!(v.len(), 1002);
        assert_eq!(&v[998..], [998, 999, 7, 8]);
        assert_eq!(filled(3u8, 4).unwrap(), [3, 3, 3, 3]);
    }
}
