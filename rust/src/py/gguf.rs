//! Python bindings of the GGUF tokenizer arrays ([`crate::bytelevel::gguf`]): conversions only.
//!
//! Errors are `CoreGGUFError` with structured args, so that `wwho.bytelevel.gguf` words them
//! exactly as its Python reader does (with the file name and the key being read):
//! `("truncated", index, count, offset, array)`, `("utf8", index, offset, array)`, `("twice", text,
//! first, second)`, `("no_space", rank, line)`, `("not_token", rank, line, part)`; `array` names
//! the array of [`gguf_vocab`] ("tokens" or "merges"), empty for [`gguf_strings`]. [`gguf_skip`]'s
//! are `("past", offset)`, `("type", kind, offset)` and `("deep", depth, offset)`.

use super::bytelevel::exceptions::CoreError;
use super::bytelevel::loaders::{bytes_pair, merge_problem};
use super::errors::{py_bytes, py_dict, py_list};
use crate::bytelevel::gguf::{self, Error};
use pyo3::buffer::PyBuffer;
use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

create_exception!(
    _core,
    CoreGGUFError,
    CoreError,
    "A GGUF string array or tokenizer entry that is not what it must be (args: see wwho_core::py::gguf)."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CoreGGUFError", m.py().get_type::<CoreGGUFError>())?;
    m.add_function(wrap_pyfunction!(gguf_strings, m)?)?;
    m.add_function(wrap_pyfunction!(gguf_vocab, m)?)?;
    m.add_function(wrap_pyfunction!(gguf_skip, m)?)?;
    Ok(())
}

fn to_py(py: Python<'_>, err: Error, array: &str) -> PyErr {
    let args = match err {
        Error::Truncated {
            index,
            count,
            offset,
        } => ("truncated", index, count, offset, array).into_pyobject(py),
        Error::NotUtf8 { index, offset } => ("utf8", index, offset, array).into_pyobject(py),
        Error::Twice {
            text,
            first,
            second,
        } => ("twice", text, first, second).into_pyobject(py),
        Error::NoSpace { rank, line } => ("no_space", rank, line).into_pyobject(py),
        Error::NotToken { rank, line, part } => ("not_token", rank, line, part).into_pyobject(py),
        Error::Past { offset } => ("past", offset).into_pyobject(py),
        Error::UnknownType { kind, offset } => ("type", kind, offset).into_pyobject(py),
        Error::TooDeep { depth, offset } => ("deep", depth, offset).into_pyobject(py),
    };
    match args {
        Ok(args) => CoreGGUFError::new_err(args.unbind()),
        Err(e) => e,
    }
}

/// Run `f` on the bytes of a buffer (a `bytes` or a read-only `mmap`).
fn with_bytes<T>(buf: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<T>) -> PyResult<T> {
    let buffer = PyBuffer::<u8>::get(buf)?;
    if !buffer.is_c_contiguous() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "a contiguous buffer is needed",
        ));
    }
    let data: &[u8] = if buffer.len_bytes() == 0 {
        &[]
    } else {
        // SAFETY: the buffer is contiguous and held (exported) until `buffer` drops after `f`;
        // the GIL is held throughout, so no Python code can resize or write it meanwhile.
        unsafe { std::slice::from_raw_parts(buffer.buf_ptr() as *const u8, buffer.len_bytes()) }
    };
    f(data)
}

/// The offset after the value of GGUF type `kind` at byte `pos` of `buf`, walked without reading
/// it (at most `max_depth` arrays deep): metadata the reader does not need.
#[pyfunction]
#[pyo3(signature = (buf, pos, kind, big_endian, max_depth))]
fn gguf_skip(
    py: Python<'_>,
    buf: &Bound<'_, PyAny>,
    pos: usize,
    kind: u32,
    big_endian: bool,
    max_depth: usize,
) -> PyResult<usize> {
    with_bytes(buf, |data| {
        gguf::skip(data, pos, kind, big_endian, max_depth).map_err(|e| to_py(py, e, ""))
    })
}

