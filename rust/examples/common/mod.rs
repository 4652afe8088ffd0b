//! What the core's timing examples share.

use wwho_core::bytelevel::{ByteLevel, Model};
use wwho_core::pretokenize::named::O200K;

/// o200k_base from its parsed `ranks`, with its two special tokens and a piece cache of
/// `cache_bytes` (0: neither the cache nor the thread's memo).
pub fn o200k(ranks: &[(Vec<u8>, u32)], cache_bytes: usize) -> ByteLevel {
    let model = Model {
        ranks: ranks.iter().map(|(b, i)| (b.as_slice(), *i)).collect(),
        special_tokens: vec![("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)],
        patterns: vec![O200K],
        cache_bytes,
        ..Model::default()
    };
    ByteLevel::new(&model).expect("a valid model")
}

/// Seconds of CPU time this thread has used: the machine is shared, so wall time would count
/// other processes' turns.
pub fn cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
