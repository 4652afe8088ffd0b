//! Python bindings of the byte-level core: `_core.ByteLevel`, `_core.Pretokenizer` and their
//! exceptions. Conversions only; `wwho.bytelevel` wraps these in its public classes and turns
//! the exceptions into typed `wwho` errors.

use super::batch::{encode_flat, encode_texts_into, ids_array, thread_count};
use super::errors::no_memory;
use super::ints::{decode_plain, IdInts};
use super::text::{text, with_utf8};
use crate::bytelevel::specials::SpecialSet;
use crate::bytelevel::vocab::MergeProblem;
use crate::bytelevel::{ByteLevel as Core, Error, Model, MAX_ID};
use crate::pretokenize::general::RegexError;
use crate::pretokenize::Pretokenizer as CorePretokenizer;
use crate::units::Text;
use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};
use std::sync::Arc;

create_exception!(
    _core,
    CoreError,
    PyValueError,
    "An error from the compiled core."
);
create_exception!(
    _core,
    CoreVocabError,
    CoreError,
    "An inconsistent vocabulary or a bad regex."
);
create_exception!(
    _core,
    DisallowedSpecial,
    CoreError,
    "args: (token, character offset)."
);
create_exception!(_core, UnknownId, CoreError, "args: (id, position).");
create_exception!(
    _core,
    CoreMergeError,
    CoreError,
    "args: (\"no_space\" or \"shape\", index of the merge)."
);
create_exception!(
    _core,
    UnknownSpecial,
    CoreError,
    "args: (sorted unknown names,)."
);

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
    m.add_function(wrap_pyfunction!(super::batch::ready_numpy, m)?)?;
    m.add("CoreMergeError", py.get_type::<CoreMergeError>())?;
    Ok(())
}

fn to_py(err: Error) -> PyErr {
    match err {
        Error::Vocab(msg) | Error::Regex(msg) => CoreVocabError::new_err(msg),
        Error::Disallowed { token, offset } => DisallowedSpecial::new_err((token, offset)),
        Error::UnknownId { id, position } => UnknownId::new_err((id, position)),
        Error::UnknownSpecial(names) => UnknownSpecial::new_err((names,)),
        other @ Error::NoToken { .. } => CoreError::new_err(other.to_string()),
        Error::NoMemory(e) => no_memory(e),
    }
}

/// Run core code, turning a panic (a bug: no input should cause one) into a `CoreError` instead of
/// pyo3's `PanicException`, so that callers see the same typed error as for bad input.
fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(CoreError::new_err(format!(
            "internal error in wwho's core (please report it): {what}"
        )))
    })
}

fn regex_err(err: RegexError) -> PyErr {
    CoreVocabError::new_err(err.0)
}

/// `.tiktoken` file contents -> {token bytes: rank}; `CoreVocabError("<line>: <problem>")`.
#[pyfunction]
fn read_tiktoken<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let ranks = guard(|| {
        py.detach(|| crate::bytelevel::files::parse_tiktoken(data))
            .map_err(|e| match e {
                crate::bytelevel::files::TiktokenError::NoMemory(e) => no_memory(e),
                e => CoreVocabError::new_err(e.to_string()),
            })
    })?;
    let out = PyDict::new(py);
    for (token, rank) in ranks {
        out.set_item(PyBytes::new(py, &token), rank)?;
    }
    Ok(out)
}

/// The tuple `(a, b)` of two `bytes`, untracked by the garbage collector. Such a tuple can never
/// be part of a reference cycle, and CPython's collector untracks it itself when it first walks
/// it; doing it now spares the collections that a vocabulary's many new merge tuples would set
/// off while it loads.
pub(crate) fn bytes_pair<'py>(
    a: &Bound<'py, PyBytes>,
    b: &Bound<'py, PyBytes>,
) -> PyResult<Bound<'py, PyTuple>> {
    let pair = PyTuple::new(a.py(), [a, b])?;
    // SAFETY: `pair` is a live tuple owned here; untracking is allowed at any time.
    unsafe { pyo3::ffi::PyObject_GC_UnTrack(pair.as_ptr().cast()) };
    Ok(pair)
}

