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

/// See the module docs.
pub struct LargeMapped;

#[inline]
fn mapped(layout: &Layout) -> bool {
    layout.size() >= LARGE && layout.align() <= PAGE
}

unsafe fn map(size: usize) -> *mut u8 {
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
        madvise(p, size, MADV_HUGEPAGE);
    }
    p.cast()
}

unsafe impl GlobalAlloc for LargeMapped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mapped(&layout) {
            map(layout.size())
        } else {
            System.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mapped(&layout) {
            map(layout.size()) // fresh anonymous pages are zero
        } else {
            System.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mapped(&layout) {
            munmap(ptr.cast(), layout.size());
        } else {
            System.dealloc(ptr, layout);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = Layout::from_size_align_unchecked(new_size, layout.align());
        match (mapped(&layout), mapped(&new)) {
            (false, false) => System.realloc(ptr, layout, new_size),
            (true, true) => {
                let p = mremap(ptr.cast(), layout.size(), new_size, MREMAP_MAYMOVE);
                if p == MAP_FAILED {
                    std::ptr::null_mut()
                } else {
                    p.cast()
                }
            }
            _ => {
                // Across the threshold: a new block of the other kind, then the old one freed.
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
}
