//! Each encoding thread's reusable buffers (pieces' words and syllables, units, a superword
//! span, the text with its dummy space), kept between calls unless one grew past a bound, and
//! fresh ones where the thread's are in use. It does not encode.

use crate::memory::{self, NoMemory};
use crate::words::Parts;

/// Reusable buffers of one encoding thread.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) parts: Parts,
    pub(super) spans: Vec<usize>,
    pub(super) units: Vec<u32>,
    pub(super) utf8: Vec<u8>,
    /// The units of one superword span.
    pub(super) span: Vec<u32>,
    /// The positions in a span where two pieces meet and a merge applies.
    pub(super) seeds: Vec<usize>,
    /// The text with its dummy space (`prefix_space`).
    pub(super) prefixed: Vec<u32>,
}

impl Scratch {
    /// Buffers kept between calls stay below this many entries each (a huge piece once
    /// must not pin its buffers for the thread's life).
    const KEEP: usize = 1 << 16;

    fn trim(&mut self) {
        if self.parts.ends.capacity() > Self::KEEP || self.parts.parts.capacity() > Self::KEEP {
            self.parts = Parts::default();
        }
        if self.spans.capacity() > Self::KEEP || self.units.capacity() > Self::KEEP {
            self.spans = Vec::new();
            self.units = Vec::new();
        }
        if self.span.capacity() > Self::KEEP || self.prefixed.capacity() > Self::KEEP {
            self.span = Vec::new();
            self.prefixed = Vec::new();
        }
        if self.seeds.capacity() > Self::KEEP {
            self.seeds = Vec::new();
        }
    }
}

/// `units` appended to `out`; the vectors swapped instead where `out` is empty (a text of one
/// long piece then holds its ids once, not twice).
pub(super) fn hand_over(units: &mut Vec<u32>, out: &mut Vec<u32>) -> Result<(), NoMemory> {
    if out.is_empty() && units.len() > Scratch::KEEP {
        std::mem::swap(units, out);
        return Ok(());
    }
    memory::extend(out, units)
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Run `f` with this thread's scratch buffers (fresh ones if they are in use).
pub(super) fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => {
            let out = f(&mut scratch);
            scratch.trim();
            out
        }
        Err(_) => f(&mut Scratch::default()),
    })
}
