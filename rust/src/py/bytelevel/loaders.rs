//! The loaders' bulk helpers: a `.tiktoken` file's ranks, Hugging Face merges and GPT-2
//! byte-level strings as bytes, the merges check of `wwho.bytelevel.validate`, and the merge
//! tuples that `wwho.bytelevel` and the GGUF reader hand back. It builds no tokenizer and reads
//! no file itself (Python hands it the bytes).

use super::exceptions::{guard, CoreMergeError, CoreVocabError};
use crate::bytelevel::vocab::MergeProblem;
use crate::py::errors::{no_memory, py_bytes, py_dict, py_list, py_pair};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

/// `.tiktoken` file contents -> {token bytes: rank}; `CoreVocabError("<line>: <problem>")`.
#[pyfunction]
pub(super) fn read_tiktoken<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let ranks = guard(|| {
        py.detach(|| crate::bytelevel::files::parse_tiktoken(data))
            .map_err(|e| match e {
                crate::bytelevel::files::TiktokenError::NoMemory(e) => no_memory(e),
                e => CoreVocabError::new_err(e.to_string()),
            })
    })?;
    let out = py_dict(py)?;
    for (token, rank) in ranks {
        out.set_item(py_bytes(py, &token)?, rank)?;
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
    let pair = py_pair(a.as_any(), b.as_any())?;
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
pub(super) fn gpt2_bytes<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyList>> {
    let out: Vec<Option<Bound<'py, PyBytes>>> = texts
        .iter()
        .map(|t| {
            let text = t.cast::<PyString>().ok()?.to_str().ok()?;
            crate::pretokenize::gpt2_to_bytes(text).map(|b| py_bytes(py, &b))
        })
        .map(Option::transpose)
        .collect::<PyResult<_>>()?;
    py_list(py, out)
}

/// Merges as Hugging Face writes them (`"a b"`, the space found after the first character as
/// llama.cpp does, or `["a", "b"]`) -> `(bytes, bytes)`, or None where a part is empty or not
/// GPT-2 byte-level text. Equal parts share one `bytes` object. `CoreMergeError(("no_space" |
/// "shape", index))` for an entry that is neither form.
#[pyfunction]
pub(super) fn merge_pairs<'py>(
    py: Python<'py>,
    merges: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyList>> {
    let mut seen: rustc_hash::FxHashMap<String, Option<Bound<'py, PyBytes>>> =
        rustc_hash::FxHashMap::default();
    let mut part = |text: &str| -> PyResult<Option<Bound<'py, PyBytes>>> {
        if let Some(found) = seen.get(text) {
            return Ok(found.clone());
        }
        let bytes = crate::pretokenize::gpt2_to_bytes(text)
            .filter(|b| !b.is_empty())
            .map(|b| py_bytes(py, &b))
            .transpose()?;
        seen.insert(text.to_owned(), bytes.clone());
        Ok(bytes)
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
                    part(&line[..first + cut])?.zip(part(&line[first + cut + 1..])?)
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
                (Ok(a), Ok(b)) => part(a)?.zip(part(b)?),
                _ => None,
            }
        };
        out.push(match parts {
            Some((a, b)) => Some(bytes_pair(&a, &b)?),
            None => None,
        });
    }
    py_list(py, out)
}

/// `(repeated, made)` for `wwho.bytelevel.hf_files.from_hf`: whether a pair of `pairs` (the list
/// `merge_pairs` gave; its None entries are skipped) is listed twice, and which of `tokens`
/// (bytes) a merge makes, its two parts joined ([`crate::bytelevel::vocab::merge_facts`]).
#[pyfunction]
pub(super) fn merge_facts<'py>(
    py: Python<'py>,
    pairs: &Bound<'py, PyList>,
    tokens: &Bound<'py, PyList>,
) -> PyResult<(bool, Vec<bool>)> {
    let mut held: Vec<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> = Vec::with_capacity(pairs.len());
    for pair in pairs.iter() {
        if !pair.is_none() {
            held.push(pair.extract()?);
        }
    }
    let wanted: Vec<Bound<'py, PyBytes>> = tokens
        .iter()
        .map(|t| t.cast_into::<PyBytes>().map_err(PyErr::from))
        .collect::<PyResult<_>>()?;
    let merges: Vec<(&[u8], &[u8])> = held
        .iter()
        .map(|(a, b)| (a.as_bytes(), b.as_bytes()))
        .collect();
    let tokens: Vec<&[u8]> = wanted.iter().map(|t| t.as_bytes()).collect();
    Ok(py.detach(|| crate::bytelevel::vocab::merge_facts(&merges, &tokens)))
}

/// Whether every item of `items` is a tuple of exactly two `bytes` (exact types, no subclasses):
/// what `ByteBPE` keeps as its merges without rebuilding them.
#[pyfunction]
pub(super) fn are_byte_pairs(items: &Bound<'_, PyList>) -> bool {
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
pub(super) fn check_merges<'py>(
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
