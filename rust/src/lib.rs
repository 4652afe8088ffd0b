//! wwho's compiled core: the hot paths of the `wwho` Python package.
//!
//! Plain Rust, one module per concept, mirroring the Python modules. Only `py` (behind the
//! `python` feature) knows Python: everything else is reachable from `cargo test`, `cargo bench`
//! and `cargo fuzz` without an interpreter. Python hands the core compiled tables once (rank
//! maps, merge lists, schema automata, regex patterns), then strings or bytes in, ids out.

#[cfg(target_os = "linux")]
pub mod alloc;
pub mod bytelevel;
pub mod huge;
pub mod memory;
pub mod merge;
pub mod meta;
pub mod pretokenize;

// SGPE: schemas, syllables, words, encoding; counting and the merge engine for training.
pub mod batch;
pub mod charset;
pub mod counting;
pub mod engine;
pub mod errors;
pub mod fork;
pub mod graphemes;
pub mod growing;
pub mod router;
pub mod schema;
pub mod sgpe;
pub mod spans;
pub mod superwords;
pub mod syllables;
pub mod training;
pub mod units;
pub mod utf8;
pub mod vocab;
pub mod words;

#[cfg(feature = "python")]
mod py;

// The extension's allocator (see `alloc`): large blocks go back to the kernel when freed.
#[cfg(all(feature = "python", target_os = "linux"))]
#[global_allocator]
static ALLOCATOR: alloc::LargeMapped = alloc::LargeMapped;

/// The version of this crate, which the Python package checks at import.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
