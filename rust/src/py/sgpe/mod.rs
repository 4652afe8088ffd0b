//! Python types for syllables, routing, words and SGPE encoding: `Automaton`, `Router`,
//! `WordSplitter`, `SGPEEncoder`. Tables come in once (built by `wwho.schema`,
//! `wwho.sgpe.tokenizer`); text comes in as `str` and is read in its own storage.
//!
//! Each class is in a module of its own (one `#[pymethods]` block cannot span files):
//! `Automaton` and the free functions that hand tokens back in `syllables`, `Router` and
//! `WordSplitter` in `words`, `SGPEEncoder` in `encoder`. This module holds the registration of
//! the area.

mod encoder;
mod syllables;
mod words;

pub use encoder::PyEncoder;
use pyo3::prelude::*;
pub use syllables::PyAutomaton;
pub use words::{PyRouter, PyWordSplitter};

/// Texts longer than this release the GIL while they are encoded.
const DETACH_ABOVE: usize = 4096;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyAutomaton>()?;
    m.add_class::<PyRouter>()?;
    m.add_class::<PyWordSplitter>()?;
    m.add_class::<PyEncoder>()?;
    Ok(())
}
