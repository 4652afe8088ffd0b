//! `GrowingMerges` for Python: `wwho extend`'s merge table that grows and is cut back.

use crate::growing::GrowingMerges;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

#[pyclass(module = "wwho._core", name = "GrowingMerges")]
pub struct PyGrowingMerges {
    inner: GrowingMerges,
}

#[pymethods]
impl PyGrowingMerges {
    #[new]
    fn new() -> Self {
        PyGrowingMerges {
            inner: GrowingMerges::new(),
        }
    }

    /// Append the merge `(a, b)` with the next rank; False if it is there already.
    fn push(&mut self, a: &[u8], b: &[u8]) -> bool {
        self.inner.push(a, b)
    }

    /// Forget every merge from rank `n` on.
    fn truncate(&mut self, n: usize) {
        self.inner.truncate(n);
    }

    /// The pieces the merges make of `data`, as bytes.
    fn apply<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            self.inner
                .apply(data)
                .into_iter()
                .map(|p| PyBytes::new(py, p)),
        )
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGrowingMerges>()
}
