//! `SGPEEncoder` for Python: an SGPE vocabulary taken in once, a text's ids as a list or an
//! array, batches on threads without the GIL (plain, flat, routed by script), decoding checked
//! id by id with the Python decoder's messages. Conversions and error mapping only: encoding and
//! decoding are the core's (`crate::sgpe`).

use super::words::{PyRouter, PyWordSplitter};
use super::DETACH_ABOVE;
use crate::py::batch::{
    encode_flat, encode_texts, encode_texts_into, ids_array_from, thread_count,
};
use crate::py::errors::{error, guard, no_memory, no_memory_at, raise, Kind};
use crate::py::ints::{buffer_ids, with_ids, IdInts};
use crate::py::text::{code_points, text};
use crate::sgpe::{DecodeError, Encoder, EncoderSpec, Fallback, Routed, Scope};
use crate::units::Text;
use crate::with_text;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString, PyTuple};
use std::sync::Arc;

/// An SGPE encoder and decoder over one vocabulary (`wwho.sgpe.tokenizer.SGPETokenizer`).
#[pyclass(frozen, module = "wwho._core", name = "SGPEEncoder")]
pub struct PyEncoder {
    /// Shared with the meta encoder built over the same vocabulary (`MetaEncoder`).
    pub(in crate::py) inner: Arc<Encoder>,
    /// The Python ints of the ids, made on first use (a fresh int object per token would cost
    /// more than encoding the token).
    ints: IdInts,
}

