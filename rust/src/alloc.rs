//! The extension's allocator: large blocks straight from the kernel, everything else from the
//! system allocator.
//!
//! Training builds and frees large tables one after the other (the span table, the engines'
//! word buffers and pair maps). glibc's malloc raises its mmap threshold to the size of each
//! such block once it is freed, so the next ones come from its heap, and what they leave when
//! freed stays in the process and in its peak RSS. Here a block of at least [`LARGE`] bytes
//! is its own anonymous mapping (`mmap`; grown or shrunk with `mremap`, which moves pages
//! instead of copying them; returned with `munmap` the moment it is freed). Only the core's
//! own allocations are affected: the host process's malloc settings are left alone.
//!
//! The line is not lower because a mapping costs a page fault per page each time it is made,
//! and an encoder's buffers for a long text (units, links, ids) are made on every call: a lower
//! line moves encoding time into the kernel, a higher one leaves more freed training memory in
//! glibc's heap. The measurements behind the choice are in docs/benchmarks.md ("The allocator's
//! line").
//!
//! Linux only (elsewhere the system allocator serves everything); installed by the Python
//! extension (`python` feature), not by `cargo test`, which exercises it in its own tests.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{c_int, c_long, c_void};

/// Blocks of at least this many bytes are mappings of their own.
pub const LARGE: usize = 4 << 20;
const PAGE: usize = 4096;

const PROT_READ: c_int = 1;
const PROT_WRITE: c_int = 2;
const MAP_PRIVATE: c_int = 0x02;
const MAP_ANONYMOUS: c_int = 0x20;
const MREMAP_MAYMOVE: c_int = 1;
const MAP_FAILED: *mut c_void = !0usize as *mut c_void;
const MADV_HUGEPAGE: c_int = 14;
/// Mappings of at least this size ask for transparent huge pages.
const HUGE: usize = 4 << 20;

extern "C" {
    fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        off: c_long,
    ) -> *mut c_void;
    fn munmap(addr: *mut c_void, len: usize) -> c_int;
    fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    fn mremap(old: *mut c_void, old_len: usize, new_len: usize, flags: c_int, ...) -> *mut c_void;
}

/// Hand the system allocator's free pages back to the kernel (glibc's `malloc_trim`): after a
/// stage that freed many small blocks (word types, interned strings), which stay in its heap.
pub fn trim() {
    #[cfg(target_env = "gnu")]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> c_int;
        }
        // SAFETY: malloc_trim only returns free memory of the allocator's own heaps.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// A private anonymous mapping of at least `size` bytes (zeroed) aligned to `align` (a power of
/// two), for tables that must not enter the system allocator's heap ([`crate::huge::HugeSlice`]);
/// null where the kernel says no. For an alignment above a page, a mapping of the size plus the
/// alignment is made and its unaligned head and the tail past the size are unmapped at once.
///
/// # Safety
/// `size` is non-zero; the caller owns the block and returns it with [`unmap`]`(p, size)`.
pub(crate) unsafe fn map_aligned(size: usize, align: usize) -> *mut u8 {
    if align <= PAGE {
        return map(size);
    }
    let size = size.next_multiple_of(PAGE);
    let Some(total) = size.checked_add(align) else {
        return std::ptr::null_mut();
    };
    let p = map(total);
    if p.is_null() {
        return p;
    }
    let start = p as usize;
    let aligned = start.next_multiple_of(align);
    let head = aligned - start;
    // SAFETY: both ranges lie inside the mapping just made, are page-aligned (the alignment is a
    // multiple of a page), and no one else knows of them.
    if head > 0 {
        munmap(p.cast(), head);
    }
    if total - head > size {
        munmap((aligned + size) as *mut c_void, total - head - size);
    }
    aligned as *mut u8
}

/// Return a block of [`map_aligned`].
///
/// # Safety
/// `ptr` and `size` are a block of `map_aligned`, not used again.
pub(crate) unsafe fn unmap(ptr: *mut u8, size: usize) {
    munmap(ptr.cast(), size);
}

/// See the module docs.
pub struct LargeMapped;

#[inline]
fn mapped(layout: &Layout) -> bool {
    layout.size() >= LARGE && layout.align() <= PAGE
}

/// A fresh private anonymous mapping of `size` bytes (zeroed, page-aligned), or null.
///
/// # Safety
/// `size` is non-zero; the caller owns the mapping and returns it with `munmap(p, size)` (or
/// moves it with `mremap`), never through the system allocator.
unsafe fn map(size: usize) -> *mut u8 {
    // SAFETY: a new anonymous mapping aliases no memory of this process; a failure is reported
    // as MAP_FAILED, which becomes null (what GlobalAlloc callers test for), never a pointer.
    let p = mmap(
        std::ptr::null_mut(),
        size,
        PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS,
        -1,
        0,
    );
    if p == MAP_FAILED {
        return std::ptr::null_mut();
    }
    if size >= HUGE {
        // SAFETY: the range is the mapping just made; the advice only changes how the kernel
        // backs it, and a refusal (an error return) leaves ordinary pages.
        madvise(p, size, MADV_HUGEPAGE);
    }
    p.cast()
}