/// A merges-check finding as `wwho.bytelevel.validate.merge_problem` takes it: `("part", index,
/// part)` or `("lost", count, first, id)`.
pub(crate) fn merge_problem<'py>(
    py: Python<'py>,
    problem: &MergeProblem,
) -> PyResult<Bound<'py, PyTuple>> {
    match problem {
        MergeProblem::NotToken { index, part } => {
            ("part", index, PyBytes::new(py, part)).into_pyobject(py)
        }
        MergeProblem::Lost { count, first, id } => {
            ("lost", count, PyBytes::new(py, first), id).into_pyobject(py)
        }
    }
}

/// GPT-2 byte-level strings -> their bytes, None where one is not such a string (a character
/// outside the mapping, or not a `str`): Python's `unicode_to_bytes` over a whole vocabulary.
#[pyfunction]
fn gpt2_bytes<'py>(py: Python<'py>, texts: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyList>> {
    let out: Vec<Option<Bound<'py, PyBytes>>> = texts
        .iter()
        .map(|t| {
            let text = t.cast::<PyString>().ok()?.to_str().ok()?;
            Some(PyBytes::new(py, &crate::pretokenize::gpt2_to_bytes(text)?))
        })
        .collect();
    PyList::new(py, out)
}

/// Merges as Hugging Face writes them (`"a b"`, the space found after the first character as
/// llama.cpp does, or `["a", "b"]`) -> `(bytes, bytes)`, or None where a part is empty or not
/// GPT-2 byte-level text. Equal parts share one `bytes` object. `CoreMergeError(("no_space" |
/// "shape", index))` for an entry that is neither form.
#[pyfunction]
fn merge_pairs<'py>(py: Python<'py>, merges: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyList>> {
    let mut seen: rustc_hash::FxHashMap<String, Option<Bound<'py, PyBytes>>> =
        rustc_hash::FxHashMap::default();
    let mut part = |text: &str| -> Option<Bound<'py, PyBytes>> {
        if let Some(found) = seen.get(text) {
            return found.clone();
        }
        let bytes = crate::pretokenize::gpt2_to_bytes(text)
            .filter(|b| !b.is_empty())
            .map(|b| PyBytes::new(py, &b));
        seen.insert(text.to_owned(), bytes.clone());
        bytes
    };
    let mut out = Vec::with_capacity(merges.len());
    for (index, merge) in merges.iter().enumerate() {
        let fail = |kind: &str| CoreMergeError::new_err((kind.to_owned(), index));
        // The two parts' bytes; None: a part is not byte-level text (also a lone surrogate).
        let parts = if let Ok(line) = merge.cast::<PyString>() {
            match line.to_str() {
                Ok(line) => {
                    let first = line.chars().next().map_or(0, char::len_utf8);
                    let Some(cut) = line[first..].find(' ') else {
                        return Err(fail("no_space"));
                    };
                    part(&line[..first + cut]).zip(part(&line[first + cut + 1..]))
                }
                Err(_) => {
                    if !line.to_string_lossy().chars().skip(1).any(|c| c == ' ') {
                        return Err(fail("no_space"));
                    }
                    None
                }
            }
        } else {
            // A list or tuple of two str.
            let items: Option<Vec<Bound<'py, PyAny>>> = if let Ok(l) = merge.cast::<PyList>() {
                Some(l.iter().collect())
            } else if let Ok(t) = merge.cast::<PyTuple>() {
                Some(t.iter().collect())
            } else {
                None
            };
            let strs: Option<Vec<Bound<'py, PyString>>> =
                items.filter(|v| v.len() == 2).and_then(|v| {
                    v.into_iter()
                        .map(|x| x.cast_into::<PyString>().ok())
                        .collect()
                });
            let Some(strs) = strs else {
                return Err(fail("shape"));
            };
            match (strs[0].to_str(), strs[1].to_str()) {
                (Ok(a), Ok(b)) => part(a).zip(part(b)),
                _ => None,
            }
        };
        out.push(match parts {
            Some((a, b)) => Some(bytes_pair(&a, &b)?),
            None => None,
        });
    }
    PyList::new(py, out)
}

/// Whether every item of `items` is a tuple of exactly two `bytes` (exact types, no subclasses):
/// what `ByteBPE` keeps as its merges without rebuilding them.
#[pyfunction]
fn are_byte_pairs(items: &Bound<'_, PyList>) -> bool {
    items.iter().all(|item| {
        item.cast_exact::<PyTuple>().is_ok_and(|pair| {
            pair.len() == 2 && pair.iter().all(|x| x.is_exact_instance_of::<PyBytes>())
        })
    })
}

