//! `Automaton`, a schema's syllables for Python, and the free functions that hand any
//! [`Tokens`]' cut of a `str` back as strings or as joined UTF-8 bytes (shared with
//! `WordSplitter`), a long text's walk without the GIL. Conversions only: the automaton and the
//! joining are the core's (`crate::schema`, `crate::syllables`).

use super::DETACH_ABOVE;
use crate::charset::Ranges;
use crate::graphemes::Graphemes;
use crate::memory;
use crate::py::errors::{guard, no_memory, raise};
use crate::py::text::{substrings, text};
use crate::schema::Automaton;
use crate::syllables::{joined, Tokens};
use crate::with_text;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

/// `run`, a walk of the automaton over a text of `len` code units, without the GIL when the
/// text is long; a panic becomes the core's Python error.
fn syllabifying<T: Send>(
    py: Python<'_>,
    len: usize,
    run: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    if len > DETACH_ABOVE {
        py.detach(|| guard("syllabifying", run))
    } else {
        guard("syllabifying", run)
    }
    .map_err(|e| raise(py, e))
}

/// A schema's automaton (`wwho.schema.Schema` compiled; see `docs/schemas.md`).
#[pyclass(frozen, module = "wwho._core", name = "Automaton")]
pub struct PyAutomaton {
    pub(super) inner: Automaton,
}

#[pymethods]
impl PyAutomaton {
    /// `graphemes`: `(first, last, value)` ranges of `wwho.graphemes.property_ranges()` when the
    /// schema keeps extended grapheme clusters whole, else `None`.
    #[new]
    #[pyo3(signature = (classes, transitions, start, accept, emit, *, graphemes=None))]
    fn new(
        py: Python<'_>,
        classes: Vec<Ranges>,
        transitions: Vec<Vec<(usize, usize)>>,
        start: usize,
        accept: Vec<usize>,
        emit: Vec<usize>,
        graphemes: Option<Vec<(u32, u32, u8)>>,
    ) -> PyResult<Self> {
        let mut inner = Automaton::new(&classes, &transitions, start, &accept, &emit)
            .map_err(|e| raise(py, e))?;
        if let Some(ranges) = graphemes {
            let table = Graphemes::new(&ranges).map_err(|e| raise(py, e))?;
            inner = inner.with_graphemes(table);
        }
        Ok(Self { inner })
    }

    /// The syllables of `text` (and the single characters between them), as strings.
    fn tokenize<'py>(
        &self,
        s: &Bound<'py, PyString>,
        leading_space: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        tokens_of(s, &token_ends(&self.inner, s, leading_space)?)
    }

    /// `sep.join(tokenize(text, leading_space))` as UTF-8 bytes, without a string object per token
    /// (a lone surrogate in its 3-byte form); with `lines`, each line alone, the line ends kept
    /// (what `wwho syllabify` prints for a block of its input). Long texts without the GIL.
    fn joined<'py>(
        &self,
        s: &Bound<'py, PyString>,
        leading_space: bool,
        sep: &str,
        lines: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        joined_bytes(&self.inner, s, leading_space, sep, lines)
    }
}

/// The end of every token of `s` as `tokens` cuts it (long texts without the GIL).
pub(super) fn token_ends<T: Tokens + Sync>(
    tokens: &T,
    s: &Bound<'_, PyString>,
    leading_space: bool,
) -> PyResult<Vec<usize>> {
    let t = text(s)?;
    let mut ends = Vec::new();
    memory::reserve(&mut ends, t.len() + 1).map_err(no_memory)?; // (a token is a character at least)
    syllabifying(
        s.py(),
        t.len(),
        || with_text!(t, t => tokens.token_ends(t, leading_space, &mut ends)),
    )?;
    Ok(ends)
}

/// The tokens of `s` joined by `sep`, as UTF-8 bytes (`crate::syllables::joined`; long texts
/// without the GIL).
pub(super) fn joined_bytes<'py, T: Tokens + Sync>(
    tokens: &T,
    s: &Bound<'py, PyString>,
    leading_space: bool,
    sep: &str,
    lines: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let t = text(s)?;
    let mut out = Vec::new();
    syllabifying(
        s.py(),
        t.len(),
        || with_text!(t, t => joined(tokens, t, leading_space, lines, sep.as_bytes(), &mut out)),
    )?
    .map_err(no_memory)?;
    crate::py::errors::py_bytes(s.py(), &out)
}

/// The strings `s[ends[i-1]:ends[i]]`.
pub(super) fn tokens_of<'py>(
    s: &Bound<'py, PyString>,
    ends: &[usize],
) -> PyResult<Bound<'py, PyList>> {
    substrings(s, 0, ends)
}
