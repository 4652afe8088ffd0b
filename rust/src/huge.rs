//! Big lookup tables on huge pages.
//!
//! The token table of a large vocabulary spans many megabytes, and encoding reads it at random: on
//! ordinary pages nearly every lookup also misses the TLB (its entries cover far less than the
//! table) and waits for a page walk before the cache miss itself. [`HugeSlice`] allocates a table
//! aligned to 2 MB and asks Linux for transparent huge pages on it (`madvise`), so a handful of TLB
//! entries cover it. Where the kernel says no (or on other systems) it is an ordinary allocation:
//! the hint never changes a result. Small tables are left alone. Tables of [`MAPPED`] bytes or more
//! are mappings of their own ([`crate::alloc::map_aligned`]), given back to the kernel when dropped.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Size of a huge page on x86-64 and most arm64 Linux systems.
const HUGE: usize = 2 << 20;
/// Tables of at least this many bytes are mappings of their own, returned to the kernel when
/// dropped. From the system allocator's heap they would not be: once glibc's mmap threshold has
/// risen past their size, a thread's memo tables, made with each thread and freed with it, leave
/// that heap in pieces it keeps, so a process making short-lived threads would grow without the
/// bound the memos promise.
const MAPPED: usize = 128 << 10;

/// A fixed-length slice of plain values, on huge pages when it is at least [`HUGE`] bytes.
pub struct HugeSlice<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
    layout: Layout,
}

// SAFETY: a HugeSlice owns its values like a Box<[T]>; T: Copy values hold no references.
unsafe impl<T: Copy + Send> Send for HugeSlice<T> {}
// SAFETY: as above; shared access only reads.
unsafe impl<T: Copy + Sync> Sync for HugeSlice<T> {}

impl<T: Copy> HugeSlice<T> {
    /// `len` copies of `fill`.
    pub fn new(len: usize, fill: T) -> HugeSlice<T> {
        Self::try_new(len, fill).unwrap_or_else(|layout| handle_alloc_error(layout))
    }

    /// [`Self::new`], or [`crate::memory::NoMemory`]: a tokenizer's table that its construction reports.
    pub fn try_filled(len: usize, fill: T) -> Result<HugeSlice<T>, crate::memory::NoMemory> {
        Self::try_new(len, fill).map_err(|layout| crate::memory::NoMemory {
            bytes: layout.size(),
        })
    }

    /// [`Self::new`], or the layout that could not be allocated (a table that may stay as it
    /// was: a cache that stops growing when memory is short).
    pub fn try_new(len: usize, fill: T) -> Result<HugeSlice<T>, Layout> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .expect("table size overflows");
        let align = if bytes >= HUGE {
            HUGE
        } else {
            std::mem::align_of::<T>()
        };
        let layout = Layout::from_size_align(bytes, align).expect("a valid layout");
        if bytes == 0 {
            return Ok(HugeSlice::default());
        }
        // SAFETY: the layout has a non-zero size; a mapped block is returned by `Drop` with `unmap`.
        let raw = unsafe {
            if bytes >= MAPPED {
                crate::alloc::map_aligned(bytes, align)
            } else {
                alloc(layout)
            }
        }
        .cast::<T>();
        let Some(ptr) = NonNull::new(raw) else {
            return Err(layout);
        };
        #[cfg(target_os = "linux")]
        if bytes >= HUGE {
            // SAFETY: the range is this allocation, untouched yet; the advice only affects
            // how the kernel backs it. A refusal (error return) leaves ordinary pages.
            unsafe {
                libc::madvise(ptr.as_ptr().cast(), bytes, libc::MADV_HUGEPAGE);
            }
        }
        for i in 0..len {
            // SAFETY: i < len, within the allocation; every slot is written before any read.
            unsafe { ptr.as_ptr().add(i).write(fill) };
        }
        Ok(HugeSlice { ptr, len, layout })
    }
}

impl<T: Copy> HugeSlice<T> {
    /// Empty, without an allocation (for constants).
    pub const fn empty() -> HugeSlice<T> {
        HugeSlice {
            ptr: NonNull::dangling(),
            len: 0,
            layout: Layout::new::<()>(),
        }
    }
}

impl<T: Copy> Default for HugeSlice<T> {
    /// Empty, without an allocation.
    fn default() -> HugeSlice<T> {
        HugeSlice::empty()
    }
}

impl<T: Copy> Clone for HugeSlice<T> {
    fn clone(&self) -> HugeSlice<T> {
        let Some(&first) = self.first() else {
            return HugeSlice::default();
        };
        let mut copy = HugeSlice::new(self.len, first);
        copy.copy_from_slice(self);
        copy
    }
}

impl<T: Copy> std::fmt::Debug for HugeSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HugeSlice(len={})", self.len)
    }
}

impl<T: Copy> Deref for HugeSlice<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised values live at `ptr` for as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> DerefMut for HugeSlice<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref, and &mut self is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Drop for HugeSlice<T> {
    fn drop(&mut self) {
        let bytes = self.layout.size();
        if bytes >= MAPPED {
            // SAFETY: mapped in `new` with this size; T: Copy needs no drop.
            unsafe { crate::alloc::unmap(self.ptr.as_ptr().cast(), bytes) };
        } else if bytes > 0 {
            // SAFETY: allocated in `new` with this layout; T: Copy needs no drop.
            unsafe { dealloc(self.ptr.as_ptr().cast(), self.layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_huge_slices_hold_their_values() {
        for len in [0usize, 1, 1000, MAPPED / 8, (HUGE / 8) + 3] {
            let mut s = HugeSlice::new(len, 7u64);
            assert_eq!(s.len(), len);
            assert!(s.iter().all(|&v| v == 7));
            if len > 0 {
                s[len - 1] = 9;
                assert_eq!(s[len - 1], 9);
            }
        }
        let big = HugeSlice::new(HUGE / 4, 0u32);
        assert_eq!(big.as_ptr() as usize % HUGE, 0);
        let copy = big.clone();
        assert_eq!(&copy[..], &big[..]);
        assert!(HugeSlice::<u8>::default().clone().is_empty());
    }
}
