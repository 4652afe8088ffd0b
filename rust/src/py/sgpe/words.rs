//! `Router` (a text's script runs) and `WordSplitter` (words of syllables for one script mode)
//! for Python: their tables taken in once, a text's runs, words and tokens handed back as Python
//! objects. Conversions only: the routing and splitting are the core's (`crate::router`,
//! `crate::words`).

use super::syllables::{joined_bytes, token_ends, tokens_of, PyAutomaton};
use crate::charset::Ranges;
use crate::memory;
use crate::py::errors::{guard, no_memory, raise};
use crate::py::text::{substrings, text};
use crate::router::Router;
use crate::with_text;
use crate::words::{Parts, WordSplitter};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

/// The script runs of a text (`wwho.router.segment`).
#[pyclass(frozen, module = "wwho._core", name = "Router")]
pub struct PyRouter {
    pub(in crate::py) inner: Router,
}

#[pymethods]
impl PyRouter {
    /// `scripts[i] = (block ranges, continuation ranges)`, in priority order.
    #[new]
    fn new(py: Python<'_>, scripts: Vec<(Ranges, Ranges)>) -> PyResult<Self> {
        Ok(Self {
            inner: Router::new(&scripts).map_err(|e| raise(py, e))?,
        })
    }

    /// `(start, end, script, has_leading_space)` per run; `start` is after the leading space;
    /// `script` is the script's index, or -1 for everything else.
    fn segment(&self, s: &Bound<'_, PyString>) -> PyResult<Vec<(usize, usize, i64, bool)>> {
        let t = text(s)?;
        let mut runs = Vec::new();
        guard(
            "routing",
            || with_text!(t, t => self.inner.segment(t, &mut runs)),
        )
        .map_err(|e| raise(s.py(), e))?;
        Ok(runs
            .iter()
            .map(|r| {
                let start = if r.leading { r.start + 1 } else { r.start };
                (start, r.end, r.script.map_or(-1, |s| s as i64), r.leading)
            })
            .collect())
    }
}

/// Words of syllables for one script mode (`wwho.sgpe.words.WordSplitter`).
#[pyclass(frozen, module = "wwho._core", name = "WordSplitter")]
pub struct PyWordSplitter {
    pub(in crate::py) inner: WordSplitter,
}

#[pymethods]
impl PyWordSplitter {
    /// `starts`, `attach`: code point ranges; `automata`: one per script, in the router's order;
    /// `router`: `None` for a single script.
    #[new]
    #[pyo3(signature = (starts, attach, automata, router=None))]
    fn new(
        py: Python<'_>,
        starts: Ranges,
        attach: Ranges,
        automata: Vec<PyRef<'_, PyAutomaton>>,
        router: Option<PyRef<'_, PyRouter>>,
    ) -> PyResult<Self> {
        let automata = automata.iter().map(|a| a.inner.clone()).collect();
        let router = router.map(|r| r.inner.clone());
        let inner =
            WordSplitter::new(&starts, &attach, automata, router).map_err(|e| raise(py, e))?;
        Ok(Self { inner })
    }

    /// `(is_word, tokens)` for each word and boundary token of `text`.
    fn split<'py>(&self, s: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyList>> {
        let t = text(s)?;
        let mut parts = Parts::default();
        memory::reserve(&mut parts.ends, t.len() + 1).map_err(no_memory)?;
        memory::reserve(&mut parts.parts, t.len() + 1).map_err(no_memory)?;
        guard(
            "splitting words",
            || with_text!(t, t => self.inner.split(t, &mut parts)),
        )
        .map_err(|e| raise(s.py(), e))?;
        let py = s.py();
        let mut first = 0;
        let items = parts
            .parts
            .iter()
            .map(|&(last, is_word)| {
                let start = if first == 0 { 0 } else { parts.ends[first - 1] };
                let tokens = substrings(s, start, &parts.ends[first..last])?;
                first = last;
                PyTuple::new(
                    py,
                    [
                        is_word.into_pyobject(py)?.to_owned().into_any(),
                        tokens.into_any(),
                    ],
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Every token of `text` (see `WordSplitter::tokens`), as strings.
    fn tokenize<'py>(
        &self,
        s: &Bound<'py, PyString>,
        leading_space: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        tokens_of(s, &token_ends(&self.inner, s, leading_space)?)
    }

    /// `sep.join(tokenize(text, leading_space))` as UTF-8 bytes, as `Automaton.joined` makes it.
    fn joined<'py>(
        &self,
        s: &Bound<'py, PyString>,
        leading_space: bool,
        sep: &str,
        lines: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        joined_bytes(&self.inner, s, leading_space, sep, lines)
    }

    /// The syllable-level tokens of `text` taken as one word (leading-space mode).
    fn syllables<'py>(&self, s: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyList>> {
        let t = text(s)?;
        let mut ends = Vec::new();
        memory::reserve(&mut ends, t.len() + 1).map_err(no_memory)?;
        guard(
            "syllabifying",
            || with_text!(t, t => self.inner.syllables(t, 0, t.len(), &mut ends)),
        )
        .map_err(|e| raise(s.py(), e))?;
        tokens_of(s, &ends)
    }
}
