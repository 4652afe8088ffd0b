//! `_core.Pretokenizer`: the pre-tokenizer's regexes on their own, for `wwho.bytelevel`'s
//! pre-tokenizer class and the piece counter. It does not encode.

use super::exceptions::{guard, regex_err};
use crate::pretokenize::general::RegexError;
use crate::pretokenize::Pretokenizer as CorePretokenizer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

#[pyclass(frozen, module = "wwho._core")]
pub struct Pretokenizer {
    pub(crate) inner: CorePretokenizer,
}

#[pymethods]
impl Pretokenizer {
    #[new]
    fn new(patterns: Vec<String>, byte_patterns: Vec<String>) -> PyResult<Self> {
        let inner = guard(|| CorePretokenizer::new(&patterns, &byte_patterns).map_err(regex_err))?;
        Ok(Pretokenizer { inner })
    }

    /// The pieces of `text` after the text regexes.
    fn split<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        let s = text.to_str()?;
        let spans = guard(|| py.detach(|| self.inner.split(s)).map_err(regex_err))?;
        PyList::new(py, spans.into_iter().map(|(a, b)| &s[a..b]))
    }

    /// The UTF-8 pieces of `text` after the whole pipeline, byte stage included.
    fn split_bytes<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        let s = text.to_str()?;
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        guard(|| {
            self.inner
                .for_each_piece::<RegexError>(s, &mut |p: &[u8]| {
                    pieces.push(p.to_vec());
                    Ok(())
                })
                .map_err(regex_err)
        })?;
        PyList::new(py, pieces.iter().map(|p| PyBytes::new(py, p)))
    }

    /// How each regex runs: a named scanner (`o200k`, `cl100k` ...), `regex` or `fancy-regex`.
    fn stage_kinds(&self) -> Vec<String> {
        self.inner.stage_kinds()
    }
}
