//! The Python bindings (`wwho._core`): PyO3 types and conversions, and nothing else.
//!
//! One file per area, each with a `register` function; errors become `ValueError`s whose
//! messages the Python layer re-raises as typed `wwho` errors.

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", crate::VERSION)?;
    Ok(())
}
