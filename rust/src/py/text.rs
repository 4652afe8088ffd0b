//! Python `str` objects as [`Text`]: their own storage (PEP 393), no UTF-8 conversion.

use crate::units::{Text, Unit};
use pyo3::prelude::*;
use pyo3::types::string::PyStringData;
use pyo3::types::{PyList, PyString};
use rustc_hash::FxHashMap;

/// The code points of `s`, borrowed from the string object for as long as it lives.
pub fn text<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Text<'a>> {
    // SAFETY: the data of an immutable str lives as long as the object, which `s` holds; the
    // three storages are exactly PEP 393's kinds.
    Ok(match unsafe { s.data()? } {
        PyStringData::Ucs1(t) => Text::U8(t),
        PyStringData::Ucs2(t) => Text::U16(t),
        PyStringData::Ucs4(t) => Text::U32(t),
    })
}

/// `s` as a vector of code points.
pub fn code_points(s: &Bound<'_, PyString>) -> PyResult<Vec<u32>> {
    Ok(match text(s)? {
        Text::U8(t) => t.iter().map(|&c| u32::from(c)).collect(),
        Text::U16(t) => t.iter().map(|&c| u32::from(c)).collect(),
        Text::U32(t) => t.to_vec(),
    })
}

/// The list of strings `s[start:ends[0]]`, `s[ends[0]:ends[1]]`, ... (ends within the text).
///
/// A long list repeats the same short tokens (syllables) over and over: equal tokens then share
/// one string object (a table local to the call, of at most [`SHARE_MAX`] entries), which costs
/// a hash and a reference count instead of an allocation and its later release.
pub fn substrings<'py>(
    s: &Bound<'py, PyString>,
    start: usize,
    ends: &[usize],
) -> PyResult<Bound<'py, PyList>> {
    let py = s.py();
    // SAFETY: PyList_New gives a list of `ends.len()` empty slots, each filled exactly once with
    // a new reference before the list is used; on an error the list is dropped (decref'd), and
    // CPython's list dealloc skips the NULL slots not filled yet.
    let list: Bound<'py, PyList> = unsafe {
        Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(ends.len() as isize))?
            .cast_into_unchecked()
    };
    if ends.len() < SHARE_FROM {
        let mut pos = start;
        for (i, &end) in ends.iter().enumerate() {
            // SAFETY: as above; positions within the text.
            unsafe {
                let item = pyo3::ffi::PyUnicode_Substring(s.as_ptr(), pos as isize, end as isize);
                if item.is_null() {
                    return Err(PyErr::fetch(py));
                }
                pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), i as isize, item);
            }
            pos = end;
        }
        return Ok(list);
    }
    match text(s)? {
        Text::U8(t) => shared_substrings(s, t, start, ends, &list)?,
        Text::U16(t) => shared_substrings(s, t, start, ends, &list)?,
        Text::U32(t) => shared_substrings(s, t, start, ends, &list)?,
    }
    Ok(list)
}

/// Lists at least this long share equal short tokens.
const SHARE_FROM: usize = 1024;
/// Tokens up to this many code points are shared.
const SHARE_LEN: usize = 16;
/// At most this many distinct tokens are remembered per call (bounded memory).
const SHARE_MAX: usize = 1 << 16;

fn shared_substrings<U: Unit + Eq + std::hash::Hash>(
    s: &Bound<'_, PyString>,
    t: &[U],
    start: usize,
    ends: &[usize],
    list: &Bound<'_, PyList>,
) -> PyResult<()> {
    // The table holds borrowed pointers: each object it names is already in `list`, which
    // keeps it alive for the whole call.
    let mut seen: FxHashMap<&[U], *mut pyo3::ffi::PyObject> = FxHashMap::default();
    let mut pos = start;
    for (i, &end) in ends.iter().enumerate() {
        let token = &t[pos..end];
        let short = token.len() <= SHARE_LEN;
        // SAFETY: as in `substrings`: each slot filled once with a new reference.
        unsafe {
            let item = match short.then(|| seen.get(token)).flatten() {
                Some(&known) => {
                    pyo3::ffi::Py_INCREF(known);
                    known
                }
                None => {
                    let item =
                        pyo3::ffi::PyUnicode_Substring(s.as_ptr(), pos as isize, end as isize);
                    if item.is_null() {
                        return Err(PyErr::fetch(s.py()));
                    }
                    if short && seen.len() < SHARE_MAX {
                        seen.insert(token, item);
                    }
                    item
                }
            };
            pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), i as isize, item);
        }
        pos = end;
    }
    Ok(())
}

/// A str holding exactly these code points (lone surrogates included, as Python allows).
pub fn from_code_points<'py>(py: Python<'py>, cps: &[u32]) -> PyResult<Bound<'py, PyString>> {
    if cps.iter().any(|&c| c > 0x10FFFF) {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "code point beyond U+10FFFF",
        ));
    }
    // SAFETY: a valid buffer of `cps.len()` UCS-4 code points; CPython copies it.
    unsafe {
        Ok(Bound::from_owned_ptr_or_err(
            py,
            pyo3::ffi::PyUnicode_FromKindAndData(4, cps.as_ptr().cast(), cps.len() as isize),
        )?
        .cast_into_unchecked())
    }
}

pub use crate::utf8::with_utf8;
