//! The Python bindings (`wwho._core`): PyO3 types and conversions, and nothing else.
//!
//! One file per area, each with a `register` function; errors are raised as wwho's own typed
//! exceptions (`errors`), and a panic inside a core call becomes one too.

use pyo3::prelude::*;

mod errors;
mod sgpe;
mod text;
mod train;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", crate::VERSION)?;
    sgpe::register(m)?;
    train::register(m)?;
    Ok(())
}
