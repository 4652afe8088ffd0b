//! Python bindings of the byte-level core: `_core.ByteLevel`, `_core.Pretokenizer` and their
//! exceptions. Conversions only; `wwho.bytelevel` wraps these in its public classes and turns
//! the exceptions into typed `wwho` errors.
//!
//! This module holds the `ByteLevel` class and the registration of the whole area (one
//! `#[pymethods]` block cannot span files); the checks of its arguments are in `args`, its
//! exceptions and the mapping of core errors onto them in `exceptions`, `Pretokenizer` in
//! `pretokenizer`, and the loaders' free functions in `loaders`.

use super::batch::{encode_flat, encode_texts_into, ids_array_from, thread_count};
use super::errors::no_memory;
use super::ints::{decode_plain, plain_ids, with_ids, IdInts};
use super::text::{text, with_utf8};
use crate::bytelevel::specials::SpecialSet;
use crate::bytelevel::{ByteLevel as Core, Error, Model, MAX_ID};
use crate::units::Text;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString};
use std::sync::Arc;

mod args;
pub(super) mod exceptions;
pub(super) mod loaders;
pub(super) mod pretokenizer;

use args::{batch_strings, special_pair, texts, token_id};
use exceptions::{
    batch_error, guard, to_py, CoreError, CoreMergeError, CoreVocabError, DisallowedSpecial,
    UnknownId, UnknownSpecial,
};
use loaders::{are_byte_pairs, check_merges, gpt2_bytes, merge_facts, merge_pairs, read_tiktoken};
use pretokenizer::Pretokenizer;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<ByteLevel>()?;
    m.add_class::<Pretokenizer>()?;
    m.add("CoreError", py.get_type::<CoreError>())?;
    m.add("CoreVocabError", py.get_type::<CoreVocabError>())?;
    m.add("DisallowedSpecial", py.get_type::<DisallowedSpecial>())?;
    m.add("UnknownId", py.get_type::<UnknownId>())?;
    m.add("UnknownSpecial", py.get_type::<UnknownSpecial>())?;
    m.add("MAX_TOKEN_ID", MAX_ID)?;
    m.add_function(wrap_pyfunction!(read_tiktoken, m)?)?;
    m.add_function(wrap_pyfunction!(check_merges, m)?)?;
    m.add_function(wrap_pyfunction!(are_byte_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(gpt2_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(merge_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(merge_facts, m)?)?;
    m.add_function(wrap_pyfunction!(super::batch::ready_numpy, m)?)?;
    m.add("CoreMergeError", py.get_type::<CoreMergeError>())?;
    Ok(())
}

#[pyclass(frozen, module = "wwho._core")]
pub struct ByteLevel {
    inner: Arc<Core>,
    /// The Python ints of the ids, made on first use.
    ints: IdInts,
}

#[pymethods]
impl ByteLevel {
    #[new]
    #[pyo3(signature = (ranks, *, merges, ignore_merges, special_tokens, added_tokens, extra_tokens, patterns, byte_patterns, cache_bytes))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        ranks: &Bound<'_, PyDict>,
        merges: Option<&Bound<'_, PyAny>>,
        ignore_merges: bool,
        special_tokens: &Bound<'_, PyDict>,
        added_tokens: &Bound<'_, PyDict>,
        extra_tokens: &Bound<'_, PyDict>,
        patterns: Vec<String>,
        byte_patterns: Vec<String>,
        cache_bytes: usize,
    ) -> PyResult<Self> {
        let mut rank_items: Vec<(Bound<'_, PyBytes>, u32)> = Vec::with_capacity(ranks.len());
        for (key, value) in ranks.iter() {
            let bytes = key.cast_into::<PyBytes>().map_err(|e| {
                CoreVocabError::new_err(format!("ranks: token {} is not bytes", e.into_inner()))
            })?;
            let id = token_id("ranks", &value, &|| {
                bytes.repr().map(|r| r.to_string()).unwrap_or_default()
            })?;
            rank_items.push((bytes, id));
        }
        let mut merge_items: Option<Vec<(Bound<'_, PyBytes>, Bound<'_, PyBytes>)>> = None;
        if let Some(list) = merges {
            let mut items = Vec::new();
            for pair in list.try_iter()? {
                let (a, b): (Bound<'_, PyBytes>, Bound<'_, PyBytes>) =
                    pair?.extract().map_err(|_| {
                        CoreVocabError::new_err("merges: every merge must be a pair of bytes")
                    })?;
                items.push((a, b));
            }
            merge_items = Some(items);
        }
        let special_items = texts("special_tokens", special_tokens)?;
        let added_items = texts("added_tokens", added_tokens)?;
        let mut extra_items: Vec<(u32, Bound<'_, PyBytes>)> = Vec::new();
        for (key, value) in extra_tokens.iter() {
            let bytes = value
                .cast_into::<PyBytes>()
                .map_err(|_| CoreVocabError::new_err("extra_tokens: every token must be bytes"))?;
            let id = token_id("extra_tokens", &key, &|| {
                bytes.repr().map(|r| r.to_string()).unwrap_or_default()
            })?;
            extra_items.push((id, bytes));
        }
        // (the token's repr: its own text would print the surrogate as replacement characters)
        let str_of = |what: &str, s: &Bound<'_, PyString>| -> PyResult<String> {
            s.to_str().map(str::to_string).map_err(|_| {
                let shown = s.repr().map(|r| r.to_string()).unwrap_or_default();
                let shown: String = shown.chars().take(80).collect();
                CoreVocabError::new_err(format!(
                    "{what}: the token {shown} holds a lone surrogate, which is no character"
                ))
            })
        };
        let special_owned: Vec<(String, u32)> = special_items
            .iter()
            .map(|(s, i)| Ok((str_of("special_tokens", s)?, *i)))
            .collect::<PyResult<_>>()?;
        let added_owned: Vec<(String, u32)> = added_items
            .iter()
            .map(|(s, i)| Ok((str_of("added_tokens", s)?, *i)))
            .collect::<PyResult<_>>()?;
        let model = Model {
            ranks: rank_items.iter().map(|(b, i)| (b.as_bytes(), *i)).collect(),
            merges: merge_items.as_ref().map(|items| {
                items
                    .iter()
                    .map(|(a, b)| (a.as_bytes(), b.as_bytes()))
                    .collect()
            }),
            ignore_merges,
            special_tokens: special_owned
                .iter()
                .map(|(s, i)| (s.as_str(), *i))
                .collect(),
            added_tokens: added_owned.iter().map(|(s, i)| (s.as_str(), *i)).collect(),
            extra_tokens: extra_items
                .iter()
                .map(|(i, b)| (*i, b.as_bytes()))
                .collect(),
            patterns: patterns.iter().map(String::as_str).collect(),
            byte_patterns: byte_patterns.iter().map(String::as_str).collect(),
            cache_bytes,
        };
        let inner = guard(|| py.detach(|| Core::new(&model)).map_err(to_py))?;
        let ints = IdInts::new(inner.n_vocab())?;
        Ok(ByteLevel {
            inner: Arc::new(inner),
            ints,
        })
    }

    /// Ids of `text`; any special-token text is an error (`DisallowedSpecial`).
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.id_list(py, text, &SpecialSet::None, &SpecialSet::All)
    }

    /// `data` merged as one piece with no lookup of the whole (tiktoken's `byte_pair_encode`).
    fn merge_bytes(&self, data: &[u8]) -> PyResult<Vec<u32>> {
        guard(|| self.inner.merge_bytes(data).map_err(to_py))
    }

    /// Ids of `text` with special-token text as plain text.
    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.id_list(py, text, &SpecialSet::None, &SpecialSet::None)
    }

    /// Ids of `text` with `allowed` / `disallowed` special tokens: "all", None or names.
    fn encode_with<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let (allowed, disallowed) = special_pair(&self.inner, allowed, disallowed)?;
        self.id_list(py, text, &allowed, &disallowed)
    }

    /// [`encode_with`](Self::encode_with) as a numpy `uint32` array (see
    /// `batch::ids_array_from`): no int per id, no list, and none of a batch's machinery (threads,
    /// chunks, offsets).
    fn encode_array<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (allowed, disallowed) = special_pair(&self.inner, allowed, disallowed)?;
        with_ids(|ids| {
            self.ids_into(py, text, &allowed, &disallowed, ids)?;
            ids_array_from(py, ids)
        })
    }

    /// `[encode_with(t, allowed, disallowed) for t in texts]` on `num_threads` threads (None:
    /// all cores), without the GIL. The first failing text's error is raised.
    #[pyo3(signature = (texts, allowed, disallowed, num_threads=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids_of = |py: Python<'_>, ids: &[u32]| Ok(self.ints.list(py, ids)?.into_any().unbind());
        self.batch(texts, allowed, disallowed, num_threads, |views, work| {
            encode_texts_into(
                py,
                views,
                thread_count(num_threads),
                work,
                ids_of,
                batch_error,
            )
        })
    }

    /// [`encode_batch`](Self::encode_batch) as one array: `(ids, offsets)`, two `bytearray`s of
    /// native-endian `u32` ids and `len(texts) + 1` `i64` starts (see `batch::encode_flat`).
    #[pyo3(signature = (texts, allowed, disallowed, num_threads=None))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        self.batch(texts, allowed, disallowed, num_threads, |views, work| {
            encode_flat(py, views, thread_count(num_threads), work, batch_error)
        })
    }

    /// The bytes of `ids` if it is a list of plain ints that all have a token, else None: the
    /// Python layer then checks the ids and names the first bad one.
    fn decode_plain<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        guard(|| decode_plain(py, ids, |ids| self.inner.decode_bytes(ids).ok()))
    }

    /// The bytes of `ids` (a list of ints, or an array of them read as one block); `UnknownId((id,
    /// position))` for an id with no token, so that no caller looks for it id by id.
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ids: Vec<u32> = match plain_ids(ids) {
            Some(ids) => ids,
            None if ids.is_instance_of::<PyList>() => ids.extract()?, // (an id outside 32 bits)
            // An array the block read leaves (another byte order, an id outside 32 bits): the
            // caller's checking path reads it (pyo3 reads a buffer in the native byte order).
            None => {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "ids: a list of ints, or a one-dimensional array of native integers",
                ))
            }
        };
        let data = guard(|| self.inner.decode_bytes(&ids).map_err(to_py))?;
        super::errors::py_bytes(py, &data)
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> Option<Bound<'py, PyBytes>> {
        self.inner.token_bytes(id).map(|b| PyBytes::new(py, b))
    }

    #[getter]
    fn n_vocab(&self) -> u64 {
        self.inner.n_vocab()
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    /// (entries, bytes) held by the piece cache.
    fn cache_info(&self) -> (usize, usize) {
        (self.inner.cache().len(), self.inner.cache().bytes())
    }

    fn clear_cache(&self) {
        self.inner.clear_cache();
    }

    fn stage_kinds(&self) -> Vec<String> {
        self.inner.pretokenizer().stage_kinds()
    }
}

