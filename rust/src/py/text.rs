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

/// `f` of `t` as UTF-8, with each lone surrogate as U+FFFD and a high surrogate followed by a
/// low one as the character the pair stands for: what `wwho.bytelevel.pretokenize.
/// _replace_surrogates` (and tiktoken) do to text that cannot be UTF-8. ASCII is read in place;
/// other text is written into a buffer of this thread's (kept for the next text, up to
/// [`KEEP_UTF8`] bytes). Reads only the string's own storage, so any thread may call it while
/// the caller holds the string.
pub fn with_utf8<R>(t: Text<'_>, f: impl FnOnce(&str) -> R) -> R {
    if let Text::U8(b) = t {
        if b.is_ascii() {
            // SAFETY: ASCII is UTF-8.
            return f(unsafe { std::str::from_utf8_unchecked(b) });
        }
    }
    UTF8.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            let out = f(utf8_into(t, &mut buf));
            if buf.capacity() > KEEP_UTF8 {
                *buf = Vec::new();
            }
            out
        }
        Err(_) => f(utf8_into(t, &mut Vec::new())),
    })
}

/// The per-thread buffer of [`with_utf8`] is released when a text needed more than this.
const KEEP_UTF8: usize = 1 << 20;

thread_local! {
    static UTF8: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `t` as UTF-8 in `buf` (its old contents dropped), surrogates as in [`with_utf8`].
fn utf8_into<'b>(t: Text<'_>, buf: &'b mut Vec<u8>) -> &'b str {
    buf.clear();
    match t {
        Text::U8(u) => write_latin1(u, buf),
        Text::U16(u) => write_utf8(u, 3, buf),
        Text::U32(u) => write_utf8(u, 4, buf),
    }
    // Every code point written is a scalar value (surrogates were replaced or paired) and
    // Python's code points are at most U+10FFFF; checked anyway (SIMD: cheap), not assumed.
    simdutf8::basic::from_utf8(buf).expect("UTF-8 made from code points")
}

/// Append the UTF-8 of Latin-1 text to `buf` without a branch per character: both bytes of a
/// two-byte form are always written and the length moves by one or two, since text that
/// mixes ASCII with other Latin-1 letters at random would mispredict most such branches.
fn write_latin1(t: &[u8], buf: &mut Vec<u8>) {
    buf.reserve(2 * t.len());
    let start = buf.len();
    // SAFETY: 2 * t.len() bytes are reserved past `start`; character i writes bytes n and
    // n + 1 with n <= 2 * i, so within the room; the length is set to the bytes that belong to
    // the text (a second byte written after an ASCII character is overwritten or left beyond
    // it), all initialized.
    unsafe {
        let p = buf.as_mut_ptr().add(start);
        let mut n = 0;
        for &b in t {
            let wide = usize::from(b >> 7);
            *p.add(n) = if wide == 1 { 0xC0 | (b >> 6) } else { b };
            *p.add(n + 1) = 0x80 | (b & 0x3F);
            n += 1 + wide;
        }
        buf.set_len(start + n);
    }
}

/// Append the UTF-8 of `t` to `buf`, at most `per_unit` bytes for each of its units.
///
/// Writes through a pointer into room reserved first: the per-byte checks of `Vec::push` cost
/// more than the rest of the loop, which runs once per character of every text of a batch.
#[inline(always)]
fn write_utf8<U: Unit>(t: &[U], per_unit: usize, buf: &mut Vec<u8>) {
    buf.reserve(per_unit * t.len());
    let start = buf.len();
    // SAFETY: `room` bytes are reserved past `start`; each unit writes at most `per_unit` bytes
    // (a surrogate pair: 4 bytes for 2 units, within 2 * 3), so `n` never passes `room`, and
    // the length is set to the bytes written, all initialized.
    unsafe {
        let p = buf.as_mut_ptr().add(start);
        let mut n = 0;
        let mut i = 0;
        while i < t.len() {
            let mut c = t[i].cp();
            i += 1;
            if c < 0x80 {
                *p.add(n) = c as u8;
                n += 1;
                continue;
            }
            if (0xD800..0xE000).contains(&c) {
                let low = t.get(i).map_or(0, |u| u.cp());
                if c < 0xDC00 && (0xDC00..0xE000).contains(&low) {
                    i += 1;
                    c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
                } else {
                    c = 0xFFFD;
                }
            }
            if c < 0x800 {
                *p.add(n) = 0xC0 | (c >> 6) as u8;
                *p.add(n + 1) = 0x80 | (c & 0x3F) as u8;
                n += 2;
            } else if c < 0x10000 {
                *p.add(n) = 0xE0 | (c >> 12) as u8;
                *p.add(n + 1) = 0x80 | ((c >> 6) & 0x3F) as u8;
                *p.add(n + 2) = 0x80 | (c & 0x3F) as u8;
                n += 3;
            } else {
                *p.add(n) = 0xF0 | (c >> 18) as u8;
                *p.add(n + 1) = 0x80 | ((c >> 12) & 0x3F) as u8;
                *p.add(n + 2) = 0x80 | ((c >> 6) & 0x3F) as u8;
                *p.add(n + 3) = 0x80 | (c & 0x3F) as u8;
                n += 4;
            }
        }
        buf.set_len(start + n);
    }
}