/// `wwho.bytelevel.validate`'s merges check: None, `("part", index, part)` (a merge's part or
/// result is no token) or `("lost", count, first, id)` (tokens no merge produces); a TypeError
/// if a key or a part is not bytes.
#[pyfunction]
fn check_merges<'py>(
    py: Python<'py>,
    ranks: &Bound<'py, PyDict>,
    merges: &Bound<'py, PyList>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let mut tokens: Vec<(Bound<'py, PyBytes>, u32)> = Vec::with_capacity(ranks.len());
    for (key, value) in ranks.iter() {
        tokens.push((key.cast_into::<PyBytes>()?, value.extract()?));
    }
    let mut pairs: Vec<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> =
        Vec::with_capacity(merges.len());
    for pair in merges.iter() {
        pairs.push(pair.extract()?);
    }
    let ranks: Vec<(&[u8], u32)> = tokens.iter().map(|(b, i)| (b.as_bytes(), *i)).collect();
    let merges: Vec<(&[u8], &[u8])> = pairs
        .iter()
        .map(|(a, b)| (a.as_bytes(), b.as_bytes()))
        .collect();
    let found = guard(|| Ok(py.detach(|| crate::bytelevel::vocab::check_merges(&ranks, &merges))))?;
    found
        .err()
        .map(|problem| merge_problem(py, &problem))
        .transpose()
}

// --- pre-tokenizer ---------------------------------------------------------------------------

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

// --- tokenizer -------------------------------------------------------------------------------

#[pyclass(frozen, module = "wwho._core")]
pub struct ByteLevel {
    inner: Arc<Core>,
    /// The Python ints of the ids, made on first use.
    ints: IdInts,
}

/// A token id given by Python: a non-negative int (not a bool) that fits.
fn token_id(label: &str, value: &Bound<'_, PyAny>, what: &dyn Fn() -> String) -> PyResult<u32> {
    let bad = || {
        let shown = value.repr().map(|r| r.to_string()).unwrap_or_default();
        CoreVocabError::new_err(format!(
            "{label}: token id {shown} for {} is not a non-negative int",
            what()
        ))
    };
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad());
    }
    let id: u64 = value.extract().map_err(|_| bad())?;
    if id > u64::from(MAX_ID) {
        return Err(CoreVocabError::new_err(format!(
            "{label}: token id {id} for {} is too large (at most {MAX_ID})",
            what()
        )));
    }
    Ok(id as u32)
}

/// (text, id) of every entry of a `str -> int` dict.
fn texts<'py>(label: &str, d: &Bound<'py, PyDict>) -> PyResult<Vec<(Bound<'py, PyString>, u32)>> {
    let mut out = Vec::with_capacity(d.len());
    for (key, value) in d.iter() {
        let text = key.cast_into::<PyString>().map_err(|e| {
            CoreVocabError::new_err(format!("{label}: token {} is not a str", e.into_inner()))
        })?;
        let id = token_id(label, &value, &|| {
            text.repr().map(|r| r.to_string()).unwrap_or_default()
        })?;
        out.push((text, id));
    }
    Ok(out)
}

/// The (allowed, disallowed) special tokens of an encode, each `'all'`, None or names, with
/// tiktoken's reading of a disallowed `'all'`: every special token that `allowed` does not
/// name. That set is made here from indices: passed as the others' names, it was read name by
/// name on every call (most of the time of a short encode with a few tokens allowed).
fn special_pair(
    core: &Core,
    allowed: &Bound<'_, PyAny>,
    disallowed: &Bound<'_, PyAny>,
) -> PyResult<(SpecialSet, SpecialSet)> {
    let allowed = specials_arg(core, allowed)?;
    let disallowed = match specials_arg(core, disallowed)? {
        SpecialSet::All => match &allowed {
            SpecialSet::None => SpecialSet::All,
            SpecialSet::All => SpecialSet::None,
            SpecialSet::Some(named) => {
                // (`named` is sorted: see `Specials::resolve`.)
                let rest: Vec<usize> = (0..core.specials().n_special())
                    .filter(|i| named.binary_search(i).is_err())
                    .collect();
                if rest.is_empty() {
                    SpecialSet::None
                } else {
                    SpecialSet::Some(rest)
                }
            }
        },
        other => other,
    };
    Ok((allowed, disallowed))
}

