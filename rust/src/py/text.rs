//! Python `str` objects as [`Text`]: their own storage (PEP 393), no UTF-8 conversion.

use crate::units::Text;
use pyo3::prelude::*;
use pyo3::types::string::PyStringData;
use pyo3::types::{PyList, PyString};

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
pub fn substrings<'py>(
    s: &Bound<'py, PyString>,
    start: usize,
    ends: &[usize],
) -> PyResult<Bound<'py, PyList>> {
    let py = s.py();
    // SAFETY: PyList_New gives a list of `ends.len()` empty slots, each filled exactly once with
    // a new reference before the list is used; on an error the list is dropped (decref'd), and
    // CPython's list dealloc skips the NULL slots not filled yet.
    unsafe {
        let list: Bound<'py, PyList> =
            Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(ends.len() as isize))?
                .cast_into_unchecked();
        let mut pos = start;
        for (i, &end) in ends.iter().enumerate() {
            let item = pyo3::ffi::PyUnicode_Substring(s.as_ptr(), pos as isize, end as isize);
            if item.is_null() {
                return Err(PyErr::fetch(py));
            }
            pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), i as isize, item);
            pos = end;
        }
        Ok(list)
    }
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