#[pymethods]
impl PyEncoder {
    /// `tokens[i]`: the string of id `i`; `merges`: `(left, right, merged)` ids in rank order;
    /// `byte_ids`: the ids of `<0x00>`..`<0xFF>` (byte fallback) or `None` with `unk_id`;
    /// `prefix_space`: the dummy space; `superword_merges` (ranked after `merges`) with the
    /// sentence punctuation `span_breaks` that ends a span.
    #[new]
    #[pyo3(signature = (splitter, tokens, merges, *, byte_ids, unk_id, special_ids, scope="words",
                        prefix_space=false, superword_merges=Vec::new(), span_breaks=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        splitter: PyRef<'_, PyWordSplitter>,
        tokens: Vec<Bound<'_, PyString>>,
        merges: Vec<(u32, u32, u32)>,
        byte_ids: Option<Vec<u32>>,
        unk_id: Option<u32>,
        special_ids: Vec<u32>,
        scope: &str,
        prefix_space: bool,
        superword_merges: Vec<(u32, u32, u32)>,
        span_breaks: Option<Bound<'_, PyString>>,
    ) -> PyResult<Self> {
        let vocab_err = |e: String| error(py, Kind::Vocab, e);
        let fallback = match (byte_ids, unk_id) {
            (Some(ids), _) => Fallback::Bytes(Box::new(ids.try_into().map_err(|_| {
                vocab_err("byte fallback needs exactly 256 byte token ids".into())
            })?)),
            (None, Some(unk)) => Fallback::Unk(unk),
            (None, None) => return Err(vocab_err("either byte_ids or unk_id is needed".into())),
        };
        let tokens = tokens
            .iter()
            .map(code_points)
            .collect::<PyResult<Vec<_>>>()?;
        let spec = EncoderSpec {
            tokens,
            merges,
            fallback,
            special_ids,
            scope: Scope::parse(scope).map_err(|e| raise(py, e))?,
            prefix_space,
            superword_merges,
            span_breaks: span_breaks
                .as_ref()
                .map(code_points)
                .transpose()?
                .unwrap_or_default(),
        };
        let inner = Arc::new(Encoder::new(splitter.inner.clone(), spec).map_err(|e| raise(py, e))?);
        let ints = IdInts::new(inner.vocab_size() as u64)?;
        Ok(Self { inner, ints })
    }

    /// The ids of `text`; the text of the special tokens `allowed` (ids) becomes those tokens.
    #[pyo3(signature = (s, allowed=Vec::new()))]
    fn encode<'py>(
        &self,
        s: &Bound<'py, PyString>,
        allowed: Vec<u32>,
    ) -> PyResult<Bound<'py, PyList>> {
        with_ids(|ids| {
            self.ids_into(s, &allowed, ids)?;
            self.id_list(s.py(), ids)
        })
    }

    /// [`encode`] as a numpy `uint32` array (see `batch::ids_array_from`): no int per id, no list.
    #[pyo3(signature = (s, allowed=Vec::new()))]
    fn encode_array<'py>(
        &self,
        s: &Bound<'py, PyString>,
        allowed: Vec<u32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        with_ids(|ids| {
            self.ids_into(s, &allowed, ids)?;
            ids_array_from(s.py(), ids)
        })
    }

    /// [`encode`] for each text, on `num_threads` threads (all cores when 0) without the GIL.
    #[pyo3(signature = (texts, allowed=Vec::new(), num_threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed: Vec<u32>,
        num_threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check_allowed(py, &allowed)?;
        let views = views(&texts)?;
        let enc = &self.inner;
        let work = |t: &Text<'_>, out: &mut Vec<u32>| with_text!(*t, t => enc.encode_onto(t, &allowed, out));
        let ids_of = |py: Python<'_>, ids: &[u32]| Ok(self.id_list(py, ids)?.into_any().unbind());
        let threads = thread_count(Some(num_threads));
        batch_guard(py, || {
            encode_texts_into(py, &views, threads, work, ids_of, |_, at, e| {
                no_memory_at(e, Some(at))
            })
        })
    }

    /// [`encode_batch`](Self::encode_batch) as one array: `(ids, offsets)`, two `bytearray`s of
    /// native-endian `u32` ids and `len(texts) + 1` `i64` starts (see `batch::encode_flat`).
    #[pyo3(signature = (texts, allowed=Vec::new(), num_threads=0))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed: Vec<u32>,
        num_threads: usize,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        self.check_allowed(py, &allowed)?;
        let views = views(&texts)?;
        let enc = &self.inner;
        let work = |t: &Text<'_>, out: &mut Vec<u32>| with_text!(*t, t => enc.encode_onto(t, &allowed, out));
        let threads = thread_count(Some(num_threads));
        batch_guard(py, || {
            encode_flat(py, &views, threads, work, |_, at, e| {
                no_memory_at(e, Some(at))
            })
        })
    }

    /// For each text, its script runs (by `router`) encoded, and the spans between them: a list
    /// of items in text order, each a list of ids (a run, with the space before it) or a
    /// `(start, end)` tuple (text left to the caller). On `num_threads` threads, without the GIL.
    #[pyo3(signature = (texts, router, num_threads=0))]
    fn encode_routed_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        router: PyRef<'py, PyRouter>,
        num_threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let views = views(&texts)?;
        let (enc, router) = (&self.inner, &router.inner);
        let work = |t: &Text<'_>| {
            let mut out = Vec::new();
            with_text!(*t, t => enc.encode_routed(t, router, &mut out)).map(|()| out)
        };
        let row_of = |py: Python<'_>, items: Result<Vec<Routed>, _>| {
            let row = items
                .map_err(no_memory)?
                .iter()
                .map(|item| match item {
                    Routed::Run(ids) => Ok(self.id_list(py, ids)?.into_any()),
                    Routed::Other(start, end) => Ok(PyTuple::new(py, [*start, *end])?.into_any()),
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, row)?.into_any().unbind())
        };
        batch_guard(py, || {
            encode_texts(py, &views, thread_count(Some(num_threads)), work, row_of)
        })
    }

    /// The bytes of `ids`, joined; `skip_special` leaves out the special tokens.
    #[pyo3(signature = (ids, skip_special=false))]
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        skip_special: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let n = self.inner.vocab_size();
        let bad = |id: &Bound<'py, PyAny>| {
            let shown = id
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| "?".into());
            error(
                py,
                Kind::Tokenizer,
                format!("token id {shown} is out of range [0, {n})"),
            )
        };
        let mut values = Vec::new();
        // Sizes from the input, asked for with try_reserve: an abort otherwise (tests/test_allocation.py).
        let no_memory = |n: usize| {
            pyo3::exceptions::PyMemoryError::new_err(format!("cannot hold the {n} ids to decode"))
        };
        if let Some(block) = buffer_ids(ids) {
            values
                .try_reserve_exact(block.len())
                .map_err(|_| no_memory(block.len()))?;
            values.extend(block.into_iter().map(i64::from));
        } else {
            if let Ok(len) = ids.len() {
                values.try_reserve_exact(len).map_err(|_| no_memory(len))?;
            }
            for item in ids
                .try_iter()
                .map_err(|_| error(py, Kind::Tokenizer, "ids must be an iterable of ints"))?
            {
                let item = item?;
                // Exactly int (not bool, not float), as the Python decoder has always required.
                if !item.is_exact_instance_of::<pyo3::types::PyInt>() {
                    return Err(bad(&item));
                }
                values.push(item.extract::<i64>().map_err(|_| bad(&item))?);
            }
        }
        let bytes = self
            .inner
            .decode(&values, skip_special)
            .map_err(|e| match e {
                DecodeError::OutOfRange(id) => error(
                    py,
                    Kind::Tokenizer,
                    format!("token id {id} is out of range [0, {n})"),
                ),
                DecodeError::NoMemory(size) => pyo3::exceptions::PyMemoryError::new_err(format!(
                    "cannot hold the {size} bytes these ids decode to"
                )),
            })?;
        crate::py::errors::py_bytes(py, &bytes)
    }

    /// The bytes of one token (a byte-fallback token is its byte).
    fn token_bytes<'py>(&self, py: Python<'py>, id: i64) -> PyResult<Bound<'py, PyBytes>> {
        let n = self.inner.vocab_size();
        u32::try_from(id)
            .ok()
            .and_then(|id| self.inner.token_bytes(id))
            .map(|b| PyBytes::new(py, b))
            .ok_or_else(|| {
                error(
                    py,
                    Kind::Tokenizer,
                    format!("token id {id} is out of range [0, {n})"),
                )
            })
    }

    /// Bytes held by the encoder's tables (an estimate).
    fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
    }

    /// Seconds spent by stage on `text`: pieces and spans; + whole-piece lookups; + words,
    /// syllables and units of the other pieces; whole encoding (each includes the ones before).
    /// For benchmarks.
    fn stage_seconds(&self, s: &Bound<'_, PyString>) -> PyResult<[f64; 4]> {
        let t = text(s)?;
        let enc = &self.inner;
        s.py()
            .detach(|| guard("timing", || with_text!(t, t => enc.stage_seconds(t))))
            .map_err(|e| raise(s.py(), e))
    }
}