fn specials_arg(core: &Core, value: &Bound<'_, PyAny>) -> PyResult<SpecialSet> {
    if value.is_none() {
        return Ok(SpecialSet::None);
    }
    if let Ok(s) = value.cast::<PyString>() {
        if s.to_str()? == "all" {
            return Ok(SpecialSet::All);
        }
        return Err(PyTypeError::new_err(
            "special-token sets must be 'all' or a collection of strings",
        ));
    }
    let names: Vec<String> = value
        .try_iter()?
        .map(|x| x?.extract())
        .collect::<PyResult<_>>()?;
    if names.is_empty() {
        return Ok(SpecialSet::None);
    }
    core.specials()
        .resolve(&names)
        .map(SpecialSet::Some)
        .map_err(to_py)
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
        let str_of = |s: &Bound<'_, PyString>| -> PyResult<String> {
            s.to_str().map(str::to_string).map_err(|_| {
                CoreVocabError::new_err(format!(
                    "token {s} is not valid Unicode (a lone surrogate?)"
                ))
            })
        };
        let special_owned: Vec<(String, u32)> = special_items
            .iter()
            .map(|(s, i)| Ok((str_of(s)?, *i)))
            .collect::<PyResult<_>>()?;
        let added_owned: Vec<(String, u32)> = added_items
            .iter()
            .map(|(s, i)| Ok((str_of(s)?, *i)))
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
        let ints = IdInts::new(inner.n_vocab());
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
        let core = &self.inner;
        let ids = with_utf8(super::text::text(text)?, |s| {
            guard(|| {
                if s.len() < 512 {
                    core.encode(s, &SpecialSet::None, &SpecialSet::All)
                } else {
                    py.detach(|| core.encode(s, &SpecialSet::None, &SpecialSet::All))
                }
                .map_err(to_py)
            })
        })
        .map_err(no_memory)??;
        self.ints.list(py, &ids)
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
        let core = &self.inner;
        // As `encode`: short texts keep the GIL (releasing it costs more than they take).
        let ids = with_utf8(super::text::text(text)?, |s| {
            guard(|| {
                if s.len() < 512 {
                    core.encode_ordinary(s)
                } else {
                    py.detach(|| core.encode_ordinary(s))
                }
                .map_err(to_py)
            })
        })
        .map_err(no_memory)??;
        self.ints.list(py, &ids)
    }

    /// Ids of `text` with `allowed` / `disallowed` special tokens: "all", None or names.
    fn encode_with<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = self.ids_with(py, text, allowed, disallowed)?;
        self.ints.list(py, &ids)
    }

    /// [`encode_with`](Self::encode_with) as a numpy `uint32` array (see `batch::ids_array`): no
    /// int per id, no list, and none of a batch's machinery (threads, chunks, offsets).
    fn encode_array<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ids = self.ids_with(py, text, allowed, disallowed)?;
        ids_array(py, ids)
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

    /// The bytes of `ids`; `UnknownId((id, position))` for an id with no token.
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
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

/// A batch's error: the failing text's own, with its place in the batch as `text_index` (the
/// Python layer names it in the message).
fn batch_error(py: Python<'_>, at: usize, e: Error) -> PyErr {
    let err = to_py(e);
    // An exception that takes no attribute still says what went wrong, only not where.
    let _ = err.value(py).setattr("text_index", at);
    err
}

/// The strings of a batch (a TypeError for the first item that is not one).
fn batch_strings<'py>(
    texts: &Bound<'py, PyAny>,
    num_threads: Option<usize>,
) -> PyResult<Vec<Bound<'py, PyString>>> {
    if num_threads == Some(0) {
        return Err(PyValueError::new_err("num_threads must be at least 1"));
    }
    texts
        .try_iter()?
        .map(|t| {
            t?.cast_into::<PyString>().map_err(|e| {
                PyTypeError::new_err(format!("expected str, got {}", e.into_inner().get_type()))
            })
        })
        .collect()
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

    /// The ids of one text with `allowed` / `disallowed` special tokens, for `encode_with` and
    /// `encode_array`. As in `encode`, short texts keep the GIL (releasing it costs more than
    /// they take).
    fn ids_with<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<u32>> {
        let (allowed, disallowed) = special_pair(&self.inner, allowed, disallowed)?;
        let core = &self.inner;
        with_utf8(super::text::text(text)?, |s| {
            guard(|| {
                if s.len() < 512 {
                    core.encode(s, &allowed, &disallowed)
                } else {
                    py.detach(|| core.encode(s, &allowed, &disallowed))
                }
                .map_err(to_py)
            })
        })
        .map_err(no_memory)?
    }
}
