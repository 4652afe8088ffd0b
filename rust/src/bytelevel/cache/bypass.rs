//! [`Bypass`]: when one text leaves the piece cache alone, a stretch of pieces at a time, because
//! its lookups keep missing. It never changes a result, and does not look at the cache itself
//! (the encoder reports each hit).

/// Pieces per look at the cache's hit rate.
pub(super) const WINDOW: u32 = 1024;
/// Fewer hits than this in a window: the text is not repeating itself (random bytes, a long
/// run of new words), and probing and filling the cache only costs, so it is left alone for
/// the next [`REST`] pieces, then tried again.
const FEW_HITS: u32 = WINDOW / 4;
pub(super) const REST: u32 = 8 * WINDOW;

/// When to leave the cache alone during one text: it never changes a result, only what a
/// piece costs.
#[derive(Default)]
pub struct Bypass {
    probes: u32,
    hits: u32,
    rest: u32,
}

impl Bypass {
    /// Whether to skip the cache for this piece (counted as a probe otherwise).
    #[inline(always)]
    pub fn skip(&mut self) -> bool {
        if self.rest > 0 {
            self.rest -= 1;
            return true;
        }
        self.probes += 1;
        if self.probes == WINDOW {
            if self.hits < FEW_HITS {
                self.rest = REST;
            }
            (self.probes, self.hits) = (0, 0);
        }
        false
    }

    #[inline(always)]
    pub fn hit(&mut self) {
        self.hits += 1;
    }
}
