//! The Python bindings (`wwho._core`): PyO3 types and conversions, and nothing else.
//!
//! One file per area, each with a `register` function; errors are raised as wwho's own typed
//! exceptions (`errors`), and a panic inside a core call becomes one too.

use pyo3::prelude::*;

mod batch;
mod bytelevel;
mod counting;
mod engine;
mod errors;
mod gguf;
mod growing;
mod ints;
mod meta;
mod sgpe;
mod text;
mod training;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", crate::VERSION)?;
    sgpe::register(m)?;
    engine::register(m)?;
    counting::register(m)?;
    training::register(m)?;
    bytelevel::register(m)?;
    gguf::register(m)?;
    meta::register(m)?;
    growing::register(m)?;
    Ok(())
}