// SAFETY: every block is either the system allocator's (small sizes, or alignments above a
// page) or a mapping of its own, and `mapped` sends a block back the way it came: a layout's
// size and alignment decide, and GlobalAlloc's contract hands `dealloc` and `realloc` the layout
// the block was made with. Mappings are page-aligned, which covers every alignment `mapped`
// accepts, and zeroed, which `alloc_zeroed` relies on.
unsafe impl GlobalAlloc for LargeMapped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mapped(&layout) {
            // SAFETY: a mapped layout is at least LARGE bytes, so non-zero.
            map(layout.size())
        } else {
            // SAFETY: the caller's layout (non-zero size, GlobalAlloc's contract), passed on.
            System.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mapped(&layout) {
            // SAFETY: as in `alloc`; fresh anonymous pages are zero.
            map(layout.size())
        } else {
            // SAFETY: as in `alloc`.
            System.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mapped(&layout) {
            // SAFETY: `ptr` came from `map` with this size (the same layout is mapped both
            // times), and the caller gives it up.
            munmap(ptr.cast(), layout.size());
        } else {
            // SAFETY: `ptr` came from the system allocator with this layout.
            System.dealloc(ptr, layout);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: GlobalAlloc's contract: `new_size` is non-zero and, rounded up to the
        // alignment, does not overflow isize.
        let new = Layout::from_size_align_unchecked(new_size, layout.align());
        match (mapped(&layout), mapped(&new)) {
            // SAFETY: a system block, and it stays one.
            (false, false) => System.realloc(ptr, layout, new_size),
            (true, true) => {
                // SAFETY: `ptr` is a mapping of `layout.size()` bytes made by `map`; MAYMOVE
                // lets the kernel move its pages, and on failure the old mapping is untouched
                // (still the caller's, as GlobalAlloc requires when null is returned).
                let p = mremap(ptr.cast(), layout.size(), new_size, MREMAP_MAYMOVE);
                if p == MAP_FAILED {
                    std::ptr::null_mut()
                } else {
                    p.cast()
                }
            }
            _ => {
                // Across the threshold: a new block of the other kind, then the old one freed.
                // SAFETY: `new` is a valid layout (above); the old block is freed only once
                // its bytes are copied into the new one, two distinct live blocks.
                let p = self.alloc(new);
                if !p.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                p
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_on_both_sides_of_the_threshold_keep_their_bytes() {
        let a = LargeMapped;
        // SAFETY: each block is used within its size and freed once, with the layout it was
        // made (or last reallocated) with.
        unsafe {
            let small = Layout::from_size_align(1000, 8).unwrap();
            let p = a.alloc(small);
            for i in 0..1000 {
                *p.add(i) = i as u8;
            }
            // small -> large -> larger -> small, the bytes kept at each step
            let p = a.realloc(p, small, LARGE + 10);
            let large = Layout::from_size_align(LARGE + 10, 8).unwrap();
            *p.add(LARGE + 9) = 7;
            let p = a.realloc(p, large, 3 * LARGE);
            let larger = Layout::from_size_align(3 * LARGE, 8).unwrap();
            assert!((0..1000).all(|i| *p.add(i) == i as u8));
            assert_eq!(*p.add(LARGE + 9), 7);
            let p = a.realloc(p, larger, 500);
            assert!((0..500).all(|i| *p.add(i) == i as u8));
            a.dealloc(p, Layout::from_size_align(500, 8).unwrap());
            let z = a.alloc_zeroed(larger);
            assert!(!z.is_null() && *z == 0 && *z.add(3 * LARGE - 1) == 0);
            a.dealloc(z, larger);
        }
    }

    #[test]
    fn alignments_above_a_page_and_failed_mappings() {
        let a = LargeMapped;
        // SAFETY: as above; null results are never used or freed.
        unsafe {
            // A mapping is only page-aligned: a larger alignment must go to the system allocator.
            let wide = Layout::from_size_align(LARGE, 2 * PAGE * 16).unwrap();
            assert!(!mapped(&wide));
            let p = a.alloc(wide);
            assert!(!p.is_null() && p as usize % wide.align() == 0);
            a.dealloc(p, wide);
            let large = Layout::from_size_align(LARGE, PAGE).unwrap();
            let p = a.alloc(large);
            assert!(!p.is_null() && p as usize % PAGE == 0);
            a.dealloc(p, large);
            // More than the address space: null, not MAP_FAILED passed off as a pointer.
            let impossible = Layout::from_size_align(1 << 50, 8).unwrap();
            assert!(a.alloc(impossible).is_null());
            assert!(a.alloc_zeroed(impossible).is_null());
            let p = a.alloc(large);
            assert!(a.realloc(p, large, 1 << 50).is_null());
            a.dealloc(p, large); // a failed realloc leaves the block the caller's
        }
    }
}
