//! Python type of the meta tokenizer's encoder: `_core.MetaEncoder` (`wwho.meta.MetaTokenizer`
//! builds it; see `crate::meta`). Tables come in once: the SGPE part's as `SGPEEncoder` takes
//! them, the byte-level part's (tiktoken's ranks) as `ByteLevel` takes them, the special tokens
//! with their unified ids. Text comes in as `str`, read in its own storage.

use super::batch::{encode_flat, encode_texts_into, ids_array_from, thread_count};
use super::errors::{error, guard, no_memory_at, raise, Kind};
use super::ints::{decode_plain, with_ids, IdInts};
use super::sgpe::{PyEncoder, PyRouter};
use super::text::{code_points, text};
use crate::bytelevel::{ByteLevel, Error as ByteError, Model};
use crate::meta::{DecodeError, Error, Meta, Special};
use crate::units::Text;
use crate::with_text;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString};
use std::sync::Arc;

/// Texts longer than this release the GIL while they are encoded.
const DETACH_ABOVE: usize = 2048;

#[pyclass(frozen, module = "wwho._core", name = "MetaEncoder")]
pub struct PyMeta {
    inner: Meta,
    ints: IdInts,
}

#[pymethods]
impl PyMeta {
    /// The SGPE part: `sgpe`, the `SGPEEncoder` of the vocabulary (shared, not copied; no dummy
    /// space); `router`: its scripts' runs. The byte-level part: `ranks` (bytes -> id), its
    /// pre-tokenizer `patterns` and `byte_patterns`, its `byte_specials` (str -> id, for decoding),
    /// `cache_bytes`. `offset`: the first SGPE id; `specials`: `(text, unified id)` of every
    /// special token; `defaults`: the indices of those disallowed when the caller names none.
    #[new]
    #[pyo3(signature = (sgpe, *, router, ranks, patterns, byte_patterns, byte_specials, cache_bytes,
                        offset, specials, defaults))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        sgpe: PyRef<'_, PyEncoder>,
        router: PyRef<'_, PyRouter>,
        ranks: &Bound<'_, PyDict>,
        patterns: Vec<String>,
        byte_patterns: Vec<String>,
        byte_specials: Vec<(String, u32)>,
        cache_bytes: usize,
        offset: u32,
        specials: Vec<(Bound<'_, PyString>, u32)>,
        defaults: Vec<usize>,
    ) -> PyResult<Self> {
        let vocab_err = |e: String| error(py, Kind::Vocab, e);
        let sgpe = Arc::clone(&sgpe.inner);

        let mut rank_items: Vec<(Bound<'_, PyBytes>, u32)> = Vec::with_capacity(ranks.len());
        for (key, value) in ranks.iter() {
            let bytes = key
                .cast_into::<PyBytes>()
                .map_err(|_| vocab_err("ranks: every token must be bytes".into()))?;
            let id: u32 = value
                .extract()
                .map_err(|_| vocab_err("ranks: every id must be an int below 2**32".into()))?;
            rank_items.push((bytes, id));
        }
        let model = Model {
            ranks: rank_items.iter().map(|(b, i)| (b.as_bytes(), *i)).collect(),
            merges: None,
            ignore_merges: true,
            special_tokens: byte_specials
                .iter()
                .map(|(s, i)| (s.as_str(), *i))
                .collect(),
            patterns: patterns.iter().map(String::as_str).collect(),
            byte_patterns: byte_patterns.iter().map(String::as_str).collect(),
            cache_bytes,
            ..Model::default()
        };
        let bytes = guard("building the byte-level part", || {
            py.detach(|| ByteLevel::new(&model))
        })
        .map_err(|panic| vocab_err(panic.to_string()))?
        .map_err(|e| vocab_err(e.to_string()))?;

        let specials = specials
            .iter()
            .map(|(s, id)| {
                Ok(Special {
                    text: code_points(s)?,
                    id: *id,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let inner = Meta::new(
            sgpe,
            router.inner.clone(),
            Arc::new(bytes),
            offset,
            specials,
            defaults,
        )
        .map_err(|e| raise(py, e))?;
        let ints = IdInts::new(inner.size())?;
        Ok(Self { inner, ints })
    }

    /// The ids of `text`; the text of tiktoken's special tokens is an error.
    fn encode<'py>(&self, s: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyList>> {
        let meta = &self.inner;
        self.one(s, |t, out| with_text!(t, t => meta.encode_into(t, out)))
    }

    /// The ids of `text`, every special token's text ordinary.
    fn encode_ordinary<'py>(&self, s: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyList>> {
        let meta = &self.inner;
        self.one(
            s,
            |t, out| with_text!(t, t => meta.encode_ordinary_into(t, out)),
        )
    }

    /// The ids of `text` with the specials `allowed` (indices) as their ids and the text of those
    /// `disallowed` an error.
    fn encode_with<'py>(
        &self,
        s: &Bound<'py, PyString>,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        with_ids(|ids| {
            self.ids_with(s, &allowed, &disallowed, ids)?;
            self.ints.list(s.py(), ids)
        })
    }

    /// [`encode_with`] as a numpy `uint32` array (see `batch::ids_array_from`): no int per id, no
    /// list; `allowed`/`disallowed` None: [`encode`]'s defaults.
    #[pyo3(signature = (s, allowed=None, disallowed=None))]
    fn encode_array<'py>(
        &self,
        s: &Bound<'py, PyString>,
        allowed: Option<Vec<usize>>,
        disallowed: Option<Vec<usize>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let meta = &self.inner;
        with_ids(|ids| {
            match (allowed, disallowed) {
                (Some(allowed), Some(disallowed)) => {
                    self.ids_with(s, &allowed, &disallowed, ids)?
                }
                _ => self.ids(
                    s,
                    |t, out| with_text!(t, t => meta.encode_into(t, out)),
                    ids,
                )?,
            }
            ids_array_from(s.py(), ids)
        })
    }

    /// [`encode_with`] for each text (`allowed`/`disallowed` None: the defaults of `encode`), on
    /// `num_threads` threads (all cores when 0) without the GIL; the first failing text (in
    /// order) raises its error.
    #[pyo3(signature = (texts, allowed=None, disallowed=None, num_threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed: Option<Vec<usize>>,
        disallowed: Option<Vec<usize>>,
        num_threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        self.batch(py, &texts, allowed, disallowed, |views, work| {
            let ids_of =
                |py: Python<'_>, ids: &[u32]| Ok(self.ints.list(py, ids)?.into_any().unbind());
            let threads = thread_count(Some(num_threads));
            encode_texts_into(py, views, threads, work, ids_of, |py, at, e| {
                self.batch_error(py, at, e)
            })
        })
    }

    /// [`encode_batch`](Self::encode_batch) as one array: `(ids, offsets)`, two `bytearray`s of
    /// native-endian `u32` ids and `len(texts) + 1` `i64` starts (see `batch::encode_flat`).
    #[pyo3(signature = (texts, allowed=None, disallowed=None, num_threads=0))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed: Option<Vec<usize>>,
        disallowed: Option<Vec<usize>>,
        num_threads: usize,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        self.batch(py, &texts, allowed, disallowed, |views, work| {
            let threads = thread_count(Some(num_threads));
            encode_flat(py, views, threads, work, |py, at, e| {
                self.batch_error(py, at, e)
            })
        })
    }

    /// The bytes of `ids` if it is a list of plain ints that all have a token, else None: the
    /// Python layer then checks the ids and names the first bad one.
    fn decode_plain<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        guard("decoding", || {
            decode_plain(py, ids, |ids| self.inner.decode(ids).ok())
        })
        .map_err(|e| raise(py, e))?
    }

    /// The bytes of `ids` joined; `(id, position)` of the first id with no token is a
    /// `TokenizerError` whose message names them.
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let data = self.inner.decode(&ids).map_err(|e| match e {
            DecodeError::Unknown(bad) => error(
                py,
                Kind::Tokenizer,
                format!(
                    "token id {} at position {} has no token",
                    bad.id, bad.position
                ),
            ),
            DecodeError::NoMemory(e) => no_memory_at(e, None),
        })?;
        super::errors::py_bytes(py, &data)
    }

    /// The bytes of one token, None for an id with no token.
    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> Option<Bound<'py, PyBytes>> {
        self.inner.token_bytes(id).map(|b| PyBytes::new(py, b))
    }

    /// One past the largest id.
    #[getter]
    fn size(&self) -> u64 {
        self.inner.size()
    }

    /// (entries, bytes) held by the byte-level part's piece cache.
    fn cache_info(&self) -> (usize, usize) {
        (
            self.inner.bytes().cache().len(),
            self.inner.bytes().cache().bytes(),
        )
    }

    fn clear_cache(&self) {
        self.inner.bytes().clear_cache();
    }

    /// Bytes held by the SGPE part's tables (an estimate).
    fn sgpe_heap_bytes(&self) -> usize {
        self.inner.sgpe_heap_bytes()
    }
}