impl ByteLevel {
    /// What both batch forms share: the special-token sets and the texts read, and the work per
    /// text (its ids appended to its chunk's vector), handed to `run`. Each thread reads the
    /// strings' own storage (UTF-8 made by the thread itself where it is not ASCII), so the
    /// calling thread does no per-text work but the results.
    fn batch<'py, T>(
        &self,
        texts: &Bound<'py, PyAny>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        num_threads: Option<usize>,
        run: impl FnOnce(
            &[Text<'_>],
            &(dyn Fn(&Text<'_>, &mut Vec<u32>) -> Result<(), Error> + Sync),
        ) -> PyResult<T>,
    ) -> PyResult<T> {
        let (allowed, disallowed) = special_pair(&self.inner, allowed, disallowed)?;
        let owned = batch_strings(texts, num_threads)?;
        let views = owned.iter().map(text).collect::<PyResult<Vec<_>>>()?;
        let core = &self.inner;
        // (on several threads each new piece goes to the shared cache at once, so that the
        // threads find each other's: their memos are their own)
        let threads = crate::batch::threads_for(&views, thread_count(num_threads), Text::len);
        let work = |t: &Text<'_>, out: &mut Vec<u32>| {
            with_utf8(*t, |s| {
                core.encode_into_batch(s, &allowed, &disallowed, out, threads)
            })
            .unwrap_or_else(|e| Err(Error::NoMemory(e)))
        };
        guard(|| run(&views, &work))
    }

    /// The ids of `text` as a list, made from this thread's ids buffer ([`with_ids`]).
    fn id_list<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
    ) -> PyResult<Bound<'py, PyList>> {
        with_ids(|ids| {
            self.ids_into(py, text, allowed, disallowed, ids)?;
            self.ints.list(py, ids)
        })
    }

    /// The ids of `text` appended to `ids`; a short text keeps the GIL (releasing it costs more
    /// than such a text takes).
    fn ids_into(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
        ids: &mut Vec<u32>,
    ) -> PyResult<()> {
        let core = &self.inner;
        with_utf8(super::text::text(text)?, |s| {
            guard(|| {
                if s.len() < 512 {
                    core.encode_into(s, allowed, disallowed, ids)
                } else {
                    py.detach(|| core.encode_into(s, allowed, disallowed, ids))
                }
                .map_err(to_py)
            })
        })
        .map_err(no_memory)?
    }
}