/// `count` length-prefixed strings from byte `pos` of `buf`: (their list of str, or None if
/// not `decode`; the offset after the last).
#[pyfunction]
#[pyo3(signature = (buf, pos, count, big_endian, *, decode))]
fn gguf_strings<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    pos: usize,
    count: u64,
    big_endian: bool,
    decode: bool,
) -> PyResult<(Option<Bound<'py, PyList>>, usize)> {
    with_bytes(buf, |data| {
        if !decode {
            let (_, end) =
                gguf::strings(data, pos, count, big_endian).map_err(|e| to_py(py, e, ""))?;
            return Ok((None, end));
        }
        let (found, end) = texts(py, data, pos, count, big_endian, "")?;
        Ok((Some(PyList::new(py, found)?), end))
    })
}

/// The `count` strings of array `array` from byte `pos` of `data`, as UTF-8, and the offset after
/// the last.
fn texts<'a>(
    py: Python<'_>,
    data: &'a [u8],
    pos: usize,
    count: u64,
    big_endian: bool,
    array: &str,
) -> PyResult<(Vec<&'a str>, usize)> {
    let (spans, end) =
        gguf::strings(data, pos, count, big_endian).map_err(|e| to_py(py, e, array))?;
    let found = spans
        .iter()
        .enumerate()
        .map(|(i, &span)| gguf::text(data, span, i).map_err(|e| to_py(py, e, array)))
        .collect::<PyResult<_>>()?;
    Ok((found, end))
}

/// `load_gguf`'s loop over the raw `tokens` and `merges` arrays (as [`gguf_strings`] found
/// them) and the token `types`: (ranks {bytes: id}, special {str: id}, added {str: id}, extra
/// {id: bytes}, merges [(bytes, bytes)], problem), the merges' bytes being the ranks' own keys;
/// `problem` is None or what `check_merges` (in `py::bytelevel::loaders`) would return.
#[pyfunction]
#[pyo3(signature = (tokens, n_tokens, types, merges, n_merges, big_endian))]
#[allow(clippy::type_complexity)]
fn gguf_vocab<'py>(
    py: Python<'py>,
    tokens: &[u8],
    n_tokens: u64,
    types: Vec<i64>,
    merges: &[u8],
    n_merges: u64,
    big_endian: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let (token_texts, _) = texts(py, tokens, 0, n_tokens, big_endian, "tokens")?;
    let (merge_texts, _) = texts(py, merges, 0, n_merges, big_endian, "merges")?;
    let vocab = py
        .detach(|| {
            super::errors::guard("reading a GGUF vocabulary", || {
                gguf::vocab(&token_texts, &types, &merge_texts)
            })
        })
        .map_err(|panic| CoreError::new_err(panic.to_string()))?
        .map_err(|e| to_py(py, e, ""))?;
    let ranks = py_dict(py)?;
    let mut keys = Vec::with_capacity(vocab.ranks.len());
    for (data, id) in &vocab.ranks {
        let key = py_bytes(py, data)?;
        ranks.set_item(&key, id)?;
        keys.push(key);
    }
    let named = |list: &[(String, u32)]| -> PyResult<Bound<'py, PyDict>> {
        let d = py_dict(py)?;
        for (text, id) in list {
            d.set_item(text, id)?;
        }
        Ok(d)
    };
    let extra = py_dict(py)?;
    for (id, data) in &vocab.extra {
        extra.set_item(id, py_bytes(py, data)?)?;
    }
    let pairs = vocab
        .merges
        .iter()
        .map(|&(a, b)| bytes_pair(&keys[a as usize], &keys[b as usize]).map(Some))
        .collect::<PyResult<Vec<_>>>()?;
    let problem = match &vocab.problem {
        None => py.None().into_bound(py),
        Some(problem) => merge_problem(py, problem)?.into_any(),
    };
    PyTuple::new(
        py,
        [
            ranks.into_any(),
            named(&vocab.special)?.into_any(),
            named(&vocab.added)?.into_any(),
            extra.into_any(),
            py_list(py, pairs)?.into_any(),
            problem,
        ],
    )
}