impl PyMeta {
    /// Encode one text; a long one without the GIL.
    fn one<'py>(
        &self,
        s: &Bound<'py, PyString>,
        f: impl Fn(Text<'_>, &mut Vec<u32>) -> Result<(), Error> + Send + Sync,
    ) -> PyResult<Bound<'py, PyList>> {
        with_ids(|ids| {
            self.ids(s, f, ids)?;
            self.ints.list(s.py(), ids)
        })
    }

    /// The ids of the text of `s` with the specials `allowed` (indices) as their ids and the text
    /// of those `disallowed` an error (see [`encode_with`]), appended to `ids`.
    fn ids_with(
        &self,
        s: &Bound<'_, PyString>,
        allowed: &[usize],
        disallowed: &[usize],
        ids: &mut Vec<u32>,
    ) -> PyResult<()> {
        self.check(s.py(), allowed)?;
        self.check(s.py(), disallowed)?;
        let meta = &self.inner;
        self.ids(
            s,
            |t, out| with_text!(t, t => meta.encode_onto(t, allowed, disallowed, out)),
            ids,
        )
    }

    /// `f` on the text of `s` and `ids` (without the GIL for a long text), its errors raised.
    fn ids(
        &self,
        s: &Bound<'_, PyString>,
        f: impl Fn(Text<'_>, &mut Vec<u32>) -> Result<(), Error> + Send + Sync,
        ids: &mut Vec<u32>,
    ) -> PyResult<()> {
        let py = s.py();
        let t = text(s)?;
        if t.len() > DETACH_ABOVE {
            py.detach(|| guard("encoding", || f(t, ids)))
        } else {
            guard("encoding", || f(t, ids))
        }
        .map_err(|e| error(py, Kind::Tokenizer, e))?
        .map_err(|e| self.error(py, e))
    }

    fn check(&self, py: Python<'_>, set: &[usize]) -> PyResult<()> {
        match set.iter().find(|&&i| i >= self.inner.specials().len()) {
            Some(i) => Err(error(
                py,
                Kind::Tokenizer,
                format!("{i} is not the index of a special token"),
            )),
            None => Ok(()),
        }
    }

    /// [`Self::error`] of the text at `at` in a batch: the message names it.
    fn batch_error(&self, py: Python<'_>, at: usize, e: Error) -> PyErr {
        self.error_at(py, e, Some(at))
    }

    fn error(&self, py: Python<'_>, e: Error) -> PyErr {
        self.error_at(py, e, None)
    }

    /// The error of a failed encoding (of the batch's text at `at`): special-token text the
    /// caller did not allow is a `wwho.errors.DisallowedSpecialError`, as on every other kind.
    fn error_at(&self, py: Python<'_>, e: Error, at: Option<usize>) -> PyErr {
        let made = match e {
            Error::Disallowed { index, offset } => {
                let special = &self.inner.specials()[index];
                super::text::from_code_points(py, &special.text).and_then(|token| {
                    py.import("wwho.errors")?
                        .getattr("DisallowedSpecialError")?
                        .call1((token, offset, at))
                })
            }
            Error::NoMemory(e) | Error::Bytes(ByteError::NoMemory(e)) => {
                return no_memory_at(e, at)
            }
            Error::Bytes(e) => {
                let Some(at) = at else {
                    return error(py, Kind::Tokenizer, e);
                };
                let err = error(py, Kind::Tokenizer, format!("texts[{at}]: {e}"));
                let _ = err.value(py).setattr("text_index", at);
                return err;
            }
        };
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(err) => err,
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMeta>()?;
    Ok(())
}

impl PyMeta {
    /// What both batch forms share: the specials checked, the texts' views, and the work per text
    /// (`encode_onto` with the defaults or the given specials: the ids appended to the chunk's
    /// vector), handed to `run`.
    fn batch<'py, T>(
        &self,
        py: Python<'py>,
        texts: &[Bound<'py, PyString>],
        allowed: Option<Vec<usize>>,
        disallowed: Option<Vec<usize>>,
        run: impl FnOnce(
            &[Text<'_>],
            &(dyn Fn(&Text<'_>, &mut Vec<u32>) -> Result<(), Error> + Sync),
        ) -> PyResult<T>,
    ) -> PyResult<T> {
        let defaults = allowed.is_none() && disallowed.is_none();
        let (allowed, disallowed) = (allowed.unwrap_or_default(), disallowed.unwrap_or_default());
        self.check(py, &allowed)?;
        self.check(py, &disallowed)?;
        let views = texts
            .iter()
            .map(text)
            .collect::<PyResult<Vec<Text<'_>>>>()?;
        let meta = &self.inner;
        let (allowed, disallowed) = if defaults {
            (&[][..], meta.defaults())
        } else {
            (&allowed[..], &disallowed[..])
        };
        let work = |t: &Text<'_>, out: &mut Vec<u32>| with_text!(*t, t => meta.encode_onto(t, allowed, disallowed, out));
        guard("encoding a batch", || run(&views, &work))
            .unwrap_or_else(|e| Err(error(py, Kind::Tokenizer, e)))
    }
}