impl PyEncoder {
    /// The ids of the text of `s` (without the GIL for a long one), the special tokens `allowed`
    /// (ids) taken as such, appended to `ids`.
    fn ids_into(
        &self,
        s: &Bound<'_, PyString>,
        allowed: &[u32],
        ids: &mut Vec<u32>,
    ) -> PyResult<()> {
        let py = s.py();
        self.check_allowed(py, allowed)?;
        let t = text(s)?;
        let enc = &self.inner;
        let run = || with_text!(t, t => enc.encode_onto(t, allowed, &mut *ids));
        if t.len() > DETACH_ABOVE {
            py.detach(|| guard("encoding", run))
        } else {
            guard("encoding", run)
        }
        .map_err(|e| error(py, Kind::Tokenizer, e))?
        .map_err(no_memory)
    }

    /// The list of Python ints for `ids` (every id is below the vocabulary size).
    fn id_list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        self.ints.list(py, ids)
    }

    fn check_allowed(&self, py: Python<'_>, allowed: &[u32]) -> PyResult<()> {
        match allowed
            .iter()
            .find(|id| !self.inner.special_ids().contains(id))
        {
            Some(id) => Err(error(
                py,
                Kind::Tokenizer,
                format!("id {id} is not a special token"),
            )),
            None => Ok(()),
        }
    }
}

/// Run a batch, turning a panic in the core into a `TokenizerError`.
fn batch_guard<'py, T>(py: Python<'py>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    guard("encoding a batch", f).unwrap_or_else(|e| Err(error(py, Kind::Tokenizer, e)))
}

/// The texts of a batch as the core reads them (their own storage).
fn views<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Vec<Text<'a>>> {
    texts.iter().map(text).collect()
}
