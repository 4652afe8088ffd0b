//! TEMPORARY (A/B of the speed devices, issue 28): `WWHO_AB_OFF=name,name` turns devices off.
//! Read with `getenv` (no allocation: the allocator asks too), once per process.

use std::sync::atomic::{AtomicU32, Ordering};

pub const ALLOC: u32 = 1;
pub const HUGE: u32 = 2;
pub const HOT: u32 = 4;
pub const BLOOM: u32 = 8;
pub const PREFETCH: u32 = 16;
pub const POOLS: u32 = 32;
pub const INTS: u32 = 64;
pub const PAIRMEMO: u32 = 128;

static STATE: AtomicU32 = AtomicU32::new(u32::MAX);

#[inline(always)]
pub fn off(device: u32) -> bool {
    let s = STATE.load(Ordering::Relaxed);
    let s = if s == u32::MAX { init() } else { s };
    s & device != 0
}

#[cold]
fn init() -> u32 {
    let mut s = 0;
    // SAFETY: getenv returns null or a NUL-terminated string that we only read at once.
    unsafe {
        let p = libc::getenv(c"WWHO_AB_OFF".as_ptr());
        if !p.is_null() {
            let bytes = std::ffi::CStr::from_ptr(p).to_bytes();
            for name in bytes.split(|&b| b == b',') {
                s |= match name {
                    b"alloc" => ALLOC,
                    b"huge" => HUGE,
                    b"hot" => HOT,
                    b"bloom" => BLOOM,
                    b"prefetch" => PREFETCH,
                    b"pools" => POOLS,
                    b"ints" => INTS,
                    b"pairmemo" => PAIRMEMO,
                    _ => 0,
                };
            }
        }
    }
    STATE.store(s, Ordering::Relaxed);
    s
}
